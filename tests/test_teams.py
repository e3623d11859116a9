"""Teams that talk: protocols, the heuristic policy's messages and the mechanisms they show."""

from __future__ import annotations

import functools
import json

import pytest

from collablab.agents.heuristic import phrasebook as M
from collablab.agents.heuristic.priors import parse_goal_text
from collablab.studies.mecobench import resolve, run_spec, tasks_of
from collablab.studies.mecobench import metrics as m
from collablab.protocols import PROTOCOLS, make_protocol


@functools.lru_cache(maxsize=None)
def task_ids(structure: str, every: int = 6) -> tuple[str, ...]:
    ids = [t for t in tasks_of("suite", 0) if t.endswith("-" + structure[0])]
    return tuple(ids[::every])


def episodes(structure: str, every: int = 6, **spec) -> list[dict]:
    return [run_spec(dict(task_id=t, **spec))["episode"] for t in task_ids(structure, every)]


# -- bad input ------------------------------------------------------------------------------
def test_protocol_and_team_size_errors_before_anything_runs():
    with pytest.raises(ValueError, match="protocol: 'telepathy' is not allowed; allowed: isolated"):
        make_protocol("telepathy", 2)
    with pytest.raises(ValueError, match="n_agents"):
        make_protocol("broadcast", 0)
    for name in ("discuss", "leader", "leader_vision"):
        with pytest.raises(ValueError, match=f"'{name}' needs at least 2 agents"):
            make_protocol(name, 1)
    assert make_protocol("broadcast", 1).name == "broadcast"
    with pytest.raises(ValueError, match="unknown key"):
        resolve({"task_id": "cl000-p", "protocl": "leader"})
    with pytest.raises(ValueError, match="profile: 'genius'"):
        resolve({"task_id": "cl000-p", "profile": "genius"})
    with pytest.raises(ValueError, match="task_id: 'nope'"):
        run_spec({"task_id": "nope"})


# -- messages ------------------------------------------------------------------------------
def test_message_templates_parse_back_into_facts():
    f = M.parse(" ".join([M.plan("cupcake", 12, "coffeetable"), M.sighting("juice", 7, "inside", "fridge", "kitchen", 40),
                          M.location("kitchen"), M.negative("wine", "bedroom", "desk"), M.DONE]))
    assert f.claims == [12] and f.sightings == [("juice", 7, "inside", "fridge", 40, "kitchen")]
    assert M.parse(M.sighting("juice", 7, "on", "sofa", "livingroom")).sightings == [
        ("juice", 7, "on", "sofa", None, "livingroom")]  # the furniture id is optional
    assert f.room == "kitchen" and f.negatives == [("wine", "desk", "bedroom")] and f.done
    g = M.parse(M.at_door_with(6, "plate", 31) + " " + M.delegate(1, "apple", 9, "kitchen"))
    assert g.offering == (6, "plate", 31) and g.door == 6 and g.delegations == {1: 9}
    assert M.parse(M.ready_to_receive(6)).ready_door == 6
    a = M.parse(M.assignment(0, "grab the apple (9) from the desk in the bedroom.") + " "
                + M.assignment(1, "go to door 6 and receive."))
    assert M.parse_instruction(a.assignments[0]) == ("fetch", (9,))
    assert M.parse_instruction(a.assignments[1]) == ("receive", (6,))
    assert M.parse_instruction("hand over the plate (31) to agent 1 at door 6.") == ("give", (31, 1, 6))
    assert M.parse("I think we should hurry.").claims == []
    h = M.parse(M.peer_correction(1, "milk", "juice") + " " + M.assign_room(2, "bedroom"))
    assert h.corrected == {1} and h.room_assignments == {2: "bedroom"}
    c = M.parse(M.holding([("cupcake", 12), ("juice", 7)]) + " " + M.location("kitchen"))
    assert c.holding == {12: "cupcake", 7: "juice"} and c.room == "kitchen" and c.claims == []
    assert M.parse(M.location("kitchen")).holding == {}


def test_goal_text_parsing_our_suite():
    task = tasks_of("suite", 0)["cl011-p"]
    g = parse_goal_text(task.goal_text("full"))
    assert {(i.cls, i.count) for i in g.items} == {(p.obj_class, p.count) for p in task.goal}
    assert g.locations and all(loc.room for loc in g.locations) and g.has_appearance
    none = parse_goal_text(task.goal_text("none"))
    assert none.items == g.items and not none.locations and not none.has_appearance


# -- the team loop ---------------------------------------------------------------------------
def test_same_spec_same_records():
    spec = dict(task_id="cl013-p", n_agents=3, protocol="discuss", profile="weak", seed=4)
    a, b = run_spec(spec), run_spec(spec)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert a["episode"]["backend"] == "heuristic" and a["episode"]["protocol"] == "discuss"


def test_every_protocol_runs_and_records_messages():
    for name in PROTOCOLS:
        out = run_spec(dict(task_id="cl020-p", n_agents=2, protocol=name, profile="strong"))
        said = [s["message"] for s in out["steps"] if s["message"]]
        if name in ("isolated", "shared_memory"):
            assert said == [], name
        else:
            assert said, name
        if name.startswith("leader"):
            leader = [s["message"] for s in out["steps"] if s["agent"] == 0 and s["message"]]
            assert all("Agent 0:" in t and "Agent 1:" in t for t in leader)  # one instruction each


def test_mixed_team_and_teams_larger_than_five():
    out = run_spec(dict(task_id="cl030-p", n_agents=2, protocol="leader", profile="strong,weak"))
    assert out["episode"]["profile"] == "strong,weak"
    big = run_spec(dict(task_id="cl030-p", n_agents=10, protocol="broadcast"))
    assert big["episode"]["n_agents"] == 10 and big["episode"]["steps_per_agent"] == 6


def test_leader_vision_renders_views():
    from collablab.studies.mecobench import make_world
    from collablab.world.render import combined_view, render_view

    w = make_world(tasks_of("suite", 0)["cl000-p"], 2, 0)
    assert render_view(w, 0).size == (256, 256)
    assert combined_view(w).size == (256, 512)


# -- mechanisms (directional, seeded) -----------------------------------------------------------
def test_communication_lowers_conflicts_in_parallel_tasks():
    iso = episodes("parallel", every=3, n_agents=4, protocol="isolated", profile="medium")
    bc = episodes("parallel", every=3, n_agents=4, protocol="broadcast", profile="medium")
    assert m.conflict_action_rate(bc) < m.conflict_action_rate(iso)


def test_carriers_say_what_they_hold_and_never_report_it_missing():
    """After a grab, a talking agent's next message names what it carries (teammates count it as
    taken care of) and never says it could not find that object where it just took it."""
    for t in task_ids("parallel", every=8):
        steps = run_spec({"task_id": t, "n_agents": 3, "protocol": "broadcast", "profile": "medium"})["steps"]
        said = {(s["step"], s["agent"]): s["message"] for s in steps}
        for s in steps:
            if s["action"] == "grab" and s["status"] == "ok":
                nxt = said.get((s["step"] + 1, s["agent"]))
                obj = json.loads(s["args"])["obj"]
                if nxt:
                    assert f"({obj})" in nxt.split("I am holding", 1)[-1].split(".")[0], (t, s["step"], nxt)
                    assert f"could not find the {s['obj_class']}" not in nxt, (t, s["step"], nxt)


def test_talking_teams_fetch_fewer_surplus_objects():
    """Claims and carried objects heard over the channel keep teammates off objects already taken
    care of; isolated agents fetch more than the goal needs."""
    def surplus(protocol: str) -> float:
        eps = [run_spec({"task_id": t, "n_agents": 4, "protocol": protocol, "profile": "medium"})
               for t in task_ids("parallel", every=3)]
        grabs = sum(1 for r in eps for s in r["steps"] if s["action"] == "grab" and s["status"] == "ok")
        return grabs / sum(r["episode"]["n_subgoals"] for r in eps)

    assert surplus("broadcast") < surplus("isolated")


def test_handover_failures_rise_without_communication():
    iso = episodes("sequential", every=3, n_agents=2, protocol="isolated", profile="medium")
    bc = episodes("sequential", every=3, n_agents=2, protocol="broadcast", profile="medium")
    assert m.handover_failure_rate(iso) > m.handover_failure_rate(bc)


@pytest.mark.xfail(strict=True, reason="measured DOL on all 96 parallel tasks, 2 agents: leader 0.895, isolated "
                   "0.902, broadcast 0.927: isolated heuristic agents start in different rooms and each "
                   "takes what is nearest, so they already share the work evenly (Table 12's no-comm "
                   "LLM teams do not: 0.63 for Qwen3-VL-32B); the heuristic does not show the leader's gain")
def test_leader_divides_labour_more_evenly_than_isolated_agents():
    iso = episodes("parallel", every=1, n_agents=2, protocol="isolated", profile="medium")
    lead = episodes("parallel", every=1, n_agents=2, protocol="leader", profile="medium")
    assert m.dol(lead) > m.dol(iso), (m.dol(lead), m.dol(iso))
