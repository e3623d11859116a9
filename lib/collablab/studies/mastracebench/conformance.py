"""What :mod:`collablab.testing` needs of MASTraceBench: a case for every backend x method on a
static task (MAPF's bottleneck) and a game (two TacticDuel decisions against the Single-Agent
opponent). Faults come from :func:`.spec.sabotage`, invalid records from :func:`.spec.is_invalid`."""

from __future__ import annotations

import json
import re
from typing import Any

from .methods import METHODS

#: The tasks every method is checked on: static (one trajectory) and dynamic (one per decision).
CASE_TASKS: dict[str, dict[str, Any]] = {"static": {"task": "mapf", "instance": 0},
                                         "game": {"task": "tactic_duel", "instance": 0, "max_decisions": 2}}

__all__ = ["CASE_TASKS", "conformance_cases", "is_truncated", "usable_reply"]


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


def _prompt(body: dict[str, Any]) -> str:
    return "\n".join(m["content"] if isinstance(m.get("content"), str) else
                     " ".join(str(p.get("text", "")) for p in m.get("content") or [] if isinstance(p, dict))
                     for m in body.get("messages") or [])


def usable_reply(body: dict[str, Any]) -> str:
    """A reply every role of the cases can use: one JSON object with TacticDuel's first legal
    action (or a plan naming every robot of the MAPF instance) plus the keys function agents read
    (``approve``, ``score``, ``feedback``)."""
    text = _prompt(body)
    extra = {"approve": True, "score": 50, "feedback": "fine"}
    m = re.search(r"Legal actions now: ([^.\n]*)\.", text)
    if m:
        return json.dumps({"action": m.group(1).split(", ")[0], **extra})
    n = max([int(k) for k in re.findall(r"robot_(\d+)", text)] or [2])
    return json.dumps({**{f"robot_{i}": ["S"] for i in range(1, n + 1)}, **extra})


def is_truncated(result: dict[str, Any]) -> bool:
    """The unit recorded calls cut at the token budget (``truncated_calls``)."""
    return result["episode"].get("truncated_calls", 0) > 0
