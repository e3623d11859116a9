"""A household scene: a VirtualHome graph plus its rooms and door topology.

Scenes come from VirtualHome graph files (``TestScene*_graph.json``), from MECoBench task
files (``init_graph`` + ``department_topology``) or from our own generator. The graph is
kept in VirtualHome's dict format (nodes with id/class_name/category/properties/states,
edges with from_id/relation_type/to_id) so VirtualHome's executor runs on it unchanged.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOM_CLASSES = ("bathroom", "bedroom", "kitchen", "livingroom")
STRUCTURAL_CATEGORIES = frozenset({"Rooms", "Walls", "Floor", "Floors", "Ceiling", "Characters"})
_TOPOLOGY_ITEM = re.compile(r"^\s*(\w+)\s*--\s*door\((\d+)\)\s*--\s*(\w+)\s*$")


class SceneError(ValueError):
    """A scene or task file that cannot be used; the message names the field."""


@dataclass(frozen=True)
class Door:
    """A passage between two rooms (a VirtualHome door or doorjamb node)."""

    id: int
    rooms: tuple[int, int]

    def other(self, room_id: int) -> int:
        a, b = self.rooms
        return b if room_id == a else a


@dataclass
class Scene:
    """A graph with rooms and doors. ``graph`` is never mutated by the world."""

    graph: dict[str, Any]
    doors: list[Door] = field(default_factory=list)
    name: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.graph, dict) or "nodes" not in self.graph or "edges" not in self.graph:
            raise SceneError("graph: expected a dict with 'nodes' and 'edges'")
        self.nodes: dict[int, dict[str, Any]] = {}
        for i, n in enumerate(self.graph["nodes"]):
            for key in ("id", "class_name", "category"):
                if key not in n:
                    raise SceneError(f"graph.nodes[{i}]: missing field {key!r}")
            self.nodes[int(n["id"])] = n
        for i, e in enumerate(self.graph["edges"]):
            for key in ("from_id", "relation_type", "to_id"):
                if key not in e:
                    raise SceneError(f"graph.edges[{i}]: missing field {key!r}")
            for end in ("from_id", "to_id"):
                if int(e[end]) not in self.nodes:
                    raise SceneError(f"graph.edges[{i}].{end}: node {e[end]} does not exist")
        self.rooms: dict[int, str] = {
            nid: n["class_name"] for nid, n in self.nodes.items() if n["category"] == "Rooms"
        }
        if not self.rooms:
            raise SceneError("graph.nodes: the scene has no node of category 'Rooms'")
        for d in self.doors:
            if d.id not in self.nodes:
                raise SceneError(f"doors: door {d.id} is not a node of the graph")
            for r in d.rooms:
                if r not in self.rooms:
                    raise SceneError(f"doors: door {d.id} connects {r}, which is not a room")

    # -- lookups -----------------------------------------------------------------
    def room_id(self, room: str | int) -> int:
        """Resolve a room name (first room of that class) or id."""
        if isinstance(room, int) or (isinstance(room, str) and room.isdigit()):
            rid = int(room)
            if rid in self.rooms:
                return rid
        else:
            for rid, name in sorted(self.rooms.items()):
                if name == room:
                    return rid
        allowed = ", ".join(f"{n} ({i})" for i, n in sorted(self.rooms.items()))
        raise SceneError(f"room: {room!r} is not a room of this scene; allowed: {allowed}")

    def room_names(self) -> list[str]:
        return [self.rooms[r] for r in sorted(self.rooms)]

    def doors_of(self, room_id: int) -> list[Door]:
        return [d for d in self.doors if room_id in d.rooms]

    def door(self, door_id: int) -> Door:
        for d in self.doors:
            if d.id == door_id:
                return d
        allowed = ", ".join(str(d.id) for d in self.doors) or "none"
        raise SceneError(f"door_id: {door_id} is not a door of this scene; allowed: {allowed}")

    def topology_string(self) -> str:
        """MECoBench's ``department_topology`` text, e.g. ``bedroom--door(225)--kitchen``."""
        return ", ".join(
            f"{self.rooms[a]}--door({d.id})--{self.rooms[b]}" for d in self.doors for a, b in [d.rooms]
        )

    def class_ids(self, class_name: str) -> list[int]:
        return sorted(i for i, n in self.nodes.items() if n["class_name"] == class_name)

    def copy_graph(self) -> dict[str, Any]:
        return copy.deepcopy(self.graph)

    def room_of(self, node_id: int) -> int | None:
        """The room a node is INSIDE (following INSIDE edges), in the initial graph."""
        inside: dict[int, list[int]] = {}
        for e in self.graph["edges"]:
            if e["relation_type"] == "INSIDE":
                inside.setdefault(int(e["from_id"]), []).append(int(e["to_id"]))
        seen: set[int] = set()
        frontier = [node_id]
        while frontier:
            nid = frontier.pop()
            if nid in self.rooms:
                return nid
            if nid in seen:
                continue
            seen.add(nid)
            frontier.extend(inside.get(nid, []))
        return None


def parse_topology(text: str, room_ids: dict[str, int]) -> list[Door]:
    """Parse MECoBench's ``department_topology`` (``a--door(12)--b, ...``) into doors."""
    doors: list[Door] = []
    if not text.strip():
        return doors
    for item in text.split(","):
        m = _TOPOLOGY_ITEM.match(item)
        if not m:
            raise SceneError(f"department_topology: cannot parse {item.strip()!r}; expected 'room--door(id)--room'")
        a, did, b = m.group(1), int(m.group(2)), m.group(3)
        for r in (a, b):
            if r not in room_ids:
                raise SceneError(
                    f"department_topology: room {r!r} is not in the scene; allowed: {', '.join(sorted(room_ids))}"
                )
        doors.append(Door(did, (room_ids[a], room_ids[b])))
    return doors


def doors_from_between_edges(graph: dict[str, Any]) -> list[Door]:
    """Doors from VirtualHome ``BETWEEN`` edges (door/doorjamb nodes joining two rooms)."""
    rooms = {int(n["id"]) for n in graph["nodes"] if n["category"] == "Rooms"}
    between: dict[int, list[int]] = {}
    for e in graph["edges"]:
        if e["relation_type"] == "BETWEEN" and int(e["to_id"]) in rooms:
            between.setdefault(int(e["from_id"]), []).append(int(e["to_id"]))
    return [Door(did, (rs[0], rs[1])) for did, rs in sorted(between.items()) if len(set(rs)) == 2]


def strip_characters(graph: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``graph`` without character nodes and their edges."""
    chars = {int(n["id"]) for n in graph["nodes"] if n["class_name"] == "character"}
    return {
        "nodes": [copy.deepcopy(n) for n in graph["nodes"] if int(n["id"]) not in chars],
        "edges": [
            dict(e) for e in graph["edges"] if int(e["from_id"]) not in chars and int(e["to_id"]) not in chars
        ],
    }


def load_virtualhome_graph(path: str | Path) -> Scene:
    """Load a VirtualHome scene graph file (e.g. ``TestScene1_graph.json``)."""
    p = Path(path)
    try:
        graph = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise SceneError(f"scene file {p}: {exc}") from exc
    graph = strip_characters(graph)
    return Scene(graph=graph, doors=doors_from_between_edges(graph), name=p.stem)


def scene_from_mecobench(task: dict[str, Any]) -> Scene:
    """The scene of a MECoBench task record (``init_graph`` + ``department_topology``)."""
    if "init_graph" not in task:
        raise SceneError("init_graph: missing from the task record")
    graph = strip_characters(task["init_graph"])
    scene = Scene(graph=graph, name=f"task{task.get('task_id', '?')}")
    names: dict[str, int] = {}
    for rid, name in sorted(scene.rooms.items()):
        names.setdefault(name, rid)
    doors = parse_topology(str(task.get("department_topology", "")), names)
    if not doors:
        doors = doors_from_between_edges(graph)
    return Scene(graph=graph, doors=doors, name=scene.name)
