"""PARTNR's evaluation engine: propositions over the ground-truth world, when each is queried, and
what counts as done (Success and Percent Complete), after PARTNR's evaluation README.

A :class:`TaskEvaluation` holds an episode's propositions, dependencies and constraints; an
:class:`Evaluator` follows one episode through :meth:`Evaluator.update` calls and scores it.
Choices this module makes where the README says nothing:

* All world reads go through :class:`EvalState`. ``is_inside`` means relation ``"within"`` and
  ``is_on_top`` relation ``"on"``. ``is_next_to`` measures the horizontal distance between the two
  centres minus both half-extents, clipped at 0, against ``<= l2_threshold``; nothing is next to
  itself. A state that was never set takes its default (clean, filled, powered on: False).
* ``number=n``: n distinct handles of the first list must satisfy. With ``is_same_*`` they must all
  use one and the same receptacle / room / b. Repeated handles count once. A ``number`` above the
  count of candidate handles can never hold and is rejected as bad input. ``info`` reports the first
  assignment in list order (handles; with ``is_same_*`` the first of the largest groups, in the
  order of the receptacle / room / b list).
* ``is_clustered``: one handle per selected slot, no handle used twice, and every selected
  entity next to at least one other selected entity (the cluster need not be connected). The
  ``number`` list needs one entry per group (an int is copied to every group); a cluster needs at
  least two members.
* Dependencies are judged on the current update too: a proposition is queried when its
  depends-on propositions, in the state being recorded now, allow it. So a change that completes
  A and B in one update counts B under ``while_satisfied``/``after_satisfied`` on A.
  ``after_satisfied`` = held now or at an earlier update; ``after_unsatisfied`` = held at an earlier
  update and not now; ``before_satisfied`` = neither now nor at any earlier update. A proposition
  that is not queried is recorded as unsatisfied, and dependencies read those recorded values. If
  dependencies form a cycle, the proposition met again while being resolved contributes its value
  from the previous update (False at the first).
* Units: a proposition with ``number=n`` is worth n units and ``is_clustered`` one unit ("A
  proposition that requires ``n`` objects of a set will be unrolled to ``n`` propositions for the
  purposes of this metric"). Unit k is done at the first update where at least k handles satisfy the
  proposition (while it is queried), so partial credit is the most handles ever satisfying it across
  the recorded updates (not only at the final state). Each unit is judged by its own placement, as
  an unrolled proposition of its own: the unit(s) completed at an update take the satisfying handles
  (with their receptacle / room / b) not already credited to an earlier unit, in list order; their
  ``info`` is that one placement (strings, as for ``number=1``), never the other units' placements.
  ``satisfied_at`` holds the ``step`` given to :meth:`Evaluator.update` at which the full
  proposition (all n) first held. Steps must not decrease.
* Constraints only invalidate units that were satisfied. Temporal ``(A, B)`` ("(A, B) means prop A
  must be satisfied before prop B"; "If propositions are satisfied out of order, then the task is
  marked unsuccessful") is read over the transitive closure of the DAG: a unit of B first satisfied
  at step t is invalid when some ancestor A was never fully satisfied or was first fully satisfied
  at or after t. A tie (A and B first satisfied at the same step) fails B: "before" is strict, as
  in PARTNR's engine; updates that share a step (two agents' actions ending at one simulation
  step) are one moment. TerminalSatisfaction: unit k must still be met (k handles) at the last
  update. Same/DifferentArg go through the satisfied units of the listed propositions in the order
  they were first satisfied (ties: list order, then unit order). SameArg: the first unit sets the
  reference value; every unit, its own proposition's included, must share a value with it.
  DifferentArg: a unit is invalid when it shares a value with an earlier unit of another listed
  proposition (units of one proposition are not compared with each other). Values are read from
  each unit's own ``info`` (above); ``*args_i`` names group i of ``is_clustered``.
* ``constraint_satisfaction[i][j]`` judges proposition j's full satisfaction (True when it never
  was fully satisfied). A task with no propositions scores 0.0. ``n_propositions``, when given,
  must equal the number of propositions.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["CONSTRAINT_TYPES", "DEPENDENCY_MODES", "PREDICATES", "RELATION_TYPES", "Constraint",
           "Dependency", "EvalState", "Evaluator", "Proposition", "PropositionResult", "TaskEvaluation",
           "before", "evaluate_proposition"]

_OBJ = "object_handles"
#: handle-list arguments of each predicate, in positional order
_HANDLES: dict[str, tuple[str, ...]] = {
    "is_on_top": (_OBJ, "receptacle_handles"), "is_inside": (_OBJ, "receptacle_handles"),
    "is_in_room": (_OBJ, "room_ids"), "is_on_floor": (_OBJ,),
    "is_next_to": ("entity_handles_a", "entity_handles_b"), "is_clustered": ("*args",),
    **{n: (_OBJ,) for n in ("is_clean", "is_dirty", "is_filled", "is_empty", "is_powered_on", "is_powered_off")},
}
#: keyword arguments of each predicate with their defaults
_OPTIONS: dict[str, dict[str, Any]] = {
    "is_on_top": {"number": 1, "is_same_receptacle": False}, "is_inside": {"number": 1, "is_same_receptacle": False},
    "is_in_room": {"number": 1, "is_same_room": False},
    "is_next_to": {"number": 1, "is_same_b": False, "l2_threshold": 0.5},
    "is_clustered": {"number": None, "l2_threshold": 0.5},
}
#: object-state predicate -> (state name, value that satisfies it)
_STATES: dict[str, tuple[str, bool]] = {
    "is_clean": ("is_clean", True), "is_dirty": ("is_clean", False), "is_filled": ("is_filled", True),
    "is_empty": ("is_filled", False), "is_powered_on": ("is_powered_on", True),
    "is_powered_off": ("is_powered_on", False),
}
PREDICATES: tuple[str, ...] = tuple(sorted(_HANDLES))
RELATION_TYPES: tuple[str, ...] = ("while_satisfied", "after_satisfied", "after_unsatisfied", "before_satisfied")
DEPENDENCY_MODES: tuple[str, ...] = ("all", "any")
#: constraint type -> (required args, optional args)
_CONSTRAINT_ARGS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "TemporalConstraint": (("dag_edges",), ("n_propositions",)),
    "SameArgConstraint": (("proposition_indices", "arg_names"), ("n_propositions",)),
    "DifferentArgConstraint": (("proposition_indices", "arg_names"), ("n_propositions",)),
    "TerminalSatisfactionConstraint": (("proposition_indices",), ("n_propositions",)),
}
CONSTRAINT_TYPES: tuple[str, ...] = tuple(_CONSTRAINT_ARGS)


def before(a_step: int, b_step: int) -> bool:
    """Temporal order: A, first satisfied at ``a_step`` (-1: never), came before B at ``b_step``.
    Strict ("(A, B) means prop A must be satisfied before prop B"): a tie fails, as in PARTNR."""
    return a_step != -1 and a_step < b_step


class EvalState(Protocol):
    """The ground-truth world as the evaluator reads it at one simulation step."""

    def receptacle_of(self, obj: str) -> tuple[str, str] | None: ...
    def room_of(self, handle: str) -> str | None: ...
    def on_floor(self, obj: str) -> bool: ...
    def position(self, handle: str) -> tuple[float, float]: ...
    def half_extent(self, handle: str) -> float: ...
    def state(self, obj: str, name: str) -> bool | None: ...


def _bad(where: str, got: Any, allowed: str | Sequence[str]) -> ValueError:
    text = allowed if isinstance(allowed, str) else ", ".join(allowed)
    return ValueError(f"{where}: invalid {got!r}; allowed: {text}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_handles(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and all(isinstance(h, str) for h in v)


def _indices(where: str, v: Any) -> tuple[int, ...]:
    if not isinstance(v, (list, tuple)) or not v or not all(_is_int(i) and i >= 0 for i in v):
        raise _bad(where, v, "a non-empty list of proposition indices (ints >= 0)")
    return tuple(v)


def _cluster_numbers(number: Any, n_groups: int) -> Any:
    """is_clustered's per-group counts: None means one of each, an int is copied to every group."""
    return [1] * n_groups if number is None else [number] * n_groups if _is_int(number) else number


def _check_proposition(fn: str, args: Any) -> None:
    if fn not in _HANDLES:
        raise _bad("Proposition.function_name", fn, PREDICATES)
    if not isinstance(args, Mapping):
        raise _bad(f"{fn}.args", args, "a mapping of argument names to values")
    opts = _OPTIONS.get(fn, {"number": 1})
    allowed = sorted((*_HANDLES[fn], *opts))
    for name in args:
        if name not in allowed:
            raise _bad(f"{fn}.args", name, allowed)
    if fn == "is_clustered":
        groups = args.get("*args", [])
        if not isinstance(groups, (list, tuple)) or not all(_is_handles(g) for g in groups):
            raise _bad(f"{fn}.*args", groups, "a list of lists of handle strings")
        number = args.get("number")
        numbers = _cluster_numbers(number, len(groups))
        if not isinstance(numbers, (list, tuple)) or len(numbers) != len(groups) or not all(
                _is_int(n) and 1 <= n <= len(set(g)) for n, g in zip(numbers, groups)):
            raise _bad(f"{fn}.number", number, "one int per group, each from 1 to that group's size")
        if sum(numbers) < 2:
            raise _bad(f"{fn}.number", number, "a cluster of at least two entities in total")
    else:
        for name in _HANDLES[fn]:
            if not _is_handles(args.get(name, [])):
                raise _bad(f"{fn}.{name}", args[name], "a list of handle strings")
        number, n_cands = args.get("number", 1), len(set(args.get(_HANDLES[fn][0], [])))
        if not _is_int(number) or not 1 <= number <= n_cands:
            raise _bad(f"{fn}.number", number, f"an int from 1 to {n_cands} (the handles in {_HANDLES[fn][0]})")
        for flag in ("is_same_receptacle", "is_same_room", "is_same_b"):
            if flag in args and not isinstance(args[flag], bool):
                raise _bad(f"{fn}.{flag}", args[flag], "True, False")
    thr = args.get("l2_threshold", 0.5)
    if isinstance(thr, bool) or not isinstance(thr, (int, float)) or not thr >= 0:
        raise _bad(f"{fn}.l2_threshold", thr, "a distance in metres >= 0")


@dataclass(frozen=True)
class Proposition:
    """One predicate applied to its arguments (PARTNR's ``EvaluationProposition``)."""

    function_name: str
    args: dict[str, Any]

    def __post_init__(self) -> None:
        _check_proposition(self.function_name, self.args)
        object.__setattr__(self, "args", copy.deepcopy(dict(self.args)))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Proposition:
        """Read PARTNR's ``{"function_name": ..., "args": {...}}``."""
        if not isinstance(d, Mapping) or "function_name" not in d:
            raise _bad("Proposition", d, "a mapping with keys function_name, args")
        return cls(d["function_name"], d.get("args", {}))

    def to_dict(self) -> dict[str, Any]:
        """PARTNR's JSON shape of this proposition."""
        return {"function_name": self.function_name, "args": copy.deepcopy(self.args)}

    def arg(self, name: str) -> Any:
        """The value of an argument, or the predicate's default when it is absent."""
        if name in self.args:
            return self.args[name]
        return [] if name in _HANDLES[self.function_name] else _OPTIONS.get(self.function_name, {"number": 1})[name]

    @property
    def units(self) -> int:
        """How many units this proposition is worth in Percent Complete (its ``number``)."""
        return 1 if self.function_name == "is_clustered" else int(self.arg("number"))


@dataclass(frozen=True)
class Dependency:
    """When propositions are queried, relative to others (PARTNR's ``EvaluationPropositionDependency``)."""

    proposition_indices: tuple[int, ...]
    depends_on: tuple[int, ...]
    relation_type: str
    dependency_mode: str = "all"

    def __post_init__(self) -> None:
        object.__setattr__(self, "proposition_indices", _indices("Dependency.proposition_indices",
                                                                 self.proposition_indices))
        object.__setattr__(self, "depends_on", _indices("Dependency.depends_on", self.depends_on))
        if self.relation_type not in RELATION_TYPES:
            raise _bad("Dependency.relation_type", self.relation_type, RELATION_TYPES)
        if self.dependency_mode not in DEPENDENCY_MODES:
            raise _bad("Dependency.dependency_mode", self.dependency_mode, DEPENDENCY_MODES)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Dependency:
        """Read PARTNR's dependency dict (keys as the dataclass fields)."""
        keys = ("proposition_indices", "depends_on", "relation_type", "dependency_mode")
        if not isinstance(d, Mapping) or any(k not in keys for k in d) or any(k not in d for k in keys[:3]):
            raise _bad("Dependency", d, f"a mapping with keys {', '.join(keys)} (dependency_mode optional)")
        return cls(d["proposition_indices"], d["depends_on"], d["relation_type"], d.get("dependency_mode", "all"))

    def to_dict(self) -> dict[str, Any]:
        """PARTNR's JSON shape of this dependency."""
        return {"proposition_indices": list(self.proposition_indices), "depends_on": list(self.depends_on),
                "relation_type": self.relation_type, "dependency_mode": self.dependency_mode}


def _ancestors(edges: Sequence[tuple[int, int]]) -> dict[int, set[int]]:
    """Every node's transitive predecessors; ValueError when the edges hold a cycle."""
    parents: dict[int, set[int]] = {}
    for a, b in edges:
        parents.setdefault(b, set()).add(a)
        parents.setdefault(a, set())
    out: dict[int, set[int]] = {}

    def visit(v: int, path: tuple[int, ...]) -> set[int]:
        if v in path:
            raise _bad("TemporalConstraint.dag_edges", [list(e) for e in edges], "edges of an acyclic graph")
        if v not in out:
            out[v] = set().union(*({p} | visit(p, path + (v,)) for p in parents[v])) if parents[v] else set()
        return out[v]

    for node in sorted(parents):
        visit(node, ())
    return out


@dataclass(frozen=True)
class Constraint:
    """A rule over propositions (PARTNR's ``EvaluationConstraint``, JSON ``{"type", "args"}``)."""

    type: str
    args: dict[str, Any]

    def __post_init__(self) -> None:
        if self.type not in _CONSTRAINT_ARGS:
            raise _bad("Constraint.type", self.type, CONSTRAINT_TYPES)
        required, optional = _CONSTRAINT_ARGS[self.type]
        args = self.args
        if not isinstance(args, Mapping) or any(k not in required + optional for k in args) or any(
                k not in args for k in required):
            raise _bad(f"{self.type}.args", args, f"keys {', '.join(required + optional)} "
                       f"({', '.join(optional)} optional)")
        n = args.get("n_propositions")
        if n is not None and not (_is_int(n) and n >= 0):
            raise _bad(f"{self.type}.n_propositions", n, "None or an int >= 0")
        if self.type == "TemporalConstraint":
            edges = args["dag_edges"]
            if not isinstance(edges, (list, tuple)) or not all(
                    isinstance(e, (list, tuple)) and len(e) == 2 and all(_is_int(i) and i >= 0 for i in e)
                    for e in edges):
                raise _bad("TemporalConstraint.dag_edges", edges, "a list of (A, B) pairs of proposition indices")
            _ancestors([(a, b) for a, b in edges])
        else:
            idx = _indices(f"{self.type}.proposition_indices", args["proposition_indices"])
            if len(set(idx)) != len(idx):
                raise _bad(f"{self.type}.proposition_indices", list(idx), "distinct proposition indices")
            if "arg_names" in args:
                names = args["arg_names"]
                if not _is_handles(names) or len(names) != len(idx):
                    raise _bad(f"{self.type}.arg_names", names,
                               f"{len(idx)} argument names, one per entry of proposition_indices")
        object.__setattr__(self, "args", copy.deepcopy(dict(args)))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Constraint:
        """Read PARTNR's ``{"type": ..., "args": {...}}``."""
        if not isinstance(d, Mapping) or "type" not in d:
            raise _bad("Constraint", d, "a mapping with keys type, args")
        return cls(d["type"], d.get("args", {}))

    def to_dict(self) -> dict[str, Any]:
        """PARTNR's JSON shape of this constraint."""
        return {"type": self.type, "args": copy.deepcopy(self.args)}

    def ancestors(self) -> dict[int, set[int]]:
        """A TemporalConstraint's DAG as each proposition's transitive predecessors (empty for the
        other types): the propositions that must be satisfied before it."""
        if self.type != "TemporalConstraint":
            return {}
        return _ancestors([(a, b) for a, b in self.args["dag_edges"]])

    def indices(self) -> list[int]:
        """The proposition indices this constraint refers to."""
        if self.type == "TemporalConstraint":
            return sorted({i for e in self.args["dag_edges"] for i in e})
        return list(self.args["proposition_indices"])


def _arg_names_of(p: Proposition) -> list[str]:
    if p.function_name == "is_clustered":
        return [f"*args_{i}" for i in range(len(p.arg("*args")))]
    return list(_HANDLES[p.function_name])


@dataclass(frozen=True)
class TaskEvaluation:
    """An episode's propositions, dependencies and constraints, checked against each other."""

    propositions: tuple[Proposition, ...]
    dependencies: tuple[Dependency, ...] = ()
    constraints: tuple[Constraint, ...] = ()

    def __post_init__(self) -> None:
        for name, kind in (("propositions", Proposition), ("dependencies", Dependency), ("constraints", Constraint)):
            items = tuple(getattr(self, name))
            if not all(isinstance(x, kind) for x in items):
                raise _bad(f"TaskEvaluation.{name}", items, f"{kind.__name__} instances")
            object.__setattr__(self, name, items)
        n = len(self.propositions)
        rng = f"0..{n - 1}" if n else "none (no propositions)"
        for d, dep in enumerate(self.dependencies):
            for fld in ("proposition_indices", "depends_on"):
                for i in getattr(dep, fld):
                    if i >= n:
                        raise _bad(f"dependencies[{d}].{fld}", i, rng)
        for c, con in enumerate(self.constraints):
            for i in con.indices():
                if i >= n:
                    raise _bad(f"constraints[{c}] ({con.type}) proposition index", i, rng)
            if con.args.get("n_propositions") not in (None, n):
                raise _bad(f"constraints[{c}].n_propositions", con.args["n_propositions"], f"None or {n}")
            for i, name in zip(con.args.get("proposition_indices", ()), con.args.get("arg_names", ())):
                if name not in _arg_names_of(self.propositions[i]):
                    raise _bad(f"constraints[{c}].arg_names (proposition {i})", name,
                               _arg_names_of(self.propositions[i]))

    @classmethod
    def from_episode(cls, episode: Mapping[str, Any]) -> TaskEvaluation:
        """Read the three evaluation fields of a PARTNR episode (the last two may be absent)."""
        props = episode.get("evaluation_propositions")
        if not isinstance(props, (list, tuple)):
            raise _bad("episode.evaluation_propositions", props, "a list of propositions")
        return cls(tuple(Proposition.from_dict(p) for p in props),
                   tuple(Dependency.from_dict(d) for d in episode.get("evaluation_proposition_dependencies") or ()),
                   tuple(Constraint.from_dict(c) for c in episode.get("evaluation_constraints") or ()))

    def to_episode_fields(self) -> dict[str, list[dict[str, Any]]]:
        """The three PARTNR episode fields, in PARTNR's JSON shapes."""
        return {"evaluation_propositions": [p.to_dict() for p in self.propositions],
                "evaluation_proposition_dependencies": [d.to_dict() for d in self.dependencies],
                "evaluation_constraints": [c.to_dict() for c in self.constraints]}


@dataclass(frozen=True)
class PropositionResult:
    """A proposition's truth in one state, the handles that make it true, and how many of them."""

    is_satisfied: bool
    info: dict[str, Any] = field(default_factory=dict)
    n_satisfied: int = 0  # handles of the first list that satisfy (under is_same_*), uncapped


def _near(state: EvalState, a: str, b: str, threshold: float) -> bool:
    if a == b:
        return False
    (xa, za), (xb, zb) = state.position(a), state.position(b)
    gap = math.hypot(xa - xb, za - zb) - (state.half_extent(a) + state.half_extent(b))
    return max(gap, 0.0) <= threshold


def _assign(handles: Sequence[str], partners: Callable[[str], list[str]], b_order: Sequence[str],
            number: int, same: bool) -> tuple[int, list[tuple[str, str]]]:
    """(how many handles satisfy, the chosen (handle, partner) pairs: ``number`` of them when enough)."""
    found = [(h, bs) for h in dict.fromkeys(handles) if (bs := partners(h))]
    if same:
        pairs: list[tuple[str, str]] = []
        for b in dict.fromkeys(b_order):
            group = [(h, b) for h, bs in found if b in bs]
            pairs = group if len(group) > len(pairs) else pairs
    else:
        pairs = [(h, bs[0]) for h, bs in found]
    return len(pairs), pairs[:number]


def _clustered(p: Proposition, state: EvalState) -> PropositionResult:
    groups = [list(dict.fromkeys(g)) for g in p.arg("*args")]
    numbers = _cluster_numbers(p.arg("number"), len(groups))
    threshold = float(p.arg("l2_threshold"))
    for pick in itertools.product(*(itertools.combinations(g, n) for g, n in zip(groups, numbers))):
        flat = [h for part in pick for h in part]
        if len(set(flat)) == len(flat) and all(any(_near(state, a, b, threshold) for b in flat) for a in flat):
            info = [part[0] if len(part) == 1 else list(part) for part in pick]
            return PropositionResult(True, {"*args": info}, 1)
    return PropositionResult(False, {}, 0)


def evaluate_proposition(p: Proposition, state: EvalState) -> PropositionResult:
    """Whether ``p`` holds in ``state``; ``info`` names the satisfying handles per argument
    (strings for ``number=1``, aligned lists for ``number>1``, then also for a partial match)."""
    fn = p.function_name
    if fn == "is_clustered":
        return _clustered(p, state)
    keys = _HANDLES[fn]
    handles, number = p.arg(keys[0]), int(p.arg("number"))
    others: list[str] = p.arg(keys[1]) if len(keys) > 1 else [""]
    same = bool(p.args.get("is_same_receptacle") or p.args.get("is_same_room") or p.args.get("is_same_b"))
    partners: Callable[[str], list[str]]
    if fn in ("is_on_top", "is_inside"):
        relation = "on" if fn == "is_on_top" else "within"

        def partners(h: str) -> list[str]:
            where = state.receptacle_of(h)
            return [where[1]] if where and where[0] == relation and where[1] in others else []
    elif fn == "is_in_room":
        def partners(h: str) -> list[str]:
            room = state.room_of(h)
            return [room] if room is not None and room in others else []
    elif fn == "is_next_to":
        threshold = float(p.arg("l2_threshold"))

        def partners(h: str) -> list[str]:
            return [b for b in dict.fromkeys(others) if _near(state, h, b, threshold)]
    elif fn == "is_on_floor":
        def partners(h: str) -> list[str]:
            return [""] if state.on_floor(h) else []
    else:
        name, wanted = _STATES[fn]

        def partners(h: str) -> list[str]:
            return [""] if bool(state.state(h, name)) == wanted else []
    count, pairs = _assign(handles, partners, others, number, same)
    ok = count >= number
    if number == 1:
        info = {k: v for k, v in zip(keys, pairs[0])} if ok else {}
    else:
        info = {k: [pair[j] for pair in pairs] for j, k in enumerate(keys)}
    return PropositionResult(ok, info, count)


def _arg_value(info: Mapping[str, Any], name: str) -> Any:
    """The satisfying value of argument ``name`` (``*args_i``: group i of is_clustered)."""
    if name.startswith("*args_"):
        groups = info.get("*args") or []
        i = int(name.rsplit("_", 1)[1])
        return groups[i] if i < len(groups) else None
    return info.get(name)


def _values(v: Any) -> set[Any]:
    if v is None:
        return set()
    return {v} if isinstance(v, str) or not isinstance(v, (list, tuple, set)) else set(v)


class Evaluator:
    """Follows one episode: which propositions held when, and the task's score at the end."""

    def __init__(self, task: TaskEvaluation) -> None:
        self.task = task
        n = len(task.propositions)
        self._gates: list[list[Dependency]] = [[d for d in task.dependencies if i in d.proposition_indices]
                                               for i in range(n)]
        self._history: list[list[PropositionResult]] = []
        self._steps: list[int] = []
        self._satisfied_at = [-1] * n
        self._unit_at = [[-1] * p.units for p in task.propositions]
        self._unit_info: list[list[dict[str, Any]]] = [[{} for _ in range(p.units)] for p in task.propositions]

    @property
    def satisfied_at(self) -> list[int]:
        """Step at which each proposition was first fully satisfied (-1: never)."""
        return list(self._satisfied_at)

    def _units_met(self, i: int, r: PropositionResult) -> int:
        p = self.task.propositions[i]
        return int(r.is_satisfied) if p.function_name == "is_clustered" else min(r.n_satisfied, p.units)

    def update(self, state: EvalState, step: int) -> None:
        """Record the state at ``step`` (call at step 0 and after every change)."""
        if not _is_int(step) or step < 0 or (self._steps and step < self._steps[-1]):
            last = self._steps[-1] if self._steps else 0
            raise _bad("Evaluator.update step", step, f"an int >= {last} (steps never decrease)")
        now: dict[int, PropositionResult] = {}
        busy: set[int] = set()
        history = self._history

        def held(j: int) -> bool:
            if j in busy:  # a dependency cycle: fall back on the previous update
                return bool(history) and history[-1][j].is_satisfied
            return resolve(j).is_satisfied

        def allows(dep: Dependency) -> bool:
            verdicts = []
            for j in dep.depends_on:
                current, past = held(j), any(s[j].is_satisfied for s in history)
                verdicts.append({"while_satisfied": current, "after_satisfied": past or current,
                                 "after_unsatisfied": past and not current,
                                 "before_satisfied": not (past or current)}[dep.relation_type])
            return all(verdicts) if dep.dependency_mode == "all" else any(verdicts)

        def resolve(i: int) -> PropositionResult:
            if i not in now:
                busy.add(i)
                queried = all(allows(d) for d in self._gates[i])
                busy.discard(i)
                now[i] = evaluate_proposition(self.task.propositions[i], state) if queried \
                    else PropositionResult(False, {}, 0)
            return now[i]

        record = [resolve(i) for i in range(len(self.task.propositions))]
        for i, r in enumerate(record):
            if r.is_satisfied and self._satisfied_at[i] == -1:
                self._satisfied_at[i] = step
            new = [k for k in range(self._units_met(i, r)) if self._unit_at[i][k] == -1]
            for k, info in zip(new, self._placements(i, r, len(new))):
                self._unit_at[i][k], self._unit_info[i][k] = step, info
        history.append(record)
        self._steps.append(step)

    def _placements(self, i: int, r: PropositionResult, n: int) -> list[dict[str, Any]]:
        """The ``info`` of the ``n`` units of proposition ``i`` completed by ``r``: one placement each,
        the satisfying handles not credited to an earlier unit, in list order."""
        p = self.task.propositions[i]
        if p.units == 1:
            return [copy.deepcopy(r.info)] * n
        keys = _HANDLES[p.function_name]
        credited = {info[keys[0]] for info, t in zip(self._unit_info[i], self._unit_at[i]) if t != -1}
        pairs = [pair for pair in zip(*(r.info[k] for k in keys)) if pair[0] not in credited]
        return [dict(zip(keys, pair)) for pair in pairs[:n]]

    @property
    def unit_steps(self) -> list[list[int]]:
        """Per proposition, the step at which each of its units was first done (-1: never)."""
        return [list(units) for units in self._unit_at]

    def _unit_validity(self, con: Constraint) -> list[list[bool]]:
        """For each proposition and unit: False when ``con`` invalidates that satisfied unit."""
        valid = [[True] * len(units) for units in self._unit_at]
        at, done = self._unit_at, self._satisfied_at
        if con.type == "TemporalConstraint":
            for b, ancestors in con.ancestors().items():
                for k, t in enumerate(at[b]):
                    if t != -1 and not all(before(done[a], t) for a in ancestors):
                        valid[b][k] = False
        elif con.type == "TerminalSatisfactionConstraint":
            final = self._history[-1] if self._history else None
            for i in con.args["proposition_indices"]:
                met = self._units_met(i, final[i]) if final else 0
                for k, t in enumerate(at[i]):
                    valid[i][k] = t == -1 or k < met
        else:
            units: list[tuple[int, int, int, int, set[Any]]] = []  # (step, list position, unit, proposition, values)
            for pos, (i, name) in enumerate(zip(con.args["proposition_indices"], con.args["arg_names"])):
                units += [(t, pos, k, i, _values(_arg_value(self._unit_info[i][k], name)))
                          for k, t in enumerate(at[i]) if t != -1]
            units.sort(key=lambda u: u[:3])
            if con.type == "SameArgConstraint" and units:
                reference = units[0][4]
                for _, _, k, i, value in units:
                    valid[i][k] = bool(value & reference)
            elif con.type == "DifferentArgConstraint":
                for n, (_, _, k, i, value) in enumerate(units):
                    valid[i][k] = not any(value & other for _, _, _, j, other in units[:n] if j != i)
        return valid

    def unit_validity(self) -> list[list[list[bool]]]:
        """Per constraint, proposition and unit: False when that constraint invalidates the unit
        (PARTNR's ``constraint_satisfaction``, one entry per unrolled unit)."""
        return [self._unit_validity(c) for c in self.task.constraints]

    def percent_complete(self) -> float:
        """Share of satisfied units that no constraint invalidates (0.0 when there are none)."""
        total = sum(len(u) for u in self._unit_at)
        if total == 0:
            return 0.0
        validity = self.unit_validity()
        good = sum(1 for i, units in enumerate(self._unit_at) for k, t in enumerate(units)
                   if t != -1 and all(v[i][k] for v in validity))
        return good / total

    def success(self) -> bool:
        """True when every unit of every proposition is satisfied and valid."""
        return self.percent_complete() == 1.0

    def completed_at(self) -> int | None:
        """The step at which the last unit was first satisfied, when the task succeeds (None
        otherwise): from then on nothing an agent does changes the outcome ("TaskStateSuccess ...
        Equivalent to TaskPercentComplete == 1.00", evaluation_README.md)."""
        if not self.success():
            return None
        return max((t for units in self._unit_at for t in units), default=None)

    def log(self) -> dict[str, Any]:
        """PARTNR's TaskEvaluationLog as plain JSON-ready lists and dicts."""
        return {"propositions": [p.to_dict() for p in self.task.propositions],
                "dependencies": [d.to_dict() for d in self.task.dependencies],
                "constraints": [c.to_dict() for c in self.task.constraints],
                "proposition_satisfied_at": self.satisfied_at,
                "constraint_satisfaction": [[units[-1] for units in v] for v in self.unit_validity()],
                "state_sequence": [[r.is_satisfied for r in s] for s in self._history]}
