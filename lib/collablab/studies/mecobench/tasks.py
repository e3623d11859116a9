"""MECoBench task files: load, validate and write records in the published schema.

A task file is a JSON list of records with (among others) ``init_graph``, ``task_goal``
(per agent, ``on_<class>_<id>``/``inside_<class>_<id>`` keys), ``total_goal``, goal texts
with and without location, appearance and noise, ``init_room_ids``, ``department_topology``
and ``room_constraints`` (``enabled``, ``agents.<i>.allowed_room_ids``, ``handover_chain``
with ``from_agent``/``to_agent``/``door_id``/``room_pair_ids``, ``required_handover_count``).
Our generated suite is written in the same schema, so both run through this loader.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ...world.goals import GoalError, Predicate, parse_goal, validate_goal
from ...world.scene import Scene, SceneError, scene_from_mecobench

#: Prior-information variants (mecobench.txt §3.1, §6.1, appendix D.5) -> goal-text field.
PRIOR_FIELDS: dict[str, str] = {
    "full": "goal_with_location_and_desc",
    "no_appearance": "goal_with_location",
    "no_location": "goal_with_desc",
    "none": "raw_goal",
    "noisy": "goal_with_location_and_desc_noise",
    "noisy_no_appearance": "goal_with_location_noise",
}
PRIORS = tuple(PRIOR_FIELDS)


class TaskError(ValueError):
    """A task record that cannot be run; the message names the field."""


@dataclass(frozen=True)
class HandoverLink:
    from_agent: int
    to_agent: int
    door_id: int
    room_pair_ids: tuple[int, int]


@dataclass
class Task:
    """One test case: a scene, a goal and a collaboration structure."""

    task_id: str
    name: str
    scene: Scene
    goal: list[Predicate]
    structure: str  # "parallel" | "sequential"
    init_room_ids: list[int]
    allowed_rooms: dict[int, list[int]] | None = None
    handover_chain: list[HandoverLink] = field(default_factory=list)
    required_handover_count: int = 0
    record: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def n_subgoals(self) -> int:
        return sum(p.count for p in self.goal)

    def goal_text(self, prior: str) -> str:
        """The task goal as given to agents under a prior-information variant."""
        if prior not in PRIOR_FIELDS:
            raise TaskError(f"prior: {prior!r} is not allowed; allowed: {', '.join(PRIORS)}")
        text = self.record.get(PRIOR_FIELDS[prior])
        if text is None:
            raise TaskError(f"{PRIOR_FIELDS[prior]}: task {self.task_id} has no goal text for prior {prior!r}")
        return str(text)

    def min_agents(self) -> int:
        """Fewest agents the task can run with (sequential tasks need every zone staffed)."""
        if self.structure == "sequential" and self.allowed_rooms:
            return max(self.allowed_rooms) + 1
        return 1


def _agent_goal(record: Mapping[str, Any]) -> dict[str, int]:
    tg = record.get("task_goal")
    if not isinstance(tg, Mapping) or not tg:
        raise TaskError("task_goal: missing or empty")
    values = list(tg.values())
    if all(isinstance(v, Mapping) for v in values):  # per-agent goals, as published
        first = dict(values[0])
        for k, v in tg.items():
            if dict(v) != first:
                raise TaskError(f"task_goal[{k!r}]: per-agent goals differ; a shared team goal is required")
        return first
    return dict(tg)


def task_from_record(record: Mapping[str, Any]) -> Task:
    """Build and validate a Task from one MECoBench-schema record."""
    tid = str(record.get("task_id", "?"))
    try:
        scene = scene_from_mecobench(dict(record))
        goal = parse_goal(_agent_goal(record))
        validate_goal(scene, goal)
    except (SceneError, GoalError) as exc:
        raise TaskError(f"task {tid}: {exc}") from exc
    rc = record.get("room_constraints") or {}
    enabled = bool(rc.get("enabled", False))
    structure = str(record.get("structure") or ("sequential" if enabled else "parallel"))
    if structure not in ("parallel", "sequential"):
        raise TaskError(f"task {tid}: structure: {structure!r} is not allowed; allowed: parallel, sequential")
    init_rooms = record.get("init_room_ids")
    if not isinstance(init_rooms, list) or not init_rooms:
        raise TaskError(f"task {tid}: init_room_ids: expected a non-empty list of room ids")
    for i, r in enumerate(init_rooms):
        if int(r) not in scene.rooms:
            raise TaskError(f"task {tid}: init_room_ids[{i}]: {r} is not a room; rooms: {sorted(scene.rooms)}")
    allowed: dict[int, list[int]] | None = None
    chain: list[HandoverLink] = []
    if enabled:
        agents = rc.get("agents") or {}
        if not agents:
            raise TaskError(f"task {tid}: room_constraints.agents: required when room_constraints.enabled")
        allowed = {}
        for k, cfg in agents.items():
            rooms = [int(r) for r in (cfg or {}).get("allowed_room_ids", [])]
            missing = [r for r in rooms if r not in scene.rooms]
            if not rooms or missing:
                raise TaskError(f"task {tid}: room_constraints.agents.{k}.allowed_room_ids: "
                                f"{'empty' if not rooms else f'{missing} are not rooms'}")
            allowed[int(k)] = rooms
        raw_chain = rc.get("handover_chain", record.get("handover_chain")) or []
        for j, link in enumerate(raw_chain):
            try:
                hl = HandoverLink(int(link["from_agent"]), int(link["to_agent"]), int(link["door_id"]),
                                  tuple(int(x) for x in link["room_pair_ids"]))  # type: ignore[arg-type]
                scene.door(hl.door_id)
            except (KeyError, TypeError, ValueError) as exc:
                raise TaskError(f"task {tid}: room_constraints.handover_chain[{j}]: {exc}") from exc
            chain.append(hl)
    required = int(rc.get("required_handover_count", record.get("required_handover_count", 0)) or 0)
    return Task(task_id=tid, name=str(record.get("task_name", "")), scene=scene, goal=goal,
                structure=structure, init_room_ids=[int(r) for r in init_rooms], allowed_rooms=allowed,
                handover_chain=chain, required_handover_count=required, record=dict(record))


def load_tasks(path: str | Path) -> list[Task]:
    """Load every task of a MECoBench-schema JSON file (a list of records)."""
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise TaskError(f"task file {p}: {exc}") from exc
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise TaskError(f"task file {p}: expected a JSON list of task records")
    return [task_from_record(r) for r in data]


def dump_tasks(records: list[dict[str, Any]], path: str | Path) -> None:
    """Write records deterministically (same records -> same bytes)."""
    Path(path).write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n")
