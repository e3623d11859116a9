"""Author household apartments as VirtualHome scene graphs at the real scenes' scale (seeded).

An apartment is built like MECoBench's VirtualHome scenes (``parallel_5.json``: 313-439
nodes, 114-217 grabbable, ~80 with SURFACES, 26-31 of them floor tiles):

- **Rooms.** A living room, kitchen, bedroom and bathroom, rectangles of a few metres
  (``ROOM_SIDES``: the real rooms' interiors are 5-7.5 m, bathrooms 5 m), laid out as a 2x2
  block, a row of three with one room below, or a row of four, so that neighbours share a
  wall. Doors join neighbours along a seeded spanning tree of the shared walls (every pair of
  rooms is joined by exactly one door path; the bathroom, as in the real scenes, gets one
  door unless it is the only way through). Each door is a ``door`` node (CAN_OPEN, OPEN) on
  the shared wall with BETWEEN edges to both rooms, plus a ``doorjamb`` node there, as in the
  real scenes.
- **Structure.** Floor tiles (SURFACES) and ceiling tiles of at most 2.5 m, one wall node per
  perimeter tile (a corner's box is the tile's cube, as in the real scenes), windows with
  curtains on outside walls, ceiling and wall lamps, light switches and sockets, pictures, rugs.
- **Furniture** with real sizes (``catalog.FURNITURE``), against the walls or free-standing
  (a kitchen table with chairs, a coffee table in front of the sofa, nightstands beside the
  bed), never overlapping each other or the space in front of a door, never a tall piece in
  front of a window, resting on the floor; appliances on counters (microwave, toaster), a sink
  and faucet in counters, cabinets on the wall above them. Every piece of 0.5 m or more is
  seen from its room's centre by the view rule (:mod:`.views`), so an agent entering a room
  can walk to it. It includes every goal furniture of Table 4 (``GOAL_FURNITURE``) and the
  legal placements of Table 5.
- **Clutter.** 115-150 everyday objects of ``catalog.CLUTTER`` (``CLUTTER_RANGE``; never a
  task object or look-alike: those are placed per task by the suite) on or in furniture, each with its real box on the
  top face within the footprint, or inside the container's box on one of its shelves, not
  overlapping anything, and seen from the furniture's centre by the view rule (an agent
  standing at a piece of furniture stands at its box centre). Small objects therefore lie
  near the centre of their furniture, and most of them are not seen from the room's centre.
  The goal furniture (the first of each class of ``GOAL_FURNITURE``, which the suite uses as
  the goal target) starts empty: nothing is ON or INSIDE it (its sink or screen stands on it
  without an edge). Measured over apartments 0-7: 4-10% of the small placed objects are seen
  from the room centre (the real scenes: 11-35%, their central tables carry clutter; ours are
  the empty goal targets).

``Spots`` finds such places in any of our graphs; the task suite uses it for task objects.
Same (index, seed), same graph, byte for byte.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

from .catalog import CLUTTER, FIXTURES, FURNITURE, Clutter, Furniture, Size
from .scene import STRUCTURAL_CATEGORIES, Door, Scene
from .views import DEFAULT_VIEW, ViewRule, box_of, horizontal_distance

ROOMS = ("livingroom", "kitchen", "bedroom", "bathroom")
#: interior side lengths (min, max) in metres, drawn in steps of ``STEP``
ROOM_SIDES = {"livingroom": (5.0, 7.5), "kitchen": (5.0, 7.5), "bedroom": (5.0, 7.0), "bathroom": (3.5, 5.0)}
STEP = 0.25
TILE = 2.5  # floor and ceiling tiles are at most this long (the real scenes' tiles)
WALL_HEIGHT = 2.5
WALL = 0.06  # wall slabs: inside the room, along its edge
GAP = 0.1  # furniture stands this far from the wall line
CLEAR = 0.05  # between two pieces of furniture
MIN_SHARED = 2.0  # a shared wall takes a door when at least this long
DOOR_SPAN = 0.6  # half the wall span a door takes (the doorjamb is 0.93 m wide)
DOOR_ZONE = (0.75, 1.2)  # kept free of furniture in front of a door: half width, depth
ROOM_BOX_MARGIN = 0.25  # a room's box reaches this far beyond its floor (wall thickness), as in the real scenes

#: Table 4's goal furniture; the first node of each class starts empty (it is the goal target)
GOAL_FURNITURE = ("bathroomcounter", "desk", "coffeetable", "dishwasher", "kitchentable", "fridge")
#: floor furniture every apartment has, per room (with what stands on them: see ``_Planner``)
REQUIRED = {
    "kitchen": ("kitchencounter", "fridge", "stove", "dishwasher", "kitchentable"),
    "livingroom": ("sofa", "coffeetable", "tvstand"),
    "bedroom": ("bed", "nightstand", "closet"),
    "bathroom": ("bathroomcounter", "toilet"),
}
#: optional floor furniture per room with its probability (drawn per apartment)
OPTIONAL = {
    "kitchen": (("kitchencounter", 0.7), ("garbagecan", 0.8), ("cabinet", 0.4), ("bookshelf", 0.4),
                ("bench", 0.4)),
    "livingroom": (("bookshelf", 0.95), ("bookshelf", 0.6), ("cabinet", 0.6), ("bench", 0.6), ("chair", 0.5),
                   ("chair", 0.3), ("sofa", 0.3), ("coffeetable", 0.4)),
    "bedroom": (("nightstand", 0.8), ("bookshelf", 0.7), ("cabinet", 0.5), ("bench", 0.6), ("tvstand", 0.4),
                ("chair", 0.3), ("coffeetable", 0.2)),
    "bathroom": (("washingmachine", 0.6), ("bathtub", 0.5), ("stall", 0.4), ("cabinet", 0.5)),
}
SECOND_DESK = 0.6  # a second desk in the other of bedroom and living room
#: pieces that stand on or in another piece (appliances on counters, a sink in one, a screen on a desk)
PARTS = ("sink", "faucet", "microwave", "toaster", "coffeemaker", "tv", "cpuscreen", "mousemat", "tablelamp",
         "fryingpan", "oventray")
#: how much clutter a piece of furniture draws (relative weights; others 1)
HOST_WEIGHT = {"kitchencounter": 6.0, "bookshelf": 8.0, "closet": 6.0, "kitchentable": 4.0, "cabinet": 4.0,
               "desk": 4.0, "kitchencabinet": 1.5, "tvstand": 3.0, "nightstand": 3.0, "bed": 3.0,
               "coffeetable": 3.0, "bathroomcabinet": 3.0, "sofa": 2.0, "bench": 2.0}
CLUTTER_RANGE = (115, 150)
#: rug sizes of the MECoBench scenes (long, short), tried largest first where a rug goes
RUG_SIZES = ((3.64, 2.79), (2.51, 1.93), (2.51, 1.7), (1.7, 1.7))

_SIDES = ("S", "N", "W", "E")
_OPPOSITE = {"S": "N", "N": "S", "W": "E", "E": "W"}


# -- geometry ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Rect:
    """An axis-aligned rectangle on the floor plane (x, z)."""

    x0: float
    z0: float
    x1: float
    z1: float

    @property
    def w(self) -> float:
        return self.x1 - self.x0

    @property
    def d(self) -> float:
        return self.z1 - self.z0

    @property
    def center(self) -> tuple[float, float]:
        return ((self.x0 + self.x1) / 2, (self.z0 + self.z1) / 2)

    def overlaps(self, o: Rect, pad: float = 0.0) -> bool:
        return (self.x0 < o.x1 + pad - 1e-9 and o.x0 < self.x1 + pad - 1e-9
                and self.z0 < o.z1 + pad - 1e-9 and o.z0 < self.z1 + pad - 1e-9)

    def within(self, o: Rect, margin: float = 0.0) -> bool:
        return (self.x0 >= o.x0 + margin - 1e-9 and self.x1 <= o.x1 - margin + 1e-9
                and self.z0 >= o.z0 + margin - 1e-9 and self.z1 <= o.z1 - margin + 1e-9)


def _span(rect: Rect, side: str) -> tuple[float, float]:
    """The along-wall coordinate range of a side (x for S/N, z for W/E)."""
    return (rect.x0, rect.x1) if side in ("S", "N") else (rect.z0, rect.z1)


def _footprint(rect: Rect, side: str, t0: float, t1: float, e0: float, e1: float) -> Rect:
    """The rectangle spanning ``t0..t1`` along ``side`` of ``rect`` and ``e0..e1`` in from it."""
    if side == "S":
        return Rect(t0, rect.z0 + e0, t1, rect.z0 + e1)
    if side == "N":
        return Rect(t0, rect.z1 - e1, t1, rect.z1 - e0)
    if side == "W":
        return Rect(rect.x0 + e0, t0, rect.x0 + e1, t1)
    return Rect(rect.x1 - e1, t0, rect.x1 - e0, t1)


def _along(fp: Rect, side: str) -> float:
    return fp.center[0] if side in ("S", "N") else fp.center[1]


def _box(fp: Rect, y0: float, h: float) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    cx, cz = fp.center
    return (cx, y0 + h / 2, cz), (fp.w, h, fp.d)


def _r(v: float) -> float:
    return round(v + 0.0, 3)


def _node(nid: int, cls: str, category: str, props: tuple[str, ...], states: list[str],
          center: tuple[float, ...], size: tuple[float, ...]) -> dict[str, Any]:
    c = [_r(v) for v in center]
    s = [_r(v) for v in size]
    return {"id": nid, "class_name": cls, "category": category, "prefab_name": f"collablab_{cls}",
            "obj_transform": {"position": [c[0], _r(c[1] - s[1] / 2), c[2]], "rotation": [0.0, 0.0, 0.0, 1.0],
                              "scale": [1.0, 1.0, 1.0]},
            "bounding_box": {"center": c, "size": s},
            "properties": list(props), "states": list(states)}


# -- layout ------------------------------------------------------------------------------------
def _draw_side(rng: random.Random, room: str) -> float:
    lo, hi = ROOM_SIDES[room]
    return lo + STEP * rng.randint(0, round((hi - lo) / STEP))


def _layout(rng: random.Random) -> dict[str, Rect]:
    """Room rectangles (interiors) that share walls: 2x2 block, row of three plus one, or row of four."""
    order = list(ROOMS)
    rng.shuffle(order)
    family = rng.choice(("grid", "row3", "row4"))
    if family != "grid":  # the bathroom at an end of the row (or below it): it has one neighbour to join
        order.remove("bathroom")
        order.insert(3 if family == "row3" else rng.choice((0, 3)), "bathroom")
    dims = [(_draw_side(rng, r), _draw_side(rng, r)) for r in order]
    rects: list[Rect] = []
    if family == "row4":
        x = 0.0
        for w, d in dims:
            rects.append(Rect(x, 0.0, x + w, d))
            x += w
    elif family == "row3":
        x = 0.0
        for w, d in dims[:3]:
            rects.append(Rect(x, 0.0, x + w, d))
            x += w
        w, d = dims[3]
        host = rects[rng.randrange(3)]
        lo = max(0.0, host.x0 - w + MIN_SHARED + 0.5)
        hi = min(x - w, host.x1 - MIN_SHARED - 0.5)
        x0 = lo + STEP * rng.randint(0, int((hi - lo) / STEP)) if hi >= lo else min(max(0.0, host.x0), x - w)
        rects.append(Rect(x0, -d, x0 + w, 0.0))
    else:
        (wa, da), (wb, db), (wc, dc), (wd, dd) = dims
        o = STEP * rng.randint(-4, 4)
        rects = [Rect(0.0, 0.0, wa, da), Rect(wa, 0.0, wa + wb, db),
                 Rect(o, -dc, o + wc, 0.0), Rect(o + wc, -dd, o + wc + wd, 0.0)]
    return dict(zip(order, rects))


def _shared(a: Rect, b: Rect) -> tuple[str, str, float, float] | None:
    """(side of a, side of b, lo, hi) of the wall a and b share, when long enough for a door."""
    for sa, sb, la, lb in (("E", "W", a.x1, b.x0), ("W", "E", a.x0, b.x1)):
        if abs(la - lb) < 1e-6:
            lo, hi = max(a.z0, b.z0), min(a.z1, b.z1)
            if hi - lo >= MIN_SHARED - 1e-9:
                return sa, sb, lo, hi
    for sa, sb, la, lb in (("N", "S", a.z1, b.z0), ("S", "N", a.z0, b.z1)):
        if abs(la - lb) < 1e-6:
            lo, hi = max(a.x0, b.x0), min(a.x1, b.x1)
            if hi - lo >= MIN_SHARED - 1e-9:
                return sa, sb, lo, hi
    return None


def _touching(a: Rect, b: Rect, side: str) -> tuple[float, float] | None:
    """The range of ``side`` of a that b touches (any length)."""
    if side in ("E", "W"):
        line_a, line_b = (a.x1, b.x0) if side == "E" else (a.x0, b.x1)
        lo, hi = max(a.z0, b.z0), min(a.z1, b.z1)
    else:
        line_a, line_b = (a.z1, b.z0) if side == "N" else (a.z0, b.z1)
        lo, hi = max(a.x0, b.x0), min(a.x1, b.x1)
    if abs(line_a - line_b) < 1e-6 and hi > lo:
        return lo, hi
    return None


def _exterior(rects: dict[str, Rect], name: str, side: str) -> list[tuple[float, float]]:
    """Stretches of a room's side that no other room touches (outside walls)."""
    free = [_span(rects[name], side)]
    for other in ROOMS:
        if other == name:
            continue
        cut = _touching(rects[name], rects[other], side)
        if cut is None:
            continue
        nxt = []
        for lo, hi in free:
            if cut[1] <= lo or cut[0] >= hi:
                nxt.append((lo, hi))
                continue
            if cut[0] > lo:
                nxt.append((lo, cut[0]))
            if cut[1] < hi:
                nxt.append((cut[1], hi))
        free = nxt
    return free


# -- furnishing one room -----------------------------------------------------------------------
class _Retry(Exception):
    """A required piece did not fit; plan the room again."""


@dataclass
class _Piece:
    cls: str
    fp: Rect
    y0: float
    h: float
    side: str
    parent: int | None = None  # index into the plan's pieces
    rel: str = ""

    @property
    def spec(self) -> Furniture:
        return FURNITURE[self.cls]

    @property
    def box(self) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        return _box(self.fp, self.y0, self.h)


def _in_frame(host: _Piece, size: tuple[float, float, float], u: float, v: float,
              long_along: bool) -> tuple[Rect, float]:
    """Footprint and height of a piece of ``size`` (long, high, short) placed in ``host``'s frame:
    ``u`` along its back from its middle, ``v`` forward from its back, long side along it or not."""
    long, h, short = size
    w, d = (long, short) if long_along else (short, long)
    t = _along(host.fp, host.side) + u
    return _footprint(host.fp, host.side, t - w / 2, t + w / 2, v, v + d), h


class _Planner:
    """Places the furniture of one room: walls, doors and windows are given."""

    def __init__(self, rng: random.Random, name: str, rect: Rect, doors: list[tuple[str, float]],
                 windows: list[tuple[str, float, float]], view: ViewRule) -> None:
        self.rng, self.name, self.rect, self.view = rng, name, rect, view
        self.doors, self.windows = doors, windows
        self.pieces: list[_Piece] = []
        self.spans: dict[str, list[tuple[float, float, float, float]]] = {s: [] for s in _SIDES}
        self.zones = [_footprint(rect, s, t - DOOR_ZONE[0], t + DOOR_ZONE[0], 0.0, DOOR_ZONE[1]) for s, t in doors]
        for s, t in doors:
            self.spans[s].append((t - DOOR_SPAN, t + DOOR_SPAN, 0.0, 2.1))
        for s, t0, t1 in windows:
            w = FIXTURES["window"]
            self.spans[s].append((t0, t1, w.mount, w.mount + w.size[1]))

    # checks
    def seen(self, fp: Rect, size: Size) -> bool:
        ext = max(size)
        return ext < 0.5 or self.view.sees(ext, horizontal_distance(fp.center, self.rect.center))

    def _span_free(self, side: str, t0: float, t1: float, y0: float, y1: float) -> bool:
        return not any(t0 < b1 - 1e-9 and b0 < t1 - 1e-9 and y0 < c1 - 1e-9 and c0 < y1 - 1e-9
                       for b0, b1, c0, c1 in self.spans[side])

    def _floor_ok(self, fp: Rect, h: float, margin: float = GAP - 1e-6, pad: float = CLEAR) -> bool:
        if not fp.within(self.rect, margin):
            return False
        if any(fp.overlaps(z) for z in self.zones):
            return False
        for p in self.pieces:
            if p.y0 < 0.05 and fp.overlaps(p.fp, pad):
                return False
            if p.y0 >= 0.05 and fp.overlaps(p.fp) and h > p.y0:  # under something wall-mounted
                return False
        return True

    def _add(self, cls: str, fp: Rect, y0: float, h: float, side: str, parent: int | None = None,
             rel: str = "") -> _Piece:
        p = _Piece(cls, fp, y0, h, side, parent, rel)
        self.pieces.append(p)
        return p

    # placements
    def wall(self, cls: str, side: str | None = None, t: float | None = None, tries: int = 60) -> _Piece | None:
        """A floor piece with its back to a wall (random wall and position unless given)."""
        f = FURNITURE[cls]
        long, h, short = f.size
        w, d = (short, long) if f.short_to_wall else (long, short)
        for k in range(tries):
            s = side if side is not None else self.rng.choice(_SIDES)
            lo, hi = _span(self.rect, s)
            if hi - lo - 2 * GAP < w:
                continue
            c = t if (t is not None and k == 0) else self.rng.uniform(lo + GAP + w / 2, hi - GAP - w / 2)
            c = min(max(c, lo + GAP + w / 2), hi - GAP - w / 2)
            fp = _footprint(self.rect, s, c - w / 2, c + w / 2, GAP, GAP + d)
            if not self._floor_ok(fp, h) or not self._span_free(s, c - w / 2, c + w / 2, 0.0, h):
                continue
            if not self.seen(fp, f.size):
                continue
            piece = self._add(cls, fp, 0.0, h, s)
            self.spans[s].append((c - w / 2, c + w / 2, 0.0, h))
            return piece
        return None

    def free(self, cls: str, clearance: float, tries: int = 80) -> _Piece | None:
        """A free-standing floor piece with ``clearance`` around it (chairs fit in it)."""
        f = FURNITURE[cls]
        long, h, short = f.size
        for _ in range(tries):
            w, d = (long, short) if self.rng.random() < 0.5 else (short, long)
            r = self.rect
            lo_x, hi_x = r.x0 + clearance + w / 2, r.x1 - clearance - w / 2
            lo_z, hi_z = r.z0 + clearance + d / 2, r.z1 - clearance - d / 2
            if hi_x < lo_x or hi_z < lo_z:
                continue
            cx, cz = self.rng.uniform(lo_x, hi_x), self.rng.uniform(lo_z, hi_z)
            fp = Rect(cx - w / 2, cz - d / 2, cx + w / 2, cz + d / 2)
            if not self._floor_ok(fp, h, margin=clearance, pad=clearance) or not self.seen(fp, f.size):
                continue
            return self._add(cls, fp, 0.0, h, "S" if w >= d else "W")
        return None

    def relative(self, host: _Piece, cls: str, u: float, v: float, long_along: bool = True,
                 pad: float = CLEAR) -> _Piece | None:
        """A floor piece in the frame of ``host``: ``u`` along its back, ``v`` forward from its back."""
        f = FURNITURE[cls]
        fp, h = _in_frame(host, f.size, u, v, long_along)
        if not self._floor_ok(fp, h, pad=pad) or not self.seen(fp, f.size):
            return None
        return self._add(cls, fp, 0.0, h, host.side)

    def beside(self, host: _Piece, cls: str) -> _Piece | None:
        """Against the same wall right next to ``host`` (a nightstand by the bed)."""
        f = FURNITURE[cls]
        w = f.size[0]
        hw = (host.fp.w if host.side in ("S", "N") else host.fp.d) / 2
        for sign in self.rng.sample((-1, 1), 2):
            c = _along(host.fp, host.side) + sign * (hw + 0.06 + w / 2)
            lo, hi = _span(self.rect, host.side)
            if c - w / 2 < lo + GAP or c + w / 2 > hi - GAP:
                continue
            fp = _footprint(self.rect, host.side, c - w / 2, c + w / 2, GAP, GAP + f.size[2])
            if self._floor_ok(fp, f.size[1], pad=0.05) and self._span_free(host.side, c - w / 2, c + w / 2, 0,
                                                                             f.size[1]):
                self.spans[host.side].append((c - w / 2, c + w / 2, 0.0, f.size[1]))
                return self._add(cls, fp, 0.0, f.size[1], host.side)
        return None

    def on(self, host: _Piece, cls: str, u: float, v: float, rel: str = "ON",
           long_along: bool = True) -> _Piece | None:
        """A piece standing on (or set into) ``host``'s top at (u, v) in the host's frame."""
        f = FURNITURE[cls]
        fp, h = _in_frame(host, f.size, u, v, long_along)
        if not fp.within(host.fp, 0.0):
            return None
        top = host.y0 + (host.spec.top if host.spec.top is not None else host.h)
        y0 = top - h / 2 if rel == "INSIDE" else top  # a sink is set into the counter top
        for p in self.pieces:
            if p.parent == self.pieces.index(host) and p.fp.overlaps(fp, 0.02):
                return None
            if p.y0 > top and p.fp.overlaps(fp) and y0 + h > p.y0:  # a cabinet above
                return None
        if not self.seen(fp, f.size) or not self.view.sees(max(f.size), horizontal_distance(fp.center,
                                                                                            host.fp.center)):
            return None
        return self._add(cls, fp, y0, h, host.side, self.pieces.index(host), rel)

    def inside(self, host: _Piece, cls: str) -> _Piece | None:
        """A piece inside ``host`` (an oven tray in the stove), on its bottom."""
        f = FURNITURE[cls]
        long, h, short = f.size
        hw = host.fp.w if host.side in ("S", "N") else host.fp.d
        hd = host.fp.d if host.side in ("S", "N") else host.fp.w
        if long > hw - 0.06 or short > hd - 0.06:
            return None
        t = _along(host.fp, host.side)
        fp = _footprint(host.fp, host.side, t - long / 2, t + long / 2, (hd - short) / 2, (hd + short) / 2)
        return self._add(cls, fp, host.y0 + 0.2, h, host.side, self.pieces.index(host), "INSIDE")

    def mounted(self, cls: str, side: str, t: float, width: float | None = None,
                depth_from_wall: float = WALL) -> _Piece | None:
        """A wall-mounted piece centred at ``t`` along ``side`` (kitchen cabinets, towel racks)."""
        f = FURNITURE[cls] if cls in FURNITURE else FIXTURES[cls]
        long, h, short = f.size
        w = long if width is None else width
        lo, hi = _span(self.rect, side)
        if t - w / 2 < lo + WALL or t + w / 2 > hi - WALL:
            return None
        if not self._span_free(side, t - w / 2, t + w / 2, f.mount, f.mount + h):
            return None
        fp = _footprint(self.rect, side, t - w / 2, t + w / 2, depth_from_wall, depth_from_wall + short)
        for p in self.pieces:
            if p.fp.overlaps(fp) and p.y0 < f.mount + h and f.mount < p.y0 + p.h:
                return None
        if not self.seen(fp, (w, h, short)):
            return None
        self.spans[side].append((t - w / 2, t + w / 2, f.mount, f.mount + h))
        return self._add(cls, fp, f.mount, h, side)

    def chairs(self, table: _Piece, n: int) -> None:
        """Up to ``n`` chairs around a free-standing table, facing it."""
        cw, _, cd = FURNITURE["chair"].size
        fp = table.fp
        cands = []
        for s in _SIDES:
            length = fp.w if s in ("S", "N") else fp.d
            offsets = (-length / 4, length / 4) if length >= 2 * cw + 0.3 else (0.0,)
            for u in offsets:
                cands.append((s, u))
        self.rng.shuffle(cands)
        placed = 0
        for s, u in cands:
            if placed >= n:
                break
            # the table's side s, seen from outside: the chair's back faces away from the table
            if s == "S":
                c = Rect(fp.center[0] + u - cw / 2, fp.z0 - 0.08 - cd, fp.center[0] + u + cw / 2, fp.z0 - 0.08)
            elif s == "N":
                c = Rect(fp.center[0] + u - cw / 2, fp.z1 + 0.08, fp.center[0] + u + cw / 2, fp.z1 + 0.08 + cd)
            elif s == "W":
                c = Rect(fp.x0 - 0.08 - cd, fp.center[1] + u - cw / 2, fp.x0 - 0.08, fp.center[1] + u + cw / 2)
            else:
                c = Rect(fp.x1 + 0.08, fp.center[1] + u - cw / 2, fp.x1 + 0.08 + cd, fp.center[1] + u + cw / 2)
            if self._floor_ok(c, FURNITURE["chair"].size[1], pad=0.04) and self.seen(c, FURNITURE["chair"].size):
                self._add("chair", c, 0.0, FURNITURE["chair"].size[1], _OPPOSITE[s])
                placed += 1

    def wall_fixture(self, cls: str, tries: int = 30, side: str | None = None,
                     t: float | None = None) -> _Piece | None:
        """A fixture on a wall (picture, wall lamp, switch, socket) where the wall is free."""
        f = FIXTURES[cls]
        long, h, short = f.size
        for k in range(tries):
            s = side if side is not None else self.rng.choice(_SIDES)
            lo, hi = _span(self.rect, s)
            if hi - lo < long + 0.4:
                continue
            c = t if (t is not None and k == 0) else self.rng.uniform(lo + 0.2 + long / 2, hi - 0.2 - long / 2)
            if not self._span_free(s, c - long / 2 - 0.05, c + long / 2 + 0.05, f.mount, f.mount + h):
                continue
            fp = _footprint(self.rect, s, c - long / 2, c + long / 2, WALL, WALL + short)
            self.spans[s].append((c - long / 2, c + long / 2, f.mount, f.mount + h))
            return _Piece(cls, fp, f.mount, h, s)
        return None

    # rooms
    def furnish(self, optional: list[str], desk: bool, second_desk: bool = False) -> None:
        """Place the room's furniture or raise _Retry (the caller plans again)."""
        need = self._need
        r = self.rng
        if self.name == "kitchen":
            counter = need(self.wall("kitchencounter"))
            self._counter(counter, first=True)
            need(self.wall("fridge"))
            stove = need(self.wall("stove"))
            if r.random() < 0.6:
                self.on(stove, "fryingpan", r.uniform(-0.1, 0.1), 0.12)
            self.inside(stove, "oventray")
            self.mounted("stovefan", stove.side, _along(stove.fp, stove.side), depth_from_wall=GAP)
            need(self.wall("dishwasher"))
            for cls in optional:
                p = self.wall(cls)
                if p is not None and cls == "kitchencounter":
                    self._counter(p, first=False)
            table = need(self.free("kitchentable", clearance=0.65))
            self.chairs(table, r.randint(3, 4))
            for _ in range(r.randint(2, 4)):
                self._wall_cabinet()
        elif self.name == "livingroom":
            sofa = need(self.wall("sofa"))
            if r.random() < 0.9:
                need(self.relative(sofa, "coffeetable", 0.0, sofa.spec.size[2] + 0.45) or self.free("coffeetable", 0.5))
            else:
                need(self.free("coffeetable", 0.5))
            stand = self.wall("tvstand", _OPPOSITE[sofa.side], _along(sofa.fp, sofa.side)) or self.wall("tvstand")
            self._tvstand(need(stand))
            if desk:
                self._desk(need(self.wall("desk")))
            elif second_desk:
                self._desk(self.wall("desk"))
            for cls in optional:
                self._optional(cls)
        elif self.name == "bedroom":
            bed = need(self.wall("bed"))
            need(self.beside(bed, "nightstand") or self.wall("nightstand"))
            need(self.wall("closet"))
            if desk:
                self._desk(need(self.wall("desk")))
            elif second_desk:
                self._desk(self.wall("desk"))
            for cls in optional:
                if cls == "nightstand":
                    self.beside(bed, "nightstand") or self.wall("nightstand")
                else:
                    self._optional(cls)
            for p in [p for p in self.pieces if p.cls == "nightstand"]:
                if r.random() < 0.7:
                    self.on(p, "tablelamp", 0.0, 0.05)
        else:
            counter = need(self.wall("bathroomcounter"))
            self._basin(counter)
            if r.random() < 0.8:
                self.mounted("bathroomcabinet", counter.side, _along(counter.fp, counter.side))
            need(self.wall("toilet"))
            for cls in optional:
                self._optional(cls)
            for _ in range(r.randint(2, 3)):
                self._towelrack()

    @staticmethod
    def _need(p: _Piece | None) -> _Piece:
        if p is None:
            raise _Retry
        return p

    def _optional(self, cls: str) -> None:
        p = self.wall(cls)
        if p is not None and cls == "tvstand":
            self._tvstand(p)

    def _basin(self, counter: _Piece) -> None:
        """A sink set into the counter near its centre, the faucet behind it (seen from the counter)."""
        u = self.rng.uniform(-0.3, 0.3)
        self._need(self.on(counter, "sink", u, 0.15, rel="INSIDE"))
        self.on(counter, "faucet", u, 0.01)

    def _counter(self, counter: _Piece, first: bool) -> None:
        r = self.rng
        w = counter.fp.w if counter.side in ("S", "N") else counter.fp.d
        if first:
            self._basin(counter)
            ends = [-(w / 2 - 0.35), w / 2 - 0.35]
            r.shuffle(ends)
            if not any(self.on(counter, "microwave", u, 0.05) for u in ends):
                raise _Retry
        for cls, p in (("toaster", 0.7), ("coffeemaker", 0.6)):
            if r.random() < p:
                for _ in range(6):
                    if self.on(counter, cls, r.uniform(-(w / 2 - 0.25), w / 2 - 0.25), 0.05):
                        break
        # cabinets on the wall above
        cw = FURNITURE["kitchencabinet"].size[0]
        n = int((w - 0.1) // (cw + 0.02))
        k = n
        start = _along(counter.fp, counter.side) - k * (cw + 0.02) / 2 + cw / 2 + 0.01
        for i in range(k):
            self.mounted("kitchencabinet", counter.side, start + i * (cw + 0.02))

    def _wall_cabinet(self) -> None:
        """A kitchen cabinet on a free stretch of wall (over a low piece or nothing)."""
        for _ in range(20):
            s = self.rng.choice(_SIDES)
            lo, hi = _span(self.rect, s)
            if self.mounted("kitchencabinet", s, self.rng.uniform(lo + 0.5, hi - 0.5)):
                return

    def _tvstand(self, stand: _Piece) -> None:
        if self.rng.random() < 0.85:
            self.on(stand, "tv", 0.0, 0.05)

    def _desk(self, desk: _Piece | None) -> None:
        if desk is None:
            return
        r = self.rng
        if r.random() < 0.6:
            self.on(desk, "cpuscreen", 0.0, 0.05)
        if r.random() < 0.5:
            self.on(desk, "mousemat", r.choice((-0.6, 0.6)), 0.45)
        self.relative(desk, "chair", 0.0, FURNITURE["desk"].size[2] + 0.08)

    def _towelrack(self) -> None:
        for _ in range(20):
            s = self.rng.choice(_SIDES)
            lo, hi = _span(self.rect, s)
            if self.mounted("towelrack", s, self.rng.uniform(lo + 0.4, hi - 0.4)):
                return


# -- free space on and in furniture ------------------------------------------------------------
def _overlap3(a: tuple[tuple[float, ...], tuple[float, ...]], b: tuple[tuple[float, ...], tuple[float, ...]]) -> bool:
    return all(a[0][i] < b[1][i] - 1e-6 and b[0][i] < a[1][i] - 1e-6 for i in range(3))


class Spots:
    """Free places on and in the furniture of a scene graph, by real bounding boxes.

    An object goes on a piece's top face (its seat for a sofa: ``Furniture.top``) within its
    footprint, or inside its box on one of its ``shelves``; it overlaps no other box there
    (what already lies on or in the piece, appliances on a counter, a cabinet above it) and
    it is seen from the piece's box centre by the view rule (where an agent at the piece
    stands). ``add`` records a placed object so later ones avoid it.
    """

    def __init__(self, graph: dict[str, Any], view: ViewRule = DEFAULT_VIEW) -> None:
        self.view = view
        self.nodes = {int(n["id"]): n for n in graph["nodes"]}
        self.boxes: dict[int, tuple[tuple[float, float, float], tuple[float, float, float]]] = {}
        for nid, n in self.nodes.items():
            b = box_of(n)
            if b is not None and n["category"] not in STRUCTURAL_CATEGORIES:
                (cx, cy, cz), (sx, sy, sz) = b
                self.boxes[nid] = ((cx - sx / 2, cy - sy / 2, cz - sz / 2), (cx + sx / 2, cy + sy / 2, cz + sz / 2))
        rooms = {nid for nid, n in self.nodes.items() if n["category"] == "Rooms"}
        self.room: dict[int, int] = {}
        for e in graph["edges"]:
            if e["relation_type"] == "INSIDE" and int(e["to_id"]) in rooms:
                self.room.setdefault(int(e["from_id"]), int(e["to_id"]))
        self.by_room: dict[int, list[int]] = {}
        for nid in sorted(self.boxes):
            if nid in self.room:
                self.by_room.setdefault(self.room[nid], []).append(nid)
        self._blockers: dict[int, list[int]] = {}

    def reach(self, extent: float) -> float:
        """How far from a standing point an object of ``extent`` metres is still seen."""
        return self.view.max_distance_for(extent)

    def _blocking(self, fid: int) -> list[int]:
        if fid not in self._blockers:
            lo, hi = self.boxes[fid]
            self._blockers[fid] = [
                nid for nid in self.by_room.get(self.room.get(fid, -1), [])
                if nid != fid and self.boxes[nid][0][0] < hi[0] and lo[0] < self.boxes[nid][1][0]
                and self.boxes[nid][0][2] < hi[2] and lo[2] < self.boxes[nid][1][2]]
        return self._blockers[fid]

    def find(self, fid: int, inside: bool, size: Size, rng: random.Random,
             tries: int = 40) -> tuple[list[float], list[float]] | None:
        """(centre, size) of a free place for an object of ``size`` on/in ``fid``, or None."""
        if fid not in self.boxes:
            return None
        n = self.nodes[fid]
        spec = FURNITURE.get(n["class_name"])
        (lx, ly, lz), (hx, hy, hz) = self.boxes[fid]
        fcx, fcz = (lx + hx) / 2, (lz + hz) / 2
        sx, sy, sz = size
        if rng.random() < 0.5:
            sx, sz = sz, sx
        ext = max(size)
        if inside:
            m = 0.03
            shelves = spec.shelves if spec is not None else 1
            level = (hy - ly - 2 * m) / shelves
            ys = [ly + m + k * level for k in range(shelves) if sy <= level - 0.01]
        else:
            m = 0.02
            ys = [ly + spec.top] if spec is not None and spec.top is not None else [hy]
        reach = self.reach(ext)
        x0, x1 = max(lx + m + sx / 2, fcx - reach), min(hx - m - sx / 2, fcx + reach)
        z0, z1 = max(lz + m + sz / 2, fcz - reach), min(hz - m - sz / 2, fcz + reach)
        if not ys or x1 < x0 or z1 < z0:
            return None
        blockers = self._blocking(fid)
        for _ in range(tries):
            x, z, y0 = _r(rng.uniform(x0, x1)), _r(rng.uniform(z0, z1)), _r(rng.choice(ys))
            if not self.view.sees(ext, horizontal_distance((fcx, fcz), (x, z))):
                continue
            box = ((x - sx / 2, y0, z - sz / 2), (x + sx / 2, y0 + sy, z + sz / 2))
            if any(_overlap3(box, self.boxes[b]) for b in blockers):
                continue
            return [x, _r(y0 + sy / 2), z], [sx, sy, sz]
        return None

    def add(self, nid: int, fid: int, center: list[float], size: list[float]) -> None:
        """Record an object placed on/in ``fid`` (later objects avoid its box)."""
        (cx, cy, cz), (sx, sy, sz) = center, size
        self.boxes[nid] = ((cx - sx / 2, cy - sy / 2, cz - sz / 2), (cx + sx / 2, cy + sy / 2, cz + sz / 2))
        room = self.room.get(fid)
        if room is not None:
            self.room[nid] = room
            self.by_room.setdefault(room, []).append(nid)
        for host, blockers in self._blockers.items():
            (lo, hi), b = self.boxes[host], self.boxes[nid]
            if self.room.get(host) == room and b[0][0] < hi[0] and lo[0] < b[1][0] and b[0][2] < hi[2] \
                    and lo[2] < b[1][2]:
                blockers.append(nid)


# -- the apartment -----------------------------------------------------------------------------
class _Graph:
    def __init__(self) -> None:
        self.nodes: list[dict[str, Any]] = []
        self.edges: list[dict[str, Any]] = []

    @property
    def next_id(self) -> int:
        return len(self.nodes) + 1

    def add(self, cls: str, f: Furniture | Clutter, center: tuple[float, ...], size: tuple[float, ...],
            room: int) -> int:
        nid = self.next_id
        states = f.initial_states if isinstance(f, Furniture) else list(f.states)
        self.nodes.append(_node(nid, cls, f.category, f.properties, states, center, size))
        self.edges.append({"from_id": nid, "relation_type": "INSIDE", "to_id": room})
        return nid

    def rel(self, a: int, rel: str, b: int) -> None:
        self.edges.append({"from_id": a, "relation_type": rel, "to_id": b})


def _tiles(rect: Rect) -> list[tuple[int, int, Rect]]:
    nx, nz = math.ceil(rect.w / TILE - 1e-9), math.ceil(rect.d / TILE - 1e-9)
    tw, td = rect.w / nx, rect.d / nz
    return [(i, j, Rect(rect.x0 + i * tw, rect.z0 + j * td, rect.x0 + (i + 1) * tw, rect.z0 + (j + 1) * td))
            for i in range(nx) for j in range(nz)]


def _structure(g: _Graph, rid: int, rect: Rect) -> None:
    """Floor and ceiling tiles, and one wall per tile on the room's edge (as in the real scenes)."""
    tiles = _tiles(rect)
    nx, nz = max(t[0] for t in tiles) + 1, max(t[1] for t in tiles) + 1
    for _, _, t in tiles:
        cx, cz = t.center
        g.add("floor", FIXTURES["floor"], (cx, 0.0, cz), (t.w, 0.0, t.d), rid)
    for i, j, t in tiles:
        sides = [s for s, edge in (("W", i == 0), ("E", i == nx - 1), ("S", j == 0), ("N", j == nz - 1)) if edge]
        if not sides:
            continue
        if len(sides) > 1:  # a corner: the box of its two walls is the tile's cube
            box = Rect(t.x0, t.z0, t.x1, t.z1)
        else:
            box = _footprint(t, sides[0], *_span(t, sides[0]), 0.0, WALL)
        cx, cz = box.center
        g.add("wall", FIXTURES["wall"], (cx, WALL_HEIGHT / 2, cz), (box.w, WALL_HEIGHT, box.d), rid)
    for _, _, t in tiles:
        cx, cz = t.center
        g.add("ceiling", FIXTURES["ceiling"], (cx, WALL_HEIGHT, cz), (t.w, 0.0, t.d), rid)


def _plan(rng: random.Random, view: ViewRule) -> tuple[Any, ...]:
    """Layout, doors, windows and furnished rooms (raises _Retry when a room cannot be furnished)."""
    rects = _layout(rng)
    order = list(rects)
    # doors: a seeded spanning tree of the shared walls
    cands = []
    for i, a in enumerate(ROOMS):
        for b in ROOMS[i + 1:]:
            sh = _shared(rects[a], rects[b])
            if sh is not None:
                cands.append((a, b, sh))
    rng.shuffle(cands)
    cands.sort(key=lambda c: "bathroom" in c[:2])  # as in the real scenes, the bathroom has one door
    comp = {r: r for r in ROOMS}

    def root(r: str) -> str:
        while comp[r] != r:
            r = comp[r]
        return r

    links = []
    for a, b, (sa, sb, lo, hi) in cands:
        if root(a) != root(b):
            comp[root(a)] = root(b)
            t = round(rng.uniform(lo + 0.9, hi - 0.9) / 0.05) * 0.05
            links.append((a, b, sa, sb, t))
    assert len(links) == len(ROOMS) - 1, "rooms are laid out touching"
    door_sides: dict[str, list[tuple[str, float]]] = {r: [] for r in ROOMS}
    for a, b, sa, sb, t in links:
        door_sides[a].append((sa, t))
        door_sides[b].append((sb, t))
    # windows: on outside walls of two to four rooms
    wins: dict[str, list[tuple[str, float, float]]] = {r: [] for r in ROOMS}
    ww = FIXTURES["window"].size[0]
    wcands = [(r, s, lo, hi) for r in ROOMS for s in _SIDES for lo, hi in _exterior(rects, r, s)
              if hi - lo >= ww + 0.8]
    rng.shuffle(wcands)
    n_windows = rng.randint(2, 4)
    for r, s, lo, hi in wcands:
        if sum(map(len, wins.values())) >= n_windows:
            break
        if wins[r] or (r == "bathroom" and rng.random() < 0.5):
            continue
        c = rng.uniform(lo + 0.4 + ww / 2, hi - 0.4 - ww / 2)
        wins[r].append((s, c - ww / 2, c + ww / 2))
    desk_room = rng.choice(("bedroom", "livingroom"))
    second_desk = rng.random() < SECOND_DESK
    plans: dict[str, _Planner] = {}
    for name in order:
        optional = [cls for cls, p in OPTIONAL[name] if rng.random() < p]
        if name == "bathroom" and "bathtub" in optional and "stall" in optional:
            optional.remove(rng.choice(("bathtub", "stall")))
        for attempt in range(40):
            plan = _Planner(rng, name, rects[name], door_sides[name], wins[name], view)
            try:
                plan.furnish(optional if attempt < 20 else optional[: len(optional) // 2], name == desk_room,
                             second_desk)
                break
            except _Retry:
                continue
        else:
            raise _Retry(name)
        plans[name] = plan
    return rects, order, links, wins, plans



def make_apartment(index: int, seed: int = 0) -> Scene:
    """Apartment ``index`` (0-7 in our suite) as a Scene with doors, furniture and clutter."""
    rng = random.Random(f"apartment-{seed}-{index}")
    view = DEFAULT_VIEW
    for _ in range(10):  # a layout whose rooms cannot all be furnished is drawn again
        try:
            rects, order, links, wins, plans = _plan(rng, view)
            break
        except _Retry:
            continue
    else:
        raise RuntimeError(f"apartment {index} (seed {seed}): could not furnish the rooms")
    g = _Graph()
    room_ids: dict[str, int] = {}
    for name in order:
        r = rects[name]
        cx, cz = r.center
        m = 2 * ROOM_BOX_MARGIN
        room_ids[name] = g.next_id
        g.nodes.append(_node(g.next_id, name, "Rooms", (), [], (cx, 1.25, cz), (r.w + m, 3.0, r.d + m)))
    doors: list[Door] = []
    for a, b, sa, sb, t in links:
        ra = rects[a]
        if sa in ("E", "W"):
            x, z, jamb = (ra.x1 if sa == "E" else ra.x0), t, (0.12, 2.06, 0.93)
        else:
            x, z, jamb = t, (ra.z1 if sa == "N" else ra.z0), (0.93, 2.06, 0.12)
        f = FIXTURES["door"]
        did = g.add("door", f, (x, f.size[1] / 2, z), f.size, room_ids[a])
        for rname in (a, b):
            g.rel(did, "BETWEEN", room_ids[rname])
        doors.append(Door(did, (room_ids[a], room_ids[b])))
        g.add("doorjamb", FIXTURES["doorjamb"], (x, jamb[1] / 2, z), jamb, room_ids[a])

    clutter_hosts: list[tuple[int, str]] = []
    goal_ids: dict[str, int] = {}
    for name in order:
        rid, rect, plan = room_ids[name], rects[name], plans[name]
        _structure(g, rid, rect)
        for s, t0, t1 in wins[name]:
            f = FIXTURES["window"]
            fp = _footprint(rect, s, t0, t1, 0.0, f.size[2])
            c, sz = _box(fp, f.mount, f.size[1])
            g.add("window", f, c, sz, rid)
            cf = FIXTURES["curtains"]
            for tc in (t0 + cf.size[0] / 2 - 0.1, t1 - cf.size[0] / 2 + 0.1):
                fp = _footprint(rect, s, tc - cf.size[0] / 2, tc + cf.size[0] / 2, f.size[2], f.size[2] + cf.size[2])
                c, sz = _box(fp, cf.mount, cf.size[1])
                g.add("curtains", cf, c, sz, rid)
        ids: list[int] = []
        for p in plan.pieces:
            c, sz = p.box
            nid = g.add(p.cls, p.spec, c, sz, rid)
            ids.append(nid)
            if p.cls in GOAL_FURNITURE and p.cls not in goal_ids:
                goal_ids[p.cls] = nid
            # a goal target's fixed parts (its sink, a screen) stand there without an edge: the target
            # starts with nothing ON or INSIDE it
            if p.parent is not None and ids[p.parent] not in goal_ids.values():
                g.rel(nid, p.rel, ids[p.parent])
            if p.spec.holds:
                clutter_hosts.append((nid, p.cls))
        _fixtures(g, rng, rid, name, plan)

    # clutter: on and in the furniture, the goal furniture left empty
    space = Spots({"nodes": g.nodes, "edges": g.edges}, view)
    reserved = set(goal_ids.values())
    hosts = [(fid, cls) for fid, cls in clutter_hosts if fid not in reserved]
    by_host = {cls: [c.name for c in CLUTTER.values() if cls in c.hosts] for _, cls in hosts}
    hosts = [(fid, cls) for fid, cls in hosts if by_host[cls]]

    def put(fid: int, fcls: str, name: str) -> bool:
        c = CLUTTER[name]
        holds = FURNITURE[fcls].holds
        inside = (holds[0] if len(holds) == 1 else rng.choice(holds)) == "in"
        spot = space.find(fid, inside, c.size, rng)
        if spot is None:
            return False
        center, size = spot
        nid = g.add(name, c, center, size, space.room[fid])
        g.rel(nid, "INSIDE" if inside else "ON", fid)
        space.add(nid, fid, center, size)
        return True

    for fid, cls in hosts:  # pillows on beds and sofas
        if cls in ("bed", "sofa"):
            for _ in range(2 if cls == "bed" else rng.randint(0, 2)):
                put(fid, cls, "pillow")
    target = rng.randint(*CLUTTER_RANGE)
    weights = [HOST_WEIGHT.get(cls, 1.0) for _, cls in hosts]
    placed, tries = 0, 0
    while placed < target and tries < 8 * target and hosts:
        tries += 1
        k = rng.choices(range(len(hosts)), weights)[0]
        fid, cls = hosts[k]
        names = [n for n in by_host[cls] if n != "pillow"]
        if not names:
            weights[k] = 0.0
            continue
        if put(fid, cls, rng.choice(names)):
            placed += 1
        else:
            weights[k] *= 0.7
        if not any(w > 1e-3 for w in weights):
            break
    return Scene(graph={"nodes": g.nodes, "edges": g.edges}, doors=doors, name=f"apartment{index}")


def _fixtures(g: _Graph, rng: random.Random, rid: int, name: str, plan: _Planner) -> None:
    """Lamps, switches, sockets, pictures and rugs of one room."""
    rect = plan.rect
    # ceiling lamps at tile centres
    tiles = _tiles(rect)
    n_lamps = 1 if rect.w * rect.d < 30 else 2
    f = FIXTURES["ceilinglamp"]
    for _, _, t in rng.sample(tiles, n_lamps):
        cx, cz = t.center
        g.add("ceilinglamp", f, (cx, f.mount + f.size[1] / 2, cz), f.size, rid)
    pictures = {"livingroom": (2, 4), "bedroom": (2, 3), "kitchen": (1, 2), "bathroom": (0, 1)}[name]
    wanted = [("lightswitch", 1), ("powersocket", rng.randint(1, 3)), ("walllamp", rng.randint(1, 3)),
              ("wallpictureframe", rng.randint(*pictures))]
    for cls, n in wanted:
        for k in range(n):
            side = t = None
            if cls == "lightswitch" and plan.doors:
                side, t = plan.doors[0][0], plan.doors[0][1] + rng.choice((-0.8, 0.8))
            p = plan.wall_fixture(cls, side=side, t=t)
            if p is not None:
                c, sz = p.box
                g.add(cls, FIXTURES[cls], c, sz, rid)
    # rugs (real rug sizes) under the coffee table, the bed, the kitchen table, in the bathroom's middle
    fr = FIXTURES["rug"]
    anchors = {"livingroom": ("coffeetable", 0.95), "bedroom": ("bed", 0.8), "kitchen": ("kitchentable", 0.6),
               "bathroom": ("", 0.6)}
    cls, p = anchors[name]
    under = [q for q in plan.pieces if q.cls == cls]
    if rng.random() < p:
        cx, cz = under[0].fp.center if under else rect.center
        landscape = under[0].fp.w >= under[0].fp.d if under else rect.w >= rect.d
        for long, short in RUG_SIZES:
            w, d = (long, short) if landscape else (short, long)
            fp = Rect(cx - w / 2, cz - d / 2, cx + w / 2, cz + d / 2)
            if fp.within(rect, GAP) and not any(fp.overlaps(z) for z in plan.zones):
                c, sz = _box(fp, 0.0, fr.size[1])
                g.add("rug", fr, c, sz, rid)
                break


def apartment_stats(scene: Scene, view: ViewRule = DEFAULT_VIEW) -> dict[str, Any]:
    """Counts and visibility of an apartment (for tests and reports)."""
    nodes = scene.graph["nodes"]
    host: dict[int, int] = {}
    for e in scene.graph["edges"]:
        if e["relation_type"] in ("ON", "INSIDE") and int(e["to_id"]) not in scene.rooms:
            host.setdefault(int(e["from_id"]), int(e["to_id"]))
    placed = [n for n in nodes if int(n["id"]) in host and "GRABBABLE" in n["properties"]]
    small = [n for n in placed if max(n["bounding_box"]["size"]) < 0.5]

    def from_centre(n: dict[str, Any]) -> bool:
        (x, _, z), size = box_of(n)  # type: ignore[misc]
        room = scene.nodes[scene.room_of(int(n["id"]))]  # type: ignore[index]
        (rx, _, rz), _ = box_of(room)  # type: ignore[misc]
        return view.sees(max(size), horizontal_distance((rx, rz), (x, z)))

    return {
        "nodes": len(nodes),
        "grabbable": sum("GRABBABLE" in n["properties"] for n in nodes),
        "surfaces": sum("SURFACES" in n["properties"] for n in nodes),
        "floor_surfaces": sum("SURFACES" in n["properties"] and n["class_name"] == "floor" for n in nodes),
        "furniture": sum(n["class_name"] in FURNITURE and "GRABBABLE" not in n["properties"] for n in nodes),
        "placed_objects": len(placed),
        "seen_from_room_centre": sum(map(from_centre, placed)) / max(1, len(placed)),
        "small_seen_from_room_centre": sum(map(from_centre, small)) / max(1, len(small)),
    }
