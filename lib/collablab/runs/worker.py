"""Run one spec and turn its records into JSONL bytes (in a worker process or in-process),
and the loop of a worker process (:func:`serve`).

Only plain data crosses processes: the ``fn`` import path and the spec go in; JSONL bytes,
a timing, the LLM call counts and (on failure) an error description come out. Serializing
in the worker keeps the parent light: it writes bytes and never holds step dicts. Every
recorded text is redacted here (the process that ran the episode knows its secrets).
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .grid import to_json_value
from .llm_hooks import endpoint_error_kind, redact_jsonl, redact_text, take_stats
from .store import INDEX, KEY

__all__ = ["execute", "failure", "resolve", "serialize", "serve", "watch_parent"]

_FNS: dict[str, Callable[[dict[str, Any]], Any]] = {}
_TRACEBACK_TAIL = 12
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=to_json_value)  # reused: ~2x faster than dumps


def resolve(fn: str) -> Callable[[dict[str, Any]], Any]:
    """Import ``"package.module:function"``; ``ValueError`` naming ``fn`` when that fails."""
    if fn in _FNS:
        return _FNS[fn]
    if not isinstance(fn, str) or fn.count(":") != 1:
        raise ValueError(f"fn: expected an import path 'package.module:function', got {fn!r}")
    mod_name, attr = fn.split(":")
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as e:
        raise ValueError(f"fn: cannot import module {mod_name!r} ({e})") from e
    func = mod
    for part in attr.split("."):
        func = getattr(func, part, None)
        if func is None:
            raise ValueError(f"fn: module {mod_name!r} has no attribute {attr!r}")
    if not callable(func):
        raise ValueError(f"fn: {fn!r} is not callable")
    _FNS[fn] = func
    return func


def _line(record: Any, key: str, index: int, what: str) -> bytes:
    if not isinstance(record, dict):
        raise TypeError(f"{what} must be a dict, got {type(record).__name__}")
    for reserved, value in ((KEY, key), (INDEX, index)):
        if reserved in record and record[reserved] != value:
            raise ValueError(f"{what} has a field {reserved!r} ({record[reserved]!r}); that name is "
                             "reserved by collablab.runs")
    row = {KEY: key, INDEX: index, **record}
    return (_ENCODER.encode(row) + "\n").encode("utf-8")


def serialize(result: Any, key: str, index: int) -> tuple[bytes, bytes, int, str | None]:
    """``(episode_line, steps_blob, n_steps, backend)`` from ``{"episode": {...}, "steps": [...]}``."""
    if not isinstance(result, dict) or "episode" not in result or "steps" not in result:
        got = sorted(result) if isinstance(result, dict) else type(result).__name__
        raise TypeError(f"episode function must return {{'episode': dict, 'steps': list}}, got {got}")
    steps = result["steps"]
    if not isinstance(steps, list):
        raise TypeError(f"'steps' must be a list of dicts, got {type(steps).__name__}")
    episode_line = redact_jsonl(_line(result["episode"], key, index, "'episode'"))
    blob = redact_jsonl(b"".join(_line(s, key, index, f"'steps'[{i}]") for i, s in enumerate(steps)))
    backend = result["episode"].get("backend")
    return episode_line, blob, len(steps), None if backend is None else str(backend)


def execute(fn: str, key: str, index: int, spec_json: str) -> dict[str, Any]:
    """Run ``fn(spec)``; never raises for episode errors, returns them as data.

    ``"llm"`` holds the LLM call counts of this process since the previous episode ended
    (``collablab.llm.stats.take()``; with several episodes at once in a process they are
    spread over them, their sum is exact).
    """
    t0 = time.perf_counter()
    try:
        func = resolve(fn)
        result = func(json.loads(spec_json))
        wall = time.perf_counter() - t0
        episode_line, blob, n_steps, backend = serialize(result, key, index)
        del result
        res = {"ok": True, "key": key, "index": index, "episode_line": episode_line,
               "steps_blob": blob, "n_steps": n_steps, "backend": backend,
               "wall_s": wall, "pid": os.getpid()}
    except Exception as e:  # noqa: BLE001 - any episode error is recorded, the grid goes on
        res = failure(e, key, index, time.perf_counter() - t0)
    res["llm"] = take_stats()
    return res


def failure(e: BaseException, key: str, index: int, wall_s: float) -> dict[str, Any]:
    """The result of an episode that raised ``e`` (texts redacted, ``kind`` of an EndpointError)."""
    tb = traceback.format_exception(e)
    lines = "".join(tb).rstrip().splitlines()
    return {"ok": False, "key": key, "index": index, "error_type": type(e).__name__,
            "error": redact_text(str(e)), "kind": endpoint_error_kind(e),
            "traceback": redact_text("\n".join(lines[-_TRACEBACK_TAIL:])),
            "wall_s": wall_s, "pid": os.getpid()}


def serve(conn: Any, parent_pid: int, per_worker: int, env: dict[str, str]) -> None:
    """A worker process: take ``("run", tag, fn, key, index, spec_json)`` messages from
    ``conn``, run up to ``per_worker`` at once (threads) and send ``("done", tag, result)``
    back, until ``conn`` closes. ``env`` becomes the process environment (the forkserver's is
    older than the caller's). SIGINT is the parent's business, not ours."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.clear()
    os.environ.update(env)
    watch_parent(parent_pid)
    send_lock = threading.Lock()

    def run(tag: int, fn: str, key: str, index: int, spec_json: str) -> None:
        try:
            res = execute(fn, key, index, spec_json)
        except BaseException as e:  # noqa: BLE001 - SystemExit in an episode thread, etc.
            res = failure(e, key, index, 0.0)
            res["llm"] = {}
        with send_lock:
            conn.send(("done", tag, res))

    threads = ThreadPoolExecutor(per_worker, thread_name_prefix="collablab-episode") if per_worker > 1 else None
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            break
        if threads is None:
            run(*msg[1:])
        else:
            threads.submit(run, *msg[1:])
    if threads is not None:
        threads.shutdown(wait=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")  # a zombie is dead
    except (OSError, IndexError):
        return True


def watch_parent(pid: int, interval_s: float = 0.5) -> None:
    """Pool initializer: end this worker when the run's parent process is gone.

    Workers hang off the forkserver, not the parent, so without this a SIGKILLed parent
    (a killed notebook kernel, the OOM killer) would leave them idle forever.
    """
    def loop() -> None:
        while _alive(pid):
            time.sleep(interval_s)
        os._exit(0)

    threading.Thread(target=loop, name="collablab-runs-parent-watch", daemon=True).start()
