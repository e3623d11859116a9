"""PARTNR tool calls as data and OANA prediction scoring (observe_share_predict.txt §3.3, §A.2, §A.5)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from collablab.studies.partnr.calls import (HUMAN_TOOLS, ROBOT_TOOLS, TOOLS, ToolCall, find_call, mask_id,
                                            parse_call)
from collablab.studies.partnr.episode import ROLES, Channels, run_episode
from collablab.studies.partnr.metrics import agent_metrics
from collablab.studies.partnr.offline import PROFILES, OfflinePlanner
from collablab.studies.partnr.prediction import (PredictionScore, PredictionTally, prediction_table,
                                                 score_against, score_prediction)
from collablab.studies.partnr.report import prediction_frames
from collablab.studies.partnr.tasks import generate_task, load_task


def C(text: str) -> ToolCall:
    return parse_call(text)


# --- calls -----------------------------------------------------------------------------------

def test_the_tool_library():
    assert len(TOOLS) == 14
    assert TOOLS["Place"].params == ("object", "relation", "furniture", "constraint", "reference")
    assert TOOLS["Rearrange"].params == TOOLS["Place"].params
    assert TOOLS["Navigate"].principal == "target" and TOOLS["Explore"].principal == "room"
    assert TOOLS["Wait"].principal is None and TOOLS["Done"].params == ()
    assert {n for n, s in TOOLS.items() if s.human_only} == {"Clean", "Fill", "Pour", "PowerOn", "PowerOff"}
    assert ROBOT_TOOLS == ("Navigate", "Explore", "Pick", "Place", "Rearrange", "Open", "Close", "Wait", "Done")
    assert HUMAN_TOOLS == tuple(TOOLS) and set(ROBOT_TOOLS) < set(HUMAN_TOOLS)


def test_text_round_trips():
    assert ToolCall("Place", ("cup_1", "on", "table_2")).text() == "Place[cup_1, on, table_2, None, None]"
    assert ToolCall("Wait", ()).text() == "Wait[]"
    assert str(ToolCall("Navigate", ("kitchen_0",))) == "Navigate[kitchen_0]"
    for t in ("Place[cup_1, on, table_2, next_to, plate_3]", "Wait[]", "Explore[living_room_0]"):
        assert C(t).text() == t


def test_parse_place_with_three_and_five_args():
    three = C("Place[cup_1, on, table_2]")
    five = C("Place[cup_1, on, table_2, None, None]")
    assert three == five and three.args == ("cup_1", "on", "table_2", "None", "None")
    assert C("Rearrange[cup_1, within, cabinet_4, next_to, bowl_2]").args == (
        "cup_1", "within", "cabinet_4", "next_to", "bowl_2")
    with pytest.raises(ValueError, match=r"Place takes 3 or 5 argument"):
        C("Place[cup_1, on, table_2, next_to]")


def test_parse_is_tolerant_of_whitespace_and_quotes():
    assert C('  Pick[ "cup_1" ]  ') == ToolCall("Pick", ("cup_1",))
    assert C("`Navigate['table_1']`") == ToolCall("Navigate", ("table_1",))
    assert C("Wait[ ]") == ToolCall("Wait")
    assert C("Place [cup_1 ,on,  table_2 ]").args[:3] == ("cup_1", "on", "table_2")


def test_parse_errors_are_clear():
    with pytest.raises(ValueError, match=r"unknown tool 'Fly'.*allowed tools: Navigate, Explore, Pick"):
        C("Fly[kitchen_0]")
    with pytest.raises(ValueError, match=r"Pick takes 1 argument\(s\) \(object\), got 2"):
        C("Pick[cup_1, table_2]")
    with pytest.raises(ValueError, match=r"Wait takes 0 argument\(s\) \(none\), got 1"):
        C("Wait[now]")
    for bad in ("Navigate table_1", "Navigate[table_1", "Navigate[a[b]]", "Navigate[table_1] extra", "",
                "Pick[cup_1, ]"):
        with pytest.raises(ValueError, match=r"malformed"):
            C(bad)
    with pytest.raises(ValueError, match=r"unknown tool name"):
        parse_call("Wait[]", ("Wait", "Teleport"))


def test_human_only_tools_rejected_for_the_robot():
    with pytest.raises(ValueError, match=r"unknown tool 'Clean'.*allowed tools: .*Done$"):
        parse_call("Clean[cup_1]", ROBOT_TOOLS)
    assert parse_call("Clean[cup_1]", HUMAN_TOOLS) == ToolCall("Clean", ("cup_1",))
    assert find_call("Thought: wash it\nPowerOn[lamp_1]\nAssigned!", ROBOT_TOOLS) is None
    assert find_call("Thought: light\nPowerOn[lamp_1]\nAssigned!", HUMAN_TOOLS) == ToolCall("PowerOn", ("lamp_1",))


def test_find_call_on_react_replies():
    reply = "Thought: The table may hold the cup, and I should Pick[cup_1] later.\nNavigate[table_1]\nAssigned!"
    assert find_call(reply, ROBOT_TOOLS) == ToolCall("Navigate", ("table_1",))
    # only text before the stop word counts; the last parsable line wins; junk lines are skipped
    after = "Thought: go\nExplore[kitchen_0]\nPick[cup_1]\nnot a call\nAssigned!\nDone[]"
    assert find_call(after, ROBOT_TOOLS) == ToolCall("Pick", ("cup_1",))
    assert find_call("Thought: go\nNavigate[table_1] Assigned!", ROBOT_TOOLS) == ToolCall("Navigate", ("table_1",))
    assert find_call("Thought: nothing to do.\nAssigned!", ROBOT_TOOLS) is None
    assert find_call("Thought: done\nDone[]", ROBOT_TOOLS) == ToolCall("Done")


def test_mask_id():
    assert mask_id("cup_1") == "cup" and mask_id("table_12") == "table"
    assert mask_id("living_room_0") == "living_room" and mask_id("chest_of_drawers_52") == "chest_of_drawers"
    assert mask_id("cup_1_:0000") == "cup" and mask_id("cup_:0003") == "cup"
    for word in ("on", "within", "next_to", "None", "cup", "living_room"):
        assert mask_id(word) == word
    assert C("Place[cup_1, on, table_2, next_to, plate_3]").masked() == ToolCall(
        "Place", ("cup", "on", "table", "next_to", "plate"))


# --- scoring ---------------------------------------------------------------------------------

def test_navigate_book_does_not_match_pick_book():
    s = score_against(C("Navigate[book_1]"), C("Pick[book_2]"))
    assert s == PredictionScore(type=False, principal=True, all_params=True)
    assert not s.joint_principal and not s.joint_all


def test_place_matching_type_and_cup_but_not_the_constraints():
    s = score_against(C("Place[cup_1, on, table_2]"), C("Place[cup_1, on, table_2, next_to, plate_3]"))
    assert (s.type, s.principal, s.all_params, s.joint_principal, s.joint_all) == (True, True, False, True, False)
    other_table = score_against(C("Place[cup_1, on, table_2]"), C("Place[cup_4, on, counter_1]"))
    assert other_table == PredictionScore(True, True, False)
    same = score_against(C("Place[cup_1, on, table_2]"), C("Place[cup_9, on, table_7, None, None]"))
    assert same.joint_all


def test_instance_ids_are_masked():
    assert score_against(C("Pick[cup_3]"), C("Pick[cup_1]")).joint_all
    assert score_against(ToolCall("Pick", ("cup_1_:0000",)), C("Pick[cup]")).joint_all
    assert score_against(C("Pick[cup_3]"), C("Pick[mug_3]")) == PredictionScore(True, False, False)


def test_parameterless_calls_and_none():
    assert score_against(C("Wait[]"), C("Wait[]")) == PredictionScore(True, True, True)
    assert score_against(C("Wait[]"), C("Done[]")) == PredictionScore(False, False, False)
    assert score_against(C("Wait[]"), C("Navigate[sofa_1]")) == PredictionScore(False, False, False)
    assert score_against(None, C("Wait[]")) == PredictionScore(False, False, False)
    assert score_against(C("Wait[]"), None) == PredictionScore(False, False, False)
    scored = score_prediction(None, C("Wait[]"), C("Wait[]"))
    assert not any(scored["union"].values()) and not any(scored["strict"].values())


def test_union_credits_the_current_action_strict_does_not():
    scored = score_prediction(C("Navigate[sofa_2]"), C("Navigate[sofa_0]"), C("Pick[cup_1]"))
    assert all(scored["union"].values())
    assert not any(scored["strict"].values())
    # joint scores join per target before the union: type from one, parameter from the other is not credited
    mixed = score_prediction(C("Pick[book_1]"), C("Navigate[book_0]"), C("Pick[cup_1]"))
    assert mixed["union"] == {"type": True, "principal": True, "all_params": True,
                              "joint_principal": False, "joint_all": False}


#: (prediction, current, next): the hand-scored set of the rates test
SET = [
    ("Pick[cup_3]", "Navigate[table_1]", "Pick[cup_1]"),
    ("Navigate[book_0]", "Pick[book_2]", "Navigate[kitchen_0]"),
    ("Place[cup_1, on, table_2]", "Place[cup_4, on, table_5, next_to, plate_1]", "Navigate[sofa_0]"),
    (None, "Wait[]", "Wait[]"),
    ("Explore[kitchen_0]", "Explore[kitchen_1]", None),
]


def _tally() -> PredictionTally:
    t = PredictionTally(agent="robot")
    for p, c, n in SET:
        t.add(*(C(x) if x else None for x in (p, c, n)))
    return t


def test_conditional_rates_by_hand():
    r = _tally().rates()
    assert r["strict_n"] == r["union_n"] == 5
    # strict: types right 1,2; joint principal and all 1; all params (raw) 1
    assert (r["strict_type_acc"], r["strict_principal_acc"], r["strict_all_acc"]) == (0.4, 0.2, 0.2)
    assert (r["strict_cond_principal"], r["strict_cond_all"], r["strict_type_given_all"]) == (0.5, 0.5, 1.0)
    # union: types right 1,2,3,5; joint principal 1,3,5; joint all 1,5; all params (raw) 1,2,5
    assert (r["union_type_acc"], r["union_principal_acc"], r["union_all_acc"]) == (0.8, 0.6, 0.4)
    assert (r["union_cond_principal"], r["union_cond_all"]) == (0.75, 0.5)
    assert r["union_type_given_all"] == pytest.approx(2 / 3)


def test_rates_are_nan_on_zero_denominators():
    empty = PredictionTally().rates()
    assert empty["union_n"] == 0 and math.isnan(empty["union_type_acc"]) and math.isnan(empty["strict_cond_all"])
    t = PredictionTally()
    t.add(None, C("Wait[]"), C("Pick[cup_1]"))
    r = t.rates()
    assert r["strict_type_acc"] == 0.0 and math.isnan(r["strict_cond_principal"]) and math.isnan(r["union_type_given_all"])
    with pytest.raises(ValueError, match=r"lacks"):
        t.add_scored({"union": {"type": True}})


def test_prediction_table_groups_by_agent():
    recs = [{"agent": "robot", "prediction": p, "current": c, "next": n} for p, c, n in SET]
    recs.append({"agent": "human", "prediction": "Fly[away]", "current": "Wait[]", "next": "Wait[]"})
    recs.append({"agent": "human", "prediction": "Wait[]", "current": None, "next": "Wait[]"})
    rows = prediction_table(recs)
    assert [r["agent"] for r in rows] == ["robot", "human"]
    assert rows[0] == {"agent": "robot", **_tally().rates()}
    assert rows[1]["strict_type_acc"] == 0.5 and rows[1]["union_cond_all"] == 1.0
    with pytest.raises(ValueError, match=r"unknown tool"):
        prediction_table([{"agent": "x", "prediction": None, "current": "Fly[a]", "next": None}])


# -- predictions with nothing to predict --------------------------------------------------------------
def test_a_prediction_with_neither_target_is_counted_apart_not_wrong():
    t = PredictionTally()
    assert t.add(ToolCall("Navigate", ("cup_0",)), None, None) is None
    t.add(ToolCall("Pick", ("cup_0",)), ToolCall("Pick", ("cup_1",)), None)
    t.add(ToolCall("Wait"), None, ToolCall("Done"))
    r = t.rates()
    assert (t.n, t.no_target, t.made) == (2, 1, 3)
    assert r["union_type_acc"] == 0.5 and r["strict_type_acc"] == 0.0 and r["union_n"] == 2
    assert r["union_no_target"] == r["strict_no_target"] == 1 and r["union_no_target_share"] == pytest.approx(1 / 3)
    assert math.isnan(PredictionTally().rates()["union_no_target_share"])
    rows = prediction_table([{"agent": "robot", "prediction": "Wait[]", "current": None, "next": None},
                             {"agent": "robot", "prediction": "Wait[]", "current": "Wait[]", "next": None}])
    assert rows[0]["union_type_acc"] == 1.0 and rows[0]["union_no_target"] == 1


def test_predictions_after_the_partner_is_done_are_set_apart_in_episodes_and_tables():
    """Under OANA every cycle predicts; once the partner is Done both targets are empty."""
    hits = 0
    rows = []
    for i in range(4):
        planners = [OfflinePlanner(PROFILES["default"], seed=i, agent=a) for a in (0, 1)]
        res = run_episode(load_task(generate_task(i, "rearrange")), planners, Channels(oana=True), seed=i)
        m = agent_metrics(res, oana=True)
        done_at = {a: next((log.end for log in res.logs if log.agent == a and log.call == "Done[]"), None) for a in (0, 1)}
        for a, role in enumerate(ROLES):
            mine = [log for log in res.logs if log.agent == a]
            after = [log for log in mine if done_at[1 - a] is not None and log.start > done_at[1 - a]]
            assert all(log.pred_current is None and log.pred_next is None for log in after)
            assert m[role]["pred_union_no_target"] >= len(after)
            assert m[role]["pred_union_n"] + m[role]["pred_union_no_target"] == len(mine)
            hits += len(after)
        rows += [{"episode_key": i, **log.to_dict()} for log in res.logs]
    assert hits > 0
    E = pd.DataFrame([{"episode_key": i, "backend": "offline", "observability": "partial", "context": "Obj",
                       "oana": True, "condition": "Obj+OANA"} for i in range(4)])
    t = prediction_frames(E, pd.DataFrame(rows))
    union = t[t["target"] == "union"]
    assert set(union["agent"]) == {"robot", "human"}
    assert (union["no_target"] > 0).any() and ((union["n"] + union["no_target"]).sum() == len(rows))
    share = union["no_target"] / (union["n"] + union["no_target"])
    assert list(union["no_target_share"]) == pytest.approx(list(share))
