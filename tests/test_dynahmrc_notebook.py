"""Notebook 06 on its default parameters (offline): the run shows the DynaHMRC issue's done-when
through the mechanisms of the framework and the heuristic backend (removing feedback lowers SUCC
more than any other ablation; MCTS solves the easy two-robot tasks within the cap, and the sentence
on its success by team size says what the run shows; a mover refused at the receptacle hands the
object to the manipulator), fits its time budget, resumes instead of
recomputing, and its sentences and tables agree with the episode records."""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest
from conftest import notebook_defaults

from test_dynahmrc_reading import consistent

from collablab.studies.dynahmrc import experiments as E
from collablab.studies.dynahmrc import findings as F
from collablab.studies.dynahmrc import report as RP

ROOT = Path(__file__).resolve().parents[1]
NB = ROOT / "notebooks" / "06_heterogeneous_dynamic_teams.ipynb"
#: The issue's budget for the default offline run (about two minutes today on 2 cores).
BUDGET_S = 180


@pytest.fixture(scope="module")
def default_run():
    """The default run, in the session's outputs folder: nbval's execution of the notebook, later
    in the same xdist group (conftest.GROUPS), reads it instead of running it again."""
    P = notebook_defaults(NB)
    t0 = time.perf_counter()
    episodes, steps, run_dir = E.run_notebook(P)
    wall = time.perf_counter() - t0
    R = RP.read_notebook(episodes, steps, P)
    print(f"\nnotebook 06 default run: {len(episodes)} episodes in {wall:.1f} s on {P['workers']} workers")
    return P, episodes, steps, run_dir, R, wall


def test_removing_feedback_lowers_succ_more_than_any_other_ablation(default_run):
    *_, R, wall = default_run
    assert wall < BUDGET_S, wall
    t = R.tables["ablation_overall"].set_index("ablation_label")
    a = t["success_mean"]
    drops = {k: a["full"] - v for k, v in a.items() if k != "full"}
    print("SUCC drops:", {k: round(v, 3) for k, v in drops.items()})
    # the largest drop, and the full framework lies above w/o feedback's 95% interval (the margin was
    # a fixed 0.2 until issue 26's tiers and cheapest-first search moved both means)
    assert max(drops, key=drops.get) == "w/o feedback", drops
    fb = t.loc["w/o feedback"]
    assert F.beyond(a["full"], fb["success_mean"], fb["success_low"], fb["success_high"], 1) is True, (a["full"], fb)
    f = R.findings("ablation")[0]
    assert f.shown is True and f.text.startswith("Removing feedback")


def test_mcts_solves_easy_two_robot_tasks_and_its_team_size_sentence_says_what_the_run_shows(default_run):
    """MCTS solves the easy two-robot tasks within the cap. Whether its success falls as the team
    grows (paper Fig. 6) is not asserted: on the offline grid it no longer does (issue 26: medium
    targets now lie in the open to be found, and a larger team searches in parallel what its search
    budget loses per joint step; 144 MCTS episodes at 4 tasks per cell: 0.65, 0.64, 0.67 for 2, 3,
    4 types). The generated sentence must say what the run shows: too few episodes, a fall, or no fall."""
    _, episodes, *_ = default_run
    e = E.episode_frame(episodes)
    m = e[e["method"] == "mcts"]
    easy2 = m[(m["level"] == "easy") & (m["n_types"] == 2)]
    assert len(easy2) >= 6 and easy2["success"].all() and (easy2["ts"] <= easy2["max_steps"]).all()
    t = default_run[4].tables["search_by_types"]
    (f,) = [f for f in default_run[4].findings("search") if f.text.startswith("MCTS's ")]
    consistent(f, {"search_by_types": t})
    rows = t[t["method_label"] == "MCTS"].sort_values("n_types")
    assert list(rows["n"]) == list(m.groupby("n_types").size()), rows
    shown = [round(1000 * v) for v in rows["success_mean"]]  # as the sentence prints them (0.1%)
    if rows["n"].min() < F.MIN_N:  # the four-type team has 6 episodes at the default size
        assert f.shown is None and "too few to tell" in f.text, f.text
    elif shown[-1] < shown[0]:
        assert f.shown is True and "falls as the team grows" in f.text, f.text
    else:
        assert f.shown is False and "does not fall as the team grows" in f.text, f.text


def _repeats(steps, keys) -> tuple[int, int]:
    """(refusals, repeats): Place Failed (4) answers, and the same robot asking again to put the
    same object onto the same receptacle later in the episode."""
    refusals = repeats = 0
    for _, part in steps[steps["episode_key"].isin(keys)].groupby("episode_key"):
        part = part.sort_values(["t", "agent"])
        for r in part[part["kind"] == "place_failed_4"].itertuples():
            refusals += 1
            again = part[(part["t"] > r.t) & (part["robot"] == r.robot) & (part["name"] == "place")
                         & (part["target"] == r.target) & (part["where"] == r.where)]
            repeats += len(again)
    return refusals, repeats


def test_a_refused_mover_hands_off_to_the_manipulator(default_run):
    _, episodes, steps, *_ = default_run
    e = E.episode_frame(episodes)
    ours = e[(e["method"] == "dynahmrc") & (e["ablation_label"] == "full")]["episode_key"]
    blind = e[(e["method"] == "dynahmrc") & (e["ablation_label"] == "w/o feedback")]["episode_key"]
    refused, repeated = _repeats(steps, set(ours))
    refused_blind, repeated_blind = _repeats(steps, set(blind))
    print(f"refusals {refused} -> repeats {repeated}; without feedback {refused_blind} -> {repeated_blind}")
    # learnt from the feedback: rarely asked again (only once the lesson has left the bounded memory)
    assert refused > 20 and repeated <= 0.1 * refused, (refused, repeated)
    assert repeated_blind >= 0.5 * refused_blind  # without feedback it keeps asking
    # after a refusal the object reaches the receptacle only through the manipulator
    s = steps[steps["episode_key"].isin(set(ours))]
    placed = s[(s["kind"] == "place_success") & s["where"].str.contains("tray|panel|cutting_board")]
    assert len(placed) and set(placed["type"]) == {"Ma"}


def test_every_sentence_matches_its_tables(default_run):
    *_, R, _ = default_run
    assert {"static", "dynamic", "centralized", "ablation", "search", "paired", "election", "sensitivity"} <= set(R.sections)
    assert {"sensitivity_CTO", "sensitivity_IRZ", "sensitivity_ANC_REC_wide", "dynamic_goal_zone_wide",
            "dynamic_team_change_wide"} <= set(R.tables)
    for f in R.findings():
        consistent(f, R.tables)
    assert 3 <= len(R.headlines) <= 5
    assert "not findings about LLMs" in R.markdown()


def test_every_displayed_table_and_figure_fits_the_notebook(default_run, tmp_path):
    *_, R, _ = default_run
    R.run_dir = tmp_path
    for name in R.styles:
        if name in R.tables:
            d = R.table(name)
            assert d.frame.shape[1] <= 12 and len(d.frame) <= 15, (name, d.frame.shape)
            assert not d.frame.apply(lambda c: c.str.contains(r"\d\.\d{4,}")).any().any(), name
            assert (tmp_path / "tables" / f"{name}.csv").exists()
    for name in RP.FIGURES:
        fig = RP.figure(R, name)
        assert fig is not None and fig.get_figwidth() <= 11, name
        assert "backend: heuristic" in fig.get_suptitle()


def test_the_tables_agree_with_the_episode_records(default_run):
    _, episodes, *_, R, _ = default_run
    e = E.episode_frame(episodes)
    sub = e[(e["method"] == "dynahmrc") & (e["setting"] == "Static") & (e["ablation_label"] == "full")
            & (e["level"] == "hard")]
    row = R.tables["by_difficulty"].set_index(["method_label", "level"]).loc[("DynaHMRC", "hard")]
    assert row["n"] == len(sub) and math.isclose(row["success_mean"], sub["success"].mean(), abs_tol=1e-4)
    assert math.isclose(row["ts_mean"], sub["ts"].mean(), abs_tol=1e-4)
    assert row["success_low"] <= row["success_mean"] <= row["success_high"]


def test_a_second_run_resumes(default_run):
    P, episodes, steps, run_dir, *_ = default_run
    t0 = time.perf_counter()
    again, _, run_dir2 = E.run_notebook(P)
    assert run_dir2 == run_dir and len(again) == len(episodes) and time.perf_counter() - t0 < 30
