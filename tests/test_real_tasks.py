"""Real MECoBench task files load and validate in full (issue 9, item 5).

Door-jamb aliases of topology doors, handover chains checked against zones and doors,
acceptable targets, ``num_agents`` and team sizes, rooms in no zone, infeasible goals named by
field, one bad record not stopping the others, and the "Bring your own scene" code of docs/household.md.
Real data from ../shared/data (mecobench.txt §2, appendix A.2, B.3); skipped when absent.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import shared_path

from collablab.studies.mecobench.spec import task_of, tasks_of
from collablab.studies.mecobench.tasks import (
    HandoverLink,
    TaskError,
    load_task_file,
    load_tasks,
    task_from_record,
)
from collablab.world.goals import GoalError, Predicate, validate_goal
from collablab.world.scene import ALIAS_RADIUS, doors_from_between_edges, load_virtualhome_graph, scene_from_mecobench

README = Path(__file__).resolve().parents[1] / "docs" / "household.md"


@functools.lru_cache(maxsize=None)
def _parallel() -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(shared_path("mecobench", "parallel_5.json").read_text()))


def parallel(task_id: int) -> dict[str, Any]:
    return copy.deepcopy(next(r for r in _parallel() if r["task_id"] == task_id))


def _xz(node: dict[str, Any]) -> tuple[float, float]:
    c = node["bounding_box"]["center"]
    return c[0], c[2]


def jamb_of(graph: dict[str, Any], door_id: int) -> int:
    """A doorjamb node of the raw graph standing where door ``door_id`` stands (within 10 cm)."""
    nodes = {n["id"]: n for n in graph["nodes"]}
    d = _xz(nodes[door_id])
    return next(n["id"] for n in graph["nodes"] if n["class_name"] == "doorjamb"
                and math.dist(_xz(n), d) < 0.1)


#: real parallel task -> (zone of agent 0, zone of agent 1, the door of the handover); the
#: bathroom is in no zone in each.
SEQUENTIAL = {
    1: (["kitchen", "bedroom"], ["livingroom"], ("kitchen", "livingroom")),
    2: (["kitchen", "bedroom"], ["livingroom"], ("bedroom", "livingroom")),
    3: (["kitchen", "livingroom"], ["bedroom"], ("kitchen", "bedroom")),
}


def _door_of(r: dict[str, Any], a: str, b: str) -> int:
    m = re.search(rf"{a}--door\((\d+)\)--{b}", r["department_topology"]) or \
        re.search(rf"{b}--door\((\d+)\)--{a}", r["department_topology"])
    assert m, (a, b, r["department_topology"])
    return int(m.group(1))


def sequential(task_id: int, zones: tuple[list[str], list[str]] | None = None,
               via: tuple[str, str] | None = None) -> dict[str, Any]:
    """A sequential record built from a real parallel one: two zones, a chain at a door jamb."""
    r = parallel(task_id)
    z0, z1, v = SEQUENTIAL[task_id]
    zones = zones or (z0, z1)
    via = via or v
    rooms = {n["class_name"]: n["id"] for n in r["init_graph"]["nodes"] if n["category"] == "Rooms"}
    door = _door_of(r, *via)
    r["task_id"] = f"{task_id}-seq"
    r["room_constraints"] = {
        "enabled": True,
        "agents": {str(i): {"allowed_room_ids": [rooms[n] for n in z]} for i, z in enumerate(zones)},
        "handover_chain": [{"from_agent": 0, "to_agent": 1, "door_id": jamb_of(r["init_graph"], door),
                            "room_pair_ids": [rooms[via[0]], rooms[via[1]]]}],
        "required_handover_count": 1,
    }
    r["init_room_ids"] = [rooms[zones[0][0]], rooms[zones[1][0]]]
    return r


# -- the published parallel file ------------------------------------------------------------------

def test_all_five_parallel_tasks_load_with_their_fields():
    tasks = load_tasks(shared_path("mecobench", "parallel_5.json"))
    assert [t.task_id for t in tasks] == ["0", "1", "2", "3", "4"]
    for t, r in zip(tasks, _parallel()):
        assert t.structure == "parallel" and t.allowed_rooms is None and t.handover_chain == []
        assert t.num_agents == r["num_agents"] == 2
        assert {p.key: p.count for p in t.goal} == r["task_goal"]["0"]
        assert all(p.targets == (p.target_id,) for p in t.goal)  # published: acceptable == [id]
        for n in (1, 2, 3, 5):
            t.check_team(n)  # num_agents is the default team size, not enforced


def test_door_jambs_stand_in_their_doors_as_measured():
    """Jambs of a topology door stand within 2 cm of it; other jambs at least 3.9 m from any."""
    scenes = [scene_from_mecobench(r) for r in _parallel()]
    scenes += [load_virtualhome_graph(shared_path("virtualhome", "example_graphs", f"TestScene{i}_graph.json"))
               for i in range(1, 8)]
    paired, unpaired = [], []
    for sc in scenes:
        top = {d.id for d in sc.doors}
        for nid, n in sc.nodes.items():
            if n["category"] != "Doors" or nid in top:
                continue
            dist, door = min((math.dist(_xz(n), _xz(sc.nodes[d])), d) for d in top)
            if sc.aliases.get(nid) == door:
                paired.append(dist)
                assert sc.canonical_door_id(nid) == door and sc.door(nid) == sc.door(door)
            else:
                assert nid not in sc.aliases
                unpaired.append(dist)
    assert len(paired) >= 30 and max(paired) <= 0.02
    assert min(unpaired) >= 3.9 > ALIAS_RADIUS


def test_duplicate_room_names_resolve_by_geometry():
    """TestScene3 has two bedrooms; a name-based topology still joins the right ones."""
    sc = load_virtualhome_graph(shared_path("virtualhome", "example_graphs", "TestScene3_graph.json"))
    truth = {d.id: set(d.rooms) for d in doors_from_between_edges(sc.graph)}
    record = {"task_id": "ts3", "init_graph": sc.graph, "department_topology": sc.topology_string()}
    assert len([r for r in sc.rooms.values() if r == "bedroom"]) == 2
    assert {d.id: set(d.rooms) for d in scene_from_mecobench(record).doors} == truth


# -- sequential records built from real ones ------------------------------------------------------

@pytest.mark.parametrize("task_id", sorted(SEQUENTIAL))
def test_sequential_record_loads_canonicalises_the_jamb_and_exposes_the_chain(task_id):
    r = sequential(task_id)
    rc = r["room_constraints"]
    jamb = rc["handover_chain"][0]["door_id"]
    z0, z1, (a, b) = SEQUENTIAL[task_id]
    door = _door_of(r, a, b)
    assert jamb != door
    t = task_from_record(r)
    rooms = {name: rid for rid, name in t.scene.rooms.items()}
    assert t.structure == "sequential" and t.num_agents == 2 and t.required_handover_count == 1
    assert t.allowed_rooms == {0: [rooms[n] for n in z0], 1: [rooms[n] for n in z1]}
    assert rooms["bathroom"] not in {x for z in t.allowed_rooms.values() for x in z}  # a room in no zone
    assert t.handover_chain == [HandoverLink(0, 1, door, (rooms[a], rooms[b]))]
    assert t.scene.canonical_door_id(jamb) == door and t.scene.door(jamb).id == door
    assert t.min_agents() == 2
    t.check_team(2)
    for n in (1, 3):
        with pytest.raises(TaskError, match=rf"n_agents: task {task_id}-seq is sequential with 2 zones.*"
                                            rf"exactly 2 agents, got {n}; allowed: 2"):
            t.check_team(n)


def test_room_pair_given_receiver_side_first_is_reordered():
    r = sequential(2)
    link = r["room_constraints"]["handover_chain"][0]
    link["room_pair_ids"] = link["room_pair_ids"][::-1]
    t = task_from_record(r)
    (hl,) = t.handover_chain
    assert hl.room_pair_ids == tuple(link["room_pair_ids"][::-1])
    assert hl.room_pair_ids[0] in t.allowed_rooms[0] and hl.room_pair_ids[1] in t.allowed_rooms[1]


@pytest.mark.parametrize("edit, match", [
    (lambda l, ids: l.update(door_id=99999),
     r"handover_chain\[0\]\.door_id: 99999 is not a door of this scene; allowed: .*aliases: .*->"),
    (lambda l, ids: l.update(from_agent=7),
     r"handover_chain\[0\]\.from_agent: 7 is not an agent of room_constraints.agents; allowed: 0, 1"),
    (lambda l, ids: l.update(to_agent=0), r"handover_chain\[0\]\.to_agent: 0 is also from_agent; allowed: 1"),
    (lambda l, ids: l.update(room_pair_ids=[ids["kitchen"], ids["livingroom"]]),
     r"handover_chain\[0\]\.room_pair_ids: .* are not the rooms door 372 joins \(door_id \d+ stands in door 372\); "
     r"allowed: .* in either order"),
    (lambda l, ids: l.update(room_pair_ids=[ids["bedroom"]]), r"handover_chain\[0\]\.room_pair_ids: expected"),
])
def test_bad_handover_links_name_the_field(edit, match):
    r = sequential(2)
    ids = {n["class_name"]: n["id"] for n in r["init_graph"]["nodes"] if n["category"] == "Rooms"}
    edit(r["room_constraints"]["handover_chain"][0], ids)
    with pytest.raises(TaskError, match=r"task 2-seq: room_constraints\." + match):
        task_from_record(r)


def test_handover_door_sides_must_be_in_the_agents_zones():
    # both agents' zones on one side of door 372 would make the link impossible
    r = sequential(2, zones=(["kitchen"], ["livingroom", "bedroom"]))
    with pytest.raises(TaskError, match=r"room_pair_ids: one room must be in from_agent 0's zone \[kitchen \(11\)\]"):
        task_from_record(r)


def _add_cupcake(r: dict[str, Any], nid: int, edges: list[tuple[str, int]]) -> None:
    r["init_graph"]["nodes"].append({"id": nid, "class_name": "cupcake", "category": "Food",
                                     "properties": ["GRABBABLE", "MOVABLE"], "states": []})
    r["init_graph"]["edges"] += [{"from_id": nid, "relation_type": rel, "to_id": to} for rel, to in edges]


def test_objects_lying_in_a_room_count_and_unreachable_ones_are_named():
    """An object ON a floor node or only INSIDE a room is legal; objects in no zone do not count."""
    r = sequential(2)
    ids = {n["class_name"]: n["id"] for n in r["init_graph"]["nodes"] if n["category"] == "Rooms"}
    floor = next(e["from_id"] for e in r["init_graph"]["edges"] if e["relation_type"] == "INSIDE"
                 and e["to_id"] == ids["bedroom"] and any(n["id"] == e["from_id"] and n["class_name"] == "floor"
                                                          for n in r["init_graph"]["nodes"]))
    _add_cupcake(r, 9001, [("INSIDE", ids["livingroom"])])
    _add_cupcake(r, 9002, [("ON", floor)])
    key = "on_cupcake_274"
    for g in r["task_goal"].values():
        g[key] = 4  # two real cupcakes on the kitchentable + the two lying in rooms
    t = task_from_record(r)
    assert t.scene.room_of(9001) == ids["livingroom"] and t.scene.room_of(9002) == ids["bedroom"]
    _add_cupcake(r, 9003, [("INSIDE", ids["bathroom"])])
    for g in r["task_goal"].values():
        g[key] = 5
    with pytest.raises(TaskError, match=re.escape(
            f"task 2-seq: task_goal['{key}']: needs 5 cupcake(s) in rooms some agent may enter; found 4 "
            f"(others are in bathroom ({ids['bathroom']}), which is in no zone")):
        task_from_record(r)
    r2 = parallel(2)  # parallel: every room allowed, the bathroom's cupcake counts
    _add_cupcake(r2, 9003, [("INSIDE", ids["bathroom"])])
    for g in r2["task_goal"].values():
        g[key] = 3
    task_from_record(r2)


def test_goal_target_in_no_zone_is_rejected():
    r = sequential(2, zones=(["kitchen"], ["bedroom"]), via=("kitchen", "bedroom"))
    with pytest.raises(TaskError, match=r"task 2-seq: task_goal\['on_juice_274'\]: no target is in a room some "
                                        r"agent may enter: coffeetable \(274\) in livingroom \(273\), which is in "
                                        r"no zone; rooms in zones: bedroom \(215\) and kitchen \(11\)"):
        task_from_record(r)


def test_num_agents_must_agree_with_the_zones():
    r = sequential(2)
    r["num_agents"] = 3
    with pytest.raises(TaskError, match=r"task 2-seq: num_agents: 3 disagrees with the 2 zones of "
                                        r"room_constraints.agents; allowed: 2"):
        task_from_record(r)
    r["num_agents"] = "two"
    with pytest.raises(TaskError, match="num_agents: expected an integer"):
        task_from_record(r)
    p = parallel(0)
    p["num_agents"] = 0
    with pytest.raises(TaskError, match=r"num_agents: 0 is not allowed; allowed: an integer >= 1"):
        task_from_record(p)
    p["num_agents"] = 5
    t = task_from_record(p)
    assert t.num_agents == 5
    t.check_team(1)
    for bad in (0, -1, "2", 2.0, True):
        with pytest.raises(TaskError, match=r"n_agents: .* is not allowed; allowed: an integer >= 1"):
            t.check_team(bad)  # type: ignore[arg-type]


# -- acceptable targets ---------------------------------------------------------------------------

def _surfaces(r: dict[str, Any], room: str, but: int) -> list[int]:
    sc = scene_from_mecobench(r)
    rid = sc.room_id(room)
    return [i for i, n in sorted(sc.nodes.items()) if i != but
            and "SURFACES" in n["properties"] and sc.room_of(i) == rid and n["category"] == "Furniture"]


def test_acceptable_targets_from_goal_targets_and_options():
    r = parallel(2)  # goal on coffeetable 274; its goal_targets entry names class juice only
    a, b, c = _surfaces(r, "livingroom", but=274)[:3]
    r["goal_targets"][0]["acceptable_target_ids"] = [274, a]
    t = task_from_record(r)
    assert all(p.targets == (274, a) and p.key.endswith("_274") for p in t.goal)  # id match applies to all
    r["goal_targets"].append({"id": 274, "goal_object_class": "wine", "acceptable_target_ids": [b]})
    r["goal_target_options"] = {"on_apple_274": [str(c)], "274": [{"id": b}]}
    goal = {p.obj_class: p for p in task_from_record(r).goal}
    assert goal["juice"].targets == (274, a, b)      # its own entry, then the target-id option
    assert goal["wine"].targets == (274, b)          # a class-specific entry wins over juice's
    assert goal["apple"].targets == (274, a, b, c)   # no entry of its class: every entry for 274
    assert goal["apple"].alternatives == (a, b, c) and goal["apple"].key == "on_apple_274"


@pytest.mark.parametrize("options, match", [
    (["on_juice_274"], r"goal_target_options: expected a mapping from a goal key"),
    ({"on_unicorn_274": [1]}, r"goal_target_options\['on_unicorn_274'\]: not a goal key or goal target id; "
                              r"allowed: on_juice_274, .*, 274"),
    ({"274": 380}, r"goal_target_options\['274'\]: expected a list of target ids"),
    ({"274": ["sofa"]}, r"goal_target_options\['274'\]\[0\]: expected an integer"),
    ({"on_wine_274": [99999]}, r"goal_target_options\['on_wine_274'\]\[0\]: acceptable target for "
                               r"'on_wine_274': 99999 is not a node of the scene"),
])
def test_bad_goal_target_options_name_the_field(options, match):
    r = parallel(2)
    r["goal_target_options"] = options
    with pytest.raises(TaskError, match=r"task 2: " + match):
        task_from_record(r)


def test_bad_acceptable_target_in_goal_targets_is_named():
    r = parallel(2)
    door = next(n["id"] for n in r["init_graph"]["nodes"] if n["class_name"] == "door")
    r["goal_targets"][0]["acceptable_target_ids"] = [274, door]
    with pytest.raises(TaskError, match=rf"goal_targets\[0\]\.acceptable_target_ids\[1\]: acceptable target "
                                        rf"for 'on_juice_274': door \({door}\) is not a surface"):
        task_from_record(r)


def test_validate_goal_checks_every_alternative():
    sc = scene_from_mecobench(parallel(2))
    door = sc.class_ids("door")[0]
    validate_goal(sc, [Predicate("on", "juice", 274, 1)])
    with pytest.raises(GoalError, match=rf"task_goal\['on_juice_274'\]: acceptable target door \({door}\) "
                                        rf"is not a surface"):
        validate_goal(sc, [Predicate("on", "juice", 274, 1, alternatives=(door,))])


# -- a file with bad records ----------------------------------------------------------------------

def _mixed_file(tmp_path: Path) -> Path:
    good_seq = sequential(2)
    bad_door = sequential(1)
    bad_door["task_id"] = "bad-door"
    bad_door["room_constraints"]["handover_chain"][0]["door_id"] = 424242
    unreachable = sequential(3, zones=(["kitchen"], ["livingroom"]), via=("kitchen", "livingroom"))
    unreachable["task_id"] = "unreachable"
    bad_num = sequential(2)
    bad_num["task_id"] = "bad-num"
    bad_num["num_agents"] = 4
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps([parallel(0), good_seq, bad_door, unreachable, bad_num, "not a record"]))
    return path


def test_one_bad_task_does_not_stop_the_others(tmp_path):
    path = _mixed_file(tmp_path)
    tf = load_task_file(path)
    assert [t.task_id for t in tf.tasks] == ["0", "2-seq"]
    assert set(tf.rejected) == {"bad-door", "unreachable", "bad-num", "record[5]"}
    assert re.match(r"task bad-door: room_constraints\.handover_chain\[0\]\.door_id: 424242 is not a door .*allowed:",
                    tf.rejected["bad-door"])
    assert re.match(r"task unreachable: task_goal\['on_juice_318'\]: no target is in a room some agent may enter",
                    tf.rejected["unreachable"])
    assert tf.rejected["bad-num"].startswith("task bad-num: num_agents: 4 disagrees")
    assert tf.rejected["record[5]"] == "record[5]: expected a JSON object (a task record), got str"
    with pytest.warns(UserWarning, match=r"4 task\(s\) rejected: bad-door: .*door_id.* \| unreachable: .*"
                                         r"task_goal.* \| bad-num: .*num_agents"):
        assert [t.task_id for t in load_tasks(path)] == ["0", "2-seq"]


def test_a_spec_naming_a_rejected_task_fails_with_the_reason(tmp_path):
    source = str(_mixed_file(tmp_path))
    with pytest.warns(UserWarning, match="rejected"):
        assert sorted(tasks_of(source, 0)) == ["0", "2-seq"]
    spec = {"task_source": source, "suite_seed": 0}
    assert task_of({**spec, "task_id": "2-seq"}).structure == "sequential"
    with pytest.raises(ValueError, match=r"task_id: 'bad-door' in .*mixed.json was rejected: task bad-door: "
                                         r"room_constraints\.handover_chain\[0\]\.door_id"):
        task_of({**spec, "task_id": "bad-door"})
    with pytest.raises(ValueError, match=r"task_id: 'nope' is not in .*; e\.g\. 0, 2-seq"):
        task_of({**spec, "task_id": "nope"})


def test_a_file_of_only_bad_tasks_raises(tmp_path):
    r = sequential(2)
    r["num_agents"] = 9
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([r]))
    with pytest.raises(TaskError, match=r"bad.json: no task loads: task 2-seq: num_agents: 9"):
        load_task_file(path)
    path.write_text(json.dumps({"tasks": 3}))
    with pytest.raises(TaskError, match="bad.json: no task loads"):
        load_tasks(path)
    path.write_text("3")
    with pytest.raises(TaskError, match="expected a JSON list of task records"):
        load_tasks(path)


# -- README: "Bring your own scene" ---------------------------------------------------------------

def test_readme_bring_your_own_scene_runs():
    """The README's code, run as written on TestScene1 (only that it loads, runs and records)."""
    scene_file = shared_path("virtualhome", "example_graphs", "TestScene1_graph.json")
    text = README.read_text()
    section = text[text.index("## Bring your own scene"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]
    assert '"TestScene1_graph.json"' in code
    ns: dict[str, Any] = {"print": lambda *a, **k: None}
    exec(compile(code.replace('"TestScene1_graph.json"', repr(str(scene_file))), "README.md", "exec"), ns)
    for name in ("oracle", "heuristic"):
        out = ns[name]
        assert out["episode"]["task_id"] == "my-scene" and out["episode"]["n_agents"] == 2
        assert isinstance(out["steps"], list) and out["steps"], name
    assert ns["task"].structure == "parallel" and len(ns["task"].goal) == 2
