"""LLM client against a fake OpenAI-compatible server on 127.0.0.1: retries, errors raised as
EndpointError (never returned), concurrency, timeouts, structured output, secrets, a server that dies.

Directives like ``[[fake status=429 times=2]]`` in a user message steer the default
fake handler (see ``collablab.llm.fake_server``). Outages and restarts: tests/test_llm_breaker.py;
preflight, fingerprints, replicas, extra_body: tests/test_llm_endpoints.py.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from collablab.llm import (EndpointError, EndpointSpec, LLMCallError, LLMClient, ResponseCache, endpoint_limiter,
                           extract_json, find_json, user_message, validate)
from collablab.llm.fake_server import FakeOpenAIServer, FakeReply

SECRET = "sk-test-SECRET123"
_n = 0


def _alias(prefix: str) -> str:
    global _n
    _n += 1
    return f"{prefix}-{os.getpid()}-{_n}"  # limiters are process-wide per alias


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _secret_env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


def make_client(srv, tmp_path, *, mode="rw", **spec_kw):
    kw = dict(alias=_alias("fake"), model="fake-model", base_url=srv.base_url,
              backoff_base_s=0.02, backoff_max_s=0.2, timeout_s=5, max_attempts=4)
    kw.update(spec_kw)
    return LLMClient(EndpointSpec(**kw), cache_path=tmp_path / "cache.sqlite", cache_mode=mode)


# ------------------------------------------------------------------ retries


@pytest.mark.parametrize("directive,attempts", [
    ("status=429 times=2", 3),
    ("status=500 times=1", 2),
    ("status=503 times=3", 4),
    ("status=408 times=1", 2),
    ("malformed=1", 2),
])
def test_retries_then_success(server, tmp_path, directive, attempts):
    client = make_client(server, tmp_path)
    r = client.chat_sync(f"hello [[fake {directive}]]", call_id="retry")
    assert r.error is None, r.error
    assert r.text == "echo: hello"
    assert r.attempts == attempts
    assert server.n_requests == attempts
    assert r.usage.prompt_tokens > 0 and r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens


def test_bounded_retries_then_endpoint_error(server, tmp_path):
    client = make_client(server, tmp_path, max_attempts=3)
    with pytest.raises(EndpointError) as ei:
        client.chat_sync("hello [[fake status=500]]", call_id="always-500")
    e = ei.value
    assert e.kind == "transport" and e.transient and isinstance(e, LLMCallError)
    r = e.result
    assert r.error is not None and "500" in r.error and "always-500" in str(e) and r.endpoint in str(e)
    assert r.attempts == 3 and server.n_requests == 3
    assert r.text is None and r.cache == "miss"
    assert r.to_record()["error"] == r.error
    # the failure is not cached: a replay of it misses
    assert ResponseCache(tmp_path / "cache.sqlite", "replay").get(r.cache_key) is None


@pytest.mark.parametrize("status,kind", [(400, "rejected"), (413, "rejected"), (422, "rejected"),
                                         (401, "auth"), (403, "auth"), (404, "not_found")])
def test_non_retryable_status_fails_fast_with_its_kind(server, tmp_path, status, kind):
    client = make_client(server, tmp_path)
    with pytest.raises(EndpointError) as ei:
        client.chat_sync(f"hello [[fake status={status}]]", call_id="bad")
    assert ei.value.kind == kind and not ei.value.transient
    assert ei.value.result.attempts == 1 and server.n_requests == 1 and str(status) in str(ei.value)


def test_endpoint_error_pickles_with_its_kind(server, tmp_path):
    import pickle

    client = make_client(server, tmp_path, max_attempts=1)
    with pytest.raises(EndpointError) as ei:
        client.chat_sync("hello [[fake status=401]]", call_id="boom")
    again = pickle.loads(pickle.dumps(ei.value))
    assert type(again) is EndpointError and again.kind == "auth" and str(again) == str(ei.value)
    assert again.result == ei.value.result
    with pytest.raises(ValueError, match="kind: 'weird' is not allowed"):
        EndpointError(ei.value.result, "weird")


def test_retry_after_header_is_honoured(server, tmp_path):
    client = make_client(server, tmp_path, backoff_base_s=0.01, backoff_max_s=5)
    t0 = time.perf_counter()
    r = client.chat_sync("x [[fake status=429 times=1 retry_after=0.6]]", call_id="ra")
    assert r.ok and r.attempts == 2
    assert time.perf_counter() - t0 >= 0.6


def test_backoff_grows_with_jitter_and_cap():
    import random

    c = LLMClient(EndpointSpec(alias=_alias("bo"), model="m", backoff_base_s=0.5,
                               backoff_max_s=3.0), cache_mode="off", rng=random.Random(0))
    for n, (lo, hi) in enumerate([(0.25, 0.5), (0.5, 1.0), (1.0, 2.0), (1.5, 3.0), (1.5, 3.0)], 1):
        ds = [c._backoff(n, None) for _ in range(50)]
        assert lo <= min(ds) and max(ds) <= hi
        assert len(set(ds)) > 1  # jittered


# -------------------------------------------------------------- concurrency


def test_concurrency_bound_respected_and_no_call_lost(server, tmp_path):
    limit = 3
    client = make_client(server, tmp_path, max_concurrency=limit)
    n = 20
    reqs = [dict(messages=f"msg {i} [[fake delay=0.15]]", call_id=f"c/{i}") for i in range(n)]
    t0 = time.perf_counter()
    results = client.chat_many_sync(reqs)
    elapsed = time.perf_counter() - t0
    assert [r.text for r in results] == [f"echo: msg {i}" for i in range(n)]
    assert all(r.error is None for r in results)
    assert server.max_in_flight <= limit
    assert client.limiter.max_in_flight == limit  # the bound was reached, not exceeded
    assert client.limiter.in_flight == 0
    assert server.n_requests == n
    # bounded => at least n/limit waves of 0.15 s
    assert elapsed >= (n // limit) * 0.15 * 0.9
    assert any(r.queue_s > 0.1 for r in results)


def test_concurrency_bound_shared_across_threads_and_loops(server, tmp_path):
    """Sync callers in several threads (each its own event loop) share one bound per alias."""
    limit = 2
    alias = _alias("shared")
    spec = EndpointSpec(alias=alias, model="fake-model", base_url=server.base_url,
                        max_concurrency=limit, timeout_s=10)
    out: list = []
    lock = threading.Lock()

    def worker(w):
        client = LLMClient(spec, cache_path=tmp_path / "cache.sqlite")  # separate instances
        for i in range(3):
            r = client.chat_sync(f"t{w} {i} [[fake delay=0.1]]", call_id=f"t{w}/{i}")
            with lock:
                out.append(r)

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(out) == 18 and all(r.ok for r in out)
    assert server.max_in_flight <= limit
    assert endpoint_limiter(alias).max_in_flight == limit


def test_limiter_survives_cancellation(server, tmp_path):
    client = make_client(server, tmp_path, max_concurrency=1)

    async def main():
        tasks = [asyncio.create_task(client.chat(f"m{i} [[fake delay=0.2]]", call_id=f"k{i}"))
                 for i in range(5)]
        await asyncio.sleep(0.05)
        for t in tasks[1:3]:
            t.cancel()
        res = await asyncio.gather(*tasks, return_exceptions=True)
        await client.aclose()
        return res

    res = asyncio.run(main())
    assert sum(isinstance(r, asyncio.CancelledError) for r in res) == 2
    assert [r.text for r in res if not isinstance(r, BaseException)] == ["echo: m0", "echo: m3", "echo: m4"]
    assert client.limiter.in_flight == 0 and client.limiter.waiting == 0


# ------------------------------------------------------------------ timeouts


def test_timeout_raises_not_hangs(server, tmp_path):
    client = make_client(server, tmp_path, timeout_s=0.3, max_attempts=2)
    t0 = time.perf_counter()
    with pytest.raises(EndpointError) as ei:
        client.chat_sync("slow [[fake delay=3]]", call_id="slow")
    elapsed = time.perf_counter() - t0
    assert ei.value.kind == "transport" and "timeout" in ei.value.result.error.lower()
    assert ei.value.result.attempts == 2
    assert elapsed < 2.0
    # per-call override
    r2 = client.chat_sync("slow2 [[fake delay=0.5]]", call_id="slow2", timeout_s=3)
    assert r2.ok


@pytest.mark.parametrize("mode", ["rw", "off"])
def test_missing_key_raises_before_any_request(server, tmp_path, monkeypatch, mode):
    monkeypatch.delenv("MY_MISSING_KEY", raising=False)
    client = make_client(server, tmp_path, mode=mode, api_key_env="MY_MISSING_KEY")
    with pytest.raises(EndpointError) as ei:
        client.chat_sync("hi", call_id="nokey")
    assert ei.value.kind == "missing_key" and not ei.value.transient
    assert "MY_MISSING_KEY" in str(ei.value) and ei.value.result.attempts == 0
    assert server.n_requests == 0 and server.n_model_requests == 0


def test_sync_wrapper_inside_running_loop(server, tmp_path):
    client = make_client(server, tmp_path)

    async def notebook_cell():  # Jupyter runs cells inside a live event loop
        return client.chat_sync("inside", call_id="nb")

    r = asyncio.run(notebook_cell())
    assert r.text == "echo: inside"


def test_images_are_sent_as_content_parts(server, tmp_path):
    from PIL import Image

    client = make_client(server, tmp_path)
    img = Image.new("RGB", (2, 2), (1, 2, 3))
    r = client.chat_sync([user_message("what is this?", [img])], call_id="img")
    assert r.ok and r.text == "echo: what is this?"
    parts = server.bodies[-1]["messages"][0]["content"]
    assert parts[1]["type"] == "image_url"
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
    # the cache stores the image hash only
    row = ResponseCache(tmp_path / "cache.sqlite", "replay").rows()[0]
    assert "base64" not in row["request"] and "sha256" in row["request"]


# -------------------------------------------------------- structured output

SCHEMA = {"type": "object", "properties": {"action": {"type": "string"},
                                           "target": {"type": "integer"}},
          "required": ["action", "target"]}


def scripted(replies):
    """A handler that answers with the scripted replies in order (then repeats the last)."""
    state = {"i": 0}
    lock = threading.Lock()

    def handler(body, srv):
        with lock:
            i = state["i"]
            state["i"] += 1
        return FakeReply(text=replies[min(i, len(replies) - 1)])

    return handler


@pytest.mark.parametrize("mode", ["json_schema", "json_object", "none"])
def test_structured_reask_then_valid(tmp_path, mode):
    replies = ["Sure! I will grab it.", '{"action": "grab"}',
               'Here you go: {"action": "grab", "target": 7} hope it helps']
    with FakeOpenAIServer(scripted(replies)) as srv:
        client = make_client(srv, tmp_path, structured_mode=mode)
        res = client.chat_json_sync("what next?", SCHEMA, call_id="s/1", max_reasks=3)
        bodies = srv.bodies
    assert res.ok and res.parsed == {"action": "grab", "target": 7}
    assert res.n_asks == 3 and res.parse_error is None
    assert [a.attempt for a in res.asks] == [0, 1, 2]
    assert res.usage.total_tokens == sum(a.usage.total_tokens for a in res.asks)
    rf = bodies[0].get("response_format")
    if mode == "json_schema":
        assert rf["type"] == "json_schema" and rf["json_schema"]["schema"] == SCHEMA
    elif mode == "json_object":
        assert rf == {"type": "json_object", "schema": SCHEMA}
    else:
        assert rf is None
    # the schema is in the prompt; the re-ask carries the validation error
    assert "JSON schema" in bodies[0]["messages"][0]["content"]
    second = bodies[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": "Sure! I will grab it."}
    assert "invalid" in second[-1]["content"] and "JSON" in second[-1]["content"]
    assert "target" in bodies[2]["messages"][-1]["content"]  # "'target' is a required property"


def test_structured_never_parses(tmp_path):
    with FakeOpenAIServer(scripted(["I refuse to answer in JSON."])) as srv:
        client = make_client(srv, tmp_path)
        res = client.chat_json_sync("what next?", SCHEMA, call_id="s/never", max_reasks=2)
        assert srv.n_requests == 3
    assert res.parsed is None and res.parse_error and not res.ok
    assert res.n_asks == 3 and res.error is None
    rec = res.to_record()
    assert rec["parse_error"] == res.parse_error and rec["n_asks"] == 3


def test_structured_transport_error_raises(server, tmp_path):
    client = make_client(server, tmp_path, max_attempts=2)
    with pytest.raises(EndpointError, match="500"):
        client.chat_json_sync("x [[fake status=500]]", SCHEMA, call_id="s/err")


def test_structured_empty_reply_is_a_parse_error_and_reasked(tmp_path):
    with FakeOpenAIServer(scripted(["", '{"action": "go", "target": 2}'])) as srv:
        client = make_client(srv, tmp_path)
        res = client.chat_json_sync("what next?", SCHEMA, call_id="s/empty", max_reasks=1)
    assert res.ok and res.parsed == {"action": "go", "target": 2} and res.asks[0].text == ""
    assert res.error is None


def test_ask_turns_a_result_with_an_error_into_endpoint_error():
    from collablab.llm import LLMResult, Usage
    from collablab.llm.structured import ask

    class Returning:  # a client that returns failures instead of raising them
        endpoint = EndpointSpec(alias="ret", model="m", api_key_env=None)

        async def chat(self, messages, *, call_id, **kw):
            return LLMResult(text=None, usage=Usage(), latency_s=0.0, cache="off", attempts=1,
                             error="HTTP 503: down", model="m", endpoint="ret", call_id=call_id)

    with pytest.raises(EndpointError, match="HTTP 503"):
        asyncio.run(ask(Returning(), "hi", lambda t: (t, None), call_id="r/1"))


def test_structured_replay_reproduces_chain(tmp_path):
    replies = ["nope", '{"action": "wait", "target": 1}']
    with FakeOpenAIServer(scripted(replies)) as srv:
        live = make_client(srv, tmp_path).chat_json_sync("go", SCHEMA, call_id="s/rp")
        spec = EndpointSpec(alias=live.endpoint, model="fake-model", base_url=srv.base_url)
    replay = LLMClient(spec, cache_path=tmp_path / "cache.sqlite", cache_mode="replay")
    again = replay.chat_json_sync("go", SCHEMA, call_id="s/rp")
    assert again.parsed == live.parsed and again.n_asks == 2 and again.cache == "hit"
    assert again.usage == live.usage


def test_extract_and_validate_helpers():
    assert extract_json('{"a": 1}') == ({"a": 1}, None)
    assert extract_json('```json\n{"a": 2}\n```')[0] == {"a": 2}
    assert extract_json('blah {"a": {"b": [1, 2]}} trailing {"c": 3}')[0] == {"a": {"b": [1, 2]}}
    assert extract_json("no json {here")[0] is None
    assert extract_json("")[1] == "empty reply"
    assert validate({"action": "x", "target": 1}, SCHEMA) is None
    assert "target" in validate({"action": "x"}, SCHEMA)
    assert validate({"action": "x", "target": "one"}, SCHEMA) is not None
    assert validate({"action": "x", "target": True}, SCHEMA) is not None
    # the one extractor tolerates a trailing comma; a value left open is closed only when asked
    assert extract_json('say {"a": [1, 2,],}')[0] == {"a": [1, 2]}
    assert extract_json('ok {"a": {"b": "cut')[0] is None
    assert find_json('ok {"a": {"b": "cut', repair=True) == {"a": {"b": "cut"}}


# ------------------------------------------------------------------- secrets


def test_key_never_leaks(server, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    client = make_client(server, tmp_path, max_attempts=2)
    ok = client.chat_sync("hello", call_id="s/ok")
    # the server echoes the Authorization header back in its error message
    errors = []
    for text, cid in [("hello [[fake status=401 echo_auth=1]]", "s/401"),
                      ("hello [[fake status=500 echo_auth=1]]", "s/500")]:
        with pytest.raises(EndpointError) as ei:
            client.chat_sync(text, call_id=cid)
        errors.append(ei.value)
    with pytest.raises(EndpointError) as ei:
        client.chat_json_sync("hello [[fake status=500 echo_auth=1]]", SCHEMA, call_id="s/js")
    errors.append(ei.value)
    assert f"Bearer {SECRET}" in server.auth_headers  # the key really was sent
    assert "Authorization: Bearer ***" in errors[0].result.error  # ...and really echoed, then redacted
    for exc in errors:
        assert exc.__cause__ is None and exc.__suppress_context__
    texts = [repr(ok), repr(client), repr(client.endpoint), caplog.text]
    for exc in errors:
        texts += [str(exc), repr(exc), repr(exc.result), json.dumps(exc.result.to_record())]
    for t in texts:
        assert SECRET not in t
    raw = b"".join(p.read_bytes() for p in Path(tmp_path).glob("cache.sqlite*"))
    assert len(raw) > 0 and ok.text.encode() in raw
    assert SECRET.encode() not in raw


# -------------------------------------------------------- server dies mid-run


def test_server_killed_mid_run_and_not_back_raises_transport_errors(tmp_path):
    """A fake server process killed while calls are in flight and never restarted: the calls that
    got their reply keep it, every other one raises EndpointError(transport) once the outage
    wait (short here) is over; nothing is lost or cached wrongly, the bound is released."""
    proc = subprocess.Popen([sys.executable, "-m", "collablab.llm.fake_server", "--port", "0"],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("PORT ")
        port = int(line.split()[1])
        spec = EndpointSpec(alias=_alias("dying"), model="fake-model",
                            base_url=f"http://127.0.0.1:{port}/v1", max_concurrency=4,
                            timeout_s=3, max_attempts=3, backoff_base_s=0.05,
                            backoff_max_s=0.2, outage_wait_s=0.5, probe_interval_s=0.1)
        client = LLMClient(spec, cache_path=tmp_path / "cache.sqlite")
        n = 16

        async def run():
            tasks = [asyncio.create_task(client.chat(f"m{i} [[fake delay=0.4]]", call_id=f"d/{i}"))
                     for i in range(n)]
            # kill it once the first wave is done and the next is in flight
            deadline = time.monotonic() + 30
            while sum(t.done() for t in tasks) < 4 and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.1)
            proc.kill()
            out = await asyncio.gather(*tasks, return_exceptions=True)
            await client.aclose()
            return out

        t0 = time.perf_counter()
        results = asyncio.run(asyncio.wait_for(run(), 60))
        elapsed = time.perf_counter() - t0
    finally:
        proc.kill()
        proc.wait()
    assert len(results) == n
    ok = [r for r in results if not isinstance(r, BaseException)]
    failed = [r for r in results if isinstance(r, BaseException)]
    assert 1 <= len(ok) < n and len(failed) >= 1
    assert all(r.text == f"echo: m{int(r.call_id.split('/')[1])}" for r in ok)
    assert all(isinstance(e, EndpointError) and e.kind == "transport" for e in failed)
    assert all("outage_wait_s=0.5" in e.result.error for e in failed)
    assert elapsed < 30
    assert client.limiter.in_flight == 0
    assert len(ResponseCache(tmp_path / "cache.sqlite", "replay")) == len(ok)
