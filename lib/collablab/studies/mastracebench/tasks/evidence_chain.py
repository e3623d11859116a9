"""EvidenceChain (mastracebench.txt §3, Table 1, appendix "EvidenceChain", eqs 11-14, Fig 9).

A detective case gives a story, a question and numbered candidate facts; a proposal is the
ordered list of fact ids that supports the answer. The score (eq 14) is the mean of the set F1
of eqs 11-12 and the pairwise order agreement O of eq 13 over the shared facts, times 100;
``S*`` = 100 (the gold chain scores 100).

Decisions the paper leaves open (tested in tests/test_mastracebench_evidence.py):

- **Empty chain.** ``[]`` is a readable proposal that scores 0 (eq 11's precision is taken
  as 0); a reply with no chain at all is ``Invalid`` (also 0, but counted against OV).
- **Duplicates.** Eqs 11-12 are "set-level precision and recall" (``P ∩ G``, ``|P|`` of the set):
  a repeated id counts once, so ``(3, 3, 1)`` against ``(3, 1, 5, 6)`` scores 83.33, as ``(3, 1)``
  does; the order uses each id's first occurrence.
- **Unknown ids.** Ids that are not among the candidate facts are kept and count in ``|P|``
  like any wrong fact: a hallucinated reference is an error of the chain, not an unreadable
  reply, and the rest of the chain is still graded. Only text with no ids is ``Invalid``.
- **Fewer than two shared facts.** With ``|H| = 0``, F1 is 0 and O is 0 (score 0). With
  ``|H| = 1`` there is no pair to compare: O = 1 if the gold chain has a single fact (the
  proposal then orders all there is) and O = 0 otherwise, because one fact demonstrates no
  ordering; the vacuous O = 1 would give one correct fact of four a score of 70.
- **Ids** are 1-based, as numbered in the prompt.

The generator writes detective cases from templates: a theft at a gathering, a chain that
starts from where the object vanished, follows traces from room to room, names who was in the
last room (directly or through a garment colour) and so yields the culprit; distractors are
motives, alibis, other guests' clothes, unrelated traces and background details.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations, pairwise
from typing import Any

from .base import Invalid, is_invalid, json_values

__all__ = [
    "ChainScore",
    "EvidenceChainTask",
    "EvidenceInstance",
    "canonical_evidence",
    "chain_score",
    "evidence_prompt",
    "generate_evidence",
    "parse_evidence",
    "score_evidence",
]

Chain = tuple[int, ...]


@dataclass(frozen=True)
class EvidenceInstance:
    """One sample (Fig 9): story, question, answer, facts (fact ``k`` is ``facts[k - 1]``), the
    ordered gold chain of fact ids and the distractor ids (all other facts)."""

    name: str
    story: str
    question: str
    answer: str
    facts: tuple[str, ...]
    chain: Chain
    distractors: Chain

    def __post_init__(self) -> None:
        object.__setattr__(self, "facts", tuple(self.facts))
        object.__setattr__(self, "chain", tuple(self.chain))
        object.__setattr__(self, "distractors", tuple(self.distractors))
        ids = set(range(1, len(self.facts) + 1))
        if not self.chain or len(set(self.chain)) != len(self.chain) or not set(self.chain) <= ids:
            raise ValueError(f"chain: must be distinct fact ids in 1..{len(self.facts)}")
        if set(self.distractors) & set(self.chain) or not set(self.distractors) <= ids:
            raise ValueError("distractors: must be fact ids outside the chain")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict."""
        return {"name": self.name, "story": self.story, "question": self.question,
                "answer": self.answer, "facts": list(self.facts), "chain": list(self.chain),
                "distractors": list(self.distractors)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> EvidenceInstance:
        """Inverse of :meth:`to_dict`; a missing field raises ``ValueError`` naming it."""
        for key in ("story", "question", "answer", "facts", "chain", "distractors"):
            if key not in d:
                raise ValueError(f"{key}: missing from the EvidenceChain record")
        return cls(name=str(d.get("name", "")), story=str(d["story"]), question=str(d["question"]),
                   answer=str(d["answer"]), facts=tuple(str(f) for f in d["facts"]),
                   chain=tuple(int(i) for i in d["chain"]),
                   distractors=tuple(int(i) for i in d["distractors"]))


@dataclass(frozen=True)
class ChainScore:
    """The parts of eq 14, each in [0, 1]; ``score`` is (F_set + O) / 2 on 0-100."""

    precision: float
    recall: float
    f_set: float
    order: float
    score: float


def chain_score(proposal: Sequence[int], gold: Sequence[int]) -> ChainScore:
    """Eqs 11-14 for a predicted id list ``P`` against the gold chain ``G`` (edge cases in the
    module docstring)."""
    first: list[int] = list(dict.fromkeys(proposal))
    shared = [i for i in first if i in set(gold)]
    prec = len(shared) / len(first) if first else 0.0  # eq 11 over the set P
    rec = len(shared) / len(gold)
    f_set = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    if len(shared) >= 2:
        gpos = {g: k for k, g in enumerate(gold)}
        pairs = list(combinations(shared, 2))  # in P's order, so u before v in P
        order = sum(gpos[u] < gpos[v] for u, v in pairs) / len(pairs)
    elif len(shared) == 1:
        order = 1.0 if len(gold) == 1 else 0.0
    else:
        order = 0.0
    return ChainScore(prec, rec, f_set, order, 100.0 * (f_set + order) / 2)


def score_evidence(proposal: Chain | Invalid, instance: EvidenceInstance) -> float:
    """Eq 14 on 0-100 against ``instance.chain``; ``Invalid`` -> 0."""
    if is_invalid(proposal):
        return 0.0
    return chain_score(proposal, instance.chain).score  # type: ignore[arg-type]


def canonical_evidence(proposal: Chain | Invalid) -> Any:
    """The id tuple as given (repeats kept: what the proposer wrote, though they no longer change the score)."""
    return proposal if is_invalid(proposal) else tuple(proposal)  # type: ignore[arg-type]


# --- generator ---------------------------------------------------------------------------------

_NAMES = ("Ada Finch", "Basil Crane", "Clara Vane", "Desmond Holt", "Edith Marsh", "Felix Rook",
          "Greta Lyle", "Hugo Pratt", "Iris Quill", "Jonah Reed", "Kitty Shaw", "Leon Dray",
          "Mabel Frost", "Nigel Bassett", "Olive Hart", "Percy Lund")
_VENUES = ("Ashcombe Manor", "the Harbour Hotel", "Larkspur Abbey", "the Regent Club",
           "Thornfield Lodge", "the Blue Lantern Inn", "Wrenfield House", "the Old Observatory")
_OCCASIONS = ("a birthday dinner", "a charity auction", "a weekend house party",
              "a retirement party", "a wine tasting", "a chess tournament")
_OBJECTS = ("the emerald brooch", "the gold pocket watch", "the first-edition atlas",
            "the jade figurine", "the silver candlestick", "the sapphire ring",
            "the antique music box", "the signed manuscript")
_ROOMS = ("library", "conservatory", "billiard room", "study", "kitchen", "cellar", "ballroom",
          "gallery", "pantry", "music room", "greenhouse", "attic", "morning room", "boot room")
_TRACES = ("wet footprints", "a trail of spilled flour", "drops of candle wax",
           "smudges of green paint", "scattered rose petals", "muddy boot prints")
_COLOURS = ("crimson", "ivory", "emerald", "navy", "mustard", "lilac", "charcoal", "scarlet")
_GARMENTS = ("scarf", "waistcoat", "shawl", "cravat", "cardigan")
_MOTIVES = ("owed the host a large sum of money", "had quarrelled loudly with the host that morning",
            "was overheard saying the {obj} was vulgar", "had once tried to buy the {obj}",
            "was recently dismissed from the host's firm")
_BACKGROUND = ("The {room} was repainted last spring.", "The clock in the {room} chimed at {t}.",
               "The host keeps a spaniel that sleeps in the {room}.",
               "Rain had been falling since early afternoon.",
               "The {room} windows had been painted shut for years.")


def _time(rng: random.Random) -> tuple[str, str]:
    h, m = rng.randint(7, 10), rng.choice((0, 15, 30, 45))
    later = h * 60 + m + rng.choice((10, 15, 20))
    return f"{h}:{m:02d} pm", f"{later // 60}:{later % 60:02d} pm"


def _hop(rng: random.Random, a: str, b: str, obj: str, trace: str) -> str:
    return rng.choice((
        f"{trace.capitalize()} lead from the {a} to the {b}.",
        f"A maid saw someone carrying {obj} hurry out of the {a} into the {b}.",
        f"The only way out of the {a} that night was the passage into the {b}.",
    ))


def _case(rng: random.Random, name: str) -> EvidenceInstance:
    people = rng.sample(_NAMES, rng.randint(3, 5))
    culprit, others = people[0], people[1:]
    rooms = rng.sample(_ROOMS, 7)
    hops = rng.randint(1, 3)
    path, spare = rooms[: hops + 1], rooms[hops + 1:]
    obj, venue, occasion = rng.choice(_OBJECTS), rng.choice(_VENUES), rng.choice(_OCCASIONS)
    trace = rng.choice(_TRACES)
    t0, t1 = _time(rng)
    via_garment = rng.random() < 0.5
    colours = rng.sample(_COLOURS, len(people))
    garment = rng.choice(_GARMENTS)

    chain = [f"{obj.capitalize()} vanished from the {path[0]} shortly after {t0}."]
    chain += [_hop(rng, a, b, obj, trace) for a, b in pairwise(path)]
    if via_garment:
        chain.append(f"Between {t0} and {t1}, the only person in the {path[-1]} was someone "
                     f"wearing a {colours[0]} {garment}.")
        chain.append(f"{culprit} was the only guest wearing a {colours[0]} {garment} that evening.")
    else:
        chain.append(f"Between {t0} and {t1}, the only person in the {path[-1]} was {culprit}.")

    pool = [f"{p} {rng.choice(_MOTIVES).format(obj=obj.removeprefix('the '))}." for p in others]
    pool += [f"{p} was in the {rng.choice(spare)} at {rng.choice((t0, t1))}." for p in others]
    pool.append(f"{trace.capitalize()} lead from the {spare[0]} to the {spare[1]}.")
    pool += [f"{p} wore a {c} {garment}." for p, c in zip(others, colours[1:])]
    pool += [b.format(room=rng.choice(rooms), t=t1) for b in rng.sample(_BACKGROUND, 2)]
    distract = rng.sample(pool, rng.randint(3, 6))

    tagged = [(s, True, k) for k, s in enumerate(chain)] + [(s, False, -1) for s in distract]
    rng.shuffle(tagged)
    facts = tuple(s for s, _, _ in tagged)
    ids = {k: i + 1 for i, (_, gold, k) in enumerate(tagged) if gold}
    gold_chain = tuple(ids[k] for k in range(len(chain)))
    distractors = tuple(i + 1 for i, (_, gold, _) in enumerate(tagged) if not gold)
    story = (f"During {occasion} at {venue}, {obj} disappeared. The guests that evening were "
             f"{', '.join(people[:-1])} and {people[-1]}. Inspector Marlow walked the house room "
             f"by room, interviewed the staff and noted everything that might matter, "
             f"and much that might not.")
    return EvidenceInstance(name=name, story=story, question=f"Who took {obj}?", answer=culprit,
                            facts=facts, chain=gold_chain, distractors=distractors)


def generate_evidence(n: int = 100, seed: int = 0) -> list[EvidenceInstance]:
    """``n`` seeded detective cases (100 as in Table 1) with gold chains of 3-6 facts and 3-6
    distractors, in shuffled numbering. Case ``i`` depends only on ``(seed, i)``."""
    return [_case(random.Random(f"evidence:{seed}:{i}"), f"evidence-{seed}-{i:03d}")
            for i in range(n)]


# --- parser ------------------------------------------------------------------------------------

# Runs of spaces are possessive (``*+``) and a separator is either punctuation or spaces, never
# both ways: the same lines match as before, without the exponential backtracking the ambiguous
# form had on runs of spaces (1 s for ten spaces between three ids, minutes for 100 leading ones).
_ID = r"(?:fact|f|id|#)?\s*+#?\s*+(\d+)"
_SEQ = rf"{_ID}(?:(?:\s*+(?:,|;|->|→|=>|>)\s*+|\s++){_ID})*"
_LINE = re.compile(rf"^\s*+(?:[-*>]\s*+)?\**+\s*+(?:final\s++)?(?:(?:evidence\s++)?chain|answer|ids?|"
                   rf"evidence|fact\s++ids?)?[\s*:=]*+\[?\s*+({_SEQ})\s*+\]?\s*+\.?\s*+$",
                   re.IGNORECASE)
_KEYS = ("chain", "evidence_chain", "fact_ids", "facts", "evidence", "ids", "answer")


def _id(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, dict):
        low = {str(k).lower(): v for k, v in value.items()}
        key = next((k for k in ("id", "fact_id", "fact") if k in low), None)
        return None if key is None else _id(low[key])
    if isinstance(value, str):
        m = re.fullmatch(rf"\s*+{_ID}\s*+", value, re.IGNORECASE)
        return int(m.group(1)) if m and len(m.group(1)) < 4300 else None  # int()'s digit limit
    return None


def _from_json(obj: Any) -> Chain | Invalid | None:
    if isinstance(obj, dict):
        low = {str(k).lower(): v for k, v in obj.items()}
        inner = next((low[k] for k in _KEYS if k in low), None)
        lists = [v for v in obj.values() if isinstance(v, list)]
        if inner is None and len(lists) == 1:
            inner = lists[0]
        return None if inner is None else _from_json(inner)
    if isinstance(obj, list):
        ids = [_id(v) for v in obj]
        bad = [v for v, i in zip(obj, ids) if i is None]
        if bad:
            return Invalid(f"not fact ids: {bad[:3]}")
        return tuple(i for i in ids if i is not None)
    return None


def parse_evidence(text: str, instance: EvidenceInstance | None = None) -> Chain | Invalid:
    """An ordered id tuple from a reply, or ``Invalid`` with the reason.

    Accepted: JSON ``{"chain": [3, 1, 5]}`` (or ``evidence_chain``/``fact_ids``/``evidence``, or
    an object with one list), a bare JSON list (ints or ``"F3"``/``"fact 3"`` strings), or a line
    holding only ids such as ``Chain: 3 -> 1 -> 5`` or ``3, 1, 5`` (the last such line wins), in
    code fences or prose. Among JSON values the last keyed object wins, then the last bare list
    (the final answer usually comes last). ``instance`` is not needed: ids outside the
    candidates are kept and scored as wrong facts (module docstring).
    """
    keyed: list[Chain] = []
    bare: list[Chain] = []
    reason = None
    for obj in json_values(text):
        got = _from_json(obj)
        if got is None:
            continue
        if is_invalid(got):
            reason = reason or got.reason  # type: ignore[union-attr]
        else:
            (keyed if isinstance(obj, dict) else bare).append(got)  # type: ignore[arg-type]
    if keyed or bare:
        return (keyed or bare)[-1]
    for line in reversed(text.replace("`", "").splitlines()):
        m = _LINE.match(line)
        if m:
            ids = re.findall(r"\d+", m.group(1))
            if any(len(i) >= 4300 for i in ids):  # past int()'s digit limit: not fact ids
                return Invalid("a fact id of 4300 digits or more")
            return tuple(int(i) for i in ids)
    return Invalid(reason or "no evidence chain (list of fact ids) found in the reply")


# --- prompt ------------------------------------------------------------------------------------

def evidence_prompt(instance: EvidenceInstance) -> str:
    """The task prompt, in the spirit of Fig 13 (a complete, minimal, logically ordered chain),
    in our own words; the reply format is the JSON that :func:`parse_evidence` reads."""
    facts = "\n".join(f"[{k}] {f}" for k, f in enumerate(instance.facts, start=1))
    return f"""Read the case and build the chain of evidence that answers the question.

Story:
{instance.story}

Question: {instance.question}

Candidate facts:
{facts}

Your chain must be:
- complete: include every fact needed to reach the answer;
- minimal: leave out facts that do not contribute, however suspicious they sound;
- ordered: list the facts in the order the reasoning uses them, starting from the fact that
  opens the case and ending with the one that settles the answer, each step building on the
  one before.

Use only the numbers shown above, each at most once.
Reply with JSON only, for example: {{"chain": [4, 1, 7]}}
"""


@dataclass(frozen=True)
class EvidenceChainTask:
    """The EvidenceChain task (Table 1) behind the :class:`~.base.Task` interface."""

    name: str = "evidence_chain"

    def score(self, proposal: Chain | Invalid, instance: EvidenceInstance) -> float:
        """See :func:`score_evidence`."""
        return score_evidence(proposal, instance)

    def max_score(self, instance: EvidenceInstance) -> float:
        """S* = 100, reached by the gold chain."""
        return 100.0

    def canonical(self, proposal: Chain | Invalid) -> Any:
        """See :func:`canonical_evidence`."""
        return canonical_evidence(proposal)

    def parse(self, text: str, instance: EvidenceInstance) -> Chain | Invalid:
        """See :func:`parse_evidence`."""
        return parse_evidence(text, instance)
