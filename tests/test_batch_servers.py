"""A batch grid against a real (loopback) OpenAI-compatible server process that dies mid-grid:
nothing is silently poisoned (issue 13, "Done when").

* a short outage pauses the grid (the client's circuit breaker) and it goes on when the server
  answers again: no failure, and the records equal an undisturbed run's;
* an outage longer than ``llm_outage_wait_s`` fails the episodes in flight (``failures.jsonl``,
  exit 1), none of them is recorded as done, and a rerun once the server is back finishes the grid
  with exactly the records of an undisturbed run (modulo latency and cache status);
* a missing key, an unreachable ``base_url`` or an unserved model stop the grid before any
  episode, naming the parameter (exit 2).

The server is ``python -m collablab.llm.fake_server`` (a separate process, killed with SIGKILL);
the episodes are MECoBench LLM episodes (its real prompts; the fake server echoes them, so every
action is a recorded invalid reply, deterministically).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import free_port
import yaml

from collablab.testing import comparable

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "collablab.cli"]
N_EPISODES = 6


def start_server(port: int, delay_s: float = 0.05) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "collablab.llm.fake_server", "--port", str(port),
                             "--delay-s", str(delay_s)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    assert line.startswith("PORT"), line
    return proc


def kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)


def grid_file(tmp: Path, port: int, cache: Path, **base) -> Path:
    doc = {"base": {"policy": "llm", "model": "fake-model", "base_url": f"http://127.0.0.1:{port}/v1",
                    "provider": "compat", "protocol": "isolated", "n_agents": 2, "budget": 6,
                    "llm_cache": str(cache), "llm_max_attempts": 2, "llm_timeout_s": 10, **base},
           "axes": {"task_id": ["cl000-p", "cl001-p", "cl002-p"], "seed": [0, 1]}}
    path = tmp / f"grid-{cache.stem}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def episodes_cli(grid: Path, out: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("COLLABLAB_LLM_CACHE_MODE", None)
    return subprocess.Popen([*CLI, "episodes", "--study", "mecobench", "--grid", str(grid), "--workers", "2",
                             "--out-root", str(out), "--run-id", "r", "--no-progress", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def records(out: Path) -> tuple[list[dict], list[dict]]:
    run = out / "mecobench" / "r"
    eps = sorted((json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()),
                 key=lambda r: r["grid_index"])
    steps = [json.loads(line) for line in (run / "steps.jsonl").read_text().splitlines()]
    steps.sort(key=lambda r: (r["grid_index"], r["step"], r["agent"]))
    return eps, steps


def normalized(out: Path) -> list[dict]:
    """Records without latency, cache status and the episode key (a hash of the spec, whose base_url
    names this run's port)."""
    eps, steps = records(out)
    drop = lambda r: {k: v for k, v in r.items() if k != "episode_key"}  # noqa: E731
    return [comparable({"episode": drop(e), "steps": [drop(s) for s in steps if s["grid_index"] == e["grid_index"]]})
            for e in eps]


def wait_for_lines(path: Path, n: int, proc: subprocess.Popen, timeout_s: float = 240) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        if path.exists() and len(path.read_text().splitlines()) >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} did not reach {n} lines (rc={proc.poll()})")


@pytest.fixture(scope="module")
def undisturbed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("undisturbed")
    port = free_port()
    srv = start_server(port)
    try:
        proc = episodes_cli(grid_file(tmp, port, tmp / "cache.sqlite"), tmp / "out")
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    finally:
        kill(srv)
    return normalized(tmp / "out")


def test_a_short_outage_pauses_the_grid_and_it_resumes_with_the_undisturbed_records(tmp_path, undisturbed):
    port = free_port()
    srv = start_server(port)
    proc = episodes_cli(grid_file(tmp_path, port, tmp_path / "cache.sqlite"), tmp_path / "out")
    try:
        wait_for_lines(tmp_path / "out" / "mecobench" / "r" / "episodes.jsonl", 1, proc)
        kill(srv)
        time.sleep(3.0)  # calls in flight fail, wait for the server: the breaker probes every 2 s
        srv = start_server(port)
        out, err = proc.communicate(timeout=600)
    finally:
        kill(srv)
    assert proc.returncode == 0, err
    assert not (tmp_path / "out" / "mecobench" / "r" / "failures.jsonl").read_text().strip()
    assert normalized(tmp_path / "out") == undisturbed


def test_a_long_outage_fails_episodes_and_a_rerun_gives_the_undisturbed_records(tmp_path, undisturbed):
    port = free_port()
    srv = start_server(port)
    grid = grid_file(tmp_path, port, tmp_path / "cache.sqlite", llm_outage_wait_s=1)
    run = tmp_path / "out" / "mecobench" / "r"
    proc = episodes_cli(grid, tmp_path / "out")
    wait_for_lines(run / "episodes.jsonl", 1, proc)
    kill(srv)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 1, err  # some failed: run again to retry them
    failures = [json.loads(line) for line in (run / "failures.jsonl").read_text().splitlines()]
    assert failures and {f["error_type"] for f in failures} == {"EndpointError"}
    done = {json.loads(line)["episode_key"] for line in (run / "episodes.jsonl").read_text().splitlines()}
    assert done and len(done) < N_EPISODES and not done & {f["episode_key"] for f in failures}
    assert "EndpointError" not in (run / "steps.jsonl").read_text()  # no transport error is a recorded action

    srv = start_server(port)
    try:
        proc = episodes_cli(grid, tmp_path / "out")
        out, err = proc.communicate(timeout=600)
    finally:
        kill(srv)
    assert proc.returncode == 0, err
    assert f"{N_EPISODES - len(done)} new, {len(done)} resumed" in err
    assert normalized(tmp_path / "out") == undisturbed


@pytest.mark.parametrize("case,message", [
    ("no_key", r"api_key_env: OPENAI_API_KEY is not set"),
    ("unreachable", r"base_url: http://127\.0\.0\.1:\d+/v1 does not answer"),
    ("unserved", r"model: 'other-model' is not served by http://127\.0\.0\.1:\d+/v1"),
])
def test_a_bad_endpoint_stops_the_grid_before_any_episode_naming_the_parameter(tmp_path, case, message):
    import re

    port = free_port()
    srv = start_server(port) if case != "unreachable" else None
    base = {"no_key": {"api_key_env": "OPENAI_API_KEY"}, "unreachable": {}, "unserved": {"model": "other-model"}}[case]
    env_key = os.environ.pop("OPENAI_API_KEY", None)
    try:
        proc = episodes_cli(grid_file(tmp_path, port, tmp_path / "cache.sqlite", **base), tmp_path / "out")
        out, err = proc.communicate(timeout=300)
    finally:
        if srv is not None:
            kill(srv)
        if env_key is not None:
            os.environ["OPENAI_API_KEY"] = env_key
    assert proc.returncode == 2, err
    assert re.search(message, err), err
    assert not (tmp_path / "out" / "mecobench" / "r" / "episodes.jsonl").exists() or \
        not (tmp_path / "out" / "mecobench" / "r" / "episodes.jsonl").read_text()


def test_the_preflight_waits_for_a_server_that_is_still_starting(tmp_path):
    import threading

    from collablab.llm.fake_server import FakeOpenAIServer
    from collablab.runs import run_grid

    port = free_port()
    spec = {"task_id": "cl000-p", "policy": "llm", "model": "fake-model", "base_url": f"http://127.0.0.1:{port}/v1",
            "n_agents": 1, "budget": 2, "llm_cache": str(tmp_path / "c.sqlite")}
    with pytest.raises(ValueError, match=r"^base_url: .* does not answer"):
        run_grid([spec], study="mecobench", out_root=tmp_path, workers=1, progress=False)
    late = FakeOpenAIServer(port=port)
    timer = threading.Timer(1.5, late.start)  # a vllm serve still loading its weights
    timer.start()
    try:
        res = run_grid([spec], study="mecobench", out_root=tmp_path, workers=1, progress=False, preflight_wait_s=30)
    finally:
        timer.join()
        late.stop()
    assert res.ok and res.served["compat:fake-model"]["id"] == "fake-model"


def test_a_notebook_without_its_api_key_stops_before_any_episode(tmp_path):
    """Issue 13: a notebook with backend=llm and no OPENAI_API_KEY used to run 200 invalid steps and
    show SR 0.0; now its grid stops at the preflight, naming the parameter."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "COLLABLAB_LLM_CACHE_MODE")}
    env["COLLABLAB_OUTPUTS"] = str(tmp_path)
    proc = subprocess.run([*CLI, "run", "05", "--params", "smoke", "-p", "backend", "llm", "-p", "model", "gpt-4o-mini",
                           "--out", str(tmp_path / "nb")], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stdout + proc.stderr  # bad input (issue 23: it was 1, "run again")
    assert "api_key_env: OPENAI_API_KEY is not set" in proc.stdout + proc.stderr
    assert not list(tmp_path.rglob("episodes.jsonl")) or not any(p.read_text() for p in tmp_path.rglob("episodes.jsonl"))
