"""What :mod:`collablab.testing` needs of the partner-information study: a case per backend and
information condition (the full factorial and the full-observability control), on short generated
tasks. Faults come from :func:`.spec.sabotage`, invalid records from :func:`.spec.is_invalid`."""

from __future__ import annotations

import json
from typing import Any

#: Every condition of the paper's grid (§4.1, §4.5): 2x2x2 under partial observability, OAS x OANA under full.
CONDITIONS: dict[str, dict[str, Any]] = {
    **{f"{'oas' if o else 'obj'}{'+ke' if k else ''}{'+oana' if p else ''}": {"oas": o, "ke": k, "oana": p}
       for o in (False, True) for k in (False, True) for p in (False, True)},
    **{f"full/{'oas' if o else 'obj'}{'+oana' if p else ''}": {"oas": o, "oana": p, "observability": "full"}
       for o in (False, True) for p in (False, True)},
}

__all__ = ["CONDITIONS", "conformance_cases", "is_truncated", "usable_reply"]


def conformance_cases(base_url: str) -> dict[str, dict[str, Any]]:
    """Named specs ``<backend>/<condition>``; LLM cases point at ``base_url`` (a few cycles each)."""
    llm = {"backend": "llm", "model": "conformance", "base_url": base_url, "provider": "compat", "constrained": "none",
           "llm_cache_mode": "off", "llm_max_attempts": 1, "max_tokens": 64, "max_cycles": 3}
    cases: dict[str, dict[str, Any]] = {}
    for name, cond in CONDITIONS.items():
        cases[f"heuristic/{name}"] = {"instance": 0, "seed": 3, **cond}
        cases[f"llm/{name}"] = {"instance": 0, "seed": 3, **cond, **llm}
    return cases


def usable_reply(body: dict[str, Any]) -> str:
    """A reply every planner call can use: a thought and ``Wait[]`` (ReAct), or its JSON form when
    the request asks for JSON."""
    if body.get("response_format"):
        return json.dumps({"thought": "I wait for my partner.", "action": {"tool": "Wait", "args": []}})
    return "Thought: I wait for my partner.\nWait[]\nAssigned!"


def is_truncated(result: dict[str, Any]) -> bool:
    """The episode recorded replies cut at the token budget (``invalid_cause`` ``truncated``)."""
    return result["episode"].get("truncated_replies", 0) > 0 and all(
        s["invalid_cause"] == "truncated" for s in result["steps"] if s["invalid"])
