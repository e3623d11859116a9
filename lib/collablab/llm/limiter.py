"""A process-wide bound on calls in flight per endpoint alias, shared across threads and
event loops (:func:`endpoint_limiter`)."""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from typing import Any

__all__ = ["EndpointLimiter", "endpoint_limiter"]


class EndpointLimiter:
    """A counting semaphore usable from any thread and any asyncio event loop.

    (A plain ``asyncio.Semaphore`` binds to one loop; notebooks' sync calls run each
    call on a fresh loop, so this one hands slots across loops with thread-safe wakeups.)
    """

    def __init__(self, alias: str, limit: int):
        self.alias = alias
        self._limit = int(limit)
        self._lock = threading.Lock()
        self._in_flight = 0
        self._peak = 0
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = deque()

    def __repr__(self) -> str:
        return (f"EndpointLimiter({self.alias!r}, in_flight={self.in_flight}, "
                f"limit={self.limit}, max_in_flight={self.max_in_flight})")

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def max_in_flight(self) -> int:
        """Peak number of concurrently held slots since creation or :meth:`reset_peak`."""
        return self._peak

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def reset_peak(self) -> None:
        with self._lock:
            self._peak = self._in_flight

    def set_limit(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("limit must be >= 1")
        with self._lock:
            self._limit = int(limit)
        self._dispatch()

    def _take(self) -> None:
        self._in_flight += 1
        self._peak = max(self._peak, self._in_flight)

    async def acquire(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._in_flight < self._limit and not self._waiters:
                self._take()
                return
            fut = loop.create_future()
            entry = (loop, fut)
            self._waiters.append(entry)
        try:
            await fut
        except asyncio.CancelledError:
            with self._lock:
                try:
                    self._waiters.remove(entry)
                    queued = True
                except ValueError:
                    queued = False
            if not queued and fut.done() and not fut.cancelled():
                self.release()  # granted just before the cancellation landed
            raise

    def release(self) -> None:
        with self._lock:
            if self._in_flight <= 0:
                raise RuntimeError("EndpointLimiter released too many times")
            self._in_flight -= 1
        self._dispatch()

    def _dispatch(self) -> None:
        """Hand free slots to waiters (FIFO), each on its own loop."""
        while True:
            with self._lock:
                if not self._waiters or self._in_flight >= self._limit:
                    return
                loop, fut = self._waiters.popleft()
                self._take()
            try:
                loop.call_soon_threadsafe(self._grant, fut)
            except RuntimeError:  # that loop is closed: its waiter is gone
                with self._lock:
                    self._in_flight -= 1

    def _grant(self, fut: asyncio.Future) -> None:
        if fut.done():  # cancelled meanwhile: give the slot back
            self.release()
        else:
            fut.set_result(None)

    async def __aenter__(self) -> "EndpointLimiter":
        await self.acquire()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.release()


_LIMITERS: dict[str, EndpointLimiter] = {}
_LIMITERS_LOCK = threading.Lock()


def endpoint_limiter(alias: str, limit: int | None = None) -> EndpointLimiter:
    """The process-wide limiter of an endpoint alias (created on first use).

    Passing ``limit`` (re)sets the bound; the latest spec using the alias wins.
    """
    with _LIMITERS_LOCK:
        lim = _LIMITERS.get(alias)
        if lim is None:
            lim = _LIMITERS[alias] = EndpointLimiter(alias, limit or 4)
            return lim
    if limit is not None and limit != lim.limit:
        lim.set_limit(limit)
    return lim
