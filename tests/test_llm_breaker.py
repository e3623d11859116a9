"""The circuit breaker: calls wait while their endpoint is down and go on when it answers again
(without using up their retries), fail with EndpointError(transport) after outage_wait_s, and
never wait for failures that are not transient (401, 404). Fake servers on 127.0.0.1 only."""

from __future__ import annotations

import asyncio
import os
import threading
import time

import pytest
from conftest import free_port

from collablab.llm import EndpointError, EndpointSpec, LLMClient, ResponseCache
from collablab.llm.breaker import Breaker, acquire, breaker_for, release, wait_healthy
from collablab.llm.fake_server import FakeOpenAIServer

_n = 0


def alias() -> str:
    global _n
    _n += 1
    return f"brk-{os.getpid()}-{_n}"


def spec(url: str, **kw) -> EndpointSpec:
    base = dict(alias=alias(), model="fake-model", base_url=url, api_key_env=None, backoff_base_s=0.01,
                backoff_max_s=0.05, timeout_s=5, max_attempts=2, probe_interval_s=0.05, outage_wait_s=30.0)
    base.update(kw)
    return EndpointSpec(**base)


# ------------------------------------------------------------------ the breaker alone
class Script:
    """A probe that answers the scripted outcomes in turn (the last one repeats)."""

    def __init__(self, outcomes: list[bool]):
        self.outcomes, self.n = list(outcomes), 0

    def __call__(self) -> bool:
        self.n += 1
        return self.outcomes.pop(0) if len(self.outcomes) > 1 else self.outcomes[0]


def test_a_healthy_breaker_does_not_wait():
    b = Breaker("http://x/v1", Script([True]), 0.01)
    assert b.healthy and asyncio.run(wait_healthy([b], 0.0)) is False and b.n_probes == 0


def test_after_a_failure_one_good_probe_means_no_outage():
    probe = Script([True])
    b = Breaker("http://x/v1", probe, 0.01)
    b.report_failure()
    assert asyncio.run(wait_healthy([b], 5.0)) is False and b.healthy and probe.n == 1


def test_an_outage_is_waited_out_and_reported():
    probe = Script([False, False, False, True])
    b = Breaker("http://x/v1", probe, 0.02)
    b.report_failure()
    assert not b.healthy
    assert asyncio.run(wait_healthy([b], 5.0)) is True
    assert b.healthy and probe.n == 4 and b.n_failed_probes == 3


def test_waiting_longer_than_the_timeout_raises():
    b = Breaker("http://x/v1", Script([False]), 0.02)
    b.report_failure()
    t0 = time.monotonic()
    with pytest.raises(TimeoutError):
        asyncio.run(wait_healthy([b], 0.2))
    assert time.monotonic() - t0 < 5


def test_many_waiters_on_many_loops_share_one_probe_loop():
    probe = Script([False] * 10 + [True])
    b = Breaker("http://x/v1", probe, 0.02)
    b.report_failure()
    out = []

    def waiter():
        out.append(asyncio.run(wait_healthy([b], 10.0)))

    ts = [threading.Thread(target=waiter) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(20)
    assert len(out) == 8 and all(out)
    assert probe.n == 11  # one probe loop for all eight waiters


def test_routing_prefers_healthy_and_least_loaded():
    a = Breaker("http://a/v1", Script([False]), 60.0)
    b = Breaker("http://b/v1", Script([True]), 60.0)
    first = acquire([a, b])
    second = acquire([a, b])
    assert (first, second) == (a, b)  # tie: the first; then the less loaded
    release(first)
    release(second)
    a.report_failure()
    assert acquire([a, b]) is b and acquire([a, b]) is b  # a is in doubt: b even when busier
    release(b)
    release(b)
    assert breaker_for("http://same/v1", Script([True])) is breaker_for("http://same/v1", Script([True]))


# --------------------------------------------------------------- through the client
def test_a_server_restarted_on_its_port_lets_waiting_calls_succeed_without_using_retries(tmp_path):
    """Stopped while calls are made, restarted on the same port: every call waits and then gets
    its reply. The restarted server answers each call's first request with a 500 and
    max_attempts=2: had the outage counted as an attempt, the 500 would have been the last."""
    srv = FakeOpenAIServer(root="/w/a").start()
    port = srv.port
    s = spec(srv.base_url, max_concurrency=4)
    c = LLMClient(s, cache_path=tmp_path / "c.sqlite")
    assert c.chat_sync("warm", call_id="warm").text == "echo: warm"  # learns the fingerprint
    srv.stop()
    box = {}

    def restart():
        time.sleep(0.6)
        box["srv"] = FakeOpenAIServer(root="/w/a", port=port).start()

    t = threading.Thread(target=restart)
    t.start()
    try:
        t0 = time.monotonic()
        res = c.chat_many_sync([dict(messages=f"m{i} [[fake status=500 times=1 tag=t{i}]]", call_id=f"o/{i}")
                                for i in range(8)])
        waited = time.monotonic() - t0
    finally:
        t.join()
    try:
        assert [r.text for r in res] == [f"echo: m{i}" for i in range(8)]
        assert all(r.attempts == 3 for r in res)  # refused, 500, reply
        assert waited >= 0.5 and box["srv"].n_requests == 16
        assert all(b.healthy for b in c.breakers) and c.limiter.in_flight == 0
        assert len(ResponseCache(tmp_path / "c.sqlite", "replay")) == 9
    finally:
        box["srv"].stop()


def test_a_server_that_stays_down_fails_the_call_after_outage_wait_s(tmp_path):
    with FakeOpenAIServer() as srv:
        s = spec(srv.base_url, outage_wait_s=0.4, max_attempts=5)
        c = LLMClient(s, cache_path=tmp_path / "c.sqlite")
        c.chat_sync("warm", call_id="warm")
    t0 = time.monotonic()
    with pytest.raises(EndpointError) as ei:
        c.chat_sync("hello", call_id="down/1")
    elapsed = time.monotonic() - t0
    e = ei.value
    assert e.kind == "transport" and e.transient and "outage_wait_s=0.4" in str(e) and "down/1" in str(e)
    assert e.result.attempts == 1  # it waited instead of spending its five attempts
    assert 0.3 <= elapsed < 10


def test_rate_limits_with_the_server_up_use_the_retries_without_waiting(tmp_path):
    with FakeOpenAIServer() as srv:
        c = LLMClient(spec(srv.base_url, max_attempts=3, outage_wait_s=30), cache_path=tmp_path / "c.sqlite")
        t0 = time.monotonic()
        with pytest.raises(EndpointError) as ei:
            c.chat_sync("x [[fake status=429]]", call_id="rl")
        assert ei.value.kind == "transport" and ei.value.result.attempts == 3 and srv.n_requests == 3
        assert time.monotonic() - t0 < 10  # no outage wait: the probe answered


@pytest.mark.parametrize("status,kind", [(401, "auth"), (403, "auth"), (404, "not_found"), (400, "rejected")])
def test_failures_that_are_not_transient_are_not_retried_and_trip_no_breaker(tmp_path, status, kind):
    with FakeOpenAIServer() as srv:
        c = LLMClient(spec(srv.base_url, max_attempts=4), cache_path=tmp_path / "c.sqlite")
        c.chat_sync("warm", call_id="warm")
        models0 = srv.n_model_requests
        with pytest.raises(EndpointError) as ei:
            c.chat_sync(f"x [[fake status={status}]]", call_id="nt")
        assert ei.value.kind == kind and not ei.value.transient
        assert srv.n_requests == 2 and srv.n_model_requests == models0  # one try, no probe
        assert all(b.healthy and b.n_probes == 0 for b in c.breakers)


def test_a_never_started_server_fails_fast_with_one_attempt(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/v1"
    t0 = time.monotonic()
    with pytest.raises(EndpointError) as ei:
        LLMClient(spec(url, max_attempts=1), cache_mode="off").chat_sync("x", call_id="never")
    assert ei.value.kind == "transport" and "connection" in str(ei.value).lower()
    assert time.monotonic() - t0 < 10  # max_attempts=1: no next attempt to wait for
