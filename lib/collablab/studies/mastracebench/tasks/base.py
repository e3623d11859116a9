"""What every MASTraceBench task offers (mastracebench.txt §3, Table 1): a shared shape.

Each of the six tasks parses a model's reply into a *proposal* (or an :class:`Invalid` marker
naming why it could not), scores a proposal on the paper's 0-100 scale, states the maximum
attainable score ``S*`` used by GAB's OptKeep/SubKeep split (§3.3), and maps a proposal to a
hashable canonical form so that majority voting and agreement can compare proposals.
An :class:`Invalid` proposal scores 0 in every task.
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = ["Invalid", "Task", "flat_json_objects", "is_invalid", "json_values"]


@dataclass(frozen=True)
class Invalid:
    """A reply that yields no usable proposal; ``reason`` says why (recorded, never raised)."""

    reason: str


def is_invalid(x: object) -> bool:
    """True when ``x`` is an :class:`Invalid` marker rather than a proposal."""
    return isinstance(x, Invalid)


@runtime_checkable
class Task(Protocol):
    """The small interface of a graded task (§3, Table 1).

    ``score`` returns a float in [0, 100] (0 for :class:`Invalid`); ``max_score`` is ``S*``;
    ``canonical`` gives a hashable form for voting/agreement; ``parse`` turns reply text into a
    proposal or :class:`Invalid`.
    """

    name: str

    def score(self, proposal: Any, instance: Any) -> float: ...

    def max_score(self, instance: Any) -> float: ...

    def canonical(self, proposal: Any) -> Hashable: ...

    def parse(self, text: str, instance: Any) -> Any: ...


def json_values(text: str) -> list[Any]:
    """Every JSON object or list that starts at a bracket of ``text``, in order (nested values
    included: each bracket is tried as a start)."""
    dec = json.JSONDecoder()
    out = []
    for m in re.finditer(r"[\[{]", text):
        try:
            obj, _ = dec.raw_decode(text, m.start())
        except (ValueError, RecursionError):  # not JSON, a number past 4300 digits, or nested ~1000 deep
            continue
        out.append(obj)
    return out


def flat_json_objects(text: str) -> list[Any]:
    """Every ``{...}`` span of ``text`` without inner braces that parses as JSON, in order."""
    out = []
    for m in re.finditer(r"\{[^{}]*\}", text):
        try:
            out.append(json.loads(m.group(0)))
        except (ValueError, RecursionError):  # as in json_values
            continue
    return out
