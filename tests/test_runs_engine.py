"""collablab.runs engines and run-level guards: several episodes per worker process, crash
isolation among concurrent episodes, one LLM bound across processes, token budgets, endpoint
preflight, EndpointError failures, redaction of recorded texts, killed sessions, replay runs.

The episode functions below run in worker processes, imported from this module by name.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from collablab.runs import default_run_id, episode_key, load_run, read_manifest, run_grid
from collablab.runs.budget import Budget
from collablab.runs.manifest import run_status, write_manifest
from collablab.runs.schedule import schedule
from collablab.runs.store import RunLock, repair_jsonl

FAKE = "_fake_episode:run_spec"
HERE = "test_runs_engine"


def _sorted_lines(path: Path) -> list[bytes]:
    return sorted(path.read_bytes().splitlines(keepends=True))


def _same_records(a: Path, b: Path) -> None:
    for name in ("episodes.jsonl", "steps.jsonl"):
        assert _sorted_lines(a / name) == _sorted_lines(b / name), name


# --- episode functions (imported by the workers) -------------------------------------------

def barrier_episode(spec: dict[str, Any]) -> dict[str, Any]:
    """Log (pid, start, end); wait until ``spec["n"]`` episodes have started."""
    log = Path(spec["log"])
    (log / f"{spec['seed']}.start").touch()
    t0 = time.time()
    deadline = time.monotonic() + 20
    while len(list(log.glob("*.start"))) < spec["n"] and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)
    (log / f"{spec['seed']}.span").write_text(f"{os.getpid()} {t0} {time.time()}")
    return {"episode": {"seed": spec["seed"]}, "steps": []}


def token_episode(spec: dict[str, Any]) -> dict[str, Any]:
    """An episode that 'made' one LLM call of 100 tokens (counted in collablab.llm.stats)."""
    from collablab.llm import stats

    stats.record("budget-ep", cache="miss", latency_s=0.01, prompt_tokens=60, completion_tokens=40,
                 http_requests=1)
    return {"episode": {"seed": spec["seed"]}, "steps": [{"t": 0}]}


def endpoint_fail_episode(spec: dict[str, Any]) -> dict[str, Any]:
    from collablab.llm.types import EndpointError, LLMResult, Usage

    if spec.get("kind"):
        result = LLMResult(text=None, usage=Usage(), latency_s=0.0, cache="off", attempts=1,
                           error="401 Unauthorized", model="m", endpoint="ep", call_id="c/1")
        raise EndpointError(result, kind=spec["kind"])
    if spec.get("plain"):
        raise RuntimeError("plain failure")
    return {"episode": {"seed": spec["seed"]}, "steps": []}


def leaky_episode(spec: dict[str, Any]) -> dict[str, Any]:
    secret = os.environ["COLLABLAB_TEST_API_KEY"]
    number = int(os.environ["COLLABLAB_TEST_NUM_TOKEN"])
    if spec.get("fail"):
        raise RuntimeError(f"the server refused key {secret}")
    return {"episode": {"seed": spec["seed"], "note": f"key={secret}", "n": number},
            "steps": [{"msg": f"Authorization: Bearer {secret}", "quote": 'say "hi"'}, {"msg": "clean"}]}


def env_episode(spec: dict[str, Any]) -> dict[str, Any]:
    return {"episode": {"seed": spec["seed"], "limiter": os.environ.get("COLLABLAB_LIMITER"),
                        "late": os.environ.get("COLLABLAB_TEST_LATE")}, "steps": []}


def chat_episode(spec: dict[str, Any]) -> dict[str, Any]:
    from collablab.llm import EndpointSpec, LLMClient

    client = LLMClient(EndpointSpec(alias=spec["alias"], model="fake-model", base_url=spec["url"],
                                    api_key_env=None, max_concurrency=spec["bound"]),
                       cache_mode=spec.get("cache_mode"))  # None: $COLLABLAB_LLM_CACHE_MODE
    texts = [client.chat_sync(f"seed {spec['seed']} turn {t}", call_id=f"s{spec['seed']}/{t}").text
             for t in range(spec["turns"])]
    return {"episode": {"seed": spec["seed"], "texts": texts}, "steps": []}


def endpoints(spec: dict[str, Any]) -> list[Any]:
    """The preflight hook: this module's episodes use an endpoint when the spec names one (and
    none when they replay the LLM cache, as a study's hook does)."""
    from collablab.llm import EndpointSpec, default_cache_mode

    if "url" not in spec or (spec.get("cache_mode") or default_cache_mode()) == "replay":
        return []
    return [EndpointSpec(alias=spec.get("alias", "pre"), model=spec.get("model", "fake-model"),
                         base_url=spec["url"], api_key_env=None)]


def plain_episode(spec: dict[str, Any]) -> dict[str, Any]:
    return {"episode": {"seed": spec["seed"]}, "steps": []}


# --- the scheduler -------------------------------------------------------------------------

class FakeEngine:
    """Runs one submitted item per wait(); the item keyed "kill" kills its worker every time."""

    def __init__(self) -> None:
        self.pending: dict[int, dict[int, Any]] = {}
        self.order: list[tuple[int, int]] = []
        self.submits: list[tuple[str, int]] = []  # (key, items in flight anywhere at submit)
        self.n = 0
        self.closed: bool | None = None

    def start(self) -> int:
        self.n += 1
        self.pending[self.n] = {}
        return self.n

    def submit(self, worker: int, tag: int, item: Any) -> None:
        self.submits.append((item[1], sum(map(len, self.pending.values()))))
        self.pending[worker][tag] = item
        self.order.append((worker, tag))

    def wait(self, timeout: float | None) -> list[Any]:
        worker, tag = self.order.pop(0)
        item = self.pending[worker].pop(tag)
        if item[1] == "kill":
            lost = self.pending.pop(worker)
            self.order = [(w, t) for w, t in self.order if w != worker]
            assert all(k[1] != "kill" for k in lost.values())
            return [("died", worker, -1, None)]
        return [("done", worker, tag, {"ok": True, "key": item[1], "index": item[0]})]

    def retire(self, worker: int) -> None:
        assert worker not in self.pending

    def close(self, abort: bool) -> None:
        self.closed = abort


def test_schedule_retries_the_items_of_a_dead_worker_alone_and_blames_only_the_killer() -> None:
    todo = [(i, f"k{i}", {}) for i in range(8)]
    todo[2] = (2, "kill", {})
    engine = FakeEngine()
    results = list(schedule(todo, engine, workers=2, per_worker=3))
    by_key = {r["key"]: r for r in results}
    assert len(results) == 8 and set(by_key) == {k for _, k, _ in todo}
    assert by_key["kill"]["error_type"] == "WorkerDied"
    assert all(r["ok"] for k, r in by_key.items() if k != "kill")
    kills = [n for k, n in engine.submits if k == "kill"]
    assert len(kills) == 2 and kills[1] == 0  # run twice, the second time alone
    assert max(n for _, n in engine.submits) <= 5  # never more than 2 workers x 3 in flight
    assert engine.closed is False


def test_schedule_asks_the_gate_and_stops_cleanly() -> None:
    todo = [(i, f"k{i}", {}) for i in range(10)]
    seen: list[int] = []
    engine = FakeEngine()
    answers = iter([None, 0.01, None, "stop"])

    def gate() -> Any:
        return next(answers, "stop")

    for res in schedule(todo, engine, workers=1, per_worker=2, gate=gate):
        seen.append(res["index"])
    assert 2 <= len(seen) < 10 and engine.closed is False
    gen = schedule(todo, FakeEngine(), workers=1, per_worker=2)
    next(gen)
    gen.close()  # leaving early stops the workers without waiting


# --- several episodes per worker -----------------------------------------------------------

def test_each_worker_process_runs_episodes_per_worker_episodes_at_once(tmp_path: Path) -> None:
    log = tmp_path / "log"
    log.mkdir()
    specs = [{"seed": s, "log": str(log), "n": 6} for s in range(12)]
    res = run_grid(specs, fn=f"{HERE}:barrier_episode", study="s", out_root=tmp_path / "out", workers=2,
                   episodes_per_worker=3, progress=False)
    assert res.ok
    spans = [p.read_text().split() for p in log.glob("*.span")]
    events = sorted([(float(a), 1, pid) for pid, a, _ in spans] + [(float(b), -1, pid) for pid, _, b in spans])
    now: dict[str, int] = defaultdict(int)
    peak_all, peak_pid = 0, 0
    for _, d, pid in events:
        now[pid] += d
        peak_all = max(peak_all, sum(now.values()))
        peak_pid = max(peak_pid, now[pid])
    assert peak_all == 6 and peak_pid == 3 and len({s[0] for s in spans}) == 2
    assert str(os.getpid()) not in {s[0] for s in spans}


def test_threads_processes_and_in_process_give_the_same_records(tmp_path: Path) -> None:
    flag = tmp_path / "flag"
    specs = [{"seed": s, "n_steps": 5 + s} for s in range(10)]
    specs[0]["wait_for"] = specs[-1]["touch"] = str(flag)  # the first finishes last
    flag.touch()
    ref = run_grid(specs, fn=FAKE, study="s", run_id="ref", out_root=tmp_path, workers=1, progress=False)
    threads = run_grid(specs, fn=FAKE, study="s", run_id="th", out_root=tmp_path, workers=1,
                       episodes_per_worker=4, progress=False)
    flag.unlink()
    procs = run_grid(specs, fn=FAKE, study="s", run_id="pr", out_root=tmp_path, workers=2,
                     episodes_per_worker=3, progress=False)
    for r in (threads, procs):
        assert r.ok and r.n_new == 10
        _same_records(ref.run_dir, r.run_dir)
        e1, s1 = load_run(ref.run_dir)
        e2, s2 = load_run(r.run_dir)
        assert e1.equals(e2) and s1.equals(s2)
    assert (procs.run_dir / "episodes.jsonl").read_bytes() != (ref.run_dir / "episodes.jsonl").read_bytes()
    m = read_manifest(procs.run_dir)
    assert m["sessions"][-1]["episodes_per_worker"] == 3 and m["settings"]["engine"] == "local"


def test_a_dying_episode_among_concurrent_ones_fails_alone(tmp_path: Path) -> None:
    flag = tmp_path / "flag"
    specs = [{"seed": s, "sleep_s": 0.2} for s in range(9)]
    specs[4]["die_unless"] = str(flag)
    with pytest.warns(UserWarning, match="1 of 9 episodes failed"):
        res = run_grid(specs, fn=FAKE, study="s", out_root=tmp_path, workers=2, episodes_per_worker=3,
                       progress=False)
    assert (res.n_done, res.n_failed) == (8, 1)
    assert [(f["episode_key"], f["error_type"]) for f in res.failures] == [(episode_key(specs[4]), "WorkerDied")]
    assert repair_jsonl(res.run_dir / "steps.jsonl") == (sum(20 for _ in range(8)), 0)  # nothing torn
    flag.touch()
    again = run_grid(specs, fn=FAKE, study="s", out_root=tmp_path, workers=2, episodes_per_worker=3,
                     progress=False)
    assert again.ok and again.n_new == 1
    ref = run_grid(specs, fn=FAKE, study="s", run_id="ref", out_root=tmp_path, workers=1, progress=False)
    e1, s1 = load_run(ref.run_dir)
    e2, s2 = load_run(again.run_dir)
    assert e1.equals(e2) and s1.equals(s2)


# --- workers' environment and the shared LLM bound -------------------------------------------

def test_workers_get_the_callers_current_environment_and_a_shared_limiter(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("COLLABLAB_LIMITER", raising=False)
    specs = [{"seed": s} for s in range(3)]
    run_grid(specs, fn=f"{HERE}:plain_episode", study="warm", out_root=tmp_path, workers=2, progress=False)
    monkeypatch.setenv("COLLABLAB_TEST_LATE", "yes")  # after the forkserver started
    res = run_grid(specs, fn=f"{HERE}:env_episode", study="s", out_root=tmp_path, workers=2, progress=False)
    episodes, _ = load_run(res.run_dir)
    assert set(episodes["late"]) == {"yes"}
    assert set(episodes["limiter"]) == {f"file:{(res.run_dir / '.limiter').resolve()}"}
    assert read_manifest(res.run_dir)["sessions"][-1]["limiter"] == episodes["limiter"][0]
    monkeypatch.setenv("COLLABLAB_LIMITER", f"file:{tmp_path / 'mine'}")
    res = run_grid(specs, fn=f"{HERE}:env_episode", study="s2", out_root=tmp_path, workers=2, progress=False)
    assert set(load_run(res.run_dir)[0]["limiter"]) == {f"file:{tmp_path / 'mine'}"}
    monkeypatch.setenv("COLLABLAB_LIMITER", "nfs:/x")
    with pytest.raises(ValueError, match="COLLABLAB_LIMITER"):
        run_grid(specs, fn=f"{HERE}:env_episode", study="s3", out_root=tmp_path, workers=2, progress=False)
    assert not (tmp_path / "s3").exists()


def test_one_llm_bound_holds_across_worker_processes(tmp_path: Path, monkeypatch) -> None:
    from collablab.llm.fake_server import FakeOpenAIServer

    monkeypatch.delenv("COLLABLAB_LIMITER", raising=False)
    bound = 4
    with FakeOpenAIServer(delay_s=0.15) as server:
        specs = [{"seed": s, "url": server.base_url, "alias": f"bound-{os.getpid()}", "bound": bound,
                  "turns": 3, "cache_mode": "off"} for s in range(8)]
        res = run_grid(specs, fn=f"{HERE}:chat_episode", study="s", out_root=tmp_path, workers=2,
                       episodes_per_worker=4, progress=False)  # 8 callers for 4 slots
        assert res.ok, res.failures
        assert server.max_in_flight == bound, f"server saw {server.max_in_flight} calls at once, bound {bound}"
    (alias, summary), = res.endpoints.items()
    assert alias == specs[0]["alias"] and summary["calls"] == 24
    assert set(res.served) == {alias} and res.served[alias]["id"] == "fake-model"
    m = read_manifest(res.run_dir)
    assert m["sessions"][-1]["endpoints"][alias]["calls"] == 24
    assert m["sessions"][-1]["served"][alias]["fingerprint"]


# --- budgets -------------------------------------------------------------------------------

def test_a_total_token_budget_stops_the_grid_cleanly_and_a_rerun_finishes(tmp_path: Path) -> None:
    specs = [{"seed": s} for s in range(6)]
    kw = dict(fn=f"{HERE}:token_episode", study="s", out_root=tmp_path, workers=1, progress=False)
    res = run_grid(specs, budget={"max_total_tokens": 250}, **kw)
    assert (res.status, res.n_done, res.n_failed, res.tokens, res.ok) == ("budget_exhausted", 3, 0, 300, False)
    assert res.endpoints["budget-ep"]["calls"] == 3
    m = read_manifest(res.run_dir)
    assert m["status"] == "budget_exhausted" and m["counts"]["pending"] == 3
    assert m["sessions"][-1]["tokens"] == 300 and m["sessions"][-1]["budget"]["max_total_tokens"] == 250
    assert "stopped by the token budget" in str(res)
    again = run_grid(specs, **kw)
    assert again.ok and (again.n_new, again.n_skipped, again.status) == (3, 3, "complete")


def test_tokens_per_minute_hold_submissions_back_until_the_window_frees() -> None:
    b = Budget({"max_tokens_per_minute": 100})
    assert b.gate(now=0.0) is None
    b.add(80, now=0.0)
    b.add(40, now=10.0)
    wait = b.gate(now=20.0)
    assert isinstance(wait, float) and 0 < wait <= 1.0
    assert b.gate(now=60.5) is None  # the 80 left the window: 40 <= 100
    assert not b.exhausted and b.total == 120
    t = Budget({"max_total_tokens": 100})
    t.add(100)
    assert t.gate() == "stop" and t.exhausted


@pytest.mark.parametrize("kwargs, match", [
    ({"engine": "spark"}, "engine: 'spark' is not allowed; allowed: local, ray"),
    ({"episodes_per_worker": 0}, "episodes_per_worker: must be an integer >= 1"),
    ({"episodes_per_worker": True}, "episodes_per_worker: must be an integer >= 1"),
    ({"ray_address": "auto"}, "ray_address: .* only with engine='ray'"),
    ({"budget": "lots"}, "budget: must be a mapping"),
    ({"budget": {"max_tokens": 5}}, r"budget: unknown key\(s\) \['max_tokens'\]"),
    ({"budget": {"max_total_tokens": "5"}}, "budget.max_total_tokens: must be an integer >= 1"),
    ({"budget": {"max_tokens_per_minute": 0}}, "budget.max_tokens_per_minute: must be an integer >= 1"),
    ({"preflight": "yes"}, "preflight: must be True or False"),
])
def test_bad_engine_arguments_fail_before_any_file(tmp_path: Path, kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        run_grid([{"seed": 0}], fn=FAKE, study="s", out_root=tmp_path / "out", workers=1, progress=False, **kwargs)
    assert not (tmp_path / "out").exists()


# --- failures that are not the model's, and secrets ------------------------------------------

def test_endpoint_errors_are_failures_with_their_kind_and_are_retried(tmp_path: Path) -> None:
    specs = [{"seed": 0}, {"seed": 1, "kind": "auth"}, {"seed": 2, "plain": True}]
    with pytest.warns(UserWarning, match="2 of 3 episodes failed"):
        res = run_grid(specs, fn=f"{HERE}:endpoint_fail_episode", study="s", out_root=tmp_path, workers=1,
                       progress=False)
    fails = {f["grid_index"]: f for f in map(json.loads, (res.run_dir / "failures.jsonl").read_text().splitlines())}
    assert fails[1]["error_type"] == "EndpointError" and fails[1]["kind"] == "auth"
    assert "401 Unauthorized" in fails[1]["error"]
    assert fails[2]["error_type"] == "RuntimeError" and fails[2]["kind"] is None
    assert [f["kind"] for f in res.failures] == ["auth", None]
    assert res.n_done == 1 and read_manifest(res.run_dir)["counts"]["failed"] == 2


@pytest.mark.parametrize("workers", [1, 2])
def test_secrets_of_the_environment_are_redacted_from_every_record(tmp_path: Path, monkeypatch,
                                                                  workers: int) -> None:
    secret, number = "sk-test-0123456789abcdef", "98765432123"
    monkeypatch.setenv("COLLABLAB_TEST_API_KEY", secret)
    monkeypatch.setenv("COLLABLAB_TEST_NUM_TOKEN", number)
    specs = [{"seed": 0}, {"seed": 1}, {"seed": 2, "fail": True}]
    with pytest.warns(UserWarning, match="1 of 3"):
        res = run_grid(specs, fn=f"{HERE}:leaky_episode", study="s", out_root=tmp_path, workers=workers,
                       progress=False)
    for name in ("episodes.jsonl", "steps.jsonl", "failures.jsonl", "manifest.json"):
        text = (res.run_dir / name).read_text()
        assert secret not in text and number not in text, name
    episodes, steps = load_run(res.run_dir)  # still JSON everywhere
    assert list(episodes["note"]) == ["key=***"] * 2 and list(episodes["n"]) == ["***"] * 2
    assert list(steps["msg"]) == ["Authorization: Bearer ***", "clean"] * 2
    assert list(steps["quote"])[0] == 'say "hi"'
    assert "***" in (res.run_dir / "failures.jsonl").read_text()


# --- preflight -----------------------------------------------------------------------------

def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_endpoint_stops_the_grid_before_any_file(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    specs = [{"seed": 0}, {"seed": 1, "url": url}]
    with pytest.raises(ValueError, match="base_url"):
        run_grid(specs, fn=f"{HERE}:plain_episode", study="s", out_root=tmp_path / "out", workers=1, progress=False)
    assert not (tmp_path / "out").exists()
    res = run_grid(specs, fn=f"{HERE}:plain_episode", study="s", out_root=tmp_path / "out", workers=1,
                   progress=False, preflight=False)
    assert res.ok and res.served == {}


def test_preflight_names_an_unserved_model_and_records_the_served_one(tmp_path: Path) -> None:
    from collablab.llm.fake_server import FakeOpenAIServer

    with FakeOpenAIServer(models=("served-a",), root="/weights/a") as server:
        bad = [{"seed": 0, "url": server.base_url, "model": "other"}]
        with pytest.raises(ValueError, match="model") as e:
            run_grid(bad, fn=f"{HERE}:plain_episode", study="s", out_root=tmp_path, workers=1, progress=False)
        assert "served-a" in str(e.value)
        good = [{"seed": s, "url": server.base_url, "model": "served-a", "alias": "pa"} for s in range(2)]
        res = run_grid(good, fn=f"{HERE}:plain_episode", study="s", out_root=tmp_path, workers=1, progress=False)
    assert res.ok and res.served["pa"]["id"] == "served-a" and res.served["pa"]["root"] == "/weights/a"
    assert read_manifest(res.run_dir)["sessions"][-1]["served"] == res.served
    # resuming a finished grid needs no endpoint: the server is gone now
    again = run_grid(good, fn=f"{HERE}:plain_episode", study="s", out_root=tmp_path, workers=1, progress=False)
    assert again.ok and again.n_new == 0 and again.served == {}


# --- killed sessions, status without the lock, replay runs -------------------------------------

def test_a_killed_session_is_marked_and_status_reads_without_the_lock(tmp_path: Path) -> None:
    specs = [{"seed": s} for s in range(3)]
    res = run_grid(specs, fn=FAKE, study="s", out_root=tmp_path, workers=1, progress=False)
    st = run_status(res.run_dir)
    assert (st["status"], st["locked"], st["committed"], st["counts"]["done"]) == ("complete", False, 3, 3)
    m = read_manifest(res.run_dir)  # what a kill -9 mid-run leaves: running, nobody holding the lock
    m["status"] = "running"
    m["sessions"][-1].update(status="running", ended=None)
    write_manifest(res.run_dir, m)
    st = run_status(res.run_dir)
    assert st["status"] == "killed" and st["last_session"]["status"] == "killed"
    with RunLock(res.run_dir):  # a live writer
        assert run_status(res.run_dir)["status"] == "running" and run_status(res.run_dir)["locked"]
    assert read_manifest(res.run_dir)["sessions"][-1]["status"] == "running"  # status never writes
    run_grid(specs, fn=FAKE, study="s", out_root=tmp_path, workers=1, progress=False)
    m = read_manifest(res.run_dir)
    assert [s["status"] for s in m["sessions"]] == ["killed", "complete"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="run_dir: .* not a run folder"):
        run_status(tmp_path / "empty")
    assert not (tmp_path / "empty" / ".lock").exists()


def test_a_replay_without_run_id_runs_into_a_fresh_folder(tmp_path: Path, monkeypatch) -> None:
    specs = [{"seed": s} for s in range(2)]
    monkeypatch.setenv("COLLABLAB_LLM_CACHE_MODE", "rw")
    first = run_grid(specs, fn=FAKE, study="s", out_root=tmp_path, workers=1, progress=False)
    assert first.run_id == default_run_id(specs, FAKE)
    monkeypatch.setenv("COLLABLAB_LLM_CACHE_MODE", "replay")
    replay = run_grid(specs, fn=FAKE, study="s", out_root=tmp_path, workers=1, progress=False)
    assert replay.run_id == first.run_id + "-replay" and replay.n_new == 2
    _same_records(first.run_dir, replay.run_dir)
    named = run_grid(specs, fn=FAKE, study="s", run_id="mine", out_root=tmp_path, workers=1, progress=False)
    assert named.run_id == "mine"
    monkeypatch.setenv("COLLABLAB_LLM_CACHE_MODE", "sometimes")
    with pytest.raises(ValueError, match="COLLABLAB_LLM_CACHE_MODE"):
        run_grid(specs, fn=FAKE, study="s", out_root=tmp_path / "x", workers=1, progress=False)


def test_the_ray_engine_without_ray_names_the_extra(tmp_path: Path, monkeypatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    with pytest.raises(ValueError, match=r"engine: 'ray' needs `pip install collablab\[ray\]`"):
        run_grid([{"seed": 0}], fn=FAKE, study="s", out_root=tmp_path / "out", engine="ray", progress=False)
    assert not (tmp_path / "out").exists()
