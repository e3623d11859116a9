"""Circuit breaker and replica routing: the process-wide state of each base URL.

A :class:`Breaker` per base URL (:func:`breaker_for`) counts the calls in flight to it and
knows whether it is *healthy*: no transient failure was reported since the last successful
probe or answered call (:meth:`Breaker.report_ok`). :meth:`Breaker.report_failure` marks it
in doubt and starts its probe loop, one thread per URL shared by every waiting call of the
process, which calls ``probe()`` every ``interval_s`` until one probe (started after the last
failure) succeeds. :func:`wait_healthy` lets a call (on any event loop) wait until one of its
URLs is healthy and tells whether a probe failed meanwhile, i.e. whether the endpoint was down
(then the failed attempt does not count against the call's retries). :func:`acquire` picks the
URL with the fewest calls in flight among the healthy ones (ties: the first) and counts the
call in; :func:`release` counts it out.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from typing import Callable, Sequence

__all__ = ["IDLE_STOP_S", "Breaker", "acquire", "breaker_for", "release", "wait_healthy"]

#: A probe loop without waiting calls stops after this long (a later call restarts it).
IDLE_STOP_S = 60.0


class Breaker:
    """Health and load of one base URL (see the module docstring)."""

    def __init__(self, url: str, probe: Callable[[], bool], interval_s: float = 2.0):
        self.url = url
        self.probe = probe
        self.interval_s = float(interval_s)
        self.in_flight = 0
        self.n_failed_probes = 0
        self.n_probes = 0
        self._last_ok = 0.0
        self._last_fail = -1.0
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = []
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        return (f"Breaker({self.url!r}, healthy={self.healthy}, in_flight={self.in_flight}, "
                f"failed_probes={self.n_failed_probes})")

    @property
    def healthy(self) -> bool:
        return self._last_fail < self._last_ok or self._last_fail < 0

    @property
    def probing(self) -> bool:
        t = self._thread
        return t is not None and t.is_alive()

    def report_failure(self) -> None:
        """A call to this URL failed for a transient reason: in doubt until a probe succeeds."""
        with self._lock:
            self._last_fail = time.monotonic()
            self._ensure_probing()

    def report_ok(self, started: float) -> None:
        """A call to this URL started at ``started`` (``time.monotonic()``) got its answer."""
        with self._lock:
            self._last_ok = max(self._last_ok, started)

    def available(self) -> bool:
        """Healthy now; if not, make sure it is being probed."""
        if self.healthy:
            return True
        with self._lock:
            self._ensure_probing()
        return False

    # -- the probe loop
    def _ensure_probing(self) -> None:  # with the lock held
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, daemon=True, name=f"collablab-probe {self.url}")
            self._thread.start()

    def _run(self) -> None:
        idle_since = time.monotonic()
        while True:
            t = time.monotonic()
            try:
                ok = bool(self.probe())
            except Exception:  # noqa: BLE001 - a probe that breaks counts as no answer
                ok = False
            with self._lock:
                self.n_probes += 1
                if ok:
                    self._last_ok = max(self._last_ok, t)
                else:
                    self.n_failed_probes += 1
                had_waiters = bool(self._waiters)
                self._notify()  # every probe result: waiters look again
                if self.healthy:
                    self._thread = None
                    return
                if had_waiters:
                    idle_since = time.monotonic()
                elif time.monotonic() - idle_since > max(IDLE_STOP_S, 10 * self.interval_s):
                    self._thread = None
                    return
            time.sleep(self.interval_s)

    def _notify(self) -> None:  # with the lock held
        for loop, fut in self._waiters:
            try:
                loop.call_soon_threadsafe(_wake, fut)
            except RuntimeError:  # that loop is closed: its waiter is gone
                pass
        self._waiters = []

    def _add_waiter(self, loop: asyncio.AbstractEventLoop, fut: asyncio.Future) -> None:
        with self._lock:
            if self.healthy:
                loop.call_soon(_wake, fut)
                return
            self._waiters.append((loop, fut))
            self._ensure_probing()

    def _remove_waiter(self, fut: asyncio.Future) -> None:
        with self._lock:
            self._waiters = [(lp, f) for lp, f in self._waiters if f is not fut]


def _wake(fut: asyncio.Future) -> None:
    if not fut.done():
        fut.set_result(None)


async def wait_healthy(breakers: Sequence[Breaker], timeout_s: float) -> bool:
    """Wait until one of ``breakers`` is healthy. Returns True when a probe failed meanwhile
    (the endpoint was down), False when it answered at once. Raises :class:`TimeoutError` when
    it is still down ``timeout_s`` after the first failed probe."""
    loop = asyncio.get_running_loop()
    failed0 = sum(b.n_failed_probes for b in breakers)
    down_since: float | None = None
    while True:
        failed = sum(b.n_failed_probes for b in breakers) > failed0
        if any(b.healthy for b in breakers):
            return failed
        if failed and down_since is None:
            down_since = time.monotonic()
        left = None if down_since is None else timeout_s - (time.monotonic() - down_since)
        if left is not None and left <= 0:
            raise TimeoutError(f"still down after {max(timeout_s, 0):g} s")
        fut = loop.create_future()
        for b in breakers:
            b._add_waiter(loop, fut)
        try:
            await asyncio.wait_for(fut, left if left is not None else 60.0)
        except asyncio.TimeoutError:
            pass  # look again
        finally:
            for b in breakers:
                b._remove_waiter(fut)


_BREAKERS: dict[str, Breaker] = {}
_LOCK = threading.Lock()
_PID = os.getpid()


def _after_fork() -> None:
    """A forked child starts with no breakers (the parent's probe threads do not exist here)."""
    global _LOCK, _PID
    _LOCK = threading.Lock()
    _BREAKERS.clear()
    _PID = os.getpid()


os.register_at_fork(after_in_child=_after_fork)


def breaker_for(url: str, probe: Callable[[], bool], interval_s: float = 2.0) -> Breaker:
    """The process-wide :class:`Breaker` of ``url`` (created on first use; the latest
    ``interval_s`` wins)."""
    global _PID
    with _LOCK:
        if os.getpid() != _PID:  # forked: the parent's probe threads and counts are not ours
            _BREAKERS.clear()
            _PID = os.getpid()
        b = _BREAKERS.get(url)
        if b is None:
            b = _BREAKERS[url] = Breaker(url, probe, interval_s)
        b.interval_s = float(interval_s)
        return b


def acquire(breakers: Sequence[Breaker]) -> Breaker:
    """The least loaded healthy breaker (all when none is healthy; ties: the first), with one
    more call in flight; give it back with :func:`release`."""
    with _LOCK:
        candidates = [b for b in breakers if b.available()] or list(breakers)
        best = min(candidates, key=lambda b: b.in_flight)
        best.in_flight += 1
        return best


def release(breaker: Breaker) -> None:
    """One call to ``breaker``'s URL is over."""
    with _LOCK:
        breaker.in_flight -= 1

