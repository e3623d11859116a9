"""DynaHMRC's framework on a real model, offline: SmolLM2-135M (llama.cpp, loopback) is every
robot's :class:`~collablab.studies.dynahmrc.llm_brain.LLMBrain` in a short ``run_spec`` episode of
the 2-robot pack task (Ma-MoMa, easy) that goes through every stage: self-description (SD),
allocation and bidding (TALB), one election round (LE, plus the referee when the votes tie), two
execution steps (HMRC, plus a move's second call), and, with ``reflect_every`` 1, a group
discussion (GD) and the leader's plan update (LP) after step 1. With the server stopped, the same
spec replays from the ResponseCache (mode ``replay``) into identical episode and step records.

Skips when the local model is not installed, unless ``COLLABLAB_LOCAL_MODEL=1`` (CI), where a
missing model is a failure. SmolLM2-135M is far too small to do the task; these tests check the
plumbing with real generations: every stage was called and counted in the episode record, every
call carries the server's token counts and has one cache row, every robot action is recorded
(a reply that is not an action is a recorded invalid action, ``name`` ``invalid``).

Cost (measured on 2 cores, one llama.cpp thread, RAM prompt cache on): the episode is 14 calls
(2 SD, 2 TALB, 2 votes + the referee, 4 HMRC, 2 GD, 1 LP), greedy replies of at most 96 tokens
(half of them cut off). The prompts are long: HMRC 1.1-2.8k tokens (the MoMa's, with every
navigable place and its stand poses, are the largest), GD 0.9-2.2k, the others 0.4-0.6k, hence
``n_ctx`` 4096 (LocalServer's default 2048 is too small; a prompt over the window is a server
error, BrainError, not an invalid action). About 12k prompt tokens are evaluated per episode
(the rest is prefix reuse) and 1.1k generated, so prompt evaluation dominates: at llama.cpp's
250-400 prompt tokens/s on a quiet machine that is about one minute. Measured here only with the
full suite and other jobs competing for the cores (prompt evaluation at 25-70 tokens/s): the live
episode 310-402 s (22-29 s a call), the replay about 0.01 s, the whole file 5.2-6.7 min.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from collablab.llm import EndpointError, ResponseCache
from collablab.llm.local_server import LocalServer, local_model_status
from collablab.studies.dynahmrc.brain import STAGES
from collablab.studies.dynahmrc.llm_brain import BrainError
from collablab.studies.dynahmrc.metrics import STEP_NAMES
from collablab.studies.dynahmrc.spec import run_spec, validate

READY, WHY = local_model_status()
if not READY and os.environ.get("COLLABLAB_LOCAL_MODEL") == "1":
    raise RuntimeError(f"COLLABLAB_LOCAL_MODEL=1 but the local model is unavailable: {WHY}")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not READY, reason=f"local model unavailable: {WHY}")]

MODEL = "smollm2-135m-instruct"
LABEL = f"llamacpp:{MODEL}"
MAX_TOKENS = 96
MAX_STEPS = 2
N_CTX = 4096


def spec_of(cache: Path, base_url: str, mode: str) -> dict[str, Any]:
    # greedy (temperature 0) so a rerun asks the same; reflect_every 1: GD and LP after step 1
    # (reflection runs when t % reflect_every == 0 and t < max_steps); k_sel 1: one voting round
    return {"method": "dynahmrc", "team": "Ma-MoMa", "kind": "pack", "level": "easy", "instance": 0,
            "backend": "llm", "model": MODEL, "base_url": base_url, "provider": "llamacpp",
            "llm_cache": str(cache), "llm_cache_mode": mode, "max_tokens": MAX_TOKENS, "temperature": 0.0,
            "llm_max_attempts": 2, "llm_timeout_s": 120.0,
            "max_steps": MAX_STEPS, "reflect_every": 1, "k_sel": 1}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The live episode against the server, then (server stopped) its replay from the cache."""
    cache = tmp_path_factory.mktemp("dynahmrc_local") / "llm_cache.sqlite"
    out: dict[str, Any] = {"cache": cache}
    # one thread: on 2 shared cores llama.cpp's second thread mostly spins; the RAM prompt cache
    # reuses the long fixed system prompt of a robot's consecutive calls of one stage
    srv = LocalServer(n_threads=1, n_ctx=N_CTX, extra_args=["--cache", "true"], startup_timeout_s=90)
    try:
        t0 = time.perf_counter()
        endpoint = srv.start()
        out["start_s"] = time.perf_counter() - t0
        out["spec"] = spec_of(cache, endpoint.base_url, "rw")
        validate(out["spec"])
        t0 = time.perf_counter()
        out["live"] = run_spec(out["spec"])
        out["live_s"] = time.perf_counter() - t0
    except (BrainError, EndpointError) as exc:  # e.g. a prompt over the window: show the server's log
        pytest.fail(f"{exc}\n--- server log tail ---\n{srv.log_tail()}")
    finally:
        srv.stop()
    out["server_running"] = srv.running
    out["replay_spec"] = {**out["spec"], "llm_cache_mode": "replay"}
    t0 = time.perf_counter()
    out["replay"] = run_spec(out["replay_spec"])
    out["replay_s"] = time.perf_counter() - t0
    return out


def test_the_episode_goes_through_every_stage(runs):
    ep = runs["live"]["episode"]
    assert (ep["backend"], ep["model"], ep["method"], ep["team"]) == (LABEL, MODEL, "dynahmrc", "Ma-MoMa")
    assert ep["max_steps"] == MAX_STEPS and ep["election_rounds"] == 1 and ep["leader"] in ("Bob", "Alice")
    assert not ep["success"] and ep["ts"] == MAX_STEPS
    calls = {st: ep[f"calls_{st}"] for st in STAGES}
    assert all(n >= 1 for n in calls.values()), calls
    # two robots: one SD and TALB each, one vote each (+ the referee on a tie), one HMRC each per
    # step (+ the second call of a bare move), one GD each and the leader's LP after step 1
    assert (calls["SD"], calls["TALB"], calls["GD"], calls["LP"]) == (2, 2, 2, 1), calls
    assert calls["LE"] == 2 + ep["referee"], (calls, ep["referee"])
    assert 2 * MAX_STEPS <= calls["HMRC"] <= 2 * 2 * MAX_STEPS, calls
    assert ep["calls_total"] == sum(calls.values())
    assert all(ep[f"tokens_{st}"] > calls[st] for st in STAGES)  # every call has prompt and reply tokens


def test_every_robot_action_is_recorded(runs):
    steps = runs["live"]["steps"]
    assert [(s["t"], s["robot"]) for s in steps] == [(t, r) for t in (1, 2) for r in ("Bob", "Alice")]
    assert [s["step"] for s in steps] == [0, 0, 1, 1]
    for s in steps:
        assert s["name"] in STEP_NAMES and s["type"] in ("Ma", "MoMa") and isinstance(s["ok"], bool), s
        assert s["feedback"], s
        if s["name"] == "invalid":
            assert not s["ok"], s
    assert runs["live"]["episode"]["invalid_actions"] == sum(s["name"] == "invalid" for s in steps)
    print(f"\nleader {runs['live']['episode']['leader']} (referee {runs['live']['episode']['referee']}); actions:")
    for s in steps:
        print(f"  t{s['t']} {s['robot']:5s} {s['name']:11s} {s['action'][:60]!r} -> {s['kind']}")


def test_every_call_has_the_servers_token_counts_and_one_cache_row(runs):
    ep = runs["live"]["episode"]
    rows = ResponseCache(runs["cache"], "rw").rows()
    assert len(rows) == ep["calls_total"] == len({r["call_id"] for r in rows})
    assert sum(r["prompt_tokens"] + r["completion_tokens"] for r in rows) == ep["tokens_total"]
    for r in rows:
        params = json.loads(r["request"])["params"]
        assert params["max_tokens"] == MAX_TOKENS and params["temperature"] == 0.0, params
        assert 1 <= r["completion_tokens"] <= MAX_TOKENS and r["prompt_tokens"] + MAX_TOKENS <= N_CTX, r
        assert r["endpoint"] == LABEL, r["endpoint"]
    ids = {r["call_id"] for r in rows}
    unit = ep["unit"]
    for robot in ("Bob", "Alice"):
        assert {f"{unit}/{robot}/SD/s0", f"{unit}/{robot}/TALB/s0", f"{unit}/{robot}/LE/s0/r0",
                f"{unit}/{robot}/HMRC/s1", f"{unit}/{robot}/HMRC/s2", f"{unit}/{robot}/GD/s1"} <= ids, sorted(ids)
    assert f"{unit}/{ep['leader']}/LP/s1" in ids, sorted(ids)
    by_stage: dict[str, list[int]] = {}
    for r in rows:
        assert r["call_id"].startswith(unit + "/"), r["call_id"]
        robot, stage, *_ = r["call_id"][len(unit) + 1:].split("/")
        by_stage.setdefault(stage, []).append(r["prompt_tokens"])
    print(f"\nserver start {runs['start_s']:.1f}s; live episode {runs['live_s']:.1f}s for {len(rows)} calls "
          f"({runs['live_s'] / len(rows):.1f} s/call); replay {runs['replay_s']:.3f}s; prompt tokens per call: "
          + ", ".join(f"{st} {min(v)}-{max(v)}" for st, v in sorted(by_stage.items())))
    print(f"  cut at {MAX_TOKENS}: {sum(r['finish_reason'] == 'length' for r in rows)} of {len(rows)}")


def test_the_episode_replays_from_the_cache_without_the_server(runs):
    assert not runs["server_running"]
    live, replay = runs["live"], runs["replay"]
    assert replay["episode"] == live["episode"]
    assert replay["steps"] == live["steps"]
    assert runs["replay_s"] * 20 <= runs["live_s"], (runs["replay_s"], runs["live_s"])
