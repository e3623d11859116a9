"""Execute grid items on Ray (``run_grid(engine="ray")``): a local instance, or a cluster by
address. Each worker is a Ray actor running ``per_worker`` episodes at once (threads).

Same result dicts as :func:`.pool.results`, in completion order, so the driver stays the
only writer of the run folder. Crashes are handled by :func:`.schedule.schedule`: the items
of an actor that died are retried alone once, then recorded as ``WorkerDied``. On a cluster
the ``collablab`` package (and ``virtualhome`` when installed) is shipped with Ray's runtime
environment (``py_modules``); a local instance gets this process's import path instead (an
episode module of your own on a cluster: ship it with ``ray.init(runtime_env=...)`` before the
run). ``COLLABLAB_*`` environment variables go to every worker, set when its actor starts (the
shared LLM limiter among them); API keys are not shipped: set them in the cluster's environment. An existing Ray
connection is used as it is (and left up); Ray is imported only here, and only when this
engine is used.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

from .grid import canonical_json
from .schedule import Event, Gate, Item, schedule
from .worker import execute, failure

__all__ = ["EpisodeActor", "RayEngine", "check_available", "connect", "results", "runtime_env"]

WAIT_S = 1.0  # ray.wait slices, so Ctrl-C and budgets are seen


def check_available() -> None:
    """ValueError unless ``ray`` is installed."""
    if importlib.util.find_spec("ray") is None:
        raise ValueError("engine: 'ray' needs `pip install collablab[ray]`")


class EpisodeActor:
    """One Ray worker: runs episodes (``max_concurrency`` of them at once, in threads), with
    the driver's ``COLLABLAB_*`` variables and, on a local instance, its import path."""

    def __init__(self, env: dict[str, str], path: list[str]) -> None:
        os.environ.update(env)
        sys.path.extend(p for p in path if p not in sys.path)

    def run(self, fn: str, key: str, index: int, spec_json: str) -> dict[str, Any]:
        return execute(fn, key, index, spec_json)


def connect(address: str | None) -> None:
    """``ray.init`` unless this process is connected already (a local instance without
    ``address``; ``"auto"`` or ``"ray://host:10001"`` for a cluster)."""
    import ray

    if ray.is_initialized():
        return
    if address:
        ray.init(address=address)
    else:
        ray.init(include_dashboard=False)


def runtime_env(address: str | None) -> dict[str, Any]:
    """The actors' runtime environment: nothing for a local instance (its workers share this
    machine's packages, and start from Ray's pool of idle workers); for a cluster, the
    ``collablab`` and ``virtualhome`` packages (``py_modules``)."""
    if not address:
        return {}
    import collablab

    modules: list[Any] = [collablab]
    try:
        import virtualhome

        modules.append(virtualhome)
    except ImportError:
        pass
    return {"py_modules": modules}


class RayEngine:
    """Workers as Ray actors (see :class:`.schedule.Engine`)."""

    def __init__(self, fn: str, per_worker: int, env: Mapping[str, str], address: str | None) -> None:
        import ray

        self._ray = ray
        self.fn = fn
        options: dict[str, Any] = {"max_concurrency": per_worker, "num_cpus": 1, "max_restarts": 0}
        renv = runtime_env(address)
        if renv:
            options["runtime_env"] = renv
        self._cls = ray.remote(EpisodeActor).options(**options)
        self._init = ({k: v for k, v in env.items() if k.startswith("COLLABLAB_")},
                      [] if address else [p for p in sys.path if p and os.path.isdir(p)])
        self._actors: dict[int, Any] = {}
        self._refs: dict[Any, tuple[int, int, Item]] = {}
        self._n = 0

    def start(self) -> int:
        self._n += 1
        self._actors[self._n] = self._cls.remote(*self._init)
        return self._n

    def submit(self, worker: int, tag: int, item: Item) -> None:
        index, key, spec = item
        ref = self._actors[worker].run.remote(self.fn, key, index, canonical_json(spec))
        self._refs[ref] = (worker, tag, item)

    def _get(self, ref: Any, events: list[Event], dead: set[int]) -> None:
        ex = self._ray.exceptions
        worker, tag, item = self._refs.pop(ref)
        try:
            res = self._ray.get(ref)
        except (ex.RayActorError, ex.WorkerCrashedError, ex.ObjectLostError, ex.OwnerDiedError):
            dead.add(worker)
            return
        except ex.RayError as e:  # the result did not make it back (e.g. not serializable)
            res = failure(e, item[1], item[0], 0.0)
            res["llm"] = {}
        events.append(("done", worker, tag, res))

    def wait(self, timeout: float | None) -> list[Event]:
        if not self._refs:
            return []
        t = WAIT_S if timeout is None else min(timeout, WAIT_S)
        ready, _ = self._ray.wait(list(self._refs), num_returns=1, timeout=t)
        if ready:  # and whatever else is ready by now
            ready, _ = self._ray.wait(list(self._refs), num_returns=len(self._refs), timeout=0)
        events: list[Event] = []
        dead: set[int] = set()
        for ref in ready:
            self._get(ref, events, dead)
        for worker in sorted(dead):
            for ref in [r for r, v in self._refs.items() if v[0] == worker]:
                done, _ = self._ray.wait([ref], timeout=0)
                if done:  # finished before the actor died
                    self._get(ref, events, set())
                else:
                    self._refs.pop(ref)
            events.append(("died", worker, -1, None))
        return events

    def retire(self, worker: int) -> None:
        actor = self._actors.pop(worker, None)
        for ref in [r for r, v in self._refs.items() if v[0] == worker]:
            self._refs.pop(ref)
        if actor is not None:
            self._ray.kill(actor, no_restart=True)

    def close(self, abort: bool) -> None:
        for worker in list(self._actors):
            self.retire(worker)


def results(todo: list[Item], fn: str, *, workers: int, per_worker: int = 1, address: str | None = None,
            env: Mapping[str, str] | None = None, gate: Gate | None = None) -> Iterator[dict[str, Any]]:
    """Results of ``todo`` on ``workers`` Ray actors (at most the cluster's CPUs), in completion order."""
    check_available()
    connect(address)
    import ray

    env = dict(os.environ if env is None else env)
    cpus = int(ray.cluster_resources().get("CPU", 1))
    n = min(workers, len(todo))
    if n > cpus:
        warnings.warn(f"workers: {workers} Ray workers asked for, but the cluster has {cpus} CPUs; "
                      f"using {cpus}", stacklevel=3)
        n = cpus
    limiter_actor = _limiter_actor(env)
    engine = RayEngine(fn, per_worker, env, address)
    try:
        yield from schedule(todo, engine, workers=max(1, n), per_worker=per_worker, gate=gate)
    finally:
        if limiter_actor is not None:
            ray.kill(limiter_actor, no_restart=True)


def _limiter_actor(env: Mapping[str, str]) -> Any:
    """Create the shared LLM limiter's actor from the driver (so it lives as long as the run);
    returned only when this call created it."""
    from collablab.llm.limiter import ENV, RAY_ACTOR_NAME, limiter_config, ray_limiter_actor

    config = limiter_config(env.get(ENV, ""))
    if config is None or config[0] != "ray":
        return None
    import ray

    try:
        ray.get_actor(RAY_ACTOR_NAME, namespace=config[1])
        return None
    except ValueError:
        return ray_limiter_actor(config[1])
