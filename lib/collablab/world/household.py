"""Many agents acting at once in one VirtualHome household.

One persistent executor state per episode (VirtualHome's ``EnvironmentState`` changed in
place); each agent is a ``character`` node driven by its own ``ScriptExecutor``. On top of
the executor we enforce MECoBench's legality and interaction rules (mecobench.txt appendix
B.3): visibility, two hands, container state, room accessibility per agent zone, invalid
action names, simultaneous-action conflicts and door handovers (along the task's handover
chain when it has one).

Agents have a place and a view: each stands somewhere (:mod:`.bodies`) and sees an object
only when it is in the same room, not inside a closed container and large enough in its
cameras from where it stands (:mod:`.views`, MECoBench's 400 px / 5 m / 60,000 px rule).
``seen="formula"`` (the default) sizes each box by formula; ``seen="rendered"`` counts its
pixels in the agent's four rendered views (:mod:`.eyes`, :mod:`.camera`: occlusion included).
Each agent also faces somewhere (:attr:`Household.heading`, the direction of its last move;
at the start from its room's centre towards the room's lowest-id door), used only by the
rendered views and kept out of every observation and record.
``walk``, ``grab`` and ``put_*`` take only what the agent sees now; observations, prompts and
rendered views all read :meth:`Household.visible`.

Executor pitfalls handled here (each has a test):
- held objects keep the room they were grabbed in: rooms of held objects are recomputed
  after every action;
- ``ExecutionInfo`` error messages accumulate across calls: a fresh one per call;
- put targets are not checked to be surfaces/containers: checked here;
- the executor has no doors or paths (``_check_closed_doors`` returns ``[]``): doors,
  zones and handovers are modelled here from the scene topology.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from . import vh
from .actions import CONFLICT_ACTIONS, PARALLEL_ACTIONS, SEQUENTIAL_ACTIONS, WAIT, Action
from .bodies import DEFAULT_BODY, BodyRule
from .goals import Predicate, validate_goal
from .scene import STRUCTURAL_CATEGORIES, Scene, SceneError
from . import eyes
from .views import DEFAULT_VIEW, ViewRule, box_of, horizontal_distance

STRUCTURES = ("parallel", "sequential")
SEEN_RULES = ("formula", "rendered")  # Household(seen=...): how visible() decides (module docstring)
Point = tuple[float, float]  # (x, z) on the floor plane


@dataclass
class ActionResult:
    """What happened to one agent's action in one step."""

    agent: int
    action: Action
    status: str  # "ok" | "failed" | "invalid" | "conflict"
    feedback: str
    conflict: bool = False
    spatial_error: bool = False
    handover: str | None = None  # "ok" | "failed" for handover attempts
    completed: list[str] = field(default_factory=list)  # goal keys this action advanced

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def check_n_agents(n: Any, field_name: str = "n_agents") -> int:
    """``n`` if it is a whole number of agents (an int >= 1, not a bool), else ValueError."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"{field_name}: must be an integer >= 1, got {n!r}")
    return n


class Household:
    """A multi-agent household episode over VirtualHome's evolving-graph executor.

    ``step`` takes one action per agent and resolves them simultaneously: conflicting
    ``grab``/``open`` on the same object get one seeded random winner (the others idle),
    handovers are resolved against start-of-step positions, then the remaining actions run
    in a seeded random order, each checked against the state at its turn.
    """

    def __init__(
        self,
        scene: Scene,
        n_agents: int,
        init_rooms: list[int | str],
        goal: list[Predicate],
        structure: str = "parallel",
        allowed_rooms: Mapping[int, Iterable[int]] | None = None,
        seed: int = 0,
        handover_links: Iterable[tuple[int, int, int]] | None = None,
        view: ViewRule = DEFAULT_VIEW,
        body: BodyRule = DEFAULT_BODY,
        seen: str = "formula",
    ) -> None:
        if seen not in SEEN_RULES:
            raise ValueError(f"seen: {seen!r} is not allowed; allowed: {', '.join(SEEN_RULES)}")
        self.seen = seen
        if structure not in STRUCTURES:
            raise ValueError(f"structure: {structure!r} is not allowed; allowed: {', '.join(STRUCTURES)}")
        check_n_agents(n_agents)
        if len(init_rooms) < n_agents:
            raise ValueError(f"init_rooms: {len(init_rooms)} rooms given for {n_agents} agents")
        self.scene = scene
        self.n_agents = n_agents
        self.structure = structure
        self.goal = list(goal)
        self.action_names = SEQUENTIAL_ACTIONS if structure == "sequential" else PARALLEL_ACTIONS
        self.rng = random.Random(seed)
        validate_goal(scene, self.goal)

        all_rooms = set(scene.rooms)
        self.allowed: list[set[int]] = []
        for i in range(n_agents):
            rooms = set(all_rooms)
            if allowed_rooms is not None and i in allowed_rooms:
                rooms = {int(r) for r in allowed_rooms[i]}
                bad = rooms - all_rooms
                if bad:
                    raise SceneError(f"allowed_room_ids[{i}]: {sorted(bad)} are not rooms of the scene")
            self.allowed.append(rooms)
        starts = [scene.room_id(r) for r in init_rooms[:n_agents]]
        for i, r in enumerate(starts):
            if r not in self.allowed[i]:
                raise SceneError(f"init_room_ids[{i}]: room {r} is outside agent {i}'s allowed rooms")

        self._eg = vh.load()
        env, ex, sc = self._eg.environment, self._eg.execution, self._eg.scripts
        self._R, self._S, self._P = env.Relation, env.State, env.Property
        graph = scene.copy_graph()
        self._check_executor_vocabulary(graph)
        first = max(int(n["id"]) for n in graph["nodes"]) + 1
        self.char_ids = [first + i for i in range(n_agents)]
        for cid, room in zip(self.char_ids, starts):
            graph["nodes"].append({"id": cid, "class_name": "character", "category": "Characters",
                                   "properties": [], "states": [], "prefab_name": "Male1"})
            graph["edges"].append({"from_id": cid, "relation_type": "INSIDE", "to_id": room})
        self._graph = env.EnvironmentGraph(graph)
        self.state = env.EnvironmentState(self._graph, {}, instance_selection=True)
        self._executors = [ex.ScriptExecutor(self._graph, {}, char_index=i) for i in range(n_agents)]
        self._actions = {
            "walk": sc.Action.WALK, "walk_to_room": sc.Action.WALK, "grab": sc.Action.GRAB,
            "open": sc.Action.OPEN, "close": sc.Action.CLOSE, "put_on": sc.Action.PUTBACK,
            "put_in": sc.Action.PUTIN,
        }
        self._class_ids: dict[str, list[int]] = {}
        for nid, n in scene.nodes.items():
            self._class_ids.setdefault(n["class_name"], []).append(nid)
        self._static_room = {nid: scene.room_of(nid) for nid in scene.nodes}
        self._movable = {nid for nid, n in scene.nodes.items() if "GRABBABLE" in n.get("properties", [])}
        self.view, self.body = view, body
        self._version, self._held_at, self._held = 0, -1, {}
        self._rooms_at, self._rooms = -1, {}
        self._init_geometry()
        #: (giver, receiver, canonical door id) of the task's handover chain; empty: any pair
        self.handover_links = {(int(g), int(r), self.scene.door(int(d)).id) for g, r, d in (handover_links or ())}
        for g, r, d in sorted(self.handover_links):
            for who in (g, r):
                if not 0 <= who < n_agents:
                    raise SceneError(f"handover_chain: agent {who} of link {g}->{r} at door {d} is not one of "
                                     f"the {n_agents} agents")
        self.at_door: list[int | None] = [None] * n_agents
        self.spot: list[int] = list(starts)  # the node each agent last walked to (a room at the start)
        self.pos: list[Point] = [self._center[r] for r in starts]
        #: unit (x, z) direction each agent faces: its last move's; at the start towards a door
        self.heading: list[Point] = [self._start_heading(r) for r in starts]
        self._placed: dict[int, tuple[tuple[float, float, float], tuple[float, float, float]]] = {}
        self._views: dict[int, tuple[Any, Any]] = {}  # agent -> (pose key, eyes.Views)
        self.placed_by: dict[int, int] = {}
        self.feedback: list[str] = ["" for _ in range(n_agents)]
        self.team_step = 0

    # -- geometry ------------------------------------------------------------------------
    def _init_geometry(self) -> None:
        """Box centres (x, z) and extents of every room and every node an agent can see."""
        self._center: dict[int, Point] = {}
        self._extent: dict[int, float] = {}
        missing = []
        for nid, n in sorted(self.scene.nodes.items()):
            box = box_of(n)
            if box is None:
                if n["category"] not in STRUCTURAL_CATEGORIES or n["category"] == "Rooms":
                    missing.append(nid)
                continue
            (x, _, z), size = box
            self._center[nid] = (x, z)
            self._extent[nid] = max(size)
        if missing:
            n = self.scene.nodes[missing[0]]
            raise SceneError(
                f"graph node {missing[0]} ({n['class_name']}): missing bounding_box (center, size); perception "
                f"needs real boxes and {len(missing)} node(s) lack one (VirtualHome's TrimmedTestScene graphs "
                "have none: use TestScene*_graph.json)")

    def center_of(self, nid: int) -> Point:
        """Where a node is now on the floor plane (a held object is where its holder stands)."""
        h = self.holder(nid) if nid in self._movable else None
        return self.pos[h] if h is not None else self._center[nid]

    def stand_point(self, nid: int, agent: int | None = None) -> Point:
        """Where an agent stands after walking to ``nid`` (a door: its side of it, see :mod:`.bodies`)."""
        if nid in self.scene.rooms:
            return self._center[nid]
        if self.scene.is_door_node(nid) and agent is not None:
            door = self.scene.door(nid)
            here = self.agent_room(agent)
            side = here if here in door.rooms else door.rooms[0]
            (dx, dz), (rx, rz) = self._center[door.id], self._center[side]
            d = max(horizontal_distance((dx, dz), (rx, rz)), 1e-9)
            k = min(1.0, self.body.door_standoff_m / d)
            return (dx + (rx - dx) * k, dz + (rz - dz) * k)
        return self.center_of(nid)

    def sees_from(self, point: Point, nid: int) -> bool:
        """The view rule alone: is ``nid`` large enough in the cameras of someone at ``point``?"""
        ext = self._extent.get(nid)
        return ext is not None and self.view.sees(ext, horizontal_distance(point, self.center_of(nid)))

    def anchor(self, nid: int) -> int | None:
        """The spot a node belongs to: the furniture it lies on or in, else itself; rooms: None."""
        if nid in self.scene.rooms:
            return None
        cur, seen = nid, set()
        while cur not in seen:
            seen.add(cur)
            up = [t for rel in (self._R.ON, self._R.INSIDE) for t in self._targets(cur, rel)
                  if t not in self.scene.rooms and self.node(t).category not in STRUCTURAL_CATEGORIES]
            if not up:
                return cur
            cur = up[0]
        return cur

    def _crowd(self, agent: int, nid: int) -> list[int]:
        """Other agents already standing at ``nid``'s spot when it is full, else []."""
        spot = self.anchor(nid)
        if spot is None:
            return []
        here = [b for b in range(self.n_agents) if b != agent and self.anchor(self.spot[b]) == spot]
        cap = self.body.door_capacity if self.scene.is_door_node(spot) else self.body.furniture_capacity
        return here if len(here) >= cap else []

    def _blocked(self, a: int, act: Action, nid: int) -> ActionResult | None:
        """The failed walk when ``nid``'s spot is full (bodies take space), else None."""
        crowd = self._crowd(a, nid)
        if not crowd:
            return None
        who = " and ".join(f"agent {b}" for b in crowd)
        return self._fail(a, act, f"you could not get to {self.label(nid)}: {who} already stand there "
                                  "and there is no room for you; wait or go elsewhere")

    def _move(self, agent: int, nid: int) -> None:
        old, new = self.pos[agent], self.stand_point(nid, agent)
        d = horizontal_distance(old, new)
        if d > 1e-6:
            self.heading[agent] = ((new[0] - old[0]) / d, (new[1] - old[1]) / d)
        self.pos[agent] = new
        self.spot[agent] = nid

    def _start_heading(self, room: int) -> Point:
        """From the room's centre towards its lowest-id door ((0, 1) when it has none or is on it)."""
        cx, cz = self._center[room]
        for door in sorted(self.scene.doors_of(room), key=lambda d: d.id):
            if door.id in self._center:
                dx, dz = self._center[door.id][0] - cx, self._center[door.id][1] - cz
                d = horizontal_distance((0.0, 0.0), (dx, dz))
                if d > 1e-6:
                    return (dx / d, dz / d)
        return (0.0, 1.0)

    @property
    def version(self) -> int:
        """A counter of state changes (renders are cached per agent pose and version)."""
        return self._version

    def box3(self, nid: int) -> tuple[tuple[float, float, float], tuple[float, float, float]] | None:
        """(centre, size) of a node's 3-D box now: where a put placed it, else the scene graph's box."""
        if nid in self._placed:
            return self._placed[nid]
        return box_of(self.scene.nodes[nid]) if nid in self.scene.nodes else None

    def members(self, room: int) -> list[int]:
        """Node ids in ``room`` now (furniture where the graph put it, movable things where they are)."""
        return self._room_members(room)

    def views(self, agent: int) -> Any:
        """The agent's four rendered views now (:class:`.camera.Views`), rendered once per pose and
        state version."""
        key = (eyes.pose(self, agent), self._version)
        hit = self._views.get(agent)
        if hit is not None and hit[0] == key:
            return hit[1]
        v = eyes.render_agent(self, agent, key[0])
        self._views[agent] = (key, v)
        return v

    # -- validation ----------------------------------------------------------------
    def _check_executor_vocabulary(self, graph: dict[str, Any]) -> None:
        props = set(self._P.__members__)
        states = set(self._S.__members__)
        for n in graph["nodes"]:
            for p in n.get("properties", []):
                if p.upper() not in props:
                    raise SceneError(f"graph node {n['id']} ({n['class_name']}): unknown property {p!r}; "
                                     f"allowed: {', '.join(sorted(props))}")
            for s in n.get("states", []):
                if s.upper() not in states:
                    raise SceneError(f"graph node {n['id']} ({n['class_name']}): unknown state {s!r}; "
                                     f"allowed: {', '.join(sorted(states))}")

    # -- state queries ---------------------------------------------------------------
    def node(self, nid: int) -> Any:
        return self.state.get_node(nid)

    def _targets(self, nid: int, rel: Any) -> list[int]:
        # copy: the executor hands out its internal sets
        return sorted(self.state.get_node_ids_from(nid, rel))

    def room_of(self, nid: int) -> int | None:
        """Current room of a node (characters and held objects included); remembered until the
        state changes (``_touch``)."""
        if self._rooms_at != self._version:
            self._rooms, self._rooms_at = {}, self._version
        if nid not in self._rooms:
            self._rooms[nid] = self._find_room(nid)
        return self._rooms[nid]

    def _find_room(self, nid: int) -> int | None:
        if nid in self.scene.rooms:
            return nid
        seen: set[int] = set()
        frontier = [nid]
        while frontier:
            cur = frontier.pop()
            if cur in self.scene.rooms:
                return cur
            if cur in seen:
                continue
            seen.add(cur)
            frontier.extend(self._targets(cur, self._R.INSIDE))
        return self._static_room.get(nid)

    def agent_room(self, agent: int) -> int:
        room = self.room_of(self.char_ids[agent])
        assert room is not None
        return room

    def holding(self, agent: int) -> list[int]:
        cid = self.char_ids[agent]
        return self._targets(cid, self._R.HOLDS_RH) + self._targets(cid, self._R.HOLDS_LH)

    def holder(self, nid: int) -> int | None:
        return self._holders().get(nid)

    def _holders(self) -> dict[int, int]:
        """Held object -> agent, recomputed after every change of the state."""
        if self._held_at != self._version:
            self._held = {o: a for a in range(self.n_agents) for o in self.holding(a)}
            self._held_at = self._version
        return self._held

    def _touch(self) -> None:
        self._version += 1

    def _free_hand(self, agent: int) -> Any | None:
        cid = self.char_ids[agent]
        if not self._targets(cid, self._R.HOLDS_RH):
            return self._R.HOLDS_RH
        if not self._targets(cid, self._R.HOLDS_LH):
            return self._R.HOLDS_LH
        return None

    def is_open(self, nid: int) -> bool:
        """Not CLOSED: the executor's own rule (it refuses to open what is not CLOSED), so a
        container with neither state shows what is in it."""
        return self._S.CLOSED not in self.node(nid).states

    def hidden_by(self, nid: int) -> int | None:
        """The closed container that hides ``nid``, if any.

        Direct INSIDE parents count, and so do those of a grabbable carrier the object
        sits ON (a pudding on a plate in a closed fridge). Furniture ON furniture is not
        followed: VirtualHome graphs contain box-overlap artefacts such as a kitchen
        counter INSIDE a dishwasher."""
        seen: set[int] = set()
        frontier = [nid]
        while frontier:
            cur = frontier.pop()
            if cur in seen or cur in self.scene.rooms:
                continue
            seen.add(cur)
            for parent in self._targets(cur, self._R.INSIDE):
                if parent in self.scene.rooms:
                    continue
                if not self.is_open(parent):
                    return parent
                frontier.append(parent)
            frontier.extend(t for t in self._targets(cur, self._R.ON)
                            if self._P.GRABBABLE in self.node(t).properties)
        return None

    def visible(self, agent: int, nid: int) -> bool:
        """Held by the agent, or in its room, not inside a closed container (B.3) and large
        enough in its views from where it stands (:mod:`.views`)."""
        n = self.node(nid)
        if n is None or n.category in STRUCTURAL_CATEGORIES:
            return False
        if self.holder(nid) == agent:
            return True
        if self.room_of(nid) != self.agent_room(agent) or self.hidden_by(nid) is not None:
            return False
        if self.seen == "rendered":
            return self.view.sees_area(self.views(agent).total(nid),
                                       horizontal_distance(self.pos[agent], self.center_of(nid)))
        return self.sees_from(self.pos[agent], nid)

    def label(self, nid: int | None) -> str:
        n = self.node(nid) if nid is not None else None
        return f"<{n.class_name}> ({nid})" if n is not None else f"<unknown> ({nid})"

    # -- goals -----------------------------------------------------------------------------
    def _satisfying(self, p: Predicate) -> list[int]:
        rel = self._R.ON if p.relation == "on" else self._R.INSIDE
        targets = set(p.targets)  # any acceptable target satisfies it
        return [o for o in self._class_ids.get(p.obj_class, [])
                if targets & self.state.get_node_ids_from(o, rel)]

    def satisfied(self) -> dict[str, int]:
        """Satisfied count per goal key, capped at the required count."""
        return {p.key: min(p.count, len(self._satisfying(p))) for p in self.goal}

    def completion(self) -> tuple[int, int]:
        """(completed subgoals, total subgoals)."""
        sat = self.satisfied()
        return sum(sat.values()), sum(p.count for p in self.goal)

    def success(self) -> bool:
        done, total = self.completion()
        return done == total

    def credits(self) -> dict[int, int]:
        """Completed subgoals per agent, credited to the agent that placed the object (eq. 3)."""
        out = {a: 0 for a in range(self.n_agents)}
        for p in self.goal:
            for o in sorted(self._satisfying(p), key=lambda o: (o not in self.placed_by, o))[: p.count]:
                if o in self.placed_by:
                    out[self.placed_by[o]] += 1
        return out

    # -- stepping ---------------------------------------------------------------------------
    def step(self, actions: Mapping[int, Action]) -> list[ActionResult]:
        """Resolve one simultaneous action per agent; missing agents wait."""
        acts = {a: actions.get(a, WAIT) for a in range(self.n_agents)}
        results: dict[int, ActionResult] = {}
        for a, act in acts.items():
            err = self._check_form(act)
            if err:
                results[a] = ActionResult(a, act, "invalid", err)
        # conflicts: grab/open on the same object in the same step (B.3)
        by_obj: dict[tuple[str, int], list[int]] = {}
        for a, act in acts.items():
            if a not in results and act.name in CONFLICT_ACTIONS:
                by_obj.setdefault((act.name, int(act.obj)), []).append(a)
        conflicted: set[int] = set()
        for (name, obj), agents in sorted(by_obj.items()):
            if len(agents) > 1:
                winner = self.rng.choice(agents)
                conflicted.update(agents)
                for a in agents:
                    if a != winner:
                        results[a] = ActionResult(
                            a, acts[a], "conflict",
                            f"agent {winner} tried to {name} {self.label(obj)} at the same time and got it; "
                            "you stayed idle this step", conflict=True)
        # handovers against start-of-step positions
        for a in sorted(acts):
            if a not in results and acts[a].name == "handover":
                results[a] = self._handover(a, acts[a], acts, results)
                r = acts[a].recipient
                if results[a].handover == "ok" and isinstance(r, int):
                    results[r] = ActionResult(r, acts[r], "ok", f"you received {self.label(acts[a].obj)} from agent {a}")
        for a in sorted(acts):
            if a not in results and acts[a].name == "receive":
                results[a] = ActionResult(a, acts[a], "ok", "nobody handed you an object this step")
        order = [a for a in sorted(acts) if a not in results]
        self.rng.shuffle(order)
        for a in order:
            results[a] = self._act(a, acts[a])
            results[a].conflict = a in conflicted
        self._fix_held_rooms()
        for a, r in results.items():
            self.feedback[a] = r.feedback
        self.team_step += 1
        return [results[a] for a in range(self.n_agents)]

    def _check_form(self, act: Action) -> str:
        if not isinstance(act, Action) or act.name not in self.action_names:
            name = getattr(act, "name", act)
            return f"invalid action {name!r}; allowed actions: {', '.join(self.action_names)}"
        need = {
            "walk": ("obj",), "grab": ("obj",), "open": ("obj",), "close": ("obj",),
            "put_on": ("obj", "target"), "put_in": ("obj", "target"), "walk_to_room": ("room",),
            "walk_to_door": ("door",), "handover": ("obj", "recipient"),
        }.get(act.name, ())
        for f in need:
            if getattr(act, f) is None:
                return f"invalid {act.name}: missing parameter {f!r}"
        for f in ("obj", "target"):
            v = getattr(act, f)
            if f in need and (not isinstance(v, int) or self.node(v) is None):
                return f"invalid {act.name}: {f}={v!r} is not an object id of this scene"
        return ""

    def _exec(self, agent: int, name: str, *ids: int) -> tuple[bool, str]:
        ex = self._executors[agent]
        ex.info = self._eg.execution.ExecutionInfo()  # messages would accumulate across calls
        sc = self._eg.scripts
        line = sc.ScriptLine(self._actions[name], [sc.ScriptObject(self.node(i).class_name, i) for i in ids], 0)
        ok, state = ex.execute_one_step(sc.Script([line]), self.state, in_place=True)
        self._touch()
        if ok:
            self.state = state
        return ok, ex.info.get_error_string()

    def _fail(self, a: int, act: Action, why: str, spatial: bool = False) -> ActionResult:
        return ActionResult(a, act, "failed", why, spatial_error=spatial)

    def _act(self, a: int, act: Action) -> ActionResult:
        name = act.name
        if name == "wait":
            return ActionResult(a, act, "ok", "you waited")
        if name == "walk_to_room":
            return self._walk_to_room(a, act)
        if name == "walk_to_door":
            return self._walk_to_door(a, act)
        obj = int(act.obj)
        if not self.visible(a, obj):
            return self._fail(a, act, f"{self.label(obj)} is not visible from where you are")
        room = self.room_of(obj)
        if room not in self.allowed[a]:
            return self._fail(a, act, f"{self.label(obj)} is in a room you may not access", spatial=True)
        if name == "walk":
            blocked = self._blocked(a, act, obj)
            if blocked is not None:
                return blocked
            ok, err = self._exec(a, "walk", obj)
            if ok:
                self.at_door[a] = None
                self._move(a, obj)
            return ActionResult(a, act, "ok", f"you walked to {self.label(obj)}") if ok else self._fail(a, act, err)
        if name in ("grab", "open"):
            if self._free_hand(a) is None:
                return self._fail(a, act, f"both your hands are full; put something down before you {name}")
        if name == "grab":
            h = self.holder(obj)
            if h is not None:
                who = "you are" if h == a else f"agent {h} is"
                return self._fail(a, act, f"{self.label(obj)} cannot be grabbed: {who} already holding it")
        if name in ("open", "close"):
            n = self.node(obj)
            if self._P.CAN_OPEN not in n.properties:
                return self._fail(a, act, f"{self.label(obj)} cannot be opened or closed")
            if name == "open" and self._S.OPEN in n.states:
                return self._fail(a, act, f"{self.label(obj)} is already open")
            if name == "close" and self._S.OPEN not in n.states:
                return self._fail(a, act, f"{self.label(obj)} is already closed")
        if name in ("put_on", "put_in"):
            return self._put(a, act)
        ok, err = self._exec(a, name, obj)
        if not ok:
            return self._fail(a, act, err or f"{name} {self.label(obj)} failed")
        verb = {"grab": "grabbed", "open": "opened", "close": "closed"}[name]
        res = ActionResult(a, act, "ok", f"you {verb} {self.label(obj)}")
        if name == "grab":
            self.placed_by.pop(obj, None)
        return res

    def _put(self, a: int, act: Action) -> ActionResult:
        obj, tgt = int(act.obj), int(act.target)
        if obj not in self.holding(a):
            return self._fail(a, act, f"you are not holding {self.label(obj)}")
        if tgt == obj or tgt in self.char_ids or self.holder(tgt) is not None:
            return self._fail(a, act, f"{self.label(obj)} cannot be put on or in {self.label(tgt)}")
        if not self.visible(a, tgt):
            return self._fail(a, act, f"{self.label(tgt)} is not visible from where you are")
        if self.room_of(tgt) not in self.allowed[a]:
            return self._fail(a, act, f"{self.label(tgt)} is in a room you may not access", spatial=True)
        props = self.node(tgt).properties
        if act.name == "put_on" and self._P.SURFACES not in props:
            return self._fail(a, act, f"{self.label(tgt)} is not a surface")
        if act.name == "put_in":
            if self._P.CONTAINERS not in props:
                return self._fail(a, act, f"{self.label(tgt)} is not a container")
            if not self.is_open(tgt):
                return self._fail(a, act, f"{self.label(tgt)} is closed; open it first")
        before = self.satisfied()
        ok, err = self._exec(a, act.name, obj, tgt)
        if not ok:
            return self._fail(a, act, err or f"{act.name} failed")
        self.placed_by[obj] = a
        self._center[obj] = self._center[tgt] if tgt not in self._movable else self.center_of(tgt)
        placed = eyes.placed_box(obj, self.box3(obj), self.box3(tgt), act.name == "put_in")
        if placed is not None:
            self._placed[obj] = placed
        after = self.satisfied()
        done = [k for k in after if after[k] > before[k]]
        rel = "on" if act.name == "put_on" else "in"
        return ActionResult(a, act, "ok", f"you put {self.label(obj)} {rel} {self.label(tgt)}", completed=done)

    def _walk_to_room(self, a: int, act: Action) -> ActionResult:
        try:
            room = self.scene.room_id(act.room)  # type: ignore[arg-type]
        except SceneError as exc:
            return ActionResult(a, act, "invalid", str(exc))
        if room not in self.allowed[a]:
            allowed = ", ".join(self.scene.rooms[r] for r in sorted(self.allowed[a]))
            return self._fail(a, act, f"you may not enter the {self.scene.rooms[room]}; your rooms: {allowed}",
                              spatial=True)
        if room == self.agent_room(a) and self.at_door[a] is None:
            return self._fail(a, act, f"you are already in the {self.scene.rooms[room]}")
        ok, err = self._exec(a, "walk_to_room", room)
        if not ok:
            return self._fail(a, act, err)
        self.at_door[a] = None
        self._move(a, room)
        return ActionResult(a, act, "ok", f"you walked to the {self.scene.rooms[room]}")

    def _walk_to_door(self, a: int, act: Action) -> ActionResult:
        try:
            door = self.scene.door(int(act.door))  # type: ignore[arg-type]
        except (SceneError, TypeError, ValueError) as exc:
            return ActionResult(a, act, "invalid", str(exc))
        sides = [r for r in door.rooms if r in self.allowed[a]]
        if not sides:
            return self._fail(a, act, f"door {door.id} does not border any room you may access", spatial=True)
        here = self.agent_room(a)
        side = here if here in sides else sides[0]
        if self.at_door[a] == door.id and side == here:
            return self._fail(a, act, f"you are already at door {door.id}")
        blocked = self._blocked(a, act, door.id)
        if blocked is not None:
            return blocked
        if side != here:
            ok, err = self._exec(a, "walk_to_room", side)
            if not ok:
                return self._fail(a, act, err)
        cid = self.char_ids[a]
        for other in self._targets(cid, self._R.CLOSE):  # it left whatever it stood close to
            self.state.delete_edge(self.node(cid), self._R.CLOSE, self.node(other))
            self.state.delete_edge(self.node(other), self._R.CLOSE, self.node(cid))
        self.state.add_edge(self.node(cid), self._R.CLOSE, self.node(door.id))
        self.state.add_edge(self.node(door.id), self._R.CLOSE, self.node(cid))
        self.at_door[a] = door.id
        self._move(a, door.id)
        other = self.scene.rooms[door.other(side)]
        return ActionResult(a, act, "ok", f"you are at door {door.id} between the {self.scene.rooms[side]} and the {other}")

    def _handover(self, a: int, act: Action, acts: Mapping[int, Action],
                  results: Mapping[int, ActionResult]) -> ActionResult:
        obj, r = int(act.obj), act.recipient

        def fail(why: str) -> ActionResult:
            return ActionResult(a, act, "failed", why, handover="failed")

        if not isinstance(r, int) or not 0 <= r < self.n_agents or r == a:
            return fail(f"handover: recipient {r!r} is not another agent (0..{self.n_agents - 1})")
        if obj not in self.holding(a):
            return fail(f"you are not holding {self.label(obj)}")
        door = self.at_door[a]
        if door is None:
            return fail("you must stand at a door to hand over (walk_to_door first)")
        if self.at_door[r] != door:
            return fail(f"agent {r} is not at door {door} (handover needs both within 2 m)")
        if acts[r].name != "receive" or r in results:
            return fail(f"agent {r} did not receive this step (it must use 'receive')")
        if self.handover_links and (a, r, door) not in self.handover_links:
            links = ", ".join(f"agent {g} -> agent {t} at door {d}" for g, t, d in sorted(self.handover_links))
            return fail(f"the task's handover chain does not allow agent {a} -> agent {r} at door {door}; "
                        f"allowed: {links}")
        gap = horizontal_distance(self.pos[a], self.pos[r])
        if gap > self.body.handover_distance_m:
            return fail(f"agent {r} is {gap:.1f} m away; a handover needs both within "
                        f"{self.body.handover_distance_m:g} m")
        hand = self._free_hand(r)
        if hand is None:
            return fail(f"agent {r} has no free hand")
        giver, taker = self.node(self.char_ids[a]), self.node(self.char_ids[r])
        node = self.node(obj)
        for rel in (self._R.HOLDS_RH, self._R.HOLDS_LH):
            self.state.delete_edge(giver, rel, node)
        self.state.add_edge(taker, hand, node)
        self._touch()
        self._set_room(obj, self.agent_room(r))
        return ActionResult(a, act, "ok", f"you handed {self.label(obj)} to agent {r}", handover="ok")

    def _set_room(self, obj: int, room: int) -> None:
        node = self.node(obj)
        for t in self._targets(obj, self._R.INSIDE):
            self.state.delete_edge(node, self._R.INSIDE, self.node(t))
        self.state.add_edge(node, self._R.INSIDE, self.node(room))
        self._touch()

    def _fix_held_rooms(self) -> None:
        """Held objects move with their holder (the executor leaves them in the old room)."""
        for a in range(self.n_agents):
            room = self.agent_room(a)
            for obj in self.holding(a):
                if self._targets(obj, self._R.INSIDE) != [room]:
                    self._set_room(obj, room)

    # -- observation ------------------------------------------------------------------------
    def observe(self, agent: int) -> dict[str, Any]:
        """What ``agent`` perceives: room, holdings, visible objects with relations and states."""
        room = self.agent_room(agent)
        held = self.holding(agent)
        visible = []
        for nid in self._room_members(room):
            if nid in held or nid in self.char_ids or not self.visible(agent, nid):
                continue
            n = self.node(nid)
            on = [t for t in self._targets(nid, self._R.ON)]
            inside = [t for t in self._targets(nid, self._R.INSIDE) if t not in self.scene.rooms]
            visible.append({
                "id": nid, "class_name": n.class_name, "category": n.category,
                "properties": sorted(p.name for p in n.properties),
                "states": sorted(s.name for s in n.states),
                "on": on[0] if on else None, "inside": inside[0] if inside else None,
                "held_by": self.holder(nid),
                "distance": round(horizontal_distance(self.pos[agent], self.center_of(nid)), 1),
            })
        others = [{"agent": b, "holding": [self.node(o).class_name for o in self.holding(b)]}
                  for b in range(self.n_agents) if b != agent and self.agent_room(b) == room]
        x, z = self.pos[agent]
        return {
            "agent": agent,
            "step": self.team_step,
            "room": self.scene.rooms[room],
            "room_id": room,
            "at_door": self.at_door[agent],
            "standing_at": self.spot[agent],
            "position": [round(x, 2), round(z, 2)],
            "holding": [{"id": o, "class_name": self.node(o).class_name} for o in held],
            "visible": visible,
            "agents_here": others,
            "doors": [{"id": d.id, "to": self.scene.rooms[d.other(room)]} for d in self.scene.doors_of(room)],
            "allowed_rooms": [self.scene.rooms[r] for r in sorted(self.allowed[agent])],
            "feedback": self.feedback[agent],
            "progress": self.progress_report(),
        }

    def progress_report(self) -> list[dict[str, Any]]:
        """Per goal key: required and satisfied counts (MECoBench's $TASK_PROGRESS)."""
        sat = self.satisfied()
        return [{"key": p.key, "class": p.obj_class, "relation": p.relation, "target_id": p.target_id,
                 "target": self.node(p.target_id).class_name, "required": p.count, "satisfied": sat[p.key]}
                for p in self.goal]

    def _room_members(self, room: int) -> list[int]:
        out = []
        for nid, r in self._static_room.items():
            if nid in self._movable:
                continue
            if r == room:
                out.append(nid)
        out.extend(o for o in self._movable if self.room_of(o) == room)
        return sorted(out)

    def snapshot(self) -> dict[str, Any]:
        """Canonical (sorted) graph of the current state, for comparisons and logs."""
        d = self.state.to_dict()
        return {
            "nodes": sorted(d["nodes"], key=lambda n: n["id"]),
            "edges": sorted(d["edges"], key=lambda e: (e["from_id"], e["relation_type"], e["to_id"])),
        }
