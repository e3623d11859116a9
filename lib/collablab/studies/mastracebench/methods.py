"""The MAS methods MASTraceBench evaluates, and CLEARS (mastracebench.txt §4, experiments, appendix
"Main-Experiment Method Configurations").

Every method is a short function ``run_<name>(task, instance, instance_id, backend, config,
state=None) -> Trajectory``. It talks to a model only through :class:`~.roles.Request` /
:class:`~.roles.Reply` (one small helper issues each request, records a :class:`~.trajectory.Call`
under its logical id, parses the reply with the task's own parser and scores it). ``task`` is a
:class:`TaskSpec` (a task plus ``prompt_of(instance) -> str``) or a bare task whose prompt is looked
up by name in :data:`PROMPTS` (MAPF, OptionGen, EvidenceChain, Gomoku; Negotiation and TacticDuel
need the player, so they need a :class:`TaskSpec`). Every prompt is the task prompt plus a short role
instruction of ours and the material the role is shown; the same material is in ``context``.
A task that scores with calls of its own (OptionGen's judge) offers ``take_scoring_calls()``; the
unit appends those calls (kind ``"score_judge"``, re-identified under the unit, out of TC) after
each grading, and records the task's ``scorer_info()`` as ``Trajectory.scorer``.

Which outputs are the Proposer Agents' initial and final proposals (§3.1) is written in
:data:`PROPOSAL_OUTPUTS`; FPA is undefined for :data:`FPA_UNDEFINED` (Table 9's dashes).

Decisions the paper leaves open (ours; tested in tests/test_mastracebench_methods.py):

- **Method names** follow Tables 2 and 9 ("Consistency" is Self-Consistency).
- **Rounds.** Round 0 is the initial proposal round; round ``r`` is interaction round ``r``. Calls
  of one round are told apart by role and agent; where one agent judges several items in a round
  (MAV validators, MAPR reviewers, CLEARS endorsers), ``sample`` is the index of the judged item.
  Self-Consistency's samples are ``sample`` 0..n-1 of one agent (traces ``sample0``, ``sample1``...).
- **Voting** (Consistency, Int. Debate, MAPR) counts valid proposals by canonical JSON; invalid ones
  get no vote; if none is valid the answer is invalid (score 0). A tie is broken by
  ``random.Random(f"{seed}/{method}/{instance_id}/{state}")`` choosing among the tied canonical
  keys sorted by their JSON text (:func:`tie_break_rng`, :func:`majority_vote`). MAV's
  most-approvals selection breaks ties the same way, among valid proposals only.
- **Aggregator, judge, synthesiser** reply with a solution in the task's format; it is parsed as the
  answer (an unreadable reply is an invalid answer, not a fallback to a proposal).
- **Verdicts** (MAV validators, Reflection's reflector) are read by :func:`parse_verdict`; an
  unreadable verdict is no approval. AgentVerse's evaluator rating is read by :func:`parse_rating`
  (0-10; unreadable -> 0, so the loop continues).
- **CLEARS.** Claims are read by :func:`parse_claims`; more than ``max_claims`` are cut, fewer
  than ``min_claims`` are kept as they are. Each proposer endorses or challenges every other
  proposer's claims (:func:`parse_claim_votes`; unknown ids ignored). The positive set is every
  claim with the highest endorsement count, the negative set every claim with the highest challenge
  count (ties kept; a highest count of 0 gives an empty set). Proposers do not revise, so their final
  proposal is their initial one. w/o CCE gives every claim to the synthesiser.
- **Per-agent models.** ``MethodConfig.models`` maps an agent name to a model label, sent as
  ``context["model"]``; the backend decides what to do with it.
- Extra ``context`` keys beyond roles.py's: ``"feedback"`` (list of ``{"agent", "text"}``: reviews,
  critiques, reflections shown to a reviser), ``"experts"`` (AgentVerse's recruited roles),
  ``"model"``; CLEARS claims shown to the synthesiser carry ``"stance"`` (``"preserve"``/``"avoid"``).

MAS-GPT is built *prompted* (:mod:`.mas_gpt`, label ``mas_gpt.MAS_GPT_LABEL``): the backbone writes the
multi-agent program the paper's fine-tuned MAS-GPT-32B would write; :func:`run_mas_gpt`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .mas_gpt import SandboxLimits, run_session
from .roles import Backend, Request, parse_claim_votes, parse_claims, parse_rating, parse_verdict
from .tasks.base import Task, is_invalid
from .tasks.evidence_chain import evidence_prompt
from .tasks.gomoku import render_prompt as gomoku_prompt
from .tasks.mapf import mapf_prompt
from .tasks.option_gen import option_gen_prompt
from .trajectory import Answer, Call, Proposal, ProposerTrace, Trajectory, make_call_id

__all__ = [
    "FPA_UNDEFINED",
    "METHODS",
    "NOT_BUILT",
    "PROMPTS",
    "PROPOSAL_OUTPUTS",
    "VALIDATOR_QUESTIONS",
    "MethodConfig",
    "TaskSpec",
    "majority_vote",
    "run",
    "run_adv_debate",
    "run_agentverse",
    "run_agg_debate",
    "run_clears",
    "run_clears_no_cce",
    "run_consistency",
    "run_int_debate",
    "run_mapr",
    "run_mas_gpt",
    "run_mav",
    "run_reflection",
    "run_single_agent",
    "tie_break_rng",
]

#: task name -> prompt renderer for tasks whose prompt needs only the instance/state
PROMPTS: dict[str, Callable[[Any], str]] = {"evidence_chain": evidence_prompt, "mapf": mapf_prompt,
                                            "option_gen": option_gen_prompt,
                                            "gomoku": gomoku_prompt}
#: MAV's five validator questions (appendix)
VALIDATOR_QUESTIONS: tuple[str, ...] = ("correctness", "completeness", "clarity", "reasoning", "relevance")
#: methods of the paper that are not built here
NOT_BUILT: tuple[str, ...] = ()
#: methods whose FPA is undefined (Table 9)
FPA_UNDEFINED: frozenset[str] = frozenset({"Single-Agent", "Reflection", "AgentVerse", "MAS-GPT"})

#: method -> (proposers, initial proposal, final proposal, final answer)
PROPOSAL_OUTPUTS: dict[str, tuple[str, str, str, str]] = {
    "Single-Agent": ("agent0", "its one reply", "= initial", "its reply"),
    "Consistency": ("sample0..n-1", "each sample", "= initial", "majority vote"),
    "MAV": ("agent0..n-1", "each proposal", "= initial", "proposal with most validator approvals"),
    "Int. Debate": ("agent0..n-1", "round-0 proposal", "last debate round's proposal", "majority vote"),
    "Agg. Debate": ("agent0..n-1", "round-0 proposal", "last debate round's proposal",
                    "aggregator's reproduction of the strongest final proposal"),
    "Adv. Debate": ("affirmative, negative", "opening position (negative: its alternative)",
                    "position after the last rebuttal", "judge's answer"),
    "Reflection": ("reasoner", "first response", "last revision (or first if approved)", "= final"),
    "MAPR": ("agent0..n-1", "round-0 solution", "solution revised after peer reviews", "majority vote"),
    "AgentVerse": ("solver", "first solution", "last revised solution", "= final"),
    "MAS-GPT": ("program: each lineage of the program's proposer calls (mas-agentK); fallback: fallback0..n-1",
                "its first reply (fallback: each candidate)",
                "its last revision (a later proposer call shown its latest reply first); fallback: = initial",
                "the program's returned answer (fallback: the aggregator's answer)"),
    "CLEARS": ("agent0..n-1", "round-0 proposal", "= initial (proposers do not revise)",
               "synthesis from top-endorsed and top-challenged claims"),
    "CLEARS w/o CCE": ("agent0..n-1", "round-0 proposal", "= initial", "synthesis from all claims"),
}


@dataclass(frozen=True)
class TaskSpec:
    """A task and how to render its prompt for an instance (or a game's decision state)."""

    task: Task
    prompt_of: Callable[[Any], str]

    @property
    def name(self) -> str:
        """The task's name."""
        return self.task.name


@dataclass(frozen=True)
class MethodConfig:
    """A method's configuration; defaults are the paper's main experiment (appendix)."""

    proposers: int = 3  # proposers of multi-proposer methods; Consistency's samples
    rounds: int = 1  # interaction rounds of Int./Agg. Debate and MAPR
    seed: int = 0  # tie-breaks
    run: int = 0  # the run index recorded in each trajectory
    rebuttals: int = 2  # Adv. Debate
    reflections: int = 2  # Reflection: most reflection-revision cycles
    refine_rounds: int = 3  # AgentVerse: most refinement rounds
    threshold: float = 8.0  # AgentVerse: evaluator score (of 10) that stops refinement
    critics: int = 2  # AgentVerse
    min_claims: int = 2  # CLEARS
    max_claims: int = 4  # CLEARS
    validators: tuple[str, ...] = VALIDATOR_QUESTIONS  # MAV
    models: Mapping[str, str] = field(default_factory=dict)  # agent name -> model label

    def __post_init__(self) -> None:
        for name, low in (("proposers", 1), ("rounds", 0), ("rebuttals", 0), ("reflections", 0),
                          ("refine_rounds", 0), ("critics", 1), ("min_claims", 1), ("run", 0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise ValueError(f"{name}: must be an integer >= {low}, got {v!r}")
        if self.max_claims < self.min_claims:
            raise ValueError(f"max_claims: must be >= min_claims = {self.min_claims}, got {self.max_claims!r}")
        if not 0 <= self.threshold <= 10:
            raise ValueError(f"threshold: an evaluator score in [0, 10], got {self.threshold!r}")
        if not self.validators:
            raise ValueError(f"validators: at least one question, e.g. {list(VALIDATOR_QUESTIONS)}")


# ------------------------------------------------------------------ voting

def tie_break_rng(seed: int, method: str, instance_id: str, state: int | None) -> random.Random:
    """The seeded generator every tie-break of a unit uses."""
    return random.Random(f"{seed}/{method}/{instance_id}/{state}")


def _key(p: Proposal) -> str:
    return json.dumps(p.canonical, sort_keys=True)


def majority_vote(proposals: Sequence[Proposal], rng: random.Random) -> int | None:
    """Index of the first proposal carrying the most frequent valid canonical form; ties broken by
    ``rng.choice`` over the tied keys sorted by JSON text; None if no proposal is valid."""
    counts: dict[str, int] = {}
    for p in proposals:
        if p.valid:
            counts[_key(p)] = counts.get(_key(p), 0) + 1
    if not counts:
        return None
    top = max(counts.values())
    tied = sorted(k for k, c in counts.items() if c == top)
    win = tied[0] if len(tied) == 1 else rng.choice(tied)
    return next(i for i, p in enumerate(proposals) if p.valid and _key(p) == win)


def _select_most(proposals: Sequence[Proposal], votes: Sequence[int], rng: random.Random) -> int | None:
    """Index of the valid proposal with most votes (seeded tie-break); None if none is valid."""
    cands = [i for i, p in enumerate(proposals) if p.valid]
    if not cands:
        return None
    top = max(votes[i] for i in cands)
    tied = [i for i in cands if votes[i] == top]
    return tied[0] if len(tied) == 1 else rng.choice(tied)


# ------------------------------------------------------------------ the one helper

@dataclass
class _Out:
    text: str
    proposal: Proposal


def _shown(items: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"agent": a, "text": t} for a, t in items]


class _Session:
    """One unit's run: issues requests, records calls, parses and scores replies."""

    def __init__(self, method: str, task: TaskSpec | Task, instance: Any, instance_id: str,
                 backend: Backend, config: MethodConfig, state: int | None) -> None:
        if isinstance(task, TaskSpec):
            self.spec = task
        elif getattr(task, "name", None) in PROMPTS:
            self.spec = TaskSpec(task, PROMPTS[task.name])
        else:
            raise ValueError(f"task: {getattr(task, 'name', task)!r} has no prompt renderer by name "
                             f"(known: {', '.join(PROMPTS)}); pass a TaskSpec with prompt_of")
        if not isinstance(config, MethodConfig):
            raise TypeError(f"config: a MethodConfig, got {type(config).__name__}")
        self.method, self.instance, self.instance_id = method, instance, instance_id
        self.backend, self.config, self.state = backend, config, state
        self.task_prompt = self.spec.prompt_of(instance)
        self.calls: list[Call] = []
        self.rng = tie_break_rng(config.seed, method, instance_id, state)
        self._take_scoring = getattr(self.spec.task, "take_scoring_calls", None)
        if self._take_scoring is not None:  # judge calls made outside any unit belong to none
            self._take_scoring()

    def ask(self, role: str, agent: str, index: int, rnd: int, instruction: str,
            context: Mapping[str, Any] | None = None, sample: int = 0) -> str:
        """Issue one request and record its call; returns the reply text."""
        ctx = dict(context or {})
        if agent in self.config.models:
            ctx["model"] = self.config.models[agent]
        prompt = f"{self.task_prompt}\n\n--- Your role: {role} ---\n{instruction}\n"
        for key, items in ctx.items():
            if key in ("proposals", "feedback", "claims") and items:
                prompt += f"\n{key.capitalize()}:\n" + "\n".join(
                    f"[{it.get('id', it.get('agent'))}]" + (f" ({it['stance']})" if "stance" in it else "")
                    + f" {it['text']}" for it in items)
            elif key in ("own", "experts", "question") and items:
                prompt += f"\n{key.capitalize()}: {items}"
        cid = make_call_id(self.method, self.spec.name, self.instance_id, self.state, role, rnd, agent, sample)
        req = Request(role=role, task=self.spec.name, instance=self.instance, agent=index, round=rnd,
                      sample=sample, prompt=prompt, context=ctx, call_id=cid)
        reply = self.backend.answer(req)
        self.calls.append(Call(cid, role, rnd, agent, int(reply.input_tokens), int(reply.output_tokens), sample,
                               truncated=bool(getattr(reply, "truncated", False))))
        return reply.text

    def grade(self, text: str) -> Proposal:
        """Parse, score and canonicalise a reply; unreadable -> an invalid proposal (score 0)."""
        parsed = self.spec.task.parse(text, self.instance)
        if is_invalid(parsed):
            return Proposal.invalid()
        out = Proposal(self.spec.task.canonical(parsed), float(self.spec.task.score(parsed, self.instance)))
        self.record_scoring()
        return out

    def record_scoring(self) -> None:
        """Append the task's own scoring calls since the last take (OptionGen's judge:
        ``take_scoring_calls``), re-identified under this unit; kind ``"score_judge"``, out of TC."""
        if self._take_scoring is None:
            return
        for c in self._take_scoring():
            cid = make_call_id(self.method, self.spec.name, self.instance_id, self.state, c.role, c.round,
                               c.agent, c.sample)
            self.calls.append(replace(c, call_id=cid))

    def propose(self, role: str, agent: str, index: int, rnd: int, instruction: str,
                context: Mapping[str, Any] | None = None, sample: int = 0) -> _Out:
        """A call whose reply is a solution: asked, recorded and graded."""
        text = self.ask(role, agent, index, rnd, instruction, context, sample)
        return _Out(text, self.grade(text))

    def done(self, traces: Sequence[tuple[str, Proposal, Proposal]], answer: Proposal | None,
             source: str) -> Trajectory:
        """The unit's trajectory; ``answer`` None is an invalid answer."""
        a = answer if answer is not None else Proposal.invalid()
        self.record_scoring()
        info = getattr(self.spec.task, "scorer_info", None)
        return Trajectory(method=self.method, task=self.spec.name, instance=self.instance_id, state=self.state,
                          s_star=float(self.spec.task.max_score(self.instance)),
                          proposers=tuple(ProposerTrace(n, i, f) for n, i, f in traces),
                          answer=Answer(a.canonical, a.score, a.valid, source), calls=tuple(self.calls),
                          run=self.config.run, backend=getattr(self.backend, "label", "unknown") or "unknown",
                          scorer=info() if callable(info) else None)

    def vote(self, finals: Sequence[Proposal]) -> Proposal | None:
        """Majority vote over final proposals (seeded tie-break)."""
        i = majority_vote(finals, self.rng)
        return None if i is None else finals[i]


_SOLVE = "Solve the task on your own. Reply in the required format."
_REVISE = ("Other agents' current proposals are shown. Weigh them against your own; keep your answer if it "
           "is right, otherwise revise it. Reply with your full solution in the required format.")


def _names(n: int) -> list[str]:
    return [f"agent{i}" for i in range(n)]


# ------------------------------------------------------------------ methods

def run_single_agent(task, instance, instance_id, backend, config=None, state=None) -> Trajectory:
    """Single-Agent: one proposer answers once; its reply is initial, final and answer."""
    s = _Session("Single-Agent", task, instance, instance_id, backend, config or MethodConfig(), state)
    out = s.propose("proposer", "agent0", 0, 0, _SOLVE)
    return s.done([("agent0", out.proposal, out.proposal)], out.proposal, "agent0")


def run_consistency(task, instance, instance_id, backend, config=None, state=None) -> Trajectory:
    """Self-Consistency: ``proposers`` independent samples of one agent, majority vote; initial = final."""
    cfg = config or MethodConfig()
    s = _Session("Consistency", task, instance, instance_id, backend, cfg, state)
    outs = [s.propose("proposer", "agent0", 0, 0, _SOLVE, sample=k).proposal for k in range(cfg.proposers)]
    return s.done([(f"sample{k}", p, p) for k, p in enumerate(outs)], s.vote(outs), "vote")


def run_mav(task, instance, instance_id, backend, config=None, state=None) -> Trajectory:
    """MAV: independent proposals, each judged by one validator per question; the valid proposal
    with most approvals is the answer (seeded tie-break); initial = final."""
    cfg = config or MethodConfig()
    s = _Session("MAV", task, instance, instance_id, backend, cfg, state)
    names = _names(cfg.proposers)
    outs = [s.propose("proposer", a, i, 0, _SOLVE) for i, a in enumerate(names)]
    approvals = [0] * len(outs)
    for q_i, q in enumerate(cfg.validators):
        for j, o in enumerate(outs):
            text = s.ask("validator", f"validator-{q}", q_i, 1,
                         f"Judge the candidate solution on {q} only. Reply with JSON "
                         '{"approve": true} or {"approve": false}.',
                         {"proposals": _shown([(names[j], o.text)]), "question": q}, sample=j)
            approvals[j] += parse_verdict(text) is True
    props = [o.proposal for o in outs]
    best = _select_most(props, approvals, s.rng)
    return s.done([(a, p, p) for a, p in zip(names, props)], None if best is None else props[best], "validators")


def _debate(s: _Session, cfg: MethodConfig) -> tuple[list[str], list[Proposal], list[_Out]]:
    """Int./Agg. Debate's proposal and interaction rounds: (names, initial, final outputs)."""
    names = _names(cfg.proposers)
    cur = [s.propose("proposer", a, i, 0, _SOLVE) for i, a in enumerate(names)]
    initial = [o.proposal for o in cur]
    for r in range(1, cfg.rounds + 1):
        cur = [s.propose("proposer", a, i, r, _REVISE,
                         {"own": cur[i].text,
                          "proposals": _shown([(names[j], cur[j].text) for j in range(len(names)) if j != i])})
               for i, a in enumerate(names)]
    return names, initial, cur


def run_int_debate(task, instance, instance_id, backend, config=None, state=None) -> Trajectory:
    """Int. Debate: proposals, ``rounds`` rounds of seeing peers' current proposals and keeping or
    revising, then majority vote over final proposals."""
    cfg = config or MethodConfig()
    s = _Session("Int. Debate", task, instance, instance_id, backend, cfg, state)
    names, initial, finals = _debate(s, cfg)
    fin = [o.proposal for o in finals]
    return s.done(list(zip(names, initial, fin)), s.vote(fin), "vote")


def run_agg_debate(task, instance, instance_id, backend, config=None, state=None) -> Trajectory:
    """Agg. Debate: Int. Debate's rounds, then an aggregator reproduces the strongest final proposal."""
    cfg = config or MethodConfig()
    s = _Session("Agg. Debate", task, instance, instance_id, backend, cfg, state)
    names, initial, finals = _debate(s, cfg)
    ans = s.propose("aggregator", "aggregator", 0, cfg.rounds + 1,
                    "Select the strongest of the final proposals and reproduce it exactly, without any change, "
                    "in the required format.", {"proposals": _shown([(a, o.text) for a, o in zip(names, finals)])})
    return s.done(list(zip(names, initial, [o.proposal for o in finals])), ans.proposal, "aggregator")


def run_adv_debate(task, instance, instance_id, backend, config=None, state=None) -> Trajectory:
    """Adv. Debate: the affirmative proposes, the negative challenges it with a distinct alternative,
    ``rebuttals`` rebuttal rounds, then a judge gives the answer. Both sides are proposers. A debate
    takes turns (appendix: "The negative agent is initially required to challenge the affirmative
    proposal ... After two rebuttal rounds"): in each round the affirmative rebuts the negative's
    last position, then the negative rebuts the affirmative's rebuttal of that same round."""
    cfg = config or MethodConfig()
    s = _Session("Adv. Debate", task, instance, instance_id, backend, cfg, state)
    aff = s.propose("affirmative", "affirmative", 0, 0, "Propose and defend a solution in the required format.")
    neg = s.propose("negative", "negative", 1, 0,
                    "Challenge the affirmative solution: point out its flaws and give a distinct alternative "
                    "solution in the required format.", {"proposals": _shown([("affirmative", aff.text)])})
    a0, n0 = aff.proposal, neg.proposal
    for r in range(1, cfg.rebuttals + 1):  # turns alternate: each side answers the other's latest word
        aff = s.propose("affirmative", "affirmative", 0, r,
                        "Rebut the negative side and state your (possibly revised) solution in the required "
                        "format.", {"own": aff.text, "proposals": _shown([("negative", neg.text)])})
        neg = s.propose("negative", "negative", 1, r,
                        "Rebut the affirmative side and state your (possibly revised) alternative in the "
                        "required format.", {"own": neg.text, "proposals": _shown([("affirmative", aff.text)])})
    ans = s.propose("judge", "judge", 0, cfg.rebuttals + 1,
                    "Evaluate both final positions and give the correct solution in the required format.",
                    {"proposals": _shown([("affirmative", aff.text), ("negative", neg.text)])})
    return s.done([("affirmative", a0, aff.proposal), ("negative", n0, neg.proposal)], ans.proposal, "judge")


def run_reflection(task, instance, instance_id, backend, config=None, state=None) -> Trajectory:
    """Reflection: a reasoner answers; a reflector approves or gives feedback; at most ``reflections``
    reflection-revision cycles, stopping early on approval. FPA is undefined (one proposer)."""
    cfg = config or MethodConfig()
    s = _Session("Reflection", task, instance, instance_id, backend, cfg, state)
    cur = s.propose("proposer", "reasoner", 0, 0, _SOLVE)
    first = cur.proposal
    for c in range(1, cfg.reflections + 1):
        fb = s.ask("reflector", "reflector", 0, c,
                   'Check the response. Reply with JSON {"approve": true} if it is right, otherwise '
                   '{"approve": false, "feedback": "..."}.', {"own": cur.text})
        if parse_verdict(fb) is True:
            break
        cur = s.propose("proposer", "reasoner", 0, c,
                        "Revise your response using the reflector's feedback. Reply in the required format.",
                        {"own": cur.text, "feedback": _shown([("reflector", fb)])})
    return s.done([("reasoner", first, cur.proposal)], cur.proposal, "reasoner")


def run_mapr(task, instance, instance_id, backend, config=None, state=None) -> Trajectory:
    """MAPR: solutions; each agent reviews each peer's solution; each revises given its reviews; vote."""
    cfg = config or MethodConfig()
    s = _Session("MAPR", task, instance, instance_id, backend, cfg, state)
    names = _names(cfg.proposers)
    cur = [s.propose("proposer", a, i, 0, _SOLVE) for i, a in enumerate(names)]
    initial = [o.proposal for o in cur]
    for r in range(1, cfg.rounds + 1):
        reviews: dict[int, list[tuple[str, str]]] = {j: [] for j in range(len(names))}
        for i, a in enumerate(names):
            for j in range(len(names)):
                if j != i:
                    text = s.ask("reviewer", a, i, r, "Review this peer's solution: point out errors and "
                                 "possible improvements.", {"proposals": _shown([(names[j], cur[j].text)])}, sample=j)
                    reviews[j].append((a, text))
        cur = [s.propose("proposer", a, i, r, "Update your solution using the peer reviews of it. Reply in the "
                         "required format.", {"own": cur[i].text, "feedback": _shown(reviews[i])})
               for i, a in enumerate(names)]
    fin = [o.proposal for o in cur]
    return s.done(list(zip(names, initial, fin)), s.vote(fin), "vote")


def run_agentverse(task, instance, instance_id, backend, config=None, state=None) -> Trajectory:
    """AgentVerse: each round a recruiter assigns expert roles; the solver proposes (round 0) or
    integrates the critics' reviews; an evaluator scores the revision; stop at >= ``threshold``/10 or
    after ``refine_rounds`` refinement rounds. FPA is undefined (one proposer).

    The evaluator's verdict goes back to the recruiter: from round 2 on, the recruiter sees the
    current solution and the last verdict (its score and what it says is missing) when it assigns
    the next round's experts (AgentVerse, Chen et al. 2024, §2: "the feedback from the evaluation
    stage" adjusts the group in the next iteration's expert recruitment; appendix: "Expert roles
    are dynamically assigned rather than fixed across rounds")."""
    cfg = config or MethodConfig()
    s = _Session("AgentVerse", task, instance, instance_id, backend, cfg, state)

    def recruit(r: int, verdict: str | None, solution: str) -> str:
        ask = (f"Describe expert roles for one solver and {cfg.critics} critics suited to this task, one line each.")
        if verdict is None:
            return s.ask("recruiter", "recruiter", 0, r, ask)
        return s.ask("recruiter", "recruiter", 0, r, ask + " The evaluator's feedback on the current solution is "
                     "below: recruit the experts it calls for.",
                     {"own": solution, "feedback": [{"agent": "evaluator", "text": verdict}]})

    experts = recruit(0, None, "")
    cur = s.propose("proposer", "solver", 0, 0, _SOLVE, {"experts": experts})
    first = cur.proposal
    verdict: str | None = None
    for r in range(1, cfg.refine_rounds + 1):
        experts = recruit(r, verdict, cur.text)
        crit = [(f"critic{k}", s.ask("critic", f"critic{k}", k, r, "Review the current solution: identify errors "
                                      "or possible improvements.", {"own": cur.text, "experts": experts}))
                for k in range(cfg.critics)]
        cur = s.propose("proposer", "solver", 0, r, "Integrate the critics' feedback that identifies errors or "
                        "improvements. Reply in the required format.",
                        {"own": cur.text, "feedback": _shown(crit), "experts": experts})
        verdict = s.ask("evaluator", "evaluator", 0, r, 'Score the solution from 0 to 10 and say what it still '
                        'lacks. Reply with JSON {"score": x, "advice": "..."}.', {"own": cur.text})
        if parse_rating(verdict) >= cfg.threshold:
            break
    return s.done([("solver", first, cur.proposal)], cur.proposal, "solver")


def _clears(method: str, cce: bool, task, instance, instance_id, backend, config, state) -> Trajectory:
    cfg = config or MethodConfig()
    s = _Session(method, task, instance, instance_id, backend, cfg, state)
    names = _names(cfg.proposers)
    outs = [s.propose("proposer", a, i, 0, _SOLVE) for i, a in enumerate(names)]
    claims: list[dict[str, str]] = []
    for i, a in enumerate(names):
        text = s.ask("claimer", a, i, 1, f"Decompose your proposal into {cfg.min_claims}-{cfg.max_claims} "
                     'verifiable claims. Reply with JSON {"claims": ["...", ...]}.',
                     {"own": outs[i].text, "n": cfg.max_claims})
        claims += [{"id": f"{a}-c{k}", "agent": a, "text": c}
                   for k, c in enumerate(parse_claims(text)[: cfg.max_claims])]
    if cce:
        endorse = {c["id"]: 0 for c in claims}
        challenge = dict(endorse)
        for i, a in enumerate(names):
            for j, b in enumerate(names):
                shown = [c for c in claims if c["agent"] == b]
                if j == i or not shown:
                    continue
                text = s.ask("reviewer", a, i, 2, "Evaluate each claim of this peer. Reply with JSON "
                             '{"endorse": [claim ids], "challenge": [claim ids]}.', {"claims": shown}, sample=j)
                e, ch = parse_claim_votes(text, [c["id"] for c in shown])
                for cid in e:
                    endorse[cid] += 1
                for cid in ch:
                    challenge[cid] += 1
        top_e, top_c = max(endorse.values(), default=0), max(challenge.values(), default=0)
        given = [{**c, "stance": "preserve"} for c in claims if top_e > 0 and endorse[c["id"]] == top_e]
        given += [{**c, "stance": "avoid"} for c in claims if top_c > 0 and challenge[c["id"]] == top_c]
        instruction = ("Write the final solution: preserve or combine the claims marked preserve and avoid the "
                       "content of the claims marked avoid. Reply in the required format.")
        rnd = 3
    else:
        given, rnd = claims, 2
        instruction = "Write the final solution from these claims. Reply in the required format."
    ans = s.propose("synthesizer", "synthesizer", 0, rnd, instruction, {"claims": given})
    return s.done([(a, o.proposal, o.proposal) for a, o in zip(names, outs)], ans.proposal, "synthesizer")


def run_clears(task, instance, instance_id, backend, config=None, state=None) -> Trajectory:
    """CLEARS (§4): proposals, 2-4 claims each, cross-agent endorse/challenge, synthesis from the
    top-endorsed (preserve) and top-challenged (avoid) claims, ties kept. Proposers do not revise."""
    return _clears("CLEARS", True, task, instance, instance_id, backend, config, state)


def run_clears_no_cce(task, instance, instance_id, backend, config=None, state=None) -> Trajectory:
    """CLEARS w/o CCE: as CLEARS but every claim goes to the synthesiser, no cross-agent evaluation."""
    return _clears("CLEARS w/o CCE", False, task, instance, instance_id, backend, config, state)


def run_mas_gpt(task, instance, instance_id, backend, config=None, state=None,
                limits: SandboxLimits | None = None) -> Trajectory:
    """MAS-GPT, prompted (appendix "Adaptive MAS construction"; :mod:`.mas_gpt`): the programmer
    writes a program, run in a sandbox within ``limits`` with every ``call_llm`` a recorded call;
    on failure three candidates and an aggregator. FPA is undefined (Table 9)."""
    s = _Session("MAS-GPT", task, instance, instance_id, backend, config or MethodConfig(), state)
    return run_session(s, limits)


#: method name (as in Tables 2 and 9) -> run function
METHODS: dict[str, Callable[..., Trajectory]] = {
    "Single-Agent": run_single_agent,
    "Consistency": run_consistency,
    "MAV": run_mav,
    "Int. Debate": run_int_debate,
    "Agg. Debate": run_agg_debate,
    "Adv. Debate": run_adv_debate,
    "Reflection": run_reflection,
    "MAPR": run_mapr,
    "AgentVerse": run_agentverse,
    "MAS-GPT": run_mas_gpt,
    "CLEARS": run_clears,
    "CLEARS w/o CCE": run_clears_no_cce,
}


def run(method: str, task, instance, instance_id: str, backend: Backend, config: MethodConfig | None = None,
        state: int | None = None) -> Trajectory:
    """Run ``method`` by name; ValueError naming the allowed methods."""
    if method not in METHODS:
        extra = f" ({method} is not built yet)" if method in NOT_BUILT else ""
        raise ValueError(f"method: {method!r} is not allowed{extra}; allowed: {', '.join(METHODS)}")
    return METHODS[method](task, instance, instance_id, backend, config, state)
