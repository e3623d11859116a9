"""Negotiation (mastracebench.txt appendix "Negotiation", eqs 17-18): rules, scores, parser.

Two players split a pool of items; each knows only its own private item values. In round t
(1..10) one player proposes a complete allocation and the other accepts or rejects; a rejection
swaps the roles. Agreement in round t pays player i ``delta**(t-1) * u_i(a) / u_i_max`` (eq 18,
delta = 0.95), no agreement pays 0. A proposal a_t of player i scores
``A_{-i}(a_t) * delta**(t-1) * u_i(a_t) / u_i_max`` (eq 17), where ``A_{-i}`` is the
opponent's accept decision, given here as a callable so that an LLM (temperature 0) or the
offline :class:`ReservationRule` can answer. Proposal scores are on 0-100; episode scores are the
paper's R in [0, 1] (TS is reported times 100).

Decisions the paper leaves open (tested in tests/test_mastracebench_games.py):

- Scenarios follow Deal-or-No-Deal (Lewis et al. 2017): items book, hat, ball; 1-4 of each,
  5-7 in all; each player's integer values total 10 over the pool; every item is worth
  something to someone, and the two profiles differ.
- **The pair of games of a scenario.** Appendix: "Each scenario is evaluated twice with the
  player roles and first proposer exchanged to reduce first-mover and role bias"; §4.1: "run
  each Negotiation configuration twice, reversing which side makes the first offer". Our
  reading: the *sides* (the evaluated MAS, its Single-Agent opponent) exchange both their
  player role (value profile) and who opens, so across the pair the MAS holds each profile
  once and opens once. Game 2k: the MAS is player 0 and opens (``mas_player=0,
  first_proposer=0``); game 2k+1: the MAS is player 1 and the opponent, now player 0, opens
  (``mas_player=1, first_proposer=0``). Two games cannot also let each profile open once;
  profile 0 opens both (:func:`negotiation_configs`).
- **The responder's decision is a task of its own** (:class:`NegotiationResponseTask` on a
  :class:`ResponseDecision`): "the other player decides whether to accept or reject it", so
  the responding side runs its whole protocol on the offer and its answer is accept/reject.
  Table 1 scores only "the proposed allocation", so the paper gives a decision no score: a
  readable decision scores 100, an unreadable one 0 (v(y), eq 23), S* = 100; an unreadable
  decision is played as a rejection.
- An invalid proposal is no offer: the round passes as a rejection.
- Parsing: an item named without a number means all of its units; "a"/"an"/"one".."seven"
  count; units not named for one side go to the other; an item named on neither side, or
  counts that exceed the pool or do not add up to it, make the proposal ``Invalid``.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from .base import Invalid, is_invalid

__all__ = [
    "DELTA",
    "ITEMS",
    "MAX_ROUNDS",
    "Allocation",
    "NegotiationConfig",
    "NegotiationState",
    "NegotiationTask",
    "Offer",
    "RESPONSE_TASK",
    "NegotiationResponseTask",
    "ReservationRule",
    "ResponseDecision",
    "advance",
    "allocations",
    "episode_score",
    "is_over",
    "max_utility",
    "negotiation_configs",
    "new_negotiation",
    "parse_allocation",
    "render_allocation",
    "parse_response",
    "play_negotiation",
    "proposal_score",
    "proposer",
    "render_prompt",
    "render_response",
    "render_response_prompt",
    "responder",
    "rule_proposal",
    "rule_response",
    "utility",
]

DELTA = 0.95
MAX_ROUNDS = 10
ITEMS: tuple[str, ...] = ("book", "hat", "ball")
TOTAL_VALUE = 10
#: the name of the responder's accept/reject task (:class:`NegotiationResponseTask`)
RESPONSE_TASK = "negotiation_response"


@dataclass(frozen=True)
class NegotiationConfig:
    """One game: the pool, both private value profiles, who opens, which side the MAS plays."""

    scenario: int
    items: tuple[str, ...]
    counts: tuple[int, ...]
    values: tuple[tuple[int, ...], tuple[int, ...]]
    first_proposer: int = 0
    mas_player: int = 0
    delta: float = DELTA
    max_rounds: int = MAX_ROUNDS


@dataclass(frozen=True)
class Allocation:
    """A complete split: ``counts[p][k]`` units of item k go to player p."""

    counts: tuple[tuple[int, ...], tuple[int, ...]]


@dataclass(frozen=True)
class Offer:
    """One round: who proposed what (or ``Invalid``) and whether it was accepted."""

    round: int
    proposer: int
    allocation: Allocation | Invalid
    accepted: bool


@dataclass(frozen=True)
class NegotiationState:
    """The config, the current round (1-based), the offers so far and the agreement if any."""

    config: NegotiationConfig
    round: int = 1
    history: tuple[Offer, ...] = field(default=())
    agreement: Allocation | None = None


def utility(config: NegotiationConfig, player: int, allocation: Allocation) -> int:
    """u_i(a): the value to ``player`` of the items it receives."""
    return sum(v * n for v, n in zip(config.values[player], allocation.counts[player]))


def max_utility(config: NegotiationConfig, player: int) -> int:
    """u_i^max: the value to ``player`` of the whole pool."""
    return sum(v * n for v, n in zip(config.values[player], config.counts))


def allocations(config: NegotiationConfig) -> tuple[Allocation, ...]:
    """Every complete allocation of the pool."""
    out = []
    for mine in itertools.product(*(range(n + 1) for n in config.counts)):
        out.append(Allocation((tuple(mine), tuple(n - m for n, m in zip(config.counts, mine)))))
    return tuple(out)


def new_negotiation(config: NegotiationConfig) -> NegotiationState:
    """Round 1, no offers."""
    return NegotiationState(config)


def proposer(state: NegotiationState) -> int:
    """Who proposes this round: the first proposer in odd rounds, the other in even ones."""
    return state.config.first_proposer if state.round % 2 == 1 else 1 - state.config.first_proposer


def responder(state: NegotiationState) -> int:
    """Who accepts or rejects this round."""
    return 1 - proposer(state)


def is_over(state: NegotiationState) -> bool:
    """An agreement was reached, or all rounds were played."""
    return state.agreement is not None or state.round > state.config.max_rounds


def _complete(config: NegotiationConfig, allocation: Allocation) -> bool:
    a, b = allocation.counts
    return (len(a) == len(b) == len(config.counts) and all(x >= 0 and y >= 0 for x, y in zip(a, b))
            and all(x + y == n for x, y, n in zip(a, b, config.counts)))


def advance(state: NegotiationState, offer: Allocation | Invalid, accepted: bool) -> NegotiationState:
    """The state after this round's offer and answer; an ``Invalid`` offer counts as rejected."""
    if is_over(state):
        raise ValueError("the negotiation is over")
    if not is_invalid(offer) and not _complete(state.config, offer):  # type: ignore[arg-type]
        raise ValueError(f"offer {offer} does not split the pool {state.config.counts}")
    accepted = accepted and not is_invalid(offer)
    rec = Offer(state.round, proposer(state), offer, accepted)
    if accepted:
        return replace(state, history=state.history + (rec,), agreement=offer)  # type: ignore[arg-type]
    return replace(state, round=state.round + 1, history=state.history + (rec,))


def episode_score(state: NegotiationState, player: int) -> float:
    """R of eq 18: ``delta**(t-1) * u_i(a*) / u_i_max`` for agreement in round t, else 0."""
    if state.agreement is None:
        return 0.0
    t = state.history[-1].round
    cfg = state.config
    return cfg.delta ** (t - 1) * utility(cfg, player, state.agreement) / max_utility(cfg, player)


Acceptor = Callable[[Allocation, NegotiationState], bool]


def proposal_score(allocation: Allocation | Invalid, state: NegotiationState, accepts: Acceptor) -> float:
    """Eq 17 on 0-100 for the proposer of ``state``'s round: ``100 * A * delta**(t-1) * u/u_max``,
    ``A = accepts(allocation, state)``; 0 for an invalid or incomplete allocation."""
    cfg = state.config
    if is_invalid(allocation) or not _complete(cfg, allocation):  # type: ignore[arg-type]
        return 0.0
    if not accepts(allocation, state):  # type: ignore[arg-type]
        return 0.0
    i = proposer(state)
    return 100.0 * cfg.delta ** (state.round - 1) * utility(cfg, i, allocation) / max_utility(cfg, i)  # type: ignore[arg-type]


@dataclass(frozen=True)
class ReservationRule:
    """Offline opponent: accept when its own share ``u/u_max`` reaches a reservation share that
    falls linearly from ``start`` in round 1 to ``end`` in the last round (waiting costs delta)."""

    start: float = 0.6
    end: float = 0.2

    def share(self, state: NegotiationState) -> float:
        """The reservation share of this round."""
        last = state.config.max_rounds
        frac = 0.0 if last == 1 else (state.round - 1) / (last - 1)
        return self.start + (self.end - self.start) * frac

    def __call__(self, allocation: Allocation, state: NegotiationState) -> bool:
        """Accept iff the responder's share is at least :meth:`share`."""
        cfg, j = state.config, responder(state)
        return utility(cfg, j, allocation) >= self.share(state) * max_utility(cfg, j) - 1e-9


@dataclass(frozen=True)
class NegotiationTask:
    """The Negotiation task (Table 1): proposals are allocations scored by eq 17 on 0-100."""

    accepts: Acceptor = field(default_factory=ReservationRule)
    name: str = "negotiation"

    def score(self, proposal: object, state: NegotiationState) -> float:
        """See :func:`proposal_score`."""
        return proposal_score(proposal, state, self.accepts)  # type: ignore[arg-type]

    def max_score(self, state: NegotiationState) -> float:
        """S*: the best eq 17 score over every allocation (one ``accepts`` call each)."""
        return max(self.score(a, state) for a in allocations(state.config))

    def canonical(self, proposal: object) -> object:
        """The per-player count tuples; an ``Invalid`` stays itself."""
        return proposal if is_invalid(proposal) else proposal.counts  # type: ignore[union-attr]

    def parse(self, text: str, state: NegotiationState) -> Allocation | Invalid:
        """See :func:`parse_allocation`."""
        return parse_allocation(text, state)


@dataclass(frozen=True)
class ResponseDecision:
    """The responder's decision (appendix "Negotiation": "one player proposes a complete
    allocation and the other player decides whether to accept or reject it"): the round's state
    and the offer on the table; ``player`` is the responder."""

    state: NegotiationState
    offer: Allocation

    @property
    def player(self) -> int:
        """Who decides: the responder of ``state``'s round."""
        return responder(self.state)


@dataclass(frozen=True)
class NegotiationResponseTask:
    """The responder's accept/reject as a task a MAS method runs (module docstring): proposals
    are ``True`` (accept) or ``False`` (reject); no unit of the trajectory metrics (Table 1
    scores "the proposed allocation"), so a readable decision scores 100 and S* is 100."""

    name: str = RESPONSE_TASK

    def score(self, proposal: object, decision: ResponseDecision) -> float:
        """100 for a readable decision, 0 for an ``Invalid`` one (eq 23's v(y))."""
        return 0.0 if is_invalid(proposal) else 100.0

    def max_score(self, decision: ResponseDecision) -> float:
        """S* = 100."""
        return 100.0

    def canonical(self, proposal: object) -> object:
        """The decision itself (``True``/``False``); an ``Invalid`` stays itself."""
        return proposal

    def parse(self, text: str, decision: ResponseDecision) -> bool | Invalid:
        """See :func:`parse_response`."""
        return parse_response(text)


def render_response(accept: bool, decision: ResponseDecision | None = None) -> str:
    """``{"accept": true}`` / ``{"accept": false}``: the form :func:`parse_response` reads back."""
    return json.dumps({"accept": bool(accept)})


def render_response_prompt(decision: ResponseDecision) -> str:
    """The responder's task prompt: :func:`render_prompt` for the responder, given the offer."""
    return render_prompt(decision.state, decision.player, decision.offer)


def rule_response(decision: ResponseDecision, rule: ReservationRule = ReservationRule()) -> bool:
    """The offline responder's decision: ``rule`` (accept iff its share reaches the reservation share)."""
    return bool(rule(decision.offer, decision.state))


_REST = re.compile(r"(?:the\s+)?(?:rest|remainder|remaining(?:\s+items)?|everything\s+else)",
                   re.IGNORECASE)
_MINE = ("self", "me", "mine", "i", "my_share", "proposer", "keep", "i_take")
_YOURS = ("opponent", "you", "yours", "other", "their_share", "responder", "give", "you_take")
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "no": 0, "zero": 0}


def _item_index(config: NegotiationConfig, word: str) -> int | None:
    w = word.lower().strip()
    for k, name in enumerate(config.items):
        if w in (name, name + "s", name + "es"):
            return k
    return None


def _side_from_json(config: NegotiationConfig, obj: object) -> dict[int, int | None] | str:
    if not isinstance(obj, dict):
        return "a side must be an object of item counts"
    out: dict[int, int | None] = {}
    for key, n in obj.items():
        k = _item_index(config, str(key))
        if k is None:
            return f"unknown item {key!r}"
        if isinstance(n, bool) or not isinstance(n, int):
            return f"count of {key!r} must be an integer"
        out[k] = n
    return out


def _side_from_text(config: NegotiationConfig, phrase: str) -> dict[int, int | None] | str:
    out: dict[int, int | None] = {}
    if phrase.strip().lower() in ("nothing", "none", "no items"):
        return out
    for part in re.split(r",|\band\b|&", phrase):
        words = re.findall(r"[A-Za-z]+|\d+", part)
        words = [w for w in words if w.lower() not in ("the", "all", "of", "x")]
        if not words:
            continue
        n: int | None = None
        if words[0].isdigit():
            try:
                n = int(words[0])
            except ValueError:  # past int()'s 4300-digit limit
                return f"cannot read {part.strip()!r}"
            words = words[1:]
        elif words[0].lower() in _NUMBERS and len(words) > 1:
            n = _NUMBERS[words[0].lower()]
            words = words[1:]
        if len(words) != 1 or (k := _item_index(config, words[0])) is None:
            return f"cannot read {part.strip()!r}"
        out[k] = n
    return out


def _build(config: NegotiationConfig, me: int, mine: dict[int, int | None] | None,
           yours: dict[int, int | None] | None) -> Allocation | Invalid:
    counts = config.counts
    sides: list[list[int | None]] = [[None] * len(counts), [None] * len(counts)]
    for s, given in ((0, mine), (1, yours)):
        for k, n in (given or {}).items():
            if n is not None and not 0 <= n <= counts[k]:
                return Invalid(f"{n} {config.items[k]} asked; the pool has {counts[k]}")
            sides[s][k] = counts[k] if n is None else n
    if mine is None or yours is None:
        known = 0 if mine is not None else 1
        sides[1 - known] = [n - (x or 0) for n, x in zip(counts, sides[known])]
        sides[known] = [x or 0 for x in sides[known]]
    for k, name in enumerate(config.items):
        a, b = sides[0][k], sides[1][k]
        if a is None and b is None:
            return Invalid(f"{name} is not allocated")
        a, b = (counts[k] - b if a is None else a), (counts[k] - a if b is None else b)  # type: ignore[operator]
        if a < 0 or b < 0 or a + b != counts[k]:
            return Invalid(f"{name}: {a} + {b} does not make the pool's {counts[k]}")
        sides[0][k], sides[1][k] = a, b
    mine_t, yours_t = tuple(sides[0]), tuple(sides[1])  # type: ignore[arg-type]
    return Allocation((mine_t, yours_t) if me == 0 else (yours_t, mine_t))  # type: ignore[arg-type]


def _json_objects(text: str) -> list[dict[str, object]]:
    """Every top-level JSON object embedded in ``text``, in order."""
    dec, out, pos = json.JSONDecoder(), [], text.find("{")
    while pos >= 0:
        try:
            obj, end = dec.raw_decode(text, pos)
        except (ValueError, RecursionError):  # not JSON, a number past 4300 digits, or nested ~1000 deep
            pos = text.find("{", pos + 1)
            continue
        if isinstance(obj, dict):
            out.append(obj)
        pos = text.find("{", end)
    return out


def render_allocation(allocation: Allocation, state: NegotiationState) -> str:
    """One-line JSON ``{"self": {...}, "opponent": {...}}`` from the view of the state's proposer,
    the form :func:`parse_allocation` reads back."""
    me, items = proposer(state), state.config.items
    return json.dumps({"self": dict(zip(items, allocation.counts[me])),
                       "opponent": dict(zip(items, allocation.counts[1 - me]))})


def parse_allocation(text: str, state: NegotiationState) -> Allocation | Invalid:
    """An allocation proposed by this round's proposer, or ``Invalid``.

    Accepts a JSON object ``{"self": {"book": 1}, "opponent": {"hat": 2, "ball": 1}}`` (or the
    same under ``"allocation"``; aliases ``me``/``mine``/``i_take``, ``you``/``yours``/
    ``you_take``...), or text ``"I take book, hat; you take ball"`` / ``"I take 2 books and a hat"``.
    """
    cfg, me = state.config, proposer(state)
    for obj in _json_objects(text):
        if isinstance(obj.get("allocation"), dict):
            obj = obj["allocation"]
        keys = {str(k).lower(): v for k, v in obj.items()}
        mine_raw = next((keys[k] for k in _MINE if k in keys), None)
        yours_raw = next((keys[k] for k in _YOURS if k in keys), None)
        if mine_raw is None and yours_raw is None:
            continue
        sides = [None if raw is None else _side_from_json(cfg, raw) for raw in (mine_raw, yours_raw)]
        bad = next((s for s in sides if isinstance(s, str)), None)
        return Invalid(bad) if bad else _build(cfg, me, sides[0], sides[1])  # type: ignore[arg-type]
    found = {}
    for who, pat in (("mine", r"\bI\s+(?:take|get|keep|want)\s+([^;.\n]*)"),
                     ("yours", r"\byou\s+(?:take|get|keep|receive)\s+([^;.\n]*)")):
        hits = re.findall(pat, text, flags=re.IGNORECASE)
        if hits and _REST.fullmatch(hits[-1].strip()):
            continue  # "you take the rest": the complement
        if hits:
            side = _side_from_text(cfg, hits[-1])
            if isinstance(side, str):
                return Invalid(side)
            found[who] = side
    if not found:
        return Invalid("no allocation found")
    return _build(cfg, me, found.get("mine"), found.get("yours"))


def parse_response(text: str) -> bool | Invalid:
    """An accept/reject answer: JSON ``{"accept": true}`` or the last word accept/reject."""
    m = re.search(r'"accept"\s*:\s*(true|false)', text, flags=re.IGNORECASE)
    if m:
        return m.group(1).lower() == "true"
    words = re.findall(r"\b(accept|reject)\w*", text, flags=re.IGNORECASE)
    if not words:
        return Invalid("no accept/reject decision")
    return words[-1].lower() == "accept"


def rule_proposal(state: NegotiationState, rng: random.Random,
                  rule: ReservationRule = ReservationRule()) -> Allocation:
    """Offline proposer: keep at least the rule's reservation share of its own value and, among
    such splits, give the opponent the most units; then the most own value; ties by ``rng``."""
    cfg, i = state.config, proposer(state)
    need = rule.share(state) * max_utility(cfg, i) - 1e-9
    ok = [a for a in allocations(cfg) if utility(cfg, i, a) >= need]
    key = {a: (sum(a.counts[1 - i]), utility(cfg, i, a)) for a in ok}
    best = max(key.values())
    return rng.choice([a for a in ok if key[a] == best])


Proposer = Callable[[NegotiationState], "Allocation | Invalid"]


def play_negotiation(state: NegotiationState, proposers: Mapping[int, Proposer],
                     acceptors: Mapping[int, Acceptor]) -> tuple[NegotiationState, list[dict[str, object]]]:
    """Play to the end: ``proposers[p](state)`` offers, ``acceptors[q](offer, state)`` answers."""
    log: list[dict[str, object]] = []
    while not is_over(state):
        i = proposer(state)
        offer = proposers[i](state)
        if not is_invalid(offer) and not _complete(state.config, offer):  # type: ignore[arg-type]
            offer = Invalid(f"offer {offer} does not split the pool")
        ok = not is_invalid(offer) and acceptors[1 - i](offer, state)  # type: ignore[arg-type]
        log.append({"round": state.round, "proposer": i,
                    "offer": None if is_invalid(offer) else offer.counts,  # type: ignore[union-attr]
                    "invalid": getattr(offer, "reason", None), "accepted": ok})
        state = advance(state, offer, ok)
    return state, log


def _profiles(counts: tuple[int, ...]) -> list[tuple[int, ...]]:
    ranges = [range(TOTAL_VALUE // n + 1) for n in counts]
    return [v for v in itertools.product(*ranges)
            if sum(x * n for x, n in zip(v, counts)) == TOTAL_VALUE]


def negotiation_configs(n: int = 100, seed: int = 0) -> tuple[NegotiationConfig, ...]:
    """``2 n`` games: ``n`` seeded scenarios, each twice "with the player roles and first proposer
    exchanged" (appendix): game 2k the MAS is player 0 and opens, game 2k+1 the MAS is player 1
    and the opponent (player 0) opens (module docstring)."""
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    rng = random.Random(f"negotiation-{seed}")
    out = []
    for s in range(n):
        while True:
            counts = tuple(rng.randint(1, 4) for _ in ITEMS)
            if not 5 <= sum(counts) <= 7:
                continue
            options = _profiles(counts)
            v0, v1 = rng.choice(options), rng.choice(options)
            if v0 != v1 and all(a + b > 0 for a, b in zip(v0, v1)):
                break
        for mas in (0, 1):  # first proposer: player 0, the MAS in game 2k, the opponent in game 2k+1
            out.append(NegotiationConfig(s, ITEMS, counts, (v0, v1), first_proposer=0, mas_player=mas))
    return tuple(out)


def _describe(cfg: NegotiationConfig, allocation: Allocation, player: int) -> str:
    return ", ".join(f"{name}: you {allocation.counts[player][k]}, opponent {allocation.counts[1 - player][k]}"
                     for k, name in enumerate(cfg.items))


def render_prompt(state: NegotiationState, player: int, offer: Allocation | None = None) -> str:
    """The task prompt in the spirit of Fig. 15: pool, own values, payoff, rules, history; the
    proposer is asked for a split, the responder (given ``offer``) for a decision."""
    cfg = state.config
    pool = ", ".join(f"{n} {name}{'s' if n > 1 else ''}" for n, name in zip(cfg.counts, cfg.items))
    vals = ", ".join(f"{name} = {v}" for name, v in zip(cfg.items, cfg.values[player]))
    hist = [f"Round {o.round}: {'you' if o.proposer == player else 'the opponent'} proposed "
            f"({o.allocation.reason if is_invalid(o.allocation) else _describe(cfg, o.allocation, player)}); "  # type: ignore[union-attr,arg-type]
            f"{'accepted' if o.accepted else 'rejected'}." for o in state.history]
    head = (
        f"You negotiate how to split a pool of items: {pool}.\n"
        f"Your private values per unit: {vals} (the whole pool is worth {max_utility(cfg, player)} "
        "to you). The opponent's values are hidden and may differ.\n"
        "Your payoff is the value of the items you receive, multiplied by "
        f"{cfg.delta} for every round of delay; with no agreement after {cfg.max_rounds} rounds both get 0.\n"
        "Each round one side proposes a complete split and the other accepts or rejects; a "
        "rejection swaps the roles.\n"
        f"Round {state.round} of {cfg.max_rounds}.\n"
        "History:\n" + ("\n".join(hist) or "(no offers yet)") + "\n"
    )
    if proposer(state) == player:
        example = ", ".join(f'"{name}": 0' for name in cfg.items)
        return head + ("Propose a split. Answer with JSON naming what you keep and what the "
                       f'opponent gets: {{"self": {{{example}}}, "opponent": {{{example}}}}}')
    if offer is None:
        raise ValueError("the responder's prompt needs the offer")
    return head + (f"The opponent now proposes: {_describe(cfg, offer, player)}.\n"
                   'Answer with JSON: {"accept": true} or {"accept": false}')
