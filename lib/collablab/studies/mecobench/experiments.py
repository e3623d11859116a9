"""The MECoBench notebooks' experiments: from a notebook's parameters (``P``, as
:func:`collablab.runs.notebook_parameters` reads them) to the specs it runs and the run itself.

Every parameter reaches the run manifest (``params``); the notebooks only call these and the
tables of :mod:`.tables`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .grids import check_team_sizes, grid, run, team_spec

Params = dict[str, Any]


def _team(P: Params, who: str | None = None) -> dict[str, Any]:
    """The team keys for ``who`` (a profile, or model names for LLM backends) or P's profile."""
    if who is None:
        return team_spec(P["backend"], P["profile"], P["model"], P["base_url"], P["provider"], P["llm_cache_mode"])
    return team_spec(P["backend"], who, who, P["base_url"], P["provider"], P["llm_cache_mode"])


def _run(name: str, specs: list[dict[str, Any]], P: Params) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    return run(name, specs, P, workers=P["workers"], run_id=P["run_id"] or None)


def collaboration_specs(P: Params) -> list[dict[str, Any]]:
    """Notebook 01 (§4, Tables 8-10): parallel team sizes with and without communication, and
    two-agent sequential teams."""
    base = dict(_team(P), prior=P["prior"])
    sizes = check_team_sizes(P["team_sizes"])
    return (grid("parallel", P["n_tasks"], {"n_agents": sizes, "protocol": ["broadcast", "isolated"],
                                            "seed": P["seeds"]}, base)
            + grid("sequential", P["n_tasks"], {"n_agents": [2], "protocol": ["broadcast"], "seed": P["seeds"]}, base))


def modes_specs(P: Params) -> list[dict[str, Any]]:
    """Notebook 02 (§5): every protocol with two agents, leader vs broadcast as teams grow, and
    mixed leader/worker teams (leader first)."""
    base = dict(_team(P), prior=P["prior"])
    modes = [s for st in ("parallel", "sequential")
             for s in grid(st, P["n_tasks"], {"n_agents": [2], "protocol": P["protocols"], "seed": P["seeds"]}, base)]
    scaling = grid("parallel", P["n_tasks"], {"n_agents": check_team_sizes(P["scaling_sizes"]),
                                              "protocol": ["broadcast", "leader"], "seed": P["seeds"]}, base)
    mixed = [dict(s, **_team(P, mt)) for mt in P["mixed_teams"]
             for s in grid("parallel", P["n_tasks"], {"n_agents": [2], "protocol": ["leader"], "seed": P["seeds"]},
                           dict(prior=P["prior"]))]
    return modes + scaling + mixed


def priors_specs(P: Params) -> list[dict[str, Any]]:
    """Notebook 03 (§6.1, Tables 3, 13-16): every prior variant x team size, broadcast."""
    return grid("parallel", P["n_tasks"], {"prior": P["priors"], "n_agents": check_team_sizes(P["team_sizes"]),
                                           "seed": P["seeds"]},
                dict(_team(P), budget=P["budget"], protocol="broadcast"))


def behaviours_specs(P: Params) -> list[dict[str, Any]]:
    """Notebook 04 (§4.3, §6.2): each capability profile (heuristic; one model otherwise) over team
    sizes on parallel tasks and with two agents on sequential tasks."""
    who = P["profiles"] if P["backend"] == "heuristic" else P["profiles"][:1]
    teams = [team_spec(P["backend"], p, P["model"], P["base_url"], P["provider"], P["llm_cache_mode"]) for p in who]
    axes = {"n_agents": check_team_sizes(P["team_sizes"]), "seed": P["seeds"]}
    base = dict(protocol=P["protocol"], prior=P["prior"])
    specs = [dict(s, **t) for t in teams for s in grid("parallel", P["n_tasks"], axes, base)]
    specs += [dict(s, **t) for t in teams for s in grid("sequential", P["n_tasks"], dict(axes, n_agents=[2]), base)]
    return specs


SPECS = {"01_collaboration": collaboration_specs, "02_modes": modes_specs, "03_priors": priors_specs,
         "04_behaviours": behaviours_specs}


def run_notebook(name: str, P: Params) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Run (or resume) notebook ``name``'s grid; ``(episodes, steps, run folder)``."""
    if name not in SPECS:
        raise ValueError(f"name: {name!r} is not a MECoBench notebook; allowed: {', '.join(SPECS)}")
    return _run(name, SPECS[name](P), P)
