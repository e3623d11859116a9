"""The offline planner: a heuristic with a capability profile, labelled as such (not an LLM).

It plays PARTNR's planner role for teachers and tests with no model server. It reads the task's
evaluation propositions (an LLM reads the instruction text instead), its own belief graph and
the channels it is given, and nothing else of the world (the layout is public):

- it works on the propositions its beliefs say are unmet, nearest known candidate object first,
  exploring the nearest unexplored room when it knows none, opening closed furniture when every
  room is explored; the robot leaves object-state work to the human (it has no such tools);
- **OAS** (:mod:`.oas`: visible state and percepts, never the partner's call or target): it
  leaves alone the object a visible partner holds, the task objects on the furniture a visible
  partner is picking up at, and the room a visible partner is looking around in; it remembers
  them (as an LLM keeps earlier observations in its context): a room it saw the partner look
  around in counts as explored, an object it saw carried stays the partner's until it sees the
  object again. Objects the partner sees arrive as records of its own graph (the episode adds
  them), so it uses them like any other belief;
- **KE**: merged records are just more beliefs: it uses objects the partner found;
- **OANA**: it predicts the partner's next action from its model of the partner: from what it
  sees of it when co-located (carrying an object: to that object's destination, or placing it
  there when at it; picking up at a piece of furniture: carrying a task object from there to
  its destination; looking around: still exploring that room; walking empty-handed: picking a
  task object it can see), else what it itself would do next; it leaves that target alone; with
  probability ``1 - partner_model`` the prediction is a random plausible call instead;
- with probability ``slip`` per cycle it takes a distracted action (explore or walk anywhere).

The profile is one object used unchanged in every condition and for both agents; nothing here
reads the channel names, the team or the condition: only what the observation carries.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

from ...world.views import horizontal_distance
from .calls import ToolCall
from .episode import Decision, Observation
from .skills import REACH_M
from .world import FLOOR, Beliefs, Point, World

RELOCATE = ("is_on_top", "is_inside", "is_in_room", "is_on_floor")
STATES = {"is_clean": ("is_clean", True, "Clean"), "is_dirty": ("is_clean", False, None),
          "is_filled": ("is_filled", True, "Fill"), "is_empty": ("is_filled", False, None),
          "is_powered_on": ("is_powered_on", True, "PowerOn"), "is_powered_off": ("is_powered_on", False, "PowerOff")}


@dataclass(frozen=True)
class OfflineProfile:
    """How good the heuristic planner is (the same in every condition)."""

    slip: float = 0.08
    partner_model: float = 0.7
    explore: str = "nearest"  # "nearest" | "random"
    wait_limit: int = 2

    def __post_init__(self) -> None:
        for name in ("slip", "partner_model"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
                raise ValueError(f"profile.{name}: must be a number in [0, 1], got {v!r}")
        if self.explore not in ("nearest", "random"):
            raise ValueError(f"profile.explore: {self.explore!r}; allowed: nearest, random")


PROFILES = {"default": OfflineProfile(), "weak": OfflineProfile(slip=0.2, partner_model=0.4, explore="random"),
            "strong": OfflineProfile(slip=0.02, partner_model=0.9)}


@dataclass
class _Need:
    """One unmet part of the task: an object to move to ``dest`` or a state to set."""

    prop: int
    candidates: list[str]
    dest: list[str]  # furniture handles (relocation) or [] (state)
    relation: str
    state: tuple[str, bool, str | None] | None = None
    reference: list[str] | None = None


def _dist(world: World, p: Point, handle: str, b: Beliefs) -> float:
    if handle in world.furniture:
        f = world.furniture[handle]
        return max(0.0, horizontal_distance(p, f.centre) - f.half_extent)
    r = b.objects.get(handle)
    if r is None or r.pos is None:
        return math.inf
    return horizontal_distance(p, r.pos)


class OfflinePlanner:
    """The heuristic planner (see the module docstring)."""

    def __init__(self, profile: OfflineProfile = OfflineProfile(), seed: int = 0, agent: int = 0) -> None:
        self.profile = profile
        self.rng = random.Random(f"partnr-offline:{seed}:{agent}")
        self.label = "heuristic"
        self.waits = 0
        self.opened: set[str] = set()
        self.ever: set[int] = set()
        self.partner_rooms: set[str] = set()  # rooms it saw the partner explore (OAS, remembered)
        self.partner_held: dict[str, int] = {}  # objects it saw the partner carry, and when

    # -- what is still to do --------------------------------------------------------------------
    def _needs(self, obs: Observation) -> list[_Need]:
        b, w = obs.beliefs, obs.world
        props = obs.task.evaluation.propositions
        order: dict[int, list[int]] = {}
        for c in obs.task.evaluation.constraints:
            if c.type == "TemporalConstraint":
                for a, z in c.args.get("dag_edges", []):
                    order.setdefault(int(z), []).append(int(a))
        after = {}
        for d in obs.task.evaluation.dependencies:
            if d.relation_type in ("after_satisfied", "after_unsatisfied"):
                for i in d.proposition_indices:
                    after[int(i)] = [int(x) for x in d.depends_on]
        nexts: dict[str, list[str]] = {}
        for i, p in enumerate(props):
            if p.function_name == "is_next_to":
                a_side, b_side = list(p.args.get("entity_handles_a", [])), list(p.args.get("entity_handles_b", []))
                for h in a_side:
                    nexts.setdefault(h, []).extend(b_side)
                for h in b_side:
                    nexts.setdefault(h, []).extend(a_side)
        needs = []
        met = {i for i, p in enumerate(props) if self._met(p.function_name, p.args, b, w)}
        self.ever |= met
        for i, p in enumerate(props):
            if i in met or any(j not in self.ever for j in order.get(i, []) + after.get(i, [])):
                continue
            fn, args = p.function_name, p.args
            if fn in RELOCATE:
                handles = list(args.get("object_handles", []))
                if fn == "is_in_room":
                    rooms = set(args.get("room_ids", []))
                    dest = [f.handle for f in w.furniture.values() if f.room in rooms and f.surface and f.cls != FLOOR]
                    rel = "on"
                elif fn == "is_on_floor":
                    dest, rel = [f.handle for f in w.furniture.values() if f.cls == FLOOR], "on"
                else:
                    dest = list(args.get("receptacle_handles", []))
                    rel = "on" if fn == "is_on_top" else "within"
                todo = [h for h in handles if not self._placed(h, fn, args, b, w)]
                ref = next((nexts[h] for h in handles if h in nexts), None)
                needs.append(_Need(i, todo, dest, rel, reference=ref))
            elif fn == "is_next_to":
                # both placed but apart: move an a-side object next to a b-side one where it lies
                for h in args.get("entity_handles_a", []):
                    r = b.objects.get(h)
                    ref = next((x for x in args.get("entity_handles_b", []) if b.objects.get(x)
                                and b.objects[x].place is not None), None)
                    if ref is not None and (r is None or r.place is not None or r.held_by_me):
                        needs.append(_Need(i, [h], [b.objects[ref].place[1]], "on", reference=[ref]))  # type: ignore[index]
                        break
            elif fn in STATES:
                name, value, tool = STATES[fn]
                todo = [h for h in args.get("object_handles", []) if self._state(h, name, b, w) != value]
                needs.append(_Need(i, todo, [], "", state=(name, value, tool)))
        return needs

    @staticmethod
    def _state(h: str, name: str, b: Beliefs, w: World) -> bool:
        if h in w.furniture:
            st = dict(b.furniture_states.get(h, ((), 0))[0])
            return bool(st.get(name, False))
        r = b.objects.get(h)
        return bool(r.state(name)) if r is not None else False

    @staticmethod
    def _placed(h: str, fn: str, args: dict[str, Any], b: Beliefs, w: World) -> bool:
        r = b.objects.get(h)
        if r is None or r.place is None:
            return False
        if fn == "is_in_room":
            return r.room in set(args.get("room_ids", []))
        if fn == "is_on_floor":
            return w.furniture[r.place[1]].cls == FLOOR
        rel = "on" if fn == "is_on_top" else "within"
        return r.place[0] == rel and r.place[1] in set(args.get("receptacle_handles", []))

    def _met(self, fn: str, args: dict[str, Any], b: Beliefs, w: World) -> bool:
        if fn in RELOCATE:
            n = int(args.get("number", 1))
            return sum(self._placed(h, fn, args, b, w) for h in args.get("object_handles", [])) >= n
        if fn in STATES:
            name, value, _ = STATES[fn]
            n = int(args.get("number", 1))
            return sum(self._state(h, name, b, w) == value for h in args.get("object_handles", [])) >= n
        if fn == "is_next_to":
            thr = float(args.get("l2_threshold", 0.5))
            for ha in args.get("entity_handles_a", []):
                for hb in args.get("entity_handles_b", []):
                    pa, pb = self._where(ha, b, w), self._where(hb, b, w)
                    if pa is None or pb is None or ha == hb:
                        continue
                    if horizontal_distance(pa, pb) - w.half_extent(ha) - w.half_extent(hb) <= thr:
                        return True
            return False
        return True  # predicates the heuristic does not plan for

    # -- the partner -----------------------------------------------------------------------------
    def _claimed(self, obs: Observation, prediction: ToolCall | None) -> tuple[set[str], set[str]]:
        """Objects and rooms the partner is (seen or predicted to be) working on."""
        objs, rooms = set(), set(self.partner_rooms)
        p = obs.partner
        if p is not None:
            if p.holding:
                self.partner_held[p.holding] = obs.step
            if p.motion == "looking around":
                self.partner_rooms.add(p.room)
                rooms.add(p.room)
            if p.motion == "picking up" and p.near:
                objs |= {h for h, _, f in p.in_view if f == p.near}
        for h, when in self.partner_held.items():
            r = obs.beliefs.objects.get(h)
            if r is None or r.step <= when:  # not seen anywhere since the partner carried it
                objs.add(h)
        if prediction is not None and prediction.args:
            if prediction.name == "Explore":
                rooms.add(prediction.args[0])
            elif prediction.args[0] in obs.beliefs.objects:
                objs.add(prediction.args[0])
        return objs, rooms

    @staticmethod
    def _read_partner(obs: Observation, needs: list[_Need]) -> ToolCall | None:
        """The partner's next action as read from what OAS shows of it (None: nothing to read)."""
        p, w = obs.partner, obs.world
        if p is None:
            return None
        dest_of = {h: n for n in needs if n.dest for h in n.candidates}
        if p.holding:
            n = dest_of.get(p.holding)
            if n is None:
                return None
            if p.near in n.dest:
                f = w.furniture[p.near]  # type: ignore[index]
                rel = n.relation if (n.relation == "on" and f.surface) or (n.relation == "within" and f.container) \
                    else ("on" if f.surface else "within")
                return ToolCall("Place", (p.holding, rel, p.near, "None", "None"))  # type: ignore[arg-type]
            return ToolCall("Navigate", (n.dest[0],))
        if p.motion == "looking around":
            return ToolCall("Explore", (p.room,))
        seen = [h for h, _, f in p.in_view if h in dest_of and (p.motion != "picking up" or f == p.near)]
        if p.motion == "picking up" and seen:
            return ToolCall("Navigate", (dest_of[seen[0]].dest[0],))
        if p.motion == "walking" and seen:
            return ToolCall("Pick", (seen[0],))
        return None

    def _predict(self, obs: Observation, needs: list[_Need]) -> ToolCall:
        """The partner's next action by this planner's model of it."""
        w, b = obs.world, obs.beliefs
        if self.rng.random() >= self.profile.partner_model:
            room = self.rng.choice(sorted(w.room_box))
            return self.rng.choice([ToolCall("Explore", (room,)), ToolCall("Navigate", (room,)), ToolCall("Wait", ())])
        read = self._read_partner(obs, needs)
        if read is not None:
            return read
        known = [h for n in needs if n.dest for h in n.candidates if b.objects.get(h) and b.objects[h].place]
        if known:
            return ToolCall("Navigate", (known[0],))
        left = [r for r in sorted(w.room_box) if r not in b.explored and r != obs.room]
        return ToolCall("Explore", (left[0] if left else obs.room,))

    # -- deciding --------------------------------------------------------------------------------
    def decide(self, obs: Observation) -> Decision:
        needs = self._needs(obs)
        prediction = self._predict(obs, needs) if obs.predict else None
        call, why = self._choose(obs, needs, prediction)
        thought = why
        if prediction is not None:
            thought = f"I predict the {'human' if obs.role == 'robot' else 'robot'} will do {prediction.text()}. " + why
        return Decision(call, thought, prediction, raw=call.text())

    def _choose(self, obs: Observation, needs: list[_Need], prediction: ToolCall | None) -> tuple[ToolCall, str]:
        w, b, p = obs.world, obs.beliefs, obs.pos
        if self.rng.random() < self.profile.slip:
            if self.rng.random() < 0.5:
                return ToolCall("Explore", (self.rng.choice(sorted(w.room_box)),)), "I will look around."
            return ToolCall("Navigate", (self.rng.choice(sorted(w.furniture)),)), "I will walk over there."
        taken_objs, taken_rooms = self._claimed(obs, prediction)
        partner_note = " The other agent is on it, so I leave it." if taken_objs or taken_rooms else ""
        human = "Clean" in obs.tools
        held = obs.holding
        if held is not None:
            for n in needs:
                if n.state and n.state[2] and human and held in n.candidates:
                    if n.state[2] in ("Clean", "Fill") and self._needs_faucet(w, held, n.state[2]):
                        sink = self._nearest(w, b, p, [f.handle for f in w.furniture.values() if f.faucet])
                        if sink and _dist(w, p, sink, b) > REACH_M:
                            return ToolCall("Navigate", (sink,)), f"I carry {held} to a faucet."
                    return ToolCall(n.state[2], (held,)), f"I {n.state[2].lower()} {held}."
            for n in needs:
                if n.dest and held in n.candidates:
                    dest = self._nearest(w, b, p, n.dest) or n.dest[0]
                    far = (w.room_at(p) != w.furniture[dest].room if w.furniture[dest].cls == FLOOR
                           else _dist(w, p, dest, b) > REACH_M)
                    if far:
                        return ToolCall("Navigate", (dest,)), f"I bring {held} to {dest}."
                    f = w.furniture[dest]
                    if n.relation == "within" and not b.furniture_open.get(dest, (True, 0))[0]:
                        return ToolCall("Open", (dest,)), f"I open {dest} to put {held} in."
                    ref = next((r for r in (n.reference or []) if b.objects.get(r) and b.objects[r].place
                                and b.objects[r].place[1] == dest), None)  # type: ignore[index]
                    rel = n.relation if (n.relation == "on" and f.surface) or (n.relation == "within" and f.container) \
                        else ("on" if f.surface else "within")
                    return (ToolCall("Place", (held, rel, dest, "next_to" if ref else "None", ref or "None")),
                            f"I place {held} on {dest}.")
            spot = self._nearest(w, b, p, [f.handle for f in w.furniture.values()
                                           if f.surface and f.room == obs.room and f.cls != FLOOR])
            return ToolCall("Place", (held, "on", spot or next(iter(w.furniture)), "None", "None")), f"I put {held} down."
        # hands free: state changes in place, then objects to fetch
        options: list[tuple[float, ToolCall, str]] = []
        for n in needs:
            for h in n.candidates:
                if h in taken_objs or (h in w.objects and (b.objects.get(h) is None or b.objects[h].place is None)):
                    continue
                d = _dist(w, p, h, b)
                if n.state:
                    if not (human and n.state[2]):
                        continue
                    if h in w.objects and n.state[2] in ("Clean", "Fill") and self._needs_faucet(w, h, n.state[2]):
                        options.append((d, ToolCall("Pick", (h,)) if d <= REACH_M else ToolCall("Navigate", (h,)),
                                        f"{h} must go to a faucet."))
                    else:
                        options.append((d, ToolCall(n.state[2], (h,)) if d <= REACH_M else ToolCall("Navigate", (h,)),
                                        f"{h} needs {n.state[2]}."))
                elif n.dest:
                    options.append((d, ToolCall("Pick", (h,)) if d <= REACH_M else ToolCall("Navigate", (h,)),
                                    f"{h} belongs on {n.dest[0]}."))
        if options:
            options.sort(key=lambda o: (o[0], o[1].text()))
            self.waits = 0
            return options[0][1], options[0][2] + partner_note
        left = [r for r in sorted(w.room_box) if r not in b.explored and r not in taken_rooms]
        if left:
            room = (min(left, key=lambda r: horizontal_distance(p, w.room_box[r][0])) if self.profile.explore == "nearest"
                    else self.rng.choice(left))
            return ToolCall("Explore", (room,)), f"No task object I can use is known; I explore {room}.{partner_note}"
        closed = [h for h, (is_open, _) in sorted(b.furniture_open.items())
                  if not is_open and h not in self.opened and w.furniture[h].articulated]
        if closed and any(n.candidates for n in needs):
            target = self._nearest(w, b, p, closed) or closed[0]
            if _dist(w, p, target, b) > REACH_M:
                return ToolCall("Navigate", (target,)), f"Objects may be inside {target}."
            self.opened.add(target)
            return ToolCall("Open", (target,)), f"I look inside {target}."
        mine = [n for n in needs if n.candidates and (not n.state or (human and n.state[2]))]
        if mine and self.waits < self.profile.wait_limit:
            self.waits += 1
            return ToolCall("Wait", ()), "Nothing I can do now; I wait."
        return ToolCall("Done", ()), "As far as I know the task is done or not mine to finish."

    @staticmethod
    def _where(h: str, b: Beliefs, w: World) -> Point | None:
        """Where the agent believes an entity is (furniture: the public layout)."""
        if h in w.furniture:
            return w.furniture[h].centre
        r = b.objects.get(h)
        return r.pos if r is not None else None

    @staticmethod
    def _needs_faucet(w: World, h: str, tool: str) -> bool:
        return tool == "Fill" or (h in w.objects and w.objects[h].afford.get("is_clean") == "faucet")

    @staticmethod
    def _nearest(w: World, b: Beliefs, p: Point, handles: list[str]) -> str | None:
        return min(handles, key=lambda h: (_dist(w, p, h, b), h), default=None)


__all__ = ["OfflinePlanner", "OfflineProfile", "PROFILES"]
