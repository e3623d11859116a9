"""Notebook 07's result tables and the findings written from them (observe_share_predict.txt
§4.2-4.5, appendix A.3-A.5), and its analysis tail.

:func:`read_notebook` turns a run's records into a :class:`~collablab.analysis.findings.Report`.
Every table is long (one row per backend x condition, or x agent, or x target) with a
``backend`` column, which the findings quote; :data:`STYLES` says how the notebook displays each
(:func:`collablab.analysis.present.present`: rates in percent, intervals in their estimate's
cell, at most 12 columns, the full table as CSV in the run folder). Rates are fractions in the
tables. Tables:

- ``outcomes`` (§4.2, Table 3, §A.3.1): per context (Obj, OAS, KE, OAS+KE) without and with
  OANA under Decoupled Partial Observability: SR, PC, PC of failed episodes, PC − SR, simulation
  steps, planning cycles, Extraneous Effort, Other-Agent Mention Ratio and Action Success per
  agent (``_R`` robot, ``_H`` human); ``full_outcomes``: the same for the four Full conditions
  (§4.5, §A.4.1);
- ``channel_effects``: every pair of conditions that differs in one channel (OAS, KE, OANA, or
  ``Full`` observability) with the others held fixed, per metric: the two means, their
  difference and the relative change (what the direction sentences quote);
- ``roles`` (§4.3, §A.3.2): per condition and agent: exploration efficiency (mean step of the
  first object interaction), Extra Planning, Action Success, planning cycles, mention ratio,
  when the agent finished; ``asymmetry``: per condition the robot-human gaps and Task
  Offloading; ``role_counts``: in how many partial-observability conditions each asymmetry holds;
- ``prediction`` (§4.4, Table 2, §A.3.3): per OANA condition and agent, union target: Action
  Type accuracy, conditional principal-parameter accuracy, joint principal accuracy,
  all-parameter accuracy, conditional all-parameter accuracy and type given all parameters,
  pooled over every prediction of the condition, and the share made when the partner had no
  action left (scored apart, in no rate: ``no_target_share``); ``prediction_gain``: each context's gain over
  the object-only baseline (points); ``prediction_strict`` (§4.5, §A.5.1): the same under the
  strict next-action target; ``strict_gap``: union − strict per cell (points);
  ``prediction_means``: per observability, means over cells under both targets;
- ``direction_summary`` and ``role_summary``: ``directions`` and ``role_counts`` as the notebook
  shows them (one row per channel; one per asymmetry, formatted per row);
- ``full_vs_partial`` (§4.5, §A.4.1): per context and OANA setting, full against partial
  observability (steps ratio, Extraneous Effort retained, SR, PC, the human's completion lag).

Why episodes failed (beyond the paper's tables): ``failure_reasons`` counts each episode record's
``failure_reason`` (:mod:`.explanations`) per backend x condition; ``failures`` is its wide view
(one share column per reason); :func:`most_common_failure` names each condition's most common one.

The analysis tail goes beyond the paper, which runs each configuration once and reports means:
:func:`channel_tests` tests each channel over tasks (paired by task and run, the other channels
held fixed; sign-flip permutation with a paired bootstrap CI, and Wilcoxon signed-rank),
Holm-adjusted within each channel, outcome and test; ``paired_tests`` holds them one row per
pair of conditions. Its four main contrasts are the notebook's headline (:data:`.findings.TESTED`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ...analysis.findings import OFFLINE_BACKENDS, Finding, Report, backend_of
from ...analysis.lift import wilson_ci
from ...analysis.present import TableStyle, fmt_number
from ...analysis.significance import compare, mean_ci, require_columns
from . import findings as F
from .calls import parse_call
from .experiments import CONDITION_ORDER, CONTEXTS, FULL_CONTEXTS, condition_name, episode_frame
from .explanations import REASONS
from .prediction import prediction_table

__all__ = ["AGENTS", "CHANNEL_PAIRS", "CI_METRICS", "METRICS", "PREDICTION_RATES", "REASON_NAMES", "ROLE_COUNTS",
           "STYLES", "TEST_OUTCOMES", "TEST_SHORT", "asymmetry_table", "channel_effects", "channel_pairs",
           "channel_tests", "condition_table", "direction_summary", "directions", "failure_reasons", "failure_table",
           "failure_words", "full_vs_partial", "limits", "most_common_failure",
           "paired_tests", "prediction_frames", "read_notebook", "role_counts", "role_summary", "roles_table"]

#: Agent labels of the per-agent tables and their column suffixes.
AGENTS = {"robot": "R", "human": "H"}
#: The per-condition means of :func:`condition_table` (team metrics, then per agent).
METRICS = ("SR", "PC", "PC_failed", "PC_SR_gap", "steps", "cycles", "EE", "AS", "offloading", "mention_R",
           "mention_H", "AS_R", "AS_H")
#: The prediction rates of Table 2 (``.prediction.PredictionTally.rates`` without the target prefix).
PREDICTION_RATES = ("type_acc", "cond_principal", "principal_acc", "all_acc", "cond_all", "type_given_all")
#: The episode outcomes the analysis tail tests.
TEST_OUTCOMES = ("simulation_steps", "extraneous_effort", "success", "percent_complete")
_KEYS = ["backend", "observability", "context", "oana", "condition"]
_RANK = {c: i for i, c in enumerate(CONDITION_ORDER)}


def _sorted(t: pd.DataFrame, *extra: str) -> pd.DataFrame:
    if not len(t):
        return t.reset_index(drop=True)
    keys = {"_c": t["condition"].map(_RANK).fillna(len(_RANK))}
    if "agent" in t.columns:
        keys["_a"] = t["agent"].map({a: i for i, a in enumerate(AGENTS)})
    t = t.assign(**keys)
    return t.sort_values(["backend", "_c", *(["_a"] if "_a" in keys else []), *extra]).drop(
        columns=list(keys)).reset_index(drop=True)


def _mean(s: pd.Series) -> float:
    v = pd.to_numeric(s, errors="coerce").astype(float)
    return float(v.mean()) if v.notna().any() else math.nan


# -- per-condition means ---------------------------------------------------------------------------

#: The means of :func:`condition_table` that carry a 95% interval (``_low``/``_high``).
CI_METRICS = ("SR", "steps", "EE")


def condition_table(E: pd.DataFrame) -> pd.DataFrame:
    """One row per backend x condition of :func:`.experiments.episode_frame` rows: :data:`METRICS`
    (rates as fractions; ``steps`` and ``cycles`` are means per episode, ``cycles`` over both
    agents), ``n`` episodes, and 95% intervals of :data:`CI_METRICS` (Wilson for Success Rate, t
    intervals over episodes for steps and Extraneous Effort)."""
    rows = []
    for key, g in E.groupby(_KEYS, sort=False):
        r = dict(zip(_KEYS, key))
        r.update(n=len(g), SR=_mean(g["success"]), PC=_mean(g["percent_complete"]), PC_failed=_mean(g["pc_failed"]),
                 steps=_mean(g["simulation_steps"]), cycles=_mean(g["planning_cycles"]),
                 EE=_mean(g["extraneous_effort"]), AS=_mean(g["action_success"]), offloading=_mean(g["task_offloading"]))
        r["PC_SR_gap"] = r["PC"] - r["SR"]
        for agent, s in AGENTS.items():
            r[f"mention_{s}"] = _mean(g[f"{agent}_mention_ratio"])
            r[f"AS_{s}"] = _mean(g[f"{agent}_action_success"])
        r["SR_low"], r["SR_high"] = wilson_ci(int(g["success"].sum()), len(g))
        r["steps_low"], r["steps_high"] = mean_ci(g["simulation_steps"])
        r["EE_low"], r["EE_high"] = mean_ci(g["extraneous_effort"])
        rows.append(r)
    bounds = [f"{m}_{x}" for m in CI_METRICS for x in ("low", "high")]
    return _sorted(pd.DataFrame(rows, columns=[*_KEYS, "n", *METRICS, *bounds]))


# -- why episodes failed -----------------------------------------------------------------------------

def _failed(episodes: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(every episode with a ``backend`` column, the failed ones), their reasons checked."""
    require_columns(episodes, ["condition", "success", "failure_reason"])
    E = episodes.assign(backend=episodes["backend"] if "backend" in episodes.columns else backend_of(episodes))
    failed = E[~E["success"].astype(bool)]
    bad = sorted({r if isinstance(r, str) else "missing" for r in failed["failure_reason"]} - set(REASONS))
    if bad:
        raise ValueError(f"failure_reason: {', '.join(bad)} on a failed episode; allowed: {', '.join(REASONS)}")
    return E, failed


def failure_reasons(episodes: pd.DataFrame) -> pd.DataFrame:
    """One row per backend x condition x failure reason (:data:`.explanations.REASONS`, from the
    records' ``failure_reason``), reasons in that order: the condition's ``failed`` episodes, the
    ``count`` with this reason and its ``share`` of them. Reasons no failed episode had are left
    out; a condition without a failure has no row. ValueError naming a missing column (records from
    before the field existed) or a failed episode without a known reason."""
    _, failed = _failed(episodes)
    rows = []
    for (backend, condition), g in failed.groupby(["backend", "condition"], sort=False):
        counts = g["failure_reason"].value_counts()
        rows += [{"backend": backend, "condition": condition, "reason": r, "failed": len(g), "count": int(counts[r]),
                  "share": counts[r] / len(g)} for r in REASONS if r in counts]
    t = pd.DataFrame(rows, columns=["backend", "condition", "reason", "failed", "count", "share"])
    return _sorted(t.assign(_r=t["reason"].map(REASONS.index)), "_r").drop(columns="_r")


def _counts(E: pd.DataFrame) -> pd.DataFrame:
    """Per backend x condition: ``n`` episodes and ``failed`` ones."""
    return E.groupby(["backend", "condition"], sort=False).agg(n=("success", "size"), failed=(
        "success", lambda v: int((~v.astype(bool)).sum()))).reset_index()


def _leading(reasons: pd.DataFrame) -> pd.DataFrame:
    """The row of :func:`failure_reasons` with the most episodes per backend x condition (a tie goes
    to the earlier reason of :data:`.explanations.REASONS`, the table's order within a condition)."""
    return reasons.sort_values("count", ascending=False, kind="stable").drop_duplicates(["backend", "condition"])


#: Each failure reason as the notebook says it.
REASON_NAMES = {"never_satisfied": "a step never done", "out_of_order": "steps out of order",
                "same_argument": "not on the same furniture, room or object",
                "different_argument": "not on different furniture, rooms or objects", "undone": "a step later undone",
                "no_propositions": "the task has no step"}


def failure_table(E: pd.DataFrame, reasons: pd.DataFrame) -> pd.DataFrame:
    """One row per backend x condition: ``n`` episodes, ``failed`` and one column per failure reason
    any episode had (named by :data:`REASON_NAMES`): its share of the condition's failed episodes."""
    base = _counts(E)
    wide = reasons.pivot_table(index=["backend", "condition"], columns="reason", values="share", sort=False)
    cols = [r for r in REASON_NAMES if r in wide.columns]
    out = base.merge(wide[cols].reset_index(), on=["backend", "condition"], how="left")
    out[cols] = out[cols].fillna(0.0)
    return _sorted(out.rename(columns=REASON_NAMES))


def failure_words(R: Report) -> str:
    """One paragraph on why episodes failed, from the run's ``failures`` and ``failure_reasons``
    tables: how many failed, the most common reason over all conditions and each condition whose
    most common reason differs (a sentence saying so when the run's records have no explanations)."""
    if "failures" not in R.tables:
        return "This run's records predate the failure explanations: rerun it to see why episodes failed."
    t, r = R.tables["failures"], R.tables["failure_reasons"]
    failed = int(t["failed"].sum())
    if not failed:
        return f"No episode of this run failed ({int(t['n'].sum())} episodes)."
    by = r.groupby("reason", sort=False)["count"].sum().sort_values(ascending=False, kind="stable")
    top = by.index[0]
    text = (f"{failed} of {int(t['n'].sum())} episodes failed. The most common reason, {REASON_NAMES[top]}, "
            f"ended {int(by.iloc[0])} of them ({by.iloc[0] / failed:.0%})")
    others = [f"{REASON_NAMES[k]} ({int(v)})" for k, v in by.iloc[1:].items()]
    text += f"; the others: {', '.join(others)}." if others else "."
    lead = _leading(r)
    odd = lead[lead["reason"] != top]
    if len(odd):
        text += " Conditions where another reason leads: " + "; ".join(
            f"{c} ({REASON_NAMES[k]}, {sh:.0%})" for c, k, sh in zip(odd["condition"], odd["reason"], odd["share"])) + "."
    return text


def most_common_failure(episodes: pd.DataFrame) -> pd.DataFrame:
    """One row per backend x condition: ``n`` episodes, ``failed``, the most common failure
    ``reason`` (a tie goes to the earlier of :data:`.explanations.REASONS`; None when nothing
    failed), its ``count`` and ``share`` of the failed episodes (see :func:`failure_reasons`)."""
    E, _ = _failed(episodes)
    lead = _leading(failure_reasons(E))[["backend", "condition", "reason", "count", "share"]]
    out = _counts(E).merge(lead, on=["backend", "condition"], how="left")
    out["count"] = out["count"].fillna(0).astype(int)
    out["reason"] = out["reason"].astype(object).where(out["reason"].notna(), None)
    return _sorted(out[["backend", "condition", "n", "failed", "reason", "count", "share"]])


def _outcomes(C: pd.DataFrame, observability: str) -> pd.DataFrame:
    cols = [*_KEYS, "n", "SR", "SR_low", "SR_high", "PC", "PC_failed", "PC_SR_gap", "steps", "steps_low", "steps_high",
            "cycles", "EE", "EE_low", "EE_high", "mention_R", "mention_H", "AS_R", "AS_H"]
    return C.loc[C["observability"] == observability, cols].reset_index(drop=True)


#: The channel a pair of conditions differs in: ``(channel, off, on, held)``, every pair of the grid.
CHANNEL_PAIRS: tuple[tuple[str, str, str, str], ...] = (
    *[("OAS", condition_name(off, o, obs), condition_name(on, o, obs),
       f"{'KE, ' if 'KE' in off else ''}{'with' if o else 'without'} OANA, {obs} observability")
      for obs, pairs in (("partial", (("Obj", "OAS"), ("KE", "OAS+KE"))), ("full", (("Obj", "OAS"),)))
      for o in (False, True) for off, on in pairs],
    *[("KE", condition_name(off, o), condition_name(on, o),
       f"{'OAS, ' if 'OAS' in off else ''}{'with' if o else 'without'} OANA, partial observability")
      for o in (False, True) for off, on in (("Obj", "KE"), ("OAS", "OAS+KE"))],
    *[("OANA", condition_name(c, False, obs), condition_name(c, True, obs), f"{c}, {obs} observability")
      for obs, ctxs in (("partial", CONTEXTS), ("full", FULL_CONTEXTS)) for c in ctxs],
    *[("Full", condition_name(c, o), condition_name(c, o, "full"), f"{c}, {'with' if o else 'without'} OANA")
      for o in (False, True) for c in FULL_CONTEXTS],
)


def channel_pairs(conditions: set[str] | None = None) -> list[tuple[str, str, str, str]]:
    """:data:`CHANNEL_PAIRS` whose two conditions are both in ``conditions`` (all when None)."""
    return [p for p in CHANNEL_PAIRS if conditions is None or {p[1], p[2]} <= conditions]


def channel_effects(C: pd.DataFrame) -> pd.DataFrame:
    """Per backend, channel pair (:data:`CHANNEL_PAIRS`) and metric (:data:`METRICS`): ``off_value``,
    ``on_value``, ``diff`` (on − off) and ``rel`` (diff / off; NaN when off is 0)."""
    rows = []
    for b, g in C.groupby("backend", sort=False):
        by = g.set_index("condition")
        for channel, off, on, held in channel_pairs(set(by.index)):
            for m in METRICS:
                a, z = float(by.at[off, m]), float(by.at[on, m])
                rows.append({"backend": b, "channel": channel, "off": off, "on": on, "held": held, "metric": m,
                             "off_value": a, "on_value": z, "diff": z - a,
                             "rel": (z - a) / a if a and not math.isnan(a) else math.nan})
    return pd.DataFrame(rows, columns=["backend", "channel", "off", "on", "held", "metric", "off_value", "on_value",
                                       "diff", "rel"])


def directions(ce: pd.DataFrame) -> pd.DataFrame:
    """Per backend, channel and metric: over the channel's pairs, in how many the metric is
    ``lower``, ``higher`` or the ``same`` with the channel on (of ``pairs`` with both values)."""
    rows = []
    for (b, ch, m), g in ce.groupby(["backend", "channel", "metric"], sort=False):
        d = g["diff"].dropna()
        rows.append({"backend": b, "channel": ch, "metric": m, "pairs": len(d), "lower": int((d < 0).sum()),
                     "higher": int((d > 0).sum()), "same": int((d == 0).sum())})
    return pd.DataFrame(rows, columns=["backend", "channel", "metric", "pairs", "lower", "higher", "same"])


# -- role asymmetry (§4.3) ---------------------------------------------------------------------------

def roles_table(E: pd.DataFrame) -> pd.DataFrame:
    """One row per backend x condition x agent: ``first_interaction`` (mean exploration efficiency
    over episodes where the agent interacted with an object), ``extra_planning``,
    ``action_success``, ``planning_cycles``, ``mention_ratio``, ``finished_at`` and ``n``."""
    rows = []
    for key, g in E.groupby(_KEYS, sort=False):
        for agent in AGENTS:
            rows.append({**dict(zip(_KEYS, key)), "agent": agent,
                         "first_interaction": _mean(g[f"{agent}_exploration_efficiency"]),
                         "extra_planning": _mean(g[f"{agent}_extra_planning"]),
                         "action_success": _mean(g[f"{agent}_action_success"]),
                         "planning_cycles": _mean(g[f"{agent}_planning_cycles"]),
                         "mention_ratio": _mean(g[f"{agent}_mention_ratio"]),
                         "finished_at": _mean(g[f"{agent}_finished_at"]), "n": len(g)})
    return _sorted(pd.DataFrame(rows, columns=[*_KEYS, "agent", "first_interaction", "extra_planning",
                                               "action_success", "planning_cycles", "mention_ratio", "finished_at",
                                               "n"]))


def asymmetry_table(roles: pd.DataFrame, C: pd.DataFrame) -> pd.DataFrame:
    """One row per backend x condition: each role metric for robot (``_R``) and human (``_H``),
    the gaps human − robot (``first_gap`` in steps: positive when the robot interacts first;
    ``extra_gap`` in points; ``lag``: the human's completion lag in steps) and Task Offloading."""
    cols = ["first_interaction", "extra_planning", "action_success", "planning_cycles", "mention_ratio", "finished_at"]
    short = {"first_interaction": "first", "extra_planning": "extra", "action_success": "AS",
             "planning_cycles": "cycles", "mention_ratio": "mention", "finished_at": "finished"}
    w = roles.pivot(index=_KEYS, columns="agent", values=cols)
    out = pd.DataFrame(index=w.index)
    for c in cols:
        for agent, s in AGENTS.items():
            out[f"{short[c]}_{s}"] = w[(c, agent)] if (c, agent) in w.columns else math.nan
    out = out.reset_index()
    out["first_gap"] = out["first_H"] - out["first_R"]
    out["extra_gap"] = 100 * (out["extra_H"] - out["extra_R"])
    out["lag"] = out["finished_H"] - out["finished_R"]
    out = out.merge(C[[*_KEYS, "offloading", "n"]], on=_KEYS, how="left")
    return _sorted(out)


#: What :func:`role_counts` counts: ``(what holds, what the value column measures, the paper's count)``
#: (§4.3, §A.3.2; the paper's 32 runs are 4 planners x 8 partial-observability conditions).
ROLE_COUNTS: dict[str, tuple[str, str, str]] = {
    "robot_first": ("the robot's first object interaction comes earlier", "human − robot, steps", "28 of 32"),
    "human_more_extra_planning": ("the human has more Extra Planning", "human − robot, points", "25 of 32"),
    "offloading_over_half": ("Task Offloading exceeds 50%", "robot's share", "32 of 32"),
    "robot_as_at_least": ("the robot's Action Success is at least the human's", "robot − human, points", "28 of 32"),
    "robot_more_cycles": ("the robot plans more cycles", "robot − human, cycles", "planner-dependent"),
    "human_mentions_more": ("the human mentions the partner more often (without OANA)",
                            "human − robot, points", "16 of 16"),
}


def role_counts(asym: pd.DataFrame) -> pd.DataFrame:
    """Per backend and asymmetry of :data:`ROLE_COUNTS`: in ``k`` of ``n`` partial-observability
    conditions it holds (``human_mentions_more``: of the conditions without OANA), and the mean,
    lowest and highest ``value`` (the gap it rests on, or Task Offloading) over them."""
    rows = []
    for b, g in asym[asym["observability"] == "partial"].groupby("backend", sort=False):
        off = g[~g["oana"].astype(bool)]
        checks = {
            "robot_first": (g["first_R"] < g["first_H"], g["first_gap"]),
            "human_more_extra_planning": (g["extra_H"] > g["extra_R"], g["extra_gap"]),
            "offloading_over_half": (g["offloading"] > 0.5, g["offloading"]),
            "robot_as_at_least": (g["AS_R"] >= g["AS_H"], 100 * (g["AS_R"] - g["AS_H"])),
            "robot_more_cycles": (g["cycles_R"] > g["cycles_H"], g["cycles_R"] - g["cycles_H"]),
            "human_mentions_more": (off["mention_H"] > off["mention_R"], 100 * (off["mention_H"] - off["mention_R"])),
        }
        for key, (holds, value) in checks.items():
            value = value.astype(float)
            valid = value.notna()
            label, measure, paper = ROLE_COUNTS[key]
            rows.append({"backend": b, "asymmetry": key, "label": label, "k": int((holds & valid).sum()),
                         "n": int(valid.sum()), "value": measure, "mean": _mean(value),
                         "low": float(value.min()) if valid.any() else math.nan,
                         "high": float(value.max()) if valid.any() else math.nan, "paper": paper})
    return pd.DataFrame(rows, columns=["backend", "asymmetry", "label", "k", "n", "value", "mean", "low", "high",
                                       "paper"])


# -- partner prediction (§4.4, §4.5) --------------------------------------------------------------------

def _call(text: Any) -> Any:
    if not isinstance(text, str):
        return None
    try:
        return parse_call(text)
    except ValueError:
        return None


def prediction_frames(E: pd.DataFrame, steps: pd.DataFrame) -> pd.DataFrame:
    """One row per backend x OANA condition x agent x target (``union``, ``strict``) with
    :data:`PREDICTION_RATES` (fractions) and ``n`` scored predictions, pooled over every planning
    cycle of the condition's episodes (as :mod:`.metrics` scores an episode's: under OANA each
    cycle predicts, §3.3); ``no_target`` counts the predictions made when the partner had no
    action left, kept out of every rate, and ``no_target_share`` their share of all predictions
    (:class:`.prediction.PredictionTally`)."""
    cols = [*_KEYS, "agent", "target", *PREDICTION_RATES, "n", "no_target", "no_target_share"]
    need = {"prediction", "pred_current", "pred_next", "episode_key", "role"}
    if not len(steps) or not need <= set(steps.columns):
        return pd.DataFrame(columns=cols)
    s = steps[["episode_key", "role", "prediction", "pred_current", "pred_next"]]
    s = s.merge(E.loc[E["oana"], ["episode_key", *_KEYS]], on="episode_key", how="inner")
    if not len(s):
        return pd.DataFrame(columns=cols)
    records = [{**{k: getattr(r, k) for k in _KEYS}, "agent": r.role, "prediction": _call(r.prediction),
                "current": _call(r.pred_current), "next": _call(r.pred_next)} for r in s.itertuples()]
    rows = []
    for r in prediction_table(records, by=(*_KEYS, "agent")):
        for target in ("union", "strict"):
            rows.append({**{k: r[k] for k in (*_KEYS, "agent")}, "target": target,
                         **{m: r[f"{target}_{m}"] for m in PREDICTION_RATES}, "n": r[f"{target}_n"],
                         "no_target": r[f"{target}_no_target"], "no_target_share": r[f"{target}_no_target_share"]})
    return _sorted(pd.DataFrame(rows, columns=cols))


def _prediction_gain(pred: pd.DataFrame) -> pd.DataFrame:
    """Union target: each context's gain over the object-only baseline (same observability and
    agent), in points: ``d_type_acc``, ``d_cond_principal``, ``d_principal_acc``."""
    cols = ["backend", "observability", "context", "agent", "d_type_acc", "d_cond_principal", "d_principal_acc"]
    rows = []
    for (b, obs, agent), g in pred.groupby(["backend", "observability", "agent"], sort=False):
        base = g[g["context"] == "Obj"]
        if not len(base):
            continue
        for r in g[g["context"] != "Obj"].itertuples():
            rows.append({"backend": b, "observability": obs, "context": r.context, "agent": agent,
                         **{f"d_{m}": 100 * (getattr(r, m) - float(base[m].iloc[0]))
                            for m in ("type_acc", "cond_principal", "principal_acc")}})
    return pd.DataFrame(rows, columns=cols)


def _strict_gap(union: pd.DataFrame, strict: pd.DataFrame) -> pd.DataFrame:
    """Per cell: union − strict in points for every rate, and ``type_rel`` (the relative drop of
    Action Type accuracy, gap / union)."""
    keys = [*_KEYS, "agent"]
    m = union.merge(strict, on=keys, suffixes=("_union", "_strict"))
    out = m[keys].copy()
    for r in PREDICTION_RATES:
        out[f"{r}_gap"] = 100 * (m[f"{r}_union"] - m[f"{r}_strict"])
    out["type_union"], out["type_strict"] = m["type_acc_union"], m["type_acc_strict"]
    out["type_rel"] = (m["type_acc_union"] - m["type_acc_strict"]) / m["type_acc_union"].where(m["type_acc_union"] > 0)
    return _sorted(out)


def _prediction_means(union: pd.DataFrame, strict: pd.DataFrame, gap: pd.DataFrame) -> pd.DataFrame:
    """Per backend and observability: means over the condition x agent cells of Action Type,
    conditional all-parameter and type-given-all accuracy under both targets, the mean gap
    (points), the mean relative drop, and in how many cells strict Action Type is lower."""
    rows = []
    for (b, obs), u in union.groupby(["backend", "observability"], sort=False):
        s = strict[(strict["backend"] == b) & (strict["observability"] == obs)]
        gp = gap[(gap["backend"] == b) & (gap["observability"] == obs)]
        rows.append({"backend": b, "observability": obs, "cells": len(u),
                     **{f"{m}_{t}": _mean(x[m]) for t, x in (("union", u), ("strict", s))
                        for m in ("type_acc", "cond_principal", "cond_all", "type_given_all")},
                     "type_gap": _mean(gp["type_acc_gap"]), "type_rel": _mean(gp["type_rel"]),
                     "cond_all_gap": _mean(gp["cond_all_gap"]),
                     "cells_lower": int((gp["type_acc_gap"] > 0).sum())})
    cols = ["backend", "observability", "cells", *[f"{m}_{t}" for t in ("union", "strict") for m in
                                                   ("type_acc", "cond_principal", "cond_all", "type_given_all")],
            "type_gap", "type_rel", "cond_all_gap", "cells_lower"]
    return pd.DataFrame(rows, columns=cols)


# -- full observability (§4.5) --------------------------------------------------------------------------

def full_vs_partial(C: pd.DataFrame, asym: pd.DataFrame) -> pd.DataFrame:
    """Per backend, context (Obj, OAS) and OANA setting: partial against full observability:
    ``steps_*``, ``steps_ratio`` (full / partial) and ``steps_cut`` (1 − ratio), ``EE_*`` and
    ``EE_retained`` (full / partial), ``SR_*``, ``PC_*`` and the human's completion lag ``lag_*``."""
    rows = []
    lag = asym.set_index(["backend", "condition"])["lag"] if len(asym) else pd.Series(dtype=float)
    for b, g in C.groupby("backend", sort=False):
        by = g.set_index("condition")
        for o in (False, True):
            for c in FULL_CONTEXTS:
                p, f = condition_name(c, o), condition_name(c, o, "full")
                if p not in by.index or f not in by.index:
                    continue
                r = {"backend": b, "context": c, "oana": o, "partial": p, "full": f}
                for m in ("steps", "EE", "SR", "PC"):
                    r[f"{m}_partial"], r[f"{m}_full"] = float(by.at[p, m]), float(by.at[f, m])
                r["steps_ratio"] = r["steps_full"] / r["steps_partial"] if r["steps_partial"] else math.nan
                r["steps_cut"] = 1 - r["steps_ratio"]
                r["EE_retained"] = r["EE_full"] / r["EE_partial"] if r["EE_partial"] else math.nan
                r["lag_partial"] = float(lag.get((b, p), math.nan))
                r["lag_full"] = float(lag.get((b, f), math.nan))
                rows.append(r)
    return pd.DataFrame(rows, columns=["backend", "context", "oana", "partial", "full", "steps_partial", "steps_full",
                                       "steps_ratio", "steps_cut", "EE_partial", "EE_full", "EE_retained", "SR_partial",
                                       "SR_full", "PC_partial", "PC_full", "lag_partial", "lag_full"])


# -- display summaries ------------------------------------------------------------------------------------

def direction_summary(dirs: pd.DataFrame,
                      metrics: tuple[str, ...] = ("SR", "PC", "steps", "cycles", "EE")) -> pd.DataFrame:
    """Per backend and channel: the pairs of conditions that differ in it, and per metric of
    ``metrics`` how many of them are lower / higher with the channel on (``"2 ↓ 3 ↑"``)."""
    rows = []
    for (b, ch), g in dirs.groupby(["backend", "channel"], sort=False):
        by = g.set_index("metric")
        row = {"backend": b, "channel": ch, "pairs": int(g["pairs"].max())}
        for m in metrics:
            row[m] = f"{int(by.at[m, 'lower'])} ↓ {int(by.at[m, 'higher'])} ↑" if m in by.index else "–"
        rows.append(row)
    return pd.DataFrame(rows, columns=["backend", "channel", "pairs", *metrics])


def role_summary(counts: pd.DataFrame) -> pd.DataFrame:
    """Per backend and asymmetry of ``role_counts``: what holds, in how many conditions, the mean
    value it rests on with its lowest and highest (formatted per row: the units differ), and the
    paper's count."""
    def value(r: Any) -> str:
        scale = 100.0 if r.asymmetry == "offloading_over_half" else 1.0
        unit = "%" if scale == 100 else ""
        if pd.isna(r.mean):
            return "–"
        return f"{fmt_number(r.mean * scale)}{unit} [{fmt_number(r.low * scale)}, {fmt_number(r.high * scale)}]"

    return pd.DataFrame({"backend": counts["backend"], "label": counts["label"],
                         "holds": [f"{k} of {n}" for k, n in zip(counts["k"], counts["n"])],
                         "value": counts["value"], "mean": [value(r) for r in counts.itertuples()],
                         "paper": counts["paper"]})


#: The analysis tail's outcomes as the ``paired_tests`` columns name them.
TEST_SHORT = {"simulation_steps": "steps", "extraneous_effort": "EE", "success": "SR", "percent_complete": "PC"}


def paired_tests(tests: pd.DataFrame) -> pd.DataFrame:
    """``channel_tests`` one row per backend x pair of conditions: per outcome (:data:`TEST_SHORT`)
    the mean paired difference (``<o>``), its CI (``<o>_low``/``<o>_high``), the Holm-adjusted
    sign-flip p (``<o>_p``) and the Holm-adjusted Wilcoxon p (``<o>_wilcoxon_p``)."""
    keys = ["backend", "channel", "on", "off", "held"]
    cols = [*keys, "n", *[f"{o}{x}" for o in TEST_SHORT.values() for x in ("", "_low", "_high", "_p", "_wilcoxon_p")]]
    if not len(tests):
        return pd.DataFrame(columns=cols)
    def first(t: pd.DataFrame, column: str) -> float:
        return float(t[column].iloc[0]) if len(t) else math.nan

    rows = []
    for key, g in tests.groupby(keys, sort=False):
        r = {**dict(zip(keys, key)), "n": int(g["n"].max())}
        for outcome, o in TEST_SHORT.items():
            sf = g[(g["outcome"] == outcome) & (g["test"] == "sign_flip")]
            wx = g[(g["outcome"] == outcome) & (g["test"] == "wilcoxon")]
            r.update({o: first(sf, "estimate"), f"{o}_low": first(sf, "ci_low"), f"{o}_high": first(sf, "ci_high"),
                      f"{o}_p": first(sf, "p_adjusted"), f"{o}_wilcoxon_p": first(wx, "p_adjusted")})
        rows.append(r)
    return pd.DataFrame(rows, columns=cols)


def _smallest_p(t: pd.DataFrame) -> pd.DataFrame:
    """Rows of ``paired_tests`` with the smallest Holm p over steps, Extraneous Effort and success first."""
    return t.assign(_p=t[["steps_p", "EE_p", "SR_p"]].min(axis=1)).sort_values("_p", kind="stable").drop(columns="_p")


_AGENT_NAMES = {"mention_R": "mentions partner, robot", "mention_H": "mentions partner, human",
                "AS_R": "Action Success, robot", "AS_H": "Action Success, human"}
_RATE_NAMES = {"type_acc": "Action Type", "cond_principal": "principal | type", "principal_acc": "type + principal",
               "all_acc": "all parameters", "cond_all": "all | type", "type_given_all": "type | all"}
#: How each result table is displayed (:func:`collablab.analysis.present.present`).
STYLES: dict[str, TableStyle] = {
    "outcomes": TableStyle(
        rates=("SR", "PC", "EE", "mention_R", "mention_H", "AS_R", "AS_H"),
        drop=("condition", "PC_failed", "PC_SR_gap"), labels=("context", "oana"),
        rename={"oana": "OANA", "SR": "Success Rate", "PC": "Percent Complete",
                "steps": "simulation steps", "cycles": "planning cycles", "EE": "Extraneous Effort", **_AGENT_NAMES},
        caption="Means over tasks, 95% intervals (Wilson for Success Rate, t for steps and Extraneous Effort)"),
    "direction_summary": TableStyle(
        labels=("channel",), rename={"pairs": "pairs of conditions", "SR": "Success Rate", "PC": "Percent Complete",
                                     "steps": "simulation steps", "cycles": "planning cycles",
                                     "EE": "Extraneous Effort"},
        caption="Pairs of conditions in which each metric is lower (↓) or higher (↑) with the channel on"),
    "role_summary": TableStyle(
        labels=("label", "holds", "value", "paper"),
        rename={"label": "asymmetry", "holds": "holds in (conditions)", "value": "measured as",
                "mean": "mean [lowest, highest]", "paper": "the paper"},
        caption="Partial-observability conditions; the mean and range are over conditions"),
    "prediction": TableStyle(
        rates=(*PREDICTION_RATES, "no_target_share"), drop=("observability", "context", "oana", "no_target"),
        labels=("condition", "agent"),
        rename={"n": "predictions", "no_target_share": "partner done", **_RATE_NAMES},
        caption="Union target (the partner's current or next action), pooled over predictions; "
                "'a | b': a among predictions with b right; 'partner done': share of predictions made "
                "when the partner had no action left, scored apart"),
    "prediction_means": TableStyle(
        rates=tuple(f"{m}_{t}" for m in ("type_acc", "cond_all", "type_given_all") for t in ("union", "strict"))
        + ("type_rel",), drop=("cond_principal_union", "cond_principal_strict"), labels=("observability",),
        rename={"cells": "condition x agent cells", "type_acc_union": "Action Type, union",
                "type_acc_strict": "Action Type, strict", "cond_all_union": "all | type, union",
                "cond_all_strict": "all | type, strict", "type_given_all_union": "type | all, union",
                "type_given_all_strict": "type | all, strict", "type_gap": "Action Type gap (points)",
                "type_rel": "relative drop", "cond_all_gap": "all | type gap (points)",
                "cells_lower": "cells where strict is lower"},
        caption="Means over condition x agent cells"),
    "full_vs_partial": TableStyle(
        rates=("steps_cut", "EE_partial", "EE_full", "EE_retained", "SR_partial", "SR_full"),
        drop=("partial", "full", "steps_ratio", "PC_partial", "PC_full", "lag_partial", "lag_full"),
        labels=("context", "oana"),
        rename={"oana": "OANA", "steps_partial": "steps, partial", "steps_full": "steps, full",
                "steps_cut": "steps cut", "EE_partial": "Extraneous Effort, partial",
                "EE_full": "Extraneous Effort, full", "EE_retained": "effort retained",
                "SR_partial": "Success Rate, partial", "SR_full": "Success Rate, full"},
        caption="Each full-observability condition against the same condition under partial observability"),
    "failures": TableStyle(
        rates=tuple(REASON_NAMES.values()), labels=("condition",),
        rename={"n": "episodes", "failed": "failed episodes"},
        caption="Why episodes failed: share of each condition's failed episodes by reason (PARTNR's "
                "explanation: a step never done comes first, then the first broken constraint)"),
    "paired_tests": TableStyle(
        rates=("EE", "SR"), drop=("held", *[f"{o}_wilcoxon_p" for o in TEST_SHORT.values()], "PC", "PC_low",
                                  "PC_high", "PC_p"),
        labels=("channel", "on", "off"), order=_smallest_p, max_rows=12,
        rename={"off": "against", "n": "tasks", "steps": "simulation steps", "steps_p": "p, steps",
                "EE": "Extraneous Effort", "EE_p": "p, effort", "SR": "Success Rate", "SR_p": "p, success"},
        caption="Mean paired difference over tasks, 95% paired-bootstrap CI, Holm-adjusted sign-flip p"),
}


# -- reading a run ------------------------------------------------------------------------------------------

def read_notebook(episodes: pd.DataFrame, steps: pd.DataFrame, P: dict[str, Any], run_dir: Any = None) -> Report:
    """Notebook 07's tables (see the module docstring), findings, headline and limits from a run's
    frames; the analysis tail's table is ``channel_tests`` (``P["n_resamples"]`` resamples). With
    ``run_dir`` (the run folder) every displayed table's full CSV goes to ``<run_dir>/tables``."""
    if not len(episodes) or "condition" not in episodes.columns:
        raise ValueError("episodes: this run has no finished episode to read (see its failures.jsonl)")
    E = episode_frame(episodes)
    b = backend_of(E)
    R = Report(b, len(E), unit="episodes (task x condition x run)", styles=dict(STYLES), run_dir=run_dir)
    T = R.tables
    C = condition_table(E)
    T["outcomes"] = _outcomes(C, "partial")
    T["full_outcomes"] = _outcomes(C, "full")
    T["channel_effects"] = channel_effects(C)
    T["directions"] = directions(T["channel_effects"])
    T["direction_summary"] = direction_summary(T["directions"])
    T["roles"] = roles_table(E)
    T["asymmetry"] = asymmetry_table(T["roles"], C)
    T["role_counts"] = role_counts(T["asymmetry"])
    T["role_summary"] = role_summary(T["role_counts"])
    pred = prediction_frames(E, steps)
    T["prediction"] = pred[pred["target"] == "union"].drop(columns="target").reset_index(drop=True)
    T["prediction_strict"] = pred[pred["target"] == "strict"].drop(columns="target").reset_index(drop=True)
    T["prediction_gain"] = _prediction_gain(T["prediction"][T["prediction"]["observability"] == "partial"])
    T["strict_gap"] = _strict_gap(T["prediction"], T["prediction_strict"])
    T["prediction_means"] = _prediction_means(T["prediction"], T["prediction_strict"], T["strict_gap"])
    T["full_vs_partial"] = full_vs_partial(C, T["asymmetry"])
    if "failure_reason" in E.columns:  # runs recorded before the explanations have none
        T["failure_reasons"] = failure_reasons(E)
        T["failures"] = failure_table(E, T["failure_reasons"])
    T["channel_tests"] = channel_tests(E, int(P["n_resamples"]))
    T["paired_tests"] = paired_tests(T["channel_tests"])
    for backend in dict.fromkeys(E["backend"].astype(str)):
        n = int(C.loc[C["backend"] == backend, "n"].min())
        for name, fs in _sections(T, backend, n).items():
            R.sections.setdefault(name, []).extend(fs)
    R.headlines = R.findings("tail")[:5]
    R.limits = limits(R, C)
    return R


def _sections(T: dict[str, pd.DataFrame], b: str, n: int) -> dict[str, list[Finding]]:
    """The findings about backend ``b`` (``n``: the fewest episodes of a condition), by notebook section."""
    ce = T["channel_effects"]
    return {
        "outcomes": [F.ke_shortens_episodes(ce, b, n), F.oas_reduces_effort(ce, b, n),
                     F.most_efficient_context(T["outcomes"], b, n), F.ke_without_oas(ce, b, n),
                     F.oana_lowers_success(ce, b, n), F.oana_raises_mentions(ce, b, n), F.oana_effort(ce, b, n),
                     F.completion_gap_widens(ce, b, n)],
        "channels": [F.channel_directions(T["directions"], ch, b, n) for ch in ("OAS", "KE", "OANA", "Full")
                     if ((T["directions"]["channel"] == ch) & (T["directions"]["backend"] == b)).any()],
        "roles": F.role_asymmetries(T["role_counts"], T["asymmetry"], b, n),
        "prediction": [F.context_helps_type_more(T["prediction_gain"], b, n),
                       F.combined_context_tops(T["prediction"], b, n), F.parameter_bottleneck(T["prediction_means"], b, n)],
        "strict": [F.strict_lowers_type(T["prediction_means"], T["strict_gap"], b, n),
                   F.conditionals_hold(T["prediction_means"], b, n)],
        "full_obs": [F.full_obs_shortens(T["full_vs_partial"], b, n), F.effort_remains(T["full_vs_partial"], b, n),
                     F.oana_under_full_obs(ce, b, n), F.oas_under_full_obs(ce, b, n)],
        "tail": [F.paired_effect(T["channel_tests"], *t, backend=b) for t in F.TESTED],
    }


def limits(R: Report, C: pd.DataFrame) -> list[str]:
    """What the run does not show (the headline's last paragraph): planners (§4.1), the run's size
    against the paper's, which comparisons carry no test, and how many of the paper's observations
    it does not show or cannot tell."""
    offline = all(b.split(":")[0] in OFFLINE_BACKENDS for b in R.backend.split(","))
    lo, hi = int(C["n"].min()), int(C["n"].max())
    size = f"{lo}" if lo == hi else f"{lo}–{hi}"
    out = ["Both agents use one rule-based planner profile in every condition, so nothing here compares planners "
           "(the paper compares four LLMs)."] if offline else []
    out.append(f"Each condition has {size} episodes on generated tasks in our household world (the paper: 1,000 PARTNR "
               "validation tasks, each configuration once).")
    out.append("Apart from the outcome intervals and the paired contrasts at the end, the comparisons are of means "
               "without a test.")
    paper = [f for name, fs in R.sections.items() if name != "tail" for f in fs]
    no, unsure = sum(f.shown is False for f in paper), sum(f.shown is None for f in paper)
    out.append(f"Of the paper's {len(paper)} observations checked below, {no} are not shown by this run and {unsure} "
               "cannot be told from it (see the end of the notebook).")
    return out


# -- the analysis tail ------------------------------------------------------------------------------------

def channel_tests(E: pd.DataFrame, n_resamples: int = 10_000) -> pd.DataFrame:
    """Each channel on against off with the other channels held fixed (:data:`CHANNEL_PAIRS`),
    per backend, paired by task (``unit``) and run: for each of :data:`TEST_OUTCOMES` the mean
    paired difference on − off with a paired bootstrap 95% CI and the sign-flip permutation p,
    and the Hodges-Lehmann pseudomedian with Wilcoxon's p; ``p_adjusted`` is Holm's within each
    backend, channel, outcome and test."""
    cols = ["backend", "channel", "on", "off", "held", "outcome", "test", "estimand", "estimate", "ci_low", "ci_high",
            "p_value", "p_adjusted", "n", "note"]
    out = []
    for b, g in E.groupby("backend", sort=False):
        g = g.assign(success=g["success"].astype(float))
        pairs = channel_pairs(set(g["condition"]))
        for channel in dict.fromkeys(p[0] for p in pairs):
            mine = [p for p in pairs if p[0] == channel]
            t = compare(g, "condition", list(TEST_OUTCOMES), ["unit", "run"], [(on, off) for _, off, on, _ in mine],
                        ("sign_flip", "wilcoxon"), cluster_col="unit", n_resamples=n_resamples,
                        n_permutations=n_resamples)
            held = {f"{on} vs {off}": (on, off, h) for _, off, on, h in mine}
            t["on"], t["off"], t["held"] = zip(*(held[c] for c in t["contrast"]))
            out.append(t.assign(backend=b, channel=channel))
    if not out:
        return pd.DataFrame(columns=cols)
    res = pd.concat(out, ignore_index=True)[cols]
    res["n"] = res["n"].astype(int)
    return res.replace({np.inf: math.nan})
