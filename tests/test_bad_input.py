"""Bad task files and parameters fail before any episode, naming the field."""

from __future__ import annotations

import copy
import functools
import json

import pytest

from collablab.studies.mecobench import OracleTeam
from collablab.studies.mecobench import EpisodeConfig, run_episode
from collablab.studies.mecobench import TaskError, load_tasks, task_from_record
from collablab.studies.mecobench import generate_suite
from collablab.world.household import Household


@functools.lru_cache(maxsize=None)
def _records() -> tuple[dict, ...]:
    return tuple(generate_suite(0, limit=1))


def rec(i: int = 0) -> dict:
    return copy.deepcopy(_records()[i])


def test_unknown_class_in_goal():
    r = rec()
    key = next(iter(r["task_goal"]["0"]))
    target = key.rsplit("_", 1)[1]
    for g in r["task_goal"].values():
        g[f"on_unicorn_{target}"] = 1
    with pytest.raises(TaskError, match=r"task_goal\['on_unicorn_\d+'\].*unicorn"):
        task_from_record(r)


def test_malformed_goal_key():
    r = rec()
    for g in r["task_goal"].values():
        g["beside_cupcake_1"] = 1
    with pytest.raises(TaskError, match="beside_cupcake_1.*relation"):
        task_from_record(r)


def test_missing_room():
    r = rec()
    r["init_room_ids"] = [9999]
    with pytest.raises(TaskError, match=r"init_room_ids\[0\]"):
        task_from_record(r)
    r = rec(1)
    r["room_constraints"]["agents"]["1"]["allowed_room_ids"] = [9999]
    with pytest.raises(TaskError, match="allowed_room_ids"):
        task_from_record(r)
    r = rec()
    r["department_topology"] = "kitchen--door(5)--garage"
    with pytest.raises(TaskError, match="department_topology.*garage"):
        task_from_record(r)


def test_goal_on_a_non_surface():
    r = rec()
    door = next(n["id"] for n in r["init_graph"]["nodes"] if n["class_name"] == "door")
    for g in r["task_goal"].values():
        g.clear()
        g[f"on_cupcake_{door}"] = 1
    with pytest.raises(TaskError, match="not a surface"):
        task_from_record(r)


@pytest.mark.parametrize("n_agents", [0, -1])
def test_team_size_below_one(n_agents):
    task = task_from_record(rec())
    with pytest.raises(TaskError, match="n_agents"):
        run_episode(task, OracleTeam(), EpisodeConfig(n_agents=n_agents))


def test_budget_below_team_size_and_unknown_prior():
    task = task_from_record(rec())
    with pytest.raises(TaskError, match="budget"):
        run_episode(task, OracleTeam(), EpisodeConfig(n_agents=3, budget=2))
    with pytest.raises(TaskError, match="prior.*allowed"):
        run_episode(task, OracleTeam(), EpisodeConfig(n_agents=1, prior="psychic"))


def test_sequential_task_needs_every_zone_staffed():
    task = task_from_record(rec(1))
    with pytest.raises(TaskError, match=r"n_agents: .*(at least|exactly) 2 agents"):
        run_episode(task, OracleTeam(), EpisodeConfig(n_agents=1))
    with pytest.raises(TaskError, match=r"n_agents: .*exactly 2 agents, got 1; allowed: 2"):
        task.check_team(1)


def test_bad_structure_and_file(tmp_path):
    task = task_from_record(rec())
    with pytest.raises(ValueError, match="structure.*allowed: parallel, sequential"):
        Household(task.scene, 1, task.init_room_ids, task.goal, structure="circular")
    p = tmp_path / "broken.json"
    p.write_text("{not json")
    with pytest.raises(TaskError, match="broken.json"):
        load_tasks(p)
    r = rec()
    r["init_graph"]["nodes"][5]["properties"] = ["FLYING"]
    p.write_text(json.dumps([r]))
    (task,) = load_tasks(p)
    with pytest.raises(ValueError, match="unknown property 'FLYING'"):
        run_episode(task, OracleTeam(), EpisodeConfig(n_agents=1))


@pytest.mark.parametrize("key,value", [("seed", "x"), ("seed", 1.5), ("seed", True), ("n_agents", True),
                                       ("n_agents", 2.0), ("budget", "lots"), ("budget", 0), ("suite_seed", "a")])
def test_spec_values_name_their_key(key, value):
    from collablab.studies.mecobench import spec

    with pytest.raises(ValueError, match=rf"^{key}: must be an integer >= \d"):
        spec.validate({"task_id": "cl000-p", key: value})


@pytest.mark.parametrize("n", [0, 97, 10000, True, "3"])
def test_n_tasks_beyond_the_suite_is_refused_not_capped(n):
    from collablab.studies.mecobench.grids import task_ids

    with pytest.raises(ValueError, match=r"^n_tasks: must be an integer from 1 to 96 \(the parallel tasks of suite\)"):
        task_ids("parallel", n)
    assert len(task_ids("parallel", 96)) == 96
