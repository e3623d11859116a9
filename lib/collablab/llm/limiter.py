"""A bound on calls in flight per endpoint alias (:func:`endpoint_limiter`): per process, shared
across threads and event loops, and optionally across processes and machines.

``$COLLABLAB_LIMITER`` picks the shared part: unset, the bound holds per process;
``file:<dir>`` -> :class:`FileLimiter` (slot files locked with ``flock``: every process on one
machine that uses the same folder shares the bound, and the OS frees a dead holder's slot);
``ray:<namespace>`` -> :class:`RayLimiter` (a named Ray actor in that namespace: every process
of a Ray cluster shares the bound; a holder that dies stops renewing its leases, which expire).
With a shared part, :func:`endpoint_limiter` returns a :class:`SharedLimiter`: the process's
own limiter first, then the shared one, so idle waiters do not poll.
``collablab.runs.run_grid`` sets the variable for its workers unless the caller set it.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import re
import threading
import time
import uuid
from collections import deque
from pathlib import Path
from typing import Any

__all__ = ["ENV", "RAY_ACTOR_NAME", "EndpointLimiter", "FileLimiter", "LimiterActor", "RayLimiter",
           "SharedLimiter", "endpoint_limiter", "limiter_config", "ray_limiter_actor"]

ENV = "COLLABLAB_LIMITER"
RAY_ACTOR_NAME = "collablab-limiter"


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




# ------------------------------------------------------------------------- across processes


def _slot_name(alias: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", alias)[:40]
    return f"{safe}-{hashlib.sha256(alias.encode()).hexdigest()[:8]}"


class _Slots:
    """What the cross-process limiters share: a settable bound and the slots this object holds."""

    _limit: int
    _held: list[Any]

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def held(self) -> int:
        """Slots this object holds now."""
        return len(self._held)

    def set_limit(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("limit must be >= 1")
        self._limit = int(limit)


class FileLimiter(_Slots):
    """A bound shared by every process that uses the same folder: ``limit`` slot files, each
    held with a non-blocking ``flock``. Waiters poll with a small growing backoff; a process
    that dies drops its locks (the OS does), so a crash cannot leak a slot.

    ``acquire``/``release`` are thread-safe; ``release`` frees any one slot this object holds.
    """

    def __init__(self, alias: str, limit: int, directory: str | os.PathLike[str], *,
                 poll_min_s: float = 0.002, poll_max_s: float = 0.025):
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit: must be an integer >= 1, got {limit!r}")
        self.alias = alias
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._name = _slot_name(alias)
        self._limit = limit
        self._poll = (float(poll_min_s), float(poll_max_s))
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._fds: dict[int, int] = {}  # slot -> open fd (one open file description per slot)
        self._held: list[int] = []

    def __repr__(self) -> str:
        return f"FileLimiter({self.alias!r}, limit={self._limit}, held={len(self._held)}, dir={str(self.directory)!r})"

    def slot_path(self, slot: int) -> Path:
        return self.directory / f"{self._name}.{slot}.slot"

    def _fd(self, slot: int) -> int:
        if self._pid != os.getpid():  # forked: the inherited descriptions are the parent's locks
            self._fds, self._held, self._pid = {}, [], os.getpid()
        fd = self._fds.get(slot)
        if fd is None:
            fd = self._fds[slot] = os.open(self.slot_path(slot), os.O_RDWR | os.O_CREAT, 0o644)
        return fd

    def try_acquire(self) -> bool:
        """Take a free slot if there is one, without waiting."""
        import fcntl

        with self._lock:
            n = self._limit
            start = random.randrange(n)
            for j in range(n):
                slot = (start + j) % n
                if slot in self._held:
                    continue
                try:
                    fcntl.flock(self._fd(slot), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue
                self._held.append(slot)
                return True
        return False

    async def acquire(self) -> None:
        delay = self._poll[0]
        while not self.try_acquire():
            await asyncio.sleep(delay * random.uniform(0.5, 1.5))
            delay = min(delay * 2, self._poll[1])

    def release(self) -> None:
        import fcntl

        with self._lock:
            if not self._held:
                raise RuntimeError("FileLimiter released too many times")
            slot = self._held.pop()
            fcntl.flock(self._fds[slot], fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the slot files (releasing any slot still held)."""
        with self._lock:
            for fd in self._fds.values():
                os.close(fd)
            self._fds, self._held = {}, []


class LimiterActor:
    """The Ray actor behind :class:`RayLimiter` (run it async: its methods are coroutines or
    plain functions on the actor's one event loop). Per alias a counting semaphore whose
    slots are leases: a lease not renewed within ``lease_s`` expires and frees its slot."""

    def __init__(self, lease_s: float = 30.0):
        self._lease_s = float(lease_s)
        self._sems: dict[str, dict[str, Any]] = {}
        self._gone: dict[str, float] = {}  # released before it was granted (the release overtook it)
        self._reaper: asyncio.Task[None] | None = None

    def _sem(self, alias: str, limit: int | None = None) -> dict[str, Any]:
        st = self._sems.get(alias)
        if st is None:
            st = self._sems[alias] = {"limit": int(limit or 1), "held": {}, "waiters": deque(), "peak": 0}
        elif limit is not None:
            st["limit"] = int(limit)
        return st

    def _dispatch(self, st: dict[str, Any]) -> None:
        now = time.monotonic()
        for lease in [k for k, t in st["held"].items() if t < now]:
            del st["held"][lease]
        while st["waiters"] and len(st["held"]) < st["limit"]:
            lease, fut = st["waiters"].popleft()
            if fut.done():
                continue
            st["held"][lease] = now + self._lease_s
            st["peak"] = max(st["peak"], len(st["held"]))
            fut.set_result(True)

    async def _reap(self) -> None:
        while True:
            await asyncio.sleep(min(1.0, self._lease_s / 4))
            for st in self._sems.values():
                self._dispatch(st)
            now = time.monotonic()
            self._gone = {k: t for k, t in self._gone.items() if t > now}

    async def acquire(self, alias: str, limit: int, lease: str) -> bool:
        """Wait for a slot of ``alias`` and hold it as ``lease``; False if released meanwhile."""
        if self._reaper is None:
            self._reaper = asyncio.get_running_loop().create_task(self._reap())
        if self._gone.pop(lease, None) is not None:
            return False
        st = self._sem(alias, limit)
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        st["waiters"].append((lease, fut))
        self._dispatch(st)
        return await fut

    def renew(self, alias: str, leases: list[str]) -> int:
        """Extend the given leases; returns how many were still held."""
        st = self._sem(alias)
        until = time.monotonic() + self._lease_s
        n = 0
        for lease in leases:
            if lease in st["held"]:
                st["held"][lease] = until
                n += 1
        return n

    def release(self, alias: str, lease: str) -> None:
        st = self._sem(alias)
        if st["held"].pop(lease, None) is None:
            for entry in st["waiters"]:
                if entry[0] == lease:
                    st["waiters"].remove(entry)
                    if not entry[1].done():
                        entry[1].set_result(False)
                    break
            else:
                self._gone[lease] = time.monotonic() + 10 * self._lease_s
        self._dispatch(st)

    def stats(self) -> dict[str, dict[str, int]]:
        """``{alias: {"limit", "held", "waiting", "peak"}}``."""
        return {a: {"limit": st["limit"], "held": len(st["held"]), "waiting": len(st["waiters"]),
                    "peak": st["peak"]} for a, st in self._sems.items()}

    def reset_peak(self, alias: str) -> None:
        st = self._sem(alias)
        st["peak"] = len(st["held"])


def ray_limiter_actor(namespace: str, *, lease_s: float = 30.0) -> Any:
    """The named limiter actor of ``namespace`` (created if missing, owned by the caller: create
    it from the driver so it lives as long as the run). Needs a connected Ray."""
    import ray

    if not ray.is_initialized():
        raise ValueError(f"{ENV}: ray:{namespace} needs a connected Ray in this process (ray.init)")
    try:
        return ray.get_actor(RAY_ACTOR_NAME, namespace=namespace)
    except ValueError:
        pass
    cls = ray.remote(LimiterActor)
    return cls.options(name=RAY_ACTOR_NAME, namespace=namespace, get_if_exists=True, num_cpus=0,
                       max_concurrency=100_000).remote(lease_s)


class RayLimiter(_Slots):
    """A bound shared by every process of a Ray cluster, held by the named
    :class:`LimiterActor` of ``namespace``. Each slot is a lease renewed in the background
    while held; a process that dies stops renewing, and its slots free after ``lease_s``."""

    def __init__(self, alias: str, limit: int, namespace: str, *, lease_s: float = 30.0):
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit: must be an integer >= 1, got {limit!r}")
        self.alias = alias
        self.namespace = namespace
        self._limit = limit
        self._lease_s = float(lease_s)
        self._actor = ray_limiter_actor(namespace, lease_s=lease_s)
        self._lock = threading.Lock()
        self._held: list[str] = []
        self._renewer: threading.Thread | None = None

    def __repr__(self) -> str:
        return f"RayLimiter({self.alias!r}, limit={self._limit}, held={len(self._held)}, namespace={self.namespace!r})"

    def _renew_loop(self) -> None:
        while True:
            time.sleep(self._lease_s / 3)
            with self._lock:
                leases = list(self._held)
            if leases:
                try:
                    self._actor.renew.remote(self.alias, leases)
                except Exception:  # noqa: BLE001 - Ray is shutting down
                    return

    async def acquire(self) -> None:
        lease = uuid.uuid4().hex
        ref = self._actor.acquire.remote(self.alias, self._limit, lease)
        try:
            ok = await asyncio.wrap_future(ref.future())
        except BaseException:
            self._actor.release.remote(self.alias, lease)  # whether granted or still queued
            raise
        if not ok:
            raise RuntimeError(f"RayLimiter: lease {lease} of {self.alias!r} was released before it was granted")
        with self._lock:
            self._held.append(lease)
            if self._renewer is None:
                self._renewer = threading.Thread(target=self._renew_loop, daemon=True,
                                                 name=f"collablab-lease-{self.alias}")
                self._renewer.start()

    def release(self) -> None:
        with self._lock:
            if not self._held:
                raise RuntimeError("RayLimiter released too many times")
            lease = self._held.pop()
        self._actor.release.remote(self.alias, lease)

    def stats(self) -> dict[str, int]:
        """The actor's counts for this alias: limit, held, waiting, peak (across the cluster)."""
        import ray

        return ray.get(self._actor.stats.remote()).get(self.alias, {})


class SharedLimiter:
    """The process's own :class:`EndpointLimiter` first, then a shared one (file or Ray):
    ``in_flight``/``max_in_flight`` count this process's calls."""

    def __init__(self, local: EndpointLimiter, shared: FileLimiter | RayLimiter):
        self.local = local
        self.shared = shared
        self.alias = local.alias

    def __repr__(self) -> str:
        return f"SharedLimiter({self.local!r}, {self.shared!r})"

    @property
    def limit(self) -> int:
        return self.local.limit

    @property
    def in_flight(self) -> int:
        return self.local.in_flight

    @property
    def max_in_flight(self) -> int:
        return self.local.max_in_flight

    @property
    def waiting(self) -> int:
        return self.local.waiting

    def reset_peak(self) -> None:
        self.local.reset_peak()

    def set_limit(self, limit: int) -> None:
        self.local.set_limit(limit)
        self.shared.set_limit(limit)

    async def acquire(self) -> None:
        await self.local.acquire()
        try:
            await self.shared.acquire()
        except BaseException:
            self.local.release()
            raise

    def release(self) -> None:
        try:
            self.shared.release()
        finally:
            self.local.release()

    async def __aenter__(self) -> "SharedLimiter":
        await self.acquire()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.release()


def limiter_config(value: str | None = None) -> tuple[str, str] | None:
    """``("file", dir)``, ``("ray", namespace)`` or None from ``value`` (default ``$COLLABLAB_LIMITER``)."""
    value = os.environ.get(ENV, "") if value is None else value
    value = value.strip()
    if not value:
        return None
    kind, _, arg = value.partition(":")
    if kind not in ("file", "ray") or not arg:
        raise ValueError(f"{ENV}: {value!r} is not allowed; use file:<folder> or ray:<namespace>")
    return kind, arg


_LIMITERS: dict[str, EndpointLimiter] = {}
_SHARED: dict[tuple[str, str, str], SharedLimiter] = {}
_LIMITERS_LOCK = threading.Lock()


def endpoint_limiter(alias: str, limit: int | None = None) -> EndpointLimiter | SharedLimiter:
    """The limiter of an endpoint alias in this process (created on first use); with
    ``$COLLABLAB_LIMITER`` set, wrapped around the shared limiter it names.

    Passing ``limit`` (re)sets the bound; the latest spec using the alias wins.
    """
    config = limiter_config()
    with _LIMITERS_LOCK:
        lim = _LIMITERS.get(alias)
        if lim is None:
            lim = _LIMITERS[alias] = EndpointLimiter(alias, limit or 4)
        elif limit is not None and limit != lim.limit:
            lim.set_limit(limit)
        if config is None:
            return lim
        shared = _SHARED.get((alias, *config))
        if shared is None:
            kind, arg = config
            other: FileLimiter | RayLimiter = (FileLimiter(alias, lim.limit, arg) if kind == "file"
                                               else RayLimiter(alias, lim.limit, arg))
            shared = _SHARED[(alias, *config)] = SharedLimiter(lim, other)
        elif shared.shared.limit != lim.limit:
            shared.shared.set_limit(lim.limit)
        return shared
