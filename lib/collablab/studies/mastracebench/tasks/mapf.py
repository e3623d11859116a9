"""MAPF (mastracebench.txt §3 "Benchmark Design", Table 1, appendix "MAPF", eq 9, Fig 7).

Robots move synchronously on a grid with obstacles; a proposal is a joint plan, one move
sequence per robot over ``U`` (up), ``D`` (down), ``L`` (left), ``R`` (right), ``S`` (stay).
Cells are ``(row, col)`` with row 0 at the top: ``U`` is row - 1, ``D`` row + 1, ``L`` col - 1,
``R`` col + 1. The plan runs for at most :data:`MAX_STEPS` = 30 steps (appendix); the score is
eq 9, the share of robots at their goals, times 100; ``S*`` = 100 (every generated instance is
solved by :func:`solve`, so full arrival is attainable).

Decisions the paper leaves open (tested in tests/test_mastracebench_mapf.py):

- **Length.** Moves past step 30 are ignored (truncated); a robot whose sequence is shorter
  than the longest one stays in place afterwards (its sequence is padded with ``S``).
- **Invalid move.** A move off the grid or into an obstacle leaves that robot in place for the
  step; the event is counted (``invalid_moves``) and execution continues.
- **Collisions.** Two kinds: a *vertex* conflict (two robots would occupy one cell after the
  step) and a *swap* conflict (two robots would exchange cells). Every moving robot involved
  stays in place for that step and the event is counted; this is repeated within the step
  until no conflict is left (a blocked robot can block the robot behind it). Following a robot
  into the cell it leaves in the same step, and rotations along a cycle, are not collisions.
  Why not stop the plan on the first collision: eq 9 is a graded per-robot score, and halting
  would also freeze robots that did nothing wrong; a blocked robot still pays, because its
  later moves start from the wrong cell. The counts keep a strict reading available.
- **Arrival.** A robot counts when it stands on its goal at the end of execution; passing
  through the goal and leaving it does not count.
- **Parsing.** The appendix: "the MAS produces a joint plan containing one action sequence for
  each robot". A reply is read as ONE joint plan (:func:`parse_mapf`): every robot ``1..n``
  must be named exactly once (missing, extra, or repeated robots are ``Invalid``, the reason
  names them); keys naming no robot (``"explanation"``, ``"reasoning"``) are ignored; one
  robot's move list is never re-read as a joint plan; unknown move tokens are ``Invalid``;
  ``Invalid`` scores 0.
- **Canonical form.** Truncated to 30 moves with trailing ``S`` removed: plans that execute
  identically compare equal for voting and agreement (FPA, appendix eq 24).
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .base import Invalid, is_invalid

__all__ = [
    "DELTAS",
    "MAX_STEPS",
    "MOVES",
    "Cell",
    "Event",
    "Execution",
    "MAPFInstance",
    "MAPFTask",
    "Plan",
    "bottleneck_5x5",
    "canonical_mapf",
    "execute",
    "generate_mapf",
    "mapf_prompt",
    "parse_mapf",
    "score_mapf",
    "solve",
]

Cell = tuple[int, int]
Plan = tuple[tuple[str, ...], ...]

MOVES = ("U", "D", "L", "R", "S")
DELTAS: dict[str, Cell] = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1), "S": (0, 0)}
MAX_STEPS = 30


def _cell(value: Any, what: str) -> Cell:
    if not (isinstance(value, (list, tuple)) and len(value) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise ValueError(f"{what}: expected a [row, col] pair of ints, got {value!r}")
    return (value[0], value[1])


@dataclass(frozen=True)
class MAPFInstance:
    """One MAPF sample: map boundary, obstacles, and each robot's start and goal (appendix).

    Robot ``i`` (0-based here, ``robot_{i+1}`` in prompts and replies) starts at
    ``starts[i]`` and must reach ``goals[i]``. Bad fields raise ``ValueError`` naming them.
    """

    width: int
    height: int
    obstacles: frozenset[Cell]
    starts: tuple[Cell, ...]
    goals: tuple[Cell, ...]
    name: str = ""

    def __post_init__(self) -> None:
        if self.width < 1 or self.height < 1:
            raise ValueError(f"width/height: must be positive, got {self.width}x{self.height}")
        object.__setattr__(self, "obstacles", frozenset(self.obstacles))
        object.__setattr__(self, "starts", tuple(tuple(c) for c in self.starts))
        object.__setattr__(self, "goals", tuple(tuple(c) for c in self.goals))
        if not self.starts:
            raise ValueError("starts: at least one robot is needed")
        if len(self.starts) != len(self.goals):
            raise ValueError(f"goals: {len(self.goals)} goals for {len(self.starts)} robots")
        for what in ("obstacles", "starts", "goals"):
            for c in getattr(self, what):
                if not self.in_bounds(c):
                    raise ValueError(f"{what}: cell {c} is off the {self.height}x{self.width} grid")
        for what in ("starts", "goals"):
            cells = getattr(self, what)
            if len(set(cells)) != len(cells):
                raise ValueError(f"{what}: two robots share a cell")
            if self.obstacles & set(cells):
                raise ValueError(f"{what}: a cell is an obstacle")

    @property
    def n_robots(self) -> int:
        """Number of robots."""
        return len(self.starts)

    def in_bounds(self, c: Cell) -> bool:
        """True when ``c`` lies on the grid."""
        return 0 <= c[0] < self.height and 0 <= c[1] < self.width

    def free(self, c: Cell) -> bool:
        """True when ``c`` is on the grid and not an obstacle."""
        return self.in_bounds(c) and c not in self.obstacles

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (cells as ``[row, col]`` lists, obstacles sorted)."""
        return {"name": self.name, "width": self.width, "height": self.height,
                "obstacles": [list(c) for c in sorted(self.obstacles)],
                "starts": [list(c) for c in self.starts], "goals": [list(c) for c in self.goals]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> MAPFInstance:
        """Inverse of :meth:`to_dict`; a missing or malformed field raises ``ValueError``."""
        for key in ("width", "height", "obstacles", "starts", "goals"):
            if key not in d:
                raise ValueError(f"{key}: missing from the MAPF record")
        return cls(width=int(d["width"]), height=int(d["height"]),
                   obstacles=frozenset(_cell(c, "obstacles") for c in d["obstacles"]),
                   starts=tuple(_cell(c, "starts") for c in d["starts"]),
                   goals=tuple(_cell(c, "goals") for c in d["goals"]), name=str(d.get("name", "")))


@dataclass(frozen=True)
class Event:
    """Something that kept robots in place at step ``t`` (1-based): ``kind`` is ``invalid``,
    ``vertex`` or ``swap``; ``robots`` are 0-based robot indices."""

    t: int
    kind: str
    robots: tuple[int, ...]


@dataclass(frozen=True)
class Execution:
    """The outcome of running a joint plan: final cells, arrivals and the counted events."""

    positions: tuple[Cell, ...]
    arrived: tuple[bool, ...]
    steps: int
    events: tuple[Event, ...] = field(default=())

    def count(self, kind: str) -> int:
        """Number of events of ``kind`` (``invalid``, ``vertex`` or ``swap``)."""
        return sum(e.kind == kind for e in self.events)

    @property
    def collisions(self) -> int:
        """Vertex plus swap conflicts."""
        return self.count("vertex") + self.count("swap")


def _step(pos: list[Cell], moves: Sequence[str], inst: MAPFInstance, t: int,
          events: list[Event]) -> list[Cell]:
    """One synchronous step under the module's invalid-move and collision rules."""
    n = len(pos)
    want: list[Cell] = []
    for i in range(n):
        dr, dc = DELTAS[moves[i]]
        nxt = (pos[i][0] + dr, pos[i][1] + dc)
        if not inst.free(nxt):
            events.append(Event(t, "invalid", (i,)))
            nxt = pos[i]
        want.append(nxt)
    while True:
        blocked: set[int] = set()
        for i, j in itertools.combinations(range(n), 2):
            if want[i] != pos[i] and want[j] != pos[j] and want[i] == pos[j] and want[j] == pos[i]:
                events.append(Event(t, "swap", (i, j)))
                blocked |= {i, j}
        claims: dict[Cell, list[int]] = {}
        for i in range(n):
            if i not in blocked:
                claims.setdefault(want[i], []).append(i)
        for robots in claims.values():
            if len(robots) > 1:
                events.append(Event(t, "vertex", tuple(robots)))
                blocked |= {i for i in robots if want[i] != pos[i]}
        if not blocked:
            return want
        for i in blocked:
            want[i] = pos[i]


def execute(plan: Sequence[Sequence[str]], instance: MAPFInstance) -> Execution:
    """Run ``plan`` synchronously for at most 30 steps (appendix "MAPF"; rules in the module
    docstring). ``plan`` needs one move sequence per robot over :data:`MOVES`."""
    if len(plan) != instance.n_robots:
        raise ValueError(f"plan: {len(plan)} move sequences for {instance.n_robots} robots")
    seqs = [list(s)[:MAX_STEPS] for s in plan]
    for i, s in enumerate(seqs):
        bad = [m for m in s if m not in DELTAS]
        if bad:
            raise ValueError(f"plan: robot {i + 1} has unknown moves {bad}")
    steps = max((len(s) for s in seqs), default=0)
    pos = list(instance.starts)
    events: list[Event] = []
    for t in range(steps):
        pos = _step(pos, [s[t] if t < len(s) else "S" for s in seqs], instance, t + 1, events)
    arrived = tuple(p == g for p, g in zip(pos, instance.goals))
    return Execution(tuple(pos), arrived, steps, tuple(events))


def score_mapf(plan: Plan | Invalid, instance: MAPFInstance) -> float:
    """Eq 9 on 0-100: 100 x (robots on their goal at the end) / (robots). ``Invalid`` -> 0."""
    if is_invalid(plan):
        return 0.0
    arrived = execute(plan, instance).arrived  # type: ignore[arg-type]
    return 100.0 * sum(arrived) / instance.n_robots


def canonical_mapf(plan: Plan | Invalid) -> Any:
    """Tuple of per-robot move tuples, truncated to 30 and without trailing ``S``."""
    if is_invalid(plan):
        return plan
    out = []
    for seq in plan:  # type: ignore[union-attr]
        s = list(seq)[:MAX_STEPS]
        while s and s[-1] == "S":
            s.pop()
        out.append(tuple(s))
    return tuple(out)


def bottleneck_5x5() -> MAPFInstance:
    """Fig 7's kind of sample: a 5x5 map split by a wall (column 2) with a one-cell gap at
    (2, 2). Robot 1 goes from the left (1, 0) to the right (3, 4), robot 2 the other way;
    both shortest paths cross the gap at step 3, so one robot must wait or step aside.

    ::

        . . # . .
        1 . # . g1
        . . . . .
        g2 . # . 2
        . . # . .
    """
    return MAPFInstance(width=5, height=5, obstacles=frozenset({(0, 2), (1, 2), (3, 2), (4, 2)}),
                        starts=((1, 0), (3, 4)), goals=((3, 4), (1, 0)), name="bottleneck_5x5")


# --- solver: prioritized planning, time-expanded BFS with reservations -------------------------

def _plan_one(inst: MAPFInstance, start: Cell, goal: Cell, vertex: set[tuple[Cell, int]],
              edge: set[tuple[Cell, Cell, int]], last_use: dict[Cell, int], horizon: int
              ) -> list[Cell] | None:
    """Earliest-arrival path (cells at t = 0..T) avoiding reserved cells and swaps, arriving
    at ``goal`` at a time after which no earlier robot uses it, or ``None``."""
    if (start, 0) in vertex:
        return None
    parent: dict[tuple[Cell, int], tuple[Cell, int] | None] = {(start, 0): None}
    queue = deque([(start, 0)])
    while queue:
        c, t = queue.popleft()
        if c == goal and last_use.get(goal, -1) < t:
            path = [c]
            node = parent[(c, t)]
            while node is not None:
                path.append(node[0])
                node = parent[node]
            return path[::-1]
        if t == horizon:
            continue
        for m in MOVES:
            dr, dc = DELTAS[m]
            nxt = (c[0] + dr, c[1] + dc)
            state = (nxt, t + 1)
            if (not inst.free(nxt) or state in parent or state in vertex
                    or (c, nxt, t) in edge):
                continue
            parent[state] = (c, t)
            queue.append(state)
    return None


def _moves(path: Sequence[Cell]) -> tuple[str, ...]:
    inv = {d: m for m, d in DELTAS.items()}
    return tuple(inv[(b[0] - a[0], b[1] - a[1])] for a, b in itertools.pairwise(path))


def _prioritized(inst: MAPFInstance, order: Sequence[int], horizon: int) -> Plan | None:
    vertex: set[tuple[Cell, int]] = set()
    edge: set[tuple[Cell, Cell, int]] = set()
    last_use: dict[Cell, int] = {}
    plans: dict[int, tuple[str, ...]] = {}
    for i in order:
        path = _plan_one(inst, inst.starts[i], inst.goals[i], vertex, edge, last_use, horizon)
        if path is None:
            return None
        plans[i] = _moves(path)
        full = path + [path[-1]] * (horizon + 1 - len(path))
        for t, c in enumerate(full):
            vertex.add((c, t))
            last_use[c] = max(last_use.get(c, -1), t)
            if t < horizon:
                edge.add((full[t + 1], c, t))  # a later robot may not swap with this one
    return tuple(plans[i] for i in range(inst.n_robots))


def solve(instance: MAPFInstance, horizon: int = MAX_STEPS) -> Plan | None:
    """A collision-free joint plan that brings every robot to its goal within ``horizon`` steps,
    or ``None`` if none was found. Prioritized planning (each robot a time-expanded BFS around
    the reserved paths of the robots before it, holding its goal to the end); all priority
    orders are tried for up to 4 robots, 24 fixed seeded orders beyond. The result is checked
    with :func:`execute`. Incomplete in general: ``None`` does not prove unsolvability."""
    n = instance.n_robots
    if n <= 4:
        orders: list[Sequence[int]] = list(itertools.permutations(range(n)))
    else:
        rng = random.Random(f"mapf-orders-{n}")
        orders = [tuple(range(n))] + [tuple(rng.sample(range(n), n)) for _ in range(23)]
    for order in orders:
        plan = _prioritized(instance, order, horizon)
        if plan is not None:
            run = execute(plan, instance)
            if all(run.arrived) and not run.events:
                return plan
    return None


# --- seeded generator --------------------------------------------------------------------------

def _layout(rng: random.Random, h: int, w: int) -> tuple[str, set[Cell]]:
    kind = rng.choice(("open", "bottleneck", "rooms"))
    obs: set[Cell] = set()
    if kind == "open":
        density = rng.uniform(0.08, 0.25)
        obs = {(r, c) for r in range(h) for c in range(w) if rng.random() < density}
    elif kind == "bottleneck":
        col = rng.randrange(1, w - 1)
        gaps = set(rng.sample(range(h), rng.choice((1, 1, 2))))
        obs = {(r, col) for r in range(h) if r not in gaps}
        obs |= {(r, c) for r in range(h) for c in range(w) if c != col and rng.random() < 0.06}
    else:
        rr, cc = rng.randrange(1, h - 1), rng.randrange(1, w - 1)
        obs = {(rr, c) for c in range(w)} | {(r, cc) for r in range(h)}
        for seg in ([(rr, c) for c in range(cc)], [(rr, c) for c in range(cc + 1, w)],
                    [(r, cc) for r in range(rr)], [(r, cc) for r in range(rr + 1, h)]):
            if seg and rng.random() < 0.85:
                obs.discard(rng.choice(seg))
    return kind, obs


def _draw(rng: random.Random, name: str) -> MAPFInstance:
    h, w = rng.randint(4, 8), rng.randint(4, 8)
    kind, obs = _layout(rng, h, w)
    free = [(r, c) for r in range(h) for c in range(w) if (r, c) not in obs]
    n = rng.randint(2, min(5, 2 + (h * w) // 16))
    if len(free) < 2 * n:
        raise ValueError("too few free cells")
    cells = rng.sample(free, 2 * n)
    starts, goals = cells[:n], cells[n:]
    return MAPFInstance(width=w, height=h, obstacles=frozenset(obs), starts=tuple(starts),
                        goals=tuple(goals), name=f"{name}-{kind}")


def generate_mapf(n: int = 157, seed: int = 0) -> list[MAPFInstance]:
    """``n`` seeded instances (157 as in Table 1) of 4-8 x 4-8 maps (open scatter, one wall with
    a bottleneck gap, or four rooms with doors), 2-5 robots with distinct starts and goals.
    A draw that :func:`solve` cannot solve within 30 steps is rejected and redrawn. Instance
    ``i`` depends only on ``(seed, i)``, so a shorter list is a prefix of a longer one."""
    out = []
    for i in range(n):
        rng = random.Random(f"mapf:{seed}:{i}")
        while True:
            try:
                inst = _draw(rng, f"mapf-{seed}-{i:03d}")
            except ValueError:
                continue
            if solve(inst) is not None:
                out.append(inst)
                break
    return out


# --- parser ------------------------------------------------------------------------------------

_WORDS = {"up": "U", "down": "D", "left": "L", "right": "R", "stay": "S", "wait": "S",
          "u": "U", "d": "D", "l": "L", "r": "R", "s": "S", "w": "S"}
# possessive runs (``*+``): the same language, without cubic backtracking on long runs of spaces
_ROBOT_KEY = re.compile(r"^\s*+(?:robot|agent|r)?[\s_\-#]*+(\d+)\s*$", re.IGNORECASE)
_ROBOT_LINE = re.compile(r"^\s*+[-*>]*+\s*+\**+\s*+(?:robot|agent|r)[\s_\-#]*+(\d+)\s*+\**+\s*+[:=]\s*(.*)$",
                         re.IGNORECASE)
_PLAN_KEYS = ("joint_plan", "plan", "plans", "paths", "moves", "actions", "robots", "answer", "final_answer",
              "solution")
_OPEN = re.compile(r"[\[{]")


def _number(digits: str) -> int | None:
    """The robot number a run of digits spells; None past ``int``'s 4300-digit limit."""
    try:
        return int(digits)
    except ValueError:
        return None


def _tokens(value: Any, robot: int) -> tuple[str, ...] | Invalid:
    """Moves from a list of tokens or a string like ``"U R S"``, ``"U,R,S"`` or ``"URS"``."""
    if isinstance(value, str):
        raw = [t for t in re.split(r"[^A-Za-z]+", value) if t]
    elif isinstance(value, list) and all(isinstance(t, str) for t in value):
        raw = [t.strip() for t in value]
    else:
        return Invalid(f"robot {robot}: moves must be a list of strings or a string")
    out: list[str] = []
    for tok in raw:
        low = tok.lower()
        if low in _WORDS:
            out.append(_WORDS[low])
        elif re.fullmatch(r"[udlrs]+", low):
            out.extend(ch.upper() for ch in low)
        else:
            return Invalid(f"robot {robot}: unknown move {tok!r}")
    return tuple(out)


def _assemble(found: Mapping[int, Any], n: int) -> Plan | Invalid:
    missing = [k for k in range(1, n + 1) if k not in found]
    extra = sorted(k for k in found if not 1 <= k <= n)
    if extra:
        return Invalid(f"unknown robots {extra}; the instance has robots 1..{n}")
    if missing:
        return Invalid(f"no moves for robots {missing}: a joint plan gives one move sequence for "
                       f"every robot, robot_1..robot_{n}")
    seqs = []
    for k in range(1, n + 1):
        seq = _tokens(found[k], k)
        if is_invalid(seq):
            return seq  # type: ignore[return-value]
        seqs.append(seq)
    return tuple(seqs)  # type: ignore[arg-type]


def _from_robot_object(obj: Mapping[str, Any], n: int) -> Plan | Invalid:
    """The joint plan of an object keyed by robot; keys naming no robot are ignored."""
    found: dict[int, Any] = {}
    for k, v in obj.items():
        m = _ROBOT_KEY.match(str(k))
        if not m:
            continue  # "explanation", "reasoning", ...
        r = _number(m.group(1))
        if r is None:
            return Invalid(f"robot {m.group(1)[:12]}... is not a robot of the instance")
        if r in found:
            return Invalid(f"robot {r} is given twice")
        found[r] = v
    return _assemble(found, n)


def _is_sequence_list(obj: Any) -> bool:
    """A list whose every element is a list of strings: move sequences in robot order."""
    return (isinstance(obj, list) and bool(obj)
            and all(isinstance(s, list) and all(isinstance(t, str) for t in s) for s in obj))


def _from_sequence_list(obj: list[Any], n: int) -> Plan | Invalid:
    if len(obj) != n:
        return Invalid(f"{len(obj)} move sequences for {n} robots")
    return _assemble({k + 1: v for k, v in enumerate(obj)}, n)


def _find_plan(obj: Any, n: int, top: bool, depth: int = 0) -> Plan | Invalid | None:
    """The joint plan in one JSON value, an ``Invalid`` naming why the one it holds is not
    usable, or None when it holds none.

    An object with robot keys *is* the joint plan (its other keys are ignored; its robot values
    are not searched further). Otherwise its values are searched, those under
    ``_PLAN_KEYS`` first; a list of move-sequence lists is a joint plan in robot order only
    at the top or directly under a plan key. A single robot's move list is never a joint plan.
    """
    if depth > 32:
        return None
    if isinstance(obj, dict):
        if any(_ROBOT_KEY.match(str(k)) for k in obj):
            return _from_robot_object(obj, n)
        plan_keyed = [(True, v) for k, v in obj.items() if str(k).lower() in _PLAN_KEYS]
        others = [(False, v) for k, v in obj.items() if str(k).lower() not in _PLAN_KEYS]
        first_invalid: Invalid | None = None
        for under_plan_key, v in plan_keyed + others:
            got = _find_plan(v, n, under_plan_key, depth + 1)
            if got is None:
                continue
            if not is_invalid(got):
                return got
            first_invalid = first_invalid or got  # type: ignore[assignment]
        return first_invalid
    if isinstance(obj, list):
        if _is_sequence_list(obj):
            return _from_sequence_list(obj, n) if top else None
        first_invalid = None
        for v in obj:
            if isinstance(v, dict):
                got = _find_plan(v, n, False, depth + 1)
                if got is not None and not is_invalid(got):
                    return got
                first_invalid = first_invalid or got  # type: ignore[assignment]
        return first_invalid
    return None


def _top_level_json(text: str) -> list[Any]:
    """The JSON objects and lists of ``text`` that do not lie inside another one, in order
    (a bracket that starts no JSON value is skipped)."""
    dec = json.JSONDecoder()
    out: list[Any] = []
    pos = 0
    while (m := _OPEN.search(text, pos)) is not None:
        try:
            obj, end = dec.raw_decode(text, m.start())
        except (ValueError, RecursionError):  # not JSON, a number past 4300 digits, or nested ~1000 deep
            pos = m.start() + 1
            continue
        out.append(obj)
        pos = end
    return out


def parse_mapf(text: str, instance: MAPFInstance) -> Plan | Invalid:
    """ONE joint plan from a reply, or ``Invalid`` with the reason (appendix "MAPF": "the MAS
    produces a joint plan containing one action sequence for each robot").

    Read, in order:

    - a JSON object keyed by robot, ``{"robot_1": ["U", "R"], "robot_2": "L L S"}`` (keys like
      ``robot_1``, ``Robot 1``, ``agent_1``, ``r1``, ``1``). It must name every robot
      ``1..n`` once: a robot missing, unknown or given twice makes the reply ``Invalid``.
      Keys naming no robot (``"explanation"``, ``"reasoning"``, ...) are ignored. The object
      may sit inside others (e.g. under ``plan``/``joint_plan``/``paths``/``answer``; keys in
      ``_PLAN_KEYS`` are looked at first);
    - a JSON list of ``n`` move lists in robot order, ``[["U"], ["D", "S"]]``, at the top of
      the reply or directly under a plan key;
    - lines ``Robot 1: U R S``, one per robot.

    A robot's own move list is never read as a joint plan, whatever its length (a reply
    ``{"robot_1": ["R", "D"]}`` for two robots is ``Invalid``, not "robot 1 R, robot 2 D").
    Moves may be letters or words (``up``, ``stay``, ``wait``), any case, in code fences or
    prose. Only JSON values not nested in another are candidates; the first that yields a
    joint plan wins, then the robot lines; otherwise the first reason found.
    """
    n = instance.n_robots
    reasons: list[str] = []
    for obj in _top_level_json(text):
        plan = _find_plan(obj, n, top=True)
        if plan is None:
            continue
        if not is_invalid(plan):
            return plan
        reasons.append(plan.reason)  # type: ignore[union-attr]
    found: dict[int, str] = {}
    for line in text.splitlines():
        m = _ROBOT_LINE.match(line.replace("`", ""))
        if m:
            k = _number(m.group(1))
            if k is None:
                reasons.append(f"robot {m.group(1)[:12]}... is not a robot of the instance")
                break
            if k in found:
                reasons.append(f"robot {k} is given twice")
                break
            found[k] = m.group(2)
    else:
        if found:
            plan = _assemble(found, n)
            if not is_invalid(plan):
                return plan
            reasons.append(plan.reason)  # type: ignore[union-attr]
    return Invalid(reasons[0] if reasons else "no joint plan found in the reply")


# --- prompt ------------------------------------------------------------------------------------

def _grid(inst: MAPFInstance) -> str:
    marks: dict[Cell, str] = {c: "#" for c in inst.obstacles}
    for i, c in enumerate(inst.goals):
        marks[c] = chr(ord("a") + i) if i < 26 else "g"
    for i, c in enumerate(inst.starts):
        marks[c] = str(i + 1) if i < 9 else "*"
    header = "    " + " ".join(str(c % 10) for c in range(inst.width))
    rows = [f"{r:>3} " + " ".join(marks.get((r, c), ".") for c in range(inst.width))
            for r in range(inst.height)]
    return "\n".join([header, *rows])


def mapf_prompt(instance: MAPFInstance) -> str:
    """The task prompt, in the spirit of Fig 11 (priorities, collision rules, coordination
    guidance), in our own words; the reply format is the JSON that :func:`parse_mapf` reads."""
    robots = "\n".join(f"- robot_{i + 1}: start {s} -> goal {g}"
                       for i, (s, g) in enumerate(zip(instance.starts, instance.goals)))
    obstacles = ", ".join(str(c) for c in sorted(instance.obstacles)) or "none"
    example = ", ".join(f'"robot_{i + 1}": ["R", "S", "D"]' for i in range(instance.n_robots))
    return f"""You control {instance.n_robots} robots on a grid and must write one joint plan.

Map: {instance.height} rows x {instance.width} columns. Cells are (row, col); row 0 is the top
row, column 0 the left column. Obstacles: {obstacles}.
Map picture (# obstacle, digits = robot starts, letters = goals: a for robot_1, b for robot_2, ...):
{_grid(instance)}

Robots:
{robots}

Moves: U (row - 1), D (row + 1), L (col - 1), R (col + 1), S (stay). All robots move at the same
time, one move each per step. At most {MAX_STEPS} steps are executed; later moves are ignored,
and a robot whose list ends early stays where it is.

Rules:
- A move off the grid or into an obstacle fails: the robot stays where it is for that step.
- Two robots may never end a step in the same cell, and two neighbouring robots may never swap
  cells. Robots involved in such a collision stay where they are for that step, which usually
  spoils the rest of their plan. Moving into a cell that another robot leaves in the same step
  is allowed.
- A robot counts as arrived only if it stands on its goal when the plan ends.

Priorities, in order: (1) bring as many robots as possible to their goals; (2) avoid every
collision and failed move; (3) prefer shorter plans.

Coordination advice: plan robot by robot and simulate the joint plan step by step, writing down
every robot's cell after each step. Where paths cross or share a narrow passage, let one robot
wait (S) or step aside into a free cell until the other has passed. Keep arrived robots out of
others' way.

Reply with JSON only, one list of moves per robot, for example:
{{{example}}}
"""


@dataclass(frozen=True)
class MAPFTask:
    """The MAPF task (Table 1) behind the :class:`~.base.Task` interface."""

    name: str = "mapf"

    def score(self, proposal: Plan | Invalid, instance: MAPFInstance) -> float:
        """See :func:`score_mapf`."""
        return score_mapf(proposal, instance)

    def max_score(self, instance: MAPFInstance) -> float:
        """S* = 100: every robot can arrive (generated instances are solved by :func:`solve`)."""
        return 100.0

    def canonical(self, proposal: Plan | Invalid) -> Any:
        """See :func:`canonical_mapf`."""
        return canonical_mapf(proposal)

    def parse(self, text: str, instance: MAPFInstance) -> Plan | Invalid:
        """See :func:`parse_mapf`."""
        return parse_mapf(text, instance)
