"""A notebook's parameters as the run records them (the plain values among the notebook's
globals: the tagged ``parameters`` cell with papermill's injected values applied), and a
notebook's grid run with resume under a run id named by its specs and the code version."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .fingerprint import code_fingerprint
from .grid import default_run_id
from .load import load_run
from .paths import outputs_dir
from .runner import run_grid

_PLAIN = (str, int, float, bool, type(None))
_IPYTHON = {"In", "Out", "exit", "quit", "get_ipython"}


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


def run_notebook_grid(grid: list[dict[str, Any]], *, fn: str, notebook: str, P: Mapping[str, Any],
                      spec_defaults: Mapping[str, Any], validate: Callable[[dict[str, Any]], None]) -> tuple[Any, Any, str]:
    """Run (or resume) a notebook's grid of specs through :func:`.runner.run_grid`; returns
    ``(episodes, steps, run folder)``. The run id is ``P["run_id"]`` or one named by the specs,
    the study function and the code fingerprint, so an edit of the code starts a fresh run;
    ``P`` (with ``spec_defaults``) goes into the manifest. Failed units are reported (a rerun
    retries them), never scored."""
    run_id = P.get("run_id") or f"{default_run_id(grid, fn)}-{code_fingerprint()}"
    res = run_grid(grid, fn=fn, study=notebook, run_id=run_id, out_root=outputs_dir(), workers=P["workers"],
                   params={**P, "spec_defaults": dict(spec_defaults)}, backend=P["backend"], validate=validate)
    if res.failures:
        print(f"{len(res.failures)} unit(s) failed (not scored; a rerun retries them), e.g. "
              f"{res.failures[0].get('error_type')}: {res.failures[0].get('error')}")
    episodes, steps = load_run(res.run_dir)
    return episodes, steps, str(res.run_dir)
