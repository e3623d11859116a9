"""Plain data of the LLM floor: where a model is (:class:`EndpointSpec`), what a call
returned (:class:`LLMResult`, :class:`Usage`), the error of a call that got no reply
(:class:`EndpointError`), and the allowed modes."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Mapping
from urllib.parse import urlsplit

from .redact import redact, register

__all__ = ["CACHE_MODES", "ENDPOINT_ERROR_KINDS", "PARAM_RULES", "PROVIDERS", "STRUCTURED_MODES", "THINKING", "EndpointError", "EndpointSpec",
           "LLMCallError", "LLMResult", "Usage", "check_key_env_name", "check_structured_mode",
           "is_loopback_url"]

#: Response-cache modes: read-write (default), replay (a miss is an error), off.
CACHE_MODES = ("rw", "replay", "off")
#: Structured-output modes (see :mod:`collablab.llm.structured`).
STRUCTURED_MODES = ("json_schema", "json_object", "none")
#: Values of a call's ``thinking`` setting (:mod:`collablab.llm.wire`).
THINKING = ("on", "off", "auto")
#: Values of an endpoint's ``param_rules`` (:mod:`collablab.llm.wire`).
PARAM_RULES = ("auto", "standard", "reasoning")
#: Values of an endpoint's ``provider`` (``auto``: detected from the server).
PROVIDERS = ("auto", "openai", "vllm", "llamacpp", "compat")
#: Why a call got no reply (:attr:`EndpointError.kind`); only ``transport`` is transient.
ENDPOINT_ERROR_KINDS = ("transport", "auth", "not_found", "rejected", "missing_key")
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
    ``replicas`` are more base URLs serving the same model under this alias (each call goes to
    the least loaded one). ``outage_wait_s``: how long a call waits for a down endpoint to answer
    again (probed every ``probe_interval_s``) before it fails. ``default_params`` are request
    parameters of every call (a call's own win; ``extra_body`` dicts are merged).
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
    replicas: tuple[str, ...] = ()
    outage_wait_s: float = 600.0
    probe_interval_s: float = 2.0
    provider: str = "auto"
    param_rules: str = "auto"
    thinking: str = "auto"

    def __post_init__(self) -> None:
        if not isinstance(self.alias, str) or not self.alias:
            raise ValueError(f"alias: must be a non-empty string, got {self.alias!r}")
        if not isinstance(self.model, str) or not self.model:
            raise ValueError(f"model: must be a non-empty string, got {self.model!r}")
        for name in ("max_concurrency", "max_attempts"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: must be an integer >= 1, got {v!r}")
        for name, lo in (("timeout_s", 0.0), ("backoff_base_s", None), ("backoff_max_s", None),
                         ("outage_wait_s", None), ("probe_interval_s", 0.0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 or (lo is not None and v <= lo):
                raise ValueError(f"{name}: must be a {'positive' if lo is not None else 'non-negative'} "
                                 f"number, got {v!r}")
        check_structured_mode(self.structured_mode)
        check_key_env_name(self.api_key_env)
        for name, allowed in (("provider", PROVIDERS), ("param_rules", PARAM_RULES), ("thinking", THINKING)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name}: {getattr(self, name)!r} is not allowed; allowed: {', '.join(allowed)}")
        for name, url in [("base_url", self.base_url)] + [("replicas", u) for u in (
                [self.replicas] if isinstance(self.replicas, str) else list(self.replicas))]:
            if url is not None and not (isinstance(url, str) and re.match(r"^https?://", url)):
                raise ValueError(f"{name}: {url!r} must start with http:// or https://")
        if isinstance(self.replicas, str):
            raise ValueError("replicas: must be a list of base URLs, not one string")
        if self.replicas and self.base_url is None:
            raise ValueError("replicas: need a base_url (replicas are more servers of the base_url's model)")
        object.__setattr__(self, "replicas", tuple(self.replicas))
        object.__setattr__(self, "default_params", dict(self.default_params))
        register(self.api_key_env)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "EndpointSpec":
        """Build from a config mapping (e.g. a params YAML); unknown keys are an error."""
        known = set(cls.__dataclass_fields__)
        extra = set(d) - known
        if extra:
            raise ValueError(f"unknown EndpointSpec fields: {sorted(extra)}; allowed: {', '.join(sorted(known))}")
        return cls(**dict(d))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["default_params"] = dict(self.default_params)
        d["replicas"] = list(self.replicas)
        return d

    def with_(self, **changes: Any) -> "EndpointSpec":
        return replace(self, **changes)

    @property
    def base_urls(self) -> tuple[str | None, ...]:
        """``base_url`` then the replicas (``(None,)`` for the OpenAI API)."""
        return (self.base_url, *self.replicas)

    @property
    def is_loopback(self) -> bool:
        return self.base_url is not None and _is_loopback(self.base_url)


# ----------------------------------------------------------------------- results


@dataclass(frozen=True)
class Usage:
    """Token counts as the server reports them; ``image_tokens`` the prompt's image tokens where
    the server reports them (``usage.prompt_tokens_details.image_tokens``: OpenAI's schema; vLLM
    and llama.cpp report none, so it stays None there)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    image_tokens: int | None = None

    def __add__(self, other: "Usage") -> "Usage":
        def add(a, b):
            return None if a is None and b is None else (a or 0) + (b or 0)
        return Usage(add(self.prompt_tokens, other.prompt_tokens),
                     add(self.completion_tokens, other.completion_tokens),
                     add(self.total_tokens, other.total_tokens),
                     add(self.image_tokens, other.image_tokens))


@dataclass(frozen=True)
class LLMResult:
    """One logical chat call: the model's reply. ``cache`` is hit/miss/off.

    ``text`` is the reply's final answer: its ``content`` without the thoughts, cut at the call's
    stop sequences (:func:`~collablab.llm.reply.read_reply`; ``""`` for an empty reply, which is a
    reply: the caller decides it is unusable); ``reasoning`` the thoughts, sent apart by the server
    or inline, if any. ``finish_reason`` is the server's (``"stop"`` when the client's stop
    sequence ended the answer); :attr:`truncated` tells a reply cut at ``max_tokens``.
    ``error`` is None for every result :meth:`~collablab.llm.client.LLMClient.chat` returns; it
    is set on the result an :class:`EndpointError` carries.

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
    reasoning: str | None = None  # the thoughts: reasoning_content / reasoning, and inline <think> blocks

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def truncated(self) -> bool:
        """The reply was cut at the token budget (``finish_reason`` ``length``): its answer is a
        fragment, never to be parsed."""
        return self.finish_reason == "length"

    def to_record(self) -> dict[str, Any]:
        """A flat dict for a DataFrame row / JSON log."""
        d = asdict(self)
        u = d.pop("usage")
        d.update(prompt_tokens=u["prompt_tokens"], completion_tokens=u["completion_tokens"],
                 total_tokens=u["total_tokens"], image_tokens=u["image_tokens"])
        return d


def is_loopback_url(base_url: str | None) -> bool:
    """Whether ``base_url`` points at this machine (127.0.0.0/8, ::1, localhost)."""
    return base_url is not None and _is_loopback(base_url)


class LLMCallError(RuntimeError):
    """A chat call that got no model reply; ``result`` is its :class:`LLMResult` (``error`` set).
    The client raises the subclass :class:`EndpointError`."""

    def __init__(self, result: LLMResult):
        self.result = result
        super().__init__(redact(f"LLM call {result.call_id!r} (sample {result.sample_index}) on "
                                f"{result.endpoint!r} failed after {result.attempts} attempt(s): "
                                f"{result.error}"))

    def __reduce__(self) -> Any:
        return (type(self), (self.result,))


class EndpointError(LLMCallError):
    """No reply was obtained from the endpoint: transport failure after the retries, rejected key,
    model not served, request rejected, or no key (``kind``, :data:`ENDPOINT_ERROR_KINDS`).

    ``transient`` is True for ``transport`` only (the same call may work later: the run grid
    records the episode as failed and a rerun retries it). The message names the call id, the
    endpoint alias and the cause, with key values redacted.
    """

    def __init__(self, result: LLMResult, kind: str = "transport"):
        if kind not in ENDPOINT_ERROR_KINDS:
            raise ValueError(f"kind: {kind!r} is not allowed; allowed: {', '.join(ENDPOINT_ERROR_KINDS)}")
        self.kind = kind
        self.result = result
        RuntimeError.__init__(self, redact(
            f"LLM call {result.call_id!r} (sample {result.sample_index}, attempt {result.attempt}) on "
            f"endpoint {result.endpoint!r} got no reply ({kind}, {result.attempts} HTTP request(s)): "
            f"{result.error}"))

    @property
    def transient(self) -> bool:
        return self.kind == "transport"

    def __reduce__(self) -> Any:
        return (type(self), (self.result, self.kind))
