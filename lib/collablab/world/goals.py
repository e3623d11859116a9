"""Goal predicates in MECoBench's key format: ``on_<class>_<target id>: count``.

A task goal maps keys like ``on_cupcake_380`` or ``inside_plate_147`` to the number of
objects of that class that must end ON (or INSIDE) the target node. Each required object
is one subgoal (mecobench.txt §3.2: CR is the fraction of completed subgoals).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:
    from .scene import Scene

RELATIONS = {"on": "ON", "inside": "INSIDE"}


class GoalError(ValueError):
    """A goal that cannot be used; the message names the field."""


@dataclass(frozen=True)
class Predicate:
    relation: str  # "on" | "inside"
    obj_class: str
    target_id: int
    count: int

    @property
    def key(self) -> str:
        return f"{self.relation}_{self.obj_class}_{self.target_id}"


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


def validate_goal(scene: "Scene", goal: list[Predicate]) -> None:
    """Targets exist and are surfaces (on) / containers (inside); enough objects of each class."""
    for p in goal:
        node = scene.nodes.get(p.target_id)
        if node is None:
            raise GoalError(f"task_goal[{p.key!r}]: target {p.target_id} is not a node of the scene")
        need = "SURFACES" if p.relation == "on" else "CONTAINERS"
        if need not in node.get("properties", []):
            kind = "surface" if p.relation == "on" else "container"
            raise GoalError(f"task_goal[{p.key!r}]: target {node['class_name']} ({p.target_id}) "
                            f"is not a {kind} (lacks property {need})")
        have = len(scene.class_ids(p.obj_class))
        if have < p.count:
            classes = sorted({n["class_name"] for n in scene.nodes.values()
                              if "GRABBABLE" in n.get("properties", [])})
            raise GoalError(f"task_goal[{p.key!r}]: class {p.obj_class!r} needs {p.count} instance(s), "
                            f"the scene has {have}; grabbable classes in the scene: {', '.join(classes)}")
