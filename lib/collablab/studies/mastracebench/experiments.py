"""Notebook 05's experiment: from its parameters (``P``, as
:func:`collablab.runs.notebook_parameters` reads them) to the specs it runs, the run itself, and
the records read back as trajectories and episode results (mastracebench.txt §4, Table 4).

Two grids run as one: the **main** grid (every method x task x unit x run, the paper's
configuration 3P+1R: Tables 2, 3, 7, 9, 10, Figs. 4-6, 10) and the **settings** grid of Table 4
(Int. Debate and MAPR on EvidenceChain under each listed setting). The main setting's units are
the main grid's own (specs are deduplicated), so Table 4's first row is the main run.

A Table 4 setting is a dict ``{"label", "proposers", "rounds"}`` plus, for a heterogeneous team,
``"agent_profiles"`` (offline: one profile per agent, e.g. ``"strong,medium,weak"`` for scale) and
``"models"`` (LLM: one model per proposer). A heterogeneous setting without the key its backend
needs is skipped and :func:`skipped_settings` says why; the heuristic has no model families, so
Family-Het. runs only with models.

:func:`run_notebook` checks every parameter first (:func:`check_parameters`: one line naming the
parameter and its allowed values) and the model endpoints next, before any unit runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ...analysis.findings import backend_of
from ...runs import (canonical_json, check_run_parameters, llm_option_keys, parameter_checks, preflight_endpoints,
                     run_notebook_grid)
from ...runs.spec_checks import check_choice, check_counts, check_int, check_items, check_str
from .methods import METHODS
from .spec import (BACKENDS, DEFAULTS, DYNAMIC_TASKS, STATIC_TASKS, TASK_ORDER, endpoints, instance_count, resolve,
                   trajectories_of, validate)
from .trajectory import EpisodeResult, Trajectory

Params = dict[str, Any]
FN = "collablab.studies.mastracebench:run_spec"
NOTEBOOK = "05_proposal_trajectories"
#: Table 4's methods and task.
TABLE4_METHODS = ("Int. Debate", "MAPR")
TABLE4_TASK = "evidence_chain"
MAIN_SETTING = "3P+1R"

#: The baseline every method is compared with (CG, TC multipliers): the run needs its units.
BASELINE = "Single-Agent"
#: The keys of a Table 4 setting (``label``, ``proposers``, ``rounds`` required).
SETTING_KEYS = ("label", "proposers", "rounds", "agent_profiles", "models")

__all__ = ["BASELINE", "FN", "MAIN_SETTING", "NOTEBOOK", "SETTING_KEYS", "TABLE4_METHODS", "TABLE4_TASK", "Records",
           "backend_keys", "check_parameters", "main_specs", "run_notebook", "settings_specs", "skipped_settings",
           "specs"]


def backend_keys(P: Params) -> dict[str, Any]:
    """The spec keys naming the backend: the heuristic's profile, or the model endpoint (with
    ``api_key_env`` and the ``llm_options`` keys: replicas, extra body, outage wait, limits)."""
    check_choice(P, "backend", BACKENDS)
    if P["backend"] == "heuristic":
        return {"backend": "heuristic", "profile": P["profile"]}
    keys = {"backend": "llm", "model": P["model"], "base_url": P["base_url"] or None, "provider": P["provider"],
            "llm_cache_mode": P["llm_cache_mode"] or None, "api_key_env": P.get("api_key_env"),
            **(P.get("llm_options") or {})}
    return {k: v for k, v in keys.items() if k not in DEFAULTS or v != DEFAULTS[k]}


def _check_settings(P: Params) -> None:
    """Table 4's settings: a list of mappings with a distinct ``label``, ``proposers`` and ``rounds``."""
    settings = P["table4_settings"]
    if not isinstance(settings, list):
        raise ValueError(f"table4_settings: {settings!r} is not allowed; allowed: a list of mappings with "
                         f"{', '.join(SETTING_KEYS)}")
    labels: set[str] = set()
    for i, s in enumerate(settings):
        where = f"table4_settings[{i}]"
        if not isinstance(s, Mapping):
            raise ValueError(f"{where}: {s!r} is not allowed; allowed: a mapping with {', '.join(SETTING_KEYS)}")
        unknown = [k for k in s if k not in SETTING_KEYS]
        if unknown:
            raise ValueError(f"{where}: {unknown[0]!r} is not allowed; allowed: {', '.join(SETTING_KEYS)}")
        missing = [k for k in SETTING_KEYS[:3] if k not in s]
        if missing:
            raise ValueError(f"{where}: has no {missing[0]}; give label, proposers and rounds")
        try:
            check_str(s, "label")
            check_int(s, "proposers", 1)
            check_int(s, "rounds", 0)
            for key in ("agent_profiles", "models"):
                if key in s:
                    check_str(s, key)
        except ValueError as e:
            raise ValueError(f"{where}.{e}") from None
        if s["label"] in labels:
            raise ValueError(f"{where}: label {s['label']!r} is listed twice; give each setting its own label")
        labels.add(s["label"])


def _probes(P: Params) -> dict[str, dict[str, Any]]:
    """One spec per team the run builds, by the parameter that names it: the main team (``backend``)
    and each Table 4 setting that runs on P's backend (``table4_settings[i]``)."""
    base = {"task": TABLE4_TASK, "method": BASELINE, "instance": 0, "seed": P["seed"],
            "instance_seed": P["instance_seed"], **backend_keys(P)}
    out = {"backend": base}
    for i, setting in enumerate(P["table4_settings"]):
        keys = _setting_keys(P, setting)
        if keys is not None:
            out[f"table4_settings[{i}]"] = {**base, "method": TABLE4_METHODS[0], **keys}
    return out


def check_parameters(P: Params) -> None:
    """Check every parameter of notebook 05 before anything runs; ValueError naming the parameter
    and its allowed values (:func:`run_notebook` raises it as ``ParameterError``)."""
    check_run_parameters(P, llm_option_keys(DEFAULTS))
    check_items(P, "tasks", TASK_ORDER)
    methods = check_items(P, "methods", METHODS)
    if BASELINE not in methods:
        raise ValueError(f"methods: {methods!r} is not allowed; allowed: lists with {BASELINE!r}, the baseline "
                         "of CG and TC")
    counts = check_counts(P, "n_units", TASK_ORDER)
    missing = [t for t in P["tasks"] if t not in counts]
    if missing:
        raise ValueError(f"n_units: has no count for {missing[0]!r}; give one for every task in tasks")
    check_items(P, "runs", low=0)
    _check_settings(P)
    if P["table4_settings"] and not (TABLE4_TASK in P["tasks"] and counts.get(TABLE4_TASK)):
        raise ValueError(f"table4_settings: Table 4 runs on {TABLE4_TASK}, which tasks or n_units leave out; "
                         f"allowed: [] (no Table 4), or {TABLE4_TASK} in tasks with n_units > 0")
    check_int(P, "max_decisions", 1, allow_none=True)
    check_str(P, "race_path")
    for key in ("seed", "instance_seed"):
        check_int(P, key, 0)
    for where, probe in _probes(P).items():
        try:
            resolve(probe)  # the backend's keys (profile, model, base_url, api_key_env, llm_options ...)
        except ValueError as e:
            raise ValueError(str(e) if where == "backend" else f"{where}: {e}") from None


def _units(P: Params, task: str) -> int:
    """How many units of ``task`` this run takes (the notebook's ``n_units``, at most what exists;
    OptionGen without ``race_path`` has none)."""
    if task == "option_gen" and not P.get("race_path"):
        return 0
    want = int(P["n_units"].get(task, 0))
    return min(want, instance_count(task, P.get("race_path") or None))


def _unit_specs(P: Params, task: str, methods: Sequence[str], extra: dict[str, Any]) -> list[dict[str, Any]]:
    base = {"task": task, "seed": P["seed"], "instance_seed": P["instance_seed"], **backend_keys(P), **extra}
    if task == "option_gen":
        base["race_path"] = P["race_path"]
    if task in DYNAMIC_TASKS and P.get("max_decisions") is not None:
        base["max_decisions"] = P["max_decisions"]
    runs = P["runs"] if task in STATIC_TASKS else [0]  # the appendix averages static tasks over runs
    return [{**base, "method": m, "instance": i, **({"run": r} if r else {})}
            for m in methods for i in range(_units(P, task)) for r in runs]


def main_specs(P: Params) -> list[dict[str, Any]]:
    """Every method x task x unit (x run for static tasks) in the main configuration."""
    bad = [t for t in P["tasks"] if t not in TASK_ORDER]
    if bad:
        raise ValueError(f"tasks: {bad} not allowed; allowed: {', '.join(TASK_ORDER)}")
    return [s for t in TASK_ORDER if t in P["tasks"] for s in _unit_specs(P, t, P["methods"], {})]


def _setting_keys(P: Params, setting: dict[str, Any]) -> dict[str, Any] | None:
    """The spec keys of a Table 4 setting for P's backend; None when it cannot run there."""
    keys = {"proposers": int(setting["proposers"]), "rounds": int(setting["rounds"])}
    hetero = "agent_profiles" in setting or "models" in setting
    if hetero:
        need = "agent_profiles" if P["backend"] == "heuristic" else "models"
        if not setting.get(need):
            return None
        keys[need] = setting[need]
    if not hetero and keys == {k: DEFAULTS[k] for k in keys}:
        return {}  # the main configuration: the main grid's own specs (deduplicated in :func:`specs`)
    keys["setting"] = str(setting["label"])
    return keys


def skipped_settings(P: Params) -> list[str]:
    """Why some Table 4 settings do not run on this backend (one sentence each)."""
    need = "agent_profiles" if P["backend"] == "heuristic" else "models"
    return [f"{s['label']}: not run; a heterogeneous setting needs '{need}' on the {P['backend']} backend"
            + (" (the heuristic has no model families)" if P["backend"] == "heuristic" else "")
            for s in P["table4_settings"] if _setting_keys(P, s) is None]


def settings_specs(P: Params) -> list[dict[str, Any]]:
    """Table 4: Int. Debate and MAPR on EvidenceChain under every setting that runs on P's backend."""
    out = []
    for setting in P["table4_settings"]:
        keys = _setting_keys(P, setting)
        if keys is not None:
            out += _unit_specs(P, TABLE4_TASK, TABLE4_METHODS, keys)
    return out


def specs(P: Params) -> list[dict[str, Any]]:
    """The notebook's whole grid, each spec once (the main setting's Table 4 units are the main run's)."""
    unique: dict[str, dict[str, Any]] = {}
    for s in main_specs(P) + settings_specs(P):
        unique.setdefault(canonical_json(s), s)
    return list(unique.values())


def run_notebook(P: Params) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Run (or resume) the notebook's grid; ``(episodes, steps, run folder)``. Bad parameters and
    endpoints raise ``ParameterError`` before any unit runs."""
    with parameter_checks():
        check_parameters(P)
        preflight_endpoints(e for probe in _probes(P).values() for e in endpoints(probe))
        grid = specs(P)
        if not grid:
            raise ValueError("n_units: no task of tasks has a unit to run (OptionGen needs race_path); "
                             "give one a count > 0")
    return run_notebook_grid(grid, fn=FN, notebook=NOTEBOOK, P=P, spec_defaults=DEFAULTS, validate=validate)


class Records:
    """A run's records (the frames of :func:`run_notebook` or ``load_run``) as the metrics read
    them: trajectories and game results, split into the main configuration and Table 4's settings.
    Parsing the trajectories is the costly part (seconds for a default run): build this once."""

    def __init__(self, episodes: pd.DataFrame, steps: pd.DataFrame) -> None:
        self.episodes = episodes
        main = episodes["setting"].eq(MAIN_SETTING) & episodes["agent_profiles"].isna() & episodes["models"].isna()
        self.main_keys = set(episodes.loc[main, "episode_key"])
        self.backend = backend_of(episodes)
        self.trajectories: list[Trajectory] = trajectories_of(steps)
        self._setting_of = dict(zip(episodes["episode_key"], episodes["setting"]))
        self._key_of = list(steps["episode_key"])

    @property
    def main(self) -> list[Trajectory]:
        """Trajectories of the main configuration."""
        return [t for t, k in zip(self.trajectories, self._key_of) if k in self.main_keys]

    def games(self) -> list[EpisodeResult]:
        """Game results (eq. 2) of the main configuration."""
        rows = self.episodes[~self.episodes["static"].astype(bool) & self.episodes["episode_key"].isin(self.main_keys)]
        return [EpisodeResult(r.method, r.task, r.unit, float(r.score), int(r.run)) for r in rows.itertuples()]

    def by_setting(self, task: str = TABLE4_TASK, methods: Sequence[str] = TABLE4_METHODS) -> dict[str, list[Trajectory]]:
        """Table 4's trajectories per setting label (the main setting under :data:`MAIN_SETTING`)."""
        out: dict[str, list[Trajectory]] = {}
        for t, k in zip(self.trajectories, self._key_of):
            if t.task == task and t.method in methods:
                out.setdefault(str(self._setting_of[k]), []).append(t)
        return out
