"""Checks every study's flat spec starts with (DESIGN.md: bad input gets a clear error naming the
field and the allowed values, before work starts): unknown keys, choices, whole numbers; and the
shapes a notebook's parameters take (lists of names or numbers, counts by name, strings)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

__all__ = ["check_choice", "check_counts", "check_int", "check_items", "check_str", "with_defaults"]


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


def check_items(s: Mapping[str, Any], key: str, allowed: Collection[Any] | None = None, *, low: int | None = None,
                empty: bool = False) -> list[Any]:
    """``s[key]`` as a list: a list of distinct items, not empty unless ``empty``, each one of
    ``allowed`` or (with ``low``) an integer >= ``low``; ValueError naming ``key`` otherwise."""
    v = s[key]
    what = (f"integers >= {low}" if low is not None else ", ".join(map(str, allowed)) if allowed is not None
            else "strings")
    if not isinstance(v, (list, tuple)):
        raise ValueError(f"{key}: {v!r} is not allowed; allowed: a list of {what}")
    if not v and not empty:
        raise ValueError(f"{key}: [] is not allowed; allowed: a non-empty list of {what}")
    seen: list[Any] = []
    for item in v:
        if low is not None:
            ok = not isinstance(item, bool) and isinstance(item, int) and item >= low
        elif allowed is not None:
            ok = isinstance(item, (str, int, float)) and not isinstance(item, bool) and item in allowed
        else:
            ok = isinstance(item, str) and bool(item)
        if not ok:
            raise ValueError(f"{key}: {item!r} is not allowed; allowed: {what}")
        if item in seen:
            raise ValueError(f"{key}: {item!r} is listed twice; list each once")
        seen.append(item)
    return list(v)


def check_counts(s: Mapping[str, Any], key: str, allowed: Collection[str], low: int = 0) -> dict[str, int]:
    """``s[key]`` as ``{name: count}``: names from ``allowed``, counts integers >= ``low``; ValueError
    naming ``key`` (and the name) otherwise."""
    v = s[key]
    if not isinstance(v, Mapping):
        raise ValueError(f"{key}: {v!r} is not allowed; allowed: a mapping of name -> integer >= {low} "
                         f"(names: {', '.join(allowed)})")
    for name, n in v.items():
        if name not in allowed:
            raise ValueError(f"{key}: {name!r} is not allowed; allowed: {', '.join(allowed)}")
        if isinstance(n, bool) or not isinstance(n, int) or n < low:
            raise ValueError(f"{key}: {name}: must be an integer >= {low}, got {n!r}")
    return dict(v)


def check_str(s: Mapping[str, Any], key: str, allow_none: bool = False) -> None:
    """ValueError unless ``s[key]`` is a string (or None when allowed)."""
    v = s[key]
    if not (isinstance(v, str) or (allow_none and v is None)):
        raise ValueError(f"{key}: must be a string{' or None' if allow_none else ''}, got {v!r}")
