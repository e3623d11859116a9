"""The house map of PARTNR instruction templates onto our houses (observe_share_predict.txt §4.1
runs PARTNR's validation tasks; region and furniture names are those of PARTNR's
``20_val_object_states.json``): the room and furniture tables and the lookups that
:mod:`.instructions` (the compiler) and :mod:`.templates` (which re-exports them) share.
The mapping rules themselves are described in the docstring of :mod:`.templates`.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from .calls import mask_id
from .world import FLOOR, World

__all__ = ["FALLBACK_ROOMS", "FURNITURE_FALLBACK", "FURNITURE_WORDS", "REGION_ROOMS", "furniture_class",
           "furniture_of_class", "region_rooms", "resolve_furniture"]

# -- the tables ------------------------------------------------------------------------------
#: Template region type -> room types tried in order (see the docstring of :mod:`.templates`).
REGION_ROOMS: dict[str, tuple[str, ...]] = {
    "kitchen": ("kitchen",), "pantry": ("pantry", "kitchen"),
    "dining_room": ("dining_room", "living_room", "kitchen"),
    "living_room": ("living_room",), "lounge": ("lounge", "living_room"), "tv": ("tv", "living_room"),
    "family_room": ("family_room", "living_room"), "den": ("den", "living_room"),
    "playroom": ("playroom", "living_room"), "rec_room": ("rec_room", "living_room"),
    "office": ("office", "bedroom", "living_room"), "study": ("office", "bedroom", "living_room"),
    "hallway": ("hallway", "living_room"), "entryway": ("entryway", "hallway", "living_room"),
    "bedroom": ("bedroom",), "closet": ("closet", "bedroom"), "nursery": ("nursery", "bedroom"),
    "bathroom": ("bathroom",), "laundry": ("laundry", "bathroom"), "laundryroom": ("laundryroom", "bathroom"),
    "utility_room": ("utility_room", "bathroom"), "mudroom": ("mudroom", "laundry", "hallway", "bathroom"),
    "garage": ("garage", "laundry", "hallway", "bathroom"), "storage": ("storage", "bathroom"),
    "basement": ("basement", "bathroom"), "attic": ("attic", "bedroom"), "porch": ("porch", "hallway", "living_room"),
}
#: Room types tried after a region's own list (an unknown region type lands here).
FALLBACK_ROOMS: tuple[str, ...] = ("living_room",)
#: Furniture words of instructions and templates -> our furniture class (World's names).
FURNITURE_WORDS: dict[str, str] = {
    "table": "table", "desk": "table", "coffee table": "table", "dining table": "table", "side table": "table",
    "counter": "counter", "countertop": "counter", "kitchen island": "counter", "chair": "chair", "stool": "chair",
    "bench": "bench", "shelves": "shelves", "shelf": "shelves", "bookshelf": "shelves", "bookcase": "shelves",
    "cabinet": "cabinet", "cupboard": "cabinet", "wardrobe": "wardrobe", "chest of drawers": "chest_of_drawers",
    "dresser": "chest_of_drawers", "drawers": "chest_of_drawers", "nightstand": "chest_of_drawers",
    "couch": "couch", "sofa": "couch", "sink": "sink", "bathtub": "bathtub", "tub": "bathtub", "bed": "bed",
    "tv stand": "tv_stand", "fridge": "fridge", "refrigerator": "fridge", "stove": "stove",
    "microwave": "microwave", "dishwasher": "dishwasher", "washer dryer": "washer_dryer",
    "washing machine": "washer_dryer", "toilet": "toilet", "tap": "faucet", "faucet": "faucet",
}
#: Furniture class -> classes to use, in order, when a room has none of it.
FURNITURE_FALLBACK: dict[str, tuple[str, ...]] = {
    "table": ("counter", "bench", "chest_of_drawers", "cabinet", "shelves", "tv_stand"),
    "counter": ("table", "cabinet", "chest_of_drawers", "shelves"),
    "chair": ("bench", "couch", "table"), "bench": ("chair", "couch", "table"),
    "couch": ("chair", "bench", "bed"), "bed": ("couch", "bench"),
    "shelves": ("cabinet", "chest_of_drawers", "table", "counter"),
    "cabinet": ("chest_of_drawers", "shelves", "wardrobe", "counter", "table"),
    "chest_of_drawers": ("cabinet", "wardrobe", "shelves", "table"),
    "wardrobe": ("chest_of_drawers", "cabinet", "shelves"),
    "tv_stand": ("table", "cabinet", "chest_of_drawers"), "sink": ("bathtub",), "bathtub": ("sink",),
}
#: Furniture never used as a fallback surface or a spawn stand-in.
_NO_PLACE = ("sink", "bathtub", "toilet")


# -- lookups ---------------------------------------------------------------------------------
def _room_types(world: World) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in sorted(world.room_box):
        out.setdefault(mask_id(r), []).append(r)
    return out


def _split_index(name: str) -> tuple[str, int | None]:
    m = re.fullmatch(r"(.+?)_(\d+)", name.strip().lower())
    return (m.group(1), int(m.group(2))) if m else (name.strip().lower(), None)


def region_rooms(region: str, world: World) -> list[str]:
    """Rooms of ``world`` a template region stands for: ``"tv_1"`` -> one room (the index picks
    among rooms of the mapped type), ``"tv"`` -> all rooms of the mapped type."""
    rtype, index = _split_index(region)
    rtype = rtype.replace(" ", "_")
    types = _room_types(world)
    for t in (*REGION_ROOMS.get(rtype, (rtype,)), *FALLBACK_ROOMS):
        if t in types:
            rooms = types[t]
            return [rooms[index % len(rooms)]] if index is not None else list(rooms)
    return [sorted(world.room_box)[0]]


def _placeable(world: World, rooms: Iterable[str] | None) -> list[str]:
    rs = None if rooms is None else set(rooms)
    return [h for h, f in world.furniture.items()
            if f.surface and not f.faucet and f.cls not in _NO_PLACE and f.cls != FLOOR and (rs is None or f.room in rs)]


def furniture_of_class(world: World, cls: str, rooms: Iterable[str] | None) -> list[str]:
    """All furniture of class ``cls`` in ``rooms`` (None: the house), in the world's order."""
    rs = None if rooms is None else set(rooms)
    return [h for h, f in world.furniture.items() if f.cls == cls and (rs is None or f.room in rs)]


def resolve_furniture(world: World, cls: str, rooms: Sequence[str] | None = None) -> tuple[list[str], str]:
    """``(handles, class used)``: all furniture of ``cls`` in ``rooms`` (None: the house), else of
    the first :data:`FURNITURE_FALLBACK` class present, else the first surface there."""
    for c in (cls, *FURNITURE_FALLBACK.get(cls, ())):
        hs = furniture_of_class(world, c, rooms)
        if hs:
            return hs, c
    hs = _placeable(world, rooms)
    if not hs:
        raise ValueError(f"no furniture for {cls!r} in {', '.join(rooms) if rooms else 'the house'}")
    return hs[:1], world.furniture[hs[0]].cls


def furniture_class(name: str) -> str:
    """``"table_1"`` / ``"chest_of_drawers_0"`` / ``"coffee table"`` -> our class name."""
    base = mask_id(name.strip().lower()).replace(" ", "_")
    return FURNITURE_WORDS.get(base.replace("_", " "), base)

