"""What :mod:`collablab.testing` needs of MASTraceBench: a case for every backend x method on a
static task (MAPF's bottleneck) and a game (two TacticDuel decisions against the Single-Agent
opponent). Faults come from :func:`.spec.sabotage`, invalid records from :func:`.spec.is_invalid`."""

from __future__ import annotations

from typing import Any

from .methods import METHODS

#: The tasks every method is checked on: static (one trajectory) and dynamic (one per decision).
CASE_TASKS: dict[str, dict[str, Any]] = {"static": {"task": "mapf", "instance": 0},
                                         "game": {"task": "tactic_duel", "instance": 0, "max_decisions": 2}}

__all__ = ["CASE_TASKS", "conformance_cases"]


def conformance_cases(base_url: str) -> dict[str, dict[str, Any]]:
    """Named specs: ``<backend>/<method>/<static|game>``; LLM cases point at ``base_url``."""
    llm = {"backend": "llm", "model": "conformance", "base_url": base_url, "provider": "compat",
           "llm_cache_mode": "off", "llm_max_attempts": 1, "max_tokens": 64}
    cases: dict[str, dict[str, Any]] = {}
    for kind, where in CASE_TASKS.items():
        for method in METHODS:
            cases[f"heuristic/{method}/{kind}"] = {**where, "method": method, "seed": 3}
            cases[f"llm/{method}/{kind}"] = {**where, "method": method, "seed": 3, **llm}
    return cases
