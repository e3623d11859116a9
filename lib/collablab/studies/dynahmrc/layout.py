"""The robot layer's geometry over a shared household scene (dynahmrc.tex §3.3 Observation
Module, §3.3 Planning Module, §4.1 Benchmark; issue 12's robot layer).

BestMan's A* navigation and BIT* arm planning are not available; this layer keeps what makes
``tab:feeb_description``'s failures real:

- **Places.** Every piece of furniture that is a surface or a container (VirtualHome SURFACES /
  CONTAINERS, category Furniture or Appliances, not grabbable) is a place ``<class>_<k>`` with its
  box, room and open state. Furniture whose top is at least :data:`ELEVATED_TOP_M` high also has an
  elevated place ``<handle>_top`` (its top surface: ``wall_top`` in the paper's figure 1) that only
  a drone reaches; wall-mounted furniture (bottom at least :data:`WALL_MOUNTED_M` high) is only that
  elevated place.
- **Stand poses.** Each ground place has stand poses ``stand_pose_<k>``: points :data:`STAND_GAP_M`
  outside the middle of each side of its box (two per side longer than :data:`LONG_SIDE_M`), kept
  when they lie inside a room with at least :data:`POSE_CLEARANCE_M` of clearance (the scene graph's
  navigation target points, §3.3). A pose may still be unusable for a larger robot (too close to
  other furniture): Navigation Failed (1) says so. An
  elevated place has one pose: the hover point above its centre.
- **Costmap.** A 2-D occupancy grid of the apartment at :data:`RESOLUTION_M`: a cell is free when it
  lies inside a room (a wall margin inside) or a door opening, and, for ground robots, outside every
  floor-standing footprint. Free cells of a robot are those with clearance at least its radius
  (distance transform); connectivity (``scipy.ndimage.label``) decides whether a path exists (A*'s
  role: we need existence and the nearest reachable point, not the path itself; local obstacle
  avoidance is not modelled, as in the paper). Drones fly over furniture: only walls block them.
- **Working table.** The largest table of the scene is the manipulator's working surface: the
  tabletop manipulator's base stands at the middle of its longer edge (it never moves).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import ndimage

from ...world import Scene, make_apartment
from ...world.views import horizontal_distance as distance

Point = tuple[float, float]

__all__ = ["ELEVATED_TOP_M", "LONG_SIDE_M", "Layout", "MOVE_LIMIT_M", "Place", "Point", "RESOLUTION_M", "STAND_GAP_M",
           "WALL_MOUNTED_M", "distance", "layout_of"]

RESOLUTION_M = 0.1
#: The longest ``move`` (the local costmap's radius).
MOVE_LIMIT_M = 1.0
#: A stand pose is listed when a robot of this radius fits there (the smallest ground footprint
#: among our types is 0.25 m; 0.2 m keeps poses a drone or a slim robot can use). Larger robots may
#: still fail there with Navigation Failed (1).
POSE_CLEARANCE_M = 0.2
STAND_GAP_M = 0.45
LONG_SIDE_M = 1.6
ELEVATED_TOP_M = 1.6
WALL_MOUNTED_M = 1.4
WALL_MARGIN_M = 0.08
DOOR_PAD_M = 0.35
#: Classes that are surfaces or containers in VirtualHome but are not places objects are put on here.
NOT_PLACES = frozenset({"chair", "towelrack", "clothespile", "clothespants", "clothesshirt", "oventray", "stovefan",
                        "mousemat", "hanger", "floor", "rug", "powersocket", "lightswitch", "faucet", "toilet",
                        "bathtub", "stall", "coffeemaker", "toaster"})
TABLE_CLASSES = ("kitchentable", "diningtable", "desk", "coffeetable", "sidetable", "table")


@dataclass
class Place:
    """A place objects lie on or in: a piece of furniture or its elevated top."""

    handle: str
    cls: str
    room: str
    centre: Point
    half: tuple[float, float]
    top_m: float
    surface: bool
    container: bool
    openable: bool
    initially_open: bool
    elevated: bool = False
    stand_poses: list[Point] = field(default_factory=list)
    node_id: int | None = None

    def box_distance(self, p: Point) -> float:
        """Horizontal distance from ``p`` to this place's box (0 inside)."""
        dx = max(abs(p[0] - self.centre[0]) - self.half[0], 0.0)
        dz = max(abs(p[1] - self.centre[1]) - self.half[1], 0.0)
        return math.hypot(dx, dz)

    def clamp(self, p: Point, margin: float = 0.05) -> Point:
        """The point of this place's top nearest ``p`` (``margin`` inside its edge)."""
        hx, hz = max(self.half[0] - margin, 0.0), max(self.half[1] - margin, 0.0)
        return (min(max(p[0], self.centre[0] - hx), self.centre[0] + hx),
                min(max(p[1], self.centre[1] - hz), self.centre[1] + hz))


def _box(node: dict[str, Any]) -> tuple[Point, tuple[float, float], float, float] | None:
    bb = node.get("bounding_box")
    if not isinstance(bb, dict) or "center" not in bb or "size" not in bb:
        return None
    c, s = bb["center"], bb["size"]
    return ((float(c[0]), float(c[2])), (float(s[0]) / 2, float(s[2]) / 2),
            float(c[1]) - float(s[1]) / 2, float(c[1]) + float(s[1]) / 2)


class Layout:
    """Places, stand poses, rooms and the occupancy grid of one scene (immutable)."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self.rooms: dict[str, tuple[Point, tuple[float, float]]] = {}
        counts: dict[str, int] = {}
        for rid in sorted(scene.rooms):
            b = _box(scene.nodes[rid])
            if b is None:
                continue
            cls = scene.rooms[rid]
            name = f"{cls}_{counts.get(cls, 0)}"
            counts[cls] = counts.get(cls, 0) + 1
            self.rooms[name] = (b[0], b[1])
        self._room_by_id = {rid: n for rid, n in zip(sorted(i for i in scene.rooms if _box(scene.nodes[i])),
                                                      self.rooms)}
        if not self.rooms:
            raise ValueError("scene: no room has a bounding_box; the robot layer needs room geometry")
        xs = [c[0] + s * h[0] for c, h in self.rooms.values() for s in (-1, 1)]
        zs = [c[1] + s * h[1] for c, h in self.rooms.values() for s in (-1, 1)]
        self.origin = (min(xs) - 0.5, min(zs) - 0.5)
        self.shape = (int(math.ceil((max(xs) - min(xs) + 1.0) / RESOLUTION_M)),
                      int(math.ceil((max(zs) - min(zs) + 1.0) / RESOLUTION_M)))
        self._grid_centres = np.stack(np.meshgrid(
            self.origin[0] + (np.arange(self.shape[0]) + 0.5) * RESOLUTION_M,
            self.origin[1] + (np.arange(self.shape[1]) + 0.5) * RESOLUTION_M, indexing="ij"), axis=-1)
        self.inside = np.zeros(self.shape, bool)
        for c, h in self.rooms.values():
            self.inside |= self._rect_mask(c, (h[0] - WALL_MARGIN_M, h[1] - WALL_MARGIN_M))
        for d in scene.doors:
            b = _box(scene.nodes[d.id])
            if b is not None:
                self.inside |= self._rect_mask(b[0], (b[1][0] + DOOR_PAD_M, b[1][1] + DOOR_PAD_M))
        self.room_grid = np.full(self.shape, "", dtype=object)
        for name, (c, h) in self.rooms.items():
            self.room_grid[self._rect_mask(c, h)] = name
        self.obstacles = np.zeros(self.shape, bool)
        self.places: dict[str, Place] = {}
        self._build_places()
        self.working_table, self.manipulator_base = self._working_table()

    # -- geometry ---------------------------------------------------------------------------
    def _rect_mask(self, c: Point, h: tuple[float, float]) -> np.ndarray:
        g = self._grid_centres
        return (np.abs(g[..., 0] - c[0]) <= h[0]) & (np.abs(g[..., 1] - c[1]) <= h[1])

    def cell(self, p: Point) -> tuple[int, int] | None:
        """The grid cell of a point, or None outside the map."""
        i = int((p[0] - self.origin[0]) // RESOLUTION_M)
        j = int((p[1] - self.origin[1]) // RESOLUTION_M)
        return (i, j) if 0 <= i < self.shape[0] and 0 <= j < self.shape[1] else None

    def point(self, c: tuple[int, int]) -> Point:
        return (round(float(self._grid_centres[c][0]), 3), round(float(self._grid_centres[c][1]), 3))

    def room_at(self, p: Point) -> str:
        """The room a point lies in ("" outside every room)."""
        c = self.cell(p)
        return str(self.room_grid[c]) if c is not None else ""

    @functools.lru_cache(maxsize=64)
    def free(self, radius_m: float, flies: bool, blocked_rooms: frozenset[str] = frozenset()) -> np.ndarray:
        """Cells where a robot of this radius can stand (a boolean grid)."""
        base = self.inside if flies else (self.inside & ~self.obstacles)
        clearance = ndimage.distance_transform_edt(base) * RESOLUTION_M
        out = clearance >= radius_m
        for r in blocked_rooms:
            out &= self.room_grid != r
        return out

    @functools.lru_cache(maxsize=64)
    def components(self, radius_m: float, flies: bool, blocked_rooms: frozenset[str] = frozenset()) -> np.ndarray:
        """Connected components of :meth:`free` (0 = not free)."""
        labels, _ = ndimage.label(self.free(radius_m, flies, blocked_rooms), structure=np.ones((3, 3)))
        return labels

    @functools.lru_cache(maxsize=64)
    def main_component(self, radius_m: float, flies: bool) -> int:
        """The label of the largest connected free region for this footprint (0 when none is free):
        where robots start, at the working table."""
        labels = self.components(radius_m, flies)
        return int(np.bincount(labels.ravel())[1:].argmax()) + 1 if labels.max() else 0

    def main_point(self, radius_m: float, flies: bool) -> Point:
        """A free point of :meth:`main_component` (the median of its cells)."""
        idx = np.argwhere(self.components(radius_m, flies) == self.main_component(radius_m, flies))
        return self.point(tuple(idx[len(idx) // 2]))

    def reach(self, start: Point, goal: Point, radius_m: float, flies: bool,
              blocked_rooms: frozenset[str] = frozenset()) -> Point | None:
        """Where a robot at ``start`` gets when heading for ``goal``: ``goal`` itself when a path exists,
        else the reachable free point nearest it; None when ``start`` is not on a free cell."""
        labels = self.components(radius_m, flies, blocked_rooms)
        s, g = self.cell(start), self.cell(goal)
        if s is None or labels[s] == 0:
            return None
        if g is not None and labels[g] == labels[s]:
            return goal
        mask = labels == labels[s]
        d = np.hypot(self._grid_centres[..., 0] - goal[0], self._grid_centres[..., 1] - goal[1])
        d = np.where(mask, d, np.inf)
        return self.point(np.unravel_index(int(np.argmin(d)), d.shape))

    def is_free(self, p: Point, radius_m: float, flies: bool) -> bool:
        c = self.cell(p)
        return c is not None and bool(self.free(radius_m, flies)[c])

    def local_costmap(self, centre: Point, goal: Point, radius_m: float, flies: bool, half_cells: int = 5,
                      step_m: float = 0.2) -> list[list[str]]:
        """The robot-centred local costmap of the ``move`` action's second call (§3.3): rows of
        ``.`` free, ``#`` obstacle (or farther than :data:`MOVE_LIMIT_M`), ``G`` the goal's cell, ``R``
        the robot; row 0 is the most negative y; cell (r, c) lies at (dx, dy) = ((c - half) * step,
        (r - half) * step)."""
        free = self.free(radius_m, flies)
        rows = []
        for r in range(-half_cells, half_cells + 1):
            row = []
            for c in range(-half_cells, half_cells + 1):
                p = (centre[0] + c * step_m, centre[1] + r * step_m)
                cell = self.cell(p)
                within = math.hypot(r * step_m, c * step_m) <= MOVE_LIMIT_M + 1e-9
                ch = "." if cell is not None and free[cell] and within else "#"
                if r == 0 and c == 0:
                    ch = "R"
                elif abs(goal[0] - p[0]) <= step_m / 2 and abs(goal[1] - p[1]) <= step_m / 2:
                    ch = "G"
                row.append(ch)
            rows.append(row)
        return rows

    # -- places ----------------------------------------------------------------------------
    def _build_places(self) -> None:
        counts: dict[str, int] = {}
        nodes = sorted(self.scene.nodes.values(), key=lambda n: int(n["id"]))
        for n in nodes:
            b = _box(n)
            props = set(n.get("properties", ()))
            if b is None or n.get("category") not in ("Furniture", "Appliances"):
                continue
            centre, half, bottom, top = b
            if bottom < 0.5 and top > 0.05:
                self.obstacles |= self._rect_mask(centre, half)
            if n["class_name"] in NOT_PLACES or "GRABBABLE" in props or not props & {"SURFACES", "CONTAINERS"}:
                continue
            rid = self.scene.room_of(int(n["id"]))
            room = self._room_by_id.get(rid, "") if rid is not None else ""
            cls = n["class_name"]
            handle = f"{cls}_{counts.get(cls, 0)}"
            counts[cls] = counts.get(cls, 0) + 1
            states = set(n.get("states", ()))
            if bottom < WALL_MOUNTED_M:
                self.places[handle] = Place(handle, cls, room, centre, half, top, "SURFACES" in props,
                                            "CONTAINERS" in props, "CAN_OPEN" in props,
                                            "CAN_OPEN" not in props or "OPEN" in states, node_id=int(n["id"]))
            if top >= ELEVATED_TOP_M:
                h = f"{handle}_top"
                self.places[h] = Place(h, cls, room, centre, half, top, True, False, False, True, elevated=True,
                                       stand_poses=[centre], node_id=int(n["id"]))
        for p in self.places.values():
            if not p.elevated:
                p.stand_poses = self._stand_poses(p)

    def _stand_poses(self, p: Place) -> list[Point]:
        (cx, cz), (hx, hz) = p.centre, p.half
        out: list[Point] = []
        for axis, h_along, h_across in ((0, hz, hx), (1, hx, hz)):
            ts = (-h_along / 2, h_along / 2) if 2 * h_along > LONG_SIDE_M else (0.0,)
            for sign in (-1, 1):
                for t in ts:
                    q = (cx + sign * (h_across + STAND_GAP_M), cz + t) if axis == 0 else \
                        (cx + t, cz + sign * (h_across + STAND_GAP_M))
                    c = self.cell(q)
                    if c is not None and self.inside[c] and (not p.room or self.room_at(q) == p.room) \
                            and self.is_free(q, POSE_CLEARANCE_M, False):
                        out.append((round(q[0], 3), round(q[1], 3)))
        return out

    def _working_table(self) -> tuple[str, Point]:
        """The table (and the edge of it) the tabletop manipulator stands at: among tables, the edge
        with the most stand poses a mobile manipulator can use, then the larger table."""
        tables = [p for p in self.places.values() if p.cls in TABLE_CLASSES and not p.elevated and p.surface]
        if not tables:
            tables = [p for p in self.places.values() if p.surface and not p.elevated and p.top_m < 1.2]
        if not tables:
            raise ValueError("scene: no table or low surface for the tabletop manipulator's working table")
        best: tuple[int, float, str] | None = None
        base: Point = (0.0, 0.0)
        for t in tables:
            (cx, cz), (hx, hz) = t.centre, t.half
            for edge in ((cx, cz - hz), (cx, cz + hz), (cx - hx, cz), (cx + hx, cz)):
                on_edge = [q for q in t.stand_poses if distance(q, edge) < max(hx, hz) + STAND_GAP_M + 0.01
                           and abs((q[0] - edge[0]) if edge[1] in (cz - hz, cz + hz) else (q[1] - edge[1]))
                           <= max(hx, hz)]
                usable = sum(self.is_free(q, 0.3, False) for q in on_edge)
                key = (usable, t.half[0] * t.half[1], t.handle)
                if best is None or key > best:
                    best, base = key, (round(edge[0], 3), round(edge[1], 3))
        assert best is not None
        return best[2], base

    # -- queries ---------------------------------------------------------------------------
    def ground_places(self) -> list[Place]:
        return [p for p in self.places.values() if not p.elevated]

    def elevated_places(self) -> list[Place]:
        return [p for p in self.places.values() if p.elevated]

    def place(self, handle: str) -> Place:
        return self.places[handle]



@functools.lru_cache(maxsize=16)
def _cached(seed: int) -> Layout:
    return Layout(make_apartment(seed))


def layout_of(scene: Scene | int) -> Layout:
    """The layout of a scene, or of generated apartment ``seed`` (cached per process)."""
    return _cached(scene) if isinstance(scene, int) else Layout(scene)
