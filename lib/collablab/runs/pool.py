"""Execute grid items on this machine: in-process for one worker, else in worker processes
that each run ``per_worker`` episodes at once (threads) and survive each other's crashes.

Results come back in completion order as plain dicts (see ``worker.execute``); the
scheduling and crash handling are :func:`.schedule.schedule`'s. Worker processes use the
forkserver (or spawn) start method, so nothing is inherited from the caller but the import
path of the episode function and the environment passed in.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as wait_any
from typing import Any

from .grid import canonical_json
from .schedule import Event, Gate, Item, schedule
from .worker import execute, serve

__all__ = ["InProcess", "Item", "Processes", "Threads", "results", "start_method"]


def start_method() -> str:
    return "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"


def _args(fn: str, item: Item) -> tuple[str, str, int, str]:
    index, key, spec = item
    return fn, key, index, canonical_json(spec)


class InProcess:
    """One worker: this process's main thread, one item at a time (run inside :meth:`wait`)."""

    def __init__(self, fn: str) -> None:
        self.fn = fn
        self._next: tuple[int, Item] | None = None

    def start(self) -> int:
        return 0

    def submit(self, worker: int, tag: int, item: Item) -> None:
        self._next = (tag, item)

    def wait(self, timeout: float | None) -> list[Event]:
        if self._next is None:
            return []
        tag, item = self._next
        self._next = None
        return [("done", 0, tag, execute(*_args(self.fn, item)))]

    def retire(self, worker: int) -> None:
        pass

    def close(self, abort: bool) -> None:
        self._next = None


class Threads:
    """One worker: a thread pool of this process."""

    def __init__(self, fn: str, per_worker: int) -> None:
        self.fn = fn
        self._pool = ThreadPoolExecutor(per_worker, thread_name_prefix="collablab-episode")
        self._futures: dict[Future[dict[str, Any]], int] = {}

    def start(self) -> int:
        return 0

    def submit(self, worker: int, tag: int, item: Item) -> None:
        self._futures[self._pool.submit(execute, *_args(self.fn, item))] = tag

    def wait(self, timeout: float | None) -> list[Event]:
        finished, _ = wait(self._futures, timeout=timeout, return_when=FIRST_COMPLETED)
        return [("done", 0, self._futures.pop(f), f.result()) for f in finished]

    def retire(self, worker: int) -> None:
        pass

    def close(self, abort: bool) -> None:
        self._pool.shutdown(wait=not abort, cancel_futures=True)


class Processes:
    """Worker processes, each talking over its own pipe (``worker.serve``)."""

    def __init__(self, fn: str, per_worker: int, env: Mapping[str, str]) -> None:
        self.fn = fn
        self.per_worker = per_worker
        self.env = dict(env)
        self._ctx = mp.get_context(start_method())
        self._procs: dict[int, tuple[Any, Connection]] = {}
        self._n = 0

    def start(self) -> int:
        ours, theirs = self._ctx.Pipe(duplex=True)
        proc = self._ctx.Process(target=serve, args=(theirs, os.getpid(), self.per_worker, self.env),
                                 name=f"collablab-worker-{self._n}")
        proc.start()
        theirs.close()
        self._n += 1
        self._procs[self._n] = (proc, ours)
        return self._n

    def submit(self, worker: int, tag: int, item: Item) -> None:
        try:
            self._procs[worker][1].send(("run", tag, *_args(self.fn, item)))
        except OSError:  # it died; wait() reports that
            pass

    def _drain(self, worker: int, events: list[Event]) -> bool:
        """Move what ``worker`` sent into ``events``; False once its pipe is closed."""
        conn = self._procs[worker][1]
        try:
            while conn.poll():
                _, tag, res = conn.recv()
                events.append(("done", worker, tag, res))
        except (EOFError, OSError):
            return False
        return True

    def wait(self, timeout: float | None) -> list[Event]:
        by_handle: dict[Any, int] = {}
        for w, (proc, conn) in self._procs.items():
            by_handle[conn] = by_handle[proc.sentinel] = w
        ready = wait_any(list(by_handle), timeout=timeout)
        events: list[Event] = []
        dead: list[int] = []
        for w in sorted({by_handle[h] for h in ready}):
            proc = self._procs[w][0]
            if not self._drain(w, events) or not proc.is_alive():
                proc.join(5)
                dead.append(w)
        events += [("died", w, -1, None) for w in dead]
        return events

    def retire(self, worker: int) -> None:
        proc, conn = self._procs.pop(worker)
        _stop(proc)
        conn.close()

    def close(self, abort: bool) -> None:
        procs, self._procs = self._procs, {}
        for proc, conn in procs.values():
            if abort:
                proc.terminate()
            conn.close()  # a worker ends when its pipe closes
        for proc, _ in procs.values():
            _stop(proc)


def _stop(proc: Any, grace_s: float = 10.0) -> None:
    proc.join(grace_s)
    if proc.is_alive():
        proc.kill()
        proc.join()


def results(todo: list[Item], fn: str, workers: int, *, per_worker: int = 1,
            env: Mapping[str, str] | None = None, gate: Gate | None = None) -> Iterator[dict[str, Any]]:
    """Results of ``todo`` in completion order: in this process for one worker (threads when
    ``per_worker`` > 1), else in ``workers`` processes running ``per_worker`` episodes each.

    ``env`` is the worker processes' environment (default: this process's). A dying worker
    process makes its in-flight episodes suspects, each retried alone; only one that kills
    its worker again, alone, is recorded as failed (``WorkerDied``).
    """
    if workers == 1 or len(todo) <= 1:
        engine: Any = InProcess(fn) if per_worker == 1 else Threads(fn, per_worker)
        return schedule(todo, engine, workers=1, per_worker=per_worker, gate=gate)
    n = min(workers, len(todo))
    engine = Processes(fn, per_worker, os.environ if env is None else env)
    return schedule(todo, engine, workers=n, per_worker=per_worker, gate=gate)
