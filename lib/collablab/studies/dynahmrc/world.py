"""The DynaHMRC world: robots with poses, objects on places, the task's target receptacle and
every feedback kind of ``tab:feeb_description`` (dynahmrc.tex §3.3, §4.1-4.3).

Robots act one after another within a step (``algo:collaboration``); :meth:`RobotWorld.execute`
applies one atomic action and returns its :class:`Feedback`. Feedback kinds (``kind``):

- successes: ``navigation_success`` (reports the objects on the place's surface, and inside it
  when it is an open container), ``open_success`` (reports what is inside and where),
  ``move_success``, ``pick_success``, ``place_success``, ``communicate_success``, ``wait``;
- ``navigation_failed_1`` start or end point on an obstacle or off the map (a stand pose too
  close to furniture for this robot's radius, or where another ground robot stands);
  ``navigation_failed_2`` the target is not a navigable place of this robot's scene graph (or the
  stand pose does not exist); ``navigation_failed_3`` the pose reached is farther than the robot's
  tolerance from the target pose (no path to it: the robot ends at the nearest reachable point);
  ``navigation_failed_4`` capability or environment: an elevated place for a ground robot, or a
  restricted zone (IRZ) on the way or at the goal;
- ``move_failed_k``: the same kinds (``move`` calls the navigation API, the table says); kind 2 never
  occurs, since a move names no target;
- ``open_failed_1`` already open or cannot be opened; ``open_failed_2`` out of the arm's range;
- ``pick_failed_1`` the gripper holds something; ``pick_failed_2`` the object is not in this
  robot's scene graph; ``pick_failed_3`` arm planning's start or goal state is invalid (inside a
  closed container, on an elevated place for a ground arm, held by another robot, not the top of
  a sandwich stack); ``pick_failed_4`` the end effector cannot reach it: the distance is reported,
  and for a mobile manipulator the object's offset from the base along x and y;
- ``place_failed_1`` empty gripper; ``place_failed_2`` the object named is not the one held;
  ``place_failed_3`` the object cannot be put at that place (unknown, closed, elevated for a ground
  arm, or out of reach); ``place_failed_4`` the placement violates the task's (implicit) constraint:
  only the tabletop manipulator places onto the target receptacle (checked before reach: the rule
  answers the request itself, so any attempt reveals it);
- ``invalid_action``: not an action of this robot's type (``tab:atomic_action``) or not parseable.

Every feedback ends with the common Target Task Status line.

Decisions the paper leaves open (ours, tested in tests/test_dynahmrc_world.py):

- A robot's scene graph holds the layout's places it can navigate to (all of them for a drone, the
  ground places for a ground robot, the working table and the receptacles for the tabletop
  manipulator) and the objects it has itself perceived, where it perceived them. The tabletop
  manipulator perceives the working table every step (its camera); everyone else perceives through
  navigation and open feedback. Messages never write into a scene graph.
- An object put on a place lies at the point of the place nearest the robot (a hand-off lands near
  the giver); on the cutting board it goes on top of the stack; in the tray or on a panel it is in
  the receptacle.
- Ground robots cannot stand where another ground robot stands (Navigation Failed (1)); drones fly
  above them.
- A zone closes a room to one robot: it may not enter it (a goal inside, or a path through it, is
  Navigation/Move Failed (4)); a robot standing inside the room when it closes may still leave.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

from .actions import Action, ActionError, parse_action
from .layout import MOVE_LIMIT_M, Layout, Place, Point, distance
from .robots import MANIPULATION, RobotType, robot_type

__all__ = ["COLOURS", "FEEDBACK_KINDS", "Feedback", "Message", "Obj", "Robot", "RobotWorld", "TASK_KINDS", "TaskLayout"]

TASK_KINDS = ("pack", "sort", "sandwich")
COLOURS = ("red", "orange", "yellow", "green", "blue", "purple")
FEEDBACK_KINDS = (
    "navigation_success", "open_success", "move_success", "pick_success", "place_success", "communicate_success",
    "wait", "invalid_action",
    *(f"navigation_failed_{k}" for k in range(1, 5)), *(f"move_failed_{k}" for k in range(1, 5)),
    "open_failed_1", "open_failed_2", *(f"pick_failed_{k}" for k in range(1, 5)),
    *(f"place_failed_{k}" for k in range(1, 5)),
)


@dataclass
class Obj:
    """An object: where it is (a place, inside it or on it, at a point) or who holds it."""

    handle: str
    cls: str
    place: str | None
    pos: Point
    inside: bool = False
    colour: str = ""
    held_by: str | None = None


@dataclass
class Message:
    sender: str
    to: tuple[str, ...]
    content: str
    step: int


@dataclass
class Robot:
    """One robot: its type, pose, gripper, scene graph of objects and inbox."""

    name: str
    type: RobotType
    pos: Point
    held: str | None = None
    active: bool = True
    at: str | None = None  # the place it last reached
    known: dict[str, str] = field(default_factory=dict)  # object -> place it was perceived at
    inbox: list[Message] = field(default_factory=list)


@dataclass(frozen=True)
class Feedback:
    """The outcome of one action: ``ok``, its ``kind`` (:data:`FEEDBACK_KINDS`) and the text."""

    robot: str
    action: str
    ok: bool
    kind: str
    text: str
    found: tuple[str, ...] = ()


@dataclass
class TaskLayout:
    """What a task puts in the world: its kind, targets and every object's start.

    ``targets`` is ordered (the sandwich menu from bottom to top; for sort, each target's colour is
    its panel). ``objects`` are dicts with ``handle``, ``cls``, ``place``, ``inside`` and optionally
    ``pos`` and ``colour``."""

    kind: str
    targets: list[str]
    objects: list[dict[str, Any]]


class RobotWorld:
    """Ground truth of one episode on a :class:`~.layout.Layout`."""

    def __init__(self, layout: Layout, team: Sequence[tuple[str, str]], task: TaskLayout) -> None:
        if task.kind not in TASK_KINDS:
            raise ValueError(f"task.kind: {task.kind!r} not allowed; allowed: {', '.join(TASK_KINDS)}")
        self.layout = layout
        self.kind = task.kind
        self.targets = list(task.targets)
        self.step = 0
        self.open: dict[str, bool] = {h: p.initially_open for h, p in layout.places.items()}
        self.receptacles: dict[str, Place] = self._receptacles()
        self.stack: list[str] = []  # sandwich: cutting board, bottom to top
        self.restricted: dict[str, set[str]] = {}
        self.objects: dict[str, Obj] = {}
        for spec in task.objects:
            self.add_object(spec)
        self.robots: dict[str, Robot] = {}
        for name, code in team:
            self.add_robot(name, code)

    # -- setup -------------------------------------------------------------------------------
    def _receptacles(self) -> dict[str, Place]:
        L = self.layout
        table = L.place(L.working_table)
        base = L.manipulator_base
        toward = (table.centre[0] - base[0], table.centre[1] - base[1])
        norm = math.hypot(*toward) or 1.0
        ux, uz = toward[0] / norm, toward[1] / norm
        px, pz = -uz, ux  # along the edge
        centre = (base[0] + ux * 0.45, base[1] + uz * 0.45)

        def rec(handle: str, cls: str, c: Point, half: float, container: bool) -> Place:
            return Place(handle, cls, table.room, (round(c[0], 3), round(c[1], 3)), (half, half), table.top_m + 0.02,
                         surface=not container, container=container, openable=False, initially_open=True)

        if self.kind == "pack":
            return {"tray_0": rec("tray_0", "tray", centre, 0.2, True)}
        if self.kind == "sandwich":
            return {"cutting_board_0": rec("cutting_board_0", "cutting_board", centre, 0.18, False)}
        out = {}
        for k, colour in enumerate(COLOURS):  # six panels in a 3x2 block in front of the base
            a, b = (k % 3 - 1) * 0.22, (k // 3) * 0.22 + 0.3
            c = (base[0] + ux * b + px * a, base[1] + uz * b + pz * a)
            out[f"{colour}_panel"] = rec(f"{colour}_panel", "panel", c, 0.1, False)
        return out

    def add_object(self, spec: Mapping[str, Any]) -> Obj:
        """Put an object in the world (``place`` a layout place or a receptacle)."""
        handle, place = str(spec["handle"]), spec.get("place")
        if handle in getattr(self, "objects", {}):
            raise ValueError(f"objects: duplicate handle {handle!r}")
        if place is not None and place not in self.layout.places and place not in self.receptacles:
            raise ValueError(f"objects[{handle}].place: {place!r} is not a place of the layout; allowed: "
                             f"{', '.join(sorted(self.layout.places))}")
        pos = spec.get("pos")
        p = self.place_of(place) if place else None
        if pos is None:
            pos = p.centre if p else (0.0, 0.0)
        o = Obj(handle, str(spec.get("cls", handle.rsplit("_", 1)[0])), place, (float(pos[0]), float(pos[1])),
                inside=bool(spec.get("inside", False)), colour=str(spec.get("colour", "")))
        self.objects[handle] = o
        if place == "cutting_board_0":
            self.stack.append(handle)
        return o

    def add_robot(self, name: str, code: str) -> Robot:
        """A robot joins at its start pose (the tabletop manipulator at its base; others at the working
        table's free stand poses, then the free points nearest them)."""
        t = robot_type(code)
        if name in self.robots:
            raise ValueError(f"team: duplicate robot name {name!r}")
        if code == "Ma":
            pos = self.layout.manipulator_base
        else:
            pos = self._start_pose(t)
        r = Robot(name, t, pos, at=self.layout.working_table if code == "Ma" else None)
        self.robots[name] = r
        if code == "Ma":
            self._perceive_table(r)
        return r

    def _start_pose(self, t: RobotType) -> Point:
        L = self.layout
        table = L.place(L.working_table)
        taken = [r.pos for r in self.robots.values() if r.type.mobile and not r.type.flies]
        candidates = list(table.stand_poses)
        lab = L.components(t.radius_m, t.flies)
        base_cell = L.main_component(t.radius_m, t.flies)
        for q in candidates:
            c = L.cell(q)
            if c is not None and lab[c] == base_cell and (t.flies or all(distance(q, p) > 0.7 for p in taken)):
                return q
        q = L.reach(candidates[0] if candidates else table.centre, table.centre, t.radius_m, t.flies)
        return q if q is not None else L.main_point(t.radius_m, t.flies)

    def remove_robot(self, name: str) -> str | None:
        """Disconnect a robot without warning (REC). What it holds drops onto the place it last
        reached (the working table for the tabletop manipulator), or onto the nearest surface when
        it stood at no place (after a ``move``: our decision, so the task stays feasible); returns the
        dropped object's handle."""
        r = self.robots[name]
        r.active = False
        dropped = r.held
        if dropped is not None:
            o = self.objects[dropped]
            at = r.at if r.at in self.layout.places else min(
                (p for p in self.layout.ground_places() if p.surface),
                key=lambda p: (p.box_distance(r.pos), p.handle)).handle
            p = self.place_of(at)
            o.held_by, o.place, o.inside, o.pos = None, at, False, p.clamp(r.pos)
            r.held = None
        return dropped

    def clone(self) -> "RobotWorld":
        """A copy that shares the immutable layout (for search baselines)."""
        other = object.__new__(RobotWorld)
        other.__dict__.update(self.__dict__)
        other.targets = list(self.targets)
        other.open = dict(self.open)
        other.stack = list(self.stack)
        other.restricted = {k: set(v) for k, v in self.restricted.items()}
        other.objects = {h: replace(o) for h, o in self.objects.items()}
        other.robots = {n: replace(r, known=dict(r.known), inbox=list(r.inbox)) for n, r in self.robots.items()}
        return other

    # -- queries ------------------------------------------------------------------------------
    def place_of(self, handle: str) -> Place:
        return self.receptacles[handle] if handle in self.receptacles else self.layout.place(handle)

    def active(self) -> list[Robot]:
        return [r for r in self.robots.values() if r.active]

    def navigable(self, robot: Robot) -> list[str]:
        """The places in this robot's scene graph it may name as navigation targets."""
        if not robot.type.mobile:
            return []
        return [h for h, p in self.layout.places.items() if robot.type.flies or not p.elevated]

    def visible_objects(self, place: str) -> list[str]:
        """Objects perceivable at a place now: on it, and inside it when it is open."""
        open_ = self.open.get(place, True)
        return sorted(h for h, o in self.objects.items() if o.place == place and o.held_by is None
                      and (not o.inside or open_))

    def target_place_ok(self, obj: str) -> bool:
        """Whether a target object is where the task wants it."""
        o = self.objects[obj]
        if self.kind == "pack":
            return o.place == "tray_0"
        if self.kind == "sort":
            return o.place == f"{o.colour}_panel"
        return False

    def placed_targets(self) -> list[str]:
        """Targets correctly placed (sandwich: the longest prefix of the menu that the stack matches)."""
        if self.kind == "sandwich":
            n = 0
            for want, have in zip(self.targets, self.stack):
                if want != have:
                    break
                n += 1
            return self.targets[:n]
        return [t for t in self.targets if t in self.objects and self.target_place_ok(t)]

    def wrong_in_receptacle(self) -> list[str]:
        """Objects in the target receptacle that should not be there (non-targets; for sort also a
        solid on the wrong panel; for sandwich every layer above the matching prefix)."""
        if self.kind == "sandwich":
            return self.stack[len(self.placed_targets()):]
        wrong = []
        for h, o in self.objects.items():
            if o.place in self.receptacles and (h not in self.targets or not self.target_place_ok(h)):
                wrong.append(h)
        return sorted(wrong)

    def partial_success(self) -> float:
        """PS (§4.4): correctly placed targets minus misplaced objects in the receptacle, over J,
        clipped at 0. The subtraction is our reading of the COHERENT failure case
        (``tab:centralized_failure_case``: two of three targets plus one non-target in the tray give
        ``PartSuccess=0.333``)."""
        j = len(self.targets)
        return max(0.0, (len(self.placed_targets()) - len(self.wrong_in_receptacle())) / j) if j else 0.0

    def success(self) -> bool:
        return len(self.placed_targets()) == len(self.targets) and not self.wrong_in_receptacle()

    def task_status(self) -> str:
        """The Target Task Status line (``tab:feeb_description``, common feedback)."""
        if self.kind == "pack":
            inside = sorted(h for h, o in self.objects.items() if o.place == "tray_0")
            return f"Latest Task Progress Status: {inside or 'nothing'} has been placed in the tray."
        if self.kind == "sandwich":
            return (f"Latest Task Progress Status: {self.stack or 'nothing'} is placed on the cutting board one by "
                    f"one in stacking order (bottom to top).")
        on = {c: sorted(h for h, o in self.objects.items() if o.place == f"{c}_panel") for c in COLOURS}
        text = "; ".join(f"{c} panel: {v}" for c, v in on.items() if v) or "no solid is on any panel"
        return f"Latest Task Progress Status: {text}."

    # -- perception -------------------------------------------------------------------------
    def _see(self, robot: Robot, place: str) -> list[str]:
        seen = self.visible_objects(place)
        for h, p in list(robot.known.items()):
            if p == place and h not in seen and self.objects[h].held_by != robot.name:
                del robot.known[h]
        for h in seen:
            robot.known[h] = place
        return seen

    def _perceive_table(self, robot: Robot) -> None:
        for place in [self.layout.working_table, *self.receptacles]:
            self._see(robot, place)

    def perceive(self) -> None:
        """What cameras see without acting: the tabletop manipulator's working table."""
        for r in self.active():
            if r.type.code == "Ma":
                self._perceive_table(r)

    # -- execution ----------------------------------------------------------------------------
    def execute(self, name: str, action: Action | str) -> Feedback:
        """Apply one action of robot ``name`` and return its feedback."""
        robot = self.robots[name]
        if isinstance(action, str):
            try:
                action = parse_action(action)
            except ActionError as e:
                return self._fb(robot, action[:120], False, "invalid_action", f"Invalid action: {e}")
        text = action.text()
        if not robot.active:
            raise ValueError(f"robot {name!r} has been removed from the team")
        if not robot.type.can(action.name):
            return self._fb(robot, text, False, "invalid_action",
                            f"Invalid action: {robot.name} ({robot.type.kind}) cannot {action.name}; its actions: "
                            f"{', '.join(robot.type.actions)}.")
        fn = getattr(self, f"_do_{action.name}")
        return fn(robot, action, text)

    def _fb(self, robot: Robot, action: str, ok: bool, kind: str, text: str, found: Iterable[str] = ()) -> Feedback:
        assert kind in FEEDBACK_KINDS, kind
        return Feedback(robot.name, action, ok, kind, f"{text} {self.task_status()}", tuple(found))

    def _go(self, robot: Robot, goal: Point, text: str, prefix: str, goal_room: str) -> Feedback | None:
        """Drive toward ``goal``; a failure's feedback, or None when the robot arrived."""
        L, t = self.layout, robot.type
        blocked = frozenset(self.restricted.get(robot.name, ()))
        if L.cell(goal) is None or not L.is_free(goal, t.radius_m, t.flies):
            return self._fb(robot, text, False, f"{prefix}_failed_1",
                            "Failed: the end point of global path planning falls on an obstacle or outside the map.")
        if not t.flies:
            for other in self.active():
                if other is not robot and other.type.mobile and not other.type.flies and \
                        distance(other.pos, goal) < t.radius_m + other.type.radius_m:
                    return self._fb(robot, text, False, f"{prefix}_failed_1",
                                    f"Failed: the end point is occupied ({other.name} stands there).")
        if goal_room in blocked:
            return self._fb(robot, text, False, f"{prefix}_failed_4",
                            f"Failed: {goal_room or 'the target'} is a restricted or inaccessible zone for "
                            f"{robot.name}.")
        blocked = blocked - {L.room_at(robot.pos)}  # a robot caught inside a new zone may leave it
        end = L.reach(robot.pos, goal, t.radius_m, t.flies, blocked)
        if end is None:
            return self._fb(robot, text, False, f"{prefix}_failed_1",
                            "Failed: the starting point of global path planning is invalid.")
        if blocked and distance(end, goal) > t.pose_tolerance_m and \
                distance(L.reach(robot.pos, goal, t.radius_m, t.flies) or end, goal) <= t.pose_tolerance_m:
            return self._fb(robot, text, False, f"{prefix}_failed_4",
                            f"Failed: the way to the target crosses a restricted or inaccessible zone for "
                            f"{robot.name}.")
        robot.pos = end
        if distance(end, goal) > t.pose_tolerance_m:
            robot.at = None
            return self._fb(robot, text, False, f"{prefix}_failed_3",
                            f"Failed: the robot stopped at [{end[0]:.2f}, {end[1]:.2f}], "
                            f"{distance(end, goal):.2f} m from the target pose (tolerance "
                            f"{t.pose_tolerance_m:.2f} m).")
        robot.pos = goal
        return None

    def _do_navigate(self, robot: Robot, a: Action, text: str) -> Feedback:
        L = self.layout
        if a.target not in L.places:
            return self._fb(robot, text, False, "navigation_failed_2",
                            f"Failed: {a.target} does not exist in the scene graph or does not support navigation.")
        p = L.place(a.target)
        if p.elevated and not robot.type.flies:
            return self._fb(robot, text, False, "navigation_failed_4",
                            f"Failed: {a.target} is an elevated area that {robot.name} ({robot.type.kind}) cannot "
                            f"reach.")
        if not 0 <= a.pose < len(p.stand_poses):
            return self._fb(robot, text, False, "navigation_failed_2",
                            f"Failed: {a.target} has no stand_pose_{a.pose} (it has {len(p.stand_poses)}).")
        bad = self._go(robot, p.stand_poses[a.pose], text, "navigation", p.room)
        if bad:
            return bad
        robot.at = a.target
        seen = self._see(robot, a.target)
        where = "in/on" if p.container and self.open.get(a.target, True) else "on"
        found = f" {seen} are found {where} the {a.target}." if seen else f" No object was found on the {a.target}."
        return self._fb(robot, text, True, "navigation_success",
                        f"Robot successfully reached the target {a.target}-stand pose {a.pose}.{found}", seen)

    def _do_move(self, robot: Robot, a: Action, text: str) -> Feedback:
        if math.hypot(a.dx, a.dy) > MOVE_LIMIT_M:
            return self._fb(robot, text, False, "move_failed_1",
                            f"Failed: a move of more than {MOVE_LIMIT_M:g} m ends outside the local costmap.")
        goal = (round(robot.pos[0] + a.dx, 3), round(robot.pos[1] + a.dy, 3))
        bad = self._go(robot, goal, text, "move", self.layout.room_at(goal))
        if bad:
            return bad
        robot.at = None
        return self._fb(robot, text, True, "move_success",
                        f"Robot successfully moved {a.dx:g} m along x and {a.dy:g} m along y.")

    def _do_open(self, robot: Robot, a: Action, text: str) -> Feedback:
        L = self.layout
        p = L.places.get(a.target)
        if p is None or not p.openable or self.open.get(a.target, True):
            return self._fb(robot, text, False, "open_failed_1",
                            f"Failed: {a.target} is already open or cannot be opened.")
        if p.box_distance(robot.pos) > robot.type.reach_m:
            return self._fb(robot, text, False, "open_failed_2",
                            f"Failed: {a.target} is beyond the operational range of {robot.name} "
                            f"({p.box_distance(robot.pos):.2f} m > {robot.type.reach_m:.2f} m).")
        self.open[a.target] = True
        seen = self._see(robot, a.target)
        inside = [f"{h} at [{self.objects[h].pos[0]:.2f}, {self.objects[h].pos[1]:.2f}]" for h in seen]
        return self._fb(robot, text, True, "open_success",
                        f"Robot successfully opened {a.target}. "
                        + (f"Inside: {inside}." if inside else "Nothing is inside."), seen)

    def _do_pick(self, robot: Robot, a: Action, text: str) -> Feedback:
        if robot.held is not None:
            return self._fb(robot, text, False, "pick_failed_1", f"Failed: the gripper is holding {robot.held}.")
        o = self.objects.get(a.target)
        if o is None or a.target not in robot.known:
            return self._fb(robot, text, False, "pick_failed_2",
                            f"Failed: the scene graph of {robot.name} has no information about {a.target}.")
        p = self.place_of(o.place) if o.place else None
        if o.held_by is not None or p is None:
            return self._fb(robot, text, False, "pick_failed_3",
                            f"Failed: the initial state of arm planning is invalid ({a.target} is held by "
                            f"{o.held_by}).")
        if o.inside and not self.open.get(o.place, True):
            return self._fb(robot, text, False, "pick_failed_3",
                            f"Failed: the target state is invalid ({a.target} is inside the closed {o.place}).")
        if p.elevated and not robot.type.flies:
            return self._fb(robot, text, False, "pick_failed_3",
                            f"Failed: the target state is invalid ({a.target} is on an elevated area).")
        if o.place == "cutting_board_0" and self.stack and self.stack[-1] != a.target:
            return self._fb(robot, text, False, "pick_failed_3",
                            f"Failed: the target state is invalid ({a.target} lies under {self.stack[-1]}).")
        d = distance(robot.pos, o.pos)
        if d > robot.type.reach_m:
            extra = ""
            if robot.type.code == "MoMa":
                extra = (f" Relative position of {a.target} to the base: dx = {o.pos[0] - robot.pos[0]:.2f} m, "
                         f"dy = {o.pos[1] - robot.pos[1]:.2f} m.")
            return self._fb(robot, text, False, "pick_failed_4",
                            f"Failed: the distance between the end effector and {a.target} is {d - robot.type.reach_m:.2f} m"
                            f" beyond the allowable range.{extra}")
        if o.place == "cutting_board_0":
            self.stack.pop()
        o.place, o.inside, o.held_by = None, False, robot.name
        robot.held = a.target
        return self._fb(robot, text, True, "pick_success", f"Robot successfully picked {a.target}.")

    def _do_place(self, robot: Robot, a: Action, text: str) -> Feedback:
        if robot.held is None:
            return self._fb(robot, text, False, "place_failed_1", "Failed: the gripper is empty.")
        if robot.held != a.target:
            return self._fb(robot, text, False, "place_failed_2",
                            f"Failed: {a.target} is not the object being grasped ({robot.held}).")
        if a.where not in self.layout.places and a.where not in self.receptacles:
            return self._fb(robot, text, False, "place_failed_3",
                            f"Failed: {a.target} has not been placed at {a.where}: no such place.")
        p = self.place_of(a.where)
        if (p.container and not p.surface and not self.open.get(a.where, True)) or (p.elevated and not robot.type.flies):
            return self._fb(robot, text, False, "place_failed_3",
                            f"Failed: {a.target} has not been placed at {a.where} (closed or out of reach).")
        if a.where in self.receptacles and robot.type.code not in MANIPULATION:
            return self._fb(robot, text, False, "place_failed_4",
                            f"Failed: placing {a.target} on/into {a.where} violates the task constraints.")
        d = p.box_distance(robot.pos)
        if d > robot.type.reach_m:
            return self._fb(robot, text, False, "place_failed_3",
                            f"Failed: {a.target} has not been placed at {a.where}: it is {d:.2f} m away "
                            f"(reach {robot.type.reach_m:.2f} m).")
        o = self.objects[a.target]
        o.held_by, o.place = None, a.where
        o.inside = p.container and not p.surface
        o.pos = p.centre if a.where in self.receptacles else p.clamp(robot.pos)
        robot.held = None
        robot.known[a.target] = a.where
        if a.where == "cutting_board_0":
            self.stack.append(a.target)
        return self._fb(robot, text, True, "place_success", f"Robot successfully placed {a.target} on/into {a.where}.")

    def _do_communicate(self, robot: Robot, a: Action, text: str) -> Feedback:
        names = [n for n in self.robots if n != robot.name] if a.to == ("all",) else list(a.to)
        unknown = [n for n in names if n not in self.robots]
        if unknown or not names:
            return self._fb(robot, text, False, "invalid_action",
                            f"Invalid action: no teammate named {unknown or names}; teammates: "
                            f"{', '.join(n for n in self.robots if n != robot.name)}.")
        m = Message(robot.name, tuple(names), a.content, self.step)
        for n in names:
            if self.robots[n].active:  # a removed robot's messages vanish without notice (REC)
                self.robots[n].inbox.append(m)
        return self._fb(robot, text, True, "communicate_success",
                        f"The message has been successfully sent to {names}.")

    def _do_wait(self, robot: Robot, a: Action, text: str) -> Feedback:
        return self._fb(robot, text, True, "wait", "Robot waits.")
