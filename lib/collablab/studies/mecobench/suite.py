"""Our MECoBench-style task suite: 96 tasks x {parallel, sequential} = 192 cases.

Follows mecobench.txt §2.1 and appendix A.2: sample subgoals from a template (Table 4),
place the target objects plus 0-2 redundant instances per class (0-1 for large objects) at
legal locations (Table 5) never on the goal location, respecting slot capacity, with look-alike
distractors (one beside each target class that has one, see :func:`_lookalikes_beside`); validate
by actually executing a solution (the oracle team) in the world; then derive the
sequential variant by splitting the apartment into two room zones joined by one door, the
goal room on the receiver's side and at least one required object on the giver's side.
Records are written in MECoBench's schema, so ``load_tasks`` reads ours and theirs alike.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...runs.fingerprint import code_fingerprint
from ...runs.paths import outputs_dir
from ...world.apartments import Spots, make_apartment
from ...world.catalog import CONFUSABLE, TASK_OBJECTS, object_class
from ...world.scene import Scene
from .episode import EpisodeConfig, run_episode
from .oracle import OracleTeam
from .tasks import Task, task_from_record
from .templates import CAPACITY, LEGAL_CONTAINERS, LEGAL_SURFACES, TEMPLATES, Template

SUITE_VERSION = "collablab-mecobench-v3"  # v2: paper-scale apartments, real boxes; v3: look-alikes beside targets
#: Names the random streams of the generator. Still v2's: v3 draws every v2 placement, goal text and
#: start room exactly as v2 did and only adds look-alikes beside targets (from a stream of their own),
#: so v2 and v3 tasks differ by those objects alone.
STREAM = "collablab-mecobench-v2"
N_APARTMENTS = 8
SUBGOAL_RANGE = (2, 7)
TASKS_PER_CELL = 2  # per (template, subgoal count) -> 8 * 6 * 2 = 96 tasks
NOISE_FRACTION = 0.3  # extra false locations in the noisy prior (§6.1)
MAX_ATTEMPTS = 60


def plural(word: str, n: int) -> str:
    if n == 1:
        return word
    return word + ("es" if word.endswith(("s", "sh", "ch", "x")) else "s")


def _capacity(cls: str, inside: bool) -> int:
    return CAPACITY.get(cls, CAPACITY["default_container" if inside else "default_surface"])


def _split_counts(rng: random.Random, k: int, classes: tuple[str, ...]) -> dict[str, int]:
    m = rng.randint(max(1, math.ceil(k / 3)), min(k, len(classes)))
    chosen = rng.sample(list(classes), m)
    counts = {c: 1 for c in chosen}
    for _ in range(k - m):
        counts[rng.choice(chosen)] += 1
    return {c: counts[c] for c in sorted(counts)}


class _Placer:
    """Adds object nodes to a copy of an apartment graph at legal, non-full locations.

    Each object gets its real bounding box (``catalog`` sizes) at a free place on the top face
    of its furniture or inside its box, seen from the furniture's centre by the view rule
    (``world.apartments.Spots``): walking to a piece of furniture is how one sees what is on it.
    """

    def __init__(self, scene: Scene, reserved: set[int], rng: random.Random) -> None:
        self.graph = scene.copy_graph()
        self.scene = scene
        self.rng = rng
        self.next_id = max(n["id"] for n in self.graph["nodes"]) + 1
        self.load: dict[tuple[int, bool], int] = {}
        self.spots: list[tuple[int, bool]] = []  # (furniture id, inside?)
        for nid, n in sorted(scene.nodes.items()):
            if nid in reserved:
                continue
            if n["class_name"] in LEGAL_CONTAINERS:
                self.spots.append((nid, True))
            if n["class_name"] in LEGAL_SURFACES:
                self.spots.append((nid, False))
        self.space = Spots(self.graph)
        self.placed: list[dict[str, Any]] = []

    def place(self, cls: str, spots: list[tuple[int, bool]] | None = None,
              rng: random.Random | None = None) -> dict[str, Any]:
        """Place one ``cls`` at a random non-full legal spot (or one of ``spots``), drawing from
        ``rng`` (default: the placer's own stream); RuntimeError when none has room for it."""
        oc = object_class(cls)
        rng = rng or self.rng
        free = [s for s in (self.spots if spots is None else spots)
                if self.load.get(s, 0) < _capacity(self.scene.nodes[s[0]]["class_name"], s[1])]
        while True:
            if not free:
                raise RuntimeError("no free legal location left")
            fid, inside = rng.choice(free)
            spot = self.space.find(fid, inside, oc.size, rng)
            if spot is not None:
                break
            free.remove((fid, inside))  # no room left there for this object
        center, size = spot
        self.load[(fid, inside)] = self.load.get((fid, inside), 0) + 1
        nid = self.next_id
        self.next_id += 1
        room = self.scene.room_of(fid)
        self.graph["nodes"].append({
            "id": nid, "class_name": cls, "category": oc.category, "prefab_name": f"collablab_{cls}",
            "obj_transform": {"position": [center[0], round(center[1] - size[1] / 2, 3), center[2]],
                              "rotation": [0.0, 0.0, 0.0, 1.0], "scale": [1.0, 1.0, 1.0]},
            "bounding_box": {"center": center, "size": size},
            "properties": list(oc.properties), "states": [],
        })
        self.space.add(nid, fid, center, size)
        self.graph["edges"].append({"from_id": nid, "relation_type": "INSIDE", "to_id": room})
        self.graph["edges"].append({"from_id": nid, "relation_type": "INSIDE" if inside else "ON", "to_id": fid})
        info = {"id": nid, "class_name": cls, "room_id": room, "room_name": self.scene.rooms[room],
                "placement": {"relation": "INSIDE" if inside else "ON", "target_id": fid,
                              "target_name": self.scene.nodes[fid]["class_name"],
                              "target_category": self.scene.nodes[fid]["category"]}}
        self.placed.append(info)
        return info

    def false_spot(self, cls: str, used: set[tuple[int, bool]]) -> tuple[int, bool]:
        cands = [s for s in self.spots if s not in used]
        return self.rng.choice(cands)


def _location_text(cls: str, fid: int, inside: bool, scene: Scene) -> str:
    fname = scene.nodes[fid]["class_name"]
    room = scene.rooms[scene.room_of(fid)]  # type: ignore[index]
    rel = "inside" if inside else "on"
    return f"One {cls} is {rel} the {fname}, the {fname} is inside the {room}."


def _goal_texts(tpl: Template, counts: dict[str, int], target_room: str, placer: _Placer,
                rng: random.Random) -> dict[str, str]:
    """raw / with location / with appearance / noisy goal texts in MECoBench's wording."""
    rel = "on" if tpl.relation == "on" else "inside"
    locs: dict[str, list[str]] = {}
    used: dict[str, set[tuple[int, bool]]] = {}
    for info in placer.placed:
        c = info["class_name"]
        if c in counts:
            spot = (info["placement"]["target_id"], info["placement"]["relation"] == "INSIDE")
            used.setdefault(c, set()).add(spot)
            locs.setdefault(c, []).append(_location_text(c, spot[0], spot[1], placer.scene))
    n_true = sum(len(v) for v in locs.values())
    noisy = {c: list(v) for c, v in locs.items()}
    for _ in range(max(1, round(NOISE_FRACTION * n_true))):
        c = rng.choice(sorted(counts))
        spot = placer.false_spot(c, used[c])
        used[c].add(spot)
        noisy[c].insert(rng.randrange(len(noisy[c]) + 1), _location_text(c, spot[0], spot[1], placer.scene))
    tail = f"{tpl.target} is in {target_room}."

    def build(with_loc: bool, with_desc: bool, loc_table: dict[str, list[str]]) -> str:
        parts = []
        for c, n in counts.items():
            s = f"Find and put {n} {plural(c, n)} {rel} {tpl.target}."
            if with_loc:
                s += " Possible locations: " + " / ".join(t[:-1] for t in loc_table[c]) + "."
            if with_desc:
                s += " Appearance: " + TASK_OBJECTS[c].appearance
            parts.append(s)
        return ";".join(parts) + ";" + tail

    raw = "; ".join(f"Find and put {n} {plural(c, n)} {rel} {tpl.target}" for c, n in counts.items()) + ";" + tail
    return {
        "raw_goal": raw,
        "goal_with_desc": build(False, True, locs),
        "goal_with_location": build(True, False, locs),
        "goal_with_location_and_desc": build(True, True, locs),
        "goal_with_location_noise": build(True, False, noisy),
        "goal_with_location_and_desc_noise": build(True, True, noisy),
    }


def _zones(scene: Scene, target_room: int, counts: dict[str, int],
           placed: list[dict[str, Any]]) -> tuple[dict[int, list[int]], int, int, int] | None:
    """Best door split: (zones {giver 0, receiver 1}, door, giver-side room, required handovers)."""
    best = None
    for door in scene.doors:
        # rooms reachable from the target room without crossing this door
        side = {target_room}
        changed = True
        while changed:
            changed = False
            for d in scene.doors:
                if d.id == door.id:
                    continue
                a, b = d.rooms
                if (a in side) != (b in side):
                    side |= {a, b}
                    changed = True
        other = set(scene.rooms) - side
        if not other:
            continue
        required = 0
        for c, n in counts.items():
            near = sum(1 for p in placed if p["class_name"] == c and p["room_id"] in side)
            required += max(0, n - near)
        giver_room = door.rooms[0] if door.rooms[0] in other else door.rooms[1]
        key = (required, -door.id)
        if required > 0 and (best is None or key > best[0]):
            best = (key, {0: sorted(other), 1: sorted(side)}, door.id, giver_room, required)
    if best is None:
        return None
    return best[1], best[2], best[3], best[4]


def _record(idx: int, tpl: Template, apt: int, graph: dict[str, Any], scene: Scene, target: int,
            counts: dict[str, int], texts: dict[str, str], placed: list[dict[str, Any]],
            init_rooms: list[int], structure: str, zones: Any, seed: int) -> dict[str, Any]:
    goal = {f"{tpl.relation}_{c}_{target}": n for c, n in counts.items()}
    troom = scene.room_of(target)
    rooms_by_name = {v: k for k, v in scene.rooms.items()}
    names = sorted(rooms_by_name)
    rc: dict[str, Any] = {"enabled": False}
    if structure == "sequential":
        zone_map, door, giver_room, required = zones
        rc = {"enabled": True,
              "agents": {str(a): {"allowed_room_ids": rooms} for a, rooms in zone_map.items()},
              "handover_chain": [{"from_agent": 0, "to_agent": 1, "door_id": door,
                                  "room_pair_ids": [giver_room, scene.door(door).other(giver_room)]}],
              "required_handover_count": required}
    return {
        "task_id": f"cl{idx:03d}-{structure[0]}",
        "base_task_id": idx,
        "task_name": tpl.name,
        "structure": structure,
        "env_id": apt,
        "init_graph": graph,
        "task_goal": {"0": goal, "1": goal},
        "total_goal": {f"{tpl.relation}_{c}_{target}": sum(p["class_name"] == c for p in placed) for c in counts},
        "goal_item_total": sum(counts.values()),
        "goal_item_kind_count": len(counts),
        **texts,
        "num_agents": 2,
        "init_room_ids": init_rooms,
        "init_rooms": [scene.rooms[r] for r in init_rooms] + names,
        "goal_targets": [{"id": target, "class_name": tpl.target, "goal_relation": tpl.relation,
                          "room_id": troom, "room_name": scene.rooms[troom],  # type: ignore[index]
                          "acceptable_target_ids": [target]}],
        "task_locations": {"goal_objects": [p for p in placed if p["class_name"] in counts]},
        "room_constraints": rc,
        "department_topology": scene.topology_string(),
        "level": 1,
        "generator": {"version": SUITE_VERSION, "seed": seed},
    }


def _solvable(record: dict[str, Any], n_agents: int) -> bool:
    task = task_from_record(record)
    out = run_episode(task, OracleTeam(), EpisodeConfig(n_agents=n_agents))
    return bool(out["episode"]["success"])


def _lookalikes_beside(placer: _Placer, counts: dict[str, int], rng: random.Random) -> None:
    """Put each target class's look-alike beside one of its instances: on (or in) the same piece
    of furniture when it has room, else nowhere.

    MECoBench's scenes hold look-alikes where the targets are, and that is where agents mistake
    them: "Agent 3: 'I have found and will now grab the wineglass from the bedroom cabinet.'
    Agent 3 executes [grab] <dishbowl> (misidentifying dishbowl as wineglass)" (mecobench.txt
    Table 21, object misidentification); a wrong grab is one of the "actions that grasp
    task-irrelevant objects" (App. E.2, Tables 19-20). A look-alike elsewhere in the apartment
    (the ones placed with the clutter) is almost never in view when an agent picks its target at
    a piece of furniture: in suite v2 a lone heuristic agent on the 96 parallel tasks had one in
    view at 4 to 10 of its 230 to 300 choices of a target with a look-alike (weak to strong), so a
    confusable agent had next to nothing to confuse; beside a target it is in view at about a
    third of them. Drawn after every other placement, from a stream of its own: the rest of the
    task is v2's."""
    for c in counts:
        twin = CONFUSABLE.get(c)
        if twin is None:
            continue
        mine = [p for p in placer.placed if p["class_name"] == c]
        p = rng.choice(mine)
        spot = (p["placement"]["target_id"], p["placement"]["relation"] == "INSIDE")
        try:
            placer.place(twin, spots=[spot], rng=rng)
        except RuntimeError:
            pass  # that piece of furniture is full: no look-alike beside this class


def generate_task(idx: int, tpl: Template, k: int, apt: int, seed: int) -> list[dict[str, Any]]:
    """One task in both structures, validated by executing the oracle; [parallel, sequential]."""
    scene = _apartment(apt, seed)
    target = scene.class_ids(tpl.target)[0]
    troom = scene.room_of(target)
    assert troom is not None
    for attempt in range(MAX_ATTEMPTS):
        rng = random.Random(f"{STREAM}-{seed}-{idx}-{attempt}")
        counts = _split_counts(rng, k, tpl.objects)
        placer = _Placer(scene, reserved={target}, rng=rng)
        try:
            for c, n in counts.items():
                extra = rng.randint(0, 1 if TASK_OBJECTS[c].large else 2)
                for _ in range(n + extra):
                    placer.place(c)
            for c in counts:  # look-alikes a careless agent might grab
                if c in CONFUSABLE and rng.random() < 0.5:
                    placer.place(CONFUSABLE[c])
            clutter = sorted(set(TASK_OBJECTS) - set(counts))
            for c in rng.sample(clutter, 3):
                placer.place(c)
        except RuntimeError:
            continue
        _lookalikes_beside(placer, counts, random.Random(f"{STREAM}-{seed}-{idx}-{attempt}-beside"))
        zones = _zones(scene, troom, counts, placer.placed)
        if zones is None:
            continue
        texts = _goal_texts(tpl, counts, scene.rooms[troom], placer, rng)
        rooms = sorted(scene.rooms)
        par_init = rng.sample(rooms, 2)
        seq_init = [rng.choice(zones[0][0]), rng.choice(zones[0][1])]
        par = _record(idx, tpl, apt, placer.graph, scene, target, counts, texts, placer.placed,
                      par_init, "parallel", None, seed)
        seq = _record(idx, tpl, apt, placer.graph, scene, target, counts, texts, placer.placed,
                      seq_init, "sequential", zones, seed)
        if _solvable(par, 1) and _solvable(seq, 2):
            return [par, seq]
    raise RuntimeError(f"task {idx} ({tpl.name}, {k} subgoals): no valid placement in {MAX_ATTEMPTS} attempts")


@functools.lru_cache(maxsize=None)
def _apartment(index: int, seed: int) -> Scene:
    return make_apartment(index, seed)


def suite_plan(seed: int = 0) -> list[tuple[int, Template, int, int]]:
    """(index, template, subgoal count, apartment) for the 96 tasks, balanced."""
    plan = []
    lo, hi = SUBGOAL_RANGE
    idx = 0
    for tpl in TEMPLATES:
        for k in range(lo, hi + 1):
            for _ in range(TASKS_PER_CELL):
                plan.append((idx, tpl, k, idx % N_APARTMENTS))
                idx += 1
    return plan


def generate_suite(seed: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
    """All records (parallel and sequential variant of each task), deterministic in ``seed``."""
    records: list[dict[str, Any]] = []
    for idx, tpl, k, apt in suite_plan(seed)[:limit]:
        records.extend(generate_task(idx, tpl, k, apt, seed))
    return records


#: Where :func:`suite_cache_dir` keeps the generated suite when set (default: ``<outputs>/tasks``).
SUITE_CACHE_ENV = "COLLABLAB_SUITE_CACHE"


def suite_cache_dir() -> Path:
    """The folder that caches generated suites: ``$COLLABLAB_SUITE_CACHE``, else ``tasks/`` under the
    outputs root (so a fresh outputs folder shares one suite with others when the variable is set)."""
    env = os.environ.get(SUITE_CACHE_ENV)
    return Path(env) if env else outputs_dir() / "tasks"


@contextlib.contextmanager
def _generating(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` beside ``path`` while it is generated: a second process that needs
    the same suite at the same time waits and reads the first one's file instead of generating it
    again (no lock where the OS has no ``fcntl``)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(path.with_suffix(".lock"), "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)  # the OS releases it if this process dies
        yield


def load_suite(seed: int = 0, cache_dir: str | Path | None = None, limit: int | None = None) -> list[Task]:
    """The suite as Tasks, generated once per seed and code version (the generator, the world and
    the oracle that validates it all shape the records) and cached as a MECoBench-schema file."""
    if cache_dir is not None:
        tag = f"{SUITE_VERSION}-{code_fingerprint()}-seed{seed}{'' if limit is None else f'-first{limit}'}"
        path = Path(cache_dir) / f"{tag}.json"
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            with _generating(path):
                if not path.is_file():  # another process may have written it while this one waited
                    tmp = path.with_suffix(f".{os.getpid()}.tmp")
                    tmp.write_text(json.dumps(generate_suite(seed, limit), separators=(",", ":")) + "\n")
                    tmp.replace(path)
            for old in path.parent.glob(f"{SUITE_VERSION.rsplit('-', 1)[0]}-*seed{seed}*.json"):
                if old != path and old.name.endswith(path.name.split(f"seed{seed}")[1]):
                    old.unlink(missing_ok=True)  # an earlier code version's suite (49 MB each)
        records = json.loads(path.read_text())
    else:
        records = generate_suite(seed, limit)
    return [task_from_record(r) for r in records]
