"""The sequential shape of a parallel task: one receiver confined to the target's room, one giver
in the rooms that hold the goal objects, one handover door between them (mecobench.txt §2 "Under
sequential settings, the apartment is partitioned into disjoint room zones based on the initial
locations of task objects and their target goal locations, and different zones are assigned to
different agents"; appendix B.3 ``walk_to_door``, ``handover``, ``receive``).

:func:`sequential_of` turns any parallel record (the published file's, or the generator's) into a
sequential one of this shape. The paper does not say how tight the zones are; this is the tight
reading (ours), the shape of the published sequential tasks we measured:

- the **receiver** (agent 1) may enter only the room of the goal target;
- the **handover door** is a door of that room; for each of its doors the giver's side is the
  rooms reachable from the door's other room without entering the target room, and the door kept
  is the one that makes the most goal units cross it (ties: the lower door id);
- the **giver** (agent 0) may enter the rooms on the shortest door paths from the handover door to
  the rooms of the goal objects it must bring (for each class the instances nearest the door,
  as many as the goal counts beyond those already in the target room), nothing else; rooms in
  neither zone are closed to both;
- every goal unit not already in the target room must cross the door by a handover
  (``required_handover_count``); a record whose goal objects all lie in the target room, or
  outside every side, has no such shape (``ValueError`` naming the task).

The giver starts in the door's room on its side, the receiver in the target room.
"""

from __future__ import annotations

import copy
from collections import deque
from typing import Any

from ...world.scene import Scene
from .tasks import task_from_record

__all__ = ["sequential_of"]


def _side(scene: Scene, start: int, blocked: int) -> dict[int, int | None]:
    """Rooms reachable from ``start`` without entering ``blocked``, each with its BFS parent."""
    parent: dict[int, int | None] = {start: None}
    queue = deque([start])
    while queue:
        r = queue.popleft()
        for d in scene.doors_of(r):
            o = d.other(r)
            if o != blocked and o not in parent:
                parent[o] = r
                queue.append(o)
    return parent


def _depth(parent: dict[int, int | None], room: int) -> int:
    k, node = 0, parent[room]
    while node is not None:
        k, node = k + 1, parent[node]
    return k


def _path_rooms(parent: dict[int, int | None], rooms: set[int]) -> set[int]:
    out: set[int] = set()
    for r in rooms:
        node: int | None = r
        while node is not None and node not in out:
            out.add(node)
            node = parent[node]
    return out


def sequential_of(record: dict[str, Any]) -> dict[str, Any]:
    """A copy of the parallel ``record`` made sequential in the shape of the module docstring:
    ``structure`` sequential, ``task_id`` ``<id>-seq``, ``room_constraints`` with both zones, the
    handover chain at the chosen door and the required handover count, and ``init_room_ids``."""
    task = task_from_record(record)
    scene = task.scene
    targets = {p.target_id for p in task.goal}
    troom = {scene.room_of(t) for t in targets}
    if len(troom) != 1 or None in troom:
        raise ValueError(f"task {task.task_id}: goal targets must lie in one room for this shape; got rooms {troom}")
    target_room = troom.pop()
    where: dict[str, list[int]] = {}
    for p in task.goal:
        where[p.obj_class] = [r for i in scene.class_ids(p.obj_class) if (r := scene.room_of(i)) is not None]
    best = None
    for door in sorted(scene.doors_of(target_room), key=lambda d: d.id):
        start = door.other(target_room)
        parent = _side(scene, start, target_room)
        crossing, rooms = 0, set()
        for p in task.goal:
            near = sum(r == target_room for r in where[p.obj_class])
            far = sorted((r for r in where[p.obj_class] if r in parent), key=lambda r: _depth(parent, r))
            need = max(0, p.count - near)
            if need > len(far):
                crossing = -1
                break
            crossing += need
            rooms |= set(far[:need]) if need else set()
        if crossing > 0 and (best is None or crossing > best[0]):
            best = (crossing, door, start, _path_rooms(parent, rooms | {start}))
    if best is None:
        raise ValueError(f"task {task.task_id}: no door of the target room {scene.rooms[target_room]} has goal objects "
                         f"to hand over behind it; this task has no sequential shape")
    required, door, start, giver = best
    out = copy.deepcopy(record)
    out["task_id"] = f"{record['task_id']}-seq"
    out["structure"] = "sequential"
    out["room_constraints"] = {
        "enabled": True,
        "agents": {"0": {"allowed_room_ids": sorted(giver)}, "1": {"allowed_room_ids": [target_room]}},
        "handover_chain": [{"from_agent": 0, "to_agent": 1, "door_id": door.id,
                            "room_pair_ids": [start, target_room]}],
        "required_handover_count": required,
    }
    out["init_room_ids"] = [start, target_room]
    return out
