"""MASTraceBench specs: bad input is refused before work starts, units run through the run grid and
read back as trajectories, and the LLM inference settings of the appendix reach the server."""

from __future__ import annotations

import json

import pytest

from collablab.llm.fake_server import FakeOpenAIServer, FakeReply
from collablab.runs import load_run, run_grid
from collablab.studies import mastracebench as S
from collablab.studies.mastracebench import spec as SP
from collablab.studies.mastracebench.tasks import bottleneck_5x5
from collablab.testing import check_records


@pytest.mark.parametrize("spec,match", [
    ({"task": "mapf", "method": "Single-Agent", "instance": 0, "colour": 1}, "unknown key.*colour"),
    ({"task": "maze", "method": "Single-Agent", "instance": 0}, "task: 'maze' is not allowed; allowed: mapf, option_gen"),
    ({"task": "mapf", "method": "Debate", "instance": 0}, "method: 'Debate' is not allowed; allowed: Single-Agent"),
    ({"task": "mapf", "method": "MAPR", "instance": 157}, "instance: 157 is out of range; mapf has instances 0..156"),
    ({"task": "negotiation", "method": "MAPR", "instance": -1}, "instance: must be an integer >= 0"),
    ({"task": "mapf", "method": "MAPR", "instance": 0, "profile": "genius"}, "profile: 'genius' is not allowed"),
    ({"task": "mapf", "method": "MAPR", "instance": 0, "agent_profiles": "strong,clever"}, "agent_profiles: 'clever'"),
    ({"task": "mapf", "method": "MAPR", "instance": 0, "proposers": 0}, "proposers: must be an integer >= 1"),
    ({"task": "mapf", "method": "MAPR", "instance": 0, "backend": "gpt"}, "backend: 'gpt' is not allowed; allowed: heuristic, llm"),
    ({"task": "mapf", "method": "MAPR", "instance": 0, "backend": "llm"}, "model: backend 'llm' needs a model name"),
    ({"task": "mapf", "method": "MAPR", "instance": 0, "backend": "llm", "model": "m", "models": "a,b"},
     "models: 2 comma-separated values for 3 agents"),
    ({"task": "mapf", "method": "MAPR", "instance": 0, "backend": "llm", "model": "m", "thinking": "yes"},
     "thinking: 'yes' is not allowed; allowed: paper, on, off, auto"),
    ({"task": "option_gen", "method": "MAPR", "instance": 0}, "race_path: OptionGen reads RACE items from a copy you give"),
])
def test_bad_specs_are_refused_naming_the_field(spec, match):
    with pytest.raises(ValueError, match=match):
        S.validate(spec)


def test_mapf_instance_0_is_the_papers_bottleneck_and_counts_follow_table1():
    assert SP._static_instances("mapf", 0)[0] == bottleneck_5x5()
    assert len(SP._static_instances("mapf", 0)) == 157 and len(SP._static_instances("evidence_chain", 0)) == 100
    assert len(SP._games("negotiation", 0)) == 200 and len(SP._games("gomoku", 0)) == 50
    assert len(SP._games("tactic_duel", 0)) == 50


def test_a_later_run_draws_afresh_offline_and_run_0_is_unchanged():
    base = {"task": "evidence_chain", "method": "Consistency"}
    runs = {r: [S.run_spec({**base, "instance": i, "run": r}) for i in range(12)] for r in (0, 1)}
    again = [S.run_spec({**base, "instance": i}) for i in range(12)]
    assert again == runs[0]
    props = {r: [json.dumps(x["steps"][0]["proposers"]) for x in runs[r]] for r in runs}
    assert props[0] != props[1]
    assert all(x["steps"][0]["run"] == 1 and x["episode"]["run"] == 1 for x in runs[1])


def test_units_run_through_the_grid_and_read_back_as_trajectories(tmp_path):
    specs = [{"task": t, "method": m, "instance": i} for t in ("mapf", "gomoku") for m in ("Single-Agent", "CLEARS")
             for i in (0, 1)]
    for s in specs:
        if s["task"] == "gomoku":
            s["max_decisions"] = 3
    res = run_grid(specs, study="mastracebench", out_root=tmp_path, workers=1, validate=S.validate)
    assert res.ok, res.failures
    episodes, steps = load_run(res.run_dir)
    assert len(episodes) == 8 and set(episodes["backend"]) == {"heuristic"}
    trajs = S.trajectories_of(steps)
    assert {(t.method, t.task) for t in trajs} == {(m, t) for t in ("mapf", "gomoku") for m in ("Single-Agent", "CLEARS")}
    direct = S.run_spec(specs[0])
    assert trajs[0].to_dict() == {k: v for k, v in direct["steps"][0].items() if k not in ("step", "agent")}
    gomoku = episodes[episodes.task == "gomoku"]
    assert (gomoku["n_units"] <= 3).all() and (gomoku["n_units"] >= 1).all()


def test_records_validate_and_a_sabotaged_first_unit_is_invalid():
    rec = S.run_spec({"task": "tactic_duel", "method": "Int. Debate", "instance": 0, "max_decisions": 3})
    check_records(rec, S.RECORD_SCHEMA)
    bad = S.run_spec({"task": "tactic_duel", "method": "Int. Debate", "instance": 0, "max_decisions": 3},
                     wrap_team=S.sabotage)
    assert S.is_invalid(bad["steps"][0]) and not all(S.is_invalid(s) for s in bad["steps"][1:])
    broken = {"episode": {**rec["episode"], "score": 120.0}, "steps": rec["steps"]}
    with pytest.raises(AssertionError, match="score"):
        check_records(broken, S.RECORD_SCHEMA)


def _server_log():
    bodies: list[dict] = []

    def handler(body: dict, srv: FakeOpenAIServer) -> FakeReply:
        bodies.append(body)
        text = body["messages"][-1]["content"]
        if "accept" in str(text).lower() and "opponent" not in str(text):
            return FakeReply('{"accept": false}')
        return FakeReply('{"plan": {"robot_1": ["S"]}}')
    return bodies, handler


def _llm(url: str, tmp_path, **kw):
    return {"backend": "llm", "model": "m0", "base_url": url, "llm_cache": str(tmp_path / "c.sqlite"),
            "llm_cache_mode": "rw", **kw}


def test_thinking_mode_is_asked_on_mapf_and_gomoku_only_whatever_the_provider(tmp_path):
    """Appendix: thinking on MAPF and Gomoku, off on the other tasks; with ``provider: auto`` and a
    base URL too (issue 23: it used to be sent to vLLM only); ``auto`` sends nothing."""
    bodies, handler = _server_log()
    with FakeOpenAIServer(handler) as srv:
        S.run_spec({"task": "mapf", "method": "Single-Agent", "instance": 0, **_llm(srv.base_url, tmp_path, provider="vllm")})
        S.run_spec({"task": "evidence_chain", "method": "Single-Agent", "instance": 0,
                    **_llm(srv.base_url, tmp_path, provider="vllm")})
        S.run_spec({"task": "mapf", "method": "Single-Agent", "instance": 1, **_llm(srv.base_url, tmp_path)})
        S.run_spec({"task": "evidence_chain", "method": "Single-Agent", "instance": 1,
                    **_llm(srv.base_url, tmp_path, thinking="auto")})
    kw = [(b.get("chat_template_kwargs") or {}).get("enable_thinking") for b in bodies]
    assert kw == [True, False, True, None]
    assert all(b["temperature"] == 1.0 and b["max_tokens"] == 16384 for b in bodies)


def test_runs_are_cached_apart_and_the_acceptance_probe_runs_at_temperature_0(tmp_path):
    bodies, handler = _server_log()
    spec = {"task": "mapf", "method": "Single-Agent", "instance": 2}
    with FakeOpenAIServer(handler) as srv:
        S.run_spec({**spec, **_llm(srv.base_url, tmp_path)})
        S.run_spec({**spec, **_llm(srv.base_url, tmp_path)})  # a cache hit
        n = len(bodies)
        S.run_spec({**spec, "run": 1, **_llm(srv.base_url, tmp_path)})  # new samples
        assert n == 1 and len(bodies) == 2
        bodies.clear()
        S.run_spec({"task": "negotiation", "method": "Single-Agent", "instance": 0, "max_decisions": 1,
                    **_llm(srv.base_url, tmp_path)})
    temps = {b["temperature"] for b in bodies}
    assert temps == {0.0, 1.0}, temps


def test_per_proposer_models_reach_their_own_model(tmp_path):
    bodies, handler = _server_log()
    with FakeOpenAIServer(handler) as srv:
        rec = S.run_spec({"task": "mapf", "method": "Int. Debate", "instance": 0,
                          **_llm(srv.base_url, tmp_path, models="a,b,c", setting="Family-Het.")})
    by_model = {b["model"] for b in bodies}
    assert by_model == {"a", "b", "c"}
    assert rec["episode"]["setting"] == "Family-Het." and rec["episode"]["backend"] == "compat:m0,compat:a,compat:b,compat:c"


def test_a_dead_server_fails_the_unit_and_a_rerun_retries_it(tmp_path):
    from collablab.runs import load_failures

    with FakeOpenAIServer() as probe:  # a free port, then nobody listens on it
        port = probe.port
    spec = {"task": "mapf", "method": "Single-Agent", "instance": 0, "backend": "llm", "model": "m0",
            "base_url": f"http://127.0.0.1:{port}/v1", "llm_cache": str(tmp_path / "c.sqlite"), "llm_max_attempts": 1}
    with pytest.raises(ValueError, match=r"^base_url: http://127\.0\.0\.1:\d+/v1 does not answer"):
        run_grid([spec], study="mastracebench", out_root=tmp_path, run_id="r", workers=1, validate=S.validate)
    with pytest.warns(UserWarning, match="1 of 1 episodes failed"):  # past the preflight: the call fails
        res = run_grid([spec], study="mastracebench", out_root=tmp_path, run_id="r", workers=1, validate=S.validate,
                       preflight=False)
    assert res.n_failed == 1 and res.n_done == 0
    assert load_failures(res.run_dir)["error_type"].iloc[0] == "EndpointError"
    with FakeOpenAIServer(lambda b, s: FakeReply('{"plan": {"robot_1": ["S"]}}'), port=port, models=["m0"]):
        res = run_grid([spec], study="mastracebench", out_root=tmp_path, run_id="r", workers=1, validate=S.validate)
    assert res.ok and res.n_new == 1 and not res.failures


def test_a_separate_judge_model_scores_optiongen_at_temperature_0(tmp_path):
    from pathlib import Path

    race = Path(__file__).parent / "data" / "race_sample" / "race_hf.jsonl"
    bodies: list[dict] = []

    def handler(body: dict, srv: FakeOpenAIServer) -> FakeReply:
        bodies.append(body)
        text = str(body["messages"][-1]["content"])
        if body["model"] == "judge":
            if "rubric" in text.lower() and "correct_score" not in text:
                return FakeReply('{"correct_rubric": "names the answer", "distractor_rubric": "plausible but wrong"}')
            return FakeReply('{"correct_score": 80, "distractor_score": 60}')
        return FakeReply('{"correct": "a", "distractors": ["b", "c", "d"]}')

    with FakeOpenAIServer(handler) as srv:
        rec = S.run_spec({"task": "option_gen", "method": "Single-Agent", "instance": 0, "race_path": str(race),
                          **_llm(srv.base_url, tmp_path, judge_model="judge")})
    judge = [b for b in bodies if b["model"] == "judge"]
    assert judge and all(b["temperature"] == 0.0 for b in judge)
    assert {b["model"] for b in bodies} == {"m0", "judge"}
    step = rec["steps"][0]
    assert step["answer"]["score"] == 70.0 and step["scorer"]["model"] == "judge"
    assert rec["episode"]["scoring_tokens"] > 0 and rec["episode"]["tokens"] > 0
