"""Why a PARTNR episode failed (.explanations), built from the evaluation document's own examples,
the explanation recorded with every unsuccessful episode, and its summary per condition
(report.failure_reasons, report.most_common_failure)."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from test_partnr_evaluation import (
    BOOKS,
    CUP_IN_SINK,
    CUP_ON_TABLE,
    FOUR,
    MUG_CLEAN,
    MUG_FILLED,
    SET,
    SHELVES,
    TIDY,
    P,
    World,
    _mug,
    run,
    task,
)

from collablab.studies.partnr import report as RP
from collablab.studies.partnr.evaluation import Constraint, Dependency, Evaluator
from collablab.studies.partnr.explanations import REASONS, FailureExplanation, explain
from collablab.studies.partnr.spec import RECORD_SCHEMA, run_spec

TEMPORAL = Constraint("TemporalConstraint", {"dag_edges": [[0, 1]]})


def test_success_has_no_explanation():
    """README, Example 1 (cup to the sink and back to the table) done in order: nothing to explain."""
    t = task(CUP_IN_SINK, CUP_ON_TABLE, deps=(Dependency((1,), (0,), "after_unsatisfied"),))
    e = run(t, [World(on={"cup": "table"}), World(within={"cup": "sink"}), World(on={"cup": "table"})])
    assert e.success() and explain(e) is None


def test_a_step_never_satisfied():
    """README, Example 1: the cup went to the sink and stayed there, so "Move the cup back to the
    table" (proposition 1, queried only after the sink is left) never held: PARTNR's "Missing steps"."""
    t = task(CUP_IN_SINK, CUP_ON_TABLE, deps=(Dependency((1,), (0,), "after_unsatisfied"),))
    x = explain(run(t, [World(on={"cup": "table"}), World(within={"cup": "sink"})]))
    assert x == FailureExplanation("never_satisfied", ({"proposition": 1, "function_name": "is_on_top",
                                                         "units_done": 0, "units": 1},))


def test_three_of_four_units_is_never_satisfied_with_its_units():
    """README, TaskPercentComplete: "placing 3 out of 4 required objects nets a 75% completion"."""
    x = explain(run(task(FOUR), [World(on={"o1": "table", "o2": "table", "o3": "table"})]))
    assert x is not None and x.reason == "never_satisfied"
    assert x.never_satisfied == ({"proposition": 0, "function_name": "is_on_top", "units_done": 3, "units": 4},)


@pytest.mark.parametrize("worlds,steps,at,tie", [
    ([World(), World(on={"plate": "table"}), World(floor=("toy",), on={"plate": "table"})], [0, 1, 2], 2, False),
    ([World(), World(floor=("toy",), on={"plate": "table"})], [0, 3], 3, True),
])
def test_out_of_order_names_the_constraint_and_the_predecessor(worlds, steps, at, tie):
    """README, TemporalConstraint: "Tidy up the room by... After, set the table by...": the table
    set first (or at the tidying's own step) is "completed out of order"."""
    x = explain(run(task(TIDY, SET, cons=(TEMPORAL,)), worlds, steps))
    assert x is not None and x.reason == "out_of_order" and not x.never_satisfied and not x.broken
    set_at = steps[1]
    assert x.out_of_order == ({"constraint": 0, "proposition": 1, "satisfied_at": set_at,
                               "predecessors": [{"proposition": 0, "satisfied_at": at, "tie": tie}]},)


def test_never_satisfied_comes_first_and_both_are_listed():
    """The table set, the room never tidied: PARTNR explains the missing step first; the
    explanation still lists the out-of-order set (its predecessor never satisfied: -1)."""
    x = explain(run(task(TIDY, SET, cons=(TEMPORAL,)), [World(), World(on={"plate": "table"})]))
    assert x is not None and x.reason == "never_satisfied" and [m["proposition"] for m in x.never_satisfied] == [0]
    assert x.out_of_order[0]["predecessors"] == [{"proposition": 0, "satisfied_at": -1, "tie": False}]


def test_transitive_predecessors_are_named():
    """A DAG 0 -> 1 -> 2: proposition 2 first satisfied before both ancestors."""
    a, b, c = (P("is_on_floor", object_handles=[h]) for h in "abc")
    con = Constraint("TemporalConstraint", {"dag_edges": [[0, 1], [1, 2]]})
    x = explain(run(task(a, b, c, cons=(con,)), [World(floor=("c",)), World(floor=("a", "c")),
                                                 World(floor=("a", "b", "c"))]))
    assert x is not None and x.reason == "out_of_order"
    assert [(o["proposition"], [p["proposition"] for p in o["predecessors"]]) for o in x.out_of_order] == [(2, [0, 1])]


@pytest.mark.parametrize("terminal,last,undone", [
    ([1], _mug(False, False), [1]),  # emptied before the end
    ([0, 1], _mug(False, True), [0]),  # the mug had to stay clean too; it is still filled
])
def test_undone(terminal, last, undone):
    """README, TerminalSatisfactionConstraint: "wash the mug and then fill it with juice"; a step
    undone before the end is PARTNR's "Completed steps were later undone"."""
    cons = (TEMPORAL, Constraint("TerminalSatisfactionConstraint", {"proposition_indices": terminal}))
    e = run(task(MUG_CLEAN, MUG_FILLED, cons=cons), [_mug(False, False), _mug(True, False), _mug(True, True), last])
    x = explain(e)
    assert x is not None and x.reason == "undone" and not x.out_of_order and not x.never_satisfied
    assert x.broken == ({"constraint": 1, "type": "TerminalSatisfactionConstraint", "propositions": undone,
                         "units": 1},)


def test_out_of_order_outranks_undone():
    """The mug filled at the step it was washed (a tie) and emptied before the end: both constraints
    broke; the reason follows the document's order of constraints, Temporal first."""
    cons = (Constraint("TerminalSatisfactionConstraint", {"proposition_indices": [1]}), TEMPORAL)
    x = explain(run(task(MUG_CLEAN, MUG_FILLED, cons=cons), [_mug(False, False), _mug(True, True), _mug(True, False)]))
    assert x is not None and x.reason == "out_of_order"
    assert x.out_of_order[0]["constraint"] == 1 and x.out_of_order[0]["predecessors"][0]["tie"]
    assert [b["type"] for b in x.broken] == ["TerminalSatisfactionConstraint"]


@pytest.mark.parametrize("kind,reason", [("SameArgConstraint", "same_argument"),
                                         ("DifferentArgConstraint", "different_argument")])
def test_argument_constraints(kind, reason):
    """README: "Place the books on the same shelf." / "Place the candles on two separate end
    tables.": book_4 on shelf_1 first, then two of the books on shelf_1 and shelf_2. Same: the book
    on shelf_2 breaks it; different: the book on shelf_1 does."""
    books = P("is_on_top", object_handles=BOOKS, receptacle_handles=SHELVES, number=2)
    fourth = P("is_on_top", object_handles=["book_4"], receptacle_handles=SHELVES)
    con = Constraint(kind, {"proposition_indices": [0, 1], "arg_names": ["receptacle_handles"] * 2})
    worlds = [World(on={"book_4": "shelf_1"}), World(on={"book_4": "shelf_1", "book_1": "shelf_1",
                                                         "book_2": "shelf_2"})]
    x = explain(run(task(books, fourth, cons=(con,)), worlds))
    assert x is not None and x.reason == reason
    assert x.broken == ({"constraint": 0, "type": kind, "propositions": [0], "units": 1},)


def test_empty_task_and_bad_reason():
    assert explain(Evaluator(task())) == FailureExplanation("no_propositions")
    with pytest.raises(ValueError, match="FailureExplanation.reason.*never_satisfied, out_of_order"):
        FailureExplanation("timeout")


def test_to_dict_is_json_and_text_says_each_finding():
    cons = (TEMPORAL, Constraint("TerminalSatisfactionConstraint", {"proposition_indices": [1]}))
    x = explain(run(task(MUG_CLEAN, MUG_FILLED, cons=cons), [_mug(False, False), _mug(True, True), _mug(True, False)]))
    assert x is not None
    d = x.to_dict()
    assert json.loads(json.dumps(d)) == d and set(d) == {"reason", "never_satisfied", "out_of_order", "broken"}
    lines = x.text().splitlines()
    assert lines[0] == "reason: out_of_order" and "same step" in lines[1] and "Terminal" in lines[2]
    assert len(lines) == 3


# --- the episode record ---------------------------------------------------------------------------

def _check(record: dict) -> None:
    import jsonschema

    jsonschema.validate(record, RECORD_SCHEMA["episode"])


def test_every_episode_records_why_it_failed_or_none():
    """Offline episodes of every family: a failure carries its explanation (the same reason in
    the flat column), a success carries none; the record validates and survives JSON."""
    seen = set()
    for instance in range(8, 12):  # four tasks of the default grid, one per family; task 8 fails under Obj
        ep = run_spec({"instance": instance})["episode"]
        _check(ep)
        assert json.loads(json.dumps(ep)) == ep
        if ep["success"]:
            assert ep["failure"] is None and ep["failure_reason"] is None
        else:
            assert ep["failure_reason"] == ep["failure"]["reason"] and ep["failure_reason"] in REASONS
            missing = [m["proposition"] for m in ep["failure"]["never_satisfied"]]
            assert missing == [i for i, t in enumerate(ep["satisfied_at"]) if t == -1]
        seen.add(ep["success"])
    assert seen == {True, False}  # both kinds were checked


# --- per condition -------------------------------------------------------------------------------

def _records() -> pd.DataFrame:
    rows = ([("Obj", False, "never_satisfied")] * 3 + [("Obj", False, "out_of_order")] + [("Obj", True, None)] * 2
            + [("OAS", False, "undone"), ("OAS", False, "out_of_order"), ("OAS", True, None)]
            + [("KE", True, None)] * 2)
    return pd.DataFrame([{"condition": c, "success": s, "failure_reason": r, "backend": "heuristic:default"}
                         for c, s, r in rows])


def test_failure_reasons_count_and_share_per_condition():
    t = RP.failure_reasons(_records())
    assert list(t["condition"]) == ["Obj", "Obj", "OAS", "OAS"]  # display order; KE never failed
    obj = t[t["condition"] == "Obj"].set_index("reason")
    assert obj.loc["never_satisfied", "count"] == 3 and obj.loc["never_satisfied", "share"] == 0.75
    assert obj.loc["out_of_order", "share"] == 0.25 and set(obj["failed"]) == {4}
    assert list(t.loc[t["condition"] == "OAS", "reason"]) == ["out_of_order", "undone"]  # REASONS order


def test_most_common_failure_per_condition():
    t = RP.most_common_failure(_records()).set_index("condition")
    assert t.loc["Obj", "reason"] == "never_satisfied" and t.loc["Obj", "count"] == 3
    assert t.loc["Obj", "share"] == 0.75 and t.loc["Obj", "n"] == 6 and t.loc["Obj", "failed"] == 4
    assert t.loc["OAS", "reason"] == "out_of_order" and t.loc["OAS", "share"] == 0.5  # a tie: the earlier reason
    assert pd.isna(t.loc["KE", "reason"]) and t.loc["KE", "failed"] == 0 and math.isnan(t.loc["KE", "share"])


def test_failure_summaries_refuse_records_without_reasons():
    with pytest.raises(ValueError, match="failure_reason"):
        RP.most_common_failure(_records().drop(columns="failure_reason"))
    bad = _records()
    bad.loc[0, "failure_reason"] = None
    with pytest.raises(ValueError, match="failure_reason: missing on a failed episode; allowed: never_satisfied"):
        RP.failure_reasons(bad)
    bad.loc[0, "failure_reason"] = "timeout"
    with pytest.raises(ValueError, match="failure_reason: timeout on"):
        RP.most_common_failure(bad)
