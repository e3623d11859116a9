"""Notebook 07's experiment: from its parameters (``P``, as
:func:`collablab.runs.notebook_parameters` reads them) to the specs it runs, the run itself, and
the records read back as one frame per episode (observe_share_predict.txt §4.1).

The grid is tasks x information conditions (x runs). Tasks are generated (``family`` ``mixed``
cycles the four families, so 40 tasks are 10 per family; the paper runs PARTNR's 1,000 validation
tasks once per configuration, §4.1). Conditions are named as :attr:`.episode.Channels.name`
prints them (``Obj``, ``OAS``, ``KE``, ``OAS+KE``, each optionally ``+OANA``, and the
full-observability control ``Full:Obj``, ``Full:OAS`` with or without ``+OANA``: the 2x2x2
factorial of §4.2-4.4 and the OAS x OANA control of §4.5); the keys of
:data:`.conformance.CONDITIONS` (``obj``, ``oas+ke+oana``, ``full/oas`` ...) are accepted too.

:func:`run_notebook` checks every parameter first (:func:`check_parameters`: one line naming the
parameter and its allowed values; ``constrained`` on every backend) and the model endpoint next,
before any unit runs.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...analysis.findings import backend_of
from ...runs import check_run_parameters, llm_option_keys, parameter_checks, preflight_endpoints, run_notebook_grid
from ...runs.spec_checks import check_choice, check_int, check_items
from .conformance import CONDITIONS
from .episode import Channels
from .spec import BACKENDS, CONSTRAINED, DEFAULTS, endpoints, resolve, validate
from .tasks import FAMILIES

Params = dict[str, Any]
FN = "collablab.studies.partnr:run_spec"
NOTEBOOK = "07_partner_information"
#: The shared contexts of Table 3 (§4.2), in the paper's order.
CONTEXTS = ("Obj", "OAS", "KE", "OAS+KE")
#: The contexts the full-observability control runs (KE is meaningless there, §4.5).
FULL_CONTEXTS = ("Obj", "OAS")


def condition_name(context: str, oana: bool, observability: str = "partial") -> str:
    """The condition label of a context, OANA switch and observability (``"Full:OAS+OANA"``)."""
    return ("Full:" if observability == "full" else "") + context + ("+OANA" if oana else "")


def _name_of(cond: dict[str, Any]) -> str:
    return Channels(oas=bool(cond.get("oas")), ke=bool(cond.get("ke")), oana=bool(cond.get("oana")),
                    full_obs=cond.get("observability") == "full").name


#: The conditions' labels in display order (the notebook's default ``conditions``): the four contexts
#: without then with OANA under partial observability, then the full-observability control.
CONDITION_ORDER: tuple[str, ...] = tuple(condition_name(c, o, obs)
                                         for obs, contexts in (("partial", CONTEXTS), ("full", FULL_CONTEXTS))
                                         for o in (False, True) for c in contexts)
#: Every condition's spec keys by its label (from :data:`.conformance.CONDITIONS`).
CONDITION_KEYS: dict[str, dict[str, Any]] = {
    n: k for n in CONDITION_ORDER for k in [dict(v) for v in CONDITIONS.values() if _name_of(v) == n]}

__all__ = ["CONDITION_KEYS", "CONDITION_ORDER", "CONTEXTS", "FN", "FULL_CONTEXTS", "NOTEBOOK", "backend_keys",
           "check_parameters", "condition_name", "conditions_of", "episode_frame", "run_notebook", "specs"]


def conditions_of(P: Params) -> list[str]:
    """The run's conditions as labels, in display order; ValueError naming an unknown one."""
    alias = {k: _name_of(v) for k, v in CONDITIONS.items()}
    check_items(P, "conditions", (*CONDITION_ORDER, *CONDITIONS))
    names = [alias.get(str(c), str(c)) for c in P["conditions"]]
    bad = [c for c, n in zip(P["conditions"], names) if n not in CONDITION_KEYS]
    if bad:
        raise ValueError(f"conditions: {bad} not allowed; allowed: {', '.join(CONDITION_ORDER)} "
                         f"(or {', '.join(CONDITIONS)})")
    return [c for c in CONDITION_ORDER if c in set(names)]


def backend_keys(P: Params) -> dict[str, Any]:
    """The spec keys naming the planners: the heuristic's profile, or the model endpoint (with
    ``api_key_env``, ``constrained`` and the ``llm_options`` keys: replicas, extra body, outage wait, limits)."""
    check_choice(P, "backend", BACKENDS)
    if P["backend"] == "heuristic":
        return {"backend": "heuristic", "profile": P["profile"]}
    keys = {"model": P["model"], "base_url": P["base_url"] or None, "provider": P["provider"],
            "llm_cache_mode": P["llm_cache_mode"] or None, "constrained": P["constrained"],
            "api_key_env": P.get("api_key_env"), **(P.get("llm_options") or {})}
    return {"backend": "llm", **{k: v for k, v in keys.items() if k not in DEFAULTS or v != DEFAULTS[k]}}


def _probe(P: Params) -> dict[str, Any]:
    """A spec of the run's planners (what every unit shares but its task and condition)."""
    return {**backend_keys(P), "task_seed": P["task_seed"], "max_cycles": P["max_cycles"]}


def check_parameters(P: Params) -> None:
    """Check every parameter of notebook 07 before anything runs; ValueError naming the parameter
    and its allowed values (:func:`run_notebook` raises it as ``ParameterError``)."""
    check_run_parameters(P, llm_option_keys(DEFAULTS))
    conditions_of(P)
    for key, low in (("n_tasks", 1), ("task_seed", 0), ("max_cycles", 1)):
        check_int(P, key, low)
    check_choice(P, "family", (*FAMILIES, "mixed"))
    check_items(P, "runs", low=0)
    check_choice(P, "constrained", CONSTRAINED)  # on every backend, though only a model reads it
    resolve(_probe(P))  # the backend's keys (profile, model, base_url, api_key_env, llm_options ...)


def specs(P: Params) -> list[dict[str, Any]]:
    """Every task x condition (x run) of the notebook's grid, tasks outermost."""
    n = P["n_tasks"]
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n_tasks: must be an integer >= 1, got {n!r}")
    base = {"task_source": "generated", "family": P["family"], "task_seed": P["task_seed"],
            "max_cycles": P["max_cycles"]}
    base = {**{k: v for k, v in base.items() if v != DEFAULTS[k]}, **backend_keys(P)}
    conds = conditions_of(P)
    return [{**base, "instance": i, **CONDITION_KEYS[c], **({"run": r} if r else {})}
            for i in range(n) for c in conds for r in P["runs"]]


def run_notebook(P: Params) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Run (or resume) the notebook's grid; ``(episodes, steps, run folder)``. Bad parameters and
    endpoints raise ``ParameterError`` before any unit runs."""
    with parameter_checks():
        check_parameters(P)
        preflight_endpoints(endpoints(_probe(P)))
        grid = specs(P)
        if not grid:
            raise ValueError("conditions/runs: this run has no unit to run; name at least one condition and run")
    return run_notebook_grid(grid, fn=FN, notebook=NOTEBOOK, P=P, spec_defaults=DEFAULTS, validate=validate)


def episode_frame(episodes: pd.DataFrame) -> pd.DataFrame:
    """The episode records with the grid's coordinates: ``context`` (Obj, OAS, KE, OAS+KE),
    ``oana`` (bool), ``observability``, ``success`` as 0/1 and ``pc_failed`` (percent complete of
    an episode that failed, NaN when it succeeded). The ``backend`` column is kept."""
    e = episodes.copy()
    if "backend" not in e.columns:
        e["backend"] = backend_of(e)
    ctx = [("+".join(p for p, on in (("OAS", bool(o)), ("KE", bool(k))) if on) or "Obj")
           for o, k in zip(e["oas"], e["ke"])]
    e["context"] = ctx
    e["oana"] = e["oana"].astype(bool)
    e["success"] = e["success"].astype(bool).astype(float)
    e["pc_failed"] = e["percent_complete"].where(e["success"] == 0)
    return e
