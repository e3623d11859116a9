"""Notebook 05's result tables and the findings written from them (mastracebench.txt §4-5,
Tables 2-4, 7, 9, 10, Figs. 4-6, 10), and its analysis tail.

:func:`read_notebook` turns a run's records into a :class:`~collablab.analysis.findings.Report`:
long tables (one row per method x task, with the backend; what the findings quote) under
``tables``, display layouts beside them (methods as rows, tasks as columns, CG with its interval;
tasks by the paper's names) shown through ``R.table(name)`` with :data:`STYLES`, the headline's
findings and what the run does not show. Table 7 correlates, across methods, the mean proposal
score with TS on each game (the paper's Table 7 covers its games).

The analysis tail goes beyond the paper, which reports means only: :func:`cg_tests` tests
each method against Single-Agent on the same units (paired by unit and run; sign-flip with a
paired bootstrap CI and Wilcoxon, Holm-adjusted per task and test), and :func:`regress_lift`
gives each method's GAB Regress rate with a Wilson interval and its lift over the pooled rate
of the other methods (Newcombe interval of the difference).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from ...analysis.findings import Report
from ...analysis.present import TableStyle
from ...analysis.lift import newcombe_diff_ci, wilson_ci
from ...analysis.significance import compare
from . import findings as F
from . import metrics as MT
from .experiments import MAIN_SETTING, TABLE4_METHODS, Records, skipped_settings
from .methods import METHODS
from .metrics import AR_STRONG_LABELS, AR_WEAK_LABELS
from .spec import DYNAMIC_TASKS, TASK_NAMES, TASK_ORDER

__all__ = ["STYLES", "cg_tests", "read_notebook", "regress_lift"]


def _long(df: pd.DataFrame, backend: str, value: str | None = None) -> pd.DataFrame:
    """A method x task wide table (optionally with a metric level) as rows with a backend column."""
    out = df.stack("task", future_stack=True) if isinstance(df.columns, pd.MultiIndex) else df.stack(future_stack=True)
    out = out.reset_index() if value is None else out.rename(value).reset_index()
    return out.assign(backend=backend)


def _order(ms: Sequence[str]) -> list[str]:
    return [m for m in METHODS if m in set(ms)]


def _table7(rec: Records, games: list[Any]) -> pd.DataFrame:
    rows = []
    for task in DYNAMIC_TASKS:
        methods = {t.method for t in rec.main if t.task == task}
        if len(methods) >= 3:
            c = MT.proposal_ts_correlation(rec.main, games, task=task)
            rows.append({"task": task, "rho": c.spearman, "p_rho": c.spearman_p, "r": c.pearson, "p_r": c.pearson_p,
                         "n": c.n})
    return pd.DataFrame(rows, columns=["task", "rho", "p_rho", "r", "p_r", "n"]).assign(backend=rec.backend)


def _table4(rec: Records, P: dict[str, Any]) -> pd.DataFrame:
    labels = {MAIN_SETTING: next((s["label"] for s in P["table4_settings"] if "agent_profiles" not in s and
                                  "models" not in s and (s["proposers"], s["rounds"]) == (3, 1)), MAIN_SETTING)}
    order = [s["label"] for s in P["table4_settings"]]
    frames = []
    for setting, trajs in rec.by_setting().items():
        t = MT.refinement_summary(trajs).reset_index()
        frames.append(t.assign(setting=labels.get(setting, setting)))
    if not frames:
        return pd.DataFrame(columns=["setting", "method", "task", "GI", "GR", "WI", "SR", "backend"])
    out = pd.concat(frames, ignore_index=True)
    out["_o"] = out["setting"].map({s: i for i, s in enumerate(order)}).fillna(len(order))
    return out.sort_values(["_o", "method"]).drop(columns="_o").reset_index(drop=True).assign(backend=rec.backend)


def _unit_counts(rec: Records) -> pd.DataFrame:
    """Units behind each TS: static instances x runs, or game episodes."""
    e = rec.episodes[rec.episodes["episode_key"].isin(rec.main_keys)]
    return e.groupby(["method", "task"], sort=False).size().rename("n").reset_index()


def _method_of(contrast: pd.Series) -> pd.Series:
    return contrast.str.rsplit(" vs ", n=1).str[0]


def _cg_intervals(tests: pd.DataFrame) -> pd.DataFrame:
    """Each method's CG interval on each task: the sign-flip rows of :func:`cg_tests` (the mean
    paired difference to Single-Agent, i.e. CG, with its paired bootstrap 95% interval and Holm p)."""
    cols = ["method", "task", "CG_low", "CG_high", "p_holm"]
    if not len(tests):
        return pd.DataFrame(columns=cols)
    sf = tests[tests["test"] == "sign_flip"]
    return pd.DataFrame({"method": _method_of(sf["contrast"]), "task": sf["task"], "CG_low": sf["ci_low"],
                         "CG_high": sf["ci_high"], "p_holm": sf["p_adjusted"]})[cols]


def _contrasts(tests: pd.DataFrame) -> pd.DataFrame:
    """The analysis tail's tests, one row per task x method: the mean paired difference to
    Single-Agent with its interval, the Holm-adjusted sign-flip and Wilcoxon p-values, the pairs."""
    cols = ["task", "method", "difference", "difference_low", "difference_high", "p_sign_flip", "p_wilcoxon", "pairs"]
    if not len(tests):
        return pd.DataFrame(columns=cols)
    t = tests.assign(method=_method_of(tests["contrast"]))
    sf, wx = t[t["test"] == "sign_flip"], t[t["test"] == "wilcoxon"]
    out = sf[["task", "method", "estimate", "ci_low", "ci_high", "p_adjusted", "n"]].merge(
        wx[["task", "method", "p_adjusted"]], on=["task", "method"], how="left", suffixes=("", "_w"))
    out.columns = [*cols[:5], "p_sign_flip", "pairs", "p_wilcoxon"]
    return out[cols].assign(task=out["task"].map(TASK_NAMES))


def _by_task(t: pd.DataFrame, value: str, bounds: bool = False) -> pd.DataFrame:
    """A long method x task table as methods (rows) x tasks (columns) of ``value``, with
    ``<task>_low``/``<task>_high`` from ``<value>_low``/``<value>_high`` when ``bounds``."""
    tasks = [k for k in TASK_ORDER if k in set(t["task"])]
    if not tasks:
        return pd.DataFrame(columns=["method"])
    w = t.pivot(index="method", columns="task", values=value)[tasks]
    if bounds:
        for end in ("low", "high"):
            b = t.pivot(index="method", columns="task", values=f"{value}_{end}")[tasks]
            w = w.join(b.rename(columns=lambda k: f"{k}_{end}"))
    w.columns.name = None
    return w.reindex(_order(w.index)).reset_index()


def _settings_wide(t4: pd.DataFrame) -> pd.DataFrame:
    """Table 4 in the paper's layout: settings (rows) x method and GI/GR/WI/SR (columns)."""
    cols = ["GI", "GR", "WI", "SR"]
    if not len(t4):
        return pd.DataFrame(columns=["setting"])
    w = t4.pivot(index="setting", columns="method", values=cols).reindex(index=list(dict.fromkeys(t4["setting"])))
    methods = [m for m in TABLE4_METHODS if m in set(t4["method"])]
    return pd.DataFrame({f"{m} {c}": w[(c, m)] for m in methods for c in cols}, index=w.index).reset_index()


def _named(t: pd.DataFrame) -> pd.DataFrame:
    """A long table for display: tasks by the paper's names."""
    return t.assign(task=t["task"].map(TASK_NAMES)).reset_index(drop=True)


def _first(column: str, descending: bool = True) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Rows ordered by ``column`` (kept as is when the column went to the caption as a constant)."""
    def order(t: pd.DataFrame) -> pd.DataFrame:
        return t.sort_values(column, ascending=not descending, kind="stable") if column in t.columns else t
    return order


_TASKS = {k: TASK_NAMES[k] for k in TASK_ORDER}
#: How each displayed table reads (``R.table(name)``): plain names, percentages, intervals, the rows shown first.
STYLES: dict[str, TableStyle] = {
    "cg": TableStyle(rename=_TASKS, labels=("method",),
                     caption="CG = TS(method) − TS(Single-Agent), points on the 0-100 scale, with the paired "
                             "bootstrap 95% interval (same units and runs)"),
    "ts": TableStyle(rename=_TASKS, labels=("method",), caption="TS: mean score of the final answers (0-100)"),
    "gab_cells": TableStyle(percents=("Improve", "Regress", "OptKeep", "SubKeep"), order=_first("Regress"), max_rows=12,
                      rename={"n": "units"}, labels=("method", "task"),
                      caption="GAB label shares (% of units with proposers); the cells with the most Regress first"),
    "ar_strong": TableStyle(percents=AR_STRONG_LABELS, order=_first("Regress"), max_rows=12, rename={"n": "agents"},
                            labels=("method", "task"),
                            caption="AR of strong agents (% of agent-units); the cells with the most Regress first"),
    "ar_weak": TableStyle(percents=AR_WEAK_LABELS, order=_first("Degrade"), max_rows=12, rename={"n": "agents"},
                          labels=("method", "task"),
                          caption="AR of weak agents (% of agent-units); the cells with the most Degrade first"),
    "al_wide": TableStyle(rename=_TASKS, labels=("method",),
                          caption="AL: best final proposal − final answer (points; 0 for Single-Agent)"),
    "fpa": TableStyle(percents=TASK_ORDER, rename=_TASKS, labels=("method",),
                      caption="FPA: % of units whose final proposals all agree (– where not applicable)"),
    "ov": TableStyle(percents=TASK_ORDER, rename=_TASKS, labels=("method",),
                     caption="OV: % of recorded outputs that parse and score"),
    "tc_wide": TableStyle(rename=_TASKS, labels=("method",),
                          caption="TC: tokens per unit as a multiple of Single-Agent's (×)"),
    "correlations": TableStyle(rename={"rho": "Spearman ρ", "p_rho": "p (ρ)", "r": "Pearson r", "p_r": "p (r)",
                                       "n": "methods"}, labels=("task",),
                               caption="Across methods: mean proposal score against TS on each game"),
    "table4_wide": TableStyle(labels=("setting",), caption="GI/GR: GAB Improve/Regress; WI: weak agents lifted "
                              "(Surpass + Reach + Partial); SR: strong agents' Regress (all %)"),
    "contrasts": TableStyle(order=_first("p_sign_flip", descending=False), max_rows=12, labels=("task", "method"),
                            rename={"difference": "method − Single-Agent [95% CI]",
                                    "p_sign_flip": "p sign-flip (Holm)", "p_wilcoxon": "p Wilcoxon (Holm)"},
                            caption="Paired by unit and run; Holm-adjusted within each task and test; the "
                                    "smallest sign-flip p first"),
    "regress_lift": TableStyle(rates=("regress", "others", "diff"), intervals={"regress": ("ci_low", "ci_high")},
                               rename={"regress": "Regress rate [95% CI]", "n": "units", "others": "other methods",
                                       "lift": "lift (×)",
                                       "diff": "difference [95% CI]"}, labels=("method",),
                               caption="Wilson interval of the rate, Newcombe interval of the difference"),
}


def _limits(rec: Records, P: dict[str, Any], t2: pd.DataFrame) -> list[str]:
    """What this run does not show (sentences under the headline): tasks and settings not run, tasks
    with too few units, and what offline token counts are."""
    out = []
    if "option_gen" in P["tasks"] and "option_gen" not in set(t2["task"]):
        out.append("OptionGen is not run: it needs your RACE copy (race_path).")
    units = t2.groupby("task", sort=False)["n"].max()
    few = [f"{TASK_NAMES[k]} ({int(n)})" for k, n in units.items() if n < F.MIN_UNITS]
    if few:
        out.append(f"Tasks with fewer than {F.MIN_UNITS} units per method are too few units to tell: "
                   f"{', '.join(few)}.")
    out += [f"Table 4's {note.replace(': not run;', ' is not run:')}." for note in skipped_settings(P)]
    if rec.backend == "heuristic":
        out.append("Offline token counts are word counts of prompts and replies, not tokenizer counts.")
    return out


def read_notebook(episodes: pd.DataFrame, steps: pd.DataFrame, P: dict[str, Any], run_dir: Any = None) -> Report:
    """Notebook 05's tables, findings, headline and display styles from a run's frames (the tail's
    tests use ``P["n_resamples"]`` resamples); displayed tables go as CSV to ``run_dir/tables``."""
    rec = Records(episodes, steps)
    main, games, b = rec.main, rec.games(), rec.backend
    R = Report(b, len(rec.episodes), unit="units (static instances and game episodes)", styles=dict(STYLES),
               run_dir=run_dir)
    T = R.tables
    T["cg_tests"] = cg_tests(rec, int(P["n_resamples"]))
    T["table2"] = (_long(MT.ts_cg_table(main, games), b).merge(_unit_counts(rec), on=["method", "task"], how="left")
                   .merge(_cg_intervals(T["cg_tests"]), on=["method", "task"], how="left"))
    T["gab"] = MT.gab_table(main).reset_index().assign(backend=b)
    T["ar"] = MT.ar_table(main).reset_index().assign(backend=b)
    T["al"] = _long(MT.al_table(main), b, "AL")
    T["tc"] = _long(MT.tc_table(main), b, "TC")
    T["ov_fpa"] = _long(MT.ov_fpa_table(main), b)
    T["table7"] = _table7(rec, games)
    T["table4"] = _table4(rec, P)
    T["means"] = F.interactive_means(T["gab"], T["ar"])
    T["al_fpa"] = F.al_fpa_correlation(T["al"], T["ov_fpa"])
    T["regress_lift"] = regress_lift(rec)
    for name, src, value in (("cg", "table2", "CG"), ("ts", "table2", "TS"), ("al_wide", "al", "AL"),
                             ("fpa", "ov_fpa", "FPA"), ("ov", "ov_fpa", "OV"), ("tc_wide", "tc", "TC")):
        T[name] = _by_task(T[src], value, bounds=name == "cg")
    T["cg"] = T["cg"][T["cg"]["method"] != MT.SINGLE_AGENT].reset_index(drop=True)
    T["table4_wide"] = _settings_wide(T["table4"])
    T["contrasts"] = _contrasts(T["cg_tests"])
    T["gab_cells"] = _named(T["gab"])
    T["correlations"] = _named(T["table7"])
    for group, labels in (("strong", AR_STRONG_LABELS), ("weak", AR_WEAK_LABELS)):
        part = T["ar"][T["ar"]["group"] == group]
        T[f"ar_{group}"] = _named(part[["method", "task", *labels, "n", "backend"]])
    gains, gain = F.gains_over_single(T["table2"]), F.gain_through_interaction(T["table2"], T["gab"])
    loss, rare = F.loss_through_regress(T["table2"], T["gab"]), F.improve_is_rare(T["means"])
    cost = F.token_cost_ranking(T["tc"])
    R.sections["table2"] = [gains, gain, loss, F.clears_top_cg(T["table2"]), F.cce_helps(T["table2"])]
    R.sections["gab"] = [rare]
    R.sections["ar"] = [F.weak_lifted_strong_kept(T["means"])]
    R.sections["al"] = [F.al_follows_agreement(T["al_fpa"])]
    R.sections["tc"] = [cost]
    R.sections["table7"] = [F.proposal_score_tracks_ts(T["table7"])]
    R.sections["table4"] = [F.regress_across_settings(T["table4"])]
    R.headlines = [gains, gain, loss, rare, cost]
    R.limits = _limits(rec, P, T["table2"])
    return R


# -- the analysis tail --------------------------------------------------------------------------

def _unit_scores(rec: Records) -> pd.DataFrame:
    """One row per main-configuration unit: method, task, unit, run, score (answer or episode score)."""
    e = rec.episodes[rec.episodes["episode_key"].isin(rec.main_keys)]
    return e[["method", "task", "unit", "run", "score", "backend"]].reset_index(drop=True)


def cg_tests(rec: Records, n_resamples: int = 10_000) -> pd.DataFrame:
    """Every method against Single-Agent per task, paired by unit and run (CG's paired test)."""
    scores = _unit_scores(rec)
    out = []
    for task in [k for k in TASK_ORDER if k in set(scores["task"])]:
        sub = scores[scores["task"] == task]
        others = [m for m in _order(sub["method"]) if m != MT.SINGLE_AGENT]
        if MT.SINGLE_AGENT not in set(sub["method"]) or not others:
            continue
        t = compare(sub, "method", "score", ["unit", "run"], [(m, MT.SINGLE_AGENT) for m in others],
                    ("sign_flip", "wilcoxon"), cluster_col="unit", n_resamples=n_resamples,
                    n_permutations=n_resamples)
        out.append(t.assign(task=task))
    if not out:
        return pd.DataFrame()
    cols = ["task", "contrast", "test", "estimand", "estimate", "ci_low", "ci_high", "p_value", "p_adjusted", "n", "note"]
    return pd.concat(out, ignore_index=True)[cols].assign(backend=rec.backend)


def regress_lift(rec: Records) -> pd.DataFrame:
    """GAB Regress per method (units with proposers, main configuration): rate, Wilson 95% CI,
    and lift and difference against the pooled rate of the other methods (Newcombe 95% CI)."""
    labels = pd.DataFrame([(t.method, MT.gab(t)) for t in rec.main], columns=["method", "gab"]).dropna()
    rows = []
    for m in _order(labels["method"]):
        mine, rest = labels[labels["method"] == m], labels[labels["method"] != m]
        k, n = int((mine["gab"] == "Regress").sum()), len(mine)
        k0, n0 = int((rest["gab"] == "Regress").sum()), len(rest)
        lo, hi = wilson_ci(k, n)
        dlo, dhi = newcombe_diff_ci(k, n, k0, n0)
        rate, base = k / n, (k0 / n0 if n0 else math.nan)
        rows.append({"method": m, "regress": rate, "ci_low": lo, "ci_high": hi, "n": n, "others": base,
                     "lift": rate / base if base else math.inf if rate else math.nan, "diff": rate - base,
                     "diff_low": dlo, "diff_high": dhi})
    return pd.DataFrame(rows).assign(backend=rec.backend)
