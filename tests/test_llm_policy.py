"""The LLM policy against scripted replies (FakeOpenAIServer): every protocol path, grounding,
unusable replies as recorded invalid actions, calls without a reply raised out of the episode,
token accounting, replay, keys, concurrency."""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter, defaultdict
from typing import Any, Callable

import pytest
from conftest import FLAT_TASK_IDS, mini_world, replay_comparable

from collablab.agents.llm import grounding as G
from collablab.agents.llm.replies import parse_act, parse_assignments, parse_message
from collablab.llm import ResponseCache, endpoint_limiter
from collablab.llm.cache import CacheMiss
from collablab.llm.fake_server import FakeOpenAIServer, FakeReply
from collablab.studies.mecobench import resolve, run_spec
from collablab.world.actions import Action

SILENT = "[THINKING] nothing new.\n[MESSAGE] <NO_MESSAGE>"
WAIT = '[THINKING] idle\n[ACTION] {"action": "wait", "parameter_1": null, "parameter_2": null, "room": null}'


def act(action: str, p1: Any = None, p2: Any = None, room: str | None = None, memory: Any = None, **extra: Any) -> str:
    def obj(p):
        return {"name": p, "description": ""} if isinstance(p, str) else p
    a = {"action": action, "parameter_1": obj(p1), "parameter_2": obj(p2), "room": room, **extra}
    out = f"[THINKING] next.\n[ACTION] {json.dumps(a)}"
    if memory is not None:
        out += f"\n[THINKING] remember.\n[MEMORY] {json.dumps(memory)}"
    return out


# -- a scripted server ------------------------------------------------------------------------------
def user_text(body: dict) -> str:
    for m in reversed(body["messages"]):
        if m["role"] == "user":
            c = m["content"]
            return c if isinstance(c, str) else " ".join(p.get("text", "") for p in c if p.get("type") == "text")
    return ""


def phase_of(body: dict) -> str:
    t = user_text(body)
    for marker, phase in (("resolving object_ids", "decode"), ("produce TWO outputs", "act"),
                          ("acting as the leader", "assign"), ("report message to the leader", "report"),
                          ("FIRST discussion round", "discuss_first"), ("FOLLOW-UP", "discuss_followup"),
                          ("send ONE helpful message", "broadcast"), ("could not be used", "reask")):
        if marker in t:
            return phase
    return "unknown"


def agent_of(body: dict) -> int:
    return int(re.search(r"You are Agent (\d+)", body["messages"][0]["content"]).group(1))


class Script:
    """Replies by (phase, agent): a string, a list (the n-th call of that key gets item n, the
    last one repeats) or a function ``(body, n) -> str | FakeReply``. Logs every request."""

    def __init__(self, replies: dict[Any, Any], default: dict[str, str] | None = None) -> None:
        self.replies = replies
        self.default = {"broadcast": SILENT, "act": WAIT, "report": SILENT, **(default or {})}
        self.count: Counter = Counter()
        self.log: list[tuple[str, int, str]] = []
        self.lock = threading.Lock()

    def __call__(self, body: dict, srv: FakeOpenAIServer) -> FakeReply:
        first_user = next(m for m in body["messages"] if m["role"] == "user")
        ph, a = phase_of({"messages": [body["messages"][0], first_user]}), agent_of(body)
        if len([m for m in body["messages"] if m["role"] == "user"]) > 1:
            ph += "+reask"
        with self.lock:
            n = self.count[(ph, a)]
            self.count[(ph, a)] += 1
            self.log.append((ph, a, user_text({"messages": [first_user]})))
        r = self.replies.get((ph, a), self.replies.get(ph, self.default.get(ph, "???")))
        if isinstance(r, list):
            r = r[min(n, len(r) - 1)]
        if callable(r):
            r = r(body, n)
        return r if isinstance(r, FakeReply) else FakeReply(text=r)

    def prompts(self, phase: str, agent: int | None = None) -> list[str]:
        return [t for p, a, t in self.log if p == phase and (agent is None or a == agent)]


#: the task file every spec runs (conftest's flat, written once per module by ``flat_task_file``)
TASKS: dict[str, str] = {}


@pytest.fixture(scope="module", autouse=True)
def flat_task_file(flat_tasks):
    """The flat of tests/conftest.py: livingroom (1) with coffeetable (8), sofa (9) with a pillow
    (28), desk (10) with barsoap (26) and boardgame (29), cabinet (11); kitchen (2) with the
    dishwasher (12) holding the toothbrush (27); bedroom (3); bathroom (4) with the
    bathroomcounter (17), the goal. Doors 5 bedroom-bathroom, 6 livingroom-bedroom (the
    sequential handover), 7 kitchen-livingroom. Parallel: agents start in the living room and the
    bedroom; sequential: agent 0 (livingroom, kitchen) starts in the kitchen, agent 1 (bedroom,
    bathroom) in the bedroom."""
    TASKS["source"] = str(flat_tasks)
    yield
    TASKS.clear()


def spec(srv: FakeOpenAIServer, tmp_path, **kw: Any) -> dict[str, Any]:
    """A spec of the assisted pipeline (these tests drive its rules, ids and re-asks; the paper
    pipeline's are in tests/test_llm_pipeline_*.py)."""
    return {"task_source": TASKS["source"], "task_id": FLAT_TASK_IDS["parallel"], "policy": "llm",
            "pipeline": "assisted",
            "model": "fake-model", "base_url": srv.base_url, "provider": "vllm", "budget": 2,
            "llm_cache": str(tmp_path / "cache.sqlite"), "llm_cache_mode": "rw", "llm_max_attempts": 1, **kw}


def notes(records: dict) -> list[dict]:
    return [json.loads(s["note"]) for s in records["steps"]]


# -- grounding (B.4) against a real household ------------------------------------------------------------
@pytest.fixture
def world():
    """The mini household, agent 0 standing at the kitchen table (so it sees what lies on it)."""
    w = mini_world()
    w.step({0: Action("walk", obj=11), 1: Action("wait")})
    return w


def ground(sem: dict, obs: dict, valid=None) -> G.Grounded:
    return G.ground(sem, obs, valid_actions=valid or ("walk", "walk_to_room", "grab", "open", "close", "put_on",
                                                      "put_in", "wait"),
                    rooms=["bathroom", "bedroom", "kitchen", "livingroom"], n_agents=2)


def test_grounding_class_plural_synonym_fuzzy_and_id_then_the_world_executes_it(world):
    obs = world.observe(0)  # at the kitchen table: cupcake (21), apple (22), plate (23); fridge (10), chair (12)
    g = ground({"action": "grab", "parameter_1": {"name": "cupcake", "description": "pink frosting"}}, obs)
    assert g.ok and g.action == Action("grab", obj=21) and g.executed == "[grab] <cupcake> (21)"
    assert g.matches == {"parameter_1": "class"}
    assert ground({"action": "grab", "parameter_1": {"name": "apples"}}, obs).action.obj == 22
    assert ground({"action": "Pick Up", "parameter_1": {"name": "cake"}}, obs).action == Action("grab", obj=21)
    assert ground({"action": "open", "parameter_1": {"name": "refrigerator"}}, obs).action == Action("open", obj=10)
    fuzzy = ground({"action": "walk", "parameter_1": {"name": "kitchentabel"}}, obs)
    assert fuzzy.action == Action("walk", obj=11) and fuzzy.matches["parameter_1"] == "fuzzy"
    assert ground({"action": "grab", "parameter_1": "plate (23)"}, obs).matches["parameter_1"] == "id"
    # an id the model made up falls back to the name; the world then runs what was grounded
    g = ground({"action": "grab", "parameter_1": {"name": "cupcake", "id": 999}}, obs)
    assert g.action.obj == 21
    walk = ground({"action": "walk", "parameter_1": {"name": "cupcake"}}, obs).action
    assert world.step({0: walk, 1: Action("wait")})[0].status == "ok"
    res = world.step({0: g.action, 1: Action("wait")})[0]
    assert res.status == "ok" and "grabbed" in res.feedback
    obs = world.observe(0)
    put = ground({"action": "put_on", "parameter_1": {"name": "cup cake"}, "parameter_2": {"name": "table"}}, obs)
    assert put.action == Action("put_on", obj=21, target=11)
    bad = ground({"action": "put_on", "parameter_1": {"name": "apple"}, "parameter_2": {"name": "table"}}, obs)
    assert not bad.ok and "apple" in bad.error and bad.action.name == G.INVALID_GROUNDING


def test_grounding_description_breaks_ties_among_same_class_and_partial_names():
    obs = {"agent": 0, "room": "kitchen", "holding": [{"id": 5, "class_name": "mug"}], "visible": [
        {"id": 11, "class_name": "kitchentable", "properties": ["SURFACES"], "states": []},
        {"id": 12, "class_name": "coffeetable", "properties": ["SURFACES"], "states": []},
        {"id": 13, "class_name": "cabinet", "properties": ["CAN_OPEN", "CONTAINERS"], "states": ["OPEN"]},
        {"id": 20, "class_name": "juice", "properties": ["GRABBABLE"], "states": [], "inside": 13},
        {"id": 21, "class_name": "juice", "properties": ["GRABBABLE"], "states": [], "on": 11},
        {"id": 22, "class_name": "milk", "properties": ["GRABBABLE"], "states": [], "on": 11},
        {"id": 23, "class_name": "toothbrush", "properties": ["GRABBABLE"], "states": [], "on": 12}]}
    on_table = ground({"action": "grab", "parameter_1": {"name": "juice", "description": "bottle on the kitchen table"}}, obs)
    in_cab = ground({"action": "grab", "parameter_1": {"name": "juices", "description": "the one inside the cabinet"}}, obs)
    assert (on_table.action.obj, in_cab.action.obj) == (21, 20)
    # "table" names two classes: the description picks the coffee table
    g = ground({"action": "put_on", "parameter_1": {"name": "mug"},
                "parameter_2": {"name": "table", "description": "low coffee table by the sofa"}}, obs)
    assert g.action == Action("put_on", obj=5, target=12) and g.matches["parameter_2"] == "synonym"
    assert ground({"action": "put_on", "parameter_1": {"name": "mug"}, "parameter_2": {"name": "table",
                   "description": "the kitchen table"}}, obs).action.target == 11
    brush = ground({"action": "grab", "parameter_1": {"name": "brush"}}, obs)
    assert brush.action.obj == 23 and brush.matches["parameter_1"] == "partial"
    assert ground({"action": "grab", "parameter_1": {"name": "fresh juice"}}, obs).matches["parameter_1"] == "qualified"
    # put_in wants a container; an object that is nowhere near is not guessed
    assert ground({"action": "put_in", "parameter_1": None, "parameter_2": {"name": "cabinet"}}, obs).action.target == 13
    unknown = ground({"action": "grab", "parameter_1": {"name": "pudding", "description": "amber caramel"}}, obs)
    assert not unknown.ok and "pudding" in unknown.error
    assert not ground({"action": "teleport"}, obs).ok and ground({"action": "teleport"}, obs).action.name == G.INVALID_REPLY


def test_grounding_rooms_doors_and_handover():
    obs = {"agent": 0, "room": "kitchen", "holding": [{"id": 7, "class_name": "plate"}], "visible": []}
    seq = ("walk", "walk_to_room", "grab", "open", "put_on", "put_in", "wait", "walk_to_door", "handover", "receive")
    doors = [(6, "bathroom", "kitchen"), (9, "kitchen", "livingroom")]

    def g(sem):
        return G.ground(sem, obs, valid_actions=seq, rooms=["bathroom", "kitchen", "livingroom"], doors=doors,
                        n_agents=2)
    assert g({"action": "walk_to_room", "room": "Living Room"}).action == Action("walk_to_room", room="livingroom")
    assert g({"action": "walk_to_room", "parameter_1": {"name": "walking", "description": "walk to the bathroom"}}
             ).action.room == "bathroom"
    assert g({"action": "walk", "parameter_1": {"name": "bathroom"}}).action == Action("walk_to_room", room="bathroom")
    assert not g({"action": "walk_to_room", "room": "garage"}).ok
    assert g({"action": "walk_to_door", "door": 6}).action == Action("walk_to_door", door=6)
    assert g({"action": "walk_to_door", "parameter_1": {"name": "door", "description": "door to the living room"}}
             ).action.door == 9
    assert not g({"action": "walk_to_door", "door": 4}).ok
    assert g({"action": "handover", "parameter_1": {"name": "plate"}, "recipient": "Agent 1"}).action == \
        Action("handover", obj=7, recipient=1)
    assert not g({"action": "handover", "parameter_1": {"name": "plate"}, "recipient": "Agent 0"}).ok
    assert g({"action": "receive"}).action == Action("receive")


def test_reply_readers_tags_json_and_refuse_cut_off_replies():
    assert parse_message(SILENT)[0]["message"] is None
    assert parse_message("[THINKING] x\n[READY] <CONTINUE>\n[MESSAGE] I take the juice.\n[LOCAL_CONTEXT] fridge")[0] == \
        {"message": "I take the juice.", "ready": False, "local_context": "fridge"}
    assert parse_message("Just text, no tags.")[0]["message"] == "Just text, no tags."
    assert parse_message("[THINKING] only thinking")[1] == "no [MESSAGE] block"
    assert parse_message('{"thinking": "t", "message": "<NO_MESSAGE>"}', mode="json_object")[0]["message"] is None
    assert parse_message("not json", mode="json_object")[0] is None
    cut = '{"thinking": "go", "action": {"action": "grab", "parameter_1": {"name": "juice", "description": "beige bot'
    assert parse_act(cut)[0] is None  # an object left open is not an answer (issue 23: no repair)
    parsed, err = parse_act('[ACTION] {"action": "open", "parameter_1": {"name": "fridge"},}\n[MEMORY] {"kitchen": {}}')
    assert parsed["action"]["action"] == "open" and parsed["memory"] == {"kitchen": {}}
    assert parse_act("I will grab the juice.")[0] is None
    items, err = parse_assignments('[THINKING] t\n[MESSAGES] [{"receiver": "Agent 1", "type": "assignment", '
                                   '"content": "open the fridge"}]')
    assert err is None and items[0]["receiver"] == "Agent 1"
    assert parse_assignments("[MESSAGES] none today")[0] is None


# -- protocol paths --------------------------------------------------------------------------------------------
def test_broadcast_message_and_silence_reach_the_teammates_act_prompt(serve, tmp_path):
    script = Script({("broadcast", 0): "[THINKING] share.\n[MESSAGE] I will grab the barsoap (26) on the desk.",
                     ("broadcast", 1): SILENT})
    srv = serve(script)
    rec = run_spec(spec(srv, tmp_path))
    s0, s1 = rec["steps"][:2]
    assert s0["message"] == "I will grab the barsoap (26) on the desk." and s1["message"] is None
    act1 = script.prompts("act", 1)[0]
    assert "Agent 0 (broadcast): I will grab the barsoap (26) on the desk." in act1.split("**Current round dialogue:**")[1]
    bc = script.prompts("broadcast", 0)[0]
    assert "## Communication" in bc and "$" not in bc
    # what agent 0 sees from the living room's centre: the furniture and the pillow on the sofa,
    # not the small barsoap and boardgame on the desk 2.4 m away (it has to walk to the desk)
    seen = bc.split("**Current observation")[1].split("**Holding objects:**")[0]
    assert "- desk (10): surface\n" in seen and "- pillow (28): on sofa (9)\n" in seen
    assert "barsoap" not in seen and "boardgame" not in seen
    assert "You are in the livingroom. Doors here: door 6 to the bedroom, door 7 to the kitchen." in seen
    assert rec["episode"]["backend"] == "vllm:fake-model" and rec["episode"]["model"] == "fake-model"
    ids = [c["id"] for n in notes(rec) for c in n["calls"]]
    assert len(ids) == len(set(ids)) == 4 and all(re.fullmatch(r"[0-9a-f]{12}/s0/a[01]/t0/(broadcast|act)/r0", i)
                                                  for i in ids)


def test_discuss_continue_then_ready_with_a_private_local_context(serve, tmp_path):
    script = Script({
        ("discuss_first", 0): "[THINKING] t\n[READY] <CONTINUE>\n[MESSAGE] Who takes the toothbrush?\n"
                              "[LOCAL_CONTEXT] barsoap is on the desk (10) next to a boardgame",
        ("discuss_first", 1): "[THINKING] t\n[READY] <READY>\n[MESSAGE] <NO_MESSAGE>\n[LOCAL_CONTEXT] bathroom",
        ("discuss_followup", 0): "[THINKING] t\n[READY] <READY>\n[MESSAGE] <NO_MESSAGE>",
        ("discuss_followup", 1): "[THINKING] t\n[READY] <READY>\n[MESSAGE] I take the toothbrush.",
    })
    srv = serve(script)
    rec = run_spec(spec(srv, tmp_path, protocol="discuss"))
    assert script.count[("discuss_first", 0)] == script.count[("discuss_followup", 1)] == 1  # 2 rounds, then stop
    assert rec["steps"][0]["message"] == "Who takes the toothbrush?"
    assert rec["steps"][1]["message"] == "I take the toothbrush."
    follow0 = script.prompts("discuss_followup", 0)[0]
    assert "barsoap is on the desk (10) next to a boardgame" in follow0  # its own note, text-only round
    assert "**Current observation" not in follow0 and "**Current observation" in script.prompts("discuss_first", 0)[0]
    assert "Agent 0 (discuss): Who takes the toothbrush?" in script.prompts("discuss_first", 1)[0]
    phases = [c["phase"] + "/r" + c["id"][-1] for c in notes(rec)[1]["calls"]]
    assert phases == ["discuss/r0", "discuss/r1", "act/r0"]


def test_discuss_reply_without_a_ready_answer_counts_as_continue(serve, tmp_path):
    script = Script({
        "discuss_first": "[THINKING] t\n[MESSAGE] I take the barsoap.\n[LOCAL_CONTEXT] desk",  # no [READY]
        "discuss_followup": "[THINKING] t\n[READY] <READY>\n[MESSAGE] <NO_MESSAGE>",
    })
    run_spec(spec(serve(script), tmp_path, protocol="discuss", budget=2))
    assert script.count[("discuss_followup", 0)] == script.count[("discuss_followup", 1)] == 1
    script2 = Script(dict(script.replies))
    run_spec(spec(serve(script2), tmp_path, protocol="discuss", budget=2, discuss_unreadable="ready",
                  llm_cache=str(tmp_path / "other.sqlite")))
    assert script2.count[("discuss_followup", 0)] == 0


def test_leader_reports_json_assignments_and_a_recorded_default(serve, tmp_path):
    script = Script({
        "report": "[THINKING] t\n[MESSAGE] I am in the bathroom next to the bathroomcounter.",
        "assign": '[THINKING] t\n[MESSAGES] [{"receiver": "Agent 0", "type": "assignment", "content": '
                  '"walk to the desk with the barsoap"}, {"receiver": "Agent 7", "type": "assignment", '
                  '"content": "x"}]',
        ("act", 0): act("walk", {"name": "desk", "description": "the desk with the barsoap"}),
    })
    srv = serve(script)
    rec = run_spec(spec(srv, tmp_path, protocol="leader"))
    assert "Agent 1 (report to Agent 0): I am in the bathroom" in script.prompts("assign", 0)[0]
    assert "Your assignment from the leader for this step: walk to the desk with the barsoap" in \
        script.prompts("act", 0)[0]
    act1 = script.prompts("act", 1)[0]
    assert "Your assignment from the leader for this step: No assignment was given to you" in act1
    lead = notes(rec)[0]
    assert lead["assign"] == {"defaulted": [1], "ignored": ["Agent 7"]}
    assert rec["steps"][0]["action"] == "walk" and rec["steps"][0]["status"] == "ok"
    assert json.loads(rec["steps"][0]["args"])["obj"] == 10
    assert rec["steps"][0]["message"].startswith("Agent 0: walk to the desk with the barsoap Agent 1: No assignment")
    assert "report" in [c["phase"] for c in notes(rec)[1]["calls"]]


def test_leader_act_prompts_show_the_reports_and_a_worker_only_its_own_assignment(serve, tmp_path):
    script = Script({
        "report": "[THINKING] t\n[MESSAGE] I am in the bedroom next to the bed.",
        "assign": '[THINKING] t\n[MESSAGES] [{"receiver": "Agent 0", "type": "assignment", "content": '
                  '"walk to the desk"}, {"receiver": "Agent 1", "type": "assignment", "content": "open the cabinet"}]',
    })
    run_spec(spec(serve(script), tmp_path, protocol="leader"))
    dialogue = {a: script.prompts("act", a)[0].split("**Current round dialogue:**")[1].split("**")[0] for a in (0, 1)}
    assert "Agent 1 (report to Agent 0): I am in the bedroom next to the bed." in dialogue[0]  # Fig. 22's reports
    assert "Agent 0 (assignment to Agent 1): open the cabinet" in dialogue[0]  # what the leader gave
    assert "Agent 1 (report to Agent 0): I am in the bedroom" in dialogue[1]  # the worker's own report
    assert "Agent 0 (assignment to Agent 1): open the cabinet" in dialogue[1]
    assert "walk to the desk" not in dialogue[1]  # the leader's own assignment is not the worker's


def test_leader_vision_sends_views_as_text_or_one_combined_image(serve, tmp_path):
    assign = '[MESSAGES] [{"receiver": "Agent 0", "content": "wait"}, {"receiver": "Agent 1", "content": "wait"}]'
    script = Script({"assign": assign})
    srv = serve(script)
    run_spec(spec(srv, tmp_path, protocol="leader_vision"))
    text_prompt = script.prompts("assign", 0)[0]
    assert "Every agent's current observation" in text_prompt and "Agent 1:\n- door (6): open" in text_prompt
    script2 = Script({"assign": assign})
    srv2 = serve(script2)
    run_spec(spec(srv2, tmp_path, protocol="leader_vision", multimodal=True, model="fake-vl"))
    lead = [b for b in srv2.bodies if phase_of(b) == "assign"][0]
    parts = lead["messages"][1]["content"]
    images = [p for p in parts if p["type"] == "image_url"]
    assert len(images) == 1 and images[0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert "combined image" in parts[0]["text"]
    acts = [b for b in srv2.bodies if phase_of(b) == "act"]
    assert all(any(p["type"] == "image_url" for p in b["messages"][1]["content"]) for b in acts)


def test_act_memory_comes_from_the_same_call_and_feeds_the_next_step(serve, tmp_path):
    mem = {"livingroom": {"objects": [{"name": "barsoap", "location": "desk"}]}, "global": {"notes": ["n1"]}}
    script = Script({("act", 0): [act("walk", {"name": "desk"}, memory=mem), WAIT]})
    srv = serve(script)
    rec = run_spec(spec(srv, tmp_path, budget=4))
    first, second = script.prompts("act", 0)[:2]
    assert '"notes": ["n1"]' in second.split("**Current memory:**")[1].split("**")[0]
    assert '"notes"' not in first.split("**Current memory:**")[1].split("**")[0]
    n = [json.loads(s["note"]) for s in rec["steps"] if s["agent"] == 0]
    assert "memory_error" not in n[0] and n[1]["memory_error"] == "no [MEMORY] block"
    assert [c["phase"] for c in n[0]["calls"]] == ["broadcast", "act"]  # no extra memory call
    assert "executed: [walk] <desk> (10)" in second


def test_shared_memory_writes_merge_after_the_step_and_are_read_in_the_next(serve, tmp_path):
    shared = {"global": {"claims": [{"agent": "Agent 0", "object": "barsoap", "state": "planned"}]}}
    script = Script({("act", 0): act("wait", memory=shared), ("act", 1): act("wait", memory={"global": {"x": 1}})})
    srv = serve(script)
    rec = run_spec(spec(srv, tmp_path, protocol="shared_memory", budget=4))
    a1 = script.prompts("act", 1)[0]
    assert "ONLY through a shared memory object" in a1 and "### MEMORY Output format" in a1
    assert "None (shared memory mode)." in a1
    # simultaneous (the default): agent 1 reads the memory as the step began, not agent 0's claim
    assert '"object": "barsoap"' not in a1.split("**Current memory:**")[1].split("**")[0]
    for agent in (0, 1):  # the next step both read both writes: agent 1's x and agent 0's own claim
        mem = script.prompts("act", agent)[1].split("**Current memory:**")[1].split("**")[0]
        assert '"x": 1' in mem and '"object": "barsoap"' in mem
    assert all(len(n["calls"]) == 1 for n in notes(rec))  # one call per agent and step, memory included
    script2 = Script({("act", 0): act("wait", memory=shared), ("act", 1): act("wait", memory={"global": {"x": 1}})})
    run_spec(spec(serve(script2), tmp_path, protocol="shared_memory", budget=4, memory_writes="sequential"))
    assert '"object": "barsoap"' in script2.prompts("act", 1)[0].split("**Current memory:**")[1].split("**")[0]


def test_malformed_and_empty_replies_are_recorded_invalid_and_the_episode_goes_on(serve, tmp_path):
    script = Script({("act", 0): ["I think I should grab something.", '{"action": "grab", "parameter_1": {"name": "unicorn"}}',
                                  "", act("walk", "desk")]})
    srv = serve(script)
    rec = run_spec(spec(srv, tmp_path, budget=8, llm_max_reasks=0))
    s0 = [s for s in rec["steps"] if s["agent"] == 0]
    assert [s["action"] for s in s0] == ["invalid_reply", "invalid_grounding", "invalid_reply", "walk"]
    assert [s["status"] for s in s0] == ["invalid", "invalid", "invalid", "ok"]
    n0 = [json.loads(s["note"]) for s in s0]
    assert "no [ACTION] block" in n0[0]["error"] and n0[0]["reply"].startswith("I think")
    assert "unicorn" in n0[1]["error"] and n0[1]["intended"]["parameter_1"]["name"] == "unicorn"
    assert "empty reply" in n0[2]["error"]
    assert "allowed actions" in s0[0]["feedback"]
    # the model is told why its last reply could not be executed
    assert "(Your last action could not be executed: grab: no visible object matches 'unicorn')" in \
        script.prompts("act", 0)[2]
    # the empty reply is the model's answer: cached, so a replay gives the same records
    again = run_spec(spec(srv, tmp_path, budget=8, llm_max_reasks=0, llm_cache_mode="replay"))
    assert replay_comparable(again) == replay_comparable(rec)


def test_a_call_without_a_reply_fails_the_episode_instead_of_an_invalid_action(serve, tmp_path):
    from collablab.llm import EndpointError

    script = Script({("act", 0): [act("walk", "desk"), FakeReply(status=500, error_message="boom")]})
    srv = serve(script)
    with pytest.raises(EndpointError) as ei:
        run_spec(spec(srv, tmp_path, budget=8, llm_max_reasks=0))
    assert ei.value.kind == "transport" and "HTTP 500" in str(ei.value) and "/a0/t1/act/r0" in str(ei.value)
    srv.stop()  # the server is gone: a dead endpoint raises too (no next attempt, no wait)
    with pytest.raises(EndpointError, match="connection"):
        run_spec(spec(srv, tmp_path, budget=8, seed=3))


def test_a_reask_fixes_an_unreadable_reply_with_its_own_cache_key(serve, tmp_path):
    script = Script({("act", 0): "hmm?", ("act+reask", 0): act("walk", "desk")})
    srv = serve(script)
    rec = run_spec(spec(srv, tmp_path, llm_max_reasks=1))
    n = notes(rec)[0]
    assert rec["steps"][0]["action"] == "walk" and rec["steps"][0]["status"] == "ok" and n["calls"][-1]["asks"] == 2
    rows = ResponseCache(tmp_path / "cache.sqlite", "rw").rows()
    act_rows = sorted(r["attempt"] for r in rows if r["call_id"].endswith("/a0/t0/act/r0"))
    assert act_rows == [0, 1]


def test_token_usage_from_the_server_lands_in_the_step_records(serve, tmp_path):
    def usage(p, c):
        return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
    script = Script({"broadcast": lambda b, n: FakeReply(SILENT, usage=usage(100 + agent_of(b), 3)),
                     "act": lambda b, n: FakeReply(WAIT, usage=usage(1000 + 10 * agent_of(b), 20))})
    srv = serve(script)
    rec = run_spec(spec(srv, tmp_path, budget=4))
    assert [(s["tokens_prompt"], s["tokens_completion"]) for s in rec["steps"]] == [(1100, 23), (1111, 23)] * 2
    assert rec["episode"]["tokens"] == 2 * (1123 + 1134)
    assert all(s["latency_s"] > 0 for s in rec["steps"])


def test_structured_mode_asks_for_one_json_object_with_the_schema(serve, tmp_path):
    reply = json.dumps({"thinking": "go", "action": {"action": "walk", "parameter_1": {"name": "desk"}},
                        "memory": {"global": {"notes": ["desk seen"]}}})
    script = Script({"broadcast": '{"thinking": "t", "message": "I walk to the desk."}', "act": reply})
    srv = serve(script)
    rec = run_spec(spec(srv, tmp_path, structured_mode="json_schema"))
    bodies = {phase_of(b): b for b in srv.bodies}
    rf = bodies["act"]["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["schema"]["required"] == ["action", "memory"]
    assert bodies["broadcast"]["response_format"]["json_schema"]["name"] == "message"
    text = user_text(bodies["act"])
    assert "Reply with one JSON object with these keys" in text and "[ACTION]" not in text
    assert rec["steps"][0]["action"] == "walk" and rec["steps"][0]["message"] == "I walk to the desk."
    assert "memory_error" not in notes(rec)[0]


def test_optional_llm_decoder_grounds_what_the_rules_cannot(serve, tmp_path):
    script = Script({("act", 0): act("walk", {"name": "thing", "description": "the big wooden one I write at"}),
                     "decode": '{"action": "walk", "parameter_ids": [10]}'})
    srv = serve(script)
    rec = run_spec(spec(srv, tmp_path, grounding="rules+llm"))
    s0 = rec["steps"][0]
    n0 = json.loads(s0["note"])
    assert s0["action"] == "walk" and json.loads(s0["args"])["obj"] == 10 and n0["match"] == {"parameter_1": "llm"}
    assert s0["status"] == "ok"
    assert [c["phase"] for c in n0["calls"]] == ["broadcast", "act", "decode"] and n0["resolver"] == "ok"
    decoder = script.prompts("decode", 0)[0]
    # the candidates are what agent 0 sees from the living room's centre (not the barsoap on the desk)
    assert ('"candidates": [{"class_name": "coffeetable", "id": 8}, {"class_name": "sofa", "id": 9}, '
            '{"class_name": "desk", "id": 10}, {"class_name": "cabinet", "id": 11}, '
            '{"class_name": "pillow", "id": 28}]') in decoder
    # without the flag the same reply is a recorded grounding failure and no decoder call is made
    script2 = Script({("act", 0): act("walk", {"name": "thing"})})
    rec2 = run_spec(spec(serve(script2), tmp_path, seed=3))
    assert rec2["steps"][0]["action"] == "invalid_grounding" and script2.count[("decode", 0)] == 0


# -- whole episodes ----------------------------------------------------------------------------------------
def _scripted(lines: dict[int, list[str]]) -> dict:
    return {("act", a): seq for a, seq in lines.items()}


def test_full_two_agent_broadcast_episode_succeeds_through_run_spec(serve, tmp_path):
    script = Script(_scripted({
        # the barsoap is seen from the desk, not from the room's centre: walk there, then to it
        0: [act("walk", "desk"), act("walk", "barsoap"),
            act("grab", {"name": "soap", "description": "cream soap bar on the desk"}),
            act("walk_to_room", room="bathroom"), act("walk", {"name": "counter", "description": "bathroom counter"}),
            act("put_on", "barsoap", {"name": "counter", "description": "bathroom counter"}), WAIT],
        # the toothbrush is seen once the dishwasher is open (walking to the dishwasher brought agent 1 close to it)
        1: [act("walk_to_room", room="kitchen"), act("walk", "dishwasher"), act("open", {"name": "dish washer"}),
            act("grab", {"name": "toothbrush", "description": "blue"}), act("walk_to_room", room="bathroom"),
            act("walk", "bathroomcounter"), act("put_on", "toothbrush", "bathroomcounter")]}),
        default={"broadcast": "[THINKING] t\n[MESSAGE] Working on it."})
    srv = serve(script)
    rec = run_spec(spec(srv, tmp_path, budget=16))
    ep = rec["episode"]
    assert ep["success"], [(s["agent"], s["action"], s["feedback"]) for s in rec["steps"]]
    assert ep["cr"] == 1.0 and ep["team_steps"] == 7
    assert ep["backend"] == "vllm:fake-model" and ep["policy"] == "llm" and ep["llm_cache_mode"] == "rw"
    assert all(json.loads(s["note"])["status"] == "ok" for s in rec["steps"])
    assert all(s["tokens_prompt"] > 0 and s["tokens_completion"] > 0 for s in rec["steps"])


def test_sequential_handover_episode_with_doors(serve, tmp_path):
    # agent 0 (livingroom, kitchen) fetches both objects and hands them over at door 6 to agent 1
    # (bedroom, bathroom), who carries them to the bathroom
    script = Script(_scripted({
        0: [act("walk", "dishwasher"), act("open", "dishwasher"), act("grab", "toothbrush"),
            act("walk_to_room", room="livingroom"), act("walk", "desk"), act("walk", "barsoap"), act("grab", "barsoap"),
            act("walk_to_door", door=6), act("handover", "toothbrush", recipient="Agent 1"),
            act("handover", "barsoap", recipient="Agent 1"), WAIT],
        1: [act("walk_to_room", room="bathroom"), act("walk_to_door", {"name": "door", "description": "door 6"}),
            WAIT, WAIT, WAIT, WAIT, WAIT, WAIT, act("receive"), act("receive"), act("walk_to_room", room="bathroom"),
            act("walk", "bathroomcounter"), act("put_on", "toothbrush", "bathroomcounter"),
            act("put_on", "barsoap", "bathroomcounter")]}))
    srv = serve(script)
    rec = run_spec(spec(srv, tmp_path, task_id=FLAT_TASK_IDS["sequential"], budget=28))
    assert rec["episode"]["success"], [(s["agent"], s["action"], s["feedback"]) for s in rec["steps"]]
    assert rec["episode"]["handover_attempts"] == 2 and rec["episode"]["handover_failures"] == 0
    assert rec["episode"]["team_steps"] == 14
    a0 = script.prompts("act", 0)[0]
    assert ("**Department topology:**\ndoor 5: bedroom <-> bathroom\ndoor 6: livingroom <-> bedroom\n"
            "door 7: kitchen <-> livingroom") in a0 and "handover" in a0
    assert '"recipient": "<agent name>"' in a0


def test_replay_reproduces_the_records_without_the_server(serve, tmp_path):
    script = Script({("broadcast", 0): "[MESSAGE] I go to the kitchen.",
                     ("act", 0): [act("walk_to_room", room="kitchen"), act("open", "fridge")],
                     ("act", 1): [act("walk", "sink"), "garbage"]})
    srv = serve(script)
    live = run_spec(spec(srv, tmp_path, budget=4))
    n_live = srv.n_requests
    srv.stop()
    again = run_spec(spec(srv, tmp_path, budget=4, llm_cache_mode="replay"))
    assert replay_comparable(again) == replay_comparable(live)
    assert again["episode"]["llm_cache_mode"] == "replay"
    assert {c for n in notes(again) for call in n["calls"] for c in call["cache"].split(",")} == {"hit"}
    assert {c for n in notes(live) for call in n["calls"] for c in call["cache"].split(",")} == {"miss"}
    assert n_live == len(ResponseCache(tmp_path / "cache.sqlite", "rw"))
    with pytest.raises(CacheMiss, match="/s1/a0/t0/broadcast/r0"):  # another seed was never recorded
        run_spec(spec(srv, tmp_path, budget=4, seed=1, llm_cache_mode="replay"))


def test_mixed_team_models_and_the_key_stays_out_of_records(serve, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_LLM_KEY", "sk-test-SECRET-XYZ")
    script = Script({})
    srv = serve(script)
    rec = run_spec(spec(srv, tmp_path, model="model-a,model-b", provider="vllm,llamacpp", api_key_env="FAKE_LLM_KEY"))
    assert rec["episode"]["backend"] == "mixed:llamacpp:model-b+vllm:model-a"
    by_agent = defaultdict(set)
    for b in srv.bodies:
        by_agent[agent_of(b)].add(b["model"])
    assert by_agent == {0: {"model-a"}, 1: {"model-b"}}
    assert srv.auth_headers == {"Bearer sk-test-SECRET-XYZ"}  # the key was used ...
    blob = json.dumps(rec) + (tmp_path / "cache.sqlite").read_bytes().decode("latin-1")
    assert "SECRET-XYZ" not in blob and "FAKE_LLM_KEY" not in json.dumps(rec)  # ... and never written


def test_llm_spec_errors_name_the_key():
    base = {"task_id": FLAT_TASK_IDS["parallel"], "policy": "llm"}
    cases = [({}, "model: policy 'llm' needs a model"),
             ({"model": "m", "provider": "ollama"}, "provider: 'ollama' is not allowed"),
             ({"model": "m", "api_key_env": "sk-abc123"}, "api_key_env: must be the NAME"),
             ({"model": "a,b,c"}, "model: 3 comma-separated values for 2 agents"),
             ({"model": "m", "structured_mode": "xml"}, "structured_mode: 'xml' is not allowed"),
             ({"model": "m", "llm_cache_mode": "write"}, "llm_cache_mode: 'write' is not allowed"),
             ({"model": "m", "base_url": "localhost:8000"}, "base_url: 'localhost:8000' must start with http"),
             ({"model": "m", "temperature": -1}, "temperature"),
             ({"model": "m", "grounding": "magic"}, "grounding: 'magic' is not allowed")]
    for extra, msg in cases:
        with pytest.raises(ValueError, match=re.escape(msg)):
            resolve({**base, **extra})
    assert resolve({**base, "model": "gpt-4o-mini"})["provider"] == "auto"


# -- concurrency: 16 episodes in threads against a slow fake server ----------------------------------------------
def test_sixteen_concurrent_episodes_respect_the_bound_and_lose_no_call(serve, tmp_path):
    """Run against FakeOpenAIServer with a slow handler: real generation for 16 episodes on 2
    cores would take far too long (tests/test_llm_episode_local.py runs the real model)."""
    def slow(body: dict, srv: FakeOpenAIServer) -> FakeReply:
        ph = phase_of(body)
        return FakeReply(SILENT if ph == "broadcast" else WAIT, delay_s=0.03)

    srv = serve(slow)
    bound = 3
    lim = endpoint_limiter("conc-test", bound)
    lim.reset_peak()
    results: dict[int, dict] = {}
    errors: list[BaseException] = []

    def one(seed: int) -> None:
        try:
            results[seed] = run_spec(spec(srv, tmp_path, seed=seed, budget=4, endpoint="conc-test",
                                          llm_max_concurrency=bound, llm_max_attempts=4))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(s,)) for s in range(16)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and len(results) == 16
    assert srv.max_in_flight <= bound and lim.max_in_flight <= bound
    assert srv.max_in_flight == bound  # the bound was actually reached (else this test shows nothing)
    calls = [c for r in results.values() for n in notes(r) for c in n["calls"]]
    assert len(calls) == 16 * 2 * 2 * 2 and not [c for c in calls if "error" in c]
    assert srv.n_requests == len(calls) == len(ResponseCache(tmp_path / "cache.sqlite", "rw"))
    assert time.perf_counter() - t0 >= len(calls) * 0.03 / bound * 0.9  # the calls really queued
