"""DynaHMRC's episode metrics from the framework's step and call records (dynahmrc.tex §4.4
"Evaluation Metrics"; appendix ``lab:llm_cost`` / ``tab:token_comparison``,
``lab:comm_cost_composition`` / ``tab:fail_scaling``, ``lab:leader_vote``).

Records (one dict each):

- step record, one per robot action of the execution stage: ``step`` (1-based temporal step),
  ``robot``, ``type``, ``action`` (canonical text, or the raw reply of an invalid one), ``name``
  (:data:`STEP_NAMES`), ``target`` (place for navigate/open, object for pick/place, else ""),
  ``where`` (place for place, else ""), ``kind`` (feedback kind) and ``ok``;
- call record, one per brain call: ``stage`` (:data:`~.brain.STAGES`), ``robot``, ``step``,
  ``tokens_in``, ``tokens_out``.

Definitions (the paper's where it gives one, ours where it does not):

- SUCC, PS, TS come from the episode (``success``, ``ps``, ``ts``). SUCC and PS follow the paper's
  worked failure case (appendix ``lab:coherent_fail_case``: "book_0, soap, and the non-target
  object toothpaste_0 are in the tray, while the required object fork_0 is missing" gives
  "PartSuccess=0.333"), not §4.4's sentences alone (SUCC: "all objects are placed in the correct
  positions"; PS: "the average ratio of correctly placed objects to the total number of objects per
  episode", which would give 2/3 there): a non-target in the receptacle subtracts one placed
  target from PS (clipped at 0) and an episode with one is not a success
  (:meth:`~.world.RobotWorld.partial_success`, :meth:`~.world.RobotWorld.success`);
- AS: action steps, every action except ``wait`` (§4.4). An invalid reply counts as an action
  taken: the robot spent its turn on a non-wait decision the world rejected. ``as_total`` is the
  team's count; ``as_per_robot`` divides it by the robots that took part (the paper's AS is
  reported per robot here);
- CC: ``communicate`` actions per robot, the paper's CC = 1/(n|E|) sum_e sum_t sum_i c for one
  episode (|E| = 1); averaging episodes then gives the paper's value when n is the same. Where the
  paper reports none (COHERENT: '-' in every CC cell of ``tab:central_1``, ``tab:central_2``,
  ``tab:memory_length``; its robots "solely execute the issued actions", §4.2) the episode's
  ``cc`` is None (``report_cc`` False), so no table, mean or figure shows a CC the paper does not
  have; ``communications`` (the team's ``communicate`` actions) is recorded for every episode;
- redundant actions (``tab:fail_scaling``: "a robot navigates to a previously visited region"):
  a ``navigate`` (successful or not) whose place the same robot already reached by an earlier
  successful ``navigate`` in the episode; any stand pose of that place counts as the same region;
- conflicting actions (``tab:fail_scaling``; ``wait`` and ``communicate`` excluded): see
  :func:`conflicting_actions`;
- LLM cost (``lab:llm_cost``): every call counts once (parallel calls of different robots
  separately), tokens = input + output.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .actions import ActionError, parse_action
from .brain import STAGES
from .robots import COMPOSITIONS, ROBOT_TYPES

__all__ = [
    "STEP_FIELDS",
    "CALL_FIELDS",
    "ELECTION_COLUMNS",
    "STEP_NAMES",
    "ElectionSummary",
    "action_steps",
    "check_calls",
    "check_steps",
    "communication_cost",
    "conflicting_actions",
    "election_summary",
    "episode_metrics",
    "redundant_actions",
    "stage_usage",
]

#: Fields every step record has.
STEP_FIELDS = ("t", "robot", "type", "action", "name", "target", "where", "kind", "ok")
#: Fields every call record has.
CALL_FIELDS = ("stage", "robot", "step", "tokens_in", "tokens_out")
#: Allowed ``name`` values of a step record.
STEP_NAMES = ("navigate", "open", "pick", "place", "move", "communicate", "wait", "invalid")


def _check_record(rec: Any, fields: tuple[str, ...], what: str, i: int) -> None:
    if not isinstance(rec, Mapping):
        raise ValueError(f"{what} record {i}: must be a mapping with fields {', '.join(fields)}, got {type(rec).__name__}")
    missing = [f for f in fields if f not in rec]
    if missing:
        raise ValueError(f"{what} record {i}: missing field(s) {', '.join(missing)}; required: {', '.join(fields)}")


def check_steps(steps: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The step records as a list; ValueError naming the field (and its allowed values) of the
    first bad one: a missing field, an unknown ``name`` or ``type``, a ``step`` below 1."""
    out = list(steps)
    for i, s in enumerate(out):
        _check_record(s, STEP_FIELDS, "step", i)
        if s["name"] not in STEP_NAMES:
            raise ValueError(f"step record {i}: name {s['name']!r} not allowed; allowed: {', '.join(STEP_NAMES)}")
        if s["type"] not in ROBOT_TYPES:
            raise ValueError(f"step record {i}: type {s['type']!r} not allowed; allowed: {', '.join(ROBOT_TYPES)}")
        if isinstance(s["t"], bool) or not isinstance(s["t"], int) or s["t"] < 1:
            raise ValueError(f"step record {i}: t must be an int >= 1 (1-based temporal step), got {s['t']!r}")
    return out


def check_calls(calls: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The call records as a list; ValueError naming the field of the first bad one: a missing
    field, an unknown ``stage`` (allowed: :data:`~.brain.STAGES`), negative token counts."""
    out = list(calls)
    for i, c in enumerate(out):
        _check_record(c, CALL_FIELDS, "call", i)
        if c["stage"] not in STAGES:
            raise ValueError(f"call record {i}: stage {c['stage']!r} not allowed; allowed: {', '.join(STAGES)}")
        for f in ("tokens_in", "tokens_out"):
            v = c[f]
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"call record {i}: {f} must be an int >= 0, got {v!r}")
    return out


def action_steps(steps: Iterable[Mapping[str, Any]]) -> int:
    """AS of one episode, whole team: every action except ``wait`` (invalid replies included)."""
    return sum(1 for s in check_steps(steps) if s["name"] != "wait")


def communication_cost(steps: Iterable[Mapping[str, Any]], n_robots: int) -> float:
    """CC of one episode: ``communicate`` actions (successful or not) divided by ``n_robots``.

    An invalid reply that meant to communicate is an ``invalid`` action and is not counted.
    """
    if isinstance(n_robots, bool) or not isinstance(n_robots, int) or n_robots < 1:
        raise ValueError(f"n_robots: must be an int >= 1, got {n_robots!r}")
    return sum(1 for s in check_steps(steps) if s["name"] == "communicate") / n_robots


def _ordered(steps: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    # stable: records of one step keep the framework's order
    return sorted(steps, key=lambda s: s["t"])


def redundant_actions(steps: Iterable[Mapping[str, Any]]) -> int:
    """Navigations to a place the same robot already reached by a successful ``navigate`` at an
    earlier step (``tab:fail_scaling``). The redundant attempt itself may succeed or fail; a
    different stand pose of the same place is the same region; ``move`` is never redundant."""
    visited: dict[str, set[str]] = defaultdict(set)
    count = 0
    by_step: dict[int, list[Mapping[str, Any]]] = defaultdict(list)
    for s in _ordered(check_steps(steps)):
        by_step[s["t"]].append(s)
    for step in sorted(by_step):
        navs = [s for s in by_step[step] if s["name"] == "navigate"]
        count += sum(1 for s in navs if s["target"] in visited[s["robot"]])
        for s in navs:
            if s["ok"]:
                visited[s["robot"]].add(s["target"])
    return count


def _claim(s: Mapping[str, Any]) -> tuple[str, ...] | None:
    name = s["name"]
    if name in ("pick", "place"):
        return ("object", s["target"])
    if name == "open":
        return ("open", s["target"])
    if name == "navigate":
        try:
            pose = str(parse_action(s["action"]).pose)
        except ActionError:
            pose = s["action"]
        return ("stand_pose", s["target"], pose)
    return None  # wait, communicate, move, invalid


def conflicting_actions(steps: Iterable[Mapping[str, Any]]) -> int:
    """Conflicts of one episode (``tab:fail_scaling``).

    Within one temporal step each action claims a resource: ``pick(o)`` and ``place(o, p)`` the
    object ``o``; ``open(c)`` the container ``c``; ``navigate(p, stand_pose_k)`` the stand pose
    ``k`` of ``p`` (two robots at different stand poses of one place do not conflict). ``wait``,
    ``communicate``, ``move`` (no target) and invalid replies claim nothing. A conflict is a
    (step, resource) claimed by two or more different robots, whatever the actions' outcomes; each
    counts once however many robots share it.
    """
    claims: dict[tuple[Any, ...], set[str]] = defaultdict(set)
    for s in check_steps(steps):
        c = _claim(s)
        if c is not None:
            claims[(s["t"], *c)].add(s["robot"])
    return sum(1 for robots in claims.values() if len(robots) >= 2)


def stage_usage(calls: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """LLM calls and tokens (input + output) per stage of one episode (``tab:token_comparison``):
    ``calls_<S>``, ``tokens_<S>`` for every stage S of :data:`~.brain.STAGES` (0 when unused),
    ``calls_total``, ``tokens_total``. Tokens are episode totals; the table's per-stage Tokens
    column is per call (see :func:`~.stats.stage_cost_table`)."""
    calls_n: Counter[str] = Counter()
    tokens: Counter[str] = Counter()
    for c in check_calls(calls):
        calls_n[c["stage"]] += 1
        tokens[c["stage"]] += c["tokens_in"] + c["tokens_out"]
    out: dict[str, int] = {}
    for st in STAGES:
        out[f"calls_{st}"] = calls_n[st]
        out[f"tokens_{st}"] = tokens[st]
    out["calls_total"] = sum(calls_n.values())
    out["tokens_total"] = sum(tokens.values())
    return out


def episode_metrics(
    steps: Iterable[Mapping[str, Any]],
    calls: Iterable[Mapping[str, Any]],
    *,
    n_robots: int,
    success: bool,
    ps: float,
    ts: int,
    max_steps: int,
    report_cc: bool = True,
) -> dict[str, Any]:
    """One episode's row: ``success``, ``ps``, ``ts``, ``n_robots``, ``as_total`` (team's non-wait
    actions), ``as_per_robot`` (= as_total / n_robots: the paper's AS is reported per robot here,
    as_total kept), ``cc`` (None unless ``report_cc``), ``communications``, ``redundant``, ``conflicting``, ``invalid_actions``, ``truncated_replies``
    (calls of any stage whose reply was cut at the token budget) and
    :func:`stage_usage`. ValueError for a bad field (ps outside [0, 1], ts outside
    0..max_steps, a step record beyond max_steps, ...)."""
    steps_l = check_steps(steps)
    calls_l = check_calls(calls)
    if isinstance(n_robots, bool) or not isinstance(n_robots, int) or n_robots < 1:
        raise ValueError(f"n_robots: must be an int >= 1, got {n_robots!r}")
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        raise ValueError(f"max_steps: must be an int >= 1, got {max_steps!r}")
    if isinstance(ts, bool) or not isinstance(ts, int) or not 0 <= ts <= max_steps:
        raise ValueError(f"ts: must be an int in 0..max_steps={max_steps}, got {ts!r}")
    if not 0.0 <= float(ps) <= 1.0:
        raise ValueError(f"ps: must be in [0, 1], got {ps!r}")
    late = [s["t"] for s in steps_l if s["t"] > max_steps]
    if late:
        raise ValueError(f"t: step records go up to step {max(late)}, beyond max_steps={max_steps}")
    as_total = action_steps(steps_l)
    row: dict[str, Any] = {
        "success": bool(success),
        "ps": float(ps),
        "ts": int(ts),
        "n_robots": n_robots,
        "as_total": as_total,
        "as_per_robot": as_total / n_robots,
        "cc": communication_cost(steps_l, n_robots) if report_cc else None,
        "communications": sum(1 for s in steps_l if s["name"] == "communicate"),
        "redundant": redundant_actions(steps_l),
        "conflicting": conflicting_actions(steps_l),
        "invalid_actions": sum(1 for s in steps_l if s["name"] == "invalid"),
        "truncated_replies": sum(1 for c in calls_l if str(c.get("invalid") or "").startswith("truncated")),
    }
    row.update(stage_usage(calls_l))
    return row


@dataclass(frozen=True)
class ElectionSummary:
    """Leader-election statistics (``lab:leader_vote``, Figs. ``fig:leader_rounds``,
    ``fig:final_leader``): shares over ``n`` elections, the rounds distribution (``rounds``,
    ``referee`` -> ``count``, ``share``) and the final leader type by team (``leaders``: counts,
    ``leader_shares``: each team's row sums to 1)."""

    n: int
    first_round: float
    within_two: float
    referee: float
    rounds: pd.DataFrame
    leaders: pd.DataFrame
    leader_shares: pd.DataFrame


#: Columns :func:`election_summary` reads.
ELECTION_COLUMNS = ("election_rounds", "referee", "leader_type", "team")


def election_summary(episodes_frame: pd.DataFrame) -> ElectionSummary:
    """Election stability from one row per episode with ``election_rounds`` (int >= 1: voting
    rounds held), ``referee`` (bool: the referee chose, no unique leader after the last round),
    ``leader_type`` and ``team``.

    ``first_round`` / ``within_two`` are the shares with a unique vote winner in round 1 / in
    rounds 1-2 (a referee decision is never "resolved by voting"); ``referee`` the share decided
    by the referee. Teams follow :data:`~.robots.COMPOSITIONS`, leader types
    :data:`~.robots.ROBOT_TYPES` (others after them, in order of appearance).
    """
    missing = [c for c in ELECTION_COLUMNS if c not in episodes_frame.columns]
    if missing:
        raise ValueError(f"episodes_frame: missing column(s) {', '.join(missing)}; required: "
                         f"{', '.join(ELECTION_COLUMNS)}; available: {[str(c) for c in episodes_frame.columns]}")
    df = episodes_frame[list(ELECTION_COLUMNS)]
    if df.isna().any().any():
        bad = [c for c in ELECTION_COLUMNS if df[c].isna().any()]
        raise ValueError(f"episodes_frame: missing values in column(s) {', '.join(bad)}")
    rounds = pd.to_numeric(df["election_rounds"], errors="coerce")
    if rounds.isna().any() or (rounds % 1 != 0).any() or (rounds < 1).any() or df["election_rounds"].map(
            lambda v: isinstance(v, bool)).any():
        raise ValueError(f"election_rounds: each must be an int >= 1, got {sorted(set(map(repr, df['election_rounds'])))}")
    ref_vals = set(df["referee"].tolist())
    if not ref_vals <= {True, False}:
        raise ValueError(f"referee: each must be a bool (True/False), got {sorted(map(repr, ref_vals))}")
    df = df.assign(election_rounds=rounds.astype(int), referee=df["referee"].astype(bool))
    n = len(df)
    if n == 0:
        raise ValueError("episodes_frame: no rows")
    voted = ~df["referee"]
    first = float((voted & (df["election_rounds"] == 1)).mean())
    two = float((voted & (df["election_rounds"] <= 2)).mean())
    ref = float(df["referee"].mean())
    dist = (df.groupby(["election_rounds", "referee"], sort=True).size().rename("count").reset_index())
    dist["share"] = dist["count"] / n

    def order(values: Iterable[Any], known: Iterable[str]) -> list[Any]:
        seen = list(dict.fromkeys(values))
        first_part = [k for k in known if k in seen]
        return first_part + [v for v in seen if v not in first_part]

    teams = order(df["team"], COMPOSITIONS)
    types = order(df["leader_type"], ROBOT_TYPES)
    counts = pd.crosstab(df["team"], df["leader_type"]).reindex(index=teams, columns=types, fill_value=0)
    counts.index.name, counts.columns.name = "team", "leader_type"
    shares = counts.div(counts.sum(axis=1), axis=0)
    return ElectionSummary(n, first, two, ref, dist, counts, shares)
