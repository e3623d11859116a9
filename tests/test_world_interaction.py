"""Simultaneous actions, handover and the executor pitfalls the world must handle."""

from __future__ import annotations

from conftest import mini_scene, mini_world

from collablab.world import vh
from collablab.world.actions import Action

W = Action("wait")


def test_grab_conflict_one_random_winner_other_idles():
    winners = set()
    for seed in range(12):
        w = mini_world(seed=seed)
        w.step({0: Action("walk", obj=11), 1: Action("walk", obj=11)})
        w.step({0: Action("walk", obj=21), 1: Action("walk", obj=21)})
        res = w.step({0: Action("grab", obj=21), 1: Action("grab", obj=21)})
        assert all(r.conflict for r in res)
        statuses = sorted(r.status for r in res)
        assert statuses == ["conflict", "ok"]
        winner = next(r.agent for r in res if r.ok)
        assert w.holding(winner) == [21] and w.holding(1 - winner) == []
        winners.add(winner)
        again = mini_world(seed=seed)
        again.step({0: Action("walk", obj=11), 1: Action("walk", obj=11)})
        again.step({0: Action("walk", obj=21), 1: Action("walk", obj=21)})
        res2 = again.step({0: Action("grab", obj=21), 1: Action("grab", obj=21)})
        assert [r.status for r in res2] == [r.status for r in res]  # seeded
    assert winners == {0, 1}


def test_open_conflict_and_no_conflict_on_different_objects(world):
    world.step({0: Action("walk", obj=10), 1: Action("walk", obj=10)})
    res = world.step({0: Action("open", obj=10), 1: Action("open", obj=10)})
    assert all(r.conflict for r in res) and sum(r.ok for r in res) == 1
    world.step({0: Action("walk", obj=11), 1: Action("walk", obj=11)})
    world.step({0: Action("walk", obj=21), 1: Action("walk", obj=22)})
    res = world.step({0: Action("grab", obj=21), 1: Action("grab", obj=22)})
    assert not any(r.conflict for r in res) and all(r.ok for r in res)


def _seq_world():
    w = mini_world(structure="sequential", allowed={0: [1], 1: [2]}, rooms=[1, 2])
    w.step({0: Action("walk", obj=11), 1: W})
    w.step({0: Action("walk", obj=21), 1: W})
    w.step({0: Action("grab", obj=21), 1: W})
    return w


def test_handover_succeeds_at_the_same_door_with_receive():
    w = _seq_world()
    w.step({0: Action("walk_to_door", door=3), 1: Action("walk_to_door", door=3)})
    res = w.step({0: Action("handover", obj=21, recipient=1), 1: Action("receive")})
    assert res[0].ok and res[0].handover == "ok"
    assert w.holding(1) == [21] and w.holding(0) == []
    assert w.room_of(21) == 2  # it crossed into the receiver's room
    assert w.step({0: W, 1: Action("walk", obj=13)})[1].ok
    r = w.step({0: W, 1: Action("put_on", obj=21, target=13)})[1]
    assert r.ok and r.completed == ["on_cupcake_13"]


def test_handover_fails_when_receiver_is_not_at_the_door():
    w = _seq_world()
    w.step({0: Action("walk_to_door", door=3), 1: W})
    r = w.step({0: Action("handover", obj=21, recipient=1), 1: Action("receive")})[0]
    assert r.status == "failed" and r.handover == "failed" and "not at door" in r.feedback
    assert w.holding(0) == [21]


def test_handover_fails_when_receiver_does_not_receive():
    w = _seq_world()
    w.step({0: Action("walk_to_door", door=3), 1: Action("walk_to_door", door=3)})
    r = w.step({0: Action("handover", obj=21, recipient=1), 1: W})[0]
    assert r.handover == "failed" and "receive" in r.feedback


def test_handover_fails_when_giver_does_not_hold_it_or_is_not_at_a_door():
    w = _seq_world()
    r = w.step({0: Action("handover", obj=21, recipient=1), 1: Action("receive")})[0]
    assert r.handover == "failed" and "door" in r.feedback
    w.step({0: Action("walk_to_door", door=3), 1: Action("walk_to_door", door=3)})
    r = w.step({0: Action("handover", obj=22, recipient=1), 1: Action("receive")})[0]
    assert r.handover == "failed" and "not holding" in r.feedback


def test_walk_to_door_outside_zone_is_a_spatial_error():
    w = mini_world(n_agents=3, structure="sequential", allowed={0: [1], 1: [2], 2: [1]}, rooms=[1, 2, 1])
    assert w.step({0: Action("walk_to_door", door=3)})[0].ok
    bad = w.step({0: Action("walk_to_door", door=99)})[0]
    assert bad.status == "invalid" and "allowed: 3" in bad.feedback


def _run_raw(lines):
    """VirtualHome's executor alone on the mini scene (one character in the kitchen)."""
    eg = vh.load()
    env, ex, sc = eg.environment, eg.execution, eg.scripts
    g = mini_scene().copy_graph()
    g["nodes"].append({"id": 50, "class_name": "character", "category": "Characters", "properties": [], "states": []})
    g["edges"].append({"from_id": 50, "relation_type": "INSIDE", "to_id": 1})
    graph = env.EnvironmentGraph(g)
    state = env.EnvironmentState(graph, {}, instance_selection=True)
    e = ex.ScriptExecutor(graph, {}, 0)
    for line in lines:
        ok, state = e.execute_one_step(sc.Script([sc.parse_script_line(line, 0)]), state, in_place=True)
        assert ok, line
    return env, state


def test_held_objects_follow_their_holder(world):
    """Pitfall: the executor leaves held objects INSIDE the room they were grabbed in."""
    # raw executor: grab in the kitchen, walk to the living room -> object stays in the kitchen
    env, state = _run_raw(("[walk] <cupcake> (21)", "[grab] <cupcake> (21)", "[walk] <livingroom> (2)"))
    assert state.get_node_ids_from(21, env.Relation.INSIDE) == {1}
    # our world: the cupcake is in the living room with its holder
    world.step({0: Action("walk", obj=11)})
    world.step({0: Action("walk", obj=21)})
    world.step({0: Action("grab", obj=21)})
    world.step({0: Action("walk_to_room", room="livingroom")})
    assert world.room_of(21) == 2 and world.visible(0, 21)
    assert not world.visible(1, 21)  # agent 1 stayed in the kitchen


def test_executor_error_messages_do_not_accumulate(world):
    """Pitfall: ExecutionInfo keeps every earlier error; feedback must be this step's only."""
    world.step({0: Action("walk", obj=11)})
    world.step({0: Action("walk", obj=21)})
    world.step({0: Action("grab", obj=21)})
    world.step({0: Action("walk", obj=10)})
    first = world._exec(0, "open", 10)
    assert first[0]
    a = world._exec(0, "open", 10)  # executor refuses: already open
    b = world._exec(0, "grab", 21)  # executor refuses: already grabbed
    assert not a[0] and not b[0]
    assert "fridge" in a[1] and "fridge" not in b[1] and "cupcake" in b[1]
    # the raw executor keeps both messages when its ExecutionInfo is reused
    ex = world._executors[0]
    sc = world._eg.scripts
    ex.info = world._eg.execution.ExecutionInfo()
    for line in ("[open] <fridge> (10)", "[grab] <cupcake> (21)"):
        ex.execute_one_step(sc.Script([sc.parse_script_line(line, 0)]), world.state)
    assert len(ex.info.messages) == 2


def test_raw_executor_accepts_put_on_a_non_surface():
    """Pitfall: the executor does not check that a put target is a surface; the world does."""
    _run_raw(("[walk] <cupcake> (21)", "[grab] <cupcake> (21)", "[walk] <chair> (12)",
              "[putback] <cupcake> (21) <chair> (12)"))


def test_observation_contents(world):
    obs = world.observe(0)
    ids = {v["id"] for v in obs["visible"]}
    # the door, the furniture and the plate (0.25 m at 1.3 m: 587 px); the cupcake and the apple
    # on the table (0.1 m at 1.2 m: 114 px) are too small to see from the room's centre
    assert ids == {3, 10, 11, 12, 14, 23}
    assert obs["room"] == "kitchen" and obs["holding"] == [] and obs["doors"] == [{"id": 3, "to": "livingroom"}]
    assert obs["standing_at"] == 1 and obs["position"] == [2.0, 2.0]
    world.step({0: Action("walk", obj=11)})
    obs = world.observe(0)
    ids = {v["id"] for v in obs["visible"]}
    assert {10, 11, 21, 22, 23}.issubset(ids) and 20 not in ids and 24 not in ids
    cupcake = next(v for v in obs["visible"] if v["id"] == 21)
    assert cupcake["on"] == 11 and cupcake["class_name"] == "cupcake"
    world.step({0: Action("walk", obj=21)})
    world.step({0: Action("grab", obj=21)})
    obs = world.observe(0)
    assert obs["holding"] == [{"id": 21, "class_name": "cupcake"}] and "grabbed" in obs["feedback"]


def test_goal_progress_and_credits():
    w = mini_world()
    assert w.completion() == (0, 2)
    for a, obj in ((0, 21), (1, 22)):
        w.step({a: Action("walk", obj=11)})
        w.step({a: Action("walk", obj=obj)})
        w.step({a: Action("grab", obj=obj)})
        w.step({a: Action("walk_to_room", room="livingroom")})
        w.step({a: Action("walk", obj=13)})
        r = w.step({a: Action("put_on", obj=obj, target=13)})[a]
        assert r.completed
    assert w.success() and w.credits() == {0: 1, 1: 1}
