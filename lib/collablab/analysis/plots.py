"""Figures for the analysis tail, in one house style.

Every function returns a matplotlib ``Figure`` (:class:`HouseFigure`, which shows itself
as PNG in Jupyter) built without pyplot, so nothing is shown twice in a notebook and
nothing leaks between tests; none calls ``plt.show()``.  Every
title carries the backend label(s) of the data, e.g. "backend: heuristic", so numbers
from the offline heuristic policy are never mistaken for findings about LLMs (DESIGN.md).
The backend comes from the ``backend`` argument (a label, a list of labels, or the
episodes DataFrame), else the table's ``backend`` column, else ``table.attrs["backends"]``;
a figure without any backend information is refused.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .findings import OFFLINE_BACKENDS
from .present import fmt_p

__all__ = [
    "BackendLike",
    "HouseFigure",
    "backend_title",
    "behaviour_plot",
    "coord_query_plot",
    "dup_grab_plot",
    "figure_title",
    "forest_plot",
    "lift_plot",
    "progress_curves",
    "progress_long",
    "rate_plot",
    "share_plot",
    "stratum_plot",
    "team_size_plot",
    "use_house_style",
]

BackendLike = str | Sequence[str] | pd.DataFrame | None


def use_house_style() -> None:
    """Set the collablab plotting style (seaborn whitegrid, colour-blind palette, compact fonts)."""
    import seaborn as sns

    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind", font_scale=0.9,
                  rc={"figure.dpi": 100, "savefig.dpi": 150, "axes.titlesize": 11, "axes.titleweight": "bold",
                      "axes.spines.top": False, "axes.spines.right": False, "legend.frameon": False,
                      "figure.autolayout": False})


def _labels(backend: BackendLike, table: pd.DataFrame | None = None) -> list[str]:
    if isinstance(backend, pd.DataFrame):
        if "backend" in backend.columns:
            return sorted(str(b) for b in pd.unique(backend["backend"].dropna()))
        return list(backend.attrs.get("backends", []))
    if isinstance(backend, str):
        return [backend]
    if backend is not None:
        return [str(b) for b in backend]
    if table is not None:
        if "backend" in table.columns:
            return sorted(str(b) for b in pd.unique(table["backend"].dropna()))
        if table.attrs.get("backends"):
            return [str(b) for b in table.attrs["backends"]]
    return []


def backend_title(backend: BackendLike, table: pd.DataFrame | None = None) -> str:
    """"backend: heuristic" / "backends: a, b" (+ a reminder when the policy is not an LLM).

    Raises ``ValueError`` when no backend can be found, so no figure goes out unlabelled.
    """
    labels = _labels(backend, table)
    if not labels:
        raise ValueError("backend: no backend label found; pass backend=<episodes DataFrame or label> so the "
                         "figure says which backend produced the numbers (e.g. 'heuristic')")
    text = ("backend: " if len(labels) == 1 else "backends: ") + ", ".join(labels)
    if all(lab.split(":")[0] in OFFLINE_BACKENDS for lab in labels):
        text += " (offline policy, not an LLM)"
    return text


class HouseFigure(Figure):
    """A matplotlib Figure that renders itself as PNG in Jupyter.

    Figures here are built without pyplot (no double display, no leaks), so the inline
    backend may never have registered its Figure formatter in the kernel; ``_repr_png_``
    makes ``display(fig)`` or a bare ``fig`` at the end of a cell show the image anyway. The
    image is drawn at 100 dpi, so that it shows at its own size in a notebook (a figure at most
    11 inches wide fits JupyterLab's column and its 9-10 pt text stays at least 12 px high).
    """

    def _repr_png_(self) -> bytes:
        import io

        buf = io.BytesIO()
        self.savefig(buf, format="png", bbox_inches="tight", dpi=100)
        return buf.getvalue()


def _new(width: float = 6.4, height: float = 4.0) -> tuple[Figure, Any]:
    fig = HouseFigure(figsize=(width, height), layout="constrained")
    return fig, fig.subplots()


def figure_title(fig: Figure, title: str, backend: BackendLike, table: pd.DataFrame | None = None) -> None:
    """Figure title (``fig.get_suptitle()``): the title, then the backend line (every figure of every
    study says which backend produced it)."""
    fig.suptitle(f"{title}\n{backend_title(backend, table)}", x=0.01, ha="left", fontsize=11, fontweight="bold")


# --------------------------------------------------------------------------- #
# forest plot of contrasts
# --------------------------------------------------------------------------- #
_TEST_NAMES = {"sign_flip": "mean paired difference, sign-flip test", "wilcoxon": "Hodges-Lehmann, Wilcoxon test",
               "mcnemar": "paired success difference, McNemar test", "gee": "odds ratio, logistic GEE"}
_SMALL = 9  # pt: the smallest text in a figure (annotations); ticks and labels are larger


def _panels(n: int, width: float, height: float, *, ncols: int | None = None, sharex: bool = True,
            sharey: bool = True) -> tuple[Figure, np.ndarray]:
    """A figure of ``n`` small panels (``width`` x ``height`` inches each, at most 11 inches wide)."""
    ncols = max(1, min(n, ncols or n))
    nrows = max(1, math.ceil(n / ncols))
    fig = HouseFigure(figsize=(min(11.0, width * ncols), height * nrows + 0.8), layout="constrained")
    axes = np.atleast_1d(fig.subplots(nrows, ncols, sharex=sharex, sharey=sharey, squeeze=False)).ravel()
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:max(n, 1)]


def _level(col: str | None, value: Any) -> str:
    """A condition's name for a panel or a tick: team sizes as "2 agents", other values as they are."""
    if col == "n_agents" and str(value).isdigit():
        return f"{value} agent" + ("s" if int(value) != 1 else "")
    return str(value)


def _label_panels(axes: Sequence[Any], xlabel: str, ylabel: str) -> None:
    """Axis labels on the outer panels only; x tick labels on every panel with none below it."""
    n = len(axes)
    for i, ax in enumerate(axes):
        ncols = ax.get_subplotspec().get_geometry()[1]
        bottom = i + ncols >= n
        ax.xaxis.set_tick_params(labelbottom=bottom)
        ax.set_xlabel(xlabel if bottom else "")
        ax.set_ylabel(ylabel if i % ncols == 0 else "")


def forest_plot(table: pd.DataFrame, *, backend: BackendLike = None, test: str | None = None,
                title: str = "Paired contrasts") -> Figure:
    """Forest plot of :func:`~collablab.analysis.compare` rows with a CI, one panel per outcome.

    ``test`` picks one test's rows (default: ``sign_flip`` if present, else the first test
    with CIs).  Differences of rates (success, CR) in percentage points with a reference line
    at 0; odds ratios (``gee``) at 1 on a log axis.  Each contrast's Holm-adjusted p is written
    by its estimate (DynaHMRC appendix, paired comparison).
    """
    from .significance import OUTCOME_NAMES, RATE_OUTCOMES, require_columns

    require_columns(table, ["contrast", "outcome", "estimate", "ci_low", "ci_high", "test"])
    tests = list(pd.unique(table["test"]))
    if test is None:
        with_ci = [t for t in tests if table.loc[table["test"] == t, "ci_low"].notna().any()]
        test = "sign_flip" if "sign_flip" in tests else (with_ci[0] if with_ci else (tests[0] if tests else None))
    rows = table.loc[table["test"] == test] if test is not None else table.iloc[0:0]
    outcomes = list(pd.unique(rows["outcome"]))
    contrasts = list(pd.unique(rows["contrast"]))
    ratio = test == "gee"
    ref = 1.0 if ratio else 0.0
    fig, axes = _panels(max(1, len(outcomes)), 4.2, max(1.3, 0.5 * len(contrasts) + 0.6), sharex=False)
    if not len(rows):
        axes[0].text(0.5, 0.5, "no contrasts to show", ha="center", va="center", transform=axes[0].transAxes)
        axes[0].set_yticks([])
    for ax, out in zip(axes, outcomes):
        part = rows[rows["outcome"] == out].drop_duplicates("contrast").set_index("contrast")
        k = 100.0 if not ratio and out in RATE_OUTCOMES else 1.0
        ax.axvline(ref, color="0.5", lw=1, ls="--")
        for i, c in enumerate(contrasts):
            if c not in part.index:
                continue
            r, y = part.loc[c], len(contrasts) - 1 - i
            est, lo, hi = (float(r[x]) * k for x in ("estimate", "ci_low", "ci_high"))
            if np.isfinite(lo) and np.isfinite(hi):
                ax.plot([lo, hi], [y, y], color="C0", lw=2, solid_capstyle="butt")
            if not np.isfinite(est):
                ax.text(ref, y, " n/a", va="center", fontsize=_SMALL, color="0.4")
                continue
            ax.plot([est], [y], "o", color="C0", ms=6)
            p = r.get("p_adjusted", np.nan)
            p = r.get("p_value", np.nan) if pd.isna(p) else p
            ax.annotate("p n/a" if pd.isna(p) else "p" + ("" if fmt_p(p).startswith("<") else "=") + fmt_p(p),
                        (est, y), xytext=(0, 6), textcoords="offset points", ha="center", fontsize=_SMALL)
        if ratio:
            vals = part[["estimate", "ci_low", "ci_high"]].to_numpy(dtype=float).ravel()
            if np.any(np.isfinite(vals) & (vals > 0)):
                ax.set_xscale("log")
        ax.set_title(OUTCOME_NAMES.get(str(out), str(out)), fontsize=10)
        ax.set_xlabel("odds ratio, a vs b" if ratio else "a − b" + (" (pp)" if k == 100 else ""))
    if len(contrasts):
        axes[0].set_yticks(range(len(contrasts)))
        axes[0].set_yticklabels(contrasts[::-1])
        axes[0].set_ylim(-0.6, len(contrasts) - 0.3)
    figure_title(fig, f"{title}: {_TEST_NAMES.get(test, test)}, 95% CI" if test else title, backend, table)
    return fig


# --------------------------------------------------------------------------- #
# lift bars
# --------------------------------------------------------------------------- #
def lift_plot(table: pd.DataFrame, *, backend: BackendLike = None, label_col: str | None = None,
              title: str = "Failure-mode lift (rate in failures / rate in successes)") -> Figure:
    """Horizontal bars of ``lift`` from :func:`~collablab.analysis.lift_table` (Table 22).

    One panel per group (the columns before ``indicator``, e.g. ``structure``), one bar per
    indicator.  Infinite lift (seen only in failed episodes) is drawn as a hatched bar reaching
    the axis edge and annotated "∞"; undefined lift (NaN) is annotated "undefined" with no bar.
    Reference line at 1.
    """
    from .significance import require_columns

    require_columns(table, ["indicator", "lift"])
    label_col = label_col or ("label" if "label" in table.columns else "indicator")
    extra = [c for c in table.columns if c not in ("indicator", "label") and table.columns.get_loc(c) <
             table.columns.get_loc("indicator")]
    key = table[extra].astype(str).agg(" / ".join, axis=1) if extra else pd.Series("", index=table.index)
    groups = list(pd.unique(key))
    names = list(pd.unique(table[label_col].astype(str)))
    lifts = table["lift"].astype(float).to_numpy()
    finite = lifts[np.isfinite(lifts)]
    edge = max(2.0, float(finite.max()) * 1.3 if finite.size else 2.0)
    fig, axes = _panels(len(groups), 4.2 if len(groups) > 1 else 6.4, max(1.2, 0.45 * len(names) + 0.4), ncols=2)
    for ax, g in zip(axes, groups):
        part = table[key == g]
        ax.axvline(1.0, color="0.5", lw=1, ls="--")
        for name, v in zip(part[label_col].astype(str), part["lift"].astype(float)):
            y = len(names) - 1 - names.index(name)
            if math.isinf(v):
                ax.barh(y, edge, color="C3", hatch="//", edgecolor="white", alpha=0.8)
                ax.text(0.98 * edge, y, "∞ (never in successes)", va="center", ha="right", fontsize=_SMALL,
                        bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none", "alpha": 0.9})
            elif math.isnan(v):
                ax.text(0.02 * edge, y, "undefined", va="center", fontsize=_SMALL, color="0.4")
            else:
                ax.barh(y, v, color="C0")
                ax.text(v, y, f" {v:.2f}×", va="center", fontsize=_SMALL)
        ax.set_xlim(0, edge)
        ax.set_ylim(-0.6, len(names) - 0.4)
        ax.set_xlabel("lift")
        ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
        if g:
            ax.set_title(g, fontsize=10)
    axes[0].set_yticks(range(len(names)))
    axes[0].set_yticklabels(names[::-1])
    figure_title(fig, title, backend, table)
    return fig


# --------------------------------------------------------------------------- #
# behaviours (Table 2 with CIs)
# --------------------------------------------------------------------------- #
def behaviour_plot(effects: pd.DataFrame, *, backend: BackendLike = None,
                   title: str = "Success and completion with vs without each behaviour") -> Figure:
    """ΔSR and ΔCR (with - without, pp) per behaviour with their 95% CIs, one panel per group, from
    :func:`~collablab.analysis.behaviour_effects` (MECoBench Table 2); undefined Δ marked "n/a"."""
    from .significance import require_columns

    require_columns(effects, ["behaviour", "delta_success", "delta_cr"])
    group = next((c for c in effects.columns[:effects.columns.get_loc("behaviour")]), None)
    groups = list(pd.unique(effects[group])) if group else [None]
    names = list(pd.unique(effects["behaviour"]))
    fig, axes = _panels(len(groups), 4.4, max(1.4, 0.36 * len(names) + 0.4))
    series = ((0.15, "delta_success", "C0", "ΔSR"), (-0.15, "delta_cr", "C1", "ΔCR"))
    for ax, g in zip(axes, groups):
        part = (effects[effects[group] == g] if group else effects).set_index("behaviour")
        ax.axvline(0, color="0.5", lw=1, ls="--")
        for off, col, colour, _ in series:
            for b in part.index:
                y = len(names) - 1 - names.index(b) + off
                est = float(part.loc[b, col])
                lo, hi = (float(part.loc[b, f"{col}_ci_{x}"]) if f"{col}_ci_{x}" in part.columns else np.nan
                          for x in ("low", "high"))
                if not np.isfinite(est):
                    if off > 0:
                        ax.text(0, y - off, " n/a", va="center", fontsize=_SMALL, color="0.4")
                    continue
                if np.isfinite(lo) and np.isfinite(hi):
                    ax.plot([lo, hi], [y, y], color=colour, lw=1.6)
                ax.plot([est], [y], "o", color=colour, ms=5)
        ax.set_xlim(-105, 105)  # a difference of two shares; wider CIs run off the panel
        ax.set_xlabel("with − without (pp)")
        if g is not None:
            ax.set_title(str(g), fontsize=10)
    axes[0].set_yticks(range(len(names)))
    axes[0].set_yticklabels(names[::-1])
    axes[0].set_ylim(-0.6, len(names) - 0.4)
    from matplotlib.lines import Line2D

    fig.legend([Line2D([], [], color=c, marker="o", lw=1.6) for _, _, c, _ in series], [lab for *_, lab in series],
               fontsize=_SMALL, loc="outside lower center", ncols=2)
    figure_title(fig, title + " (pp, 95% CI)", backend, effects)
    return fig


# --------------------------------------------------------------------------- #
# Table 18 (coordination queries)
# --------------------------------------------------------------------------- #
_T18_BARS = (("SR (%)", "SR"), ("Stuck (%)", "stuck report"), ("Neg. (%)", "negative report"))


def coord_query_plot(table18: pd.DataFrame, *, backend: BackendLike = None,
                     title: str = "Episodes with vs without a coordination question (Table 18)") -> Figure:
    """Grouped bars of :func:`~collablab.analysis.coord_query_table` (MECoBench Table 18): SR and the
    shares of episodes with a stuck or negative report, with (dark) and without (light) a
    question, one panel per group; each bar group is labelled with its number of episodes."""
    t = table18.reset_index()
    group = t.columns[0] if t.columns[0] != "Q." else None
    groups = list(pd.unique(t[group])) if group else [None]
    fig, axes = _panels(len(groups), 4.2, 2.6)
    xs = np.arange(len(_T18_BARS))
    for ax, g in zip(axes, groups):
        part = t[t[group] == g] if group else t
        for off, (q, shade) in zip((-0.2, 0.2), (("w/ Q.", "C0"), ("w/o Q.", "C9"))):
            row = part[part["Q."] == q]
            n = int(row["#Case"].iloc[0]) if len(row) else 0
            vals = [float(row[c].iloc[0]) if len(row) else np.nan for c, _ in _T18_BARS]
            ax.bar(xs + off, np.nan_to_num(vals), width=0.4, color=shade, label=f"{q} (n={n})")
        ax.set_xticks(xs)
        ax.set_xticklabels([name for _, name in _T18_BARS])
        ax.set_ylim(0, 100)
        ax.legend(fontsize=_SMALL, loc="upper right")
        if g is not None:
            ax.set_title(str(g), fontsize=10)
    axes[0].set_ylabel("% of episodes")
    figure_title(fig, title, backend, table18)
    return fig


# --------------------------------------------------------------------------- #
# Table 20 (stratified correction)
# --------------------------------------------------------------------------- #
def stratum_plot(table20: pd.DataFrame, *, backend: BackendLike = None,
                 title: str = "Correction effect by #wrong grabs (Table 20)") -> Figure:
    """Per-stratum ΔSR and ΔCR (correction - no correction) and the adjusted effect, one panel per group.

    Strata where Δ is undefined (a group has no episode there) are marked "n/a", not drawn as 0.
    """
    if not len(table20):
        fig, ax = _new(6.4, 3.0)
        ax.text(0.5, 0.5, "not enough wrong-grab episodes for the stratified analysis", ha="center",
                va="center", transform=ax.transAxes)
        ax.set_axis_off()
        figure_title(fig, title, backend, table20)
        return fig
    t = table20.reset_index().drop_duplicates(["group", "#WG"])
    groups = list(pd.unique(t["group"]))
    fig, axes = _panels(len(groups), 4.0, 2.8)
    for ax, g in zip(axes, groups):
        part = t[t["group"] == g]
        xs = np.arange(len(part))
        for off, col, colour in ((-0.2, "ΔSR (pp)", "C0"), (0.2, "ΔCR (pp)", "C1")):
            vals = part[col].astype(float).to_numpy()
            ax.bar(xs[np.isfinite(vals)] + off, vals[np.isfinite(vals)], width=0.4, color=colour, label=col)
        for x, v in zip(xs, part["ΔSR (pp)"].astype(float)):
            if not np.isfinite(v):
                ax.text(x, 0, "n/a", ha="center", va="bottom", fontsize=_SMALL, color="0.4")
        ax.axhline(0, color="0.5", lw=1)
        ax.set_xticks(xs)
        ax.set_xticklabels(["adj." if s == "Adjusted effect" else str(s) for s in part["#WG"]])
        ax.set_xlabel("#wrong grabs")
        ax.set_title(str(g), fontsize=10)
    axes[0].set_ylabel("correction - no correction (pp)")
    axes[0].legend(fontsize=_SMALL)
    figure_title(fig, title, backend, table20)
    return fig


# --------------------------------------------------------------------------- #
# team size and progress
# --------------------------------------------------------------------------- #
_METRIC_NAMES = {"success": "success rate", "cr": "completion rate"}


def _grey_others(ax: Any, means: dict[Any, pd.Series], level: Any) -> None:
    """The other conditions' mean curves in light grey behind a panel's own (small multiples)."""
    for other, m in means.items():
        if other != level:
            ax.plot(m.index, m.to_numpy(), color="0.78", lw=1, zorder=1)


def team_size_plot(episodes: pd.DataFrame, metric: str = "success", *, x: str = "n_agents",
                   hue: str | None = None, backend: BackendLike = None, n_boot: int = 1000, seed: int = 0,
                   title: str | None = None) -> Figure:
    """Mean ``metric`` vs team size with a 95% bootstrap CI band (MECoBench Fig. 7a).

    One line per ``hue`` level, each with its own colour and marker (levels are categories,
    also when numeric), legend outside the axes; more than three levels get one small panel
    each (shared axes, the other levels in grey). No hue when ``hue`` is ``x``. Team sizes are
    integer ticks.
    """
    import seaborn as sns

    from .significance import require_columns

    require_columns(episodes, [metric, x, hue])
    hue = None if hue == x else hue
    data = episodes.assign(**{metric: episodes[metric].astype(float)})
    levels: list[Any] = [None]
    if hue is not None:
        levels = [str(v) for v in pd.unique(data[hue].dropna())]
        try:
            levels = sorted(levels, key=float)
        except ValueError:
            pass
        data = data.assign(**{hue: data[hue].astype(str)})
    ticks = sorted(int(v) for v in pd.unique(data[x].dropna()))
    name = _METRIC_NAMES.get(metric, metric)
    line = dict(x=x, y=metric, errorbar=("ci", 95), n_boot=n_boot, seed=seed)
    if len(levels) > 3:
        fig, axes = _panels(len(levels), 3.4, 2.3, ncols=3)
        means = {lev: data[data[hue] == lev].groupby(x)[metric].mean() for lev in levels}
        for i, (ax, lev) in enumerate(zip(axes, levels)):
            _grey_others(ax, means, lev)
            sns.lineplot(data=data[data[hue] == lev], marker="o", color=f"C{i}", ax=ax, **line)
            ax.set_title(_level(hue, lev), fontsize=10)
            ax.set_xticks(ticks)
        _label_panels(axes, "team size" if x == "n_agents" else x, name)
    else:
        fig, ax = _new(6.4, 3.6)
        axes = np.array([ax])
        kw: dict[str, Any] = {}
        if hue is not None:
            kw = dict(hue=hue, hue_order=levels, style=hue, style_order=levels, markers=True, dashes=False,
                      palette=[f"C{i}" for i in range(len(levels))])
        sns.lineplot(data=data, marker=None if hue else "o", ax=ax, **line, **kw)
        ax.set_xticks(ticks)
        ax.set_xlabel("team size (agents)" if x == "n_agents" else x)
        ax.set_ylabel(name)
        if hue is not None:
            ax.legend(title=hue, fontsize=_SMALL, title_fontsize=_SMALL, loc="upper left", bbox_to_anchor=(1.01, 1))
    if metric in _METRIC_NAMES:  # rates
        for ax in axes:
            ax.set_ylim(-0.03, 1.03)
    figure_title(fig, title or f"{name.capitalize()} by {'team size' if x == 'n_agents' else x} (mean, 95% CI)",
                 backend if backend is not None else episodes)
    return fig


def progress_long(episodes: pd.DataFrame, by: str | None = None) -> pd.DataFrame:
    """CR over equivalent steps, one row per episode x equivalent step (MECoBench Fig. 33).

    ``progress[k]`` is the CR after team step k, reached at equivalent step
    ``k * n_agents``; the curve is a step function held at its last value up to the
    budget (the same convention as the Step-CR AUC).
    """
    from .significance import require_columns

    require_columns(episodes, ["progress", "n_agents", by])
    from .failures import as_list

    rows = []
    for r in episodes.to_dict("records"):
        prog = as_list(r["progress"]) or []
        if not prog:
            continue
        n = int(r["n_agents"])
        budget = r.get("budget")
        last = int(budget) if budget is not None and not pd.isna(budget) else n * (len(prog) - 1)
        last = max(last, n * (len(prog) - 1))
        e = np.arange(last + 1)
        k = np.minimum(e // max(n, 1), len(prog) - 1)
        cr = np.asarray(prog, dtype=float)[k]
        part = pd.DataFrame({"episode_id": r.get("episode_id"), "equivalent_step": e, "cr": cr})
        if by is not None:
            part[by] = r[by]
        rows.append(part)
    cols = ["episode_id", "equivalent_step", "cr", *([by] if by else [])]
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=cols)


def progress_curves(episodes: pd.DataFrame, by: str | None = None, *, backend: BackendLike = None,
                    title: str = "Task progress over equivalent steps (mean CR, 95% CI)") -> Figure:
    """Mean CR over equivalent steps per condition ``by`` (MECoBench Fig. 33): one small panel per
    condition on shared axes, its curve in colour and the other conditions in grey behind it.

    Bands: 95% normal-approximation CI of the mean (mean ± 1.96 SE across episodes); a
    bootstrap at every equivalent step would cost seconds per figure for no visible gain.
    """
    long = progress_long(episodes, by)
    levels = list(pd.unique(long[by])) if by is not None and len(long) else [None]
    curves = {}
    for lev in levels:
        part = long if lev is None else long[long[by] == lev]
        g = part.groupby("equivalent_step")["cr"]
        curves[lev] = (g.mean() * 100, 1.96 * g.sem() * 100)  # in %, like every other rate
    fig, axes = _panels(len(levels), 3.6 if len(levels) > 1 else 6.4, 2.4 if len(levels) > 1 else 3.4, ncols=3)
    for i, (ax, lev) in enumerate(zip(axes, levels)):
        if not len(long):
            ax.text(0.5, 0.5, "no progress records", ha="center", va="center", transform=ax.transAxes)
        _grey_others(ax, {k: v[0] for k, v in curves.items()}, lev)
        m, h = curves[lev]
        if len(m):
            ax.fill_between(m.index, (m - h).to_numpy(), (m + h).to_numpy(), color=f"C{i}", alpha=0.2, lw=0)
            ax.plot(m.index, m.to_numpy(), color=f"C{i}", lw=2)
        if lev is not None:
            ax.set_title(_level(by, lev), fontsize=10)
        ax.set_ylim(-2, 102)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    _label_panels(axes, "equivalent step (team steps × agents)" if len(levels) == 1 else "equivalent step",
                  "completion rate (CR, %)")
    figure_title(fig, title + ("; grey: the other conditions" if len(levels) > 1 else ""),
                 backend if backend is not None else episodes)
    return fig


def dup_grab_plot(rates: pd.DataFrame, *, backend: BackendLike = None,
                  title: str = "Duplicate-grab rate (share of episodes, Fig. 37)") -> Figure:
    """Horizontal bars of :func:`~collablab.analysis.failures.dup_grab_rates` with Wilson CIs."""
    group = rates.columns[0]
    fig, ax = _new(6.4, max(2.0, 0.4 * len(rates) + 1.4))
    ys = np.arange(len(rates))[::-1]
    rate = rates["rate"].astype(float).to_numpy()
    high = rates["ci_high"].to_numpy(dtype=float)
    ax.barh(ys, np.nan_to_num(rate), color="C0", alpha=0.85)
    err = np.vstack([np.nan_to_num(rate - rates["ci_low"].to_numpy(dtype=float)), np.nan_to_num(high - rate)])
    ax.errorbar(np.nan_to_num(rate), ys, xerr=err, fmt="none", ecolor="0.3", capsize=3)
    for y, v, hi, n in zip(ys, rate, high, rates["n"]):
        ax.text(0 if np.isnan(hi) else hi, y, f"  {v:.1f}% (n={n})" if not np.isnan(v) else " n/a",
                va="center", fontsize=_SMALL)
    ax.set_yticks(ys)
    ax.set_yticklabels([_level(group, g) for g in rates[group]])
    ax.set_xlim(0, max(10.0, float(np.nanmax(high, initial=0)) * 1.35))
    ax.set_xlabel("episodes with a duplicate grab (%)")
    figure_title(fig, title, backend if backend is not None else rates, rates)
    return fig


# --------------------------------------------------------------------------- #
# label shares and rates (MASTraceBench Figs. 4, 5, 10)
# --------------------------------------------------------------------------- #
def share_plot(table: pd.DataFrame, labels: Sequence[str], *, row: str = "method", facet: str = "task",
               backend: BackendLike = None, title: str = "Label shares (%)") -> Figure:
    """One panel per ``facet`` value, one 100%-stacked horizontal bar per ``row`` value, a segment
    per label column of ``labels`` (percentages, as in MASTraceBench Figs. 4-5)."""
    from .significance import require_columns

    require_columns(table, [row, facet, *labels])
    facets = list(pd.unique(table[facet]))
    rows = list(pd.unique(table[row]))
    fig = HouseFigure(figsize=(2.6 * max(1, len(facets)) + 1.6, 0.32 * len(rows) + 1.6), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, max(1, len(facets)), sharey=True))
    for ax, f in zip(axes, facets):
        sub = table[table[facet] == f].set_index(row).reindex(rows)
        left = np.zeros(len(rows))
        for k, lab in enumerate(labels):
            vals = sub[lab].fillna(0).to_numpy(dtype=float)
            ax.barh(range(len(rows)), vals, left=left, color=f"C{k}", label=lab)
            left += vals
        ax.set_title(str(f), fontsize=9)
        ax.set_xlim(0, 100)
        ax.set_xlabel("%")
    axes[0].set_yticks(range(len(rows)))
    axes[0].set_yticklabels(rows)
    axes[0].invert_yaxis()
    axes[-1].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=_SMALL)
    figure_title(fig, title, backend, table)
    return fig


def rate_plot(table: pd.DataFrame, *, value: str, low: str = "ci_low", high: str = "ci_high", label: str = "method",
              reference: str | None = None, backend: BackendLike = None, title: str = "Rates with 95% CI") -> Figure:
    """A point per row of ``table`` at ``value`` with its interval [``low``, ``high``]; an optional
    ``reference`` column is drawn as a hollow marker (e.g. the other methods' pooled rate)."""
    from .significance import require_columns

    require_columns(table, [label, value, low, high])
    fig, ax = _new(6.4, max(2.0, 0.35 * len(table) + 1.4))
    y = np.arange(len(table))[::-1]
    v = table[value].astype(float).to_numpy()
    ax.errorbar(v, y, xerr=[v - table[low].astype(float).to_numpy(), table[high].astype(float).to_numpy() - v],
                fmt="o", color="C0", capsize=3, label=value)
    if reference is not None:
        ax.scatter(table[reference].astype(float), y, facecolors="none", edgecolors="C3", label=reference, zorder=3)
        ax.legend(fontsize=_SMALL)
    ax.set_yticks(y)
    ax.set_yticklabels(table[label].astype(str))
    ax.set_xlim(0, 1)
    figure_title(fig, title, backend, table)
    return fig
