"""Credit by cause (metrics.classify, one test per case of its docstring table) from hand-made
two-agent timelines, and the episode fields it reads (own effect, located objects, emptied
container, completion step)."""

from __future__ import annotations

import pytest

from collablab.studies.partnr.episode import ROLES, ActionLog, Channels, Episode, EpisodeResult
from collablab.studies.partnr.evaluation import evaluate_proposition
from collablab.studies.partnr.metrics import agent_metrics, classify
from collablab.studies.partnr.offline import PROFILES, OfflinePlanner
from collablab.studies.partnr.tasks import generate_task, load_task

R, H = 0, 1  # robot, human


def act(agent: int, call: str | None, start: int, end: int, *, ok: bool = True, own: int = 0,
        found: tuple[str, ...] = (), taken_from: str | None = None, explored_new: bool = False,
        before: int = 0, after: int | None = None, cycle: int = 1, **kw) -> ActionLog:
    """One hand-made log: ``own`` is the change its own phases made; ``before``/``after`` the team's
    count when it was chosen and when it ended (whoever made it)."""
    return ActionLog(agent, ROLES[agent], cycle, call, start, end, ok, "", "", progress_before=before,
                     progress_after=before + own if after is None else after, progress_own=own, found=list(found),
                     taken_from=taken_from, explored_new=explored_new, **kw)


def kinds(*logs: ActionLog, completed_at: int | None = None) -> list[str]:
    return classify(list(logs), completed_at)


# -- the cases of the table ----------------------------------------------------------------------
def test_case1_wait_and_done_are_idle():
    assert kinds(act(R, "Wait[]", 0, 50), act(H, "Done[]", 0, 0)) == ["idle", "idle"]


def test_case2_failed_and_invalid_calls_are_extraneous():
    assert kinds(act(R, "Pick[cup_0]", 0, 10, ok=False), act(H, None, 0, 0, ok=False)) == ["extraneous"] * 2


def test_case3_actions_chosen_after_completion_are_extraneous_whatever_they_are():
    logs = [act(H, "Navigate[table_0]", 0, 90), act(H, "Place[cup_0, on, table_0, None, None]", 90, 100, own=1),
            act(R, "Open[cabinet_1]", 100, 110, found=("plate_3",)), act(R, "Explore[kitchen_0]", 110, 500,
                                                                         found=("pan_1",), explored_new=True),
            act(R, "Done[]", 500, 500)]
    assert kinds(*logs, completed_at=100) == ["supporting", "advancing", "extraneous", "extraneous", "idle"]
    # ... the same Open and Explore before completion are searches new to the team (case 11)
    assert kinds(*logs, completed_at=None)[2:4] == ["supporting", "supporting"]


def test_case4_a_partners_place_during_my_navigate_is_not_mine():
    """The issue's example: the team's count rises during the robot's Navigate, by the human's Place."""
    logs = [act(R, "Navigate[chair_2]", 0, 300, before=0, after=1),
            act(H, "Pick[cup_0]", 0, 10), act(H, "Navigate[table_0]", 10, 200),
            act(H, "Place[cup_0, on, table_0, None, None]", 200, 210, own=1),
            act(R, "Navigate[chair_3]", 300, 400, before=1, after=1)]
    assert kinds(*logs) == ["extraneous", "supporting", "supporting", "advancing", "extraneous"]
    result = EpisodeResult(logs, 400, 1.0, True, [2, 3], [210], "done", completed_at=210)
    m = agent_metrics(result)
    assert m["robot"]["advancing_actions"] == 0 and m["human"]["advancing_actions"] == 1
    assert m["team"]["task_offloading"] == 0.0 and m["robot"]["extra_planning"] == 1.0
    assert m["team"]["extraneous_effort"] == pytest.approx(2 / 5)


def test_case4_state_tools_and_rearrange_advance_by_their_own_effect_only():
    logs = [act(H, "Clean[book_0]", 0, 12, own=1), act(H, "Clean[book_0]", 12, 24),
            act(R, "Rearrange[cup_0, on, table_0, None, None]", 0, 400, own=1),
            act(R, "Rearrange[plate_0, on, table_0, None, None]", 400, 800, own=0, before=1, after=2)]
    assert kinds(*logs) == ["advancing", "extraneous", "advancing", "extraneous"]


def test_case5_a_pick_that_undoes_a_satisfied_proposition_and_its_place_back_advance_nothing():
    undo = [act(R, "Pick[cup_0]", 0, 10, own=-1), act(R, "Navigate[table_1]", 10, 90),
            act(R, "Place[cup_0, on, table_1, None, None]", 90, 100, own=1)]
    assert kinds(*undo) == ["extraneous", "extraneous", "extraneous"]
    # moved on to meet more than it broke (is_on_top again and is_next_to): the carry advances
    better = [act(R, "Pick[cup_0]", 0, 10, own=-1), act(R, "Place[cup_0, on, table_0, next_to, plate_0]", 10, 20, own=2)]
    assert kinds(*better) == ["supporting", "advancing"]


def test_case6_a_pick_supports_through_its_own_later_advancing_action_while_holding():
    logs = [act(H, "Pick[cup_0]", 0, 10), act(R, "Navigate[sofa_0]", 0, 50),
            act(H, "Fill[cup_0]", 10, 22, own=1), act(H, "Navigate[shelves_0]", 22, 100),
            act(H, "Place[cup_0, on, shelves_0, None, None]", 100, 110)]  # is_filled by its Fill; the place meets nothing
    assert kinds(*logs)[0] == "supporting" and kinds(*logs)[2] == "advancing" and kinds(*logs)[4] == "extraneous"


def test_case7_a_pick_that_enables_nothing_is_extraneous_even_of_a_task_object():
    logs = [act(R, "Pick[cup_0]", 0, 10), act(R, "Place[cup_0, on, chair_1, None, None]", 10, 20),
            act(H, "Pick[lamp_0]", 0, 10)]  # never put down before the episode ended
    assert kinds(*logs) == ["extraneous", "extraneous", "extraneous"]


def test_case8_an_open_supports_whoever_uses_the_container_and_only_the_last_open_counts():
    logs = [act(R, "Open[fridge_0]", 0, 11), act(R, "Close[fridge_0]", 11, 22),
            act(R, "Open[fridge_0]", 22, 33), act(H, "Pick[milk_0]", 40, 50, taken_from="fridge_0"),
            act(H, "Place[milk_0, on, table_0, None, None]", 50, 60, own=1)]
    assert kinds(*logs) == ["extraneous", "extraneous", "supporting", "supporting", "advancing"]
    into = [act(H, "Open[cabinet_0]", 0, 11), act(R, "Pick[cup_0]", 0, 10),
            act(R, "Place[cup_0, within, cabinet_0, None, None]", 20, 30, own=1)]
    assert kinds(*into)[0] == "supporting"
    # an Open whose container only an extraneous carry used supports nothing
    wasted = [act(H, "Open[cabinet_0]", 0, 11), act(H, "Pick[cup_0]", 11, 21, taken_from="cabinet_0"),
              act(H, "Place[cup_0, on, chair_0, None, None]", 21, 31)]
    assert kinds(*wasted) == ["extraneous"] * 3


def test_case9_a_navigate_supports_through_its_next_own_useful_interaction():
    logs = [act(R, "Navigate[cup_0]", 0, 90), act(R, "Pick[cup_0]", 90, 100), act(R, "Navigate[table_0]", 100, 190),
            act(R, "Place[cup_0, on, table_0, None, None]", 190, 200, own=1),
            act(H, "Navigate[cup_1]", 0, 80), act(H, "Pick[cup_1]", 80, 90, ok=False)]
    assert kinds(*logs) == ["supporting", "supporting", "supporting", "advancing", "extraneous", "extraneous"]


def test_case10_a_search_supports_when_it_located_an_object_its_agent_then_used():
    logs = [act(H, "Explore[bedroom_0]", 0, 500, found=("book_0", "lamp_2")),  # the partner searched it first
            act(H, "Navigate[book_0]", 500, 560), act(H, "Pick[book_0]", 560, 570),
            act(H, "Rearrange[book_0, on, shelves_0, None, None]", 570, 800, own=1),
            act(R, "Navigate[hall_0]", 0, 100, found=("book_0",))]  # it saw the book the human then moved
    assert kinds(*logs) == ["supporting", "supporting", "supporting", "advancing", "extraneous"]


def test_case11_a_search_new_to_the_team_that_located_something_supports():
    logs = [act(R, "Explore[bedroom_0]", 0, 500, found=("pillow_0",), explored_new=True),
            act(H, "Explore[bedroom_0]", 0, 520, found=("pillow_0",), explored_new=True),  # the same room, second
            act(R, "Explore[bathroom_0]", 500, 700, explored_new=True),  # located nothing
            act(R, "Open[cabinet_3]", 700, 711, found=("plate_1",)),
            act(H, "Open[cabinet_3]", 800, 811, found=("plate_1",), ok=False),  # already open
            act(H, "Explore[kitchen_0]", 811, 1300, found=("pan_0",), explored_new=False)]  # the robot explored it
    assert kinds(*logs) == ["supporting", "extraneous", "extraneous", "supporting", "extraneous", "extraneous"]


def test_case12_everything_else_is_extraneous():
    logs = [act(R, "Close[fridge_0]", 0, 11), act(R, "Navigate[sofa_0]", 11, 80), act(R, "Navigate[table_0]", 80, 150),
            act(R, "Open[cabinet_0]", 150, 161)]  # nothing located, nothing used
    assert kinds(*logs) == ["extraneous"] * 4


def test_classify_reads_its_logs_only_in_log_order_and_returns_one_kind_each():
    assert kinds() == []
    logs = [act(R, "Navigate[cup_0]", 0, 90), act(R, "Pick[cup_0]", 90, 100)]
    assert len(kinds(*logs)) == 2 and kinds(*logs)[0] == "extraneous"  # the Pick never led to progress


# -- what the episode logs for it -------------------------------------------------------------------
def _episode(family: str, index: int, channels: Channels = Channels(), seed: int = 0) -> tuple[Episode, EpisodeResult]:
    task = load_task(generate_task(index, family, seed))
    ep = Episode(task, [OfflinePlanner(PROFILES["default"], seed=index, agent=a) for a in (0, 1)], channels, seed=index)
    return ep, ep.run()


@pytest.mark.parametrize("family,index", [("rearrange", 0), ("spatial", 1), ("object_state", 3)])
def test_own_effects_add_up_to_the_final_count_and_completion_is_the_last_unit(family, index):
    ep, res = _episode(family, index)
    final = sum(evaluate_proposition(p, ep.world).is_satisfied for p in ep.task.evaluation.propositions)
    assert sum(log.progress_own for log in res.logs) == final  # every change is some action's own
    movers = [log for log in res.logs if log.progress_own]
    assert movers and all(log.call.split("[")[0] not in ("Navigate", "Explore", "Wait") for log in movers)
    if res.success:
        assert res.completed_at == max(res.satisfied_at) and res.completed_at <= res.steps
    else:
        assert res.completed_at is None


def test_an_episode_logs_located_objects_and_the_container_a_pick_emptied():
    """A task object hidden in a closed cabinet: a search locates it, the Pick logs the cabinet, and
    the Open that made the Pick possible supports (case 8) whoever opened it."""
    seen = 0
    for i in range(6):
        task = load_task(generate_task(i, "rearrange"))
        ep = Episode(task, [OfflinePlanner(PROFILES["default"], seed=i, agent=a) for a in (0, 1)], Channels(), seed=i)
        w = ep.world
        obj = task.evaluation.propositions[0].args["object_handles"][0]
        o = w.objects[obj]
        box = next((f for f in w.furniture.values() if f.room == o.room and f.articulated and f.container), None)
        if box is None:
            continue
        box.is_open = False
        o.place, o.pos = ("within", box.handle), w.spot_on(box.handle, exclude=obj)
        res = ep.run()
        assert all(log.taken_from is None or (log.ok and log.call.startswith(("Pick", "Rearrange"))) for log in res.logs)
        picks = [j for j, log in enumerate(res.logs) if log.taken_from == box.handle]
        if not picks:
            continue
        seen += 1
        k = classify(res.logs, res.completed_at)
        opens = [j for j, log in enumerate(res.logs[:picks[0]]) if log.ok and log.call == f"Open[{box.handle}]"]
        assert opens and obj in res.logs[opens[-1]].found  # the Open located it for the opener
        if k[picks[0]] == "supporting":
            assert k[opens[-1]] == "supporting"
    assert seen > 0
    _, full = _episode("rearrange", 0, Channels(full_obs=True))
    assert not any(log.found for log in full.logs)  # full observability: a look locates nothing new
