"""The ``collablab`` command: notebook runs that resume, skip what finished and survive a kill;
dry runs whose counts are what a real run then writes; progress a reader sees while a notebook
runs and in the executed notebook afterwards; grid files whose YAML errors are messages
(exit 2) rather than tracebacks; ``status`` that sees a killed run; shards that merge into the
bytes of the unsharded run."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import descendants
import yaml

from collablab.cli import main as cli_main
from collablab.cli import parser, plan_points
from collablab.notebooks import cli_argv
from collablab.runs import episode_key, expand_grid, read_manifest
from collablab.runs.manifest import run_status

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
FN = "_fake_episode:run_spec"
SCRIPT = Path(sys.executable).parent / "collablab"
CLI = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "collablab.cli"]
NOTEBOOKS = {"05": "05_proposal_trajectories", "07": "07_partner_information"}


def _env(outputs: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLLABLAB_")}
    env["COLLABLAB_OUTPUTS"] = str(outputs)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(ROOT / "lib"), env.get("PYTHONPATH", "")])
    return env


def _cli(outputs: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], env=_env(outputs), capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)


def _popen(outputs: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([*CLI, *args], env=_env(outputs), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT, start_new_session=True)


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True) if path.exists() else []


def _run_dir(outputs: Path, study: str) -> Path:
    (d,) = [p for p in (outputs / study).iterdir() if p.is_dir()]
    return d


def _rows(stdout: str, first: str) -> dict[str, list[str]]:
    """Table rows of ``stdout`` by their first column (``first`` names the header's first column)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == [first])
    return {line.split()[0]: line.split() for line in lines[start + 2:] if line.strip() and not line.startswith("(")}


def _wait_unlocked(run_dir: Path, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while run_status(run_dir)["locked"]:
        assert time.monotonic() < deadline, f"{run_dir} is still locked"
        time.sleep(0.05)


# --- grid files: messages, not tracebacks ----------------------------------------------------------

@pytest.mark.parametrize("text, where", [
    ("base: {n_steps: 3\naxes: {seed: [0, 1]}\n", "line 2, column 5"),
    ("base:\n  n_steps: 3\n axes: {seed: [0]}\n", "line 3, column 2"),
    ("axes: {seed: [0, 1}\n", "line 1, column 19"),
])
@pytest.mark.parametrize("cmd", ["episodes", "run"])
def test_a_yaml_syntax_error_in_a_grid_is_a_message_and_exit_2(tmp_path, text, where, cmd):
    grid = tmp_path / "bad.yaml"
    grid.write_text(text + ("notebook: '05'\n" if cmd == "run" else ""))
    args = ["--study", "s", "--fn", FN, "--grid", str(grid)] if cmd == "episodes" else ["--grid", str(grid)]
    out = _cli(tmp_path / "out", cmd, *args, timeout=60)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    assert out.stderr.startswith(f"error: grid: {grid}: {where}: "), out.stderr


@pytest.mark.parametrize("doc, message", [
    ({"notebook": "05", "axes": {"n_unit": [1, 2]}}, "axes: 05_proposal_trajectories has no parameter(s) ['n_unit']"),
    ({"notebook": "05", "base": {"colour": 1}, "axes": {}}, "base: 05_proposal_trajectories has no parameter(s)"),
    ({"notebook": "05", "axes": {"seed": 3}}, "axes.seed: must be a list of values"),
    ({"notebook": "0", "axes": {}}, "matches 7 notebooks"),
    ({"notebook": "99", "axes": {}}, "no notebook starts with '99'"),
    ({"notebook": "05", "params": "huge", "axes": {}}, "has no set 'huge'; allowed: default, full"),
    ({"notebook": "05", "axis": {}}, "unknown top-level keys ['axis']"),
])
def test_bad_values_in_a_notebook_grid_name_the_key(tmp_path, capsys, doc, message):
    grid = tmp_path / "g.yaml"
    grid.write_text(yaml.safe_dump(doc))
    assert cli_main(["run", "--grid", str(grid), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err, err


def test_bad_command_lines_exit_2(tmp_path, capsys):
    assert cli_main(["run", "42"]) == 2
    assert "no notebook starts with '42'" in capsys.readouterr().err
    assert cli_main(["run", "05", "--params", "nope"]) == 2
    assert "has no set 'nope'" in capsys.readouterr().err
    assert cli_main(["run", "05", "--shard", "3/2"]) == 2
    assert "shard: expected k/n with 1 <= k <= n" in capsys.readouterr().err
    assert cli_main(["run", "05", "-p", "n_unit", "3"]) == 2
    assert "-p: 05_proposal_trajectories has no parameter(s) ['n_unit']" in capsys.readouterr().err


def test_run_all_is_an_alias_of_collablab_run():
    assert cli_argv(["run-all", "--params", "smoke", "--only", "01", "03"]) == ["run", "01", "03", "--params", "smoke"]
    assert cli_argv(["run-all", "--out", "x", "--force"]) == ["run", "--params", "default", "--out", "x", "--force"]


# --- episode grids: dry run, shards, merge, status --------------------------------------------------

def _fake_grid(path: Path, n: int = 7, **base) -> Path:
    path.write_text(yaml.safe_dump({"base": {"n_steps": 5, **base}, "axes": {"seed": list(range(n))}}))
    return path


def test_episodes_dry_run_counts_what_a_run_then_writes(tmp_path):
    grid = _fake_grid(tmp_path / "g.yaml")
    args = ["episodes", "--study", "fake", "--fn", FN, "--grid", str(grid), "--workers", "1", "--run-id", "r",
            "--no-progress"]
    dry = _cli(tmp_path, *args, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert _rows(dry.stdout, "study")["fake"][2:5] == ["7", "0", "7"]
    assert not (tmp_path / "fake" / "r").exists()  # nothing was run or written
    real = _cli(tmp_path, *args)
    assert real.returncode == 0, real.stderr
    assert len(_lines(tmp_path / "fake" / "r" / "episodes.jsonl")) == 7
    again = _cli(tmp_path, *args, "--dry-run")
    assert _rows(again.stdout, "study")["fake"][2:5] == ["7", "7", "0"]


def test_shards_merge_into_the_bytes_of_the_unsharded_run(tmp_path):
    grid = _fake_grid(tmp_path / "g.yaml", n=7, n_agents=3)
    common = ["episodes", "--study", "fake", "--fn", FN, "--grid", str(grid), "--workers", "1", "--no-progress"]
    whole = _cli(tmp_path, *common, "--run-id", "whole")
    assert whole.returncode == 0, whole.stderr
    shards = []
    for k in (1, 2):
        out = _cli(tmp_path, *common, "--run-id", "sh", "--shard", f"{k}/2")
        assert out.returncode == 0, out.stderr
        shards.append(Path(out.stdout.strip().splitlines()[-1]))
    assert [s.name for s in shards] == ["sh.shard-1-of-2", "sh.shard-2-of-2"]
    assert [len(_lines(s / "episodes.jsonl")) for s in shards] == [4, 3]

    merged = tmp_path / "merged"
    out = _cli(tmp_path, "merge", str(shards[1]), str(shards[0]), "--out", str(merged))
    assert out.returncode == 0, out.stderr
    ref = tmp_path / "fake" / "whole"
    for name in ("episodes.jsonl", "steps.jsonl"):
        assert (merged / name).read_bytes() == (ref / name).read_bytes(), name
    m = read_manifest(merged)
    keys = [episode_key(s) for s in expand_grid({"n_steps": 5, "n_agents": 3}, {"seed": list(range(7))})]
    assert [s["episode_key"] for s in m["specs"]] == keys and m["status"] == "complete"
    assert [x["k"] for x in m["merged_from"]] == [1, 2] and m["fn"] == FN

    # refusals: a missing shard, a shard twice, a folder holding records, shards of another grid, an unfinished shard
    cases = [([shards[0]], "shard(s) 2/2 missing"), ([shards[0], shards[0]], "shard 1/2 given twice"),
             (shards, "already holds records")]
    other = _fake_grid(tmp_path / "o.yaml", n=6)
    for k in (1, 2):
        assert _cli(tmp_path, *common[:5], "--grid", str(other), "--workers", "1", "--run-id", "o",
                    "--shard", f"{k}/2").returncode == 0
    cases.append(([shards[0], tmp_path / "fake" / "o.shard-2-of-2"], "merge shards of one grid"))
    half = _fake_grid(tmp_path / "h.yaml", n=4, fail_unless=str(tmp_path / "never"))
    for k in (1, 2):
        assert _cli(tmp_path, *common[:5], "--grid", str(half), "--workers", "1", "--run-id", "h",
                    "--shard", f"{k}/2").returncode == 1
    cases.append(([tmp_path / "fake" / "h.shard-1-of-2", tmp_path / "fake" / "h.shard-2-of-2"], "episodes not done"))
    cases.append(([ref], "is not a shard"))
    for dirs, message in cases:
        out_dir = merged if message == "already holds records" else tmp_path / "m2"
        out = _cli(tmp_path, "merge", *map(str, dirs), "--out", str(out_dir))
        assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr, (message, out.stderr)
    assert not (tmp_path / "m2" / "episodes.jsonl").exists()


def test_status_shows_a_killed_run_as_killed(tmp_path):
    grid = _fake_grid(tmp_path / "g.yaml", n=3, wait_for=str(tmp_path / "never"))
    proc = _popen(tmp_path, "episodes", "--study", "fake", "--fn", FN, "--grid", str(grid), "--workers", "1",
                  "--run-id", "slow", "--no-progress")
    run_dir = tmp_path / "fake" / "slow"
    deadline = time.monotonic() + 60
    while not ((run_dir / "manifest.json").exists() and run_status(run_dir)["locked"]):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run never started"
        time.sleep(0.05)
    live = _cli(tmp_path, "status")
    assert _rows(live.stdout, "study")["fake"][1:3] == ["slow", "running"], live.stdout
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    out = _cli(tmp_path, "status", str(tmp_path))
    assert out.returncode == 0, out.stderr
    row = _rows(out.stdout, "study")["fake"]
    assert row[1:7] == ["slow", "killed", "0", "0", "3", "3"], out.stdout
    assert read_manifest(run_dir)["status"] == "running"  # status read it, took no lock, changed nothing


# --- notebooks ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """``collablab run 05 07 --params smoke`` run through once, uninterrupted."""
    outputs = tmp_path_factory.mktemp("reference")
    t0 = time.monotonic()
    out = _cli(outputs, "run", "05", "07", "--params", "smoke")
    assert out.returncode == 0, out.stderr
    return outputs, out, time.monotonic() - t0


def test_a_notebook_run_prints_no_kernel_or_notebook_format_warning(reference):
    """The kernel's channels are encrypted (so it does not warn that it runs over TCP in plain text)
    and every cell has an id (so nbformat does not warn): a user's terminal shows only the run."""
    _, first, _ = reference
    for text in ("without encryption", "MissingIDFieldWarning", "WARNING"):
        assert text not in first.stdout + first.stderr, first.stderr


def test_a_notebook_run_shows_plain_text_progress_that_is_saved_final(reference):
    """While a notebook runs, the command prints where its grid stands (read from the kernel's
    COLLABLAB_PROGRESS file); the executed notebook holds the final line as plain text, no widget
    (saved, one shows ``0% 0/288`` forever) and nothing on stderr."""
    outputs, first, _ = reference
    for study in NOTEBOOKS.values():
        n = len(_lines(_run_dir(outputs, study) / "episodes.jsonl"))
        assert re.search(rf"^  {study}: \d+/{n} episodes, \d+ s", first.stdout, re.M), first.stdout
        cells = json.loads((outputs / "notebooks" / "smoke" / f"{study}.ipynb").read_text())["cells"]
        outs = [o for c in cells if c["cell_type"] == "code" for o in c["outputs"]]
        assert not [o for o in outs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
        assert not [o for o in outs if o.get("name") == "stderr"], [o["text"] for o in outs if o.get("name") == "stderr"]
        shown = ["".join(o["data"]["text/plain"]) for o in outs if o["output_type"] == "display_data"]
        assert f"{n} of {n} episodes in" in "\n".join(shown) and "(0 failed)" in "\n".join(shown), shown


def test_notebook_dry_run_counts_what_the_run_writes_and_a_rerun_skips(reference, tmp_path):
    outputs, first, _ = reference
    dry = _cli(tmp_path, "run", "05", "07", "--params", "smoke", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    planned = _rows(dry.stdout, "notebook")
    assert not any((tmp_path / s).exists() for s in NOTEBOOKS.values())  # a dry run runs no episode
    for study in NOTEBOOKS.values():
        n = len(_lines(_run_dir(outputs, study) / "episodes.jsonl"))
        assert n > 0 and planned[study][2:5] == [str(n), "0", str(n)], dry.stdout
        grid_id = _run_dir(outputs, study).name.split("-")[0]  # the rest is the code version
        assert planned[study][5].startswith(f"{study}/{grid_id}-"), dry.stdout
        row = _rows(first.stdout, "notebook")[study]
        assert row[2:5] == ["finished", f"{n}/{n}", "0"], first.stdout
        assert (outputs / "notebooks" / "smoke" / f"{study}.ipynb").is_file()

    again = _cli(outputs, "run", "05", "07", "--params", "smoke")
    assert again.returncode == 0, again.stderr
    assert [r[2] for r in _rows(again.stdout, "notebook").values()] == ["skipped", "skipped"], again.stdout
    dry = _cli(outputs, "run", "05", "07", "--params", "smoke", "--dry-run")
    assert [r[4] for r in _rows(dry.stdout, "notebook").values() if r[0] != "total"] == ["0", "0"], dry.stdout
    assert [r[-1] for r in _rows(dry.stdout, "notebook").values() if r[0] != "total"] == ["skipped"] * 2


def test_killing_a_notebook_run_midway_and_rerunning_gives_the_same_episodes(reference, tmp_path):
    outputs, _, _ = reference
    proc = _popen(tmp_path, "run", "05", "07", "--params", "smoke")
    deadline = time.monotonic() + 120
    part = tmp_path / NOTEBOOKS["07"]
    while not (part.exists() and any(len(_lines(d / "episodes.jsonl")) >= 3 for d in part.iterdir())):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "07 never started"
        time.sleep(0.01)
    victims = descendants(proc.pid) | {proc.pid}  # the CLI, its kernel and any workers, as the OOM killer would
    for pid in victims:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.communicate()
    run_07 = _run_dir(tmp_path, NOTEBOOKS["07"])
    _wait_unlocked(run_07)
    n_ref = len(_lines(_run_dir(outputs, NOTEBOOKS["07"]) / "episodes.jsonl"))
    assert 3 <= len(_lines(run_07 / "episodes.jsonl")) < n_ref
    assert run_status(run_07)["status"] == "killed"

    out = _cli(tmp_path, "run", "05", "07", "--params", "smoke")
    assert out.returncode == 0, out.stderr
    rows = _rows(out.stdout, "notebook")
    assert rows[NOTEBOOKS["05"]][2] == "skipped" and rows[NOTEBOOKS["07"]][2] == "finished", out.stdout
    for study in NOTEBOOKS.values():
        mine, ref = _run_dir(tmp_path, study), _run_dir(outputs, study)
        assert (mine / "episodes.jsonl").read_bytes() == (ref / "episodes.jsonl").read_bytes(), study
    sessions = read_manifest(run_07)["sessions"]
    assert [s["status"] for s in sessions][-1] == "complete" and len(sessions) == 2


def test_a_notebook_grid_gives_one_notebook_per_point_and_shards_points(tmp_path, monkeypatch):
    grid = tmp_path / "runs05.yaml"
    grid.write_text(yaml.safe_dump({"notebook": "05", "params": "smoke", "base": {"n_resamples": 200},
                                    "axes": {"runs": [[0], [1], [2]]}}))
    keys = [episode_key({"runs": r}) for r in ([0], [1], [2])]
    monkeypatch.setenv("COLLABLAB_OUTPUTS", str(tmp_path))
    points = plan_points(parser().parse_args(["run", "--grid", str(grid), "--workers", "1"]))
    assert [p.out for p in points] == [tmp_path / "notebooks" / "runs05" / f"05_proposal_trajectories__{k}.ipynb"
                                       for k in keys]
    assert [p.params["runs"] for p in points] == [[0], [1], [2]]
    assert all(p.params["n_resamples"] == 200 and p.params["max_decisions"] == 6 and p.params["workers"] == 1
               for p in points)  # the smoke set, then base, then the point, then --workers

    out = _cli(tmp_path, "run", "--grid", str(grid), "--dry-run", "--shard", "2/2")
    assert out.returncode == 0, out.stderr
    rows = [line.split() for line in out.stdout.splitlines() if line.startswith("05_")]
    assert [r[1] for r in rows] == [keys[1]], out.stdout  # points 1 and 3 are shard 1's
    assert rows[0][2] == rows[0][4] != "0" and rows[0][3] == "0", out.stdout
