"""DynaHMRC episode metrics (dynahmrc.tex §4.4, tab:fail_scaling, tab:token_comparison,
lab:leader_vote) on hand-built step and call records with known answers."""

from __future__ import annotations

import pandas as pd
import pytest

from collablab.studies.dynahmrc.metrics import (
    action_steps,
    communication_cost,
    conflicting_actions,
    election_summary,
    episode_metrics,
    redundant_actions,
    stage_usage,
)

TYPES = {"Alice": "MoMa", "Bob": "Ma", "Lucy": "UAV"}


def step(t, robot, name, target="", where="", ok=True, pose=0, action=None):
    if action is None:
        action = {
            "navigate": f"navigate({target}, stand_pose_{pose})",
            "open": f"open({target})", "pick": f"pick({target})", "place": f"place({target}, {where})",
            "move": "move(0.2, -0.1)", "communicate": "communicate('book on table_0', Bob)", "wait": "wait()",
            "invalid": "I think I should fly",
        }[name]
    kind = {"invalid": "invalid_action"}.get(name, f"{name}_{'success' if ok else 'failed_1'}")
    return {"t": t, "robot": robot, "type": TYPES[robot], "action": action, "name": name, "target": target,
            "where": where, "kind": kind, "ok": ok}


# 7 steps, 3 robots. Known: 18 non-wait actions (1 invalid), 3 communicate, redundant 3
# (s3 Lucy, s5 Alice, s5 Lucy), conflicts 3 (s1 stand pose, s2 book_0, s5 stand pose).
EPISODE = [
    step(1, "Alice", "navigate", "table_0", pose=0), step(1, "Bob", "wait"),
    step(1, "Lucy", "navigate", "table_0", pose=0),
    step(2, "Alice", "pick", "book_0"), step(2, "Bob", "communicate"), step(2, "Lucy", "pick", "book_0", ok=False),
    step(3, "Alice", "navigate", "table_1", ok=False), step(3, "Bob", "communicate"),
    step(3, "Lucy", "navigate", "table_0", pose=1),
    step(4, "Alice", "navigate", "table_1"), step(4, "Bob", "invalid"), step(4, "Lucy", "navigate", "table_2"),
    step(5, "Alice", "navigate", "table_0", pose=2), step(5, "Bob", "wait"),
    step(5, "Lucy", "navigate", "table_0", pose=2, ok=False),
    step(6, "Alice", "place", "book_0", "tray_0"), step(6, "Bob", "place", "cup_0", "tray_0"), step(6, "Lucy", "move"),
    step(7, "Alice", "open", "fridge_0"), step(7, "Bob", "communicate"), step(7, "Lucy", "wait"),
]

CALLS = [
    *({"stage": "SD", "robot": r, "step": 0, "tokens_in": 100, "tokens_out": 20} for r in TYPES),
    {"stage": "LE", "robot": "Alice", "step": 0, "tokens_in": 200, "tokens_out": 10},
    {"stage": "HMRC", "robot": "Alice", "step": 1, "tokens_in": 1000, "tokens_out": 50},
    {"stage": "HMRC", "robot": "Lucy", "step": 1, "tokens_in": 900, "tokens_out": 40},
]


def test_action_steps_exclude_wait_only():
    assert action_steps(EPISODE) == 18
    assert action_steps([step(1, "Bob", "wait"), step(2, "Bob", "wait")]) == 0
    assert action_steps([step(1, "Bob", "invalid"), step(2, "Bob", "communicate")]) == 2


def test_communication_cost_is_per_robot():
    assert communication_cost(EPISODE, 3) == pytest.approx(1.0)
    assert communication_cost(EPISODE, 2) == pytest.approx(1.5)
    # an invalid reply is not a communicate action
    assert communication_cost([step(1, "Bob", "invalid", action="communicate(hello")], 1) == 0.0
    with pytest.raises(ValueError, match="n_robots"):
        communication_cost(EPISODE, 0)


def test_redundant_navigation():
    assert redundant_actions(EPISODE) == 3
    # only a successful earlier visit makes a later navigate redundant; other robots' visits do not count
    assert redundant_actions([step(1, "Alice", "navigate", "t", ok=False), step(2, "Alice", "navigate", "t"),
                              step(2, "Lucy", "navigate", "t")]) == 0
    # same step is not "earlier"; pick at a visited place is not a navigate
    assert redundant_actions([step(1, "Alice", "navigate", "t"), step(2, "Alice", "pick", "x"),
                              step(3, "Alice", "navigate", "t", pose=1), step(4, "Alice", "navigate", "t")]) == 2
    # records out of order are sorted by step
    assert redundant_actions([step(3, "Alice", "navigate", "t"), step(1, "Alice", "navigate", "t")]) == 1


def test_conflicting_actions():
    assert conflicting_actions(EPISODE) == 3
    # three robots on one object in one step: one conflict
    three = [step(1, r, "pick", "cup_0") for r in TYPES]
    assert conflicting_actions(three) == 1
    # different steps, different stand poses, wait / communicate / move / invalid never conflict
    none = [step(1, "Alice", "pick", "cup_0"), step(2, "Lucy", "pick", "cup_0"),
            step(3, "Alice", "navigate", "t", pose=0), step(3, "Lucy", "navigate", "t", pose=1),
            step(4, "Alice", "communicate"), step(4, "Bob", "communicate"), step(5, "Alice", "wait"),
            step(5, "Bob", "wait"), step(6, "Alice", "move"), step(6, "Lucy", "move"),
            step(7, "Alice", "invalid"), step(7, "Lucy", "invalid")]
    assert conflicting_actions(none) == 0
    # pick vs place of the same object conflict; two opens of one container conflict
    assert conflicting_actions([step(1, "Alice", "pick", "b"), step(1, "Lucy", "place", "b", "tray_0"),
                                step(2, "Alice", "open", "fridge_0"), step(2, "Lucy", "open", "fridge_0")]) == 2


def test_stage_usage_counts_every_call_and_sums_in_and_out():
    u = stage_usage(CALLS)
    assert u["calls_SD"] == 3 and u["tokens_SD"] == 360
    assert u["calls_LE"] == 1 and u["tokens_LE"] == 210
    assert u["calls_HMRC"] == 2 and u["tokens_HMRC"] == 1990
    for st in ("TALB", "GD", "LP"):
        assert u[f"calls_{st}"] == 0 and u[f"tokens_{st}"] == 0
    assert u["calls_total"] == 6 and u["tokens_total"] == 2560
    assert len(u) == 14


def test_episode_metrics_row():
    row = episode_metrics(EPISODE, CALLS, n_robots=3, success=False, ps=0.5, ts=7, max_steps=30)
    expected = dict(success=False, ps=0.5, ts=7, n_robots=3, as_total=18, as_per_robot=6.0, cc=1.0, redundant=3,
                    conflicting=3, invalid_actions=1, calls_total=6, tokens_total=2560, tokens_HMRC=1990)
    for k, v in expected.items():
        assert row[k] == pytest.approx(v), k


@pytest.mark.parametrize("bad, match", [
    ({"ps": 1.5}, "ps"), ({"ts": 31}, "ts"), ({"n_robots": 0}, "n_robots"), ({"max_steps": 5}, "ts"),
])
def test_episode_metrics_bad_episode_fields(bad, match):
    kw = dict(n_robots=3, success=True, ps=1.0, ts=7, max_steps=30) | bad
    with pytest.raises(ValueError, match=match):
        episode_metrics(EPISODE, CALLS, **kw)


def test_episode_metrics_step_beyond_max_steps():
    with pytest.raises(ValueError, match="max_steps"):
        episode_metrics(EPISODE, [], n_robots=3, success=True, ps=1.0, ts=5, max_steps=5)


def test_bad_records_name_field_and_allowed_values():
    with pytest.raises(ValueError, match=r"stage 'XX' not allowed; allowed: SD, TALB, LE, HMRC, GD, LP"):
        stage_usage([{"stage": "XX", "robot": "Bob", "step": 1, "tokens_in": 1, "tokens_out": 1}])
    with pytest.raises(ValueError, match="missing field.*tokens_out"):
        stage_usage([{"stage": "SD", "robot": "Bob", "step": 1, "tokens_in": 1}])
    with pytest.raises(ValueError, match="tokens_in"):
        stage_usage([{"stage": "SD", "robot": "Bob", "step": 1, "tokens_in": -1, "tokens_out": 1}])
    bad = dict(EPISODE[0], name="jump")
    with pytest.raises(ValueError, match=r"name 'jump' not allowed; allowed: navigate, .*invalid"):
        action_steps([bad])
    with pytest.raises(ValueError, match=r"type 'Robo' not allowed; allowed: MoMa, Ma, Mo, UAV"):
        redundant_actions([dict(EPISODE[0], type="Robo")])
    rec = dict(EPISODE[0])
    del rec["ok"]
    with pytest.raises(ValueError, match="missing field.*ok"):
        conflicting_actions([rec])
    with pytest.raises(ValueError, match="t must"):
        action_steps([dict(EPISODE[0], t=0)])


def election_frame():
    rows = [(1, False, "MoMa", "Ma-MoMa")] * 4 + [(1, False, "Ma", "Ma-MoMa"), (1, False, "UAV", "Ma-UAV"),
                                                   (2, False, "UAV", "Ma-UAV"), (2, False, "Ma", "Ma-UAV"),
                                                   (3, False, "MoMa", "Ma-MoMa-UAV"), (3, True, "UAV", "Ma-MoMa-UAV")]
    return pd.DataFrame(rows, columns=["election_rounds", "referee", "leader_type", "team"])


def test_election_summary_shares_and_leaders():
    s = election_summary(election_frame())
    assert s.n == 10
    assert s.first_round == pytest.approx(0.6)
    assert s.within_two == pytest.approx(0.8)
    assert s.referee == pytest.approx(0.1)
    assert s.rounds["count"].tolist() == [6, 2, 1, 1]
    assert s.rounds["share"].sum() == pytest.approx(1.0)
    assert list(s.leaders.index) == ["Ma-MoMa", "Ma-UAV", "Ma-MoMa-UAV"]
    assert list(s.leaders.columns) == ["MoMa", "Ma", "UAV"]
    assert s.leaders.loc["Ma-MoMa", "MoMa"] == 4
    assert s.leader_shares.loc["Ma-MoMa", "MoMa"] == pytest.approx(0.8)
    assert s.leader_shares.loc["Ma-UAV", "UAV"] == pytest.approx(2 / 3)
    assert s.leader_shares.sum(axis=1).tolist() == pytest.approx([1.0, 1.0, 1.0])


def test_election_summary_bad_input():
    with pytest.raises(ValueError, match="missing column.*referee"):
        election_summary(election_frame().drop(columns="referee"))
    with pytest.raises(ValueError, match="election_rounds"):
        election_summary(election_frame().assign(election_rounds=0))
    with pytest.raises(ValueError, match="referee"):
        election_summary(election_frame().assign(referee="yes"))
