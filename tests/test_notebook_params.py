"""Every parameter of every notebook reaches its run manifest, with the value papermill injected
(not a hand-copied subset), and notebook cells stay thin."""

from __future__ import annotations

import json
from pathlib import Path

import papermill as pm
import pytest
from conftest import notebook_defaults

from collablab.cli import notebook_paths, parameter_set
from collablab.runs import notebook_parameters

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = notebook_paths(ROOT)
#: The MECoBench notebooks (01-04); 05 is MASTraceBench's and 07 Observe-Share-Predict's (their own grid tests below).
MECOBENCH_NOTEBOOKS = [nb for nb in NOTEBOOKS if nb.stem[:2] in ("01", "02", "03", "04")]


def test_notebook_parameters_keep_plain_values_only():
    import math

    ns = {"n": 3, "xs": (1, 2), "d": {"a": [1.5, None]}, "s": "x", "_private": 1, "In": [], "math": math,
          "f": print, "bad": {1: 2}}
    assert notebook_parameters(ns) == {"n": 3, "xs": [1, 2], "d": {"a": [1.5, None]}, "s": "x"}


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_cell_has_an_id(nb):
    """nbformat 4.5 cell ids: without them papermill and nbval warn (MissingIDFieldWarning)."""
    import nbformat

    raw = json.loads(nb.read_text())
    assert (raw["nbformat"], raw["nbformat_minor"]) >= (4, 5)
    ids = [c.get("id") for c in raw["cells"]]
    assert all(ids) and len(set(ids)) == len(ids), ids
    nbformat.validate(nbformat.from_dict(raw))


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_code_cells_are_thin(nb):
    cells = [c for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "code"]
    assert "parameters" in cells[0]["metadata"].get("tags", []), "the first code cell is the parameters cell"
    for c in cells[1:]:
        src = "".join(c["source"])
        lines = [line for line in src.splitlines() if line.strip()]
        assert "params = dict(" not in src, "parameters come from S.parameters(globals()), not a hand-copied dict"
        assert not any(line.lstrip().startswith(("def ", "class ", "for ", "while ")) for line in lines), src
        assert len(lines) <= 10, src


@pytest.mark.slow
def test_every_parameter_reaches_the_manifest(tmp_path, monkeypatch):
    nb = ROOT / "notebooks" / "03_priors.ipynb"
    names = set(pm.inspect_notebook(str(nb)))
    params = {**parameter_set(nb, "smoke", ROOT), "n_tasks": 2, "n_resamples": 200, "priors": ["full", "none"]}
    monkeypatch.setenv("COLLABLAB_OUTPUTS", str(tmp_path))
    pm.execute_notebook(str(nb), str(tmp_path / "out.ipynb"), parameters=params, cwd=str(nb.parent),
                        progress_bar=False)
    (manifest,) = (tmp_path / "03_priors").glob("*/manifest.json")
    recorded = json.loads(manifest.read_text())["params"]
    assert names <= set(recorded), sorted(names - set(recorded))
    assert recorded["priors"] == ["full", "none"] and recorded["n_tasks"] == 2


def _specs(nb: Path, **over) -> list[dict]:
    from collablab.studies.mecobench.experiments import SPECS

    name = nb.stem if nb.stem in SPECS else "04_behaviours"
    return SPECS[name]({**notebook_defaults(nb), **over})


#: Episodes all four notebooks run on their defaults: at the 0.13 s a heuristic episode takes today
#: (0.3 s after a 2-3x slowdown) on 2 workers, plus about 10 s per notebook, they stay under 5 minutes.
MAX_DEFAULT_EPISODES = 1400


def test_default_grids_fit_the_time_budget():
    from collablab.runs import canonical_json

    total = sum(len({canonical_json(s) for s in _specs(nb)}) for nb in MECOBENCH_NOTEBOOKS)
    assert total <= MAX_DEFAULT_EPISODES, f"{total} default episodes; the notebooks would take over 5 minutes"


#: Units notebook 05 runs on its defaults: about 60 s on 2 workers today (3852 units, most of them
#: static units of a few ms plus the grid's per-unit cost); this bound keeps it under 3 minutes.
MAX_DEFAULT_UNITS_05 = 4500


def test_notebook_05_default_grid_fits_its_time_budget():
    from collablab.studies.mastracebench import experiments as E

    P = notebook_defaults(ROOT / "notebooks" / "05_proposal_trajectories.ipynb")
    assert len(E.specs(P)) <= MAX_DEFAULT_UNITS_05


#: Units notebook 07 runs on its defaults: 480 (40 tasks x 12 conditions), about 60 s on 2 workers today
#: (0.1 s a unit plus the grid's per-unit cost); this bound keeps it under 3 minutes.
MAX_DEFAULT_UNITS_07 = 600


def test_notebook_07_default_grid_fits_its_time_budget():
    from collablab.studies.partnr import experiments as E

    P = notebook_defaults(ROOT / "notebooks" / "07_partner_information.ipynb")
    assert len(E.specs(P)) <= MAX_DEFAULT_UNITS_07


@pytest.mark.parametrize("nb", MECOBENCH_NOTEBOOKS, ids=lambda p: p.stem)
def test_budget_none_runs_the_papers_budget_and_a_set_budget_reaches_every_spec(nb):
    from collablab.studies import mecobench as S

    assert notebook_defaults(nb)["budget"] is None
    for s in _specs(nb, n_tasks=2):
        r = S.resolve(s)
        task = S.task_of(r)
        assert S.config_of(r).resolved_budget(task) == S.default_budget(task.structure, r["prior"])
    assert {s["budget"] for s in _specs(nb, n_tasks=2, budget=70)} == {70}


def test_priors_get_60_or_80_steps_by_default():
    from collablab.studies import mecobench as S

    specs = _specs(ROOT / "notebooks" / "03_priors.ipynb", n_tasks=1, team_sizes=[2])
    got = {s["prior"]: S.config_of(S.resolve(s)).resolved_budget(S.task_of(S.resolve(s))) for s in specs}
    assert got == {"full": 60, "no_appearance": 60, "no_location": 80, "none": 80, "noisy": 80}


def test_shared_memory_runs_against_broadcast_at_four_agents_where_tasks_take_them():
    from collablab.protocols import PROTOCOLS
    from collablab.studies import mecobench as S

    specs = _specs(ROOT / "notebooks" / "02_modes.ipynb", n_tasks=2)
    mem = {(S.task_of(S.resolve(s)).structure, s["n_agents"], s["protocol"]) for s in specs
           if s["protocol"] in ("shared_memory", "broadcast")}
    assert PROTOCOLS["shared_memory"].min_agents <= 4
    assert {("parallel", 4, "shared_memory"), ("parallel", 4, "broadcast")} <= mem
    assert {("sequential", 2, "shared_memory"), ("sequential", 2, "broadcast")} <= mem
    for s in specs:  # every spec the grid keeps can run (sequential tasks take one agent per zone)
        S.validate(s)


def test_sequential_tasks_run_with_and_without_communication_in_notebook_01():
    from collablab.studies import mecobench as S

    specs = _specs(ROOT / "notebooks" / "01_collaboration.ipynb", n_tasks=1)
    seq = {s["protocol"] for s in specs if S.task_of(S.resolve(s)).structure == "sequential"}
    assert seq == {"broadcast", "isolated"}


def _grid_run(P: dict, grid: list[dict], record: Path) -> tuple[str, dict]:
    """run_notebook_grid on the fake episode function; (run folder, what it recorded)."""
    from collablab.runs.notebook import run_notebook_grid

    record.unlink(missing_ok=True)
    _, _, run_dir = run_notebook_grid(grid, fn="_fake_episode:run_spec", notebook="nb", P=P, spec_defaults={},
                                      validate=None)
    (rec,) = [json.loads(line) for line in record.read_text().splitlines()]
    assert rec["run_dir"] == run_dir
    return run_dir, rec


def test_a_replay_runs_every_episode_into_its_own_folder(tmp_path, monkeypatch):
    from collablab.runs.notebook import RECORD_ENV

    monkeypatch.setenv("COLLABLAB_OUTPUTS", str(tmp_path))
    monkeypatch.delenv("COLLABLAB_LLM_CACHE_MODE", raising=False)
    monkeypatch.setenv(RECORD_ENV, str(tmp_path / "record.jsonl"))
    record = tmp_path / "record.jsonl"
    grid = [{"seed": s, "n_steps": 3} for s in range(3)]
    P = {"workers": 1, "backend": "fake", "run_id": "", "llm_cache_mode": ""}
    live, rec = _grid_run(P, grid, record)
    assert rec["n_new"] == 3 and not live.endswith("-replay")
    replay, rec = _grid_run({**P, "llm_cache_mode": "replay"}, grid, record)
    assert replay == live + "-replay" and rec["n_new"] == 3 and rec["n_skipped"] == 0  # executed again, not resumed
    monkeypatch.setenv("COLLABLAB_LLM_CACHE_MODE", "replay")  # the environment's mode counts when P sets none
    again, rec = _grid_run(P, grid, record)
    assert again == replay and rec["n_new"] == 0 and rec["n_skipped"] == 3  # a replay folder resumes itself
    rw, rec = _grid_run({**P, "llm_cache_mode": "rw"}, grid, record)  # P's mode wins over the environment's
    assert rw == live and rec["n_new"] == 0
    named, rec = _grid_run({**P, "run_id": "mine"}, grid, record)  # a run id the user named is kept as named
    assert Path(named).name == "mine" and rec["n_new"] == 3


def test_a_dry_run_counts_and_runs_nothing(tmp_path, monkeypatch):
    from collablab.runs.notebook import DRY_RUN_ENV, DryRun, run_notebook_grid

    monkeypatch.setenv("COLLABLAB_OUTPUTS", str(tmp_path))
    missing = str(tmp_path / "missing")
    grid = [{"seed": 0}, {"seed": 1}, {"seed": 2, "fail_unless": missing}, {"seed": 3, "fail_unless": missing}]
    P = {"workers": 1, "backend": "fake", "run_id": "r", "llm_cache_mode": ""}
    kw = {"fn": "_fake_episode:run_spec", "notebook": "nb", "P": P, "spec_defaults": {}, "validate": None}
    plan = tmp_path / "plan.jsonl"
    monkeypatch.setenv(DRY_RUN_ENV, str(plan))
    with pytest.raises(DryRun, match="would run 4 of 4"):
        run_notebook_grid(grid, **kw)
    assert not (tmp_path / "nb").exists()
    monkeypatch.delenv(DRY_RUN_ENV)
    with pytest.warns(UserWarning, match="2 of 4 episodes failed"):
        run_notebook_grid(grid, **kw)
    monkeypatch.setenv(DRY_RUN_ENV, str(plan))
    with pytest.raises(DryRun):
        run_notebook_grid(grid, **kw)
    first, second = [json.loads(line) for line in plan.read_text().splitlines()]
    assert first == {"study": "nb", "run_id": "r", "run_dir": str(tmp_path / "nb" / "r"), "n_total": 4, "n_done": 0,
                     "n_failed": 0, "n_pending": 4}
    assert {k: second[k] for k in ("n_total", "n_done", "n_failed", "n_pending")} == \
        {"n_total": 4, "n_done": 2, "n_failed": 2, "n_pending": 2}
    with pytest.raises(ValueError, match="duplicate"):  # the grid is checked as a run checks it
        run_notebook_grid(grid + grid[:1], **kw)
