"""Goal predicates in MECoBench's key format: ``on_<class>_<target id>: count``.

A task goal maps keys like ``on_cupcake_380`` or ``inside_plate_147`` to the number of
objects of that class that must end ON (or INSIDE) the target node. Each required object
is one subgoal (mecobench.txt §3.2: CR is the fraction of completed subgoals). A predicate may
accept other targets as well (published records' ``goal_targets[].acceptable_target_ids``); the
key always names the primary target.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Collection, Mapping

if TYPE_CHECKING:
    from .scene import Scene

RELATIONS = {"on": "ON", "inside": "INSIDE"}


class GoalError(ValueError):
    """A goal that cannot be used; the message names the field."""


@dataclass(frozen=True)
class Predicate:
    """``count`` objects of ``obj_class`` ON/INSIDE ``target_id`` or any of ``alternatives``."""

    relation: str  # "on" | "inside"
    obj_class: str
    target_id: int
    count: int
    alternatives: tuple[int, ...] = ()  # other acceptable targets (mecobench.txt appendix A.2)

    @property
    def key(self) -> str:
        return f"{self.relation}_{self.obj_class}_{self.target_id}"

    @property
    def targets(self) -> tuple[int, ...]:
        """Every acceptable target, the primary first."""
        return (self.target_id, *(t for t in self.alternatives if t != self.target_id))


def parse_goal_key(key: str) -> tuple[str, str, int]:
    """Split ``on_cupcake_380`` into (relation, class, target id)."""
    rel, _, rest = key.partition("_")
    cls, _, tid = rest.rpartition("_")
    if rel not in RELATIONS or not cls or not tid.isdigit():
        raise GoalError(
            f"task_goal: key {key!r} is not '<relation>_<class>_<target id>' with relation in {sorted(RELATIONS)}"
        )
    return rel, cls, int(tid)


def parse_goal(goal: Mapping[str, int]) -> list[Predicate]:
    """Parse a goal dict; keys with count 0 are dropped."""
    if not isinstance(goal, Mapping) or not goal:
        raise GoalError("task_goal: expected a non-empty mapping of goal keys to counts")
    preds = []
    for key, count in goal.items():
        rel, cls, tid = parse_goal_key(str(key))
        if not isinstance(count, int) or count < 0:
            raise GoalError(f"task_goal[{key!r}]: count must be a non-negative integer, got {count!r}")
        if count:
            preds.append(Predicate(rel, cls, tid, count))
    if not preds:
        raise GoalError("task_goal: every count is 0, nothing to do")
    return preds


def goal_dict(preds: list[Predicate]) -> dict[str, int]:
    return {p.key: p.count for p in preds}


def target_problem(scene: "Scene", relation: str, target_id: int) -> str | None:
    """Why ``target_id`` cannot take objects by ``relation`` (None when it can)."""
    node = scene.nodes.get(target_id)
    if node is None:
        return f"{target_id} is not a node of the scene"
    need = "SURFACES" if relation == "on" else "CONTAINERS"
    if need not in node.get("properties", []):
        kind = "surface" if relation == "on" else "container"
        return f"{node['class_name']} ({target_id}) is not a {kind} (lacks property {need})"
    return None


def _rooms_text(scene: "Scene", rooms: Collection[int | None]) -> str:
    return " and ".join(sorted("no room" if r is None else f"{scene.rooms[r]} ({r})" for r in set(rooms)))


def validate_goal(scene: "Scene", goal: list[Predicate], zone_rooms: Collection[int] | None = None) -> None:
    """Every target exists and is a surface (on) / container (inside); enough objects of each class.

    ``zone_rooms``: the rooms some agent may enter (a sequential task's zones, mecobench.txt §2);
    None means every room (parallel). Then some target of each predicate must lie in those rooms,
    and so must enough objects of each class (appendix A.2: tasks with insufficient instances are
    discarded).
    """
    for p in goal:
        for t in p.targets:
            problem = target_problem(scene, p.relation, t)
            if problem:
                which = "target" if t == p.target_id else "acceptable target"
                raise GoalError(f"task_goal[{p.key!r}]: {which} {problem}")
    allowed = None if zone_rooms is None else {int(r) for r in zone_rooms}
    if allowed is not None:
        zones = _rooms_text(scene, allowed) or "none"
        for p in goal:
            rooms = [scene.room_of(t) for t in p.targets]
            if not any(r in allowed for r in rooms):
                names = ", ".join(f"{scene.nodes[t]['class_name']} ({t}) in {_rooms_text(scene, [r])}"
                                  for t, r in zip(p.targets, rooms))
                verb = "is" if len(rooms) == 1 else "are"
                raise GoalError(f"task_goal[{p.key!r}]: no target is in a room some agent may enter: {names}, "
                                f"which {verb} in no zone; rooms in zones: {zones}")
    by_class: dict[str, list[Predicate]] = {}
    for p in goal:
        by_class.setdefault(p.obj_class, []).append(p)
    for cls, preds in by_class.items():
        need = sum(p.count for p in preds)
        field = "task_goal[" + ", ".join(repr(p.key) for p in preds) + "]"
        ids = scene.class_ids(cls)
        if len(ids) < need:
            classes = sorted({n["class_name"] for n in scene.nodes.values()
                              if "GRABBABLE" in n.get("properties", [])})
            raise GoalError(f"{field}: class {cls!r} needs {need} instance(s), "
                            f"the scene has {len(ids)}; grabbable classes in the scene: {', '.join(classes)}")
        if allowed is None:
            continue
        rooms = [scene.room_of(o) for o in ids]
        found = sum(r in allowed for r in rooms)
        if found < need:
            away = [r for r in rooms if r not in allowed]
            raise GoalError(f"{field}: needs {need} {cls}(s) in rooms some agent may enter; found {found} "
                            f"(others are in {_rooms_text(scene, away)}, which {'is' if len(set(away)) == 1 else 'are'} "
                            f"in no zone; rooms in zones: {_rooms_text(scene, allowed) or 'none'})")
