"""Notebook 05 on its default parameters (offline): the run shows, through the mechanisms of the
heuristic backend, a method gaining through interaction and one losing through regress
(issue 10's done-when), and the grid resumes instead of recomputing."""

from __future__ import annotations

import ast
from pathlib import Path

import papermill as pm
import pytest

from collablab.studies.mastracebench import experiments as E
from collablab.studies.mastracebench import report as RP

NB = Path(__file__).resolve().parents[1] / "notebooks" / "05_proposal_trajectories.ipynb"


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("COLLABLAB_OUTPUTS", str(tmp_path_factory.mktemp("nb05")))
    P = {k: ast.literal_eval(v["default"]) for k, v in pm.inspect_notebook(str(NB)).items()}
    try:
        episodes, steps, run_dir = E.run_notebook(P)
        yield P, episodes, steps, run_dir
    finally:
        mp.undo()


def test_the_default_run_shows_a_gain_through_interaction_and_a_loss_through_regress(default_run):
    P, episodes, steps, _ = default_run
    R = RP.read_notebook(episodes, steps, P)
    gain, loss = R.findings("table2")[:2]
    assert gain.shown is True and "through interaction" in gain.text, gain.text
    assert loss.shown is True and "GAB Regress" in loss.text, loss.text
    gab = R.tables["gab"]
    (q_cg, q_reg, q_imp) = loss.quotes
    row = gab[(gab.method == dict(q_reg.where)["method"]) & (gab.task == dict(q_reg.where)["task"])]
    assert float(row["Regress"].iloc[0]) > float(row["Improve"].iloc[0])  # visible in the GAB figure's data
    assert set(R.tables["table2"]["task"]) == {"mapf", "evidence_chain", "gomoku", "negotiation", "tactic_duel"}
    assert E.skipped_settings(P) == ["Family-Het.: not run; a heterogeneous setting needs 'agent_profiles' on the "
                                     "heuristic backend (the heuristic has no model families)"]
    assert list(dict.fromkeys(R.tables["table4"]["setting"])) == [s["label"] for s in P["table4_settings"][:7]]


def test_a_second_run_resumes_and_reads_the_same_records(default_run):
    P, episodes, steps, run_dir = default_run
    again, steps2, run_dir2 = E.run_notebook(P)
    assert run_dir2 == run_dir and len(again) == len(episodes) and len(steps2) == len(steps)
