"""PARTNR instruction templates compiled into runnable tasks on our own houses
(observe_share_predict.txt §4.1 runs PARTNR's validation tasks; the template shape is PARTNR's
``20_val_object_states.json``; proposition, dependency and constraint semantics follow PARTNR's
evaluation README, implemented by :mod:`.evaluation`).

A template holds an ``instruction``, an ``initial_state`` (object groups: ``number``,
``object_classes``, ``furniture_names``, ``allowed_regions``) and optionally an
``initial_furniture_state``; its ``episode_id`` is the template id. :func:`instantiate` turns it
into a task record of :mod:`.tasks` in ``apartment:<a>:<seed>``; :func:`compile_instruction` does
the work on a given :class:`~.world.World`.

Mapping onto our houses (deterministic; the rng only picks spawn furniture and start rooms)
-------------------------------------------------------------------------------------------
* Regions: a region type (``dining_room_0`` -> ``dining_room``) goes through :data:`REGION_ROOMS`,
  an ordered list of room types tried in turn (the type itself first, so a VirtualHome house with
  a dining room keeps it), then :data:`FALLBACK_ROOMS`, then the first room. Our apartments have
  a living room, bedroom, kitchen and bathroom: dining room, lounge and tv room become the living
  room (open-plan living/dining), closet becomes the bedroom, and the utility spaces (mudroom,
  garage, laundry) become the bathroom, the only room with the washer-dryer and utility cabinets
  (it also keeps those goals away from the kitchen and living room the objects come from). The
  region's index picks among several rooms of a type; an instruction's room phrase means all
  rooms of the mapped type (PARTNR's any-of ``room_ids``).
* Furniture: a class (``table_1`` -> ``table``; words through :data:`FURNITURE_WORDS`) means all
  furniture of that class in the room; when the room has none, the first class of
  :data:`FURNITURE_FALLBACK` it has; else its first surface (never a sink, bathtub or toilet).
  A furniture phrase without a room means the room mentioned last in the instruction when it
  has that class, else the whole house (see :func:`resolve_furniture`).
* "floor": every room of our World has a floor receptacle (``floor_<room>``): an object that
  starts on the floor starts there, and "put X on the floor" is ``is_on_floor``.
* Objects: each initial-state entry spawns ``number`` objects cycling through its classes, each
  on a furniture drawn by the rng among the mapped candidates, with handles ``<class>_<k>``
  (smallest free k: the scene already holds e.g. ``candle_0``). Entries with the same classes form
  one object group (the books of four entries are one group of five).
* Room and fallback-furniture phrases of the instruction are rewritten to our names ("the bench
  in the garage" -> "the counter in the bathroom") so that agents read a house they can find;
  the template's text stays in ``info["template_instruction"]``.

The clause grammar that reads the instruction (and raises ValueError naming the template id and
the clause it cannot read) is described and implemented in :mod:`.instructions`; the tables and
lookups of the house map above live in :mod:`.house_map`. Their documented tables and the
house-map lookups are re-exported here (:data:`VERBS`, :data:`REGION_ROOMS`, :func:`region_rooms`, ...).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Mapping

from .house_map import (FALLBACK_ROOMS, FURNITURE_FALLBACK, FURNITURE_WORDS, REGION_ROOMS,
                        region_rooms, resolve_furniture)
from .instructions import ADJECTIVES, CATEGORY_WORDS, PREPOSITIONS, VERBS, compile_clauses
from .tasks import scene_for
from .world import STATE_NAMES, World

__all__ = ["ADJECTIVES", "CATEGORY_WORDS", "FALLBACK_ROOMS", "FURNITURE_FALLBACK", "FURNITURE_WORDS",
           "PREPOSITIONS", "REGION_ROOMS", "VERBS", "check_template", "compile_instruction", "instantiate",
           "load_templates", "region_rooms", "resolve_furniture"]


# -- template files ----------------------------------------------------------------------------
def _strs(where: str, v: Any) -> None:
    if not isinstance(v, list) or not v or not all(isinstance(x, str) and x.strip() for x in v):
        raise ValueError(f"{where}: expected a non-empty list of non-empty strings, got {v!r}")


def check_template(template: Any, where: str = "template") -> None:
    """Check one template's shape; ValueError names the field (``where`` prefixes it)."""
    if not isinstance(template, Mapping):
        raise ValueError(f"{where}: expected a mapping, got {type(template).__name__}")
    for key in ("episode_id", "instruction", "initial_state"):
        if key not in template:
            raise ValueError(f"{where}: missing field {key!r}")
    tid = template["episode_id"]
    if isinstance(tid, bool) or not isinstance(tid, (int, str)) or (isinstance(tid, str) and not tid.strip()):
        raise ValueError(f"{where}.episode_id: expected an int or a non-empty string, got {tid!r}")
    if not isinstance(template["instruction"], str) or not template["instruction"].strip():
        raise ValueError(f"{where}.instruction: expected a non-empty string, got {template['instruction']!r}")
    if "scene_id" in template and not isinstance(template["scene_id"], (str, int)):
        raise ValueError(f"{where}.scene_id: expected a string, got {template['scene_id']!r}")
    init = template["initial_state"]
    if not isinstance(init, list) or not init:
        raise ValueError(f"{where}.initial_state: expected a non-empty list of object groups, got {init!r}")
    for j, g in enumerate(init):
        w = f"{where}.initial_state[{j}]"
        if not isinstance(g, Mapping):
            raise ValueError(f"{w}: expected a mapping, got {g!r}")
        for key in ("number", "object_classes", "furniture_names", "allowed_regions"):
            if key not in g:
                raise ValueError(f"{w}: missing field {key!r}")
        n = g["number"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"{w}.number: expected an int >= 1, got {n!r}")
        for key in ("object_classes", "furniture_names", "allowed_regions"):
            _strs(f"{w}.{key}", g[key])
    furn = template.get("initial_furniture_state", [])
    if not isinstance(furn, list):
        raise ValueError(f"{where}.initial_furniture_state: expected a list, got {furn!r}")
    for j, g in enumerate(furn):
        w = f"{where}.initial_furniture_state[{j}]"
        if not isinstance(g, Mapping):
            raise ValueError(f"{w}: expected a mapping, got {g!r}")
        for key in ("furniture_classes", "allowed_regions", "object_states"):
            if key not in g:
                raise ValueError(f"{w}: missing field {key!r}")
        _strs(f"{w}.furniture_classes", g["furniture_classes"])
        _strs(f"{w}.allowed_regions", g["allowed_regions"])
        st = g["object_states"]
        if not isinstance(st, Mapping) or not st:
            raise ValueError(f"{w}.object_states: expected a mapping of states to booleans, got {st!r}")
        for name, v in st.items():
            if name not in STATE_NAMES:
                raise ValueError(f"{w}.object_states: {name!r} is not a state; allowed: {', '.join(STATE_NAMES)}")
            if not isinstance(v, bool):
                raise ValueError(f"{w}.object_states.{name}: expected true or false, got {v!r}")


def load_templates(path: str | Path) -> list[dict[str, Any]]:
    """Read a template file (a list, or ``{"episodes": [...]}``) and check every template."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{p}: not valid json ({e})") from e
    if isinstance(data, Mapping) and "episodes" in data:
        data = data["episodes"]
    if not isinstance(data, list):
        raise ValueError(f"{p}: expected a list of templates or {{'episodes': [...]}}")
    seen: dict[str, int] = {}
    for i, t in enumerate(data):
        check_template(t, f"{p}: templates[{i}]")
        tid = str(t["episode_id"])
        if tid in seen:
            raise ValueError(f"{p}: templates[{i}].episode_id: {tid!r} repeats templates[{seen[tid]}]")
        seen[tid] = i
    return [dict(t) for t in data]


def compile_instruction(template: Mapping[str, Any], world: World, rng: random.Random) -> dict[str, Any]:
    """A task record (:mod:`.tasks` format) for ``template`` in ``world``: spawned objects
    (``name_to_receptacle``), ``object_states``, the compiled propositions, dependencies and
    constraints, ``agent_rooms`` and ``info``. ``episode_id`` is ``template-<id>`` and
    ``scene_id`` the world's scene name (:func:`instantiate` sets both for an apartment).
    The rng picks spawn furniture and then the two start rooms; ValueError names the clause
    the grammar (:mod:`.instructions`) cannot read."""
    check_template(template, f"template {template.get('episode_id', '?')}" if isinstance(template, Mapping)
                   else "template")
    return compile_clauses(template, world, rng)


def instantiate(template: Mapping[str, Any], apartment: int = 0, seed: int = 0) -> dict[str, Any]:
    """``template`` as a task in generated apartment ``apartment`` (scene seed ``seed``):
    episode ``template-<id>-a<apartment>-s<seed>``, scene ``apartment:<apartment>:<seed>``."""
    scene_id = f"apartment:{int(apartment)}:{int(seed)}"
    if not isinstance(template, Mapping):
        raise ValueError(f"template: expected a mapping, got {type(template).__name__}")
    tid = template.get("episode_id", "?")
    world = World(scene_for(scene_id))
    rng = random.Random(f"partnr-template:{tid}:{apartment}:{seed}")
    record = compile_instruction(template, world, rng)
    record["episode_id"] = f"template-{tid}-a{int(apartment)}-s{int(seed)}"
    record["scene_id"] = scene_id
    return record
