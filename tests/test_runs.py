"""collablab.runs: grids, durable parallel runs, kill-and-resume, failures, manifest, memory."""

from __future__ import annotations

import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest
from conftest import descendants
import yaml

import _fake_episode
from collablab.runs import (RunLockedError, default_run_id, episode_key, expand_grid,
                            load_failures, load_run, read_manifest, run_grid)
from collablab.runs.manifest import run_status
from collablab.runs.store import RunLock

FN = "_fake_episode:run_spec"
TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(ROOT / "lib"), env.get("PYTHONPATH", "")])
    return env


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True) if path.exists() else []


def _keys(path: Path) -> list[str]:
    return [json.loads(line)["episode_key"] for line in _lines(path)]


def _assert_same_run(a: Path, b: Path) -> None:
    ea, sa = load_run(a)
    eb, sb = load_run(b)
    pd.testing.assert_frame_equal(ea, eb)
    pd.testing.assert_frame_equal(sa, sb)


# --- grid expansion and keys -----------------------------------------------------------------

def test_expand_grid_is_nested_loops_in_listed_order() -> None:
    specs = expand_grid({"task": "p1", "seed": 99}, {"protocol": ["iso", "bc"], "seed": [0, 1, 2]})
    assert [(s["protocol"], s["seed"]) for s in specs] == [
        ("iso", 0), ("iso", 1), ("iso", 2), ("bc", 0), ("bc", 1), ("bc", 2)]
    assert all(s["task"] == "p1" for s in specs)  # base is copied; an axis overrides it
    assert specs == expand_grid({"task": "p1", "seed": 99}, {"protocol": ["iso", "bc"], "seed": [0, 1, 2]})
    assert expand_grid({"a": 1}, {}) == [{"a": 1}]


@pytest.mark.parametrize("axes, field", [({"seed": []}, "axes.seed"), ({"seed": "012"}, "axes.seed"),
                                         ({"seed": 3}, "axes.seed")])
def test_expand_grid_rejects_bad_axes(axes: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        expand_grid({}, axes)


def test_episode_key_is_stable_readable_and_order_free() -> None:
    spec = {"protocol": "broadcast", "seed": 3, "n_agents": 2, "progress": [0.1]}
    key = episode_key(spec)
    # pinned: a change here orphans every existing run folder's resume keys
    assert key == "n_agents=2_protocol=broadcast_seed=3-aec85ac317e4"
    assert episode_key(dict(reversed(list(spec.items())))) == key
    assert episode_key({**spec, "seed": 4}) != key
    assert episode_key({**spec, "seed": 3.0}) != key  # 3 and 3.0 are different JSON
    assert len(episode_key({"prompt": "x" * 500, "seed": 1})) < 80


def test_default_run_id_depends_on_specs_order_and_fn() -> None:
    specs = expand_grid({}, {"seed": [0, 1]})
    rid = default_run_id(specs, FN)
    assert rid == default_run_id([dict(s) for s in specs], FN)
    assert rid != default_run_id(specs[::-1], FN)
    assert rid != default_run_id(specs, "other:fn")


# --- validation -------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, match", [
    ({"specs": []}, "specs: the grid is empty"),
    ({"specs": [{"seed": 0}, {"seed": 1}, {"seed": 0}]}, r"specs\[2\]: duplicate of specs\[0\]"),
    ({"workers": 0}, "workers: must be an integer >= 1"),
    ({"fn": "_fake_episode:nope"}, "fn: module '_fake_episode' has no attribute 'nope'"),
    ({"fn": "no_such_module_xyz:run"}, "fn: cannot import module"),
    ({"study": "../up"}, "study: must be"),
    ({"specs": [{"seed": float("nan")}]}, r"specs\[0\]\.seed: NaN"),
    ({"specs": [{"seed": 0}, {"seed": 1, "colour": "red"}]}, r"specs\[1\].*unknown field\(s\) \['colour'\]"),
])
def test_bad_input_fails_before_any_file_is_written(tmp_path: Path, kwargs: dict, match: str) -> None:
    args = {"specs": [{"seed": 0}], "fn": FN, "study": "s", "workers": 1,
            "validate": _fake_episode.validate, **kwargs}
    specs = args.pop("specs")
    with pytest.raises(ValueError, match=match):
        run_grid(specs, out_root=tmp_path / "out", progress=False, **args)
    assert not (tmp_path / "out").exists()


def test_validate_is_called_on_every_spec_before_any_episode_runs(tmp_path: Path) -> None:
    seen = []

    def validate(spec: dict) -> None:
        seen.append(spec["seed"])
        if spec["seed"] == 2:
            raise ValueError("seed: 2 is cursed")

    with pytest.raises(ValueError, match=r"specs\[2\] \(seed=2-[0-9a-f]{12}\): seed: 2 is cursed"):
        run_grid(expand_grid({}, {"seed": [0, 1, 2, 3]}), fn=FN, study="s", out_root=tmp_path,
                 workers=1, progress=False, validate=validate)
    assert seen == [0, 1, 2]
    assert list(tmp_path.iterdir()) == []


# --- parallel == serial, determinism ---------------------------------------------------------

def test_workers2_loads_the_same_records_as_workers1(tmp_path: Path) -> None:
    # with 2 workers the first episode waits for the last one, so they finish out of grid order
    flag = tmp_path / "flag"
    specs = [{"seed": s, "n_steps": 7 + s} for s in range(8)]
    specs[0]["wait_for"] = specs[-1]["touch"] = str(flag)
    flag.touch()  # in-process, nobody would touch it in time
    r1 = run_grid(specs, fn=FN, study="s", run_id="w1", out_root=tmp_path, workers=1, progress=False)
    flag.unlink()
    r2 = run_grid(specs, fn=FN, study="s", run_id="w2", out_root=tmp_path, workers=2, progress=False)
    assert (r1.n_done, r2.n_done, r2.n_failed) == (8, 8, 0)
    grid_keys = [episode_key(s) for s in specs]
    assert _keys(r1.run_dir / "episodes.jsonl") == grid_keys
    assert _keys(r2.run_dir / "episodes.jsonl") != grid_keys  # the test exercises sorting
    _assert_same_run(r1.run_dir, r2.run_dir)
    episodes, steps = load_run(r2.run_dir)
    assert list(episodes["episode_key"]) == grid_keys
    assert list(episodes["grid_index"]) == list(range(8))
    assert len(steps) == sum(7 + s for s in range(8))
    assert isinstance(episodes.loc[0, "progress"], list) and isinstance(episodes.loc[0, "credits"], dict)
    # records are exactly what the episode function returned, tagged with key and index
    direct = _fake_episode.run_spec(json.loads(json.dumps(specs[3], sort_keys=True)))
    row = episodes.iloc[3].to_dict()
    assert {k: row[k] for k in direct["episode"]} == direct["episode"]
    mine = steps[steps["grid_index"] == 3].drop(columns=["episode_key", "grid_index"])
    pd.testing.assert_frame_equal(mine.reset_index(drop=True), pd.DataFrame(direct["steps"]))


def test_same_specs_give_byte_identical_records_without_timings(tmp_path: Path) -> None:
    specs = expand_grid({"n_steps": 12}, {"seed": [0, 1, 2, 3]})
    a = run_grid(specs, fn=FN, study="s", run_id="a", out_root=tmp_path, workers=1, progress=False)
    b = run_grid(specs, fn=FN, study="s", run_id="b", out_root=tmp_path, workers=1, progress=False)
    for name in ("episodes.jsonl", "steps.jsonl"):
        assert (a.run_dir / name).read_bytes() == (b.run_dir / name).read_bytes()
    timings = [json.loads(x) for x in _lines(a.run_dir / "timings.jsonl")]
    assert sorted(t["episode_key"] for t in timings) == sorted(_keys(a.run_dir / "episodes.jsonl"))
    assert all(t["wall_s"] >= 0 for t in timings)
    episodes, steps = load_run(a.run_dir)
    timing_like = {"wall_s", "time", "started", "finished", "pid", "elapsed", "duration"}
    assert not timing_like & set(episodes.columns) and not timing_like & set(steps.columns)


# --- resume -------------------------------------------------------------------------------

def test_resume_repairs_torn_lines_and_orphan_steps(tmp_path: Path) -> None:
    specs = expand_grid({"n_steps": 9}, {"seed": list(range(6))})
    ref = run_grid(specs, fn=FN, study="s", run_id="ref", out_root=tmp_path, workers=1, progress=False)
    run = run_grid(specs, fn=FN, study="s", run_id="r", out_root=tmp_path, workers=1, progress=False)
    ep, st = run.run_dir / "episodes.jsonl", run.run_dir / "steps.jsonl"
    # crash between "steps written" and "episode line written" for the last two episodes,
    # then a torn write in each file
    ep.write_bytes(b"".join(_lines(ep)[:4]) + b'{"episode_key": "seed=4')
    st.write_bytes(st.read_bytes() + b'{"episode_key": "n_steps=9_seed=5-abc", "grid_ind')
    assert len(load_run(run.run_dir)[0]) == 4  # load_run tolerates the damage read-only
    res = run_grid(specs, fn=FN, study="s", run_id="r", out_root=tmp_path, workers=1, progress=False)
    assert (res.n_skipped, res.n_new, res.n_done) == (4, 2, 6)
    assert _keys(ep) == [episode_key(s) for s in specs]
    assert [json.loads(x) for x in _lines(st)]  # every line is whole JSON again
    assert st.read_bytes() == (ref.run_dir / "steps.jsonl").read_bytes()
    _assert_same_run(ref.run_dir, run.run_dir)


def test_resume_refuses_a_different_grid_in_the_same_run_id(tmp_path: Path) -> None:
    run_grid([{"seed": 0}], fn=FN, study="s", run_id="x", out_root=tmp_path, workers=1, progress=False)
    before = (tmp_path / "s" / "x" / "episodes.jsonl").read_bytes()
    with pytest.raises(ValueError, match="run_id: .* already holds a different grid"):
        run_grid([{"seed": 1}], fn=FN, study="s", run_id="x", out_root=tmp_path, workers=1, progress=False)
    assert (tmp_path / "s" / "x" / "episodes.jsonl").read_bytes() == before


def test_a_second_writer_is_refused(tmp_path: Path) -> None:
    specs = [{"seed": 0}]
    run_dir = tmp_path / "s" / default_run_id(specs, FN)
    run_dir.mkdir(parents=True)
    with RunLock(run_dir):
        # a lock held by another process looks the same to flock: open file descriptions differ
        with pytest.raises(RunLockedError, match="another process"):
            run_grid(specs, fn=FN, study="s", out_root=tmp_path, workers=1, progress=False)
    assert run_grid(specs, fn=FN, study="s", out_root=tmp_path, workers=1, progress=False).ok


def _write_grid(path: Path, n: int, sleep_s: float) -> Path:
    path.write_text(yaml.safe_dump({"base": {"n_steps": 30, "sleep_s": sleep_s},
                                    "axes": {"seed": list(range(n))}, "params": {"note": "kill test"}}))
    return path


def _cli(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "collablab.runs", *args], env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def test_cli_kill_and_resume_loses_and_repeats_nothing(tmp_path: Path) -> None:
    n = 30
    grid = _write_grid(tmp_path / "grid.yaml", n, 0.05)
    args = ["--study", "kill", "--fn", FN, "--grid", str(grid), "--workers", "2", "--run-id", "k",
            "--out-root", str(tmp_path / "out"), "--no-progress"]
    run_dir = tmp_path / "out" / "kill" / "k"
    proc = _cli(*args, start_new_session=True)
    deadline = time.monotonic() + 30
    while len(_lines(run_dir / "episodes.jsonl")) < 6:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no episodes after 30 s"
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its workers, as the OOM killer or a power cut would
    proc.wait()
    n_before = len(_lines(run_dir / "episodes.jsonl"))
    assert 6 <= n_before < n
    assert read_manifest(run_dir)["status"] == "running"
    assert run_status(run_dir)["status"] == "killed"  # running, says the manifest; but nobody holds the lock
    with open(run_dir / "episodes.jsonl", "ab") as f:  # and a torn write on top
        f.write(b'{"episode_key": "n_steps=30_seed=2')

    proc = _cli(*args)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.strip().splitlines()[-1] == str(run_dir)

    specs = expand_grid({"n_steps": 30, "sleep_s": 0.05}, {"seed": list(range(n))})
    keys = [episode_key(s) for s in specs]
    written = _keys(run_dir / "episodes.jsonl")
    assert sorted(written) == sorted(keys) and len(written) == n  # every key exactly once
    steps_keys = _keys(run_dir / "steps.jsonl")
    assert all(steps_keys.count(k) == 30 for k in keys) and len(steps_keys) == 30 * n
    ref = run_grid(specs, fn=FN, study="kill", run_id="k", out_root=tmp_path / "ref", workers=2,
                   progress=False)
    _assert_same_run(ref.run_dir, run_dir)
    m = read_manifest(run_dir)
    assert m["status"] == "complete" and m["counts"] == {"total": n, "done": n, "failed": 0, "pending": 0}
    assert [s["status"] for s in m["sessions"]] == ["killed", "complete"]  # marked by the next run
    assert m["sessions"][0]["ended"] is None
    assert m["sessions"][1]["n_new"] == n - n_before
    assert m["params"]["note"] == "kill test"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_workers_exit_when_the_parent_is_killed_alone(tmp_path: Path) -> None:
    """A SIGKILLed notebook kernel must not leave worker processes behind."""
    grid = _write_grid(tmp_path / "grid.yaml", 20, 0.3)
    proc = _cli("--study", "o", "--fn", FN, "--grid", str(grid), "--workers", "2",
                "--out-root", str(tmp_path / "out"), "--no-progress")
    deadline = time.monotonic() + 30
    while len(descendants(proc.pid)) < 4:  # resource tracker, forkserver, 2 workers
        assert proc.poll() is None and time.monotonic() < deadline, descendants(proc.pid)
        time.sleep(0.02)
    left = descendants(proc.pid)
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 15
    while any(Path(f"/proc/{p}").exists() for p in left) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = [p for p in left if Path(f"/proc/{p}").exists()]
    for p in alive:  # do not leak them into the test session if the assert fails
        os.kill(p, signal.SIGKILL)
    assert not alive, f"processes outlived their killed parent: {alive}"


@pytest.mark.parametrize("grid, message", [
    ("base: {}\naxes: {seed: []}\n", "axes.seed: empty list"),
    ("base: {colour: red}\naxes: {seed: [0]}\n", "unknown field(s) ['colour']"),  # --validate auto
    ("base: {}\naxis: {seed: [0]}\n", "unknown top-level keys ['axis']"),
])
def test_cli_reports_bad_grid_file(tmp_path: Path, grid: str, message: str) -> None:
    path = tmp_path / "g.yaml"
    path.write_text(grid)
    proc = _cli("--study", "s", "--fn", FN, "--grid", str(path), "--out-root", str(tmp_path / "o"))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and message in err, err
    assert not (tmp_path / "o").exists()


def test_cli_sigterm_stops_cleanly_and_resumes(tmp_path: Path) -> None:
    grid = _write_grid(tmp_path / "grid.yaml", 20, 0.1)
    args = ["--study", "t", "--fn", FN, "--grid", str(grid), "--workers", "1", "--run-id", "t",
            "--out-root", str(tmp_path / "out"), "--no-progress"]
    run_dir = tmp_path / "out" / "t" / "t"
    proc = _cli(*args)
    deadline = time.monotonic() + 30
    while len(_lines(run_dir / "episodes.jsonl")) < 2:
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "run the same command again" in err
    m = read_manifest(run_dir)
    assert m["status"] == "interrupted" and 2 <= m["counts"]["done"] < 20
    assert m["sessions"][0]["status"] == "interrupted" and m["sessions"][0]["ended"]
    proc = _cli(*args)
    assert proc.wait(timeout=60) == 0
    assert read_manifest(run_dir)["counts"]["done"] == 20


# --- failures -----------------------------------------------------------------------------

def test_failures_are_recorded_the_grid_goes_on_and_resume_retries(tmp_path: Path) -> None:
    flag = tmp_path / "flag"
    specs = [{"seed": s, "fail_unless": str(flag)} if s in (1, 4) else {"seed": s} for s in range(6)]
    with pytest.warns(UserWarning, match="2 of 6 episodes failed"):
        res = run_grid(specs, fn=FN, study="s", out_root=tmp_path, workers=1, progress=False)
    assert (res.n_done, res.n_failed, res.ok) == (4, 2, False)
    fails = [json.loads(x) for x in _lines(res.run_dir / "failures.jsonl")]
    assert [f["grid_index"] for f in fails] == [1, 4]
    assert fails[0]["spec"] == specs[1] and fails[0]["error_type"] == "RuntimeError"
    assert "fake failure" in fails[0]["error"] and "_fake_episode.py" in fails[0]["traceback"]
    m = read_manifest(res.run_dir)
    assert m["status"] == "incomplete" and m["counts"]["failed"] == 2 and m["counts"]["done"] == 4
    assert list(load_failures(res.run_dir)["grid_index"]) == [1, 4]

    flag.touch()
    res2 = run_grid(specs, fn=FN, study="s", out_root=tmp_path, workers=1, progress=False)
    assert (res2.n_skipped, res2.n_new, res2.n_failed, res2.ok) == (4, 2, 0, True)
    assert load_failures(res2.run_dir).empty
    assert read_manifest(res2.run_dir)["counts"] == {"total": 6, "done": 6, "failed": 0, "pending": 0}
    ref = run_grid(specs, fn=FN, study="s", run_id="ref", out_root=tmp_path, workers=1, progress=False)
    _assert_same_run(ref.run_dir, res2.run_dir)


def test_a_dying_worker_fails_only_its_episode(tmp_path: Path) -> None:
    flag = tmp_path / "flag"
    specs = [{"seed": s, "sleep_s": 0.05} for s in range(6)]
    specs[2]["die_unless"] = str(flag)
    with pytest.warns(UserWarning, match="1 of 6 episodes failed"):
        res = run_grid(specs, fn=FN, study="s", out_root=tmp_path, workers=2, progress=False)
    assert (res.n_done, res.n_failed) == (5, 1)
    assert res.failures[0]["episode_key"] == episode_key(specs[2])
    assert res.failures[0]["error_type"] == "WorkerDied"
    flag.touch()
    assert run_grid(specs, fn=FN, study="s", out_root=tmp_path, workers=2, progress=False).ok


# --- manifest --------------------------------------------------------------------------------

def test_manifest_records_parameters_versions_and_counts(tmp_path: Path) -> None:
    specs = expand_grid({"n_steps": 5, "n_agents": 2}, {"protocol": ["iso", "bc"], "seed": [0, 1]})
    params = {"task": "p1", "episodes_per_cell": 2}
    res = run_grid(specs, fn=FN, study="s", out_root=tmp_path, workers=1, progress=False,
                   params=params, backend="heuristic")
    m = read_manifest(res.run_dir)
    for key in ("study", "run_id", "fn", "fn_defaults", "status", "created", "updated", "counts", "backend",
                "backends_seen", "params", "settings", "code", "environment", "spec_fields",
                "specs", "sessions", "files"):
        assert key in m, key
    assert (m["study"], m["run_id"], m["fn"]) == ("s", res.run_id, FN)
    assert m["counts"] == {"total": 4, "done": 4, "failed": 0, "pending": 0}
    assert m["params"] == params and m["backend"] == "heuristic" and m["backends_seen"] == ["fake"]
    assert m["fn_defaults"] == _fake_episode.DEFAULTS
    assert m["settings"]["workers"] == 1 and m["settings"]["out_root"] == str(tmp_path)
    assert [s["episode_key"] for s in m["specs"]] == [episode_key(s) for s in specs]
    assert m["spec_fields"]["protocol"]["values"] == ["bc", "iso"]
    assert set(m["spec_fields"]) == {"n_steps", "n_agents", "protocol", "seed"}
    env = m["environment"]
    assert env["python"] == sys.version.split()[0]
    for pkg in ("numpy", "pandas", "scipy", "statsmodels"):
        assert env["packages"][pkg] == importlib.metadata.version(pkg)
    assert {"openai", "virtualhome"} <= set(env["packages"])
    code = m["code"]
    assert code["collablab"] == importlib.metadata.version("collablab")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if head.returncode == 0:
        assert code["commit"] == head.stdout.strip() and isinstance(code["dirty"], bool)
    (session,) = m["sessions"]
    assert session["status"] == "complete" and session["n_new"] == 4
    assert session["episode_wall_s"]["n"] == 4 and session["wall_s"] > 0
    assert m["created"] <= m["updated"]


def test_manifest_code_version_is_unknown_outside_git(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "not-a-repo"))
    res = run_grid([{"seed": 0}], fn=FN, study="s", out_root=tmp_path, workers=1, progress=False)
    assert read_manifest(res.run_dir)["code"]["commit"] == "unknown"


# --- memory ---------------------------------------------------------------------------------

MEMORY_SCRIPT = textwrap.dedent("""
    import json, resource, sys
    from collablab.runs import expand_grid, run_grid
    out = sys.argv[1]
    def peak_mb():
        # VmHWM: peak RSS of this process image (ru_maxrss would inherit pytest's across exec)
        try:
            with open("/proc/self/status") as f:
                return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")) / 1024
        except OSError:
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    base = peak_mb()
    # warm up: imports, worker pool machinery, json/progress code paths
    run_grid(expand_grid({"n_steps": 400}, {"seed": [-1, -2, -3, -4]}), fn="_fake_episode:run_spec",
             study="warm", out_root=out, workers=2, progress=False)
    before = peak_mb()
    res = run_grid(expand_grid({"n_steps": 400}, {"seed": list(range(200))}),
                   fn="_fake_episode:run_spec", study="big", out_root=out, workers=2, progress=False)
    print(json.dumps({"base": base, "before": before, "after": peak_mb(), "done": res.n_done,
                      "wall_s": res.wall_s, "run_dir": str(res.run_dir)}))
""")


def test_parent_memory_does_not_grow_with_the_grid(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT, str(tmp_path)], env=_env(),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["done"] == 200
    steps_mb = (Path(r["run_dir"]) / "steps.jsonl").stat().st_size / 2**20
    growth = r["after"] - r["before"]
    print(f"parent peak RSS {r['before']:.0f} -> {r['after']:.0f} MB (interpreter {r['base']:.0f} MB), "
          f"growth {growth:.1f} MB for {steps_mb:.1f} MB of steps JSON; "
          f"{200 / r['wall_s']:.0f} episodes/s")
    assert r["base"] < 60, "measuring the wrong process?"
    assert steps_mb > 15  # holding all steps (as bytes, let alone dicts) would blow the bound
    assert growth < 10, f"parent RSS grew {growth:.1f} MB"
