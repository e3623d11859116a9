"""Notebook 05 on its default parameters (offline): the run shows, through the mechanisms of the
heuristic backend, a method gaining through interaction (its CG interval above 0 on a task with
enough units) and names the clearest loss through regress (issue 10's done-when; the games'
cells are too few units to tell, issue 24), and the grid resumes instead of recomputing."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import notebook_defaults

from collablab.studies.mastracebench import experiments as E
from collablab.studies.mastracebench import report as RP

NB = Path(__file__).resolve().parents[1] / "notebooks" / "05_proposal_trajectories.ipynb"


@pytest.fixture(scope="module")
def default_run():
    """The default run, in the session's outputs folder: nbval's execution of the notebook, later
    in the same xdist group (conftest.GROUPS), reads it instead of running it again."""
    P = notebook_defaults(NB)
    episodes, steps, run_dir = E.run_notebook(P)
    return P, episodes, steps, run_dir


def test_the_default_run_reads_gains_and_losses_through_their_intervals(default_run):
    P, episodes, steps, run_dir = default_run
    R = RP.read_notebook(episodes, steps, P, run_dir)
    gains, gain, loss = R.findings("table2")[:3]
    assert gain.shown is True and "through interaction" in gain.text, gain.text
    cg, low, high = gain.quotes[:3]
    assert low.value > 0 and dict(cg.where)["task"] in ("mapf", "evidence_chain"), gain.text  # 30+ units
    assert "GAB Regress" in loss.text, loss.text
    gab = R.tables["gab"]
    q_reg, q_imp = loss.quotes[-2:]
    row = gab[(gab.method == dict(q_reg.where)["method"]) & (gab.task == dict(q_reg.where)["task"])]
    assert float(row["Regress"].iloc[0]) > float(row["Improve"].iloc[0])  # visible in the GAB figure's data
    games = {"gomoku", "negotiation", "tactic_duel"}
    if dict(q_reg.where)["task"] in games:
        assert loss.shown is None and "too few units to tell" in loss.text, loss.text
    # what the README says the default run does not show
    cce, = [f for f in R.findings("table2") if "CCE" in f.claim]
    tc, = R.findings("tc")
    assert cce.shown is False and tc.shown is False and "MAV" in tc.text, (cce.text, tc.text)
    pairs = list(zip(cce.quotes[::2], cce.quotes[1::2]))
    assert 2 * sum(a.shown_value > b.shown_value for a, b in pairs) <= len(pairs), cce.text
    assert set(R.tables["table2"]["task"]) == {"mapf", "evidence_chain", "gomoku", "negotiation", "tactic_duel"}
    assert E.skipped_settings(P) == ["Family-Het.: not run; a heterogeneous setting needs 'agent_profiles' on the "
                                     "heuristic backend (the heuristic has no model families)"]
    assert list(dict.fromkeys(R.tables["table4"]["setting"])) == [s["label"] for s in P["table4_settings"][:7]]
    # the main setting's units run once (Table 4's first row is the main run, not a second copy)
    assert set(R.tables["table2"].query("task == 'evidence_chain'")["n"]) == {P["n_units"]["evidence_chain"] * 3}
    assert R.headlines == [gains, gain, loss, *R.findings("gab"), tc] and len(R.limits) >= 3
    R.table("cg")
    assert (Path(run_dir) / "tables" / "cg.csv").exists()


def test_a_second_run_resumes_and_reads_the_same_records(default_run):
    P, episodes, steps, run_dir = default_run
    again, steps2, run_dir2 = E.run_notebook(P)
    assert run_dir2 == run_dir and len(again) == len(episodes) and len(steps2) == len(steps)


def test_table4_settings_are_the_papers_eight_in_the_params_file_and_the_notebook():
    from collablab.cli import parameter_set

    default = notebook_defaults(NB)["table4_settings"]
    for name in ("full", "qwen3"):
        assert parameter_set(NB, name, NB.parents[1])["table4_settings"] == default
    assert [(s["label"], s["proposers"], s["rounds"]) for s in default] == [
        ("Main (3P+1R)", 3, 1), ("5P+1R", 5, 1), ("7P+1R", 7, 1), ("3P+2R", 3, 2), ("3P+3R", 3, 3), ("5P+2R", 5, 2),
        ("Scale-Het.", 3, 1), ("Family-Het.", 3, 1)]
    scale, family = default[6]["models"].split(","), default[7]["models"].split(",")
    assert [m.split("/")[1] for m in scale] == ["Qwen3-32B", "Qwen3-14B", "Qwen3-8B"]
    assert len({m.split("/")[0] for m in family}) == 3  # three families (Qwen, Llama, Mistral), 8B each
