"""A real model end to end: SmolLM2-135M (llama.cpp, loopback) plays a 2-agent broadcast
episode through ``run_spec``; then the same spec replays from the cache without the server.

Skips when the local model is not installed, unless ``COLLABLAB_LOCAL_MODEL=1`` (CI), where a
missing model is a failure. SmolLM2-135M is far too small to solve the task; these tests check
the plumbing with real generations: every step parsed or recorded invalid, real token counts
and latencies, cache rows, identical replay, keys never written, a killed server failing the
episode (EndpointError) instead of recording invalid actions. (16 concurrent episodes run against a slow fake server in test_llm_policy.py:
real generation for them would take many minutes on 2 cores.)
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import replay_comparable

from collablab.llm import ResponseCache
from collablab.llm.local_server import LocalServer, local_model_status
from collablab.studies.mecobench import DEFAULTS, FN, run_spec, validate
from collablab.runs import load_run, run_grid

READY, WHY = local_model_status()
if not READY and os.environ.get("COLLABLAB_LOCAL_MODEL") == "1":
    raise RuntimeError(f"COLLABLAB_LOCAL_MODEL=1 but the local model is unavailable: {WHY}")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not READY, reason=f"local model unavailable: {WHY}")]

SECRET = "sk-test-SECRET-XYZ"
BUDGET = 6  # total steps: 3 team steps x 2 agents x (broadcast + act) = 12 calls, ~1-2 min on 2 busy cores


def base_spec(cache: Path, base_url: str, **kw: Any) -> dict[str, Any]:
    # json_object: llama.cpp constrains the reply to JSON, so the tiny model's actions parse;
    # 48 tokens hold an action (cut-off replies are repaired), not a memory update
    return {"task_id": "cl000-p", "n_agents": 2, "protocol": "broadcast", "budget": BUDGET, "seed": 0,
            "policy": "llm", "model": "smollm2-135m-instruct", "base_url": base_url, "provider": "llamacpp",
            "api_key_env": "OPENAI_API_KEY", "llm_cache": str(cache), "llm_cache_mode": "rw",
            "structured_mode": "json_object", "max_tokens": 48, "llm_max_reasks": 0,
            "pipeline": "assisted", **kw}  # rules grounding: two calls per step (no decoder), as checked below


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Live episode, an episode whose server is killed mid-way, then replays with no server."""
    tmp = tmp_path_factory.mktemp("local_llm")
    cache = tmp / "llm_cache.sqlite"
    old_key = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = SECRET  # sent to the server, never to be written anywhere
    out: dict[str, Any] = {"tmp": tmp, "cache": cache}
    # one thread: on 2 shared cores llama.cpp's second thread mostly spins; the RAM prompt cache
    # reuses the fixed instruction part of each phase's prompt (its inputs come last)
    srv = LocalServer(n_threads=1, n_ctx=2048, extra_args=["--cache", "true"], startup_timeout_s=90)
    try:
        spec = srv.start()
        out["spec"] = base_spec(cache, spec.base_url)
        t0 = time.perf_counter()
        out["live"] = run_spec(out["spec"])
        out["live_s"] = time.perf_counter() - t0

        # another seed (nothing cached): kill the server once its first reply is stored
        killed = base_spec(cache, spec.base_url, seed=1, budget=4, llm_max_attempts=2, llm_timeout_s=30,
                           llm_outage_wait_s=3)
        box: dict[str, Any] = {}

        def episode() -> None:
            try:
                box["rec"] = run_spec(killed)
            except Exception as exc:  # noqa: BLE001 - the test looks at what was raised
                box["error"] = exc

        worker = threading.Thread(target=episode, daemon=True)
        rows0 = len(ResponseCache(cache, "rw"))
        worker.start()
        deadline = time.monotonic() + 120
        while len(ResponseCache(cache, "rw")) == rows0 and worker.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        srv.proc.kill()
        t_kill = time.perf_counter()
        worker.join(60)
        out["killed"] = box.get("rec")
        out["killed_error"] = box.get("error")
        out["killed_rows"] = [r["call_id"] for r in ResponseCache(cache, "rw").rows() if "/s1/" in r["call_id"]]
        out["after_kill_s"] = time.perf_counter() - t_kill
        out["worker_alive"] = worker.is_alive()
    finally:
        srv.stop()

    replay_spec = {**out["spec"], "llm_cache_mode": "replay"}
    t0 = time.perf_counter()
    out["replay"] = run_spec(replay_spec)
    out["replay_s"] = time.perf_counter() - t0
    # the run machinery (records + manifest on disk), replaying, with the key still set
    res = run_grid([replay_spec], fn=FN, study="llm_local", out_root=tmp / "outputs", workers=1, progress=False,
                   validate=validate, params={"spec_defaults": DEFAULTS})
    out["run_dir"] = Path(res.run_dir)
    yield out
    if old_key is None:
        os.environ.pop("OPENAI_API_KEY", None)
    else:
        os.environ["OPENAI_API_KEY"] = old_key


def test_live_episode_every_step_parsed_or_recorded_invalid_with_real_costs(runs):
    rec = runs["live"]
    ep, steps = rec["episode"], rec["steps"]
    assert ep["backend"] == "llamacpp:smollm2-135m-instruct" and ep["model"] == "smollm2-135m-instruct"
    assert ep["team_steps"] == BUDGET // 2 and len(steps) == BUDGET
    for s in steps:
        note = json.loads(s["note"])
        assert note["status"] in ("ok", "invalid")
        if note["status"] == "ok":
            assert s["action"] not in ("invalid_reply", "invalid_grounding") and note["executed"].startswith("[")
        else:
            assert s["action"] in ("invalid_reply", "invalid_grounding", "invalid_truncated")
            assert s["status"] == "invalid" and note["error"]
            # a reply cut at max_tokens (48 here) is recorded as such, never parsed (issue 23)
            assert (s["action"] == "invalid_truncated") == (note["calls"][-1]["finish_reason"] == "length")
        assert [c["phase"] for c in note["calls"]] == ["broadcast", "act"]
        assert all(c["cache"] == "miss" and "error" not in c for c in note["calls"])
        assert s["tokens_prompt"] > 0 and s["tokens_completion"] > 0 and s["latency_s"] > 0
        assert s["tokens_prompt"] == sum(c["tokens_prompt"] for c in note["calls"])
    assert ep["tokens"] == sum(s["tokens_prompt"] + s["tokens_completion"] for s in steps)
    n_calls = sum(len(json.loads(s["note"])["calls"]) for s in steps)
    rows = [r for r in ResponseCache(runs["cache"], "rw").rows() if "/s0/" in r["call_id"]]
    assert n_calls == len(rows) == BUDGET * 2
    print(f"\nlive {runs['live_s']:.1f}s, replay {runs['replay_s']:.3f}s; tokens/step "
          f"{ep['tokens'] / len(steps):.0f}; actions {[s['action'] for s in steps]}")


def test_replay_without_a_server_is_identical_and_much_faster(runs):
    assert replay_comparable(runs["replay"]) == replay_comparable(runs["live"])
    assert runs["replay"]["episode"]["llm_cache_mode"] == "replay"
    calls = [c for s in runs["replay"]["steps"] for c in json.loads(s["note"])["calls"]]
    assert {c["cache"] for c in calls} == {"hit"}
    assert runs["replay_s"] * 50 <= runs["live_s"], (runs["replay_s"], runs["live_s"])


def test_a_server_killed_mid_episode_fails_the_episode_instead_of_recording_invalid_actions(runs):
    from collablab.llm import EndpointError

    assert not runs["worker_alive"], "the episode hung after the server died"
    assert runs["killed"] is None  # no record: a rerun runs the episode again
    err = runs["killed_error"]
    assert isinstance(err, EndpointError) and err.transient and err.kind == "transport", repr(err)
    assert "connection" in str(err).lower() or "timeout" in str(err).lower()
    assert runs["killed_rows"]  # it was killed mid-episode, not before: its first replies are cached
    assert runs["after_kill_s"] < 45  # waited llm_outage_wait_s for the server, then gave up


def test_the_key_never_reaches_records_outputs_or_the_cache(runs):
    eps, steps = load_run(runs["run_dir"])
    assert len(eps) == 1 and len(steps) == BUDGET and eps.iloc[0]["backend"] == "llamacpp:smollm2-135m-instruct"
    files = [p for p in runs["run_dir"].rglob("*") if p.is_file()] + [runs["cache"]]
    files += [p for p in runs["cache"].parent.glob("llm_cache.sqlite*") if p.is_file()]
    assert any(p.name == "manifest.json" for p in files)
    for p in files:
        assert SECRET.encode() not in p.read_bytes(), p
    for rec in (runs["live"], runs["replay"], str(runs["killed_error"])):
        assert SECRET not in json.dumps(rec)
    assert "OPENAI_API_KEY" in (runs["run_dir"] / "manifest.json").read_text()  # only the variable's name
