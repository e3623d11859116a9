"""Which MECoBench episodes a notebook runs: tasks, team specs, grids, and the run itself
(resumable, in a folder keyed by the grid and the code fingerprint)."""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from ...protocols import PROTOCOLS
from ...runs import canonical_json, expand_grid, run_notebook_grid
from ...world.household import check_n_agents
from .spec import DEFAULTS, POLICY_NAMES, backends, resolve, tasks_of, validate

#: The episode function of this study in the run grid (registered as study ``mecobench``).
FN = "collablab.studies.mecobench:run_spec"
MAX_TEAM = 10


def task_ids(structure: str, n_tasks: int, suite_seed: int = 0, source: str = "suite") -> list[str]:
    """``n_tasks`` tasks of one structure, spread evenly over templates and subgoal counts."""
    if structure not in ("parallel", "sequential"):
        raise ValueError(f"structure: {structure!r} is not allowed; allowed: parallel, sequential")
    tasks = [t for t in tasks_of(source, suite_seed).values() if t.structure == structure]
    if isinstance(n_tasks, bool) or not isinstance(n_tasks, int) or not 1 <= n_tasks <= len(tasks):
        raise ValueError(f"n_tasks: must be an integer from 1 to {len(tasks)} (the {structure} tasks of "
                         f"{source}), got {n_tasks!r}")
    step = len(tasks) / n_tasks
    return [tasks[int(i * step)].task_id for i in range(n_tasks)]


def team_spec(backend: str, profile: str = "medium", model: str = "", base_url: str = "", provider: str = "auto",
              llm_cache_mode: str = "", api_key_env: str | None = None,
              llm_options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Spec keys for the team's backend: the offline heuristic (with a profile), the scripted
    oracle, or an LLM endpoint (``model``; ``base_url`` empty = the OpenAI API; ``api_key_env``
    the NAME of the key's variable; ``llm_options`` more ``llm_*`` spec keys such as ``llm_replicas``)."""
    if backend not in POLICY_NAMES:
        raise ValueError(f"backend: {backend!r} is not allowed; allowed: {', '.join(POLICY_NAMES)}")
    if backend != "llm":
        return {"policy": backend, "profile": profile}
    if not model:
        raise ValueError("model: required when backend='llm' (e.g. 'gpt-4o-mini' or the name `vllm serve` uses)")
    out: dict[str, Any] = {"policy": "llm", "model": model, "provider": provider}
    if base_url:
        out["base_url"] = base_url
    if llm_cache_mode:
        out["llm_cache_mode"] = llm_cache_mode
    if api_key_env:
        out["api_key_env"] = api_key_env
    out.update(llm_options or {})
    return out


def check_team_sizes(sizes: Iterable[int], name: str = "team_sizes") -> list[int]:
    """The team sizes of a sweep (the parameter ``name``): a non-empty list of whole numbers in 1..MAX_TEAM."""
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Iterable):
        raise ValueError(f"{name}: {sizes!r} is not allowed; allowed: a non-empty list of integers in 1..{MAX_TEAM}")
    sizes = list(sizes)
    for s in sizes or [None]:
        try:
            ok = check_n_agents(s, name) <= MAX_TEAM
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"{name}: each must be an integer in 1..{MAX_TEAM}, got {sizes}")
    return sizes


def grid(structure: str, n_tasks: int, axes: dict[str, list[Any]], base: dict[str, Any] | None = None,
         suite_seed: int = 0) -> list[dict[str, Any]]:
    """Specs: tasks x the cartesian product of ``axes`` (plus fixed ``base`` values)."""
    specs = expand_grid({**(base or {}), "suite_seed": suite_seed},
                        {"task_id": task_ids(structure, n_tasks, suite_seed), **axes})
    specs = [s for s in specs if _fits(s)]
    for s in specs:
        resolve(s)  # bad names and values stop here, before anything runs
    return specs


def _fits(spec: dict[str, Any]) -> bool:
    """Drop combinations that cannot exist (a two-agent protocol with one agent)."""
    proto = PROTOCOLS.get(spec.get("protocol", DEFAULTS["protocol"]))
    return proto is None or spec.get("n_agents", DEFAULTS["n_agents"]) >= proto.min_agents


def run(study: str, specs: Sequence[dict[str, Any]], params: dict[str, Any], workers: int = 2,
        run_id: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Run (or resume) a notebook's grid through :func:`collablab.runs.run_notebook_grid` (dry runs,
    replay folders and the CLI's run records included); return (episodes, steps, run folder).
    Repeated specs run once."""
    unique = list({canonical_json(s): s for s in reversed(list(specs))}.values())[::-1]
    return run_notebook_grid(unique, fn=FN, notebook=study, P={**params, "workers": workers, "run_id": run_id},
                             spec_defaults=DEFAULTS, validate=validate, backend=backend_of(specs))


def backend_of(specs: Sequence[dict[str, Any]]) -> str:
    """The run's backend label(s): heuristic, oracle, or ``<provider>:<model>`` per endpoint."""
    return "+".join(sorted({b for s in specs for b in backends(resolve(s))}))
