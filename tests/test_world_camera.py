"""The agents' egocentric views (issue 29 items 2-3): four rendered 256x256 views (mecobench.txt
appendix B.1), occlusion, containers, annotation (B.4) and the rendered view rule."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import mini_scene, mini_world, shared_path

from collablab.world import Household, eyes
from collablab.world.actions import Action
from collablab.world.camera import ROOM, Box, CameraRig, class_colour, png_bytes, render, view_directions
from collablab.world.goals import parse_goal
from collablab.world.scene import Scene

YELLOW = (255, 255, 0)


def _room() -> Box:
    return Box(ROOM, "kitchen", (-3.0, 0.0, -3.0), (3.0, 2.5, 3.0), "interior")


def _walk(w: Household, *acts: Action) -> None:
    for a in acts:
        r = w.step({0: a})[0]
        assert r.ok, (a, r.feedback)


def test_sizes_are_the_papers():
    v = render([_room(), Box(1, "table", (-0.5, 0, 1.5), (0.5, 0.75, 2.3))], (0.0, 0.0), 0.0, (0.0, 1.0))
    assert v.image.size == (1024, 256)
    assert [im.size for im in v.views] == [(256, 256)] * 4
    assert v.ids.shape == (4, 256, 256)
    assert v.annotated().size == (1024, 256)
    for k, im in enumerate(v.views):  # the strip is the four views side by side
        assert np.array_equal(np.asarray(v.image)[:, 256 * k:256 * (k + 1)], np.asarray(im))


@pytest.mark.parametrize("where,view", [((0.0, 2.0), 0), ((0.0, -2.0), 1), ((-2.0, 0.0), 2), ((2.0, 0.0), 3)])
def test_views_are_front_back_left_right(where, view):
    """Facing +z in VirtualHome's left-handed frame, -x is on the left and +x on the right."""
    x, z = where
    v = render([_room(), Box(7, "box", (x - 0.3, 0, z - 0.3), (x + 0.3, 0.6, z + 0.3))], (0.0, 0.0), 0.0, (0.0, 1.0))
    px = v.pixels[7]
    assert px[view] > 500 and sum(px) == px[view], px
    assert view_directions((0.0, 1.0)) == [(0.0, 1.0), (-0.0, -1.0), (-1.0, 0.0), (1.0, -0.0)]


def test_a_box_right_of_the_heading_is_on_the_right_of_the_front_view():
    v = render([_room(), Box(7, "box", (0.8, 0, 2.0), (1.2, 0.4, 2.4))], (0.0, 0.0), 0.0, (0.0, 1.0))
    x0, _, x1, _ = v.boxes[7][0]
    assert x0 > 128 and x1 > 128


def test_a_small_box_behind_a_big_one_is_hidden():
    small = Box(2, "apple", (-0.05, 0.0, 2.45), (0.05, 0.1, 2.55))
    big = Box(1, "cabinet", (-0.8, 0.0, 1.8), (0.8, 1.8, 2.2))
    alone = render([_room(), small], (0.0, 0.0), 0.0, (0.0, 1.0))
    behind = render([_room(), big, small], (0.0, 0.0), 0.0, (0.0, 1.0))
    near = Box(2, "apple", (-0.05, 0.0, 1.35), (0.05, 0.1, 1.45))
    in_front = render([_room(), big, near], (0.0, 0.0), 0.0, (0.0, 1.0))
    assert alone.total(2) > 20
    assert behind.total(2) == 0 and 2 not in behind.boxes
    assert in_front.total(2) > 20
    # drawing order does not matter: the nearest surface wins
    assert render([_room(), small, big], (0.0, 0.0), 0.0, (0.0, 1.0)).total(2) == 0


def test_open_boxes_show_what_is_inside_and_solid_ones_do_not():
    inner = Box(2, "juice", (-0.1, 0.6, 1.9), (0.1, 0.9, 2.1))
    shut = render([_room(), Box(1, "fridge", (-0.5, 0, 1.6), (0.5, 1.8, 2.4)), inner], (0.0, 0.0), 0.0, (0.0, 1.0))
    open_fridge = Box(1, "fridge", (-0.5, 0, 1.6), (0.5, 1.8, 2.4), "cutaway")
    cut = render([_room(), open_fridge, inner], (0.0, 0.0), 0.0, (0.0, 1.0))
    assert shut.total(2) == 0 and cut.total(2) > 100
    assert cut.total(1) > 1000  # the open container is still seen


def test_same_pose_same_png_bytes():
    a, b = mini_world(n_agents=1), mini_world(n_agents=1)
    for w in (a, b):
        _walk(w, Action("walk", obj=11))
    va, vb = eyes.render_agent(a, 0), eyes.render_agent(b, 0)
    assert png_bytes(va.image) == png_bytes(vb.image)
    assert png_bytes(va.annotated()) == png_bytes(vb.annotated())
    assert png_bytes(va.image) != png_bytes(eyes.render_agent(mini_world(n_agents=1), 0).image)


def test_class_colours_are_stable_and_differ():
    assert class_colour("fridge") == class_colour("fridge") != class_colour("apple")
    assert all(0 <= c <= 242 for c in class_colour("apple"))  # never the annotation's yellow


def test_heading_is_the_last_move_and_starts_towards_a_door():
    w = mini_world(n_agents=1)
    assert w.heading[0] == pytest.approx((1.0, 0.0))  # kitchen centre (2, 2) -> door 3 at (4, 2)
    _walk(w, Action("walk", obj=11))  # the table at (2, 3.2): +z
    assert w.heading[0] == pytest.approx((0.0, 1.0))
    p = eyes.pose(w, 0)  # the camera stands in front of the table, not inside it
    assert p.x == pytest.approx(2.0) and p.z == pytest.approx(3.2 - 0.4 - eyes.STANDOFF_M)
    v = w.views(0)
    assert v.pixels[11][0] > 1000  # the table fills the front view
    assert "heading" not in w.observe(0) and "pose" not in w.observe(0)


def test_a_closed_container_hides_its_contents_until_opened():
    w = mini_world(n_agents=1)
    _walk(w, Action("walk", obj=10))
    assert w.views(0).total(20) == 0 and w.views(0).total(10) > 1000
    _walk(w, Action("open", obj=10))
    assert w.views(0).total(20) > 0
    assert w.views(0).total(10) > 1000


def test_a_closed_container_hides_contents_even_when_their_box_pokes_out():
    """VirtualHome boxes overlap: what is inside a closed container is not drawn at all."""
    base = mini_scene()
    graph = base.copy_graph()
    juice = next(n for n in graph["nodes"] if n["id"] == 20)
    juice["bounding_box"] = {"center": [0.5, 1.8, 0.5], "size": [0.3, 0.4, 0.3]}  # above the fridge's top
    w = Household(Scene(graph=graph, doors=base.doors, name="poke"), 1, [1], parse_goal({"on_cupcake_13": 1}))
    _walk(w, Action("walk", obj=10))
    assert w.views(0).total(20) == 0
    _walk(w, Action("open", obj=10))
    assert w.views(0).total(20) > 0


def test_doors_are_panels_and_held_objects_are_not_drawn():
    w = mini_world(n_agents=1)
    assert w.views(0).pixels[3][0] > 500  # facing the door at the start
    _walk(w, Action("walk", obj=11), Action("walk", obj=21))
    assert w.views(0).total(21) > 0
    _walk(w, Action("grab", obj=21))
    assert w.views(0).total(21) == 0


def test_put_objects_are_drawn_on_their_target():
    w = mini_world(n_agents=1)
    _walk(w, Action("walk", obj=11), Action("walk", obj=21), Action("grab", obj=21),
          Action("walk_to_room", room="livingroom"), Action("walk", obj=13),
          Action("put_on", obj=21, target=13))
    (cx, cy, cz), size = w.box3(21)
    (tx, ty, tz), tsize = w.box3(13)
    assert cy - size[1] / 2 == pytest.approx(ty + tsize[1] / 2)  # on the top
    assert abs(cx - tx) <= tsize[0] / 2 and abs(cz - tz) <= tsize[2] / 2
    assert w.views(0).total(21) > 0


def test_what_the_rendered_rule_sees_is_annotated():
    w = Household(mini_scene(), 1, [1], parse_goal({"on_cupcake_13": 1}), seen="rendered")
    _walk(w, Action("walk", obj=11))
    v = w.views(0)
    seen = [o["id"] for o in w.observe(0)["visible"]]
    assert 11 in seen and len(seen) >= 3
    # the paper's camera is 1.8 m up: a 10 cm cupcake on the table is ~1.2 m away, ~100 px (< 400)
    assert 0 < v.total(21) < 400 and 21 not in seen
    raw = np.asarray(v.image)
    assert not (raw == YELLOW).all(axis=2).any()
    ann = np.asarray(v.annotated(seen))
    plain = np.asarray(v.annotated([]))
    for nid in seen:
        for k, b in enumerate(v.boxes[nid]):
            if b is None:
                continue
            x0, y0, x1, y1 = b
            edge = np.concatenate([ann[y1, 256 * k + x0:256 * k + x1 + 1], ann[y0:y1 + 1, 256 * k + x1]])
            assert (edge == YELLOW).all(axis=1).mean() > 0.5, (nid, k, b)
    assert np.array_equal(plain, raw)


def test_the_rendered_rule_is_what_visible_and_actions_use():
    w = Household(mini_scene(), 1, [1], parse_goal({"on_cupcake_13": 1}), seen="rendered")
    v = w.views(0)
    for nid in w.members(1):
        if nid in (1, 3) or w.hidden_by(nid) is not None:
            continue
        dist = ((w.pos[0][0] - w.center_of(nid)[0]) ** 2 + (w.pos[0][1] - w.center_of(nid)[1]) ** 2) ** 0.5
        assert w.visible(0, nid) == w.view.sees_area(v.total(nid), dist), nid
    assert not w.visible(0, 21)  # the cupcake is a few pixels from the kitchen's centre
    r = w.step({0: Action("walk", obj=21)})[0]
    assert r.status == "failed" and "not visible" in r.feedback
    with pytest.raises(ValueError, match="seen"):
        Household(mini_scene(), 1, [1], parse_goal({"on_cupcake_13": 1}), seen="pixels")


def test_one_render_per_pose_and_state(monkeypatch):
    calls = []
    real = eyes.render_agent

    def counting(*a, **k):
        calls.append(a[1])
        return real(*a, **k)

    monkeypatch.setattr(eyes, "render_agent", counting)
    w = Household(mini_scene(), 2, [1, 1], parse_goal({"on_cupcake_13": 1}), seen="rendered")
    w.observe(0), w.visible(0, 11), w.observe(0)
    assert calls == [0]
    w.observe(1)
    assert calls == [0, 1]
    w.step({0: Action("walk", obj=11)})
    w.observe(0), w.visible(0, 21)
    assert calls == [0, 1, 0]


def test_the_default_rule_renders_nothing(monkeypatch):
    monkeypatch.setattr(eyes, "render_agent", lambda *a, **k: pytest.fail("rendered under seen='formula'"))
    w = mini_world(n_agents=1)
    w.observe(0)
    _walk(w, Action("walk", obj=11))
    assert w.seen == "formula"


def test_bad_camera_input_names_the_field():
    with pytest.raises(ValueError, match="kind"):
        Box(1, "x", (0, 0, 0), (1, 1, 1), "glass")
    with pytest.raises(ValueError, match="hi"):
        Box(1, "x", (0, 0, 0), (1, -1, 1))
    with pytest.raises(ValueError, match="heading"):
        render([_room()], (0.0, 0.0), 0.0, (0.0, 0.0))
    with pytest.raises(ValueError, match="fov_deg"):
        CameraRig(fov_deg=180)


def test_a_real_scene_renders_a_room():
    from collablab.studies.mecobench import load_tasks

    task = load_tasks(shared_path("mecobench", "parallel_5.json"))[0]
    kitchen = task.scene.room_id("kitchen")
    a = Household(task.scene, 1, [kitchen], task.goal, seen="rendered")
    b = Household(task.scene, 1, [kitchen], task.goal, seen="rendered")
    va = a.views(0)
    assert va.image.size == (1024, 256) and png_bytes(va.image) == png_bytes(b.views(0).image)
    floor = (va.ids == ROOM).mean()
    assert 0.2 < floor < 0.9  # a room around the camera, not noise
    furniture = {n for n in va.pixels if task.scene.nodes[n]["category"] == "Furniture"}
    assert len(furniture) >= 5
    assert all(task.scene.room_of(n) == kitchen for n in va.pixels if not task.scene.is_door_node(n))
    doors = {d.id for d in task.scene.doors_of(kitchen)}
    assert {task.scene.canonical_door_id(n) for n in va.pixels if task.scene.is_door_node(n)} <= doors


def test_what_lies_behind_a_door_is_not_in_the_views():
    """Standing at the kitchen's door, the living room's coffee table behind it is absent (the door
    is a panel in the wall; other rooms are not drawn); in the living room it shows."""
    w = mini_world(n_agents=1, structure="sequential")  # doors are places to walk to on sequential tasks
    _walk(w, Action("walk_to_door", door=3))
    v = w.views(0)
    assert v.total(3) > 0 and v.total(13) == 0 and v.total(24) == 0
    _walk(w, Action("walk_to_room", room="livingroom"))
    assert w.views(0).total(13) > 0
