"""The LLM policy (MECoBench's prompts, appendix C) over one OpenAI-compatible endpoint per
agent: prompts, reply reading, grounding (B.4), and its spec keys and factory."""

from __future__ import annotations

from typing import Any, Mapping

from .policy import LLMPolicy, LLMSettings
from .spec import (ENDPOINT_DEFAULTS, LLM_DEFAULTS, PROVIDERS, backend_label, check_endpoint_keys, check_llm_spec, endpoint_client,
                   endpoint_spec, live, llm_endpoints, make_llm_policies, per_agent, provider_of)

DEFAULTS = LLM_DEFAULTS
check_spec = check_llm_spec
make_policies = make_llm_policies


def labels(s: Mapping[str, Any]) -> dict[str, Any]:
    """What episode records say about the team beyond the policy name (``pipeline``: paper |
    assisted; heuristic and oracle records carry no such field)."""
    from ...llm import default_cache_mode

    return {"profile": None, "model": s["model"], "llm_cache_mode": s["llm_cache_mode"] or default_cache_mode(),
            "pipeline": s["pipeline"]}


def endpoints(s: Mapping[str, Any]) -> list[Any]:
    """The endpoints a spec calls over the network (none in replay mode)."""
    return live(s, llm_endpoints(s))


def backends(s: Mapping[str, Any]) -> list[str]:
    """``<provider>:<model>`` per agent endpoint."""
    n = s.get("n_agents", 1)
    return [backend_label(p, u, m) for m, p, u in zip(per_agent(s.get("model"), n, "model"),
                                                      per_agent(s.get("provider"), n, "provider"),
                                                      per_agent(s.get("base_url"), n, "base_url"))]


__all__ = ["DEFAULTS", "ENDPOINT_DEFAULTS", "LLM_DEFAULTS", "PROVIDERS", "LLMPolicy", "LLMSettings", "backend_label", "backends",
           "check_endpoint_keys", "check_llm_spec", "check_spec", "endpoint_client", "endpoint_spec", "endpoints", "labels", "live",
           "llm_endpoints", "make_llm_policies", "make_policies", "per_agent",
           "provider_of"]
