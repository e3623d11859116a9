"""Real third-party data from ../shared/data (skipped when absent)."""

from __future__ import annotations

import json

import pytest
from conftest import shared_path

from collablab.studies.mecobench import OracleTeam
from collablab.studies.mecobench import EpisodeConfig, make_world, run_episode
from collablab.studies.mecobench.templates import LEGAL_CONTAINERS, LEGAL_SURFACES
from collablab.world.catalog import FURNITURE, TASK_OBJECTS
from collablab.studies.mecobench import load_tasks
from collablab.world.actions import Action
from collablab.world.goals import parse_goal
from collablab.world.household import Household
from collablab.world.scene import load_virtualhome_graph


def test_mecobench_example_tasks_load_and_the_oracle_solves_them():
    tasks = load_tasks(shared_path("mecobench", "parallel_5.json"))
    assert len(tasks) == 5
    for t in tasks:
        assert t.structure == "parallel" and t.scene.doors
        for n in (1, 2):
            ep = run_episode(t, OracleTeam(), EpisodeConfig(n_agents=n))["episode"]
            assert ep["success"], (t.task_id, n, ep["cr"])


def test_mecobench_task_runs_a_real_conflict():
    t = load_tasks(shared_path("mecobench", "parallel_5.json"))[2]
    w = make_world(t, 2, seed=3)
    w.step({0: Action("walk_to_room", room="kitchen"), 1: Action("walk_to_room", room="kitchen")})
    w.step({0: Action("walk", obj=374), 1: Action("walk", obj=374)})
    res = w.step({0: Action("grab", obj=374), 1: Action("grab", obj=374)})
    assert sorted(r.status for r in res) == ["conflict", "ok"]


@pytest.mark.parametrize("scene", [f"TestScene{i}_graph.json" for i in range(1, 8)])
def test_virtualhome_scenes_host_a_team(scene):
    sc = load_virtualhome_graph(shared_path("virtualhome", "example_graphs", scene))
    assert set(sc.room_names()) >= {"kitchen", "livingroom", "bedroom", "bathroom"}
    assert sc.doors, "doors come from BETWEEN edges"
    table = next(i for i in sc.class_ids("kitchentable"))
    grabbable = [i for i, n in sc.nodes.items() if "GRABBABLE" in n["properties"]
                 and sc.room_of(i) == sc.room_id("kitchen")]
    probe = Household(sc, 2, ["kitchen", "livingroom"], parse_goal({f"on_{sc.nodes[grabbable[0]]['class_name']}_{table}": 1}))
    obj = next(o for o in grabbable if probe.visible(0, o))
    w = Household(sc, 2, ["kitchen", "livingroom"], parse_goal({f"on_{sc.nodes[obj]['class_name']}_{table}": 1}))
    assert w.step({0: Action("walk", obj=obj)})[0].ok
    assert w.step({0: Action("grab", obj=obj)})[0].ok
    assert w.step({0: Action("walk", obj=table)})[0].ok
    assert w.step({0: Action("put_on", obj=obj, target=table)})[0].ok
    assert w.success()


def test_catalog_properties_agree_with_virtualhome_data():
    """Our object/furniture properties keep VirtualHome's defining ones."""
    seen: dict[str, set[str]] = {}
    graphs = [t["init_graph"] for t in json.loads(shared_path("mecobench", "parallel_5.json").read_text())]
    for g in graphs:
        for n in g["nodes"]:
            seen.setdefault(n["class_name"], set()).update(n["properties"])
    props = json.loads(shared_path("virtualhome", "resources", "properties_data.json").read_text())
    for name, o in TASK_OBJECTS.items():
        known = seen.get(name, set()) | set(props.get(name, []))
        if "GRABBABLE" in known:
            assert "GRABBABLE" in o.properties, name
    for name, f in FURNITURE.items():
        if name not in LEGAL_CONTAINERS + LEGAL_SURFACES:
            continue
        known = seen.get(name, set()) | set(props.get(name, []))
        for p in ("CONTAINERS", "CAN_OPEN"):
            if p in known and name not in ("nightstand", "desk", "stove"):
                assert p in f.properties, (name, p)
        if "SURFACES" in known and name in ("kitchentable", "coffeetable", "desk", "bathroomcounter", "kitchencounter"):
            assert "SURFACES" in f.properties, name
