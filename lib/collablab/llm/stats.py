"""Per-endpoint call counters of this process (thread-safe), for run summaries.

:class:`~collablab.llm.client.LLMClient` calls :func:`record` once per logical call (a cache
hit, a reply, or a raised error). :func:`take` returns what was recorded since the last take
and starts over (the run grid takes once per episode), :func:`merge` adds two taken dicts and
:func:`summarize` turns one into rates and latency percentiles.

A taken dict maps each endpoint alias to::

    {"calls": n, "cache_hits": n, "http_requests": n, "truncated": n, "errors": {kind: n},
     "prompt_tokens": n, "completion_tokens": n, "latency_s": [...], "queue_s_sum": x}

Tokens and latencies count live calls only (a cache hit costs nothing and its latency is a
lookup); ``errors`` counts raised calls by kind (:data:`~collablab.llm.types.ENDPOINT_ERROR_KINDS`,
or ``"cache_miss"`` in replay mode); ``truncated`` counts replies cut at the token budget. A forked child starts with empty counters.
"""

from __future__ import annotations

import math
import os
import threading
from typing import Any, Mapping

__all__ = ["empty", "merge", "record", "summarize", "take"]

_LOCK = threading.Lock()
_DATA: dict[str, dict[str, Any]] = {}


def _after_fork() -> None:
    """A forked child counts its own calls only."""
    global _LOCK, _DATA
    _LOCK = threading.Lock()
    _DATA = {}


os.register_at_fork(after_in_child=_after_fork)


def empty() -> dict[str, Any]:
    """The counters of an alias with nothing recorded."""
    return {"calls": 0, "cache_hits": 0, "http_requests": 0, "truncated": 0, "errors": {}, "prompt_tokens": 0,
            "completion_tokens": 0, "latency_s": [], "queue_s_sum": 0.0}


def record(alias: str, *, cache: str, latency_s: float, queue_s: float = 0.0,
           prompt_tokens: int | None = None, completion_tokens: int | None = None,
           http_requests: int = 0, error_kind: str | None = None, truncated: bool = False) -> None:
    """Count one logical call of endpoint ``alias`` (``cache``: hit, miss or off; ``truncated``:
    its reply was cut at the token budget)."""
    with _LOCK:
        d = _DATA.get(alias)
        if d is None:
            d = _DATA[alias] = empty()
        d["calls"] += 1
        d["http_requests"] += int(http_requests)
        d["queue_s_sum"] += float(queue_s)
        d["truncated"] = d.get("truncated", 0) + int(bool(truncated))
        if error_kind is not None:
            d["errors"][error_kind] = d["errors"].get(error_kind, 0) + 1
        if cache == "hit":
            d["cache_hits"] += 1
        else:
            d["prompt_tokens"] += int(prompt_tokens or 0)
            d["completion_tokens"] += int(completion_tokens or 0)
            d["latency_s"].append(float(latency_s))


def take() -> dict[str, dict[str, Any]]:
    """The counters recorded since the last take (by alias); the process counters restart."""
    global _DATA
    with _LOCK:
        out, _DATA = _DATA, {}
    return out


def merge(a: Mapping[str, Mapping[str, Any]], b: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The sum of two taken dicts (new dicts; the inputs are not changed)."""
    out: dict[str, dict[str, Any]] = {}
    for src in (a, b):
        for alias, d in src.items():
            t = out.setdefault(alias, empty())
            for k in ("calls", "cache_hits", "http_requests", "truncated", "prompt_tokens", "completion_tokens"):
                t[k] += int(d.get(k, 0) or 0)
            t["queue_s_sum"] += float(d.get("queue_s_sum", 0.0) or 0.0)
            t["latency_s"] = t["latency_s"] + [float(x) for x in d.get("latency_s", ())]
            for kind, n in (d.get("errors") or {}).items():
                t["errors"][kind] = t["errors"].get(kind, 0) + int(n)
    return out


def _percentile(sorted_xs: list[float], q: float) -> float:
    """Linear-interpolated percentile ``q`` in [0, 1] of sorted values."""
    pos = q * (len(sorted_xs) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


def summarize(d: Mapping[str, Mapping[str, Any]], wall_s: float) -> dict[str, dict[str, Any]]:
    """Per alias: calls, calls_per_s (over ``wall_s``), cache_hits, http_requests, truncated, errors (by
    kind), n_errors, prompt/completion/total tokens, tokens_per_s, queue_s_mean, and the latency
    of live calls (latency_mean_s, latency_p50_s, latency_p95_s, latency_max_s; None without any)."""
    out: dict[str, dict[str, Any]] = {}
    wall = float(wall_s) if wall_s and wall_s > 0 else None
    for alias, x in sorted(d.items()):
        lat = sorted(float(v) for v in x.get("latency_s", ()))
        calls = int(x.get("calls", 0))
        tokens = int(x.get("prompt_tokens", 0)) + int(x.get("completion_tokens", 0))
        errors = {str(k): int(v) for k, v in sorted((x.get("errors") or {}).items())}
        out[alias] = {
            "calls": calls,
            "calls_per_s": calls / wall if wall else None,
            "cache_hits": int(x.get("cache_hits", 0)),
            "http_requests": int(x.get("http_requests", 0)),
            "truncated": int(x.get("truncated", 0)),
            "errors": errors,
            "n_errors": sum(errors.values()),
            "prompt_tokens": int(x.get("prompt_tokens", 0)),
            "completion_tokens": int(x.get("completion_tokens", 0)),
            "tokens": tokens,
            "tokens_per_s": tokens / wall if wall else None,
            "queue_s_mean": float(x.get("queue_s_sum", 0.0)) / calls if calls else None,
            "latency_mean_s": sum(lat) / len(lat) if lat else None,
            "latency_p50_s": _percentile(lat, 0.5) if lat else None,
            "latency_p95_s": _percentile(lat, 0.95) if lat else None,
            "latency_max_s": lat[-1] if lat else None,
        }
    return out
