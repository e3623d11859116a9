"""Run a grid of episodes, persist every record as it finishes, resume, and read it back.

    specs = expand_grid({"task_id": "p1", "n_agents": 2}, {"protocol": ["isolated", "broadcast"],
                                                             "seed": [0, 1, 2]})
    res = run_grid(specs, study="mecobench", params=params, backend="heuristic")  # a registered study
    episodes, steps = load_run(res.run_dir)

A run folder ``<out_root>/<study>/<run_id>/`` holds ``episodes.jsonl`` and ``steps.jsonl``
(one JSON object per line, tagged with ``episode_key`` and ``grid_index``), ``failures.jsonl``,
``timings.jsonl`` and ``manifest.json``. Re-running the same call resumes: finished episodes
are kept, failed ones retried. CLI: ``python -m collablab.runs --help``.

Scale: ``workers`` processes each running ``episodes_per_worker`` episodes at once (threads),
or ``engine="ray"`` (a local Ray instance, or a cluster by ``ray_address``). LLM calls share one
bound per endpoint across all of them; ``budget`` caps tokens. ``run_status(run_dir)`` reads
where a run stands without taking its lock.
"""

from .grid import canonical_json, default_run_id, episode_key, expand_grid, normalize_specs
from .load import load_failures, load_run
from .manifest import read_manifest, run_status
from .notebook import (ParameterError, check_run_parameters, llm_option_keys, notebook_parameters,
                       parameter_checks, preflight_endpoints, run_notebook_grid)
from .registry import studies, study_fn
from .runner import RunResult, run_grid
from .store import RunLockedError

__all__ = ["ParameterError", "RunLockedError", "RunResult", "canonical_json", "check_run_parameters",
           "default_run_id", "episode_key", "expand_grid", "llm_option_keys", "load_failures", "load_run",
           "normalize_specs", "notebook_parameters", "parameter_checks", "preflight_endpoints", "read_manifest",
           "run_grid", "run_notebook_grid", "run_status", "studies", "study_fn"]
