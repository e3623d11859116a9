"""What :mod:`collablab.testing` needs of the DynaHMRC study: a case per backend and method on
short generated tasks (dynahmrc.tex §4.2). Faults come from :func:`.spec.sabotage`, invalid
records from :func:`.spec.is_invalid`."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["CASES", "conformance_cases", "is_truncated", "usable_reply"]

#: Methods run by backend brains (the search baselines do not call a model per robot).
CASES: dict[str, dict[str, Any]] = {
    "dynahmrc": {"method": "dynahmrc", "team": "Ma-MoMa-Mo"},
    "dynahmrc/no_leader": {"method": "dynahmrc", "leader": False, "team": "Ma-MoMa"},
    "coela": {"method": "coela", "team": "Ma-UAV"},
    "coherent": {"method": "coherent", "team": "Ma-MoMa"},
}


def conformance_cases(base_url: str) -> dict[str, dict[str, Any]]:
    """Named specs ``<backend>/<case>``; LLM cases point at ``base_url`` (an easy task each)."""
    llm = {"backend": "llm", "model": "conformance", "base_url": base_url, "provider": "compat",
           "llm_cache_mode": "off", "llm_max_attempts": 1, "max_tokens": 64}
    cases: dict[str, dict[str, Any]] = {}
    for name, case in CASES.items():
        cases[f"heuristic/{name}"] = {"instance": 0, "seed": 3, **case}
        cases[f"llm/{name}"] = {"instance": 0, "seed": 3, **case, **llm}
    return cases


def _prompt(body: dict[str, Any]) -> str:
    return "\n".join(m["content"] if isinstance(m.get("content"), str) else
                     " ".join(str(p.get("text", "")) for p in m.get("content") or [] if isinstance(p, dict))
                     for m in body.get("messages") or [])


def usable_reply(body: dict[str, Any]) -> str:
    """A reply every call can use: ``wait()`` for every robot of COHERENT's team call, else one
    text with every section a stage reads (Contents ``wait()``, Summaries, Plans, a Leader)."""
    m = re.search(r"Choose the next action of every robot: (.*)\.", _prompt(body))
    if m:
        return "Thoughts: we wait.\nActions:\n" + "\n".join(f"{n}: wait()" for n in m.group(1).split(", "))
    return "Thoughts: I wait.\nContents: wait()\nLeader: none\nSummaries: nothing yet\nPlans: wait"


def is_truncated(result: dict[str, Any]) -> bool:
    """The episode recorded replies cut at the token budget (``truncated_replies``)."""
    return result["episode"].get("truncated_replies", 0) > 0
