"""Async chat client for any OpenAI-compatible endpoint (OpenAI, ``vllm serve``, llama.cpp …).

* configured by an :class:`EndpointSpec` (alias, base_url, model, name of the env var
  holding the key — never the key itself);
* every call goes through the :class:`~collablab.llm.cache.ResponseCache`;
* bounded concurrency per endpoint *alias*, shared by every caller in the process
  (:func:`endpoint_limiter`), across threads and event loops;
* retries with exponential backoff + jitter on 429, 408/409, 5xx, timeouts, connection
  errors and malformed responses; a hard per-attempt timeout;
* the server-reported ``usage`` is the token count;
* a call never raises for model/transport failures (unless ``raise_on_error=True``):
  it returns an :class:`LLMResult` with ``error`` set, so the caller can record an
  invalid action. :class:`~collablab.llm.cache.CacheMiss` in ``replay`` mode does raise.

The API key is read from the environment when a connection is made; it is not stored on
these objects, and it is redacted from every error string this module produces.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import logging
import os
import random
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any, Awaitable, Iterable, Mapping, Sequence, TypeVar

from . import structured
from .cache import CacheMiss, ResponseCache, cache_key, canonical_request
from .limiter import endpoint_limiter
from .messages import as_messages
from .types import EndpointSpec, LLMCallError, LLMResult, Usage

__all__ = ["LLMClient", "run_sync"]

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Sampling parameters that are part of the cache key and forwarded to the API.
SAMPLING_PARAMS = ("temperature", "top_p", "max_tokens", "seed", "stop", "response_format",
                   "presence_penalty", "frequency_penalty", "n", "logit_bias")


# ----------------------------------------------------------------------- sync run


def run_sync(coro: Awaitable[T]) -> T:
    """Run a coroutine to completion from sync code, also inside Jupyter's running loop
    (then it runs on a fresh loop in a helper thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)  # type: ignore[arg-type]
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="collablab-llm") as ex:
        return ex.submit(asyncio.run, coro).result()


# ------------------------------------------------------------------------- errors


def _redact(text: str, secrets: Iterable[str | None]) -> str:
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "***")
    return text


@dataclass
class _Failure:
    message: str
    retryable: bool
    retry_after: float | None = None


def _classify(exc: BaseException) -> _Failure:
    import openai

    name = type(exc).__name__
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError, openai.APITimeoutError)):
        return _Failure(f"timeout: {name}", True)
    if isinstance(exc, openai.APIConnectionError):
        return _Failure(f"connection error: {name}: {exc}", True)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        retry_after = None
        try:
            ra = exc.response.headers.get("retry-after")
            retry_after = float(ra) if ra is not None else None
        except (TypeError, ValueError, AttributeError):
            retry_after = None
        retryable = status in (408, 409, 429) or status >= 500
        return _Failure(f"HTTP {status}: {name}: {exc}", retryable, retry_after)
    if isinstance(exc, openai.APIResponseValidationError):
        return _Failure(f"malformed response: {name}: {exc}", True)
    if isinstance(exc, (json.JSONDecodeError, ValueError, KeyError, IndexError, AttributeError)):
        return _Failure(f"malformed response: {name}: {exc}", True)
    return _Failure(f"{name}: {exc}", False)


# ------------------------------------------------------------------------- client


class LLMClient:
    """Chat client for one endpoint, with cache, retries and a process-wide concurrency bound.

    >>> client = LLMClient(EndpointSpec(alias="gpt4o", model="gpt-4o"))      # doctest: +SKIP
    >>> r = client.chat_sync("Say hi", call_id="demo/1")                     # doctest: +SKIP
    >>> r.text, r.usage.total_tokens, r.cache                                # doctest: +SKIP
    """

    def __init__(self, endpoint: EndpointSpec, cache: ResponseCache | None = None, *,
                 cache_path: str | os.PathLike[str] | None = None, cache_mode: str | None = None,
                 rng: random.Random | None = None):
        if cache is not None and (cache_path is not None or cache_mode is not None):
            raise ValueError("pass either cache or cache_path/cache_mode")
        self.endpoint = endpoint
        self.cache = cache if cache is not None else ResponseCache(cache_path, cache_mode)
        self.limiter = endpoint_limiter(endpoint.alias, endpoint.max_concurrency)
        self._rng = rng or random.Random()
        self._clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any]" = \
            weakref.WeakKeyDictionary()
        self._clients_lock = threading.Lock()

    def __repr__(self) -> str:
        e = self.endpoint
        return (f"LLMClient(alias={e.alias!r}, model={e.model!r}, base_url={e.base_url!r}, "
                f"api_key_env={e.api_key_env!r}, cache={self.cache!r})")

    # -- key & connection
    def _api_key(self) -> str | None:
        env = self.endpoint.api_key_env
        if env is None:
            return "EMPTY"
        return os.environ.get(env) or None

    def _secrets(self) -> list[str | None]:
        env = self.endpoint.api_key_env
        return [os.environ.get(env)] if env else []

    def _openai_client(self) -> Any:
        import openai

        loop = asyncio.get_running_loop()
        with self._clients_lock:
            c = self._clients.get(loop)
            if c is not None:
                return c
        key = self._api_key()
        if key is None:
            raise _MissingKey(f"environment variable {self.endpoint.api_key_env} is not set")
        kwargs: dict[str, Any] = dict(api_key=key, max_retries=0,
                                      timeout=self.endpoint.timeout_s)
        if self.endpoint.base_url is not None:
            kwargs["base_url"] = self.endpoint.base_url
        # One TLS context per process (building one costs ~70-180 ms per client); never
        # send loopback traffic through an HTTP(S)_PROXY from the environment.
        kwargs["http_client"] = openai.DefaultAsyncHttpxClient(
            verify=_shared_ssl_context(), trust_env=not self.endpoint.is_loopback)
        c = openai.AsyncOpenAI(**kwargs)
        del key
        with self._clients_lock:
            self._clients[loop] = c
        return c

    async def aclose(self) -> None:
        """Close the HTTP client of the running loop (the sync wrappers do this for you)."""
        loop = asyncio.get_running_loop()
        with self._clients_lock:
            c = self._clients.pop(loop, None)
        if c is not None:
            try:
                await c.close()
            except Exception:  # pragma: no cover - best effort
                pass

    # -- request building
    def build_params(self, **params: Any) -> dict[str, Any]:
        """Endpoint defaults overlaid with call params; None values dropped."""
        merged = {**self.endpoint.default_params, **params}
        return {k: v for k, v in merged.items() if v is not None}

    def key_for(self, messages: Any, *, call_id: str, sample_index: int = 0, attempt: int = 0,
                **params: Any) -> str:
        """The cache key a call with these arguments would use."""
        return cache_key(endpoint=self.endpoint.alias, model=self.endpoint.model,
                         messages=as_messages(messages), params=self.build_params(**params),
                         call_id=call_id, sample_index=sample_index, attempt=attempt)

    # -- the call
    async def chat(self, messages: Any, *, call_id: str, sample_index: int = 0,
                   attempt: int = 0, temperature: float | None = None,
                   top_p: float | None = None, max_tokens: int | None = None,
                   seed: int | None = None, stop: str | Sequence[str] | None = None,
                   response_format: Mapping[str, Any] | None = None,
                   extra_params: Mapping[str, Any] | None = None,
                   timeout_s: float | None = None, max_attempts: int | None = None,
                   raise_on_error: bool = False) -> LLMResult:
        """One chat completion through the cache.

        ``call_id`` names the logical call (e.g. ``"mecobench/ep3/t12/agent1"``);
        ``sample_index`` distinguishes intentional repeats (self-consistency);
        ``attempt`` is the logical re-ask number (not the transport retry counter: all
        transport retries of a request share one cache key).
        ``extra_params`` are more API parameters (forwarded and part of the key).
        """
        if not isinstance(call_id, str) or not call_id:
            raise ValueError("call_id must be a non-empty string")
        spec = self.endpoint
        msgs = as_messages(messages)
        params = self.build_params(temperature=temperature, top_p=top_p, max_tokens=max_tokens,
                                   seed=seed, stop=stop, response_format=response_format,
                                   **dict(extra_params or {}))
        request = canonical_request(endpoint=spec.alias, model=spec.model, messages=msgs,
                                    params=params, call_id=call_id, sample_index=sample_index,
                                    attempt=attempt)
        key = hashlib.sha256(request.encode("utf-8")).hexdigest()
        base = dict(model=spec.model, endpoint=spec.alias, call_id=call_id,
                    sample_index=sample_index, attempt=attempt, cache_key=key)

        t0 = time.perf_counter()
        if self.cache.mode != "off":
            hit = self.cache.get(key)
            if hit is not None:
                return LLMResult(text=hit.text,
                                 usage=Usage(hit.prompt_tokens, hit.completion_tokens,
                                             hit.total_tokens),
                                 latency_s=time.perf_counter() - t0, cache="hit", attempts=0,
                                 error=None, finish_reason=hit.finish_reason, **base)
            if self.cache.mode == "replay":
                raise CacheMiss(call_id, key, sample_index=sample_index, attempt=attempt,
                                endpoint=spec.alias, path=self.cache.path)
        cache_status = "off" if self.cache.mode == "off" else "miss"

        timeout = float(timeout_s if timeout_s is not None else spec.timeout_s)
        n_max = int(max_attempts if max_attempts is not None else spec.max_attempts)
        attempts = 0
        queue_s = 0.0
        failure: _Failure | None = None
        text: str | None = None
        usage = Usage()
        finish_reason = None
        while attempts < n_max:
            if attempts > 0:
                await asyncio.sleep(self._backoff(attempts, failure))
            attempts += 1
            tq = time.perf_counter()
            await self.limiter.acquire()
            queue_s += time.perf_counter() - tq
            try:
                client = self._openai_client()
                resp = await asyncio.wait_for(
                    client.chat.completions.create(model=spec.model, messages=msgs,
                                                   timeout=timeout, **params),
                    timeout=timeout + 0.5)
                text, usage, finish_reason = _parse_response(resp)
                failure = None
            except asyncio.CancelledError:
                raise
            except _MissingKey as exc:
                failure = _Failure(str(exc), False)
            except Exception as exc:  # noqa: BLE001 - every failure becomes a record
                failure = _classify(exc)
            finally:
                self.limiter.release()
            if failure is None:
                if text is None or not text.strip():
                    failure = _Failure(f"empty reply (finish_reason={finish_reason})", False)
                break
            log.info("LLM call %s attempt %d on %s failed: %s", call_id, attempts, spec.alias,
                     _redact(failure.message, self._secrets())[:300])
            if not failure.retryable:
                break

        latency = time.perf_counter() - t0 - queue_s
        if failure is None:
            self.cache.put(key, text=text or "", endpoint=spec.alias, model=spec.model,
                           call_id=call_id, sample_index=sample_index, attempt=attempt,
                           request=request, prompt_tokens=usage.prompt_tokens,
                           completion_tokens=usage.completion_tokens,
                           total_tokens=usage.total_tokens, finish_reason=finish_reason,
                           response_model=None)
            error = None
        else:
            error = _redact(failure.message, self._secrets())
            if len(error) > 2000:
                error = error[:2000] + "…"
        result = LLMResult(text=text, usage=usage, latency_s=latency, cache=cache_status,
                           attempts=attempts, error=error, finish_reason=finish_reason,
                           queue_s=queue_s, **base)
        if error is not None and raise_on_error:
            raise LLMCallError(result) from None
        return result

    def _backoff(self, attempts_done: int, failure: _Failure | None) -> float:
        spec = self.endpoint
        d = min(spec.backoff_max_s, spec.backoff_base_s * (2 ** (attempts_done - 1)))
        d = d / 2 + self._rng.uniform(0, d / 2)  # "equal jitter"
        if failure is not None and failure.retry_after is not None:
            d = max(d, min(spec.backoff_max_s, failure.retry_after))
        return d

    async def chat_many(self, requests: Iterable[Mapping[str, Any]]) -> list[LLMResult]:
        """Run many :meth:`chat` calls concurrently (bounded by the endpoint limiter).

        Each request is a dict of :meth:`chat` keyword arguments including ``messages``.
        Results come back in request order.
        """
        return list(await asyncio.gather(*(self.chat(**dict(r)) for r in requests)))

    async def chat_json(self, messages: Any, schema: Mapping[str, Any],
                        **kwargs: Any) -> structured.StructuredResult:
        """Structured output; see :func:`collablab.llm.structured.chat_json`."""
        return await structured.chat_json(self, messages, schema, **kwargs)

    # -- sync wrappers (notebooks)
    async def _closing(self, coro: Awaitable[T]) -> T:
        try:
            return await coro
        finally:
            await self.aclose()

    def run(self, coro: Awaitable[T]) -> T:
        """Run a coroutine of this client from sync code and close its connections."""
        return run_sync(self._closing(coro))

    def chat_sync(self, messages: Any, **kwargs: Any) -> LLMResult:
        return self.run(self.chat(messages, **kwargs))

    def chat_many_sync(self, requests: Iterable[Mapping[str, Any]]) -> list[LLMResult]:
        return self.run(self.chat_many(list(requests)))

    def chat_json_sync(self, messages: Any, schema: Mapping[str, Any],
                       **kwargs: Any) -> structured.StructuredResult:
        return self.run(self.chat_json(messages, schema, **kwargs))


class _MissingKey(Exception):
    pass


_SSL_CTX: Any = None
_SSL_LOCK = threading.Lock()


def _shared_ssl_context() -> Any:
    global _SSL_CTX
    with _SSL_LOCK:
        if _SSL_CTX is None:
            try:
                import httpx2 as _httpx  # the HTTP library of openai>=3
            except ImportError:  # pragma: no cover - openai 1.x/2.x
                import httpx as _httpx
            _SSL_CTX = _httpx.create_ssl_context()
        return _SSL_CTX


def _parse_response(resp: Any) -> tuple[str | None, Usage, str | None]:
    if isinstance(resp, (str, bytes)):
        # some servers answer 200 with a non-JSON body; the SDK then hands back the text
        raise ValueError(f"response is not a JSON chat completion: {str(resp)[:200]!r}")
    choices = getattr(resp, "choices", None)
    if not choices:
        raise ValueError("response has no choices")
    choice = choices[0]
    msg = getattr(choice, "message", None)
    text = getattr(msg, "content", None) if msg is not None else None
    u = getattr(resp, "usage", None)
    usage = Usage(getattr(u, "prompt_tokens", None), getattr(u, "completion_tokens", None),
                  getattr(u, "total_tokens", None)) if u is not None else Usage()
    return text, usage, getattr(choice, "finish_reason", None)
