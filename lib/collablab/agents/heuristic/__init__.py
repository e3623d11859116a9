"""The offline heuristic policy (backend ``heuristic``): a planner over its own beliefs with a
capability profile; the spec keys it reads (``profile``), their check and its factory."""

from __future__ import annotations

from typing import Any, Mapping

from .policy import HeuristicPolicy
from .profiles import PROFILES, Profile, get_profile

#: Spec keys of policy ``heuristic``: one profile, or "a,b,..." for one per agent (mixed teams).
DEFAULTS: dict[str, Any] = {"profile": "medium"}


def profiles_of(s: Mapping[str, Any]) -> list[str]:
    """One profile name per agent from ``s["profile"]`` (a single name is shared)."""
    names = str(s["profile"]).split(",")
    return names * s["n_agents"] if len(names) == 1 else names


def check_spec(s: Mapping[str, Any]) -> None:
    """Reject unknown profiles and a per-agent list of the wrong length (ValueError naming the key)."""
    for p in str(s["profile"]).split(","):
        if p not in PROFILES:
            raise ValueError(f"profile: {p!r} is not allowed; allowed: {', '.join(PROFILES)}")
    n = len(profiles_of(s))
    if n != s["n_agents"]:
        raise ValueError(f"profile: {n} profiles for {s['n_agents']} agents; give 1 or {s['n_agents']}")


def make_policies(s: Mapping[str, Any]) -> list[HeuristicPolicy]:
    """One :class:`HeuristicPolicy` per agent."""
    return [HeuristicPolicy(p) for p in profiles_of(s)]


def labels(s: Mapping[str, Any]) -> dict[str, Any]:
    """What episode records say about the team beyond the policy name."""
    return {"profile": s["profile"]}


def backends(s: Mapping[str, Any]) -> list[str]:
    """The backend label(s) this spec's agents record."""
    return ["heuristic"]


def endpoints(s: Mapping[str, Any]) -> list[Any]:
    """The heuristic calls no model."""
    return []


__all__ = ["DEFAULTS", "PROFILES", "HeuristicPolicy", "Profile", "backends", "check_spec", "endpoints", "get_profile",
           "labels", "make_policies", "profiles_of"]
