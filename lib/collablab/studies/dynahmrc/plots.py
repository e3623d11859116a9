"""Notebook 06's figures, drawn from its tables (:mod:`.report`) in the house style
(:mod:`collablab.analysis.plots`): the paper's difficulty, composition and dynamic-setting figures
(dynahmrc.tex Figs. 5-7: five metrics, mean and 95% bootstrap interval per method), search success
by team size, the ablations, DynaHMRC minus CoELA, centralized against decentralized, coordination
counts and the elected leaders (appendix Fig. 15).

Each method keeps one colour in every figure (:data:`COLORS`); every figure is at most 11 inches
wide with text of 9 pt or more and names the backend in its title.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ...analysis.plots import HouseFigure, figure_title, use_house_style

__all__ = ["COLORS", "ablation_plot", "centralized_plot", "coordination_plot", "leader_plot", "metric_panels",
           "paired_plot", "search_plot", "sensitivity_plot"]

#: One colour per method in every figure (seaborn's colour-blind palette, as the house style).
COLORS = {"DynaHMRC": "#0173b2", "CoELA": "#de8f05", "COHERENT": "#029e73", "MCTS": "#d55e00",
          "MCTS-NoINS": "#cc78bc", "LLM-MCTS": "#ca9161"}
_PANELS = (("success", "success rate (%)", 100.0), ("ps", "partial success (%)", 100.0),
           ("ts", "temporal steps", 1.0), ("as_per_robot", "action steps per robot", 1.0),
           ("cc", "communications per robot", 1.0))


def _figure(width: float, height: float, rows: int, cols: int, **kw: Any) -> tuple[Figure, np.ndarray]:
    use_house_style()
    fig = HouseFigure(figsize=(min(width, 11.0), height), layout="constrained")
    return fig, np.atleast_1d(fig.subplots(rows, cols, squeeze=False, **kw)).ravel()



def _legend(fig: Figure, ax: Any) -> None:
    """One legend for the figure, under the panels (never over the data)."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=max(len(labels), 1), fontsize=9)


def _color(method: str) -> str:
    return COLORS.get(method, "0.4")


def _errbar(ax: Any, x: Any, y: Any, lo: Any, hi: Any, **kw: Any) -> None:
    y, lo, hi = (np.asarray(v, dtype=float) for v in (y, lo, hi))
    err = np.vstack([np.nan_to_num(y - lo), np.nan_to_num(hi - y)])
    ax.errorbar(x, y, yerr=err, fmt="o", capsize=2.5, ms=5, lw=1.3, **kw)


def metric_panels(t: pd.DataFrame, x: str, order: Sequence[Any], *, backend: Any, title: str,
                  methods: Sequence[str] | None = None, cols: int = 5, xlabel: str = "") -> Figure:
    """The paper's Figs. 5-7: one panel per metric (success, partial success, temporal steps, action
    steps and communications per robot), ``x`` categories in ``order``, one dodged point with its 95%
    interval per method."""
    methods = [m for m in (methods or COLORS) if m in set(t["method_label"])] or list(dict.fromkeys(t["method_label"]))
    order = [v for v in order if v in set(t[x])]
    rows = -(-len(_PANELS) // cols)
    long = max(len(str(v)) for v in order) > 8
    fig, axes = _figure(11.0 if long else 2.2 * cols, (3.4 if long else 2.9) * rows + 0.9, rows, cols)
    width = 0.8 / max(len(methods), 1)
    xs = np.arange(len(order))
    for ax, (metric, label, scale) in zip(axes, _PANELS):
        for k, m in enumerate(methods):
            part = t[t["method_label"] == m].set_index(x).reindex(order)
            _errbar(ax, xs + (k - (len(methods) - 1) / 2) * width, part[f"{metric}_mean"] * scale,
                    part[f"{metric}_low"] * scale, part[f"{metric}_high"] * scale, color=_color(m), label=m)
        ax.set_xticks(xs)
        ax.set_xticklabels([str(v) for v in order], rotation=35 if long else 0, ha="right" if long else "center",
                           rotation_mode="anchor")
        ax.set_title(label, fontsize=10)
        ax.set_xlabel(xlabel)
        if scale == 100.0:
            ax.set_ylim(-5, 105)
    for ax in axes[len(_PANELS):]:
        ax.set_axis_off()
    _legend(fig, axes[0])
    figure_title(fig, title, backend)
    return fig


def search_plot(t: pd.DataFrame, *, backend: Any, title: str) -> Figure:
    """Search baselines' success and partial success by the number of robot types (paper Fig. 6's
    MCTS bars), mean and 95% interval, one line per method; integer axis."""
    fig, axes = _figure(8.0, 3.3, 1, 2, sharey=True)
    for ax, (metric, label, scale) in zip(axes, _PANELS[:2]):
        for k, m in enumerate(dict.fromkeys(t["method_label"])):
            part = t[t["method_label"] == m].sort_values("n_types")
            x = part["n_types"].to_numpy(dtype=float) + (k - 1) * 0.06
            _errbar(ax, x, part[f"{metric}_mean"] * scale, part[f"{metric}_low"] * scale,
                    part[f"{metric}_high"] * scale, color=_color(m), label=m)
            ax.plot(x, part[f"{metric}_mean"] * scale, color=_color(m), lw=1)
        ax.set_xticks(sorted(int(n) for n in set(t["n_types"])))
        ax.set_xlabel("robot types in the team")
        ax.set_title(label, fontsize=10)
        ax.set_ylim(-5, 105)
    _legend(fig, axes[0])
    figure_title(fig, title, backend)
    return fig


def sensitivity_plot(tables: dict[str, pd.DataFrame], *, backend: Any, title: str) -> Figure:
    """``lab:sensitivity_dyna`` in one row: success by trigger step T (CTO, ANC, REC) or by number of
    restricted zones (IRZ), one dodged point with its 95% interval and a thin line per method."""
    panels = []
    for name, t in tables.items():
        if name == "ANC/REC":
            panels += [(v, t[t["setting"] == v], "T") for v in ("ANC", "REC") if (t["setting"] == v).any()]
        else:
            panels.append((name, t, "zones" if name == "IRZ" else "T"))
    fig, axes = _figure(2.6 * len(panels) + 0.6, 3.4, 1, len(panels), sharey=True)
    for ax, (name, t, x) in zip(axes, panels):
        methods = [m for m in COLORS if m in set(t["method_label"])]
        for k, m in enumerate(methods):
            part = t[t["method_label"] == m].sort_values(x)
            xs = np.arange(len(part)) + (k - (len(methods) - 1) / 2) * 0.12
            _errbar(ax, xs, part["success_mean"] * 100, part["success_low"] * 100, part["success_high"] * 100,
                    color=_color(m), label=m)
            ax.plot(xs, part["success_mean"] * 100, color=_color(m), lw=1)
        values = sorted(int(v) for v in set(t[x]))
        ax.set_xticks(range(len(values)))
        ax.set_xticklabels([str(v) for v in values])
        ax.set_xlabel("restricted zones" if x == "zones" else "trigger step T")
        ax.set_title(name, fontsize=10)
        ax.set_ylim(-5, 105)
    axes[0].set_ylabel("success rate (%)")
    _legend(fig, axes[0])
    figure_title(fig, title, backend)
    return fig


def ablation_plot(t: pd.DataFrame, *, backend: Any, title: str) -> Figure:
    """Each ablation's success, partial success and action steps per robot (paper Table XI), mean
    and 95% interval; the full framework's interval shaded."""
    labels = list(t["ablation_label"])
    fig, axes = _figure(10.0, 0.32 * len(labels) + 1.9, 1, 3, sharey=True)
    y = np.arange(len(labels))[::-1]
    for ax, (metric, label, scale) in zip(axes, (_PANELS[0], _PANELS[1], _PANELS[3])):
        mean, lo, hi = (t[f"{metric}_{s}"].to_numpy(dtype=float) * scale for s in ("mean", "low", "high"))
        full = [i for i, v in enumerate(labels) if v == "full"]
        if full:
            ax.axvspan(lo[full[0]], hi[full[0]], color=COLORS["DynaHMRC"], alpha=0.12, lw=0)
        ax.errorbar(mean, y, xerr=np.vstack([mean - lo, hi - mean]), fmt="o", color=COLORS["DynaHMRC"], capsize=2.5)
        ax.set_title(label, fontsize=10)
    axes[0].set_yticks(y)
    axes[0].set_yticklabels(labels)
    figure_title(fig, title, backend)
    return fig


def paired_plot(t: pd.DataFrame, *, backend: Any, title: str) -> Figure:
    """DynaHMRC minus CoELA per metric (one panel each), static and dynamic tasks, with the paired
    95% bootstrap interval and a line at no difference (appendix paired comparison)."""
    metrics = list(dict.fromkeys(t["metric"]))
    settings = list(dict.fromkeys(t["setting"]))
    fig, axes = _figure(2.2 * len(metrics), 0.35 * len(settings) + 2.0, 1, len(metrics), sharey=True)
    y = np.arange(len(settings))[::-1]
    for ax, m in zip(axes, metrics):
        part = t[t["metric"] == m].set_index("setting").reindex(settings)
        scale = 100.0 if m in ("success rate", "partial success") else 1.0
        d, lo, hi = (part[c].to_numpy(dtype=float) * scale for c in ("mean_diff", "ci_low", "ci_high"))
        ax.axvline(0, color="0.5", lw=1, ls="--")
        ax.errorbar(d, y, xerr=np.vstack([np.nan_to_num(d - lo), np.nan_to_num(hi - d)]), fmt="o",
                    color=COLORS["DynaHMRC"], capsize=2.5)
        ax.set_title(m + (" (points)" if scale == 100.0 else ""), fontsize=10)
    axes[0].set_yticks(y)
    axes[0].set_yticklabels(settings)
    axes[0].set_ylim(-0.6, len(settings) - 0.4)
    figure_title(fig, title, backend)
    return fig


def centralized_plot(t: pd.DataFrame, settings: Sequence[str], *, backend: Any, title: str) -> Figure:
    """Success of DynaHMRC and COHERENT by robot types, one panel per setting (paper Tables IX-X)."""
    settings = [s for s in settings if s in set(t["setting"])]
    fig, axes = _figure(2.2 * len(settings), 3.0, 1, len(settings), sharey=True)
    for ax, s in zip(axes, settings):
        part = t[t["setting"] == s]
        for k, m in enumerate(dict.fromkeys(part["method_label"])):
            p = part[part["method_label"] == m].sort_values("n_types")
            x = p["n_types"].to_numpy(dtype=float) + (k - 0.5) * 0.08
            _errbar(ax, x, p["success_mean"] * 100, p["success_low"] * 100, p["success_high"] * 100,
                    color=_color(m), label=m)
            ax.plot(x, p["success_mean"] * 100, color=_color(m), lw=1)
        ax.set_xticks(sorted(int(n) for n in set(t["n_types"])))
        ax.set_title(s, fontsize=10)
        ax.set_xlabel("robot types")
        ax.set_ylim(-5, 105)
    axes[0].set_ylabel("success rate (%)")
    _legend(fig, axes[0])
    figure_title(fig, title, backend)
    return fig


def coordination_plot(t: pd.DataFrame, *, backend: Any, title: str) -> Figure:
    """Redundant and conflicting actions per episode by setting, one bar per method (paper's
    coordination-failure table)."""
    settings = list(dict.fromkeys(t["setting"]))
    methods = [m for m in COLORS if m in set(t["method_label"])]
    fig, axes = _figure(9.0, 3.0, 1, 2)
    xs = np.arange(len(settings))
    width = 0.8 / max(len(methods), 1)
    for ax, (col, label) in zip(axes, (("redundant", "redundant actions per episode"),
                                       ("conflicting", "conflicting actions per episode"))):
        for k, m in enumerate(methods):
            part = t[t["method_label"] == m].set_index("setting").reindex(settings)
            ax.bar(xs + (k - (len(methods) - 1) / 2) * width, part[col].fillna(0), width, color=_color(m), label=m)
        ax.set_xticks(xs)
        ax.set_xticklabels(settings)
        ax.set_title(label, fontsize=10)
    axes[0].legend(fontsize=9)
    figure_title(fig, title, backend)
    return fig


def leader_plot(shares: pd.DataFrame, *, backend: Any, title: str) -> Figure:
    """The elected leader's type by team, shares of elections (appendix Fig. 15)."""
    s = shares.set_index("team") if "team" in shares.columns else shares
    s = s[[c for c in s.columns if c != "backend"]]
    fig, axes = _figure(7.0, 0.35 * len(s) + 1.6, 1, 1)
    ax = axes[0]
    y = np.arange(len(s))[::-1]
    left = np.zeros(len(s))
    for k, c in enumerate(s.columns):
        vals = s[c].fillna(0).to_numpy(dtype=float) * 100
        ax.barh(y, vals, left=left, color=f"C{k}", label=str(c))
        left += vals
    ax.set_yticks(y)
    ax.set_yticklabels([str(i) for i in s.index])
    ax.set_xlim(0, 100)
    ax.set_xlabel("elections won (%)")
    ax.legend(title="leader type", fontsize=9, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    figure_title(fig, title, backend)
    return fig
