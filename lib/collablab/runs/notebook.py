"""A notebook's parameters as the run records them (the plain values among the notebook's
globals: the tagged ``parameters`` cell with papermill's injected values applied), and a
notebook's grid run with resume under a run id named by its specs and the code version.

Two environment variables let the ``collablab`` command see a notebook's run from outside:
``COLLABLAB_DRY_RUN=<file>`` makes :func:`run_notebook_grid` append what it would run to
``<file>`` (one JSON line) and raise :class:`DryRun` instead of running any episode;
``COLLABLAB_RUN_RECORD=<file>`` makes it append what it ran.

Bad input stops a notebook before its first episode with a :class:`ParameterError`: a study's
notebook entry checks every parameter inside :func:`parameter_checks` (one line naming the
parameter and its allowed values) and its model endpoints with :func:`preflight_endpoints`
before building anything costly; ``collablab run`` exits 2 on it. An endpoint that does not answer
counts as bad input too (the URL is wrong, or the server is not up yet: nothing ran, the message
says to start it or to wait for it with ``--wait-for-server``), as the docs promised.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from .fingerprint import code_fingerprint
from .grid import default_run_id, episode_key, normalize_specs
from .llm_hooks import check_endpoints, preflight_error_kind
from .load import load_run
from .paths import outputs_dir
from .runner import ENGINES, run_grid
from .spec_checks import check_choice, check_int, check_str
from .store import EPISODES, FAILURES, KEY, read_records

__all__ = ["DRY_RUN_ENV", "RECORD_ENV", "SHOW_REQUESTS_ENV", "DryRun", "ParameterError", "append_record", "cache_mode",
           "check_paper_models", "check_run_parameters", "llm_option_keys", "notebook_parameters", "parameter_checks", "pending_counts",
           "preflight_endpoints", "run_notebook_grid"]

DRY_RUN_ENV = "COLLABLAB_DRY_RUN"
#: Set (to anything) with :data:`DRY_RUN_ENV`: the dry run's plan also holds the first request
#: body of each role (``requests``, :func:`.show_requests.sample_requests`).
SHOW_REQUESTS_ENV = "COLLABLAB_SHOW_REQUESTS"
RECORD_ENV = "COLLABLAB_RUN_RECORD"
_PLAIN = (str, int, float, bool, type(None))
_IPYTHON = {"In", "Out", "exit", "quit", "get_ipython"}
#: run_grid options a notebook may have as parameters (passed on only when set).
_ENGINE_PARAMS = {"engine": "local", "ray_address": None, "episodes_per_worker": 1}


class DryRun(Exception):
    """Raised instead of running a grid under ``COLLABLAB_DRY_RUN``; ``.plan`` is what would run."""

    def __init__(self, plan: dict[str, Any]) -> None:
        self.plan = plan
        super().__init__(f"dry run: {plan['study']} would run {plan['n_pending']} of {plan['n_total']} "
                         f"episodes into {plan['run_dir']} ({plan['n_done']} done)")


class ParameterError(ValueError):
    """A notebook parameter is bad (or names an endpoint that answers but rejects the key, does not
    serve the model, or is no OpenAI-compatible server); ``collablab run`` exits 2 on it."""


@contextlib.contextmanager
def parameter_checks() -> Iterator[None]:
    """Turn a ValueError raised inside into a :class:`ParameterError` with the same one-line message
    (an endpoint that does not answer also says how to wait for it)."""
    try:
        yield
    except ParameterError:
        raise
    except ValueError as e:
        line = str(e).strip().splitlines()[0] if str(e).strip() else repr(e)
        if preflight_error_kind(e) == "transport":
            line += " (no episode ran: start it, or wait for it with --wait-for-server S)"
        raise ParameterError(line) from None


#: Cache modes a notebook's ``llm_cache_mode`` takes ("": the environment's, else rw).
_CACHE_MODES = ("", "rw", "replay", "off")


def check_run_parameters(P: Mapping[str, Any], llm_keys: Collection[str] = ()) -> None:
    """Check the parameters every notebook shares, those of them ``P`` has: ``workers``,
    ``episodes_per_worker``, ``engine``, ``ray_address``, ``n_resamples``, ``run_id``, ``read_run``,
    ``llm_cache_mode``, ``api_key_env``, ``llm_options`` (a mapping of spec keys from ``llm_keys``)
    and ``paper_models``. ValueError naming the parameter."""
    for key in ("workers", "episodes_per_worker", "n_resamples"):
        if key in P:
            check_int(P, key, 1)
    if "engine" in P:
        check_choice(P, "engine", ENGINES)
    for key in ("ray_address", "run_id", "read_run"):
        if key in P:
            check_str(P, key)
    if P.get("ray_address") and P.get("engine") != "ray":
        raise ValueError(f"ray_address: {P['ray_address']!r} is not allowed with engine {P.get('engine')!r}; "
                         "allowed: a Ray address with engine 'ray', else \"\"")
    if "llm_cache_mode" in P and (P["llm_cache_mode"] or "") not in _CACHE_MODES:
        raise ValueError(f"llm_cache_mode: {P['llm_cache_mode']!r} is not allowed; allowed: \"\" (the "
                         f"environment's, else rw), {', '.join(_CACHE_MODES[1:])}")
    if "api_key_env" in P:
        from collablab.llm.types import check_key_env_name  # lazily: offline notebooks need no llm import

        check_key_env_name(P["api_key_env"])
    if "paper_models" in P:
        check_paper_models(P["paper_models"])
    if "llm_options" in P:
        opts = P["llm_options"]
        if not isinstance(opts, Mapping):
            raise ValueError(f"llm_options: {opts!r} is not allowed; allowed: a mapping of spec keys "
                             f"({', '.join(llm_keys)})")
        for k in opts:
            if k not in llm_keys:
                raise ValueError(f"llm_options: {k!r} is not allowed; allowed: {', '.join(llm_keys)}")


def check_paper_models(value: Any) -> dict[str, str]:
    """A notebook's ``paper_models``: a mapping of served model id → the paper's name for it (both
    non-empty text; ``analysis.beside.paper_model`` reads it before the study's defaults); ValueError
    naming the parameter otherwise."""
    if not isinstance(value, Mapping):
        raise ValueError(f"paper_models: {value!r} is not allowed; allowed: a mapping of served model id -> "
                         "the paper's model name, e.g. {\"my-org/qwen3-vl-32b-awq\": \"Qwen3-VL-32B\"}")
    for k, v in value.items():
        if not (isinstance(k, str) and k and isinstance(v, str) and v):
            raise ValueError(f"paper_models: {k!r}: {v!r} is not allowed; allowed: text -> text (served id -> "
                             "paper model name)")
    return dict(value)


def preflight_endpoints(endpoints: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """Check ``endpoints`` (``EndpointSpec`` objects) now, before a notebook builds anything costly:
    key set, server answers, model served (:func:`collablab.llm.check_endpoints`). A bad key, URL or
    model, or a server that does not answer, raises :class:`ParameterError` (``collablab run``: exit 2). Returns what each serves;
    under ``COLLABLAB_DRY_RUN`` it checks nothing."""
    if os.environ.get(DRY_RUN_ENV):  # a dry run runs no episode: it needs no server
        return {}
    with parameter_checks():
        return check_endpoints(endpoints)


def llm_option_keys(spec_defaults: Mapping[str, Any]) -> tuple[str, ...]:
    """The spec keys a notebook's ``llm_options`` may set: the study's ``llm_*`` keys
    (``llm_replicas``, ``llm_extra_body``, ``llm_outage_wait_s``, ``llm_max_concurrency``, ...) but
    ``llm_cache_mode``, a parameter of its own, its inference settings (:data:`INFERENCE_KEYS`:
    ``temperature``, ``max_tokens``, ``thinking``; the defaults are the paper's) and how its model
    agents run where the study has them (:data:`AGENT_KEYS`: MECoBench's ``pipeline``,
    ``multimodal``, ``grounding``, ``structured_mode``)."""
    return tuple(k for k in spec_defaults
                 if (k.startswith("llm_") and k != "llm_cache_mode") or k in INFERENCE_KEYS + AGENT_KEYS)


#: Inference settings a notebook's ``llm_options`` may set (docs/llm_backends.md, per study).
INFERENCE_KEYS = ("temperature", "max_tokens", "thinking")
#: How a study's model agents run, which a notebook's ``llm_options`` may set when the study has the key.
AGENT_KEYS = ("pipeline", "multimodal", "grounding", "structured_mode")


def _plain(v: Any) -> bool:
    if isinstance(v, _PLAIN):
        return True
    if isinstance(v, (list, tuple)):
        return all(_plain(x) for x in v)
    if isinstance(v, Mapping):
        return all(isinstance(k, str) and _plain(x) for k, x in v.items())
    return False


def notebook_parameters(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """``{name: value}`` of the plain values (numbers, strings, lists, dicts) among ``namespace``.

    Call it as ``parameters(globals())`` in the cell right after the parameters cell, before
    anything else is defined: then it holds exactly the parameters, with the values papermill
    injected (DESIGN.md habit 1: the parameters cell has typed values only). Names starting
    with ``_`` and IPython's own are left out.
    """
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in namespace.items()
            if not k.startswith("_") and k not in _IPYTHON and _plain(v)}


def cache_mode(P: Mapping[str, Any]) -> str:
    """The effective LLM cache mode: ``P["llm_cache_mode"]``, else the client's default
    (``$COLLABLAB_LLM_CACHE_MODE``, else rw: :func:`collablab.llm.cache.default_cache_mode`)."""
    if P.get("llm_cache_mode"):
        return str(P["llm_cache_mode"])
    from collablab.llm.cache import default_cache_mode  # lazily: offline notebooks need no llm import

    return default_cache_mode()


def pending_counts(grid: list[dict[str, Any]], run_dir: str | Path,
                   validate: Callable[[dict[str, Any]], Any] | None = None) -> dict[str, int]:
    """``{"n_total", "n_done", "n_failed", "n_pending"}`` of ``grid`` in ``run_dir`` (read-only,
    no lock; the grid is checked like :func:`.runner.run_grid` checks it). ``n_pending`` counts
    what a run would execute, failed episodes included; ``n_failed`` how many of those failed before."""
    keys = [episode_key(s) for s in normalize_specs(grid, validate)]
    done = {r[KEY] for r in read_records(Path(run_dir) / EPISODES)}.intersection(keys)
    failed = {r[KEY] for r in read_records(Path(run_dir) / FAILURES)}.intersection(keys) - done
    return {"n_total": len(keys), "n_done": len(done), "n_failed": len(failed), "n_pending": len(keys) - len(done)}


def append_record(path: str | Path, record: dict[str, Any]) -> None:
    """Append ``record`` as one JSON line to ``path`` (the files of ``COLLABLAB_DRY_RUN``/``_RUN_RECORD``)."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record, default=str) + "\n")


def run_notebook_grid(grid: list[dict[str, Any]], *, fn: str, notebook: str, P: Mapping[str, Any],
                      spec_defaults: Mapping[str, Any], validate: Callable[[dict[str, Any]], None],
                      backend: str | None = None) -> tuple[Any, Any, str]:
    """Run (or resume) a notebook's grid of specs through :func:`.runner.run_grid`; returns
    ``(episodes, steps, run folder)``. The run id is ``P["run_id"]`` or one named by the specs,
    the study function and the code fingerprint, so an edit of the code starts a fresh run; in
    replay mode (:func:`cache_mode`) it ends in ``-replay``, so a replay executes every episode
    again instead of resuming the run it replays. ``P`` (with ``spec_defaults``) goes into the
    manifest; ``backend`` is the manifest's label (default ``P["backend"]``). ``P``'s
    ``engine``/``ray_address``/``episodes_per_worker``, when the notebook has them, go to run_grid.
    A bad grid or endpoint raises :class:`ParameterError` before the first episode (a server that
    does not answer: the check's own error). Failed units are reported (a rerun retries them), never scored."""
    run_id = P.get("run_id") or f"{default_run_id(grid, fn)}-{code_fingerprint()}"
    if not P.get("run_id") and cache_mode(P) == "replay":
        run_id += "-replay"
    out_root = outputs_dir()
    run_dir = out_root / notebook / run_id
    if os.environ.get(DRY_RUN_ENV):
        with parameter_checks():
            counts = pending_counts(grid, run_dir, validate)
        plan = {"study": notebook, "run_id": run_id, "run_dir": str(run_dir), **counts}
        if os.environ.get(SHOW_REQUESTS_ENV):
            from .show_requests import sample_requests

            plan["requests"] = sample_requests(grid, fn)
        append_record(os.environ[DRY_RUN_ENV], plan)
        raise DryRun(plan)
    extra = {k: P[k] for k, default in _ENGINE_PARAMS.items() if P.get(k, default) not in (default, "")}
    with parameter_checks():  # run_grid raises ValueError only in its checks, before the first episode
        res = run_grid(grid, fn=fn, study=notebook, run_id=run_id, out_root=out_root, workers=P["workers"],
                       params={**P, "spec_defaults": dict(spec_defaults)},
                       backend=P["backend"] if backend is None else backend, validate=validate, **extra)
    if os.environ.get(RECORD_ENV):
        append_record(os.environ[RECORD_ENV], {
            "study": notebook, "run_id": run_id, "run_dir": str(res.run_dir), "n_total": res.n_total,
            "n_done": res.n_done, "n_failed": res.n_failed, "n_new": res.n_new, "n_skipped": res.n_skipped,
            "wall_s": round(res.wall_s, 3), "endpoints": getattr(res, "endpoints", None)})
    if res.failures:
        print(f"{len(res.failures)} unit(s) failed (not scored; a rerun retries them), e.g. "
              f"{res.failures[0].get('error_type')}: {res.failures[0].get('error')}")
    episodes, steps = load_run(res.run_dir)
    return episodes, steps, str(res.run_dir)
