"""MASTraceBench's metric suite as pure functions of trajectory records (mastracebench.txt §3.3).

Layer 1: Task Score TS (eq. 2) and Collaboration Gain CG (eq. 3). Layer 2: Gain Against Best
GAB, Agent Refinement AR, Aggregation Loss AL (eq. 4). Layer 3: Token Cost TC (eq. 5) as a
multiplier over Single-Agent (Tables 3, 10). Appendix: Output Validity OV (eq. 23) and
Final-Proposal Agreement FPA (eq. 24, Table 9), and the proposal-score / TS correlation of
Table 7. Inputs are :class:`~.trajectory.Trajectory` units (a static sample or one decision of a
game) and, for games' TS, :class:`~.trajectory.EpisodeResult` records.

Decisions where the paper is silent (documented and tested in tests/test_mastracebench_metrics.py):

- Equality ("=" in GAB, AR) holds within :data:`SCORE_TOL` = 1e-6 on the 0-100 scale; strict
  inequalities need a gap larger than it. Strong Agents are those within the tolerance of b_x.
- A weak agent's label takes the first matching case in the paper's order (Surpass, Reach,
  Partial, Keep, Degrade); they only overlap when b_x - S_init is within twice the tolerance.
- Units without Proposer Agents get no GAB/AR/AL (None) and are left out of their averages;
  an average over no unit is NaN.
- TS of a static task is the mean final-answer score over all its records (several runs of
  the same instances included: with balanced runs that is the mean of the runs' TS). Games'
  TS comes only from episode results; their per-decision answer scores are move-level.
- An invalid output scores 0 and counts as v(y) = 0 in OV; two invalid final proposals do not
  agree in FPA (nothing was proposed to agree on).
- FPA is None (Table 9's dash) for units with fewer than two proposers and for the methods of
  :data:`FPA_NOT_APPLICABLE` (Table 9 marks them so); Consistency and MAV get a value.
- TC multipliers divide the mean per-unit cost of a method by the Single-Agent's on that task;
  a zero baseline cost gives NaN.
- Rates (OV, FPA) are fractions in [0, 1]; tables report percentages as the paper does.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from .trajectory import EpisodeResult, Trajectory

__all__ = [
    "AR_STRONG_LABELS",
    "AR_WEAK_LABELS",
    "FPA_NOT_APPLICABLE",
    "GAB_LABELS",
    "SCORE_TOL",
    "SINGLE_AGENT",
    "ARLabel",
    "Correlation",
    "agent_refinement",
    "aggregation_gap",
    "aggregation_loss",
    "al_table",
    "ar_table",
    "best_final",
    "best_initial",
    "collaboration_gain",
    "collaboration_gains",
    "correlation",
    "episode_task_score",
    "final_agreement",
    "final_proposal_agreement",
    "gab",
    "gab_label",
    "gab_table",
    "label_distribution",
    "mean_proposal_score",
    "output_validity",
    "ov_fpa_table",
    "proposal_ts_correlation",
    "refinement_summary",
    "task_score",
    "task_scores",
    "tc_multipliers",
    "tc_table",
    "token_cost",
    "total_token_cost",
    "ts_cg_table",
    "weak_label",
]

#: Tolerance of score equality on the 0-100 scale (GAB, AR).
SCORE_TOL = 1e-6
#: The baseline of CG (eq. 3) and of the TC multipliers.
SINGLE_AGENT = "Single-Agent"
#: GAB labels in the paper's order (§3.3); Strong Agents' AR uses the same four.
GAB_LABELS: tuple[str, ...] = ("Improve", "Regress", "OptKeep", "SubKeep")
AR_STRONG_LABELS: tuple[str, ...] = GAB_LABELS
#: AR labels of Weak Agents, in the paper's order (§3.3).
AR_WEAK_LABELS: tuple[str, ...] = ("Surpass", "Reach", "Partial", "Keep", "Degrade")
#: Methods whose FPA Table 9 marks "not applicable or trivially determined".
FPA_NOT_APPLICABLE: frozenset[str] = frozenset({SINGLE_AGENT, "Reflection", "AgentVerse", "MAS-GPT"})

Which = Literal["proposals", "initial", "final", "answer"]


def _mean(xs: Iterable[float]) -> float:
    vals = list(xs)
    return float(sum(vals) / len(vals)) if vals else math.nan


def _groups(items: Iterable, key) -> dict[tuple[str, str], list]:
    out: dict[tuple[str, str], list] = {}
    for it in items:
        out.setdefault(key(it), []).append(it)
    return out


def _by_method_task(trajectories: Iterable[Trajectory]) -> dict[tuple[str, str], list[Trajectory]]:
    return _groups(trajectories, lambda t: (t.method, t.task))


def _order(found: Iterable[str], given: Sequence[str] | None, first: str | None = None) -> list[str]:
    if given is not None:
        return list(given)
    out = list(dict.fromkeys(found))
    if first in out:
        out.remove(first)
        out.insert(0, first)
    return out


# ---------------------------------------------------------------- Layer 2: per-unit labels

def best_initial(t: Trajectory) -> float | None:
    """b_x = max_i S_i^init(x) (§3.3); None without proposers."""
    return max((p.initial.score for p in t.proposers), default=None)


def best_final(t: Trajectory) -> float | None:
    """max_i S_i^final(x), the first term of AL (eq. 4); None without proposers."""
    return max((p.final.score for p in t.proposers), default=None)


def gab_label(score: float, best: float, s_star: float, tol: float = SCORE_TOL) -> str:
    """GAB(x) (§3.3): Improve if score > b, Regress if < b, else OptKeep if b = S*, SubKeep if b < S*."""
    if score > best + tol:
        return "Improve"
    if score < best - tol:
        return "Regress"
    return "OptKeep" if abs(best - s_star) <= tol else "SubKeep"


def weak_label(initial: float, final: float, best: float, tol: float = SCORE_TOL) -> str:
    """AR_weak(x, i) (§3.3) of an agent with S_init < b: Surpass, Reach, Partial, Keep or Degrade."""
    if not initial < best - tol:
        raise ValueError(f"weak_label: initial {initial} is not below the best initial {best} (a Strong Agent)")
    if final > best + tol:
        return "Surpass"
    if abs(final - best) <= tol:
        return "Reach"
    if initial + tol < final:
        return "Partial"
    if abs(final - initial) <= tol:
        return "Keep"
    return "Degrade"


def gab(t: Trajectory, tol: float = SCORE_TOL) -> str | None:
    """GAB label of one unit: the final MAS answer against the best initial proposal (§3.3)."""
    b = best_initial(t)
    return None if b is None else gab_label(t.answer.score, b, t.s_star, tol)


@dataclass(frozen=True)
class ARLabel:
    """One proposer's AR label on a unit: ``group`` is ``"strong"`` (in B_x) or ``"weak"`` (in W_x)."""

    agent: str
    group: Literal["strong", "weak"]
    label: str


def agent_refinement(t: Trajectory, tol: float = SCORE_TOL) -> list[ARLabel]:
    """AR labels of every proposer (§3.3): GAB's cases on S_i^final for Strong Agents
    (S_i^init = b_x), AR_weak for the others."""
    b = best_initial(t)
    out = []
    for p in t.proposers:
        if abs(p.initial.score - b) <= tol:
            out.append(ARLabel(p.agent, "strong", gab_label(p.final.score, b, t.s_star, tol)))
        else:
            out.append(ARLabel(p.agent, "weak", weak_label(p.initial.score, p.final.score, b, tol)))
    return out


def aggregation_gap(t: Trajectory) -> float | None:
    """max_i S_i^final(x) - S_MAS(x), the term averaged by AL (eq. 4); negative when the answer
    beats every final proposal; None without proposers."""
    bf = best_final(t)
    return None if bf is None else bf - t.answer.score


def aggregation_loss(trajectories: Iterable[Trajectory]) -> float:
    """AL (eq. 4): mean aggregation gap over units with proposers (NaN if none)."""
    return _mean(g for g in map(aggregation_gap, trajectories) if g is not None)


def label_distribution(labels: Iterable[str], order: Sequence[str]) -> dict[str, float]:
    """Percentage of each label in ``order`` (Fig. 4-5 report GAB and AR as percentages)."""
    labs = list(labels)
    bad = set(labs) - set(order)
    if bad:
        raise ValueError(f"labels {sorted(bad)} are not among {list(order)}")
    n = len(labs)
    return {k: (100.0 * labs.count(k) / n if n else math.nan) for k in order}


# ---------------------------------------------------------------- Layer 1: TS and CG

def task_score(trajectories: Iterable[Trajectory]) -> float:
    """TS (eq. 2) of a static task: mean final MAS answer score (invalid answers score 0)."""
    ts = list(trajectories)
    dynamic = [t for t in ts if not t.is_static]
    if dynamic:
        raise ValueError(f"task_score: {dynamic[0].task!r} has game states; a game's TS is the mean episode "
                         "score (episode_task_score)")
    return _mean(t.answer.score for t in ts)


def episode_task_score(episodes: Iterable[EpisodeResult]) -> float:
    """TS (eq. 2) of a dynamic task: mean episode score R(z) (win rate or payoff ratio, x 100)."""
    return _mean(e.score for e in episodes)


def collaboration_gain(ts: float, ts_single: float) -> float:
    """CG (eq. 3): TS - TS_Single on the same task."""
    return ts - ts_single


def task_scores(trajectories: Iterable[Trajectory] = (), episodes: Iterable[EpisodeResult] = ()
                ) -> dict[tuple[str, str], float]:
    """TS per (method, task) (eq. 2): static tasks from trajectories, games from episode results."""
    static = _by_method_task(t for t in trajectories if t.is_static)
    games = _groups(episodes, lambda e: (e.method, e.task))
    both = set(static) & set(games)
    if both:
        raise ValueError(f"task_scores: {min(both)} has both static trajectories and episode results")
    out = {k: task_score(v) for k, v in static.items()}
    out.update({k: episode_task_score(v) for k, v in games.items()})
    return out


def collaboration_gains(scores: Mapping[tuple[str, str], float], baseline: str = SINGLE_AGENT
                        ) -> dict[tuple[str, str], float]:
    """CG (eq. 3) per (method, task) from :func:`task_scores`; the baseline's own rows are left out."""
    out = {}
    for (method, task), ts in scores.items():
        if method == baseline:
            continue
        if (baseline, task) not in scores:
            raise ValueError(f"collaboration_gains: no {baseline!r} TS on task {task!r} (eq. 3 needs it)")
        out[(method, task)] = collaboration_gain(ts, scores[(baseline, task)])
    return out


# ---------------------------------------------------------------- Layer 3: TC

def token_cost(t: Trajectory) -> int:
    """C_MAS(x) (eq. 5): input + output tokens of the unit's MAS calls (scoring judges and
    acceptance probes excluded)."""
    return sum(c.tokens for c in t.calls if c.counts_for_tc)


def total_token_cost(trajectories: Iterable[Trajectory]) -> float:
    """TC (eq. 5): mean C_MAS(x) over units."""
    return _mean(token_cost(t) for t in trajectories)


def tc_multipliers(trajectories: Iterable[Trajectory], baseline: str = SINGLE_AGENT
                   ) -> dict[tuple[str, str], float]:
    """TC of each (method, task) over the baseline's TC on that task (Tables 3, 10); NaN when
    the baseline's cost is 0."""
    tc = {k: total_token_cost(v) for k, v in _by_method_task(trajectories).items()}
    out = {}
    for (method, task), v in tc.items():
        if (baseline, task) not in tc:
            raise ValueError(f"tc_multipliers: no {baseline!r} trajectories on task {task!r}")
        base = tc[(baseline, task)]
        out[(method, task)] = v / base if base > 0 else math.nan
    return out


# ---------------------------------------------------------------- appendix: OV, FPA

def output_validity(trajectories: Iterable[Trajectory]) -> float:
    """OV (eq. 23): share of valid outputs among all initial and final proposals and final
    MAS answers (NaN when there is none)."""
    flags = []
    for t in trajectories:
        flags.append(t.answer.valid)
        for p in t.proposers:
            flags += [p.initial.valid, p.final.valid]
    return _mean(float(f) for f in flags)


def _key(canonical: object) -> str:
    return json.dumps(canonical, sort_keys=True)


def final_agreement(t: Trajectory) -> bool | None:
    """The indicator of eq. 24 on one unit: all final proposals valid and canonically equal;
    None with fewer than two proposers."""
    if len(t.proposers) < 2:
        return None
    finals = [p.final for p in t.proposers]
    return all(f.valid for f in finals) and len({_key(f.canonical) for f in finals}) == 1


def final_proposal_agreement(trajectories: Iterable[Trajectory],
                             not_applicable: Iterable[str] = FPA_NOT_APPLICABLE) -> float | None:
    """FPA (eq. 24): share of units whose proposers' final proposals all agree; None when no unit
    has several comparable proposals or the method is marked not applicable (Table 9)."""
    skip = set(not_applicable)
    flags = [f for t in trajectories if t.method not in skip for f in [final_agreement(t)] if f is not None]
    return _mean(float(f) for f in flags) if flags else None


# ---------------------------------------------------------------- Table 7: proposal score vs TS

def mean_proposal_score(trajectories: Iterable[Trajectory], which: Which = "proposals") -> float:
    """Mean proposal score (appendix, Table 7): over every proposer's initial and final proposal
    (``"proposals"``), only ``"initial"`` or ``"final"`` ones, or the final MAS ``"answer"``s."""
    if which not in ("proposals", "initial", "final", "answer"):
        raise ValueError(f"which: {which!r} is not one of proposals, initial, final, answer")
    vals: list[float] = []
    for t in trajectories:
        if which == "answer":
            vals.append(t.answer.score)
        else:
            for p in t.proposers:
                if which in ("proposals", "initial"):
                    vals.append(p.initial.score)
                if which in ("proposals", "final"):
                    vals.append(p.final.score)
    return _mean(vals)


@dataclass(frozen=True)
class Correlation:
    """Spearman's rho and Pearson's r with their p-values (Table 7) over ``n`` pairs."""

    spearman: float
    spearman_p: float
    pearson: float
    pearson_p: float
    n: int


def correlation(x: Sequence[float], y: Sequence[float]) -> Correlation:
    """Spearman and Pearson correlation of paired values (scipy.stats; Tables 5 and 7)."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xs.shape != ys.shape or xs.ndim != 1:
        raise ValueError(f"correlation: x and y must be paired 1-D sequences, got {xs.shape} and {ys.shape}")
    if len(xs) < 3:
        raise ValueError(f"correlation: needs at least 3 pairs, got {len(xs)}")
    rho, p_rho = stats.spearmanr(xs, ys)
    r, p_r = stats.pearsonr(xs, ys)
    return Correlation(float(rho), float(p_rho), float(r), float(p_r), len(xs))


def proposal_ts_correlation(trajectories: Iterable[Trajectory], episodes: Iterable[EpisodeResult] = (),
                            task: str | None = None, which: Which = "answer") -> Correlation:
    """Table 7: across methods, correlate the mean proposal score on ``task`` with its TS. The paper
    takes "each method's mean proposal score over all replayed moves": the moves the MAS played,
    one per game decision (its ``answer``), not its proposers' drafts (``which`` keeps the other
    readings of :func:`mean_proposal_score` for comparison)."""
    ts_list = list(trajectories)
    if task is None:
        tasks = {t.task for t in ts_list}
        if len(tasks) != 1:
            raise ValueError(f"task: name one of {sorted(tasks)}")
        task = tasks.pop()
    on_task = [t for t in ts_list if t.task == task]
    scores = task_scores(on_task, [e for e in episodes if e.task == task])
    groups = _by_method_task(on_task)
    methods = [m for (m, k) in groups if (m, k) in scores]
    return correlation([mean_proposal_score(groups[(m, task)], which) for m in methods],
                       [scores[(m, task)] for m in methods])


# ---------------------------------------------------------------- tables

def ts_cg_table(trajectories: Iterable[Trajectory] = (), episodes: Iterable[EpisodeResult] = (),
                baseline: str = SINGLE_AGENT, methods: Sequence[str] | None = None,
                tasks: Sequence[str] | None = None) -> pd.DataFrame:
    """Table 2: TS and CG per method (rows) and task (column pairs); the baseline's CG is NaN."""
    scores = task_scores(trajectories, episodes)
    gains = collaboration_gains(scores, baseline) if any(m == baseline for m, _ in scores) else {}
    ms = _order((m for m, _ in scores), methods, baseline)
    ks = _order((k for _, k in scores), tasks)
    cols = pd.MultiIndex.from_product([ks, ["TS", "CG"]], names=["task", "metric"])
    rows = [[v for k in ks for v in (scores.get((m, k), math.nan), gains.get((m, k), math.nan))] for m in ms]
    return pd.DataFrame(rows, index=pd.Index(ms, name="method"), columns=cols)


def gab_table(trajectories: Iterable[Trajectory], tol: float = SCORE_TOL) -> pd.DataFrame:
    """Fig. 4: percentage of each GAB label per (method, task) over units with proposers, and ``n``."""
    rows, index = [], []
    for key, ts in _by_method_task(trajectories).items():
        labels = [g for g in (gab(t, tol) for t in ts) if g is not None]
        if labels:
            index.append(key)
            rows.append({**label_distribution(labels, GAB_LABELS), "n": len(labels)})
    return pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(index, names=["method", "task"]),
                        columns=[*GAB_LABELS, "n"])


def ar_table(trajectories: Iterable[Trajectory], tol: float = SCORE_TOL) -> pd.DataFrame:
    """Fig. 5 / 10: AR label percentages within each group (strong, weak) per (method, task);
    labels of the other group are NaN; ``n`` counts agent-units."""
    rows, index = [], []
    cols = [*AR_STRONG_LABELS, *AR_WEAK_LABELS]
    for (method, task), ts in _by_method_task(trajectories).items():
        labels = [a for t in ts for a in agent_refinement(t, tol)]
        for group, order in (("strong", AR_STRONG_LABELS), ("weak", AR_WEAK_LABELS)):
            mine = [a.label for a in labels if a.group == group]
            if mine:
                index.append((method, task, group))
                rows.append({**label_distribution(mine, order), "n": len(mine)})
    return pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(index, names=["method", "task", "group"]),
                        columns=[*cols, "n"])


def refinement_summary(trajectories: Iterable[Trajectory], tol: float = SCORE_TOL) -> pd.DataFrame:
    """Table 4's columns per (method, task): GI/GR = GAB Improve/Regress %, WI = Surpass + Reach +
    Partial % of weak agents, SR = Regress % of strong agents."""
    gt, at = gab_table(trajectories, tol), ar_table(trajectories, tol)
    rows = []
    for method, task in gt.index:
        weak = at.loc[(method, task, "weak")] if (method, task, "weak") in at.index else None
        strong = at.loc[(method, task, "strong")] if (method, task, "strong") in at.index else None
        rows.append({"GI": gt.loc[(method, task), "Improve"], "GR": gt.loc[(method, task), "Regress"],
                     "WI": math.nan if weak is None else float(weak[["Surpass", "Reach", "Partial"]].sum()),
                     "SR": math.nan if strong is None else float(strong["Regress"])})
    return pd.DataFrame(rows, index=gt.index, columns=["GI", "GR", "WI", "SR"])


def al_table(trajectories: Iterable[Trajectory], methods: Sequence[str] | None = None,
             tasks: Sequence[str] | None = None) -> pd.DataFrame:
    """Fig. 6: AL (eq. 4) per method (rows) and task (columns); NaN without proposers."""
    groups = _by_method_task(trajectories)
    ms, ks = _order((m for m, _ in groups), methods), _order((k for _, k in groups), tasks)
    data = [[aggregation_loss(groups.get((m, k), [])) for k in ks] for m in ms]
    return pd.DataFrame(data, index=pd.Index(ms, name="method"), columns=pd.Index(ks, name="task"))


def tc_table(trajectories: Iterable[Trajectory], baseline: str = SINGLE_AGENT,
             methods: Sequence[str] | None = None, tasks: Sequence[str] | None = None) -> pd.DataFrame:
    """Tables 3 and 10: TC (eq. 5) multipliers over the baseline, method x task."""
    mult = tc_multipliers(list(trajectories), baseline)
    ms, ks = _order((m for m, _ in mult), methods, baseline), _order((k for _, k in mult), tasks)
    data = [[mult.get((m, k), math.nan) for k in ks] for m in ms]
    return pd.DataFrame(data, index=pd.Index(ms, name="method"), columns=pd.Index(ks, name="task"))


def ov_fpa_table(trajectories: Iterable[Trajectory], baseline: str = SINGLE_AGENT,
                 not_applicable: Iterable[str] = FPA_NOT_APPLICABLE, methods: Sequence[str] | None = None,
                 tasks: Sequence[str] | None = None) -> pd.DataFrame:
    """Table 9: OV (eq. 23) and FPA (eq. 24) in percent per method and task; FPA NaN where not applicable."""
    groups = _by_method_task(trajectories)
    skip = set(not_applicable)
    ms = _order((m for m, _ in groups), methods, baseline)
    ks = _order((k for _, k in groups), tasks)
    rows = []
    for m in ms:
        row = []
        for k in ks:
            ts = groups.get((m, k), [])
            fpa = final_proposal_agreement(ts, skip)
            row += [100 * output_validity(ts), math.nan if fpa is None else 100 * fpa]
        rows.append(row)
    cols = pd.MultiIndex.from_product([ks, ["OV", "FPA"]], names=["task", "metric"])
    return pd.DataFrame(rows, index=pd.Index(ms, name="method"), columns=cols)
