"""What a MAS method asks of a model, one call at a time (mastracebench.txt §4, appendix).

A method (``methods.py``) is a workflow of calls. Each call is a :class:`Request`: the role
that speaks (proposer, validator, critic, judge, aggregator, ...), the task and its instance or
game state, the agent, the round and the sample index, the full text ``prompt`` an LLM reads,
and a structured ``context`` holding the same information (the proposals, claims or verdicts
the role is shown), so that an offline backend can answer without reading prose. A backend
answers with a :class:`Reply` (text plus tokens); the method parses the text with the task's
own parser, so LLM and offline replies go through one path and a bad reply is a recorded
invalid proposal.

``context`` keys used by the methods (each optional):

- ``"proposals"``: list of ``{"agent", "text"}`` shown to the role (peers' or candidates');
- ``"own"``: the role's own previous proposal text;
- ``"claims"``: list of ``{"id", "agent", "text"}`` (CLEARS);
- ``"question"``: what a validator/critic/judge is asked (e.g. ``"correctness"``);
- ``"n"``: how many items to return (claims, candidates).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .tasks.base import json_values

__all__ = ["ROLES", "Backend", "Reply", "Request", "parse_claim_votes", "parse_claims", "parse_rating", "parse_verdict"]

#: every role a method may call (§4 and the appendix's method descriptions)
ROLES: tuple[str, ...] = (
    "proposer", "validator", "critic", "judge", "aggregator", "reflector", "reviewer",
    "evaluator", "affirmative", "negative", "recruiter", "programmer", "claimer", "synthesizer",
    "opponent",
)


@dataclass(frozen=True)
class Request:
    """One call of a method: who speaks, about what, and what it is shown."""

    role: str
    task: str
    instance: Any  # the static instance, or the game's decision state
    agent: int
    round: int
    sample: int = 0
    prompt: str = ""
    context: dict[str, Any] = field(default_factory=dict)
    call_id: str = ""  # the logical id (trajectory.make_call_id): cache key and replay order

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"role: {self.role!r} is not allowed; allowed: {', '.join(ROLES)}")


@dataclass(frozen=True)
class Reply:
    """A backend's answer: the text and what it cost (TC, eq. 5)."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    truncated: bool = False  # cut at the token budget: ``text`` is then "" (a fragment is never read)


class Backend(Protocol):
    """Answers requests: an LLM endpoint, or the offline heuristic of ``offline.py``."""

    label: str  # e.g. "heuristic" or "vllm:Qwen3-8B"; every record names it

    def answer(self, request: Request) -> Reply: ...


# -- reading replies: the formats the methods ask for (one contract for every backend) --

def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object in ``text``, in order of its opening brace (nested ones too: an outer
    object comes before the objects inside it); lists and unparsable spans are skipped."""
    return [v for v in json_values(text) if isinstance(v, dict)]


def parse_verdict(text: str) -> bool | None:
    """A validator's/reflector's verdict: True (approve), False (reject / asks for revision), None."""
    for obj in _json_objects(text):
        if isinstance(obj, dict):
            for key in ("approve", "approved", "valid", "verdict"):
                v = obj.get(key)
                if isinstance(v, bool):
                    return v
                if isinstance(v, str):
                    return parse_verdict(v)
    low = text.lower()
    if re.search(r"\b(reject(ed)?|disapprove[sd]?|not approved?|revise)\b", low):
        return False
    if re.search(r"\b(approved?|accept(ed)?|yes|lgtm)\b", low):
        return True
    return None


def parse_rating(text: str) -> float:
    """An evaluator's score of 10 (JSON ``{"score": x}`` or the first number), clipped to [0, 10];
    unreadable -> 0."""
    for obj in _json_objects(text):
        if isinstance(obj, dict) and isinstance(obj.get("score"), (int, float)) and not isinstance(
                obj.get("score"), bool):
            return float(min(10.0, max(0.0, obj["score"])))
    m = re.search(r"-?\d+(?:\.\d+)?", text)
    return float(min(10.0, max(0.0, float(m.group(0))))) if m else 0.0


def parse_claims(text: str) -> list[str]:
    """Claims from JSON ``{"claims": [...]}`` or from bulleted/numbered lines."""
    for obj in _json_objects(text):
        if isinstance(obj, dict) and isinstance(obj.get("claims"), list):
            return [str(c).strip() for c in obj["claims"] if str(c).strip()]
    lines = [re.sub(r"^\s*(?:[-*]|\d+[.)])\s*", "", ln).strip() for ln in text.splitlines()
             if re.match(r"^\s*(?:[-*]|\d+[.)])\s+\S", ln)]
    return [ln for ln in lines if ln]


def parse_claim_votes(text: str, shown: Sequence[str]) -> tuple[set[str], set[str]]:
    """``(endorsed, challenged)`` claim ids from JSON ``{"endorse": [...], "challenge": [...]}``;
    ids not in ``shown`` are ignored."""
    ok = set(shown)
    for obj in _json_objects(text):
        if isinstance(obj, dict) and ("endorse" in obj or "challenge" in obj):
            e, c = obj.get("endorse", []), obj.get("challenge", [])
            return ({str(i) for i in e if str(i) in ok} if isinstance(e, list) else set(),
                    {str(i) for i in c if str(i) in ok} if isinstance(c, list) else set())
    return set(), set()
