"""MECoBench task files: load, validate and write records in the published schema.

A task file is a JSON list of records with (among others) ``init_graph``, ``task_goal``
(per agent, ``on_<class>_<id>``/``inside_<class>_<id>`` keys), ``total_goal``, goal texts
with and without location, appearance and noise, ``num_agents``, ``init_room_ids``,
``department_topology``, ``goal_targets`` (``id``, ``goal_object_class``,
``acceptable_target_ids``), ``goal_target_options`` and ``room_constraints`` (``enabled``,
``agents.<i>.allowed_room_ids``, ``handover_chain`` with ``from_agent``/``to_agent``/
``door_id``/``room_pair_ids``, ``required_handover_count``); mecobench.txt §2, appendix A.2, B.3.
Our generated suite is written in the same schema, so both run through this loader.

Decisions on published files:

- ``handover_chain[].door_id`` may name a door-jamb node standing in a topology door; it is
  replaced by that door's id (:meth:`Scene.canonical_door_id`).
- ``room_pair_ids`` is (giver's side, receiver's side). A pair given the other way round (its
  first room in ``to_agent``'s zone, its second in ``from_agent``'s) is accepted and reordered;
  a pair that fits neither way is rejected.
- Rooms in no agent's zone are legal; a sequential task is rejected only when a goal needs
  such a room (every target of a predicate, or objects of a class, lies outside the zones).
- ``goal_targets`` entries apply to the predicates with the same target id and goal class; a
  predicate with no entry of its class takes every entry for its target, since the published
  records carry one entry per target whose ``goal_object_class`` names only its first goal class
  (5 of 5 in parallel_5.json). Entries for targets outside the goal are ignored.
- ``goal_target_options`` maps a goal key (``on_cupcake_380``) or a target id (``"380"``) to a
  list of acceptable target ids (ints, digit strings or ``{"id": ...}`` objects); a key that is
  neither is an error, since then the format is not the one we read.
- ``num_agents`` must agree with the zones of a sequential task; for a parallel task it is the
  published default team size, recorded but not enforced (:meth:`Task.check_team`).
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from ...world.goals import GoalError, Predicate, parse_goal, target_problem, validate_goal
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
    """One handover of a sequential task's chain (mecobench.txt §2, appendix B.3): ``from_agent``
    gives to ``to_agent`` at topology door ``door_id`` (aliases resolved); ``room_pair_ids`` is
    (the giver's side, the receiver's side) of that door."""

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
    num_agents: int | None = None  # the record's team size (see check_team)

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

    def check_team(self, n_agents: int) -> None:
        """Reject a team size the task cannot run with, naming ``n_agents``.

        Sequential tasks need exactly one agent per zone (``room_constraints.agents``; §3.1 runs
        them with two). Parallel tasks take any team of at least one: their ``num_agents`` is the
        published default team size, recorded but not enforced, since the paper scales parallel
        teams from one agent up (§4.2).
        """
        if isinstance(n_agents, bool) or not isinstance(n_agents, int) or n_agents < 1:
            raise TaskError(f"n_agents: {n_agents!r} is not allowed; allowed: an integer >= 1"
                            + (f" (task {self.task_id}: exactly {self.min_agents()})"
                               if self.structure == "sequential" and self.allowed_rooms else ""))
        if self.structure == "sequential" and self.allowed_rooms:
            k = len(self.allowed_rooms)
            if n_agents != k:
                raise TaskError(f"n_agents: task {self.task_id} is sequential with {k} zones "
                                f"(room_constraints.agents); it needs exactly {k} agents, got {n_agents}; "
                                f"allowed: {k}")


@dataclass
class TaskFile:
    """A task file's good tasks and, by task id, why each other record was rejected."""

    tasks: list[Task]
    rejected: dict[str, str] = field(default_factory=dict)


def _int(value: Any, name: str) -> int:
    """An integer (or a string of digits) from a record field."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    raise TaskError(f"{name}: expected an integer, got {value!r}")


def _room(scene: Scene, rid: int) -> str:
    return f"{scene.rooms.get(rid, '?')} ({rid})"


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


def _target_ids(items: Any, name: str) -> list[tuple[int, str]]:
    """(target id, field) for a list of ids, digit strings or ``{"id": ...}`` objects."""
    if not isinstance(items, (list, tuple)):
        raise TaskError(f"{name}: expected a list of target ids, got {type(items).__name__}")
    out = []
    for k, item in enumerate(items):
        value = item.get("id") if isinstance(item, Mapping) else item
        out.append((_int(value, f"{name}[{k}]"), f"{name}[{k}]"))
    return out


def _with_alternatives(record: Mapping[str, Any], goal: list[Predicate], scene: Scene) -> list[Predicate]:
    """The goal with acceptable targets from ``goal_targets`` and ``goal_target_options`` (A.2)."""
    found: dict[str, list[tuple[int, str]]] = {p.key: [] for p in goal}
    targets = record.get("goal_targets")
    if targets is not None:
        if not isinstance(targets, list):
            raise TaskError("goal_targets: expected a list of {id, goal_object_class, acceptable_target_ids} objects")
        entries = []
        for i, e in enumerate(targets):
            if not isinstance(e, Mapping):
                raise TaskError(f"goal_targets[{i}]: expected an object with id and acceptable_target_ids")
            if "acceptable_target_ids" in e:
                ids = _target_ids(e["acceptable_target_ids"], f"goal_targets[{i}].acceptable_target_ids")
            else:
                ids = _target_ids(e.get("acceptable_targets", []), f"goal_targets[{i}].acceptable_targets")
            entries.append((_int(e.get("id"), f"goal_targets[{i}].id"), e.get("goal_object_class"), ids))
        for p in goal:
            same = [e for e in entries if e[0] == p.target_id]
            for _, _, ids in [e for e in same if e[1] == p.obj_class] or same:
                found[p.key].extend(ids)
    options = record.get("goal_target_options")
    if options is not None:
        if not isinstance(options, Mapping):
            raise TaskError("goal_target_options: expected a mapping from a goal key (e.g. 'on_cupcake_380') "
                            f"or a target id to a list of acceptable target ids, got {type(options).__name__}")
        for k, v in options.items():
            preds = [p for p in goal if p.key == str(k)] or [p for p in goal if str(p.target_id) == str(k).strip()]
            if not preds:
                allowed = ", ".join([p.key for p in goal] + sorted({str(p.target_id) for p in goal}))
                raise TaskError(f"goal_target_options[{k!r}]: not a goal key or goal target id; allowed: {allowed}")
            ids = _target_ids(v, f"goal_target_options[{k!r}]")
            for p in preds:
                found[p.key].extend(ids)
    out = []
    for p in goal:
        alts: list[int] = []
        for tid, name in found[p.key]:
            problem = target_problem(scene, p.relation, tid)
            if problem:
                raise TaskError(f"{name}: acceptable target for {p.key!r}: {problem}")
            if tid != p.target_id and tid not in alts:
                alts.append(tid)
        out.append(replace(p, alternatives=tuple(alts)) if alts else p)
    return out


def _zones(rc: Mapping[str, Any], scene: Scene) -> dict[int, list[int]]:
    """``room_constraints.agents``: agent i -> its zone (rooms it may enter), agents 0..k-1."""
    agents = rc.get("agents")
    if isinstance(agents, list):
        agents = {str(i): a for i, a in enumerate(agents)}
    if not isinstance(agents, Mapping) or not agents:
        raise TaskError("room_constraints.agents: required when room_constraints.enabled "
                        "(a mapping from agent id to {allowed_room_ids: [...]})")
    zones: dict[int, list[int]] = {}
    for k, cfg in agents.items():
        name = f"room_constraints.agents.{k}"
        agent = _int(k, f"{name} (agent id)")
        raw = cfg.get("allowed_room_ids") if isinstance(cfg, Mapping) else None
        if not isinstance(raw, list) or not raw:
            raise TaskError(f"{name}.allowed_room_ids: expected a non-empty list of room ids")
        rooms = [_int(r, f"{name}.allowed_room_ids[{j}]") for j, r in enumerate(raw)]
        missing = [r for r in rooms if r not in scene.rooms]
        if missing:
            raise TaskError(f"{name}.allowed_room_ids: {missing} are not rooms; "
                            f"allowed: {', '.join(_room(scene, r) for r in sorted(scene.rooms))}")
        zones[agent] = rooms
    if sorted(zones) != list(range(len(zones))):
        raise TaskError(f"room_constraints.agents: agent ids must be 0..{len(zones) - 1}; got {sorted(zones)}")
    return zones


def _chain(raw: Any, scene: Scene, zones: dict[int, list[int]]) -> list[HandoverLink]:
    """``room_constraints.handover_chain`` checked against the scene and the zones (§2, B.3)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise TaskError("room_constraints.handover_chain: expected a list of "
                        "{from_agent, to_agent, door_id, room_pair_ids} objects")
    agents = ", ".join(str(a) for a in sorted(zones))
    links = []
    for j, link in enumerate(raw):
        name = f"room_constraints.handover_chain[{j}]"
        if not isinstance(link, Mapping):
            raise TaskError(f"{name}: expected an object with from_agent, to_agent, door_id, room_pair_ids")
        giver, receiver = (_int(link.get(k), f"{name}.{k}") for k in ("from_agent", "to_agent"))
        for k, a in (("from_agent", giver), ("to_agent", receiver)):
            if a not in zones:
                raise TaskError(f"{name}.{k}: {a} is not an agent of room_constraints.agents; allowed: {agents}")
        if giver == receiver:
            raise TaskError(f"{name}.to_agent: {receiver} is also from_agent; allowed: "
                            f"{', '.join(str(a) for a in sorted(zones) if a != giver)}")
        try:
            door = scene.door(link.get("door_id"))  # type: ignore[arg-type]
        except SceneError as exc:
            raise TaskError(f"{name}.{exc}") from None
        pair = link.get("room_pair_ids")
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise TaskError(f"{name}.room_pair_ids: expected [room id, room id], got {pair!r}")
        a, b = (_int(r, f"{name}.room_pair_ids[{i}]") for i, r in enumerate(pair))
        if {a, b} != set(door.rooms):
            via = "" if door.id == link.get("door_id") else f" (door_id {link.get('door_id')} stands in door {door.id})"
            raise TaskError(f"{name}.room_pair_ids: [{a}, {b}] are not the rooms door {door.id} joins{via}; "
                            f"allowed: {list(door.rooms)} in either order")
        if not (a in zones[giver] and b in zones[receiver]):
            if b in zones[giver] and a in zones[receiver]:
                a, b = b, a  # given receiver side first: reordered (see the module docstring)
            else:
                raise TaskError(f"{name}.room_pair_ids: one room must be in from_agent {giver}'s zone "
                                f"[{', '.join(_room(scene, r) for r in zones[giver])}] and the other in to_agent "
                                f"{receiver}'s zone [{', '.join(_room(scene, r) for r in zones[receiver])}]; "
                                f"got {_room(scene, a)}, {_room(scene, b)}")
        links.append(HandoverLink(giver, receiver, door.id, (a, b)))
    return links


def _build(record: Mapping[str, Any], tid: str) -> Task:
    """The checks of :func:`task_from_record`, in the order a reader meets the fields."""
    scene = scene_from_mecobench(dict(record))
    goal = _with_alternatives(record, parse_goal(_agent_goal(record)), scene)
    rc = record.get("room_constraints") or {}
    if not isinstance(rc, Mapping):
        raise TaskError("room_constraints: expected an object with enabled, agents, handover_chain")
    enabled = bool(rc.get("enabled", False))
    structure = str(record.get("structure") or ("sequential" if enabled else "parallel"))
    if structure not in ("parallel", "sequential"):
        raise TaskError(f"structure: {structure!r} is not allowed; allowed: parallel, sequential")
    if enabled != (structure == "sequential"):
        raise TaskError(f"room_constraints.enabled: {enabled} contradicts structure {structure!r}; "
                        "allowed: true for sequential, false for parallel")
    zones = _zones(rc, scene) if enabled else None
    validate_goal(scene, goal, None if zones is None else {r for z in zones.values() for r in z})
    init_rooms = record.get("init_room_ids")
    if not isinstance(init_rooms, list) or not init_rooms:
        raise TaskError("init_room_ids: expected a non-empty list of room ids")
    for i, r in enumerate(init_rooms):
        if not isinstance(r, (int, str)) or str(r).strip() not in {str(x) for x in scene.rooms}:
            raise TaskError(f"init_room_ids[{i}]: {r} is not a room; rooms: {sorted(scene.rooms)}")
    chain = _chain(rc.get("handover_chain", record.get("handover_chain")), scene, zones) if zones else []
    required = rc.get("required_handover_count", record.get("required_handover_count"))
    required = 0 if required is None else _int(required, "room_constraints.required_handover_count")
    if required < 0:
        raise TaskError(f"room_constraints.required_handover_count: {required} is negative; allowed: >= 0")
    num = record.get("num_agents")
    num = None if num is None else _int(num, "num_agents")
    if num is not None and num < 1:
        raise TaskError(f"num_agents: {num} is not allowed; allowed: an integer >= 1")
    if num is not None and zones is not None and num != len(zones):
        raise TaskError(f"num_agents: {num} disagrees with the {len(zones)} zones of room_constraints.agents; "
                        f"allowed: {len(zones)}")
    return Task(task_id=tid, name=str(record.get("task_name", "")), scene=scene, goal=goal,
                structure=structure, init_room_ids=[int(r) for r in init_rooms], allowed_rooms=zones,
                handover_chain=chain, required_handover_count=required, record=dict(record), num_agents=num)


def task_from_record(record: Mapping[str, Any]) -> Task:
    """Build and validate a Task from one MECoBench-schema record; TaskError names the field."""
    if not isinstance(record, Mapping):
        raise TaskError(f"task record: expected a JSON object, got {type(record).__name__}")
    tid = str(record.get("task_id", "?"))
    try:
        return _build(record, tid)
    except (TaskError, SceneError, GoalError) as exc:
        raise TaskError(f"task {tid}: {exc}") from exc


def load_task_file(path: str | Path) -> TaskFile:
    """Every task of a MECoBench-schema JSON file (a list of records), bad records set aside.

    A record that does not validate lands in ``rejected`` (task id -> message naming the field)
    and the others load. A file that is not JSON, not a list, or has no good task raises TaskError.
    """
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise TaskError(f"task file {p}: {exc}") from exc
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise TaskError(f"task file {p}: expected a JSON list of task records")
    out = TaskFile(tasks=[])
    seen: set[str] = set()
    for i, r in enumerate(data):
        tid = str(r["task_id"]) if isinstance(r, Mapping) and "task_id" in r else f"record[{i}]"
        if tid in seen:
            out.rejected[f"{tid} (record[{i}])"] = f"task {tid}: task_id: duplicate of an earlier record"
            continue
        seen.add(tid)
        if not isinstance(r, Mapping):
            out.rejected[tid] = f"{tid}: expected a JSON object (a task record), got {type(r).__name__}"
            continue
        try:
            out.tasks.append(task_from_record(r))
        except TaskError as exc:
            out.rejected[tid] = str(exc)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:  # malformed beyond the checks
            out.rejected[tid] = f"task {tid}: malformed record ({type(exc).__name__}: {exc})"
    if not out.tasks:
        reasons = "; ".join(out.rejected.values()) or "the file has no records"
        raise TaskError(f"task file {p}: no task loads: {reasons}")
    return out


def load_tasks(path: str | Path) -> list[Task]:
    """The good tasks of a MECoBench-schema file; one warning lists the rejected ones and why."""
    tf = load_task_file(path)
    if tf.rejected:
        warnings.warn(f"task file {path}: {len(tf.rejected)} task(s) rejected: "
                      + " | ".join(f"{tid}: {msg}" for tid, msg in tf.rejected.items()), stacklevel=2)
    return tf.tasks


def dump_tasks(records: list[dict[str, Any]], path: str | Path) -> None:
    """Write records deterministically (same records -> same bytes)."""
    Path(path).write_text(json.dumps(records, indent=1, ensure_ascii=False) + "\n")
