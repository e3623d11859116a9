"""MAPF (mastracebench.txt appendix "MAPF", eq 9): execution rules, score, solver, generator,
parser and prompt, on hand-computed cases."""

from __future__ import annotations

import json

import pytest
from collablab.studies.mastracebench.tasks.base import Invalid, Task, is_invalid
from collablab.studies.mastracebench.tasks.mapf import (
    MAX_STEPS,
    MAPFInstance,
    MAPFTask,
    bottleneck_5x5,
    canonical_mapf,
    execute,
    generate_mapf,
    mapf_prompt,
    parse_mapf,
    score_mapf,
    solve,
)


def lanes() -> MAPFInstance:
    """3 robots in 3 open rows of a 3x5 grid, each to the far end of its own row."""
    return MAPFInstance(width=5, height=3, obstacles=frozenset(),
                        starts=((0, 0), (1, 0), (2, 0)), goals=((0, 4), (1, 4), (2, 4)))


def corridor(starts, goals, width=4, obstacles=()) -> MAPFInstance:
    return MAPFInstance(width=width, height=1, obstacles=frozenset(obstacles),
                        starts=tuple(starts), goals=tuple(goals))


# --- the §3.3 worked example: proposals of 100 / 33.3 / 33.3, final answer 66.7 -------------

def test_paper_worked_example_scores():
    inst = lanes()
    go, wait = ["R"] * 4, ["S"]
    assert score_mapf((go, go, go), inst) == 100.0
    assert score_mapf((go, wait, wait), inst) == pytest.approx(100 / 3)
    assert score_mapf((wait, wait, go), inst) == pytest.approx(100 / 3)
    assert round(score_mapf((go, go, ["R", "R"]), inst), 1) == 66.7
    assert score_mapf((wait, wait, wait), inst) == 0.0


def test_invalid_scores_zero_and_max_is_100():
    task = MAPFTask()
    assert task.score(Invalid("x"), lanes()) == 0.0
    assert task.max_score(lanes()) == 100.0
    assert isinstance(task, Task)


# --- collisions ------------------------------------------------------------------------------

def test_swap_conflict_keeps_both_in_place():
    inst = corridor([(0, 1), (0, 2)], [(0, 2), (0, 1)])
    run = execute((["R"], ["L"]), inst)
    assert run.positions == ((0, 1), (0, 2))
    assert run.count("swap") == 1 and run.count("vertex") == 0
    assert score_mapf((["R"], ["L"]), inst) == 0.0


def test_vertex_conflict_keeps_both_movers_in_place():
    inst = corridor([(0, 0), (0, 2)], [(0, 1), (0, 3)])
    run = execute((["R"], ["L"]), inst)
    assert run.positions == ((0, 0), (0, 2))
    assert run.count("vertex") == 1 and run.collisions == 1
    # Hand trace: t1 both blocked; t2 robot 1 has no moves left (stays at (0, 0)), robot 2
    # goes R to (0, 3): the blocked robot is derailed, the other arrives.
    run = execute((["R"], ["L", "R"]), inst)
    assert run.positions == ((0, 0), (0, 3))
    assert score_mapf((["R"], ["L", "R"]), inst) == 50.0
    # Robot 1 retrying succeeds; robot 2's extra R off the grid is an invalid move.
    run = execute((["R", "R"], ["L", "R", "R"]), inst)
    assert run.positions == ((0, 1), (0, 3)) and run.count("invalid") == 1
    assert all(run.arrived)


def test_moving_into_a_stayer_blocks_only_the_mover():
    inst = corridor([(0, 0), (0, 1)], [(0, 1), (0, 3)])
    run = execute((["R"], ["S"]), inst)
    assert run.positions == ((0, 0), (0, 1)) and run.count("vertex") == 1


def test_following_is_allowed_and_blocking_cascades():
    inst = corridor([(0, 0), (0, 1)], [(0, 1), (0, 2)])
    run = execute((["R"], ["R"]), inst)
    assert run.positions == ((0, 1), (0, 2)) and not run.events
    # A train of three with a stopped head: both followers are blocked, two vertex events.
    inst3 = corridor([(0, 0), (0, 1), (0, 2)], [(0, 1), (0, 2), (0, 3)])
    run = execute((["R"], ["R"], ["S"]), inst3)
    assert run.positions == inst3.starts and run.count("vertex") == 2


def test_naive_shortest_paths_collide_in_the_bottleneck():
    inst = bottleneck_5x5()
    naive = (tuple("DRRRRD"), tuple("ULLLLU"))
    run = execute(naive, inst)
    assert run.collisions >= 1 and score_mapf(naive, inst) < 100.0
    plan = solve(inst)
    assert plan is not None and score_mapf(plan, inst) == 100.0 and not execute(plan, inst).events


# --- invalid moves, truncation, arrival ------------------------------------------------------

def test_invalid_moves_stay_in_place_and_are_counted():
    inst = corridor([(0, 0), (0, 3)], [(0, 2), (0, 3)], obstacles=[(0, 1)])
    run = execute((["U", "R", "L"], ["R"]), inst)  # off grid, into obstacle, off grid; off grid
    assert run.positions == ((0, 0), (0, 3))
    assert run.count("invalid") == 4
    assert score_mapf((["U", "R", "L"], ["R"]), inst) == 50.0  # robot 2 sits on its goal


def test_plans_are_truncated_at_30_steps():
    inst = corridor([(0, 0), (0, 3)], [(0, 1), (0, 3)])
    late = (["S"] * MAX_STEPS + ["R"], [])
    assert execute(late, inst).steps == MAX_STEPS
    assert score_mapf(late, inst) == 50.0
    just_in_time = (["S"] * (MAX_STEPS - 1) + ["R"], [])
    assert score_mapf(just_in_time, inst) == 100.0


def test_goal_must_be_held_at_the_end():
    inst = corridor([(0, 0), (0, 3)], [(0, 1), (0, 3)])
    assert score_mapf((["R", "R"], []), inst) == 50.0  # passes its goal and leaves it
    assert score_mapf((["R", "R", "L"], []), inst) == 100.0


def test_plan_with_wrong_robot_count_is_rejected():
    with pytest.raises(ValueError, match="plan"):
        execute((["R"],), lanes())


# --- instance, serialisation -----------------------------------------------------------------

def test_instance_round_trips_through_json():
    inst = bottleneck_5x5()
    again = MAPFInstance.from_dict(json.loads(json.dumps(inst.to_dict())))
    assert again == inst


@pytest.mark.parametrize("bad, field", [
    ({"starts": ((0, 0), (0, 0))}, "starts"),
    ({"goals": ((0, 9), (1, 1))}, "goals"),
    ({"obstacles": frozenset({(0, 0)})}, "starts"),
    ({"goals": ((1, 1),)}, "goals"),
])
def test_bad_instances_name_the_field(bad, field):
    kw = {"width": 3, "height": 3, "obstacles": frozenset(), "starts": ((0, 0), (2, 2)), "goals": ((2, 0), (0, 2))}
    kw.update(bad)
    with pytest.raises(ValueError, match=field):
        MAPFInstance(**kw)


def test_bottleneck_matches_fig7():
    inst = bottleneck_5x5()
    assert (inst.width, inst.height, inst.n_robots) == (5, 5, 2)
    free_in_wall = [r for r in range(5) if inst.free((r, 2))]
    assert free_in_wall == [2]  # a one-cell gap
    (s1, s2), (g1, g2) = inst.starts, inst.goals
    assert s1[1] < 2 < g1[1] and s2[1] > 2 > g2[1]  # opposite directions through the gap


# --- solver and generator --------------------------------------------------------------------

def test_generator_is_deterministic_varied_and_prefix_stable():
    a, b = generate_mapf(40, seed=7), generate_mapf(40, seed=7)
    assert a == b
    assert generate_mapf(10, seed=7) == a[:10]
    assert generate_mapf(10, seed=8) != a[:10]
    assert len({(x.width, x.height) for x in a}) > 5
    assert {x.n_robots for x in a} >= {2, 3, 4}
    assert all(x.n_robots >= 2 for x in a)


def test_default_size_is_157_and_every_instance_is_solved():
    xs = generate_mapf()
    assert len(xs) == 157
    for inst in xs[::5]:
        plan = solve(inst)
        assert plan is not None
        assert max(len(s) for s in plan) <= MAX_STEPS
        run = execute(plan, inst)
        assert all(run.arrived) and not run.events


def test_solver_reports_unsolvable():
    walled = corridor([(0, 0), (0, 3)], [(0, 3), (0, 0)])  # 1-wide corridor, must swap
    assert solve(walled) is None
    far = MAPFInstance(width=40, height=1, obstacles=frozenset(), starts=((0, 0), (0, 39)),
                       goals=((0, 35), (0, 38)))
    assert solve(far) is None  # 35 steps > 30


# --- parser and canonical form ---------------------------------------------------------------

def test_parse_json_object_in_a_code_fence():
    text = 'Here is my plan:\n```json\n{"robot_1": ["D","r","R"], "Robot 2": "u L l"}\n```'
    inst = bottleneck_5x5()
    assert parse_mapf(text, inst) == (("D", "R", "R"), ("U", "L", "L"))


def test_parse_nested_and_list_and_words():
    inst = bottleneck_5x5()
    assert parse_mapf('{"plan": {"1": ["up", "wait"], "2": ["Right"]}}', inst) == (("U", "S"), ("R",))
    assert parse_mapf('[["U"], ["D", "S"]]', inst) == (("U",), ("D", "S"))


def test_parse_lines():
    text = "Reasoning first.\nRobot 1: U R S\n  robot_2 = D, D, L\n"
    assert parse_mapf(text, bottleneck_5x5()) == (("U", "R", "S"), ("D", "D", "L"))
    assert parse_mapf("**Robot 1**: URRS\nR2: S", bottleneck_5x5()) == (("U", "R", "R", "S"), ("S",))


@pytest.mark.parametrize("text, why", [
    ('{"robot_1": ["U"]}', "robots [2]"),
    ('{"robot_1": ["U"], "robot_2": ["X"]}', "unknown move"),
    ('{"robot_1": ["U"], "robot_2": ["D"], "robot_3": ["L"]}', "unknown robots"),
    ("Robot 1: U\nRobot 1: D\nRobot 2: S", "twice"),
    ("I cannot solve this.", "no joint plan"),
    ('[["U"]]', "1 move sequences"),
])
def test_parse_failures_are_invalid_with_reason(text, why):
    got = parse_mapf(text, bottleneck_5x5())
    assert is_invalid(got) and why in got.reason
    assert score_mapf(got, bottleneck_5x5()) == 0.0


def test_parse_round_trip_of_solver_plan():
    inst = generate_mapf(3, seed=1)[2]
    plan = solve(inst)
    text = json.dumps({f"robot_{i + 1}": list(s) for i, s in enumerate(plan)})
    assert parse_mapf(text, inst) == plan
    lines = "\n".join(f"Robot {i + 1}: {' '.join(s)}" for i, s in enumerate(plan))
    assert parse_mapf(lines, inst) == plan


def test_canonical_drops_trailing_stays_and_truncates():
    a = (("R", "S", "S"), ("S",))
    b = (("R",), ())
    assert canonical_mapf(a) == canonical_mapf(b) == (("R",), ())
    long = (("R",) * 35, ())
    assert len(canonical_mapf(long)[0]) == MAX_STEPS
    assert canonical_mapf((("S", "R"), ())) != canonical_mapf((("R",), ()))
    hash(canonical_mapf(a))


def test_prompt_states_the_instance_and_rules():
    inst = bottleneck_5x5()
    text = mapf_prompt(inst)
    for piece in ("robot_1: start (1, 0) -> goal (3, 4)", "(0, 2)", "30", "swap", "S (stay)"):
        assert piece in text
    assert not is_invalid(parse_mapf(text.split("for example:")[1], inst))


# --- one joint plan naming every robot (issue 23) ---------------------------------------------
# appendix "MAPF": "the MAS produces a joint plan containing one action sequence for each robot"

def two_steps() -> MAPFInstance:
    """2 robots on an open 3x4 grid, each one move from its goal: robot 1 R, robot 2 D."""
    return MAPFInstance(width=4, height=3, obstacles=frozenset(), starts=((0, 0), (1, 3)), goals=((0, 1), (2, 3)))


def test_a_partial_plan_is_invalid_and_its_robot_list_is_not_a_joint_plan():
    inst = two_steps()
    # The old reader took robot 1's list ["R", "D"] (length 2 = robot count) as the joint plan
    # "robot 1 R, robot 2 D", which scores 100 here:
    assert score_mapf((("R",), ("D",)), inst) == 100.0
    for text in ('{"robot_1": ["R", "D"]}', '```json\n{"plan": {"robot_1": ["R", "D"]}}\n```',
                 '{"robot_1": ["R", "D"], "explanation": "robot 2 waits"}'):
        got = parse_mapf(text, inst)
        assert is_invalid(got), text
        assert "no moves for robots [2]" in got.reason and "every robot" in got.reason
        assert score_mapf(got, inst) == 0.0
    # a bare list of moves is one robot's sequence, never one move per robot
    assert is_invalid(parse_mapf('["R", "D"]', inst))
    assert is_invalid(parse_mapf('{"plan": ["R", "D"]}', inst))


def test_a_full_plan_with_an_explanation_is_read_and_scored_by_eq_9():
    inst = lanes()  # 3 robots, rows 0-2, each from column 0 to column 4
    reply = ('Here is the plan.\n```json\n{"robot_1": ["R", "R", "R", "R"], "robot_2": "R R R R", '
             '"robot_3": ["R", "R"], "explanation": "robot 3 stops halfway", "reasoning": ["rows are free"]}\n```')
    plan = parse_mapf(reply, inst)
    assert plan == (("R",) * 4, ("R",) * 4, ("R", "R"))
    # By hand: robots 1 and 2 move 4 cells right, (0,0)->(0,4) and (1,0)->(1,4): on their goals.
    # Robot 3 moves 2, (2,0)->(2,2), then stays: not on (2,4). Eq 9: 2 of 3 robots -> 100 * 2/3 = 66.67.
    assert score_mapf(plan, inst) == pytest.approx(200 / 3)
    # the same under a wrapper with other keys, or nested in an answer object
    wrapped = '{"reasoning": "...", "answer": {"joint_plan": {"1": "RRRR", "2": "RRRR", "3": "RR"}}}'
    assert parse_mapf(wrapped, inst) == plan
    assert parse_mapf('{"explanation": "rows", "answer": [["R","R","R","R"], ["R","R","R","R"], ["R","R"]]}', inst) == plan


def test_every_robot_once_other_keys_ignored_first_full_plan_wins():
    inst = bottleneck_5x5()
    assert parse_mapf('{"robot_1": ["U"], "robot_2": ["D"], "notes": {"robot_9": "x"}}', inst) == (("U",), ("D",))
    got = parse_mapf('{"robot_1": ["U"], "Robot 1": ["D"], "robot_2": ["S"]}', inst)
    assert is_invalid(got) and "twice" in got.reason
    # a draft naming one robot, then the full plan: the full plan is read
    text = 'Draft: {"robot_1": ["R"]}. Final: {"robot_1": ["D"], "robot_2": ["U"]}'
    assert parse_mapf(text, inst) == (("D",), ("U",))
    # robot start cells are not a plan; the plan next to them is
    text = '{"starts": {"robot_1": [1, 0], "robot_2": [3, 4]}, "answer": {"robot_1": "S", "robot_2": "L"}}'
    assert parse_mapf(text, inst) == (("S",), ("L",))
