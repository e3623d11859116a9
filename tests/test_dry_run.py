"""``collablab run --dry-run`` (issue 24): planned in this process, no kernel started, nothing written
(MECoBench's task suite read from its cache, never written), the same ``P`` the notebook sees,
and each notebook's entry the one its setup cell calls."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

import pytest
from conftest import notebook_defaults

from collablab import cli
from collablab.cli import parameter_set
from collablab.runs.dry_run import NOTEBOOK_ENTRIES, notebook_entry, plan_notebook, with_parameters

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _code(nb: Path) -> str:
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[nb.stem[:2] for nb in NOTEBOOKS])
def test_each_notebook_calls_the_entry_the_dry_run_calls(nb):
    entry = notebook_entry(nb)
    module, function = entry.entry.split(":")
    parent, name = module.rsplit(".", 1)
    code = _code(nb)
    alias = re.search(rf"^from {re.escape(parent)} import .*\b{name} as (\w+)", code, re.M)
    assert alias, f"{nb.name} does not import {module}"
    call = f"{alias[1]}.{function}({''.join(json.dumps(a) + ', ' for a in entry.args)}P)"
    assert call in code, f"{nb.name}'s setup cell does not call {call}"


def test_every_notebook_has_an_entry_and_an_unknown_one_is_named():
    assert {nb.stem for nb in NOTEBOOKS} == set(NOTEBOOK_ENTRIES)
    with pytest.raises(ValueError, match=r"^notebook: '99_new' has no entry in collablab\.runs\.dry_run\."):
        notebook_entry("99_new")


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[nb.stem[:2] for nb in NOTEBOOKS])
def test_p_is_the_parameters_cell_with_the_set_applied(nb):
    smoke = parameter_set(nb, "smoke", ROOT)
    assert with_parameters(nb, {**smoke, "workers": 3}) == {**notebook_defaults(nb), **smoke, "workers": 3}


def test_a_notebook_reading_a_run_plans_no_grid(tmp_path):
    plan = plan_notebook(ROOT / "notebooks" / "07_partner_information.ipynb", {"read_run": "somewhere"})
    assert (plan.status, plan.runs) == ("no grid", []) and "read_run" in plan.error


def _listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_a_dry_run_starts_no_kernel_and_writes_nothing(tmp_path, monkeypatch, capsys):
    from collablab.studies.mecobench.spec import tasks_of
    from collablab.studies.mecobench.suite import suite_cache_dir

    tasks_of("suite", 0)  # the session's suite (conftest: built once, shared), read below from its cache
    cache = suite_cache_dir()
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    monkeypatch.setenv("COLLABLAB_OUTPUTS", str(outputs))
    monkeypatch.setenv("COLLABLAB_SUITE_CACHE", str(cache))

    def no_kernel(*a, **k):
        raise AssertionError("a dry run started a kernel")

    monkeypatch.setattr(cli, "_execute", no_kernel)
    tasks_of.cache_clear()  # read the suite again, through the dry run's read-only view of the cache
    before = _listing(outputs), _listing(cache)
    handler = signal.getsignal(signal.SIGTERM)
    try:
        code = cli.main(["run", "01", "05", "06", "07", "--params", "smoke", "--dry-run", "--show-requests"])
    finally:
        signal.signal(signal.SIGTERM, handler)
    out = capsys.readouterr().out
    assert code == 0, out
    assert (_listing(outputs), _listing(cache)) == before
    rows = [line.split() for line in out.splitlines() if re.match(r"0\d_\S+ +smoke +\d", line)]
    assert [r[0] for r in rows] == [nb.stem for nb in NOTEBOOKS if nb.stem[:2] in ("01", "05", "06", "07")], out
    assert all(int(r[2]) > 0 and r[2] == r[4] and r[3] == "0" for r in rows), out
    assert out.count("no unit calls a model (backend heuristic?)") == 4, out
