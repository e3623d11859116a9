"""Each MECoBench legality rule (mecobench.txt appendix B.3) by a failing and a passing case."""

from __future__ import annotations

from conftest import mini_world

from collablab.world.actions import Action

W = Action("wait")


def act(world, a0, a1=W):
    return world.step({0: a0, 1: a1})


def test_invalid_action_name_is_recorded_not_raised(world):
    r = act(world, Action("fly", obj=21))[0]
    assert r.status == "invalid" and "allowed actions" in r.feedback and "walk" in r.feedback
    assert act(world, Action("walk", obj=11))[0].ok


def test_sequential_actions_are_invalid_in_parallel_tasks(world):
    assert act(world, Action("walk_to_door", door=3))[0].status == "invalid"


def test_missing_or_unknown_parameters_are_invalid(world):
    assert act(world, Action("grab"))[0].status == "invalid"
    assert act(world, Action("grab", obj=999))[0].status == "invalid"


def test_visibility_other_room(world):
    r = act(world, Action("walk", obj=24))[0]  # toy is in the living room
    assert r.status == "failed" and "not visible" in r.feedback
    assert act(world, Action("walk_to_room", room="livingroom"))[0].ok
    assert act(world, Action("walk", obj=24))[0].ok


def test_visibility_closed_container(world):
    assert not world.visible(0, 20)
    assert act(world, Action("grab", obj=20))[0].status == "failed"
    assert act(world, Action("walk", obj=10))[0].ok
    assert act(world, Action("open", obj=10))[0].ok
    assert world.visible(0, 20)
    assert act(world, Action("grab", obj=20))[0].ok


def test_two_hands(world):
    act(world, Action("walk", obj=11))  # the cupcake is seen from the table, not the room centre
    act(world, Action("walk", obj=21))
    assert act(world, Action("grab", obj=21))[0].ok
    assert act(world, Action("grab", obj=22))[0].ok
    r = act(world, Action("grab", obj=23))[0]
    assert r.status == "failed" and "hands are full" in r.feedback
    act(world, Action("walk", obj=10))
    assert "hands are full" in act(world, Action("open", obj=10))[0].feedback
    act(world, Action("walk", obj=11))
    assert act(world, Action("put_on", obj=21, target=11))[0].ok
    assert act(world, Action("walk", obj=23))[0].ok
    assert act(world, Action("grab", obj=23))[0].ok


def test_put_requires_holding(world):
    act(world, Action("walk", obj=11))
    r = act(world, Action("put_on", obj=21, target=11))[0]
    assert r.status == "failed" and "not holding" in r.feedback


def test_container_state(world):
    act(world, Action("walk", obj=10))
    assert act(world, Action("open", obj=10))[0].ok
    r = act(world, Action("open", obj=10))[0]
    assert r.status == "failed" and "already open" in r.feedback
    act(world, Action("walk", obj=11))
    act(world, Action("walk", obj=21))
    act(world, Action("grab", obj=21))
    act(world, Action("walk", obj=14))
    r = act(world, Action("put_in", obj=21, target=14))[0]
    assert r.status == "failed" and "closed" in r.feedback
    assert act(world, Action("open", obj=14))[0].ok
    assert act(world, Action("put_in", obj=21, target=14))[0].ok
    assert act(world, Action("close", obj=14))[0].ok
    assert not world.visible(0, 21)  # hidden again inside the closed dishwasher


def test_put_target_must_be_surface_or_container(world):
    act(world, Action("walk", obj=11))  # the cupcake is seen from the table, not the room centre
    act(world, Action("walk", obj=21))
    act(world, Action("grab", obj=21))
    act(world, Action("walk", obj=12))
    r = act(world, Action("put_on", obj=21, target=12))[0]
    assert r.status == "failed" and "not a surface" in r.feedback
    r = act(world, Action("put_in", obj=21, target=11))[0]
    assert r.status == "failed" and "not a container" in r.feedback
    act(world, Action("walk", obj=11))
    assert act(world, Action("put_on", obj=21, target=11))[0].ok


def test_cannot_grab_what_another_agent_holds(world):
    act(world, Action("walk", obj=11), Action("walk", obj=11))
    act(world, Action("walk", obj=21), Action("walk", obj=21))
    act(world, Action("grab", obj=21))
    r = act(world, W, Action("grab", obj=21))[1]
    assert r.status == "failed" and "agent 0 is already holding" in r.feedback
    assert world.holding(0) == [21] and world.holding(1) == []


def test_room_accessibility_in_zones():
    w = mini_world(structure="sequential", allowed={0: [1], 1: [2]}, rooms=[1, 2])
    r = act(w, Action("walk_to_room", room="livingroom"))[0]
    assert r.status == "failed" and r.spatial_error and "may not enter" in r.feedback
    assert act(w, W, Action("walk", obj=24))[1].ok
    assert act(w, Action("walk_to_door", door=3))[0].ok
    assert w.agent_room(0) == 1 and w.at_door[0] == 3


def test_walk_to_room_current_room_fails(world):
    r = act(world, Action("walk_to_room", room="kitchen"))[0]
    assert r.status == "failed" and "already in" in r.feedback
    assert act(world, Action("walk_to_room", room="nowhere"))[0].status == "invalid"
