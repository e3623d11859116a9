"""Shared fixtures: a tiny hand-built household and the path to ../shared/data."""

from __future__ import annotations

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


def replay_comparable(rec: dict[str, Any]) -> dict[str, Any]:
    """An LLM episode's records without latency and cache status (what may differ between a
    live run and its replay from the cache)."""
    return comparable(rec)
