"""A household scene: a VirtualHome graph plus its rooms and door topology.

Scenes come from VirtualHome graph files (``TestScene*_graph.json``), from MECoBench task
files (``init_graph`` + ``department_topology``) or from our own generator. The graph is
kept in VirtualHome's dict format (nodes with id/class_name/category/properties/states,
edges with from_id/relation_type/to_id) so VirtualHome's executor runs on it unchanged.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

ROOM_CLASSES = ("bathroom", "bedroom", "kitchen", "livingroom")
STRUCTURAL_CATEGORIES = frozenset({"Rooms", "Walls", "Floor", "Floors", "Ceiling", "Characters"})
_TOPOLOGY_ITEM = re.compile(r"^\s*(\w+)\s*--\s*door\((\d+)\)\s*--\s*(\w+)\s*$")
DOOR_CLASSES = ("door", "doorjamb")
#: Largest horizontal (x/z) distance in metres between the bounding-box centres of a door-jamb
#: node and the topology door it stands in. Measured: a jamb and its door are 0.000-0.020 m apart
#: (parallel_5.json: at most 0.0198 m; VirtualHome TestScene1-7: 0.000 m), while a jamb of another
#: doorway is at least 3.94 m from any topology door (TestScene5: 3.947 m; parallel_5.json: 5.58 m).
ALIAS_RADIUS = 1.5


def _centre(node: Mapping[str, Any]) -> tuple[float, float] | None:
    """The x/z centre of a node's bounding box, or None when it has none."""
    bb = node.get("bounding_box")
    if not isinstance(bb, Mapping) or not isinstance(bb.get("center"), (list, tuple)) or len(bb["center"]) < 3:
        return None
    return float(bb["center"][0]), float(bb["center"][2])


def _box_distance(point: tuple[float, float], node: Mapping[str, Any]) -> float:
    """Horizontal distance from a point to a node's bounding box (0 inside; inf without a box)."""
    c = _centre(node)
    size = node["bounding_box"].get("size") if c is not None else None
    if c is None or not isinstance(size, (list, tuple)) or len(size) < 3:
        return math.inf
    dx = max(abs(point[0] - c[0]) - float(size[0]) / 2, 0.0)
    dz = max(abs(point[1] - c[1]) - float(size[2]) / 2, 0.0)
    return math.hypot(dx, dz)


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
    """A graph with rooms and doors. ``graph`` is never mutated by the world.

    ``doors`` is the topology (MECoBench's ``department_topology``, appendix B.3's
    ``walk_to_door``). ``aliases`` maps other door nodes to the topology door they stand in:
    published sequential files name door-jamb nodes in ``handover_chain[].door_id``. When not
    given, every node of category ``Doors`` or class door/doorjamb that is not a topology door is
    an alias of the nearest topology door whose centre is within :data:`ALIAS_RADIUS` (x/z),
    provided that it joins the same two rooms when it has ``BETWEEN`` edges and that a room it is
    directly ``INSIDE`` is one of the door's rooms. On the real graphs a jamb stands 0-2 cm from
    its door and at least 3.94 m from any other (measured; see :data:`ALIAS_RADIUS`).
    """

    graph: dict[str, Any]
    doors: list[Door] = field(default_factory=list)
    name: str = ""
    aliases: dict[int, int] | None = None

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
        if self.aliases is None:
            self.aliases = self._find_aliases()
        else:
            self.aliases = {int(a): int(d) for a, d in self.aliases.items()}
            ids = {d.id for d in self.doors}
            for a, d in self.aliases.items():
                if a not in self.nodes:
                    raise SceneError(f"aliases: {a} is not a node of the graph")
                if d not in ids:
                    raise SceneError(f"aliases[{a}]: {d} is not a topology door; allowed: {sorted(ids)}")
        self._door_nodes = frozenset(d.id for d in self.doors) | frozenset(self.aliases)

    def _find_aliases(self) -> dict[int, int]:
        """Door/doorjamb nodes standing in a topology door (see the class docstring)."""
        top = [(d, c) for d in self.doors if (c := _centre(self.nodes[d.id])) is not None]
        if not top:
            return {}
        ids = {d.id for d in self.doors}
        links: dict[str, dict[int, set[int]]] = {"BETWEEN": {}, "INSIDE": {}}
        for e in self.graph["edges"]:
            if e["relation_type"] in links and int(e["to_id"]) in self.rooms:
                links[e["relation_type"]].setdefault(int(e["from_id"]), set()).add(int(e["to_id"]))
        out: dict[int, int] = {}
        for nid, n in sorted(self.nodes.items()):
            if nid in ids or not (n["category"] == "Doors" or n["class_name"] in DOOR_CLASSES):
                continue
            c = _centre(n)
            if c is None:
                continue
            dist, door = min(((math.hypot(c[0] - dc[0], c[1] - dc[1]), d) for d, dc in top),
                             key=lambda t: (t[0], t[1].id))
            between, inside = links["BETWEEN"].get(nid), links["INSIDE"].get(nid, set())
            if dist > ALIAS_RADIUS or (between and between != set(door.rooms)) or not inside <= set(door.rooms):
                continue
            out[nid] = door.id
        return out

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

    def is_door_node(self, node_id: int) -> bool:
        """A topology door or a door node standing in one (an alias)."""
        return node_id in self._door_nodes

    def canonical_door_id(self, door_id: int) -> int:
        """The topology door ``door_id`` names: itself, or the door an alias stands in."""
        did: int | None
        try:
            did = int(door_id)
        except (TypeError, ValueError):
            did = None
        if did is not None and any(d.id == did for d in self.doors):
            return did
        if self.aliases and did in self.aliases:
            return self.aliases[did]
        allowed = ", ".join(str(d.id) for d in self.doors) or "none"
        if self.aliases:
            allowed += "; aliases: " + ", ".join(f"{a}->{d}" for a, d in sorted(self.aliases.items()))
        raise SceneError(f"door_id: {door_id} is not a door of this scene; allowed: {allowed}")

    def door(self, door_id: int) -> Door:
        """The topology door with this id or alias (see :meth:`canonical_door_id`)."""
        did = self.canonical_door_id(door_id)
        return next(d for d in self.doors if d.id == did)

    def topology_string(self) -> str:
        """MECoBench's ``department_topology`` text, e.g. ``bedroom--door(225)--kitchen``."""
        return ", ".join(
            f"{self.rooms[a]}--door({d.id})--{self.rooms[b]}" for d in self.doors for a, b in [d.rooms]
        )

    def class_ids(self, class_name: str) -> list[int]:
        return sorted(i for i, n in self.nodes.items() if n["class_name"] == class_name)

    def copy_graph(self) -> dict[str, Any]:
        """A deep copy of the graph (JSON data: dicts, lists and scalars), several times faster than
        ``copy.deepcopy``, which a world pays once per episode."""
        return _copy_json(self.graph)

    @functools.cached_property
    def _parents(self) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
        """Parents by INSIDE edges, and by INSIDE and ON edges, of the initial graph (built once:
        ``graph`` is never mutated)."""
        maps: tuple[dict[int, list[int]], dict[int, list[int]]] = ({}, {})
        for e in self.graph["edges"]:
            rel = e["relation_type"]
            for relations, parents in zip((("INSIDE",), ("INSIDE", "ON")), maps):
                if rel in relations:
                    parents.setdefault(int(e["from_id"]), []).append(int(e["to_id"]))
        return maps

    def room_of(self, node_id: int) -> int | None:
        """The room a node is in, in the initial graph: following INSIDE edges, else INSIDE and ON
        edges (an object lying ON a floor node or a surface without an INSIDE edge of its own)."""
        for parents in self._parents:
            seen: set[int] = set()
            frontier = [node_id]
            while frontier:
                nid = frontier.pop()
                if nid in self.rooms:
                    return nid
                if nid in seen:
                    continue
                seen.add(nid)
                frontier.extend(parents.get(nid, []))
        return None


def _copy_json(x: Any) -> Any:
    """A deep copy of JSON-like data; other values (numbers, strings, tuples of them) are shared."""
    if isinstance(x, dict):
        return {k: _copy_json(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_copy_json(v) for v in x]
    return x


def parse_topology(text: str, room_ids: dict[str, int], scene: Scene | None = None) -> list[Door]:
    """Parse MECoBench's ``department_topology`` (``a--door(12)--b, ...``) into doors.

    Rooms are named by class. With ``scene``, a name several rooms share (TestScene3 has two
    bedrooms) resolves to the room of that name whose bounding box is nearest the door node.
    """
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
        ra, rb = room_ids[a], room_ids[b]
        node = scene.nodes.get(did) if scene is not None else None
        where = _centre(node) if node is not None else None
        if scene is not None and where is not None:
            def nearest(name: str, other: int | None) -> int:
                rooms = [r for r, n in sorted(scene.rooms.items()) if n == name and r != other]
                return min(rooms, key=lambda r: _box_distance(where, scene.nodes[r])) if rooms else room_ids[name]
            ra = nearest(a, None)
            rb = nearest(b, ra)
        doors.append(Door(did, (ra, rb)))
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
    """``graph`` without character nodes and their edges (new lists; the node dicts are shared,
    never mutated: the world runs on :meth:`Scene.copy_graph`)."""
    chars = {int(n["id"]) for n in graph["nodes"] if n["class_name"] == "character"}
    return {
        "nodes": [n for n in graph["nodes"] if int(n["id"]) not in chars],
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
    doors = parse_topology(str(task.get("department_topology", "")), names, scene)
    if not doors:
        doors = doors_from_between_edges(graph)
    return Scene(graph=graph, doors=doors, name=scene.name)
