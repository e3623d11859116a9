"""Failure modes from episode and step records (MECoBench §6.2, appendix E.2 and F).

Nothing here is hand-labelled: every indicator is computed from the records that
``collablab.episode.run_episode`` writes (action, status, feedback, args, progress,
messages), so a re-analysis never re-runs agents.

- **duplicate grab** (Table 21 "agent-induced conflict", Fig. 37, Table 22 "grab
  conflict"): a grab that lost a same-step conflict (``status == "conflict"``), a grab
  refused because *another* agent holds the object (world feedback "agent k is already
  holding it"), or a grab of an object another agent successfully grabbed in the previous
  ``dup_window`` team steps.
- **false completion** (Table 21 "hallucinated belief propagation", Table 22
  "hallucinated completion"): a message claims the whole task is complete while subgoals
  remain, or after a completion claim all agents wait for ``idle_steps`` or more
  consecutive steps with CR < 1 (the team stopped prematurely).
- **wrong grab** (appendix E.2: "actions that grasp task-irrelevant objects"): a
  successful grab whose ``obj_class`` is not among the episode's ``goal_classes``; the
  number of wrong grabs is the severity used to stratify the correction analysis
  (Tables 19-20).
- message indicators (appendix E.2): correction (self / peer), coordination query, stuck
  report, negative report, from :mod:`.behaviours`' keyword rules.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from .behaviours import RuleSet, backend_labels, check_unique_ids, load_rules, tag_messages
from .lift import lift_table, wilson_ci
from .present import TableStyle
from .significance import require_columns
from .stratified import StratifiedResult, stratified_effect, top_code

__all__ = [
    "COORD_QUERY_STYLE",
    "DUP_GRAB_STYLE",
    "FAILURE_MODES",
    "FAILURE_LABELS",
    "LIFT_STYLE",
    "TABLE19_STYLE",
    "TABLE20_STYLE",
    "WG_STRATA",
    "CorrectionAnalysis",
    "completion_claims",
    "coord_query_table",
    "correction_analysis",
    "dup_grab_rates",
    "failure_indicators",
    "failure_lift",
    "grab_events",
]

#: Indicators of Table 22 (failure modes), in display order.
FAILURE_MODES: tuple[str, ...] = ("false_completion", "dup_grab", "wrong_grab")
#: Readable names for tables and figures.
FAILURE_LABELS: dict[str, str] = {
    "false_completion": "Hallucinated completion",
    "dup_grab": "Grab conflict (duplicate grab)",
    "wrong_grab": "Wrong grab (task-irrelevant object)",
    "coord_query": "Coordination query",
    "stuck_report": "Stuck report",
    "neg_report": "Negative report",
    "correction": "Correction",
}
#: Severity strata of Table 20 (#WG = 1, 2, 3, 4+).
WG_STRATA: tuple[str, ...] = ("1", "2", "3", "4+")

_HELD_BY_OTHER = re.compile(r"agent (\d+) is already holding", re.IGNORECASE)
_HEAVY = (list, dict, tuple, set, np.ndarray)


# --------------------------------------------------------------------------- #
# small parsers
# --------------------------------------------------------------------------- #
def _obj_id(args: Any) -> int | None:
    if isinstance(args, Mapping):
        d = args
    elif isinstance(args, str) and args.strip():
        try:
            d = json.loads(args)
        except ValueError:
            return None
    else:
        return None
    v = d.get("obj") if isinstance(d, Mapping) else None
    try:
        return int(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def as_list(v: Any) -> list[Any] | None:
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except ValueError:
            return None
    if isinstance(v, (list, tuple, set, np.ndarray)):
        return list(v)
    return None


def _as_dict(v: Any) -> dict[str, Any] | None:
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except ValueError:
            return None
    return dict(v) if isinstance(v, Mapping) else None


def _goal_classes(row: Mapping[str, Any]) -> set[str] | None:
    """``goal_classes`` of an episode, or the classes parsed from its ``goal`` keys."""
    gc = as_list(row.get("goal_classes"))
    if gc is not None:
        return {str(c) for c in gc}
    goal = _as_dict(row.get("goal"))
    if goal:
        out = set()
        for key in goal:
            _, _, rest = str(key).partition("_")
            cls, _, tid = rest.rpartition("_")
            if cls and tid.isdigit():
                out.add(cls)
        return out or None
    return None


def _n_objects(row: Mapping[str, Any]) -> float:
    goal = _as_dict(row.get("goal"))
    if goal:
        try:
            return float(sum(int(c) for c in goal.values()))
        except (TypeError, ValueError):
            pass
    n = row.get("n_subgoals")
    return float(n) if n is not None and not pd.isna(n) else math.nan


def _progress(row: Mapping[str, Any]) -> list[float] | None:
    p = as_list(row.get("progress"))
    return [float(x) for x in p] if p else None


def _scalar_columns(episodes: pd.DataFrame) -> list[str]:
    cols = []
    for c in episodes.columns:
        vals = episodes[c].dropna()
        if len(vals) and isinstance(vals.iloc[0], _HEAVY):
            continue
        cols.append(c)
    return cols


# --------------------------------------------------------------------------- #
# event tables
# --------------------------------------------------------------------------- #
def grab_events(episodes: pd.DataFrame, steps: pd.DataFrame, *, dup_window: int = 1) -> pd.DataFrame:
    """Every grab attempt with its wrong-grab and duplicate-grab classification.

    Columns: episode_id, step, agent, obj (id from ``args``), obj_class, status, wrong
    (successful grab of a class outside ``goal_classes``; NA when the goal classes or the
    object class are unknown), duplicate, dup_reason.
    """
    require_columns(episodes, ["episode_id"])
    cols = ["episode_id", "step", "agent", "obj", "obj_class", "status", "wrong", "duplicate", "dup_reason"]
    if steps is None or len(steps) == 0 or "action" not in steps.columns:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    require_columns(steps, ["episode_id", "step", "agent", "action", "status"])
    goals = {r["episode_id"]: _goal_classes(r) for r in episodes.to_dict("records")}
    g = steps.loc[steps["action"] == "grab"].copy()
    g["obj"] = (g["args"].map(_obj_id) if "args" in g.columns else None)
    if "obj_class" not in g.columns:
        g["obj_class"] = None
    fb = g["feedback"].fillna("").astype(str) if "feedback" in g.columns else pd.Series("", index=g.index)

    def wrong(r: pd.Series) -> Any:
        classes = goals.get(r["episode_id"])
        if r["status"] != "ok":
            return False
        if classes is None or not isinstance(r["obj_class"], str):
            return pd.NA
        return r["obj_class"] not in classes

    g["wrong"] = g.apply(wrong, axis=1) if len(g) else pd.Series(dtype=object)
    ok_grabs: dict[tuple[Any, int], list[tuple[int, Any]]] = {}
    for r in g.loc[g["status"] == "ok"].itertuples(index=False):
        if r.obj is not None and not pd.isna(r.obj):
            ok_grabs.setdefault((r.episode_id, int(r.obj)), []).append((int(r.step), r.agent))
    reasons = []
    for (_, r), text in zip(g.iterrows(), fb):
        why = ""
        if r["status"] == "conflict":
            why = "lost a same-step grab conflict"
        else:
            m = _HELD_BY_OTHER.search(text)
            if m and str(m.group(1)) != str(r["agent"]):
                why = f"agent {m.group(1)} was holding it"
            elif r["obj"] is not None and not pd.isna(r["obj"]):
                for s, a in ok_grabs.get((r["episode_id"], int(r["obj"])), []):
                    if a != r["agent"] and int(r["step"]) - dup_window <= s < int(r["step"]):
                        why = f"agent {a} grabbed it at step {s}"
                        break
        reasons.append(why)
    g["dup_reason"] = reasons
    g["duplicate"] = g["dup_reason"] != ""
    return g[cols].reset_index(drop=True)


def completion_claims(episodes: pd.DataFrame, steps: pd.DataFrame, *, tagged: pd.DataFrame | None = None,
                      rules: RuleSet | None = None,
                      check: Literal["step_end", "step_start"] = "step_end") -> pd.DataFrame:
    """Messages that claim the task is complete, with the CR when they were made.

    ``cr_before`` = progress[step] (before the step's actions), ``cr_after`` =
    progress[step + 1].  A claim is ``false`` when subgoals remain: ``cr_after < 1`` for
    ``check="step_end"`` (default: a claim sent with the action that finishes the task is
    true; a run stops at success, so a true claim can only appear in the last step), or
    ``cr_before < 1`` for ``"step_start"``.  Without a ``progress`` list the final
    ``cr`` decides.
    """
    if check not in ("step_end", "step_start"):
        raise ValueError(f"check must be 'step_end' or 'step_start', got {check!r}")
    tagged = tag_messages(steps, rules) if tagged is None else tagged
    cols = ["episode_id", "step", "agent", "message", "cr_before", "cr_after", "false"]
    if not len(tagged) or "Completion-Claim" not in tagged.columns:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    claims = tagged.loc[tagged["Completion-Claim"], ["episode_id", "step", "agent", "message"]].copy()
    info = {r["episode_id"]: (_progress(r), r.get("cr")) for r in episodes.to_dict("records")}
    before, after, false = [], [], []
    for r in claims.itertuples(index=False):
        prog, cr = info.get(r.episode_id, (None, None))
        if prog:
            t = int(r.step)
            b, a = prog[min(t, len(prog) - 1)], prog[min(t + 1, len(prog) - 1)]
        else:
            b = a = float(cr) if cr is not None and not pd.isna(cr) else math.nan
        before.append(b)
        after.append(a)
        ref = a if check == "step_end" else b
        false.append(bool(ref < 1.0) if not math.isnan(ref) else False)
    claims["cr_before"], claims["cr_after"], claims["false"] = before, after, false
    return claims[cols].reset_index(drop=True)


def _idle_after_claim(steps: pd.DataFrame, prog: list[float] | None, first_claim: int, idle_steps: int) -> bool:
    """All agents wait for >= idle_steps consecutive steps from the first claim on, with CR < 1."""
    if steps is None or not len(steps):
        return False
    per_step = steps.groupby("step")["action"].agg(lambda a: bool(len(a)) and bool((a == "wait").all()))
    run = 0
    for s in sorted(per_step.index):
        if s < first_claim:
            continue
        cr_after = prog[min(int(s) + 1, len(prog) - 1)] if prog else 0.0
        if per_step[s] and cr_after < 1.0:
            run += 1
            if run >= idle_steps:
                return True
        else:
            run = 0
    return False


# --------------------------------------------------------------------------- #
# per-episode indicators
# --------------------------------------------------------------------------- #
def failure_indicators(episodes: pd.DataFrame, steps: pd.DataFrame, *, rules: RuleSet | None = None,
                       tagged: pd.DataFrame | None = None, dup_window: int = 1, idle_steps: int = 3,
                       claim_check: Literal["step_end", "step_start"] = "step_end") -> pd.DataFrame:
    """One row per episode: failure-mode indicators and counts (appendix E.2, F).

    Keeps every scalar column of ``episodes`` (ids, labels, success, cr, backend, ...)
    and adds: ``n_objects``; ``dup_grab`` / ``n_dup_grabs``; ``wrong_grab`` /
    ``n_wrong_grabs`` / ``wg_stratum`` ("1", "2", "3", "4+"; NaN without wrong grabs);
    ``completion_claim``, ``false_completion``, ``n_false_claims``, ``premature_stop``;
    ``correction`` (self or peer), ``correction_self``, ``correction_peer``,
    ``coord_query``, ``stuck_report``, ``neg_report``, ``n_messages``, ``rules_version``.
    See the module docstring for the definitions; ``dup_window``, ``idle_steps`` and
    ``claim_check`` (:func:`completion_claims`) tune them.
    """
    check_unique_ids(episodes)
    rs = rules or load_rules()
    steps = steps if steps is not None else pd.DataFrame(columns=["episode_id"])
    tagged = tag_messages(steps, rs) if tagged is None else tagged
    out = episodes[_scalar_columns(episodes)].reset_index(drop=True).copy()
    ids = out["episode_id"]
    records = {r["episode_id"]: r for r in episodes.to_dict("records")}
    out["n_objects"] = [_n_objects(records[e]) for e in ids]

    grabs = grab_events(episodes, steps, dup_window=dup_window)
    n_dup = grabs.groupby("episode_id")["duplicate"].sum() if len(grabs) else pd.Series(dtype=int)
    wrong = grabs["wrong"].fillna(False).astype(bool) if len(grabs) else pd.Series(dtype=bool)
    n_wrong = wrong.groupby(grabs["episode_id"]).sum() if len(grabs) else pd.Series(dtype=int)
    out["n_dup_grabs"] = ids.map(n_dup).fillna(0).astype(int)
    out["dup_grab"] = out["n_dup_grabs"] > 0
    out["n_wrong_grabs"] = ids.map(n_wrong).fillna(0).astype(int)
    out["wrong_grab"] = out["n_wrong_grabs"] > 0
    label = top_code(4)
    out["wg_stratum"] = [label(n) if n > 0 else np.nan for n in out["n_wrong_grabs"]]

    claims = completion_claims(episodes, steps, tagged=tagged, rules=rs, check=claim_check)
    n_claims = claims.groupby("episode_id").size() if len(claims) else pd.Series(dtype=int)
    n_false = claims.groupby("episode_id")["false"].sum() if len(claims) else pd.Series(dtype=int)
    out["completion_claim"] = ids.map(n_claims).fillna(0).astype(int) > 0
    out["n_false_claims"] = ids.map(n_false).fillna(0).astype(int)
    first_claim = claims.groupby("episode_id")["step"].min() if len(claims) else pd.Series(dtype=int)
    by_ep = dict(tuple(steps.groupby("episode_id"))) if len(steps) and "action" in steps.columns else {}
    out["premature_stop"] = [
        bool(e in first_claim.index and _idle_after_claim(by_ep.get(e), _progress(records[e]),
                                                          int(first_claim[e]), idle_steps))
        for e in ids]
    out["false_completion"] = (out["n_false_claims"] > 0) | out["premature_stop"]

    flags = (tagged.groupby("episode_id")[["Correct", "Correct-self", "Correct-peer", "Coord-Q", "Stuck",
                                           "Neg-Report"]].any() if len(tagged) else None)
    for col, src in (("correction", "Correct"), ("correction_self", "Correct-self"),
                     ("correction_peer", "Correct-peer"), ("coord_query", "Coord-Q"),
                     ("stuck_report", "Stuck"), ("neg_report", "Neg-Report")):
        out[col] = ids.map(flags[src]).fillna(False).astype(bool) if flags is not None else False
    n_msg = tagged.groupby("episode_id").size() if len(tagged) else pd.Series(dtype=int)
    out["n_messages"] = ids.map(n_msg).fillna(0).astype(int)
    out["rules_version"] = rs.version
    out.attrs.update(rules_version=rs.version, backends=backend_labels(episodes))
    return out


# --------------------------------------------------------------------------- #
# tables
# --------------------------------------------------------------------------- #
def _groups(df: pd.DataFrame, by: str | None) -> list[tuple[Hashable, pd.DataFrame]]:
    if by is None:
        return [("all", df)]
    require_columns(df, [by])
    return [(k, g) for k, g in df.groupby(by, sort=False, dropna=False)]


def _pct(x: pd.Series) -> float:
    return float(x.astype(float).mean() * 100) if len(x) else math.nan


def coord_query_table(ind: pd.DataFrame, by: str | None = "structure") -> pd.DataFrame:
    """MECoBench Table 18: episodes with vs without a coordination query.

    Rows (group, "w/ Q." / "w/o Q."); columns #Case, Avg. #Obj., SR (%), Stuck (%),
    Neg. (%) (share of episodes with a stuck / negative report).
    """
    require_columns(ind, ["coord_query", "success", "n_objects", "stuck_report", "neg_report"])
    rows = []
    for key, part in _groups(ind, by):
        for flag, name in ((True, "w/ Q."), (False, "w/o Q.")):
            sub = part.loc[part["coord_query"].astype(bool) == flag]
            rows.append({"group": key, "Q.": name, "#Case": len(sub),
                         "Avg. #Obj.": float(sub["n_objects"].mean()) if len(sub) else math.nan,
                         "SR (%)": _pct(sub["success"]), "Stuck (%)": _pct(sub["stuck_report"]),
                         "Neg. (%)": _pct(sub["neg_report"])})
    t = pd.DataFrame(rows).set_index(["group", "Q."])
    if by is not None:
        t.index = t.index.set_names([by, "Q."])
    t.attrs.update(backends=backend_labels(ind), rules_version=ind.attrs.get("rules_version"))
    return t


#: How :func:`coord_query_table` (Table 18) is shown: shares of episodes as percentages.
COORD_QUERY_STYLE = TableStyle(
    percents=("SR (%)", "Stuck (%)", "Neg. (%)"),
    rename={"Q.": "coordination query", "#Case": "episodes", "Avg. #Obj.": "mean objects", "SR (%)": "SR",
            "Stuck (%)": "with a stuck report", "Neg. (%)": "with a negative report"},
    caption="w/ Q.: episodes with at least one coordination question; SR and reports: share of those episodes")


def failure_lift(ind: pd.DataFrame, indicators: Sequence[str] = FAILURE_MODES, by: str | None = "structure",
                 **kwargs: Any) -> pd.DataFrame:
    """MECoBench Table 22 via :func:`lift_table` (Freq. in %, lift, SR w/, ΔSR in pp).

    Adds a readable ``label`` column; extra keyword arguments go to :func:`lift_table`.
    """
    kwargs.setdefault("percent", True)
    data = ind.copy()
    data["success"] = data["success"].astype(float)
    t = lift_table(data, list(indicators), "success", by=by, **kwargs)
    t.insert(t.columns.get_loc("indicator") + 1, "label", t["indicator"].map(lambda i: FAILURE_LABELS.get(i, i)))
    t.attrs.update(backends=backend_labels(ind), rules_version=ind.attrs.get("rules_version"))
    return t


#: How :func:`failure_lift` (Table 22) is shown: shares as percentages, Freq. and ΔSR with their
#: 95% CIs, the largest lift first; counts, the other CIs and the notes stay in the CSV.
LIFT_STYLE = TableStyle(
    percents=("freq", "rate_failed", "rate_success", "sr_with", "sr_without"),
    drop=("indicator", "n_with", "n_failed", "n_success", "note", "ci_method",
          *(f"{c}_ci_{b}" for c in ("rate_failed", "rate_success", "sr_with", "sr_without") for b in ("low", "high"))),
    rename={"label": "failure mode", "n": "episodes", "freq": "Freq.", "rate_failed": "in failed",
            "rate_success": "in successful", "lift": "lift", "sr_with": "SR with", "sr_without": "SR without",
            "delta_sr": "ΔSR (pp)"},
    order="-lift", max_rows=10,
    caption="Freq.: share of episodes with the mode; in failed / in successful: share of failed / successful "
            "episodes with it; lift = in failed ÷ in successful (∞: never in a success, –: undefined); "
            "95% Wilson CIs, Newcombe for ΔSR")


def dup_grab_rates(ind: pd.DataFrame, by: str = "backend", *, indicator: str = "dup_grab",
                   confidence_level: float = 0.95) -> pd.DataFrame:
    """MECoBench Fig. 37: share of episodes with a duplicate grab per group, Wilson CI, in %.

    Sorted from the highest rate down (as in the figure).
    """
    require_columns(ind, [by, indicator])
    rows = []
    for key, part in ind.groupby(by, sort=False, dropna=False):
        n, k = len(part), int(part[indicator].astype(bool).sum())
        lo, hi = wilson_ci(k, n, confidence_level)
        rows.append({by: key, "n": n, "n_with": k, "rate": 100 * k / n if n else math.nan,
                     "ci_low": 100 * lo, "ci_high": 100 * hi})
    t = pd.DataFrame(rows, columns=[by, "n", "n_with", "rate", "ci_low", "ci_high"])
    t = t.sort_values("rate", ascending=False, kind="stable").reset_index(drop=True)
    t.attrs.update(backends=backend_labels(ind), indicator=indicator)
    return t


#: How :func:`dup_grab_rates` (Fig. 37) is shown: the rate and its Wilson CI in one cell.
DUP_GRAB_STYLE = TableStyle(
    percents=("rate",), intervals={"rate": ("ci_low", "ci_high")},
    rename={"n": "episodes", "n_with": "with a duplicate grab", "rate": "share of episodes"},
    order="-rate", max_rows=10, caption="95% Wilson CI")


@dataclass
class CorrectionAnalysis:
    """Correction vs wrong grabs (MECoBench appendix E.2, Tables 19-20).

    ``table19``: overall and wrong-grab-conditional SR / CR / mean #WG with and without
    correction, raw and severity-adjusted Δ.  ``table20``: per-stratum rows (#WG = 1, 2,
    3, 4+) and the adjusted effect.  ``results``: the :class:`StratifiedResult` per
    group.  ``notes``: why a group was skipped (e.g. "not enough wrong-grab episodes").
    """

    table19: pd.DataFrame
    table20: pd.DataFrame
    results: dict[Hashable, StratifiedResult] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when at least one group had the stratified analysis."""
        return bool(self.results)


_T19_COLS = ["#Case", "SR (%)", "CR (%)", "#WG"]
_T20_COLS = ["#Case", "SR (%)", "CR (%)", "ΔSR (pp)", "ΔCR (pp)", "weight"]


_CORRECTION_NAMES = {"#Case": "episodes", "#WG": "mean wrong grabs", "row": "correction", "cond": "subset"}
#: How ``CorrectionAnalysis.table19`` is shown (SR, CR in %; the Δ rows in percentage points).
TABLE19_STYLE = TableStyle(
    rename=_CORRECTION_NAMES,
    caption="Overall: every episode; WG: episodes with at least one wrong grab; SR and CR in %, Δ rows in "
            "percentage points; Adj. Δ: stratified by #wrong grabs with shared stratum weights")
#: How ``CorrectionAnalysis.table20`` is shown (two groups of four strata and their adjusted effect).
TABLE20_STYLE = TableStyle(
    rename={**_CORRECTION_NAMES, "#WG": "wrong grabs"},
    max_rows=18,
    caption="Corr.: episodes with a correction; Δ: Corr. minus No Corr. in percentage points; weight: the "
            "stratum's share of all wrong-grab episodes (the same for both)")


def correction_analysis(ind: pd.DataFrame, by: str | None = "structure", *,
                        strata: Sequence[Hashable] = WG_STRATA, min_episodes: int = 2) -> CorrectionAnalysis:
    """Effect of correction on SR and CR, stratified by wrong-grab severity (Tables 19-20).

    Analysed set: episodes with at least one wrong grab, strata #WG top-coded at 4
    (``stratified_effect`` with ``top_code(4)`` and pooled shared stratum weights).  A group
    with fewer than ``min_episodes`` wrong-grab episodes, or without both corrected and
    uncorrected ones, is skipped with a note ("not enough wrong-grab episodes ...").
    """
    require_columns(ind, ["correction", "success", "cr", "n_wrong_grabs"])
    data = ind.assign(success=ind["success"].astype(float), cr=ind["cr"].astype(float),
                      correction=ind["correction"].astype(bool))
    t19_rows: list[dict[str, Any]] = []
    t20_rows: list[dict[str, Any]] = []
    results: dict[Hashable, StratifiedResult] = {}
    notes: list[str] = []

    def summ(df: pd.DataFrame) -> dict[str, float]:
        return {"#Case": len(df), "SR (%)": _pct(df["success"]), "CR (%)": _pct(df["cr"]),
                "#WG": float(df["n_wrong_grabs"].mean()) if len(df) else math.nan}

    for key, part in _groups(data, by):
        corr, nocorr = part[part["correction"]], part[~part["correction"]]
        a, b = summ(corr), summ(nocorr)
        t19_rows += [{"group": key, "cond": "Overall", "row": "w/ Corr.", **a},
                     {"group": key, "cond": "Overall", "row": "w/o Corr.", **b},
                     {"group": key, "cond": "Overall", "row": "Δ", "#Case": math.nan,
                      "SR (%)": a["SR (%)"] - b["SR (%)"], "CR (%)": a["CR (%)"] - b["CR (%)"], "#WG": math.nan}]
        wg = part[part["n_wrong_grabs"] > 0]
        wa, wb = summ(wg[wg["correction"]]), summ(wg[~wg["correction"]])
        t19_rows += [{"group": key, "cond": "WG", "row": "w/ Corr.", **wa},
                     {"group": key, "cond": "WG", "row": "w/o Corr.", **wb},
                     {"group": key, "cond": "WG", "row": "Raw Δ", "#Case": math.nan,
                      "SR (%)": wa["SR (%)"] - wb["SR (%)"], "CR (%)": wa["CR (%)"] - wb["CR (%)"], "#WG": math.nan}]
        n_t, n_c = int(wg["correction"].sum()), int((~wg["correction"]).sum())
        adj_sr = adj_cr = math.nan
        if len(wg) < max(min_episodes, 1) or n_t == 0 or n_c == 0:
            why = (f"not enough wrong-grab episodes in {key}: {len(wg)} with >= 1 wrong grab "
                   f"({n_t} with correction, {n_c} without); the stratified correction analysis needs both")
            notes.append(why)
        else:
            res = stratified_effect(wg, "correction", ["success", "cr"], "n_wrong_grabs", list(strata),
                                    bins=top_code(4), treated=True, group_labels=("Corr.", "No Corr."),
                                    percent=True)
            results[key] = res
            adj_sr, adj_cr = res.adjusted("success"), res.adjusted("cr")
            for r in res.table.itertuples(index=False):
                t20_rows.append({"group": key, "#WG": r.stratum, "row": r.group, "#Case": r.n,
                                 "SR (%)": r.success, "CR (%)": r.cr, "ΔSR (pp)": r.delta_success,
                                 "ΔCR (pp)": r.delta_cr, "weight": r.weight})
            t20_rows.append({"group": key, "#WG": "Adjusted effect", "row": "", "#Case": len(wg),
                             "SR (%)": math.nan, "CR (%)": math.nan, "ΔSR (pp)": adj_sr, "ΔCR (pp)": adj_cr,
                             "weight": 1.0})
            notes.extend(f"{key}: {n}" for n in res.notes)
        t19_rows.append({"group": key, "cond": "WG", "row": "Adj. Δ", "#Case": math.nan, "SR (%)": adj_sr,
                         "CR (%)": adj_cr, "#WG": math.nan})
    t19 = pd.DataFrame(t19_rows, columns=["group", "cond", "row", *_T19_COLS]).set_index(["group", "cond", "row"])
    t20 = pd.DataFrame(t20_rows, columns=["group", "#WG", "row", *_T20_COLS]).set_index(["group", "#WG", "row"])
    for t in (t19, t20):
        t.attrs.update(backends=backend_labels(ind), rules_version=ind.attrs.get("rules_version"))
    return CorrectionAnalysis(t19, t20, results, notes)
