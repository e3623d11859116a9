"""MASTraceBench methods against an OpenAI-compatible server (the scripted fake one), with replay.

A reply the model gave is the method's to grade (a bad or empty one is an invalid proposal); a
call without a reply raises ``EndpointError`` (``BackendError`` is that class) so the unit fails
and a rerun retries it.
"""

from __future__ import annotations

import json

import pytest

from collablab.llm import EndpointError, EndpointSpec, LLMClient, LLMResult, ResponseCache, Usage
from collablab.llm.fake_server import FakeOpenAIServer, FakeReply
from collablab.studies.mastracebench import methods as M
from collablab.studies.mastracebench.llm_backend import BackendError, LLMBackend
from collablab.studies.mastracebench.tasks import EvidenceChainTask, generate_evidence
from collablab.studies.mastracebench.trajectory import validate_trajectory

INSTANCE = generate_evidence(1, 3)[0]
GOLD = json.dumps({"chain": list(INSTANCE.chain)})


def handler(body: dict, server: FakeOpenAIServer) -> FakeReply:
    """Every other proposer request gets the gold chain, the rest a one-fact chain; usage grows
    with the prompt."""
    text = body["messages"][-1]["content"]
    text = text if isinstance(text, str) else json.dumps(text)
    wrong = json.dumps({"chain": [INSTANCE.chain[0]]})
    reply = GOLD if "Your role: proposer" in text and server.n_requests % 2 == 1 else wrong
    return FakeReply(reply, usage={"prompt_tokens": len(text.split()), "completion_tokens": 7,
                                   "total_tokens": len(text.split()) + 7})


def backend(url: str, tmp_path, mode: str) -> LLMBackend:
    spec = EndpointSpec(alias="fake", model="fake-model", base_url=url, api_key_env=None)
    return LLMBackend(LLMClient(spec, ResponseCache(tmp_path / "cache.sqlite", mode)))


@pytest.mark.parametrize("method", ["Single-Agent", "Int. Debate", "CLEARS"])
def test_methods_record_server_usage_and_replay_identically(method, tmp_path):
    with FakeOpenAIServer(handler) as srv:
        live = M.run(method, EvidenceChainTask(), INSTANCE, "ev-0", backend(srv.base_url, tmp_path, "rw"))
        n = srv.n_requests
    validate_trajectory(live.to_dict())
    assert n == len(live.calls) > 0
    assert all(c.output_tokens == 7 and c.input_tokens > 0 for c in live.calls)
    # the server is gone: replay answers from the cache by logical call id
    again = M.run(method, EvidenceChainTask(), INSTANCE, "ev-0", backend("http://127.0.0.1:9/v1", tmp_path, "replay"))
    assert again.to_dict() == live.to_dict()


def test_a_bad_reply_is_an_invalid_proposal_but_a_dead_server_is_an_error(tmp_path):
    with FakeOpenAIServer(lambda b, s: FakeReply("I cannot decide.")) as srv:
        t = M.run("Single-Agent", EvidenceChainTask(), INSTANCE, "ev-0", backend(srv.base_url, tmp_path, "rw"))
    assert not t.answer.valid and t.answer.score == 0
    with FakeOpenAIServer(lambda b, s: FakeReply("")) as srv:
        empty = M.run("Single-Agent", EvidenceChainTask(), INSTANCE, "ev-1", backend(srv.base_url, tmp_path, "rw"))
    assert not empty.answer.valid and empty.answer.score == 0 and empty.calls and empty.calls[0].output_tokens == 0
    assert BackendError is EndpointError
    with FakeOpenAIServer(lambda b, s: FakeReply(status=500, error_message="boom")) as srv:
        with pytest.raises(EndpointError, match="ev-0") as ei:
            M.run("Single-Agent", EvidenceChainTask(), INSTANCE, "ev-0", backend(srv.base_url, tmp_path, "off"))
    assert ei.value.kind == "transport" and "HTTP 500" in str(ei.value)


def test_a_failed_result_of_a_client_that_does_not_raise_is_raised(tmp_path):
    class Returning:
        endpoint = EndpointSpec(alias="ret", model="m", api_key_env=None)

        def chat_sync(self, prompt, **kw):
            return LLMResult(text=None, usage=Usage(), latency_s=0.0, cache="off", attempts=1,
                             error="HTTP 429: slow down", model="m", endpoint="ret", call_id=kw["call_id"])

    with pytest.raises(EndpointError, match="HTTP 429"):
        M.run("Single-Agent", EvidenceChainTask(), INSTANCE, "ev-0", LLMBackend(Returning()))


def test_a_request_needs_its_logical_call_id(tmp_path):
    from collablab.studies.mastracebench.roles import Request

    be = backend("http://127.0.0.1:9/v1", tmp_path, "off")
    with pytest.raises(ValueError, match="call_id"):
        be.answer(Request(role="proposer", task="evidence_chain", instance=INSTANCE, agent=0, round=0))


def test_max_tokens_and_response_format_reach_the_server_and_the_cache_key(tmp_path):
    bodies: list[dict] = []

    def record(body: dict, server: FakeOpenAIServer) -> FakeReply:
        bodies.append(body)
        return FakeReply(GOLD, usage={"prompt_tokens": 9, "completion_tokens": 5, "total_tokens": 14})

    with FakeOpenAIServer(record) as srv:
        spec = EndpointSpec(alias="fake", model="fake-model", base_url=srv.base_url, api_key_env=None)
        plain = LLMBackend(LLMClient(spec, ResponseCache(tmp_path / "c.sqlite", "rw")), max_tokens=32)
        json_mode = LLMBackend(LLMClient(spec, ResponseCache(tmp_path / "c.sqlite", "rw")), max_tokens=32,
                               response_format={"type": "json_object"})
        a = M.run("Single-Agent", EvidenceChainTask(), INSTANCE, "ev-0", plain)
        b = M.run("Single-Agent", EvidenceChainTask(), INSTANCE, "ev-0", json_mode)  # another key: not a hit
    assert len(bodies) == 2 and a.answer.valid and b.answer.valid
    assert "response_format" not in bodies[0] and bodies[1]["response_format"] == {"type": "json_object"}
    assert bodies[0]["max_tokens"] == bodies[1]["max_tokens"] == 32
