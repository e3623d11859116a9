"""OAS as the paper's (observe_share_predict.txt §3.2, §A.5.1-A.5.2): the co-located partner's
visible state and current percepts, never its call or the call's target; predictions are scored
against what the partner actually did, so copying the OAS line scores nothing."""

from __future__ import annotations

import dataclasses
import re

import pytest

from collablab.studies.partnr.calls import TOOLS, ToolCall, find_call, parse_call
from collablab.studies.partnr.episode import ELSEWHERE, Channels, Decision, Episode, Observation
from collablab.studies.partnr.oas import ACT_MOTIONS, MOTIONS, PartnerView, motion_of, partner_view
from collablab.studies.partnr.offline import OfflinePlanner, OfflineProfile
from collablab.studies.partnr.prediction import score_prediction
from collablab.studies.partnr.skills import ROLE_TOOLS
from collablab.studies.partnr.tasks import generate_task, load_task
from collablab.studies.partnr.world import FLOOR
from collablab.world.views import horizontal_distance


def task(i: int = 0, family: str = "rearrange"):
    return load_task(generate_task(i, family))


class Scripted:
    """Plays fixed calls, then Done; records every observation and prediction it gives."""

    label = "scripted"

    def __init__(self, calls, prediction=None):
        self.calls, self.prediction, self.seen = list(calls), prediction, []

    def decide(self, obs):
        self.seen.append(obs)
        call = self.calls.pop(0) if self.calls else ToolCall("Done", ())
        pred = self.prediction(obs) if self.prediction else None
        return Decision(call, "plan", pred, raw=call.text())


class Spy:
    """Wraps a planner; records (OAS line, view, the partner's running call) at each decision."""

    def __init__(self, planner):
        self.planner, self.label, self.ep, self.rows = planner, planner.label, None, []

    def decide(self, obs):
        r = self.ep.running[1 - obs.agent]
        self.rows.append((obs.partner_text, obs.partner, r.plan.call if r is not None else None))
        return self.planner.decide(obs)


def copied_calls(text: str) -> list[ToolCall]:
    """Every call written anywhere in ``text`` (what a planner copying the line could predict)."""
    out = []
    for m in re.findall(r"[A-Za-z]+\[[^\]]*\]", text):
        try:
            out.append(parse_call(m))
        except ValueError:
            pass
    return out


def test_copied_calls_finds_the_old_line_s_call():
    old = "agent_1 (the human) is in kitchen_0, holding nothing, currently doing Navigate[cabinet_1]."
    call = ToolCall("Navigate", ("cabinet_1",))
    assert copied_calls(old) == [call] and score_prediction(call, call, None)["union"]["joint_all"]


def far_furniture(ep: Episode, room: str) -> str:
    """The furniture of ``room`` farthest from where agent 1 stands (not the floor)."""
    here = ep.world.agent_pos[1]
    return max((f for f in ep.world.furniture.values() if f.room == room and f.cls != FLOOR),
               key=lambda f: horizontal_distance(here, f.centre)).handle


# -- the view --------------------------------------------------------------------------------------------------
def test_view_fields_are_visible_state_and_percepts_only():
    assert {f.name for f in dataclasses.fields(PartnerView)} == {"role", "room", "near", "holding", "motion", "in_view"}
    assert "partner_text" in {f.name for f in dataclasses.fields(Observation)}
    with pytest.raises(ValueError, match="motion: 'Navigate'; allowed: walking"):
        PartnerView("human", "kitchen_0", None, None, "Navigate")


def test_motion_is_the_kind_of_movement_never_the_call():
    assert motion_of(None, None) == "standing"
    for tool in ("Navigate", "Explore", "Rearrange"):
        assert motion_of(tool, "walk") == "walking"
    assert motion_of("Explore", "look") == motion_of("Explore", "act") == "looking around"
    assert motion_of("Navigate", "look") == motion_of("Wait", "look") == motion_of("Open", "look") == "standing"
    assert motion_of("Rearrange", "act", holding=None) == "picking up"
    assert motion_of("Rearrange", "act", holding="cup_0") == "placing"
    assert {motion_of(t, "act") for t in ACT_MOTIONS} == set(ACT_MOTIONS.values()) <= set(MOTIONS)
    assert not any(t in m for t in TOOLS for m in MOTIONS)  # no tool name is a motion
    with pytest.raises(ValueError, match="phase_kind: 'run'; allowed: walk, look, act"):
        motion_of("Navigate", "run")


def test_percepts_follow_the_view_rule_and_closed_furniture_hides():
    t = task()
    w = t.world()
    h = next(iter(t.record["name_to_receptacle"]))
    o = w.objects[h]
    w.agent_pos = [w.room_box[o.room][0], w.room_box[o.room][0]]
    close = w.approach(o.pos, o.room)
    assert (h, *o.place) in partner_view(w, "human", close, None, None, None).in_view
    far = (o.pos[0] + 40, o.pos[1])
    assert h not in {x for x, _, _ in partner_view(w, "human", far, None, None, None).in_view}
    closed = next(f for f in w.furniture.values() if f.articulated and f.container and not f.is_open)
    o.place, o.room, o.pos = ("within", closed.handle), closed.room, closed.centre
    spot = w.approach(o.pos, o.room)
    assert h not in {x for x, _, _ in partner_view(w, "human", spot, None, None, None).in_view}
    closed.is_open = True  # an Open is visible once it has happened
    assert (h, "within", closed.handle) in partner_view(w, "human", spot, None, None, None).in_view
    o.holder, o.place = 1, None  # a held object is shown as held, not as a percept
    view = partner_view(w, "human", spot, h, None, None)
    assert view.holding == h and h not in {x for x, _, _ in view.in_view} and f"holding {h}" in view.text("agent_1")


# -- hand-made two-agent timelines --------------------------------------------------------------------------------
def test_a_walking_partner_shows_walking_not_its_destination():
    t = task()
    observer = Scripted([ToolCall("Wait", ())] * 4, prediction=lambda obs: ToolCall("Wait", ()))
    ep = Episode(t, [observer, Scripted([])], Channels(oas=True, oana=True))
    room = ep.world.room_at(ep.world.agent_pos[1])
    target = far_furniture(ep, room)
    assert horizontal_distance(ep.world.agent_pos[1], ep.world.furniture[target].centre) > 3.0  # a long walk
    ep.planners[1] = Scripted([ToolCall("Navigate", (target,))])
    res = ep.run()
    walking = [o for o in observer.seen if o.partner is not None and o.partner.motion == "walking"]
    assert walking, [o.partner_text for o in observer.seen]
    for o in walking:
        assert o.partner.near != target and target not in o.partner_text and "Navigate" not in o.partner_text
        assert find_call(o.partner_text, tuple(TOOLS)) is None and copied_calls(o.partner_text) == []
        assert o.partner_text.startswith(f"agent_1 (the human) is in {room}, walking")
    # the prediction is scored against what the partner actually did, not against the line
    logs = [log for log in res.logs if log.agent == 0 and log.start in {o.step for o in walking}]
    assert logs and all(log.pred_current == f"Navigate[{target}]" for log in logs)


def test_partner_percepts_become_the_observers_objects_only_under_oas():
    t = task()
    h = next(iter(t.record["name_to_receptacle"]))
    runs = {}
    for oas in (False, True):
        observer = Scripted([ToolCall("Wait", ())] * 3)
        ep = Episode(t, [observer, Scripted([ToolCall("Wait", ())] * 3)], Channels(oas=oas))
        w = ep.world
        o = w.objects[h]
        (cx, cz), (hx, hz) = w.room_box[o.room]
        spots = [(cx + sx * hx * k, cz + sz * hz * k) for sx in (-1, 1) for sz in (-1, 1) for k in (0.9, 0.7, 0.5)]
        corner = max((p for p in spots if w.room_at(p) == o.room), key=lambda p: horizontal_distance(p, o.pos))
        w.agent_pos = [corner, w.approach(o.pos, o.room)]  # the observer far off, the partner beside the object
        assert not w.sees(0, h) and w.sees(1, h)
        ep.run()
        runs[oas] = (ep.beliefs[0].objects.get(h), observer.seen)
    assert runs[False][0] is None  # it never saw the object itself
    rec, seen = runs[True]
    assert rec is not None and rec.place == t.world().objects[h].place and not rec.held_by_me
    first = seen[0]
    assert first.partner is not None and (h, *rec.place) in first.partner.in_view
    assert f"{h} on {rec.place[1]}" in first.partner_text or f"{h} in {rec.place[1]}" in first.partner_text
    assert rec.step in {x.step for x in seen}  # stamped when it was told, at a planning cycle


# -- prediction scoring ---------------------------------------------------------------------------------------------
def test_copying_the_oas_line_scores_nothing_and_no_line_names_a_hidden_target():
    rows = []
    for i, family in ((0, "rearrange"), (1, "spatial"), (2, "temporal"), (3, "object_state")):
        spies = [Spy(OfflinePlanner(seed=i, agent=a)) for a in (0, 1)]
        ep = Episode(task(i, family), spies, Channels(oas=True, oana=True), seed=i)
        for s in spies:
            s.ep = ep
        ep.run()
        rows += [r for s in spies for r in s.rows]
    shown = [(text, view, call) for text, view, call in rows if view is not None]
    assert len(shown) >= 20 and any(text == ELSEWHERE for text, _, _ in rows)
    hidden = 0
    for text, view, call in shown:
        assert copied_calls(text) == [] and find_call(text, tuple(TOOLS)) is None
        scores = score_prediction(None, call, call)  # so a planner that copies the line predicts nothing
        assert not any(v for target in scores.values() for v in target.values())
        if call is None:
            continue
        assert call.text() not in text
        visible = {view.room, view.near, view.holding, *(h for h, _, _ in view.in_view),
                   *(f for _, _, f in view.in_view)}
        for arg in call.args:
            if arg not in visible and arg not in ("on", "within", "None", "next_to"):
                assert arg not in text.replace(",", " ").replace(".", " ").split(), (text, call)
                hidden += 1
    assert hidden >= 5  # targets the line had to keep back did occur


# -- the heuristic reads only what is visible ------------------------------------------------------------------------
def test_heuristic_infers_from_what_the_partner_holds():
    t = task()
    w = t.world()
    w.agent_pos = [w.room_box[r][0] for r in t.agent_rooms(w)]
    held, dest = "cup_0", "cabinet_1"
    assert {"object_handles": [held], "receptacle_handles": [dest]} in [p.args for p in t.evaluation.propositions]
    sure = OfflineProfile(slip=0.0, partner_model=1.0)

    def obs(view: PartnerView) -> Observation:
        return Observation(0, "robot", ROLE_TOOLS["robot"], t.instruction, 100, w.full_beliefs(0, 100), w, t,
                           w.agent_pos[0], w.room_at(w.agent_pos[0]), None, [], view.text("agent_1"), view, True)

    room = w.room_at(w.agent_pos[0])
    carrying = PartnerView("human", room, None, held, "walking")
    d = OfflinePlanner(sure).decide(obs(carrying))
    assert d.prediction == ToolCall("Navigate", (dest,))
    assert held not in d.call.args  # it leaves the partner's object alone
    at_dest = PartnerView("human", w.furniture[dest].room, dest, held, "standing")
    assert OfflinePlanner(sure).decide(obs(at_dest)).prediction == ToolCall("Place", (held, "on", dest, "None", "None"))
    looking = PartnerView("human", "bedroom_0", None, None, "looking around")
    assert OfflinePlanner(sure).decide(obs(looking)).prediction == ToolCall("Explore", ("bedroom_0",))
