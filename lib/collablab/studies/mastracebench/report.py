"""Notebook 05's result tables and the findings written from them (mastracebench.txt §4-5,
Tables 2-4, 7, 9, 10, Figs. 4-6, 10), and its analysis tail.

:func:`read_notebook` turns a run's records into a :class:`~collablab.analysis.findings.Report`:
long tables (one row per method x task, with the backend; what the findings quote) under
``tables`` and the paper's wide layouts for display (:func:`wide`). Table 7 correlates, across
methods, the mean proposal score with TS on each game (the paper's Table 7 covers its games).

The analysis tail goes beyond the paper, which reports means only: :func:`cg_tests` tests
each method against Single-Agent on the same units (paired by unit and run; sign-flip with a
paired bootstrap CI and Wilcoxon, Holm-adjusted per task and test), and :func:`regress_lift`
gives each method's GAB Regress rate with a Wilson interval and its lift over the pooled rate
of the other methods (Newcombe interval of the difference).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from ...analysis.findings import Report
from ...analysis.lift import newcombe_diff_ci, wilson_ci
from ...analysis.significance import compare
from . import findings as F
from . import metrics as MT
from .experiments import MAIN_SETTING, TABLE4_METHODS, Records
from .methods import METHODS
from .spec import DYNAMIC_TASKS, TASK_ORDER

__all__ = ["cg_tests", "read_notebook", "regress_lift", "wide"]


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


def wide(R: Report, name: str) -> pd.DataFrame:
    """A long result table in the paper's layout (methods as rows, tasks as columns), rounded."""
    t = R.tables[name].drop(columns="backend")
    if name in ("table2", "ov_fpa"):
        cols = [c for c in t.columns if c not in ("method", "task", "n")]
        w = t.pivot(index="method", columns="task", values=cols).swaplevel(0, 1, axis=1)
        tasks = [k for k in TASK_ORDER if k in set(t["task"])]
        w = w.reindex(columns=pd.MultiIndex.from_product([tasks, cols]))
    elif name in ("al", "tc"):
        w = t.pivot(index="method", columns="task", values=name.upper())
        w = w[[k for k in TASK_ORDER if k in w.columns]]
    elif name == "table4":
        w = t.pivot(index="setting", columns="method", values=["GI", "GR", "WI", "SR"]).swaplevel(0, 1, axis=1)
        w = w.reindex(index=list(dict.fromkeys(t["setting"])),
                      columns=pd.MultiIndex.from_product([[m for m in TABLE4_METHODS if m in set(t["method"])],
                                                          ["GI", "GR", "WI", "SR"]]))
        return w.round(1)
    else:
        return t.round(2)
    return w.reindex(_order(w.index)).round(2)


def read_notebook(episodes: pd.DataFrame, steps: pd.DataFrame, P: dict[str, Any]) -> Report:
    """Notebook 05's tables and findings from a run's frames; the analysis tail's tables are
    ``cg_tests`` and ``regress_lift`` (``P["n_resamples"]`` resamples)."""
    rec = Records(episodes, steps)
    main, games, b = rec.main, rec.games(), rec.backend
    R = Report(b, len(rec.episodes), unit="units (static instances and game episodes)")
    R.tables["table2"] = _long(MT.ts_cg_table(main, games), b).merge(_unit_counts(rec), on=["method", "task"], how="left")
    R.tables["gab"] = MT.gab_table(main).reset_index().assign(backend=b)
    R.tables["ar"] = MT.ar_table(main).reset_index().assign(backend=b)
    R.tables["al"] = _long(MT.al_table(main), b, "AL")
    R.tables["tc"] = _long(MT.tc_table(main), b, "TC")
    R.tables["ov_fpa"] = _long(MT.ov_fpa_table(main), b)
    R.tables["table7"] = _table7(rec, games)
    R.tables["table4"] = _table4(rec, P)
    T = R.tables
    R.sections["table2"] = [F.gain_through_interaction(T["table2"], T["gab"]), F.loss_through_regress(T["table2"], T["gab"]),
                            F.clears_top_cg(T["table2"]), F.cce_helps(T["table2"])]
    T["means"] = F.interactive_means(T["gab"], T["ar"])
    R.sections["gab"] = [F.improve_is_rare(T["means"])]
    R.sections["ar"] = [F.weak_lifted_strong_kept(T["means"])]
    R.sections["tc"] = [F.token_cost_ranking(T["tc"])]
    R.sections["table7"] = [F.proposal_score_tracks_ts(T["table7"])]
    R.sections["table4"] = [F.regress_across_settings(T["table4"])]
    T["cg_tests"] = cg_tests(rec, int(P["n_resamples"]))
    T["regress_lift"] = regress_lift(rec)
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
