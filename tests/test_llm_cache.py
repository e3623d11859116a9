"""Response cache: key distinctness (served fingerprint included), replay misses, what is (not)
stored (empty replies are), the served table, the default path, multi-process safety."""

from __future__ import annotations

import multiprocessing as mp
import sqlite3

import pytest

from collablab.llm import (CacheMiss, EndpointError, EndpointSpec, LLMClient, ResponseCache, cache_key,
                           default_cache_path, image_part, user_message)
from collablab.llm.fake_server import FakeOpenAIServer, FakeReply

PNG_A = (b"\x89PNG\r\n\x1a\n" + b"\x00" * 8 + b"A")
PNG_B = (b"\x89PNG\r\n\x1a\n" + b"\x00" * 8 + b"B")


def _key(**over):
    kw = dict(endpoint="ep", model="m", messages=[{"role": "user", "content": "hi"}],
              params={"temperature": 0.0, "max_tokens": 10}, call_id="c1", sample_index=0,
              attempt=0)
    kw.update(over)
    return cache_key(**kw)


def test_key_is_stable_and_order_independent():
    a = _key(params={"temperature": 0.0, "max_tokens": 10})
    b = _key(params={"max_tokens": 10, "temperature": 0.0})
    assert a == b and len(a) == 64
    assert _key(params={"temperature": 1, "max_tokens": 10}) == \
        _key(params={"temperature": 1.0, "max_tokens": 10})
    # None-valued params are the same as absent ones
    assert _key(params={"temperature": 0.0, "max_tokens": 10, "seed": None}) == a


@pytest.mark.parametrize("change", [
    dict(call_id="c2"),
    dict(sample_index=1),
    dict(attempt=1),
    dict(endpoint="ep2"),
    dict(model="m2"),
    dict(params={"temperature": 0.7, "max_tokens": 10}),
    dict(params={"temperature": 0.0, "max_tokens": 11}),
    dict(params={"temperature": 0.0, "max_tokens": 10, "top_p": 0.9}),
    dict(params={"temperature": 0.0, "max_tokens": 10, "seed": 1}),
    dict(params={"temperature": 0.0, "max_tokens": 10, "response_format": {"type": "json_object"}}),
    dict(messages=[{"role": "user", "content": "hi!"}]),
    dict(messages=[{"role": "system", "content": "hi"}]),
    dict(served="0123456789abcdef"),
    dict(params={"temperature": 0.0, "max_tokens": 10, "extra_body": {"top_k": 20}}),
])
def test_key_changes(change):
    assert _key(**change) != _key()


def test_image_bytes_change_key_but_encoding_does_not():
    ma = [user_message("look", [PNG_A])]
    mb = [user_message("look", [PNG_B])]
    assert _key(messages=ma) != _key(messages=mb)
    assert _key(messages=ma) == _key(messages=[user_message("look", [bytearray(PNG_A)])])
    assert _key(messages=ma) != _key(messages=[user_message("look")])
    # the image bytes are hashed, not embedded, in the canonical request
    from collablab.llm import canonical_request
    req = canonical_request(endpoint="e", model="m", messages=ma, params={}, call_id="c")
    assert "sha256" in req and "base64" not in req


def test_pil_image_part():
    from PIL import Image

    img = Image.new("RGB", (4, 4), (255, 0, 0))
    part = image_part(img)
    assert part["image_url"]["url"].startswith("data:image/png;base64,")
    img2 = Image.new("RGB", (4, 4), (0, 255, 0))
    assert _key(messages=[user_message("x", [img])]) != _key(messages=[user_message("x", [img2])])
    with pytest.raises(ValueError):
        image_part(b"not an image")


def test_base_url_and_key_not_in_cache_key(tmp_path, monkeypatch):
    msgs = [{"role": "user", "content": "hi"}]
    c1 = LLMClient(EndpointSpec(alias="ep", model="m", base_url="http://127.0.0.1:1/v1",
                                api_key_env="KEY_A"), cache_path=tmp_path / "c.sqlite")
    c2 = LLMClient(EndpointSpec(alias="ep", model="m", base_url="http://127.0.0.1:2/v1",
                                api_key_env="KEY_B"), cache_path=tmp_path / "c.sqlite")
    monkeypatch.setenv("KEY_A", "sk-aaaa")
    monkeypatch.setenv("KEY_B", "sk-bbbb")
    assert c1.key_for(msgs, call_id="x") == c2.key_for(msgs, call_id="x")
    c3 = LLMClient(EndpointSpec(alias="ep-other", model="m", base_url="http://127.0.0.1:1/v1"),
                   cache_path=tmp_path / "c.sqlite")
    assert c3.key_for(msgs, call_id="x") != c1.key_for(msgs, call_id="x")


def test_api_key_env_must_be_a_name():
    with pytest.raises(ValueError) as ei:
        EndpointSpec(alias="a", model="m", api_key_env="sk-live-abcdef")
    assert "sk-live-abcdef" not in str(ei.value)


def _put(cache, key, text="hello", **over):
    kw = dict(text=text, endpoint="ep", model="m", call_id="c", sample_index=0, attempt=0,
              request="{}", prompt_tokens=3, completion_tokens=2, total_tokens=5)
    kw.update(over)
    return cache.put(key, **kw)


def test_put_get_and_empty_stored(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite", "rw")
    assert cache.get("k1") is None
    assert _put(cache, "k1", reasoning="because")
    got = cache.get("k1")
    assert got.text == "hello" and (got.prompt_tokens, got.completion_tokens, got.total_tokens) == (3, 2, 5)
    assert got.created_at > 0 and got.model == "m" and got.reasoning == "because"
    assert _put(cache, "k2", text="")  # the model's empty reply is a reply
    assert _put(cache, "k3", text="   \n")
    assert cache.get("k2").text == "" and cache.get("k3").text == "   \n" and cache.get("k2").reasoning is None
    assert not _put(cache, "k4", text=None)
    assert not _put(cache, "k1", text="other")  # an existing row is kept
    assert len(cache) == 3 and cache.get("k1").text == "hello"
    # journal is WAL
    mode = sqlite3.connect(tmp_path / "c.sqlite").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode.lower() == "wal"


def test_served_table_keeps_the_latest_fingerprint(tmp_path):
    p = tmp_path / "c.sqlite"
    rw = ResponseCache(p, "rw")
    assert rw.served_fingerprint("ep", "m") is None
    assert rw.record_served("ep", "m", "aaaa", {"root": "/a"})
    rw.record_served("ep", "m", "bbbb", {"root": "/b"})
    rw.record_served("ep", "other", "cccc")
    assert rw.served_fingerprint("ep", "m") == "bbbb" and rw.served_fingerprint("ep", "other") == "cccc"
    rw.record_served("ep", "m", "aaaa", {"root": "/a"})  # seen again: the latest once more
    replay = ResponseCache(p, "replay")
    assert replay.served_fingerprint("ep", "m") == "aaaa"
    assert not replay.record_served("ep", "m", "zzzz")
    rows = replay.served_rows()
    assert [(r["model"], r["fingerprint"]) for r in rows] == [("m", "bbbb"), ("other", "cccc"), ("m", "aaaa")]
    assert rows[-1]["info"] == {"root": "/a"}
    assert ResponseCache(tmp_path / "none.sqlite", "replay").served_fingerprint("ep", "m") is None


def test_a_cache_file_of_the_old_layout_is_read_and_upgraded(tmp_path):
    p = tmp_path / "old.sqlite"
    conn = sqlite3.connect(p)
    conn.execute("""CREATE TABLE responses (key TEXT PRIMARY KEY, created_at REAL NOT NULL, endpoint TEXT NOT NULL,
                    model TEXT NOT NULL, call_id TEXT NOT NULL, sample_index INTEGER NOT NULL,
                    attempt INTEGER NOT NULL, text TEXT NOT NULL, finish_reason TEXT, response_model TEXT,
                    prompt_tokens INTEGER, completion_tokens INTEGER, total_tokens INTEGER, request TEXT NOT NULL)""")
    conn.execute("INSERT INTO responses VALUES ('old', 1.0, 'ep', 'm', 'c', 0, 0, 'hi', 'stop', NULL, 1, 1, 2, '{}')")
    conn.commit()
    conn.close()
    replay = ResponseCache(p, "replay")
    assert replay.get("old").text == "hi" and replay.get("old").reasoning is None
    assert replay.served_fingerprint("ep", "m") is None
    rw = ResponseCache(p, "rw")
    assert _put(rw, "new", reasoning="r") and rw.get("new").reasoning == "r" and rw.get("old").text == "hi"


def test_default_cache_path_follows_the_outputs_root(tmp_path, monkeypatch):
    from pathlib import Path

    import collablab

    monkeypatch.delenv("COLLABLAB_LLM_CACHE", raising=False)
    monkeypatch.setenv("COLLABLAB_OUTPUTS", str(tmp_path / "outs"))
    assert default_cache_path() == tmp_path / "outs" / "llm_cache.sqlite"
    monkeypatch.delenv("COLLABLAB_OUTPUTS")
    monkeypatch.chdir(tmp_path)  # not the current directory: the checkout's outputs/
    checkout = Path(collablab.__file__).resolve().parents[2]
    assert default_cache_path() == checkout / "outputs" / "llm_cache.sqlite"
    monkeypatch.setenv("COLLABLAB_LLM_CACHE", str(tmp_path / "x.sqlite"))
    assert default_cache_path() == tmp_path / "x.sqlite"


def test_modes(tmp_path):
    p = tmp_path / "c.sqlite"
    _put(ResponseCache(p, "rw"), "k1")
    off = ResponseCache(p, "off")
    assert off.get("k1") is None and not _put(off, "k9")
    replay = ResponseCache(p, "replay")
    assert replay.get("k1").text == "hello"
    assert not _put(replay, "k9")
    assert ResponseCache(p, "rw").get("k9") is None
    with pytest.raises(ValueError):
        ResponseCache(p, "readonly")
    # replay on a missing file: lookups miss, no file is created
    missing = tmp_path / "nope.sqlite"
    assert ResponseCache(missing, "replay").get("k1") is None
    assert not missing.exists()


def test_env_configures_path_and_mode(tmp_path, monkeypatch):
    monkeypatch.setenv("COLLABLAB_LLM_CACHE", str(tmp_path / "env.sqlite"))
    monkeypatch.setenv("COLLABLAB_LLM_CACHE_MODE", "replay")
    c = ResponseCache()
    assert c.path == tmp_path / "env.sqlite" and c.mode == "replay"
    monkeypatch.setenv("COLLABLAB_LLM_CACHE_MODE", "bogus")
    with pytest.raises(ValueError):
        ResponseCache()


# ----------------------------------------------------------- through the client


@pytest.fixture
def fake():
    state = {"n": 0}

    def handler(body, srv):
        text = body["messages"][-1]["content"]
        state["n"] += 1
        if "EMPTY" in text:
            return FakeReply(text="")
        if "FAIL" in text:
            return FakeReply(status=400, error_message="bad request")
        return FakeReply(text=f"reply {state['n']}", usage={"prompt_tokens": 11,
                                                            "completion_tokens": 7,
                                                            "total_tokens": 18})

    with FakeOpenAIServer(handler) as srv:
        yield srv


def _spec(srv, alias="cache-test"):
    return EndpointSpec(alias=alias, model="fake", base_url=srv.base_url, api_key_env=None,
                        backoff_base_s=0.01, max_attempts=2, timeout_s=5)


def test_client_hit_returns_stored_usage(fake, tmp_path):
    client = LLMClient(_spec(fake), cache_path=tmp_path / "c.sqlite")
    r1 = client.chat_sync("hi", call_id="t/1", max_tokens=5)
    assert r1.cache == "miss" and r1.error is None and r1.text == "reply 1"
    assert (r1.usage.prompt_tokens, r1.usage.completion_tokens, r1.usage.total_tokens) == (11, 7, 18)
    r2 = client.chat_sync("hi", call_id="t/1", max_tokens=5)
    assert r2.cache == "hit" and r2.attempts == 0
    assert r2.text == r1.text and r2.usage == r1.usage
    assert r2.latency_s < r1.latency_s
    assert fake.n_requests == 1
    # same request, other sample index: a new call
    r3 = client.chat_sync("hi", call_id="t/1", sample_index=1, max_tokens=5)
    assert r3.cache == "miss" and r3.text == "reply 2"
    # the stored row has created_at, model, usage
    rows = ResponseCache(tmp_path / "c.sqlite", "replay").rows()
    assert len(rows) == 2
    assert all(r["created_at"] > 0 and r["model"] == "fake" and r["total_tokens"] == 18
               for r in rows)


def test_errors_raise_and_are_not_cached_but_empty_replies_are(fake, tmp_path):
    client = LLMClient(_spec(fake), cache_path=tmp_path / "c.sqlite")
    with pytest.raises(EndpointError) as ei:
        client.chat_sync("FAIL please", call_id="t/err")
    assert ei.value.kind == "rejected" and "400" in ei.value.result.error and ei.value.result.text is None
    r = client.chat_sync("EMPTY please", call_id="t/empty")
    assert r.error is None and r.text == "" and r.cache == "miss"
    assert len(ResponseCache(tmp_path / "c.sqlite", "rw")) == 1
    n = fake.n_requests
    with pytest.raises(EndpointError):
        client.chat_sync("FAIL please", call_id="t/err")
    assert fake.n_requests == n + 1  # asked again, not served from cache
    again = client.chat_sync("EMPTY please", call_id="t/empty")
    assert again.cache == "hit" and again.text == "" and fake.n_requests == n + 1
    replay = LLMClient(_spec(fake), cache_path=tmp_path / "c.sqlite", cache_mode="replay")
    assert replay.chat_sync("EMPTY please", call_id="t/empty").text == ""


def test_replay_miss_raises_with_call_id(fake, tmp_path):
    p = tmp_path / "c.sqlite"
    LLMClient(_spec(fake), cache_path=p).chat_sync("hi", call_id="rec/1")
    replay = LLMClient(_spec(fake), cache_path=p, cache_mode="replay")
    n = fake.n_requests
    assert replay.chat_sync("hi", call_id="rec/1").cache == "hit"
    with pytest.raises(CacheMiss) as ei:
        replay.chat_sync("hi", call_id="rec/2")
    assert "rec/2" in str(ei.value) and ei.value.call_id == "rec/2"
    with pytest.raises(CacheMiss):
        replay.chat_sync("hi", call_id="rec/1", temperature=0.5)
    assert fake.n_requests == n  # replay never calls the server


def test_cache_off_always_calls(fake, tmp_path):
    client = LLMClient(_spec(fake), cache_path=tmp_path / "c.sqlite", cache_mode="off")
    r1 = client.chat_sync("hi", call_id="x")
    r2 = client.chat_sync("hi", call_id="x")
    assert r1.cache == r2.cache == "off" and r1.text != r2.text
    assert not (tmp_path / "c.sqlite").exists()


# ---------------------------------------------------------- two processes at once


def _writer(path: str, worker: int, n: int, barrier) -> None:
    cache = ResponseCache(path, "rw", busy_timeout_s=60)
    barrier.wait()
    for i in range(n):
        key = f"w{worker}-{i}"
        assert cache.put(key, text=f"text {worker} {i}", endpoint="ep", model="m",
                         call_id=key, sample_index=0, attempt=0, request="{}",
                         prompt_tokens=i, completion_tokens=1, total_tokens=i + 1)
        # interleave reads too
        assert cache.get(key).text == f"text {worker} {i}"


def test_two_processes_write_concurrently(tmp_path):
    path = str(tmp_path / "mp.sqlite")
    n = 300
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_writer, args=(path, w, n, barrier)) for w in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]
    cache = ResponseCache(path, "replay")
    assert len(cache) == 2 * n
    for w in range(2):
        for i in range(n):
            row = cache.get(f"w{w}-{i}")
            assert row is not None and row.text == f"text {w} {i}" and row.total_tokens == i + 1
