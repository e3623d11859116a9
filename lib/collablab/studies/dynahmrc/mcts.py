"""DynaHMRC's search baselines: MCTS, MCTS-NoINS and LLM-MCTS (dynahmrc.tex §4.2 Baselines, §4.5
static results on MCTS, appendix ``lab:llm_mcts_baseline``).

:class:`MCTSPlanner` is one centralized planner for the whole team. Each step ``decide(world)``
gives one action text per active robot; the caller executes them one after another in team order
(:func:`~.framework.run_joint_episode`).

**Global observation (§4.2: "global observations of all agents").** The union of every robot's
scene graph (``Robot.known``: object -> place it was perceived at), the robots' own status (pose,
gripper, the place last reached), the layout (places, stand poses, the costmap) and the places'
open state. Objects no robot has perceived are never read: the belief world
(:func:`belief_world`) drops unperceived non-targets and hides unperceived targets (no place), and
a perceived object that has moved unseen is put back where it was perceived. The planner remembers,
across the decisions of one episode, which places the team has seen (a robot standing at a place
has seen its surface, and its inside when it is open; the tabletop manipulator sees the working
table and the receptacles every step).

**Determinization.** Unperceived targets are sampled, for every simulation, onto places the team has
not yet seen empty (uniformly, or weighted by ``prior(belief, target, places)``: LLM-MCTS's
commonsense world model, :class:`WorldPrior`), inside a container when the container is closed or its
surface was seen, at a uniform point of the place's box; the search then runs on that
``world.clone()`` with :meth:`~.world.RobotWorld.execute` as the simulator (its feedback kinds say
what succeeded).

**Joint action space.** Sequential per-agent expansion: a tree level per robot, in team order, so a
joint step is ``len(team)`` levels and the branching of one level is one robot's candidates
(:func:`candidate_actions`): navigate to each stand pose of each navigable place (poses the robot
cannot stand on, ``layout.is_free``, are pruned), open closed containers within reach, pick known
objects, place the held object on the receptacles, the working table or the place it stands at,
``move`` (MoMa: toward a known object just beyond its reach, the local-costmap cell nearest it)
and ``wait``. ``communicate`` is excluded: a centralized planner has nothing to tell itself (messages
never change a scene graph). The budget is fixed (``iterations`` simulations, at most
``max_sim_actions`` simulated robot actions): a larger team has more levels per joint step, more
candidates per level and costlier simulations, so each option gets fewer visits. Nothing branches
on team size. :func:`run_planner` is a minimal episode loop (tests, quick checks).

Measured on notebook 06's grid (issue 26's tiers, where medium targets lie in the open to be
found): the budget still binds the larger teams (at medium, 2 tasks per cell, four times the default
budget lifts success from 0.33 to 0.83 with three types and 0.33 to 0.50 with four, not at all with
two: 0.17), but a two-robot team has one searcher for a 30-step cap, so success no longer falls from
two to four types (4 tasks per cell, easy and medium: 0.65, 0.64, 0.67), against paper Fig. 6.

**Dynamic variations (§4.3, ``tab:goal_exp`` ... ``tab:removal_exp``).** The planner reads the world
each step after :func:`~.variations.update` has applied the variation, as every method does: CTO's
new ``world.targets`` are the search's goal from T on (reward is ``partial_success`` of the new list,
and a change of targets makes the planner forget which places it saw empty: a place seen before T
says nothing of a target that was not one then); ANC's newcomer is a robot of the next joint action
and REC's removed robot leaves the tree levels. IRZ's zones are *not* in the search's world model:
§4.5 says the restricted areas "are introduced only through textual feedback, where navigation
actions into restricted areas are passed into the simulator but do not modify the environment
state", so MCTS, "lacking additional pruning strategies, repeatedly revisit[s] the same nodes"; the
belief world carries no ``restricted`` (robots are never told; the real world answers Navigation
Failed (4)). ``learn_zones=True`` is that additional pruning (ours, off by default): a navigation
that failed with kind 4 is no longer a candidate of that robot (:meth:`MCTSPlanner.observe`).

**MCTS vs MCTS-NoINS (our reading).** Both prune infeasible actions (the paper keeps "the pruning
strategy and action space constraints" identical): picking out of reach, inside a closed container,
on an elevated place for a ground arm, with a full gripper, or a sandwich layer under another;
placing out of reach, into a closed container or on an elevated place for a ground robot; opening
out of reach; navigating a ground robot to an elevated place, to a pose it cannot stand on or one a
ground teammate occupies; re-navigating to the pose it stands on. The *human instruction* is what
MCTS adds and MCTS-NoINS drops:

- target relevance: pick/place only target objects, place them only on their receptacle (sort: the
  panel of their colour) or the working table; navigate only to the working table, to places
  holding known unplaced targets, or (while a target is unperceived) to places not yet seen; a robot
  holding a target navigates only to the working table; open only while a target may be inside;
- the hand-off move: a mover holding a target near the working table may move toward the tabletop
  manipulator's base (so the object it puts down lands within the manipulator's reach);
- the navigation heuristic of §4.2: when a robot's previous action was a navigation and it has a
  non-navigation option (open, pick, place, move; ``wait`` does not count), only those are offered.

**Search.** UCT (``c`` the exploration constant) over the per-robot levels; reward per action = the
increase of ``partial_success()`` plus ``success_bonus`` on success, discounted by ``gamma`` per joint
step; rollouts pick uniformly among the (pruned) candidates until ``depth`` joint steps. With a
``policy_prior`` the selection is PUCT (``Q + c P sqrt(N) / (1 + n)``), LLM-MCTS's "LLM as prior and
PUCT policy" (on Sort Solids in the appendix); :func:`heuristic_prior` is a hand-written offline
stand-in (a heuristic, not an LLM) and :func:`llm_prior` asks an OpenAI-compatible model to score the
candidates. The joint action returned follows the most visited child at each robot level.

**LLM-MCTS (appendix ``lab:llm_mcts_baseline``, Zhao et al. 2023).** "The LLM-induced world model
provides a prior belief over states for MCTS, while the LLM-induced policy serves as pi(a|h) in
PUCT": the spec's ``llm_mcts`` on the ``llm`` backend is ``policy_prior=llm_prior(...)`` and
``prior=llm_world_prior(...)`` (one call per episode naming each unseen target's likely places,
:class:`WorldPrior`; a truncated or unreadable reply is recorded and leaves the uniform belief).
Offline the world model is the uniform belief (our decision): there is no model, hence no
commonsense, and a hand-written "where things are kept" table would be knowledge no robot has; the
generator also places ``l = 1`` targets uniformly over the rooms (:mod:`.tasks`), so on generated
tasks a real model's commonsense has little to exploit either (a hand-built task with objects where
households keep them is where it shows). :func:`llm_belief` (the model scoring every candidate place
per decision) is the older per-decision variant, kept for callers; the spec does not use it.

Defaults (ours; the paper gives none): ``iterations=200`` simulations, ``depth=8`` joint steps
(a mobile manipulator's fetch, hand-off and the tabletop manipulator's pick and place take seven),
``c=1.4``, ``gamma=0.95``, ``success_bonus=1.0`` and ``max_sim_actions=3200`` simulated robot actions
per decision (:data:`DEFAULT_SIM_ACTIONS`: the paper's "limited time" as a deterministic compute
budget; a two-robot team rarely reaches it, a four-robot team gets about 100 simulations).
``prior_levels`` limits the tree levels that ask ``policy_prior`` (e.g. ``len(team)`` for an LLM:
one call per robot of the first joint step; deeper levels use uniform priors). Measured (one core,
apartment 0): 70-85 ms per decision for MCTS with two or four robots, 115-150 ms for MCTS-NoINS.
"""

from __future__ import annotations

import math
import random
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

from ...llm import LLMCallError
from .actions import Action, ActionError, format_action, parse_action
from .layout import MOVE_LIMIT_M, Layout, Point, distance
from .robots import MANIPULATION, RobotType
from .world import RobotWorld

__all__ = ["DEFAULT_C", "DEFAULT_DEPTH", "DEFAULT_ITERATIONS", "DEFAULT_SIM_ACTIONS", "LLMBelief", "LLMPrior", "MCTSPlanner", "PlacePrior",
           "PolicyPrior", "WORLD_PRIOR_MASS", "WorldPrior", "belief_world", "candidate_actions", "heuristic_prior", "llm_belief",
           "llm_prior", "llm_world_prior", "run_planner"]

DEFAULT_ITERATIONS = 200
DEFAULT_DEPTH = 8
DEFAULT_C = 1.4
#: The compute budget of one decision in simulated robot actions (the paper's "limited time"):
#: DEFAULT_ITERATIONS simulations of DEFAULT_DEPTH joint steps of a two-robot team.
DEFAULT_SIM_ACTIONS = 3200
MOVE_STEP_M = 0.2
HANDOFF_NEAR_M = 2.0
PRODUCTIVE = frozenset({"open", "pick", "place", "move"})
WAIT = Action("wait")

#: ``policy_prior(world, robot, candidate texts) -> weights`` (PUCT's P).
PolicyPrior = Callable[[RobotWorld, str, list[str]], list[float]]
#: ``prior(belief world, target, candidate places) -> weights`` (the determinization's belief).
PlacePrior = Callable[[RobotWorld, str, list[str]], list[float]]


# -- candidates ------------------------------------------------------------------------------------
_POSES: dict[tuple[int, str], list[tuple[str, int, Point, str, Action, tuple[int, int]]]] = {}
BUCKET_M = 0.7  # the coarse grid of the occupancy check (>= twice the largest ground radius)
_OPENABLE: dict[int, list[tuple[str, Any]]] = {}
_MOVES: dict[tuple[Point, Point, str], Action | None] = {}
Candidate = tuple[str, Action]


def _bucket(q: Point) -> tuple[int, int]:
    return int(q[0] // BUCKET_M), int(q[1] // BUCKET_M)


def _poses(layout: Layout, t: RobotType) -> list[tuple[str, int, Point, str, Action, tuple[int, int]]]:
    """Every (place, pose index, point, text, action, bucket) this robot type may navigate to and
    stand on (cached per layout and type)."""
    key = (id(layout), t.code)
    if key not in _POSES:
        out = []
        for h, p in layout.places.items():
            if t.flies or not p.elevated:
                for k, q in enumerate(p.stand_poses):
                    if layout.is_free(q, t.radius_m, t.flies):
                        a = Action("navigate", target=h, pose=k)
                        out.append((h, k, q, format_action(a), a, _bucket(q)))
        _POSES[key] = out
    return _POSES[key]


_POSES_AT: dict[tuple[int, str], dict[str, list[tuple[str, int, Point, str, Action, tuple[int, int]]]]] = {}


def _poses_at(layout: Layout, t: RobotType, place: str) -> list[tuple[str, int, Point, str, Action, tuple[int, int]]]:
    key = (id(layout), t.code)
    if key not in _POSES_AT:
        by: dict[str, list[tuple[str, int, Point, str, Action, tuple[int, int]]]] = {}
        for x in _poses(layout, t):
            by.setdefault(x[0], []).append(x)
        _POSES_AT[key] = by
    return _POSES_AT[key].get(place, [])


def _openable(layout: Layout) -> list[tuple[str, Any]]:
    if id(layout) not in _OPENABLE:
        _OPENABLE[id(layout)] = [(h, p) for h, p in layout.places.items() if p.openable]
    return _OPENABLE[id(layout)]


def _move_toward(layout: Layout, t: RobotType, pos: Point, goal: Point) -> Action | None:
    """The ``move`` to the free local-costmap cell (``MOVE_STEP_M`` grid, at most ``MOVE_LIMIT_M``)
    nearest ``goal``; None when no cell is nearer than where the robot stands (cached)."""
    key = (pos, goal, t.code)
    if key not in _MOVES:
        best, best_d = None, distance(pos, goal) - 1e-6
        n = int(MOVE_LIMIT_M / MOVE_STEP_M)
        for i in range(-n, n + 1):
            for j in range(-n, n + 1):
                dx, dy = round(i * MOVE_STEP_M, 3), round(j * MOVE_STEP_M, 3)
                if (i or j) and math.hypot(dx, dy) <= MOVE_LIMIT_M:
                    q = (pos[0] + dx, pos[1] + dy)
                    d = distance(q, goal)
                    if d < best_d and layout.is_free(q, t.radius_m, t.flies):
                        best, best_d = Action("move", dx=dx, dy=dy), d
        if len(_MOVES) > 50_000:
            _MOVES.clear()
        _MOVES[key] = best
    return _MOVES[key]


def _remaining(world: RobotWorld) -> list[str]:
    placed = set(world.placed_targets())
    return [h for h in world.targets if h in world.objects and h not in placed]


def _team_known(world: RobotWorld) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for r in world.robots.values():
        for h, p in r.known.items():
            out.setdefault(h, set()).add(p)
    return out


def _spots(world: RobotWorld, held: str, instructions: bool, at: str | None) -> list[str]:
    """Where a held object may be put (before feasibility)."""
    table = world.layout.working_table
    if instructions and held in world.targets:
        if world.kind == "sort":
            panel = f"{world.objects[held].colour}_panel"
            recs = [panel] if panel in world.receptacles else []
        else:
            recs = list(world.receptacles)
        return recs + [table]
    out = list(world.receptacles) + [table]
    if at is not None and at not in out:
        out.append(at)
    return out


def candidate_actions(world: RobotWorld, name: str, *, instructions: bool = True, previous: str | None = None,
                      explored: set[str] | frozenset[str] = frozenset(),
                      barred: set[tuple[str, str]] | frozenset[tuple[str, str]] = frozenset()) -> list[Action]:
    """The pruned candidates of robot ``name`` on ``world`` (see the module docstring); ``previous``
    is the name of its previous action, ``explored`` the places the team has fully seen, ``barred``
    the (robot, place) navigations learnt to fail (``learn_zones``)."""
    return [a for _, a in _candidates(world, name, instructions, previous, explored, barred)]


def _candidates(world: RobotWorld, name: str, instructions: bool, previous: str | None,
                explored: set[str] | frozenset[str],
                barred: set[tuple[str, str]] | frozenset[tuple[str, str]] = frozenset()) -> list[Candidate]:
    r = world.robots[name]
    t, L = r.type, world.layout
    remaining = _remaining(world)
    rem = set(remaining)
    known = _team_known(world)
    unperceived = any(h not in known and world.objects[h].held_by is None for h in remaining)
    productive: list[Action] = []
    if t.can("pick") and r.held is None:
        for h in r.known:
            if instructions and h not in rem:
                continue
            o = world.objects.get(h)
            if o is None or o.held_by is not None or o.place is None:
                continue
            if o.inside and not world.open.get(o.place, True):
                continue
            p = world.place_of(o.place)
            if (p.elevated and not t.flies) or distance(r.pos, o.pos) > t.reach_m:
                continue
            if o.place == "cutting_board_0" and world.stack and world.stack[-1] != h:
                continue
            productive.append(Action("pick", target=h))
    if t.can("place") and r.held is not None:
        for where in _spots(world, r.held, instructions, r.at):
            p = world.place_of(where)
            if (p.container and not p.surface and not world.open.get(where, True)) or (p.elevated and not t.flies):
                continue
            if p.box_distance(r.pos) <= t.reach_m:
                productive.append(Action("place", target=r.held, where=where))
    if t.can("open"):
        inside_targets = {p for h in remaining for p in known.get(h, ()) if world.objects[h].inside}
        if not instructions or unperceived or inside_targets:
            x, y, reach = r.pos[0], r.pos[1], t.reach_m
            for h, p in _openable(L):
                if abs(x - p.centre[0]) - p.half[0] > reach or abs(y - p.centre[1]) - p.half[1] > reach:
                    continue
                if not world.open.get(h, True) and p.box_distance(r.pos) <= reach and \
                        (not instructions or unperceived or h in inside_targets):
                    productive.append(Action("open", target=h))
    if t.can("move"):
        goals: list[Point] = []
        if r.held is None:
            for h in r.known:
                o = world.objects.get(h)
                if o is None or o.held_by is not None or o.place is None or (instructions and h not in rem):
                    continue
                d = distance(r.pos, o.pos)
                if t.reach_m < d <= t.reach_m + MOVE_LIMIT_M:
                    goals.append(o.pos)
        elif instructions and r.held in rem:
            table = L.place(L.working_table)
            base = L.manipulator_base
            reach = max((m.type.reach_m for m in world.active() if m.type.code in MANIPULATION), default=0.0)
            if table.box_distance(r.pos) <= HANDOFF_NEAR_M and distance(table.clamp(r.pos), base) > reach:
                goals.append(base)
        for g in goals:
            a = _move_toward(L, t, r.pos, g)
            if a is not None and a not in productive:
                productive.append(a)
    out: list[Candidate] = [(format_action(a), a) for a in productive]
    if instructions and previous == "navigate" and out:
        return out
    if t.mobile:
        allowed: set[str] | None = None
        if instructions:
            allowed = {L.working_table}
            if r.held is None or r.held not in rem:
                for h in remaining:
                    if world.objects[h].held_by is None:
                        allowed |= {p for p in known.get(h, ()) if p in L.places}
                if unperceived:
                    allowed |= {h for h in L.places if h not in explored}
        others = [] if t.flies else \
            [o.pos for o in world.active() if o is not r and o.type.mobile and not o.type.flies]
        gap = (2 * t.radius_m) ** 2
        near = {(b[0] + i, b[1] + j) for b in map(_bucket, others) for i in (-1, 0, 1) for j in (-1, 0, 1)}
        poses = _poses(L, t) if allowed is None or len(allowed) > 8 else \
            [x for h in sorted(allowed) for x in _poses_at(L, t, h)]
        for h, k, q, text, a, bucket in poses:
            if (allowed is not None and h not in allowed) or q == r.pos or (name, h) in barred:
                continue
            if bucket in near and any((q[0] - p[0]) ** 2 + (q[1] - p[1]) ** 2 < gap for p in others):
                continue
            out.append((text, a))
    out.append(("wait()", WAIT))
    return out


# -- belief ----------------------------------------------------------------------------------------
def belief_world(world: RobotWorld) -> tuple[RobotWorld, list[str]]:
    """A clone holding only what the team has observed, and the unperceived targets (hidden in it:
    no place). Perceived objects keep their state when some robot perceived them where they are (or
    one holds them); otherwise they are put back where they were perceived."""
    b = world.clone()
    b.restricted = {}  # IRZ zones are never told (§4.5: "only through textual feedback")
    known = _team_known(b)
    hidden: list[str] = []
    protected = set(b.stack)
    for h in list(b.objects):
        o = b.objects[h]
        if o.held_by is not None or h in protected or o.place in b.receptacles:
            continue
        if h in known:
            if o.place not in known[h]:
                pl = sorted(known[h])[0]
                p = b.place_of(pl)
                o.place, o.pos, o.inside = pl, p.centre, p.container and not p.surface
            continue
        if h in b.targets:
            o.place, o.pos, o.inside = None, (0.0, 0.0), False
            hidden.append(h)
        else:
            del b.objects[h]
    return b, hidden


# -- priors ----------------------------------------------------------------------------------------
def heuristic_prior(world: RobotWorld, name: str, candidates: list[str]) -> list[float]:
    """A hand-written action prior (a heuristic, not an LLM; the offline stand-in for LLM-MCTS's
    policy): put targets where they belong, pick them, deliver them to the working table, go where a
    known target lies, open and move before other navigation, wait last."""
    r = world.robots[name]
    rem = set(_remaining(world))
    known = _team_known(world)
    target_places = {p for h in rem for p in known.get(h, ())}
    out = []
    for text in candidates:
        a = parse_action(text)
        if a.name == "place":
            s = 8.0 if a.where in world.receptacles and a.target in rem else (4.0 if a.target in rem else 1.0)
        elif a.name == "pick":
            s = 6.0 if a.target in rem else 1.0
        elif a.name in ("open", "move"):
            s = 3.0
        elif a.name == "navigate":
            if r.held is not None:
                s = 5.0 if a.target == world.layout.working_table else 0.5
            else:
                s = 4.0 if a.target in target_places else 1.0
        else:
            s = 0.5
        out.append(s)
    return out


def _describe(world: RobotWorld, name: str) -> str:
    r = world.robots[name]
    known = _team_known(world)
    objs = "; ".join(f"{h} at {sorted(p)}" for h, p in sorted(known.items())) or "none"
    team = ", ".join(f"{o.name} ({o.type.kind}, holding {o.held or 'nothing'}, at {o.at or 'no place'})"
                     for o in world.active())
    return (f"Task: {world.kind}; target objects: {', '.join(world.targets)}; receptacles: "
            f"{', '.join(world.receptacles)} (only the tabletop manipulation robot may place into them); working "
            f"table: {world.layout.working_table}. Team: {team}. Objects perceived: {objs}. "
            f"{world.task_status()} Acting robot: {r.name} ({r.type.kind}).")


SCORES_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"scores": {"type": "array",
                                                                             "items": {"type": "number"}}},
                                 "required": ["scores"]}


@dataclass
class _LLMScorer:
    client: Any
    temperature: float = 0.0
    max_tokens: int | None = 400
    call_prefix: str = "dynahmrc/llm-mcts"
    memo: dict[str, list[float]] = field(default_factory=dict)
    calls: int = 0
    unusable: int = 0

    def score(self, prompt: str, n: int) -> list[float]:
        if prompt in self.memo:
            return self.memo[prompt]
        self.calls += 1
        res = self.client.chat_json_sync(prompt, SCORES_SCHEMA, call_id=f"{self.call_prefix}/{len(self.memo)}",
                                         temperature=self.temperature, max_tokens=self.max_tokens)
        if res.error is not None:
            if res.asks:
                raise LLMCallError(res.asks[-1])
            raise RuntimeError(f"LLM call failed: {res.error}")
        scores = (res.parsed or {}).get("scores") if isinstance(res.parsed, dict) else None
        if not isinstance(scores, list) or len(scores) != n:
            self.unusable += 1
            out = [1.0] * n
        else:
            out = [max(float(s), 0.0) + 1e-3 for s in scores]
        self.memo[prompt] = out
        return out


class LLMPrior(_LLMScorer):
    """LLM-MCTS's heuristic policy pi(a|h): the model scores each candidate 0-10 (memoized per
    prompt; transport failures raise, an unusable reply gives uniform scores and counts)."""

    def __call__(self, world: RobotWorld, name: str, candidates: list[str]) -> list[float]:
        lines = "\n".join(f"{i}. {c}" for i, c in enumerate(candidates))
        prompt = (f"{_describe(world, name)}\nCandidate next actions for {name}:\n{lines}\n"
                  f"Score every candidate from 0 (useless) to 10 (best next action for the team task). Answer JSON "
                  f'{{"scores": [...]}} with exactly {len(candidates)} numbers, in order.')
        return self.score(prompt, len(candidates))


class LLMBelief(_LLMScorer):
    """LLM-MCTS's commonsense world model: the model scores how likely an unseen object is at each
    candidate place (the determinization's prior belief)."""

    def __call__(self, world: RobotWorld, target: str, places: list[str]) -> list[float]:
        cls = world.objects[target].cls if target in world.objects else target
        lines = "\n".join(f"{i}. {h} ({world.layout.place(h).room})" for i, h in enumerate(places))
        prompt = (f"In a household, where is a {cls} ({target}) likely to be? It has not been seen yet.\n"
                  f"Candidate places:\n{lines}\nScore every place from 0 (implausible) to 10 (most likely). Answer "
                  f'JSON {{"scores": [...]}} with exactly {len(places)} numbers, in order.')
        return self.score(prompt, len(places))


def llm_prior(client: Any, *, temperature: float = 0.0, max_tokens: int | None = 400,
              call_prefix: str = "dynahmrc/llm-mcts/policy") -> LLMPrior:
    """A PUCT policy prior backed by an OpenAI-compatible model (:class:`collablab.llm.LLMClient`)."""
    return LLMPrior(client, temperature, max_tokens, call_prefix)


def llm_belief(client: Any, *, temperature: float = 0.0, max_tokens: int = 400,
               call_prefix: str = "dynahmrc/llm-mcts/belief") -> LLMBelief:
    """A determinization prior over places backed by an OpenAI-compatible model."""
    return LLMBelief(client, temperature, max_tokens, call_prefix)


# -- the world-model prior (LLM-MCTS) ----------------------------------------------------------------
#: Share of the belief a target's named places get (the rest is spread over every place: a model that
#: names the wrong places slows the search, it never hides the object from it).
WORLD_PRIOR_MASS = 0.8
#: ``ask(task sentence, {object: class}, [(place, room)], call_id) -> record`` (:func:`~.llm_brain.ask_world_prior`).
WorldAsk = Callable[[str, dict[str, str], list[tuple[str, str]], str], dict[str, Any]]


class WorldPrior:
    """LLM-MCTS's commonsense world model as the determinization's prior (appendix
    ``lab:llm_mcts_baseline``: "the LLM-induced world model provides a prior belief over states";
    Zhao et al. 2023 §4). One model call per episode names, for every unseen target, up to three
    places of the apartment most likely first; a target that becomes one later (CTO) is asked about
    in one more call, each target once (cached per layout). Place ``p`` of a target's ranked list
    ``[p0, p1, p2]`` gets ``WORLD_PRIOR_MASS * 2^-k / sum_j 2^-j`` on top of the uniform share
    ``(1 - WORLD_PRIOR_MASS) / |places|``; the search samples each determinization's unseen targets
    from it, restricted to the places the team has not seen empty (:meth:`MCTSPlanner._weights`), so
    observations still correct the belief as in Zhao et al.'s POMDP belief update.

    A reply cut at the token budget, empty, or without a usable line is recorded (``calls[i]
    ["invalid"]``) and its targets keep the uniform belief (never re-asked: the record says the search
    fell back); a target the reply does not name keeps it too. ``ask`` None is the uniform belief
    (``why`` says why: offline there is no model, hence no commonsense)."""

    def __init__(self, ask: WorldAsk | None, *, call_prefix: str = "dynahmrc/llm-mcts/world",
                 mass: float = WORLD_PRIOR_MASS, why: str = "") -> None:
        if not 0.0 <= mass <= 1.0:
            raise ValueError(f"mass: must be in [0, 1], got {mass!r}")
        self.ask, self.call_prefix, self.mass, self.why = ask, call_prefix, mass, why
        self.ranked: dict[tuple[int, str], list[str]] = {}  # (layout id, target) -> places, [] uniform
        self.calls: list[dict[str, Any]] = []

    def _ask(self, world: RobotWorld) -> None:
        L = world.layout
        new = {h: world.objects[h].cls for h in world.targets  # the unseen ones (no place in the belief)
               if h in world.objects and world.objects[h].place is None and world.objects[h].held_by is None
               and (id(L), h) not in self.ranked}
        if not new or self.ask is None:
            for h in new:
                self.ranked[(id(L), h)] = []
            return
        from .tasks import task_text

        places = [(h, p.room) for h, p in L.places.items()]
        rec = self.ask(task_text(world.kind, list(world.targets)), new, places, f"{self.call_prefix}/c{len(self.calls)}")
        self.calls.append(rec)
        for h in new:
            self.ranked[(id(L), h)] = list(rec.get("places", {}).get(h, []))

    def distribution(self, world: RobotWorld, target: str) -> dict[str, float]:
        """The prior over every place of the layout for ``target`` (asking the model when needed)."""
        if (id(world.layout), target) not in self.ranked:
            self._ask(world)
        places = list(world.layout.places)
        ranked = self.ranked.get((id(world.layout), target), [])
        base = 1.0 if not ranked else 1.0 - self.mass
        out = {h: base / len(places) for h in places}
        if ranked:
            tot = sum(2.0 ** -k for k in range(len(ranked)))
            for k, h in enumerate(ranked):
                out[h] += self.mass * 2.0 ** -k / tot
        return out

    def __call__(self, world: RobotWorld, target: str, places: list[str]) -> list[float]:
        d = self.distribution(world, target)
        return [d.get(h, 0.0) for h in places]

    def summary(self) -> dict[str, Any]:
        """What the episode record keeps: ``belief`` ``model`` (every asked target got places),
        ``partial`` (some kept the uniform belief), ``uniform`` (no call was usable, or no model;
        ``why`` says which), and the calls' records."""
        named = [bool(v) for v in self.ranked.values()]
        if self.ask is None or not any(named):
            belief = "uniform"
        else:
            belief = "model" if all(named) else "partial"
        why = self.why if self.ask is None else "; ".join(c["invalid"] for c in self.calls if c.get("invalid"))
        return {"belief": belief, "why": why, "calls": list(self.calls)}


def llm_world_prior(client: Any, *, temperature: float | None = 0.5, max_tokens: int | None = 8192,
                    call_prefix: str = "dynahmrc/llm-mcts/world") -> WorldPrior:
    """LLM-MCTS's world model on an OpenAI-compatible model: :func:`~.llm_brain.ask_world_prior`
    read through the study's reply reading (truncated replies recorded, never parsed)."""
    from .llm_brain import ask_world_prior

    def ask(task: str, objects: dict[str, str], places: list[tuple[str, str]], call_id: str) -> dict[str, Any]:
        return ask_world_prior(client, task, objects, places, call_id=call_id, temperature=temperature,
                               max_tokens=max_tokens)

    return WorldPrior(ask, call_prefix=call_prefix)


# -- search ----------------------------------------------------------------------------------------
class _Node:
    __slots__ = ("children", "n", "w", "priors")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.n = 0
        self.w = 0.0
        self.priors: dict[str, float] | None = None


class MCTSPlanner:
    """The centralized joint-action planner (MCTS with ``instructions=True``, MCTS-NoINS with
    ``False``, LLM-MCTS with a ``policy_prior`` and optionally a place ``prior``)."""

    def __init__(self, *, instructions: bool = True, iterations: int = DEFAULT_ITERATIONS, depth: int = DEFAULT_DEPTH,
                 c: float = DEFAULT_C, seed: int = 0, gamma: float = 0.95, success_bonus: float = 1.0,
                 policy_prior: PolicyPrior | None = None, prior: PlacePrior | None = None,
                 prior_levels: int | None = None, max_sim_actions: int | None = DEFAULT_SIM_ACTIONS,
                 learn_zones: bool = False) -> None:
        if iterations < 1 or depth < 1:
            raise ValueError(f"iterations and depth: must be >= 1, got {iterations}, {depth}")
        self.instructions = instructions
        self.iterations, self.depth, self.c, self.gamma = iterations, depth, c, gamma
        self.success_bonus = success_bonus
        self.policy_prior, self.prior, self.prior_levels = policy_prior, prior, prior_levels
        self.max_sim_actions = max_sim_actions
        self.learn_zones = learn_zones
        self.barred: set[tuple[str, str]] = set()  # (robot, place) navigations that failed with kind 4
        self._targets: list[str] | None = None
        self.rng = random.Random(seed)
        self.explored: set[str] = set()
        self.surface_seen: set[str] = set()
        self.previous: dict[str, str] = {}
        self.sim_actions = 0  # simulated actions of the last decision
        self.iterations_run = 0
        self.root_visits: dict[str, int] = {}  # the first robot's options in the last decision
        self._world: weakref.ReferenceType[RobotWorld] | None = None

    def reset(self) -> None:
        """Forget the episode (what the team has seen, each robot's previous action)."""
        self.explored, self.surface_seen, self.previous = set(), set(), {}
        self.barred, self._targets = set(), None
        self._world = None

    def observe(self, feedback: Any) -> None:
        """Read one executed action's feedback (the episode runner calls it): with ``learn_zones``
        a Navigation Failed (4) bars that robot's navigation to that place from the search."""
        if self.learn_zones and feedback.kind == "navigation_failed_4":
            try:
                a = parse_action(feedback.action)
            except ActionError:
                return
            if a.target:
                self.barred.add((feedback.robot, a.target))

    # -- observation
    def _observe(self, world: RobotWorld) -> None:
        if self._world is None or self._world() is not world:
            self.reset()
            self._world = weakref.ref(world)
        if self._targets is not None and list(world.targets) != self._targets:
            self.explored, self.surface_seen = set(), set()  # CTO: seen-empty said nothing of new targets
        self._targets = list(world.targets)
        self.explored.add(world.layout.working_table)
        self.explored |= set(world.receptacles)
        for r in world.robots.values():
            if r.at is None:
                continue
            p = world.place_of(r.at)
            if p.container and not world.open.get(r.at, True):
                self.surface_seen.add(r.at)
            else:
                self.explored.add(r.at)

    def _weights(self, belief: RobotWorld, hidden: list[str]) -> dict[str, tuple[list[str], list[float]]]:
        places = [h for h in belief.layout.places if h not in self.explored]
        out = {}
        for h in hidden:
            w = [1.0] * len(places) if self.prior is None or not places else \
                [max(float(x), 0.0) for x in self.prior(belief, h, list(places))]
            if len(w) != len(places) or sum(w) <= 0:
                w = [1.0] * len(places)
            out[h] = (places, w)
        return out

    def _determinize(self, sim: RobotWorld, weights: dict[str, tuple[list[str], list[float]]]) -> None:
        rng = self.rng
        for h, (places, w) in weights.items():
            if not places:
                continue
            pl = rng.choices(places, w)[0]
            p = sim.layout.place(pl)
            if pl in self.surface_seen or (p.container and not p.surface):
                inside = True
            else:
                inside = p.container and rng.random() < 0.5
            o = sim.objects[h]
            o.place, o.inside = pl, inside
            o.pos = (p.centre[0] + rng.uniform(-1, 1) * max(p.half[0] - 0.05, 0.0),
                     p.centre[1] + rng.uniform(-1, 1) * max(p.half[1] - 0.05, 0.0))

    # -- tree policy
    def _select(self, node: _Node, texts: list[str], sim: RobotWorld, name: str, level: int) -> tuple[str, bool]:
        """The child to follow and whether it is new (an expansion)."""
        if self.policy_prior is not None:
            if node.priors is None or any(t not in node.priors for t in texts):
                use = self.prior_levels is None or level < self.prior_levels
                raw = self.policy_prior(sim, name, list(texts)) if use else [1.0] * len(texts)
                if len(raw) != len(texts):
                    raise ValueError(f"policy_prior: {len(raw)} weights for {len(texts)} candidates")
                tot = sum(max(float(x), 0.0) for x in raw) or 1.0
                node.priors = {**(node.priors or {}), **{t: max(float(x), 0.0) / tot for t, x in zip(texts, raw)}}
            sq = math.sqrt(max(node.n, 1))
            best, best_s = texts[0], -math.inf
            for t in texts:
                ch = node.children.get(t)
                q = ch.w / ch.n if ch is not None and ch.n else 0.0
                s = q + self.c * node.priors[t] * sq / (1 + (ch.n if ch is not None else 0))
                if s > best_s:
                    best, best_s = t, s
            return best, best not in node.children
        untried = [t for t in texts if t not in node.children]
        if untried:
            return self.rng.choice(untried), True
        log_n = math.log(max(node.n, 1))
        best, best_s = texts[0], -math.inf
        for t in texts:
            ch = node.children[t]
            s = ch.w / ch.n + self.c * math.sqrt(log_n / ch.n)
            if s > best_s:
                best, best_s = t, s
        return best, False

    def _simulate(self, root: _Node, sim: RobotWorld, order: list[str]) -> int:
        previous = dict(self.previous)
        explored = set(self.explored)
        path: list[_Node] = [root]
        rewards: list[float] = []
        node: _Node | None = root
        ps = sim.partial_success()
        level = 0
        acted = 0
        done = False
        for step in range(self.depth):
            disc = self.gamma ** step
            for name in order:
                acts = _candidates(sim, name, self.instructions, previous.get(name), explored, self.barred)
                if node is not None:
                    texts = [x for x, _ in acts]
                    pick, new = self._select(node, texts, sim, name, level)
                    a = acts[texts.index(pick)][1]
                    child = node.children.get(pick)
                    if child is None:
                        child = node.children[pick] = _Node()
                    path.append(child)
                    node = None if new else child
                else:
                    a = self.rng.choice(acts)[1]
                fb = sim.execute(name, a)
                sim.perceive()
                acted += 1
                level += 1
                previous[name] = a.name
                if fb.kind == "navigation_success":
                    p = sim.place_of(a.target)
                    if not p.container or sim.open.get(a.target, True):
                        explored.add(a.target)
                elif fb.kind == "open_success":
                    explored.add(a.target)
                r = 0.0
                if fb.ok and a.name in ("pick", "place"):
                    new_ps = sim.partial_success()
                    r = (new_ps - ps) * disc
                    ps = new_ps
                if r > 0 and sim.success():
                    r += self.success_bonus * disc
                    done = True
                rewards.append(r)
                if done:
                    break
            if done:
                break
        # back up: the node reached by action k gets the return from action k on
        ret = sum(rewards)
        root.n += 1
        root.w += ret
        for k, ch in enumerate(path[1:]):
            ch.n += 1
            ch.w += ret
            ret -= rewards[k]
        return acted

    # -- the decision
    def decide(self, world: RobotWorld) -> dict[str, str]:
        """One action text per active robot for this step (team order)."""
        self._observe(world)
        order = [r.name for r in world.active()]
        if not order:
            return {}
        belief, hidden = belief_world(world)
        weights = self._weights(belief, hidden)
        root = _Node()
        self.sim_actions = 0
        self.iterations_run = 0
        for _ in range(self.iterations):
            if self.max_sim_actions is not None and self.sim_actions >= self.max_sim_actions:
                break
            sim = belief.clone()
            self._determinize(sim, weights)
            self.sim_actions += self._simulate(root, sim, order)
            self.iterations_run += 1
        self.root_visits = {t: ch.n for t, ch in root.children.items()}
        joint: dict[str, str] = {}
        node: _Node | None = root
        for name in order:
            if node is None or not node.children:
                joint[name] = "wait()"
                node = None
                continue
            text, node = max(node.children.items(), key=lambda kv: (kv[1].n, kv[1].w / max(kv[1].n, 1)))
            joint[name] = text
        for name, text in joint.items():
            self.previous[name] = text.split("(", 1)[0]
        return joint

    def __call__(self, world: RobotWorld) -> dict[str, str]:
        return self.decide(world)


def run_planner(world: RobotWorld, planner: MCTSPlanner, max_steps: int) -> tuple[bool, float, int]:
    """A minimal episode: ``(success, partial success, steps)`` (the framework's
    ``run_joint_episode`` is the full runner with logs and variations)."""
    for t in range(1, max_steps + 1):
        world.step = t
        joint = planner.decide(world)
        for r in list(world.robots.values()):
            if not r.active:
                continue
            planner.observe(world.execute(r.name, joint.get(r.name, "wait()")))
            world.perceive()
            if world.success():
                return True, world.partial_success(), t
    return world.success(), world.partial_success(), max_steps

