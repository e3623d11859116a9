"""Progress a reader can see afterwards (issue 24): plain-text lines on stderr at a calm pace and at
the end, the ``COLLABLAB_PROGRESS`` file the ``collablab`` command follows, and no widget anywhere
(the executed notebooks themselves are checked in ``tests/test_cli.py``)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from collablab.runs.progress import PROGRESS_ENV, Progress, read_progress, watch_line, watch_progress

PKG = Path(__file__).resolve().parents[1] / "lib" / "collablab"


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_lines_on_a_log_come_every_five_seconds_and_at_the_end_without_carriage_returns(tmp_path):
    clock, err = Clock(), io.StringIO()
    bar = Progress(10, initial=2, label="fake/g1", stream=err, kernel=False, clock=clock, path=tmp_path / "p.json")
    for _ in range(6):  # 6 episodes, one a second: one line at 5 s
        clock.t += 1
        bar.update(1, failed=0)
    clock.t += 1
    bar.update(1, failed=1)
    clock.t += 1
    bar.update(1)
    bar.close()
    bar.close()  # once
    lines = err.getvalue().splitlines()
    assert "\r" not in err.getvalue()
    assert lines == ["fake/g1: 7 of 10 episodes, 5 s, about 3 s left (0 failed, 2 resumed)",
                     "fake/g1: 10 of 10 episodes in 8 s (1 failed, 2 resumed)"]


def test_the_progress_file_is_json_written_at_most_once_a_second_and_at_the_end(tmp_path, monkeypatch):
    path = tmp_path / "progress.json"
    monkeypatch.setenv(PROGRESS_ENV, str(path))
    clock = Clock()
    bar = Progress(4, show=False, clock=clock)
    assert read_progress(path) == {"done": 0, "total": 4, "failed": 0, "elapsed_s": 0.0, "eta_s": None}
    clock.t += 0.5
    bar.update(1)
    assert read_progress(path)["done"] == 0  # half a second after the last write
    clock.t += 0.5
    bar.update(1)
    assert read_progress(path) == {"done": 2, "total": 4, "failed": 0, "elapsed_s": 1.0, "eta_s": 1.0}
    clock.t += 0.2
    bar.update(2, failed=1)
    bar.close()
    assert json.loads(path.read_text()) == {"done": 4, "total": 4, "failed": 1, "elapsed_s": 1.2, "eta_s": 0.0}
    assert [p.name for p in tmp_path.iterdir()] == ["progress.json"]  # the temporary file was renamed


def test_no_progress_shows_nothing(tmp_path):
    err = io.StringIO()
    bar = Progress(3, show=False, stream=err, kernel=False, path=tmp_path / "p.json")
    bar.update(3)
    bar.close()
    assert err.getvalue() == "" and read_progress(tmp_path / "p.json")["done"] == 3


def test_watching_prints_a_line_when_something_changed(tmp_path):
    path, out = tmp_path / "progress.json", io.StringIO()
    assert read_progress(path) is None
    with watch_progress(path, "01_collaboration", stream=out, every_s=0.01):
        import time

        for state in ({"done": 120, "total": 288, "failed": 0, "elapsed_s": 20.2, "eta_s": 28.1},
                      {"done": 288, "total": 288, "failed": 2, "elapsed_s": 45, "eta_s": 0}):
            path.write_text(json.dumps(state))
            deadline = time.monotonic() + 5
            while watch_line("01_collaboration", state) not in out.getvalue() and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.05)  # unchanged: no second line
    assert out.getvalue().splitlines() == ["  01_collaboration: 120/288 episodes, 20 s, about 28 s left",
                                           "  01_collaboration: 288/288 episodes, 45 s, 2 failed"]


def test_no_module_imports_tqdm_or_ipywidgets():
    """A widget saved in a notebook shows as ``0% 0/288`` (its state is not rendered): none comes back."""
    imports = re.compile(r"^\s*(?:from|import)\s+(?:tqdm|ipywidgets)\b", re.M)
    found = [str(p.relative_to(PKG)) for p in sorted(PKG.rglob("*.py")) if imports.search(p.read_text(encoding="utf-8"))]
    assert not found


def test_no_estimate_from_the_first_episode(tmp_path):
    clock = Clock()
    bar = Progress(400, stream=io.StringIO(), kernel=False, clock=clock, path=tmp_path / "p.json")
    clock.t += 6
    bar.update(1)  # the first episode paid for starting the workers: no guess of 40 min
    assert bar.eta_s is None
    for _ in range(19):
        clock.t += 0.1
        bar.update(1)
    assert bar.eta_s is not None and bar.eta_s == pytest.approx(7.9 / 20 * 380)
    bar.close()
