"""Hand grid items to workers that each run several at once, and survive workers that die.

One scheduler for every engine (in-process, local processes, Ray): an engine only starts
workers, runs items on them and reports results and deaths (:class:`Engine`). Results come
back in completion order. A worker that dies makes its in-flight items suspects; a suspect
is run again alone (nothing else in flight anywhere), so only an item that kills its worker
alone, on its second try, is recorded as ``WorkerDied``.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from .grid import Spec

__all__ = ["Engine", "Event", "Gate", "Item", "died", "schedule"]

Item = tuple[int, str, Spec]  # (grid_index, episode_key, spec)
#: ``("done", worker, tag, result)`` or ``("died", worker, -1, None)``.
Event = tuple[str, int, int, "dict[str, Any] | None"]
#: Asked before new items are handed out: None (go on), ``"stop"`` (no more), or seconds to hold back.
Gate = Callable[[], "None | str | float"]


class Engine(Protocol):
    """What the scheduler needs of an engine."""

    def start(self) -> int:
        """Start a worker; return its id."""

    def submit(self, worker: int, tag: int, item: Item) -> None:
        """Run ``item`` on ``worker``; its result comes back as a ``done`` event with ``tag``."""

    def wait(self, timeout: float | None) -> list[Event]:
        """Block until something happens (or ``timeout``); a dead worker's finished results come
        before its ``died`` event."""

    def retire(self, worker: int) -> None:
        """Forget a dead worker (and make sure it is gone)."""

    def close(self, abort: bool) -> None:
        """Stop every worker; ``abort``: without waiting for running items."""


def died(item: Item) -> dict[str, Any]:
    """The failure result of an item that killed its worker while running alone."""
    return {"ok": False, "key": item[1], "index": item[0], "error_type": "WorkerDied",
            "error": "the worker process died (killed, out of memory or a crash in native code) "
                     "while running this episode alone, twice (if every episode dies: a script that "
                     "uses workers > 1 needs an `if __name__ == '__main__':` guard)",
            "kind": None, "traceback": "", "wall_s": 0.0, "pid": None, "llm": {}}


def schedule(todo: list[Item], engine: Engine, *, workers: int, per_worker: int,
             gate: Gate | None = None) -> Iterator[dict[str, Any]]:
    """Results of ``todo`` on up to ``workers`` workers running ``per_worker`` items each.

    Items go to the least loaded worker, a new one while fewer than ``workers`` run.
    ``gate`` is asked before new items are handed out (budgets). Leaving early (``close()``
    on the generator, an exception) stops the workers without waiting.
    """
    queue: deque[Item] = deque(todo)
    suspects: deque[Item] = deque()
    running: dict[int, dict[int, tuple[Item, bool]]] = {}  # worker -> tag -> (item, is a retry)
    tags = itertools.count()
    stopped = False
    finished = False

    def submit(worker: int, item: Item, retry: bool) -> None:
        tag = next(tags)
        running[worker][tag] = (item, retry)
        engine.submit(worker, tag, item)

    def least_loaded() -> int | None:
        loads = {w: len(t) for w, t in running.items() if len(t) < per_worker}
        best = min(loads, key=loads.__getitem__) if loads else None
        if (best is None or loads[best] > 0) and len(running) < workers:
            best = engine.start()
            running[best] = {}
        return best

    try:
        while True:
            hold: float | None = None
            n_running = sum(map(len, running.values()))
            if suspects:
                if n_running == 0:
                    worker = least_loaded()
                    assert worker is not None
                    submit(worker, suspects.popleft(), True)
            elif queue and not stopped:
                verdict = gate() if gate is not None else None
                if verdict == "stop":
                    stopped = True
                elif verdict is not None:
                    hold = float(verdict)
                else:
                    while queue:
                        worker = least_loaded()
                        if worker is None:
                            break
                        submit(worker, queue.popleft(), False)
            if not any(running.values()):
                if hold is not None:
                    time.sleep(hold)
                    continue
                if suspects:
                    continue
                break
            for kind, worker, tag, res in engine.wait(hold):
                if kind == "done":
                    running[worker].pop(tag, None)
                    assert res is not None
                    yield res
                    continue
                lost = running.pop(worker, {})
                engine.retire(worker)
                for item, retry in lost.values():
                    if retry:
                        yield died(item)
                    else:
                        suspects.append(item)
        finished = True
    finally:
        engine.close(abort=not finished)
