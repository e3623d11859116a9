"""DynaHMRC dynamic variations (dynahmrc.tex §4.3, tab:goal_exp / tab:area_exp / tab:addition_exp /
tab:removal_exp, lab:sensitivity_dyna): each changes the world at T as planned, deterministically,
and bad settings are refused with the allowed values."""

from __future__ import annotations

import pytest

from collablab.studies.dynahmrc.robots import ANC_TRANSITIONS, REC_TRANSITIONS, ROBOT_TYPES
from collablab.studies.dynahmrc.tasks import can_fetch, feasible, generate_task, location_level, team_codes
from collablab.studies.dynahmrc.variations import (
    IRZ_TEAMS,
    Variation,
    apply,
    plan_variation,
    update,
    validate_variation,
)
from collablab.studies.dynahmrc.world import RobotWorld


def world_of(task, team=None):
    team = team or task.team
    return RobotWorld(task.layout, [(ROBOT_TYPES[c].name, c) for c in team.split("-")], task.task_layout())


# -- CTO ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["pack", "sort", "sandwich"])
def test_cto_changes_targets_to_fetchable_objects_elsewhere(kind):
    for seed in range(4):
        task = generate_task(kind, "medium", "Ma-MoMa-UAV", seed, variation="CTO")
        plan = plan_variation(task, Variation("CTO", T=5), seed)
        assert plan == plan_variation(task, Variation("CTO", T=5), seed)
        world = world_of(task)
        ev = apply(world, plan)
        assert ev.kind == "CTO" and ev.step == 5
        assert world.targets == ev.new_targets == plan.targets_after != task.targets
        # §4.3 "number and types": in some changes one target more or one fewer, besides the replaced ones
        assert abs(len(world.targets) - len(task.targets)) <= 1
        assert len(ev.added_targets) + len(ev.removed_targets) <= 1
        assert len(world.targets) == len(task.targets) + len(ev.added_targets) - len(ev.removed_targets)
        assert not set(ev.removed_targets) & {new for _, new in ev.replaced}
        assert 1 <= len(ev.replaced) <= (2 if task.J >= 3 else 1)
        assert ev.text != task.text and all(t in ev.text for t in ev.new_targets)
        L = task.layout
        for old, new in [*ev.replaced, *(("", a) for a in ev.added_targets)]:
            o = world.objects[new]
            assert old not in world.targets and new in world.targets
            assert o.place != L.working_table and location_level(L, o.place, o.pos, o.inside) >= 1  # elsewhere
            assert any(can_fetch(L, c, o.place, o.pos, o.inside) for c in team_codes(task.team) if c != "Ma")
        if kind == "sort":
            cols = [world.objects[t].colour for t in world.targets]
            assert len(set(cols)) == len(cols)
        if kind == "sandwich":
            assert world.objects[world.targets[-1]].cls == "bread_slice"


def test_cto_on_a_task_without_spare_objects_adds_one_and_old_target_in_tray_counts_as_wrong():
    task = generate_task("pack", "easy", "Ma-MoMa", 1)  # no CTO distractors prepared
    plan = plan_variation(task, Variation("CTO", T=3), 0)
    world = world_of(task)
    old, new = plan.replaced[0]
    assert world.execute("Bob", f"pick({old})").ok
    assert world.execute("Bob", f"place({old}, tray_0)").ok
    apply(world, plan)
    assert new in world.objects and new in world.targets
    assert old in world.wrong_in_receptacle() and not world.success()


def test_cto_sandwich_base_changes_for_a_two_layer_menu():
    for seed in range(40):
        task = generate_task("sandwich", "medium", "Ma-MoMa", seed, variation="CTO")
        if task.J == 2:
            break
    else:
        pytest.skip("no two-layer menu in 40 seeds")
    plan = plan_variation(task, Variation("CTO", T=5), 0)
    # the base filling changes and the top slice stays on top (a new filling would go under it)
    assert plan.replaced[0][0] == task.targets[0] and plan.targets_after[-1] == task.targets[-1]


# -- IRZ ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("team", IRZ_TEAMS)
@pytest.mark.parametrize("zones", [1, 2, 3])
def test_irz_restricts_and_stays_feasible(team, zones):
    task = generate_task("pack", "hard", team, 7, variation="IRZ")
    plan = plan_variation(task, Variation("IRZ", T=5, zones=zones), 0)
    world = world_of(task)
    ev = apply(world, plan)
    assert len(ev.zones) == zones
    L = task.layout
    table_room = L.place(L.working_table).room
    blocked: dict[str, frozenset] = {}
    for name, room in ev.zones:
        assert room in world.restricted[name] and room != table_room
        assert world.robots[name].type.code != "Ma" and world.robots[name].type.mobile
        code = world.robots[name].type.code
        blocked[code] = blocked.get(code, frozenset()) | {room}
    assert feasible(task, team, blocked)


def test_irz_navigation_into_the_zone_fails_4_for_that_robot_only():
    task = generate_task("pack", "hard", "Ma-MoMa-Mo-UAV", 3, variation="IRZ")
    plan = plan_variation(task, Variation("IRZ", T=5, zones=1), 0)
    world = world_of(task)
    ev = apply(world, plan)
    (name, room), = ev.zones
    L = world.layout
    t = world.robots[name].type
    target, k = next((h, k) for h, p in L.places.items() if p.room == room and not p.elevated
                     for k, q in enumerate(p.stand_poses) if L.is_free(q, t.radius_m, t.flies))
    fb = world.execute(name, f"navigate({target}, {k})")
    assert fb.kind == "navigation_failed_4" and not fb.ok
    others = [r for r in world.active() if r.name != name and r.type.mobile]
    results = []
    for k in range(len(L.place(target).stand_poses)):
        for r in others:
            results.append(world.execute(r.name, f"navigate({target}, {k})").kind)
    assert "navigation_success" in results and "navigation_failed_4" not in results


def test_irz_duration_lifts_the_zone():
    task = generate_task("pack", "medium", "Ma-MoMa-Mo", 2, variation="IRZ")
    plan = plan_variation(task, Variation("IRZ", T=5, zones=2, duration=4), 0)
    world = world_of(task)
    assert update(world, plan, 4) is None
    ev = update(world, plan, 5)
    assert ev is not None and all(room in world.restricted[n] for n, room in ev.zones)
    assert update(world, plan, 6, ev) is None
    lift = update(world, plan, 9, ev)
    assert lift is not None and lift.lifted and not any(world.restricted.values())
    forever = plan_variation(task, Variation("IRZ", T=5, zones=1), 0)
    w2 = world_of(task)
    e2 = update(w2, forever, 5)
    assert update(w2, forever, 29, e2) is None and any(w2.restricted.values())


def test_irz_skips_a_robot_standing_in_the_planned_room():
    task = generate_task("pack", "hard", "Ma-MoMa-Mo-UAV", 3, variation="IRZ")
    plan = plan_variation(task, Variation("IRZ", T=5, zones=1), 0)
    world = world_of(task)
    code, room = plan.zones[0]
    name = next(n for n, r in world.robots.items() if r.type.code == code)
    c, h = world.layout.rooms[room]
    world.robots[name].pos = c
    ev = apply(world, plan)
    assert ev.zones and ev.zones[0] != (name, room)


# -- ANC / REC ------------------------------------------------------------------------------------
@pytest.mark.parametrize("team", list(ANC_TRANSITIONS))
def test_anc_adds_an_active_robot(team):
    task = generate_task("sort", "medium", team, 1, variation="ANC")
    plan = plan_variation(task, Variation("ANC", T=3), 0)
    world = world_of(task)
    n = len(world.active())
    ev = apply(world, plan)
    name, code = ev.added
    after = ANC_TRANSITIONS[team].split("-")
    assert code in after and code not in team.split("-")
    assert len(world.active()) == n + 1 and world.robots[name].active and world.robots[name].type.code == code
    assert sorted(r.type.code for r in world.active()) == sorted(after)


def test_anc_suffixes_a_taken_name():
    task = generate_task("pack", "medium", "Ma-MoMa", 0, variation="ANC")
    world = RobotWorld(task.layout, [("Bob", "Ma"), ("Lucy", "MoMa")], task.task_layout())
    ev = apply(world, plan_variation(task, Variation("ANC"), 0))
    assert ev.added == ("Lucy_2", "UAV")


REC_ROWS = [("Ma-MoMa-UAV", "UAV", "Ma-MoMa"), ("Ma-MoMa-UAV", "MoMa", "Ma-UAV"),
            ("Ma-MoMa-Mo-UAV", "UAV", "Ma-MoMa-Mo"), ("Ma-MoMa-Mo-UAV", "MoMa", "Ma-Mo-UAV")]


@pytest.mark.parametrize("team,remove,after", REC_ROWS)
def test_rec_removes_a_robot_and_drops_what_it_holds(team, remove, after):
    task = generate_task("pack", "hard", team, 4, variation="REC")
    plan = plan_variation(task, Variation("REC", T=13, remove=remove), 0)
    assert plan.removed_code == remove and plan.team_after == after
    world = world_of(task)
    gone = ROBOT_TYPES[plan.removed_code].name
    robot = world.robots[gone]
    L = world.layout
    table = L.working_table
    k = next(k for k, q in enumerate(L.place(table).stand_poses) if L.is_free(q, robot.type.radius_m, robot.type.flies))
    robot.pos, robot.at = L.place(table).stand_poses[k], table  # it stands at the table holding an object
    held = next(h for h, o in world.objects.items() if h not in world.targets)
    o = world.objects[held]
    o.place, o.held_by, robot.held = None, gone, held
    ev = apply(world, plan)
    assert ev.removed == gone and not world.robots[gone].active
    assert gone not in [r.name for r in world.active()]
    assert sorted(r.type.code for r in world.active()) == sorted(after.split("-"))
    assert ev.dropped == held and world.objects[held].place == table and world.objects[held].held_by is None
    assert feasible(task, after)


def test_rec_default_removal_follows_robots_rec_transitions():
    for team in REC_TRANSITIONS:
        task = generate_task("pack", "medium", team, 0, variation="REC")
        assert plan_variation(task, Variation("REC"), 0).team_after == REC_TRANSITIONS[team]


# -- validation -----------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs,message", [
    ({"kind": "XYZ"}, r"variation\.kind: 'XYZ' not allowed; allowed: none, CTO, IRZ, ANC, REC"),
    ({"kind": "CTO", "T": 4}, r"variation\.T: 4 not allowed for CTO; allowed: 3, 5, 10"),
    ({"kind": "ANC", "T": 10}, r"variation\.T: 10 not allowed for ANC; allowed: 3, 5, 13"),
    ({"kind": "REC", "T": 1}, r"variation\.T: 1 not allowed for REC; allowed: 3, 5, 13"),
    ({"kind": "IRZ", "zones": 4}, r"variation\.zones: 4 not allowed; allowed: 1\.\.3"),
    ({"kind": "IRZ", "T": 40}, r"variation\.T: 40 not allowed for IRZ; allowed: 1\.\.29"),
    ({"kind": "IRZ", "duration": 0}, r"variation\.duration: 0 not allowed"),
    ({"kind": "REC", "remove": "Ma"}, r"variation\.remove: 'Ma' not allowed for REC; allowed: MoMa, UAV"),
    ({"kind": "ANC", "remove": "UAV"}, r"variation\.remove: 'UAV' not allowed for ANC; allowed: None"),
])
def test_bad_variation_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Variation(**kwargs)


def test_variation_team_checks():
    with pytest.raises(ValueError, match="IRZ needs a 3- or 4-type team; allowed: Ma-MoMa-Mo"):
        validate_variation(Variation("IRZ"), "Ma-MoMa")
    with pytest.raises(ValueError, match="ANC needs one of Ma-MoMa, Ma-UAV"):
        validate_variation(Variation("ANC"), "Ma-MoMa-UAV")
    with pytest.raises(ValueError, match="REC needs one of Ma-MoMa-UAV"):
        validate_variation(Variation("REC"), "Ma-MoMa")
    with pytest.raises(ValueError, match="variation.remove: 'Mo' not allowed"):
        validate_variation(Variation("REC", remove="Mo"), "Ma-MoMa-Mo-UAV")
    task = generate_task("pack", "easy", "Ma-MoMa", 0)
    with pytest.raises(ValueError, match="REC needs one of"):
        plan_variation(task, Variation("REC"), 0)
    assert validate_variation(Variation("IRZ", zones=3), "Ma-Mo-UAV").zones == 3
    none = plan_variation(task, Variation(), 0)
    assert update(world_of(task), none, 5) is None
