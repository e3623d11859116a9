"""Structured (JSON) output on top of :class:`~collablab.llm.client.LLMClient`.

Modes (``mode=`` or the endpoint's ``structured_mode``):

``json_schema``  ``response_format={"type": "json_schema", "json_schema": {...}}``
                 (OpenAI; ``vllm serve`` accepts the same).
``json_object``  ``response_format={"type": "json_object", "schema": schema}``
                 (llama.cpp / llama-cpp-python server: grammar-constrained JSON).
``none``         prompt only.

In every mode the schema is also stated in the prompt (``instruct=True``), the reply is
validated (JSON parse, first JSON object extracted from surrounding text, then the schema)
and, if invalid, re-asked up to ``max_reasks`` times with the validation error appended.
Each ask is its own cached call (``attempt`` = ask number), so replays reproduce the chain.
A reply that never validates gives ``parsed=None`` and ``parse_error`` set — never an
exception (only :class:`~collablab.llm.cache.CacheMiss` in replay mode propagates).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from .messages import as_messages

if TYPE_CHECKING:  # pragma: no cover
    from .client import LLMClient, LLMResult, Usage

__all__ = [
    "STRUCTURED_MODES",
    "StructuredResult",
    "chat_json",
    "extract_json",
    "response_format_for",
    "schema_instruction",
    "validate",
]

STRUCTURED_MODES = ("json_schema", "json_object", "none")


# ---------------------------------------------------------------------- parsing

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


def extract_json(text: str | None) -> tuple[Any, str | None]:
    """Parse ``text`` as JSON, else the first JSON object inside it (code fences included).

    Returns ``(value, None)`` or ``(None, error message)``.
    """
    if text is None:
        return None, "no reply"
    s = text.strip()
    if not s:
        return None, "empty reply"
    try:
        return json.loads(s), None
    except json.JSONDecodeError as exc:
        first_error = f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
    candidates = [m.group(1).strip() for m in _FENCE.finditer(s)]
    for c in candidates:
        try:
            return json.loads(c), None
        except json.JSONDecodeError:
            pass
    dec = json.JSONDecoder()
    for i, ch in enumerate(s):
        if ch == "{":
            try:
                obj, _ = dec.raw_decode(s, i)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict):
                return obj, None
    return None, first_error + "; no JSON object found in the reply"


# ------------------------------------------------------------------- validation

_TYPES: dict[str, Any] = {
    "object": dict, "array": list, "string": str, "boolean": bool, "null": type(None),
    "integer": int, "number": (int, float),
}


def _type_ok(value: Any, t: str) -> bool:
    if t in ("integer", "number") and isinstance(value, bool):
        return False
    if t == "integer" and isinstance(value, float):
        return value.is_integer()
    py = _TYPES.get(t)
    return True if py is None else isinstance(value, py)


def _mini_validate(value: Any, schema: Mapping[str, Any], path: str = "$") -> str | None:
    """A small JSON-schema subset: type, enum, const, required, properties,
    additionalProperties=false, items, min/max(Length/Items), minimum/maximum, anyOf."""
    if "anyOf" in schema or "oneOf" in schema:
        subs = schema.get("anyOf") or schema.get("oneOf")
        errs = [_mini_validate(value, s, path) for s in subs]
        if all(errs):
            return f"{path}: matches none of the allowed alternatives ({errs[0]})"
    t = schema.get("type")
    if t is not None:
        ts = [t] if isinstance(t, str) else list(t)
        if not any(_type_ok(value, x) for x in ts):
            return f"{path}: expected {' or '.join(ts)}, got {type(value).__name__}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{path}: {value!r} is not one of {schema['enum']!r}"
    if "const" in schema and value != schema["const"]:
        return f"{path}: expected {schema['const']!r}"
    if isinstance(value, dict):
        for k in schema.get("required", []):
            if k not in value:
                return f"{path}: missing required key {k!r}"
        props = schema.get("properties", {})
        for k, v in value.items():
            if k in props:
                err = _mini_validate(v, props[k], f"{path}.{k}")
                if err:
                    return err
            elif schema.get("additionalProperties") is False:
                return f"{path}: unexpected key {k!r}"
    if isinstance(value, list):
        if "items" in schema and isinstance(schema["items"], Mapping):
            for i, v in enumerate(value):
                err = _mini_validate(v, schema["items"], f"{path}[{i}]")
                if err:
                    return err
        if "minItems" in schema and len(value) < schema["minItems"]:
            return f"{path}: fewer than {schema['minItems']} items"
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            return f"{path}: more than {schema['maxItems']} items"
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            return f"{path}: shorter than {schema['minLength']}"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return f"{path}: longer than {schema['maxLength']}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{path}: {value} < minimum {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{path}: {value} > maximum {schema['maximum']}"
    return None


def validate(value: Any, schema: Mapping[str, Any]) -> str | None:
    """None if ``value`` matches ``schema``, else a short error message.

    Uses ``jsonschema`` when it is installed, else a small built-in subset validator.
    """
    try:
        import jsonschema
    except ImportError:  # pragma: no cover - jsonschema comes with nbformat
        return _mini_validate(value, schema)
    cls = jsonschema.validators.validator_for(schema)
    err = jsonschema.exceptions.best_match(cls(schema).iter_errors(value))
    if err is None:
        return None
    where = "$" + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
    return f"{where}: {err.message}"[:500]


# ------------------------------------------------------------------- requesting


def response_format_for(mode: str, schema: Mapping[str, Any], *, name: str = "reply",
                        strict: bool = False) -> dict[str, Any] | None:
    if mode == "json_schema":
        return {"type": "json_schema",
                "json_schema": {"name": name, "schema": dict(schema), "strict": bool(strict)}}
    if mode == "json_object":
        return {"type": "json_object", "schema": dict(schema)}
    if mode == "none":
        return None
    raise ValueError(f"structured mode {mode!r}: expected one of {STRUCTURED_MODES}")


def schema_instruction(schema: Mapping[str, Any]) -> str:
    return ("Reply with only a JSON object (no prose, no code fence) that matches this "
            "JSON schema:\n" + json.dumps(schema, sort_keys=True, separators=(",", ":")))


def _with_instruction(messages: list[dict[str, Any]], schema: Mapping[str, Any]) -> list[dict[str, Any]]:
    instr = schema_instruction(schema)
    out = [dict(m) for m in messages]
    if out and out[0].get("role") == "system" and isinstance(out[0].get("content"), str):
        out[0]["content"] = out[0]["content"].rstrip() + "\n\n" + instr
    else:
        out.insert(0, {"role": "system", "content": instr})
    return out


def _reask_message(error: str) -> dict[str, Any]:
    return {"role": "user",
            "content": f"Your previous reply was invalid: {error}. Reply again with only a "
                       "JSON object that matches the schema."}


@dataclass(frozen=True)
class StructuredResult:
    """Outcome of :func:`chat_json`.

    ``parsed`` is the validated object or None; ``parse_error`` says why not; ``error`` is
    the transport error of the last ask (then ``parse_error`` is set too). ``asks`` holds
    every ask's :class:`LLMResult`; ``usage``/``latency_s`` are summed over them.
    """

    parsed: Any
    parse_error: str | None
    text: str | None
    error: str | None
    asks: tuple["LLMResult", ...]
    call_id: str
    sample_index: int
    model: str
    endpoint: str
    mode: str
    usage: "Usage" = field(default=None)  # type: ignore[assignment]
    latency_s: float = 0.0
    cache: str = "off"

    @property
    def ok(self) -> bool:
        return self.parse_error is None and self.error is None

    @property
    def n_asks(self) -> int:
        return len(self.asks)

    @property
    def attempts(self) -> int:
        return sum(a.attempts for a in self.asks)

    def to_record(self) -> dict[str, Any]:
        u = self.usage
        return {
            "call_id": self.call_id, "sample_index": self.sample_index, "model": self.model,
            "endpoint": self.endpoint, "mode": self.mode,
            "parsed": json.dumps(self.parsed, sort_keys=True) if self.parsed is not None else None,
            "parse_error": self.parse_error, "error": self.error, "text": self.text,
            "n_asks": self.n_asks, "attempts": self.attempts, "latency_s": self.latency_s,
            "cache": self.cache,
            "prompt_tokens": u.prompt_tokens if u else None,
            "completion_tokens": u.completion_tokens if u else None,
            "total_tokens": u.total_tokens if u else None,
        }


def _combined_cache(statuses: list[str]) -> str:
    if all(s == "hit" for s in statuses):
        return "hit"
    if all(s == "off" for s in statuses):
        return "off"
    return "miss"


async def chat_json(client: "LLMClient", messages: Any, schema: Mapping[str, Any], *,
                    call_id: str, sample_index: int = 0, mode: str | None = None,
                    name: str = "reply", strict: bool = False, max_reasks: int = 2,
                    instruct: bool = True, **chat_kwargs: Any) -> StructuredResult:
    """Ask for a JSON object matching ``schema``; validate; re-ask on invalid replies.

    ``chat_kwargs`` go to :meth:`LLMClient.chat` (temperature, max_tokens, seed, ...).
    """
    from .client import Usage

    mode = mode or client.endpoint.structured_mode
    rf = response_format_for(mode, schema, name=name, strict=strict)
    msgs = as_messages(messages)
    if instruct:
        msgs = _with_instruction(msgs, schema)
    chat_kwargs.pop("raise_on_error", None)
    chat_kwargs.pop("attempt", None)
    asks: list[LLMResult] = []
    parsed: Any = None
    parse_error: str | None = None
    for ask in range(max_reasks + 1):
        r = await client.chat(msgs, call_id=call_id, sample_index=sample_index, attempt=ask,
                              response_format=rf, **chat_kwargs)
        asks.append(r)
        if r.error is not None:
            parsed, parse_error = None, f"no reply: {r.error}"
            break
        value, err = extract_json(r.text)
        if err is None:
            err = validate(value, schema)
        if err is None:
            parsed, parse_error = value, None
            break
        parsed, parse_error = None, err
        msgs = msgs + [{"role": "assistant", "content": r.text or ""}, _reask_message(err)]
    usage = Usage()
    for a in asks:
        usage = usage + a.usage
    last = asks[-1]
    return StructuredResult(
        parsed=parsed, parse_error=parse_error, text=last.text, error=last.error,
        asks=tuple(asks), call_id=call_id, sample_index=sample_index, model=last.model,
        endpoint=last.endpoint, mode=mode, usage=usage,
        latency_s=sum(a.latency_s for a in asks), cache=_combined_cache([a.cache for a in asks]))
