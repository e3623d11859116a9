"""Our generated suite: balance, placement rules, determinism, round trip, oracle solvability."""

from __future__ import annotations

import collections
import functools
import json

import pytest

from collablab.studies.mecobench import OracleTeam
from collablab.studies.mecobench import EpisodeConfig, run_episode
from collablab.studies.mecobench.templates import TEMPLATES
from collablab.world.catalog import TASK_OBJECTS
from collablab.studies.mecobench import PRIORS, dump_tasks, load_tasks, task_from_record
from collablab.studies.mecobench import generate_suite


@functools.lru_cache(maxsize=None)
def suite(seed: int = 0) -> tuple[dict, ...]:
    return tuple(generate_suite(seed))


def test_suite_has_192_balanced_cases():
    recs = suite()
    assert len(recs) == 192
    par = [r for r in recs if r["structure"] == "parallel"]
    seq = [r for r in recs if r["structure"] == "sequential"]
    assert len(par) == len(seq) == 96
    cells = collections.Counter((r["task_name"], r["goal_item_total"]) for r in par)
    assert len(cells) == 8 * 6 and set(cells.values()) == {2}
    assert {r["goal_item_total"] for r in par} == set(range(2, 8))
    assert len({r["env_id"] for r in par}) == 8
    assert {t.name for t in TEMPLATES} == {r["task_name"] for r in par}
    assert len(TASK_OBJECTS) == 25 and all(o.appearance for o in TASK_OBJECTS.values())


def test_placement_rules():
    for r in suite()[::2]:
        task = task_from_record(r)
        target = task.goal[0].target_id
        edges = r["init_graph"]["edges"]
        assert not any(e["to_id"] == target and e["relation_type"] in ("ON", "INSIDE") for e in edges), \
            "nothing starts on the reserved goal location"
        for p in task.goal:
            n = len(task.scene.class_ids(p.obj_class))
            extra = 1 if TASK_OBJECTS[p.obj_class].large else 2
            assert p.count <= n <= p.count + extra
        assert r["goal_item_total"] == task.n_subgoals


def test_sequential_zones_and_handover_chain():
    for r in suite()[1::2]:
        task = task_from_record(r)
        zones = task.allowed_rooms
        assert zones is not None and set(zones) == {0, 1}
        assert not set(zones[0]) & set(zones[1]) and set(zones[0]) | set(zones[1]) == set(task.scene.rooms)
        goal_room = task.scene.room_of(task.goal[0].target_id)
        assert goal_room in zones[1]
        (link,) = task.handover_chain
        door = task.scene.door(link.door_id)
        assert set(door.rooms) == set(link.room_pair_ids)
        assert link.room_pair_ids[0] in zones[0] and link.room_pair_ids[1] in zones[1]
        assert task.required_handover_count >= 1
        assert task.init_room_ids[0] in zones[0] and task.init_room_ids[1] in zones[1]


def test_prior_variants_differ_as_specified():
    task = task_from_record(suite()[0])
    texts = {p: task.goal_text(p) for p in PRIORS}
    assert "Possible locations" in texts["full"] and "Appearance" in texts["full"]
    assert "Possible locations" in texts["no_appearance"] and "Appearance" not in texts["no_appearance"]
    assert "Possible locations" not in texts["no_location"] and "Appearance" in texts["no_location"]
    assert "Possible locations" not in texts["none"] and "Appearance" not in texts["none"]
    n_true = texts["full"].count("One ")
    n_noisy = texts["noisy"].count("One ")
    assert n_noisy - n_true == max(1, round(0.3 * n_true))


def test_same_seed_same_bytes_other_seed_differs(tmp_path):
    a = json.dumps(generate_suite(0, limit=6))
    b = json.dumps(generate_suite(0, limit=6))
    c = json.dumps(generate_suite(1, limit=6))
    assert a == b and a != c
    dump_tasks(list(suite()), tmp_path / "x.json")
    dump_tasks(list(generate_suite(0)), tmp_path / "y.json")
    assert (tmp_path / "x.json").read_bytes() == (tmp_path / "y.json").read_bytes()


def test_round_trip_through_the_mecobench_loader(tmp_path):
    path = tmp_path / "suite.json"
    dump_tasks(list(suite()[:8]), path)
    tasks = load_tasks(path)
    for r, t in zip(suite()[:8], tasks):
        assert t.task_id == r["task_id"] and t.structure == r["structure"]
        assert {p.key: p.count for p in t.goal} == r["task_goal"]["0"]


@pytest.mark.slow
def test_oracle_solves_every_case_within_budget():
    failures = []
    for r in suite():
        task = task_from_record(r)
        sizes = (1, 2) if task.structure == "parallel" else (2,)
        for n in sizes:
            ep = run_episode(task, OracleTeam(), EpisodeConfig(n_agents=n))["episode"]
            if not ep["success"]:
                failures.append((task.task_id, n, ep["cr"]))
    assert failures == []
