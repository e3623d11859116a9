"""MECoBench's figures for the notebooks (Figs. 7-10, 12-13, 32, 34-36), from the result tables of
:mod:`.tables`: SR with its 95% Wilson interval per condition, small multiples where lines would
overlap, integer axes for counts, one fixed colour per condition, the backend in every title.

Built on :class:`collablab.analysis.plots.HouseFigure` (no pyplot, so nothing is shown twice; 100
dpi, at most 11 inches wide, 9-10 pt text).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ...analysis.plots import HouseFigure, figure_title

__all__ = ["contrast_figure", "glimpse_figure", "objects_figure", "sr_figure"]

#: One colour per condition value, the same in every figure (colour-blind safe, well apart).
_COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442"]
_MAX_WIDTH = 11.0


def _colour(values: Sequence[Any]) -> dict[Any, str]:
    return {v: _COLOURS[i % len(_COLOURS)] for i, v in enumerate(values)}


def _label(col: str | None, v: Any) -> str:
    if col == "n_agents":
        return f"{int(v)} agent" + ("" if int(v) == 1 else "s")
    return str(v).replace("_", " ")


def _figure(n_panels: int, panel_width: float, height: float) -> tuple[Figure, list[Any]]:
    """A row of ``n_panels`` panels sharing y (one empty panel saying so when there is nothing to draw)."""
    if n_panels == 0:
        fig = HouseFigure(figsize=(4.8, 1.6), layout="constrained")
        ax = fig.subplots()
        ax.text(0.5, 0.5, "no episodes of this kind in this run", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig, []
    width = min(_MAX_WIDTH, max(4.8, panel_width * n_panels + 1.2))
    fig = HouseFigure(figsize=(width, height), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, n_panels, sharey=True, squeeze=False)[0])
    return fig, list(axes)



def _select(table: pd.DataFrame, where: dict[str, Any] | None) -> pd.DataFrame:
    """The rows where each column equals its value (or is one of them, for a list)."""
    for k, v in (where or {}).items():
        table = table[table[k].isin(v) if isinstance(v, (list, tuple)) else table[k] == v]
    return table


def sr_figure(table: pd.DataFrame, x: str, *, hue: str | None = None, panel: str | None = None, title: str,
              where: dict[str, Any] | None = None, y: str = "SR", ylabel: str = "success rate") -> Figure:
    """``y`` (a rate, drawn in %, with its ``_low``/``_high`` interval; ``ylabel`` its name) against
    ``x`` per ``hue`` (dodged points joined by lines when ``x`` is a number), one panel per ``panel``
    value, over the rows ``where`` selects (Figs. 7a, 8, 9, 10, 12, 32)."""
    table = _select(table, where)
    if not len(table):
        fig, _ = _figure(0, 0, 0)
        figure_title(fig, title, table)
        return fig
    panels = list(pd.unique(table[panel])) if panel else [None]
    hues = list(pd.unique(table[hue])) if hue else [None]
    colours = _colour(hues)
    numeric = pd.api.types.is_numeric_dtype(table[x])
    xs_all = sorted(pd.unique(table[x])) if numeric else list(pd.unique(table[x]))
    fig, axes = _figure(len(panels), 3.4 if len(panels) > 1 else 5.6, 3.6)
    for ax, pv in zip(axes, panels):
        part = table if pv is None else table[table[panel] == pv]
        for k, hv in enumerate(hues):
            sub = part if hv is None else part[part[hue] == hv]
            if not len(sub):
                continue
            pos = np.array([xs_all.index(v) for v in sub[x]], dtype=float) if not numeric else sub[x].to_numpy(float)
            pos = pos + (k - (len(hues) - 1) / 2) * (0.08 if numeric else 0.15)
            val = sub[y].to_numpy(float) * 100
            err = None
            if f"{y}_low" in sub.columns:
                err = np.vstack([val - sub[f"{y}_low"].to_numpy(float) * 100, sub[f"{y}_high"].to_numpy(float) * 100 - val])
            ax.errorbar(pos, val, yerr=err, fmt="o-" if numeric else "o", color=colours[hv], capsize=3, ms=5,
                        lw=1.5, label=None if hv is None else _label(hue, hv))
        if numeric:  # every panel on the sweep's team sizes, also one holding a single size
            ax.set_xticks(xs_all)
            ax.set_xlim(min(xs_all) - 0.4, max(xs_all) + 0.4)
        else:
            ax.set_xticks(range(len(xs_all)), [_label(x, v) for v in xs_all], rotation=30 if len(xs_all) > 3 else 0,
                          ha="right" if len(xs_all) > 3 else "center")
        ax.set_xlabel("team size (agents)" if x == "n_agents" else x.replace("_", " "))
        ax.set_ylim(-3, 103)
        if pv is not None:
            ax.set_title(_label(panel, pv) + (" tasks" if panel == "structure" else ""), fontsize=10)
    axes[0].set_ylabel(f"{ylabel} (%, 95% CI)")
    if hue:
        axes[-1].legend(title=hue.replace("_", " "), fontsize=9, title_fontsize=9, loc="best")
    figure_title(fig, title, table)
    return fig


def objects_figure(objects: pd.DataFrame, trends: pd.DataFrame, *, title: str,
                   where: dict[str, Any] | None = None) -> Figure:
    """SR against the number of target objects, one panel per structure and team size, each with
    its least-squares line from ``trends`` (Figs. 7b, 34b, 36), over the rows ``where`` selects; the
    panels share both axes."""
    objects, trends = _select(objects, where), _select(trends, where)
    keys = [k for k in ("structure", "prior") if k in objects.columns and objects[k].nunique() > 1]
    groups = list(objects.groupby([*keys, "n_agents"], sort=True)) if len(objects) else []
    colours = _colour(sorted(objects["n_agents"].unique()))
    fig, axes = _figure(len(groups), 1.75, 3.2)
    for ax, (key, g) in zip(axes, groups):
        key = key if isinstance(key, tuple) else (key,)
        n = int(key[-1])
        sr = g["SR"] * 100
        err = np.vstack([sr - g["SR_low"] * 100, g["SR_high"] * 100 - sr]) if "SR_low" in g.columns else None
        ax.errorbar(g["objects"], sr, yerr=err, fmt="o", color=colours[n], capsize=2, ms=4)
        sel = trends[trends["n_agents"] == n]
        for k, v in zip(keys, key):
            sel = sel[sel[k] == v]
        if len(sel) and not pd.isna(sel["slope"].iloc[0]):
            r = sel.iloc[0]
            xs = np.array([r["min_objects"], r["max_objects"]], dtype=float)
            ax.plot(xs, r["intercept"] + r["slope"] * xs, color=colours[n], lw=1.5, ls="--")
            ax.text(0.97, 0.97, f"{r['slope']:+.1f} pp/object", transform=ax.transAxes, ha="right", va="top",
                    fontsize=9)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(", ".join([*(str(v) for v in key[:-1]), _label("n_agents", n)]), fontsize=10)
        ax.set_xlabel("objects")
        ax.set_ylim(-3, 103)
    if axes:
        axes[0].set_ylabel("success rate (%, 95% CI)")
    figure_title(fig, title, objects)
    return fig


#: Verdict colours of the contrast figure (as in the paper / not shown / too few units to tell).
_VERDICT = {True: ("#009E73", "as in the paper"), False: ("#D55E00", "not shown by this run"),
            None: ("#777777", "too few units to tell")}


def contrast_figure(contrasts: pd.DataFrame, *, title: str = "This run's main differences") -> Figure:
    """The headline's differences (:func:`.headlines.contrast_table`, percentage points) with their 95%
    intervals, one row each, coloured by verdict, against the line of no difference."""
    n = max(1, len(contrasts))
    fig = HouseFigure(figsize=(9.0, 1.0 + 0.5 * n), layout="constrained")
    ax = fig.subplots()
    ys = np.arange(len(contrasts))[::-1]
    for y, (_, r) in zip(ys, contrasts.iterrows()):
        shown = None if pd.isna(r["shown"]) else bool(r["shown"])
        colour, _ = _VERDICT[shown]
        ax.errorbar([r["difference"]], [y], xerr=[[r["difference"] - r["difference_low"]],
                                                  [r["difference_high"] - r["difference"]]],
                    fmt="o", color=colour, capsize=3, ms=5)
    ax.axvline(0, color="0.5", lw=1, ls="--")
    ax.set_yticks(ys, [str(c) for c in contrasts["contrast"]], fontsize=9)
    ax.set_xlabel("difference (percentage points, 95% CI)")
    for shown, (colour, label) in _VERDICT.items():
        ax.plot([], [], "o", color=colour, label=label)
    ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.35 if n < 4 else -0.2), ncol=3, frameon=False)
    figure_title(fig, title, contrasts)
    return fig


def glimpse_figure(glimpses: Sequence[Any], *, title: str, text_lines: int = 9) -> Figure:
    """One row per :class:`~.glimpse.Glimpse`: the agent's four views (front, back, left, right;
    B.1) on the left, its observation as text (the goal's objects first, then other things lying on
    or in something) and the action it took on the right."""
    if not glimpses:
        fig, _ = _figure(0, 1.0, 1.0)
        return fig
    rows = len(glimpses)
    fig = HouseFigure(figsize=(_MAX_WIDTH, 1.95 * rows + 0.6), layout="constrained")
    axes = fig.subplots(rows, 2, squeeze=False, gridspec_kw={"width_ratios": [4.0, 1.45]})
    for (img_ax, text_ax), g in zip(axes, glimpses):
        img_ax.imshow(np.asarray(g.image), interpolation="nearest")
        img_ax.set_xticks([128, 384, 640, 896], ["front", "back", "left", "right"], fontsize=8)
        img_ax.set_yticks([])
        img_ax.tick_params(length=0)
        img_ax.grid(False)
        img_ax.set_ylabel(f"step {g.step}\nagent {g.agent}", fontsize=9)
        lines = [re.sub(r" \[[^\]]*\]", "", ln.strip()) for ln in g.text.splitlines() if ln.strip()]  # no appearance
        # the goal's objects first, then other things lying on or in something, then furniture
        lines.sort(key=lambda ln: (ln[2:].split(":")[0] not in g.goal,
                                   " on " not in ln and " inside " not in ln))
        shown = lines[:text_lines] + ([f"... {len(lines) - text_lines} more"] if len(lines) > text_lines else [])
        held = ", ".join(g.holding) or "nothing"
        said = textwrap.wrap(f"-> {g.feedback}", 46, subsequent_indent="   ")[:2]
        body = "\n".join([f"in the {g.room}, holding {held}", *[s[:46] for s in shown], "",
                          f"then: {g.action}"[:48], *said])
        text_ax.text(0.0, 1.0, body, va="top", ha="left", fontsize=7, family="monospace", transform=text_ax.transAxes)
        text_ax.set_axis_off()
    figure_title(fig, title, glimpses[0].backend)
    return fig
