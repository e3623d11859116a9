"""The offline backend for every DynaHMRC role (dynahmrc.tex §3.2-3.4): a rule-based robot that
reads only its :class:`~.brain.Context` (labelled ``heuristic``; never presented as an LLM).

It plays each stage the way the appendix prompts ask, from the text a robot is given:

- **SD / TALB / LE.** It describes its type; its proposal splits the places to search among the
  navigating robots (open places among all of them, "navigation robots jointly explore the
  environment"; elevated places to a drone and closed containers to a mobile manipulator, "flying
  robots explore high areas, opening robots handle hinged objects"; rooms dealt in an order of its
  own, so two robots' proposals differ) and names who fetches what; it votes for the candidate whose
  type can do the most (``tab:atomic_action``), swinging to the front-runner after a tied round; the
  referee picks the most capable tied candidate.
- **HMRC.** Targets not yet placed are read from the task status line; where objects are comes from
  its scene graph, and from facts written ``<object> is on <place>`` in messages, the plan and its
  own reflection; what it has searched, which stand poses failed, the implicit placing rule (Place
  Failed (4)) and restricted zones (Navigation Failed (4)) come from its feedback and action
  histories. Movers fetch and hand off, the manipulator places, the mobile robot searches and
  reports, everyone asks for help they need (open a container, fetch from an elevated place, bring
  an object within the manipulator's reach). It searches the cheap places first: its own share's
  open places (one navigation each), then its hidden ones (open a container, fly up), then the
  others' in the same order ("Efficiently explore ... without repetition"). Without feedback it
  cannot tell why an action failed: it retries, then tries the other way (a hand-off instead of the
  receptacle, the next stand pose); without history it only has the latest feedback.
- **GD / LP.** Its reflection lists lessons (the placing rule, zones), the facts it knows and what
  it has searched; the leader's update reassigns the places nobody searched among the robots that
  reported (a removed robot does not report, so its share moves on) and passes every fact and lesson
  on in the plan.

The capability profile (:class:`OfflineProfile`) is the same in every condition: ``slip`` is the
chance of a random action instead of the chosen one, ``vote_noise`` of a random vote,
``retries`` how often an unexplained failure is repeated before trying something else. Token counts
are a word-count proxy of what the prompt would hold (labelled as such in results).
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, replace
from typing import Iterable

from .brain import Context, Plan, Reply, letter
from .layout import Point, distance
from .robots import ROBOT_TYPES

__all__ = ["OfflineBrain", "OfflineProfile", "PROFILES", "coela_option", "facts_in"]


@dataclass(frozen=True)
class OfflineProfile:
    """How well the rule-based robot executes its rules (the same in every condition)."""

    name: str = "default"
    slip: float = 0.05
    vote_noise: float = 0.15
    retries: int = 2


PROFILES = {p.name: p for p in (OfflineProfile(), OfflineProfile("weak", slip=0.15, vote_noise=0.3, retries=3),
                                OfflineProfile("strong", slip=0.0, vote_noise=0.05, retries=1))}

_FACT = re.compile(r"\b([a-z]+(?:_[a-z]+)*_\d+) is (?:on|in|inside|on/in) (?:the )?([a-z]+(?:_[a-z0-9]+)*)")
_HANDLE = re.compile(r"\b[a-z]+(?:_[a-z]+)*_\d+\b")
_REACHED = re.compile(r"successfully reached the target (\S+)-stand pose (\d+)")
_OPENED = re.compile(r"successfully opened (\S+)\.")
_RULE = "Only the manipulation robot may place objects onto the target receptacle."


def facts_in(texts: Iterable[str]) -> dict[str, str]:
    """``object -> place`` facts written ``<object> is on <place>`` (later texts win)."""
    out: dict[str, str] = {}
    for t in texts:
        for obj, place in _FACT.findall(t):
            out[obj] = place
    return out


def _words(*parts: Iterable[str] | str) -> int:
    n = 0
    for p in parts:
        n += len(p.split()) if isinstance(p, str) else sum(len(x.split()) for x in p)
    return n


class OfflineBrain:
    """One robot's rule-based core (``label`` ``heuristic``)."""

    label = "heuristic"

    def __init__(self, name: str, code: str, profile: OfflineProfile = OfflineProfile(), seed: int = 0) -> None:
        self.name, self.code, self.profile = name, code, profile
        self.rng = random.Random(f"offline:{profile.name}:{name}:{code}:{seed}")

    # -- helpers ------------------------------------------------------------------------------
    def _reply(self, ctx: Context, text: str, value: object) -> Reply:
        tokens_in = 180 + 12 * len(ctx.places) + 8 * len(ctx.objects) + _words(
            ctx.feedback_history, ctx.action_history, ctx.message_history, ctx.plan.text if ctx.plan else "",
            ctx.newcomers.values())
        return Reply(text=text, value=value, tokens_in=tokens_in, tokens_out=len(text.split()) + 20)

    @staticmethod
    def _score(code: str) -> float:
        t = ROBOT_TYPES[code]
        return len(t.actions) + (0.5 if t.flies else 0.0)

    # -- SD / TALB / LE ---------------------------------------------------------------------------
    def describe(self, ctx: Context) -> Reply:
        t = ctx.type
        text = (f"I am {ctx.name}, a {t.kind}: {t.description}. My actions: {', '.join(t.actions)}."
                + (f" My arm reaches {t.reach_m:.2f} m." if t.reach_m else ""))
        return self._reply(ctx, text, text)

    def _allocation(self, ctx: Context, order_seed: str, robots: list[tuple[str, str]]) -> Plan:
        navigators = [(n, c) for n, c in robots if ROBOT_TYPES[c].mobile]
        explore: dict[str, list[str]] = {n: [] for n, _ in navigators}
        roles: dict[str, str] = {}
        rng = random.Random(order_seed)
        places = [p for p in ctx.places if p.handle not in ctx.task.receptacles and p.handle != ctx.task.working_table]
        drones = [n for n, c in navigators if ROBOT_TYPES[c].flies]
        openers = [n for n, c in navigators if "open" in ROBOT_TYPES[c].actions]
        names = [n for n, _ in navigators]
        rooms = sorted({p.room for p in places})
        rng.shuffle(rooms)
        for p in sorted(places, key=_search_cost):
            # open places: every navigating robot jointly, by room; hidden ones: whoever can search them
            pool = drones if p.elevated else openers if p.state == "close" else names
            if pool:
                explore[pool[rooms.index(p.room) % len(pool)]].append(p.handle)
        movers = [n for n, c in navigators if ROBOT_TYPES[c].manipulates]
        fetch: dict[str, list[str]] = {n: [] for n in movers}
        for k, room in enumerate(rooms):
            if movers:
                fetch[movers[k % len(movers)]].append(room)
        for n, c in robots:
            t = ROBOT_TYPES[c]
            roles[n] = ("place the targets onto the receptacle" if c == "Ma" else
                        "search elevated areas and fetch from them" if t.flies else
                        "open containers, fetch and hand off objects" if "open" in t.actions else
                        "search and report objects")
        text = "Collaboration plan: " + "; ".join(
            f"{n} ({roles[n]}) searches {', '.join(explore.get(n, [])) or 'nothing'}"
            + (f" and fetches from {', '.join(fetch[n])}" if fetch.get(n) else "") for n, _ in robots) + "."
        return Plan(text, explore, roles, fetch)

    def propose(self, ctx: Context) -> Reply:
        robots = [(ctx.name, ctx.type.code), *ctx.teammates]
        plan = self._allocation(ctx, f"proposal:{ctx.name}:{ctx.task.text}", robots)
        speech = (f"Vote for {ctx.name}: as a {ctx.type.kind} I can {', '.join(ctx.type.actions)}, "
                  f"so I can coordinate the team.")
        return self._reply(ctx, plan.text + " " + speech, (plan, speech))

    def vote(self, ctx: Context, candidates: list[str]) -> Reply:
        codes = dict([(ctx.name, ctx.type.code), *ctx.teammates])
        ranked = sorted(candidates, key=lambda n: (-self._score(codes.get(n, "Mo")), candidates.index(n)))
        choice = ranked[0]
        if ctx.vote_history:
            last = ctx.vote_history[-1]
            top = max(last.values())
            tied = [n for n in ranked if last.get(n, 0) == top]
            choice = tied[0]
        if self.rng.random() < self.profile.vote_noise:
            choice = self.rng.choice(candidates)
        return self._reply(ctx, f"Leader: {choice}", choice)

    def referee(self, ctx: Context, candidates: list[str]) -> Reply:
        codes = dict([(ctx.name, ctx.type.code), *ctx.teammates])
        totals = {n: sum(h.get(n, 0) for h in ctx.vote_history) for n in candidates}
        best = sorted(candidates, key=lambda n: (-totals[n], -self._score(codes.get(n, "Mo")), candidates.index(n)))
        return self._reply(ctx, f"Leader: {best[0]}", best[0])

    # -- knowledge ------------------------------------------------------------------------------
    def _status(self, ctx: Context) -> tuple[list[str], list[str]]:
        """(targets still to place, objects to take out of the receptacle) from the status line."""
        s = ctx.task_status
        targets = list(ctx.task.targets)
        if ctx.task.kind == "sandwich":
            stack = _HANDLE.findall(s)
            n = 0
            while n < min(len(stack), len(targets)) and stack[n] == targets[n]:
                n += 1
            return targets[n:], stack[n:]
        if ctx.task.kind == "pack":
            inside = _HANDLE.findall(s)
            return [t for t in targets if t not in inside], [o for o in inside if o not in targets]
        placed, wrong = set(), []
        for colour, items in re.findall(r"(\w+) panel: \[([^\]]*)\]", s):
            for o in _HANDLE.findall(items):
                if o in targets and o.startswith(colour + "_"):
                    placed.add(o)
                else:
                    wrong.append(o)
        return [t for t in targets if t not in placed], wrong

    def _knowledge(self, ctx: Context) -> dict[str, str]:
        texts = list(ctx.message_history) + ([ctx.plan.text] if ctx.plan else []) + list(ctx.lessons)
        loc = facts_in(texts)
        loc.update({h: p for h, (p, _) in ctx.objects.items()})
        return loc

    def _history(self, ctx: Context) -> tuple[set[str], dict[str, set[int]], set[str], bool, dict[str, int]]:
        """(places searched, stand poses that failed per place, restricted places, rule learnt,
        failures without a reason per action)."""
        visited, bad_poses, restricted = set(), {}, set()
        rule = any(_RULE in x for x in ctx.lessons) or bool(ctx.plan and _RULE in ctx.plan.text)
        unexplained: dict[str, int] = {}
        acts = ctx.action_history
        fbs = ctx.feedback_history
        kinds = ctx.feedback_kinds
        offset = len(acts) - len(fbs)
        for i, a in enumerate(acts):
            j = i - offset
            fb = fbs[j] if 0 <= j < len(fbs) else None
            kind = kinds[j] if 0 <= j < len(kinds) else None
            m = re.match(r"navigate\((\w+), stand_pose_(\d+)\)", a)
            if fb is None:  # no feedback: it assumes a navigation arrived, counts other repeats
                if m:
                    visited.add(m.group(1))
                unexplained[a] = unexplained.get(a, 0) + 1
                continue
            if m:
                if kind == "navigation_success":
                    visited.add(m.group(1))
                elif kind in ("navigation_failed_1", "navigation_failed_3"):
                    bad_poses.setdefault(m.group(1), set()).add(int(m.group(2)))
                elif kind == "navigation_failed_4":
                    restricted.add(m.group(1))
            if kind == "place_failed_4":
                rule = True
            if kind == "open_success":
                om = _OPENED.search(fb)
                if om:
                    visited.add(om.group(1))
        rule = rule or "place_failed_4" in kinds
        for fb in fbs:
            m2 = _REACHED.search(fb)
            if m2:
                visited.add(m2.group(1))
        closed = {p.handle for p in ctx.places if p.state == "close"}
        visited -= closed  # a closed container is searched only once it is open
        for place, bad in bad_poses.items():
            pv = self._place_view(ctx, place)
            if pv is not None and len(bad) >= len(pv.stand_poses):
                restricted.add(place)
        for lesson in [*ctx.lessons, *([ctx.plan.text] if ctx.plan else [])]:
            for p in re.findall(r"searched: ([^.;]*)", lesson):
                visited.update(x.strip() for x in p.split(",") if x.strip())
            for p in re.findall(r"cannot reach (\w+)", lesson):
                restricted.add(p)
        return visited, bad_poses, restricted, rule, unexplained

    def _receptacle(self, ctx: Context, obj: str) -> str:
        if ctx.task.kind == "sort":
            colour = obj.split("_", 1)[0]
            return f"{colour}_panel" if f"{colour}_panel" in ctx.task.receptacles else ctx.task.receptacles[0]
        return ctx.task.receptacles[0]

    def _place_view(self, ctx: Context, handle: str):
        return next((p for p in ctx.places if p.handle == handle), None)

    def _pose(self, ctx: Context, place: str, near: Point | None, bad: set[int]) -> int | None:
        p = self._place_view(ctx, place)
        if p is None or not p.stand_poses:
            return None
        order = sorted(range(len(p.stand_poses)),
                       key=lambda k: distance(p.stand_poses[k], near) if near else k)
        for k in order:
            if k not in bad:
                return k
        return None

    def _told(self, ctx: Context, phrase: str) -> bool:
        return any(phrase in a for a in ctx.action_history)

    # -- HMRC -------------------------------------------------------------------------------------
    def act(self, ctx: Context) -> Reply:
        action = self._choose(ctx)
        if self.rng.random() < self.profile.slip:
            action = self._random_action(ctx)
        return self._reply(ctx, f"Thoughts: rule-based choice.\nContents: {action}", action)

    def _random_action(self, ctx: Context) -> str:
        options = ["wait()"]
        if ctx.type.mobile:
            nav = [p for p in ctx.places if p.stand_poses]
            if nav:
                p = self.rng.choice(nav)
                options.append(f"navigate({p.handle}, stand_pose_{self.rng.randrange(len(p.stand_poses))})")
        if ctx.type.manipulates and ctx.objects:
            options.append(f"pick({self.rng.choice(sorted(ctx.objects))})")
        return self.rng.choice(options)

    def _choose(self, ctx: Context) -> str:
        remaining, wrong = self._status(ctx)
        loc = self._knowledge(ctx)
        visited, bad_poses, restricted, rule, unexplained = self._history(ctx)
        if ctx.type.code == "Ma":
            return self._manipulator(ctx, remaining, wrong, loc)
        if ctx.held is not None:
            return self._carry(ctx, remaining, rule, unexplained, bad_poses)
        teammates = dict(ctx.teammates)
        # answer requests addressed to me
        for m in reversed(ctx.message_history):
            req = re.search(r"please open (\w+)", m, re.I)
            if req and "open" in ctx.type.actions and req.group(1) not in visited:
                return self._go_or(ctx, req.group(1), bad_poses, f"open({req.group(1)})",
                                   lambda p: p.state == "close")
        # fetch a known target I can get (and, while there is searching to do, that the plan gives me)
        searching = bool(remaining) and any(loc.get(o) is None for o in remaining)
        for obj in remaining:
            place = loc.get(obj)
            if place is None or place in ctx.task.receptacles:
                continue
            pv = self._place_view(ctx, place)
            asked_me = any(obj in m and ("please fetch" in m or "please move" in m) for m in ctx.message_history)
            if searching and not asked_me and ctx.type.manipulates and pv is not None \
                    and self._fetcher(ctx, pv) not in (None, ctx.name):
                continue
            if place == ctx.task.working_table:
                near = ctx.objects.get(obj, (None, None))[1]
                asked = any(f"please move {obj} closer" in m for m in ctx.message_history)
                if not asked and not self._beyond_manipulator(ctx, near) and "Ma" in teammates.values():
                    continue  # the manipulator takes it
            elif pv is None or place in restricted:
                if pv is None and not ctx.type.flies and place.endswith("_top"):
                    self_drone = [n for n, c in ctx.teammates if ROBOT_TYPES[c].flies]
                    if self_drone and not self._told(ctx, f"{obj} is on {place}"):
                        return f"communicate('{obj} is on {place}; please fetch it', {self_drone[0]})"
                continue
            if pv.state == "close":
                if "open" not in ctx.type.actions:
                    movers = [n for n, c in ctx.teammates if "open" in ROBOT_TYPES[c].actions]
                    if movers and not self._told(ctx, f"please open {place}"):
                        return f"communicate('{obj} may be in {place}: please open {place}', {movers[0]})"
                    continue
                return self._go_or(ctx, place, bad_poses, f"open({place})", lambda p: True)
            if not ctx.type.manipulates:
                movers = [n for n, c in ctx.teammates if c in ("MoMa", "UAV")
                          and (not pv.elevated or ROBOT_TYPES[c].flies)]
                if movers and not self._told(ctx, f"{obj} is on {place}"):
                    return f"communicate('{obj} is on {place}; please fetch it', {movers[0]})"
                continue
            near = ctx.objects.get(obj, (None, None))[1]
            close = near is not None and distance(ctx.pos, near) < 1.6
            if obj in ctx.objects and (ctx.at == place or close):
                kinds = ctx.feedback_kinds
                fails = [k for a, k in zip(ctx.action_history[-len(kinds):], kinds) if a == f"pick({obj})"] \
                    if kinds else []
                last_failed = bool(fails) and fails[-1] == "pick_failed_4" and \
                    bool(ctx.action_history) and ctx.action_history[-1] == f"pick({obj})"
                unseen = bool(fails) and fails[-1] == "pick_failed_2" and ctx.at != place and \
                    bool(ctx.action_history) and ctx.action_history[-1] == f"pick({obj})"
                if unseen:  # Pick Failed (2): it has not seen the object itself; go where it lies
                    k = self._pose(ctx, place, near, bad_poses.get(place, set()))
                    if k is not None:
                        return f"navigate({place}, stand_pose_{k})"
                if last_failed:
                    moves = self._moves_since_navigation(ctx)
                    if "move" in ctx.type.actions and moves < 3:
                        return "move"
                    tried = self._tried_poses(ctx, place, obj) | {self._current_pose(ctx, place)}
                    k = self._pose(ctx, place, near, bad_poses.get(place, set()) | tried)
                    if k is not None:
                        return f"navigate({place}, stand_pose_{k})"
                    others = [n for n, c in ctx.teammates if ROBOT_TYPES[c].manipulates and c != "Ma"]
                    if others and not self._told(ctx, f"cannot reach {obj}"):
                        return f"communicate('I cannot reach {obj}; {obj} is on {place}: please fetch it', {others[0]})"
                    continue
                if unexplained.get(f"pick({obj})", 0) >= self.profile.retries and not kinds:
                    continue
                return f"pick({obj})"
            k = self._pose(ctx, place, near, bad_poses.get(place, set()))
            if k is not None:
                return f"navigate({place}, stand_pose_{k})"
        # report what I found (mobile robot and everyone else)
        for obj in remaining:
            place = loc.get(obj)
            if obj in ctx.objects and place and place != ctx.task.working_table and ctx.teammates \
                    and not self._told(ctx, f"{obj} is on {place}"):
                return f"communicate('{obj} is on {place}', all)"
        # open a closed container where I stand, or ask an opener to
        if ctx.at:
            pv = self._place_view(ctx, ctx.at)
            if pv is not None and pv.state == "close" and remaining and any(loc.get(o) is None for o in remaining):
                if "open" in ctx.type.actions:
                    return f"open({ctx.at})"
                openers = [n for n, c in ctx.teammates if "open" in ROBOT_TYPES[c].actions]
                if openers and not self._told(ctx, f"please open {ctx.at}"):
                    return f"communicate('{ctx.at} is closed: please open {ctx.at}', {openers[0]})"
        # explore
        plan_list = (ctx.plan.explore.get(ctx.name, []) if ctx.plan else [])
        others = [h for h in (p.handle for p in ctx.places) if h not in plan_list]
        if remaining and any(loc.get(o) is None for o in remaining):
            for place in self._tour(ctx, plan_list, others):
                pv = self._place_view(ctx, place)
                if pv is None or place in visited or place in restricted or not pv.stand_poses:
                    continue
                if place in ctx.task.receptacles or place == ctx.task.working_table:
                    continue
                k = self._pose(ctx, place, None, bad_poses.get(place, set()))
                if k is not None:
                    return f"navigate({place}, stand_pose_{k})"
        return "wait()"

    @staticmethod
    def _moves_since_navigation(ctx: Context) -> int:
        n = 0
        for a in reversed(ctx.action_history):
            if a.startswith("navigate("):
                break
            n += a.startswith("move(")
        return n

    def _tried_poses(self, ctx: Context, place: str, obj: str) -> set[int]:
        """Stand poses of ``place`` from which a pick of ``obj`` failed for reach (its history)."""
        kinds = ctx.feedback_kinds
        acts = ctx.action_history[-len(kinds):] if kinds else []
        pose, out = None, set()
        for a, k in zip(acts, kinds):
            m = re.match(rf"navigate\({re.escape(place)}, stand_pose_(\d+)\)", a)
            if m and k == "navigation_success":
                pose = int(m.group(1))
            elif a.startswith("navigate("):
                pose = None
            elif a == f"pick({obj})" and k == "pick_failed_4" and pose is not None:
                out.add(pose)
        return out

    def _fetcher(self, ctx: Context, pv) -> str | None:
        """Who fetches from this place by the plan: a drone for elevated places, the opener for a
        closed container, else the mover the plan gives the place's room (None when unplanned)."""
        team = dict([(ctx.name, ctx.type.code), *ctx.teammates])
        if pv.elevated:
            return next((n for n, c in team.items() if ROBOT_TYPES[c].flies), None)
        if pv.state == "close":
            return next((n for n, c in team.items() if "open" in ROBOT_TYPES[c].actions), None)
        if ctx.plan is None:
            return None
        return next((n for n, rooms in ctx.plan.fetch.items() if pv.room in rooms), None)

    def _tour(self, ctx: Context, first: list[str], then: list[str]) -> list[str]:
        """Places to search in a fixed order: the plan's places, then the others, each open places
        first and hidden ones next (:func:`_search_cost`), each part a nearest-neighbour tour
        continued from the working table, resumed after the place the robot stands at (so a robot
        without history still moves on rather than back)."""
        views = {p.handle: p for p in ctx.places}
        table = views.get(ctx.task.working_table)
        here = table.pos if table else ctx.pos
        order: list[str] = []
        groups = [[h for h in g if h in views and _search_cost(views[h]) == c] for g in (first, then) for c in (0, 1)]
        for group in groups:
            left = list(group)
            while left:
                nxt = min(left, key=lambda h: (distance(here, views[h].pos), h))
                order.append(nxt)
                left.remove(nxt)
                here = views[nxt].pos
        if ctx.at in order:
            k = order.index(ctx.at) + 1
            order = order[k:] + order[:k]
        return order

    def _current_pose(self, ctx: Context, place: str) -> int:
        pv = self._place_view(ctx, place)
        if pv is None:
            return -1
        for k, q in enumerate(pv.stand_poses):
            if distance(q, ctx.pos) < 0.05:
                return k
        return -1

    def _beyond_manipulator(self, ctx: Context, pos: Point | None) -> bool:
        if pos is None:
            return False
        rec = self._place_view(ctx, ctx.task.receptacles[0])
        base = rec.pos if rec else pos
        return distance(base, pos) > ROBOT_TYPES["Ma"].reach_m + 0.3

    def _go_or(self, ctx: Context, place: str, bad_poses: dict[str, set[int]], action: str, ready) -> str:
        """``action`` when standing at ``place`` and ``ready(place view)``, else the way there."""
        pv = self._place_view(ctx, place)
        if ctx.at == place and pv is not None and ready(pv):
            return action
        k = self._pose(ctx, place, None, bad_poses.get(place, set()))
        return f"navigate({place}, stand_pose_{k})" if k is not None else "wait()"

    def _carry(self, ctx: Context, remaining: list[str], rule: bool, unexplained: dict[str, int],
               bad_poses: dict[str, set[int]]) -> str:
        obj = ctx.held
        table = ctx.task.working_table
        rec = self._receptacle(ctx, obj)
        rec_view = self._place_view(ctx, rec)
        if obj not in ctx.task.targets:
            return f"place({obj}, {ctx.at})" if ctx.at else self._to_table(ctx, rec_view, bad_poses)
        want = self._pose(ctx, table, rec_view.pos if rec_view else None, bad_poses.get(table, set()))
        if ctx.at != table or (want is not None and self._current_pose(ctx, table) != want):
            return self._to_table(ctx, rec_view, bad_poses)
        last = [k for a, k in zip(ctx.action_history[-len(ctx.feedback_kinds):], ctx.feedback_kinds)
                if a == f"place({obj}, {rec})"] if ctx.feedback_kinds else []
        if (last and last[-1] in ("place_failed_3", "place_failed_4")) or \
                (ctx.feedback_kinds and ctx.feedback_kinds[-1] in ("place_failed_3", "place_failed_4")):
            rule = True
        tried = unexplained.get(f"place({obj}, {rec})", 0)
        if not rule and not ctx.feedback_kinds and tried >= self.profile.retries:
            rule = True  # no feedback: after retries, it tries the other way
        if not rule:
            return f"place({obj}, {rec})"
        return f"place({obj}, {table})"

    def _to_table(self, ctx: Context, rec_view, bad_poses: dict[str, set[int]]) -> str:
        table = ctx.task.working_table
        k = self._pose(ctx, table, rec_view.pos if rec_view else None, bad_poses.get(table, set()))
        return f"navigate({table}, stand_pose_{k})" if k is not None else "wait()"

    def _manipulator(self, ctx: Context, remaining: list[str], wrong: list[str], loc: dict[str, str]) -> str:
        table = ctx.task.working_table
        reach = ctx.type.reach_m
        if ctx.held is not None:
            obj = ctx.held
            nxt = remaining[0] if remaining else None
            ok = obj in remaining and (ctx.task.kind != "sandwich" or obj == nxt)
            return f"place({obj}, {self._receptacle(ctx, obj) if ok else table})"
        for obj in wrong:
            if obj in ctx.objects and distance(ctx.pos, ctx.objects[obj][1]) <= reach:
                return f"pick({obj})"
        todo = remaining[:1] if ctx.task.kind == "sandwich" else remaining
        for obj in todo:
            if obj in ctx.objects and ctx.objects[obj][0] == table:
                if distance(ctx.pos, ctx.objects[obj][1]) <= reach:
                    return f"pick({obj})"
        movers = [n for n, c in ctx.teammates if c in ("MoMa", "UAV")]
        for obj in remaining:
            if obj in ctx.objects and ctx.objects[obj][0] == table and movers \
                    and distance(ctx.pos, ctx.objects[obj][1]) > reach and not self._told(ctx, f"move {obj}"):
                return f"communicate('{obj} is on {table} out of my reach: please move {obj} closer to me', {movers[0]})"
        return "wait()"

    def move_offset(self, ctx: Context) -> Reply:
        grid = ctx.costmap or [["R"]]
        half = len(grid) // 2
        goal = ctx.objects.get(ctx.goal or "", (None, None))[1]
        best, best_d = (0.0, 0.0), math.inf
        for r, row in enumerate(grid):
            for c, ch in enumerate(row):
                if ch != ".":
                    continue
                dx, dy = (c - half) * 0.2, (r - half) * 0.2
                d = distance((ctx.pos[0] + dx, ctx.pos[1] + dy), goal) if goal else math.hypot(dx, dy)
                if d < best_d:
                    best, best_d = (round(dx, 2), round(dy, 2)), d
        return self._reply(ctx, f"Contents: move({best[0]:g}, {best[1]:g})", best)

    # -- GD / LP ------------------------------------------------------------------------------------
    def reflect(self, ctx: Context) -> Reply:
        visited, _, restricted, rule, _ = self._history(ctx)
        loc = self._knowledge(ctx)
        lines = []
        if rule:
            lines.append(_RULE)
        for p in sorted(restricted):
            lines.append(f"{ctx.name} cannot reach {p}")
        remaining, _ = self._status(ctx)
        for obj in remaining:
            if obj in loc:
                lines.append(f"{obj} is on {loc[obj]}")
        if visited:
            lines.append("searched: " + ", ".join(sorted(visited)))
        summary = "\n".join(lines) or "No progress to report."
        plan = f"{ctx.name} continues: {'fetch ' + ', '.join(remaining) if remaining else 'wait'}."
        return self._reply(ctx, f"Summaries: {summary}\nPlans: {plan}", (summary, plan))

    def update_plan(self, ctx: Context) -> Reply:
        searched: set[str] = set()
        lines: list[str] = []
        for name, (summary, _) in ctx.reports.items():
            for line in summary.splitlines():
                m = re.match(r"searched: (.*)", line)
                if m:
                    searched.update(x.strip() for x in m.group(1).split(","))
                elif line.strip() and line not in lines and line != "No progress to report.":
                    lines.append(line)
        reporters = [(n, c) for n, c in [(ctx.name, ctx.type.code), *ctx.teammates]
                     if n in ctx.reports or not ctx.reports]
        base = self._allocation(ctx, f"update:{ctx.name}:{ctx.step}", reporters or [(ctx.name, ctx.type.code)])
        explore = {n: [p for p in ps if p not in searched] for n, ps in base.explore.items()}
        text = ("Updated plan: " + "; ".join(f"{n} searches {', '.join(ps) or 'nothing new'}"
                                              + (f" and fetches from {', '.join(base.fetch[n])}"
                                                 if base.fetch.get(n) else "")
                                              for n, ps in explore.items())
                + (". Known: " + ". ".join(lines) if lines else "")
                + (". Team searched: " + ", ".join(sorted(searched)) if searched else "") + ".")
        return self._reply(ctx, text, Plan(text, explore, base.roles, base.fetch))

    # -- CoELA: the planning and communication modules -----------------------------------------
    def coela_plan(self, ctx: Context, options: list) -> Reply:
        """CoELA's planning module offline (:mod:`.coela`): the option that yields the action its rules
        choose now (:meth:`act`'s choice mapped by :func:`coela_option`), a random option with the
        profile's ``slip``; ``value`` the option's index. A message its rules chose is kept for the
        communication module's call of the same step."""
        if self.rng.random() < self.profile.slip:
            idx = self.rng.randrange(len(options))
        else:
            action = self._choose(ctx)
            idx = coela_option(action, options, ctx)
            if options[idx].kind == "message" and action.startswith("communicate("):
                self._coela_message = (ctx.step, action)
        return self._reply(ctx, f"Thoughts: rule-based choice.\nContents: {letter(idx)}", idx)

    def coela_message(self, ctx: Context) -> Reply:
        """CoELA's communication module offline: the message its rules chose this step, else the
        targets it knows the place of (to all), else where it is and what it holds (to all)."""
        from .actions import ActionError, parse_action

        pending = self.__dict__.pop("_coela_message", None)
        action = pending[1] if pending and pending[0] == ctx.step else None
        try:
            a = parse_action(action) if action else None
        except ActionError:
            a = None
        if a is None or a.name != "communicate":
            remaining, _ = self._status(ctx)
            loc = self._knowledge(ctx)
            facts = [f"{o} is on {loc[o]}" for o in remaining if o in loc]
            content = "; ".join(facts) or (f"I am at {ctx.at or 'my start'}"
                                           + (f", holding {ctx.held}" if ctx.held else "") + "")
            to = "all"
        else:
            content, to = a.content, ", ".join(a.to)
        return self._reply(ctx, f"Recipients: {to}\nContents: {content}",
                           f"communicate({content!r}, {to})")

    # -- COHERENT: the centralized planner ------------------------------------------------------
    def act_team(self, ctxs: list[Context]) -> Reply:
        """The centralized planner's joint action (COHERENT, §4.2; the optional ``act_team`` of the
        Brain protocol, see :mod:`.llm_brain`): this brain decides for every robot of ``ctxs`` (the
        global-view contexts, team order) with the per-robot rules of :meth:`act`, played by one
        rule-based robot per name it keeps (same profile; their seed is drawn once from this brain's
        generator). Each robot's rules read the global history (the last M team steps, entries
        ``(step t) <robot>: <item>``) with that robot's own entries as its own history (the prefix
        dropped) and the others' kept as written, so the planner knows what each robot did over M
        team steps. ``value`` is ``{robot: action text}``; a bare ``move`` of the rules is written
        with its offsets (``move(dx, dy)`` toward the object of the robot's latest pick; ``wait()``
        without one), as the central planner has no second call. Tokens: the robots' proxies summed."""
        team: dict[str, OfflineBrain] = self.__dict__.setdefault("_team_brains", {})
        if "_team_seed" not in self.__dict__:
            self._team_seed = self.rng.getrandbits(31)
        actions: dict[str, str] = {}
        tokens_in = tokens_out = 0
        for ctx in ctxs:
            sub = team.get(ctx.name)
            if sub is None or sub.code != ctx.type.code:
                sub = team[ctx.name] = OfflineBrain(ctx.name, ctx.type.code, self.profile, seed=self._team_seed)
            r = sub.act(_own_view(ctx))
            r.tokens_in = self._reply(ctx, "", None).tokens_in  # the proxy of the global view as written
            action = str(r.value)
            if re.fullmatch(r"\[?move\]?\s*(?:\(\s*\))?\.?", action.strip(), re.IGNORECASE):
                action = self._team_move(ctx)
            actions[ctx.name] = action
            tokens_in, tokens_out = tokens_in + r.tokens_in, tokens_out + r.tokens_out
        text = "Thoughts: rule-based choice for every robot.\nActions:\n" + "\n".join(
            f"{n}: {a}" for n, a in actions.items())
        return Reply(text=text, value=actions, tokens_in=tokens_in, tokens_out=tokens_out)

    @staticmethod
    def _team_move(ctx: Context) -> str:
        """A move written with its offsets: toward the object of the robot's latest pick (its own
        ``pick(x)`` or a global ``(step t) <robot>: pick(x)`` entry), at most 0.8 m, to 0.1 m."""
        goal = None
        for a in reversed(ctx.action_history):
            m = re.match(rf"(?:\(step \d+\)\s*)?(?:{re.escape(ctx.name)}:\s*)?pick\((\w+)\)$", a.strip())
            if m:
                goal = m.group(1)
                break
        pos = ctx.objects.get(goal or "", (None, None))[1]
        if pos is None:
            return "wait()"
        d = distance(ctx.pos, pos)
        step = min(max(d - 0.5 * ctx.type.reach_m, 0.2), 0.8)
        if d < 1e-6:
            return "wait()"
        dx, dy = round((pos[0] - ctx.pos[0]) / d * step, 1) + 0.0, round((pos[1] - ctx.pos[1]) / d * step, 1) + 0.0
        return f"move({dx:g}, {dy:g})" if (dx or dy) else "wait()"


def coela_option(action: str, options: list, ctx: Context) -> int:
    """The index of the CoELA plan option (:func:`.coela.plan_options`) that yields ``action``, an
    action the offline rules chose: the option with that very action; else, by the action's kind,
    ``send a message`` for a message, the grab option that moves for a bare ``move``, the option
    going to the same place for a navigation (another stand pose), the grab / put / open option of
    the same object, platform or container; else ``wait`` (with :func:`.coela.plan_options`' list
    every rule action is some option's own action: the fallbacks only serve other lists)."""
    from .actions import ActionError, parse_action

    acts = [o.action for o in options]
    if action in acts:
        return acts.index(action)
    wait = next((i for i, o in enumerate(options) if o.kind == "wait"), len(options) - 1)
    if re.fullmatch(r"\[?move\]?\s*(?:\(\s*\))?\.?", action.strip(), re.IGNORECASE):
        return next((i for i, o in enumerate(options) if o.kind == "grab" and o.action.startswith("move(")), wait)
    try:
        a = parse_action(action)
    except ActionError:
        return wait
    for i, o in enumerate(options):
        if (a.name == "communicate" and o.kind == "message") \
                or (a.name == "navigate" and o.action.startswith(f"navigate({a.target},")) \
                or (a.name == "pick" and o.kind == "grab" and o.target == a.target) \
                or (a.name == "place" and o.kind == "put" and o.target == a.where) \
                or (a.name == "open" and o.kind == "open" and o.target == a.target):
            return i
    return wait


def _search_cost(p) -> int:
    """0 for a place in the open (one navigation shows what is on it, and any navigating robot can
    go), 1 for a hidden one (a closed container: navigate and open, only an opener; an elevated place:
    only a flyer). The robot searches the cheap places first (appendix principles: "Efficiently
    explore and navigate all locations ... without repetition"; §4.1's l = 2 asks "additional
    exploration steps")."""
    return int(bool(p.elevated) or p.state == "close")


def _own_view(ctx: Context) -> Context:
    """``ctx`` with the robot's own entries of a global history (``(step t) <name>: <item>``) written
    as its own (the prefix dropped); the other robots' entries stay as they are."""
    own = re.compile(rf"^(?:\(step \d+\)\s*)?{re.escape(ctx.name)}:\s*")
    return replace(ctx, action_history=[own.sub("", a) for a in ctx.action_history],
                   feedback_history=[own.sub("", f) for f in ctx.feedback_history])
