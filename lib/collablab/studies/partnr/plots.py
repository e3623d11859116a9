"""Notebook 07's figures (observe_share_predict.txt §4.2-4.5 and the analysis tail), in the
house style of :mod:`collablab.analysis.plots`: at most 11 inches wide at 100 dpi, text of at
least 9 pt, small multiples with shared axes, one colour per agent or OANA setting in every
figure, and the backend in every title."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter

from ...analysis.plots import HouseFigure, figure_title, use_house_style
from .experiments import CONTEXTS

__all__ = ["channel_test_plot", "direction_plot", "failure_plot", "full_obs_plot", "outcome_plot", "prediction_plot", "role_plot",
           "strict_plot"]

#: One colour per series, the same in every figure.
OANA_COLOURS = {False: "C0", True: "C3"}
AGENT_COLOURS = {"robot": "C0", "human": "C1"}
OBS_COLOURS = {"partial": "C0", "full": "C2"}
CHANNEL_COLOURS = {"OAS": "C0", "KE": "C1", "OANA": "C3", "Full": "C2"}
_NAMES = {"SR": "Success Rate", "PC": "Percent Complete", "steps": "simulation steps", "cycles": "planning cycles",
          "EE": "Extraneous Effort", "simulation_steps": "simulation steps", "extraneous_effort": "Extraneous Effort",
          "success": "Success Rate", "percent_complete": "Percent Complete"}
_RATES = {"SR", "PC", "EE", "extraneous_effort", "success", "percent_complete"}


def _figure(width: float, height: float, ncols: int, nrows: int = 1, **kw) -> tuple[Figure, np.ndarray]:
    use_house_style()
    fig = HouseFigure(figsize=(width, height), layout="constrained")
    return fig, np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False, **kw)).ravel()



def _metric_axis(ax, m: str) -> None:
    """A panel titled with the metric's plain name, rates in %, counts on integer ticks."""
    ax.set_title(_NAMES[m], fontsize=11)
    if m in _RATES:
        _percent(ax)
    else:
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def _percent(ax, axis: str = "y") -> None:
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(PercentFormatter(1.0, decimals=None))


def _legend(fig: Figure, ax) -> None:
    """One legend for the figure, outside the panels (top right)."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper right", fontsize=9, ncols=len(labels))


def _empty(ax, what: str) -> None:
    ax.text(0.5, 0.5, what, ha="center", va="center", transform=ax.transAxes, fontsize=10, color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])


def outcome_plot(outcomes: pd.DataFrame, metrics: Sequence[str] = ("SR", "steps", "EE")) -> Figure:
    """§4.2, Table 3: per context, without and with OANA, the mean of each of ``metrics`` with its
    95% interval (``<m>_low``/``<m>_high`` of :func:`.report.condition_table`), one panel each."""
    fig, axes = _figure(10.5, 3.6, len(metrics))
    ctxs = [c for c in CONTEXTS if c in set(outcomes["context"])]
    x = np.arange(len(ctxs))
    for ax, m in zip(axes, metrics):
        for oana, dx in ((False, -0.12), (True, 0.12)):
            t = outcomes[outcomes["oana"].astype(bool) == oana].set_index("context").reindex(ctxs)
            if not t[m].notna().any():
                continue
            v = t[m].astype(float).to_numpy()
            err = np.vstack([v - t[f"{m}_low"].astype(float).to_numpy(), t[f"{m}_high"].astype(float).to_numpy() - v])
            ax.errorbar(x + dx, v, yerr=np.nan_to_num(err), fmt="o", ms=6, capsize=3, color=OANA_COLOURS[oana],
                        label="with OANA" if oana else "without OANA")
        ax.set_xticks(x, ctxs)
        ax.set_xlim(-0.5, len(ctxs) - 0.5)
        _metric_axis(ax, m)
    _legend(fig, axes[0])
    figure_title(fig, "Outcomes per context, partial observability (mean, 95% interval)", outcomes)
    return fig


def direction_plot(ce: pd.DataFrame, metrics: Sequence[str] = ("SR", "PC", "steps", "cycles", "EE")) -> Figure:
    """Every pair of conditions that differs in one channel (rows, grouped by channel) against
    ``metrics`` (columns): the relative change with the channel on, red lower, blue higher,
    printed in each cell (``channel_effects``)."""
    keys = ["channel", "off", "on"]
    pairs = ce[keys].drop_duplicates()
    w = ce.pivot_table(index=keys, columns="metric", values="rel", sort=False).reindex(
        pd.MultiIndex.from_frame(pairs)).reindex(columns=list(metrics))
    fig, (ax,) = _figure(7.5, 0.32 * len(w) + 1.6, 1)
    vals = w.to_numpy(dtype=float)
    lim = max(0.05, float(np.nanmax(np.abs(vals))) if np.isfinite(vals).any() else 0.05)
    im = ax.imshow(np.nan_to_num(vals), cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
    for i in range(vals.shape[0]):
        for j in range(vals.shape[1]):
            v = vals[i, j]
            ax.text(j, i, "–" if np.isnan(v) else f"{v:+.0%}", ha="center", va="center", fontsize=9,
                    color="white" if abs(np.nan_to_num(v)) > 0.6 * lim else "black")
    ax.set_xticks(range(len(metrics)), [_NAMES[m].replace(" ", "\n", 1) for m in metrics])
    ax.xaxis.tick_top()
    ax.set_yticks(range(len(w)), [f"{ch}: {off} → {on}" for ch, off, on in w.index])
    ax.grid(False)
    for i in np.flatnonzero(np.asarray(w.index.get_level_values(0))[1:] != np.asarray(w.index.get_level_values(0))[:-1]):
        ax.axhline(i + 0.5, color="0.2", lw=1.2)
    fig.colorbar(im, ax=ax, format=PercentFormatter(1.0, decimals=0), shrink=0.6, label="relative change, channel on")
    figure_title(fig, "Which way each channel moves each metric (relative change of the mean)", ce)
    return fig


def role_plot(roles: pd.DataFrame, asym: pd.DataFrame) -> Figure:
    """§4.3, §A.3.2: per partial-observability condition, the robot's and the human's first
    object interaction (step), Extra Planning and Action Success, and the team's Task Offloading
    (the robot's share of advancing actions, 50% marked)."""
    r = roles[roles["observability"] == "partial"]
    a = asym[asym["observability"] == "partial"]
    conds = list(dict.fromkeys(r["condition"]))
    y = np.arange(len(conds))[::-1]
    panels = (("first_interaction", "first object interaction (step)"), ("extra_planning", "Extra Planning"),
              ("action_success", "Action Success"))
    fig, axes = _figure(10.5, 0.32 * len(conds) + 1.9, 4, sharey=True)
    for ax, (m, name) in zip(axes, panels):
        for agent, colour in AGENT_COLOURS.items():
            t = r[r["agent"] == agent].set_index("condition").reindex(conds)
            ax.plot(t[m].astype(float), y, "o", color=colour, label=agent, ms=6)
        ax.set_title(name, fontsize=11)
        if m != "first_interaction":
            _percent(ax, "x")
            ax.xaxis.set_major_locator(MaxNLocator(nbins=3))
        else:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=4))
    off = a.set_index("condition").reindex(conds)["offloading"].astype(float)
    axes[3].barh(y, off, color="0.55", height=0.6)
    axes[3].axvline(0.5, color="0.2", ls="--", lw=1)
    axes[3].set_xlim(0, 1)
    _percent(axes[3], "x")
    axes[3].set_title("Task Offloading (robot's share)", fontsize=11)
    axes[0].set_yticks(y, conds)
    _legend(fig, axes[0])
    figure_title(fig, "Who does what: robot and human per condition (means over tasks)", roles)
    return fig


def prediction_plot(pred: pd.DataFrame,
                    rates: Sequence[str] = ("type_acc", "cond_principal", "cond_all")) -> Figure:
    """§4.4, Table 2: the union-target accuracies ``rates`` (one panel each) of each OANA context
    under partial observability, robot and human."""
    names = {"type_acc": "Action Type", "cond_principal": "principal parameter | type",
             "cond_all": "every parameter | type"}
    p = pred[pred["observability"] == "partial"]
    ctxs = [c for c in CONTEXTS if c in set(p["context"])]
    fig, axes = _figure(10.5, 3.5, len(rates), sharey=True)
    x = np.arange(len(ctxs))
    for ax, m in zip(axes, rates):
        if not len(ctxs):
            _empty(ax, "no OANA condition")
            continue
        for agent, colour in AGENT_COLOURS.items():
            t = p[p["agent"] == agent].set_index("context").reindex(ctxs)
            ax.plot(x, t[m].astype(float), marker="o", color=colour, label=agent)
        ax.set_xticks(x, ctxs)
        ax.set_xlabel("context (+OANA)")
        ax.set_ylim(0, 1.02)
        _percent(ax)
        ax.set_title(names.get(m, m), fontsize=11)
    _legend(fig, axes[0])
    figure_title(fig, "Predicting the partner's next action (union target, partial observability)", pred)
    return fig


def strict_plot(union: pd.DataFrame, strict: pd.DataFrame) -> Figure:
    """§4.5, §A.5.1: Action Type accuracy of every OANA condition and agent under the union and
    the strict next-action target (one panel per agent, a line joins the two)."""
    keys = ["condition", "agent"]
    m = union.merge(strict, on=keys, suffixes=("_union", "_strict"))
    conds = list(dict.fromkeys(m["condition"]))
    agents = [a for a in AGENT_COLOURS if a in set(m["agent"])] or ["robot"]
    y = np.arange(len(conds))[::-1]
    fig, axes = _figure(8.5, 0.34 * max(1, len(conds)) + 1.8, len(agents), sharey=True)
    for ax, agent in zip(axes, agents):
        t = m[m["agent"] == agent].set_index("condition").reindex(conds)
        u, s = t["type_acc_union"].astype(float), t["type_acc_strict"].astype(float)
        ax.hlines(y, s, u, color="0.7", lw=2)
        ax.plot(u, y, "o", color="C4", label="union (current or next action)", ms=6)
        ax.plot(s, y, "s", color="C5", label="strict (next action only)", ms=6)
        ax.set_xlim(0, 1)
        _percent(ax, "x")
        ax.set_title(f"{agent}: Action Type accuracy", fontsize=11)
    axes[0].set_yticks(y, conds)
    _legend(fig, axes[0])
    figure_title(fig, "The strict target against the union target", union)
    return fig


def full_obs_plot(fvp: pd.DataFrame, metrics: Sequence[str] = ("steps", "EE", "SR")) -> Figure:
    """§4.5, §A.4.1: each full-observability condition against the same condition under partial
    observability, one panel per metric of ``metrics`` (``full_vs_partial``)."""
    labels = [f"{c}{chr(10) + '+OANA' if o else ''}" for c, o in zip(fvp["context"], fvp["oana"].astype(bool))]
    x = np.arange(len(labels))
    fig, axes = _figure(10.5, 3.6, len(metrics))
    for ax, m in zip(axes, metrics):
        for obs, dx in (("partial", -0.2), ("full", 0.2)):
            ax.bar(x + dx, fvp[f"{m}_{obs}"].astype(float), width=0.4, color=OBS_COLOURS[obs],
                   label=f"{obs} observability")
        ax.set_xticks(x, labels, fontsize=9)
        _metric_axis(ax, m)
    _legend(fig, axes[0])
    figure_title(fig, "Full against partial observability (means over tasks)", fvp)
    return fig


def channel_test_plot(tests: pd.DataFrame, outcomes: Sequence[str] = ("simulation_steps", "extraneous_effort",
                                                                        "success")) -> Figure:
    """The analysis tail: every pair of conditions differing in one channel (rows), channel on −
    off, mean paired difference over tasks with its 95% paired-bootstrap CI, one panel per outcome
    of ``outcomes``; filled where the Holm-adjusted sign-flip p is below 0.05."""
    sf = tests[tests["test"] == "sign_flip"]
    pairs = sf[["channel", "on", "off"]].drop_duplicates().reset_index(drop=True)
    y = np.arange(len(pairs))[::-1]
    fig, axes = _figure(10.5, 0.3 * max(1, len(pairs)) + 1.9, len(outcomes), sharey=True)
    for ax, outcome in zip(axes, outcomes):
        t = pairs.merge(sf[sf["outcome"] == outcome], on=["channel", "on", "off"], how="left")
        ax.axvline(0, color="0.4", lw=1, ls="--")
        for yy, r in zip(y, t.itertuples()):
            colour = CHANNEL_COLOURS.get(r.channel, "C7")
            if pd.notna(r.ci_low) and pd.notna(r.ci_high):
                ax.plot([r.ci_low, r.ci_high], [yy, yy], color=colour, lw=2)
            if pd.notna(r.estimate):
                filled = pd.notna(r.p_adjusted) and r.p_adjusted < 0.05
                ax.plot([r.estimate], [yy], "o", ms=6, color=colour, markerfacecolor=colour if filled else "white")
        ax.set_title(f"{_NAMES[outcome]} (on − off)", fontsize=11)
        if outcome in _RATES:
            ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        else:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=5))
    axes[0].set_yticks(y, [f"{r.channel}: {r.on} vs {r.off}" for r in pairs.itertuples()] if len(pairs) else [])
    figure_title(fig, "Channel effects paired by task (mean difference, 95% CI; filled: Holm p < 0.05)", tests)
    return fig


def failure_plot(failures: pd.DataFrame, reasons: Sequence[str]) -> Figure:
    """Why episodes failed: per condition (rows, the table's order) a bar of its failed episodes
    split by reason (``reasons``: the table's reason columns, shares of the failed), the count of
    failed episodes at the bar's end."""
    t = failures.reset_index(drop=True)
    cols = [r for r in reasons if r in t.columns and t[r].sum() > 0]
    fig, (ax,) = _figure(9.0, 0.9 + 0.32 * len(t), 1)
    y = np.arange(len(t))[::-1]
    left = np.zeros(len(t))
    for k, r in enumerate(cols):
        width = (t[r] * t["failed"]).to_numpy(dtype=float)
        ax.barh(y, width, left=left, color=f"C{k}", label=r, height=0.7)
        left += width
    for yy, n, f in zip(y, t["n"], t["failed"]):
        ax.text(f + 0.2, yy, f"{int(f)} of {int(n)}", va="center", fontsize=9, color="0.3")
    ax.set_yticks(y, t["condition"])
    ax.set_xlabel("failed episodes")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if not cols:
        _empty(ax, "no episode failed")
    else:
        _legend(fig, ax)
    figure_title(fig, "Why episodes failed, by condition", t)
    return fig
