"""Perception from a place and a view, and bodies that take space (issue 9 items 1 and 3)."""

from __future__ import annotations

import pytest
from conftest import mini_scene

from collablab.world import Household, SceneError
from collablab.world.actions import Action
from collablab.world.bodies import BodyRule
from collablab.world.goals import parse_goal
from collablab.world.views import DEFAULT_VIEW, ViewRule

W = Action("wait")
GOAL = parse_goal({"on_cupcake_13": 1})


def make(n=2, structure="parallel", allowed=None, rooms=None, **kw) -> Household:
    return Household(mini_scene(), n, rooms or [1] * n, GOAL, structure=structure, allowed_rooms=allowed, **kw)


def test_view_rule_numbers_are_mecobenchs():
    v = DEFAULT_VIEW
    assert v.focal_px == pytest.approx(128.0)
    assert v.area_px(0.1, 0.5) == pytest.approx(655.36)
    assert v.sees(0.1, 0.5) and not v.sees(0.1, 1.0)  # 655 px vs 164 px
    assert v.sees(1.0, 4.9) and not v.sees(1.0, 5.1)  # ~680 px, but beyond 5 m
    assert v.sees(10.0, 5.2) and not v.sees(9.5, 5.2)  # 60,591 px vs 54,686 px at any distance
    assert v.area_px(0.1, 0.1) == v.area_px(0.1, 0.5)  # nothing is nearer than a body's reach
    assert v.max_distance_for(0.1) == pytest.approx(0.64)
    assert ViewRule(min_area_px=100).sees(0.1, 1.0)  # the numbers are parameters
    with pytest.raises(ValueError, match="min_area_px"):
        ViewRule(min_area_px=0)


def test_small_objects_are_seen_only_near_them():
    w = make()
    assert not w.visible(0, 21) and w.visible(0, 11)
    r = w.step({0: Action("walk", obj=21)})[0]
    assert r.status == "failed" and "not visible" in r.feedback
    assert w.step({0: Action("walk", obj=11)})[0].ok
    assert w.visible(0, 21) and w.visible(0, 22) and not w.visible(1, 21)
    assert w.step({0: Action("walk", obj=21)})[0].ok and w.step({0: Action("grab", obj=21)})[0].ok


def test_a_stricter_view_hides_more():
    w = make(view=ViewRule(min_area_px=5000))
    w.step({0: Action("walk", obj=11)})
    assert not w.visible(0, 21)


def test_put_objects_lie_where_they_were_put():
    w = make(n=1)
    for a in (Action("walk", obj=11), Action("walk", obj=21), Action("grab", obj=21),
              Action("walk_to_room", room="livingroom"), Action("walk", obj=13)):
        assert w.step({0: a})[0].ok, a
    assert w.step({0: Action("put_on", obj=21, target=13)})[0].ok
    assert w.center_of(21) == w.center_of(13)
    w.step({0: Action("walk_to_room", room="kitchen")})
    assert not w.visible(0, 21)


def test_a_full_spot_turns_walkers_away():
    w = make(n=3)
    w.step({0: Action("walk", obj=11), 1: Action("walk", obj=11)})
    r = w.step({2: Action("walk", obj=11)})[2]
    assert r.status == "failed" and "agent 0 and agent 1" in r.feedback and "no room" in r.feedback
    assert w.anchor(21) == 11  # the cupcake on the table is the table's spot
    assert w.spot[2] == 1
    w.step({0: Action("walk", obj=10)})
    assert w.step({2: Action("walk", obj=11)})[2].ok
    roomy = make(n=3, body=BodyRule(furniture_capacity=3))
    assert all(r.ok for r in roomy.step({a: Action("walk", obj=11) for a in range(3)}))


def test_a_door_holds_two():
    w = make(n=3, structure="sequential", allowed={0: [1], 1: [2], 2: [1, 2]}, rooms=[1, 2, 1])
    w.step({0: Action("walk_to_door", door=3), 1: Action("walk_to_door", door=3)})
    r = w.step({2: Action("walk_to_door", door=3)})[2]
    assert r.status == "failed" and "already stand there" in r.feedback


def _carry_to_door(w: Household) -> None:
    for a in (Action("walk", obj=11), Action("walk", obj=21), Action("grab", obj=21), Action("walk_to_door", door=3)):
        assert w.step({0: a})[0].ok, a


def test_the_handover_chain_is_enforced():
    zones = {0: [1], 1: [2], 2: [2]}
    w = make(n=3, structure="sequential", allowed=zones, rooms=[1, 2, 2], handover_links=[(0, 1, 3)])
    _carry_to_door(w)
    w.step({2: Action("walk_to_door", door=3)})
    r = w.step({0: Action("handover", obj=21, recipient=2), 2: Action("receive")})[0]
    assert r.handover == "failed" and "handover chain" in r.feedback and "agent 0 -> agent 1 at door 3" in r.feedback
    w.step({2: Action("walk_to_room", room="livingroom")})
    w.step({1: Action("walk_to_door", door=3)})
    r = w.step({0: Action("handover", obj=21, recipient=1), 1: Action("receive")})[0]
    assert r.handover == "ok" and w.holding(1) == [21]
    with pytest.raises(SceneError, match="handover_chain"):
        make(n=2, structure="sequential", allowed={0: [1], 1: [2]}, rooms=[1, 2], handover_links=[(0, 5, 3)])


def test_handover_distance_is_checked():
    w = make(n=2, structure="sequential", allowed={0: [1], 1: [2]}, rooms=[1, 2],
             body=BodyRule(handover_distance_m=0.5))
    _carry_to_door(w)
    w.step({1: Action("walk_to_door", door=3)})
    r = w.step({0: Action("handover", obj=21, recipient=1), 1: Action("receive")})[0]
    assert r.handover == "failed" and "1.0 m away" in r.feedback


def test_a_scene_without_boxes_is_refused_by_name():
    scene = mini_scene()
    graph = scene.copy_graph()
    for n in graph["nodes"]:
        if n["id"] == 21:
            del n["bounding_box"]
    from collablab.world import Scene

    with pytest.raises(SceneError, match=r"graph node 21 \(cupcake\): missing bounding_box"):
        Household(Scene(graph, scene.doors), 1, [1], GOAL)
