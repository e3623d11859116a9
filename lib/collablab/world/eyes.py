"""What an agent's four cameras show in the household: its room's geometry as boxes, rendered.

MECoBench's agents observe "a four-view concatenated observation of 256 x 1024 ... in the order:
front, back, left, and right" from a camera at 1.8 m, 0.15 m ahead, "pitched downward by 30
degrees" (mecobench.txt appendix B.1); the rasteriser is :mod:`.camera`. This module decides
what is drawn and from where (each decision is tested in tests/test_world_camera.py):

- **What**: the nodes of the agent's current room (as :meth:`Household.members` has them) that an
  agent could act on: "the target must be located in one of the rooms accessible to the agent"
  and be "visible in the agent's current observation" (B.3). Rooms, walls, floors, ceilings and
  characters are not objects: the room is drawn once as the inside of its box (floor at the
  highest top of its floor tiles, else the box's bottom). Held objects are not drawn, nor is
  anything inside a closed container (:meth:`Household.hidden_by`); a closed container is an
  opaque box. An open container is a cutaway (only its far inside faces), so what lies in it is
  seen; it is still seen itself. Other agents are not drawn (our standing points are coarse: two
  agents at one table stand at the same point and would hide it).
- **Doors**: each topology door of the room (B.3's ``walk_to_door`` targets) is an opaque panel on
  the nearest wall of the room's box, as wide as the door and 2.06 m high (VirtualHome's door
  jambs), counted for the door and for the door-jamb nodes standing in it. Rooms seen through a
  doorway are not drawn: nothing there can be acted on from here.
- **From where**: the agent's point (:attr:`Household.pos`) and heading
  (:attr:`Household.heading`). The household stands an agent at the centre of the furniture it
  walked to (:mod:`.bodies`), inside its box; the camera instead stands :data:`STANDOFF_M` in
  front of that furniture's footprint, back along the heading, like a person at a counter (and
  is kept :data:`WALL_MARGIN_M` inside the room's box). A room's centre and a door's stand point
  are used as they are.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .camera import PAPER_RIG, ROOM, Box, CameraRig, Views, render
from .scene import STRUCTURAL_CATEGORIES

STANDOFF_M = 0.35  # camera in front of the furniture it stands at (body half-depth plus reach)
WALL_MARGIN_M = 0.3  # camera at least this far inside the room's box
DOOR_HEIGHT_M = 2.06  # VirtualHome door jambs are 2.058 m high
DOOR_PANEL_M = 0.05  # panel thickness; it stands 0.01 m inside the room's wall
FLOOR_CATEGORIES = ("Floor", "Floors")


class Pose(NamedTuple):
    """Where an agent's cameras are: its room, the camera's floor point (x, z) and heading (x, z)."""

    room: int
    x: float
    z: float
    hx: float
    hz: float


Triple = tuple[float, float, float]


def _lo_hi(box: tuple[tuple[float, ...], tuple[float, ...]]) -> tuple[Triple, Triple]:
    (cx, cy, cz), (sx, sy, sz) = box
    return (cx - sx / 2, cy - sy / 2, cz - sz / 2), (cx + sx / 2, cy + sy / 2, cz + sz / 2)


def floor_height(world: Any, room: int) -> float:
    """The room's floor: the highest top of its floor tiles, else the bottom of its box."""
    tops = []
    for nid in world.members(room):
        n = world.scene.nodes[nid]
        b = world.box3(nid)
        if n["category"] in FLOOR_CATEGORIES and b is not None:
            tops.append(b[0][1] + b[1][1] / 2)
    if tops:
        return max(tops)
    return _lo_hi(world.box3(room))[0][1]


def pose(world: Any, agent: int) -> Pose:
    """The camera's pose for ``agent`` (module docstring: from where)."""
    room = world.agent_room(agent)
    hx, hz = world.heading[agent]
    x, z = world.pos[agent]
    spot = world.spot[agent]
    if spot not in world.scene.rooms and world.at_door[agent] is None and not world.scene.is_door_node(spot):
        anchor = world.anchor(spot)
        box = world.box3(anchor) if anchor is not None else None
        if box is not None:
            (cx, _, cz), (sx, _, sz) = box
            exits = [s / 2 / abs(h) for s, h in ((sx, hx), (sz, hz)) if abs(h) > 1e-9]
            back = min(exits) + STANDOFF_M
            x, z = cx - hx * back, cz - hz * back
    (lx, _, lz), (ux, _, uz) = _lo_hi(world.box3(room))
    x = min(max(x, lx + WALL_MARGIN_M), ux - WALL_MARGIN_M) if ux - lx > 2 * WALL_MARGIN_M else (lx + ux) / 2
    z = min(max(z, lz + WALL_MARGIN_M), uz - WALL_MARGIN_M) if uz - lz > 2 * WALL_MARGIN_M else (lz + uz) / 2
    return Pose(room, x, z, hx, hz)


def door_panel(world: Any, door_id: int, room_lo: tuple[float, float, float],
               room_hi: tuple[float, float, float], floor_y: float) -> Box | None:
    """An opaque panel on the room-box wall nearest to the door (module docstring: doors)."""
    b = world.box3(door_id)
    if b is None:
        return None
    (cx, _, cz), (sx, _, sz) = b
    width = max(sx, sz, 0.8)
    sides = [(abs(cx - room_lo[0]), 0), (abs(cx - room_hi[0]), 1), (abs(cz - room_lo[2]), 2), (abs(cz - room_hi[2]), 3)]
    side = min(sides)[1]
    y0, y1 = floor_y, floor_y + DOOR_HEIGHT_M
    if side in (0, 1):
        x = room_lo[0] + 0.01 if side == 0 else room_hi[0] - 0.01 - DOOR_PANEL_M
        z0 = min(max(cz - width / 2, room_lo[2]), room_hi[2] - width)
        return Box(door_id, world.scene.nodes[door_id]["class_name"], (x, y0, z0), (x + DOOR_PANEL_M, y1, z0 + width))
    z = room_lo[2] + 0.01 if side == 2 else room_hi[2] - 0.01 - DOOR_PANEL_M
    x0 = min(max(cx - width / 2, room_lo[0]), room_hi[0] - width)
    return Box(door_id, world.scene.nodes[door_id]["class_name"], (x0, y0, z), (x0 + width, y1, z + DOOR_PANEL_M))


def room_boxes(world: Any, room: int) -> tuple[list[Box], float]:
    """The boxes drawn for ``room`` now (module docstring: what) and its floor height."""
    floor_y = floor_height(world, room)
    lo, hi = _lo_hi(world.box3(room))
    out = [Box(ROOM, world.scene.rooms[room], (lo[0], floor_y, lo[2]), hi, "interior")]
    doors = {d.id for d in world.scene.doors_of(room)}
    for d in sorted(doors):
        panel = door_panel(world, d, lo, hi, floor_y)
        if panel is not None:
            out.append(panel)
    for nid in world.members(room):
        n = world.scene.nodes[nid]
        if (n["category"] in STRUCTURAL_CATEGORIES or nid in world.char_ids or world.scene.is_door_node(nid)
                or world.holder(nid) is not None or world.hidden_by(nid) is not None):
            continue
        b = world.box3(nid)
        if b is None:
            continue
        open_container = "CONTAINERS" in n.get("properties", ()) and world.is_open(nid)
        blo, bhi = _lo_hi(b)
        out.append(Box(nid, n["class_name"], blo, bhi, "cutaway" if open_container else "solid"))
    return out, floor_y


def render_agent(world: Any, agent: int, at: Pose | None = None, rig: CameraRig = PAPER_RIG) -> Views:
    """``agent``'s four views now (``at``: its :func:`pose`, computed when not given). Door-jamb
    nodes standing in a drawn door get the door's pixels and boxes."""
    at = pose(world, agent) if at is None else at
    boxes, floor_y = room_boxes(world, at.room)
    views = render(boxes, (at.x, at.z), floor_y, (at.hx, at.hz), rig)
    for alias, door in sorted((world.scene.aliases or {}).items()):
        if door in views.pixels and alias not in views.pixels:
            views.pixels[alias] = views.pixels[door]
            views.boxes[alias] = views.boxes[door]
            views.labels[alias] = world.scene.nodes[alias]["class_name"]
    return views


def placed_box(obj: int, obj_box: Any, target_box: Any, inside: bool) -> tuple[Triple, Triple] | None:
    """Where a put leaves an object's box: on the target's top (``put_on``) or on its inner floor
    (``put_in``), at a point of its footprint fixed by the object's id (so two things put on one
    table do not take the very same place). None when either has no box."""
    if obj_box is None or target_box is None:
        return None
    (tx, ty, tz), (tsx, tsy, tsz) = target_box
    size = obj_box[1]
    u = ((obj * 2654435761) % 1000) / 1000 - 0.5
    v = ((obj * 40503 + 17) % 1000) / 1000 - 0.5
    x = tx + u * max(0.0, tsx - size[0]) * 0.8
    z = tz + v * max(0.0, tsz - size[2]) * 0.8
    if inside:
        y = ty - tsy / 2 + min(size[1] / 2 + 0.05 * tsy, tsy / 2)
    else:
        y = ty + tsy / 2 + size[1] / 2
    return (x, y, z), (float(size[0]), float(size[1]), float(size[2]))


__all__ = ["Pose", "STANDOFF_M", "WALL_MARGIN_M", "door_panel", "floor_height", "placed_box", "pose",
           "render_agent", "room_boxes"]
