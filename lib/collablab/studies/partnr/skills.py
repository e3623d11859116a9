"""PARTNR's oracle skills on our world (observe_share_predict.txt §A.1.1; PARTNR's
``conf/motor_skills``): what each skill needs, how it fails and how many simulation steps it takes.

A skill becomes a list of :class:`Phase` (walk to a point, look, act); the episode runs the
phases of both agents concurrently in simulation time. Checks happen twice: when the skill is
chosen (the tool is the agent's, the arguments name entities of the agent's own world graph)
and when its act phase comes (the world may have changed meanwhile: the partner took the cup).

Step costs (PARTNR's configs where they give one, our decisions otherwise):

- walking: to a room's centre, to a furniture's near side, or to 0.6 m of where the agent last
  saw an object (its own belief, not the truth); :data:`STEP_M` metres per step along the door path; PARTNR's Navigate stops at 600
  steps, Explore at 2400, Rearrange at 1000 (``max_skill_steps``; a timed-out skill fails where
  the agent got to);
- Pick and Place: 10 steps (``wait_time_for_obj_to_grasp`` / ``..._to_place``), within 2 m
  (``grasping_distance`` / ``placing_distance``); Open and Close: 10 steps within 2 m
  (``max_dis_interact_art``);
- Clean and Fill: a seeded 10-15 steps, Pour, PowerOn, PowerOff: 2-3 steps
  (``oracle_skill_duration_range``), in place: within :data:`REACH_M` of the object, and near a
  faucet (a sink or bathtub within :data:`REACH_M`) for Fill and for objects cleaned under a
  faucet; Pour empties the held container into the target; an object put on a room's floor
  lands at the agent's feet (anywhere in that room is within reach);
- Explore[room]: walk into the room and stop at every piece of furniture in it (nearest first),
  :data:`LOOK_STEPS` steps at each; Wait: :data:`WAIT_STEPS` steps; Done: the agent stops.

Decided here: an agent holds at most one object (Pick's description); Place ``within`` needs a
container that is open; ``next_to`` needs the reference object on the target furniture; the
robot has no object-state tools (its grammar omits them, §A.1.2): calling one is a failed action.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Callable

from .calls import HUMAN_TOOLS, ROBOT_TOOLS, ToolCall
from ...world.views import horizontal_distance
from .world import FLOOR, Beliefs, Point, World

STEP_M = 0.04
#: Chosen so that crossing one of our apartments (about 10 m) takes about 250 steps, the order of
#: the 92-176 simulation steps per high-level action the paper reports (§A.3.1).
REACH_M = 2.0
LOOK_STEPS = 5
WAIT_STEPS = 50
MAX_STEPS = {"Navigate": 600, "Explore": 2400, "Rearrange": 1000, "Pick": 25, "Place": 25, "Open": 10, "Close": 10,
             "Clean": 1000, "Fill": 1000, "Pour": 1000, "PowerOn": 1000, "PowerOff": 1000, "Wait": 1_000_000}
DURATION = {"Pick": (10, 10), "Place": (10, 10), "Open": (10, 10), "Close": (10, 10), "Clean": (10, 15),
            "Fill": (10, 15), "Pour": (2, 3), "PowerOn": (2, 3), "PowerOff": (2, 3)}
ROLE_TOOLS = {"robot": ROBOT_TOOLS, "human": HUMAN_TOOLS}


@dataclass
class Phase:
    """One timed part of a skill: ``walk`` to ``to``, ``look`` around, or ``act`` (``effect``
    returns a failure message or None)."""

    kind: str
    steps: int
    to: Point | None = None
    effect: Callable[[], str | None] | None = None


@dataclass
class Plan:
    """A chosen skill: its phases, or the reason it failed at once (0 steps)."""

    call: ToolCall
    phases: list[Phase] = field(default_factory=list)
    error: str | None = None
    cap: int = 0


def _walk(world: World, start: Point, goal: Point) -> tuple[list[Phase], Point]:
    phases, here = [], start
    for p in world.path(start, goal):
        d = horizontal_distance(here, p)
        if d > 1e-9:
            phases.append(Phase("walk", max(1, math.ceil(d / STEP_M)), to=p))
        here = p
    return phases, here


def _dist_to(world: World, p: Point, handle: str) -> float:
    """Horizontal distance from ``p`` to an entity's box (centre distance minus its half extent)."""
    return max(0.0, horizontal_distance(p, world.position(handle)) - world.half_extent(handle))


def _steps(rng: random.Random, name: str) -> int:
    lo, hi = DURATION[name]
    return rng.randint(lo, hi)


class Skills:
    """Turns a tool call of ``agent`` into phases over ``world`` (see the module docstring)."""

    def __init__(self, world: World, rng: random.Random) -> None:
        self.world, self.rng = world, rng
        self.holding: dict[int, str | None] = {}

    # -- choose-time checks ------------------------------------------------------------------
    def plan(self, agent: int, role: str, call: ToolCall, beliefs: Beliefs) -> Plan:
        w = self.world
        if call.name not in ROLE_TOOLS[role] and call.name != "Done":
            return Plan(call, error=f"{call.name} is not one of your tools; yours: {', '.join(ROLE_TOOLS[role])}")
        for a in call.args:
            kind = w.entity(a)
            if a in ("on", "within", "next_to", "None", ""):
                continue
            if kind == "object" and a not in beliefs.objects:
                return Plan(call, error=f"{call.name} failed: {a} is not in your world graph")
            if not kind:
                return Plan(call, error=f"{call.name} failed: no entity named {a!r} in your world graph")
        make = getattr(self, f"_plan_{call.name.lower()}")
        plan: Plan = make(agent, call, beliefs)
        plan.cap = MAX_STEPS.get(call.name, 0)
        return plan

    def _need(self, call: ToolCall, kinds: tuple[str, ...], i: int = 0) -> str | None:
        if len(call.args) <= i or self.world.entity(call.args[i]) not in kinds:
            return f"{call.name} failed: its argument must name a {' or '.join(kinds)}"
        return None

    def _plan_navigate(self, agent: int, call: ToolCall, b: Beliefs) -> Plan:
        if err := self._need(call, ("object", "furniture", "room")):
            return Plan(call, error=err)
        target = call.args[0]
        if self.world.entity(target) == "object":
            r = b.objects[target]
            if r.held_by_me:
                return Plan(call, error=f"Navigate failed: you are holding {target}")
            if r.place is None or r.pos is None:
                return Plan(call, error=f"Navigate failed: you do not know where {target} is now")
            goal = self.world.approach(r.pos, r.room)
        else:
            goal = self.world.stand_point(target)
        phases, _ = _walk(self.world, self.world.agent_pos[agent], goal)
        return Plan(call, phases + [Phase("look", 1)])

    def _plan_explore(self, agent: int, call: ToolCall, b: Beliefs) -> Plan:
        if err := self._need(call, ("room",)):
            return Plan(call, error=err)
        room = call.args[0]
        w = self.world
        phases, here = _walk(w, w.agent_pos[agent], w.stand_point(room))
        phases.append(Phase("look", LOOK_STEPS))
        todo = [f for f in w.furniture.values() if f.room == room and f.cls != FLOOR]
        while todo:
            f = min(todo, key=lambda f: horizontal_distance(here, w.stand_point(f.handle)))
            todo.remove(f)
            more, here = _walk(w, here, w.stand_point(f.handle))
            phases += more + [Phase("look", LOOK_STEPS)]
        phases.append(Phase("act", 0, effect=lambda: (b.explored.add(room), None)[1]))
        return Plan(call, phases)

    def _plan_pick(self, agent: int, call: ToolCall, b: Beliefs) -> Plan:
        if err := self._need(call, ("object",)):
            return Plan(call, error=err)
        obj = call.args[0]
        return Plan(call, [Phase("act", _steps(self.rng, "Pick"), effect=lambda: self.pick(agent, obj))])

    def pick(self, agent: int, obj: str) -> str | None:
        w, o = self.world, self.world.objects[obj]
        if self.holding.get(agent):
            return f"Pick failed: you are already holding {self.holding[agent]}; place it first"
        if o.holder is not None:
            return f"Pick failed: {obj} is held by the other agent"
        if w.hidden(obj):
            return f"Pick failed: {obj} is inside {o.place[1]}, which is closed"  # type: ignore[index]
        if _dist_to(w, w.agent_pos[agent], obj) > REACH_M:
            return f"Pick failed: you are not close enough to {obj}; navigate to it first"
        o.holder, o.place = agent, None
        self.holding[agent] = obj
        return None

    def _plan_place(self, agent: int, call: ToolCall, b: Beliefs) -> Plan:
        err = self._place_args(call)
        if err:
            return Plan(call, error=err)
        obj, rel, furn, _, ref = call.args
        return Plan(call, [Phase("act", _steps(self.rng, "Place"),
                                 effect=lambda: self.place(agent, obj, rel, furn, None if ref == "None" else ref))])

    def _place_args(self, call: ToolCall) -> str | None:
        w = self.world
        if len(call.args) != 5:
            return f"{call.name} failed: expected 5 arguments (object, relation, furniture, constraint, reference)"
        obj, rel, furn, cons, ref = call.args
        if w.entity(obj) != "object":
            return f"{call.name} failed: {obj!r} is not an object"
        if rel not in ("on", "within"):
            return f"{call.name} failed: spatial relation {rel!r}; allowed: on, within"
        if w.entity(furn) != "furniture":
            return f"{call.name} failed: {furn!r} is not furniture"
        if cons not in ("None", "next_to"):
            return f"{call.name} failed: spatial constraint {cons!r}; allowed: next_to, None"
        if cons == "next_to" and w.entity(ref) != "object":
            return f"{call.name} failed: next_to needs a reference object, got {ref!r}"
        if ref != "None" and w.entity(ref) != "object":  # place() looks the reference up among objects
            return f"{call.name} failed: the reference {ref!r} is not an object"
        return None

    def place(self, agent: int, obj: str, rel: str, furn: str, ref: str | None) -> str | None:
        w = self.world
        f, o = w.furniture[furn], w.objects[obj]
        if self.holding.get(agent) != obj:
            return f"Place failed: you are not holding {obj}"
        if rel == "on" and not f.surface:
            return f"Place failed: {furn} has no surface to place on; try within"
        if rel == "within" and not f.container:
            return f"Place failed: {furn} is not a container; try on"
        if rel == "within" and not f.is_open:
            return f"Place failed: {furn} is closed; open it first"
        if f.cls == FLOOR:
            if w.room_at(w.agent_pos[agent]) != f.room:
                return f"Place failed: you are not in {f.room}; navigate there first"
        elif _dist_to(w, w.agent_pos[agent], furn) > REACH_M:
            return f"Place failed: you are not close enough to {furn}; navigate to it first"
        if ref is not None and (w.objects[ref].place is None or w.objects[ref].place[1] != furn):  # type: ignore[index]
            return f"Place failed: the reference object {ref} is not on {furn}"
        o.holder, o.place, o.room = None, (rel, furn), f.room
        self.holding[agent] = None
        o.pos = w.agent_pos[agent] if f.cls == FLOOR and ref is None else w.spot_on(furn, near=ref, exclude=obj)
        return None

    def _plan_rearrange(self, agent: int, call: ToolCall, b: Beliefs) -> Plan:
        err = self._place_args(call)
        if err:
            return Plan(call, error=err)
        obj, rel, furn, _, ref = call.args
        r = b.objects[obj]
        w = self.world
        if (r.place is None or r.pos is None) and not r.held_by_me:
            return Plan(call, error=f"Rearrange failed: you do not know where {obj} is now")
        phases: list[Phase] = []
        here = w.agent_pos[agent]
        if not r.held_by_me:
            walk, here = _walk(w, here, w.approach(r.pos, r.room))  # type: ignore[arg-type]
            phases += walk + [Phase("act", _steps(self.rng, "Pick"), effect=lambda: self.pick(agent, obj))]
        walk, _ = _walk(w, here, w.stand_point(furn))
        phases += walk + [Phase("act", _steps(self.rng, "Place"),
                                effect=lambda: self.place(agent, obj, rel, furn, None if ref == "None" else ref))]
        return Plan(call, phases)

    def _articulate(self, agent: int, call: ToolCall, open_: bool) -> Plan:
        if err := self._need(call, ("furniture",)):
            return Plan(call, error=err)
        furn = call.args[0]

        def act() -> str | None:
            w, f = self.world, self.world.furniture[furn]
            if not f.articulated:
                return f"{call.name} failed: {furn} does not open or close"
            if _dist_to(w, w.agent_pos[agent], furn) > REACH_M:
                return f"{call.name} failed: you are not close enough to {furn}; navigate to it first"
            if f.is_open == open_:
                return f"{call.name} failed: {furn} is already {'open' if open_ else 'closed'}"
            f.is_open = open_
            return None
        return Plan(call, [Phase("act", _steps(self.rng, call.name), effect=act), Phase("look", 1)])

    def _plan_open(self, agent: int, call: ToolCall, b: Beliefs) -> Plan:
        return self._articulate(agent, call, True)

    def _plan_close(self, agent: int, call: ToolCall, b: Beliefs) -> Plan:
        return self._articulate(agent, call, False)

    def _state_skill(self, agent: int, call: ToolCall, check: Callable[[str], str | None]) -> Plan:
        if err := self._need(call, ("object", "furniture")):
            return Plan(call, error=err)
        target = call.args[0]

        def act() -> str | None:
            w = self.world
            if w.entity(target) == "object" and w.objects[target].holder not in (None, agent):
                return f"{call.name} failed: {target} is held by the other agent"
            if _dist_to(w, w.agent_pos[agent], target) > REACH_M:
                return f"{call.name} failed: you are not close enough to {target}; navigate to it first"
            return check(target)
        return Plan(call, [Phase("act", _steps(self.rng, call.name), effect=act)])

    def _afford(self, target: str) -> dict[str, str]:
        w = self.world
        return w.objects[target].afford if target in w.objects else {"is_clean": "brush"}

    def _near_faucet(self, agent: int) -> bool:
        w = self.world
        return any(f.faucet and _dist_to(w, w.agent_pos[agent], f.handle) <= REACH_M for f in w.furniture.values())

    def _set(self, target: str, name: str, value: bool) -> None:
        w = self.world
        (w.objects[target] if target in w.objects else w.furniture[target]).states[name] = value

    def _plan_clean(self, agent: int, call: ToolCall, b: Beliefs) -> Plan:
        def check(t: str) -> str | None:
            if self._afford(t).get("is_clean") == "faucet" and not self._near_faucet(agent):
                return f"Clean failed: {t} must be cleaned near a faucet (a sink)"
            self._set(t, "is_clean", True)
            return None
        return self._state_skill(agent, call, check)

    def _plan_fill(self, agent: int, call: ToolCall, b: Beliefs) -> Plan:
        def check(t: str) -> str | None:
            if "is_filled" not in self._afford(t):
                return f"Fill failed: {t} cannot be filled"
            if not self._near_faucet(agent):
                return f"Fill failed: {t} can only be filled near a faucet (a sink)"
            self._set(t, "is_filled", True)
            return None
        return self._state_skill(agent, call, check)

    def _plan_pour(self, agent: int, call: ToolCall, b: Beliefs) -> Plan:
        def check(t: str) -> str | None:
            held = self.holding.get(agent)
            if held is None or not self.world.objects[held].states.get("is_filled"):
                return "Pour failed: you must hold a filled container"
            if "is_filled" not in self._afford(t) or t == held:
                return f"Pour failed: {t} cannot be poured into"
            self._set(t, "is_filled", True)
            self._set(held, "is_filled", False)
            return None
        return self._state_skill(agent, call, check)

    def _power(self, agent: int, call: ToolCall, on: bool) -> Plan:
        def check(t: str) -> str | None:
            if "is_powered_on" not in self._afford(t):
                return f"{call.name} failed: {t} has no power switch"
            self._set(t, "is_powered_on", on)
            return None
        return self._state_skill(agent, call, check)

    def _plan_poweron(self, agent: int, call: ToolCall, b: Beliefs) -> Plan:
        return self._power(agent, call, True)

    def _plan_poweroff(self, agent: int, call: ToolCall, b: Beliefs) -> Plan:
        return self._power(agent, call, False)

    def _plan_wait(self, agent: int, call: ToolCall, b: Beliefs) -> Plan:
        return Plan(call, [Phase("look", WAIT_STEPS)])

    def _plan_done(self, agent: int, call: ToolCall, b: Beliefs) -> Plan:
        return Plan(call, [])


__all__ = ["DURATION", "LOOK_STEPS", "MAX_STEPS", "Phase", "Plan", "REACH_M", "ROLE_TOOLS", "STEP_M", "Skills",
           "WAIT_STEPS"]
