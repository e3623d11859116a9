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


def _n(nid: int, cls: str, cat: str, props: list[str], states: list[str] | None = None) -> dict[str, Any]:
    return {"id": nid, "class_name": cls, "category": cat, "properties": props, "states": states or []}


def mini_scene() -> Scene:
    """kitchen(1) --door(3)-- livingroom(2); fridge with juice, table with cupcake/apple/plate."""
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
