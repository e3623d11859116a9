"""The sequential shape of a parallel task and the step-use breakdown (issue 28; mecobench.txt §2
sequential zones, appendix B.3): the receiver in the target room only, the giver in the rooms of
the goal objects it must bring, one handover door; every step in one use."""

from __future__ import annotations

import pytest

from collablab.studies.mecobench.episode import EpisodeConfig, run_episode
from collablab.studies.mecobench.handover_shape import sequential_of
from collablab.studies.mecobench.oracle import OracleTeam
from collablab.studies.mecobench.spec import make_team, resolve
from collablab.studies.mecobench.step_use import USES, step_use
from collablab.studies.mecobench.suite import generate_suite
from collablab.studies.mecobench.tasks import task_from_record


@pytest.fixture(scope="module")
def parallel_records():
    return [r for r in generate_suite(limit=6) if r["structure"] == "parallel"]


def test_the_shape_confines_the_receiver_and_makes_every_far_unit_cross(parallel_records):
    shaped = 0
    for r in parallel_records:
        try:
            s = sequential_of(r)
        except ValueError as e:
            assert "no sequential shape" in str(e)
            continue
        shaped += 1
        task = task_from_record(s)
        assert task.structure == "sequential" and s["task_id"] == f"{r['task_id']}-seq"
        zones = {int(a): set(v["allowed_room_ids"]) for a, v in s["room_constraints"]["agents"].items()}
        target_room = task.scene.room_of(task.goal[0].target_id)
        assert zones[1] == {target_room} and target_room not in zones[0]
        chain = s["room_constraints"]["handover_chain"][0]
        giver_room, receiver_room = chain["room_pair_ids"]
        assert receiver_room == target_room and giver_room in zones[0] and s["init_room_ids"] == [giver_room, target_room]
        # each goal unit not already in the target room crosses the door
        near = {p.obj_class: sum(task.scene.room_of(i) == target_room for i in task.scene.class_ids(p.obj_class))
                for p in task.goal}
        assert s["room_constraints"]["required_handover_count"] == sum(max(0, p.count - near[p.obj_class])
                                                                      for p in task.goal) > 0
        ep = run_episode(task, OracleTeam(), EpisodeConfig(n_agents=2))["episode"]
        assert ep["success"] and ep["handover_failures"] == 0, s["task_id"]
    assert shaped >= len(parallel_records) // 2


def test_a_task_with_everything_in_the_target_room_has_no_shape(parallel_records):
    r = parallel_records[0]
    task = task_from_record(r)
    target_room = task.scene.room_of(task.goal[0].target_id)
    moved = dict(r, init_graph={**r["init_graph"], "edges": [
        e for e in r["init_graph"]["edges"] if not (e["relation_type"] == "INSIDE" and e["from_id"] in
                                                  {i for p in task.goal for i in task.scene.class_ids(p.obj_class)})]
        + [{"from_id": i, "to_id": target_room, "relation_type": "INSIDE"}
           for p in task.goal for i in task.scene.class_ids(p.obj_class)]})
    with pytest.raises(ValueError, match="no sequential shape"):
        sequential_of(moved)


def test_step_use_puts_each_step_in_one_use():
    steps = [
        {"action": "walk", "status": "ok", "obj_class": "cupcake", "target_class": None, "conflict": False},
        {"action": "walk", "status": "ok", "obj_class": "bookshelf", "target_class": None, "conflict": False},
        {"action": "walk_to_room", "status": "ok", "obj_class": None, "target_class": None, "conflict": False},
        {"action": "grab", "status": "ok", "obj_class": "cupcake", "target_class": None, "conflict": False},
        {"action": "grab", "status": "ok", "obj_class": "cupcake", "target_class": None, "conflict": True},
        {"action": "open", "status": "failed", "obj_class": "closet", "feedback": "<closet> (297) is already open",
         "conflict": False},
        {"action": "wait", "status": "ok", "conflict": False},
        {"action": "receive", "status": "ok", "feedback": "nobody handed you an object this step", "conflict": False},
        {"action": "walk_to_door", "status": "failed", "feedback": "you are already at door 150", "conflict": False},
        {"action": "handover", "status": "failed", "handover": "failed",
         "feedback": "agent 1 did not receive this step (it must use 'receive')", "conflict": False},
        {"action": "handover", "status": "ok", "handover": "ok", "feedback": "you handed <pudding> (339) to agent 1",
         "conflict": False},
        {"action": "receive", "status": "ok", "feedback": "you received <pudding> (339) from agent 0", "conflict": False},
        {"action": "walk_to_door", "status": "ok", "feedback": "you are at door 150", "conflict": False},
        {"action": "put_on", "status": "ok", "obj_class": "pudding", "target_class": "coffeetable", "conflict": False},
    ]
    got = step_use(steps, {"cupcake", "pudding"}, {"coffeetable"})
    assert list(got) == list(USES)
    assert got == {"conflict": 1, "handing over": 2, "waiting": 4, "failed": 1, "manipulating": 2, "walking": 2,
                   "searching": 2}


def test_step_use_covers_every_step_of_a_real_episode(parallel_records):
    s = next(sequential_of(r) for r in parallel_records if _has_shape(r))
    task = task_from_record(s)
    out = run_episode(task, make_team(resolve({"task_id": "t", "n_agents": 2, "profile": "medium", "seed": 0})),
                      EpisodeConfig(n_agents=2, seed=0))
    got = step_use(out["steps"], {p.obj_class for p in task.goal}, set())
    ep = out["episode"]
    done = ep["handover_attempts"] - ep["handover_failures"]
    assert sum(got.values()) == len(out["steps"]) and got["handing over"] == 2 * done > 0  # a handover and its receive


def _has_shape(r) -> bool:
    try:
        sequential_of(r)
        return True
    except ValueError:
        return False
