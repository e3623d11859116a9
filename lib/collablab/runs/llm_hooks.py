"""What the run grid uses of ``collablab.llm``, in one place and imported lazily: call
counts (``collablab.llm.stats``), redaction of recorded texts (``collablab.llm.redact``),
the kind of an ``EndpointError`` and the endpoint preflight (``collablab.llm.preflight``).

A process that never imported ``collablab.llm.stats`` made no LLM call, so its counts are
empty without importing anything (importing ``collablab.llm`` costs ~150 ms an offline worker
need not pay).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import sys
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["check_endpoints", "endpoint_error_kind", "merge_stats", "preflight_error_kind", "redact_jsonl",
           "redact_text", "summarize_stats", "take_stats", "total_tokens"]

_STATS = "collablab.llm.stats"


def take_stats() -> dict[str, dict[str, Any]]:
    """This process's LLM call counts since the last take (``{}`` if it made no call)."""
    mod = sys.modules.get(_STATS)
    if mod is None:
        return {}
    if not hasattr(mod, "take"):  # another thread is importing it right now: wait for that
        mod = importlib.import_module(_STATS)
    return mod.take()


def merge_stats(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Counts ``a`` plus ``b``."""
    if not b:
        return a
    from collablab.llm import stats

    return stats.merge(a, b)


def summarize_stats(counts: dict[str, Any], wall_s: float) -> dict[str, dict[str, Any]]:
    """Per endpoint alias: calls, throughput, cache hits, errors, tokens, latency."""
    if not counts:
        return {}
    from collablab.llm import stats

    return stats.summarize(counts, wall_s)


def total_tokens(counts: dict[str, Any] | None) -> int:
    """Prompt plus completion tokens over every alias of ``counts``."""
    return sum(int(c.get("prompt_tokens") or 0) + int(c.get("completion_tokens") or 0)
               for c in (counts or {}).values())


@functools.lru_cache(maxsize=1)
def _redactor() -> Callable[[str], str]:
    from collablab.llm.redact import redact

    return redact


def redact_text(text: str) -> str:
    """``text`` with the values of secret environment variables replaced by ``***``."""
    f = _redactor()
    return f(text) if text else text


def _redact_values(obj: Any, f: Callable[[str], str]) -> Any:
    if isinstance(obj, str):
        return f(obj)
    if isinstance(obj, (int, float)) and not isinstance(obj, bool):
        text = json.dumps(obj)
        red = f(text)
        return obj if red == text else red  # a number that spells a secret becomes text
    if isinstance(obj, list):
        return [_redact_values(x, f) for x in obj]
    if isinstance(obj, dict):
        return {f(k): _redact_values(v, f) for k, v in obj.items()}
    return obj


def redact_jsonl(data: bytes) -> bytes:
    """JSON lines with every secret redacted; a line where replacing the text would break the
    JSON (a secret that looks like a number) is redacted value by value instead."""
    f = _redactor()
    if not data:
        return data
    text = data.decode("utf-8")
    if f(text) == text:
        return data
    out = []
    for line in text.splitlines(keepends=True):
        red = f(line)
        if red != line:
            try:
                json.loads(red)
            except ValueError:
                red = json.dumps(_redact_values(json.loads(line), f), ensure_ascii=False) + "\n"
        out.append(red)
    return "".join(out).encode("utf-8")


def endpoint_error_kind(e: BaseException) -> str | None:
    """``e.kind`` when ``e`` is a ``collablab.llm`` EndpointError, else None."""
    types = sys.modules.get("collablab.llm.types")
    cls = getattr(types, "EndpointError", None)
    if cls is not None and isinstance(e, cls):
        kind = getattr(e, "kind", None)
        return str(kind) if kind is not None else None
    return None


def preflight_error_kind(e: BaseException) -> str | None:
    """``e.kind`` when ``e`` is a failed endpoint check (``collablab.llm.EndpointCheckError``:
    transport, auth, not_found, missing_key, rejected), else None."""
    mod = sys.modules.get("collablab.llm.preflight")
    cls = getattr(mod, "EndpointCheckError", None)
    if cls is not None and isinstance(e, cls):
        kind = getattr(e, "kind", None)
        return str(kind) if kind is not None else None
    return None


def check_endpoints(specs: Iterable[Any], wait_s: float = 0.0) -> dict[str, dict[str, Any]]:
    """Preflight every endpoint (key set, ``/models`` answers within ``wait_s``, the model served);
    ValueError naming the parameter otherwise. Returns ``{alias: served model info}`` for the manifest."""
    specs = list(specs)
    if not specs:
        return {}
    from collablab.llm.preflight import check_endpoints as check

    served = check(specs, wait_s=wait_s)
    out: dict[str, dict[str, Any]] = {}
    for alias, model in served.items():
        info = dataclasses.asdict(model) if dataclasses.is_dataclass(model) else dict(vars(model))
        info["fingerprint"] = getattr(model, "fingerprint", None)
        out[alias] = info
    return out
