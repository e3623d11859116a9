"""PARTNR's LLM planner on a real model, offline: SmolLM2-135M (llama.cpp, loopback) plans both
agents of a short rearrange episode (three planning cycles each, OAS and OANA on) with
GRAMMAR-constrained decoding (§A.1.2): every reply is one Thought line, one Prediction of the
partner's next action over object classes, and one call of the agent's own tools over the entities
of its own world graph. With the server stopped, the same episode replays from the ResponseCache
(mode replay) into identical action logs.

Skips when the local model is not installed, unless ``COLLABLAB_LOCAL_MODEL=1`` (CI), where a
missing model is a failure. SmolLM2-135M is far too small to do the task: greedy, it copies the
prompt's example (``Explore[<room name>]``, the grammar forcing a real room); a few sampled replies
(temperature 1) vary the thought and the rooms, and their calls stay inside the grammar too.

Cost (measured on 2 cores, one llama.cpp thread, RAM prompt cache on): each agent's transcript
grows by one reply and its ``Result``/``Objects`` turn a cycle (PARTNR's planner loop), up to 2.9k
prompt tokens by the third cycle, hence ``n_ctx`` 4096 (LocalServer's default is 2048; a prompt
over the window is a server error, PlannerError, not an invalid action). With other jobs competing
for the cores: 7-30 s a call, the 6-call episode 84 s, the sampled replies 42 s, the replay 0.13 s,
the whole file 133 s (issue 27; before the growing transcript, with 1.3-1.7k-token prompts, about
40 s on idle cores).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest

from collablab.llm import EndpointSpec, LLMClient, ResponseCache
from collablab.llm.local_server import LocalServer, local_model_status
from collablab.studies.partnr.episode import Channels, Decision, Episode, Observation
from collablab.studies.partnr.llm_planner import LLMPlanner, PlannerError, episode_classes
from collablab.studies.partnr.tasks import generate_task, load_task

READY, WHY = local_model_status()
if not READY and os.environ.get("COLLABLAB_LOCAL_MODEL") == "1":
    raise RuntimeError(f"COLLABLAB_LOCAL_MODEL=1 but the local model is unavailable: {WHY}")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not READY, reason=f"local model unavailable: {WHY}")]

MAX_TOKENS = 96
MAX_CYCLES = 3
SAMPLES = 4
CHANNELS = Channels(oas=True, oana=True)
WORDS = {"on", "within", "next_to", "None"}


class Recorder:
    """Passes the planner's decisions on and keeps, per decision, what the agent could name."""

    def __init__(self, planner: LLMPlanner) -> None:
        self.planner, self.label = planner, planner.label
        self.made: list[tuple[Observation, set[str], set[str], Decision, float]] = []

    def decide(self, obs: Observation) -> Decision:
        layout = set(obs.world.room_box) | set(obs.world.furniture) | WORDS
        own, predicted = layout | set(obs.beliefs.objects), layout | set(episode_classes(obs))
        t0 = time.perf_counter()
        d = self.planner.decide(obs)
        self.made.append((obs, own, predicted, d, time.perf_counter() - t0))
        return d


def planners(spec: EndpointSpec, cache: Any, mode: str) -> list[Recorder]:
    return [Recorder(LLMPlanner(LLMClient(spec, ResponseCache(cache, mode)), constrained="grammar",
                                provider="llamacpp", max_tokens=MAX_TOKENS, label="llamacpp:smollm2-135m-instruct"))
            for _ in (0, 1)]


def task():
    return load_task(generate_task(0, "rearrange"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A live episode against the server and sampled replies, then (server stopped) the replay."""
    cache = tmp_path_factory.mktemp("partnr_local") / "llm_cache.sqlite"
    out: dict[str, Any] = {"cache": cache}
    srv = LocalServer(n_threads=1, n_ctx=4096, extra_args=["--cache", "true"], startup_timeout_s=90)
    try:
        t0 = time.perf_counter()
        spec = srv.start()
        out["start_s"] = time.perf_counter() - t0
        out["live_planners"] = planners(spec, cache, "rw")
        t0 = time.perf_counter()
        out["live"] = Episode(task(), out["live_planners"], CHANNELS, max_cycles=MAX_CYCLES).run()
        out["live_s"] = time.perf_counter() - t0
        obs = out["live_planners"][1].made[-1][0]  # the human, after its last cycle
        sampler = LLMClient(spec, ResponseCache(cache, "rw"))
        t0 = time.perf_counter()
        out["samples"] = [(obs, LLMPlanner(sampler, provider="llamacpp", max_tokens=MAX_TOKENS, temperature=1.0,
                                           namespace=f"sample{i}").decide(obs)) for i in range(SAMPLES)]
        out["samples_s"] = time.perf_counter() - t0
    except PlannerError as exc:  # e.g. the server rejected the grammar: show its log
        pytest.fail(f"{exc}\n--- server log tail ---\n{srv.log_tail()}")
    finally:
        srv.stop()
    out["server_running"] = srv.running
    out["replay_planners"] = planners(spec, cache, "replay")
    t0 = time.perf_counter()
    out["replay"] = Episode(task(), out["replay_planners"], CHANNELS, max_cycles=MAX_CYCLES).run()
    out["replay_s"] = time.perf_counter() - t0
    return out


def test_every_grammar_constrained_decision_names_only_the_agents_own_entities(runs):
    made = [m for p in runs["live_planners"] for m in p.made]
    assert len(made) == len(runs["live"].logs) == 2 * MAX_CYCLES
    for obs, own, predicted, d, secs in made:
        assert d.call is not None, (d.raw, d.error)
        assert d.call.name in obs.tools and set(d.call.args) <= own, (obs.agent, d.call)
        assert d.prediction is not None and set(d.prediction.args) <= predicted, d.raw
        assert d.raw.startswith("Thought: ") and d.thought and d.tokens > 0
    rows = ResponseCache(runs["cache"], "rw").rows()
    assert len(rows) == 2 * MAX_CYCLES + SAMPLES
    for row in rows:
        params = json.loads(row["request"])["params"]
        assert params["extra_body"]["grammar"].startswith("root ::= ") and params["max_tokens"] == MAX_TOKENS
        assert 1 <= row["completion_tokens"] <= MAX_TOKENS
    per_call = [m[4] for m in made]
    print(f"\nserver start {runs['start_s']:.1f}s; live episode {runs['live_s']:.1f}s for {len(made)} calls "
          f"({min(per_call):.1f}-{max(per_call):.1f} s/call), prompt tokens up to "
          f"{max(r['prompt_tokens'] for r in rows)}; {SAMPLES} sampled replies {runs['samples_s']:.1f}s; "
          f"replay {runs['replay_s']:.3f}s")
    for log in runs["live"].logs:
        print(f"  agent {log.agent} {log.call:28s} predicted {log.prediction} -> {log.feedback}")


def test_sampled_replies_stay_inside_the_grammar(runs):
    """At temperature 1 the model wanders; the grammar keeps every call to the agent's graph (a
    reply cut off at max_tokens before its call would be a recorded invalid action)."""
    for obs, d in runs["samples"]:
        own = set(obs.world.room_box) | set(obs.world.furniture) | set(obs.beliefs.objects) | WORDS
        print(f"  sampled: {d.raw!r}")
        if d.call is None:
            assert "cut off" in (d.error or ""), d
            continue
        assert d.call.name in obs.tools and set(d.call.args) <= own, d.call
        assert d.prediction is None or set(d.prediction.args) <= (own - set(obs.beliefs.objects)) | set(
            episode_classes(obs)), d.prediction
    assert sum(d.call is not None for _, d in runs["samples"]) >= SAMPLES - 1


def test_the_episode_replays_from_the_cache_without_the_server(runs):
    assert not runs["server_running"]
    live, replay = runs["live"], runs["replay"]
    assert [log.to_dict() for log in replay.logs] == [log.to_dict() for log in live.logs]
    assert (replay.steps, replay.cycles, replay.end_reason) == (live.steps, live.cycles, live.end_reason)
    assert [m[3] for p in runs["replay_planners"] for m in p.made] == [m[3] for p in runs["live_planners"]
                                                                       for m in p.made]
    assert runs["replay_s"] * 20 <= runs["live_s"]
