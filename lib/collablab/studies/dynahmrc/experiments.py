"""Notebook 06's experiment: from its parameters (``P``) to the specs it runs, the run, and the
records read back as one frame per episode (dynahmrc.tex §4.4-4.6, appendix).

Four blocks, each a list of specs (duplicates across blocks run once):

- **static** (``tab:constant_exp``, ``fig:robodiff``, ``fig:robocomb``): kinds x levels x the six
  compositions x ``n_tasks`` tasks x ``methods`` (DynaHMRC, CoELA-style, COHERENT-style);
- **search** (MCTS, MCTS-NoINS, and LLM-MCTS on Sort Solids): kinds x ``search_levels`` x
  compositions x ``search_tasks`` tasks (search is slow; its own, smaller slice), each decision with a
  fixed budget (``mcts_iterations`` simulations, at most ``mcts_max_sim_actions`` simulated robot
  actions: the paper's limited search time; a larger team's joint actions use it up sooner);
- **dynamic** (``tab:goal_exp`` ... ``tab:removal_exp``, ``fig:robodyta``): kinds x variations (CTO,
  IRZ, ANC, REC at ``T``) x the compositions each allows x ``n_tasks`` x ``methods``, at medium
  difficulty with the 30-step cap; with them the search baselines of ``dynamic_search`` (MCTS: the
  only search rows of those tables) on ``dynamic_search_teams`` (one team per size by default),
  ``search_tasks`` tasks per cell, at the search block's budget;
- **sensitivity** (``lab:sensitivity_dyna``: ``tab:dT_CTO``, ``tab:dN_IRZ``, ``tab:dT_ANC_REC``): "additional
  experiments on the Pack Objects task" varying what :data:`SENSITIVITY` names for each variation of
  ``sensitivity`` (CTO's trigger step T = 3, 5, 10; IRZ's number of restricted zones 1, 2, 3 at T = 5;
  ANC's and REC's T = 3, 5, 13), on ``sensitivity_teams`` (those each variation allows) x
  ``sensitivity_tasks`` tasks x ``methods``; the default setting (T = 5, one zone) is the dynamic
  block's own unit where both grids meet;
- **unseen** (``tab:unseen_obj``, appendix ``lab:obj_generalization``), with ``unseen_objects``:
  DynaHMRC on the twin of every static medium Pack Objects task of the static block, with unseen
  targets (:func:`.tasks.unseen_targets`: same places, targets renamed to classes held out of the
  fine-tuning export); nothing when the static block has no such task;
- **ablation** (``tab:ablation``, ``tab:memory_length``, ``tab:random_votes``): DynaHMRC without
  history, feedback, leader or reflection, with memory 15 and with 50% random votes, on the static
  tasks of ``ablation_levels`` and the variations. Both tiers have targets to find (our reading of
  Eq. 9, :mod:`.difficulty`): medium ones in the open, on the working table's far side or on any open
  surface elsewhere (l = 1), hard ones also hidden in closed containers or on elevated places
  (l = 2) or five in the open; the default ablates on both.

:func:`run_notebook` checks every parameter first (:func:`check_parameters`: one line naming the
parameter and its allowed values) and the model endpoint next, before any unit runs.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...analysis.findings import backend_of
from ...runs import check_run_parameters, llm_option_keys, parameter_checks, preflight_endpoints, run_notebook_grid
from ...runs.spec_checks import check_choice, check_int, check_items
from .difficulty import LEVELS
from .robots import ANC_TRANSITIONS, COMPOSITIONS, REC_TRANSITIONS
from .spec import BACKENDS, DEFAULTS, endpoints, resolve, validate
from .tasks import IRZ_MAX_ZONES
from .variations import ALLOWED_T, IRZ_TEAMS
from .world import TASK_KINDS

Params = dict[str, Any]
FN = "collablab.studies.dynahmrc:run_spec"
NOTEBOOK = "06_heterogeneous_dynamic_teams"
#: Ablations by label: the spec keys each sets (``tab:ablation``; memory and random votes from the appendix).
ABLATIONS: dict[str, dict[str, Any]] = {
    "full": {}, "w/o history": {"history": False}, "w/o feedback": {"feedback": False},
    "w/o leader": {"leader": False}, "w/o reflection": {"reflection": False}, "memory 15": {"memory": 15},
    "50% random votes": {"random_votes": 0.5},
}
VARIATION_TEAMS = {"CTO": COMPOSITIONS, "IRZ": IRZ_TEAMS, "ANC": tuple(ANC_TRANSITIONS),
                   "REC": tuple(REC_TRANSITIONS)}
#: ``lab:sensitivity_dyna``: the spec key each variation's sensitivity table varies, and its values
#: (CTO: "T=3,5,10"; IRZ: "1, 2, and 3 restricted zones" at the default T = 5; ANC and REC: "early,
#: middle, and late disruptions", T = 3, 5, 13).
SENSITIVITY: dict[str, tuple[str, tuple[int, ...]]] = {
    "CTO": ("T", ALLOWED_T["CTO"]), "IRZ": ("zones", tuple(range(1, IRZ_MAX_ZONES + 1))),
    "ANC": ("T", ALLOWED_T["ANC"]), "REC": ("T", ALLOWED_T["REC"])}
#: The sensitivity experiments' task kind: "additional experiments on the Pack Objects task".
SENSITIVITY_KIND = "pack"
METHOD_LABELS = {"dynahmrc": "DynaHMRC", "coela": "CoELA", "coherent": "COHERENT", "mcts": "MCTS",
                 "mcts_noins": "MCTS-NoINS", "llm_mcts": "LLM-MCTS"}
#: The notebook's ``methods`` (the framework and the LLM-style baselines) and ``search_methods``.
METHODS = ("dynahmrc", "coela", "coherent")
SEARCH_METHODS = ("mcts", "mcts_noins", "llm_mcts")

__all__ = ["ABLATIONS", "FN", "METHODS", "METHOD_LABELS", "NOTEBOOK", "SEARCH_METHODS", "SENSITIVITY",
           "SENSITIVITY_KIND", "VARIATION_TEAMS",
           "backend_keys", "check_parameters", "episode_frame", "run_notebook", "specs"]


def backend_keys(P: Params) -> dict[str, Any]:
    """The spec keys naming the robots' backend: the heuristic's profile, or the model endpoint (with
    ``api_key_env`` and the ``llm_options`` keys: replicas, extra body, outage wait, limits)."""
    check_choice(P, "backend", BACKENDS)
    if P["backend"] == "heuristic":
        return {"backend": "heuristic", "profile": P["profile"]}
    keys = {"model": P["model"], "base_url": P["base_url"] or None, "provider": P["provider"],
            "llm_cache_mode": P["llm_cache_mode"] or None, "api_key_env": P.get("api_key_env"),
            **(P.get("llm_options") or {})}
    return {"backend": "llm", **{k: v for k, v in keys.items() if k not in DEFAULTS or v != DEFAULTS[k]}}


def _probe(P: Params) -> dict[str, Any]:
    """A spec of the run's backend (what every unit shares but its task, method and variation)."""
    return {**backend_keys(P), "task_seed": P["task_seed"]}


def check_parameters(P: Params) -> None:
    """Check every parameter of notebook 06 before anything runs; ValueError naming the parameter
    and its allowed values (:func:`run_notebook` raises it as ``ParameterError``)."""
    check_run_parameters(P, llm_option_keys(DEFAULTS))
    check_items(P, "kinds", TASK_KINDS)
    check_items(P, "levels", LEVELS)
    check_items(P, "teams", COMPOSITIONS)
    check_items(P, "methods", METHODS)
    check_items(P, "search_methods", SEARCH_METHODS, empty=True)
    check_items(P, "search_levels", LEVELS, empty=True)
    if "dynamic_search" in P:
        check_items(P, "dynamic_search", SEARCH_METHODS, empty=True)
        check_items(P, "dynamic_search_teams", COMPOSITIONS, empty=True)
    check_items(P, "variations", tuple(VARIATION_TEAMS), empty=True)
    if "sensitivity" in P:
        check_items(P, "sensitivity", tuple(SENSITIVITY), empty=True)
        check_items(P, "sensitivity_teams", COMPOSITIONS, empty=True)
        check_int(P, "sensitivity_tasks", 0)
    check_items(P, "ablations", tuple(ABLATIONS), empty=True)
    check_items(P, "ablation_levels", LEVELS, empty=True)
    check_items(P, "runs", low=0)
    for key, low in (("n_tasks", 1), ("search_tasks", 0), ("mcts_iterations", 1), ("mcts_max_sim_actions", 1),
                     ("task_seed", 0), ("T", 1)):
        check_int(P, key, low)
    if not isinstance(P.get("unseen_objects", False), bool):
        raise ValueError(f"unseen_objects: must be true or false, got {P['unseen_objects']!r}")
    for v in P["variations"]:
        if P["T"] not in ALLOWED_T[v]:
            allowed = "1..29" if v == "IRZ" else ", ".join(map(str, ALLOWED_T[v]))
            raise ValueError(f"T: {P['T']!r} is not allowed with variation {v}; allowed: {allowed}")
    resolve(_probe(P))  # the backend's keys (profile, model, base_url, api_key_env, llm_options ...)


def _check_int(P: Params, key: str, low: int) -> int:
    v = P[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise ValueError(f"{key}: must be an integer >= {low}, got {v!r}")
    return v


def specs(P: Params) -> list[dict[str, Any]]:
    """Every unit of the notebook's grid (static, search, dynamic, ablation), duplicates once, each
    tagged with its block (``block``) and ablation label (``ablation_label``)."""
    n, ns = _check_int(P, "n_tasks", 1), _check_int(P, "search_tasks", 0)
    base = {**backend_keys(P), "task_seed": P["task_seed"]}
    out: list[dict[str, Any]] = []

    def add(spec: dict[str, Any]) -> None:
        for r in P["runs"]:
            out.append({**base, **spec, **({"run": r} if r else {})})

    for kind in P["kinds"]:
        for level in P["levels"]:
            for team in P["teams"]:
                for i in range(n):
                    for m in P["methods"]:
                        add({"kind": kind, "level": level, "team": team, "instance": i, "method": m})
                    if level in P["ablation_levels"]:
                        for label in P["ablations"]:
                            add({"kind": kind, "level": level, "team": team, "instance": i, "method": "dynahmrc",
                                 **ABLATIONS[label]})
        for level in P["search_levels"]:
            for team in P["teams"]:
                for i in range(ns):
                    for m in P["search_methods"]:
                        if m == "llm_mcts" and kind != "sort":
                            continue
                        add({"kind": kind, "level": level, "team": team, "instance": i, "method": m,
                             "mcts_iterations": P["mcts_iterations"],
                             "mcts_max_sim_actions": P["mcts_max_sim_actions"]})
        for v in P["variations"]:
            if v not in VARIATION_TEAMS:
                raise ValueError(f"variations: {v!r} not allowed; allowed: {', '.join(VARIATION_TEAMS)}")
            for team in [t for t in P["teams"] if t in VARIATION_TEAMS[v]]:
                for i in range(n):
                    for m in P["methods"]:
                        add({"kind": kind, "team": team, "instance": i, "method": m, "variation": v, "T": P["T"]})
                    for label in P["ablations"]:
                        add({"kind": kind, "team": team, "instance": i, "method": "dynahmrc", "variation": v,
                             "T": P["T"], **ABLATIONS[label]})
                if team in P.get("dynamic_search_teams", ()):
                    for i in range(ns):
                        for m in P.get("dynamic_search", ()):
                            add({"kind": kind, "team": team, "instance": i, "method": m, "variation": v,
                                 "T": P["T"], "mcts_iterations": P["mcts_iterations"],
                                 "mcts_max_sim_actions": P["mcts_max_sim_actions"]})
    if P.get("unseen_objects") and "pack" in P["kinds"] and "medium" in P["levels"] and "dynahmrc" in P["methods"]:
        for team, i in [(team, i) for team in P["teams"] for i in range(n)]:  # tab:unseen_obj: the static twins
            add({"kind": "pack", "level": "medium", "team": team, "instance": i, "method": "dynahmrc",
                 "objects": "unseen"})
    if P.get("sensitivity"):
        k = _check_int(P, "sensitivity_tasks", 0)
        for v in P["sensitivity"]:
            key, values = SENSITIVITY[v]
            for team in [t for t in P.get("sensitivity_teams", ()) if t in VARIATION_TEAMS[v]]:
                for value in values:
                    setting = {"T": DEFAULTS["T"], "zones": DEFAULTS["zones"], key: value}
                    for i in range(k):
                        for m in P["methods"]:
                            add({"kind": SENSITIVITY_KIND, "team": team, "instance": i, "method": m, "variation": v,
                                 "T": setting["T"],
                                 **({"zones": setting["zones"]} if setting["zones"] != DEFAULTS["zones"] else {})})
    seen, unique = set(), []
    for s in out:
        key = tuple(sorted(s.items()))
        if key not in seen:
            seen.add(key)
            unique.append(s)
    return unique


def run_notebook(P: Params) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Run (or resume) the notebook's grid; ``(episodes, steps, run folder)``. Bad parameters and
    endpoints raise ``ParameterError`` before any unit runs."""
    with parameter_checks():
        check_parameters(P)
        preflight_endpoints(endpoints(_probe(P)))
        grid = specs(P)
        if not grid:
            raise ValueError("kinds/levels/teams/methods: this run has no unit to run")
    return run_notebook_grid(grid, fn=FN, notebook=NOTEBOOK, P=P, spec_defaults=DEFAULTS, validate=validate)


def episode_frame(episodes: pd.DataFrame, with_unseen: bool = False) -> pd.DataFrame:
    """The episode records with display columns: ``method_label``, ``setting`` (Static or the
    variation), ``ablation_label`` (``full`` for the unablated framework), ``objects`` and 0/1
    ``success``. Episodes with unseen targets (the unseen block) are left out unless
    ``with_unseen``: every table but ``tab:unseen_obj``'s is of the seen household objects."""
    e = episodes.copy()
    e["objects"] = e["objects"].fillna("seen") if "objects" in e.columns else "seen"  # runs before the UTO block
    if not with_unseen:
        e = e[e["objects"] != "unseen"].reset_index(drop=True)
    if "backend" not in e.columns:
        e["backend"] = backend_of(e)
    e["method_label"] = e["method"].map(METHOD_LABELS).fillna(e["method"])
    e["setting"] = e["variation"].where(e["variation"] != "none", "Static")
    labels = []
    for abl, mem, rv in zip(e["ablation"], e["memory"], e["random_votes"]):
        labels.append(f"w/o {abl}" if abl != "none" else "memory 15" if mem == 15 else
                      "50% random votes" if rv == 0.5 else "full" if mem == DEFAULTS["memory"] and not rv else
                      f"memory {mem}, {rv:.0%} random votes")
    e["ablation_label"] = labels
    e["success"] = e["success"].astype(bool).astype(float)
    return e
