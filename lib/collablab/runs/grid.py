"""Parameter grids: expand ``base`` x ``axes`` into flat specs, and name each spec.

A spec is a flat, JSON-serializable dict that an episode function takes. Its identity is
its canonical JSON (sorted keys, no whitespace); ``episode_key`` adds a readable prefix.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["Spec", "canonical_json", "default_run_id", "episode_key", "expand_grid", "normalize_specs", "to_json_value"]

Spec = dict[str, Any]

_KEY_PREFIX_CHARS = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_.=+-]+")


def to_json_value(obj: Any) -> Any:
    """``json.dumps`` default: numpy scalars/arrays become Python values; anything else fails."""
    item = getattr(obj, "item", None)
    if callable(item) and type(obj).__module__ == "numpy" and getattr(obj, "ndim", 1) == 0:
        return item()
    tolist = getattr(obj, "tolist", None)
    if callable(tolist) and type(obj).__module__ == "numpy":
        return tolist()
    raise TypeError(f"value {obj!r} of type {type(obj).__name__} is not JSON-serializable")


def canonical_json(obj: Any) -> str:
    """The canonical text of a spec: sorted keys, compact, no NaN/inf (they never compare equal)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False, default=to_json_value)


def _digest(text: str, n: int) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:n]


def expand_grid(base: Mapping[str, Any], axes: Mapping[str, Sequence[Any]]) -> list[Spec]:
    """Cartesian product of ``axes`` over ``base``, like nested for-loops.

    The first axis varies slowest and values keep their listed order, so the same
    ``base``/``axes`` always give the same list. An axis overrides a ``base`` key of the
    same name. Every axis must be a non-empty list.
    """
    if not isinstance(base, Mapping):
        raise ValueError(f"base: must be a mapping of parameter -> value, got {type(base).__name__}")
    if not isinstance(axes, Mapping):
        raise ValueError(f"axes: must be a mapping of parameter -> list of values, got {type(axes).__name__}")
    names = list(axes)
    for name in names:
        values = axes[name]
        if not isinstance(name, str):
            raise ValueError(f"axes: parameter names must be strings, got {name!r}")
        if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Sequence):
            raise ValueError(f"axes.{name}: must be a list of values, got {type(values).__name__} {values!r}")
        if len(values) == 0:
            raise ValueError(f"axes.{name}: empty list; the grid would be empty")
    for name in base:
        if not isinstance(name, str):
            raise ValueError(f"base: parameter names must be strings, got {name!r}")
    specs: list[Spec] = []
    for combo in itertools.product(*(list(axes[n]) for n in names)):
        spec = dict(base)
        spec.update(zip(names, combo))
        specs.append(spec)
    return specs


def _short(v: Any) -> str | None:
    if isinstance(v, bool) or v is None:
        return str(v).lower()
    if isinstance(v, (int, float, str)):
        s = str(v)
        return s if len(s) <= 24 else None
    return None


def episode_key(spec: Mapping[str, Any]) -> str:
    """Stable id of a spec: readable ``k=v`` pairs (sorted, short scalars only) + a hash.

    The 12-hex hash is of the canonical JSON, so equal specs (whatever their key order)
    share a key and different specs practically never do; the prefix is only for humans.
    """
    text = canonical_json(dict(spec))
    parts: list[str] = []
    used = 0
    for k in sorted(spec):
        s = _short(spec[k])
        if s is None:
            continue
        part = _UNSAFE.sub("_", f"{k}={s}")
        if used + len(part) + 1 > _KEY_PREFIX_CHARS:
            break
        parts.append(part)
        used += len(part) + 1
    prefix = "_".join(parts)
    return f"{prefix}-{_digest(text, 12)}" if prefix else _digest(text, 12)


def default_run_id(specs: Sequence[Mapping[str, Any]], fn: str) -> str:
    """A short hash of ``fn`` and the ordered specs: the same grid resumes into the same folder."""
    body = fn + "\n" + "\n".join(canonical_json(dict(s)) for s in specs)
    return "g" + _digest(body, 11)


def normalize_specs(specs: Sequence[Mapping[str, Any]],
                    validate: Callable[[Spec], Any] | None = None) -> list[Spec]:
    """Check a grid before any work and return the specs as their JSON round-trip.

    Rejects an empty grid, non-dict specs, non-string keys, values that are not JSON
    (or NaN/inf), and duplicate specs; then calls ``validate(spec)`` on each, which
    should raise ``ValueError`` naming the bad field. The round-trip is what the
    episode function receives, in-process or in a worker, so both see the same input.
    """
    if isinstance(specs, Mapping) or not isinstance(specs, Sequence):
        raise ValueError(f"specs: must be a list of dicts, got {type(specs).__name__}")
    if len(specs) == 0:
        raise ValueError("specs: the grid is empty; nothing to run")
    out: list[Spec] = []
    seen: dict[str, int] = {}
    for i, spec in enumerate(specs):
        if not isinstance(spec, Mapping):
            raise ValueError(f"specs[{i}]: must be a dict, got {type(spec).__name__}")
        for k, v in spec.items():
            if not isinstance(k, str):
                raise ValueError(f"specs[{i}]: parameter names must be strings, got {k!r}")
            try:
                canonical_json(v)
            except (TypeError, ValueError) as e:
                detail = "NaN/inf are not allowed" if isinstance(v, float) and not math.isfinite(v) else str(e)
                raise ValueError(f"specs[{i}].{k}: {detail}") from None
        text = canonical_json(dict(spec))
        if text in seen:
            raise ValueError(f"specs[{i}]: duplicate of specs[{seen[text]}] ({text}); "
                             "each episode must differ (add a seed axis?)")
        seen[text] = i
        out.append(json.loads(text))
    if validate is not None:
        for i, spec in enumerate(out):
            try:
                validate(dict(spec))
            except ValueError as e:
                raise ValueError(f"specs[{i}] ({episode_key(spec)}): {e}") from e
    return out
