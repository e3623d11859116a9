"""PARTNR tasks on our houses: the episode record, its loader and a seeded generator
(observe_share_predict.txt §4.1; PARTNR's evaluation document for the evaluation fields).

A task is a dict with PARTNR's field names where PARTNR has one:

- ``episode_id``, ``instruction``, ``scene_id`` (ours: ``"apartment:<index>:<seed>"`` or a path
  to a VirtualHome graph json), ``info`` (free; ``info.family`` names the task family);
- ``name_to_receptacle``: ``{object handle: "furniture handle"}`` or ``"furniture|within"`` /
  ``"furniture|on"`` (PARTNR writes ``furniture|receptacle``; we read the part before ``|`` as
  the furniture and ``within`` / ``on`` after it as the relation, else "on" when the furniture
  has a surface); the object's class is its handle without the instance suffix
  (``cup_1`` -> ``cup``) unless ``object_classes`` gives it;
- ``object_states``: ``{"is_clean": {handle: bool}, ...}`` for objects and furniture;
- ``evaluation_propositions``, ``evaluation_proposition_dependencies``, ``evaluation_constraints``;
- ours: ``agent_rooms`` (start rooms of robot and human; default the first two rooms),
  ``include_scene_objects`` (keep the scene's own grabbable objects as distractors; default true).

Bad input raises ``ValueError`` naming the field before any episode runs (:func:`load_task`).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from ...world import Scene, load_virtualhome_graph, make_apartment
from .evaluation import TaskEvaluation
from .calls import mask_id
from .world import World, affordances

FAMILIES = ("rearrange", "spatial", "temporal", "object_state")
#: Task object classes of the generator (PARTNR-style household objects) and their sizes (m).
TASK_CLASSES = {"cup": 0.12, "bowl": 0.18, "plate": 0.25, "kettle": 0.25, "jug": 0.22, "book": 0.24, "lamp": 0.35,
                "laptop": 0.35, "candle": 0.1, "vase": 0.25, "toy_vehicle": 0.15, "toy_animal": 0.15,
                "board_game": 0.34, "cushion": 0.4, "pan": 0.3, "glass": 0.1, "phone_stand": 0.12}


@dataclass
class Task:
    """A loaded task: its record, its scene and evaluation, ready to build a :class:`World`."""

    record: dict[str, Any]
    scene: Scene
    evaluation: TaskEvaluation
    objects: list[dict[str, Any]] = field(default_factory=list)

    @property
    def episode_id(self) -> str:
        return str(self.record["episode_id"])

    @property
    def instruction(self) -> str:
        return str(self.record["instruction"])

    @property
    def family(self) -> str:
        return str(self.record.get("info", {}).get("family", ""))

    def world(self) -> World:
        """A fresh ground truth for one episode."""
        return World(self.scene, self.objects, self.record.get("object_states") or {},
                     include_scene_objects=bool(self.record.get("include_scene_objects", True)))

    def agent_rooms(self, world: World) -> list[str]:
        rooms = self.record.get("agent_rooms") or sorted(world.room_box)[:2]
        if len(rooms) == 1:
            rooms = [rooms[0], rooms[0]]
        return [str(r) for r in rooms[:2]]


@lru_cache(maxsize=32)
def scene_for(scene_id: str) -> Scene:
    """``apartment:<index>:<seed>`` (our generator) or a VirtualHome graph file path."""
    if scene_id.startswith("apartment:"):
        parts = scene_id.split(":")
        if len(parts) != 3 or not all(p.isdigit() for p in parts[1:]):
            raise ValueError(f"scene_id: {scene_id!r}; allowed: 'apartment:<index>:<seed>' or a graph .json path")
        return make_apartment(int(parts[1]), seed=int(parts[2]))
    path = Path(scene_id)
    if not path.is_file():
        raise ValueError(f"scene_id: {scene_id!r} is neither 'apartment:<index>:<seed>' nor an existing graph file")
    return load_virtualhome_graph(path)


def _objects(record: Mapping[str, Any], world: World) -> list[dict[str, Any]]:
    n2r = record.get("name_to_receptacle") or {}
    if not isinstance(n2r, Mapping):
        raise ValueError("name_to_receptacle: expected {object handle: furniture handle}")
    classes = record.get("object_classes") or {}
    out = []
    for h, rec in n2r.items():
        furn, _, rel = str(rec).partition("|")
        if furn not in world.furniture:
            raise ValueError(f"name_to_receptacle[{h!r}]: {furn!r} is not furniture of scene "
                             f"{record.get('scene_id')!r}; allowed: {', '.join(sorted(world.furniture))}")
        f = world.furniture[furn]
        rel = rel if rel in ("on", "within") else ("on" if f.surface else "within")
        cls = str(classes.get(h, mask_id(str(h))))
        out.append({"handle": str(h), "class": cls, "furniture": furn, "relation": rel,
                    "size": TASK_CLASSES.get(cls, 0.2)})
    return out


def load_task(record: Mapping[str, Any]) -> Task:
    """Check and load one task record (see the module docstring)."""
    for key in ("episode_id", "instruction", "scene_id", "evaluation_propositions"):
        if key not in record:
            raise ValueError(f"task: missing field {key!r}")
    rec = dict(record)
    scene = scene_for(str(rec["scene_id"]))
    evaluation = TaskEvaluation.from_episode(rec)
    world = World(scene, include_scene_objects=bool(rec.get("include_scene_objects", True)))
    objects = _objects(rec, world)
    task = Task(rec, scene, evaluation, objects)
    for i, spec in enumerate(objects):  # the task's world, built once here to check it (as Task.world builds it)
        world.add_object(spec, f"objects[{i}]")
    world.set_states(rec.get("object_states") or {})  # checks object_states and handle clashes
    for r in task.agent_rooms(world):
        if r not in world.room_box:
            raise ValueError(f"agent_rooms: {r!r} is not a room; allowed: {', '.join(sorted(world.room_box))}")
    known = set(world.objects) | set(world.furniture) | set(world.room_box)
    for i, p in enumerate(evaluation.propositions):
        for name, v in p.args.items():
            for h in (v if isinstance(v, list) else [v]):
                if isinstance(h, list):
                    bad = [x for x in h if isinstance(x, str) and x not in known]
                elif isinstance(h, str) and name.endswith(("handles", "ids", "_a", "_b")):
                    bad = [h] if h not in known else []
                else:
                    bad = []
                if bad:
                    raise ValueError(f"evaluation_propositions[{i}].args.{name}: {bad[0]!r} is not an entity of the "
                                     "task's world")
    return task


def load_tasks(path: str | Path) -> list[Task]:
    """A json file holding one task, a list of tasks or ``{"episodes": [...]}`` (PARTNR's dataset shape)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    records = data.get("episodes", [data]) if isinstance(data, dict) else data
    if not isinstance(records, list):
        raise ValueError(f"{path}: expected a task, a list of tasks or {{'episodes': [...]}}")
    return [load_task(r) for r in records]


# -- the generator -----------------------------------------------------------------------------
def _say(handle: str) -> str:
    """How an instruction names an entity: ``living_room_0`` -> ``living room``."""
    return mask_id(handle).replace("_", " ")


def _prop(fn: str, **args: Any) -> dict[str, Any]:
    return {"function_name": fn, "args": args}


def generate_task(index: int, family: str, seed: int = 0, apartment: int | None = None,
                  scene_id: str | None = None) -> dict[str, Any]:
    """A seeded task record of one family (PARTNR's four: rearrange, spatial, temporal,
    object-state), in a generated apartment. Task objects are PARTNR-style classes
    (:data:`TASK_CLASSES`) spawned on furniture away from their goal; the scene's own objects stay
    as distractors; ``scene_id`` puts the task in any scene :func:`scene_for` reads (a VirtualHome
    graph file) instead of a generated apartment. As in PARTNR's instructions ("from the living room to the kitchen"), the task
    objects start in one source room other than the goal's; both agents start in one room (our
    decision: they begin side by side, so what each sees of the other matters from the start)."""
    if family not in FAMILIES:
        raise ValueError(f"family: {family!r}; allowed: {', '.join(FAMILIES)}")
    rng = random.Random(f"partnr:{family}:{index}:{seed}")
    apt = rng.randrange(8) if apartment is None else apartment
    suffix = f"-{Path(scene_id).stem}" if scene_id else ""
    scene_id = scene_id or f"apartment:{apt}:{seed}"
    world = World(scene_for(scene_id))
    rooms = sorted(world.room_box)
    surfaces = [f for f in world.furniture.values() if f.surface and f.cls not in ("sink", "bathtub", "toilet", "floor")]
    counts: dict[str, int] = {}

    goal = rng.choice(surfaces)
    source = rng.choice([r for r in rooms if r != goal.room] or rooms)

    def spawn(cls: str, avoid_room: str | None = None) -> tuple[str, str]:
        h = f"{cls}_{counts.get(cls, 0)}"
        while h in world.objects or h in n2r:
            counts[cls] = counts.get(cls, 0) + 1
            h = f"{cls}_{counts[cls]}"
        counts[cls] = counts.get(cls, 0) + 1
        options = [f for f in surfaces if f.room == source and f.room != avoid_room] or surfaces
        return h, rng.choice(options).handle

    n2r: dict[str, str] = {}
    props: list[dict[str, Any]] = []
    deps: list[dict[str, Any]] = []
    cons: list[dict[str, Any]] = []
    states: dict[str, dict[str, bool]] = {}
    classes = rng.sample([c for c in TASK_CLASSES if c not in ("cushion",)], 3)
    if family == "rearrange":
        k = rng.choice((2, 3))
        names = []
        for cls in classes[:k]:
            h, f = spawn(cls, goal.room)
            n2r[h] = f
            names.append(h)
            props.append(_prop("is_on_top", object_handles=[h], receptacle_handles=[goal.handle]))
        text = f"Move the {', the '.join(_say(n) for n in names)} to the {_say(goal.cls)} in the {_say(goal.room)}."
    elif family == "spatial":
        a, fa = spawn(classes[0], goal.room)
        b, fb = spawn(classes[1], goal.room)
        n2r.update({a: fa, b: fb})
        props += [_prop("is_on_top", object_handles=[a], receptacle_handles=[goal.handle]),
                  _prop("is_on_top", object_handles=[b], receptacle_handles=[goal.handle]),
                  _prop("is_next_to", entity_handles_a=[a], entity_handles_b=[b])]
        deps.append({"proposition_indices": [2], "depends_on": [0, 1], "relation_type": "while_satisfied",
                     "dependency_mode": "all"})
        text = (f"Put the {_say(a)} and the {_say(b)} "
                f"next to each other on the {_say(goal.cls)} in the {_say(goal.room)}.")
    elif family == "temporal":
        other = rng.choice([f for f in surfaces if f.room != goal.room] or surfaces)
        a, fa = spawn(classes[0], goal.room)
        b, fb = spawn(classes[1], other.room)
        n2r.update({a: fa, b: fb})
        props += [_prop("is_on_top", object_handles=[a], receptacle_handles=[goal.handle]),
                  _prop("is_on_top", object_handles=[b], receptacle_handles=[other.handle])]
        cons.append({"type": "TemporalConstraint", "args": {"dag_edges": [[0, 1]], "n_propositions": 2}})
        text = (f"First put the {_say(a)} on the {_say(goal.cls)} in the "
                f"{_say(goal.room)}, then put the {_say(b)} on the "
                f"{_say(other.cls)} in the {_say(other.room)}.")
    else:
        stateful = [c for c in TASK_CLASSES if {"is_filled", "is_powered_on"} & set(affordances(c))]
        cls = rng.choice(stateful)
        a, fa = spawn(cls, goal.room)
        b, fb = spawn(classes[0] if classes[0] != cls else classes[1], goal.room)
        n2r.update({a: fa, b: fb})
        state = "is_powered_on" if "is_powered_on" in affordances(cls) and rng.random() < 0.5 or "is_filled" not in affordances(cls) else "is_filled"
        verb = "turn on" if state == "is_powered_on" else "fill"
        props += [_prop("is_on_top", object_handles=[a], receptacle_handles=[goal.handle]),
                  _prop("is_on_top", object_handles=[b], receptacle_handles=[goal.handle]),
                  _prop(state, object_handles=[a]),
                  _prop("is_clean", object_handles=[b])]
        states = {"is_clean": {a: False, b: False}, state: {a: False}}
        text = (f"Bring the {_say(a)} and the {_say(b)} to the "
                f"{_say(goal.cls)} in the {_say(goal.room)}; {verb} the "
                f"{_say(a)} and clean the {_say(b)}.")
    start = rng.choice(rooms)
    starts = [start, start]
    return {"episode_id": f"{family}-{index}-s{seed}{suffix}", "instruction": text, "scene_id": scene_id,
            "name_to_receptacle": n2r, "object_states": states, "evaluation_propositions": props,
            "evaluation_proposition_dependencies": deps, "evaluation_constraints": cons,
            "agent_rooms": starts, "info": {"family": family, "generator": "collablab.partnr", "index": index}}


def generate_tasks(n: int, seed: int = 0, families: tuple[str, ...] = FAMILIES) -> list[dict[str, Any]]:
    """``n`` task records cycling through ``families`` (seeded, reproducible)."""
    return [generate_task(i, families[i % len(families)], seed) for i in range(n)]


__all__ = ["FAMILIES", "TASK_CLASSES", "Task", "generate_task", "generate_tasks", "load_task", "load_tasks", "scene_for"]
