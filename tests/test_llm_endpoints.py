"""Endpoints against fake OpenAI-compatible servers on 127.0.0.1: the preflight check and its
messages, the served fingerprint in the cache key (rw learns it, replay reads it), extra_body,
reasoning_content, empty replies, replicas with least-loaded routing, redaction and stats."""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
import time

import pytest
from conftest import free_port

from collablab.llm import (CacheMiss, EndpointCheckError, EndpointError, EndpointSpec, LLMClient, ResponseCache,
                           ServedModel, check_endpoint, check_endpoints, forget_served, learned_served,
                           merge_params, redact, stats)
from collablab.llm.fake_server import FakeOpenAIServer, FakeReply

_n = 0


def alias(prefix: str = "ep") -> str:
    """A fresh alias: limiters, breakers' routing and learned fingerprints are per process."""
    global _n
    _n += 1
    return f"{prefix}-{os.getpid()}-{_n}"


def spec(url: str, **kw) -> EndpointSpec:
    base = dict(alias=alias(), model="fake-model", base_url=url, api_key_env=None, backoff_base_s=0.01,
                backoff_max_s=0.05, timeout_s=5, max_attempts=2, probe_interval_s=0.05, outage_wait_s=2.0)
    base.update(kw)
    return EndpointSpec(**base)


def recorder(reply="ok"):
    bodies: list[dict] = []
    lock = threading.Lock()

    def handler(body, srv):
        with lock:
            bodies.append(body)
        return FakeReply(reply(body) if callable(reply) else reply)
    return bodies, handler


# -------------------------------------------------------------------------- preflight
def test_check_endpoint_reports_what_is_served():
    with FakeOpenAIServer(models=["a", "fake-model"], root={"fake-model": "/ckpt/step-100"}) as srv:
        sm = check_endpoint(spec(srv.base_url))
    assert sm == ServedModel("fake-model", root="/ckpt/step-100", revision=None, server_version="fake-0.1",
                             base_url=srv.base_url, owned_by="fake")
    assert re.fullmatch(r"[0-9a-f]{16}", sm.fingerprint)
    assert sm.fingerprint != ServedModel("fake-model", root="/ckpt/step-200").fingerprint
    assert sm.fingerprint == ServedModel("fake-model", root="/ckpt/step-100", server_version="other",
                                         base_url="http://x/v1").fingerprint  # only the weights count
    assert ServedModel.from_dict(sm.to_dict()) == sm and sm.to_dict()["fingerprint"] == sm.fingerprint


def test_a_missing_key_is_named_before_any_request(monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_13", raising=False)
    with FakeOpenAIServer() as srv:
        s = spec(srv.base_url, api_key_env="NO_SUCH_KEY_13")
        with pytest.raises(EndpointCheckError, match=r"^api_key_env: NO_SUCH_KEY_13 is not set$") as ei:
            check_endpoint(s)
        assert ei.value.kind == "missing_key" and isinstance(ei.value, ValueError)
        with pytest.raises(ValueError, match=r"^llm_api_key_env: NO_SUCH_KEY_13 is not set$"):
            check_endpoint(s, fields={"api_key_env": "llm_api_key_env"})
        assert srv.n_model_requests == 0


def test_an_unreachable_base_url_is_named():
    url = f"http://127.0.0.1:{free_port()}/v1"
    msg = f"base_url: {url} does not answer (connection refused); is the server running?"
    with pytest.raises(EndpointCheckError, match=f"^{re.escape(msg)}$") as ei:
        check_endpoint(spec(url))
    assert ei.value.kind == "transport"
    with pytest.raises(ValueError, match=r"^url: .* \(waited 0.2 s\)$"):
        check_endpoint(spec(url), wait_s=0.2, fields={"base_url": "url"})


def test_an_unserved_model_lists_what_is_served():
    with FakeOpenAIServer(models=["a", "b"]) as srv:
        msg = f"model: 'x' is not served by {srv.base_url}; it serves: a, b"
        with pytest.raises(EndpointCheckError, match=f"^{re.escape(msg)}$") as ei:
            check_endpoint(spec(srv.base_url, model="x"))
        assert ei.value.kind == "not_found"
        with pytest.raises(ValueError, match="^llm_model: 'x' is not served"):
            check_endpoint(spec(srv.base_url, model="x"), fields={"model": "llm_model"})


def test_a_rejected_or_absent_key_is_named_and_redacted(monkeypatch):
    monkeypatch.setenv("WRONG_KEY_13", "sk-wrong-0123456789")
    with FakeOpenAIServer(require_key="sk-right") as srv:
        with pytest.raises(EndpointCheckError, match=r"^api_key_env: the key in WRONG_KEY_13 was rejected by") as ei:
            check_endpoint(spec(srv.base_url, api_key_env="WRONG_KEY_13"))
        assert ei.value.kind == "auth" and "sk-wrong" not in str(ei.value)
        with pytest.raises(EndpointCheckError, match=r"^api_key_env: .* wants a key \(HTTP 401"):
            check_endpoint(spec(srv.base_url, api_key_env=None))
        monkeypatch.setenv("RIGHT_KEY_13", "sk-right")
        assert check_endpoint(spec(srv.base_url, api_key_env="RIGHT_KEY_13")).id == "fake-model"


def test_a_base_url_without_v1_is_suspected():
    with FakeOpenAIServer() as srv:
        url = f"http://127.0.0.1:{srv.port}/api"
        with pytest.raises(EndpointCheckError, match=r"^base_url: .*/api/models answered HTTP 404 .*ends in /v1"):
            check_endpoint(spec(url))


def test_wait_s_waits_for_a_server_that_starts_or_is_still_loading():
    port = free_port()
    box = {}

    def start_late():
        time.sleep(0.5)
        box["srv"] = FakeOpenAIServer(port=port).start()

    t = threading.Thread(target=start_late)
    t.start()
    try:
        sm = check_endpoint(spec(f"http://127.0.0.1:{port}/v1"), wait_s=20)
        assert sm.id == "fake-model"
    finally:
        t.join()
        box["srv"].stop()
    with FakeOpenAIServer() as srv:
        srv.models_status = 503  # llama.cpp answers 503 while it loads the model
        threading.Timer(0.4, lambda: setattr(srv, "models_status", 200)).start()
        assert check_endpoint(spec(srv.base_url), wait_s=20).id == "fake-model"
        srv.models_status = 503
        with pytest.raises(EndpointCheckError, match="answered HTTP 503"):
            check_endpoint(spec(srv.base_url))


def test_replicas_are_checked_and_must_serve_the_same_weights():
    with FakeOpenAIServer(root="/w/a") as a, FakeOpenAIServer(root="/w/a") as b, \
            FakeOpenAIServer(root="/w/b") as c:
        assert check_endpoint(spec(a.base_url, replicas=(b.base_url,))).root == "/w/a"
        assert a.n_model_requests == 1 and b.n_model_requests == 1
        with pytest.raises(EndpointCheckError, match=r"^replicas: .* replicas must serve the same weights"):
            check_endpoint(spec(a.base_url, replicas=(b.base_url, c.base_url)))


def test_check_endpoints_checks_each_alias_once():
    with FakeOpenAIServer() as srv:
        s1, s2 = spec(srv.base_url), spec(srv.base_url)
        got = check_endpoints([s1, s2, s1, s1])
        assert set(got) == {s1.alias, s2.alias} and srv.n_model_requests == 2


def test_endpoint_spec_rejects_bad_fields_naming_them():
    for kw, msg in [(dict(max_concurrency=0), "max_concurrency: must be an integer >= 1"),
                    (dict(outage_wait_s=-1), "outage_wait_s: must be a non-negative number"),
                    (dict(probe_interval_s=0), "probe_interval_s: must be a positive number"),
                    (dict(replicas="http://a/v1"), "replicas: must be a list"),
                    (dict(replicas=("localhost:8000",)), "replicas: 'localhost:8000' must start with http"),
                    (dict(base_url=None, replicas=("http://a/v1",)), "replicas: need a base_url"),
                    (dict(alias=""), "alias: must be a non-empty string")]:
        with pytest.raises(ValueError, match=re.escape(msg)):
            spec("http://127.0.0.1:1/v1", **kw)
    s = EndpointSpec.from_dict({**spec("http://127.0.0.1:1/v1", replicas=["http://127.0.0.1:2/v1"]).to_dict()})
    assert s.replicas == ("http://127.0.0.1:2/v1",) and s.base_urls == ("http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1")


# -------------------------------------------------------------- the served fingerprint
def test_the_fingerprint_is_learned_once_per_process_and_alias(tmp_path):
    with FakeOpenAIServer(root="/w/a") as srv:
        s = spec(srv.base_url)
        c1 = LLMClient(s, cache_path=tmp_path / "c.sqlite")
        c2 = LLMClient(s, cache_path=tmp_path / "c.sqlite")
        c1.chat_many_sync([dict(messages=f"m{i}", call_id=f"f/{i}") for i in range(6)])
        c2.chat_sync("again", call_id="f/again")
        assert srv.n_model_requests == 1 and srv.n_requests == 7
    sm = learned_served(s.alias)
    assert sm is not None and sm.root == "/w/a" and c1.fingerprint() == sm.fingerprint
    rows = ResponseCache(tmp_path / "c.sqlite", "replay").served_rows()
    assert [(r["endpoint"], r["fingerprint"], r["info"]["root"]) for r in rows] == [(s.alias, sm.fingerprint, "/w/a")]


def test_a_swapped_checkpoint_under_the_same_id_misses_the_cache(tmp_path):
    p = tmp_path / "c.sqlite"
    with FakeOpenAIServer(root="/w/step-100") as srv:
        s = spec(srv.base_url)
        c = LLMClient(s, cache_path=p)
        r1 = c.chat_sync("hello", call_id="swap/1")
        assert c.chat_sync("hello", call_id="swap/1").cache == "hit"
        port = srv.port
    forget_served(s.alias)  # a new process would learn it afresh
    with FakeOpenAIServer(root="/w/step-200", port=port) as srv2:
        r2 = c.chat_sync("hello", call_id="swap/1")
        assert r2.cache == "miss" and r2.cache_key != r1.cache_key and srv2.n_requests == 1
    forget_served(s.alias)
    with FakeOpenAIServer(root="/w/step-100", port=port) as srv3:  # the first weights again
        assert c.chat_sync("hello", call_id="swap/1").cache == "hit" and srv3.n_requests == 0


def test_replay_uses_the_recorded_fingerprint_offline(tmp_path):
    p = tmp_path / "c.sqlite"
    with FakeOpenAIServer(root="/w/a") as srv:
        s = spec(srv.base_url)
        live = LLMClient(s, cache_path=p).chat_sync("hi", call_id="rp/1")
    # nobody listens any more: replay needs no server, the key uses the recorded fingerprint
    replay = LLMClient(s, cache_path=p, cache_mode="replay")
    again = replay.chat_sync("hi", call_id="rp/1")
    assert again.cache == "hit" and again.text == live.text and again.cache_key == live.cache_key
    assert replay.fingerprint() == learned_served(s.alias).fingerprint
    # the key with another fingerprint (or none) is another key
    assert replay.key_for("hi", call_id="rp/1") != live.cache_key
    assert replay.key_for("hi", call_id="rp/1", served=replay.fingerprint()) == live.cache_key
    # a later recording of other weights: replay follows the latest and misses
    ResponseCache(p, "rw").record_served(s.alias, s.model, "ffffffffffffffff", {"root": "/w/b"})
    with pytest.raises(CacheMiss, match="rp/1"):
        LLMClient(s, cache_path=p, cache_mode="replay").chat_sync("hi", call_id="rp/1")


def test_failing_to_learn_the_fingerprint_is_a_transport_failure(tmp_path):
    s = spec(f"http://127.0.0.1:{free_port()}/v1", max_attempts=1)
    with pytest.raises(EndpointError) as ei:
        LLMClient(s, cache_path=tmp_path / "c.sqlite").chat_sync("hi", call_id="learn/1")
    assert ei.value.kind == "transport" and "does not answer" in str(ei.value) and ei.value.result.attempts == 0
    assert learned_served(s.alias) is None
    # cache mode off needs no fingerprint (nor a model list)
    with FakeOpenAIServer() as srv:
        r = LLMClient(spec(srv.base_url), cache_path=tmp_path / "c.sqlite", cache_mode="off").chat_sync("x", call_id="o")
        assert r.text == "echo: x" and srv.n_model_requests == 0


def test_an_unlisted_model_is_asked_anyway_and_the_server_answers(tmp_path):
    with FakeOpenAIServer(models=["other"]) as srv:
        r = LLMClient(spec(srv.base_url, model="m0"), cache_path=tmp_path / "c.sqlite").chat_sync("x", call_id="u")
    assert r.text == "echo: x"


# ----------------------------------------------------------------------- extra_body
def test_extra_body_is_merged_sent_and_keyed(tmp_path):
    bodies, handler = recorder()
    defaults = {"temperature": 0.3, "extra_body": {"chat_template_kwargs": {"enable_thinking": False, "x": 1},
                                                   "top_k": 20}}
    with FakeOpenAIServer(handler) as srv:
        c = LLMClient(spec(srv.base_url, default_params=defaults), cache_path=tmp_path / "c.sqlite")
        c.chat_sync("a", call_id="eb/1")
        c.chat_sync("a", call_id="eb/2", extra_params={"extra_body": {"chat_template_kwargs": {"x": 2, "y": None},
                                                                      "guided_json": {"type": "object"}},
                                                       "grammar": "root ::= \"ok\""})
        c.chat_sync("a", call_id="eb/3", temperature=0.9, extra_params={"extra_body": {"top_k": None}})
        k_default = c.key_for("a", call_id="k")
        k_other = c.key_for("a", call_id="k", extra_params=None, extra_body={"top_k": 5})
    assert bodies[0]["temperature"] == 0.3 and bodies[0]["top_k"] == 20
    assert bodies[0]["chat_template_kwargs"] == {"enable_thinking": False, "x": 1}
    assert bodies[1]["chat_template_kwargs"] == {"enable_thinking": False, "x": 2}
    assert bodies[1]["guided_json"] == {"type": "object"} and bodies[1]["grammar"] == 'root ::= "ok"'
    assert bodies[1]["top_k"] == 20 and bodies[2]["temperature"] == 0.9 and bodies[2]["top_k"] == 20
    assert k_default != k_other
    assert merge_params({"a": 1, "extra_body": {"b": {"c": 1}}}, {"a": None, "extra_body": {"b": {"d": 2}}}) == \
        {"a": 1, "extra_body": {"b": {"c": 1, "d": 2}}}


# ------------------------------------------------------------ replies the model gave
def test_reasoning_content_is_read_cached_and_replayed(tmp_path):
    with FakeOpenAIServer() as srv:
        s = spec(srv.base_url)
        c = LLMClient(s, cache_path=tmp_path / "c.sqlite")
        r = c.chat_sync("q [[fake reasoning=let_me_think]]", call_id="rs/1")
        hit = c.chat_sync("q [[fake reasoning=let_me_think]]", call_id="rs/1")
        plain = c.chat_sync("q2", call_id="rs/2")
    assert r.text == "echo: q" and r.reasoning == "let me think" and hit.cache == "hit" and hit.reasoning == "let me think"
    assert plain.reasoning is None and r.to_record()["reasoning"] == "let me think"
    replay = LLMClient(s, cache_path=tmp_path / "c.sqlite", cache_mode="replay")
    assert replay.chat_sync("q [[fake reasoning=let_me_think]]", call_id="rs/1").reasoning == "let me think"


def test_an_empty_or_null_reply_is_a_reply(tmp_path):
    with FakeOpenAIServer() as srv:
        c = LLMClient(spec(srv.base_url), cache_path=tmp_path / "c.sqlite")
        empty = c.chat_sync("e [[fake empty=1]]", call_id="em/1")
        null = c.chat_sync("n [[fake null=1 reasoning=only_thoughts]]", call_id="em/2")
        assert c.chat_sync("n [[fake null=1 reasoning=only_thoughts]]", call_id="em/2").cache == "hit"
        assert srv.n_requests == 2
    assert (empty.text, empty.error, empty.attempts) == ("", None, 1)
    assert (null.text, null.finish_reason, null.reasoning) == ("", "length", "only thoughts")


# ------------------------------------------------------------------------- replicas
def test_replicas_get_the_calls_least_loaded(tmp_path):
    servers = [FakeOpenAIServer(delay_s=0.3).start() for _ in range(3)]
    try:
        s = spec(servers[0].base_url, replicas=tuple(x.base_url for x in servers[1:]), max_concurrency=6)
        c = LLMClient(s, cache_mode="off", cache_path=tmp_path / "c.sqlite")
        res = c.chat_many_sync([dict(messages=f"m{i}", call_id=f"rep/{i}") for i in range(12)])
        assert [r.text for r in res] == [f"echo: m{i}" for i in range(12)]
        assert [x.n_requests for x in servers] == [4, 4, 4]
        assert [x.max_in_flight for x in servers] == [2, 2, 2]
        for x in servers:
            x.delay_s = 0.0
        for i in range(3):  # one at a time: every replica is idle, the first wins the tie
            c.chat_sync(f"seq{i}", call_id=f"seq/{i}")
        assert [x.n_requests for x in servers] == [7, 4, 4]
    finally:
        for x in servers:
            x.stop()


def test_a_dead_replica_is_avoided(tmp_path):
    with FakeOpenAIServer() as live:
        s = spec(f"http://127.0.0.1:{free_port()}/v1", replicas=(live.base_url,), max_attempts=2)
        c = LLMClient(s, cache_mode="off", cache_path=tmp_path / "c.sqlite")
        res = [c.chat_sync(f"m{i}", call_id=f"dr/{i}") for i in range(5)]
        assert [r.text for r in res] == [f"echo: m{i}" for i in range(5)] and live.n_requests == 5
        assert res[0].attempts == 2 and all(r.attempts == 1 for r in res[1:])


# ------------------------------------------------------------------ redaction, stats
def test_key_values_from_the_environment_are_redacted_from_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("SERVICE_API_KEY", "sk-live-verysecret-42")
    monkeypatch.setenv("MY_SHORT_ONE", "abcd1")  # short, and its name looks harmless: registered below
    with FakeOpenAIServer(lambda b, srv: FakeReply(status=400, error_message=(
            "bad: sk-live-verysecret-42 and abcd1 and " + str(srv.last_auth)))) as srv:
        c = LLMClient(spec(srv.base_url, api_key_env="MY_SHORT_ONE"), cache_path=tmp_path / "c.sqlite")
        with pytest.raises(EndpointError) as ei:
            c.chat_sync("x", call_id="red/1")
    text = str(ei.value) + ei.value.result.error + json.dumps(ei.value.result.to_record())
    assert "verysecret" not in text and "abcd1" not in text and text.count("***") >= 3
    assert redact("k=sk-live-verysecret-42 s=abcd1") == "k=*** s=***"
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_tokenvalue123")
    monkeypatch.setenv("PLAIN_SETTING", "ghp_plainvalue123")
    monkeypatch.setenv("SHORT_API_KEY", "abc")
    assert redact("ghp_tokenvalue123 ghp_plainvalue123 abc") == "*** ghp_plainvalue123 abc"


def test_stats_count_each_logical_call(tmp_path):
    stats.take()
    with FakeOpenAIServer() as srv:
        s = spec(srv.base_url, max_attempts=1)
        c = LLMClient(s, cache_path=tmp_path / "c.sqlite")
        c.chat_sync("one two", call_id="st/1")
        c.chat_sync("one two", call_id="st/1")  # a hit
        c.chat_sync("x [[fake status=429 times=1]]", call_id="st/2", max_attempts=2)
        with pytest.raises(EndpointError):
            c.chat_sync("x [[fake status=401]]", call_id="st/3")
    with pytest.raises(CacheMiss):
        LLMClient(s, cache_path=tmp_path / "c.sqlite", cache_mode="replay").chat_sync("new", call_id="st/4")
    got = stats.take()[s.alias]
    assert got["calls"] == 5 and got["cache_hits"] == 1 and got["http_requests"] == 4
    assert got["errors"] == {"auth": 1, "cache_miss": 1}
    # live calls only: the fake server counts words ("one two", "x [[fake ...]]"; "echo: one two", "echo: x")
    assert got["prompt_tokens"] == 2 + 4 and got["completion_tokens"] == 3 + 2
    assert len(got["latency_s"]) == 4 and stats.take() == {}
    both = stats.merge({s.alias: got}, {s.alias: got, "other": stats.empty()})
    assert both[s.alias]["calls"] == 10 and both[s.alias]["errors"] == {"auth": 2, "cache_miss": 2}
    summary = stats.summarize(both, wall_s=2.0)[s.alias]
    assert summary["calls_per_s"] == 5.0 and summary["tokens"] == 22 and summary["n_errors"] == 4
    lat = sorted(got["latency_s"] * 2)
    assert summary["latency_max_s"] == lat[-1] and lat[0] <= summary["latency_p50_s"] <= summary["latency_p95_s"] <= lat[-1]
    assert stats.summarize({"x": stats.empty()}, 0)["x"]["latency_p50_s"] is None


def test_the_fake_server_restarts_on_its_port_and_reports_its_version():
    srv = FakeOpenAIServer(delay_s=0.2, version="0.9.1").start()
    port = srv.port
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    assert json.loads(opener.open(f"http://127.0.0.1:{port}/version").read()) == {"version": "0.9.1"}
    srv.stop()
    with FakeOpenAIServer(port=port) as again:
        assert again.port == port
        c = LLMClient(spec(again.base_url), cache_mode="off")
        assert c.chat_sync("back", call_id="rst").text == "echo: back"
    with pytest.raises(ValueError, match="host: .*loopback only"):
        FakeOpenAIServer(host="0.0.0.0")


def test_sync_and_async_calls_in_threads_share_breakers_and_fingerprints(tmp_path):
    with FakeOpenAIServer(delay_s=0.05) as srv:
        s = spec(srv.base_url, max_concurrency=3)
        out = []

        def worker(w):
            c = LLMClient(s, cache_path=tmp_path / "c.sqlite")
            out.extend(asyncio.run(c.chat_many([dict(messages=f"{w}-{i}", call_id=f"th/{w}/{i}") for i in range(4)])))

        ts = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        assert len(out) == 16 and srv.n_model_requests == 1 and srv.max_in_flight <= 3


def _child_take(q) -> None:
    q.put(stats.take())


def test_a_forked_child_counts_its_own_calls_and_errors_pickle():
    import multiprocessing as mp
    import pickle

    stats.take()
    stats.record("parent-only", cache="off", latency_s=0.1)
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child_take, args=(q,))
    p.start()
    got = q.get(timeout=60)
    p.join(60)
    assert got == {} and "parent-only" in stats.take()
    e = EndpointCheckError("model: 'x' is not served", field="model", kind="not_found")
    again = pickle.loads(pickle.dumps(e))
    assert (str(again), again.field, again.kind) == (str(e), "model", "not_found")
