"""Checks every study's flat spec starts with (DESIGN.md: bad input gets a clear error naming the
field and the allowed values, before work starts): unknown keys, choices, whole numbers."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

__all__ = ["check_choice", "check_int", "with_defaults"]


def with_defaults(spec: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``spec`` over ``defaults``; ValueError naming unknown keys and the allowed ones."""
    unknown = set(spec) - set(defaults)
    if unknown:
        raise ValueError(f"spec: unknown key(s) {sorted(unknown)}; allowed: {', '.join(defaults)}")
    return {**defaults, **spec}


def check_choice(s: Mapping[str, Any], key: str, allowed: Collection[Any]) -> None:
    """ValueError unless ``s[key]`` is one of ``allowed`` (the message lists them)."""
    if s[key] not in allowed:
        raise ValueError(f"{key}: {s[key]!r} is not allowed; allowed: {', '.join(map(str, allowed))}")


def check_int(s: Mapping[str, Any], key: str, low: int, allow_none: bool = False) -> None:
    """ValueError unless ``s[key]`` is an integer >= ``low`` (not a bool), or None when allowed."""
    v = s[key]
    if allow_none and v is None:
        return
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise ValueError(f"{key}: must be an integer >= {low}{' or None' if allow_none else ''}, got {v!r}")
