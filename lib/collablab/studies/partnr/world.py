"""The shared household seen as PARTNR's world graph (observe_share_predict.txt §3.1-3.2).

One ground truth (:class:`World`) and one belief graph per agent (:class:`Beliefs`) over a
shared :class:`collablab.world.Scene` (a generated apartment or a VirtualHome graph):

- rooms are named PARTNR's way (``kitchen_0``, ``living_room_0``); furniture is every node that
  is a surface or a container (``table_0``, ``counter_1``: :data:`FURNITURE_CLASSES` maps
  VirtualHome classes to PARTNR's names), articulated when it opens, with a faucet when it is a
  sink or a bathtub; every room has a floor (``floor_<room>``, a surface as large as the room:
  PARTNR's ``is_on_floor``); objects are the grabbable nodes of the scene plus those a task adds;
- an object lies ``on`` or ``within`` one piece of furniture, on the floor of a room, or is held
  by one agent; it has PARTNR's three object states (clean, filled, powered on; defaults of the
  evaluation document: dirty, empty, off) where its class affords them (:func:`affordances`);
- positions are horizontal (x, z) points of the scene's boxes; an object put on furniture takes
  a free spot on its top, next to a reference object when asked (:meth:`World.spot_on`).

Views: PARTNR updates an agent's graph from its camera's field of view every simulation step.
Ours is the world issue's view rule (:mod:`collablab.world.views`: large enough in the cameras
from where the agent stands, same room, not inside closed furniture), applied where an agent
stops (each waypoint of a skill); that is our version of the field of view. Beliefs change only
by what the agent sees and by its own actions (Decoupled Partial Observability, §3.2); the
layout (rooms, furniture, their open state) is known from the start and objects must be found.
Each record is stamped with the step it was observed. A record whose ``place`` is None means
"not where it was seen last" (the agent looked there and it was gone, or saw it carried).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping

from ...world import Scene
from ...world.views import ViewRule, box_of, horizontal_distance

Point = tuple[float, float]
STATE_NAMES = ("is_clean", "is_filled", "is_powered_on")
ROOM_NAMES = {"livingroom": "living_room", "diningroom": "dining_room", "bedroom": "bedroom", "kitchen": "kitchen",
              "bathroom": "bathroom", "homeoffice": "office", "hallway": "hallway"}
#: VirtualHome furniture class -> PARTNR furniture class (others keep their own name).
FURNITURE_CLASSES = {
    "kitchentable": "table", "coffeetable": "table", "desk": "table", "diningtable": "table", "sidetable": "table",
    "kitchencounter": "counter", "bathroomcounter": "counter", "sofa": "couch", "closet": "wardrobe",
    "nightstand": "chest_of_drawers", "bookshelf": "shelves", "kitchencabinet": "cabinet",
    "bathroomcabinet": "cabinet", "tvstand": "tv_stand", "washingmachine": "washer_dryer", "towelrack": "towel_rack",
}
#: Furniture classes that are never receptacles here (VirtualHome marks them SURFACES).
NOT_FURNITURE = {"clothespile", "clothespants", "clothesshirt", "hanger", "floor", "rug", "mousemat", "stovefan",
                 "oventray", "powersocket", "lightswitch", "faucet"}
FAUCET_FURNITURE = {"sink", "bathtub"}
#: Objects that must be near a faucet to be cleaned (PARTNR: "cleaned under a faucet if dirty").
FAUCET_CLEANED = ("plate", "bowl", "cup", "mug", "glass", "pan", "pot", "kettle", "jug", "spoon", "fork", "knife",
                  "dish", "toy_fruits", "fruit", "bottle", "vase", "pitcher")
FILLABLE = ("cup", "mug", "glass", "bowl", "kettle", "jug", "vase", "bottle", "pitcher", "pot", "watering_can")
POWERED = ("lamp", "laptop", "kettle", "phone", "charger", "toaster", "coffeemaker", "radio", "tv", "candle",
           "speaker", "fan", "tablet", "cellphone", "computer", "console")
#: The view rule of the world issue with 512 px images: PARTNR's agents see through larger images
#: than MECoBench's 256 px views (we do not have its camera config; the size is our choice), so a
#: 12 cm cup is seen from 1.5 m instead of 0.8 m. Everything else is MECoBench's rule.
PARTNR_VIEW = ViewRule(image_px=512)
#: The class of every room's floor receptacle.
FLOOR = "floor"


def affordances(cls: str, properties: Iterable[str] = ()) -> dict[str, str]:
    """PARTNR's object-state affordances of a class: ``{state: how}`` where ``how`` is
    ``"faucet"`` / ``"brush"`` for cleaning, ``"faucet"`` for filling, ``"switch"`` for power.

    Decided by name (PARTNR reads them from its object metadata, which we do not have):
    every object and every piece of furniture can be cleaned (under a faucet when its class
    contains one of :data:`FAUCET_CLEANED`, else with a brush); fillable when the class
    contains one of :data:`FILLABLE` or it is a VirtualHome RECIPIENT; powered when the class
    contains one of :data:`POWERED` or it has HAS_SWITCH."""
    props = set(properties)
    out = {"is_clean": "faucet" if any(k in cls for k in FAUCET_CLEANED) else "brush"}
    if any(k in cls for k in FILLABLE) or "RECIPIENT" in props:
        out["is_filled"] = "faucet"
    if any(k in cls for k in POWERED) or "HAS_SWITCH" in props:
        out["is_powered_on"] = "switch"
    return out


@dataclass
class Furniture:
    """A receptacle of the layout (known to both agents from the start)."""

    handle: str
    cls: str
    room: str
    centre: Point
    half: tuple[float, float]  # horizontal half sizes (x, z)
    surface: bool
    container: bool
    articulated: bool
    is_open: bool
    faucet: bool
    states: dict[str, bool] = field(default_factory=dict)
    node_id: int | None = None

    @property
    def half_extent(self) -> float:
        return (self.half[0] + self.half[1]) / 2


@dataclass
class Obj:
    """A movable object: where it is (``place``: (relation, furniture) or None), its room, who holds it."""

    handle: str
    cls: str
    pos: Point
    room: str
    place: tuple[str, str] | None
    holder: int | None = None
    size: float = 0.2  # largest side in metres (for the view rule)
    half: float = 0.1  # mean horizontal half size
    states: dict[str, bool] = field(default_factory=dict)
    afford: dict[str, str] = field(default_factory=dict)
    node_id: int | None = None


@dataclass(frozen=True)
class Record:
    """What one agent believes of an object, stamped with the step it was observed."""

    cls: str
    room: str | None
    place: tuple[str, str] | None  # None: location unknown (gone from where it was, or being carried)
    held_by_me: bool
    states: tuple[tuple[str, bool], ...]
    step: int
    pos: Point | None = None

    def state(self, name: str) -> bool | None:
        return dict(self.states).get(name)


@dataclass
class Beliefs:
    """One agent's world graph: object records (furniture layout is public)."""

    agent: int
    objects: dict[str, Record] = field(default_factory=dict)
    furniture_open: dict[str, tuple[bool, int]] = field(default_factory=dict)
    furniture_states: dict[str, tuple[tuple[tuple[str, bool], ...], int]] = field(default_factory=dict)
    explored: set[str] = field(default_factory=set)

    def merge(self, other: "Beliefs") -> int:
        """Knowledge Exchange (§3.2): take every newer object or furniture record of ``other``
        (newest wins; ties keep ours); no sender is recorded. ``held_by_me`` is relative to the
        receiver: a record of what the other holds arrives as "location unknown". Returns the
        number of records taken."""
        taken = 0
        for h, r in other.objects.items():
            mine = self.objects.get(h)
            if mine is None or r.step > mine.step:
                if r.held_by_me:
                    r = replace(r, place=None, held_by_me=False)
                elif mine is not None and mine.held_by_me:
                    continue  # what I hold I know better than any record
                self.objects[h] = r
                taken += 1
        for f, v in other.furniture_open.items():
            if f not in self.furniture_open or v[1] > self.furniture_open[f][1]:
                self.furniture_open[f] = v
                taken += 1
        for f, v in other.furniture_states.items():
            if f not in self.furniture_states or v[1] > self.furniture_states[f][1]:
                self.furniture_states[f] = v
                taken += 1
        return taken


def room_handle(cls: str, k: int) -> str:
    return f"{ROOM_NAMES.get(cls, cls)}_{k}"


class World:
    """Ground truth over a :class:`Scene`: rooms, furniture, objects and two agents' bodies.

    ``objects`` may add task objects: ``[{"handle", "class", "furniture", "relation", "size"?}]``
    (``furniture`` a furniture handle, ``relation`` "on" | "within"); ``states`` overrides object
    or furniture states in PARTNR's episode shape ``{"is_clean": {handle: bool}}``.
    """

    def __init__(self, scene: Scene, objects: Iterable[Mapping[str, Any]] = (), states: Mapping[str, Mapping[str, bool]] | None = None,
                 include_scene_objects: bool = True, view: ViewRule = PARTNR_VIEW) -> None:
        self.scene, self.view = scene, view
        self.rooms: dict[str, int] = {}
        self.room_box: dict[str, tuple[Point, tuple[float, float]]] = {}
        counts: dict[str, int] = {}
        room_of_id: dict[int, str] = {}
        for rid, cls in sorted(scene.rooms.items()):
            h = room_handle(cls, counts.get(ROOM_NAMES.get(cls, cls), 0))
            counts[ROOM_NAMES.get(cls, cls)] = counts.get(ROOM_NAMES.get(cls, cls), 0) + 1
            box = box_of(scene.nodes[rid])
            if box is None:
                raise ValueError(f"scene {scene.name or '?'}: room {rid} ({cls}) has no bounding_box (positions and "
                             "views need real boxes; VirtualHome's TrimmedTestScene graphs have none: use "
                             "TestScene*_graph.json)")
            (x, _, z), (sx, _, sz) = box
            self.rooms[h], room_of_id[rid] = rid, h
            self.room_box[h] = ((x, z), (sx / 2, sz / 2))
        self.doors: list[tuple[Point, str, str]] = []
        for d in scene.doors:
            box = box_of(scene.nodes[d.id])
            if box is not None:
                self.doors.append(((box[0][0], box[0][2]), room_of_id[d.rooms[0]], room_of_id[d.rooms[1]]))
        self.furniture: dict[str, Furniture] = {}
        by_id: dict[int, str] = {}
        fcount: dict[str, int] = {}
        for nid, n in sorted(scene.nodes.items()):
            props = set(n.get("properties", []))
            if n["category"] not in ("Furniture", "Appliances") or n["class_name"] in NOT_FURNITURE:
                continue
            if not ({"SURFACES", "CONTAINERS"} & props or n["class_name"] in FAUCET_FURNITURE) or "GRABBABLE" in props:
                continue
            box, room = box_of(n), scene.room_of(nid)
            if box is None or room is None or room not in room_of_id:
                continue
            cls = FURNITURE_CLASSES.get(n["class_name"], n["class_name"])
            h = f"{cls}_{fcount.get(cls, 0)}"
            fcount[cls] = fcount.get(cls, 0) + 1
            st = {s.upper() for s in n.get("states", [])}
            self.furniture[h] = Furniture(
                h, cls, room_of_id[room], (box[0][0], box[0][2]), (box[1][0] / 2, box[1][2] / 2),
                surface="SURFACES" in props or cls in FAUCET_FURNITURE, container="CONTAINERS" in props,
                articulated="CAN_OPEN" in props, is_open="CAN_OPEN" not in props or "OPEN" in st,
                faucet=n["class_name"] in FAUCET_FURNITURE, states={"is_clean": "CLEAN" in st}, node_id=nid)
            by_id[nid] = h
        for h, (c, half) in sorted(self.room_box.items()):
            self.furniture[f"floor_{h}"] = Furniture(f"floor_{h}", "floor", h, c, half, surface=True, container=False,
                                                     articulated=False, is_open=True, faucet=False)
        self.objects: dict[str, Obj] = {}
        ocount: dict[str, int] = {}
        if include_scene_objects:
            for nid, n in sorted(scene.nodes.items()):
                if "GRABBABLE" not in n.get("properties", []):
                    continue
                box = box_of(n)
                place = self._scene_place(nid, by_id)
                if box is None or place is None:
                    continue
                cls = n["class_name"]
                h = f"{cls}_{ocount.get(cls, 0)}"
                ocount[cls] = ocount.get(cls, 0) + 1
                st = {s.upper() for s in n.get("states", [])}
                af = affordances(cls, n.get("properties", []))
                ostates = {"is_clean": "CLEAN" in st}
                if "is_powered_on" in af:
                    ostates["is_powered_on"] = "ON" in st
                self.objects[h] = Obj(h, cls, (box[0][0], box[0][2]), self.furniture[place[1]].room, place,
                                      size=max(box[1]), half=(box[1][0] + box[1][2]) / 4, states=ostates,
                                      afford=af, node_id=nid)
        for i, spec in enumerate(objects):
            self.add_object(spec, f"objects[{i}]")
        self.set_states(states or {})
        self.agent_pos: list[Point] = []

    def set_states(self, states: Mapping[str, Mapping[str, bool]]) -> None:
        """Object or furniture states in PARTNR's episode shape ``{"is_clean": {handle: bool}}``."""
        for name, per in states.items():
            if name not in STATE_NAMES:
                raise ValueError(f"object_states: {name!r} is not a state; allowed: {', '.join(STATE_NAMES)}")
            for h, v in per.items():
                target = self.objects.get(h) or self.furniture.get(h)
                if target is None:
                    raise ValueError(f"object_states.{name}: {h!r} is not an object or furniture of the world")
                target.states[name] = bool(v)

    def _scene_place(self, nid: int, by_id: Mapping[int, str]) -> tuple[str, str] | None:
        for e in self.scene.graph["edges"]:
            if int(e["from_id"]) == nid and int(e["to_id"]) in by_id and e["relation_type"] in ("ON", "INSIDE"):
                return ("on" if e["relation_type"] == "ON" else "within", by_id[int(e["to_id"])])
        return None

    def add_object(self, spec: Mapping[str, Any], where: str = "object") -> Obj:
        """Add a task object on or within a piece of furniture (see the class docstring)."""
        for key in ("handle", "class", "furniture", "relation"):
            if key not in spec:
                raise ValueError(f"{where}: missing field {key!r}")
        h, cls, f, rel = str(spec["handle"]), str(spec["class"]), str(spec["furniture"]), str(spec["relation"])
        if h in self.objects or h in self.furniture:
            raise ValueError(f"{where}.handle: {h!r} already names an entity of the world")
        if f not in self.furniture:
            raise ValueError(f"{where}.furniture: {f!r} is not furniture of the world; allowed: {', '.join(sorted(self.furniture))}")
        if rel not in ("on", "within"):
            raise ValueError(f"{where}.relation: {rel!r}; allowed: on, within")
        size = float(spec.get("size", 0.25))
        o = Obj(h, cls, self.furniture[f].centre, self.furniture[f].room, (rel, f), size=size, half=size / 2,
                afford=affordances(cls), states={"is_clean": bool(spec.get("is_clean", False))})
        self.objects[h] = o
        o.pos = self.spot_on(f, exclude=h)
        return o

    # -- geometry ----------------------------------------------------------------------------------
    def room_at(self, p: Point) -> str:
        """The room whose box contains ``p`` (nearest box when none does)."""
        best, bd = "", math.inf
        for h, ((cx, cz), (hx, hz)) in self.room_box.items():
            d = math.hypot(max(abs(p[0] - cx) - hx, 0.0), max(abs(p[1] - cz) - hz, 0.0))
            if d < bd:
                best, bd = h, d
        return best

    def path(self, a: Point, b: Point) -> list[Point]:
        """Waypoints from ``a`` to ``b`` through door centres (shortest over the door graph)."""
        ra, rb = self.room_at(a), self.room_at(b)
        if ra == rb:
            return [b]
        nodes = [a] + [d[0] for d in self.doors] + [b]
        rooms = [{ra}] + [{d[1], d[2]} for d in self.doors] + [{rb}]
        dist = [math.inf] * len(nodes)
        prev = [-1] * len(nodes)
        dist[0] = 0.0
        todo = set(range(len(nodes)))
        while todo:
            u = min(todo, key=lambda i: dist[i])
            todo.discard(u)
            if u == len(nodes) - 1 or dist[u] == math.inf:
                break
            for v in todo:
                if rooms[u] & rooms[v]:
                    nd = dist[u] + horizontal_distance(nodes[u], nodes[v])
                    if nd < dist[v]:
                        dist[v], prev[v] = nd, u
        if dist[-1] == math.inf:
            return [b]  # disconnected rooms: walk straight (a scene without doors)
        out, i = [], len(nodes) - 1
        while i > 0:
            out.append(nodes[i])
            i = prev[i]
        return out[::-1]

    def stand_point(self, handle: str, frm: Point | None = None) -> Point:
        """Where an agent stands to reach ``handle``: a room's centre, or half a metre off the
        edge of a furniture's (or object's) box, on the side facing its room's centre."""
        if handle in self.room_box:
            return self.room_box[handle][0]
        if handle in self.furniture and self.furniture[handle].cls == FLOOR:
            return self.room_box[self.furniture[handle].room][0]
        if handle in self.furniture:
            f = self.furniture[handle]
            c, half = f.centre, f.half_extent
        else:
            o = self.objects[handle]
            c, half = o.pos, o.half
        rc = self.room_box[self.room_of(handle)][0]
        d = horizontal_distance(c, rc)
        if d < 1e-6:
            return (c[0] + half + 0.5, c[1])
        k = min(1.0, (half + 0.5) / d)
        return (c[0] + (rc[0] - c[0]) * k, c[1] + (rc[1] - c[1]) * k)

    def approach(self, point: Point, room: str | None = None) -> Point:
        """Where an agent stands to reach something at ``point``: 0.6 m from it towards the
        centre of its room (``room``, or the room that contains ``point``)."""
        rc = self.room_box[room or self.room_at(point)][0]
        d = horizontal_distance(point, rc)
        if d < 0.6:
            return rc
        k = 0.6 / d
        return (point[0] + (rc[0] - point[0]) * k, point[1] + (rc[1] - point[1]) * k)

    def spot_on(self, furniture: str, near: str | None = None, exclude: str | None = None) -> Point:
        """A free spot on a furniture's top: next to ``near`` (0.3 m from its centre) when given,
        else the candidate farthest from the objects already there (a 5x5 grid of the footprint)."""
        f = self.furniture[furniture]
        others = [o.pos for o in self.objects.values() if o.place is not None and o.place[1] == furniture
                  and o.handle not in (exclude, near)]
        if near is not None:
            c = self.objects[near].pos
            cands = [(c[0] + 0.3 * math.cos(a), c[1] + 0.3 * math.sin(a)) for a in (0, math.pi / 2, math.pi, 3 * math.pi / 2)]
        else:
            gx = [f.centre[0] + f.half[0] * (i / 2 - 1) * 0.8 for i in range(5)]
            gz = [f.centre[1] + f.half[1] * (j / 2 - 1) * 0.8 for j in range(5)]
            cands = [(x, z) for x in gx for z in gz]
        return max(cands, key=lambda p: (min((horizontal_distance(p, q) for q in others), default=9.0),
                                         -horizontal_distance(p, f.centre)))

    # -- queries (also the evaluator's EvalState) ----------------------------------------------------
    def receptacle_of(self, obj: str) -> tuple[str, str] | None:
        return self.objects[obj].place

    def room_of(self, handle: str) -> str | None:
        if handle in self.objects:
            o = self.objects[handle]
            return self.room_at(self.agent_pos[o.holder]) if o.holder is not None else o.room
        if handle in self.furniture:
            return self.furniture[handle].room
        return handle if handle in self.room_box else None

    def on_floor(self, obj: str) -> bool:
        o = self.objects[obj]
        return o.place is not None and self.furniture[o.place[1]].cls == FLOOR

    def position(self, handle: str) -> Point:
        if handle in self.furniture:
            return self.furniture[handle].centre
        o = self.objects[handle]
        return self.agent_pos[o.holder] if o.holder is not None else o.pos

    def half_extent(self, handle: str) -> float:
        return self.furniture[handle].half_extent if handle in self.furniture else self.objects[handle].half

    def state(self, obj: str, name: str) -> bool | None:
        e = self.objects.get(obj) or self.furniture.get(obj)
        return None if e is None else e.states.get(name)

    def entity(self, handle: str) -> str:
        """``"object" | "furniture" | "room" | ""``: what a handle names."""
        return ("object" if handle in self.objects else "furniture" if handle in self.furniture
                else "room" if handle in self.room_box else "")

    def hidden(self, obj: str) -> bool:
        """Inside closed articulated furniture."""
        o = self.objects[obj]
        return o.place is not None and o.place[0] == "within" and not self.furniture[o.place[1]].is_open

    def sees(self, agent: int, obj: str) -> bool:
        """The view rule (:mod:`collablab.world.views`) from where the agent stands now."""
        o = self.objects[obj]
        if o.holder == agent:
            return True
        p = self.agent_pos[agent]
        if self.room_of(obj) != self.room_at(p) or (o.holder is None and self.hidden(obj)):
            return False
        return self.view.sees(o.size, horizontal_distance(p, self.position(obj)))

    def record(self, agent: int, obj: str, step: int) -> Record:
        """What ``agent`` records on seeing ``obj`` now (a partner's held object: place unknown)."""
        o = self.objects[obj]
        place = o.place if o.holder is None else None
        return Record(o.cls, self.room_of(obj), place, o.holder == agent, tuple(sorted(o.states.items())), step,
                      self.position(obj) if place is not None else None)

    def observe(self, agent: int, beliefs: Beliefs, step: int) -> list[str]:
        """Update ``beliefs`` from what ``agent`` sees now; returns the newly seen handles.

        Believed objects whose believed spot is in view but which are not there any more get
        a "location unknown" record (the agent sees they are gone)."""
        new = []
        p = self.agent_pos[agent]
        here = self.room_at(p)
        for h in self.objects:
            if self.sees(agent, h):
                if h not in beliefs.objects:
                    new.append(h)
                beliefs.objects[h] = self.record(agent, h, step)
        for h, r in list(beliefs.objects.items()):
            if r.place is None or r.held_by_me or r.room != here:
                continue
            o = self.objects[h]
            f = self.furniture[r.place[1]]
            looked = self.view.sees(o.size, horizontal_distance(p, f.centre)) and (r.place[0] == "on" or f.is_open)
            if looked and (o.place != r.place or o.holder is not None):
                beliefs.objects[h] = replace(r, place=None, room=None, step=step, pos=None)
        for fh, f in self.furniture.items():
            if f.room == here:
                beliefs.furniture_open[fh] = (f.is_open, step)
                beliefs.furniture_states[fh] = (tuple(sorted(f.states.items())), step)
        return new

    def full_beliefs(self, agent: int, step: int) -> Beliefs:
        """Full observability (§4.5): the ground truth as a belief graph."""
        b = Beliefs(agent)
        for h in self.objects:
            b.objects[h] = self.record(agent, h, step)
        for fh, f in self.furniture.items():
            b.furniture_open[fh] = (f.is_open, step)
            b.furniture_states[fh] = (tuple(sorted(f.states.items())), step)
        return b

    def initial_beliefs(self, agent: int) -> Beliefs:
        """The layout: furniture open states and furniture object-states at step 0, no objects."""
        b = Beliefs(agent)
        for fh, f in self.furniture.items():
            b.furniture_open[fh] = (f.is_open, 0)
            b.furniture_states[fh] = (tuple(sorted(f.states.items())), 0)
        return b


__all__ = ["Beliefs", "FLOOR", "FURNITURE_CLASSES", "Furniture", "Obj", "PARTNR_VIEW", "Point", "ROOM_NAMES", "Record",
           "STATE_NAMES", "World", "affordances", "room_handle"]
