"""Policies by name: a table of factories that studies build teams from (DESIGN.md, Registries).

Each entry offers the spec keys it reads with their defaults, a check that raises
``ValueError`` naming a bad key, a factory of one policy per agent, the labels episode
records carry, the backend labels of a spec and the model endpoints it calls (checked by the
run grid before its first episode). A study adds keys of its own (the
MECoBench oracle is a study-level team, not a policy).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from . import heuristic, llm
from .base import Policy


@dataclass(frozen=True)
class PolicyKind:
    """How to build and describe the agents of one policy name."""

    name: str
    defaults: Mapping[str, Any]
    check: Callable[[Mapping[str, Any]], None]
    make: Callable[[Mapping[str, Any]], list[Policy]]
    labels: Callable[[Mapping[str, Any]], dict[str, Any]]
    backends: Callable[[Mapping[str, Any]], list[str]]
    endpoints: Callable[[Mapping[str, Any]], list[Any]]  # the EndpointSpecs a spec calls over the network


def _kind(name: str, module: Any) -> PolicyKind:
    return PolicyKind(name, module.DEFAULTS, module.check_spec, module.make_policies, module.labels,
                      module.backends, module.endpoints)


POLICIES: dict[str, PolicyKind] = {"heuristic": _kind("heuristic", heuristic), "llm": _kind("llm", llm)}


def policy_kind(name: str) -> PolicyKind:
    """The entry for ``name``; ValueError naming the allowed policies."""
    if name not in POLICIES:
        raise ValueError(f"policy: {name!r} is not allowed; allowed: {', '.join(POLICIES)}")
    return POLICIES[name]
