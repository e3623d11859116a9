"""DynaHMRC task records, the task generator and the task file loader (dynahmrc.tex §4.1
Benchmark with Eq. ``equ:difficulty_metric``, §4.2 "all of our experiments were designed to
ensure feasibility", §4.3 Task Variations and Constraints, ``fig:robodiff`` step caps).

Three task kinds (§4.1): ``pack`` (household objects into ``tray_0``), ``sort`` (coloured solids,
each onto the panel of its colour; the targets' colours are distinct) and ``sandwich`` (a menu
stacked bottom to top on ``cutting_board_0``). Menus (ours): J = 1 a single ``bread_slice``; J = 2
a filling under a ``bread_slice`` (the §4.5 case ``[bacon_0, bread_slice_0]``); J >= 3 starts and
ends with ``bread_slice`` with distinct fillings between.

Location levels (§4.1; the reading is :mod:`.difficulty`'s): ``l = 0`` on the working table
within the tabletop manipulator's reach (``robots.ROBOT_TYPES["Ma"].reach_m`` from
``layout.manipulator_base``); ``l = 1`` in the open out of that reach: on the working table beyond
it, or on a ground surface (or in a container that is not shut) anywhere else in the apartment,
where the robots must first find it; ``l = 2`` hidden: inside a closed openable container or on an
elevated ``<x>_top`` place ("additional exploration steps": only the mobile manipulator opens, only
the drone flies up). With alpha = 0.4, gamma = 0.4 the bins work out as: easy = every target at
``l = 0`` (then y = 0); medium = the farthest target at ``l = 1`` with one mover type fetching them
all (y = 1); hard = some target at ``l = 2`` (or J = 5 all at ``l = 1``, D = 0.6).

Where targets lie (§4.1: "randomly distributed within the environment", robots "must also explore
the unknown environment to locate target objects"): an ``l = 1`` target lies in an area drawn
uniformly from the working table's far side and the apartment's rooms (then a random open slot of
that room), so most medium tasks have a target to find (:func:`targets_to_find`,
:func:`tier_summary`); an ``l = 2`` target lies in a random hidden slot the team can reach.

Feasibility is geometric and mirrors :class:`~.world.RobotWorld`'s checks (ours): a mobile robot
*fetches* a target when one of the target place's stand poses (for the mobile manipulator, which
also has ``move``, any free cell of its start component) lies in the component of its start pose
(at the working table), within its reach of the object less :data:`REACH_MARGIN_M`, and it can
*deliver*: stand somewhere it can place onto the working table at a point the tabletop manipulator
reaches. Only the mobile manipulator fetches from a closed openable container (it alone opens);
only the drone fetches from an elevated place. ``y`` is the smallest subset of {MoMa, UAV} with a
fetcher for every ``l >= 1`` target (the mobile robot is never required). A task is feasible for a
team when every ``l >= 1`` target has a fetcher of the team's types; the generator never returns
an infeasible task (§4.2: "tasks requiring aerial manipulation were not assigned to
configurations lacking a drone").
"""

from __future__ import annotations

import functools
import itertools
import json
import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .difficulty import J_MAX, LEVELS, STEP_CAPS, collaboration_factor, difficulty, level_of, location_factor, \
    quantity_factor
from .layout import RESOLUTION_M, Layout, Place, Point, distance, layout_of
from .robots import ANC_TRANSITIONS, COMPOSITIONS, REC_TRANSITIONS, ROBOT_TYPES, check_composition
from .world import COLOURS, TASK_KINDS, TaskLayout

__all__ = ["FILLINGS", "GENERATOR_VERSION", "HOUSEHOLD_OBJECTS", "IRZ_MAX_ZONES", "MOVERS", "N_APARTMENTS",
           "OBJECT_SETS", "REACH_MARGIN_M", "SHAPES", "Task", "UNSEEN_OBJECTS", "VARIATION_KINDS",
           "VARIATION_STEP_CAP", "blocking_zones", "can_deliver", "can_fetch", "closed_container",
           "collaborators_needed", "deliver_point", "feasible", "fetch_points", "fetchers", "find_zones",
           "generate_task", "generate_tasks", "hidden", "is_unseen", "load_tasks", "location_level", "position_on",
           "rec_afters", "save_tasks", "targets_to_find", "task_text", "team_codes", "teams_of", "tier_summary",
           "unseen_targets", "validate_task", "zone_blocks", "zone_candidates", "zones_feasible"]

#: Household objects of Pack Objects (§4.1, figure ``fig:task``).
HOUSEHOLD_OBJECTS = ("book", "bowl", "apple", "phone", "fork", "toothpaste", "soap", "banana", "cup", "remote",
                     "mug", "spoon")
#: Pack Objects' unseen target objects (appendix ``lab:obj_generalization``, ``tab:unseen_obj``): one
#: class for each of :data:`HOUSEHOLD_OBJECTS` (same position), none of which a generated task or the
#: fine-tuning export (:mod:`.training`) ever uses otherwise. Ours: the paper does not list its classes.
UNSEEN_OBJECTS = ("stapler", "candle", "wallet", "scissors", "sponge", "glasses", "comb", "lemon", "charger",
                  "notebook", "battery", "perfume")
#: ``objects`` of :func:`generate_task`: the seen household objects, or unseen targets (UTO).
OBJECT_SETS = ("seen", "unseen")
#: Solid shapes of Sort Solids; colours are :data:`world.COLOURS`.
SHAPES = ("cube", "cylinder", "prism", "sphere", "cone")
#: Sandwich fillings (between bread slices).
FILLINGS = ("ham", "bacon", "cheese", "lettuce", "tomato", "cucumber")
#: Robots that fetch objects (the mobile robot never carries; the tabletop manipulator never moves).
MOVERS = ("MoMa", "UAV")
#: Dynamic variation kinds (§4.3); ``None``/"none" is the static setting.
VARIATION_KINDS = ("none", "CTO", "IRZ", "ANC", "REC")
#: "Variations run at medium difficulty with the 30-step cap."
VARIATION_STEP_CAP = 30
#: Generated positions keep this far inside every reach (metres).
REACH_MARGIN_M = 0.05
#: IRZ restricts at most this many (robot, room) zones (``lab:sensitivity_dyna``: 1-3).
IRZ_MAX_ZONES = 3
#: Generated apartments used by default (``apartment = seed % N_APARTMENTS``).
N_APARTMENTS = 8
#: The generator's version, part of every task's random stream: 2 reads ``l = 1`` as "in the open
#: out of the manipulator's reach" and ``l = 2`` as "hidden" (:mod:`.difficulty`), so medium tasks
#: have targets to find (issue 26). Tasks of version 1 do not validate under it.
GENERATOR_VERSION = 2
TRIES = 80

Blocked = Mapping[str, frozenset]


# -- task record ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Task:
    """One DynaHMRC task (JSON round-trippable with :meth:`to_dict` / :meth:`from_dict`)."""

    id: str
    kind: str
    level: str
    team: str
    apartment: int
    seed: int
    targets: list[str]
    objects: list[dict[str, Any]]
    levels: list[int]
    y: int
    J: int
    L: float
    N: float
    Y: float
    D: float
    max_steps: int
    text: str
    variation: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "level": self.level, "team": self.team,
                "apartment": self.apartment, "seed": self.seed, "targets": list(self.targets),
                "objects": [dict(o, pos=list(o["pos"])) for o in self.objects], "levels": list(self.levels),
                "y": self.y, "J": self.J, "L": self.L, "N": self.N, "Y": self.Y, "D": self.D,
                "max_steps": self.max_steps, "text": self.text, "variation": self.variation}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Task":
        """A task from its dict; ValueError naming a missing or malformed field."""
        if not isinstance(d, Mapping):
            raise ValueError(f"task: expected an object, got {type(d).__name__}")
        need = ("id", "kind", "level", "team", "apartment", "seed", "targets", "objects", "levels", "y", "J", "L",
                "N", "Y", "D", "max_steps", "text")
        missing = [k for k in need if k not in d]
        if missing:
            raise ValueError(f"{', '.join(missing)}: missing field(s)")
        if not isinstance(d["objects"], list) or not all(isinstance(o, Mapping) for o in d["objects"]):
            raise ValueError("objects: must be a list of objects with handle/cls/place/inside/pos/colour")
        objs = []
        for o in d["objects"]:
            pos = o.get("pos", [0.0, 0.0])
            if not isinstance(pos, (list, tuple)) or len(pos) != 2:
                raise ValueError(f"objects[{o.get('handle')}].pos: must be [x, y], got {pos!r}")
            objs.append({"handle": str(o.get("handle", "")), "cls": str(o.get("cls", "")), "place": o.get("place"),
                         "inside": bool(o.get("inside", False)), "pos": [float(pos[0]), float(pos[1])],
                         "colour": str(o.get("colour", ""))})
        try:
            return cls(id=str(d["id"]), kind=d["kind"], level=d["level"], team=d["team"],
                       apartment=int(d["apartment"]), seed=int(d["seed"]), targets=[str(t) for t in d["targets"]],
                       objects=objs, levels=[int(v) for v in d["levels"]], y=int(d["y"]), J=int(d["J"]),
                       L=float(d["L"]), N=float(d["N"]), Y=float(d["Y"]), D=float(d["D"]),
                       max_steps=int(d["max_steps"]), text=str(d["text"]), variation=d.get("variation"))
        except (TypeError, ValueError) as e:
            raise ValueError(f"task: malformed field value ({e})") from None

    def task_layout(self) -> TaskLayout:
        """What the task puts in a :class:`~.world.RobotWorld`."""
        return TaskLayout(self.kind, list(self.targets), [dict(o, pos=tuple(o["pos"])) for o in self.objects])

    def object(self, handle: str) -> dict[str, Any]:
        for o in self.objects:
            if o["handle"] == handle:
                return o
        raise KeyError(handle)

    @property
    def layout(self) -> Layout:
        return layout_of(self.apartment)


def task_text(kind: str, targets: Sequence[str]) -> str:
    """The task sentence told to the robots."""
    names = ", ".join(targets)
    if kind == "pack":
        return f"Place {names} into the tray."
    if kind == "sort":
        return f"Place each solid onto the panel of its colour: {names}."
    if kind == "sandwich":
        return f"Make a sandwich by stacking, from bottom to top on the cutting board: {names}."
    raise ValueError(f"kind: {kind!r} not allowed; allowed: {', '.join(TASK_KINDS)}")


# -- geometry ----------------------------------------------------------------------------------
def team_codes(team: str) -> frozenset[str]:
    """The type codes of a composition."""
    return frozenset(check_composition(team).split("-"))


def teams_of(team: str, variation: str | None) -> list[str]:
    """The compositions a task must be feasible for: the team, and after ANC/REC the new team."""
    v = variation or "none"
    if v not in VARIATION_KINDS:
        raise ValueError(f"variation: {v!r} not allowed; allowed: {', '.join(VARIATION_KINDS)}")
    check_composition(team)
    if v == "ANC":
        if team not in ANC_TRANSITIONS:
            raise ValueError(f"team: ANC needs one of {', '.join(ANC_TRANSITIONS)}, got {team!r}")
        return [team, ANC_TRANSITIONS[team]]
    if v == "REC":
        if team not in REC_TRANSITIONS:
            raise ValueError(f"team: REC needs one of {', '.join(REC_TRANSITIONS)}, got {team!r}")
        return [team, *rec_afters(team)]
    if v == "IRZ" and len(team.split("-")) < 3:
        raise ValueError(f"team: IRZ needs a 3- or 4-type team ({', '.join(c for c in COMPOSITIONS if c.count('-') >= 2)}"
                         f"), got {team!r}")
    return [team]


def rec_afters(team: str) -> list[str]:
    """Every composition a REC removal leads to from ``team`` (``tab:removal_exp`` lists two per
    starting team: the reverses of both ANC transitions into it; ``robots.REC_TRANSITIONS`` keeps
    one of them, the default)."""
    return sorted({before for before, after in ANC_TRANSITIONS.items() if after == team},
                  key=lambda b: b != REC_TRANSITIONS.get(team))


def hidden(place: Place, inside: bool = False) -> bool:
    """Whether an object on/in ``place`` is hidden (``l = 2`` off the working table): inside a
    closed openable container or on an elevated place."""
    return bool(place.elevated or closed_container(place, inside))


def location_level(layout: Layout, place: str | None, pos: Sequence[float], inside: bool = False) -> int:
    """``l`` of an object at ``pos`` on (``inside``: in) ``place``: on the working table 0 within the
    tabletop manipulator's reach, else 1; elsewhere 1 in the open, 2 hidden (:func:`hidden`)."""
    if place == layout.working_table:
        return 0 if distance(layout.manipulator_base, (pos[0], pos[1])) <= ROBOT_TYPES["Ma"].reach_m else 1
    if place is None or place not in layout.places:
        return 2
    return 2 if hidden(layout.place(place), inside) else 1


def targets_to_find(task: Task) -> list[str]:
    """The targets that lie away from the working table (the robots must find them, §4.1)."""
    L = task.layout
    return [t for t in task.targets if task.object(t)["place"] != L.working_table]


@functools.lru_cache(maxsize=256)
def _start(layout: Layout, code: str) -> Point | None:
    """The start pose of a mobile robot (as the world: a working-table stand pose in the largest
    free component)."""
    t = ROBOT_TYPES[code]
    big = layout.main_component(t.radius_m, t.flies)
    if big == 0:
        return None
    lab = layout.components(t.radius_m, t.flies)
    for q in layout.place(layout.working_table).stand_poses:
        c = layout.cell(q)
        if c is not None and lab[c] == big:
            return q
    return layout.main_point(t.radius_m, t.flies)


@functools.lru_cache(maxsize=4096)
def _points(layout: Layout, code: str, place: str, blocked: frozenset) -> np.ndarray:
    """Where a robot of ``code`` can stand to act on ``place`` (an (n, 2) array)."""
    t = ROBOT_TYPES[code]
    p = layout.place(place)
    empty = np.zeros((0, 2))
    if not t.mobile or (p.elevated and not t.flies) or p.room in blocked:
        return empty
    start = _start(layout, code)
    if start is None:
        return empty
    lab = layout.components(t.radius_m, t.flies, blocked)
    sc = layout.cell(start)
    comp = lab[sc] if sc is not None else 0
    if comp == 0:
        return empty
    pts = [q for q in p.stand_poses if (c := layout.cell(q)) is not None and lab[c] == comp]
    out = np.array(pts, float).reshape(-1, 2)
    if t.can("move") and not p.elevated:
        idx = np.argwhere(lab == comp)
        xs = layout.origin[0] + (idx[:, 0] + 0.5) * RESOLUTION_M
        zs = layout.origin[1] + (idx[:, 1] + 0.5) * RESOLUTION_M
        dx = np.maximum(np.abs(xs - p.centre[0]) - p.half[0], 0.0)
        dz = np.maximum(np.abs(zs - p.centre[1]) - p.half[1], 0.0)
        near = np.hypot(dx, dz) <= t.reach_m
        out = np.concatenate([out, np.stack([xs[near], zs[near]], axis=1)])
    return out


def _blocked(blocked: Blocked | None, code: str) -> frozenset:
    return frozenset(blocked.get(code, ())) if blocked else frozenset()


def deliver_point(layout: Layout, code: str, blocked: Blocked | None = None) -> Point | None:
    """Where a robot of ``code`` can stand to put an object on the working table at a point the
    tabletop manipulator reaches (the world's place and pick checks), or None."""
    t = ROBOT_TYPES[code]
    if not t.mobile or not t.manipulates:
        return None
    table = layout.place(layout.working_table)
    base = layout.manipulator_base
    for q in _points(layout, code, layout.working_table, _blocked(blocked, code)):
        q = (float(q[0]), float(q[1]))
        if table.box_distance(q) <= t.reach_m and \
                distance(table.clamp(q), base) <= ROBOT_TYPES["Ma"].reach_m - REACH_MARGIN_M:
            return q
    return None


def can_deliver(layout: Layout, code: str, blocked: Blocked | None = None) -> bool:
    """Whether :func:`deliver_point` finds a point."""
    return deliver_point(layout, code, blocked) is not None


def closed_container(place: Place, inside: bool) -> bool:
    """Whether an object inside ``place`` starts shut in (only the mobile manipulator opens)."""
    return bool(inside and place.openable and not place.initially_open)


def fetch_points(layout: Layout, code: str, place: str, pos: Sequence[float], inside: bool = False,
                 blocked: Blocked | None = None) -> tuple[Point, Point] | None:
    """(where to stand to pick, where to stand to deliver) for a robot of ``code`` fetching the
    object at ``pos`` on/in ``place``; the pick point is a stand pose of the place when one serves
    (else a free cell the mobile manipulator reaches with ``move``). None when it cannot."""
    t = ROBOT_TYPES[code]
    if code not in MOVERS or place not in layout.places:
        return None
    p = layout.place(place)
    if closed_container(p, inside) and not t.can("open"):
        return None
    pts = _points(layout, code, place, _blocked(blocked, code))
    if not len(pts):
        return None
    d = np.hypot(pts[:, 0] - pos[0], pts[:, 1] - pos[1])
    ok = np.flatnonzero(d <= t.reach_m - REACH_MARGIN_M)
    if not len(ok):
        return None
    drop = deliver_point(layout, code, blocked)
    if drop is None:
        return None
    k = int(ok[0])
    return (float(pts[k, 0]), float(pts[k, 1])), drop


def can_fetch(layout: Layout, code: str, place: str, pos: Sequence[float], inside: bool = False,
              blocked: Blocked | None = None) -> bool:
    """Whether a robot of ``code`` can pick the object at ``pos`` on/in ``place`` and deliver it."""
    return fetch_points(layout, code, place, pos, inside, blocked) is not None


def fetchers(layout: Layout, obj: Mapping[str, Any], codes: Iterable[str] = MOVERS,
             blocked: Blocked | None = None) -> frozenset[str]:
    """The codes among ``codes`` that can fetch this object to the tabletop manipulator."""
    return frozenset(c for c in codes if c in MOVERS and
                     can_fetch(layout, c, obj["place"], obj["pos"], bool(obj.get("inside")), blocked))


def collaborators_needed(capable: Sequence[frozenset[str]]) -> int | None:
    """y: the fewest robots of :data:`MOVERS` with a fetcher for every target that needs one
    (``capable`` lists each such target's fetcher codes); None when one has none."""
    if any(not c for c in capable):
        return None
    for k in range(len(MOVERS) + 1):
        for s in itertools.combinations(MOVERS, k):
            if all(c & set(s) for c in capable):
                return k
    return None


def feasible(task: Task, team: str, blocked: Blocked | None = None) -> bool:
    """Whether ``team`` (with robots of a code barred from the rooms in ``blocked[code]``) can
    bring every target to the tabletop manipulator."""
    L = task.layout
    codes = team_codes(team)
    for t, lv in zip(task.targets, task.levels):
        if lv >= 1 and not fetchers(L, task.object(t), codes, blocked):
            return False
    return True


def zone_candidates(task: Task) -> list[tuple[str, str]]:
    """IRZ candidates (robot code, room): each mobile type of the team x each room other than the
    working table's."""
    L = task.layout
    table_room = L.place(L.working_table).room
    return [(c, r) for c in task.team.split("-") if ROBOT_TYPES[c].mobile for r in L.rooms if r != table_room]


def zones_feasible(task: Task, zones: Sequence[tuple[str, str]]) -> bool:
    """Whether the task stays feasible for its team with these (code, room) restrictions."""
    blocked: dict[str, frozenset] = {}
    for code, room in zones:
        blocked[code] = blocked.get(code, frozenset()) | {room}
    return feasible(task, task.team, blocked)


def find_zones(task: Task, n: int, order: Sequence[tuple[str, str]] | None = None) -> list[tuple[str, str]] | None:
    """``n`` distinct restrictions keeping the task feasible, preferring ``order``'s front (greedy,
    then an exhaustive search); None when there are none."""
    cands = list(order) if order is not None else zone_candidates(task)
    chosen: list[tuple[str, str]] = []
    for z in cands:
        if len(chosen) < n and zones_feasible(task, chosen + [z]):
            chosen.append(z)
    if len(chosen) == n:
        return chosen
    for combo in itertools.combinations(cands, n):
        if zones_feasible(task, combo):
            return list(combo)
    return None


def zone_blocks(task: Task, zone: tuple[str, str]) -> bool:
    """Whether the restriction ``zone`` = (code, room) bars that robot from a target it could
    otherwise reach (§4.3 IRZ, ``lab:sensitivity_dyna``: zones matter when they "block critical
    paths"): a target to find lies in ``room``, or ``room`` is the robot's only way to the target's
    place; a robot of ``code`` could stand at that place before and cannot with the zone."""
    code, room = zone
    L = task.layout
    if not ROBOT_TYPES[code].mobile:
        return False
    for t in targets_to_find(task):
        place = task.object(t)["place"]
        if len(_points(L, code, place, frozenset())) and not len(_points(L, code, place, frozenset({room}))):
            return True
    return False


def blocking_zones(task: Task) -> list[tuple[str, str]]:
    """The IRZ candidates that block a needed room or route (:func:`zone_blocks`) and keep the task
    feasible on their own (:func:`zones_feasible`)."""
    return [z for z in zone_candidates(task) if zone_blocks(task, z) and zones_feasible(task, [z])]


# -- generation --------------------------------------------------------------------------------
def position_on(layout: Layout, place: str, rng: random.Random, level: int | None = None) -> Point:
    """A random point on the top of ``place`` (for the working table, on the side of ``level``;
    for an elevated place, within the drone's reach of its hover point)."""
    p = layout.place(place)
    hx, hz = max(p.half[0] - 0.05, 0.0), max(p.half[1] - 0.05, 0.0)
    ma = ROBOT_TYPES["Ma"].reach_m
    for _ in range(200):
        q = (round(p.centre[0] + rng.uniform(-hx, hx), 3), round(p.centre[1] + rng.uniform(-hz, hz), 3))
        if p.elevated and distance(q, p.centre) > ROBOT_TYPES["UAV"].reach_m - 2 * REACH_MARGIN_M:
            continue
        if level is not None and place == layout.working_table:
            d = distance(layout.manipulator_base, q)
            if (level == 0 and d > ma - REACH_MARGIN_M) or (level == 1 and d < ma + REACH_MARGIN_M):
                continue
        return q
    raise ValueError(f"position: no point on {place} for level {level}")


def _slots(layout: Layout) -> dict[str, list[tuple[str, bool]]]:
    """Every slot (place, inside) off the working table, by room (where distractors go)."""
    out: dict[str, list[tuple[str, bool]]] = {}
    for h, p in sorted(layout.places.items()):
        if h == layout.working_table:
            continue
        if p.surface:
            out.setdefault(p.room, []).append((h, False))
        if p.container and not p.elevated:
            out.setdefault(p.room, []).append((h, True))
    return out


def _level_slots(layout: Layout, lv: int) -> dict[str, list[tuple[str, bool]]]:
    """The slots off the working table at level ``lv`` (1 in the open, 2 hidden), by room."""
    out: dict[str, list[tuple[str, bool]]] = {}
    for room, slots in _slots(layout).items():
        keep = [(h, inside) for h, inside in slots if (2 if hidden(layout.place(h), inside) else 1) == lv]
        if keep:
            out[room] = keep
    return out


def _obj(handle: str, cls: str, place: str, pos: Point, inside: bool, colour: str = "") -> dict[str, Any]:
    return {"handle": handle, "cls": cls, "place": place, "inside": inside, "pos": [pos[0], pos[1]],
            "colour": colour}


class _Namer:
    def __init__(self) -> None:
        self.n: dict[str, int] = {}

    def __call__(self, cls: str) -> str:
        k = self.n.get(cls, 0)
        self.n[cls] = k + 1
        return f"{cls}_{k}"


def _families(kind: str, j: int, n_distract: int, rng: random.Random) -> tuple[list[tuple[str, str, str]],
                                                                                  list[tuple[str, str, str]]]:
    """(handle, cls, colour) of the targets and of the distractors."""
    name = _Namer()
    if kind == "pack":
        classes = rng.sample(HOUSEHOLD_OBJECTS, j)
        targets = [(name(c), c, "") for c in classes]
        rest = [c for c in HOUSEHOLD_OBJECTS if c not in classes]
        extra = [rng.choice(rest) if rng.random() < 0.7 else rng.choice(classes) for _ in range(n_distract)]
        return targets, [(name(c), c, "") for c in extra]
    if kind == "sort":
        colours = rng.sample(COLOURS, j)
        targets = []
        for col in colours:
            cls = f"{col}_{rng.choice(SHAPES)}"
            targets.append((name(cls), cls, col))
        free = [c for c in COLOURS if c not in colours]
        extra = []
        for k in range(n_distract):
            col = free[k % len(free)] if k < 2 and free else rng.choice(COLOURS)
            cls = f"{col}_{rng.choice(SHAPES)}"
            extra.append((name(cls), cls, col))
        return targets, extra
    if j == 1:
        menu = ["bread_slice"]
    elif j == 2:
        menu = [rng.choice(FILLINGS), "bread_slice"]
    else:
        menu = ["bread_slice", *rng.sample(FILLINGS, j - 2), "bread_slice"]
    targets = [(name(c), c, "") for c in menu]
    rest = [c for c in FILLINGS if c not in menu]
    extra = [rng.choice(rest) if rest and rng.random() < 0.8 else "bread_slice" for _ in range(n_distract)]
    return targets, [(name(c), c, "") for c in extra]


def _pattern(level: str, j: int, rng: random.Random, hidden_ok: bool = True) -> list[int]:
    """Target levels for ``level``; hard without a hidden slot every team reaches (``hidden_ok``
    False: a REC task must survive removing the opener or the flyer) is five targets in the open."""
    if level == "easy":
        return [0] * j
    if level == "medium":
        ls = [rng.choice((0, 1)) for _ in range(j)]
        ls[rng.randrange(j)] = 1
        return ls
    if not hidden_ok:
        return [1] * J_MAX
    ls = [rng.choice((0, 1, 2)) for _ in range(j)]
    ls[rng.randrange(j)] = 2
    return ls


def _fits(layout: Layout, place: str, q: Point, inside: bool, needs: Sequence[frozenset[str]]) -> bool:
    """Whether every team (its mover codes in ``needs``) has a robot that fetches this object."""
    return all(any(can_fetch(layout, c, place, q, inside) for c in n) for n in needs)


def _place_target(layout: Layout, lv: int, needs: Sequence[frozenset[str]], rng: random.Random,
                  used_rooms: set[str], used_places: set[str]) -> tuple[str, Point, bool] | None:
    """(place, pos, inside) for a target at level ``lv`` that every team can fetch: ``l = 1`` in an
    area drawn uniformly from the working table's far side and the rooms (rooms already holding a
    target last), ``l = 2`` in a hidden slot of a random room."""
    table = layout.working_table
    if lv == 0:
        return table, position_on(layout, table, rng, 0), False
    slots = _level_slots(layout, lv)
    areas: list[str | None] = sorted(slots)
    if lv == 1:
        areas.append(None)  # the working table beyond the manipulator's reach
    rng.shuffle(areas)
    areas.sort(key=lambda r: r in used_rooms or (r is None and table in used_places))
    for area in areas:
        if area is None:
            for _ in range(12):
                q = position_on(layout, table, rng, 1)
                if _fits(layout, table, q, False, needs):
                    return table, q, False
            continue
        cands = list(slots[area])
        rng.shuffle(cands)
        cands.sort(key=lambda s: s[0] in used_places)
        for place, inside in cands[:6]:
            for _ in range(4):
                q = position_on(layout, place, rng)
                if _fits(layout, place, q, inside, needs):
                    return place, q, inside
    return None


def _summary(layout: Layout, objects: list[dict[str, Any]], targets: list[str]) -> tuple[list[int], int | None]:
    by = {o["handle"]: o for o in objects}
    levels = [location_level(layout, by[t]["place"], by[t]["pos"], bool(by[t]["inside"])) for t in targets]
    capable = [fetchers(layout, by[t]) for t, lv in zip(targets, levels) if lv >= 1]
    return levels, collaborators_needed(capable)


def generate_task(kind: str, level: str, team: str, seed: int, apartment: int | None = None,
                  variation: str | None = None, objects: str = "seen") -> Task:
    """A seeded task of ``kind`` whose D lies in ``level``'s bin, feasible for ``team`` (and for the
    team after an ANC/REC transition); ValueError when none is found in a bounded number of tries.
    ``objects`` ``unseen`` is :func:`unseen_targets` of the seen task (Pack Objects, static only)."""
    if objects not in OBJECT_SETS:
        raise ValueError(f"objects: {objects!r} not allowed; allowed: {', '.join(OBJECT_SETS)}")
    if objects == "unseen":
        if kind != "pack" or variation not in (None, "none"):
            raise ValueError(f"objects: 'unseen' not allowed for {kind} tasks with variation {variation or 'none'}; "
                             f"allowed: seen (the paper's unseen-object table is static Pack Objects, tab:unseen_obj)")
        return unseen_targets(generate_task(kind, level, team, seed, apartment))
    if kind not in TASK_KINDS:
        raise ValueError(f"kind: {kind!r} not allowed; allowed: {', '.join(TASK_KINDS)}")
    if level not in LEVELS:
        raise ValueError(f"level: {level!r} not allowed; allowed: {', '.join(LEVELS)}")
    v = None if variation in (None, "none") else variation
    teams = teams_of(team, v)
    apartment = seed % N_APARTMENTS if apartment is None else int(apartment)
    L = layout_of(apartment)
    needs = [team_codes(t) & frozenset(MOVERS) for t in teams]
    rng = random.Random(f"dynahmrc-task-v{GENERATOR_VERSION}|{kind}|{level}|{team}|{seed}|{apartment}|{v}")
    # a hidden target needs the opener (closed container) or the flyer (elevated place) in every team
    hidden_ok = any(all(c in n for n in needs) for c in MOVERS)
    for _ in range(TRIES):
        j = rng.randint(1, 5)
        pattern = _pattern(level, j, rng, hidden_ok)
        j = len(pattern)
        if level_of(difficulty(pattern, 0 if max(pattern) == 0 else 1)) != level and \
                level_of(difficulty(pattern, 2)) != level:
            continue
        tspecs, dspecs = _families(kind, j, rng.randint(2, 4), rng)
        objects: list[dict[str, Any]] = []
        used_rooms: set[str] = set()
        used_places: set[str] = set()
        ok = True
        for (h, cls, col), lv in zip(tspecs, pattern):
            got = _place_target(L, lv, needs, rng, used_rooms, used_places)
            if got is None:
                ok = False
                break
            place, pos, inside = got
            used_rooms.add(L.place(place).room)
            used_places.add(place)
            objects.append(_obj(h, cls, place, pos, inside, col))
        if not ok:
            continue
        targets = [t[0] for t in tspecs]
        levels, y = _summary(L, objects, targets)
        if y is None or levels != pattern:
            continue
        d = difficulty(levels, y)
        if level_of(d) != level:
            continue
        if v == "CTO":  # two distractors the objective may switch to (level 2, feasible for the team)
            for h, cls, col in dspecs[:2]:
                got = _place_target(L, 2, needs, rng, used_rooms, used_places)
                if got is None:
                    ok = False
                    break
                objects.append(_obj(h, cls, got[0], got[1], got[2], col))
            if not ok:
                continue
            dspecs = dspecs[2:]
        slots = [s for ss in _slots(L).values() for s in ss] + [(L.working_table, False)]
        for h, cls, col in dspecs:
            place, inside = rng.choice(slots)
            objects.append(_obj(h, cls, place, position_on(L, place, rng), inside, col))
        tid = f"{kind}-{level}-{team}-a{apartment}-s{seed}" + (f"-{v}" if v else "")
        task = Task(id=tid, kind=kind, level=level, team=team, apartment=apartment, seed=seed, targets=targets,
                    objects=objects, levels=levels, y=y, J=j, L=location_factor(levels), N=quantity_factor(j),
                    Y=collaboration_factor(y), D=d, max_steps=VARIATION_STEP_CAP if v else STEP_CAPS[level],
                    text=task_text(kind, targets), variation=v)
        if all(feasible(task, t) for t in teams) and (v != "IRZ" or find_zones(task, IRZ_MAX_ZONES) is not None):
            return task
    raise ValueError(f"generate_task: no feasible {kind} task at level {level!r} for team(s) {' -> '.join(teams)} "
                     f"in apartment {apartment} after {TRIES} tries (movers per team: {[sorted(n) for n in needs]}; "
                     f"a drone fetches only what lies within {ROBOT_TYPES['UAV'].reach_m:g} m of a stand pose)")


def unseen_targets(task: Task) -> Task:
    """``task`` with Unseen Target Objects (appendix ``lab:obj_generalization``: "the performance of
    DynaHMRC-Qwen3-4B on unseen target objects", static Pack Objects): each target's class, and every
    distractor of a target's class (a look-alike stays a look-alike), becomes its
    :data:`UNSEEN_OBJECTS` counterpart; handles, task text and id (``-uto``) follow. Places,
    positions, difficulty and step cap are the seen task's, so the pair differs only in what the
    targets are called: what a model fine-tuned on seen objects has never read. Ours: the paper does
    not say how its unseen tasks were placed; keeping the geometry makes the comparison paired."""
    if task.kind != "pack":
        raise ValueError(f"kind: {task.kind!r} not allowed for unseen targets; allowed: pack")
    rename = dict(zip(HOUSEHOLD_OBJECTS, UNSEEN_OBJECTS))
    classes = {task.object(h)["cls"] for h in task.targets}
    if not classes <= set(rename):
        raise ValueError(f"targets: {sorted(classes - set(rename))} are not seen household objects; allowed: "
                         f"{', '.join(HOUSEHOLD_OBJECTS)}")
    handles = {o["handle"]: rename[o["cls"]] + o["handle"][len(o["cls"]):] for o in task.objects if o["cls"] in classes}
    objects = [dict(o, handle=handles[o["handle"]], cls=rename[o["cls"]]) if o["handle"] in handles else dict(o)
               for o in task.objects]
    targets = [handles[h] for h in task.targets]
    return replace(task, id=f"{task.id}-uto", targets=targets, objects=objects, text=task_text(task.kind, targets))


def is_unseen(task: Task) -> bool:
    """Whether some target of ``task`` is one of :data:`UNSEEN_OBJECTS` (a UTO task)."""
    return any(task.object(h)["cls"] in UNSEEN_OBJECTS for h in task.targets)


def generate_tasks(kinds: Iterable[str], levels: Iterable[str], teams: Iterable[str], n_per_cell: int,
                   seed: int = 0, variation: str | None = None) -> list[Task]:
    """``n_per_cell`` tasks for every kind x level x team (seeds ``seed``, ``seed + 1``, ...)."""
    out = []
    for kind in kinds:
        for level in levels:
            for team in teams:
                out += [generate_task(kind, level, team, seed + k, variation=variation) for k in range(n_per_cell)]
    return out


def tier_summary(tasks: Iterable[Task]) -> pd.DataFrame:
    """Per difficulty tier (rows in :data:`~.difficulty.LEVELS` order, tiers without tasks left out):
    ``tasks``; D's ``D_min``, ``D_median``, ``D_max``; ``J_mean``; ``find_mean``, the mean number of
    targets to find (:func:`targets_to_find`) and ``find_0`` ... ``find_5``, how many tasks have that
    many; ``share_to_find``, the share with at least one; ``share_hidden``, the share with a target at
    ``l = 2``; ``share_other_room``, the share with a target outside the working table's room."""
    rows: dict[str, list[tuple[float, int, int, bool, bool]]] = {}
    for t in tasks:
        L = t.layout
        table_room = L.place(L.working_table).room
        find = targets_to_find(t)
        other = any(L.place(t.object(h)["place"]).room != table_room for h in find)
        rows.setdefault(t.level, []).append((t.D, t.J, len(find), max(t.levels) == 2, other))
    out = []
    for level in [lv for lv in LEVELS if lv in rows]:
        r = rows[level]
        d = np.array([x[0] for x in r])
        n_find = [x[2] for x in r]
        out.append({"level": level, "tasks": len(r), "D_min": float(d.min()), "D_median": float(np.median(d)),
                    "D_max": float(d.max()), "J_mean": float(np.mean([x[1] for x in r])),
                    "find_mean": float(np.mean(n_find)),
                    **{f"find_{k}": sum(n == k for n in n_find) for k in range(6)},
                    "share_to_find": float(np.mean([n > 0 for n in n_find])),
                    "share_hidden": float(np.mean([x[3] for x in r])),
                    "share_other_room": float(np.mean([x[4] for x in r]))})
    return pd.DataFrame(out)


# -- files -------------------------------------------------------------------------------------
def validate_task(task: Task, where: str = "task") -> Task:
    """``task`` if it is consistent; ValueError naming the field and the allowed values."""
    if task.kind not in TASK_KINDS:
        raise ValueError(f"{where}.kind: {task.kind!r} not allowed; allowed: {', '.join(TASK_KINDS)}")
    if task.level not in LEVELS:
        raise ValueError(f"{where}.level: {task.level!r} not allowed; allowed: {', '.join(LEVELS)}")
    if task.team not in COMPOSITIONS:
        raise ValueError(f"{where}.team: {task.team!r} not allowed; allowed: {', '.join(COMPOSITIONS)}")
    if (task.variation or "none") not in VARIATION_KINDS:
        raise ValueError(f"{where}.variation: {task.variation!r} not allowed; allowed: {', '.join(VARIATION_KINDS)}")
    try:
        teams_of(task.team, task.variation)
    except ValueError as e:
        raise ValueError(f"{where}.{e}") from None
    if not 0 <= task.apartment:
        raise ValueError(f"{where}.apartment: must be a generated apartment seed >= 0, got {task.apartment}")
    handles = [o["handle"] for o in task.objects]
    dup = sorted({h for h in handles if handles.count(h) > 1})
    if dup:
        raise ValueError(f"{where}.objects: duplicate handle(s) {', '.join(dup)}")
    if not task.targets:
        raise ValueError(f"{where}.targets: a task has at least one target")
    missing = [t for t in task.targets if t not in handles]
    if missing:
        raise ValueError(f"{where}.targets: {', '.join(missing)} not in objects; objects: {', '.join(handles)}")
    if task.J != len(task.targets):
        raise ValueError(f"{where}.J: {task.J} but there are {len(task.targets)} targets")
    L = layout_of(task.apartment)
    for o in task.objects:
        if o["place"] not in L.places:
            raise ValueError(f"{where}.objects[{o['handle']}].place: {o['place']!r} is not a place of apartment "
                             f"{task.apartment}; allowed: {', '.join(sorted(L.places))}")
    levels, y = _summary(L, task.objects, task.targets)
    if list(task.levels) != levels:
        raise ValueError(f"{where}.levels: {list(task.levels)} inconsistent with the objects' positions {levels}")
    if task.kind == "sort":
        cols = [task.object(t)["colour"] for t in task.targets]
        bad = [c for c in cols if c not in COLOURS]
        if bad or len(set(cols)) != len(cols):
            raise ValueError(f"{where}.objects: sort targets need distinct colours among {', '.join(COLOURS)}, "
                             f"got {cols}")
    if y is None or y != task.y:
        raise ValueError(f"{where}.y: {task.y} inconsistent with the targets' fetchers (y = {y})")
    d = difficulty(levels, y)
    if abs(d - task.D) > 1e-6 or level_of(d) != task.level:
        raise ValueError(f"{where}.D: {task.D} inconsistent (computed {d:.4f}, level {level_of(d)}, stated "
                         f"{task.level})")
    for t in teams_of(task.team, task.variation):
        if not feasible(task, t):
            raise ValueError(f"{where}.team: the task is infeasible for {t}")
    return task


def load_tasks(path: str | Path) -> list[Task]:
    """Tasks from a JSON list of task dicts, each validated."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"tasks: {path} must hold a JSON list of task objects")
    out = []
    for i, d in enumerate(data):
        try:
            task = Task.from_dict(d)
        except ValueError as e:
            raise ValueError(f"tasks[{i}].{e}") from None
        out.append(validate_task(task, f"tasks[{i}]"))
    return out


def save_tasks(tasks: Iterable[Task], path: str | Path) -> Path:
    """Write tasks as a JSON list (the format :func:`load_tasks` reads)."""
    p = Path(path)
    p.write_text(json.dumps([t.to_dict() for t in tasks], indent=1), encoding="utf-8")
    return p
