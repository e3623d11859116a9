"""Check an endpoint before the first call, and tell which weights it serves.

:func:`check_endpoint` checks, in order, that the key's environment variable is set (when the
endpoint needs a key), that ``GET <base_url>/models`` answers (retrying until ``wait_s`` has
passed: a vLLM server that is still loading), and that the model id is among the served ids
(for every replica too, which must serve the same weights). A failed check raises
:class:`EndpointCheckError` (a ValueError) whose message starts with the name of the parameter
to fix, e.g.::

    api_key_env: OPENAI_API_KEY is not set
    base_url: http://127.0.0.1:9/v1 does not answer (connection refused); is the server running?
    model: 'x' is not served by http://127.0.0.1:8000/v1; it serves: a, b

``fields`` renames the parameters for the user (``{"model": "llm_model"}``). The check returns
a :class:`ServedModel`: the served id, vLLM's ``root`` (the checkpoint path), whatever revision
the server reports, the server version (vLLM ``GET /version``, llama.cpp ``GET /props``), and a
short :attr:`ServedModel.fingerprint` of what identifies the weights, which the response cache
puts into its keys. :func:`served_model` is the same lookup without the checks (the client
learns the fingerprint with it); :func:`probe` is the circuit breaker's "does it answer?".

Requests use the standard library (no proxy for loopback URLs) with the TLS context the chat
client uses (:func:`ssl_context`); key values are redacted from every message.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping
from urllib.parse import urlsplit, urlunsplit

from .redact import redact
from .types import EndpointSpec, is_loopback_url

__all__ = ["OPENAI_BASE_URL", "EndpointCheckError", "ServedModel", "check_endpoint", "check_endpoints",
           "display_url", "probe", "served_model", "ssl_context"]

#: The base URL of ``EndpointSpec(base_url=None)``.
OPENAI_BASE_URL = "https://api.openai.com/v1"
_PROBE_TIMEOUT_S = 10.0
_VERSION_TIMEOUT_S = 5.0


class EndpointCheckError(ValueError):
    """A failed endpoint check; the message starts with the parameter to fix.

    ``field`` is that parameter's name as shown, ``kind`` one of
    :data:`~collablab.llm.types.ENDPOINT_ERROR_KINDS` (``transport``: it may answer later).
    """

    def __init__(self, message: str, *, field: str, kind: str):
        super().__init__(redact(message))
        self.field = field
        self.kind = kind

    def __reduce__(self) -> Any:
        return (_rebuild_check_error, (str(self), self.field, self.kind))


def _rebuild_check_error(message: str, field: str, kind: str) -> EndpointCheckError:
    return EndpointCheckError(message, field=field, kind=kind)


@dataclass(frozen=True)
class ServedModel:
    """What an endpoint serves under a model id (see the module docstring)."""

    id: str
    root: str | None = None
    revision: str | None = None
    server_version: str | None = None
    base_url: str = OPENAI_BASE_URL
    owned_by: str | None = None  # the model list's owner ("vllm", "llamacpp", ...): tells the server kind

    @property
    def fingerprint(self) -> str:
        """16 hex digits of SHA-256 over (id, root, revision): what identifies the weights."""
        doc = json.dumps([self.id, self.root, self.revision], separators=(",", ":"))
        return hashlib.sha256(doc.encode("utf-8")).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        """The fields plus ``fingerprint`` (for manifests)."""
        return {**asdict(self), "fingerprint": self.fingerprint}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ServedModel":
        return cls(**{k: d.get(k) for k in ("id", "root", "revision", "server_version", "owned_by")},
                   base_url=d.get("base_url") or OPENAI_BASE_URL)


def display_url(base_url: str | None) -> str:
    """``base_url`` without a trailing slash (the OpenAI API's for None)."""
    return (base_url or OPENAI_BASE_URL).rstrip("/")


# ---------------------------------------------------------------------- HTTP

_SSL_CTX: Any = None
_SSL_LOCK = threading.Lock()


def ssl_context() -> Any:
    """The process's one TLS context (the OpenAI SDK's HTTP library's defaults; building one
    costs ~70-180 ms)."""
    global _SSL_CTX
    with _SSL_LOCK:
        if _SSL_CTX is None:
            try:
                import httpx2 as _httpx  # the HTTP library of openai>=3
            except ImportError:  # pragma: no cover - openai 1.x/2.x
                import httpx as _httpx
            _SSL_CTX = _httpx.create_ssl_context()
        return _SSL_CTX



class _Answer:
    def __init__(self, status: int, body: bytes):
        self.status, self.body = status, body

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"))

    def snippet(self) -> str:
        text = self.body.decode("utf-8", "replace").strip()
        try:
            err = json.loads(text).get("error")
            if isinstance(err, Mapping) and err.get("message"):
                text = str(err["message"])
            elif isinstance(err, str):
                text = err
        except (ValueError, AttributeError):
            pass
        return text[:200]


class _NoAnswer(Exception):
    """Nothing came back (refused, reset, timeout, DNS); ``reason`` says which."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _reason(exc: BaseException) -> str:
    inner = getattr(exc, "reason", exc)
    if isinstance(inner, ConnectionRefusedError):
        return "connection refused"
    if isinstance(inner, ConnectionResetError):
        return "connection reset"
    if isinstance(inner, (socket.timeout, TimeoutError)):
        return "timed out"
    if isinstance(inner, socket.gaierror):
        return "host name not resolved"
    return f"{type(inner).__name__}: {inner}"[:200]


def _get(url: str, *, key: str | None, timeout_s: float) -> _Answer:
    req = urllib.request.Request(url, headers={"Accept": "application/json"})
    if key:
        req.add_header("Authorization", f"Bearer {key}")
    handlers: list[Any] = [urllib.request.ProxyHandler({})] if is_loopback_url(url) else []
    if url.startswith("https://"):
        handlers.append(urllib.request.HTTPSHandler(context=ssl_context()))
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(req, timeout=timeout_s) as resp:
            return _Answer(resp.status, resp.read())
    except urllib.error.HTTPError as exc:
        try:
            body = exc.read()
        except Exception:  # noqa: BLE001 - the status is what matters
            body = b""
        return _Answer(exc.code, body)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise _NoAnswer(_reason(exc)) from None


def _key_of(spec: EndpointSpec) -> str | None:
    return os.environ.get(spec.api_key_env) if spec.api_key_env else None


def probe(spec: EndpointSpec, base_url: str | None = None, *, timeout_s: float | None = None) -> bool:
    """Whether ``GET <base_url>/models`` gets any HTTP answer below 500 (the server is up)."""
    url = display_url(base_url if base_url is not None else spec.base_url)
    try:
        ans = _get(url + "/models", key=_key_of(spec), timeout_s=_timeout(spec, timeout_s))
    except _NoAnswer:
        return False
    return ans.status < 500


def _timeout(spec: EndpointSpec, timeout_s: float | None) -> float:
    return float(timeout_s) if timeout_s is not None else min(float(spec.timeout_s), _PROBE_TIMEOUT_S)


def _server_root(url: str) -> str:
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[:-3]
    return urlunsplit((parts.scheme, parts.netloc, path, "", "")).rstrip("/")


def _server_version(url: str, key: str | None) -> str | None:
    root = _server_root(url)
    for path, field_name in (("/version", "version"), ("/props", "build_info")):
        try:
            ans = _get(root + path, key=key, timeout_s=_VERSION_TIMEOUT_S)
            if ans.status == 200:
                v = ans.json().get(field_name)
                if v is not None:
                    return str(v)[:100]
        except (_NoAnswer, ValueError, AttributeError):
            continue
    return None


def _revision(entry: Mapping[str, Any]) -> str | None:
    parts = []
    if entry.get("revision") is not None:
        parts.append(str(entry["revision"])[:80])
    if entry.get("parent") is not None:
        parts.append(f"parent:{str(entry['parent'])[:80]}")
    meta = entry.get("meta")
    if isinstance(meta, Mapping) and meta:
        blob = json.dumps(meta, sort_keys=True, default=str)
        parts.append("meta:" + hashlib.sha256(blob.encode()).hexdigest()[:12])
    return ";".join(parts) or None


def _field(fields: Mapping[str, str] | None, name: str) -> str:
    return (fields or {}).get(name, name)


def served_model(spec: EndpointSpec, base_url: str | None = None, *, require_listed: bool = True,
                 fields: Mapping[str, str] | None = None, timeout_s: float | None = None,
                 version: bool = True) -> ServedModel:
    """What ``base_url`` (default: the spec's) serves as ``spec.model``, from one ``GET /models``.

    Raises :class:`EndpointCheckError` when the server does not answer, answers 5xx (``kind``
    transport), rejects the key (auth), or, with ``require_listed``, does not list the model or
    has no model list (not_found). Without ``require_listed`` an unlisted model (or a server
    without ``/models``) gives ``ServedModel(spec.model)``: the chat request then tells.
    """
    url = display_url(base_url if base_url is not None else spec.base_url)
    f_url, f_key, f_model = (_field(fields, n) for n in ("base_url", "api_key_env", "model"))
    key = _key_of(spec)
    try:
        ans = _get(url + "/models", key=key, timeout_s=_timeout(spec, timeout_s))
    except _NoAnswer as exc:
        raise EndpointCheckError(f"{f_url}: {url} does not answer ({exc.reason}); is the server running?",
                                 field=f_url, kind="transport") from None
    if ans.status in (401, 403):
        if spec.api_key_env:
            msg = (f"{f_key}: the key in {spec.api_key_env} was rejected by {url} "
                   f"(HTTP {ans.status}: {ans.snippet()})")
        else:
            msg = (f"{f_key}: {url} wants a key (HTTP {ans.status}: {ans.snippet()}); set {f_key} to the "
                   "name of the environment variable that holds it")
        raise EndpointCheckError(msg, field=f_key, kind="auth")
    if ans.status >= 500:
        raise EndpointCheckError(f"{f_url}: {url}/models answered HTTP {ans.status} ({ans.snippet()}); "
                                 "is the server still loading?", field=f_url, kind="transport")
    sv = _server_version(url, key) if version and _is_custom(url) else None
    if ans.status != 200:
        if not require_listed:
            return ServedModel(spec.model, server_version=sv, base_url=url)
        raise EndpointCheckError(f"{f_url}: {url}/models answered HTTP {ans.status} ({ans.snippet()}); is "
                                 f"{url} the server's OpenAI-compatible base URL (it usually ends in /v1)?",
                                 field=f_url, kind="not_found")
    try:
        data = ans.json()
        entries = [e for e in data["data"] if isinstance(e, Mapping) and isinstance(e.get("id"), str)]
    except (ValueError, KeyError, TypeError, AttributeError):
        raise EndpointCheckError(f"{f_url}: {url}/models did not answer with an OpenAI model list "
                                 f"({ans.snippet()[:100]!r})", field=f_url, kind="transport") from None
    for e in entries:
        if e["id"] == spec.model:
            root, owner = e.get("root"), e.get("owned_by")
            return ServedModel(spec.model, root=str(root) if root is not None else None,
                               revision=_revision(e), server_version=sv, base_url=url,
                               owned_by=str(owner)[:40] if owner is not None else None)
    if not require_listed:
        return ServedModel(spec.model, server_version=sv, base_url=url)
    ids = ", ".join(e["id"] for e in entries[:20]) + (", ..." if len(entries) > 20 else "")
    raise EndpointCheckError(f"{f_model}: {spec.model!r} is not served by {url}; it serves: {ids or 'nothing'}",
                             field=f_model, kind="not_found")


def _is_custom(url: str) -> bool:
    """Whether ``url`` is some server's, not the OpenAI API's (only those report a version)."""
    return display_url(url) != OPENAI_BASE_URL


def check_endpoint(spec: EndpointSpec, *, wait_s: float = 0.0,
                   fields: Mapping[str, str] | None = None) -> ServedModel:
    """Check ``spec`` (key set, ``/models`` answers, model served, replicas alike) and return what
    its base URL serves; :class:`EndpointCheckError` naming the parameter otherwise.

    ``wait_s``: keep retrying a server that does not answer (or answers 5xx) for this long."""
    if wait_s < 0:
        raise ValueError(f"wait_s: must be >= 0, got {wait_s!r}")
    f_key = _field(fields, "api_key_env")
    if spec.api_key_env and not os.environ.get(spec.api_key_env):
        raise EndpointCheckError(f"{f_key}: {spec.api_key_env} is not set", field=f_key, kind="missing_key")
    deadline = time.monotonic() + float(wait_s)
    served = []
    for url in spec.base_urls:
        while True:
            try:
                served.append(served_model(spec, url, fields=fields))
                break
            except EndpointCheckError as exc:
                left = deadline - time.monotonic()
                if exc.kind != "transport" or left <= 0:
                    if exc.kind == "transport" and wait_s > 0:
                        raise EndpointCheckError(f"{exc} (waited {wait_s:g} s)", field=exc.field,
                                                 kind=exc.kind) from None
                    raise
                time.sleep(min(max(spec.probe_interval_s, 0.05), left))
    first = served[0]
    for other in served[1:]:
        if other.fingerprint != first.fingerprint:
            f_rep = _field(fields, "replicas")
            raise EndpointCheckError(
                f"{f_rep}: {other.base_url} serves {spec.model!r} as root={other.root!r} revision="
                f"{other.revision!r}, but {first.base_url} serves root={first.root!r} revision="
                f"{first.revision!r}; replicas must serve the same weights", field=f_rep, kind="rejected")
    return first


def check_endpoints(specs: Iterable[EndpointSpec], **kw: Any) -> dict[str, ServedModel]:
    """:func:`check_endpoint` of each alias once (the first spec of an alias), by alias."""
    out: dict[str, ServedModel] = {}
    for spec in specs:
        if spec.alias not in out:
            out[spec.alias] = check_endpoint(spec, **kw)
    return out
