"""MECoBench notebooks 01-04: which episodes to run and how to tabulate them.

The notebooks stay thin: they pass their parameters here, run the grid with
``collablab.runs.run_grid`` and show the tables and figures built here.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import pandas as pd

from .. import mecobench_run
from ..metrics import mecobench as metrics
from ..paths import outputs_dir
from ..fingerprint import code_fingerprint
from ..runs import canonical_json, default_run_id, expand_grid, load_run, run_grid

FN = "collablab.mecobench_run:run_spec"
MAX_TEAM = 10
METRIC_COLUMNS = ["SR", "CR", "AUC", "DOL", "CAR", "HFR", "SpatialErr", "TokensPerStep"]


def task_ids(structure: str, n_tasks: int, suite_seed: int = 0, source: str = "suite") -> list[str]:
    """``n_tasks`` tasks of one structure, spread evenly over templates and subgoal counts."""
    if structure not in ("parallel", "sequential"):
        raise ValueError(f"structure: {structure!r} is not allowed; allowed: parallel, sequential")
    tasks = [t for t in mecobench_run._tasks(source, suite_seed).values() if t.structure == structure]
    if not isinstance(n_tasks, int) or n_tasks < 1:
        raise ValueError(f"n_tasks: must be an integer >= 1, got {n_tasks!r}")
    n = min(n_tasks, len(tasks))
    step = len(tasks) / n
    return [tasks[int(i * step)].task_id for i in range(n)]


BACKENDS = ("heuristic", "oracle", "llm")


def team_spec(backend: str, profile: str = "medium", model: str = "", base_url: str = "", provider: str = "auto",
              llm_cache_mode: str = "") -> dict[str, Any]:
    """Spec keys for the team's backend: the offline heuristic (with a profile), the scripted
    oracle, or an LLM endpoint (``model``; ``base_url`` empty = the OpenAI API)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend: {backend!r} is not allowed; allowed: {', '.join(BACKENDS)}")
    if backend != "llm":
        return {"policy": backend, "profile": profile}
    if not model:
        raise ValueError("model: required when backend='llm' (e.g. 'gpt-4o-mini' or the name `vllm serve` uses)")
    out: dict[str, Any] = {"policy": "llm", "model": model, "provider": provider}
    if base_url:
        out["base_url"] = base_url
    if llm_cache_mode:
        out["llm_cache_mode"] = llm_cache_mode
    return out


def check_team_sizes(sizes: Iterable[int]) -> list[int]:
    sizes = list(sizes)
    bad = [s for s in sizes if not isinstance(s, int) or not 1 <= s <= MAX_TEAM]
    if bad or not sizes:
        raise ValueError(f"team_sizes: each must be an integer in 1..{MAX_TEAM}, got {sizes}")
    return sizes


def grid(structure: str, n_tasks: int, axes: dict[str, list[Any]], base: dict[str, Any] | None = None,
         suite_seed: int = 0) -> list[dict[str, Any]]:
    """Specs: tasks x the cartesian product of ``axes`` (plus fixed ``base`` values)."""
    specs = expand_grid({**(base or {}), "suite_seed": suite_seed},
                        {"task_id": task_ids(structure, n_tasks, suite_seed), **axes})
    specs = [s for s in specs if _fits(s)]
    for s in specs:
        mecobench_run.resolve(s)  # bad names and values stop here, before anything runs
    return specs


def _fits(spec: dict[str, Any]) -> bool:
    """Drop combinations that cannot exist (a two-agent protocol with one agent)."""
    from ..protocols import PROTOCOLS

    proto = PROTOCOLS.get(spec.get("protocol", mecobench_run.DEFAULTS["protocol"]))
    return proto is None or spec.get("n_agents", 2) >= proto.min_agents


def run(study: str, specs: Sequence[dict[str, Any]], params: dict[str, Any], workers: int = 2,
        run_id: str | None = None, progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Run (or resume) a grid; return (episodes, steps, run folder). Repeated specs run once."""
    unique = list({canonical_json(s): s for s in reversed(list(specs))}.values())[::-1]
    # the default folder changes with the code, so a resumed run never mixes results of two versions
    run_id = run_id or f"{default_run_id(unique, FN)}-{code_fingerprint()}"
    res = run_grid(unique, fn=FN, study=study, run_id=run_id, out_root=outputs_dir(), workers=workers,
                   progress=progress, params={**params, "spec_defaults": mecobench_run.DEFAULTS},
                   backend=backend_of(specs), validate=mecobench_run.validate)
    episodes, steps = load_run(res.run_dir)
    return episodes, steps, str(res.run_dir)


def backend_of(specs: Sequence[dict[str, Any]]) -> str:
    """The run's backend label(s): heuristic, oracle, or ``<provider>:<model>`` per endpoint."""
    from ..agents.llm_policy import backend_label

    labels = set()
    for s in specs:
        policy = s.get("policy", mecobench_run.DEFAULTS["policy"])
        if policy != "llm":
            labels.add(policy)
            continue
        for model in str(s.get("model")).split(","):
            labels.add(backend_label(s.get("provider"), s.get("base_url"), model))
    return "+".join(sorted(labels))


def metric_table(episodes: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """MECoBench metrics (§3.2) per group, with the number of cases and the backend."""
    rows = []
    for key, g in episodes.groupby(list(by), sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        s = metrics.summary(g.to_dict("records"))
        rows.append({**dict(zip(by, key)), "cases": int(s.pop("n")), **s,
                     "backend": ",".join(sorted(g["backend"].unique()))})
    return pd.DataFrame(rows)


def by_objects(episodes: pd.DataFrame, by: str = "n_agents") -> pd.DataFrame:
    """SR and CR by number of target objects and ``by`` (Table 10 / Fig. 7b)."""
    t = episodes.groupby(["n_subgoals", by]).agg(SR=("success", "mean"), CR=("cr", "mean"),
                                                 cases=("success", "size")).reset_index()
    return t.rename(columns={"n_subgoals": "objects"})


def fitted_trends(table: pd.DataFrame, by: str = "n_agents", y: str = "SR") -> pd.DataFrame:
    """Least-squares line of ``y`` on the object count per group (Fig. 7b's trend lines)."""
    import numpy as np

    rows = []
    for key, g in table.groupby(by):
        if g["objects"].nunique() < 2:
            rows.append({by: key, "slope": float("nan"), "intercept": float("nan")})
            continue
        slope, intercept = np.polyfit(g["objects"], g[y], 1)
        rows.append({by: key, "slope": float(slope), "intercept": float(intercept)})
    return pd.DataFrame(rows)


def wide(table: pd.DataFrame, index: str, columns: str, values: Sequence[str]) -> pd.DataFrame:
    """Paper-style wide layout, e.g. rows = team size, columns = protocol x metric."""
    return table.pivot_table(index=index, columns=columns, values=list(values)).round(3)
