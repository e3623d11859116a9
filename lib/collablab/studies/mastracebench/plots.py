"""Notebook 05's figures (mastracebench.txt Table 2, Figs. 4-6 and 10, Tables 3-4), in the house style
of :mod:`collablab.analysis.plots`: at most 11 inches wide (legible at notebook width), one panel per
task where bars or intervals would overlap, one fixed colour per label, the backend in every title.
Each function takes the long result tables of :mod:`.report` (``R.tables[...]``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ...analysis.plots import HouseFigure, figure_title, rate_plot
from .findings import MIN_UNITS
from .methods import METHODS
from .metrics import AR_STRONG_LABELS, AR_WEAK_LABELS, GAB_LABELS
from .spec import TASK_NAMES, TASK_ORDER

__all__ = ["al_fpa_plot", "ar_plot", "cg_plot", "gab_plot", "regress_lift_plot", "settings_plot", "tc_plot"]

_WIDTH = 10.5  # inches: 1,050 px at the house figure's 100 dpi
#: One colour per label, the same in every figure (GAB and strong-agent AR share theirs).
_LABEL_COLOURS = {"Improve": "#0072B2", "Surpass": "#0072B2", "Reach": "#56B4E9", "Partial": "#009E73",
                  "OptKeep": "#999999", "SubKeep": "#CCCCCC", "Keep": "#CCCCCC", "Regress": "#D55E00",
                  "Degrade": "#D55E00"}


def _tasks(t: pd.DataFrame) -> list[str]:
    return [k for k in TASK_ORDER if k in set(t["task"])]


def _methods(t: pd.DataFrame) -> list[str]:
    return [m for m in METHODS if m in set(t["method"])]


def _grid(n: int, row_height: float, cols: int = 3) -> tuple[Figure, list]:
    """A figure of ``n`` panels in rows of ``cols``, sharing the y axis; unused panels hidden."""
    cols = max(1, min(cols, n))
    rows = max(1, math.ceil(n / cols))
    fig = HouseFigure(figsize=(_WIDTH, rows * row_height + 1.0), layout="constrained")
    axes = list(np.atleast_1d(fig.subplots(rows, cols, sharey=True, squeeze=False)).ravel())
    for ax in axes[n:]:
        ax.set_axis_off()
    return fig, axes[:n]



def _empty(title: str, table: pd.DataFrame, what: str) -> Figure:
    fig = HouseFigure(figsize=(6.4, 2.0), layout="constrained")
    ax = fig.subplots()
    ax.text(0.5, 0.5, what, ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()
    figure_title(fig, title, table)
    return fig


def cg_plot(t2: pd.DataFrame) -> Figure:
    """Table 2 as a figure: each method's CG over Single-Agent with its 95% paired bootstrap interval,
    one panel per task (point filled when the interval excludes 0 and the cell has enough units)."""
    title = "Collaboration Gain over Single-Agent (Table 2; CG, 95% CI)"
    rows = t2[t2["method"] != "Single-Agent"].dropna(subset=["CG"])
    if not len(rows):
        return _empty(title, t2, "no CG in this run (Single-Agent or the other methods are missing)")
    methods, tasks = _methods(rows), _tasks(rows)
    fig, axes = _grid(len(tasks), 0.26 * len(methods) + 0.7)
    y = {m: len(methods) - 1 - i for i, m in enumerate(methods)}
    for ax, task in zip(axes, tasks):
        sub = rows[rows["task"] == task]
        ax.axvline(0, color="0.4", lw=1)
        for r in sub.itertuples():
            lo, hi = getattr(r, "CG_low"), getattr(r, "CG_high")
            clear = pd.notna(lo) and (lo > 0 or hi < 0) and r.n >= MIN_UNITS
            colour = "#0072B2" if clear and lo > 0 else "#D55E00" if clear else "0.45"
            if pd.notna(lo):
                ax.plot([lo, hi], [y[r.method]] * 2, color=colour, lw=2, solid_capstyle="butt")
            ax.plot([r.CG], [y[r.method]], "o", ms=6, color=colour, mfc=colour if clear else "white")
        n = int(sub["n"].max()) if len(sub) else 0
        ax.set_title(f"{TASK_NAMES.get(task, task)} ({n} units per method)", fontsize=10)
        ax.set_xlabel("CG (points, 0-100 scale)")
    axes[0].set_yticks(list(y.values()), list(y))
    axes[0].set_ylim(-0.6, len(methods) - 0.4)
    fig.text(0.01, -0.01, "Filled: 95% interval excludes 0 (blue gain, orange loss) with at least "
             f"{MIN_UNITS} units; hollow grey: too few units to tell.", fontsize=9, ha="left", va="top")
    figure_title(fig, title, t2)
    return fig


def _share_grid(table: pd.DataFrame, labels: Sequence[str], title: str) -> Figure:
    """One panel per task, one 100%-stacked bar per method, a segment per label (fixed colours)."""
    if not len(table):
        return _empty(title, table, "no units with proposers in this run")
    methods, tasks = _methods(table), _tasks(table)
    fig, axes = _grid(len(tasks), 0.24 * len(methods) + 0.7)
    ys = np.arange(len(methods))
    for ax, task in zip(axes, tasks):
        sub = table[table["task"] == task].set_index("method").reindex(methods)
        left = np.zeros(len(methods))
        for lab in labels:
            vals = sub[lab].fillna(0).to_numpy(dtype=float)
            ax.barh(ys, vals, left=left, color=_LABEL_COLOURS[lab], label=lab, height=0.75)
            left += vals
        ax.set_title(TASK_NAMES.get(task, task), fontsize=10)
        ax.set_xlim(0, 100)
        ax.set_xticks([0, 50, 100])
        ax.set_xlabel("% of units")
    axes[0].set_yticks(ys, methods)
    axes[0].invert_yaxis()
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncol=len(labels), fontsize=9)
    figure_title(fig, title, table)
    return fig


def gab_plot(gab: pd.DataFrame) -> Figure:
    """Fig. 4: where each final answer lands against the best initial proposal (GAB label shares),
    one panel per task."""
    return _share_grid(gab, GAB_LABELS, "Final answer against the best initial proposal (GAB, Fig. 4)")


def ar_plot(ar: pd.DataFrame, group: str) -> Figure:
    """Figs. 5 and 10: Agent Refinement label shares of the ``group`` ("strong" or "weak") agents,
    one panel per task."""
    labels = AR_STRONG_LABELS if group == "strong" else AR_WEAK_LABELS
    what = ("strong agents (initial proposal = the best)" if group == "strong" else
            "weak agents (initial proposal below the best)")
    return _share_grid(ar[ar["group"] == group], labels, f"Agent Refinement of {what} (AR, Figs. 5, 10)")


def al_fpa_plot(al: pd.DataFrame, ov_fpa: pd.DataFrame) -> Figure:
    """Fig. 6 with Table 9 (Observation 4): each method-task cell's aggregation loss (AL) against how
    often its final proposals agree (FPA), a colour per task."""
    title = "Aggregation loss against final-proposal agreement (Fig. 6, Table 9)"
    cells = al.merge(ov_fpa, on=["method", "task", "backend"]).dropna(subset=["AL", "FPA"])
    if not len(cells):
        return _empty(title, al, "no method with an FPA in this run")
    fig = HouseFigure(figsize=(7.5, 4.2), layout="constrained")
    ax = fig.subplots()
    for k, task in enumerate(_tasks(cells)):
        sub = cells[cells["task"] == task]
        ax.scatter(sub["FPA"], sub["AL"], s=30, color=f"C{k}", marker="osD^vP"[k % 6], label=TASK_NAMES.get(task, task))
    ax.axhline(0, color="0.4", lw=1)
    ax.set_xlabel("FPA: units whose final proposals all agree (%)")
    ax.set_ylabel("AL (points lost at aggregation)")
    fig.legend(loc="outside right upper", fontsize=9)
    figure_title(fig, title, al)
    return fig


def tc_plot(tc: pd.DataFrame) -> Figure:
    """Tables 3 and 10: each method's token cost as a multiple of Single-Agent's, a marker per task
    (log scale)."""
    title = "Token cost over Single-Agent (TC, Tables 3 and 10)"
    rows = tc.dropna(subset=["TC"])
    if not len(rows):
        return _empty(title, tc, "no token cost in this run")
    methods, tasks = _methods(rows), _tasks(rows)
    fig = HouseFigure(figsize=(7.5, 0.3 * len(methods) + 1.8), layout="constrained")
    ax = fig.subplots()
    y = {m: len(methods) - 1 - i for i, m in enumerate(methods)}
    markers = "osD^vP"
    for k, task in enumerate(tasks):
        sub = rows[rows["task"] == task]
        ax.scatter(sub["TC"], [y[m] + (k - (len(tasks) - 1) / 2) * 0.1 for m in sub["method"]], s=28,
                   marker=markers[k % len(markers)], color=f"C{k}", label=TASK_NAMES.get(task, task), zorder=3)
    ax.axvline(1, color="0.4", lw=1)
    ax.set_xscale("log")
    ax.set_yticks(list(y.values()), list(y))
    ax.set_xlabel("token cost / Single-Agent's (×, log scale)")
    fig.legend(loc="outside right upper", fontsize=9)
    figure_title(fig, title, tc)
    return fig


def settings_plot(t4: pd.DataFrame) -> Figure:
    """Table 4: GAB Improve (GI) against Regress (GR) and strong agents' Regress (SR) under each
    setting, one panel per method."""
    title = "Improve and Regress across settings (Table 4, EvidenceChain)"
    if not len(t4):
        return _empty(title, t4, "no Table 4 setting in this run")
    methods = [m for m in METHODS if m in set(t4["method"])]
    settings = list(dict.fromkeys(t4["setting"]))
    fig = HouseFigure(figsize=(_WIDTH, 0.32 * len(settings) + 1.6), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(methods), sharey=True, squeeze=False)).ravel()
    y = {s: len(settings) - 1 - i for i, s in enumerate(settings)}
    for ax, m in zip(axes, methods):
        sub = t4[t4["method"] == m]
        for col, colour, marker in (("GI", "#0072B2", "o"), ("GR", "#D55E00", "s"), ("SR", "#E69F00", "^")):
            ax.scatter(sub[col], [y[s] for s in sub["setting"]], color=colour, marker=marker, s=36, zorder=3,
                       label={"GI": "GAB Improve", "GR": "GAB Regress", "SR": "strong agents' Regress"}[col])
        ax.set_title(m, fontsize=10)
        ax.set_xlabel("% of units (agents for SR)")
        ax.set_xlim(left=0)
    axes[0].set_yticks(list(y.values()), list(y))
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncol=3, fontsize=9)
    figure_title(fig, title, t4)
    return fig


def regress_lift_plot(lift: pd.DataFrame) -> Figure:
    """Each method's GAB Regress rate (Wilson 95% CI) against the other methods' pooled rate."""
    fig = rate_plot(lift, value="regress", reference="others",
                    title="GAB Regress rate per method (95% Wilson CI) against the other methods")
    fig.axes[0].set_xlabel("share of units whose answer falls below the best initial proposal")
    return fig
