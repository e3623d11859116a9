"""``run_grid``: run every spec of a grid once, in parallel, durably, resumably.

The parent process is the only writer of the run folder; workers (local processes or Ray
actors, each running one or several episodes at once) return JSONL bytes. See ``store`` for
the write order that makes a crash at any moment recoverable. Before the first episode the
grid's LLM endpoints are checked (the study module's ``endpoints(spec)``); the run's LLM calls
are counted per endpoint (``RunResult.endpoints``) and may be capped by a token budget.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import signal
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .budget import Budget
from .grid import Spec, default_run_id, episode_key, normalize_specs
from .llm_hooks import check_endpoints, merge_stats, redact_text, summarize_stats, total_tokens
from .manifest import (SCHEMA, code_version, environment, mark_killed, now_iso, read_manifest, spec_fields,
                       write_manifest)
from .pool import Item, start_method
from .pool import results as results_of
from .progress import Progress
from .registry import studies, study_fn
from .store import EPISODES, FAILURES, KEY, STEPS, TIMINGS, Appender, RunLock, read_records, repair_jsonl
from .worker import resolve

__all__ = ["ENGINES", "LIMITER_DIR", "RunResult", "run_grid"]

MANIFEST_EVERY_S = 5.0
ENGINES = ("local", "ray")
LIMITER_DIR = ".limiter"  # slot files of the run's shared LLM limiter (local engine)
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.=+-]*$")


@dataclass
class RunResult:
    """What ``run_grid`` did; ``load()`` reads the records back in grid order."""

    run_dir: Path
    study: str
    run_id: str
    n_total: int
    n_done: int
    n_failed: int
    n_skipped: int  # finished before this call (resume)
    n_new: int  # finished by this call
    wall_s: float
    failures: list[dict[str, Any]] = field(default_factory=list)  # this call's failures
    status: str = ""  # complete, incomplete, budget_exhausted (as in the manifest)
    endpoints: dict[str, dict[str, Any]] = field(default_factory=dict)  # LLM calls per endpoint alias
    served: dict[str, dict[str, Any]] = field(default_factory=dict)  # preflight: the models served
    tokens: int = 0  # LLM tokens (prompt + completion) of this call

    @property
    def ok(self) -> bool:
        return self.n_done == self.n_total

    def load(self) -> tuple[Any, Any]:
        from .load import load_run

        return load_run(self.run_dir)

    def __str__(self) -> str:
        text = (f"{self.run_dir}: {self.n_done}/{self.n_total} done ({self.n_new} new, "
                f"{self.n_skipped} resumed), {self.n_failed} failed, {self.wall_s:.1f}s")
        if self.status == "budget_exhausted":
            text += f", stopped by the token budget ({self.tokens} tokens)"
        return text


def _check_name(field_name: str, value: Any) -> str:
    if not isinstance(value, str) or not _NAME.match(value):
        raise ValueError(f"{field_name}: must be a non-empty folder name of letters, digits and "
                         f"_.=+- (not starting with . or -), got {value!r}")
    return value


def _check_existing(run_dir: Path, manifest: dict[str, Any] | None, fn: str,
                    keys: list[str], done: set[str]) -> None:
    if manifest is not None:
        old_fn = manifest.get("fn")
        old_keys = [s["episode_key"] for s in manifest.get("specs", [])]
        if old_fn != fn or old_keys != keys:
            what = f"fn {old_fn!r}" if old_fn != fn else f"a different grid ({len(old_keys)} specs)"
            raise ValueError(f"run_id: {run_dir} already holds {what}; resuming needs the same fn "
                             "and specs in the same order. Pick another run_id (or leave it None).")
    unknown = done.difference(keys)
    if unknown:
        raise ValueError(f"run_id: {run_dir}/{EPISODES} holds {len(unknown)} episodes not in this "
                         f"grid (e.g. {sorted(unknown)[0]}); pick another run_id")


def _fn_defaults(fn: str) -> dict[str, Any] | None:
    """The ``DEFAULTS`` dict of ``fn``'s module, if it has one: the values a spec leaves implicit."""
    import importlib

    defaults = getattr(importlib.import_module(fn.split(":")[0]), "DEFAULTS", None)
    return dict(defaults) if isinstance(defaults, dict) else None


def _timing_summary(n: int, total: float, peak: float) -> dict[str, Any]:
    if not n:
        return {"n": 0}
    return {"n": n, "sum": round(total, 4), "mean": round(total / n, 4), "max": round(peak, 4)}



@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back while an episode is committed and counted (main thread);
    they are handled right after. (Python-level: whichever thread the OS delivers a signal
    to, its Python handler runs in the main thread, so masking the main thread is not enough.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    old = {s: h for s, h in old.items() if h is not None}  # None: not installed from Python
    for s in old:
        signal.signal(s, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        for signum in caught:
            handler = old[signum]
            if callable(handler):
                handler(signum, None)
            elif handler == signal.SIG_DFL:
                signal.raise_signal(signum)


def run_grid(specs: Sequence[dict[str, Any]], *, study: str, fn: str | None = None,
             run_id: str | None = None, out_root: str | Path = "outputs", workers: int = 2,
             progress: bool = True, params: dict[str, Any] | None = None,
             backend: str | None = None,
             validate: Callable[[Spec], Any] | None = None, engine: str = "local",
             episodes_per_worker: int = 1, ray_address: str | None = None,
             budget: Mapping[str, Any] | None = None, preflight: bool = True,
             preflight_wait_s: float = 0.0) -> RunResult:
    """Run each spec through ``fn`` once into ``<out_root>/<study>/<run_id>/``; resume if present.

    ``fn`` is ``"module:function"``, imported in each worker; it takes a spec and returns
    ``{"episode": dict, "steps": [dict, ...]}``. Without ``fn``, ``study`` must be a registered
    study (:func:`~collablab.runs.registry.studies`) and its function is used; there is no
    default. ``workers=1`` runs in this process (``engine="local"``); each worker runs
    ``episodes_per_worker`` episodes at once in threads (LLM-bound episodes: 4 processes x 4
    reach a bound of 16). ``engine="ray"``: the workers are Ray actors, on a local instance
    or on the cluster at ``ray_address``. LLM calls are bounded per endpoint across all
    workers (``$COLLABLAB_LIMITER``, set for the workers unless already set).
    ``budget`` (``max_total_tokens``, ``max_tokens_per_minute``) stops handing out episodes
    when the session's tokens reach the total (status ``budget_exhausted``) and holds them
    back while the last minute's tokens are above the rate. ``preflight``: check every LLM
    endpoint of the pending specs (the ``endpoints(spec)`` of ``fn``'s module) first, waiting up to
    ``preflight_wait_s`` for a server that is still loading its model.
    Finished episodes are skipped, failed ones (``failures.jsonl``) are retried. Everything
    is checked (``validate(spec)`` and the endpoints included) before any file is written.
    A replay of the LLM cache (``COLLABLAB_LLM_CACHE_MODE=replay``) without ``run_id`` runs
    into a fresh folder (default run id + ``-replay``) instead of resuming the original.
    """
    t_start = time.perf_counter()
    _check_name("study", study)
    if run_id is not None:
        _check_name("run_id", run_id)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers: must be an integer >= 1, got {workers!r}")
    if params is not None and not isinstance(params, dict):
        raise ValueError(f"params: must be a dict or None, got {type(params).__name__}")
    if backend is not None and not isinstance(backend, str):
        raise ValueError(f"backend: must be a label string like 'heuristic' or None, got {backend!r}")
    if validate is not None and not callable(validate):
        raise ValueError(f"validate: must be a callable spec -> None, got {validate!r}")
    if engine not in ENGINES:
        raise ValueError(f"engine: {engine!r} is not allowed; allowed: {', '.join(ENGINES)}")
    if (isinstance(episodes_per_worker, bool) or not isinstance(episodes_per_worker, int)
            or episodes_per_worker < 1):
        raise ValueError(f"episodes_per_worker: must be an integer >= 1, got {episodes_per_worker!r}")
    if ray_address is not None and (engine != "ray" or not isinstance(ray_address, str) or not ray_address):
        raise ValueError(f"ray_address: a Ray address string, only with engine='ray'; got {ray_address!r} "
                         f"with engine={engine!r}")
    if not isinstance(preflight, bool):
        raise ValueError(f"preflight: must be True or False, got {preflight!r}")
    if isinstance(preflight_wait_s, bool) or not isinstance(preflight_wait_s, (int, float)) or preflight_wait_s < 0:
        raise ValueError(f"preflight_wait_s: must be a number of seconds >= 0, got {preflight_wait_s!r}")
    if engine == "ray":
        from .ray_engine import check_available

        check_available()
    limits = Budget(budget)
    registered = fn is None
    fn = study_fn(study) if fn is None else fn
    resolve(fn)
    grid = normalize_specs(specs, validate)
    keys = [episode_key(s) for s in grid]
    if len(set(keys)) != len(keys):  # only a 48-bit hash collision could cause this
        raise ValueError("specs: two different specs got the same episode_key; please report")
    if run_id is None:
        run_id = default_run_id(grid, fn) + ("-replay" if _replaying() else "")
    run_dir = Path(out_root) / study / run_id
    env = _worker_env(engine, run_dir, run_id)
    served = _preflight(fn, grid, keys, run_dir, float(preflight_wait_s)) if preflight else {}

    run_dir.mkdir(parents=True, exist_ok=True)
    with RunLock(run_dir):
        return _run_locked(grid, keys, fn=fn, registered=registered, study=study, run_id=run_id, run_dir=run_dir,
                           workers=workers, progress=progress, params=params, backend=backend,
                           validate=validate, out_root=out_root, t_start=t_start, engine=engine,
                           per_worker=episodes_per_worker, ray_address=ray_address, limits=limits,
                           env=env, served=served)


def _replaying() -> bool:
    from collablab.llm.cache import default_cache_mode

    return default_cache_mode() == "replay"


def _worker_env(engine: str, run_dir: Path, run_id: str) -> dict[str, str]:
    """The workers' environment: this process's, with the shared LLM limiter named."""
    from collablab.llm.limiter import ENV, limiter_config

    env = dict(os.environ)
    if limiter_config() is None:  # (a bad value is a ValueError naming the variable)
        env[ENV] = (f"ray:collablab-{run_id}" if engine == "ray"
                    else f"file:{(run_dir / LIMITER_DIR).resolve()}")
    return env


def _preflight(fn: str, grid: list[Spec], keys: list[str], run_dir: Path, wait_s: float) -> dict[str, dict[str, Any]]:
    """Check the endpoints the pending specs use (``endpoints(spec)`` of ``fn``'s module), waiting up
    to ``wait_s`` for a server that is still starting."""
    endpoints = getattr(importlib.import_module(fn.split(":")[0]), "endpoints", None)
    if not callable(endpoints):
        return {}
    done = {r[KEY] for r in read_records(run_dir / EPISODES)}
    found: dict[str, Any] = {}
    for key, spec in zip(keys, grid):
        if key not in done:
            for ep in endpoints(dict(spec)) or []:
                found.setdefault(repr(ep), ep)
    return check_endpoints(found.values(), wait_s=wait_s)


def _run_locked(grid: list[Spec], keys: list[str], *, fn: str, registered: bool, study: str, run_id: str,
                run_dir: Path, workers: int, progress: bool, params: dict[str, Any] | None,
                backend: str | None, validate: Any, out_root: str | Path,
                t_start: float, engine: str, per_worker: int, ray_address: str | None,
                limits: Budget, env: dict[str, str], served: dict[str, Any]) -> RunResult:
    from collablab.llm.limiter import ENV

    old = read_manifest(run_dir)
    if old is not None:
        mark_killed(old)  # we hold the lock: a session still "running" is a dead process's
    repair_jsonl(run_dir / EPISODES)
    done = {r[KEY] for r in read_records(run_dir / EPISODES)}
    _check_existing(run_dir, old, fn, keys, done)
    repair_jsonl(run_dir / STEPS, keep=done)
    repair_jsonl(run_dir / FAILURES)
    repair_jsonl(run_dir / TIMINGS)
    failed = {r[KEY] for r in read_records(run_dir / FAILURES)} - done
    backends_seen = set(old.get("backends_seen", [])) if old else set()
    n_skipped = len(done)

    code, py_env = code_version(), environment()
    if old and old.get("code", {}).get("commit") not in (None, code["commit"]):
        warnings.warn(f"{run_dir}: resuming with code {code['commit'][:12]}, but earlier episodes "
                      f"were run with {old['code']['commit'][:12]}; see manifest sessions",
                      stacklevel=3)
    session = {"started": now_iso(), "ended": None, "status": "running", "workers": workers,
               "engine": engine, "episodes_per_worker": per_worker, "ray_address": ray_address,
               "start_method": ("ray" if engine == "ray" else start_method() if workers > 1 else "in-process"),
               "limiter": env.get(ENV) if engine == "ray" or workers > 1 else os.environ.get(ENV),
               "budget": limits.as_dict() if limits else None,
               "served": served, "endpoints": {}, "tokens": 0,
               "code": code, "python": py_env["python"], "packages": py_env["packages"],
               "params": params, "backend": backend, "n_new": 0, "n_failed": 0}
    manifest: dict[str, Any] = {
        "schema": SCHEMA, "study": study, "run_id": run_id, "fn": fn,
        # how fn was chosen: from the study registry (entry points) or given by the caller
        "fn_source": "registry" if registered else "caller",
        "studies_registered": studies(),
        "status": "running", "created": old.get("created", session["started"]) if old else session["started"],
        "updated": session["started"],
        "counts": {},
        "backend": backend if backend is not None else (old or {}).get("backend"),
        "backends_seen": sorted(backends_seen),
        "params": params if params is not None else (old or {}).get("params"),
        "fn_defaults": _fn_defaults(fn),
        "settings": {"workers": workers, "out_root": str(out_root), "progress": progress,
                     "validate": getattr(validate, "__qualname__", None) if validate else None,
                     "engine": engine, "episodes_per_worker": per_worker},
        "code": code, "environment": py_env,
        "spec_fields": spec_fields(grid),
        "specs": [{"grid_index": i, "episode_key": k, "spec": s} for i, (k, s) in enumerate(zip(keys, grid))],
        "files": {"episodes": EPISODES, "steps": STEPS, "failures": FAILURES,
                  "timings": TIMINGS + " (wall seconds per episode; kept out of the records)"},
        "sessions": [*(old or {}).get("sessions", []), session],
    }

    llm_counts: dict[str, Any] = {}

    def save(status: str) -> None:
        session["endpoints"] = summarize_stats(llm_counts, time.perf_counter() - t_start)
        session["tokens"] = limits.total
        manifest["status"] = status
        manifest["updated"] = now_iso()
        manifest["counts"] = {"total": len(grid), "done": len(done), "failed": len(failed),
                              "pending": len(grid) - len(done) - len(failed)}
        manifest["backends_seen"] = sorted(backends_seen)
        write_manifest(run_dir, manifest)

    save("running")
    todo: list[Item] = [(i, k, s) for i, (k, s) in enumerate(zip(keys, grid)) if k not in done]
    new_failures: list[dict[str, Any]] = []
    wall_sum, wall_max = 0.0, 0.0
    appender = Appender(run_dir)
    bar = Progress(len(grid), initial=len(done), label=f"{study}/{run_id}", show=progress)
    last_save = time.monotonic()
    status = "interrupted"
    if engine == "ray":
        from .ray_engine import results as ray_results

        results = ray_results(todo, fn, workers=workers, per_worker=per_worker, address=ray_address,
                              env=env, gate=limits.gate if limits else None)
    else:
        results = results_of(todo, fn, workers, per_worker=per_worker, env=env,
                             gate=limits.gate if limits else None)
    try:
        for res in results:
            llm_counts = merge_stats(llm_counts, res.get("llm") or {})
            limits.add(total_tokens(res.get("llm")))
            if res["ok"]:
                with _signals_deferred():  # the file and the manifest's count agree even on SIGTERM
                    appender.commit_episode(res["episode_line"], res["steps_blob"])
                    done.add(res["key"])
                failed.discard(res["key"])
                if res["backend"] is not None:
                    backends_seen.add(res["backend"])
                wall_sum += res["wall_s"]
                wall_max = max(wall_max, res["wall_s"])
                session["n_new"] += 1
                appender.timing({KEY: res["key"], "grid_index": res["index"],
                                 "wall_s": round(res["wall_s"], 6), "n_steps": res["n_steps"],
                                 "pid": res["pid"], "finished": now_iso()})
            else:
                rec = {KEY: res["key"], "grid_index": res["index"], "spec": grid[res["index"]],
                       "error_type": res["error_type"], "error": redact_text(res["error"]),
                       "kind": res.get("kind"), "traceback": redact_text(res["traceback"]),
                       "wall_s": round(res["wall_s"], 6), "time": now_iso()}
                appender.failure(rec)
                failed.add(res["key"])
                session["n_failed"] += 1
                new_failures.append(rec)
            bar.update(1, failed=0 if res["ok"] else 1)
            if time.monotonic() - last_save > MANIFEST_EVERY_S:
                save("running")
                last_save = time.monotonic()
        status = ("complete" if len(done) == len(grid)
                  else "budget_exhausted" if limits.exhausted else "incomplete")
    except BaseException:
        status = "interrupted"
        raise
    finally:
        results.close()  # stops the worker pool if we leave early
        bar.close()
        appender.close()
        wall = time.perf_counter() - t_start
        session.update(ended=now_iso(), status=status, wall_s=round(wall, 3),
                       episode_wall_s=_timing_summary(session["n_new"], wall_sum, wall_max),
                       episodes_per_s=round(session["n_new"] / wall, 3) if wall > 0 else None)
        save(status)
    if new_failures:
        warnings.warn(f"{len(new_failures)} of {len(todo)} episodes failed (first: "
                      f"{new_failures[0]['error_type']}: {new_failures[0]['error']}); see "
                      f"{run_dir / FAILURES}; run again to retry them", stacklevel=3)
    return RunResult(run_dir=run_dir, study=study, run_id=run_id, n_total=len(grid),
                     n_done=len(done), n_failed=len(failed), n_skipped=n_skipped,
                     n_new=session["n_new"], wall_s=time.perf_counter() - t_start,
                     failures=[{k: f[k] for k in (KEY, "error_type", "error", "kind")} for f in new_failures],
                     status=status, endpoints=session["endpoints"], served=served, tokens=limits.total)

