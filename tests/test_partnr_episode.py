"""The partner-information world, skills and channels (observe_share_predict.txt §3.1-3.3, §4.5):
beliefs change only by what an agent sees and does, skills keep PARTNR's names, preconditions and
costs, the two agents act concurrently, and each channel changes only what it should."""

from __future__ import annotations

import dataclasses
import random

import pytest

from collablab.studies.partnr import skills as SK
from collablab.studies.partnr.calls import ROBOT_TOOLS, ToolCall
from collablab.studies.partnr.episode import ELSEWHERE, Channels, Decision, Episode, run_episode
from collablab.studies.partnr.offline import OfflinePlanner
from collablab.studies.partnr.tasks import generate_task, load_task
from collablab.studies.partnr.world import Beliefs, Record, World


def task(i: int = 0, family: str = "rearrange"):
    return load_task(generate_task(i, family))


class Scripted:
    """Plays fixed calls, then Done; records every observation it is given."""

    label = "scripted"

    def __init__(self, calls, predictions=None, thought="plan"):
        self.calls, self.predictions, self.thought, self.seen = list(calls), list(predictions or []), thought, []

    def decide(self, obs):
        self.seen.append(obs)
        call = self.calls.pop(0) if self.calls else ToolCall("Done", ())
        pred = self.predictions.pop(0) if self.predictions else None
        return Decision(call, self.thought, pred, raw=call.text())


def offline(seed=0):
    return [OfflinePlanner(seed=seed, agent=0), OfflinePlanner(seed=seed, agent=1)]


# -- the world graph -----------------------------------------------------------------------------------------------
def test_layout_is_known_and_objects_must_be_found():
    t = task()
    w = t.world()
    b = w.initial_beliefs(0)
    assert set(b.furniture_open) == set(w.furniture) and not b.objects
    assert all(h.rsplit("_", 1)[1].isdigit() for h in w.room_box)  # PARTNR-style room handles
    targets = [h for h in t.record["name_to_receptacle"]]
    assert targets and all(h in w.objects for h in targets)


def test_view_rule_needs_the_agent_near_small_objects_and_closed_furniture_hides():
    t = task()
    w = t.world()
    h = next(iter(t.record["name_to_receptacle"]))
    o = w.objects[h]
    w.agent_pos = [w.approach(o.pos, o.room), w.room_box[sorted(w.room_box)[0]][0]]
    assert w.sees(0, h)
    far = max(w.room_box, key=lambda r: (r != o.room, 0))
    w.agent_pos[0] = w.room_box[far][0] if far != o.room else (o.pos[0] + 40, o.pos[1])
    assert not w.sees(0, h)
    closed = next(f for f in w.furniture.values() if f.articulated and f.container and not f.is_open)
    o.place, o.room = ("within", closed.handle), closed.room
    o.pos = closed.centre
    w.agent_pos[0] = w.approach(o.pos, o.room)
    assert w.hidden(h) and not w.sees(0, h)
    closed.is_open = True
    assert w.sees(0, h)


def test_beliefs_change_only_by_own_view_and_actions_without_ke():
    t = task(2)
    robot = Scripted([])  # Done at once: sees only what is visible from its start
    human = OfflinePlanner(seed=0, agent=1)
    ep = Episode(t, [robot, human], Channels())
    ep.run()
    seen_by_robot = set(ep.beliefs[0].objects)
    seen_by_human = set(ep.beliefs[1].objects)
    assert seen_by_human - seen_by_robot, "the human found objects the robot never saw"
    assert all(r.step == 0 for r in ep.beliefs[0].objects.values())  # the robot observed only at step 0


def test_records_are_stamped_and_a_gone_object_becomes_unknown():
    t = task()
    w = t.world()
    h = next(iter(t.record["name_to_receptacle"]))
    o = w.objects[h]
    w.agent_pos = [w.approach(o.pos, o.room), w.approach(o.pos, o.room)]
    b = w.initial_beliefs(0)
    w.observe(0, b, 7)
    assert b.objects[h].step == 7 and b.objects[h].place == o.place
    other = next(f for f in w.furniture.values() if f.surface and f.room != o.room)
    o.place, o.room, o.pos = ("on", other.handle), other.room, other.centre
    w.observe(0, b, 9)
    assert b.objects[h].place is None and b.objects[h].step == 9


# -- skills ------------------------------------------------------------------------------------------------------
def _skills_world():
    t = task()
    w = t.world()
    h = next(iter(t.record["name_to_receptacle"]))
    o = w.objects[h]
    w.agent_pos = [w.approach(o.pos, o.room), w.approach(o.pos, o.room)]
    b = [w.initial_beliefs(0), w.initial_beliefs(1)]
    for a in (0, 1):
        w.observe(a, b[a], 0)
    return t, w, h, b, SK.Skills(w, random.Random(0))


def _run(plan):
    errors = [ph.effect() for ph in plan.phases if ph.kind == "act" and ph.effect is not None]
    return next((e for e in errors if e), None), sum(ph.steps for ph in plan.phases)


def test_robot_has_no_object_state_tools_and_unknown_entities_fail():
    _, w, h, b, sk = _skills_world()
    assert set(ROBOT_TOOLS) == {"Navigate", "Explore", "Pick", "Place", "Rearrange", "Open", "Close", "Wait", "Done"}
    for tool in ("Clean", "Fill", "Pour", "PowerOn", "PowerOff"):
        assert "not one of your tools" in sk.plan(0, "robot", ToolCall(tool, (h,)), b[0]).error
        assert sk.plan(1, "human", ToolCall(tool, (h,)), b[1]).error is None
    assert "no entity named" in sk.plan(0, "robot", ToolCall("Pick", ("unicorn_3",)), b[0]).error
    hidden = next(x for x in w.objects if x not in b[0].objects)
    assert "not in your world graph" in sk.plan(0, "robot", ToolCall("Pick", (hidden,)), b[0]).error


def test_pick_place_preconditions_and_costs():
    _, w, h, b, sk = _skills_world()
    err, steps = _run(sk.plan(0, "robot", ToolCall("Pick", (h,)), b[0]))
    assert err is None and steps == 10 and w.objects[h].holder == 0  # wait_time_for_obj_to_grasp
    err, _ = _run(sk.plan(1, "human", ToolCall("Pick", (h,)), b[1]))
    assert err == f"Pick failed: {h} is held by the other agent"
    other = next(x for x in b[0].objects if x != h and w.objects[x].holder is None and not w.hidden(x))
    err, _ = _run(sk.plan(0, "robot", ToolCall("Pick", (other,)), b[0]))
    assert "already holding" in err  # one held object at a time
    far = max(w.furniture.values(), key=lambda f: (f.surface, abs(f.centre[0] - w.agent_pos[0][0]) + abs(f.centre[1] - w.agent_pos[0][1])))
    err, _ = _run(sk.plan(0, "robot", ToolCall("Place", (h, "on", far.handle)), b[0]))
    assert "not close enough" in err
    closed = next(f for f in w.furniture.values() if f.articulated and f.container and not f.is_open)
    w.agent_pos[0] = w.stand_point(closed.handle)
    err, _ = _run(sk.plan(0, "robot", ToolCall("Place", (h, "within", closed.handle)), b[0]))
    assert "closed; open it first" in err
    err, steps = _run(sk.plan(0, "robot", ToolCall("Open", (closed.handle,)), b[0]))
    assert err is None and steps == 11 and closed.is_open  # 10 steps + a look
    err, _ = _run(sk.plan(0, "robot", ToolCall("Place", (h, "within", closed.handle)), b[0]))
    assert err is None and w.receptacle_of(h) == ("within", closed.handle) and w.objects[h].holder is None


def test_navigation_takes_steps_by_distance():
    _, w, h, b, sk = _skills_world()
    rooms = sorted(w.room_box)
    w.agent_pos[0] = w.room_box[rooms[0]][0]
    near = sk.plan(0, "robot", ToolCall("Navigate", (rooms[0],)), b[0])
    far_room = max(rooms, key=lambda r: sum(p.steps for p in sk.plan(0, "robot", ToolCall("Navigate", (r,)), b[0]).phases))
    far = sk.plan(0, "robot", ToolCall("Navigate", (far_room,)), b[0])
    walked = sum(p.steps for p in far.phases if p.kind == "walk")
    assert sum(p.steps for p in near.phases if p.kind == "walk") == 0 and walked > 50
    length = 0.0
    here = w.agent_pos[0]
    for p in far.phases:
        if p.kind == "walk":
            length += ((p.to[0] - here[0]) ** 2 + (p.to[1] - here[1]) ** 2) ** 0.5
            here = p.to
    assert walked == pytest.approx(length / SK.STEP_M, abs=len(far.phases))


def test_state_skills_need_faucets_and_affordances():
    _, w, h, b, sk = _skills_world()
    cup = w.add_object({"handle": "cup_77", "class": "cup", "furniture": next(f.handle for f in w.furniture.values() if f.surface and not f.faucet), "relation": "on"})
    w.agent_pos[1] = w.approach(cup.pos, cup.room)
    w.observe(1, b[1], 1)
    sinks = [f for f in w.furniture.values() if f.faucet]
    if not any(SK.horizontal_distance(w.agent_pos[1], f.centre) < 2.5 for f in sinks):
        err, _ = _run(sk.plan(1, "human", ToolCall("Fill", ("cup_77",)), b[1]))
        assert "near a faucet" in err
    w.agent_pos[1] = w.stand_point(sinks[0].handle)
    cup.pos = sinks[0].centre
    err, steps = _run(sk.plan(1, "human", ToolCall("Fill", ("cup_77",)), b[1]))
    assert err is None and cup.states["is_filled"] and 10 <= steps <= 15
    err, steps = _run(sk.plan(1, "human", ToolCall("PowerOn", ("cup_77",)), b[1]))
    assert "no power switch" in err and 2 <= steps <= 3


# -- the episode ---------------------------------------------------------------------------------------------------
def test_agents_act_concurrently_in_simulation_time():
    res = run_episode(task(1), offline(), Channels())
    robot = [(log.start, log.end) for log in res.logs if log.agent == 0 and log.end > log.start]
    human = [(log.start, log.end) for log in res.logs if log.agent == 1 and log.end > log.start]
    overlapping = sum(1 for a in robot for h in human if a[0] < h[1] and h[0] < a[1])
    assert overlapping >= len(robot) // 2 and res.steps < sum(e - s for s, e in robot + human)


def test_full_observability_knows_everything_and_refuses_ke():
    with pytest.raises(ValueError, match="ke is meaningless"):
        Channels(ke=True, full_obs=True)
    robot = Scripted([])
    ep = Episode(task(), [robot, Scripted([])], Channels(full_obs=True))
    ep.run()
    assert set(robot.seen[0].beliefs.objects) == set(ep.world.objects)


def test_oas_shows_visible_state_only():
    t = task(3)
    secret = "MY-SECRET-PLAN-42"
    p0 = Scripted([ToolCall("Explore", (sorted(t.world().room_box)[0],))] * 3, thought=secret,
                  predictions=[ToolCall("Pick", ("cup",))] * 3)
    p1 = Scripted([ToolCall("Wait", ())] * 6)
    Episode(t, [p0, p1], Channels(oas=True, oana=True)).run()
    texts = [o.partner_text for o in p1.seen]
    assert texts and all(x is not None for x in texts)
    assert all(secret not in x and "Pick[cup]" not in x for x in texts)
    assert any(x == ELSEWHERE for x in texts) or all(x.startswith("agent_0 (the robot) is in ") for x in texts)
    fields = {f.name for f in dataclasses.fields(type(p1.seen[0].partner))} if p1.seen[0].partner else set()
    assert fields <= {"role", "room", "near", "holding", "motion", "in_view"}  # no call: see test_partnr_oas.py
    # without OAS there is no partner line at all
    p2 = Scripted([ToolCall("Wait", ())])
    Episode(t, [Scripted([]), p2], Channels()).run()
    assert all(o.partner_text is None and o.partner is None for o in p2.seen)


def test_ke_merges_newest_records_without_sender():
    assert {f.name for f in dataclasses.fields(Record)} == {"cls", "room", "place", "held_by_me", "states", "step", "pos"}
    a, b = Beliefs(0), Beliefs(1)
    old = Record("cup", "kitchen_0", ("on", "table_0"), False, (), 3, (0.0, 0.0))
    new = Record("cup", "kitchen_0", ("on", "counter_0"), False, (), 8, (1.0, 0.0))
    a.objects["cup_0"], b.objects["cup_0"] = old, new
    b.objects["book_0"] = Record("book", "bedroom_0", None, True, (), 5, None)  # the sender holds it
    assert a.merge(b) == 2
    assert a.objects["cup_0"] == new  # newest wins, copied as is: nothing says who sent it
    assert a.objects["book_0"].place is None and not a.objects["book_0"].held_by_me
    assert b.merge(a) == 0 or b.objects["cup_0"] == new  # the older record never overwrites


def test_ke_lets_an_agent_use_what_the_partner_found():
    t = task(2)
    robot = OfflinePlanner(seed=0, agent=0)
    human = Scripted([ToolCall("Wait", ())] * 30)
    ke = Episode(t, [robot, human], Channels(ke=True))
    ke.run()
    plain = Episode(t, [OfflinePlanner(seed=0, agent=0), Scripted([ToolCall("Wait", ())] * 30)], Channels())
    plain.run()
    assert len(ke.beliefs[1].objects) > len(plain.beliefs[1].objects)


def test_oana_changes_nothing_the_partner_sees():
    t = task(1)
    room = sorted(t.world().room_box)
    calls = [ToolCall("Explore", (room[0],)), ToolCall("Explore", (room[1],)), ToolCall("Navigate", (room[2],))]
    seen = []
    for preds in ([ToolCall("Pick", ("cup",))] * 3, [ToolCall("Explore", (room[3],))] * 3):
        p1 = Scripted([ToolCall("Wait", ())] * 8)
        Episode(t, [Scripted(list(calls), predictions=list(preds)), p1], Channels(oas=True, oana=True)).run()
        seen.append([(o.step, o.partner_text, sorted(o.beliefs.objects)) for o in p1.seen])
    assert seen[0] == seen[1]


def test_predictions_are_logged_with_union_and_strict_targets():
    res = run_episode(task(1), offline(), Channels(oas=True, oana=True))
    preds = [log for log in res.logs if log.prediction is not None]
    assert preds and all(log.prediction for log in preds)
    by_agent = {a: [log for log in res.logs if log.agent == a] for a in (0, 1)}
    for log in preds[:10]:
        later = [x for x in by_agent[1 - log.agent] if (x.start, res.logs.index(x)) > (log.start, res.logs.index(log))]
        if log.pred_next is not None:
            assert log.pred_next == later[0].call


def test_bad_reply_is_a_recorded_invalid_action():
    class Mute:
        label = "mute"

        def decide(self, obs):
            return Decision(None, "", None, raw="I would rather not say.", error="no valid action")
    res = run_episode(task(), [Mute(), Mute()], Channels(), max_cycles=4)
    assert len(res.logs) == 8 and all(log.invalid and not log.ok for log in res.logs)
    assert res.end_reason == "max_cycles"


def test_a_planner_failure_that_is_not_the_models_fails_the_episode():
    """EndpointError from a planner (no reply: server down, key missing) is never an invalid
    action: it propagates out of the episode, which the run grid records as failed."""
    from collablab.llm import EndpointError, LLMResult, Usage

    class Down:
        label = "down"

        def __init__(self):
            self.n = 0

        def decide(self, obs):
            self.n += 1
            if self.n > 1:
                raise EndpointError(LLMResult(text=None, usage=Usage(), latency_s=0.0, cache="off", attempts=1,
                                              error="connection error", model="m", endpoint="e", call_id="c"))
            return OfflinePlanner(agent=obs.agent).decide(obs)

    with pytest.raises(EndpointError, match="connection error"):
        run_episode(task(), [Down(), Down()], Channels(), max_cycles=4)


def test_same_seed_same_episode():
    a = run_episode(task(5, "spatial"), offline(3), Channels(oas=True, ke=True), seed=3)
    b = run_episode(task(5, "spatial"), offline(3), Channels(oas=True, ke=True), seed=3)
    assert [x.to_dict() for x in a.logs] == [x.to_dict() for x in b.logs]


def test_world_rejects_bad_objects():
    t = task()
    with pytest.raises(ValueError, match="furniture"):
        World(t.scene, [{"handle": "cup_9", "class": "cup", "furniture": "nowhere_0", "relation": "on"}])
    with pytest.raises(ValueError, match="relation"):
        World(t.scene, [{"handle": "cup_9", "class": "cup", "furniture": next(iter(t.world().furniture)), "relation": "under"}])
    with pytest.raises(ValueError, match="object_states"):
        World(t.scene, states={"is_shiny": {}})


def test_every_room_has_a_floor_to_put_things_on():
    from collablab.studies.partnr.evaluation import Proposition, evaluate_proposition

    _, w, h, b, sk = _skills_world()
    room = w.objects[h].room
    floor = f"floor_{room}"
    assert w.furniture[floor].cls == "floor" and {f"floor_{r}" for r in w.room_box} <= set(w.furniture)
    assert not w.on_floor(h)
    assert _run(sk.plan(0, "robot", ToolCall("Pick", (h,)), b[0]))[0] is None
    other = next(r for r in w.room_box if r != room)
    err, _ = _run(sk.plan(0, "robot", ToolCall("Place", (h, "on", f"floor_{other}")), b[0]))
    assert err == f"Place failed: you are not in {other}; navigate there first"
    assert _run(sk.plan(0, "robot", ToolCall("Place", (h, "on", floor)), b[0]))[0] is None
    assert w.on_floor(h) and w.position(h) == w.agent_pos[0]  # dropped at the agent's feet
    assert evaluate_proposition(Proposition("is_on_floor", {"object_handles": [h]}), w).is_satisfied
    explore = sk.plan(0, "robot", ToolCall("Explore", (room,)), b[0])
    stops = sum(1 for p in explore.phases if p.kind == "look")
    assert stops == 1 + sum(1 for f in w.furniture.values() if f.room == room and f.cls != "floor")


def test_offline_planners_put_objects_on_the_floor():
    rec = generate_task(0, "rearrange")
    rec["evaluation_propositions"] = [{"function_name": "is_on_floor",
                                       "args": {"object_handles": [next(iter(rec["name_to_receptacle"]))]}}]
    res = run_episode(load_task(rec), offline(), Channels(oas=True, ke=True))
    assert res.success
