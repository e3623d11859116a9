"""The offline heuristic policy: a planner over the agent's own beliefs (backend ``heuristic``).

It knows only what it has seen, what teammates said (parsed from their English messages)
or wrote in the shared memory, and the priors in its goal text. It remembers every object it
has seen and where (forgetting one only when it stands where the object should be and it is
not there), searches the furniture it has not looked at closely (walking to a piece of
furniture is how one sees what lies on it), opens closed containers on the way, steps aside
when it blocks a goal target, and tells teammates what it saw, with the furniture's id. A capability profile makes
it err the way weak models do (a look-alike grab, a premature "task complete", forgotten
claims, random exploration, silence). Its numbers show how protocols change what a team of
such planners does; they are never findings about LLMs.
"""

from __future__ import annotations

import random
from typing import Any

from ...world.actions import WAIT, Action
from ...world.catalog import CONFUSABLE
from ..base import AgentContext, Decision, Message, Policy, Utterance
from . import phrasebook as M
from .leader import LeaderMixin
from .memory import Known, SharedMemoryMixin
from .priors import GoalItem, parse_goal_text
from .profiles import Profile, get_profile, lapse_chance

CLAIM_TTL = 6  # steps a teammate's claim is respected without renewal


class HeuristicPolicy(LeaderMixin, SharedMemoryMixin, Policy):
    """Planner over beliefs; see module docstring."""

    backend = "heuristic"

    def __init__(self, profile: str | Profile = "strong") -> None:
        # one profile for the whole study: no prior, team size or protocol changes it
        self.profile = get_profile(profile) if isinstance(profile, str) else profile

    # -- episode state ------------------------------------------------------------------
    def reset(self, ctx: AgentContext) -> None:
        self.ctx = ctx
        self.me = ctx.agent
        # separate streams: what it hears or says never shifts the draws behind what it does,
        # so protocols differ only by the information they carry. Each task has its own streams
        # (one seed must not replay the same slips at the same step in every task), shared by
        # every protocol, team size and prior run on it, so conditions are compared on equal luck.
        key = f"{ctx.seed}-{ctx.task_id}-{ctx.agent}"
        self.rng = random.Random(f"heuristic-{key}")
        self.talk_rng = random.Random(f"heuristic-talk-{key}")
        self.forget_now = self.confuse_now = False
        self.goal = parse_goal_text(ctx.goal_text)
        self.known: dict[int, Known] = {}
        self.cls_of: dict[int, str] = {}  # every object id ever seen or mentioned -> class
        self.furniture: dict[int, tuple[str, str]] = {}  # id -> (class, room)
        self.seen_from: dict[int, tuple[str, Any]] = {}  # id -> where it stood when it last saw it (_where)
        self.closed: dict[int, bool] = {}  # container id -> closed?
        self.checked: dict[int, int] = {}  # furniture looked at closely (stood at it, open) -> step
        self.said_checked: set[tuple[str, str]] = set()  # (furniture class, room) teammates searched
        self.blocked: dict[int, int] = {}  # spot -> step a walk to it found it full
        self.loc_claims: dict[tuple[str, str], dict[int, int]] = {}  # prior location -> {agent: step said}
        self.my_loc: tuple[str, str, str] | None = None  # the prior location it is on its way to check
        self.explored: set[str] = set()
        self.searched_rooms: set[str] = set()  # rooms whose every piece of furniture it looked at
        self.claims: dict[int, dict[int, int]] = {}  # object -> {agent: step of its last claim}
        self.my_claim: int | None = None
        self.believed: dict[int, str] = {}  # held id -> class it believes it is
        self.mistaken: dict[int, str] = {}  # the look-alike it goes for -> the class it takes it for
        self.to_drop: set[int] = set()
        self.corrections: list[str] = []
        self.negatives: list[str] = []
        self.reported: set[int] = set()
        self.done_believed = False
        self.said_done = False
        self.fails = 0
        self.near: int | None = None
        self.step = 0
        self.last: Action = WAIT
        self.decisions = 0
        self.lost = False
        self.obs: dict[str, Any] = {}
        # door -> (agent, step, object id or None) offering an object there; an offer ends when its
        # object is in my hand or its agent's next word offers nothing (issue 28: a served offer
        # kept the receiver at the door for three more steps)
        self.offers: dict[int, tuple[int, int, int | None]] = {}
        self.ready: dict[int, tuple[int, int]] = {}  # door -> (agent, step) ready to receive there
        self.teammate_room: dict[int, str] = {}
        self.teammate_holding: dict[int, list[int]] = {}
        self.teammate_door: dict[int, int | None] = {}
        self.views: dict[int, dict[str, Any]] = {}
        self.preferred_room: str | None = None
        self.asked_ready: set[int] = set()
        # as a leader (leader.py): fetches assigned per agent, and where each was sent to check
        self.fetches: dict[int, int] = {a: 0 for a in range(ctx.n_agents)}
        self.checks: dict[int, tuple[str, str, str]] = {}

    # -- perception -------------------------------------------------------------------------
    def observe(self, obs: dict[str, Any]) -> None:
        self.obs = obs
        self.step = obs["step"]
        fb = obs.get("feedback", "")
        self.fails = self.fails + 1 if fb and not fb.startswith(("you ", "nobody")) else 0
        if "not close" in fb:
            self.near = None
        if "no room for you" in fb:  # a walk to a full spot (world.bodies)
            spot = self.last.obj if self.last.obj is not None else self.last.door
            if spot is not None:
                self.blocked[spot] = self.step
            self.near = obs.get("standing_at")
        self._absorb_view(obs, mine=True)
        for h in obs["holding"]:
            self.known.pop(h["id"], None)  # in hand: no longer somewhere to fetch from
            self.believed.setdefault(h["id"], self.mistaken.get(h["id"], h["class_name"]))
            self.cls_of.setdefault(h["id"], self.believed[h["id"]])
        held = {h["id"] for h in obs["holding"]}
        self.believed = {k: v for k, v in self.believed.items() if k in held}
        self.offers = {d: o for d, o in self.offers.items() if o[2] not in held}
        if self.my_claim is not None and self.my_claim in held:
            self.my_claim = None
        # a look-alike taken for a target stays mistaken while the agent goes for it (walking to
        # it, then grabbing it take two decisions); once in hand the mistake lives in ``believed``
        self.mistaken = {k: v for k, v in self.mistaken.items() if k == self.my_claim}
        if not self.done_believed and self._cr() >= 0.5 and self.rng.random() < self.profile.p_false_done:
            self.done_believed = True
        self.decisions += 1
        self.forget_now = self.rng.random() < self.profile.p_forget_claim  # this step's slips
        self.confuse_now = self.rng.random() < self.profile.p_wrong_grab
        if self.profile.drift and self.rng.random() < lapse_chance(self.profile, self.decisions):
            self._lapse()

    def _lapse(self) -> None:
        """Lose track: repeat the previous action this step, and forget the oldest third of the
        objects seen and of the furniture looked at (see :func:`.profiles.lapse_chance`)."""
        self.lost = True
        for memory in (self.known, self.checked):
            when = {k: (v.step if isinstance(v, Known) else v) for k, v in memory.items()}
            for k in sorted(when, key=lambda k: (when[k], k))[: len(when) // 3]:
                del memory[k]
        self.searched_rooms.clear()

    def _absorb_view(self, obs: dict[str, Any], mine: bool) -> None:
        room = obs["room"]
        self.explored.add(room) if mine else None
        visible = {v["id"]: v for v in obs["visible"]}
        at = obs.get("standing_at")
        under = visible.get(at, {})
        close = {x for x in (at, under.get("on"), under.get("inside")) if x is not None}  # at it, or what it lies on
        for fid in close:
            if fid in self.furniture or fid in visible and "GRABBABLE" not in visible[fid].get("properties", []):
                v = visible.get(fid)
                props = v.get("properties", []) if v is not None else []
                if v is None or not {"CAN_OPEN", "CONTAINERS"} <= set(props) or "CLOSED" not in v.get("states", []):
                    self.checked.setdefault(fid, self.step)
        held = {h["id"] for h in obs.get("holding", [])} if mine else set()
        for oid, k in list(self.known.items()):
            # forget a remembered object only where it should be seen now and is not; what the
            # agent itself just picked up is not missing, so it sends no negative report for it
            if k.room == room and oid not in visible and not self._hidden(k) and (oid in close or k.loc in close):
                if self._needed(k.cls) and mine and oid not in held and not self._claimed_by_other(oid):
                    self.negatives.append(M.negative(k.cls, room, k.loc_cls))
                del self.known[oid]
        for v in visible.values():
            if mine:
                self.seen_from[v["id"]] = self._where()
            props = v.get("properties", [])
            if "GRABBABLE" not in props:
                self.furniture[v["id"]] = (v["class_name"], room)
                if "CAN_OPEN" in props and "CONTAINERS" in props:
                    self.closed[v["id"]] = "CLOSED" in v["states"]
                continue
            if v.get("held_by") is not None:
                self.known.pop(v["id"], None)
                continue
            self.cls_of[v["id"]] = v["class_name"]
            loc = v.get("inside") or v.get("on")
            loc_cls = visible[loc]["class_name"] if loc in visible else None
            self.known[v["id"]] = Known(self.mistaken.get(v["id"], v["class_name"]), room, loc, loc_cls,
                                        "inside" if v.get("inside") else "on", self.step)

    def _where(self) -> tuple[str, Any]:
        """Where it stands: at a piece of furniture, at a door, or in the middle of a room."""
        if self.obs.get("standing_at") is not None:
            return "spot", self.obs["standing_at"]
        if self.obs.get("at_door") is not None:
            return "door", self.obs["at_door"]
        return "room", self.obs["room"]

    def _go_see(self, nid: int) -> Action | None:
        """A step back to where it last saw ``nid`` in this room, when it cannot see it from here.

        Small things are seen only from near by (world.views: >= 400 px within 5 m), and a large
        room seen from a door or from one corner hides its far side; an agent that searched the
        room remembers where it stood when it saw the target table or the apple on the floor, and
        goes back there instead of searching again (issue 28: on real 300-400-node scenes a
        receiver at the door with both hands full waited because it could not see the target).
        From a piece of furniture the middle of the room is reached through its door. None when it
        never saw ``nid`` from elsewhere in this room."""
        where = self.seen_from.get(nid)
        if where is None or where == self._where():
            return None
        kind, at = where
        if kind == "spot" and at in self._visible():
            return Action("walk", obj=at)
        if kind == "door" and any(d["id"] == at for d in self.obs.get("doors", [])):
            return Action("walk_to_door", door=at)
        if self.obs.get("at_door") is not None:
            return Action("walk_to_room", room=self.obs["room"])
        doors = self.obs.get("doors", [])
        return Action("walk_to_door", door=doors[0]["id"]) if doors and kind == "room" else None

    def _hidden(self, k: Known) -> bool:
        return k.rel == "inside" and k.loc is not None and self.closed.get(k.loc, False)

    # -- goal bookkeeping ---------------------------------------------------------------------
    def _progress(self) -> list[dict[str, Any]]:
        return self.obs.get("progress", [])

    def _cr(self) -> float:
        p = self._progress()
        total = sum(x["required"] for x in p)
        return sum(x["satisfied"] for x in p) / total if total else 0.0

    def _item(self, cls: str) -> GoalItem | None:
        return next((i for i in self.goal.items if i.cls == cls), None)

    def _remaining(self) -> dict[str, int]:
        rem = {i.cls: i.count for i in self.goal.items}
        for x in self._progress():
            if x["class"] in rem:
                rem[x["class"]] = x["required"] - x["satisfied"]
        for cls in self.believed.values():
            if cls in rem:
                rem[cls] -= 1
        for a, ids in self.teammate_holding.items():
            for oid in ids:
                cls = self.cls_of.get(oid)
                if cls in rem:
                    rem[cls] -= 1
        return rem

    def _needed(self, cls: str) -> bool:
        return self._remaining().get(cls, 0) > 0

    def _live_claims(self, below: int | None = None) -> list[tuple[int, int]]:
        """(agent, object) claims teammates stand by now: said in their latest message or within
        ``CLAIM_TTL`` steps, on an object nobody is known to carry. ``below``: only agents with a
        lower id (they keep a class that is claimed more often than it is needed)."""
        carried = {o for ids in self.teammate_holding.values() for o in ids} | set(self.believed)
        return [(b, oid) for oid, by in self.claims.items() if oid not in carried and oid != self.my_claim
                for b, s in by.items()
                if b != self.me and self.step - s <= CLAIM_TTL and (below is None or b < below)]

    def _open(self, below: int | None = None) -> dict[str, int]:
        """Per class, how many are still to be fetched by nobody: :meth:`_remaining` less what
        teammates claim (B.3 "I will grab ..."); a step that forgets claims ignores them."""
        rem = self._remaining()
        if self.forget_now:
            return rem
        for _, oid in self._live_claims(below):
            k = self.known.get(oid)
            cls = self.cls_of.get(oid) or (k.cls if k is not None else None)
            if cls in rem:
                rem[cls] -= 1
        return rem

    def _target_room(self, cls: str) -> str | None:
        item = self._item(cls)
        return None if item is None else self.goal.target_room.get(item.target)

    def _on_target(self, oid: int, k: Known) -> bool:
        item = self._item(k.cls)
        return item is not None and k.loc_cls == item.target and k.room == self._target_room(k.cls)

    def _claim(self, oid: int, agent: int) -> None:
        self.claims.setdefault(oid, {})[agent] = self.step

    def _claimed_by_other(self, oid: int) -> bool:
        """Claimed by a teammate. When two claim the same object, the one in its room keeps it,
        then the lower agent id (rooms as teammates last said them)."""
        recent = [b for b, s in self.claims.get(oid, {}).items() if b != self.me and self.step - s <= CLAIM_TTL]
        if not recent:
            return False
        if self.my_claim != oid:
            return True
        k = self.known.get(oid)
        room = k.room if k is not None else None

        def rank(agent: int) -> tuple[bool, int]:
            where = self.obs.get("room") if agent == self.me else self.teammate_room.get(agent)
            return (where != room, agent)

        return any(rank(b) < rank(self.me) for b in recent)

    # -- communication ---------------------------------------------------------------------------
    def hear(self, messages: list[Message]) -> None:
        for msg in messages:
            if msg.sender != self.me and msg.text:
                self._absorb_facts(msg.sender, M.parse(msg.text))

    def _absorb_facts(self, sender: int, f: M.Facts) -> None:
        """Take in what a teammate said. A spoken message states what its sender carries (said
        whenever it carries anything), so it replaces the sender's holdings; silence leaves them."""
        self.teammate_holding[sender] = list(f.holding)
        for oid, cls in f.holding.items():
            self.cls_of.setdefault(oid, cls)
            self.known.pop(oid, None)  # in a teammate's hand: no longer where it was seen
        for by in self.claims.values():  # a teammate's latest message states all it still claims
            if sender in by:
                by.pop(sender)
        for oid in f.claims:
            self._claim(oid, sender)
            if self.my_claim == oid and sender < self.me and self.talk_rng.random() >= self.profile.p_forget_claim:
                self.my_claim = None  # tie-break: the lower agent id keeps a shared claim
        for loc in f.checking:
            self.loc_claims.setdefault(loc, {})[sender] = self.step
        for cls, oid, rel, furn, fid, room in f.sightings:
            self.cls_of[oid] = cls
            if fid is not None:
                self.furniture.setdefault(fid, (furn, room))
            if oid not in self.known or self.known[oid].step < self.step:
                self.known[oid] = Known(cls, room, fid, furn, rel, self.step)
        if f.room:
            self.teammate_room[sender] = f.room
        self.teammate_door[sender] = f.door
        self.offers = {d: o for d, o in self.offers.items() if o[0] != sender}
        if f.offering:
            self.offers[f.offering[0]] = (sender, self.step, f.offering[2])
        if f.ready_door is not None:
            self.ready[f.ready_door] = (sender, self.step)
        for cls, furn, room in f.negatives:
            for oid, k in list(self.known.items()):
                if k.cls == cls and k.room == room and (furn is None or k.loc_cls == furn) and k.step < self.step:
                    del self.known[oid]
            if furn:
                self.said_checked.add((furn, room))
        if f.done and not self.done_believed and self.talk_rng.random() < self.profile.p_believe_done:
            self.done_believed = True
        if f.room_assignments.get(self.me) and self.preferred_room is None:
            self.preferred_room = f.room_assignments[self.me]
        if self.me in f.corrected:
            for oid in list(self.believed):
                real = self.cls_of.get(oid)
                if real is not None and real != self.believed[oid]:
                    self.corrections.append(M.self_correction(real, self.believed[oid]))
                    self.believed[oid] = real
                    self.to_drop.add(oid)
        if self.me in f.delegations:
            oid = f.delegations[self.me]
            if oid in self.known and not self._claimed_by_other(oid):
                self.my_claim = oid

    def speak(self, kind: str, dialogue: list[Message], round: int = 0) -> Utterance:
        if kind == "discuss" and round > 0:
            self.hear(dialogue)
            ready = not (self.my_claim is not None and self._claimed_by_other(self.my_claim))
            if not ready:
                self.my_claim = None
                self._choose_target()
                text = self._plan_sentence()
                return Utterance(text, ready=True)
            return Utterance(None, ready=True)
        if kind == "discuss":
            self.hear(dialogue)
        self._choose_target()
        parts: list[str] = []
        offer = self._offering()
        if offer:
            parts.append(M.at_door_with(*offer))
            partner = self._partner_at(offer[0])
            ready = self.ready.get(offer[0])
            if not (ready and self.step - ready[1] <= 1) and offer[0] not in self.asked_ready:
                parts.append(M.ask_ready(partner, offer[0]))  # a coordination query (Table 17)
                self.asked_ready.add(offer[0])
        parts += self._peer_corrections()
        if self.step == 0 and self.me == 0 and self.profile.delegates and not self.goal.locations:
            parts += self._room_split()
        wait_door = self._awaiting_door()
        if wait_door is not None and self.obs.get("at_door") == wait_door:
            parts.append(M.ready_to_receive(wait_door))
        if self.done_believed and not self.said_done:
            parts.append(M.DONE)
            self.said_done = True
        parts += self.corrections
        self.corrections = []
        held = [(self.believed.get(h["id"], h["class_name"]), h["id"]) for h in self.obs["holding"]]
        if held:  # teammates count what is carried as taken care of (``_remaining``)
            parts.append(M.holding(held))
        plan = self._plan_sentence()
        if plan:
            parts.append(plan)
        parts.append(M.location(self.obs["room"], self.obs.get("at_door")))
        news = [(oid, k) for oid, k in sorted(self.known.items())
                if oid not in self.reported and k.room == self.obs["room"] and self._needed(k.cls)
                and not self._on_target(oid, k)]
        for oid, k in news[: self.profile.report_limit]:
            parts.append(M.sighting(k.cls, oid, k.rel, k.loc_cls or "floor", k.room, k.loc))
            self.reported.add(oid)
        parts += self.negatives[:2]
        self.negatives = []
        if self.fails >= 3:
            parts.append(M.STUCK)
        if kind != "report" and self.profile.delegates:
            parts += self._delegations()
        essential = bool(offer) or (wait_door is not None)
        if not essential and self.talk_rng.random() < self.profile.p_silent:
            return Utterance(None, ready=True, note="silent")
        text = " ".join(parts) if parts else None
        return Utterance(text, ready=True)

    def _plan_sentence(self) -> str | None:
        if self.my_claim is not None and self.my_claim in self.known:
            k = self.known[self.my_claim]
            cls = self.believed.get(self.my_claim, self._believed_cls(self.my_claim, k))
            item = self._item(cls)
            return M.plan(cls, self.my_claim, item.target if item else "target")
        if self.my_loc is not None and len(self.obs.get("holding", [])) < 2:  # only where it is headed now
            cls, furn, room = self.my_loc
            return M.check(furn, room, cls)
        return None

    def _peer_corrections(self) -> list[str]:
        """Tell a teammate in the same room that it holds a look-alike of what the task needs."""
        out = []
        twins = {v: k for k, v in CONFUSABLE.items() if self._item(k) is not None}
        for other in self.obs.get("agents_here", []):
            for cls in other["holding"]:
                if cls in twins:
                    out.append(M.peer_correction(other["agent"], cls, twins[cls]))
        return out[:1]

    def _room_split(self) -> list[str]:
        """Without location priors, the first agent proposes who searches which room."""
        rooms = [r for r in self.ctx.allowed_rooms if r != self.obs["room"]]
        out = []
        for a in range(1, self.ctx.n_agents):
            if rooms:
                out.append(M.assign_room(a, rooms[(a - 1) % len(rooms)]))
        return out

    def _delegations(self) -> list[str]:
        out = []
        for a, room in sorted(self.teammate_room.items()):
            if room == self.obs["room"]:
                continue
            for oid, k in sorted(self.known.items()):
                if k.room == room and self._needed(k.cls) and not self._claimed_by_other(oid) \
                        and oid != self.my_claim and not self._on_target(oid, k):
                    out.append(M.delegate(a, k.cls, oid, room))
                    self._claim(oid, a)
                    break
        return out[:1]


    # -- acting --------------------------------------------------------------------------------------
    def act(self, instruction: str | None = None, shared_memory: dict[str, Any] | None = None) -> Decision:
        if shared_memory is not None:
            self._read_memory(shared_memory)
        action, note = self._decide(instruction)
        if action.name == "wait" and note == "nothing to do":
            aside = self._step_aside()
            if aside is not None:
                action, note = aside, "stepping aside from the goal target"
        self.last = action
        if action.name == "walk" and action.obj is not None:
            self.near = action.obj
        elif action.name in ("walk_to_room", "walk_to_door"):
            self.near = None
        return Decision(action, note=note)

    def _decide(self, instruction: str | None) -> tuple[Action, str]:
        obs = self.obs
        parsed = M.parse_instruction(instruction) if instruction else None
        if self.done_believed and parsed is not None and parsed[0] != "wait":
            self.done_believed = False  # a concrete assignment from the leader overrides the belief
        if self.done_believed:
            return WAIT, "believes the task is complete"
        if self.lost:
            self.lost = False
            return self.last, "lost track: repeats its previous action"
        held = [h["id"] for h in obs["holding"]]
        # notice a wrong object in hand (self-correction)
        for oid in held:
            real = next(h["class_name"] for h in obs["holding"] if h["id"] == oid)
            if self.believed.get(oid) != real and self.rng.random() < self.profile.p_notice_mistake:
                self.corrections.append(M.self_correction(real, self.believed[oid]))
                self.believed[oid] = real
                self.to_drop.add(oid)
        for oid in held:
            if oid in self.to_drop or not self._needed_or_held(oid):
                return self._drop(oid), "putting back a wrong object"
        if instruction:
            act = self._follow(parsed, held)
            if act is not None:
                return act, f"following: {instruction}"
        if self.rng.random() < self.profile.p_explore_random:
            pool = self._all_rooms() if self.rng.random() < self.profile.p_zone_slip else self.ctx.allowed_rooms
            rooms = [r for r in pool if r != obs["room"]]
            if rooms:
                return Action("walk_to_room", room=self.rng.choice(rooms)), "random exploration"
        # a partner offering at my door is served before I carry off what I hold: with a free hand
        # I take the next object too, so one trip to the target carries both (sequential tasks)
        door = self._awaiting_door()
        if door is not None and len(held) < 2:
            if obs.get("at_door") != door:
                return Action("walk_to_door", door=door), "going to receive"
            return Action("receive"), "receiving"
        if held:
            act = self._deliver(held)
            if act is not None:
                self.my_loc = None  # it is not on its way to check a place any more
                return act, "delivering"
        act = self._fetch(held)
        if act is not None:
            return act, "fetching"
        if self.ctx.structure == "sequential" and len(held) < 2:
            door = self._door_towards(None, giving=False)
            if door is not None:
                if obs.get("at_door") != door:
                    return Action("walk_to_door", door=door), "idle: waiting at the door"
                return Action("receive"), "idle: receiving"
        return WAIT, "nothing to do"

    def _step_aside(self) -> Action | None:
        """Idle at a goal target: walk to the nearest other furniture so carriers can reach it."""
        at = self.obs.get("standing_at")
        targets = {i.target for i in self.goal.items}
        vis = self._visible()
        spot = vis.get(at)
        if spot is None or not ({spot["class_name"]} | {vis.get(spot.get("on") or -1, {}).get("class_name")}) & targets:
            return None
        away = sorted((v for v in vis.values() if v["class_name"] not in targets and v["category"] != "Doors"
                       and "GRABBABLE" not in v.get("properties", []) and self.step - self.blocked.get(v["id"], -99) > 2),
                      key=lambda v: (v.get("distance", 0.0), v["id"]))
        return Action("walk", obj=away[0]["id"]) if away else None

    def _needed_or_held(self, oid: int) -> bool:
        cls = self.believed.get(oid)
        return cls is not None and self._item(cls) is not None

    def _believed_cls(self, oid: int, k: Known) -> str:
        return self.believed.get(oid, k.cls)

    def _visible(self) -> dict[int, dict[str, Any]]:
        return {v["id"]: v for v in self.obs["visible"]}

    def _drop(self, oid: int) -> Action:
        vis = self._visible()
        spots = sorted((v for v in vis.values() if "SURFACES" in v.get("properties", [])
                        and "GRABBABLE" not in v.get("properties", []) and v["category"] != "Doors"
                        and self.step - self.blocked.get(v["id"], -99) > 2),
                       key=lambda v: (v.get("distance", 0.0), v["id"]))
        if not spots:
            rooms = [r for r in self.ctx.allowed_rooms if r != self.obs["room"]]
            return Action("walk_to_room", room=rooms[0]) if rooms else WAIT
        spot = spots[0]["id"]
        if self.near != spot:
            return Action("walk", obj=spot)
        self.to_drop.discard(oid)
        return Action("put_on", obj=oid, target=spot)

    def _target_id(self, item: GoalItem) -> int | None:
        for v in self.obs["visible"]:
            if v["class_name"] == item.target:
                return v["id"]
        return None

    def _go_see_target(self, item: GoalItem) -> Action | None:
        """Back to where a ``item.target`` of this room was last seen (:meth:`_go_see`)."""
        here = self.obs["room"]
        for fid, (cls, room) in sorted(self.furniture.items()):
            if cls == item.target and room == here:
                act = self._go_see(fid)
                if act is not None:
                    return act
        return None

    def _deliver(self, held: list[int]) -> Action | None:
        for oid in held:
            cls = self.believed.get(oid)
            item = self._item(cls) if cls else None
            if item is None:
                continue
            troom = self.goal.target_room.get(item.target)
            if troom is None or troom in self.ctx.allowed_rooms:
                if len(held) == 1 and self._fetch_candidate(same_room=True) is not None \
                        and item.relation != "inside":
                    return None
                if troom is not None and self.obs["room"] != troom:
                    return Action("walk_to_room", room=troom)
                tid = self._target_id(item)
                if tid is None:
                    act = self._go_see_target(item)
                    if act is None and troom == self.obs["room"]:
                        act = self._search_in_room()
                    if act is not None:
                        return act
                    others = [r for r in self.ctx.allowed_rooms if r not in self.explored]
                    return Action("walk_to_room", room=others[0]) if others else WAIT
                if item.relation == "inside" and self.closed.get(tid, False):
                    if self.near != tid:
                        return Action("walk", obj=tid)
                    return Action("open", obj=tid)
                if self.near != tid:
                    return Action("walk", obj=tid)
                return Action("put_in" if item.relation == "inside" else "put_on", obj=oid, target=tid)
            door = self._door_towards(troom)
            if door is None:
                continue
            # fill the other hand before the trip, unless already at the door: a giver there
            # empties its hands (issue 28: it carried the second object off and back again)
            if len(held) == 1 and self.obs.get("at_door") != door and self._fetch_candidate(same_room=True) is not None:
                return None
            if self.obs.get("at_door") != door:
                return Action("walk_to_door", door=door)
            ready = self.ready.get(door)
            partner = ready[0] if ready else self._partner_at(door)
            if not self.ctx.has_channel or (ready and self.step - ready[1] <= 1):
                return Action("handover", obj=oid, recipient=partner)
            return WAIT
        return None

    def _offering(self) -> tuple[int, str, int] | None:
        door = self.obs.get("at_door")
        if door is None:
            return None
        for h in self.obs["holding"]:
            cls = self.believed.get(h["id"], h["class_name"])
            troom = self._target_room(cls)
            if troom is not None and troom not in self.ctx.allowed_rooms:
                return door, cls, h["id"]
        return None

    def _awaiting_door(self) -> int | None:
        for door, (agent, step, _) in sorted(self.offers.items()):
            if agent != self.me and self.step - step <= 3 and self._door_side(door) is not None:
                return door
        return None

    def _door_side(self, door: int) -> str | None:
        for d, a, b in self.ctx.doors:
            if d == door:
                return a if a in self.ctx.allowed_rooms else (b if b in self.ctx.allowed_rooms else None)
        return None

    def _door_towards(self, room: str | None, giving: bool = True) -> int | None:
        """The door to hand things over at: the task's handover chain when it has one (a door where
        I give, or receive when ``giving`` is False), else a door from my zone into ``room`` or,
        failing that, any door leaving my zone (rooms in no zone look like any other room)."""
        chain = [d for g, r, d in self.ctx.handovers if (g if giving else r) == self.me]
        if chain:
            return chain[0]
        if self.ctx.handovers:
            return None
        mine = set(self.ctx.allowed_rooms)
        leaving = [(d, a, b) for d, a, b in self.ctx.doors if (a in mine) != (b in mine)]
        towards = [d for d, a, b in leaving if room in (a, b)]
        return towards[0] if towards else (leaving[0][0] if leaving else None)

    def _partner_at(self, door: int) -> int:
        """Who receives at ``door``: the chain's receiver there, else the next agent."""
        return next((r for g, r, d in self.ctx.handovers if g == self.me and d == door),
                    (self.me + 1) % self.ctx.n_agents)

    def _fetch_candidate(self, same_room: bool = False) -> int | None:
        """The known object to fetch next: in this room first, then in rooms no teammate is in;
        an object in a room where a teammate is (as it said) only when no prior location is left
        to check (division of labour by room, which only talking makes possible)."""
        rem = self._open()
        best = None
        busy = {r for b, r in self.teammate_room.items() if b != self.me}
        locs_left = self._next_prior(commit=False) is not None
        forget = self.forget_now
        for oid, k in sorted(self.known.items()):
            if rem.get(k.cls, 0) <= 0 or self._on_target(oid, k) or k.room not in self.ctx.allowed_rooms:
                continue
            if self._claimed_by_other(oid) and not forget:
                continue
            if same_room and k.room != self.obs["room"]:
                continue
            troom = self._target_room(k.cls)
            if troom is not None and troom not in self.ctx.allowed_rooms and self._door_towards(troom) is None:
                continue
            rank = 0 if k.room == self.obs["room"] else (2 if k.room in busy else 1)
            if rank == 2 and locs_left:
                continue
            key = (rank, oid)
            if best is None or key < best[0]:
                best = (key, oid)
        return None if best is None else best[1]

    def _choose_target(self) -> None:
        mine = self.known.get(self.my_claim) if self.my_claim is not None else None
        if self.my_claim is not None and (mine is None or self._claimed_by_other(self.my_claim)
                                          or self._open(below=self.me).get(self._believed_cls(self.my_claim, mine), 0) <= 0):
            self.my_claim = None  # gone, taken, or its class is covered by teammates with lower ids
        if self.my_claim is None and len(self.obs.get("holding", [])) < 2 and not self.done_believed:
            oid = self._fetch_candidate()
            if oid is not None:
                k = self.known[oid]
                look = self._lookalike(k) if k.room == self.obs["room"] else None
                if look is not None and self.confuse_now:
                    self.known[look] = Known(k.cls, k.room, self.known[look].loc, self.known[look].loc_cls,
                                             self.known[look].rel, self.step)
                    self.mistaken[look] = k.cls
                    oid = look
                self.my_claim = oid
                self._claim(oid, self.me)

    def _lookalike(self, k: Known) -> int | None:
        """A look-alike of ``k``'s class in view, which a confused step takes for ``k`` (object
        misidentification, mecobench.txt Table 21: "Agent 3 executes [grab] <dishbowl>
        (misidentifying dishbowl as wineglass)"). The agent then goes for it believing it is the
        target (``mistaken``) until it has it in hand, where noticing the mistake is
        ``p_notice_mistake``'s business."""
        twin = CONFUSABLE.get(k.cls)
        for v in self.obs["visible"]:
            if twin and v["class_name"] == twin and v.get("held_by") is None:
                self.known.setdefault(v["id"], Known(twin, self.obs["room"], v.get("inside") or v.get("on"),
                                                     None, "inside" if v.get("inside") else "on", self.step))
                return v["id"]
        return None

    def _fetch(self, held: list[int]) -> Action | None:
        if len(held) >= 2:
            return None
        self._choose_target()
        oid = self.my_claim
        if oid is not None:
            return self._go_grab(oid)
        open_ = self._open()
        if all(n <= 0 for n in open_.values()):
            return None  # everything left is in hand or claimed: nothing to fetch
        loc = self._next_prior()
        if loc is None:  # every listed place is being checked by a teammate: join the nearest one
            loc = next(((p.cls, p.furniture, p.room) for p in self._prior_order()
                        if p.room in self.ctx.allowed_rooms and open_.get(p.cls, 0) > 0
                        and not self._location_done(p.furniture, p.room)), None)
        if loc is not None:
            return self._go_check(loc)
        return self._search()

    # -- search ------------------------------------------------------------------------------------
    def _unchecked_here(self, cls: str | None = None) -> list[dict[str, Any]]:
        """Furniture seen from here that may hold things and was not looked at closely, nearest first."""
        out = []
        for v in self.obs["visible"]:
            props = v.get("properties", [])
            if "GRABBABLE" in props or v["id"] in self.checked or not ({"SURFACES", "CONTAINERS"} & set(props)):
                continue
            if v["category"] == "Doors" or (cls is not None and v["class_name"] != cls):
                continue
            if (v["class_name"], self.obs["room"]) in self.said_checked and cls is None:
                continue
            if self.step - self.blocked.get(v["id"], -99) <= 2:
                continue
            out.append(v)
        return sorted(out, key=lambda v: (v.get("distance", 0.0), v["id"]))

    def _look_at(self, fid: int) -> Action:
        """Walk to a piece of furniture; open it when it is a closed container one stands at."""
        if self.near == fid and self.closed.get(fid):
            if not self._free_hand():
                self.checked.setdefault(fid, self.step)  # cannot open with full hands: give up on it
                return WAIT
            return Action("open", obj=fid)
        return Action("walk", obj=fid)

    def _search(self) -> Action | None:
        """Look at the nearest unsearched furniture here, else go to a room not yet searched."""
        cands = self._unchecked_here()
        if cands:
            return self._look_at(cands[0]["id"])
        self.searched_rooms.add(self.obs["room"])
        rooms = [r for r in self.ctx.allowed_rooms if r not in self.searched_rooms and r != self.obs["room"]]
        if self.preferred_room in rooms:
            return Action("walk_to_room", room=self.preferred_room)
        fresh = [r for r in rooms if r not in self.explored]
        for room in fresh or rooms:
            return Action("walk_to_room", room=room)
        return None

    def _free_hand(self) -> bool:
        return len(self.obs["holding"]) < 2

    def _go_grab(self, oid: int) -> Action:
        k = self.known[oid]
        if k.room != self.obs["room"]:
            return Action("walk_to_room", room=k.room)
        vis = self._visible()
        if oid not in vis:
            if k.loc is not None and k.loc in vis:
                return self._look_at(k.loc)
            back = self._go_see(k.loc if k.loc is not None else oid)
            if back is not None:
                return back
            cands = self._unchecked_here(k.loc_cls) if k.loc_cls else []
            act = self._look_at(cands[0]["id"]) if cands else self._search_in_room()
            if act is not None:
                return act
            del self.known[oid]  # searched the whole room for it: it is not there any more
            self.my_claim = None
            return WAIT
        loc = vis[oid].get("inside")
        # standing at an opened container brings what is inside within reach; else walk to it
        if self.near != oid and not (loc is not None and loc in self.closed and self.near == loc):
            return Action("walk", obj=oid)
        return Action("grab", obj=oid)

    def _search_in_room(self) -> Action | None:
        """The next look in this room, or None when every piece of furniture here was checked."""
        cands = self._unchecked_here()
        return self._look_at(cands[0]["id"]) if cands else None

    def _location_done(self, furn: str, room: str) -> bool:
        """Every piece of furniture of class ``furn`` seen in ``room`` was looked at closely
        (or a teammate said it searched there, or none is to be seen once in the room)."""
        if (furn, room) in self.said_checked:
            return True
        mine = [fid for fid, (c, r) in self.furniture.items() if c == furn and r == room]
        if not mine:
            return room in self.searched_rooms
        return all(fid in self.checked for fid in mine)

    def _next_prior(self, zone: set[str] | None = None, exclude: set[str] | None = None,
                    commit: bool = True, here: str | None = None) -> tuple[str, str, str] | None:
        """(class, furniture, room) of a prior location of a needed class not yet looked at.

        For its own plan (no ``zone``; ``commit``) the agent keeps the location it chose until it
        is done with it or a teammate ahead of it says it checks the same place."""
        commit = commit and zone is None and exclude is None
        if commit and self.my_loc is not None:
            cls, furn, room = self.my_loc
            if self._open().get(cls, 0) > 0 and not self._location_done(furn, room) \
                    and not self._location_taken((furn, room)):
                return self.my_loc
            self.my_loc = None
        rooms = zone if zone is not None else set(self.ctx.allowed_rooms)
        open_ = self._open()
        for loc in self._prior_order(here):
            if loc.room is None or loc.room not in rooms or (exclude and loc.room in exclude):
                continue
            if self._location_done(loc.furniture, loc.room) or open_.get(loc.cls, 0) <= 0:
                continue
            if self._location_taken((loc.furniture, loc.room)):
                continue
            if commit:
                self.my_loc = (loc.cls, loc.furniture, loc.room)
            return loc.cls, loc.furniture, loc.room
        return None

    def _prior_order(self, here: str | None = None) -> list[Any]:
        """Prior locations, those in ``here`` (default: the agent's current room) first, then as
        the goal lists them."""
        here = here or self.obs.get("room")
        return sorted(self.goal.locations, key=lambda loc: loc.room != here)

    def _location_taken(self, loc: tuple[str, str]) -> bool:
        """A teammate with a lower id said recently it checks this prior location (B.3 messages)."""
        said = self.loc_claims.get(loc, {})
        return any(b < self.me and self.step - s <= CLAIM_TTL for b, s in said.items() if b != self.me)

    def _go_check(self, loc: tuple[str, str, str]) -> Action:
        cls, furn, room = loc
        if self.obs["room"] != room:
            return Action("walk_to_room", room=room)
        cands = self._unchecked_here(furn)
        if cands:
            return self._look_at(cands[0]["id"])
        if not [fid for fid, (c, r) in self.furniture.items() if c == furn and r == room and fid not in self.checked]:
            self.said_checked.add((furn, room))  # nothing of that class left to look at here
            return WAIT
        act = self._search_in_room()  # the furniture is not in sight from here: move on in the room
        if act is None:
            self.said_checked.add((furn, room))
            return WAIT
        return act

    def _follow(self, parsed: tuple[str, tuple] | None, held: list[int]) -> Action | None:
        if parsed is None:
            return None
        kind, args = parsed
        if kind == "fetch" and len(held) < 2:
            oid = args[0]
            if oid in self.known:
                self.my_claim = oid
                return self._go_grab(oid)
        if kind == "deliver" and held:
            return self._deliver(held)
        if kind == "give":
            oid, partner, door = args
            if oid in held:
                if self.obs.get("at_door") != door:
                    return Action("walk_to_door", door=door)
                return Action("handover", obj=oid, recipient=partner)
        if kind == "door":
            door = args[0]
            return Action("walk_to_door", door=door) if self.obs.get("at_door") != door else WAIT
        if kind == "receive":
            door = args[0]
            return Action("walk_to_door", door=door) if self.obs.get("at_door") != door else Action("receive")
        if kind == "explore":
            room = args[0]
            if room in self.ctx.allowed_rooms and room != self.obs["room"]:
                return Action("walk_to_room", room=room)
            loc = self._next_prior()
            return self._go_check(loc) if loc else None
        if kind == "wait":
            return WAIT
        return None
