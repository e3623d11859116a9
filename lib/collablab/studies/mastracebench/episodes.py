"""Game episodes of MASTraceBench's dynamic tasks (mastracebench.txt §3.1-3.3, §4.1, appendix
"Gomoku", "Negotiation", "TacticDuel"): a MAS method against a fixed Single-Agent opponent.

"For competitive tasks, each method plays a fixed Single-Agent baseline": the evaluated method
(any name of :data:`~.methods.METHODS`) controls one player; the other is
``methods.run("Single-Agent", ...)`` on the **same backend**. At every decision state of the
method's player the method runs once on that state (``state`` = the method's decision number
0, 1, 2, ..., ``instance`` = the episode id) and its final answer is played.
:func:`play_episode` returns ``(method trajectories, EpisodeResult, opponent trajectories)``;
the opponent's trajectories (instance ``"<episode id>:opponent"``, so their logical call ids
never collide with the method's) are returned apart and are never part of the method's TC.

Decisions (ours; tested in tests/test_mastracebench_episodes.py):

- **Fallbacks.** An invalid answer is recorded invalid (score 0) and the task module's
  documented fallback is played: Gomoku and TacticDuel a seeded random legal move/action
  (``random.Random("gomoku-fallback-<seed>")`` / ``"tactic-duel-fallback-<seed>"``, as
  ``play_gomoku``/``play_duel``), Negotiation no offer (the round passes as a rejection).
  The same applies to the opponent.
- **Decision cap** :data:`MAX_DECISIONS` (``max_decisions`` overrides): Gomoku 60 method moves,
  then the game ends *not won* (R = 0, eq 15); TacticDuel the duel's own round limit (a smaller
  cap ends the duel there under the limit rule: higher HP wins, equal HP draws); Negotiation
  10 (the round limit; a cap reached before agreement is no agreement, R = 0).
- **S* = 0** (Gomoku openings: no move can form or block a run of three, so every legal move
  scores 0) is recorded as it is: every proposal of such a unit is optimal (GAB OptKeep).
- **TacticDuel** is simultaneous: both sides decide on the same pre-round state (scored
  provisionally with 0 against S* 100, never returned); once both actions are realized every
  proposal of each side's trajectory (initial, final, answer) is re-scored by eq 22 against the
  realized opponent action (:func:`rescore_duel`, canonical forms kept), and S* becomes the best
  legal action's score against it.
- **Negotiation: the pair of games.** "Each scenario is evaluated twice with the player roles
  and first proposer exchanged to reduce first-mover and role bias" (appendix); "reversing
  which side makes the first offer" (§4.1). The sides exchange both: game 2k the MAS is
  player 0 (value profile 0) and opens, game 2k+1 the MAS is player 1 and the opponent opens
  (:func:`~.tasks.negotiation.negotiation_configs`), so the MAS plays each profile once and
  opens once. Episode ids name both: ``negotiation-<scenario>-p<MAS player>-f<first proposer>``.
- **Negotiation: accept/reject is a run.** "One player proposes a complete allocation and the
  other player decides whether to accept or reject it" (appendix): the responder runs its
  whole protocol on a :class:`~.tasks.negotiation.ResponseDecision` (task
  :data:`~.tasks.negotiation.RESPONSE_TASK`, prompt ``render_prompt(state, responder, offer)``,
  answer read by ``parse_response``; an invalid answer is a rejection). When the MAS responds
  that is a run of the evaluated method (instance = the episode id, ``state`` = its response
  number 0, 1, ...), e.g. Self-Consistency's majority over three accept/reject samples; when
  the opponent responds, a Single-Agent run (instance ``"<episode id>:opponent"``) at the MAS
  temperature: its calls are MAS roles (``"proposer"``...), not ``"opponent"``, so an LLM
  backend samples them at ``temperature`` (1.0), not the probe's 0.
- **Negotiation: eq 17's probe stays.** Each proposal is still scored with "we retain the
  original negotiation history, replace the outward MAS proposal with a_t, and query the
  opponent with temperature 0": an ``"opponent"`` request with context ``{"offer": <JSON split
  from the proposer's view>}``, prompt ``render_prompt(state, responder, offer)``, read by
  ``parse_response`` (unreadable -> reject), memoised per state and allocation, so the
  answer's score, every proposal's score and S* (which probes every allocation) agree. These
  calls are recorded in the *proposer's* unit as kind ``"acceptance_probe"`` (excluded from
  TC). The probe scores; the responder's run decides the game: the two may differ (a sampled
  run is not the temperature-0 answer).
- **Negotiation: what is a unit, what TC counts.** Only proposals are units (Table 1 scores
  "the proposed allocation"; §3.3: TC = E over the units D, the same D as GAB/AR/AL, of
  C_MAS(x), "all agent calls in the MAS from receiving the input context to producing the
  corresponding MAS answer"). An accept/reject decision has no proposal score, so it is not in
  D and its calls are in no unit's C_MAS(x): they are not in TC (metrics.token_cost). They are
  not hidden: ``play_negotiation_episode(..., responses=[])`` returns the method's response runs,
  and the spec's episode record counts them (``responses``, ``response_tokens``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from typing import Any

from .methods import MethodConfig, TaskSpec, run
from .roles import Backend, Request
from .tasks import gomoku as G
from .tasks import negotiation as N
from .tasks import tactic_duel as T
from .tasks.base import Invalid, is_invalid
from .trajectory import (
    Answer,
    Call,
    EpisodeResult,
    Proposal,
    ProposerTrace,
    Trajectory,
    make_call_id,
)

__all__ = [
    "DYNAMIC_TASKS",
    "MAX_DECISIONS",
    "OPPONENT",
    "OPPONENT_SUFFIX",
    "RESPONSE_SPEC",
    "episode_configs",
    "episode_id",
    "play_duel_episode",
    "play_episode",
    "play_gomoku_episode",
    "play_negotiation_episode",
    "rescore_duel",
]

#: what the opponent's trajectories add to the episode id (their instance ids)
OPPONENT_SUFFIX = ":opponent"
#: the fixed opponent method of every competitive task (§4.1)
OPPONENT = "Single-Agent"
DYNAMIC_TASKS: tuple[str, ...] = ("gomoku", "tactic_duel", "negotiation")
#: default cap on the method's decisions per episode (module docstring)
MAX_DECISIONS: dict[str, int] = {"gomoku": 60, "tactic_duel": T.MAX_ROUNDS, "negotiation": N.MAX_ROUNDS}

Episode = tuple[list[Trajectory], EpisodeResult, list[Trajectory]]


@dataclass(frozen=True)
class _PreRoundDuel:
    """TacticDuel before the round resolves: parsed as the task does, scored 0 of S* 100 until
    :func:`rescore_duel` knows the realized opponent action."""

    name: str = "tactic_duel"

    def score(self, proposal: Any, instance: T.DuelDecision) -> float:
        return 0.0

    def max_score(self, instance: T.DuelDecision) -> float:
        return 100.0

    def canonical(self, proposal: Any) -> Hashable:
        return proposal

    def parse(self, text: str, instance: T.DuelDecision) -> Any:
        return T.parse_action(text, instance)


def _configs(method_config: MethodConfig | None) -> tuple[MethodConfig, MethodConfig]:
    cfg = method_config or MethodConfig()
    if not isinstance(cfg, MethodConfig):
        raise TypeError(f"method_config: a MethodConfig, got {type(cfg).__name__}")
    return cfg, MethodConfig(seed=cfg.seed, run=cfg.run)


def _cap(task_name: str, max_decisions: int | None) -> int:
    cap = MAX_DECISIONS[task_name] if max_decisions is None else max_decisions
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
        raise ValueError(f"max_decisions: a positive integer, got {max_decisions!r}")
    return cap


def _opponent_id(episode: str) -> str:
    return f"{episode}{OPPONENT_SUFFIX}"


# ------------------------------------------------------------------ Gomoku

def play_gomoku_episode(method: str, game: G.GomokuGame, backend: Backend, episode: str,
                        method_config: MethodConfig | None = None, max_decisions: int | None = None) -> Episode:
    """One Gomoku game (eq 15): the method plays ``game.mas_color``, Single-Agent the other colour."""
    cfg, ocfg = _configs(method_config)
    cap = _cap("gomoku", max_decisions)
    spec = TaskSpec(G.GomokuTask(), G.render_prompt)
    rng = random.Random(f"gomoku-fallback-{game.seed}")
    state = G.new_game(game.size)
    mine: list[Trajectory] = []
    theirs: list[Trajectory] = []
    while not G.is_over(state):
        ours = state.to_move == game.mas_color
        if ours and len(mine) >= cap:
            break  # the cap: the game ends not won
        if ours:
            t = run(method, spec, state, episode, backend, cfg, state=len(mine))
            mine.append(t)
        else:
            t = run(OPPONENT, spec, state, _opponent_id(episode), backend, ocfg, state=len(theirs))
            theirs.append(t)
        a = t.answer
        move = (int(a.canonical[0]), int(a.canonical[1])) if a.valid else None
        if move is None or not G.is_legal(state, move):
            move = rng.choice(G.legal_moves(state))
        state = G.place(state, move)
    score = 100.0 * G.episode_score(state, game.mas_color)
    return mine, EpisodeResult(method, "gomoku", episode, score, cfg.run), theirs


# ------------------------------------------------------------------ TacticDuel

def _rescored(p: Proposal, task: T.TacticDuelTask, decision: T.DuelDecision) -> Proposal:
    return Proposal(p.canonical, task.score(p.canonical, decision), True) if p.valid else p


def rescore_duel(t: Trajectory, decision: T.DuelDecision) -> Trajectory:
    """``t`` with every proposal (initial, final, answer) scored by eq 22 against
    ``decision.opponent_action`` and S* the best legal action's score; canonical forms kept."""
    task = T.TacticDuelTask()
    traces = tuple(ProposerTrace(p.agent, _rescored(p.initial, task, decision), _rescored(p.final, task, decision))
                   for p in t.proposers)
    a = t.answer
    score = task.score(a.canonical, decision) if a.valid else 0.0
    return replace(t, s_star=float(task.max_score(decision)), proposers=traces,
                   answer=Answer(a.canonical, score, a.valid, a.source))


def play_duel_episode(method: str, duel: T.DuelConfig, backend: Backend, episode: str,
                      method_config: MethodConfig | None = None, max_decisions: int | None = None) -> Episode:
    """One duel (eq 19): the method plays ``duel.mas_player``; both sides decide on the same
    pre-round state, then both trajectories are re-scored against the realized actions."""
    cfg, ocfg = _configs(method_config)
    cap = _cap("tactic_duel", max_decisions)
    spec = TaskSpec(_PreRoundDuel(), lambda d: T.render_prompt(d.state, d.player))
    rng = random.Random(f"tactic-duel-fallback-{duel.seed}")
    me = duel.mas_player
    state = T.new_duel(duel.hp, duel.max_rounds)
    mine: list[Trajectory] = []
    theirs: list[Trajectory] = []
    while not T.is_over(state):
        if len(mine) >= cap:
            state = replace(state, max_rounds=state.round)  # the cap: the limit rule decides
            break
        k = len(mine)
        side = {me: run(method, spec, T.DuelDecision(state, me), episode, backend, cfg, state=k),
                1 - me: run(OPPONENT, spec, T.DuelDecision(state, 1 - me), _opponent_id(episode), backend, ocfg,
                            state=k)}
        acts: list[str] = []
        for p in (0, 1):  # fallbacks drawn in player order, as play_duel does
            a = side[p].answer
            ok = a.valid and a.canonical in T.legal_actions(state, p)
            acts.append(str(a.canonical) if ok else rng.choice(T.legal_actions(state, p)))
        mine.append(rescore_duel(side[me], T.DuelDecision(state, me, acts[1 - me])))
        theirs.append(rescore_duel(side[1 - me], T.DuelDecision(state, 1 - me, acts[me])))
        state = T.resolve(state, acts[0], acts[1])
    score = 100.0 * T.episode_score(state, me)
    return mine, EpisodeResult(method, "tactic_duel", episode, score, cfg.run), theirs


# ------------------------------------------------------------------ Negotiation

@dataclass
class _Acceptor:
    """A_{-i} of eq 17 for one state: the responder's answers on the backend, memoised, each
    recorded as an ``"acceptance_probe"`` call of the proposer's unit."""

    backend: Backend
    method: str
    instance: str
    index: int
    answers: dict[Any, bool] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)

    def __call__(self, allocation: N.Allocation, state: N.NegotiationState) -> bool:
        if allocation.counts in self.answers:
            return self.answers[allocation.counts]
        k, j, text = len(self.calls), N.responder(state), N.render_allocation(allocation, state)
        cid = make_call_id(self.method, "negotiation", self.instance, self.index, "opponent", 0, "acceptor", k)
        req = Request(role="opponent", task="negotiation", instance=state, agent=j, round=0, sample=k,
                      prompt=N.render_prompt(state, j, allocation), context={"offer": text}, call_id=cid)
        reply = self.backend.answer(req)
        ok = N.parse_response(reply.text) is True
        self.calls.append(Call(cid, "opponent", 0, "acceptor", int(reply.input_tokens), int(reply.output_tokens),
                               k, "acceptance_probe"))
        self.answers[allocation.counts] = ok
        return ok


#: the responder's task: accept/reject an offer (module docstring)
RESPONSE_SPEC = TaskSpec(N.NegotiationResponseTask(), N.render_response_prompt)


def play_negotiation_episode(method: str, config: N.NegotiationConfig, backend: Backend, episode: str,
                             method_config: MethodConfig | None = None, max_decisions: int | None = None,
                             responses: list[Trajectory] | None = None) -> Episode:
    """One negotiation (eq 18): the method plays ``config.mas_player``. Each proposal is a unit
    scored by eq 17 with the temperature-0 acceptance probe; each offer is accepted or rejected
    by a run of the responder (the method, or Single-Agent for the opponent) on
    :data:`RESPONSE_SPEC`. The method's response runs (not units) are appended to
    ``responses`` when a list is given (module docstring)."""
    cfg, ocfg = _configs(method_config)
    cap = _cap("negotiation", max_decisions)
    me = config.mas_player
    state = N.new_negotiation(config)
    sides = {me: (method, episode, cfg), 1 - me: (OPPONENT, _opponent_id(episode), ocfg)}
    units: dict[int, list[Trajectory]] = {me: [], 1 - me: []}
    answers: dict[int, list[Trajectory]] = {me: [], 1 - me: []}
    while not N.is_over(state):
        i = N.proposer(state)
        if i == me and len(units[me]) >= cap:
            break  # the cap: no agreement
        name, inst, cfg_i = sides[i]
        out = units[i]
        acceptor = _Acceptor(backend, name, inst, len(out))
        spec = TaskSpec(N.NegotiationTask(accepts=acceptor),
                        lambda s, p=i: N.render_prompt(s, p))
        t = run(name, spec, state, inst, backend, cfg_i, state=len(out))
        out.append(replace(t, calls=t.calls + tuple(acceptor.calls)))
        a = t.answer
        accepted = False
        offer: N.Allocation | Invalid = Invalid("invalid answer: no offer")
        if a.valid:
            offer = N.Allocation(tuple(tuple(int(v) for v in side) for side in a.canonical))
            j_name, j_inst, j_cfg = sides[1 - i]
            r = run(j_name, RESPONSE_SPEC, N.ResponseDecision(state, offer), j_inst, backend, j_cfg,
                    state=len(answers[1 - i]))
            answers[1 - i].append(r)
            accepted = r.answer.valid and r.answer.canonical is True
        state = N.advance(state, offer, accepted)
    if responses is not None:
        responses.extend(answers[me])
    score = 100.0 * N.episode_score(state, me)
    return units[me], EpisodeResult(method, "negotiation", episode, score, cfg.run), units[1 - me]


# ------------------------------------------------------------------ by name

_PLAYERS: dict[str, Callable[..., Episode]] = {"gomoku": play_gomoku_episode, "tactic_duel": play_duel_episode,
                                                "negotiation": play_negotiation_episode}


def play_episode(task_name: str, method: str, config: Any, backend: Backend, episode_id: str,
                 method_config: MethodConfig | None = None, max_decisions: int | None = None,
                 responses: list[Trajectory] | None = None) -> Episode:
    """Play one episode of ``task_name`` (``config``: a ``GomokuGame``, ``DuelConfig`` or
    ``NegotiationConfig``); returns (method trajectories, EpisodeResult, opponent trajectories).
    ``responses`` (Negotiation only; else left empty) receives the method's accept/reject runs."""
    if task_name not in _PLAYERS:
        raise ValueError(f"task_name: {task_name!r} is not a dynamic task; allowed: {', '.join(DYNAMIC_TASKS)}")
    if task_name == "negotiation":
        return play_negotiation_episode(method, config, backend, episode_id, method_config, max_decisions, responses)
    return _PLAYERS[task_name](method, config, backend, episode_id, method_config, max_decisions)


def episode_configs(task_name: str, n: int | None = None, seed: int = 0) -> tuple[Any, ...]:
    """The paper's episodes: 50 Gomoku games (25 black, 25 white), 50 duels, 100 Negotiation
    scenarios played twice with the sides' player roles and first proposer exchanged (200 games);
    ``n`` overrides the count (scenarios for Negotiation)."""
    if task_name == "gomoku":
        return G.gomoku_games(50 if n is None else n, seed)
    if task_name == "tactic_duel":
        return T.duels(50 if n is None else n, seed)
    if task_name == "negotiation":
        return N.negotiation_configs(100 if n is None else n, seed)
    raise ValueError(f"task_name: {task_name!r} is not a dynamic task; allowed: {', '.join(DYNAMIC_TASKS)}")


def episode_id(task_name: str, config: Any) -> str:
    """A stable episode id: ``gomoku-<i>``, ``tactic_duel-<i>``,
    ``negotiation-<scenario>-p<MAS player>-f<first proposer>`` (a scenario's two games differ in
    the MAS's player, so the id names it)."""
    if isinstance(config, N.NegotiationConfig):
        return f"{task_name}-{config.scenario}-p{config.mas_player}-f{config.first_proposer}"
    return f"{task_name}-{config.index}"
