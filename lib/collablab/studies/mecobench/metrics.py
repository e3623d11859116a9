"""MECoBench metrics as pure functions of episode records (mecobench.txt §3.2).

An episode record is the ``"episode"`` dict written by ``collablab.episode.run_episode``
(success, completed, n_subgoals, progress, credits, actions, conflict_actions,
handover_attempts, handover_failures, spatial_errors, tokens, n_agents, budget).
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Sequence

Episode = Mapping[str, Any]


def _mean(xs: Iterable[float]) -> float:
    vals = [x for x in xs if not math.isnan(x)]
    return sum(vals) / len(vals) if vals else math.nan


def success_rate(episodes: Sequence[Episode]) -> float:
    """SR: share of successful cases (§3.2)."""
    return _mean(float(bool(e["success"])) for e in episodes)


def completion_rate(episodes: Sequence[Episode]) -> float:
    """CR: mean fraction of completed subgoals per case (§3.2)."""
    return _mean(e["completed"] / e["n_subgoals"] for e in episodes)


def episode_auc(progress: Sequence[float], n_agents: int, budget: int) -> float:
    """Step-CR AUC of one episode, normalised to [0, 1] (§3.2).

    ``progress[k]`` is the CR after team step k (``progress[0]`` before any action). Team
    step k ends at equivalent step ``k * n_agents``; the curve is integrated with the
    trapezoid rule and held flat at its last value up to the budget, then divided by the
    budget, so a team that finishes earlier scores higher.
    """
    if budget <= 0 or n_agents <= 0:
        raise ValueError(f"budget and n_agents must be positive, got {budget}, {n_agents}")
    area = 0.0
    for k in range(1, len(progress)):
        area += n_agents * (progress[k - 1] + progress[k]) / 2
    used = n_agents * (len(progress) - 1)
    area += max(0, budget - used) * progress[-1]
    return area / max(budget, used)


def auc(episodes: Sequence[Episode]) -> float:
    """Mean Step-CR AUC over cases."""
    return _mean(episode_auc(e["progress"], e["n_agents"], e["budget"]) for e in episodes)


def division_of_labor(counts: Mapping[Any, int] | Sequence[int]) -> float:
    """DOL (eq. 3): ``(1 - sum s_i^2) / (1 - 1/n)`` with s_i the share of completed subgoals.

    NaN for one agent (eq. 3 needs n > 1) or when no subgoal was completed.
    """
    vals = list(counts.values()) if isinstance(counts, Mapping) else list(counts)
    n, total = len(vals), sum(vals)
    if n < 2 or total == 0:
        return math.nan
    return (1 - sum((c / total) ** 2 for c in vals)) / (1 - 1 / n)


def dol(episodes: Sequence[Episode]) -> float:
    """Mean DOL over multi-agent cases with at least one completed subgoal."""
    return _mean(division_of_labor(e["credits"]) for e in episodes)


def conflict_action_rate(episodes: Sequence[Episode]) -> float:
    """CAR: mean per-case fraction of actions that were part of a same-step conflict
    (several agents grabbing or opening the same object, appendix B.3)."""
    return _mean(e["conflict_actions"] / e["actions"] if e["actions"] else math.nan for e in episodes)


def handover_failure_rate(episodes: Sequence[Episode]) -> float:
    """HFR: mean per-case fraction of failed handover attempts; NaN ("NA" in Table 11)
    when no case attempted a handover."""
    return _mean(e["handover_failures"] / e["handover_attempts"] if e["handover_attempts"] else math.nan
                 for e in episodes)


def handovers_done(episodes: Sequence[Episode]) -> float:
    """Mean successful handovers per case (read next to HFR and the required count)."""
    return _mean(e["handover_attempts"] - e["handover_failures"] for e in episodes)


def handovers_required(episodes: Sequence[Episode]) -> float:
    """Mean ``required_handover_count`` of the task files' cases (NaN where none is given)."""
    return _mean(e["required_handover_count"] if e.get("required_handover_count") else math.nan for e in episodes)


def spatial_error_rate(episodes: Sequence[Episode]) -> float:
    """Spatial Err (Table 12): mean per-case fraction of actions aimed outside the agent's zone."""
    return _mean(e["spatial_errors"] / e["actions"] if e["actions"] else math.nan for e in episodes)


def tokens_per_step(episodes: Sequence[Episode]) -> float:
    """Average token cost per (agent) step (§3.2)."""
    return _mean(e["tokens"] / e["actions"] if e["actions"] else math.nan for e in episodes)


def summary(episodes: Sequence[Episode]) -> dict[str, float]:
    """All MECoBench metrics of a set of cases, plus their count."""
    return {
        "n": float(len(episodes)), "SR": success_rate(episodes), "CR": completion_rate(episodes),
        "AUC": auc(episodes), "DOL": dol(episodes), "CAR": conflict_action_rate(episodes),
        "HFR": handover_failure_rate(episodes), "Handovers": handovers_done(episodes),
        "HandoversRequired": handovers_required(episodes), "SpatialErr": spatial_error_rate(episodes),
        "TokensPerStep": tokens_per_step(episodes),
    }
