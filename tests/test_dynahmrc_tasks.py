"""DynaHMRC tasks (dynahmrc.tex §4.1 Benchmark, Eq. equ:difficulty_metric, §4.2 feasibility):
every kind x level x composition generates a task whose D lies in its bin, that the team can
really solve in the world (a scripted solve through RobotWorld.execute), and that round-trips
through JSON; malformed task files name the field."""

from __future__ import annotations

import json

import pytest

from collablab.studies.dynahmrc.difficulty import LEVELS, STEP_CAPS, difficulty, level_of
from collablab.studies.dynahmrc.layout import distance
from collablab.studies.dynahmrc.robots import COMPOSITIONS, ROBOT_TYPES
from collablab.studies.dynahmrc.tasks import (
    VARIATION_STEP_CAP,
    Task,
    collaborators_needed,
    feasible,
    fetch_points,
    fetchers,
    generate_task,
    generate_tasks,
    load_tasks,
    location_level,
    rec_afters,
    save_tasks,
    task_text,
    team_codes,
)
from collablab.studies.dynahmrc.world import COLOURS, TASK_KINDS, RobotWorld

CELLS = [(k, lv, t) for k in TASK_KINDS for lv in LEVELS for t in COMPOSITIONS]


def receptacle(world: RobotWorld, handle: str) -> str:
    if world.kind == "pack":
        return "tray_0"
    if world.kind == "sort":
        return f"{world.objects[handle].colour}_panel"
    return "cutting_board_0"


def solve(task: Task, team: str) -> RobotWorld:
    """A scripted solution: each mover fetches its targets to the table, the tabletop manipulator
    puts everything into the receptacle in order. The mobile robot is left out (it only scouts and
    could stand on a pose). A mobile manipulator whose pick point is a free cell rather than a stand
    pose is put there directly (what a chain of ``move`` actions does)."""
    codes = [c for c in team.split("-") if c != "Mo"]
    world = RobotWorld(task.layout, [(ROBOT_TYPES[c].name, c) for c in codes], task.task_layout())
    L = world.layout
    ma = ROBOT_TYPES["Ma"].name
    for t, lv in zip(task.targets, task.levels):
        o = task.object(t)
        if lv >= 1:
            code = sorted(fetchers(L, o, team_codes(team)))[0]
            name = ROBOT_TYPES[code].name
            robot = world.robots[name]
            pick_at, drop_at = fetch_points(L, code, o["place"], o["pos"], o["inside"])
            place = L.place(o["place"])
            poses = [k for k, q in enumerate(place.stand_poses) if distance(q, pick_at) < 1e-6]
            if poses:
                fb = world.execute(name, f"navigate({o['place']}, {poses[0]})")
                assert fb.ok, fb.text
            else:
                robot.pos, robot.at = pick_at, o["place"]
            if o["inside"] and place.openable and not world.open[o["place"]]:
                fb = world.execute(name, f"open({o['place']})")
                assert fb.ok, fb.text
            robot.known.setdefault(t, o["place"])
            fb = world.execute(name, f"pick({t})")
            assert fb.ok, (task.id, t, fb.text)
            table = L.place(L.working_table)
            poses = [k for k, q in enumerate(table.stand_poses) if distance(q, drop_at) < 1e-6]
            if poses:
                fb = world.execute(name, f"navigate({L.working_table}, {poses[0]})")
                assert fb.ok, fb.text
            else:
                robot.pos = drop_at
            fb = world.execute(name, f"place({t}, {L.working_table})")
            assert fb.ok, (task.id, t, fb.text)
            world.perceive()
        fb = world.execute(ma, f"pick({t})")
        assert fb.ok, (task.id, t, lv, fb.text)
        fb = world.execute(ma, f"place({t}, {receptacle(world, t)})")
        assert fb.ok, (task.id, t, fb.text)
    return world


@pytest.mark.parametrize("kind,level,team", CELLS)
def test_generated_task_is_in_its_bin_feasible_and_solvable(kind, level, team):
    for seed in (0, 5):
        task = generate_task(kind, level, team, seed)
        assert task.level == level and level_of(task.D) == level
        assert task.D == pytest.approx(difficulty(task.levels, task.y))
        assert task.J == len(task.targets) == len(task.levels) and 1 <= task.J <= 5
        assert task.max_steps == STEP_CAPS[level]
        assert feasible(task, team)
        L = task.layout
        for t, lv in zip(task.targets, task.levels):
            o = task.object(t)
            assert location_level(L, o["place"], o["pos"], o["inside"]) == lv
        world = solve(task, team)
        assert world.success(), (task.id, world.task_status())


def test_levels_and_y_follow_the_paper():
    for team in COMPOSITIONS:
        for seed in range(3):
            easy = generate_task("pack", "easy", team, seed)
            assert set(easy.levels) == {0} and easy.y == 0
            med = generate_task("pack", "medium", team, seed)
            assert max(med.levels) == 1 and med.y == 1
    hard = [generate_task("pack", "hard", "Ma-MoMa-UAV", s) for s in range(12)]
    assert all(max(t.levels) == 2 or t.levels == [1] * 5 for t in hard)
    # y = 2 exactly when the task needs both an opener (closed container) and a flyer (elevated)
    for t in hard:
        L = t.layout
        caps = [fetchers(L, t.object(h)) for h, lv in zip(t.targets, t.levels) if lv >= 1]
        assert t.y == collaborators_needed(caps)
    assert collaborators_needed([frozenset({"MoMa"}), frozenset({"UAV"})]) == 2
    assert collaborators_needed([frozenset({"MoMa", "UAV"}), frozenset({"UAV"})]) == 1
    assert collaborators_needed([]) == 0
    assert collaborators_needed([frozenset()]) is None


def test_no_aerial_target_without_a_drone_and_no_closed_container_without_an_opener():
    for team in ("Ma-MoMa", "Ma-MoMa-Mo"):
        for seed in range(6):
            t = generate_task("pack", "hard", team, seed)
            assert not any(t.layout.place(o["place"]).elevated for o in t.objects if o["handle"] in t.targets)
    for team in ("Ma-UAV", "Ma-Mo-UAV"):
        for seed in range(6):
            t = generate_task("sort", "hard", team, seed)
            for h in t.targets:
                o, p = t.object(h), t.layout.place(t.object(h)["place"])
                assert not (o["inside"] and p.openable and not p.initially_open)


def test_vocabularies_and_text():
    sort = generate_task("sort", "medium", "Ma-MoMa", 3)
    cols = [sort.object(t)["colour"] for t in sort.targets]
    assert len(set(cols)) == len(cols) and set(cols) <= set(COLOURS)
    assert all(t.startswith(c + "_") for t, c in zip(sort.targets, cols))
    assert sort.text.startswith("Place each solid onto the panel of its colour: ")
    for seed in range(10):
        s = generate_task("sandwich", "easy", "Ma-MoMa", seed)
        cls = [s.object(t)["cls"] for t in s.targets]
        assert cls[-1] == "bread_slice" and (s.J < 3 or cls[0] == "bread_slice")
        n_distract = len(s.objects) - s.J
        assert 2 <= n_distract <= 4
    assert task_text("pack", ["book_0", "bowl_0"]) == "Place book_0, bowl_0 into the tray."
    assert task_text("sandwich", ["bread_slice_0", "ham_0", "bread_slice_1"]) == (
        "Make a sandwich by stacking, from bottom to top on the cutting board: bread_slice_0, ham_0, bread_slice_1.")


def test_seeded_and_deterministic():
    a = generate_task("pack", "hard", "Ma-MoMa-Mo-UAV", 11)
    b = generate_task("pack", "hard", "Ma-MoMa-Mo-UAV", 11)
    c = generate_task("pack", "hard", "Ma-MoMa-Mo-UAV", 12)
    assert a == b and a != c and a.apartment == 11 % 8
    assert generate_task("pack", "easy", "Ma-MoMa", 1, apartment=6).apartment == 6


def test_variation_tasks_cap_30_and_feasible_before_and_after():
    for team in ("Ma-MoMa", "Ma-UAV", "Ma-MoMa-Mo", "Ma-Mo-UAV"):
        t = generate_task("pack", "medium", team, 2, variation="ANC")
        assert t.max_steps == VARIATION_STEP_CAP and t.variation == "ANC" and t.team == team
    for team in ("Ma-MoMa-UAV", "Ma-MoMa-Mo-UAV"):
        for seed in range(4):
            t = generate_task("sandwich", "hard", team, seed, variation="REC")
            assert t.team == team and feasible(t, team)
            after = {"Ma-MoMa-UAV": ("Ma-MoMa", "Ma-UAV"), "Ma-MoMa-Mo-UAV": ("Ma-MoMa-Mo", "Ma-Mo-UAV")}[team]
            assert all(feasible(t, a) for a in after)
    for team in ("Ma-MoMa-UAV", "Ma-MoMa-Mo-UAV"):  # the team after a REC really solves the task
        t = generate_task("pack", "medium", team, 1, variation="REC")
        for after in rec_afters(team):
            assert solve(t, after).success()
    with pytest.raises(ValueError, match="ANC needs one of"):
        generate_task("pack", "medium", "Ma-MoMa-UAV", 0, variation="ANC")
    with pytest.raises(ValueError, match="IRZ needs a 3- or 4-type team"):
        generate_task("pack", "medium", "Ma-MoMa", 0, variation="IRZ")
    with pytest.raises(ValueError, match="variation: 'XYZ' not allowed; allowed: none, CTO"):
        generate_task("pack", "medium", "Ma-MoMa", 0, variation="XYZ")


def test_bad_arguments_name_the_field():
    with pytest.raises(ValueError, match="kind: 'cook' not allowed; allowed: pack, sort, sandwich"):
        generate_task("cook", "easy", "Ma-MoMa", 0)
    with pytest.raises(ValueError, match="level: 'extreme' not allowed; allowed: easy, medium, hard"):
        generate_task("pack", "extreme", "Ma-MoMa", 0)
    with pytest.raises(ValueError, match="team: 'Ma-Mo' not allowed"):
        generate_task("pack", "easy", "Ma-Mo", 0)


def test_json_round_trip(tmp_path):
    tasks = generate_tasks(TASK_KINDS, LEVELS, ("Ma-MoMa", "Ma-MoMa-Mo-UAV"), 1, seed=3)
    assert len(tasks) == 3 * 3 * 2
    path = save_tasks(tasks, tmp_path / "tasks.json")
    back = load_tasks(path)
    assert back == tasks
    assert [Task.from_dict(json.loads(json.dumps(t.to_dict()))) for t in tasks] == tasks
    lay = back[0].task_layout()
    assert lay.kind == back[0].kind and lay.targets == back[0].targets and isinstance(lay.objects[0]["pos"], tuple)


def _write(tmp_path, mutate):
    d = generate_task("sort", "medium", "Ma-MoMa-UAV", 4).to_dict()
    mutate(d)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps([d]))
    return p


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d.update(kind="cook"), r"tasks\[0\]\.kind: 'cook' not allowed; allowed: pack, sort, sandwich"),
    (lambda d: d.update(level="extreme"), r"tasks\[0\]\.level: 'extreme' not allowed; allowed: easy, medium, hard"),
    (lambda d: d.update(team="Ma-Mo"), r"tasks\[0\]\.team: 'Ma-Mo' not allowed; allowed: Ma-MoMa"),
    (lambda d: d.update(targets=d["targets"] + ["ghost_0"], J=d["J"] + 1), r"tasks\[0\]\.targets: ghost_0 not in"),
    (lambda d: d["objects"][0].update(place="moon_0"), r"tasks\[0\]\.objects\[.*\]\.place: 'moon_0' is not a place"),
    (lambda d: d.update(levels=[2] * len(d["levels"])), r"tasks\[0\]\.levels: .* inconsistent"),
    (lambda d: d.update(D=0.99), r"tasks\[0\]\.D: 0.99 inconsistent"),
    (lambda d: d.pop("targets"), r"tasks\[0\]\.targets: missing field\(s\)"),
    (lambda d: d.update(variation="XYZ"), r"tasks\[0\]\.variation: 'XYZ' not allowed"),
])
def test_load_errors_name_the_field(tmp_path, mutate, message):
    with pytest.raises(ValueError, match=message):
        load_tasks(_write(tmp_path, mutate))


def test_load_rejects_a_task_infeasible_for_its_team(tmp_path):
    t = generate_task("pack", "hard", "Ma-MoMa-UAV", 0)
    L = t.layout
    top = next(p for p in L.elevated_places())
    d = t.to_dict()
    for o in d["objects"]:
        if o["handle"] == d["targets"][0]:
            o.update(place=top.handle, pos=list(top.centre), inside=False)
    d["team"] = "Ma-MoMa"
    p = tmp_path / "t.json"
    p.write_text(json.dumps([d]))
    with pytest.raises(ValueError, match=r"tasks\[0\]\.(y|D|team|levels)"):
        load_tasks(p)
