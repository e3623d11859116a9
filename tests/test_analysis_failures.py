"""Failure modes from records (MECoBench appendix E.2 / F, Tables 18-22, Fig. 37).

Small hand-made episodes with planted events; the detectors must count exactly those.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from collablab.analysis import (completion_claims, coord_query_table, correction_analysis, dup_grab_rates,
                                failure_indicators, failure_lift, grab_events, lift_table, load_rules,
                                stratified_effect, top_code)

CLAIM = "All items have been placed. The task is complete."


def turn(step: int, agent: int, action: str = "wait", obj: int | None = None, obj_class: str | None = None,
         status: str = "ok", feedback: str = "", message: str | None = None, conflict: bool = False) -> dict:
    args = {"name": action, **({"obj": obj} if obj is not None else {})}
    return dict(step=step, agent=agent, action=action, obj_class=obj_class, target_class=None,
                args=json.dumps(args), status=status, feedback=feedback, conflict=conflict, spatial_error=False,
                handover=None, completed=0, message=message, tokens_prompt=0, tokens_completion=0,
                latency_s=0.0, note="")


def build(specs: list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each spec: episode_id, turns, and optional episode fields (progress, success, goal_classes ...)."""
    eps, steps = [], []
    for s in specs:
        s = dict(s)
        turns = s.pop("turns", [])
        n_steps = 1 + max((t["step"] for t in turns), default=-1)
        prog = s.pop("progress", None) or [0.0] * (n_steps + 1)
        gc = s.pop("goal_classes", ["cupcake", "apple"])
        ep = dict(task_id="t0", task_name="demo", structure="parallel", n_subgoals=2,
                  goal={f"on_{c}_13": 1 for c in gc}, goal_classes=gc, n_agents=2, budget=60,
                  steps_per_agent=30, team_steps=n_steps, success=prog[-1] >= 1.0, completed=int(2 * prog[-1]),
                  cr=prog[-1], progress=prog, credits={"0": 0, "1": 0}, actions=len(turns),
                  conflict_actions=0, handover_attempts=0, handover_failures=0, spatial_errors=0, tokens=0,
                  backend="heuristic", prior="full", seed=0, protocol="broadcast")
        ep.update(s)
        eps.append(ep)
        steps += [{"episode_id": ep["episode_id"], **t} for t in turns]
    cols = list(turn(0, 0).keys())
    return pd.DataFrame(eps), pd.DataFrame(steps, columns=["episode_id", *cols])


HELD = "<cupcake> (21) cannot be grabbed: agent {a} is already holding it"
SELF_HELD = "<cupcake> (21) cannot be grabbed: you are already holding it"
LOST = "agent 0 tried to grab <cupcake> (21) at the same time and got it; you stayed idle this step"


def dup_episode() -> dict[str, Any]:
    return dict(episode_id="dup", turns=[
        turn(0, 0, "grab", 21, "cupcake", conflict=True),                         # winner: not a duplicate
        turn(0, 1, "grab", 21, "cupcake", "conflict", LOST, conflict=True),         # 1: lost the conflict
        turn(1, 0, "walk", 13, "coffeetable"),
        turn(1, 1, "grab", 21, "cupcake", "failed", HELD.format(a=0)),              # 2: agent 0 holds it
        turn(2, 0, "grab", 21, "cupcake", "failed", SELF_HELD),                     # own object: not duplicate
        turn(2, 1, "open", 10, "fridge", "conflict", "agent 0 tried to open ...", conflict=True),  # open, not grab
        turn(3, 0, "put_on", 21, "cupcake"),
        turn(4, 1, "grab", 21, "cupcake"),  # agent 0 grabbed it at step 0, outside the window: not duplicate
    ], progress=[0, 0, 0, 0, .5, .5])


def test_grab_events_classifies_duplicates() -> None:
    eps, steps = build([dup_episode()])
    g = grab_events(eps, steps)
    assert g["duplicate"].tolist() == [False, True, True, False, False]
    assert g.loc[1, "dup_reason"] == "lost a same-step grab conflict"
    assert g.loc[2, "dup_reason"] == "agent 0 was holding it"


def test_just_grabbed_window() -> None:
    # agent 0 grabs the apple at step 1 and puts it down at 2; agent 1 grabs it at 2 (window 1) and 5
    eps, steps = build([dict(episode_id="w", turns=[
        turn(1, 0, "grab", 22, "apple"), turn(2, 0, "put_on", 22, "apple"),
        turn(2, 1, "grab", 22, "apple"), turn(5, 1, "grab", 22, "apple")])])
    assert grab_events(eps, steps)["duplicate"].tolist() == [False, True, False]
    assert grab_events(eps, steps, dup_window=4)["duplicate"].tolist() == [False, True, True]
    assert grab_events(eps, steps, dup_window=0)["duplicate"].tolist() == [False, False, False]
    ind = failure_indicators(eps, steps)
    assert ind.loc[0, "n_dup_grabs"] == 1 and ind.loc[0, "dup_grab"]


def test_duplicate_counts_per_episode() -> None:
    eps, steps = build([dup_episode(), dict(episode_id="clean", turns=[turn(0, 0, "grab", 21, "cupcake")])])
    ind = failure_indicators(eps, steps).set_index("episode_id")
    assert ind.loc["dup", "n_dup_grabs"] == 2 and ind.loc["dup", "dup_grab"]
    assert ind.loc["clean", "n_dup_grabs"] == 0 and not ind.loc["clean", "dup_grab"]


def test_wrong_grabs_count_successful_irrelevant_grabs() -> None:
    eps, steps = build([
        dict(episode_id="wg", turns=[
            turn(0, 0, "grab", 23, "plate"),                       # wrong 1
            turn(0, 1, "grab", 21, "cupcake"),                     # right
            turn(1, 0, "put_on", 23, "plate"),
            turn(1, 1, "grab", 24, "toy", "failed", "not visible"),  # failed: not a wrong grab
            turn(2, 0, "grab", 24, "toy"),                         # wrong 2
            turn(3, 1, "grab", 23, "plate"),                       # wrong 3 (another agent's wrong object)
            turn(4, 0, "grab", 22, "apple"),
            turn(5, 0, "grab", 20, "juice"),                       # wrong 4
            turn(6, 1, "grab", 25, "plate"),                       # wrong 5
        ]),
        dict(episode_id="ok", turns=[turn(0, 0, "grab", 22, "apple")]),
    ])
    ind = failure_indicators(eps, steps).set_index("episode_id")
    assert ind.loc["wg", "n_wrong_grabs"] == 5 and ind.loc["wg", "wrong_grab"]
    assert ind.loc["wg", "wg_stratum"] == "4+"
    assert ind.loc["ok", "n_wrong_grabs"] == 0 and not ind.loc["ok", "wrong_grab"]
    assert pd.isna(ind.loc["ok", "wg_stratum"])


def test_goal_classes_fall_back_to_goal_keys() -> None:
    eps, steps = build([dict(episode_id="g", turns=[turn(0, 0, "grab", 23, "plate"),
                                                    turn(1, 0, "grab", 21, "cupcake")])])
    eps = eps.drop(columns="goal_classes")
    assert failure_indicators(eps, steps).loc[0, "n_wrong_grabs"] == 1


def test_false_completion_claims() -> None:
    eps, steps = build([
        # claim at step 1 while CR is 0.5 -> false; agents keep working afterwards
        dict(episode_id="early", turns=[turn(0, 0, "put_on", 21, "cupcake"), turn(1, 0, message=CLAIM),
                                        turn(2, 1, "grab", 22, "apple")], progress=[0, .5, .5, .5]),
        # claim sent with the action that completes the task -> true under step_end
        dict(episode_id="true", turns=[turn(0, 0, "put_on", 21, "cupcake"),
                                       turn(1, 1, "put_on", 22, "apple", message=CLAIM)], progress=[0, .5, 1.0]),
        # no claim, agents idle -> nothing
        dict(episode_id="idle", turns=[turn(s, a) for s in range(5) for a in range(2)], progress=[0.5] * 6),
    ])
    claims = completion_claims(eps, steps)
    assert claims.set_index("episode_id")["false"].to_dict() == {"early": True, "true": False}
    assert claims.set_index("episode_id").loc["true", "cr_before"] == 0.5
    ind = failure_indicators(eps, steps).set_index("episode_id")
    assert ind["completion_claim"].to_dict() == {"early": True, "true": True, "idle": False}
    assert ind["false_completion"].to_dict() == {"early": True, "true": False, "idle": False}
    assert ind.loc["early", "n_false_claims"] == 1 and not ind["premature_stop"].any()
    strict = failure_indicators(eps, steps, claim_check="step_start").set_index("episode_id")
    assert strict.loc["true", "false_completion"]


def test_premature_stop_after_claim() -> None:
    waits = [turn(s, a) for s in range(2, 5) for a in range(2)]  # steps 2, 3, 4: everyone waits
    eps, steps = build([
        dict(episode_id="stop", turns=[turn(0, 0, "put_on", 21, "cupcake"), turn(1, 1, message=CLAIM),
                                       turn(1, 0, "walk", 13, "coffeetable"), *waits], progress=[0, .5, .5, .5, .5, .5]),
        dict(episode_id="short", turns=[turn(0, 0, "put_on", 21, "cupcake"), turn(1, 1, message=CLAIM),
                                        turn(1, 0, "walk", 13, "coffeetable"), *waits[:4],
                                        turn(4, 0, "walk", 13, "coffeetable"), turn(4, 1)],
             progress=[0, .5, .5, .5, .5, .5]),
    ])
    ind = failure_indicators(eps, steps).set_index("episode_id")
    assert ind.loc["stop", "premature_stop"] and not ind.loc["short", "premature_stop"]
    assert failure_indicators(eps, steps, idle_steps=2).set_index("episode_id").loc["short", "premature_stop"]
    # a claim the rules miss never produces a premature stop
    eps2, steps2 = build([dict(episode_id="nomsg", turns=waits, progress=[0.5] * 6)])
    assert not failure_indicators(eps2, steps2)["premature_stop"].any()


def test_message_indicators() -> None:
    eps, steps = build([
        dict(episode_id="m1", turns=[
            turn(0, 0, message="Do you have the cupcake?"),
            turn(1, 1, message="I could not find the cupcake on the kitchentable in the kitchen."),
            turn(2, 0, message="I accidentally grabbed a plate instead of the cupcake. I will put it back.")]),
        dict(episode_id="m2", turns=[turn(0, 0, message="I am stuck: my last actions failed."),
                                     turn(0, 1, message="Agent 0, that is a plate, not the cupcake.")]),
        dict(episode_id="m3", turns=[turn(0, 0)]),
    ])
    ind = failure_indicators(eps, steps).set_index("episode_id")
    cols = ["coord_query", "neg_report", "correction", "correction_self", "correction_peer", "stuck_report"]
    assert ind.loc["m1", cols].tolist() == [True, True, True, True, False, False]
    assert ind.loc["m2", cols].tolist() == [False, False, True, False, True, True]
    assert not ind.loc["m3", cols].any()
    assert ind["n_messages"].tolist() == [3, 2, 0]
    assert set(ind["rules_version"]) == {load_rules().version}
    assert ind.attrs["rules_version"] == load_rules().version


def test_indicators_keep_scalar_episode_columns_and_reject_duplicates() -> None:
    eps, steps = build([dup_episode()])
    ind = failure_indicators(eps, steps)
    assert {"protocol", "backend", "task_id", "success", "cr", "seed"} <= set(ind.columns)
    assert "progress" not in ind.columns and "goal" not in ind.columns
    assert ind.loc[0, "n_objects"] == 2
    with pytest.raises(ValueError, match="episode_id must be unique.*episode_key"):
        failure_indicators(pd.concat([eps, eps]), steps)


def test_degenerate_inputs() -> None:
    eps, _ = build([dict(episode_id="a", turns=[]), dict(episode_id="b", turns=[])])
    for steps in (pd.DataFrame(), None, pd.DataFrame(columns=["episode_id", "step", "agent", "action", "status"])):
        ind = failure_indicators(eps, steps)
        assert len(ind) == 2
        assert not ind[["dup_grab", "wrong_grab", "false_completion", "correction", "coord_query"]].any().any()


# ----------------------------------------------------------------------------- tables
def _ind(rows: list[tuple]) -> pd.DataFrame:
    cols = ["episode_id", "structure", "success", "cr", "n_objects", "coord_query", "stuck_report", "neg_report",
            "correction", "n_wrong_grabs", "dup_grab", "false_completion", "wrong_grab", "backend"]
    return pd.DataFrame(rows, columns=cols)


def test_coord_query_table_matches_hand_counts() -> None:
    ind = _ind([
        ("a", "parallel", True, 1.0, 4, True, True, False, False, 0, False, False, False, "heuristic"),
        ("b", "parallel", False, .5, 6, True, False, True, False, 0, False, False, False, "heuristic"),
        ("c", "parallel", True, 1.0, 3, False, False, False, False, 0, False, False, False, "heuristic"),
        ("d", "sequential", False, .5, 5, False, True, True, False, 0, False, False, False, "heuristic"),
    ])
    t = coord_query_table(ind, by="structure")
    r = t.loc[("parallel", "w/ Q.")]
    assert r["#Case"] == 2 and r["Avg. #Obj."] == 5 and r["SR (%)"] == 50 and r["Stuck (%)"] == 50
    assert r["Neg. (%)"] == 50
    assert t.loc[("parallel", "w/o Q."), "#Case"] == 1
    assert t.loc[("sequential", "w/ Q."), "#Case"] == 0 and math.isnan(t.loc[("sequential", "w/ Q."), "SR (%)"])
    assert t.loc[("sequential", "w/o Q."), "Stuck (%)"] == 100


def _wg_data() -> pd.DataFrame:
    rows = []
    # stratum 1: corrected (1, 0), not corrected (0, 0); stratum 2: corrected (1), not corrected (1)
    for i, (c, s, wg) in enumerate([(True, 1, 1), (True, 0, 1), (False, 0, 1), (False, 0, 1), (True, 1, 2),
                                    (False, 1, 2), (False, 1, 0), (True, 1, 0)]):
        rows.append((f"e{i}", "parallel", bool(s), 1.0 if s else 0.5, 3, False, False, False, c, wg, False,
                     False, wg > 0, "heuristic"))
    return _ind(rows)


def test_correction_analysis_adjusted_effect_by_hand() -> None:
    res = correction_analysis(_wg_data(), by="structure")
    assert res.ok and all("excluded from the weights" in n for n in res.notes)  # empty strata 3, 4+
    t19 = res.table19.loc["parallel"]
    # overall: corrected e0,e1,e4,e7 SR 75%; uncorrected e2,e3,e5,e6 SR 50%
    assert t19.loc[("Overall", "Δ"), "SR (%)"] == pytest.approx(25.0)
    # WG-conditional raw: corrected (1,0,1) 66.7%, uncorrected (0,0,1) 33.3%
    assert t19.loc[("WG", "Raw Δ"), "SR (%)"] == pytest.approx(100 / 3)
    # adjusted: Δ1 = 50, Δ2 = 0, pooled weights 4/6, 2/6 -> 33.3 pp; CR: Δ1 = 25, Δ2 = 0 -> 16.7 pp
    assert t19.loc[("WG", "Adj. Δ"), "SR (%)"] == pytest.approx(100 / 3)
    assert t19.loc[("WG", "Adj. Δ"), "CR (%)"] == pytest.approx(50 / 3)
    assert t19.loc[("WG", "w/ Corr."), "#WG"] == pytest.approx(4 / 3)
    t20 = res.table20.loc["parallel"]
    assert t20.loc[("1", "Corr."), "ΔSR (pp)"] == pytest.approx(50.0)
    assert t20.loc[("1", "Corr."), "weight"] == pytest.approx(4 / 6)
    assert t20.loc[("4+", "Corr."), "#Case"] == 0
    direct = stratified_effect(_wg_data().query("n_wrong_grabs > 0").astype({"success": float}), "correction",
                               ["success", "cr"], "n_wrong_grabs", ["1", "2", "3", "4+"], bins=top_code(4),
                               percent=True)
    assert res.results["parallel"].adjusted("success") == pytest.approx(direct.adjusted("success"))


def test_correction_analysis_without_wrong_grabs_is_graceful() -> None:
    ind = _wg_data().assign(n_wrong_grabs=0)
    res = correction_analysis(ind, by="structure")
    assert not res.ok and len(res.table20) == 0
    assert "not enough wrong-grab episodes in parallel" in res.notes[0]
    assert math.isnan(res.table19.loc[("parallel", "WG", "Adj. Δ"), "SR (%)"])
    only_corrected = _wg_data().assign(correction=True)
    assert not correction_analysis(only_corrected).ok


def test_failure_lift_and_dup_grab_rates() -> None:
    ind = _ind([
        ("a", "parallel", False, .5, 3, False, False, False, False, 0, True, True, False, "m1"),
        ("b", "parallel", False, .5, 3, False, False, False, False, 0, True, False, False, "m1"),
        ("c", "parallel", True, 1.0, 3, False, False, False, False, 0, True, False, False, "m2"),
        ("d", "parallel", True, 1.0, 3, False, False, False, False, 0, False, False, False, "m2"),
    ])
    t = failure_lift(ind, by=None).set_index("indicator")
    assert t.loc["dup_grab", "freq"] == pytest.approx(75.0)
    assert t.loc["dup_grab", "lift"] == pytest.approx((2 / 2) / (1 / 2))
    assert math.isinf(t.loc["false_completion", "lift"])
    assert t.loc["false_completion", "label"] == "Hallucinated completion"
    ref = lift_table(ind.astype({"success": float}), ["dup_grab"], percent=True).iloc[0]
    assert t.loc["dup_grab", "delta_sr"] == pytest.approx(ref["delta_sr"])
    r = dup_grab_rates(ind, by="backend").set_index("backend")
    assert r.loc["m1", "rate"] == 100.0 and r.loc["m2", "rate"] == 50.0
    assert list(r.index) == ["m1", "m2"]  # sorted highest first
    assert r.loc["m2", "ci_low"] < 50 < r.loc["m2", "ci_high"]


def test_end_to_end_counts_from_records() -> None:
    eps, steps = build([dup_episode(),
                        dict(episode_id="wg", turns=[turn(0, 0, "grab", 23, "plate"),
                                                     turn(1, 0, message=CLAIM)], progress=[0, 0, 0])])
    ind = failure_indicators(eps, steps)
    t = failure_lift(ind, by="structure").set_index("indicator")
    assert t.loc["dup_grab", "n_with"] == 1 and t.loc["false_completion", "n_with"] == 1
    assert t.loc["wrong_grab", "n_with"] == 1
    assert np.isnan(t.loc["dup_grab", "lift"])  # no successes: lift undefined, with a note
    assert "no successful episodes" in t.loc["dup_grab", "note"]
