"""MECoBench metric formulas (mecobench.txt §3.2, eq. 3) on hand-built episode records."""

from __future__ import annotations

import math

import pytest

from collablab.studies.mecobench import metrics as m


def ep(**kw):
    base = dict(success=False, completed=0, n_subgoals=4, progress=[0.0], credits={"0": 0, "1": 0},
                actions=10, conflict_actions=0, handover_attempts=0, handover_failures=0,
                spatial_errors=0, tokens=0, n_agents=2, budget=60)
    base.update(kw)
    return base


def test_sr_and_cr():
    eps = [ep(success=True, completed=4), ep(completed=1), ep(completed=2, n_subgoals=8)]
    assert m.success_rate(eps) == pytest.approx(1 / 3)
    assert m.completion_rate(eps) == pytest.approx((1 + 0.25 + 0.25) / 3)


def test_auc_by_hand():
    # 2 agents, budget 8 -> 4 team steps; CR 0, .5, 1 after steps 1, 2, finished early
    val = m.episode_auc([0.0, 0.5, 1.0], n_agents=2, budget=8)
    area = 2 * (0 + 0.5) / 2 + 2 * (0.5 + 1.0) / 2 + (8 - 4) * 1.0
    assert val == pytest.approx(area / 8) == pytest.approx(0.75)
    assert m.episode_auc([0.0] * 5, 2, 8) == 0.0
    assert m.episode_auc([1.0], 1, 60) == 1.0
    with pytest.raises(ValueError):
        m.episode_auc([0.0], 0, 60)


def test_dol_eq3():
    assert m.division_of_labor([3, 3]) == pytest.approx(1.0)
    assert m.division_of_labor([6, 0]) == pytest.approx(0.0)
    # s = (.5,.25,.25): (1 - .375) / (1 - 1/3) = 0.9375
    assert m.division_of_labor({"a": 2, "b": 1, "c": 1}) == pytest.approx(0.9375)
    assert math.isnan(m.division_of_labor([5]))
    assert math.isnan(m.division_of_labor([0, 0]))
    eps = [ep(credits={"0": 1, "1": 1}), ep(credits={"0": 2, "1": 0}), ep(credits={"0": 0, "1": 0})]
    assert m.dol(eps) == pytest.approx(0.5)


def test_car_hfr_spatial_tokens():
    eps = [ep(conflict_actions=2, actions=10, handover_attempts=4, handover_failures=1, spatial_errors=1,
              tokens=500),
           ep(conflict_actions=0, actions=20, tokens=100)]
    assert m.conflict_action_rate(eps) == pytest.approx((0.2 + 0.0) / 2)
    assert m.handover_failure_rate(eps) == pytest.approx(0.25)  # the case with no attempt is NA
    assert math.isnan(m.handover_failure_rate([ep()]))
    assert m.spatial_error_rate(eps) == pytest.approx((0.1 + 0) / 2)
    assert m.tokens_per_step(eps) == pytest.approx((50 + 5) / 2)
    s = m.summary(eps)
    assert s["n"] == 2 and set(s) >= {"SR", "CR", "AUC", "DOL", "CAR", "HFR", "SpatialErr", "TokensPerStep"}


def test_records_from_a_real_episode_feed_the_metrics():
    from conftest import mini_scene

    from collablab.studies.mecobench import OracleTeam
    from collablab.studies.mecobench import EpisodeConfig, run_episode
    from collablab.studies.mecobench import Task
    from collablab.world.goals import parse_goal

    task = Task("mini", "mini", mini_scene(), parse_goal({"on_cupcake_13": 1, "on_apple_13": 1}),
                "parallel", [1, 1], record={"goal_with_location_and_desc": "put things on the coffee table"})
    out = run_episode(task, OracleTeam(), EpisodeConfig(n_agents=2, budget=20))
    e = out["episode"]
    assert e["success"] and e["backend"] == "oracle"
    assert len(out["steps"]) == e["actions"] == 2 * e["team_steps"]
    assert e["progress"][0] == 0.0 and e["progress"][-1] == 1.0
    assert m.dol([e]) == pytest.approx(1.0)  # each agent placed one object
    assert 0 < m.auc([e]) < 1
