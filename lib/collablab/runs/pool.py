"""Execute grid items: in-process for one worker, else in a process pool that survives crashes.

Results come back in completion order as plain dicts (see ``worker.execute``). The pool
uses the forkserver (or spawn) start method, so nothing is inherited from the caller but
the import path of the episode function.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from .grid import Spec, canonical_json
from .worker import execute, watch_parent


def start_method() -> str:
    return "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"


Item = tuple[int, str, Spec]


def _died(item: Item) -> dict[str, Any]:
    return {"ok": False, "key": item[1], "index": item[0], "error_type": "WorkerDied",
            "error": "the worker process died (killed, out of memory or a crash in native code) "
                     "while running this episode alone (if every episode dies: a script that uses "
                     "workers > 1 needs an `if __name__ == '__main__':` guard)",
            "traceback": "", "wall_s": 0.0, "pid": None}


def results(todo: list[Item], fn: str, workers: int) -> Iterator[dict[str, Any]]:
    """Results of ``todo`` in completion order: in-process for one worker, else a process pool.

    If a worker process dies, the pool breaks and every episode in flight is a suspect;
    suspects are retried one at a time in a fresh pool, so only the one that kills its
    worker alone is recorded as failed.
    """
    if workers == 1 or len(todo) <= 1:
        for i, k, s in todo:
            yield execute(fn, k, i, canonical_json(s))
        return
    queue: deque[Item] = deque(todo)
    suspects: deque[Item] = deque()
    ctx = mp.get_context(start_method())
    n = min(workers, len(todo))
    while queue or suspects:
        pool = ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=watch_parent,
                                   initargs=(os.getpid(),))
        pending: dict[Future[dict[str, Any]], Item] = {}
        broken = False
        try:
            while True:
                while not broken and not (suspects and pending):
                    source = suspects if suspects else queue  # a suspect runs alone
                    if not source or len(pending) >= 2 * n:
                        break
                    item = source.popleft()
                    try:
                        fut = pool.submit(execute, fn, item[1], item[0], canonical_json(item[2]))
                    except BrokenProcessPool:
                        source.appendleft(item)
                        broken = True
                        break
                    pending[fut] = item
                    if source is suspects:
                        break
                if not pending:
                    break
                alone = len(pending) == 1
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    item = pending.pop(fut)
                    try:
                        res = fut.result()
                    except BrokenProcessPool:
                        broken = True
                        if alone:
                            yield _died(item)
                        else:
                            suspects.append(item)
                        continue
                    yield res
            if not broken:
                pool.shutdown(wait=True)
                return
        except BaseException:
            _terminate(pool)
            raise
        _terminate(pool)


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Stop a pool without waiting for running episodes (their results are not written)."""
    for p in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            p.terminate()
        except Exception:  # noqa: BLE001 - already gone
            pass
    pool.shutdown(wait=False, cancel_futures=True)
