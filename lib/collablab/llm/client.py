"""Async chat client for any OpenAI-compatible endpoint (OpenAI, ``vllm serve``, llama.cpp …).

* configured by an :class:`EndpointSpec` (alias, base_url and replicas, model, name of the env
  var holding the key — never the key itself);
* every call goes through the :class:`~collablab.llm.cache.ResponseCache`, whose key includes
  the served fingerprint: in ``rw`` mode the client learns what the server serves under the
  model id once per process and alias (``GET /models``, :func:`~collablab.llm.preflight.served_model`),
  in ``replay`` mode it reads the fingerprint recorded in the cache file;
* bounded concurrency per endpoint *alias*, shared by every caller in the process
  (:func:`endpoint_limiter`), across threads and event loops; with replicas each call goes to
  the base URL with the fewest calls in flight (:mod:`~collablab.llm.breaker`);
* retries with exponential backoff + jitter on 429, 408/409, 5xx, timeouts, connection
  errors and malformed responses; a hard per-attempt timeout;
* a circuit breaker: after a transient failure, before its next attempt, the call waits while
  the endpoint is down (one probe loop per base URL, ``GET /models`` every ``probe_interval_s``);
  the attempt that met the outage does not count against the retries, but a call that waits
  longer than ``outage_wait_s`` in all fails (``max_attempts=1``: no next attempt, no wait);
* ``extra_body`` of the endpoint's ``default_params`` and of the call are merged and sent
  (parameters the OpenAI SDK does not know travel in it too), and are part of the cache key;
* the server-reported ``usage`` is the token count; ``reasoning_content`` is read separately;
* every logical call is counted in :mod:`~collablab.llm.stats`.

A call returns an :class:`LLMResult` for every reply the model gave, an empty one included
(``text == ""``, cached like any other: the caller decides it is unusable). When no reply was
obtained it raises :class:`~collablab.llm.types.EndpointError` (``kind``: transport after the
retries, auth, not_found, rejected, missing_key); a miss in ``replay`` mode raises
:class:`~collablab.llm.cache.CacheMiss`.

The API key is read from the environment when a connection is made; it is not stored on
these objects, and it is redacted (:func:`~collablab.llm.redact.redact`) from every error
string this module produces.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import hashlib
import inspect
import logging
import os
import random
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

from . import breaker, stats, structured
from .cache import CacheMiss, ResponseCache, cache_key, canonical_request
from .limiter import endpoint_limiter
from .messages import as_messages
from .preflight import EndpointCheckError, ServedModel, display_url, probe, served_model, ssl_context
from .redact import redact
from .reply import read_reply
from .types import THINKING, EndpointError, EndpointSpec, LLMResult, Usage, is_loopback_url
from .wire import resolve_provider, wire_params

__all__ = ["SAMPLING_PARAMS", "LLMClient", "forget_served", "learned_served", "merge_params", "observe_requests",
           "run_sync"]

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


# ----------------------------------------------------------------------- observers

#: Called with every logical request before it is sent: (call_id, endpoint, params, messages).
Observer = Callable[[str, EndpointSpec, dict, list], None]
_OBSERVERS: list[Observer] = []


@contextlib.contextmanager
def observe_requests(observer: Observer) -> Iterator[None]:
    """Call ``observer(call_id, endpoint, logical params, messages)`` for every chat call of this
    process while the block runs (``--show-requests``); an exception it raises ends the call."""
    _OBSERVERS.append(observer)
    try:
        yield
    finally:
        _OBSERVERS.remove(observer)


# ------------------------------------------------------------------------ params


def _deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in base.items()}
    for k, v in over.items():
        if v is None:
            continue
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def merge_params(defaults: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """Request parameters: ``defaults`` overlaid with ``params``. A None in ``params`` means
    "not given" (the default stays); ``extra_body`` dicts are merged deeply (the call's values
    win); None values are dropped."""
    out = {k: v for k, v in defaults.items() if v is not None}
    for k, v in params.items():
        if v is None:
            continue
        if k == "extra_body" and isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = v
    return out


@functools.lru_cache(maxsize=1)
def _sdk_params() -> frozenset[str]:
    """Keyword parameters of the OpenAI SDK's ``chat.completions.create``."""
    try:
        from openai.resources.chat.completions import AsyncCompletions

        names = set(inspect.signature(AsyncCompletions.create).parameters)
    except Exception:  # pragma: no cover - another SDK layout
        names = set(SAMPLING_PARAMS)
    return frozenset(names - {"self", "messages", "model", "extra_headers", "extra_query", "extra_body",
                              "timeout", "stream"})


def _request_kwargs(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` as ``create`` keyword arguments: names the SDK does not know go into
    ``extra_body`` (whose own entries win)."""
    known = _sdk_params()
    kwargs: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for k, v in params.items():
        if k == "extra_body":
            continue
        if k in known:
            kwargs[k] = v
        else:
            extra[k] = v
    body = params.get("extra_body")
    if isinstance(body, Mapping):
        extra = _deep_merge(extra, body)
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


# ------------------------------------------------------------------------- errors


@dataclass
class _Failure:
    message: str
    kind: str  # one of ENDPOINT_ERROR_KINDS
    retry_after: float | None = None

    @property
    def transient(self) -> bool:
        return self.kind == "transport"


class _Fail(Exception):
    """An attempt failed with a classified failure."""

    def __init__(self, failure: _Failure):
        super().__init__(failure.message)
        self.failure = failure


def _classify(exc: BaseException) -> _Failure:
    import openai

    name = type(exc).__name__
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError, openai.APITimeoutError)):
        return _Failure(f"timeout: {name}", "transport")
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        detail = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
        return _Failure(f"connection error: {name}: {exc}{detail}"[:600], "transport")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        retry_after = None
        try:
            ra = exc.response.headers.get("retry-after")
            retry_after = float(ra) if ra is not None else None
        except (TypeError, ValueError, AttributeError):
            retry_after = None
        if status in (408, 409, 429) or status >= 500:
            kind = "transport"
        elif status in (401, 403):
            kind = "auth"
        elif status == 404:
            kind = "not_found"
        else:
            kind = "rejected"
        return _Failure(f"HTTP {status}: {name}: {exc}", kind, retry_after)
    if isinstance(exc, openai.APIResponseValidationError):
        return _Failure(f"malformed response: {name}: {exc}", "transport")
    if isinstance(exc, (ValueError, KeyError, IndexError, AttributeError)):  # JSONDecodeError too
        return _Failure(f"malformed response: {name}: {exc}", "transport")
    return _Failure(f"{name}: {exc}", "rejected")


# ------------------------------------------------------------------ served model

_SERVED: dict[str, ServedModel] = {}
_SERVED_LOCKS: dict[str, threading.Lock] = {}
_SERVED_GUARD = threading.Lock()
_RECORDED: set[tuple[str, str, str]] = set()  # (cache file, alias, fingerprint) written to a served table


def _after_fork() -> None:
    """A forked child keeps what was learned but not locks another thread may have held."""
    global _SERVED_GUARD
    _SERVED_GUARD = threading.Lock()
    _SERVED_LOCKS.clear()


os.register_at_fork(after_in_child=_after_fork)


#: Server kinds :meth:`LLMClient.server_provider` asked for, by (endpoint alias, base URL): one model
#: list request each per process.
_DETECTED: dict[tuple[str, str], str] = {}


def learned_served(alias: str) -> ServedModel | None:
    """What this process learned the endpoint ``alias`` serves (None: nothing learned yet)."""
    with _SERVED_GUARD:
        return _SERVED.get(alias)


def forget_served(alias: str | None = None) -> None:
    """Forget what was learned for ``alias`` (None: every alias), e.g. after pointing it at
    other weights in a running notebook: the next call learns it again."""
    with _SERVED_GUARD:
        if alias is None:
            _SERVED.clear()
            _RECORDED.clear()
        else:
            _SERVED.pop(alias, None)
            for r in [r for r in _RECORDED if r[1] == alias]:
                _RECORDED.discard(r)


def _served_lock(alias: str) -> threading.Lock:
    with _SERVED_GUARD:
        lock = _SERVED_LOCKS.get(alias)
        if lock is None:
            lock = _SERVED_LOCKS[alias] = threading.Lock()
        return lock


@dataclass
class _CallState:
    http: int = 0  # chat requests sent
    used: int = 0  # attempts counted against the retry budget
    queue_s: float = 0.0
    outage_s: float = 0.0


# ------------------------------------------------------------------------- client


class LLMClient:
    """Chat client for one endpoint, with cache, retries, a circuit breaker and a process-wide
    concurrency bound (see the module docstring).

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
        self.urls = tuple(display_url(u) for u in endpoint.base_urls)
        self.breakers = [breaker.breaker_for(u, functools.partial(probe, endpoint, u),
                                             endpoint.probe_interval_s) for u in self.urls]
        self._rng = rng or random.Random()
        self._clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Any]]" = \
            weakref.WeakKeyDictionary()
        self._clients_lock = threading.Lock()
        self._replay_fp: tuple[str | None] | None = None

    def __repr__(self) -> str:
        e = self.endpoint
        return (f"LLMClient(alias={e.alias!r}, model={e.model!r}, base_url={e.base_url!r}, "
                f"replicas={len(e.replicas)}, api_key_env={e.api_key_env!r}, cache={self.cache!r})")

    # -- key & connection
    def _api_key(self) -> str | None:
        env = self.endpoint.api_key_env
        if env is None:
            return "EMPTY"
        return os.environ.get(env) or None

    def _openai_client(self, url: str) -> Any:
        import openai

        loop = asyncio.get_running_loop()
        with self._clients_lock:
            c = self._clients.get(loop, {}).get(url)
            if c is not None:
                return c
        key = self._api_key()
        if key is None:
            raise _Fail(_Failure(f"environment variable {self.endpoint.api_key_env} is not set", "missing_key"))
        kwargs: dict[str, Any] = dict(api_key=key, max_retries=0, timeout=self.endpoint.timeout_s)
        if self.endpoint.base_url is not None:
            kwargs["base_url"] = url
        # One TLS context per process (building one costs ~70-180 ms per client); never
        # send loopback traffic through an HTTP(S)_PROXY from the environment.
        kwargs["http_client"] = openai.DefaultAsyncHttpxClient(
            verify=ssl_context(), trust_env=not is_loopback_url(url))
        c = openai.AsyncOpenAI(**kwargs)
        del key
        with self._clients_lock:
            self._clients.setdefault(loop, {})[url] = c
        return c

    async def aclose(self) -> None:
        """Close the HTTP clients of the running loop (the sync wrappers do this for you)."""
        loop = asyncio.get_running_loop()
        with self._clients_lock:
            clients = self._clients.pop(loop, {})
        for c in clients.values():
            try:
                await c.close()
            except Exception:  # pragma: no cover - best effort
                pass

    # -- request building
    def build_params(self, **params: Any) -> dict[str, Any]:
        """Endpoint defaults overlaid with call params (:func:`merge_params`): the logical request,
        the same for every server (``thinking`` included unless ``auto``); it keys the cache."""
        out = merge_params(self.endpoint.default_params, params)
        thinking = out.get("thinking") or self.endpoint.thinking
        if thinking not in THINKING:
            raise ValueError(f"thinking: {thinking!r} is not allowed; allowed: {', '.join(THINKING)}")
        out.pop("thinking", None)
        if thinking != "auto":
            out["thinking"] = thinking
        return out

    def provider(self) -> str:
        """The endpoint's provider: as configured, else detected from what it serves (learned with
        the first call), else ``compat`` (:func:`~collablab.llm.wire.resolve_provider`)."""
        e = self.endpoint
        return resolve_provider(e.provider, e.base_url, learned_served(e.alias))

    def server_provider(self) -> str:
        """The endpoint's provider before any call has taught it: as configured, or for ``auto`` the
        server's kind (:func:`~collablab.llm.wire.resolve_provider`: the OpenAI API is ``openai``;
        else the model list's ``owned_by``, ``vllm`` or ``llamacpp``; else ``compat``). The model
        list is what the client learned, else (``replay``) the one the cache recorded in the live
        run, else one ``GET /models`` now (remembered for the process); a server that does not
        answer it raises :class:`EndpointError` like a call that got no reply. For a request body
        that depends on the server (a grammar only some servers take)."""
        e = self.endpoint
        if e.provider != "auto" or resolve_provider("auto", e.base_url) == "openai":
            return resolve_provider(e.provider, e.base_url)
        served = learned_served(e.alias)
        key = (e.alias, display_url(e.base_url))
        if served is None and self.cache.mode == "replay":  # what the live run saw, not the server now
            rows = [r for r in self.cache.served_rows() if r["endpoint"] == e.alias and r["model"] == e.model]
            return resolve_provider("auto", e.base_url, ServedModel.from_dict(rows[-1]["info"]) if rows else None)
        if served is None and key in _DETECTED:
            return _DETECTED[key]
        if served is None:
            try:
                served = served_model(e, require_listed=False)
            except EndpointCheckError as exc:
                result = LLMResult(text=None, usage=Usage(), latency_s=0.0, cache="off", attempts=1,
                                   error=f"the server's kind (GET {key[1]}/models): {exc}", model=e.model,
                                   endpoint=e.alias, call_id="provider")
                raise EndpointError(result, exc.kind) from None
        provider = resolve_provider("auto", e.base_url, served)
        _DETECTED[key] = provider
        return provider

    def fingerprint(self) -> str | None:
        """The served fingerprint the cache keys use now: learned (``rw``; None before the
        first call), recorded in the cache file (``replay``), None (``off``)."""
        if self.cache.mode == "replay":
            if self._replay_fp is None:
                self._replay_fp = (self.cache.served_fingerprint(self.endpoint.alias, self.endpoint.model),)
            return self._replay_fp[0]
        if self.cache.mode == "rw":
            sm = learned_served(self.endpoint.alias)
            return sm.fingerprint if sm is not None else None
        return None

    def key_for(self, messages: Any, *, call_id: str, sample_index: int = 0, attempt: int = 0,
                served: str | None = None, **params: Any) -> str:
        """The cache key of a call with these arguments and served fingerprint ``served``
        (the one the client uses: :meth:`fingerprint`)."""
        return cache_key(endpoint=self.endpoint.alias, model=self.endpoint.model,
                         messages=as_messages(messages), params=self.build_params(**params),
                         call_id=call_id, sample_index=sample_index, attempt=attempt, served=served)

    # -- attempts, retries, outages
    async def _attempts(self, st: _CallState, call_id: str, n_max: int,
                        once: Callable[[str], Awaitable[T]], *, limited: bool) -> T:
        """Run ``once(url)`` until it returns; raises :class:`_Fail` with the last failure."""
        spec = self.endpoint
        while True:
            if limited:
                tq = time.perf_counter()
                await self.limiter.acquire()
                st.queue_s += time.perf_counter() - tq
            b = breaker.acquire(self.breakers)
            started = time.monotonic()
            try:
                if limited:
                    st.http += 1
                value = await once(b.url)
                b.report_ok(started)
                return value
            except asyncio.CancelledError:
                raise
            except _Fail as exc:
                failure = exc.failure
            except Exception as exc:  # noqa: BLE001 - every failure is classified
                failure = _classify(exc)
            finally:
                breaker.release(b)
                if limited:
                    self.limiter.release()
            st.used += 1
            log.info("LLM call %s attempt %d on %s (%s) failed: %s", call_id, st.used, spec.alias, b.url,
                     redact(failure.message)[:300])
            if not failure.transient or st.used >= n_max:  # no next attempt: no wait either
                raise _Fail(failure)
            b.report_failure()
            t_wait = time.monotonic()
            try:
                outage = await breaker.wait_healthy(self.breakers, spec.outage_wait_s - st.outage_s)
            except TimeoutError:
                raise _Fail(_Failure(f"{failure.message}; {b.url} did not answer for outage_wait_s="
                                     f"{spec.outage_wait_s:g} s", "transport")) from None
            finally:
                st.outage_s += time.monotonic() - t_wait
            if outage:
                st.used -= 1  # the endpoint was down: this attempt does not count
                log.info("LLM call %s: %s answers again after %.1f s", call_id, spec.alias,
                         time.monotonic() - t_wait)
            else:
                await asyncio.sleep(self._backoff(st.used, failure))

    async def _learn_served(self, st: _CallState, call_id: str, n_max: int) -> ServedModel:
        """What the endpoint serves (learned once per process and alias, recorded in the cache)."""
        sm = learned_served(self.endpoint.alias)
        if sm is None:
            async def once(url: str) -> ServedModel:
                return await asyncio.to_thread(self._learn_locked, url)

            sm = await self._attempts(st, call_id, n_max, once, limited=False)
        self._record_served(sm)
        return sm

    def _record_served(self, sm: ServedModel) -> None:
        """Write ``sm`` into this client's cache file once per process."""
        spec = self.endpoint
        mark = (str(self.cache.path), spec.alias, sm.fingerprint)
        with _SERVED_GUARD:
            if mark in _RECORDED:
                return
        self.cache.record_served(spec.alias, spec.model, sm.fingerprint, sm.to_dict())
        with _SERVED_GUARD:
            _RECORDED.add(mark)

    def _learn_locked(self, url: str) -> ServedModel:
        spec = self.endpoint
        with _served_lock(spec.alias):
            known = learned_served(spec.alias)
            if known is not None:
                return known
            try:
                sm = served_model(spec, url, require_listed=False)
            except EndpointCheckError as exc:
                raise _Fail(_Failure(f"GET {url}/models: {exc}", exc.kind)) from None
            with _SERVED_GUARD:
                _SERVED[spec.alias] = sm
        return sm

    def _backoff(self, attempts_done: int, failure: _Failure | None) -> float:
        spec = self.endpoint
        d = min(spec.backoff_max_s, spec.backoff_base_s * (2 ** (max(attempts_done, 1) - 1)))
        d = d / 2 + self._rng.uniform(0, d / 2)  # "equal jitter"
        if failure is not None and failure.retry_after is not None:
            d = max(d, min(spec.backoff_max_s, failure.retry_after))
        return d

    # -- the call
    async def chat(self, messages: Any, *, call_id: str, sample_index: int = 0,
                   attempt: int = 0, temperature: float | None = None,
                   top_p: float | None = None, max_tokens: int | None = None,
                   seed: int | None = None, stop: str | Sequence[str] | None = None,
                   response_format: Mapping[str, Any] | None = None,
                   extra_params: Mapping[str, Any] | None = None, thinking: str | None = None,
                   timeout_s: float | None = None, max_attempts: int | None = None) -> LLMResult:
        """One chat completion through the cache: the model's reply, or
        :class:`~collablab.llm.types.EndpointError` when none was obtained.

        ``call_id`` names the logical call (e.g. ``"mecobench/ep3/t12/agent1"``);
        ``sample_index`` distinguishes intentional repeats (self-consistency);
        ``attempt`` is the logical re-ask number (not the transport retry counter: all
        transport retries of a request share one cache key).
        ``extra_params`` are more API parameters (forwarded and part of the key), e.g.
        ``{"extra_body": {"guided_json": {...}}}``. ``thinking`` (on, off, auto; None: the
        endpoint's) and the endpoint's provider and parameter rules decide what is sent
        (:mod:`~collablab.llm.wire`); the cache key is the logical request.

        The reply is read once here (:func:`~collablab.llm.reply.read_reply`): ``text`` is the
        final answer without the thoughts, cut at ``stop``; the thoughts go to ``reasoning``; a
        reply cut at ``max_tokens`` has :attr:`~collablab.llm.types.LLMResult.truncated` set.
        """
        if not isinstance(call_id, str) or not call_id:
            raise ValueError("call_id: must be a non-empty string")
        spec = self.endpoint
        msgs = as_messages(messages)
        params = self.build_params(**{**dict(temperature=temperature, top_p=top_p, max_tokens=max_tokens,
                                             seed=seed, stop=stop, response_format=response_format,
                                             thinking=thinking),
                                      **dict(extra_params or {})})
        for observer in list(_OBSERVERS):
            observer(call_id, spec, params, msgs)
        n_max = int(max_attempts if max_attempts is not None else spec.max_attempts)
        timeout = float(timeout_s if timeout_s is not None else spec.timeout_s)
        base = dict(model=spec.model, endpoint=spec.alias, call_id=call_id, sample_index=sample_index,
                    attempt=attempt)
        st = _CallState()
        t0 = time.perf_counter()
        mode = self.cache.mode
        cache_status = "off" if mode == "off" else "miss"

        def fail(failure: _Failure, key: str | None) -> EndpointError:
            error = redact(failure.message)
            if len(error) > 2000:
                error = error[:2000] + "…"
            result = LLMResult(text=None, usage=Usage(), latency_s=time.perf_counter() - t0 - st.queue_s,
                               cache=cache_status, attempts=st.http, error=error, queue_s=st.queue_s,
                               **{**base, "cache_key": key})
            stats.record(spec.alias, cache=cache_status, latency_s=result.latency_s, queue_s=st.queue_s,
                         http_requests=st.http, error_kind=failure.kind)
            return EndpointError(result, failure.kind)

        if mode != "replay" and spec.api_key_env and not os.environ.get(spec.api_key_env):
            raise fail(_Failure(f"environment variable {spec.api_key_env} is not set", "missing_key"),
                       None) from None

        # the served fingerprint, then the key
        served: str | None
        if mode == "rw":
            try:
                served = (await self._learn_served(st, call_id, n_max)).fingerprint
            except _Fail as exc:
                raise fail(exc.failure, None) from None
        else:
            served = self.fingerprint()

        def result(text: str | None, reasoning: str | None, usage: Usage, finish_reason: str | None,
                   **kw: Any) -> LLMResult:
            read = read_reply(text, reasoning, finish_reason, params.get("stop"))
            return LLMResult(text=read.answer, usage=usage, error=None, finish_reason=read.finish_reason,
                             reasoning=read.thoughts, **kw, **base)
        request = canonical_request(endpoint=spec.alias, model=spec.model, messages=msgs, params=params,
                                    call_id=call_id, sample_index=sample_index, attempt=attempt,
                                    served=served)
        key = hashlib.sha256(request.encode("utf-8")).hexdigest()
        base["cache_key"] = key

        if mode != "off":
            hit = self.cache.get(key)
            if hit is not None:
                out = result(hit.text, hit.reasoning, Usage(hit.prompt_tokens, hit.completion_tokens,
                                                            hit.total_tokens, hit.image_tokens), hit.finish_reason,
                             latency_s=time.perf_counter() - t0, cache="hit", attempts=0)
                stats.record(spec.alias, cache="hit", latency_s=out.latency_s, truncated=out.truncated)
                return out
            if mode == "replay":
                stats.record(spec.alias, cache="miss", latency_s=time.perf_counter() - t0,
                             error_kind="cache_miss")
                raise CacheMiss(call_id, key, sample_index=sample_index, attempt=attempt,
                                endpoint=spec.alias, path=self.cache.path)

        kwargs = _request_kwargs(wire_params(params, provider=self.provider(), model=spec.model,
                                             rules=spec.param_rules))

        async def once(url: str) -> tuple[str, str | None, Usage, str | None]:
            client = self._openai_client(url)
            resp = await asyncio.wait_for(
                client.chat.completions.create(model=spec.model, messages=msgs, timeout=timeout, **kwargs),
                timeout=timeout + 0.5)
            return _parse_response(resp)

        try:
            text, reasoning, usage, finish_reason = await self._attempts(st, call_id, n_max, once, limited=True)
        except _Fail as exc:
            raise fail(exc.failure, key) from None

        latency = time.perf_counter() - t0 - st.queue_s
        if mode == "rw":
            self.cache.put(key, text=text, endpoint=spec.alias, model=spec.model, call_id=call_id,
                           sample_index=sample_index, attempt=attempt, request=request,
                           prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                           total_tokens=usage.total_tokens, finish_reason=finish_reason,
                           response_model=None, reasoning=reasoning, image_tokens=usage.image_tokens)
        out = result(text, reasoning, usage, finish_reason, latency_s=latency, cache=cache_status,
                     attempts=st.http, queue_s=st.queue_s)
        stats.record(spec.alias, cache=cache_status, latency_s=latency, queue_s=st.queue_s,
                     prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                     http_requests=st.http, truncated=out.truncated)
        return out

    async def chat_many(self, requests: Iterable[Mapping[str, Any]]) -> list[LLMResult]:
        """Run many :meth:`chat` calls concurrently (bounded by the endpoint limiter).

        Each request is a dict of :meth:`chat` keyword arguments including ``messages``.
        Results come back in request order; the first call that raises cancels nothing and
        its error is raised once all have finished.
        """
        results = await asyncio.gather(*(self.chat(**dict(r)) for r in requests), return_exceptions=True)
        for r in results:
            if isinstance(r, BaseException):
                raise r
        return list(results)  # type: ignore[arg-type]

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


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(str(p.get("text", "")) if isinstance(p, Mapping) else str(getattr(p, "text", "") or "")
                       for p in content)
    return str(content)


def _parse_response(resp: Any) -> tuple[str, str | None, Usage, str | None]:
    """(text, reasoning, usage, finish_reason) of a chat completion; ValueError if it is none."""
    if isinstance(resp, (str, bytes)):
        # some servers answer 200 with a non-JSON body; the SDK then hands back the text
        raise ValueError(f"response is not a JSON chat completion: {str(resp)[:200]!r}")
    choices = getattr(resp, "choices", None)
    if not choices:
        raise ValueError("response has no choices")
    choice = choices[0]
    msg = getattr(choice, "message", None)
    if msg is None:
        raise ValueError("response choice has no message")
    text = _content_text(getattr(msg, "content", None))
    reasoning = getattr(msg, "reasoning_content", None) or getattr(msg, "reasoning", None)
    if reasoning is not None and not isinstance(reasoning, str):
        reasoning = str(reasoning)
    u = getattr(resp, "usage", None)
    usage = Usage(getattr(u, "prompt_tokens", None), getattr(u, "completion_tokens", None),
                  getattr(u, "total_tokens", None), _image_tokens(u)) if u is not None else Usage()
    return text, reasoning or None, usage, getattr(choice, "finish_reason", None)


def _image_tokens(usage: Any) -> int | None:
    """``usage.prompt_tokens_details.image_tokens`` when the server reports it (OpenAI's schema),
    else None (vLLM and llama.cpp report no image tokens)."""
    details = getattr(usage, "prompt_tokens_details", None)
    if isinstance(details, Mapping):
        n = details.get("image_tokens")
    else:
        n = getattr(details, "image_tokens", None)
    return n if isinstance(n, int) and not isinstance(n, bool) else None
