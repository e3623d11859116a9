"""collablab.runs on Ray (``engine="ray"``), on a local Ray instance: the same records as local
processes (offline and LLM-cache replay), a task that kills its worker retried once then
WorkerDied, the driver the only writer, and one LLM bound across Ray workers (RayLimiter)."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow  # a local Ray instance takes seconds to start

from collablab.llm.limiter import RAY_ACTOR_NAME, RayLimiter, ray_limiter_actor  # noqa: E402
from collablab.runs import episode_key, load_run, read_manifest, run_grid  # noqa: E402
from collablab.runs.store import repair_jsonl  # noqa: E402

FAKE = "_fake_episode:run_spec"


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    if started:
        ray.shutdown()


def _sorted_lines(path: Path) -> list[bytes]:
    return sorted(path.read_bytes().splitlines(keepends=True))


def _same_records(a: Path, b: Path) -> None:
    for name in ("episodes.jsonl", "steps.jsonl"):
        assert _sorted_lines(a / name) == _sorted_lines(b / name), name
    ea, sa = load_run(a)
    eb, sb = load_run(b)
    assert ea.equals(eb) and sa.equals(sb)


def test_ray_gives_the_same_records_as_local_processes(tmp_path: Path) -> None:
    flag = tmp_path / "flag"
    specs = [{"seed": s, "n_steps": 6 + s} for s in range(8)]
    specs[0]["wait_for"] = specs[-1]["touch"] = str(flag)  # the first finishes last
    local = run_grid(specs, fn=FAKE, study="s", run_id="local", out_root=tmp_path, workers=2, progress=False)
    flag.unlink()
    on_ray = run_grid(specs, fn=FAKE, study="s", run_id="ray", out_root=tmp_path, workers=2,
                      episodes_per_worker=2, engine="ray", progress=False)
    assert on_ray.ok and on_ray.n_new == 8
    _same_records(local.run_dir, on_ray.run_dir)
    session = read_manifest(on_ray.run_dir)["sessions"][-1]
    assert (session["engine"], session["start_method"]) == ("ray", "ray")
    assert session["limiter"] == f"ray:collablab-{on_ray.run_id}"
    pids = {json.loads(x)["pid"] for x in (on_ray.run_dir / "timings.jsonl").read_text().splitlines()}
    assert os.getpid() not in pids  # episodes ran in Ray workers; the driver wrote every file
    assert repair_jsonl(on_ray.run_dir / "steps.jsonl") == (sum(6 + s for s in range(8)), 0)
    with pytest.raises(ValueError):  # the run's limiter actor went with the run
        ray.get_actor(RAY_ACTOR_NAME, namespace=f"collablab-{on_ray.run_id}")


def test_a_study_gives_the_same_records_on_ray_and_locally(tmp_path: Path) -> None:
    specs = [{"task": "mapf", "method": "Single-Agent", "instance": 0},
             {"task": "mapf", "method": "MAV", "instance": 1},
             {"task": "gomoku", "method": "Single-Agent", "instance": 0}]
    local = run_grid(specs, study="mastracebench", run_id="local", out_root=tmp_path, workers=2, progress=False)
    on_ray = run_grid(specs, study="mastracebench", run_id="ray", out_root=tmp_path, workers=2, engine="ray",
                      progress=False)
    assert local.ok and on_ray.ok
    _same_records(local.run_dir, on_ray.run_dir)


def test_a_task_that_kills_its_ray_worker_is_retried_once_then_worker_died(tmp_path: Path) -> None:
    flag = tmp_path / "flag"
    specs = [{"seed": s, "sleep_s": 0.1} for s in range(6)]
    specs[2]["die_unless"] = str(flag)
    with pytest.warns(UserWarning, match="1 of 6 episodes failed"):
        res = run_grid(specs, fn=FAKE, study="s", out_root=tmp_path, workers=2, episodes_per_worker=2,
                       engine="ray", progress=False)
    assert (res.n_done, res.n_failed) == (5, 1)
    assert [(f["episode_key"], f["error_type"]) for f in res.failures] == [(episode_key(specs[2]), "WorkerDied")]
    flag.touch()
    again = run_grid(specs, fn=FAKE, study="s", out_root=tmp_path, workers=2, engine="ray", progress=False)
    assert again.ok and again.n_new == 1


def test_one_llm_bound_holds_across_ray_workers_and_replay_matches(tmp_path: Path, monkeypatch) -> None:
    from collablab.llm.fake_server import FakeOpenAIServer

    monkeypatch.delenv("COLLABLAB_LIMITER", raising=False)
    monkeypatch.setenv("COLLABLAB_LLM_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.setenv("COLLABLAB_LLM_CACHE_MODE", "rw")
    bound = 2
    fn = "test_runs_engine:chat_episode"
    with FakeOpenAIServer(delay_s=0.2) as server:
        specs = [{"seed": s, "url": server.base_url, "alias": "ray-bound", "bound": bound, "turns": 2}
                 for s in range(6)]
        live = run_grid(specs, fn=fn, study="s", run_id="live", out_root=tmp_path, workers=2,
                        episodes_per_worker=3, engine="ray", progress=False)  # 6 callers, 2 slots
        assert live.ok, live.failures
        assert server.max_in_flight == bound, f"server saw {server.max_in_flight} at once, bound {bound}"
        n_requests = server.n_requests
    assert live.endpoints["ray-bound"]["calls"] == 12 and n_requests == 12
    monkeypatch.setenv("COLLABLAB_LLM_CACHE_MODE", "replay")  # the server is gone
    replay_ray = run_grid(specs, fn=fn, study="s", out_root=tmp_path, workers=2, engine="ray", progress=False)
    replay_local = run_grid(specs, fn=fn, study="s", run_id="replay-local", out_root=tmp_path, workers=2,
                            progress=False)
    assert replay_ray.run_id.endswith("-replay") and replay_ray.ok and replay_local.ok
    _same_records(live.run_dir, replay_ray.run_dir)
    _same_records(live.run_dir, replay_local.run_dir)


def test_a_dead_holders_ray_lease_expires() -> None:
    ns = f"lease-test-{os.getpid()}"
    actor = ray_limiter_actor(ns, lease_s=1.0)

    @ray.remote(max_retries=0)
    def hold_and_die(namespace: str) -> None:
        import asyncio as aio
        import os as _os

        from collablab.llm.limiter import RayLimiter as Limiter

        lim = Limiter("lz", 1, namespace, lease_s=1.0)
        aio.run(lim.acquire())
        _os._exit(1)

    with pytest.raises(ray.exceptions.RayError):
        ray.get(hold_and_die.remote(ns))
    mine = RayLimiter("lz", 1, ns, lease_s=1.0)
    assert mine.stats()["held"] == 1
    t0 = time.monotonic()
    asyncio.run(asyncio.wait_for(mine.acquire(), 15))
    assert time.monotonic() - t0 < 15 and mine.held == 1

    async def second() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(mine.acquire(), 0.5)

    asyncio.run(second())  # bound 1: the cancelled wait leaves no lease behind
    mine.release()
    time.sleep(0.2)
    assert mine.stats()["held"] == 0 and mine.stats()["waiting"] == 0 and mine.stats()["peak"] == 1
    ray.kill(actor)
