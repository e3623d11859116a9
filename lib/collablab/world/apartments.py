"""Author household apartments as VirtualHome scene graphs (seeded, deterministic).

Each apartment has a living room, kitchen, bedroom and bathroom laid out on a 2x2 grid,
doors between grid neighbours forming a spanning tree (so every pair of rooms is joined
by exactly one door path), the goal furniture of every template (Table 4) and a seeded
selection of the legal-placement furniture of Table 5.
"""

from __future__ import annotations

import random
from typing import Any

from .catalog import FURNITURE
from .scene import Door, Scene

ROOMS = ("livingroom", "kitchen", "bedroom", "bathroom")
ROOM_SIZE = 5.0  # metres per grid cell

#: furniture every apartment has, per room (template targets and Table 5 basics)
REQUIRED = {
    "kitchen": ("fridge", "dishwasher", "kitchentable", "kitchencounter", "stove", "microwave"),
    "livingroom": ("coffeetable", "sofa"),
    "bedroom": ("bed", "nightstand"),
    "bathroom": ("bathroomcounter",),
}
#: optional furniture per room (drawn per apartment)
OPTIONAL = {
    "kitchen": ("cabinet", "kitchencounter", "bench", "chair"),
    "livingroom": ("tvstand", "bookshelf", "cabinet", "bench", "chair"),
    "bedroom": ("bookshelf", "cabinet", "bench", "tvstand", "chair"),
    "bathroom": ("cabinet", "toilet", "sink"),
}


def _node(nid: int, cls: str, category: str, props: tuple[str, ...], states: list[str],
          center: tuple[float, float, float], size: tuple[float, float, float]) -> dict[str, Any]:
    return {"id": nid, "class_name": cls, "category": category, "prefab_name": f"collablab_{cls}",
            "obj_transform": {"position": list(center), "rotation": [0.0, 0.0, 0.0, 1.0], "scale": [1.0, 1.0, 1.0]},
            "bounding_box": {"center": list(center), "size": list(size)},
            "properties": list(props), "states": states}


def make_apartment(index: int, seed: int = 0) -> Scene:
    """Apartment ``index`` (0-7 in our suite) as a Scene with doors and furniture."""
    rng = random.Random(f"apartment-{seed}-{index}")
    cells = [(0, 0), (1, 0), (1, 1), (0, 1)]  # a 4-cycle of grid neighbours
    order = list(ROOMS)
    rng.shuffle(order)
    # desk lives in the bedroom or the living room; a second coffee table sometimes
    desk_room = rng.choice(("bedroom", "livingroom"))
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    room_ids: dict[str, int] = {}
    nid = 1
    for name, (cx, cy) in zip(order, cells):
        center = (cx * ROOM_SIZE + ROOM_SIZE / 2, 1.25, cy * ROOM_SIZE + ROOM_SIZE / 2)
        nodes.append(_node(nid, name, "Rooms", (), [], center, (ROOM_SIZE, 2.5, ROOM_SIZE)))
        room_ids[name] = nid
        nid += 1
    # doors: the 4-cycle minus one edge -> a spanning tree (a chain through the grid)
    cut = rng.randrange(4)
    doors: list[Door] = []
    for k in range(4):
        if k == cut:
            continue
        a, b = order[k], order[(k + 1) % 4]
        (ax, ay), (bx, by) = cells[k], cells[(k + 1) % 4]
        pos = ((ax + bx + 1) * ROOM_SIZE / 2, 1.0, (ay + by + 1) * ROOM_SIZE / 2)
        nodes.append(_node(nid, "door", "Doors", ("CAN_OPEN",), ["OPEN"], pos, (1.0, 2.0, 0.1)))
        edges.append({"from_id": nid, "relation_type": "INSIDE", "to_id": room_ids[a]})
        for r in (a, b):
            edges.append({"from_id": nid, "relation_type": "BETWEEN", "to_id": room_ids[r]})
        doors.append(Door(nid, (room_ids[a], room_ids[b])))
        nid += 1
    for name in order:
        items = list(REQUIRED[name])
        if name == desk_room:
            items.append("desk")
        extra = [f for f in OPTIONAL[name] if rng.random() < 0.5]
        items += extra
        rid = room_ids[name]
        rc = nodes[rid - 1]["bounding_box"]["center"]
        for k, cls in enumerate(items):
            f = FURNITURE[cls]
            angle = k / max(1, len(items))
            pos = (rc[0] - 2.0 + 4.0 * angle, 0.4, rc[2] + (1.8 if k % 2 else -1.8))
            nodes.append(_node(nid, cls, f.category, f.properties, ["CLOSED"] if f.opens else [],
                               pos, (1.0, 0.8, 0.6)))
            edges.append({"from_id": nid, "relation_type": "INSIDE", "to_id": rid})
            nid += 1
    return Scene(graph={"nodes": nodes, "edges": edges}, doors=doors, name=f"apartment{index}")
