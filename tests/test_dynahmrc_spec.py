"""DynaHMRC specs: every bad key or value fails before any work, naming the field and the allowed
values; the notebook grid validates before it runs."""

from __future__ import annotations

import pytest

from collablab.studies.dynahmrc import experiments as E
from collablab.studies.dynahmrc.spec import resolve, run_spec, validate


@pytest.mark.parametrize("bad,match", [
    ({"team": "Ma-Ma"}, r"team: .*allowed: Ma-MoMa, Ma-UAV"),
    ({"kind": "cook"}, r"kind: .*allowed: pack, sort, sandwich"),
    ({"level": "expert"}, r"level: .*allowed: easy, medium, hard"),
    ({"method": "greedy"}, r"method: .*allowed: dynahmrc, coela, coherent, mcts"),
    ({"variation": "fire"}, r"variation: .*allowed: none, CTO, IRZ, ANC, REC"),
    ({"variation": "CTO", "T": 4}, r"variation.T: 4 not allowed for CTO; allowed: 3, 5, 10"),
    ({"variation": "IRZ", "zones": 4, "team": "Ma-MoMa-Mo"}, r"variation.zones: 4 not allowed; allowed: 1..3"),
    ({"history": "no"}, r"history: must be true or false"),
    ({"random_votes": 1.5}, r"random_votes: must be a number in \[0, 1\]"),
    ({"memory": 0}, r"memory"),
    ({"backend": "llm"}, r"model: backend 'llm' needs a model name"),
    ({"backend": "llm", "model": "m", "base_url": "localhost:8000"}, r"base_url: .*http"),
    ({"task_source": "file"}, r"task_file: task_source 'file' needs a path"),
    ({"colour": "red"}, r"colour"),
])
def test_bad_specs_name_the_field(bad, match):
    with pytest.raises(ValueError, match=match):
        resolve(bad)


def test_variations_the_team_cannot_have_fail_in_validate():
    with pytest.raises(ValueError, match="IRZ needs a 3- or 4-type team"):
        validate({"variation": "IRZ", "team": "Ma-MoMa"})
    with pytest.raises(ValueError, match="ANC"):
        validate({"variation": "ANC", "team": "Ma-MoMa-Mo-UAV"})


def test_a_missing_task_file_and_an_out_of_range_instance_fail_before_running(tmp_path):
    from collablab.studies.dynahmrc.tasks import generate_task, save_tasks

    path = save_tasks([generate_task("pack", "easy", "Ma-MoMa", 0)], tmp_path / "tasks.json")
    assert run_spec({"task_source": "file", "task_file": str(path)})["episode"]["task"]
    with pytest.raises(ValueError, match=r"instance: 3 is out of range; .* has tasks 0..0"):
        validate({"task_source": "file", "task_file": str(path), "instance": 3})


def test_the_notebook_grid_rejects_unknown_variations():
    P = {"n_tasks": 1, "search_tasks": 0, "task_seed": 0, "runs": [0], "kinds": ["pack"], "levels": ["easy"],
         "teams": ["Ma-MoMa"], "methods": ["dynahmrc"], "search_levels": [], "search_methods": [],
         "mcts_iterations": 10, "mcts_max_sim_actions": 100, "variations": ["QUAKE"], "T": 5, "ablations": [],
         "ablation_levels": [], "backend": "heuristic", "profile": "default"}
    with pytest.raises(ValueError, match="variations: 'QUAKE' not allowed; allowed: CTO, IRZ, ANC, REC"):
        E.specs(P)


def test_records_do_not_depend_on_the_process_hash_seed():
    """A unit's records are the same in any worker process (no set order leaks into a decision)."""
    import os
    import subprocess
    import sys

    code = ("import hashlib, json; from collablab.studies.dynahmrc.spec import run_spec; "
            "print(' '.join(hashlib.md5(json.dumps(run_spec(s), sort_keys=True, default=str).encode()).hexdigest() "
            "for s in [{'level': 'hard', 'team': 'Ma-MoMa-Mo-UAV'}, {'variation': 'IRZ', 'team': 'Ma-MoMa-Mo'}, "
            "{'method': 'coherent', 'level': 'hard'}, {'method': 'mcts', 'level': 'medium', 'team': 'Ma-MoMa-UAV', "
            "'mcts_iterations': 20, 'mcts_max_sim_actions': 300}]))")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(h)}).stdout for h in (1, 4, 7)}
    assert len(outs) == 1, outs


def test_the_notebook_grid_runs_mcts_under_every_variation():
    """Issue 26 item 5: MCTS under CTO, IRZ, ANC and REC on dynamic_search_teams (their allowed ones)."""
    P = {"n_tasks": 1, "search_tasks": 1, "task_seed": 0, "runs": [0], "kinds": ["pack"], "levels": ["medium"],
         "teams": ["Ma-MoMa", "Ma-MoMa-UAV", "Ma-MoMa-Mo-UAV"], "methods": ["dynahmrc"], "search_levels": [],
         "search_methods": [], "mcts_iterations": 10, "mcts_max_sim_actions": 100,
         "variations": ["CTO", "IRZ", "ANC", "REC"], "T": 5, "ablations": [], "ablation_levels": [],
         "backend": "heuristic", "profile": "default", "dynamic_search": ["mcts"],
         "dynamic_search_teams": ["Ma-MoMa", "Ma-MoMa-UAV", "Ma-MoMa-Mo-UAV"]}
    got = {(s["variation"], s["team"]) for s in E.specs(P) if s["method"] == "mcts"}
    assert got == {("CTO", "Ma-MoMa"), ("CTO", "Ma-MoMa-UAV"), ("CTO", "Ma-MoMa-Mo-UAV"), ("IRZ", "Ma-MoMa-UAV"),
                   ("IRZ", "Ma-MoMa-Mo-UAV"), ("ANC", "Ma-MoMa"), ("REC", "Ma-MoMa-UAV"),
                   ("REC", "Ma-MoMa-Mo-UAV")}
    with pytest.raises(ValueError, match="dynamic_search"):
        E.check_parameters({**P, "dynamic_search": ["astar"]})


def test_the_notebook_grid_runs_the_sensitivity_settings_on_pack_objects():
    """lab:sensitivity_dyna: Pack Objects only; CTO at T = 3, 5, 10, IRZ with 1-3 zones at T = 5, ANC and
    REC at T = 3, 5, 13, on the sensitivity teams each variation allows; T = 5 and one zone are the
    dynamic block's own units (one spec each)."""
    P = {"n_tasks": 1, "search_tasks": 0, "task_seed": 0, "runs": [0], "kinds": ["pack"], "levels": ["medium"],
         "teams": ["Ma-MoMa", "Ma-MoMa-UAV"], "methods": ["dynahmrc"], "search_levels": [], "search_methods": [],
         "mcts_iterations": 10, "mcts_max_sim_actions": 100, "variations": ["CTO", "IRZ", "ANC", "REC"], "T": 5,
         "ablations": [], "ablation_levels": [], "backend": "heuristic", "profile": "default",
         "sensitivity": ["CTO", "IRZ", "ANC", "REC"], "sensitivity_teams": ["Ma-MoMa", "Ma-MoMa-UAV"],
         "sensitivity_tasks": 1}
    E.check_parameters(P)
    got = {(s["variation"], s["team"], s["T"], s.get("zones", 1)) for s in E.specs(P) if s.get("variation")}
    assert got == {("CTO", t, T, 1) for t in ("Ma-MoMa", "Ma-MoMa-UAV") for T in (3, 5, 10)} | {
        ("IRZ", "Ma-MoMa-UAV", 5, z) for z in (1, 2, 3)} | {("ANC", "Ma-MoMa", T, 1) for T in (3, 5, 13)} | {
        ("REC", "Ma-MoMa-UAV", T, 1) for T in (3, 5, 13)}
    assert {s["kind"] for s in E.specs({**P, "kinds": ["pack", "sort"]}) if s.get("T") == 3} == {"pack"}
    assert len([s for s in E.specs(P) if s.get("variation")]) == len(got)  # T = 5 with one zone: the dynamic block's unit, once
    for bad, match in (({"sensitivity": ["XYZ"]}, "sensitivity"), ({"sensitivity_teams": ["Ma"]}, "sensitivity_teams"),
                       ({"sensitivity_tasks": -1}, "sensitivity_tasks")):
        with pytest.raises(ValueError, match=match):
            E.check_parameters({**P, **bad})
    for s in E.specs(P):  # every unit is a valid spec (three zones keep the generated task feasible)
        if s.get("zones") == 3:
            from collablab.studies.dynahmrc import run_spec
            assert run_spec(s)["episode"]["zones"] == 3
