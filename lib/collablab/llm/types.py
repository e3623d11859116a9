"""Plain data of the LLM floor: where a model is (:class:`EndpointSpec`), what a call
returned (:class:`LLMResult`, :class:`Usage`), its error, and the allowed modes."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Mapping
from urllib.parse import urlsplit

__all__ = ["CACHE_MODES", "STRUCTURED_MODES", "EndpointSpec", "LLMCallError", "LLMResult", "Usage",
           "check_key_env_name", "check_structured_mode"]

#: Response-cache modes: read-write (default), replay (a miss is an error), off.
CACHE_MODES = ("rw", "replay", "off")
#: Structured-output modes (see :mod:`collablab.llm.structured`).
STRUCTURED_MODES = ("json_schema", "json_object", "none")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_structured_mode(mode: str, field_name: str = "structured_mode") -> str:
    """``mode`` if it is one of :data:`STRUCTURED_MODES`, else ValueError naming the field."""
    if mode not in STRUCTURED_MODES:
        raise ValueError(f"{field_name}: {mode!r} is not allowed; allowed: {', '.join(STRUCTURED_MODES)}")
    return mode


def check_key_env_name(name: str | None, field_name: str = "api_key_env") -> str | None:
    """``name`` if it is None or the NAME of an environment variable, never a key itself."""
    if name is not None and (not isinstance(name, str) or name.startswith("sk-") or not _ENV_NAME.fullmatch(name)):
        # Catch the mistake of passing the key itself; do not echo it.
        raise ValueError(f"{field_name}: must be the NAME of an environment variable (e.g. OPENAI_API_KEY), "
                         "never the key itself")
    return name


def _is_loopback(base_url: str) -> bool:
    host = urlsplit(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class EndpointSpec:
    """Where and how to call a model. Holds the *name* of the key's env var, never the key.

    ``api_key_env=None`` means the server needs no key (a dummy one is sent).
    ``structured_mode`` is the default for :func:`~collablab.llm.structured.chat_json`:
    ``json_schema`` (OpenAI, vLLM), ``json_object`` (llama.cpp server) or ``none``.
    """

    alias: str
    model: str
    base_url: str | None = None  # None: the OpenAI API
    api_key_env: str | None = "OPENAI_API_KEY"
    max_concurrency: int = 4
    timeout_s: float = 60.0
    max_attempts: int = 4
    backoff_base_s: float = 0.5
    backoff_max_s: float = 20.0
    structured_mode: str = "json_schema"
    default_params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.alias:
            raise ValueError("EndpointSpec.alias must be non-empty")
        if self.max_concurrency < 1:
            raise ValueError("max_concurrency must be >= 1")
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")
        check_structured_mode(self.structured_mode)
        check_key_env_name(self.api_key_env)
        object.__setattr__(self, "default_params", dict(self.default_params))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "EndpointSpec":
        """Build from a config mapping (e.g. a params YAML); unknown keys are an error."""
        known = set(cls.__dataclass_fields__)
        extra = set(d) - known
        if extra:
            raise ValueError(f"unknown EndpointSpec fields: {sorted(extra)}")
        return cls(**dict(d))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["default_params"] = dict(self.default_params)
        return d

    def with_(self, **changes: Any) -> "EndpointSpec":
        return replace(self, **changes)

    @property
    def is_loopback(self) -> bool:
        return self.base_url is not None and _is_loopback(self.base_url)


# ----------------------------------------------------------------------- results


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None

    def __add__(self, other: "Usage") -> "Usage":
        def add(a, b):
            return None if a is None and b is None else (a or 0) + (b or 0)
        return Usage(add(self.prompt_tokens, other.prompt_tokens),
                     add(self.completion_tokens, other.completion_tokens),
                     add(self.total_tokens, other.total_tokens))


@dataclass(frozen=True)
class LLMResult:
    """One logical chat call. ``error`` is None on success; ``cache`` is hit/miss/off.

    ``latency_s``: wall time of the call without the time queued for a concurrency slot
    (``queue_s``), backoff sleeps included; for a cache hit, the lookup time.
    ``attempts``: HTTP requests made (0 for a hit). ``usage``: as reported by the server
    (for a hit: as stored, so cost metrics do not change on replay).
    """

    text: str | None
    usage: Usage
    latency_s: float
    cache: str
    attempts: int
    error: str | None
    model: str
    endpoint: str
    call_id: str
    sample_index: int = 0
    attempt: int = 0  # logical attempt (re-ask number), part of the cache key
    finish_reason: str | None = None
    queue_s: float = 0.0  # time spent waiting for a concurrency slot
    cache_key: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_record(self) -> dict[str, Any]:
        """A flat dict for a DataFrame row / JSON log."""
        d = asdict(self)
        u = d.pop("usage")
        d.update(prompt_tokens=u["prompt_tokens"], completion_tokens=u["completion_tokens"],
                 total_tokens=u["total_tokens"])
        return d


class LLMCallError(RuntimeError):
    """Raised only when a caller asks for it (``raise_on_error=True``)."""

    def __init__(self, result: LLMResult):
        self.result = result
        super().__init__(f"LLM call {result.call_id!r} (sample {result.sample_index}) on "
                         f"{result.endpoint!r} failed after {result.attempts} attempt(s): "
                         f"{result.error}")

