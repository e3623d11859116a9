"""PARTNR's evaluation engine, case by case against its README: predicates, `number`, dependencies,
constraints, Percent Complete / Success, the log, and every bad-input path."""

from __future__ import annotations

import json
from typing import Any

import pytest

from collablab.studies.partnr.evaluation import (
    Constraint,
    Dependency,
    Evaluator,
    Proposition,
    PropositionResult,
    TaskEvaluation,
    evaluate_proposition,
)


class World:
    """A dict-backed EvalState: ``on``/``within`` map objects to furniture, ``rooms`` maps furniture
    and loose objects to rooms (an object on or in furniture is in the furniture's room)."""

    def __init__(self, on: dict[str, str] | None = None, within: dict[str, str] | None = None,
                 rooms: dict[str, str] | None = None, floor: tuple[str, ...] = (),
                 pos: dict[str, tuple[float, float]] | None = None, ext: dict[str, float] | None = None,
                 states: dict[tuple[str, str], bool] | None = None) -> None:
        self.on, self.within, self.rooms = on or {}, within or {}, rooms or {}
        self.floor, self.pos, self.ext, self.states = set(floor), pos or {}, ext or {}, states or {}

    def receptacle_of(self, obj: str) -> tuple[str, str] | None:
        if obj in self.on:
            return ("on", self.on[obj])
        return ("within", self.within[obj]) if obj in self.within else None

    def room_of(self, handle: str) -> str | None:
        where = self.receptacle_of(handle)
        return self.rooms.get(where[1]) if where else self.rooms.get(handle)

    def on_floor(self, obj: str) -> bool:
        return obj in self.floor

    def position(self, handle: str) -> tuple[float, float]:
        return self.pos[handle]

    def half_extent(self, handle: str) -> float:
        return self.ext.get(handle, 0.0)

    def state(self, obj: str, name: str) -> bool | None:
        return self.states.get((obj, name))


def P(fn: str, **args: Any) -> Proposition:
    return Proposition(fn, args)


def ev(p: Proposition, w: World) -> PropositionResult:
    return evaluate_proposition(p, w)


def run(task: TaskEvaluation, worlds: list[World], steps: list[int] | None = None) -> Evaluator:
    e = Evaluator(task)
    for step, w in zip(steps or range(len(worlds)), worlds):
        e.update(w, step)
    return e


def task(*props: Proposition, deps: tuple[Dependency, ...] = (), cons: tuple[Constraint, ...] = ()) -> TaskEvaluation:
    return TaskEvaluation(tuple(props), deps, cons)


SPOONS, TABLES = ["spoon_1", "spoon_2", "spoon_3"], ["table_1", "table_2"]


# --- the README's spoon/table examples ----------------------------------------------------------

def test_one_spoon_one_table():
    p = P("is_on_top", object_handles=["spoon_1"], receptacle_handles=["table_1"])
    r = ev(p, World(on={"spoon_1": "table_1"}))
    assert r == PropositionResult(True, {"object_handles": "spoon_1", "receptacle_handles": "table_1"}, 1)
    assert ev(p, World(on={"spoon_1": "counter_1"})) == PropositionResult(False, {}, 0)
    assert not ev(p, World()).is_satisfied  # held: no receptacle


def test_any_of_spoons_and_tables():
    p = P("is_on_top", object_handles=SPOONS, receptacle_handles=["table_1"])
    assert ev(p, World(on={"spoon_2": "table_1"})).info == {"object_handles": "spoon_2",
                                                             "receptacle_handles": "table_1"}
    p2 = P("is_on_top", object_handles=SPOONS, receptacle_handles=TABLES)
    assert ev(p2, World(on={"spoon_3": "table_2"})).info == {"object_handles": "spoon_3",
                                                              "receptacle_handles": "table_2"}
    assert not ev(p2, World(on={"spoon_3": "chair_1"})).is_satisfied


def test_two_spoons_to_any_tables():
    p = P("is_on_top", object_handles=SPOONS, receptacle_handles=TABLES, number=2)
    r = ev(p, World(on={"spoon_1": "table_1", "spoon_3": "table_2"}))
    assert r == PropositionResult(True, {"object_handles": ["spoon_1", "spoon_3"],
                                         "receptacle_handles": ["table_1", "table_2"]}, 2)
    part = ev(p, World(on={"spoon_2": "table_2"}))
    assert part == PropositionResult(False, {"object_handles": ["spoon_2"], "receptacle_handles": ["table_2"]}, 1)
    three = ev(p, World(on={s: "table_1" for s in SPOONS}))
    assert three.is_satisfied and three.n_satisfied == 3 and three.info["object_handles"] == ["spoon_1", "spoon_2"]


def test_two_spoons_to_the_same_table():
    p = P("is_on_top", object_handles=SPOONS, receptacle_handles=TABLES, number=2, is_same_receptacle=True)
    split = ev(p, World(on={"spoon_1": "table_1", "spoon_3": "table_2"}))
    assert not split.is_satisfied and split.n_satisfied == 1
    r = ev(p, World(on={"spoon_1": "table_1", "spoon_2": "table_2", "spoon_3": "table_2"}))
    assert r == PropositionResult(True, {"object_handles": ["spoon_2", "spoon_3"],
                                         "receptacle_handles": ["table_2", "table_2"]}, 2)


def test_ties_report_the_first_handles_in_list_order():
    w = World(on={"spoon_1": "table_2", "spoon_2": "table_1"})
    anyof = P("is_on_top", object_handles=SPOONS, receptacle_handles=TABLES)
    same = P("is_on_top", object_handles=SPOONS, receptacle_handles=TABLES, is_same_receptacle=True)
    assert ev(anyof, w).info == {"object_handles": "spoon_1", "receptacle_handles": "table_2"}
    assert ev(same, w).info == {"object_handles": "spoon_2", "receptacle_handles": "table_1"}


# --- each predicate true and false --------------------------------------------------------------

def test_is_inside_counts_within_only():
    p = P("is_inside", object_handles=["cup"], receptacle_handles=["sink"])
    assert ev(p, World(within={"cup": "sink"})).info == {"object_handles": "cup", "receptacle_handles": "sink"}
    assert not ev(p, World(on={"cup": "sink"})).is_satisfied
    assert not ev(P("is_on_top", object_handles=["cup"], receptacle_handles=["sink"]),
                  World(within={"cup": "sink"})).is_satisfied


def test_is_in_room_and_same_room():
    w = World(on={"a": "bed"}, rooms={"bed": "bedroom", "b": "kitchen", "c": "bedroom"})
    p = P("is_in_room", object_handles=["a"], room_ids=["bedroom"])
    assert ev(p, w).info == {"object_handles": "a", "room_ids": "bedroom"}
    assert not ev(P("is_in_room", object_handles=["b"], room_ids=["bedroom"]), w).is_satisfied
    assert not ev(p, World()).is_satisfied  # room unknown
    two = {"object_handles": ["a", "b", "c"], "room_ids": ["bedroom", "kitchen"], "number": 2}
    assert ev(P("is_in_room", **two), w).info == {"object_handles": ["a", "b"], "room_ids": ["bedroom", "kitchen"]}
    same = ev(P("is_in_room", **two, is_same_room=True), w)
    assert same.is_satisfied and same.info == {"object_handles": ["a", "c"], "room_ids": ["bedroom", "bedroom"]}
    assert not ev(P("is_in_room", object_handles=["a", "b"], room_ids=["bedroom", "kitchen"], number=2,
                    is_same_room=True), w).is_satisfied


def test_is_on_floor():
    p = P("is_on_floor", object_handles=["box", "ball"])
    assert ev(p, World(floor=("ball",))) == PropositionResult(True, {"object_handles": "ball"}, 1)
    assert not ev(p, World(on={"box": "table"})).is_satisfied
    assert not ev(P("is_on_floor", object_handles=["box", "ball"], number=2), World(floor=("ball",))).is_satisfied


def test_is_next_to_regularized_distance():
    p = P("is_next_to", entity_handles_a=["a"], entity_handles_b=["b"])
    pos = {"a": (0.0, 0.0), "b": (1.0, 0.0)}
    assert ev(p, World(pos=pos, ext={"a": 0.3, "b": 0.3})).info == {"entity_handles_a": "a",
                                                                     "entity_handles_b": "b"}
    assert ev(p, World(pos=pos, ext={"a": 0.25, "b": 0.25})).is_satisfied  # gap exactly 0.5
    assert not ev(p, World(pos=pos, ext={"a": 0.2, "b": 0.2})).is_satisfied  # gap 0.6
    wide = P("is_next_to", entity_handles_a=["a"], entity_handles_b=["b"], l2_threshold=0.7)
    assert ev(wide, World(pos=pos, ext={"a": 0.2, "b": 0.2})).is_satisfied
    tight = P("is_next_to", entity_handles_a=["a"], entity_handles_b=["b"], l2_threshold=0.0)
    assert ev(tight, World(pos=pos, ext={"a": 0.8, "b": 0.8})).is_satisfied  # overlap clipped at 0
    assert not ev(P("is_next_to", entity_handles_a=["a"], entity_handles_b=["a"]), World(pos=pos)).is_satisfied
    diag = World(pos={"a": (0.0, 0.0), "b": (0.3, 0.4)})  # horizontal L2 = 0.5
    assert ev(p, diag).is_satisfied


def test_is_next_to_number_and_same_b():
    pos = {"x": (0.0, 0.0), "y": (5.0, 0.0), "b1": (0.3, 0.0), "b2": (5.3, 0.0)}
    args = {"entity_handles_a": ["x", "y"], "entity_handles_b": ["b1", "b2"], "number": 2}
    assert ev(P("is_next_to", **args), World(pos=pos)).info == {"entity_handles_a": ["x", "y"],
                                                                 "entity_handles_b": ["b1", "b2"]}
    assert not ev(P("is_next_to", **args, is_same_b=True), World(pos=pos)).is_satisfied
    pos["y"] = (0.6, 0.0)
    assert ev(P("is_next_to", **args, is_same_b=True), World(pos=pos)).info["entity_handles_b"] == ["b1", "b1"]


TOYS = {"*args": [["toy_1", "toy_2"], ["book_1", "book_2", "book_3"], ["hat_1"]], "number": [1, 2, 1]}


def test_is_clustered_readme_example():
    far = (9.0, 9.0)
    pos = {"toy_1": far, "toy_2": (0.0, 0.0), "book_1": (0.4, 0.0), "book_2": (20.0, 0.0),
           "book_3": (0.0, 0.4), "hat_1": (0.4, 0.4)}
    r = ev(Proposition("is_clustered", TOYS), World(pos=pos))
    assert r == PropositionResult(True, {"*args": ["toy_2", ["book_1", "book_3"], "hat_1"]}, 1)
    pos["book_3"] = (30.0, 0.0)  # only one book near the others
    assert ev(Proposition("is_clustered", TOYS), World(pos=pos)) == PropositionResult(False, {}, 0)


def test_is_clustered_defaults_and_unconnected_pairs():
    groups = {"*args": [["a"], ["b"], ["c"], ["d"]]}  # number defaults to one of each
    pairs = World(pos={"a": (0.0, 0.0), "b": (0.4, 0.0), "c": (10.0, 0.0), "d": (10.4, 0.0)})
    assert ev(Proposition("is_clustered", groups), pairs).is_satisfied  # every member has a neighbour
    lone = World(pos={"a": (0.0, 0.0), "b": (0.4, 0.0), "c": (10.0, 0.0), "d": (20.0, 0.0)})
    assert not ev(Proposition("is_clustered", groups), lone).is_satisfied
    assert Proposition("is_clustered", {"*args": [["a", "b"], ["c", "d"]], "number": 2}).units == 1
    assert FOUR.units == 4 and P("is_on_floor", object_handles=["a"]).units == 1
    shared = {"*args": [["a"], ["a"], ["b"]]}  # one handle cannot fill two slots
    assert not ev(Proposition("is_clustered", shared), World(pos={"a": (0.0, 0.0), "b": (0.3, 0.0)})).is_satisfied


@pytest.mark.parametrize("fn,name,value,expected", [
    ("is_clean", "is_clean", None, False), ("is_dirty", "is_clean", None, True),
    ("is_filled", "is_filled", None, False), ("is_empty", "is_filled", None, True),
    ("is_powered_on", "is_powered_on", None, False), ("is_powered_off", "is_powered_on", None, True),
    ("is_clean", "is_clean", True, True), ("is_dirty", "is_clean", True, False),
    ("is_filled", "is_filled", True, True), ("is_empty", "is_filled", True, False),
    ("is_powered_on", "is_powered_on", True, True), ("is_powered_off", "is_powered_on", True, False),
    ("is_clean", "is_clean", False, False), ("is_dirty", "is_clean", False, True),
])
def test_object_states_and_defaults(fn, name, value, expected):
    states = {} if value is None else {("mug", name): value}
    r = ev(P(fn, object_handles=["mug"]), World(states=states))
    assert r == PropositionResult(expected, {"object_handles": "mug"} if expected else {}, int(expected))


def test_object_state_number():
    p = P("is_powered_on", object_handles=["tv", "lamp", "radio"], number=2)
    w = World(states={("tv", "is_powered_on"): True, ("radio", "is_powered_on"): True})
    assert ev(p, w).info == {"object_handles": ["tv", "radio"]}


# --- dependencies -------------------------------------------------------------------------------

CUP_IN_SINK = P("is_inside", object_handles=["cup"], receptacle_handles=["sink"])
CUP_ON_TABLE = P("is_on_top", object_handles=["cup"], receptacle_handles=["table"])


def test_dependency_example_1_after_unsatisfied():
    t = task(CUP_IN_SINK, CUP_ON_TABLE, deps=(Dependency((1,), (0,), "after_unsatisfied"),))
    e = Evaluator(t)
    e.update(World(on={"cup": "table"}), 0)  # true at step 0 but must not count
    assert e.satisfied_at == [-1, -1] and e.percent_complete() == 0.0
    e.update(World(within={"cup": "sink"}), 4)
    e.update(World(), 5)  # held: left the sink
    assert e.satisfied_at == [4, -1] and e.percent_complete() == 0.5
    e.update(World(on={"cup": "table"}), 9)
    assert e.satisfied_at == [4, 9] and e.success()
    assert e.log()["state_sequence"] == [[False, False], [True, False], [False, False], [False, True]]
    plain = run(task(CUP_IN_SINK, CUP_ON_TABLE), [World(on={"cup": "table"})])
    assert plain.satisfied_at == [-1, 0]  # without the dependency it counts at once


def test_after_unsatisfied_needs_it_to_be_unsatisfied_now():
    a, c = P("is_on_floor", object_handles=["a"]), P("is_on_floor", object_handles=["c"])
    t = task(a, c, deps=(Dependency((1,), (0,), "after_unsatisfied"),))
    assert run(t, [World(floor=("a",)), World(), World(floor=("a", "c"))]).satisfied_at == [0, -1]
    assert run(t, [World(floor=("a",)), World(floor=("c",))]).satisfied_at == [0, 1]
    assert run(t, [World(), World(floor=("c",))]).satisfied_at == [-1, -1]  # never held before


def _ball_bat(ball: str | None, bat: str | None, near: bool, rooms: dict[str, str] | None = None) -> World:
    on = {k: v for k, v in (("ball", ball), ("bat", bat)) if v}
    return World(on=on, rooms={"table": "kitchen", "shelf": "closet", **(rooms or {})},
                 pos={"ball": (0.0, 0.0), "bat": (0.3 if near else 3.0, 0.0)})


BALL_TABLE = P("is_on_top", object_handles=["ball"], receptacle_handles=["table"])
BAT_TABLE = P("is_on_top", object_handles=["bat"], receptacle_handles=["table"])
BALL_BAT = P("is_next_to", entity_handles_a=["ball"], entity_handles_b=["bat"])
BALL_CLOSET = P("is_in_room", object_handles=["ball"], room_ids=["closet"])
BAT_CLOSET = P("is_in_room", object_handles=["bat"], room_ids=["closet"])


def test_dependency_example_2_while_satisfied():
    t = task(BALL_TABLE, BAT_TABLE, BALL_BAT, BALL_CLOSET, BAT_CLOSET, BALL_BAT,
             deps=(Dependency((2,), (0, 1), "while_satisfied"), Dependency((5,), (3, 4), "while_satisfied")))
    e = Evaluator(t)
    e.update(_ball_bat(None, None, near=True), 0)  # next to each other on the floor: not counted
    assert e.satisfied_at == [-1] * 6
    e.update(_ball_bat("table", "table", near=True), 3)  # placed and adjacent in one update
    assert e.satisfied_at == [3, 3, 3, -1, -1, -1]
    e.update(_ball_bat("shelf", "shelf", near=False), 6)
    assert e.satisfied_at == [3, 3, 3, 6, 6, -1]
    e.update(_ball_bat("shelf", "shelf", near=True), 7)
    assert e.satisfied_at == [3, 3, 3, 6, 6, 7] and e.success()


def test_dependency_example_3_back_to_the_table():
    t = task(BALL_TABLE, BAT_TABLE, BALL_BAT, BALL_CLOSET, BAT_CLOSET, BALL_BAT, BALL_TABLE, BAT_TABLE, BALL_BAT,
             deps=(Dependency((2,), (0, 1), "while_satisfied"), Dependency((5,), (3, 4), "while_satisfied"),
                   Dependency((6, 7), (3, 4), "after_unsatisfied"), Dependency((8,), (6, 7), "while_satisfied")))
    e = Evaluator(t)
    e.update(_ball_bat("table", "table", near=True), 0)  # the first stage already holds
    assert e.satisfied_at == [0, 0, 0] + [-1] * 6 and e.percent_complete() == pytest.approx(3 / 9)
    e.update(_ball_bat("shelf", "shelf", near=True), 2)
    assert e.satisfied_at == [0, 0, 0, 2, 2, 2, -1, -1, -1]
    e.update(_ball_bat("shelf", None, near=False), 3)  # bat picked up: only one left the closet
    assert e.satisfied_at[6:] == [-1, -1, -1]
    e.update(_ball_bat(None, "table", near=False), 4)  # both out of the closet now
    assert e.satisfied_at[6:] == [-1, 4, -1]
    e.update(_ball_bat("table", "table", near=True), 5)
    assert e.satisfied_at == [0, 0, 0, 2, 2, 2, 5, 4, 5] and e.success()


def test_dependency_modes_all_and_any():
    a, b = P("is_on_floor", object_handles=["a"]), P("is_on_floor", object_handles=["b"])
    c = P("is_on_floor", object_handles=["c"])
    worlds = [World(floor=("c",)), World(floor=("a", "c"))]
    every = run(task(a, b, c, deps=(Dependency((2,), (0, 1), "after_satisfied", "all"),)), worlds)
    some = run(task(a, b, c, deps=(Dependency((2,), (0, 1), "after_satisfied", "any"),)), worlds)
    assert every.satisfied_at == [1, -1, -1] and some.satisfied_at == [1, -1, 1]


def test_after_satisfied_keeps_counting_when_the_dependency_is_undone():
    a, c = P("is_on_floor", object_handles=["a"]), P("is_on_floor", object_handles=["c"])
    worlds = [World(floor=("a",)), World(floor=("c",))]
    after = run(task(a, c, deps=(Dependency((1,), (0,), "after_satisfied"),)), worlds)
    during = run(task(a, c, deps=(Dependency((1,), (0,), "while_satisfied"),)), worlds)
    assert after.satisfied_at == [0, 1] and during.satisfied_at == [0, -1]


def test_before_satisfied():
    a, c = P("is_on_floor", object_handles=["a"]), P("is_on_floor", object_handles=["c"])
    dep = (Dependency((1,), (0,), "before_satisfied"),)
    assert run(task(a, c, deps=dep), [World(), World(floor=("c",))]).satisfied_at == [-1, 1]
    assert run(task(a, c, deps=dep), [World(floor=("a",)), World(floor=("c",))]).satisfied_at == [0, -1]
    assert run(task(a, c, deps=dep), [World(floor=("a", "c"))]).satisfied_at == [0, -1]  # same update


def test_dependency_cycle_falls_back_on_the_previous_update():
    a, c = P("is_on_floor", object_handles=["a"]), P("is_on_floor", object_handles=["c"])
    deps = (Dependency((0,), (1,), "before_satisfied"), Dependency((1,), (0,), "before_satisfied"))
    assert run(task(a, c, deps=deps), [World(floor=("a", "c"))]).satisfied_at == [-1, 0]


def test_partly_satisfied_at_step_zero():
    e = run(task(CUP_ON_TABLE, P("is_on_floor", object_handles=["box"])), [World(on={"cup": "table"})])
    assert e.satisfied_at == [0, -1] and e.percent_complete() == 0.5 and not e.success()


# --- constraints --------------------------------------------------------------------------------

TIDY, SET = P("is_on_floor", object_handles=["toy"]), P("is_on_top", object_handles=["plate"],
                                                        receptacle_handles=["table"])


@pytest.mark.parametrize("worlds,steps,percent,matrix", [
    ([World(), World(floor=("toy",)), World(floor=("toy",), on={"plate": "table"})], [0, 1, 2], 1.0, [True, True]),
    ([World(), World(on={"plate": "table"}), World(floor=("toy",), on={"plate": "table"})], [0, 1, 2], 0.5,
     [True, False]),
    ([World(), World(floor=("toy",), on={"plate": "table"})], [0, 1], 0.5, [True, False]),  # a tie fails B
    ([World(), World(floor=("toy",)), World(floor=("toy",), on={"plate": "table"})], [0, 4, 4], 0.5,
     [True, False]),  # two updates at one step (both agents' actions ending together): still a tie
    ([World(), World(on={"plate": "table"})], [0, 1], 0.0, [True, False]),  # A never satisfied
])
def test_temporal_constraint(worlds, steps, percent, matrix):
    """README, TemporalConstraint: "Tidy up the room by... After, set the table by..."; "(A, B) means
    prop A must be satisfied before prop B": setting the table first, or at the same step, fails it."""
    e = run(task(TIDY, SET, cons=(Constraint("TemporalConstraint", {"dag_edges": [[0, 1]]}),)), worlds, steps)
    assert e.percent_complete() == percent and e.log()["constraint_satisfaction"] == [matrix]


def test_temporal_constraint_is_transitive():
    a, b, c = (P("is_on_floor", object_handles=[h]) for h in "abc")
    con = Constraint("TemporalConstraint", {"dag_edges": [[0, 1], [1, 2]], "n_propositions": 3})
    e = run(task(a, b, c, cons=(con,)), [World(floor=("b",)), World(floor=("b", "c"))])
    assert e.log()["constraint_satisfaction"] == [[True, False, False]] and e.percent_complete() == 0.0


BOOK = {"receptacle_handles": ["shelf_1", "shelf_2"]}


@pytest.mark.parametrize("kind,second,percent,matrix", [
    ("SameArgConstraint", "shelf_2", 1.0, [True, True]),
    ("SameArgConstraint", "shelf_1", 0.5, [False, True]),
    ("DifferentArgConstraint", "shelf_1", 1.0, [True, True]),
    ("DifferentArgConstraint", "shelf_2", 0.5, [False, True]),
])
def test_same_and_different_arg(kind, second, percent, matrix):
    """Books on the same shelf / candles on separate tables: book_2 is placed first on shelf_2."""
    props = (P("is_on_top", object_handles=["book_1"], **BOOK), P("is_on_top", object_handles=["book_2"], **BOOK))
    con = Constraint(kind, {"proposition_indices": [0, 1], "arg_names": ["receptacle_handles"] * 2})
    worlds = [World(), World(on={"book_2": "shelf_2"}), World(on={"book_2": "shelf_2", "book_1": second})]
    e = run(task(*props, cons=(con,)), worlds)
    assert e.satisfied_at == [2, 1]
    assert e.percent_complete() == percent and e.log()["constraint_satisfaction"] == [matrix]


def test_same_arg_reads_the_value_at_first_satisfaction():
    props = (P("is_on_top", object_handles=["book_1"], **BOOK), P("is_on_top", object_handles=["book_2"], **BOOK))
    con = Constraint("SameArgConstraint", {"proposition_indices": [0, 1], "arg_names": ["receptacle_handles"] * 2})
    worlds = [World(on={"book_1": "shelf_1"}), World(on={"book_2": "shelf_2"}),
              World(on={"book_1": "shelf_2", "book_2": "shelf_2"})]  # moved together only later
    assert run(task(*props, cons=(con,)), worlds).percent_complete() == 0.5


def test_same_arg_judges_every_unit_of_a_number_proposition():
    shelves = ["shelf_1", "shelf_2"]
    pair = P("is_on_top", object_handles=["b1", "b2", "b3"], receptacle_handles=shelves, number=2,
             is_same_receptacle=True)
    con = Constraint("SameArgConstraint", {"proposition_indices": [0, 1], "arg_names": ["receptacle_handles"] * 2})
    worlds = [World(on={"b1": "shelf_1"}), World(on={"b1": "shelf_1", "b2": "shelf_2", "b3": "shelf_2",
                                                     "b4": "shelf_1"})]
    e = run(task(pair, P("is_on_top", object_handles=["b4"], receptacle_handles=shelves), cons=(con,)), worlds)
    assert e.satisfied_at == [1, 1] and e.percent_complete() == pytest.approx(2 / 3)  # the pair used shelf_2
    assert e.log()["constraint_satisfaction"] == [[False, True]]
    diff = Constraint("DifferentArgConstraint", {"proposition_indices": [0, 1],
                                                 "arg_names": ["receptacle_handles"] * 2})
    worlds[1].on["b4"] = "shelf_2"  # b4 joins the pair's shelf; the pair's own units never clash
    e = run(task(pair, P("is_on_top", object_handles=["b4"], receptacle_handles=shelves), cons=(diff,)), worlds)
    assert e.percent_complete() == pytest.approx(2 / 3) and e.log()["constraint_satisfaction"] == [[True, False]]


BOOKS, SHELVES = ["book_1", "book_2", "book_3"], ["shelf_1", "shelf_2"]


@pytest.mark.parametrize("last_shelf,percent,matrix", [("shelf_2", 2 / 3, [False, True]),
                                                       ("shelf_1", 1.0, [True, True])])
def test_same_arg_judges_each_placement_of_a_number_proposition(last_shelf, percent, matrix):
    """README, SameArgConstraint: "Place the books on the same shelf." with two books of three
    (``number=2``, unrolled "to ``n`` propositions" for Percent Complete) and a fourth book. book_4 and
    book_1 go on shelf_1, then book_2 on ``last_shelf``: book_2's own shelf is judged, not whether
    some placement of its proposition shares shelf_1."""
    books = P("is_on_top", object_handles=BOOKS, receptacle_handles=SHELVES, number=2)
    fourth = P("is_on_top", object_handles=["book_4"], receptacle_handles=SHELVES)
    con = Constraint("SameArgConstraint", {"proposition_indices": [0, 1], "arg_names": ["receptacle_handles"] * 2})
    worlds = [World(), World(on={"book_4": "shelf_1"}), World(on={"book_4": "shelf_1", "book_1": "shelf_1"}),
              World(on={"book_4": "shelf_1", "book_1": "shelf_1", "book_2": last_shelf})]
    e = run(task(books, fourth, cons=(con,)), worlds)
    assert e.satisfied_at == [3, 1] and e.unit_steps == [[2, 3], [1]]
    assert e.percent_complete() == pytest.approx(percent) and e.log()["constraint_satisfaction"] == [matrix]


def test_same_arg_over_one_number_proposition_needs_one_table():
    """README's spoons: "two spoons brought to the same table" as a SameArgConstraint over the
    ``number=2`` proposition alone: spoons on two tables satisfy the proposition, not the
    constraint (its second placement used another table); on one table they succeed."""
    spoons = P("is_on_top", object_handles=SPOONS, receptacle_handles=TABLES, number=2)
    con = Constraint("SameArgConstraint", {"proposition_indices": [0], "arg_names": ["receptacle_handles"]})
    split = [World(on={"spoon_2": "table_2"}), World(on={"spoon_2": "table_2", "spoon_1": "table_1"})]
    e = run(task(spoons, cons=(con,)), split)
    assert e.satisfied_at == [1] and e.percent_complete() == 0.5 and not e.success()
    together = [World(on={"spoon_2": "table_2"}), World(on={"spoon_2": "table_2", "spoon_1": "table_2"})]
    assert run(task(spoons, cons=(con,)), together).success()
    assert run(task(spoons), split).success()  # without the constraint any tables do


def test_different_arg_orders_placements_one_by_one():
    """README, DifferentArgConstraint: "Place the candles on two separate end tables." Two candles of
    a set (``number=2``) and a third candle: candle_1 on end_table_1 (step 1), candle_3 on
    end_table_2 (step 2), candle_2 on end_table_2 (step 3). Placement by placement, candle_3 came
    before candle_2 on end_table_2: candle_2's placement is the one that breaks it."""
    tables = ["end_table_1", "end_table_2", "end_table_3"]
    pair = P("is_on_top", object_handles=["candle_1", "candle_2"], receptacle_handles=tables, number=2)
    third = P("is_on_top", object_handles=["candle_3"], receptacle_handles=tables)
    con = Constraint("DifferentArgConstraint", {"proposition_indices": [0, 1], "arg_names": ["receptacle_handles"] * 2})
    w1 = {"candle_1": "end_table_1"}
    w2 = {**w1, "candle_3": "end_table_2"}
    e = run(task(pair, third, cons=(con,)), [World(), World(on=w1), World(on=w2),
                                            World(on={**w2, "candle_2": "end_table_2"})])
    assert e.unit_steps == [[1, 3], [2]] and e.percent_complete() == pytest.approx(2 / 3)
    assert e.log()["constraint_satisfaction"] == [[False, True]]
    apart = run(task(pair, third, cons=(con,)), [World(), World(on=w1), World(on=w2),
                                                World(on={**w2, "candle_2": "end_table_3"})])
    assert apart.success()


def test_units_take_the_placements_in_the_order_they_happened():
    """README's spoons, two of three to the tables: spoon_3 then spoon_1 arrive; the first unit is
    spoon_3's placement, the second spoon_1's, whatever the list order of the handles."""
    spoons = P("is_on_top", object_handles=SPOONS, receptacle_handles=TABLES, number=2)
    first = P("is_on_top", object_handles=["fork"], receptacle_handles=TABLES)
    con = Constraint("SameArgConstraint", {"proposition_indices": [1, 0], "arg_names": ["receptacle_handles"] * 2})
    worlds = [World(on={"fork": "table_2"}), World(on={"fork": "table_2", "spoon_3": "table_2"}),
              World(on={"fork": "table_2", "spoon_3": "table_2", "spoon_1": "table_1"})]
    e = run(task(spoons, first, cons=(con,)), worlds)
    assert e.unit_steps == [[1, 2], [0]] and e.percent_complete() == pytest.approx(2 / 3)


def test_arg_constraint_on_clustered_groups():
    a = Proposition("is_clustered", {"*args": [["x", "y"], ["z"]]})
    b = P("is_on_floor", object_handles=["x", "y"])
    con = Constraint("SameArgConstraint", {"proposition_indices": [0, 1], "arg_names": ["*args_0", "object_handles"]})
    pos = {"x": (0.0, 0.0), "y": (9.0, 0.0), "z": (0.3, 0.0)}
    assert run(task(a, b, cons=(con,)), [World(pos=pos, floor=("x",))]).percent_complete() == 1.0
    same_step = run(task(a, b, cons=(con,)), [World(pos=pos, floor=("y",))])  # tie: list order, a sets it
    assert same_step.percent_complete() == 0.5 and same_step.log()["constraint_satisfaction"] == [[True, False]]
    apart = dict(pos, z=(50.0, 0.0))
    later = run(task(a, b, cons=(con,)), [World(pos=apart, floor=("y",)), World(pos=pos, floor=("y",))])
    assert later.satisfied_at == [1, 0] and later.log()["constraint_satisfaction"] == [[False, True]]


MUG_CLEAN, MUG_FILLED = P("is_clean", object_handles=["mug"]), P("is_filled", object_handles=["mug"])


def _mug(clean: bool, filled: bool) -> World:
    return World(states={("mug", "is_clean"): clean, ("mug", "is_filled"): filled})


@pytest.mark.parametrize("terminal,last,percent", [
    ([1], _mug(False, True), 1.0),  # the mug may get dirty again
    ([0, 1], _mug(False, True), 0.5),
    ([1], _mug(False, False), 0.5),  # emptied before the end
])
def test_terminal_satisfaction_mug(terminal, last, percent):
    cons = (Constraint("TemporalConstraint", {"dag_edges": [[0, 1]]}),
            Constraint("TerminalSatisfactionConstraint", {"proposition_indices": terminal, "n_propositions": 2}))
    e = run(task(MUG_CLEAN, MUG_FILLED, cons=cons), [_mug(False, False), _mug(True, False), _mug(True, True), last])
    assert e.satisfied_at == [1, 2] and e.percent_complete() == percent and e.success() is (percent == 1.0)


def test_temporal_tie_in_the_mug_example():
    """README, TerminalSatisfactionConstraint: "wash the mug and then fill it with juice", with
    TemporalConstraint (0, 1): washed and filled at the same step is not "before"; B fails."""
    con = Constraint("TemporalConstraint", {"dag_edges": [[0, 1]]})
    tie = run(task(MUG_CLEAN, MUG_FILLED, cons=(con,)), [_mug(False, False), _mug(True, True)])
    assert tie.satisfied_at == [1, 1] and tie.percent_complete() == 0.5 and not tie.success()
    ordered = run(task(MUG_CLEAN, MUG_FILLED, cons=(con,)), [_mug(False, False), _mug(True, False), _mug(True, True)])
    assert ordered.success()


# --- percent complete with number unrolling -----------------------------------------------------

FOUR = P("is_on_top", object_handles=["o1", "o2", "o3", "o4"], receptacle_handles=["table"], number=4)


def test_three_of_four_is_075():
    e = run(task(FOUR), [World(), World(on={"o1": "table", "o2": "table", "o3": "table"})])
    assert e.percent_complete() == 0.75 and e.satisfied_at == [-1] and not e.success()


def test_units_count_the_best_state_of_the_sequence():
    three, one = World(on={"o1": "table", "o2": "table", "o3": "table"}), World(on={"o4": "table"})
    assert run(task(FOUR), [three, one]).percent_complete() == 0.75
    term = Constraint("TerminalSatisfactionConstraint", {"proposition_indices": [0]})
    assert run(task(FOUR, cons=(term,)), [three, one]).percent_complete() == 0.25
    everything = World(on={o: "table" for o in ("o1", "o2", "o3", "o4")})
    assert run(task(FOUR, P("is_on_floor", object_handles=["box"])), [everything]).percent_complete() == 0.8


def test_temporal_constraint_judges_each_unit():
    first = P("is_on_floor", object_handles=["a"])
    two = P("is_on_top", object_handles=["s1", "s2"], receptacle_handles=["table"], number=2)
    con = Constraint("TemporalConstraint", {"dag_edges": [[0, 1]]})
    worlds = [World(on={"s1": "table"}), World(floor=("a",), on={"s1": "table"}),
              World(floor=("a",), on={"s1": "table", "s2": "table"})]
    e = run(task(first, two, cons=(con,)), worlds)
    assert e.satisfied_at == [1, 2] and e.percent_complete() == pytest.approx(2 / 3)
    assert e.log()["constraint_satisfaction"] == [[True, True]]


def test_empty_task_and_no_updates():
    assert Evaluator(task()).percent_complete() == 0.0 and not Evaluator(task()).success()
    assert Evaluator(task(FOUR)).percent_complete() == 0.0


# --- log, serialisation -------------------------------------------------------------------------

def test_log_keys_and_json():
    cons = (Constraint("TemporalConstraint", {"dag_edges": [[0, 1]]}),
            Constraint("TerminalSatisfactionConstraint", {"proposition_indices": [1]}))
    t = task(MUG_CLEAN, MUG_FILLED, deps=(Dependency((1,), (0,), "after_satisfied"),), cons=cons)
    log = run(t, [_mug(False, True), _mug(True, True)]).log()
    assert set(log) == {"propositions", "dependencies", "constraints", "proposition_satisfied_at",
                        "constraint_satisfaction", "state_sequence"}
    assert log["proposition_satisfied_at"] == [1, 1]
    assert log["state_sequence"] == [[False, False], [True, True]]
    assert log["constraint_satisfaction"] == [[True, False], [True, True]]  # filled at the clean's step: a tie
    assert log["dependencies"] == [{"proposition_indices": [1], "depends_on": [0],
                                    "relation_type": "after_satisfied", "dependency_mode": "all"}]
    assert log["constraints"][0] == {"type": "TemporalConstraint", "args": {"dag_edges": [[0, 1]]}}
    assert json.loads(json.dumps(log)) == log


def test_episode_round_trip():
    episode = {
        "evaluation_propositions": [
            {"function_name": "is_on_top", "args": {"object_handles": ["a"], "receptacle_handles": ["t"],
                                                   "number": 1, "is_same_receptacle": False}},
            {"function_name": "is_clustered", "args": {"*args": [["a"], ["b"]], "number": [1, 1]}}],
        "evaluation_proposition_dependencies": [{"proposition_indices": [1], "depends_on": [0],
                                                 "relation_type": "while_satisfied", "dependency_mode": "any"}],
        "evaluation_constraints": [{"type": "SameArgConstraint", "args": {
            "proposition_indices": [0, 1], "arg_names": ["object_handles", "*args_0"], "n_propositions": 2}}],
    }
    t = TaskEvaluation.from_episode(episode)
    assert t.dependencies[0] == Dependency((1,), (0,), "while_satisfied", "any")
    assert t.to_episode_fields() == episode
    assert TaskEvaluation.from_episode({"evaluation_propositions": episode["evaluation_propositions"]}).constraints == ()


# --- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize("fn,args,words", [
    ("is_above", {}, ["Proposition.function_name", "is_on_top", "is_powered_off"]),
    ("is_on_top", {"object_handles": ["a"], "receptacles": ["t"]}, ["is_on_top.args", "receptacle_handles"]),
    ("is_on_top", {"object_handles": "a", "receptacle_handles": ["t"]}, ["is_on_top.object_handles", "list"]),
    ("is_on_top", {"object_handles": ["a"], "receptacle_handles": ["t"], "number": "1"}, ["is_on_top.number"]),
    ("is_on_top", {"object_handles": ["a"], "receptacle_handles": ["t"], "number": 2}, ["is_on_top.number", "1 to 1"]),
    ("is_on_top", {"object_handles": ["a"], "receptacle_handles": ["t"], "is_same_receptacle": 1},
     ["is_same_receptacle", "True, False"]),
    ("is_next_to", {"entity_handles_a": ["a"], "entity_handles_b": ["b"], "l2_threshold": -1},
     ["is_next_to.l2_threshold"]),
    ("is_clustered", {"*args": [["a"], ["b"]], "number": [1]}, ["is_clustered.number", "one int per group"]),
    ("is_clustered", {"*args": [["a"]]}, ["is_clustered.number", "at least two"]),
    ("is_clean", {"object_handles": ["m"], "is_same_room": True}, ["is_clean.args", "number, object_handles"]),
])
def test_bad_propositions(fn, args, words):
    with pytest.raises(ValueError) as err:
        Proposition.from_dict({"function_name": fn, "args": args})
    assert all(w in str(err.value) for w in words), str(err.value)


ONE = {"function_name": "is_on_floor", "args": {"object_handles": ["a"]}}


@pytest.mark.parametrize("deps,cons,words", [
    ([{"proposition_indices": [1], "depends_on": [0], "relation_type": "while_satisfied"}], [],
     ["dependencies[0].proposition_indices", "0..0"]),
    ([{"proposition_indices": [0], "depends_on": [0], "relation_type": "after"}], [],
     ["Dependency.relation_type", "while_satisfied, after_satisfied, after_unsatisfied, before_satisfied"]),
    ([{"proposition_indices": [0], "depends_on": [0], "relation_type": "while_satisfied", "dependency_mode": "some"}],
     [], ["Dependency.dependency_mode", "all, any"]),
    ([{"proposition_indices": [0], "depends_on": [], "relation_type": "while_satisfied"}], [],
     ["Dependency.depends_on"]),
    ([], [{"type": "OrderConstraint", "args": {}}], ["Constraint.type", "TemporalConstraint", "SameArgConstraint",
                                                     "DifferentArgConstraint", "TerminalSatisfactionConstraint"]),
    ([], [{"type": "TemporalConstraint", "args": {"dag_edges": [[0, 0]]}}], ["dag_edges", "acyclic"]),
    ([], [{"type": "TemporalConstraint", "args": {"dag_edges": [[0, 1], [1, 0]]}}], ["dag_edges", "acyclic"]),
    ([], [{"type": "TemporalConstraint", "args": {"dag_edges": [[0, 3]]}}], ["constraints[0]", "0..1"]),
    ([], [{"type": "TemporalConstraint", "args": {"edges": [[0, 1]]}}], ["TemporalConstraint.args", "dag_edges"]),
    ([], [{"type": "SameArgConstraint", "args": {"proposition_indices": [0, 1], "arg_names": ["object_handles"]}}],
     ["SameArgConstraint.arg_names", "one per entry"]),
    ([], [{"type": "DifferentArgConstraint", "args": {"proposition_indices": [0, 1],
                                                      "arg_names": ["object_handles", "room_ids"]}}],
     ["arg_names (proposition 1)", "object_handles"]),
    ([], [{"type": "TerminalSatisfactionConstraint", "args": {"proposition_indices": [0], "n_propositions": 5}}],
     ["constraints[0].n_propositions", "None or 2"]),
    ([], [{"type": "TerminalSatisfactionConstraint", "args": {"proposition_indices": [0, 0]}}],
     ["proposition_indices", "distinct"]),
])
def test_bad_episode_is_rejected_before_evaluation(deps, cons, words):
    episode = {"evaluation_propositions": [ONE, ONE], "evaluation_proposition_dependencies": deps,
               "evaluation_constraints": cons}
    if deps and deps[0]["proposition_indices"] == [1]:
        episode["evaluation_propositions"] = [ONE]
    with pytest.raises(ValueError) as err:
        TaskEvaluation.from_episode(episode)
    assert all(w in str(err.value) for w in words), str(err.value)


def test_bad_episode_shapes_and_steps():
    with pytest.raises(ValueError, match="evaluation_propositions"):
        TaskEvaluation.from_episode({})
    with pytest.raises(ValueError, match="TaskEvaluation.propositions"):
        TaskEvaluation(({"function_name": "is_on_floor"},))  # type: ignore[arg-type]
    e = Evaluator(task(P("is_on_floor", object_handles=["a"])))
    e.update(World(), 3)
    with pytest.raises(ValueError, match="Evaluator.update step.*>= 3"):
        e.update(World(), 2)
    with pytest.raises(ValueError, match="Evaluator.update step"):
        e.update(World(), True)  # type: ignore[arg-type]
