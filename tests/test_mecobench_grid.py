"""Real MECoBench episodes through the grid runner: parallel = serial, and kill + resume = uninterrupted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from collablab.runs import load_run, run_grid
from collablab.studies import mecobench as S

FN = S.FN


def _specs() -> list[dict]:
    return S.grid("parallel", 6, {"n_agents": [1, 2], "protocol": ["broadcast"], "seed": [0, 1]},
                  {"profile": "weak"}) + S.grid("sequential", 3, {"n_agents": [2], "protocol": ["leader"]})


def _frames(run_dir):
    eps, steps = load_run(run_dir)
    return eps.to_json(orient="records"), steps.to_json(orient="records")


def test_workers_do_not_change_records(tmp_path):
    specs = _specs()
    a = run_grid(specs, fn=FN, study="t", run_id="serial", out_root=tmp_path, workers=1, progress=False)
    b = run_grid(specs, fn=FN, study="t", run_id="parallel", out_root=tmp_path, workers=2, progress=False)
    assert _frames(a.run_dir) == _frames(b.run_dir)
    eps, _ = load_run(a.run_dir)
    assert len(eps) == len(specs) and set(eps.backend) == {"heuristic"}


def test_bad_spec_stops_before_any_file(tmp_path):
    from collablab.studies.mecobench import spec as mecobench_run

    with pytest.raises(ValueError, match="protocol"):
        run_grid([{"task_id": "cl000-p", "protocol": "leader", "n_agents": 1}], fn=FN, study="t",
                 out_root=tmp_path, validate=mecobench_run.validate, progress=False)
    assert not any(tmp_path.rglob("*.jsonl"))


@pytest.mark.slow
def test_killed_grid_resumes_to_identical_records(tmp_path):
    specs = S.grid("parallel", 12, {"n_agents": [2, 3], "protocol": ["broadcast", "discuss"]}, {"profile": "medium"})
    ref = run_grid(specs, fn=FN, study="t", run_id="ref", out_root=tmp_path, workers=1, progress=False)
    script = tmp_path / "go.py"
    script.write_text(
        "import sys, json\n"
        "from collablab.runs import run_grid\n"
        f"specs = json.loads({str(__import__('json').dumps(specs))!r})\n"
        "if __name__ == '__main__':\n"
        f"    run_grid(specs, fn={FN!r}, study='t', run_id='killed', out_root={str(tmp_path)!r}, workers=2, progress=False)\n")
    run_dir = Path(tmp_path) / "t" / "killed"
    proc = subprocess.Popen([sys.executable, str(script)], start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        f = run_dir / "episodes.jsonl"
        if f.is_file() and sum(1 for _ in f.open()) >= 5:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = sum(1 for _ in (run_dir / "episodes.jsonl").open())
    assert 0 < done_before < len(specs), "kill the run midway"
    subprocess.run([sys.executable, str(script)], check=True, timeout=300)
    assert _frames(run_dir) == _frames(ref.run_dir)


def test_the_grid_takes_the_study_from_the_registry_or_the_caller(tmp_path):
    from collablab.runs import read_manifest, studies

    assert studies()["mecobench"] == S.FN
    specs = [{"task_id": "cl000-p", "n_agents": 1, "budget": 4}]
    res = run_grid(specs, study="mecobench", run_id="reg", out_root=tmp_path, workers=1, progress=False)
    man = read_manifest(res.run_dir)
    assert res.ok and man["fn"] == S.FN and man["fn_source"] == "registry"
    assert man["studies_registered"]["mecobench"] == S.FN
    with pytest.raises(ValueError, match="study: 'nope' is not a registered study.*mecobench"):
        run_grid(specs, study="nope", out_root=tmp_path, workers=1, progress=False)
    assert not (tmp_path / "nope").exists()


def test_cli_lists_studies_and_needs_no_fn_for_a_registered_one(tmp_path):
    out = subprocess.run([sys.executable, "-m", "collablab.runs", "--list-studies"], capture_output=True, text=True)
    assert out.returncode == 0 and f"mecobench\t{S.FN}" in out.stdout
    grid = tmp_path / "g.yaml"
    grid.write_text("base: {n_agents: 1, budget: 4}\naxes: {task_id: [cl000-p]}\n")
    run = subprocess.run([sys.executable, "-m", "collablab.runs", "--study", "mecobench", "--grid", str(grid),
                          "--out-root", str(tmp_path), "--workers", "1", "--no-progress"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    bad = subprocess.run([sys.executable, "-m", "collablab.runs", "--study", "mine", "--grid", str(grid),
                          "--out-root", str(tmp_path)], capture_output=True, text=True)
    assert bad.returncode == 2 and "not a registered study" in bad.stderr
