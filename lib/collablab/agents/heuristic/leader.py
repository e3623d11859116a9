"""The heuristic agent as a leader: one instruction per agent from reports and views (Fig. 22)."""

from __future__ import annotations

from typing import Any

from ..base import Assignment, Message, Utterance
from . import phrasebook as M


class LeaderMixin:
    """Leader behaviour of ``HeuristicPolicy``; uses its beliefs and helpers."""

    # -- leader ------------------------------------------------------------------------------------
    def assign(self, reports: list[Message], views: dict[int, dict[str, Any]] | None,
               images: dict[int, Any] | None) -> Assignment:
        # the reports arrived through ``hear`` already (the protocol delivers them to the leader
        # before it asks for assignments, Fig. 22)
        for a, obs in (views or {}).items():
            if a != self.me:
                self._absorb_view(obs, mine=False)
                self.teammate_room[a] = obs["room"]
                self.teammate_door[a] = obs.get("at_door")
                self.teammate_holding[a] = [h["id"] for h in obs["holding"]]
                self.cls_of.update({h["id"]: h["class_name"] for h in obs["holding"]})
        self.teammate_room[self.me] = self.obs["room"]
        self.teammate_door[self.me] = self.obs.get("at_door")
        self.teammate_holding[self.me] = [h["id"] for h in self.obs["holding"]]
        instructions: dict[int, str] = {}
        taken: set[int] = set()
        explore_taken: set[str] = set()
        receivers: dict[int, int] = {}
        agents = range(self.ctx.n_agents)
        for a in agents:  # carriers first
            held = self.teammate_holding.get(a, [])
            if not held:
                continue
            oid = held[0]
            cls = self.believed.get(oid) or self.cls_of.get(oid, "object")
            troom = self._target_room(cls)
            door = self._door_towards(troom) if self.ctx.structure == "sequential" else None
            if door is None or troom in self._zone_of(a):
                instructions[a] = f"deliver what you hold to the {self._item(cls).target if self._item(cls) else 'target'}."
                continue
            partner = next((b for b in agents if b != a and troom in self._zone_of(b)), (a + 1) % self.ctx.n_agents)
            if self.teammate_door.get(a) == door and self.teammate_door.get(partner) == door:
                instructions[a] = f"hand over the {cls} ({oid}) to agent {partner} at door {door}."
            else:
                instructions[a] = f"go to door {door} and wait."
            receivers[partner] = door
        for b, door in receivers.items():
            if b not in instructions and len(self.teammate_holding.get(b, [])) < 2:
                instructions[b] = f"go to door {door} and receive."
        rem = self._remaining()
        # share the fetching out evenly: the agent with the fewest fetches so far picks first
        for a in sorted(agents, key=lambda a: (self.fetches.get(a, 0), a)):
            if a in instructions:
                continue
            room = self.teammate_room.get(a)
            best = None
            for oid, k in sorted(self.known.items()):
                if oid in taken or rem.get(k.cls, 0) <= 0 or self._on_target(oid, k):
                    continue
                if k.room not in self._zone_of(a):
                    continue
                key = (0 if k.room == room else 1, oid)
                if best is None or key < best[0]:
                    best = (key, oid, k)
            if best is not None:
                _, oid, k = best
                taken.add(oid)
                rem[k.cls] -= 1
                if self.claims.get(oid, {}).get(a) is None:
                    self.fetches[a] = self.fetches.get(a, 0) + 1
                self._claim(oid, a)
                instructions[a] = f"grab the {k.cls} ({oid}) from the {k.loc_cls or 'floor'} in the {k.room}."
                continue
            loc = self._kept_check(a, explore_taken) or self._next_prior(
                zone=self._zone_of(a), exclude=explore_taken, commit=False, here=room)
            if loc is not None:
                self.checks[a] = loc
                explore_taken.add(loc[2])
                instructions[a] = f"check the {loc[2]} for the {loc[0]} on the {loc[1]}."
            elif rem and any(v > 0 for v in rem.values()):
                instructions[a] = "look for the remaining objects yourself."
            else:
                instructions[a] = "wait."
        text = " ".join(M.assignment(a, instructions[a]) for a in sorted(agents))
        return Assignment(instructions, Utterance(text))

    def _kept_check(self, agent: int, taken: set[str]) -> tuple[str, str, str] | None:
        """The place the agent was last sent to check, while it is still worth checking: a leader
        does not send two workers back and forth between each other's rooms."""
        loc = self.checks.get(agent)
        if loc is None:
            return None
        cls, furn, room = loc
        if room in taken or self._location_done(furn, room) or self._open().get(cls, 0) <= 0:
            del self.checks[agent]
            return None
        return loc

    def _zone_of(self, agent: int) -> set[str]:
        """Rooms an agent may use. In sequential tasks a leader knows its own zone and takes
        the rest as its partner's (MECoBench's sequential tasks have two zones)."""
        rooms = set(self._all_rooms())
        if self.ctx.structure != "sequential":
            return rooms
        mine = set(self.ctx.allowed_rooms)
        return mine if agent == self.me else (rooms - mine or rooms)

    def _all_rooms(self) -> list[str]:
        rooms = {r for _, a, b in self.ctx.doors for r in (a, b)} | set(self.ctx.allowed_rooms)
        rooms |= set(self.goal.target_room.values())
        return sorted(rooms)
