"""MCTS under DynaHMRC's dynamic variations (issue 26 item 5; dynahmrc.tex §4.3, §4.5,
tab:goal_exp ... tab:removal_exp): run_spec of the search at medium under CTO, IRZ, ANC and REC
applies the change at T and the search reads the changed world as the other methods do; IRZ's zones
are never in the search's world model (the paper's "only through textual feedback"), and
``mcts_learn_zones`` prunes a navigation once it failed with Navigation Failed (4)."""

from __future__ import annotations

import pytest

from collablab.studies.dynahmrc import spec as SP
from collablab.studies.dynahmrc.mcts import MCTSPlanner, belief_world, candidate_actions
from collablab.studies.dynahmrc.variations import Variation, plan_variation, update

BUDGET = {"method": "mcts", "mcts_iterations": 20, "mcts_max_sim_actions": 320, "T": 5}


def _run(**kw):
    return SP.run_spec({**BUDGET, **kw})


@pytest.mark.parametrize("variation,team", [("CTO", "Ma-MoMa"), ("IRZ", "Ma-MoMa-Mo"), ("ANC", "Ma-MoMa"),
                                            ("REC", "Ma-MoMa-UAV")])
def test_mcts_runs_under_every_variation_and_the_change_is_applied(variation, team):
    r = _run(kind="pack", team=team, variation=variation)
    e, steps = r["episode"], r["steps"]
    assert e["level"] == "medium" and e["variation"] == variation and e["events"] == [variation]
    names = {s["robot"] for s in steps}
    if variation == "ANC":  # the newcomer is a level of the joint action from T on
        assert e["team_after"] == "Ma-MoMa-UAV"
        new = [s for s in steps if s["type"] == "UAV"]
        assert new and min(s["t"] for s in new) == 5
    elif variation == "REC":  # the removed drone acts before T and never after
        assert e["team_after"] == "Ma-MoMa"
        uav = [s["t"] for s in steps if s["type"] == "UAV"]
        assert uav and max(uav) < 5
    else:
        assert e["team_after"] == team and len(names) == len(team.split("-"))


def _cto_world():
    task = SP.task_of(SP.resolve({"kind": "pack", "team": "Ma-MoMa", "variation": "CTO"}))
    plan = plan_variation(task, Variation("CTO", 5))
    return task, plan, SP.make_world(task)


def test_cto_new_targets_become_the_search_goal():
    task, plan, w = _cto_world()
    planner = MCTSPlanner(iterations=10, seed=0)
    for t in range(1, plan.step):  # the team explores before T
        w.step = t
        for name, text in planner.decide(w).items():
            planner.observe(w.execute(name, text))
            w.perceive()
    base = {w.layout.working_table, *w.receptacles}
    seen_before = set(planner.explored) - base
    assert seen_before  # places the team saw before the change
    assert update(w, plan, plan.step) is not None
    b, hidden = belief_world(w)
    assert b.targets == plan.targets_after != plan.targets_before
    planner.decide(w)
    assert planner._targets == plan.targets_after
    # seen-empty before T says nothing of a target that was not one then: those places are sampled again
    assert planner.explored - base <= {r.at for r in w.robots.values()}
    for h in hidden:
        assert set(planner._weights(b, hidden)[h][0]) >= seen_before - planner.explored


def _irz():
    s = SP.resolve({"kind": "pack", "team": "Ma-MoMa-Mo", "variation": "IRZ", "T": 1})
    task = SP.task_of(s)
    plan = plan_variation(task, SP.variation_of(s, task))
    w = SP.make_world(task)
    ev = update(w, plan, 1)
    return w, ev


def test_irz_zones_are_in_the_world_but_never_in_the_search_model():
    w, ev = _irz()
    assert ev.zones and any(w.restricted.values())
    b, _ = belief_world(w)
    assert not any(b.restricted.values())


def test_learn_zones_prunes_a_navigation_that_failed_with_kind_4():
    w, ev = _irz()
    name, room = ev.zones[0]
    place = next(h for h, p in w.layout.places.items() if p.room == room and p.stand_poses and
                 (w.robots[name].type.flies or not p.elevated))
    fb = w.execute(name, f"navigate({place}, stand_pose_0)")
    assert fb.kind == "navigation_failed_4"
    on, off = MCTSPlanner(learn_zones=True), MCTSPlanner()
    for p in (on, off):
        p.observe(fb)
    assert on.barred == {(name, place)} and not off.barred
    kw = dict(instructions=False)
    targets = lambda acts: {a.target for a in acts if a.name == "navigate"}  # noqa: E731
    assert place in targets(candidate_actions(w, name, **kw))
    assert place not in targets(candidate_actions(w, name, barred=on.barred, **kw))


def _repeats(steps):
    fails = [(s["robot"], s["target"]) for s in steps if s["kind"] == "navigation_failed_4"]
    return len(fails) - len(set(fails)), len(fails)


def test_the_paper_mcts_retries_a_barred_navigation_and_learn_zones_does_not():
    """§4.5: without pruning MCTS "repeatedly revisit[s] the same nodes"; with ``mcts_learn_zones``
    a (robot, place) navigation fails with kind 4 at most once."""
    paper = learn = 0
    for kind in ("sort", "sandwich"):  # measured: 3 and 16 retries without pruning, none with it
        paper += _repeats(_run(kind=kind, team="Ma-MoMa-UAV", variation="IRZ")["steps"])[0]
        rep, _ = _repeats(_run(kind=kind, team="Ma-MoMa-UAV", variation="IRZ", mcts_learn_zones=True)["steps"])
        assert rep == 0
        learn += rep
    assert paper > learn


def test_mcts_learn_zones_must_be_a_bool():
    with pytest.raises(ValueError, match="mcts_learn_zones"):
        SP.resolve({"method": "mcts", "mcts_learn_zones": "yes"})


def test_learn_zones_is_a_unit_of_its_own():
    """Two specs that differ only in ``mcts_learn_zones`` are two units (episode ids differ)."""
    base = {"method": "mcts", "team": "Ma-MoMa-UAV", "level": "medium", "variation": "IRZ", "kind": "pack",
            "mcts_iterations": 5, "mcts_max_sim_actions": 80, "max_steps": 3}
    a, b = SP.run_spec(base)["episode"]["unit"], SP.run_spec({**base, "mcts_learn_zones": True})["episode"]["unit"]
    assert a != b and "+learn_zones" in b and "+learn_zones" not in a
