"""Shared fixtures: a tiny hand-built household and the path to ../shared/data."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from collablab.testing import comparable
from collablab.world.goals import parse_goal
from collablab.world.household import Household
from collablab.world.scene import Door, Scene

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def shared_path(*parts: str) -> Path:
    """A file under ../shared/data, or skip the test when it is absent."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"{p} not present (../shared/data is optional)")
    return p


#: (centre, size) of every node of the mini scene, metres, y up (VirtualHome's convention)
MINI_BOXES: dict[int, tuple[tuple[float, float, float], tuple[float, float, float]]] = {
    1: ((2.0, 1.25, 2.0), (4.0, 2.5, 4.0)), 2: ((6.0, 1.25, 2.0), (4.0, 2.5, 4.0)),
    3: ((4.0, 1.0, 2.0), (0.1, 2.0, 1.0)),
    10: ((0.5, 0.9, 0.5), (0.9, 1.8, 0.8)), 11: ((2.0, 0.4, 3.2), (1.2, 0.8, 0.8)),
    12: ((2.0, 0.45, 2.4), (0.5, 0.9, 0.5)), 13: ((6.0, 0.25, 2.0), (1.2, 0.5, 0.8)),
    14: ((3.4, 0.4, 0.5), (0.6, 0.85, 0.6)),
    20: ((0.5, 1.0, 0.5), (0.1, 0.25, 0.1)), 21: ((1.9, 0.85, 3.2), (0.1, 0.1, 0.1)),
    22: ((2.1, 0.85, 3.1), (0.1, 0.1, 0.1)), 23: ((2.2, 0.82, 3.3), (0.25, 0.03, 0.25)),
    24: ((6.1, 0.6, 2.0), (0.25, 0.15, 0.12)),
}


def _n(nid: int, cls: str, cat: str, props: list[str], states: list[str] | None = None) -> dict[str, Any]:
    c, s = MINI_BOXES[nid]
    return {"id": nid, "class_name": cls, "category": cat, "properties": props, "states": states or [],
            "bounding_box": {"center": list(c), "size": list(s)}}


def mini_scene() -> Scene:
    """kitchen(1) --door(3)-- livingroom(2); fridge with juice, table with cupcake/apple/plate.

    Rooms are 4 m squares; from the kitchen's centre the furniture is visible but the small
    objects on the table are not (they are 1.2 m away): an agent walks to the table to see them."""
    G = ["GRABBABLE", "MOVABLE"]
    nodes = [
        _n(1, "kitchen", "Rooms", []), _n(2, "livingroom", "Rooms", []),
        _n(3, "door", "Doors", ["CAN_OPEN"], ["OPEN"]),
        _n(10, "fridge", "Appliances", ["CAN_OPEN", "CONTAINERS"], ["CLOSED"]),
        _n(11, "kitchentable", "Furniture", ["SURFACES"]),
        _n(12, "chair", "Furniture", ["SITTABLE"]),
        _n(13, "coffeetable", "Furniture", ["SURFACES"]),
        _n(14, "dishwasher", "Appliances", ["CAN_OPEN", "CONTAINERS"], ["CLOSED"]),
        _n(20, "juice", "Food", G), _n(21, "cupcake", "Food", G), _n(22, "apple", "Food", G),
        _n(23, "plate", "Props", G + ["SURFACES"]), _n(24, "toy", "Props", G),
    ]
    inside = {3: 1, 10: 1, 11: 1, 12: 1, 13: 2, 14: 1, 20: 1, 21: 1, 22: 1, 23: 1, 24: 2}
    edges = [{"from_id": a, "relation_type": "INSIDE", "to_id": b} for a, b in inside.items()]
    edges += [{"from_id": 20, "relation_type": "INSIDE", "to_id": 10}]
    edges += [{"from_id": o, "relation_type": "ON", "to_id": 11} for o in (21, 22, 23)]
    edges += [{"from_id": 24, "relation_type": "ON", "to_id": 13}]
    edges += [{"from_id": 3, "relation_type": "BETWEEN", "to_id": r} for r in (1, 2)]
    return Scene(graph={"nodes": nodes, "edges": edges}, doors=[Door(3, (1, 2))], name="mini")


def mini_world(n_agents: int = 2, structure: str = "parallel", allowed: dict[int, list[int]] | None = None,
               rooms: list[int] | None = None, seed: int = 0,
               goal: dict[str, int] | None = None) -> Household:
    return Household(mini_scene(), n_agents, rooms or [1] * n_agents,
                     parse_goal(goal or {"on_cupcake_13": 1, "on_apple_13": 1}),
                     structure=structure, allowed_rooms=allowed, seed=seed)


@pytest.fixture
def world() -> Household:
    return mini_world()


def notebook_defaults(nb: Path) -> dict[str, Any]:
    """A notebook's parameters as its tagged cell sets them (what papermill and nbval run)."""
    import ast

    import papermill as pm

    return {k: ast.literal_eval(v["default"]) for k, v in pm.inspect_notebook(str(nb)).items()}


def free_port() -> int:
    """A loopback port nobody listens on now (a server may be started on it later)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (Linux /proc): what a kill -9 of a run must also take down."""
    parents: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                parents[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    found, frontier = set(), {pid}
    while frontier:
        frontier = {c for c, p in parents.items() if p in frontier} - found
        found |= frontier
    return found


def replay_comparable(rec: dict[str, Any]) -> dict[str, Any]:
    """An LLM episode's records without latency and cache status (what may differ between a
    live run and its replay from the cache)."""
    return comparable(rec)


# -- a small four-room flat with real boxes, as a MECoBench task file ---------------------------------------
#: (centre, size) of every node of the flat, metres, y up. livingroom (1) and kitchen (2) are 5 m
#: squares side by side, the bedroom (3) lies north of the living room and the bathroom (4), 3 m,
#: north of the kitchen; doors 5 (bedroom-bathroom), 6 (livingroom-bedroom), 7 (kitchen-livingroom).
#: From a room's centre the furniture (and the pillow, 0.87 m) is seen, the small objects are not:
#: the barsoap (0.15 m, seen within 0.96 m) and the boardgame (0.34 m, 2.18 m) on the desk 2.4 m
#: away, the mug on the kitchen table, the cellphone on the nightstand; the toothbrush is in the
#: closed dishwasher.
FLAT_BOXES: dict[int, tuple[tuple[float, float, float], tuple[float, float, float]]] = {
    1: ((2.5, 1.25, 2.5), (5.0, 2.5, 5.0)), 2: ((7.5, 1.25, 2.5), (5.0, 2.5, 5.0)),
    3: ((2.5, 1.25, 7.5), (5.0, 2.5, 5.0)), 4: ((6.5, 1.25, 6.5), (3.0, 2.5, 3.0)),
    5: ((5.0, 1.05, 6.5), (0.1, 2.1, 1.0)), 6: ((4.2, 1.05, 5.0), (1.0, 2.1, 0.1)),
    7: ((5.0, 1.05, 2.5), (0.1, 2.1, 1.0)),
    8: ((2.0, 0.205, 3.2), (1.28, 0.41, 1.22)), 9: ((2.0, 0.445, 4.4), (2.36, 0.89, 1.06)),
    10: ((1.1, 0.475, 0.6), (2.03, 0.95, 1.07)), 11: ((0.2, 0.525, 2.6), (0.38, 1.05, 1.18)),
    12: ((8.0, 0.51, 0.4), (0.97, 1.02, 0.79)), 13: ((9.5, 1.065, 0.4), (0.89, 2.13, 0.71)),
    14: ((7.5, 0.475, 3.5), (2.0, 0.95, 1.23)),
    15: ((1.5, 0.325, 8.75), (1.99, 0.65, 2.4)), 16: ((3.0, 0.24, 9.5), (0.75, 0.48, 0.75)),
    17: ((6.5, 0.48, 7.67), (2.86, 0.96, 0.65)), 18: ((7.55, 0.27, 5.5), (0.8, 0.54, 0.77)),
    26: ((1.5, 0.97, 0.55), (0.15, 0.04, 0.14)), 27: ((8.0, 0.5, 0.4), (0.1, 0.24, 0.03)),
    28: ((1.3, 0.55, 4.4), (0.87, 0.2, 0.77)), 29: ((0.6, 0.955, 0.6), (0.34, 0.01, 0.34)),
    30: ((7.2, 1.0, 3.6), (0.12, 0.1, 0.09)), 31: ((3.0, 0.485, 9.5), (0.13, 0.01, 0.06)),
}
FLAT_TOPOLOGY = "bedroom--door(5)--bathroom, livingroom--door(6)--bedroom, kitchen--door(7)--livingroom"
FLAT_TASK_IDS = {"parallel": "flat-p", "sequential": "flat-s"}


def _f(nid: int, cls: str, cat: str, props: list[str], states: list[str] | None = None) -> dict[str, Any]:
    c, s = FLAT_BOXES[nid]
    return {"id": nid, "class_name": cls, "category": cat, "prefab_name": f"test_{cls}", "properties": props,
            "states": states or [], "bounding_box": {"center": list(c), "size": list(s)}}


def flat_graph() -> dict[str, Any]:
    """The flat's graph (see :data:`FLAT_BOXES`); goal: barsoap (26, on the desk in the living
    room) and toothbrush (27, in the kitchen's dishwasher) on the bathroomcounter (17)."""
    G, C = ["GRABBABLE", "MOVABLE"], ["CAN_OPEN", "CONTAINERS"]
    nodes = [
        _f(1, "livingroom", "Rooms", []), _f(2, "kitchen", "Rooms", []), _f(3, "bedroom", "Rooms", []),
        _f(4, "bathroom", "Rooms", []),
        *(_f(d, "door", "Doors", ["CAN_OPEN"], ["OPEN"]) for d in (5, 6, 7)),
        _f(8, "coffeetable", "Furniture", ["SURFACES", "MOVABLE"]),
        _f(9, "sofa", "Furniture", ["SURFACES", "SITTABLE", "LIEABLE", "MOVABLE"]),
        _f(10, "desk", "Furniture", ["SURFACES", "MOVABLE"]),
        _f(11, "cabinet", "Furniture", C + ["SURFACES"], ["CLOSED"]),
        _f(12, "dishwasher", "Appliances", C + ["HAS_SWITCH"], ["CLOSED", "OFF"]),
        _f(13, "fridge", "Appliances", C + ["HAS_PLUG", "HAS_SWITCH"], ["CLOSED"]),
        _f(14, "kitchentable", "Furniture", ["SURFACES", "MOVABLE"]),
        _f(15, "bed", "Furniture", ["SURFACES", "SITTABLE", "LIEABLE"]),
        _f(16, "nightstand", "Furniture", C + ["SURFACES"], ["CLOSED"]),
        _f(17, "bathroomcounter", "Furniture", ["SURFACES"]),
        _f(18, "toilet", "Furniture", ["SITTABLE", "CAN_OPEN"], ["CLOSED"]),
        _f(26, "barsoap", "Props", G + ["CREAM"]), _f(27, "toothbrush", "Props", G + ["RECIPIENT"]),
        _f(28, "pillow", "Decor", G), _f(29, "boardgame", "Props", G + ["SURFACES"]),
        _f(30, "mug", "Props", G + ["RECIPIENT", "POURABLE"]),
        _f(31, "cellphone", "Props", G + ["HAS_PLUG", "HAS_SWITCH"]),
    ]
    room = {5: 4, 6: 3, 7: 2, 8: 1, 9: 1, 10: 1, 11: 1, 12: 2, 13: 2, 14: 2, 15: 3, 16: 3, 17: 4, 18: 4,
            26: 1, 27: 2, 28: 1, 29: 1, 30: 2, 31: 3}
    edges = [{"from_id": a, "relation_type": "INSIDE", "to_id": b} for a, b in room.items()]
    edges += [{"from_id": d, "relation_type": "BETWEEN", "to_id": r} for d, rs in ((5, (3, 4)), (6, (1, 3)),
                                                                                 (7, (2, 1))) for r in rs]
    edges += [{"from_id": 27, "relation_type": "INSIDE", "to_id": 12}]
    edges += [{"from_id": o, "relation_type": "ON", "to_id": t} for o, t in ((26, 10), (29, 10), (28, 9),
                                                                             (30, 14), (31, 16))]
    return {"nodes": nodes, "edges": edges}


def flat_records() -> list[dict[str, Any]]:
    """The flat's task in MECoBench's schema, parallel and sequential (``FLAT_TASK_IDS``).

    Parallel: agents start in the living room and the bedroom. Sequential: agent 0 keeps to the
    living room and kitchen (where both objects are), agent 1 to the bedroom and bathroom (the
    goal); agent 0 hands both over to agent 1 at door 6 (livingroom-bedroom)."""
    goal = {"on_barsoap_17": 1, "on_toothbrush_17": 1}
    soap_at = "One barsoap is on the desk, the desk is inside the livingroom"
    brush_at = "One toothbrush is inside the dishwasher, the dishwasher is inside the kitchen"
    soap_looks = " Appearance: Small rounded cream-coloured soap bar with an embossed oval logo."
    brush_looks = " Appearance: Slim blue plastic toothbrush with white bristles and a rubber grip."
    tail = "bathroomcounter is in bathroom."

    def text(soap_locs: list[str] | None, brush_locs: list[str] | None, desc: bool) -> str:
        soap, brush = "Find and put 1 barsoap on bathroomcounter.", "Find and put 1 toothbrush on bathroomcounter."
        if soap_locs is not None and brush_locs is not None:
            soap += " Possible locations: " + " / ".join(soap_locs) + "."
            brush += " Possible locations: " + " / ".join(brush_locs) + "."
        if desc:
            soap, brush = soap + soap_looks, brush + brush_looks
        return f"{soap};{brush};{tail}"

    noise = "One barsoap is on the nightstand, the nightstand is inside the bedroom"
    base: dict[str, Any] = {
        "task_name": "hygiene_to_bathroomcounter", "env_id": "flat", "init_graph": flat_graph(),
        "task_goal": {"0": goal, "1": goal}, "total_goal": goal, "goal_item_total": 2, "goal_item_kind_count": 2,
        "raw_goal": "Find and put 1 barsoap on bathroomcounter; Find and put 1 toothbrush on bathroomcounter;" + tail,
        "goal_with_desc": text(None, None, True),
        "goal_with_location": text([soap_at], [brush_at], False),
        "goal_with_location_and_desc": text([soap_at], [brush_at], True),
        "goal_with_location_noise": text([soap_at, noise], [brush_at], False),
        "goal_with_location_and_desc_noise": text([soap_at, noise], [brush_at], True),
        "num_agents": 2, "department_topology": FLAT_TOPOLOGY, "level": 1,
        "goal_targets": [{"id": 17, "class_name": "bathroomcounter", "goal_relation": "on", "room_id": 4,
                          "room_name": "bathroom", "acceptable_target_ids": [17]}],
    }
    par = {**base, "task_id": FLAT_TASK_IDS["parallel"], "structure": "parallel", "init_room_ids": [1, 3],
           "room_constraints": {"enabled": False}}
    seq = {**base, "task_id": FLAT_TASK_IDS["sequential"], "structure": "sequential", "init_room_ids": [2, 3],
           "room_constraints": {
               "enabled": True, "agents": {"0": {"allowed_room_ids": [1, 2]}, "1": {"allowed_room_ids": [3, 4]}},
               "handover_chain": [{"from_agent": 0, "to_agent": 1, "door_id": 6, "room_pair_ids": [1, 3]}],
               "required_handover_count": 2}}
    return [par, seq]


@pytest.fixture(scope="session")
def flat_tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A task file with :func:`flat_records` (both records load: checked here)."""
    from collablab.studies.mecobench.tasks import dump_tasks, load_task_file

    path = tmp_path_factory.mktemp("flat") / "flat_tasks.json"
    dump_tasks(flat_records(), path)
    loaded = load_task_file(path)
    assert not loaded.rejected and [t.task_id for t in loaded.tasks] == list(FLAT_TASK_IDS.values()), loaded.rejected
    return path


@pytest.fixture
def serve():
    """Start scripted OpenAI-compatible servers (``serve(handler)``); all are stopped afterwards."""
    from collablab.llm.fake_server import FakeOpenAIServer

    servers = []

    def start(script):
        srv = FakeOpenAIServer(script).start()
        servers.append(srv)
        return srv

    yield start
    for s in servers:
        s.stop()
