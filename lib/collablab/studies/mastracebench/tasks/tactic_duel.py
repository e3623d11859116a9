"""TacticDuel (mastracebench.txt appendix "TacticDuel", Table 8, eqs 19-22): rules and scores.

A deterministic, symmetric, simultaneous-move duel. Each player starts with 20 HP and 0
energy (no cap). Each round both pick one of seven actions (:data:`RULES`, Table 8); Burst
needs at least 2 energy; nobody may repeat its own previous round's action. The duel ends when
a player's HP is 0 or below or after ``max_rounds`` rounds; then higher HP wins, equal HP draws.

Decisions the paper leaves open (documented here, tested in tests/test_mastracebench_games.py):

- ``max_rounds`` (R_max) is not fixed by the paper; :data:`MAX_ROUNDS` = 20.
- Both players at HP <= 0 after the same round: the higher remaining HP wins, equal HP draws
  (the limit rule applied at every termination).
- The proposal-value range of eq 22 is computed from Table 8 over all action pairs
  (:data:`VALUE_RANGE`); it is (-5, 6) as the paper says. It is mapped linearly to 0-100
  (the paper's [0, 5] scale times 20). An invalid or illegal proposal scores 0.
- An invalid reply in :func:`play_duel` is replaced by a seeded random legal action and recorded.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from .base import Invalid, flat_json_objects, is_invalid

__all__ = [
    "ACTIONS",
    "HP",
    "MAX_ROUNDS",
    "RULES",
    "VALUE_RANGE",
    "ActionRule",
    "DuelConfig",
    "DuelDecision",
    "DuelRound",
    "DuelState",
    "TacticDuelTask",
    "charge_bonus",
    "damage",
    "duels",
    "episode_score",
    "is_over",
    "legal_actions",
    "net_payoff",
    "new_duel",
    "parse_action",
    "play_duel",
    "proposal_value",
    "render_prompt",
    "resolve",
    "rule_action",
    "scaled_value",
    "winner",
]

HP = 20
MAX_ROUNDS = 20


@dataclass(frozen=True)
class ActionRule:
    """One row of Table 8.

    ``damage`` is the base damage; ``versus`` overrides it against named opponent actions;
    ``guard`` is the reduction this action applies to incoming damage; ``pierces_guard`` marks
    damage that ignores that reduction; ``cost``/``gain`` change the actor's energy.
    """

    name: str
    damage: int
    cost: int = 0
    gain: int = 0
    guard: int = 0
    pierces_guard: bool = False
    versus: tuple[tuple[str, int], ...] = ()


#: Table 8, one entry per action, in the paper's order.
RULES: dict[str, ActionRule] = {r.name: r for r in (
    ActionRule("Quick", damage=2),
    ActionRule("Heavy", damage=4, versus=(("Counter", 0),)),
    ActionRule("Guard", damage=0, guard=4),
    ActionRule("Counter", damage=1, versus=(("Heavy", 4),)),
    ActionRule("Feint", damage=1, pierces_guard=True, versus=(("Guard", 4),)),
    ActionRule("Charge", damage=0, gain=2),
    ActionRule("Burst", damage=6, cost=2),
)}
ACTIONS: tuple[str, ...] = tuple(RULES)


def damage(a: str, b: str) -> int:
    """d(a, b) of eq 20: damage action ``a`` deals against action ``b`` under Table 8."""
    ra, rb = RULES[a], RULES[b]
    raw = dict(ra.versus).get(b, ra.damage)
    return raw if ra.pierces_guard else max(0, raw - rb.guard)


def net_payoff(a: str, b: str) -> int:
    """Delta(a, b) = d(a, b) - d(b, a), eq 20."""
    return damage(a, b) - damage(b, a)


def charge_bonus(a: str) -> int:
    """B(a) of eq 21: 1 for Charge, else 0."""
    return 1 if a == "Charge" else 0


def proposal_value(a: str, b: str) -> int:
    """S(a, b) = Delta(a, b) + B(a), eq 22, before scaling."""
    return net_payoff(a, b) + charge_bonus(a)


#: (min, max) of eq 22 over every pair of Table 8 actions; the paper states (-5, 6).
VALUE_RANGE: tuple[int, int] = (min(proposal_value(a, b) for a in ACTIONS for b in ACTIONS),
                                max(proposal_value(a, b) for a in ACTIONS for b in ACTIONS))


def scaled_value(a: str, b: str) -> float:
    """Eq 22 mapped linearly from :data:`VALUE_RANGE` to 0-100 (paper: to [0, 5], times 20)."""
    lo, hi = VALUE_RANGE
    return 100.0 * (proposal_value(a, b) - lo) / (hi - lo)


@dataclass(frozen=True)
class DuelRound:
    """One resolved round: both actions and the damage each player took."""

    actions: tuple[str, str]
    damage_taken: tuple[int, int]


@dataclass(frozen=True)
class DuelState:
    """Both players' HP, energy and previous action, the round count and the history."""

    hp: tuple[int, int] = (HP, HP)
    energy: tuple[int, int] = (0, 0)
    last: tuple[str | None, str | None] = (None, None)
    round: int = 0
    max_rounds: int = MAX_ROUNDS
    history: tuple[DuelRound, ...] = ()


def new_duel(hp: int = HP, max_rounds: int = MAX_ROUNDS) -> DuelState:
    """The opening state: ``hp`` each, zero energy, no previous action."""
    if hp <= 0 or max_rounds <= 0:
        raise ValueError(f"hp and max_rounds must be positive, got hp={hp}, max_rounds={max_rounds}")
    return DuelState(hp=(hp, hp), max_rounds=max_rounds)


def legal_actions(state: DuelState, player: int) -> tuple[str, ...]:
    """Actions ``player`` may choose: not its previous action, Burst only with energy >= 2."""
    return tuple(a for a in ACTIONS
                 if a != state.last[player] and state.energy[player] >= RULES[a].cost)


def is_over(state: DuelState) -> bool:
    """A player is at HP <= 0, or ``max_rounds`` rounds have been played."""
    return min(state.hp) <= 0 or state.round >= state.max_rounds


def resolve(state: DuelState, a0: str, a1: str) -> DuelState:
    """Apply one simultaneous round (Table 8); an illegal action raises ``ValueError``."""
    if is_over(state):
        raise ValueError("the duel is over")
    for p, a in ((0, a0), (1, a1)):
        if a not in legal_actions(state, p):
            raise ValueError(f"player {p}: {a!r} is not legal; legal: {legal_actions(state, p)}")
    taken = (damage(a1, a0), damage(a0, a1))
    energy = tuple(state.energy[p] - RULES[a].cost + RULES[a].gain for p, a in ((0, a0), (1, a1)))
    return replace(state, hp=(state.hp[0] - taken[0], state.hp[1] - taken[1]),
                   energy=(energy[0], energy[1]), last=(a0, a1), round=state.round + 1,
                   history=state.history + (DuelRound((a0, a1), taken),))


def winner(state: DuelState) -> int | None:
    """The player with higher HP at the end, ``None`` for a draw (equal HP)."""
    if not is_over(state):
        raise ValueError("the duel is not over")
    if state.hp[0] == state.hp[1]:
        return None
    return 0 if state.hp[0] > state.hp[1] else 1


def episode_score(state: DuelState, player: int) -> float:
    """R of eq 19: 1 for a win, 0.5 for a draw, 0 for a loss."""
    w = winner(state)
    return 0.5 if w is None else float(w == player)


@dataclass(frozen=True)
class DuelDecision:
    """A decision point: ``player`` acts in ``state``; ``opponent_action`` is the realized
    opponent action of that round (known once the round is resolved; eq 20 needs it)."""

    state: DuelState
    player: int
    opponent_action: str | None = None


_WORD = re.compile(r"\b(" + "|".join(ACTIONS) + r")\b", re.IGNORECASE)


def parse_action(text: str, decision: DuelDecision) -> str | Invalid:
    """An action from a reply: JSON ``{"action": ...}`` or the last action name in the text.

    Names are case-insensitive. An action that is not legal for ``decision.player`` (repeat,
    Burst without energy) is ``Invalid``.
    """
    name: str | None = None
    for obj in flat_json_objects(text):
        if isinstance(obj, dict) and isinstance(obj.get("action"), str):
            name = obj["action"].strip()
            break
    if name is None:
        found = _WORD.findall(text)
        if not found:
            return Invalid("no action named")
        name = found[-1]
    canon = {a.lower(): a for a in ACTIONS}.get(name.lower())
    if canon is None:
        return Invalid(f"unknown action {name!r}")
    legal = legal_actions(decision.state, decision.player)
    if canon not in legal:
        return Invalid(f"{canon} is not legal now; legal: {', '.join(legal)}")
    return canon


@dataclass(frozen=True)
class TacticDuelTask:
    """The TacticDuel task (Table 1): proposals are actions scored by eq 22 on 0-100."""

    name: str = "tactic_duel"

    def score(self, proposal: object, state: DuelDecision) -> float:
        """Eq 22 against the realized opponent action, 0-100; invalid or illegal -> 0."""
        if state.opponent_action is None:
            raise ValueError("DuelDecision.opponent_action is needed to score (eq 20)")
        if is_invalid(proposal) or proposal not in legal_actions(state.state, state.player):
            return 0.0
        return scaled_value(str(proposal), state.opponent_action)

    def max_score(self, state: DuelDecision) -> float:
        """S*: the best legal action's score against the realized opponent action."""
        return max(self.score(a, state) for a in legal_actions(state.state, state.player))

    def canonical(self, proposal: object) -> object:
        """The action name itself (parsed names are already canonical)."""
        return proposal

    def parse(self, text: str, state: DuelDecision) -> str | Invalid:
        """See :func:`parse_action`."""
        return parse_action(text, state)


def rule_action(state: DuelState, player: int, rng: random.Random) -> str:
    """Offline rule opponent: the legal action with the highest mean eq 22 value against the
    opponent's legal actions taken as equally likely; ties broken by ``rng``."""
    mine, theirs = legal_actions(state, player), legal_actions(state, 1 - player)
    value = {a: sum(proposal_value(a, b) for b in theirs) for a in mine}
    best = max(value.values())
    return rng.choice([a for a in mine if value[a] == best])


Policy = Callable[[DuelState, int], "str | Invalid"]


def play_duel(state: DuelState, policies: Mapping[int, Policy], seed: int = 0
              ) -> tuple[DuelState, list[dict[str, object]]]:
    """Play to the end. ``policies[p](state, p)`` returns an action or ``Invalid``; an invalid
    or illegal choice is replaced by a seeded random legal action and recorded as invalid."""
    rng = random.Random(f"tactic-duel-fallback-{seed}")
    log: list[dict[str, object]] = []
    while not is_over(state):
        chosen: list[str] = []
        for p in (0, 1):
            a = policies[p](state, p)
            ok = not is_invalid(a) and a in legal_actions(state, p)
            chosen.append(str(a) if ok else rng.choice(legal_actions(state, p)))
            log.append({"round": state.round + 1, "player": p, "action": chosen[-1],
                        "invalid": None if ok else getattr(a, "reason", f"illegal {a!r}")})
        state = resolve(state, chosen[0], chosen[1])
    return state, log


@dataclass(frozen=True)
class DuelConfig:
    """One duel of the 50 per method pair: its seed and the side the evaluated MAS plays."""

    index: int
    seed: int
    mas_player: int
    hp: int = HP
    max_rounds: int = MAX_ROUNDS


def duels(n: int = 50, seed: int = 0, max_rounds: int = MAX_ROUNDS) -> tuple[DuelConfig, ...]:
    """``n`` duel configurations (50 in the paper), sides alternating, seeds drawn from ``seed``."""
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    rng = random.Random(f"tactic-duel-{seed}")
    return tuple(DuelConfig(i, rng.randrange(2**31), i % 2, max_rounds=max_rounds) for i in range(n))


def render_prompt(state: DuelState, player: int) -> str:
    """The task prompt in the spirit of Fig. 16: state, action effects, legal actions, history."""
    me, op = player, 1 - player
    effects = (
        "- Quick: deals 2 damage.\n"
        "- Heavy: deals 4 damage, but 0 if the opponent plays Counter.\n"
        "- Guard: deals no damage; reduces incoming damage by 4 (not below 0), except Feint.\n"
        "- Counter: deals 1 damage, or 4 if the opponent plays Heavy.\n"
        "- Feint: deals 1 damage, or 4 against Guard, ignoring Guard's reduction.\n"
        "- Charge: deals no damage; you gain 2 energy.\n"
        "- Burst: costs 2 energy (needs at least 2); deals 6 damage, reducible by Guard."
    )
    hist = "\n".join(f"Round {i + 1}: you {r.actions[me]}, opponent {r.actions[op]}; "
                     f"you took {r.damage_taken[me]}, opponent took {r.damage_taken[op]}"
                     for i, r in enumerate(state.history)) or "(none yet)"
    return (
        "You are fighting a turn-based duel. Both players choose an action at the same time.\n"
        f"Round {state.round + 1} of at most {state.max_rounds}.\n"
        f"You: HP {state.hp[me]}, energy {state.energy[me]}, previous action {state.last[me]}.\n"
        f"Opponent: HP {state.hp[op]}, energy {state.energy[op]}, previous action {state.last[op]}.\n"
        f"Action effects:\n{effects}\n"
        "You may not repeat your previous action. The duel ends when a player's HP reaches 0 or "
        "at the round limit, where higher HP wins and equal HP is a draw.\n"
        f"History:\n{hist}\n"
        f"Legal actions now: {', '.join(legal_actions(state, me))}.\n"
        'Answer with JSON: {"action": "<one legal action>"}'
    )
