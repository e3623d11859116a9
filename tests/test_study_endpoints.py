"""Every study names the model endpoints a spec calls (``endpoints(spec)``), which the run grid
checks before its first episode; the shared endpoint keys (replicas, extra_body, outage wait) are
checked by name and reach the EndpointSpec."""

from __future__ import annotations

from pathlib import Path

import pytest

from collablab.studies import dynahmrc, mastracebench, mecobench, partnr

URL = "http://127.0.0.1:9/v1"
LLM = {"backend": "llm", "model": "m", "base_url": URL}
UNITS = {
    "mecobench": (mecobench, {"task_id": "cl000-p", "policy": "llm", "model": "m", "base_url": URL}),
    "partnr": (partnr, {**LLM, "instance": 0}),
    "dynahmrc": (dynahmrc, dict(LLM)),
    "mastracebench": (mastracebench, {**LLM, "task": "mapf", "method": "MAV", "instance": 0}),
}


@pytest.fixture(autouse=True)
def _live_cache(monkeypatch):
    monkeypatch.delenv("COLLABLAB_LLM_CACHE_MODE", raising=False)


@pytest.mark.parametrize("study", sorted(UNITS))
def test_an_llm_spec_names_its_endpoint_and_an_offline_or_replay_one_none(study):
    S, spec = UNITS[study]
    (e,) = S.endpoints(spec)
    assert (e.model, e.base_url, e.api_key_env) == ("m", URL, None)
    assert S.endpoints({**spec, "llm_cache_mode": "replay"}) == []
    offline = {k: v for k, v in spec.items() if k not in ("backend", "policy", "model", "base_url")}
    assert S.endpoints(offline) == []


@pytest.mark.parametrize("study", sorted(UNITS))
def test_the_environment_replay_mode_also_means_no_network(study, monkeypatch):
    S, spec = UNITS[study]
    monkeypatch.setenv("COLLABLAB_LLM_CACHE_MODE", "replay")
    assert S.endpoints(spec) == []


@pytest.mark.parametrize("study", sorted(UNITS))
def test_endpoint_keys_reach_the_endpoint(study):
    S, spec = UNITS[study]
    (e,) = S.endpoints({**spec, "llm_replicas": "http://127.0.0.1:10/v1 http://127.0.0.1:11/v1",
                        "llm_extra_body": {"chat_template_kwargs": {"enable_thinking": False}},
                        "llm_outage_wait_s": 5})
    assert e.replicas == ("http://127.0.0.1:10/v1", "http://127.0.0.1:11/v1")
    assert e.default_params["extra_body"] == {"chat_template_kwargs": {"enable_thinking": False}}
    assert e.outage_wait_s == 5.0


@pytest.mark.parametrize("study", sorted(UNITS))
@pytest.mark.parametrize("bad,message", [
    ({"llm_replicas": "ftp://x"}, r"^llm_replicas: 'ftp://x' must start with http"),
    ({"llm_replicas": [1]}, r"^llm_replicas: must be a list of base URLs"),
    ({"llm_replicas": "http://127.0.0.1:10/v1", "base_url": None}, r"^llm_replicas: need base_url"),
    ({"llm_extra_body": [1]}, r"^llm_extra_body: must be a mapping"),
    ({"llm_outage_wait_s": "x"}, r"^llm_outage_wait_s: must be a number of seconds >= 0"),
])
def test_bad_endpoint_keys_name_the_key(study, bad, message):
    S, spec = UNITS[study]
    with pytest.raises(ValueError, match=message):
        S.validate({**spec, **bad})


def test_a_mixed_mecobench_team_names_one_endpoint_per_model_and_refuses_shared_replicas():
    spec = {"task_id": "cl000-p", "policy": "llm", "model": "a,b", "base_url": URL, "n_agents": 2}
    assert [e.alias for e in mecobench.endpoints(spec)] == ["compat:a", "compat:b"]
    assert [e.alias for e in mecobench.endpoints({**spec, "model": "a"})] == ["compat:a"]  # one per alias
    with pytest.raises(ValueError, match="^llm_replicas: replicas need one endpoint"):
        mecobench.validate({**spec, "llm_replicas": "http://127.0.0.1:10/v1"})


def test_openai_without_base_url_needs_its_key_and_a_judge_is_another_endpoint():
    (e,) = mecobench.endpoints({"task_id": "cl000-p", "policy": "llm", "model": "gpt-4o-mini"})
    assert (e.alias, e.base_url, e.api_key_env) == ("openai:gpt-4o-mini", None, "OPENAI_API_KEY")
    race = Path(__file__).parent / "data" / "race_sample" / "race_hf.jsonl"
    spec = {**UNITS["mastracebench"][1], "task": "option_gen", "judge_model": "j", "race_path": str(race),
            "judge_base_url": "http://127.0.0.1:12/v1", "llm_replicas": "http://127.0.0.1:10/v1"}
    backbone, judge = mastracebench.endpoints(spec)
    assert (backbone.model, judge.model, judge.base_url) == ("m", "j", "http://127.0.0.1:12/v1")
    assert backbone.replicas and not judge.replicas  # the backbone's replicas do not serve the judge
