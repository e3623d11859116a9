"""A scripted oracle team: a plan recomputed every step from the true world state.

It is not an agent model: it reads the simulator state directly, claims objects so no two
agents fetch the same one, opens containers, carries two objects when that is safe, and in
sequential tasks routes objects through door handovers between room zones (along the task's
handover chain when it has one). It obeys the world's rules like any agent: it walks only to
what it sees now, so reaching an object it cannot see yet means a shortest chain of walks
between spots that see each other (:func:`next_spot`). It exists to prove every task is
solvable within budget and to exercise the world's rules end to end.
"""

from __future__ import annotations

from collections import deque

from ...agents.base import Turn
from ...world.actions import WAIT, Action
from ...world.goals import Predicate
from ...world.household import Household
from ...world.scene import STRUCTURAL_CATEGORIES
from .tasks import Task


def spots_of(w: Household, room: int) -> list[int]:
    """Places one can walk to in ``room``: its doors, furniture and the objects lying in it."""
    return [n for n in w._room_members(room)
            if n not in w.char_ids and w.node(n).category not in STRUCTURAL_CATEGORIES and w.holder(n) is None]


def next_spot(w: Household, a: int, target: int) -> int | None:
    """The first walk on a shortest chain of walks after which agent ``a`` sees ``target``.

    Spots are the room's doors, furniture and objects; one can walk from a point to a spot
    the point sees (:meth:`Household.sees_from`). Returns ``target`` itself when it is seen
    now, None when no chain within the room reaches a place from which it is seen."""
    if w.visible(a, target):
        return target
    room = w.agent_room(a)
    spots = [s for s in spots_of(w, room) if w.hidden_by(s) is None]
    start = w.pos[a]
    first: dict[int, int] = {}
    frontier = []
    for s in spots:
        if w.sees_from(start, s):
            first[s] = s
            frontier.append(s)
    while frontier:
        nxt = []
        for s in frontier:
            p = w.stand_point(s, a)
            if w.sees_from(p, target):
                return first[s]
            for t in spots:
                if t not in first and w.sees_from(p, t):
                    first[t] = first[s]
                    nxt.append(t)
        frontier = nxt
    return None


class OracleTeam:
    """Centralised planner over the true state (backend ``oracle``)."""

    backend = "oracle"

    def reset(self, world: Household, task: Task, seed: int) -> None:
        self.claims: dict[int, int] = {}  # object -> agent fetching it
        self.unreachable: set[int] = set()  # objects no chain of walks lets anyone see
        # links between zones: (from agent, to agent) -> door id
        self.links: dict[tuple[int, int], int] = {}
        for g, r, door in sorted(world.handover_links):
            self.links.setdefault((g, r), door)
        for d in [] if world.handover_links else world.scene.doors:
            for a in range(world.n_agents):
                for b in range(world.n_agents):
                    if a != b and d.rooms[0] in world.allowed[a] and d.rooms[1] in world.allowed[b]:
                        self.links.setdefault((a, b), d.id)
                        self.links.setdefault((b, a), d.id)

    # -- helpers ---------------------------------------------------------------------
    def _close(self, w: Household, a: int, nid: int) -> bool:
        ex = w._eg.execution
        return w.visible(a, nid) and bool(ex._is_character_close_to(w.state, w.node(nid), a))

    def _pred_for(self, w: Household, obj: int, need: dict[str, int]) -> Predicate | None:
        cls = w.node(obj).class_name
        for p in w.goal:
            if p.obj_class == cls and need.get(p.key, 0) > 0:
                return p
        return None

    def _can_reach(self, w: Household, a: int, room: int | None) -> bool:
        return room is not None and room in w.allowed[a]

    def _next_hop(self, w: Household, a: int, room: int) -> tuple[int, int] | None:
        """(next agent, door) on the zone path from agent a towards a room."""
        goal_agents = [b for b in range(w.n_agents) if room in w.allowed[b]]
        prev: dict[int, int | None] = {a: None}
        q = deque([a])
        while q:
            cur = q.popleft()
            if cur in goal_agents and cur != a:
                while prev[cur] != a:
                    cur = prev[cur]  # type: ignore[assignment]
                return cur, self.links[(a, cur)]
            for (x, y) in sorted(self.links):
                if x == cur and y not in prev:
                    prev[y] = cur
                    q.append(y)
        return None

    # -- planning --------------------------------------------------------------------
    def act(self, w: Household) -> dict[int, Turn]:
        sat = w.satisfied()
        need = {p.key: p.count - sat[p.key] for p in w.goal}
        held = {a: w.holding(a) for a in range(w.n_agents)}
        # objects in hands count against the remaining need
        for a in range(w.n_agents):
            for o in held[a]:
                p = self._pred_for(w, o, need)
                if p is not None:
                    need[p.key] -= 1
        on_target = set()
        for p in w.goal:
            on_target.update(w._satisfying(p))
        self.claims = {o: a for o, a in self.claims.items() if not any(o in h for h in held.values())
                       and o not in on_target}
        for o in sorted(self.claims):
            p = self._pred_for(w, o, need)
            if p is not None:
                need[p.key] -= 1
        actions: dict[int, Action] = {}
        receiving: dict[int, int] = {}  # receiver -> giver
        # 1) carriers: deliver or hand over
        for a in range(w.n_agents):
            act = self._deliver(w, a, held[a], need, receiving)
            if act is not None:
                actions[a] = act
        # 2) fetchers
        for a in range(w.n_agents):
            if a in actions or a in receiving:
                continue
            act = self._fetch(w, a, held[a], need)
            if act is not None:
                actions[a] = act
        # 3) receivers wait at their door when something is coming their way
        for a in range(w.n_agents):
            if a in receiving:
                actions[a] = Action("receive")
            elif a not in actions:
                actions[a] = self._await_delivery(w, a, held) or self._make_room(w, a) or WAIT
        return {a: Turn(actions[a]) for a in range(w.n_agents)}

    def _make_room(self, w: Household, a: int) -> Action | None:
        """An idle agent standing at a goal target steps aside so carriers can reach it."""
        targets = {w.anchor(t) for p in w.goal for t in p.targets}
        if w.anchor(w.spot[a]) not in targets:
            return None
        here = w.agent_room(a)
        away = [s for s in spots_of(w, here) if w.anchor(s) not in targets and w.visible(a, s) and not w._crowd(a, s)]
        if away:
            return Action("walk", obj=away[0])
        others = sorted(r for r in w.allowed[a] if r != here)
        return Action("walk_to_room", room=others[0]) if others else None

    def _target_room(self, w: Household, o: int) -> int | None:
        cls = w.node(o).class_name
        p = next((p for p in w.goal if p.obj_class == cls), None)
        return None if p is None else w.room_of(p.target_id)

    def _target_closed(self, w: Household, o: int) -> bool:
        cls = w.node(o).class_name
        for p in w.goal:
            if p.obj_class == cls and not w.is_open(p.target_id):
                return True
        return False

    def _deliver(self, w: Household, a: int, held: list[int], need: dict[str, int],
                 receiving: dict[int, int]) -> Action | None:
        for o in held:
            cls = w.node(o).class_name
            p = next((p for p in w.goal if p.obj_class == cls), None)
            if p is None:
                continue
            troom = w.room_of(p.target_id)
            if self._can_reach(w, a, troom):
                if len(held) == 1 and self._more_here(w, a, need) and not self._target_closed(w, o):
                    return None  # pick up a second object in this room first
                if w.agent_room(a) != troom:
                    return Action("walk_to_room", room=troom)
                tgt = self._target_of(w, a, p)
                if not self._close(w, a, tgt):
                    return self._walk(w, a, tgt)
                if not w.is_open(tgt):
                    return Action("open", obj=tgt)
                return Action("put_in" if p.relation == "inside" else "put_on", obj=o, target=tgt)
            hop = self._next_hop(w, a, troom)  # type: ignore[arg-type]
            if hop is None:
                continue
            b, door = hop
            if len(held) == 1 and self._more_here(w, a, need):
                return None
            if w.at_door[a] != door:
                return Action("walk_to_door", door=door)
            if w.at_door[b] == door and b not in receiving and w._free_hand(b) is not None \
                    and not (w.holding(b) and self._target_closed(w, o)):
                receiving[b] = a
                return Action("handover", obj=o, recipient=b)
            return WAIT
        return None

    def _more_here(self, w: Household, a: int, need: dict[str, int]) -> bool:
        """Is agent a already fetching a second object, or is one waiting in this room?"""
        if any(who == a for who in self.claims.values()):
            return True
        return self._pick(w, a, need, same_room_only=True) is not None

    def _pick(self, w: Household, a: int, need: dict[str, int], same_room_only: bool = False) -> int | None:
        here = w.agent_room(a)
        best: tuple[int, int] | None = None
        for p in w.goal:
            if need.get(p.key, 0) <= 0:
                continue
            on_target = set(w._satisfying(p))
            for o in w._class_ids.get(p.obj_class, []):
                if o in on_target or o in self.claims or w.holder(o) is not None or o in self.unreachable:
                    continue
                room = w.room_of(o)
                if not self._can_reach(w, a, room) or (same_room_only and room != here):
                    continue
                troom = w.room_of(p.target_id)
                if not self._can_reach(w, a, troom) and self._next_hop(w, a, troom) is None:  # type: ignore[arg-type]
                    continue
                key = (0 if room == here else 1, o)
                if best is None or key < best:
                    best = key
        return None if best is None else best[1]

    def _fetch(self, w: Household, a: int, held: list[int], need: dict[str, int]) -> Action | None:
        if len(held) >= 2 or any(self._target_closed(w, o) for o in held):
            return None
        mine = [o for o, who in sorted(self.claims.items()) if who == a]
        o = mine[0] if mine else self._pick(w, a, need, same_room_only=bool(held))
        if o is None:
            return None
        if not mine:
            self.claims[o] = a
            p = self._pred_for(w, o, need)
            if p is not None:
                need[p.key] -= 1
        room = w.room_of(o)
        if room != w.agent_room(a):
            return Action("walk_to_room", room=room)
        box = w.hidden_by(o)
        if box is not None:
            return Action("open", obj=box) if self._close(w, a, box) else self._walk(w, a, box)
        if not self._close(w, a, o) or not w.visible(a, o):
            return self._walk(w, a, o)
        return Action("grab", obj=o)

    def _walk(self, w: Household, a: int, target: int) -> Action:
        """Walk towards ``target``: to it when seen, else to the next spot of a chain that sees it."""
        spot = next_spot(w, a, target)
        if spot is None:
            self.unreachable.add(target)
            self.claims = {o: b for o, b in self.claims.items() if not (b == a and o == target)}
            return WAIT
        return Action("walk", obj=spot)

    def _target_of(self, w: Household, a: int, p: Predicate) -> int:
        """The acceptable target of ``p`` nearest to agent ``a`` (all satisfy the goal)."""
        targets = p.targets
        here = [t for t in targets if w.room_of(t) == w.agent_room(a)] or list(targets)
        return min(here, key=lambda t: (not w.visible(a, t), t))

    def _await_delivery(self, w: Household, a: int, held: dict[int, list[int]]) -> Action | None:
        """Go to the door where a teammate will hand something over."""
        if w._free_hand(a) is None:
            return None
        for b in range(w.n_agents):
            if b == a or (b, a) not in self.links:
                continue
            mine = held[b] + [o for o, who in sorted(self.claims.items()) if who == b]
            coming = [o for o in mine if self._target_room(w, o) not in w.allowed[b]]
            if not coming:
                continue
            door = self.links[(b, a)]
            return Action("receive") if w.at_door[a] == door else Action("walk_to_door", door=door)
        return None
