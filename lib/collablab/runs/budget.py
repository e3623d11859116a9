"""Token budgets of a run session: stop handing out episodes when the total is spent, hold
them back while the last minute's tokens are above a rate (``run_grid(budget=...)``)."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Mapping
from typing import Any

__all__ = ["FIELDS", "Budget"]

FIELDS = ("max_total_tokens", "max_tokens_per_minute")
WINDOW_S = 60.0


class Budget:
    """``{"max_total_tokens": int, "max_tokens_per_minute": int}`` (either optional).

    :meth:`add` counts the tokens of each finished episode; :meth:`gate` is the scheduler's
    question before it hands out more episodes: None (go on), ``"stop"`` or seconds to wait.
    """

    def __init__(self, spec: Mapping[str, Any] | None = None) -> None:
        if spec is not None and not isinstance(spec, Mapping):
            raise ValueError(f"budget: must be a mapping with keys among {', '.join(FIELDS)} or None, "
                             f"got {type(spec).__name__} {spec!r}")
        spec = dict(spec or {})
        unknown = sorted(set(spec) - set(FIELDS))
        if unknown:
            raise ValueError(f"budget: unknown key(s) {unknown}; allowed: {', '.join(FIELDS)}")
        for k, v in spec.items():
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise ValueError(f"budget.{k}: must be an integer >= 1 or None, got {v!r}")
        self.max_total: int | None = spec.get("max_total_tokens")
        self.max_per_minute: int | None = spec.get("max_tokens_per_minute")
        self.total = 0
        self.exhausted = False
        self._recent: deque[tuple[float, int]] = deque()

    def as_dict(self) -> dict[str, int | None]:
        return {"max_total_tokens": self.max_total, "max_tokens_per_minute": self.max_per_minute}

    def __bool__(self) -> bool:
        return self.max_total is not None or self.max_per_minute is not None

    def add(self, tokens: int, now: float | None = None) -> None:
        if tokens <= 0:
            return
        self.total += tokens
        if self.max_per_minute is not None:
            self._recent.append((time.monotonic() if now is None else now, tokens))

    def last_minute(self, now: float | None = None) -> int:
        now = time.monotonic() if now is None else now
        while self._recent and self._recent[0][0] <= now - WINDOW_S:
            self._recent.popleft()
        return sum(t for _, t in self._recent)

    def gate(self, now: float | None = None) -> None | str | float:
        now = time.monotonic() if now is None else now
        if self.max_total is not None and self.total >= self.max_total:
            self.exhausted = True
            return "stop"
        if self.max_per_minute is not None and self.last_minute(now) > self.max_per_minute:
            # until the oldest entries leave the window (re-asked at least every second)
            return max(0.05, min(1.0, self._recent[0][0] + WINDOW_S - now))
        return None
