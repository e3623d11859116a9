"""What every MASTraceBench task offers (mastracebench.txt §3, Table 1): a shared shape.

Each of the six tasks parses a model's reply into a *proposal* (or an :class:`Invalid` marker
naming why it could not), scores a proposal on the paper's 0-100 scale, states the maximum
attainable score ``S*`` used by GAB's OptKeep/SubKeep split (§3.3), and maps a proposal to a
hashable canonical form so that majority voting and agreement can compare proposals.
An :class:`Invalid` proposal scores 0 in every task.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = ["Invalid", "Task", "is_invalid"]


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
