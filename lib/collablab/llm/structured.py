"""Structured (JSON) output and the one re-ask loop of collablab's LLM calls.

Modes (``mode=`` or the endpoint's ``structured_mode``, :data:`~collablab.llm.types.STRUCTURED_MODES`):

``json_schema``  ``response_format={"type": "json_schema", "json_schema": {...}}``
                 (OpenAI; ``vllm serve`` accepts the same).
``json_object``  ``response_format={"type": "json_object", "schema": schema}``
                 (llama.cpp / llama-cpp-python server: grammar-constrained JSON).
``none``         prompt only.

:func:`ask` is the loop every caller uses: ask, read the reply with a ``parse`` hook, and
re-ask with the reason up to ``max_reasks`` times. :func:`chat_json` is :func:`ask` with the
schema stated in the prompt and a parse hook that extracts the first JSON object
(:func:`extract_json`, :func:`find_json`) and validates it against the schema (jsonschema).
Each ask is its own cached call (``attempt`` = ask number), so replays reproduce the chain.
A reply that never parses (an empty one included) gives ``parsed=None`` and ``parse_error``
set, never an exception. A call that got no reply raises
:class:`~collablab.llm.types.EndpointError` (it propagates: it is not the model's answer), and
a miss in replay mode :class:`~collablab.llm.cache.CacheMiss`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol

from .messages import as_messages
from .types import STRUCTURED_MODES, EndpointError, LLMResult, Usage, check_structured_mode

__all__ = [
    "STRUCTURED_MODES",
    "ChatClient",
    "StructuredResult",
    "ask",
    "chat_json",
    "close_truncated",
    "extract_json",
    "find_json",
    "response_format_for",
    "schema_instruction",
    "truncation_error",
    "validate",
]

#: A parse hook: reply text -> ``(value, None)`` or ``(None, why it cannot be used)``.
Parse = Callable[[str | None], tuple[Any, str | None]]


class ChatClient(Protocol):
    """What :func:`ask` needs of a client (:class:`~collablab.llm.client.LLMClient` is one)."""

    endpoint: Any

    async def chat(self, messages: Any, *, call_id: str, **kwargs: Any) -> LLMResult: ...


# ---------------------------------------------------------------------- parsing

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def close_truncated(text: str) -> str:
    """Close the strings, objects and arrays a reply cut off at ``max_tokens`` left open."""
    stack: list[str] = []
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
    out = text + ('"' if in_str else "")
    out = re.sub(r"[\s,:]+$", "", out)
    if stack and stack[-1] == "}":  # a dangling key without its value
        m = re.search(r'([{,])\s*"(?:[^"\\]|\\.)*"$', out)
        if m and not re.search(r':\s*"(?:[^"\\]|\\.)*"$', out[max(0, m.start() - 1):]):
            out = out[:m.start() + (1 if m.group(1) == "{" else 0)]
    return out + "".join(reversed(stack))


def find_json(text: str | None, kind: type = dict, want: Callable[[Any], bool] | None = None, *,
              repair: bool = False) -> Any:
    """The first JSON ``kind`` (dict or list) in ``text`` that satisfies ``want``; code fences and
    trailing commas are tolerated. None if there is none.

    ``repair`` also closes a value left open (:func:`close_truncated`). It is off by default: a
    reply cut at ``max_tokens`` is recorded as truncated, never read from its fragment, and an
    object the model left open is not an answer (a half-written memory would replace a whole one).
    """
    if not text:
        return None
    opener = "{" if kind is dict else "["
    dec = json.JSONDecoder()
    blobs = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for blob in blobs:
        for variant in (blob, _TRAILING_COMMA.sub(r"\1", blob)):
            for i, ch in enumerate(variant):
                if ch != opener:
                    continue
                try:
                    value, _ = dec.raw_decode(variant, i)
                except (ValueError, RecursionError):  # RecursionError: nested ~1000 deep
                    continue
                if isinstance(value, kind) and (want is None or want(value)):
                    return value
    start = text.find(opener) if repair else -1  # last resort: a value left open
    while start >= 0:
        try:
            value, _ = dec.raw_decode(_TRAILING_COMMA.sub(r"\1", close_truncated(text[start:])))
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, kind) and (want is None or want(value)):
            return value
        start = text.find(opener, start + 1)
    return None


def extract_json(text: str | None) -> tuple[Any, str | None]:
    """Parse ``text`` as JSON, else a fenced JSON value, else the first JSON object inside it
    (:func:`find_json`). Returns ``(value, None)`` or ``(None, error message)``."""
    if text is None:
        return None, "no reply"
    s = text.strip()
    if not s:
        return None, "empty reply"
    try:
        return json.loads(s), None
    except json.JSONDecodeError as exc:
        first_error = f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
    except (ValueError, RecursionError) as exc:  # a number of 4,300+ digits; nesting ~1000 deep
        first_error = f"not valid JSON ({type(exc).__name__})"
    for m in _FENCE.finditer(s):
        try:
            return json.loads(m.group(1).strip()), None
        except (ValueError, RecursionError):
            pass
    obj = find_json(s)
    if obj is not None:
        return obj, None
    return None, first_error + "; no JSON object found in the reply"


def truncation_error(result: LLMResult) -> str:
    """The parse error of a reply cut at the token budget; it starts with ``truncated``."""
    where = "inside its thoughts" if result.reasoning and not (result.text or "").strip() else "in its answer"
    return f"truncated: the reply was cut at the token budget {where} (finish_reason=length)"


# ------------------------------------------------------------------- validation


def validate(value: Any, schema: Mapping[str, Any]) -> str | None:
    """None if ``value`` matches the JSON ``schema`` (jsonschema), else a short error message."""
    import jsonschema

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
    check_structured_mode(mode)
    return None


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


def _reask_message(error: str) -> str:
    return (f"Your previous reply was invalid: {error}. Reply again with only a "
            "JSON object that matches the schema.")


@dataclass(frozen=True)
class StructuredResult:
    """Outcome of :func:`ask` / :func:`chat_json`.

    ``parsed`` is the validated object or None; ``parse_error`` says why not. ``error`` is
    always None (a call without a reply raises :class:`~collablab.llm.types.EndpointError`;
    the field stays for the record layout). ``asks`` holds every ask's :class:`LLMResult`;
    ``usage``/``latency_s`` are summed over them.
    """

    parsed: Any
    parse_error: str | None
    text: str | None
    error: str | None
    asks: tuple[LLMResult, ...]
    call_id: str
    sample_index: int
    model: str
    endpoint: str
    mode: str
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    cache: str = "off"

    @property
    def ok(self) -> bool:
        return self.parse_error is None and self.error is None

    @property
    def truncated(self) -> bool:
        """The last ask's reply was cut at the token budget (nothing was parsed from it)."""
        return bool(self.asks) and self.asks[-1].truncated

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


async def ask(client: ChatClient, messages: Any, parse: Parse, *, call_id: str, sample_index: int = 0,
              max_reasks: int = 2, reask: Callable[[str], str] = _reask_message, mode: str = "none",
              **chat_kwargs: Any) -> StructuredResult:
    """Ask; read the reply with ``parse``; re-ask up to ``max_reasks`` times with the reason.

    A re-ask appends the unusable reply and a user message ``reask(reason)``. A reply cut at the
    token budget is not parsed and not re-asked: ``parse_error`` is :func:`truncation_error`'s
    (``truncated: ...``) and :attr:`StructuredResult.truncated` is set. A call without a
    reply raises :class:`~collablab.llm.types.EndpointError` (also when ``client.chat`` returns
    a result with ``error`` set instead of raising). ``chat_kwargs`` go to ``client.chat``
    (temperature, max_tokens, seed, response_format, ...).
    """
    msgs = as_messages(messages)
    chat_kwargs.pop("attempt", None)
    asks: list[LLMResult] = []
    parsed: Any = None
    parse_error: str | None = None
    for n in range(max_reasks + 1):
        r = await client.chat(msgs, call_id=call_id, sample_index=sample_index, attempt=n, **chat_kwargs)
        if r.error is not None:
            raise EndpointError(r) from None
        asks.append(r)
        if r.truncated:  # a fragment is never parsed, and the same budget would cut it again
            parsed, parse_error = None, truncation_error(r)
            break
        parsed, parse_error = parse(r.text)
        if parse_error is None:
            break
        parsed = None
        msgs = msgs + [{"role": "assistant", "content": r.text or ""},
                       {"role": "user", "content": reask(parse_error)}]
    usage = Usage()
    for a in asks:
        usage = usage + a.usage
    last = asks[-1]
    return StructuredResult(
        parsed=parsed, parse_error=parse_error, text=last.text, error=last.error,
        asks=tuple(asks), call_id=call_id, sample_index=sample_index, model=last.model,
        endpoint=last.endpoint, mode=mode, usage=usage,
        latency_s=sum(a.latency_s for a in asks), cache=_combined_cache([a.cache for a in asks]))


async def chat_json(client: ChatClient, messages: Any, schema: Mapping[str, Any], *,
                    call_id: str, sample_index: int = 0, mode: str | None = None,
                    name: str = "reply", strict: bool = False, max_reasks: int = 2,
                    instruct: bool = True, **chat_kwargs: Any) -> StructuredResult:
    """Ask for a JSON object matching ``schema``; validate; re-ask on invalid replies.

    ``chat_kwargs`` go to :meth:`LLMClient.chat` (temperature, max_tokens, seed, ...).
    """
    mode = mode or client.endpoint.structured_mode
    rf = response_format_for(mode, schema, name=name, strict=strict)
    msgs = as_messages(messages)
    if instruct:
        msgs = _with_instruction(msgs, schema)

    def parse(text: str | None) -> tuple[Any, str | None]:
        value, err = extract_json(text)
        if err is None:
            err = validate(value, schema)
        return (None, err) if err else (value, None)

    return await ask(client, msgs, parse, call_id=call_id, sample_index=sample_index, max_reasks=max_reasks,
                     mode=mode, response_format=rf, **chat_kwargs)
