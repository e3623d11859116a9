"""A tiny fake OpenAI-compatible chat server for tests (stdlib only, loopback only).

Runs in a thread (:class:`FakeOpenAIServer`) or as a process
(``python -m collablab.llm.fake_server [--port N] [--delay-s S] [--models a,b] [--root R]``
prints ``PORT <n>`` then serves until killed).

Besides ``POST /v1/chat/completions`` it serves ``GET /v1/models`` (the ids of ``models``,
default ``fake-model``, each with ``root``: one string for all, or a dict by id), ``GET
/version`` (vLLM's, ``{"version": version}``). It counts chat requests (``n_requests``),
those in flight now and at the peak (``in_flight``, ``max_in_flight``), model-list requests
(``n_model_requests``), and keeps every request body (``bodies``). ``delay_s`` delays every
chat reply (latency injection); ``require_key`` answers 401 to requests without that bearer
key; ``models_status`` answers the model list with another status (503: still loading). A
stopped server can be started again on the same port: ``FakeOpenAIServer(port=old.port)``.

The default handler echoes the last user message (``"echo: <text>"``) and obeys
directives written anywhere in that message as ``[[fake key=value ...]]``:

``status=429 times=2``  answer the first 2 requests of this tag with HTTP 429
                        (``times`` omitted: always). Any status code works.
``malformed=N``         the first N requests of this tag get a 200 with a broken JSON body.
``delay=S``             sleep S seconds before answering (instead of ``delay_s``).
``empty=1``             answer with empty content (``""``).
``null=1``              answer with ``content: null`` (finish_reason ``length``).
``reasoning=TEXT``      also send ``reasoning_content`` TEXT (underscores become spaces).
``echo_auth=1``         the error body repeats the request's Authorization header
                        (to test that clients redact their key).
``retry_after=S``       add a ``Retry-After`` header to error answers.
``tag=NAME``            the counting group for ``times``/``malformed`` (default: the
                        whole message text).

A custom ``handler(body: dict, server) -> FakeReply | str`` replaces all this.

``reasoning_rules=True`` answers as OpenAI's reasoning models do (GPT-5, o-series): HTTP 400
``unsupported_parameter`` for ``max_tokens`` (use ``max_completion_tokens``) and ``stop``, and
``unsupported_value`` for a ``temperature`` or ``top_p`` other than 1. ``owned_by`` is what the
model list says owns each model (``vllm``, ``llamacpp``: how a client tells the server kind).
Usage is reported as whitespace-separated word counts.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Mapping, Sequence

__all__ = ["FakeOpenAIServer", "FakeReply", "default_handler"]

_DIRECTIVE = re.compile(r"\[\[fake([^\]]*)\]\]")


@dataclass
class FakeReply:
    """One answer: ``text`` (None: ``content: null``), or an error ``status``. ``delay_s`` None
    takes the server's default."""

    text: str | None = "ok"
    status: int = 200
    delay_s: float | None = None
    raw_body: bytes | None = None  # sent verbatim (e.g. malformed JSON)
    headers: dict[str, str] = field(default_factory=dict)
    error_message: str | None = None
    usage: dict[str, int] | None = None
    reasoning: str | None = None
    finish_reason: str = "stop"


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _last_user_text(body: dict) -> str:
    for m in reversed(body.get("messages") or []):
        if m.get("role") == "user":
            return _content_text(m.get("content"))
    return ""


def default_handler(body: dict, server: "FakeOpenAIServer") -> FakeReply:
    """Echo the last user message, obeying its ``[[fake ...]]`` directive (module docstring)."""
    text = _last_user_text(body)
    m = _DIRECTIVE.search(text)
    opts: dict[str, str] = {}
    if m:
        for tok in m.group(1).split():
            k, _, v = tok.partition("=")
            opts[k] = v
    clean = _DIRECTIVE.sub("", text).strip()
    tag = opts.get("tag", text)
    n = server.count(tag)  # 1-based count of requests with this tag
    delay = float(opts["delay"]) if opts.get("delay") else None
    headers = {}
    if "retry_after" in opts:
        headers["Retry-After"] = opts["retry_after"]
    if "malformed" in opts and n <= int(opts["malformed"] or 1):
        return FakeReply(raw_body=b'{"id": "x", "choices": [ {"broken', delay_s=delay)
    if "status" in opts:
        times = int(opts["times"]) if opts.get("times") else None
        if times is None or n <= times:
            msg = f"fake error {opts['status']}"
            if opts.get("echo_auth"):
                msg += f"; you sent Authorization: {server.last_auth}"
            return FakeReply(status=int(opts["status"]), error_message=msg, delay_s=delay,
                             headers=headers)
    reasoning = opts["reasoning"].replace("_", " ") if opts.get("reasoning") else None
    if opts.get("null"):
        return FakeReply(text=None, delay_s=delay, reasoning=reasoning, finish_reason="length")
    if opts.get("empty"):
        return FakeReply(text="", delay_s=delay, reasoning=reasoning)
    return FakeReply(text=f"echo: {clean}", delay_s=delay, reasoning=reasoning)


def _refused(body: dict) -> dict[str, Any] | None:
    """The error OpenAI's reasoning models answer a request with, or None (module docstring)."""
    for name, hint in (("max_tokens", " Use 'max_completion_tokens' instead."), ("stop", "")):
        if name in body:
            return {"message": f"Unsupported parameter: '{name}' is not supported with this model.{hint}",
                    "type": "invalid_request_error", "param": name, "code": "unsupported_parameter"}
    for name in ("temperature", "top_p"):
        if name in body and body[name] != 1:
            return {"message": f"Unsupported value: '{name}' does not support {body[name]} with this model. "
                               "Only the default (1) value is supported.",
                    "type": "invalid_request_error", "param": name, "code": "unsupported_value"}
    return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else headers+body in two segments cost a 40 ms delayed ACK
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:  # silence
        pass

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(payload)

    def _authorized(self) -> bool:
        fake: FakeOpenAIServer = self.server.fake
        if fake.require_key is None or self.headers.get("Authorization") == f"Bearer {fake.require_key}":
            return True
        self._send(401, json.dumps({"error": {"message": "invalid api key", "type": "auth",
                                              "code": 401}}).encode())
        return False

    def do_GET(self) -> None:
        fake: FakeOpenAIServer = self.server.fake
        path = self.path.split("?")[0].rstrip("/")
        if path == "/v1/models":
            with fake._lock:
                fake.n_model_requests += 1
            if not self._authorized():
                return
            if fake.models_status != 200:
                self._send(fake.models_status, b'{"error": {"message": "fake model list status"}}')
                return
            data = {"object": "list", "data": [fake.model_entry(m) for m in fake.models]}
            self._send(200, json.dumps(data).encode())
        elif path == "/version" and fake.version is not None:
            self._send(200, json.dumps({"version": fake.version}).encode())
        else:
            self._send(404, b'{"error": {"message": "not found"}}')

    def do_POST(self) -> None:
        fake: FakeOpenAIServer = self.server.fake
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send(400, b'{"error": {"message": "bad json"}}')
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, b'{"error": {"message": "not found"}}')
            return
        if not self._authorized():
            return
        refused = _refused(body) if fake.reasoning_rules else None
        if refused is not None:
            with fake._lock:
                fake.n_refused += 1
            self._send(400, json.dumps({"error": refused}).encode())
            return
        fake._enter(body, self.headers.get("Authorization"))
        try:
            reply = fake.handler(body, fake)
            if isinstance(reply, str):
                reply = FakeReply(text=reply)
            delay = reply.delay_s if reply.delay_s is not None else fake.delay_s
            if delay:
                time.sleep(delay)
        finally:
            fake._exit()
        if reply.raw_body is not None:
            self._send(reply.status, reply.raw_body, reply.headers)
            return
        if reply.status != 200:
            err = {"error": {"message": reply.error_message or f"status {reply.status}",
                             "type": "fake_error", "code": reply.status}}
            self._send(reply.status, json.dumps(err).encode(), reply.headers)
            return
        prompt_words = sum(len(_content_text(m.get("content")).split())
                           for m in body.get("messages") or [])
        completion_words = len((reply.text or "").split())
        usage = reply.usage or {"prompt_tokens": prompt_words,
                                "completion_tokens": completion_words,
                                "total_tokens": prompt_words + completion_words}
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.reasoning is not None:
            message["reasoning_content"] = reply.reasoning
        data = {
            "id": f"chatcmpl-fake-{fake.n_requests}", "object": "chat.completion",
            "created": int(time.time()), "model": body.get("model", "fake-model"),
            "choices": [{"index": 0, "finish_reason": reply.finish_reason, "message": message}],
            "usage": usage,
        }
        self._send(200, json.dumps(data).encode(), reply.headers)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    fake: "FakeOpenAIServer"


class FakeOpenAIServer:
    """Fake ``/v1/chat/completions`` + ``/v1/models`` on 127.0.0.1, in a background thread."""

    def __init__(self, handler: Callable[[dict, "FakeOpenAIServer"], FakeReply | str] | None = None,
                 *, host: str = "127.0.0.1", port: int = 0, models: Sequence[str] = ("fake-model",),
                 root: str | Mapping[str, str] | None = None, version: str | None = "fake-0.1",
                 delay_s: float = 0.0, require_key: str | None = None, reasoning_rules: bool = False,
                 owned_by: str = "fake"):
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError(f"host: {host!r}; the fake server serves loopback only (127.0.0.1, localhost, ::1)")
        self.handler = handler or default_handler
        self.models = list(models)
        self.root = root
        self.version = version
        self.delay_s = float(delay_s)
        self.require_key = require_key
        self.reasoning_rules = reasoning_rules
        self.owned_by = owned_by
        self.models_status = 200
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}
        self.in_flight = 0
        self.max_in_flight = 0
        self.n_requests = 0
        self.n_model_requests = 0
        self.n_refused = 0  # requests refused under reasoning_rules
        self.bodies: list[dict] = []
        self.auth_headers: set[str] = set()
        self.last_auth: str | None = None
        self._httpd = _Server((host, port), _Handler)
        self._httpd.fake = self
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def model_entry(self, model_id: str) -> dict[str, Any]:
        """The ``/v1/models`` entry of ``model_id`` (with its ``root`` when one is set)."""
        entry: dict[str, Any] = {"id": model_id, "object": "model", "owned_by": self.owned_by}
        root = self.root.get(model_id) if isinstance(self.root, Mapping) else self.root
        if root is not None:
            entry["root"] = root
        return entry

    def reset_peak(self) -> None:
        """Restart ``max_in_flight`` from the requests in flight now."""
        with self._lock:
            self.max_in_flight = self.in_flight

    def count(self, tag: str) -> int:
        with self._lock:
            self._counts[tag] = self._counts.get(tag, 0) + 1
            return self._counts[tag]

    def _enter(self, body: dict, auth: str | None) -> None:
        with self._lock:
            self.n_requests += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.bodies.append(body)
            if auth:
                self.auth_headers.add(auth)
            self.last_auth = auth

    def _exit(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def start(self) -> "FakeOpenAIServer":
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True, name="fake-openai")
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """A server process's main loop: print ``PORT <n>``, then serve in the calling thread until
        interrupted."""
        print(f"PORT {self.port}", flush=True)
        try:
            self._httpd.serve_forever()
        except KeyboardInterrupt:
            pass

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> "FakeOpenAIServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--delay-s", type=float, default=0.0, help="delay of every chat reply")
    ap.add_argument("--models", default="fake-model", help="comma-separated served model ids")
    ap.add_argument("--root", default=None, help="the root every served model reports")
    ap.add_argument("--owned-by", default="fake", help="the owner the model list names (vllm, llamacpp, ...)")
    ap.add_argument("--reasoning-rules", action="store_true",
                    help="refuse max_tokens, stop and a temperature other than 1, as OpenAI's reasoning models do")
    args = ap.parse_args(argv)
    srv = FakeOpenAIServer(port=args.port, delay_s=args.delay_s, owned_by=args.owned_by,
                           models=[m for m in args.models.split(",") if m], root=args.root,
                           reasoning_rules=args.reasoning_rules)
    srv.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
