"""The LLM floor's one reading of a reply (collablab.llm.reply) and the request each server gets
(collablab.llm.wire), unit by unit and through a server (issue 23)."""

from __future__ import annotations

import pytest

from collablab.llm import EndpointSpec, LLMClient, ask
from collablab.llm.fake_server import FakeOpenAIServer, FakeReply
from collablab.llm.preflight import ServedModel
from collablab.llm.reply import read_reply
from collablab.llm.wire import is_reasoning_model, resolve_provider, wire_params


@pytest.mark.parametrize("content,reasoning,answer,thoughts", [
    ("<think>draft A</think>\n\nfinal B", None, "final B", "draft A"),
    ("<THINKING>x</THINKING>B", None, "B", "x"),
    ("opened by the template: A</think>B", None, "B", "opened by the template: A"),
    ("<think>cut inside A", None, "", "cut inside A"),
    ("B", "server thoughts", "B", "server thoughts"),
    ("<think>a</think>B<think>c</think>D", "r", "B\nD", "r\n\na\n\nc"),
    ("", None, "", None),
])
def test_thoughts_are_kept_apart_from_the_answer(content, reasoning, answer, thoughts):
    r = read_reply(content, reasoning, "stop")
    assert (r.answer, r.thoughts) == (answer, thoughts)


def test_a_stop_word_ends_the_answer_never_the_thoughts():
    r = read_reply("<think>I will say Assigned! later</think>Thought: t\nWait[]\nAssigned!\nResult: made up",
                   None, "length", stop=["Assigned!"])
    assert r.answer == "Thought: t\nWait[]" and r.finish_reason == "stop" and "Assigned!" in r.thoughts
    assert read_reply("no stop word here", None, "length", stop="Assigned!").finish_reason == "length"


def test_reasoning_models_are_known_by_their_ids():
    assert all(is_reasoning_model(m) for m in ("gpt-5", "gpt-5-mini", "gpt-5.4", "o3", "o4-mini", "openai/o1"))
    assert not any(is_reasoning_model(m) for m in ("gpt-5-chat-latest", "gpt-4o", "Qwen/Qwen3-8B", "o", "gpt-oss-20b"))


def test_the_provider_is_detected_from_the_model_list():
    assert resolve_provider("auto", None) == "openai"
    assert resolve_provider("auto", "http://h/v1", ServedModel("m", owned_by="vllm")) == "vllm"
    assert resolve_provider("auto", "http://h/v1", ServedModel("m", owned_by="llamacpp")) == "llamacpp"
    assert resolve_provider("auto", "http://h/v1", None) == "compat"
    assert resolve_provider("vllm", None) == "vllm"


P = {"temperature": 0.5, "max_tokens": 100, "stop": ["X"], "seed": 1}


@pytest.mark.parametrize("provider,model,thinking,rules,expected", [
    # open weights may think: thinking asked through the chat template, stop applied by the client
    ("vllm", "Qwen/Qwen3-8B", "on", "auto", {"temperature": 0.5, "max_tokens": 100, "seed": 1,
     "extra_body": {"chat_template_kwargs": {"enable_thinking": True, "thinking": True}}}),
    ("compat", "Qwen/Qwen3-8B", "off", "auto", {**P,
     "extra_body": {"chat_template_kwargs": {"enable_thinking": False, "thinking": False}}}),
    ("llamacpp", "m", "auto", "auto", {"temperature": 0.5, "max_tokens": 100, "seed": 1}),
    # an OpenAI chat model never shows thoughts: stop goes to the server, thinking has no switch
    ("openai", "gpt-4o", "off", "auto", P),
    # OpenAI's reasoning models: the budget renamed, no sampling key, effort for "off"
    ("openai", "gpt-5-mini", "off", "auto", {"max_completion_tokens": 100, "reasoning_effort": "minimal"}),
    ("openai", "o3", "off", "auto", {"max_completion_tokens": 100, "reasoning_effort": "low"}),
    ("compat", "gpt-5", "on", "auto", {"max_completion_tokens": 100}),
    ("vllm", "gpt-5-distill", "auto", "auto", {"temperature": 0.5, "max_tokens": 100, "seed": 1}),
    ("vllm", "my-model", "auto", "reasoning", {"max_completion_tokens": 100}),
    ("openai", "gpt-5", "auto", "standard", P),
])
def test_a_logical_request_becomes_what_each_server_takes(provider, model, thinking, rules, expected):
    assert wire_params({**P, "thinking": thinking}, provider=provider, model=model, rules=rules) == expected


def test_unset_settings_are_not_sent_and_thinking_keys_the_cache(tmp_path):
    bodies = []

    def handler(body, _srv):
        bodies.append(body)
        return FakeReply(text="<think>draft</think>answer")

    with FakeOpenAIServer(handler, owned_by="vllm") as srv:
        c = LLMClient(EndpointSpec("e", "fake-model", srv.base_url, api_key_env=None), cache_path=tmp_path / "c.sqlite")
        r = c.chat_sync("hi", call_id="a")
        r2 = c.chat_sync("hi", call_id="a", thinking="off")
        assert c.provider() == "vllm"
    assert (r.text, r.reasoning, r2.cache) == ("answer", "draft", "miss")  # thinking is part of the key
    assert set(bodies[0]) == {"model", "messages"}
    assert bodies[1]["chat_template_kwargs"] == {"enable_thinking": False, "thinking": False}


def test_a_cut_reply_is_not_parsed_nor_asked_again(tmp_path):
    with FakeOpenAIServer(lambda b, s: FakeReply(text='{"a": 1}', finish_reason="length")) as srv:
        c = LLMClient(EndpointSpec("e", "fake-model", srv.base_url, api_key_env=None), cache_mode="off",
                      cache_path=tmp_path / "c.sqlite")
        res = c.run(ask(c, "x", lambda t: ({"a": 1}, None), call_id="cut", max_reasks=2))
        assert srv.n_requests == 1
    assert res.truncated and res.parsed is None and res.parse_error.startswith("truncated:")
