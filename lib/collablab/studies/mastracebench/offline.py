"""The offline heuristic backend of MASTraceBench (mastracebench.txt §4, §3.3): no LLM, same path.

:class:`HeuristicBackend` (label ``"heuristic"``) answers every role of :data:`~.roles.ROLES`
from ``request.context`` and ``request.instance`` only (never from the prose ``prompt``), and
writes text that the task's own parser reads back: each task has a ``render_*`` function
(Negotiation: :func:`~.tasks.negotiation.render_allocation`) whose output round-trips through
the task's ``parse`` (one-line JSON, so a claim line can carry it).
Each decision is a draw from a :class:`MASProfile` of per-decision probabilities, seeded from a
stable SHA-256 hash of ``(seed, task, instance, agent, round, sample, role)`` (never Python's
``hash()``), so the same request always gets the same reply and different agents and samples
draw independently. **The profile is the same in every method**: nothing here reads or branches
on a method's name; only roles, context and the task differ.

Decisions and mechanisms:

- **Initial proposal.** With ``p_correct`` the task's reference best (MAPF :func:`solve`,
  EvidenceChain gold chain, Gomoku :func:`greedy_move`, Negotiation :func:`rule_proposal` (or,
  when the default acceptor rejects it, the best-scoring split), TacticDuel :func:`rule_action`,
  OptionGen the reference option set), else ``degrade_*(best, instance, rng)`` (a strictly worse
  proposal when one can be found). An agent's initial proposal is keyed without the round, so
  it is the same in every round; a reply is garbage text with ``p_unparsable`` (every role but
  the opponent), which the task parser records as ``Invalid``.
- **Later rounds** (a proposer-like role shown peers' ``"proposals"``): with ``p_persuade`` it
  adopts the strict-majority peer proposal (two or more peers agreeing) even if its own is
  better, so *a persuadable strong agent regresses* and *a majority can outvote a correct
  minority*; else with ``p_adopt_better`` it adopts the best peer proposal that beats its own
  (weak agents Reach); else with ``p_refine`` it moves its own proposal one step toward the best
  (``refine``), so *refinement can create value beyond the initial pool* (Partial, Surpass).
- **Right or wrong.** A judging role knows the true score through the task scorer: a proposal is
  right when it scores at least ``min(max_score, score(reference best))`` (the reference counts
  as right even where a rule opponent's best is below ``S*``). TacticDuel is judged before the
  round resolves, by the mean eq 22 value over the opponent's legal actions (the criterion of
  ``rule_action``). A wrong proposal is approved with ``p_accept_wrong``, a right one rejected
  with ``p_reject_right``; an ``Invalid`` proposal is wrong.
- **Choosing** (aggregator, judge, synthesizer shown two or more proposals): the best with
  ``p_pick_best``, else the plurality canonical proposal (two or more alike), else the first
  readable one; the reply is that proposal rendered.
- **CLEARS.** A claimer returns ``{"claims": [...]}`` with ``context["n"]`` (clamped to 2-4,
  else a draw of 2-4) lines ``"<aspect> claim: <render>"``, each carrying its proposal; a role
  shown ``"claims"`` answers ``{"endorse": [ids], "challenge": [ids]}`` following each claim's
  correctness with error ``p_accept_wrong``; the synthesizer counts claims marked ``preserve``
  +1 and ``avoid`` -1 per agent (CLEARS), judges unmarked claims itself (CLEARS w/o CCE), and
  renders the top agent's proposal (ties: first listed).
- **Programmer** (MAS-GPT's program writer): one of :data:`~.mas_gpt.PROGRAM_SHAPES` (ensemble,
  critique-revise, single solver), picked by the request's seeded draw (never by method); with
  ``p_unparsable`` garbage, like every role, which is no program (so both paths are exercised).
- **Other roles.** proposer, reflector, affirmative and negative propose as above;
  validator, critic, reviewer and a judge shown one proposal answer ``{"approve": bool}``
  (approve only if every shown proposal is right); the evaluator rates ``{"score": 9}`` (right)
  or ``{"score": 4}``; the recruiter lists ``n`` (default 3) expert descriptions; the opponent
  plays the task's rule opponent (Negotiation: :class:`ReservationRule` when shown an
  ``"offer"``: eq 17's temperature-0 acceptance probe). Every reply format is the one the
  methods ask for and read with the parsers in :mod:`.roles`.
- **Negotiation's accept/reject task** (:data:`~.tasks.negotiation.RESPONSE_TASK`, a run of a
  method or of the Single-Agent opponent on a ``ResponseDecision``): its kit's reference is
  :func:`~.tasks.negotiation.rule_response` (the :class:`ReservationRule`), its degradation the
  other decision, its refinement the reference. Deciding on an offer is a verdict, so an
  agent's initial decision uses the profile's judging errors, not ``p_correct`` (which on a
  two-way choice would make a medium agent a coin): an offer the rule accepts is rejected with
  ``p_reject_right``, one it rejects is accepted with ``p_accept_wrong``. The same profile for
  every method and for the opponent; roles, voting and judging work as on any task.
- **OptionGen** is valued by the offline rule judge (:func:`~.tasks.option_gen.rule_scores` on the
  canonical proposal with offline rubrics, eq 10), the judge ``OptionGenTask(judge=RuleJudge())``
  scores with; its degradations are a distractor promoted to the answer, a distractor paraphrased
  or duplicated from another, and an off-topic distractor (:func:`degrade_option_gen`).
- **Tokens.** ``input_tokens``/``output_tokens`` are word counts (``len(text.split())``) of the
  prompt and the reply: offline proxies for TC (eq 5), not tokenizer counts.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from .mas_gpt import PROGRAM_SHAPES
from .roles import Reply, Request
from .tasks import TASKS
from .tasks import evidence_chain as E
from .tasks import gomoku as G
from .tasks import mapf as M
from .tasks import negotiation as N
from .tasks import option_gen as OG
from .tasks import tactic_duel as T
from .tasks.base import is_invalid

__all__ = [
    "KITS",
    "PROFILES",
    "HeuristicBackend",
    "MASProfile",
    "TaskKit",
    "degrade_evidence",
    "degrade_gomoku",
    "degrade_mapf",
    "degrade_negotiation",
    "degrade_option_gen",
    "degrade_tactic_duel",
    "garbage",
    "get_profile",
    "render_evidence",
    "render_gomoku",
    "render_mapf",
    "render_option_gen",
    "render_tactic_duel",
    "stable_rng",
]

EPS = 1e-9


# --- profiles ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class MASProfile:
    """Per-decision probabilities of one agent's capability (the same in every method)."""

    name: str
    p_correct: float
    p_unparsable: float
    p_accept_wrong: float
    p_reject_right: float
    p_persuade: float
    p_adopt_better: float
    p_refine: float
    p_pick_best: float

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.name.startswith("p_"):
                v = getattr(self, f.name)
                if not (isinstance(v, (int, float)) and 0.0 <= v <= 1.0):
                    raise ValueError(f"{f.name}: must be a probability in [0, 1], got {v!r}")


#: the named profiles (values are design choices, the same whatever the method)
PROFILES: dict[str, MASProfile] = {
    "strong": MASProfile("strong", p_correct=0.8, p_unparsable=0.02, p_accept_wrong=0.1,
                         p_reject_right=0.05, p_persuade=0.3, p_adopt_better=0.8, p_refine=0.5,
                         p_pick_best=0.8),
    "medium": MASProfile("medium", p_correct=0.5, p_unparsable=0.05, p_accept_wrong=0.25,
                         p_reject_right=0.1, p_persuade=0.4, p_adopt_better=0.6, p_refine=0.35,
                         p_pick_best=0.55),
    "weak": MASProfile("weak", p_correct=0.25, p_unparsable=0.12, p_accept_wrong=0.45,
                       p_reject_right=0.2, p_persuade=0.5, p_adopt_better=0.45, p_refine=0.2,
                       p_pick_best=0.35),
}


def get_profile(name: str | MASProfile) -> MASProfile:
    """A named profile (or the profile itself); an unknown name raises ``ValueError`` naming the
    field and the allowed values."""
    if isinstance(name, MASProfile):
        return name
    if name not in PROFILES:
        raise ValueError(f"profile: {name!r} is not allowed; allowed: {', '.join(PROFILES)}")
    return PROFILES[name]


def stable_rng(*key: Any) -> random.Random:
    """A ``random.Random`` seeded from the SHA-256 of ``repr(key)`` (stable across processes)."""
    digest = hashlib.sha256(repr(key).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


_GARBAGE_WORDS = ("lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit",
                  "tempor", "incididunt", "labore", "magna", "aliqua", "veniam", "nostrud")


def garbage(rng: random.Random) -> str:
    """Unreadable reply text (no digits, JSON, move, action, item or verdict words)."""
    return " ".join(rng.choice(_GARBAGE_WORDS) for _ in range(rng.randint(5, 12))) + " ..."


# --- per-task renders, degradations, refinements -----------------------------------------------

def render_mapf(plan: M.Plan, instance: M.MAPFInstance | None = None) -> str:
    """One-line JSON ``{"robot_1": [...], ...}`` that :func:`parse_mapf` reads back."""
    return json.dumps({f"robot_{i + 1}": list(seq) for i, seq in enumerate(plan)})


def render_evidence(chain: tuple[int, ...], instance: E.EvidenceInstance | None = None) -> str:
    """One-line JSON ``{"chain": [...]}`` that :func:`parse_evidence` reads back."""
    return json.dumps({"chain": [int(i) for i in chain]})


def render_gomoku(move: G.Move, state: G.GomokuState | None = None) -> str:
    """One-line JSON ``{"row": r, "col": c}`` that :func:`parse_move` reads back."""
    return json.dumps({"row": int(move[0]), "col": int(move[1])})


def render_tactic_duel(action: str, decision: T.DuelDecision | None = None) -> str:
    """One-line JSON ``{"action": a}`` that :func:`parse_action` reads back."""
    return json.dumps({"action": action})


def _stay_plan(instance: M.MAPFInstance) -> M.Plan:
    return tuple(() for _ in range(instance.n_robots))


def _mapf_best(instance: M.MAPFInstance, rng: random.Random) -> M.Plan:
    return M.solve(instance) or _stay_plan(instance)


def degrade_mapf(best: M.Plan, instance: M.MAPFInstance, rng: random.Random) -> M.Plan:
    """Perturb one or more robots' moves (change, drop or add one move each); a strictly worse
    plan when one is found in 30 tries, else the last perturbation."""
    ref = M.score_mapf(best, instance)
    plan = best
    for _ in range(30):
        seqs = [list(s) for s in best]
        for i in rng.sample(range(len(seqs)), rng.randint(1, len(seqs))):
            s = seqs[i]
            op = rng.choice(("change", "drop", "add")) if s else "add"
            k = rng.randrange(len(s) + (op == "add")) if s or op == "add" else 0
            if op == "change":
                s[k] = rng.choice([m for m in M.MOVES if m != s[k]])
            elif op == "drop":
                del s[k]
            else:
                s.insert(k, rng.choice(M.MOVES[:4]))
        plan = tuple(tuple(s) for s in seqs)
        if M.score_mapf(plan, instance) < ref - EPS:
            return plan
    return plan


def _refine_mapf(own: Any, best: M.Plan, instance: M.MAPFInstance, rng: random.Random) -> M.Plan:
    """Give one robot the reference's moves (the first such change that raises the score)."""
    if is_invalid(own):
        return best
    base = M.score_mapf(own, instance)
    for i in range(instance.n_robots):
        if M.canonical_mapf((own[i],)) != M.canonical_mapf((best[i],)):
            cand = tuple(best[i] if j == i else s for j, s in enumerate(own))
            if M.score_mapf(cand, instance) > base + EPS:
                return cand
    return best


def _evidence_best(instance: E.EvidenceInstance, rng: random.Random) -> tuple[int, ...]:
    return instance.chain


def degrade_evidence(best: tuple[int, ...], instance: E.EvidenceInstance,
                     rng: random.Random) -> tuple[int, ...]:
    """Drop a fact, add a distractor, or swap two facts (each strictly lowers eq 14)."""
    ops = [op for op, ok in (("drop", len(best) > 1), ("add", bool(instance.distractors)),
                             ("swap", len(best) > 1)) if ok]
    if not ops:
        return ()
    chain = list(best)
    op = rng.choice(ops)
    if op == "drop":
        del chain[rng.randrange(len(chain))]
    elif op == "add":
        chain.insert(rng.randrange(len(chain) + 1), rng.choice(instance.distractors))
    else:
        i, j = rng.sample(range(len(chain)), 2)
        chain[i], chain[j] = chain[j], chain[i]
    return tuple(chain)


def _refine_evidence(own: Any, best: tuple[int, ...], instance: E.EvidenceInstance,
                     rng: random.Random) -> tuple[int, ...]:
    """One edit toward the gold chain: remove a wrong or repeated id, else insert a missing one
    in gold order, else undo one adjacent inversion."""
    if is_invalid(own):
        return best
    chain, gold = list(own), list(best)
    pos = {g: k for k, g in enumerate(gold)}
    for k, i in enumerate(chain):
        if i not in pos or i in chain[:k]:
            return tuple(chain[:k] + chain[k + 1:])
    missing = [g for g in gold if g not in chain]
    if missing:
        g = missing[0]
        k = sum(pos[i] < pos[g] for i in chain)
        at = next((n for n, i in enumerate(chain) if pos[i] > pos[g]), len(chain))
        return tuple(chain[:min(k, at)] + [g] + chain[min(k, at):])
    for k in range(len(chain) - 1):
        if pos[chain[k]] > pos[chain[k + 1]]:
            chain[k], chain[k + 1] = chain[k + 1], chain[k]
            return tuple(chain)
    return tuple(chain)


def _gomoku_best(state: G.GomokuState, rng: random.Random) -> G.Move:
    return G.greedy_move(state, rng)


def degrade_gomoku(best: G.Move, state: G.GomokuState, rng: random.Random) -> G.Move:
    """A random legal move scoring below the reference (any other legal move if none does)."""
    ref = G.move_score(state, best)
    legal = [m for m in G.legal_moves(state) if m != tuple(best)]
    worse = [m for m in legal if G.move_score(state, m) < ref - EPS]
    return rng.choice(worse or legal or [tuple(best)])


def _negotiation_best(state: N.NegotiationState, rng: random.Random) -> N.Allocation:
    """:func:`rule_proposal`; when the default acceptor would reject it (eq 17 = 0) although some
    split is accepted, the best-scoring split instead (ties: most units to the opponent)."""
    rule = N.rule_proposal(state, rng)
    task = N.NegotiationTask()
    if task.score(rule, state) > EPS or task.max_score(state) <= EPS:
        return rule
    i = N.proposer(state)
    return max(N.allocations(state.config),
               key=lambda a: (round(task.score(a, state), 9), sum(a.counts[1 - i])))


def degrade_negotiation(best: N.Allocation, state: N.NegotiationState,
                        rng: random.Random) -> N.Allocation:
    """A random allocation scoring below the reference under the default acceptor (any other
    allocation if none does)."""
    task = N.NegotiationTask()
    ref = task.score(best, state)
    others = [a for a in N.allocations(state.config) if a != best]
    worse = [a for a in others if task.score(a, state) < ref - EPS]
    return rng.choice(worse or others or [best])


def _response_best(decision: N.ResponseDecision, rng: random.Random) -> bool:
    return N.rule_response(decision)


def _response_value(proposal: Any, decision: N.ResponseDecision) -> float:
    """100 when the decision is the rule's, else 0 (what "right" means for accept/reject)."""
    return 100.0 if proposal is N.rule_response(decision) else 0.0


def _duel_value(action: Any, decision: T.DuelDecision) -> float:
    """Mean eq 22 (0-100) over the opponent's legal actions; 0 if invalid or illegal."""
    st, p = decision.state, decision.player
    if is_invalid(action) or action not in T.legal_actions(st, p):
        return 0.0
    theirs = T.legal_actions(st, 1 - p) or T.ACTIONS
    return sum(T.scaled_value(str(action), b) for b in theirs) / len(theirs)


def _duel_best(decision: T.DuelDecision, rng: random.Random) -> str:
    return T.rule_action(decision.state, decision.player, rng)


def degrade_tactic_duel(best: str, decision: T.DuelDecision, rng: random.Random) -> str:
    """Another legal action (preferring a lower-valued one)."""
    legal = [a for a in T.legal_actions(decision.state, decision.player) if a != best]
    worse = [a for a in legal if _duel_value(a, decision) < _duel_value(best, decision) - EPS]
    return rng.choice(worse or legal or [best])


def _step_up(candidates: list[Any], value: Callable[[Any], float], own: Any,
             best: Any, rng: random.Random) -> Any:
    """The next better candidate: the lowest-valued one above ``own`` (ties by ``rng``)."""
    base = 0.0 if is_invalid(own) else value(own)
    scored = [(value(c), c) for c in candidates]
    better = [(v, c) for v, c in scored if v > base + EPS]
    if not better:
        return best if is_invalid(own) else own
    low = min(v for v, _ in better)
    return rng.choice([c for v, c in better if v <= low + EPS])


@dataclass(frozen=True)
class TaskKit:
    """What the backend needs of one task: the reference best, a degradation, a one-step
    refinement, a render, and the value/top used to judge right and wrong."""

    best: Callable[[Any, random.Random], Any]
    degrade: Callable[[Any, Any, random.Random], Any]
    refine: Callable[[Any, Any, Any, random.Random], Any]
    render: Callable[[Any, Any], str]
    value: Callable[[Any, Any], float]
    top: Callable[[Any], float]


def _task_value(name: str) -> Callable[[Any, Any], float]:
    task = TASKS[name]()
    return lambda p, inst: task.score(p, inst)


def _task_top(name: str) -> Callable[[Any], float]:
    task = TASKS[name]()
    return lambda inst: task.max_score(inst)


def _gomoku_refine(own: Any, best: Any, state: G.GomokuState, rng: random.Random) -> Any:
    return _step_up(list(G.legal_moves(state)), lambda m: G.move_score(state, m), own, best, rng)


def _negotiation_refine(own: Any, best: Any, state: N.NegotiationState, rng: random.Random) -> Any:
    task = N.NegotiationTask()
    return _step_up(list(N.allocations(state.config)), lambda a: task.score(a, state), own, best, rng)


def _duel_refine(own: Any, best: Any, decision: T.DuelDecision, rng: random.Random) -> Any:
    legal = list(T.legal_actions(decision.state, decision.player))
    return _step_up(legal, lambda a: _duel_value(a, decision), own, best, rng)


def _duel_top(decision: T.DuelDecision) -> float:
    return max((_duel_value(a, decision) for a in T.legal_actions(decision.state, decision.player)),
               default=0.0)


_OPTION_RUBRICS = OG.RubricCache()  # offline rubrics, built once per item
_OFF_TOPIC = ("Penguins can be trained to play the violin.", "Volcanoes mostly erupt on Tuesdays.",
              "A recipe for bread needs yeast and flour.", "The train to Lisbon leaves at noon.")


def render_option_gen(proposal: OG.OptionSet, item: OG.OptionGenItem | None = None) -> str:
    """One-line JSON ``{"correct": ..., "distractors": [...]}`` that :func:`parse_options` reads back."""
    return json.dumps(proposal.to_dict())


def _option_value(proposal: Any, item: OG.OptionGenItem) -> float:
    """Eq 10 by the rule judge on the canonical proposal (what ``RuleJudge`` gives the task)."""
    if is_invalid(proposal):
        return 0.0
    correct, distractors = OG.canonical_options(proposal)  # type: ignore[misc]
    return OG.option_gen_score(*OG.rule_scores(OG.OptionSet(correct, distractors), item, _OPTION_RUBRICS.get(item)))


def _option_best(item: OG.OptionGenItem, rng: random.Random) -> OG.OptionSet:
    return OG.OptionSet(item.correct, item.distractors)


def degrade_option_gen(best: OG.OptionSet, item: OG.OptionGenItem, rng: random.Random) -> OG.OptionSet:
    """A wrong variant of ``best``: a distractor promoted to the answer (the answer becomes a
    distractor), a distractor replaced by a paraphrase (``"Indeed, ..."``) or a copy of another,
    or by an off-topic sentence; the first (in a seeded order) that scores strictly lower."""
    ds = list(best.distractors)
    ops = ["promote", "paraphrase", "duplicate", "off_topic"]
    rng.shuffle(ops)
    ref = _option_value(best, item)
    last = best
    for op in ops:
        k = rng.randrange(len(ds))
        j = rng.choice([i for i in range(len(ds)) if i != k])
        new = list(ds)
        if op == "promote":
            new[k] = best.correct
            cand = OG.OptionSet(ds[k], tuple(new))
        else:
            new[k] = {"paraphrase": "Indeed, " + ds[j][:1].lower() + ds[j][1:], "duplicate": ds[j],
                      "off_topic": rng.choice(_OFF_TOPIC)}[op]
            cand = OG.OptionSet(best.correct, tuple(new))
        if _option_value(cand, item) < ref - EPS:
            return cand
        last = cand
    return last


def _refine_option_gen(own: Any, best: OG.OptionSet, item: OG.OptionGenItem, rng: random.Random) -> OG.OptionSet:
    """One edit toward the reference: put the reference answer in place (a distractor that is the
    answer gets the displaced option if it is a reference distractor), else replace the first
    distractor that is not a distinct reference distractor by a missing reference one."""
    if is_invalid(own):
        return best
    norm = OG.normalize_option
    refs = [norm(d) for d in best.distractors]
    ds = list(own.distractors)
    if norm(own.correct) != norm(best.correct):
        for k, d in enumerate(ds):
            if norm(d) == norm(best.correct):
                present = {norm(x) for x in ds}
                spare = [r for r, n in zip(best.distractors, refs) if n not in present]
                ds[k] = own.correct if norm(own.correct) in refs else (spare[0] if spare else own.correct)
        return OG.OptionSet(best.correct, tuple(ds))
    seen: set[str] = set()
    for k, d in enumerate(ds):
        if norm(d) not in refs or norm(d) in seen:
            missing = [r for r, n in zip(best.distractors, refs) if n not in {norm(x) for x in ds}]
            if missing:
                ds[k] = missing[0]
                return OG.OptionSet(own.correct, tuple(ds))
        seen.add(norm(d))
    return own


#: task name -> its kit
KITS: dict[str, TaskKit] = {
    "mapf": TaskKit(_mapf_best, degrade_mapf, _refine_mapf, render_mapf,
                    _task_value("mapf"), _task_top("mapf")),
    "evidence_chain": TaskKit(_evidence_best, degrade_evidence, _refine_evidence, render_evidence,
                              _task_value("evidence_chain"), _task_top("evidence_chain")),
    "gomoku": TaskKit(_gomoku_best, degrade_gomoku, _gomoku_refine, render_gomoku,
                      _task_value("gomoku"), _task_top("gomoku")),
    "negotiation": TaskKit(_negotiation_best, degrade_negotiation, _negotiation_refine,
                           N.render_allocation, _task_value("negotiation"), _task_top("negotiation")),
    "tactic_duel": TaskKit(_duel_best, degrade_tactic_duel, _duel_refine, render_tactic_duel,
                           _duel_value, _duel_top),
    "option_gen": TaskKit(_option_best, degrade_option_gen, _refine_option_gen, render_option_gen,
                          _option_value, lambda item: 100.0),
    N.RESPONSE_TASK: TaskKit(_response_best, lambda best, d, rng: not best, lambda own, best, d, rng: best,
                             N.render_response, _response_value, lambda d: 100.0),
}
#: task name -> task class: the six tasks and Negotiation's accept/reject task
_TASK_CLASSES: dict[str, Any] = {**TASKS, N.RESPONSE_TASK: N.NegotiationResponseTask}


# --- the backend -------------------------------------------------------------------------------

_PROPOSING = {"proposer", "reflector", "affirmative", "negative"}
_JUDGING = {"validator", "critic", "reviewer", "evaluator", "judge"}
_CHOOSING = {"aggregator", "judge", "synthesizer"}
_ASPECTS = ("answer", "feasibility", "quality", "completeness")


def _claim_body(claim: Mapping[str, Any]) -> str:
    """The proposal a claim line carries (``"<aspect> claim: <proposal>"``, see ``_claims``)."""
    text = str(claim.get("text", ""))
    return text.split(" claim: ", 1)[1] if " claim: " in text else text


def _instance_key(instance: Any) -> str:
    if isinstance(instance, T.DuelDecision):  # the realized opponent action is not yet known
        return repr((instance.state, instance.player))
    name = getattr(instance, "name", None)
    return f"name:{name}" if isinstance(name, str) and name else repr(instance)


@dataclass
class HeuristicBackend:
    """The offline backend: ``profile`` for every agent unless ``agent_profiles`` names one for
    that agent (heterogeneous teams); ``seed`` varies every draw."""

    profile: MASProfile | str = "medium"
    seed: int = 0
    agent_profiles: Mapping[int, MASProfile | str] | None = None
    label: str = "heuristic"
    run: int = 0  # repeat index: run r > 0 draws from seed (seed, r); the reference solutions stay

    def _seed(self) -> Any:
        return self.seed if self.run == 0 else f"{self.seed}/run{self.run}"

    def profile_for(self, agent: int) -> MASProfile:
        """The profile of ``agent``."""
        if self.agent_profiles and agent in self.agent_profiles:
            return get_profile(self.agent_profiles[agent])
        return get_profile(self.profile)

    # helpers ---------------------------------------------------------------------------------
    def _rng(self, req: Request, *what: Any) -> random.Random:
        return stable_rng(self._seed(), req.task, _instance_key(req.instance), req.agent, req.round,
                          req.sample, req.role, *what)

    def _kit(self, task: str) -> TaskKit:
        if task not in KITS:
            raise ValueError(f"task: {task!r} is not allowed; allowed: {', '.join(KITS)}")
        return KITS[task]

    def _best(self, req: Request) -> Any:
        return self._kit(req.task).best(req.instance, stable_rng(self.seed, req.task,
                                                                 _instance_key(req.instance), "best"))

    def _parse(self, req: Request, text: str) -> Any:
        return _TASK_CLASSES[req.task]().parse(text, req.instance)

    def _value(self, req: Request, proposal: Any) -> float:
        return 0.0 if is_invalid(proposal) else self._kit(req.task).value(proposal, req.instance)

    def _right(self, req: Request, proposal: Any) -> bool:
        if is_invalid(proposal):
            return False
        kit = self._kit(req.task)
        bar = min(kit.top(req.instance), self._value(req, self._best(req)))
        return self._value(req, proposal) >= bar - EPS

    def _canon(self, req: Request, proposal: Any) -> Any:
        return _TASK_CLASSES[req.task]().canonical(proposal)

    def _render(self, req: Request, proposal: Any, fallback: str = "") -> str:
        if is_invalid(proposal):
            return fallback or garbage(self._rng(req, "render"))
        return self._kit(req.task).render(proposal, req.instance)

    def _verdict(self, req: Request, proposal: Any, *what: Any) -> bool:
        p = self.profile_for(req.agent)
        u = self._rng(req, "verdict", *what).random()
        return u >= p.p_reject_right if self._right(req, proposal) else u < p.p_accept_wrong

    def initial(self, req: Request) -> Any:
        """The agent's initial proposal (keyed without the round: the same in every round)."""
        p = self.profile_for(req.agent)
        rng = stable_rng(self._seed(), req.task, _instance_key(req.instance), req.agent, req.sample,
                         "initial")
        best = self._best(req)
        if req.task == N.RESPONSE_TASK:  # accept/reject is a verdict on the offer (module docstring)
            u = rng.random()
            return (u >= p.p_reject_right) if best else (u < p.p_accept_wrong)
        if rng.random() < p.p_correct:
            return best
        return self._kit(req.task).degrade(best, req.instance, rng)

    # roles -----------------------------------------------------------------------------------
    def _propose(self, req: Request) -> Any:
        p = self.profile_for(req.agent)
        ctx = req.context
        own = self._parse(req, ctx["own"]) if "own" in ctx else self.initial(req)
        peers = [self._parse(req, str(d.get("text", ""))) for d in ctx.get("proposals", [])
                 if d.get("agent") != req.agent]
        peers = [x for x in peers if not is_invalid(x)]
        rng = self._rng(req, "revise")
        u_persuade, u_adopt, u_refine = rng.random(), rng.random(), rng.random()
        if peers:
            counts = Counter(self._canon(req, x) for x in peers)
            canon, n = counts.most_common(1)[0]
            own_canon = None if is_invalid(own) else self._canon(req, own)
            if n >= 2 and n * 2 > len(peers) and canon != own_canon and u_persuade < p.p_persuade:
                return next(x for x in peers if self._canon(req, x) == canon)
            top = max(peers, key=lambda x: self._value(req, x))
            if self._value(req, top) > self._value(req, own) + EPS and u_adopt < p.p_adopt_better:
                return top
        if (peers or "own" in ctx or req.role == "reflector") and u_refine < p.p_refine:
            return self._kit(req.task).refine(own, self._best(req), req.instance, rng)
        return own

    def _choose(self, req: Request, shown: list[dict[str, Any]]) -> str:
        p = self.profile_for(req.agent)
        cands = [(d, self._parse(req, str(d.get("text", "")))) for d in shown]
        valid = [(d, x) for d, x in cands if not is_invalid(x)]
        if not valid:
            return str(shown[0].get("text", ""))
        if self._rng(req, "choose").random() < p.p_pick_best:
            chosen = max(valid, key=lambda dx: self._value(req, dx[1]))[1]  # first on ties
        else:
            counts = Counter(self._canon(req, x) for _, x in valid)
            canon, n = counts.most_common(1)[0]
            chosen = (next(x for _, x in valid if self._canon(req, x) == canon) if n >= 2
                      else valid[0][1])
        return self._render(req, chosen)

    def _judge(self, req: Request, shown: list[dict[str, Any]]) -> str:
        """A verdict in the format the methods ask for (``roles.parse_verdict``; the evaluator's
        0-10 rating for ``roles.parse_rating``): approve only if every shown proposal is judged right."""
        props = [self._parse(req, str(d.get("text", ""))) for d in shown] or [self.initial(req)]
        ok = all(self._verdict(req, x, k) for k, x in enumerate(props))
        if req.role == "evaluator":
            return json.dumps({"score": 9 if ok else 4})
        return json.dumps({"approve": ok})

    def _claim_votes(self, req: Request, claims: list[dict[str, Any]]) -> str:
        """Endorse the claims judged right, challenge the others (``roles.parse_claim_votes``)."""
        right = {str(c.get("id")): self._verdict(req, self._parse(req, _claim_body(c)), "claim", str(c.get("id")))
                 for c in claims}
        return json.dumps({"endorse": [i for i, ok in right.items() if ok],
                           "challenge": [i for i, ok in right.items() if not ok]})

    def _synthesize(self, req: Request, claims: list[dict[str, Any]]) -> str:
        """Build the answer of the agent whose claims come out best: claims marked ``preserve``
        count +1 and ``avoid`` -1 (CLEARS); unmarked claims (CLEARS w/o CCE) are judged here."""
        tally: dict[Any, int] = {}
        for c in claims:
            stance = c.get("stance")
            if stance is None:
                ok = self._verdict(req, self._parse(req, _claim_body(c)), "claim", str(c.get("id")))
                stance = "preserve" if ok else "avoid"
            tally[c.get("agent")] = tally.get(c.get("agent"), 0) + (1 if stance == "preserve" else -1)
        for agent in sorted(tally, key=lambda a: -tally[a]):  # stable: first listed wins ties
            for c in claims:
                x = self._parse(req, _claim_body(c))
                if c.get("agent") == agent and not is_invalid(x):
                    return self._render(req, x)
        return self._render(req, self.initial(req))

    def _claims(self, req: Request) -> str:
        proposal = self._propose(req)
        if is_invalid(proposal):
            return garbage(self._rng(req, "claims"))
        n = req.context.get("n")
        k = max(2, min(4, int(n))) if n is not None else self._rng(req, "n").randint(2, 4)
        body = self._render(req, proposal)
        return json.dumps({"claims": [f"{a} claim: {body}" for a in _ASPECTS[:k]]})

    def _opponent(self, req: Request) -> str:
        rng = self._rng(req, "opponent")
        inst = req.instance
        if req.task == "negotiation" and "offer" in req.context:
            offer = self._parse(req, str(req.context["offer"]))
            ok = not is_invalid(offer) and N.ReservationRule()(offer, inst)
            return json.dumps({"accept": bool(ok)})
        return self._render(req, self._kit(req.task).best(inst, rng))

    def _text(self, req: Request) -> str:
        ctx = req.context
        if req.role == "opponent":
            return self._opponent(req)
        p = self.profile_for(req.agent)
        if self._rng(req, "unparsable").random() < p.p_unparsable:
            return garbage(self._rng(req, "garbage"))
        shown = list(ctx.get("proposals", []))
        claims = list(ctx.get("claims", []))
        if req.role == "programmer":
            return PROGRAM_SHAPES[self._rng(req, "program").choice(sorted(PROGRAM_SHAPES))]
        if req.role == "recruiter":
            n = int(ctx.get("n", 3))
            return "\n".join(f"expert {k + 1}: a careful {req.task} solver" for k in range(n))
        if req.role == "claimer":
            return self._claims(req)
        if req.role == "synthesizer" and claims:
            return self._synthesize(req, claims)
        if claims and req.role in _JUDGING | _PROPOSING:
            return self._claim_votes(req, claims)
        if (req.role in _CHOOSING and len(shown) >= 2) or (req.role in _CHOOSING - _JUDGING and shown):
            return self._choose(req, shown)
        if req.role in _JUDGING:
            if not shown and "own" in ctx:
                shown = [{"agent": req.agent, "text": ctx["own"]}]
            return self._judge(req, shown)
        return self._render(req, self._propose(req))

    def answer(self, request: Request) -> Reply:
        """The reply text and its word-count token proxies (module docstring)."""
        text = self._text(request)
        return Reply(text, len(request.prompt.split()), len(text.split()))
