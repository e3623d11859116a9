"""PARTNR's LLM planner against the scripted fake OpenAI server (no real model): replies become
calls or recorded invalid actions, the prompt carries the OAS line and the OANA request only when
they are on and never the partner's thoughts, the grammar and the JSON schema name only entities of
the agent's own world graph and the role's tools, an empty reply is an invalid action, a call
without a reply (a dead server) raises EndpointError out of the planner and the episode, and the
cache replays."""

from __future__ import annotations

import dataclasses
import json
import re
import socket
from typing import Any

import pytest

from collablab.llm import (EndpointError, EndpointSpec, LLMClient, LLMResult, ResponseCache, Usage, forget_served,
                           validate)
from collablab.llm.fake_server import FakeOpenAIServer, FakeReply
from collablab.studies.partnr.calls import HUMAN_TOOLS, ROBOT_TOOLS, ToolCall
from collablab.studies.partnr.episode import ELSEWHERE, Channels, Decision, Episode, Observation
from collablab.studies.partnr.llm_planner import (CONSTRAINED, LLMPlanner, PlannerError, build_messages, episode_classes,
                                                  grammar_body, thought_chars_for, tool_grammar, tool_schema,
                                                  world_description)
from collablab.studies.partnr.offline import OfflinePlanner
from collablab.studies.partnr.tasks import generate_task, load_task

STATE_TOOLS = ("Clean", "Fill", "Pour", "PowerOn", "PowerOff")
SECRET = "ZEBRA-PLAN-77"  # a word only ever written in one planner's thoughts


class Capture:
    """A planner that records every Observation it gets and lets the heuristic decide."""

    def __init__(self, agent: int) -> None:
        self.inner = OfflinePlanner(agent=agent)
        self.label = "capture"
        self.seen: list[Observation] = []

    def decide(self, obs: Observation) -> Decision:
        self.seen.append(obs)
        return self.inner.decide(obs)


def task():
    return load_task(generate_task(0, "rearrange"))


@pytest.fixture(scope="module")
def observations() -> dict[int, Observation]:
    """The last Observation of each agent in a short heuristic episode (OAS and OANA on): by then
    each agent knows some objects, and many objects of the ground truth are still unseen."""
    caps = [Capture(0), Capture(1)]
    Episode(task(), caps, Channels(oas=True, oana=True), max_cycles=4).run()
    out = {a: caps[a].seen[-1] for a in (0, 1)}
    for a, obs in out.items():
        assert obs.beliefs.objects and set(obs.world.objects) - set(obs.beliefs.objects), a
        assert obs.predict and obs.partner_text is not None
    return out


def script(replies: list[str] | str, bodies: list[dict[str, Any]] | None = None, usage: tuple[int, int] = (40, 9)):
    """A fake-server handler answering ``replies`` in turn (the last one repeats)."""
    queue = [replies] if isinstance(replies, str) else list(replies)

    def handler(body: dict, server: FakeOpenAIServer) -> FakeReply:
        if bodies is not None:
            bodies.append(body)
        text = queue.pop(0) if len(queue) > 1 else queue[0]
        return FakeReply(text, usage={"prompt_tokens": usage[0], "completion_tokens": usage[1],
                                      "total_tokens": usage[0] + usage[1]})
    return handler


def client(url: str, tmp_path, mode: str = "rw", **spec: Any) -> LLMClient:
    ep = EndpointSpec(alias="fake", model="fake-model", base_url=url, api_key_env=None, **spec)
    return LLMClient(ep, ResponseCache(tmp_path / "cache.sqlite", mode))


def dead_url() -> str:
    with socket.socket() as s:  # a port nothing listens on once the socket is closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def user_text(body: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in body["messages"])


# -- replies -----------------------------------------------------------------------------------
def test_a_valid_reply_becomes_the_call_with_its_thought_and_tokens(observations, tmp_path):
    obs = dataclasses.replace(observations[1], predict=False)
    room = sorted(obs.world.room_box)[0]
    bodies: list[dict] = []
    reply = f"Thought: I should look for the cup in {room}.\nExplore[{room}]\nAssigned!"
    with FakeOpenAIServer(script(reply, bodies)) as srv:
        d = LLMPlanner(client(srv.base_url, tmp_path), max_tokens=64).decide(obs)
    assert d.call == ToolCall("Explore", (room,)) and d.error is None
    # the client cuts the answer at the stop word (issue 23: never inside thoughts)
    assert d.thought == f"I should look for the cup in {room}." and d.raw == reply.removesuffix("\nAssigned!")
    assert d.tokens == 49 and d.prediction is None
    body = bodies[0]
    # a model that may think gets no server-side stop: the client applies it after the thoughts
    assert body["max_tokens"] == 64 and body["temperature"] == 0 and "stop" not in body
    assert "grammar" not in body and "response_format" not in body  # provider openai: prompt only


def test_a_reply_without_a_call_is_an_invalid_decision_not_an_exception(observations, tmp_path):
    obs = observations[0]
    with FakeOpenAIServer(script(["Thought: I am not sure what to do.\nMaybe look around?",
                                  "Thought: the human could clean it.\nClean[cup_0]\nAssigned!",
                                  ""])) as srv:
        planner = LLMPlanner(client(srv.base_url, tmp_path, "off"))
        vague, wrong_tool, empty = (planner.decide(obs) for _ in range(3))
    assert vague.call is None and "no valid action" in (vague.error or "") and vague.raw.startswith("Thought:")
    assert vague.thought.startswith("I am not sure")
    assert wrong_tool.call is None and "Clean is not one of your tools" in (wrong_tool.error or "")  # the robot
    assert empty.call is None and "empty reply" in (empty.error or "")


def test_hallucinated_entities_pass_through_and_the_skills_reject_them(tmp_path):
    """Unconstrained, a model may name what the agent never saw: the planner passes it on and the
    episode records the skills' failure (the agent's world graph decides, not the planner)."""
    with FakeOpenAIServer(script("Thought: grab it.\nPick[unicorn_9]\nAssigned!")) as srv:
        planners = [LLMPlanner(client(srv.base_url, tmp_path, "off")) for _ in (0, 1)]
        d = planners[0].decide(first_observation(task()))
        assert d.call == ToolCall("Pick", ("unicorn_9",))
        res = Episode(task(), planners, Channels(), max_cycles=1).run()
    assert [log.call for log in res.logs] == ["Pick[unicorn_9]"] * 2
    assert all(not log.ok and "no entity named 'unicorn_9' in your world graph" in log.feedback for log in res.logs)


def first_observation(t) -> Observation:
    cap = [Capture(0), Capture(1)]
    Episode(t, cap, Channels(), max_cycles=1).run()
    return cap[0].seen[0]


# -- the prompt --------------------------------------------------------------------------------
def test_the_prompt_holds_partnrs_conf_text_task_world_and_tools(observations):
    """The first prompt is PARTNR's conf prompt (zero_shot_prompt.yaml): its system sentences, the
    role as PARTNR words it (agent 1 the task giver, agent 0 the task receiver), ``Task:``, the world
    description, ``Possible Actions:`` with PARTNR's tool descriptions and ``- Done: ...``, and the
    answer format with its example."""
    obs = observations[1]
    system, user = (m["content"] for m in build_messages(dataclasses.replace(obs, history=[]), answer="react"))
    assert system.startswith("You are an agent that solves multi-agent planning problems.")
    assert "Many calls to the same action in a row are a sign that something has gone wrong" in system
    assert "You are playing the role of the task giver." in system and "task receiver" not in system
    robot_system = build_messages(dataclasses.replace(observations[0], history=[]))[0]["content"]
    assert "You are playing the role of the task receiver." in robot_system
    assert user.startswith(f"Task: {obs.instruction}\n\n{world_description(obs)}\n\n")
    assert "Possible Actions:\n- Clean: Used for cleaning an object." in user
    assert "- Navigate: Used for navigating to an entity. You must provide the name of the entity" in user
    assert "\n- Done: Used to indicate that the agent has finished the task. Example (Done[])\n" in user
    assert "What is the next action to make progress towards completing the task?" in user
    assert user.endswith("Here is an example:\nThought: Since there are no objects found I should explore a room I "
                         "have not explored yet\nPrediction: Explore[<room name>]\nExplore[<room name>]\nAssigned!")
    own = user.split("Possible Actions:\n")[1].split("\n\n")[0]
    robot_own = build_messages(observations[0])[1]["content"].split("Possible Actions:\n")[1].split("\n\n")[0]
    assert all(f"- {t}: " in own for t in HUMAN_TOOLS)
    assert all(f"- {t}: " not in robot_own for t in STATE_TOOLS) and all(f"- {t}: " in robot_own for t in ROBOT_TOOLS)


def test_world_description_is_partnrs_summary_of_the_agents_own_graph(observations):
    """``Furniture:`` per room, the faucets, ``Objects:`` as PARTNR's get_objects_descr writes them;
    no object states (objects_response_include_states: False), no explored rooms or open notes."""
    obs = observations[0]
    text = world_description(obs)
    assert text.startswith("Furniture:\n") and "\n\nThe following furnitures have a faucet: " in text
    for room in obs.world.room_box:
        assert re.search(rf"^{room}: ", text, re.M), room
    for f in obs.world.furniture:
        assert re.search(rf"\b{f}\b", text), f
    objects = text.split("\nObjects:\n", 1)[1].splitlines()
    assert len(objects) == len(obs.beliefs.objects)
    for line in objects:
        h, where = line.split(": ", 1)
        r = obs.beliefs.objects[h]
        if r.held_by_me:
            assert where == "held by the agent"
        elif r.place is not None:
            assert where == f"{r.place[1]} in {r.room}"
    hidden = set(obs.world.objects) - set(obs.beliefs.objects)
    assert not any(re.search(rf"\b{h}\b", text) for h in hidden)
    assert not re.search(r"clean|dirty|filled|empty|powered|explored|You are in|open", text, re.I)


def test_the_oas_line_appears_only_when_oas_is_on(observations):
    obs = dataclasses.replace(observations[0], history=[])
    on = build_messages(obs)[1]["content"]
    assert f"\n\nOther agent: {obs.partner_text}\n\nPossible Actions:" in on
    off = build_messages(dataclasses.replace(obs, partner_text=None, partner=None))[1]["content"]
    assert "Other agent:" not in off and ELSEWHERE not in off


def test_the_prompt_never_contains_the_partners_thoughts(tmp_path):
    """An episode where the human's thoughts carry a marker word: no request of the robot holds it,
    with OAS on (the robot sees the human's visible state, its current action) and OANA on."""
    bodies: list[dict] = []

    def handler(body: dict, server: FakeOpenAIServer) -> FakeReply:
        bodies.append(body)
        human = "the task giver" in body["messages"][0]["content"]
        thought = f"{SECRET}: I take the kitchen" if human else "I look around"
        return FakeReply(f"Thought: {thought}\nPrediction: Wait[]\nExplore[kitchen_0]\nAssigned!")

    with FakeOpenAIServer(handler) as srv:
        planners = [LLMPlanner(client(srv.base_url, tmp_path, "off")) for _ in (0, 1)]
        res = Episode(task(), planners, Channels(oas=True, oana=True), max_cycles=3).run()
    robot = [b for b in bodies if "the task receiver" in b["messages"][0]["content"]]
    human = [b for b in bodies if "the task giver" in b["messages"][0]["content"]]
    assert robot and human and any(SECRET in log.thought for log in res.logs if log.agent == 1)
    assert all(SECRET not in user_text(b) for b in robot)
    assert any("Other agent: agent_1 (the human)" in user_text(b) for b in robot)  # co-located at start


def test_oana_asks_for_a_class_level_prediction_and_it_is_parsed(observations, tmp_path):
    obs = observations[0]  # the robot predicts the human
    classes = episode_classes(obs)
    task_classes = {o["handle"].rsplit("_", 1)[0] for o in obs.task.objects}
    assert task_classes <= set(classes) and all(not re.search(r"_\d+$", c) for c in classes)
    system, user = (m["content"] for m in build_messages(obs)[:2])
    assert "You are collaborating with another agent" in system
    assert "predict the next action of the other agent" in user and "Prediction: <next action call of the other agent>" in user
    assert "Object classes of this episode: " + ", ".join(classes) in user
    assert "- Clean: " in user.split("Possible Actions of the other agent:")[1]  # the human's tools
    plain_system, plain = (m["content"] for m in build_messages(dataclasses.replace(obs, predict=False))[:2])
    assert "Prediction" not in plain and "other agent:" not in plain and "collaborating" not in plain_system
    assert "There will be another agent trying to solve the same task" in plain_system

    reply = "Thought: the human goes for the cup.\nPrediction: Clean[cup]\nNavigate[kitchen_0]\nAssigned!"
    with FakeOpenAIServer(script(reply)) as srv:
        d = LLMPlanner(client(srv.base_url, tmp_path, "off")).decide(obs)
        bad = LLMPlanner(client(srv.base_url, tmp_path, "off")).decide(dataclasses.replace(obs, predict=False))
    assert d.prediction == ToolCall("Clean", ("cup",)) and d.call == ToolCall("Navigate", ("kitchen_0",))
    assert d.thought == "the human goes for the cup."
    assert bad.prediction is None and bad.call == d.call  # without OANA a stray prediction is dropped
    with FakeOpenAIServer(script("Thought: hm\nPrediction: Fly[away]\nWait[]\nAssigned!")) as srv:
        unparsed = LLMPlanner(client(srv.base_url, tmp_path, "off")).decide(obs)
    assert unparsed.prediction is None and unparsed.call == ToolCall("Wait", ())


# -- the constraints ---------------------------------------------------------------------------
def literals(rule_text: str) -> set[str]:
    return set(re.findall(r'"((?:[^"\\]|\\.)*)"', rule_text))


def rules(grammar: str) -> dict[str, str]:
    return dict(line.split(" ::= ", 1) for line in grammar.strip().splitlines())


def test_the_grammar_names_only_the_agents_own_entities_and_the_roles_tools(observations):
    for a, obs in observations.items():
        g = rules(tool_grammar(dataclasses.replace(obs, predict=False)))
        own = [k for k in g if not k.startswith("p-")]
        assert g["root"].startswith('"Thought: " thought "\\n" call') and g["root"].endswith('"Assigned!"')
        assert literals(g["object"]) == set(obs.beliefs.objects)
        assert literals(g["room"]) == set(obs.world.room_box) and literals(g["furniture"]) == set(obs.world.furniture)
        hidden = set(obs.world.objects) - set(obs.beliefs.objects)
        every = set().union(*(literals(g[k]) for k in own))
        assert not hidden & every
        tools = {lit[:-1] for k in own for lit in literals(g[k]) if lit.endswith("[")}
        assert tools == set(obs.tools) == set(ROBOT_TOOLS if a == 0 else HUMAN_TOOLS)
        if a == 0:
            assert not {"Clean[", "Fill[", "Pour[", "PowerOn[", "PowerOff["} & every


def test_the_oana_grammar_predicts_the_partners_tools_over_classes(observations):
    robot = rules(tool_grammar(observations[0]))
    assert '"Prediction: " p-call "\\n" call' in robot["root"]
    assert literals(robot["p-object"]) == set(episode_classes(observations[0]))
    p_tools = {lit[:-1] for k, v in robot.items() if k.startswith("p-") for lit in literals(v) if lit.endswith("[")}
    assert p_tools == set(HUMAN_TOOLS)  # the robot predicts the human, who has every tool
    own_tools = {lit[:-1] for k, v in robot.items() if not k.startswith("p-") for lit in literals(v)
                 if lit.endswith("[")}
    assert not set(STATE_TOOLS) & own_tools
    human = rules(tool_grammar(observations[1]))
    assert {lit[:-1] for k, v in human.items() if k.startswith("p-") for lit in literals(v)
            if lit.endswith("[")} == set(ROBOT_TOOLS)


def test_the_grammar_leaves_out_tools_without_a_possible_argument(observations):
    obs = observations[1]
    empty = dataclasses.replace(obs, beliefs=dataclasses.replace(obs.beliefs, objects={}), predict=False)
    g = rules(tool_grammar(empty))
    assert "object" not in g and "pick" not in g and "place" not in g
    assert {"navigate", "explore", "open", "wait", "done", "clean"} <= set(g["call"].split(" | "))
    assert "tail" not in g and "rearrange" not in g


def test_the_thought_is_bounded_so_that_the_call_fits(observations):
    assert "thought ::= [^\\n]{1,120}" in tool_grammar(observations[0], thought_chars=120)
    assert thought_chars_for(96, True) == 96 and thought_chars_for(96, False) == 168
    assert thought_chars_for(10, True) == 24 and thought_chars_for(4096, False) == 600
    with pytest.raises(ValueError, match="thought_chars"):
        tool_grammar(observations[0], thought_chars=0)


def test_the_grammar_is_accepted_by_llama_cpp_when_it_is_installed(observations):
    llama_cpp = pytest.importorskip("llama_cpp")
    for obs in observations.values():
        for predict in (True, False):
            llama_cpp.LlamaGrammar.from_string(tool_grammar(dataclasses.replace(obs, predict=predict)), verbose=False)


def test_the_json_schema_has_the_same_enums(observations):
    for a, obs in observations.items():
        schema = tool_schema(obs)
        assert schema["required"] == ["thought", "prediction", "action"]
        variants = {v["properties"]["tool"]["enum"][0]: v for v in schema["properties"]["action"]["anyOf"]}
        assert set(variants) == set(ROBOT_TOOLS if a == 0 else HUMAN_TOOLS)
        pick = variants["Pick"]["properties"]["args"]["prefixItems"][0]["enum"]
        assert set(pick) == set(obs.beliefs.objects)
        nav = set(variants["Navigate"]["properties"]["args"]["prefixItems"][0]["enum"])
        assert nav == set(obs.world.room_box) | set(obs.world.furniture) | set(obs.beliefs.objects)
        hidden = sorted(set(obs.world.objects) - set(obs.beliefs.objects))
        assert not set(hidden) & set(json.dumps(schema["properties"]["action"]).replace('"', " ").split())
        pred = {v["properties"]["tool"]["enum"][0]: v for v in schema["properties"]["prediction"]["anyOf"]}
        assert set(pred) == set(HUMAN_TOOLS if a == 0 else ROBOT_TOOLS)
        assert set(pred["Pick"]["properties"]["args"]["prefixItems"][0]["enum"]) == set(episode_classes(obs))
        known = sorted(obs.beliefs.objects)[0]
        furn = sorted(obs.world.furniture)[0]
        good = {"thought": "t", "prediction": {"tool": "Wait", "args": []},
                "action": {"tool": "Place", "args": [known, "on", furn, "None", "None"]}}
        assert validate(good, schema) is None
        assert validate({**good, "action": {"tool": "Pick", "args": [hidden[0]]}}, schema) is not None
        assert validate({**good, "action": {"tool": "Pick", "args": []}}, schema) is not None
        if a == 0:
            assert validate({**good, "action": {"tool": "Clean", "args": [known]}}, schema) is not None
    assert "prediction" not in tool_schema(dataclasses.replace(observations[0], predict=False))["properties"]


@pytest.mark.parametrize("provider,mode", [("llamacpp", "grammar"), ("vllm", "grammar"), ("openai", "none"),
                                           ("compat", "none")])
def test_auto_picks_the_constraint_by_provider_and_sends_it(observations, tmp_path, provider, mode):
    obs = observations[0]
    known = sorted(obs.beliefs.objects)[0]
    bodies: list[dict] = []
    if mode == "json_schema":
        reply = json.dumps({"thought": "the human is busy", "prediction": {"tool": "Pick", "args": ["cup"]},
                            "action": {"tool": "Pick", "args": [known]}})
    else:
        reply = f"Thought: the human is busy\nPrediction: Pick[cup]\nPick[{known}]\nAssigned!"
    with FakeOpenAIServer(script(reply, bodies)) as srv:
        planner = LLMPlanner(client(srv.base_url, tmp_path, "off"), provider=provider)
        d = planner.decide(obs)
    assert planner.mode == mode and planner.label == f"llm:{provider}:fake-model"
    assert d.call == ToolCall("Pick", (known,)) and d.prediction == ToolCall("Pick", ("cup",))
    assert d.thought == "the human is busy"
    body = bodies[0]
    grammar = tool_grammar(obs, thought_chars=thought_chars_for(4096, True))
    assert "response_format" not in body and "guided_json" not in body  # a grammar or nothing, never JSON
    if provider == "llamacpp":
        assert body["grammar"] == grammar and "structured_outputs" not in body and "guided_grammar" not in body
    elif provider == "vllm":  # vLLM's current field and the one older versions read
        assert body["structured_outputs"] == {"grammar": grammar} and body["guided_grammar"] == grammar
        assert "grammar" not in body
    else:
        assert not {"grammar", "guided_grammar", "structured_outputs"} & set(body)
    assert "Thought: <reasoning" in user_text(body) and '"action": {"tool"' not in user_text(body)


@pytest.mark.parametrize("owned_by,mode", [("vllm", "grammar"), ("llamacpp", "grammar"), ("fake", "none")])
def test_provider_auto_learns_the_servers_kind_before_the_first_request(observations, tmp_path, owned_by, mode):
    """The spec's default provider ``auto``: a vLLM-shaped endpoint (its model list says ``owned_by:
    vllm``) gets the grammar from the first request on, never a JSON schema; the replay, with the
    server gone, reads the kind from the cache and sends the same request."""
    obs = observations[1]
    bodies: list[dict] = []
    alias = f"auto-{owned_by}-{tmp_path.name}"  # a fresh alias: nothing learned for it yet

    def planner(url: str, mode_: str) -> LLMPlanner:
        ep = EndpointSpec(alias=alias, model="fake-model", base_url=url, api_key_env=None, provider="auto")
        return LLMPlanner(LLMClient(ep, ResponseCache(tmp_path / "cache.sqlite", mode_)), provider="auto")

    with FakeOpenAIServer(script("Thought: t\nPrediction: Wait[]\nWait[]\nAssigned!", bodies), owned_by=owned_by) as srv:
        live = planner(srv.base_url, "rw")
        d = live.decide(obs)
        url = srv.base_url
    assert live.mode == mode and live.provider == ("compat" if owned_by == "fake" else owned_by)
    body = bodies[0]
    assert "response_format" not in body and "guided_json" not in body
    grammar = tool_grammar(obs, thought_chars=thought_chars_for(4096, True))
    if owned_by == "vllm":
        assert body["structured_outputs"] == {"grammar": grammar} and body["guided_grammar"] == grammar
    elif owned_by == "llamacpp":
        assert body["grammar"] == grammar
    else:
        assert not {"grammar", "guided_grammar", "structured_outputs"} & set(body)
    forget_served(alias)  # as in a new process: the replay reads the kind the cache recorded
    replayed = planner(url, "replay")
    assert replayed.decide(obs) == d and replayed.mode == mode  # a different request would be a CacheMiss


def test_a_unit_on_a_vllm_shaped_server_requests_the_grammar_every_cycle(tmp_path):
    """A whole unit from the spec (provider left at auto): every request of both agents carries the
    grammar in vLLM's fields and no JSON schema, and the transcript grows cycle by cycle."""
    from collablab.studies.partnr import run_spec

    bodies: list[dict] = []
    model = f"vllm-shaped-{tmp_path.name}"
    with FakeOpenAIServer(script("Thought: t\nWait[]\nAssigned!", bodies), owned_by="vllm", models=(model,)) as srv:
        out = run_spec({"backend": "llm", "model": model, "base_url": srv.base_url, "max_cycles": 2,
                        "llm_cache": str(tmp_path / "c.sqlite"), "llm_cache_mode": "rw", "oas": True})
    assert len(bodies) == 4 and len(out["steps"]) == 4 and not any(s["invalid"] for s in out["steps"])
    for body in bodies:
        assert body["structured_outputs"]["grammar"].startswith("root ::= ")
        assert body["guided_grammar"] == body["structured_outputs"]["grammar"]
        assert "response_format" not in body and "guided_json" not in body and "stop" not in body
    assert sorted(len(b["messages"]) for b in bodies) == [2, 2, 4, 4]


def test_provider_auto_on_a_dead_server_raises_endpoint_error(observations, tmp_path):
    ep = EndpointSpec(alias=f"dead-{tmp_path.name}", model="m", base_url=dead_url(), api_key_env=None)
    with pytest.raises(EndpointError, match="the server's kind"):
        LLMPlanner(LLMClient(ep, ResponseCache(None, "off")), provider="auto").decide(observations[0])


def test_json_schema_is_still_a_choice_and_asks_for_json(observations, tmp_path):
    obs = observations[0]
    known = sorted(obs.beliefs.objects)[0]
    reply = json.dumps({"thought": "t", "prediction": {"tool": "Wait", "args": []},
                        "action": {"tool": "Pick", "args": [known]}})
    bodies: list[dict] = []
    with FakeOpenAIServer(script(reply, bodies)) as srv:
        d = LLMPlanner(client(srv.base_url, tmp_path, "off"), provider="vllm", constrained="json_schema").decide(obs)
    assert d.call == ToolCall("Pick", (known,))
    body = bodies[0]
    rf = body["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["schema"] == tool_schema(obs)
    assert '"action": {"tool"' in user_text(body) and "stop" not in body and "structured_outputs" not in body


def test_grammar_body_names_each_servers_field():
    assert grammar_body("llamacpp", "root ::= x") == {"grammar": "root ::= x"}
    assert grammar_body("vllm", "root ::= x") == {"structured_outputs": {"grammar": "root ::= x"},
                                                  "guided_grammar": "root ::= x"}
    assert grammar_body("compat", "root ::= x") == {"grammar": "root ::= x"}


def test_a_json_reply_with_an_unknown_entity_passes_through(observations, tmp_path):
    obs = observations[1]
    reply = json.dumps({"thought": "x", "prediction": {"tool": "Explore", "args": ["kitchen_0"]},
                        "action": {"tool": "Navigate", "args": ["moon_3"]}})
    with FakeOpenAIServer(script([reply, '{"thought": "x", "action": {"tool": "Navigate", "args": []}}'])) as srv:
        planner = LLMPlanner(client(srv.base_url, tmp_path, "off"), constrained="json_schema")
        d, bad = planner.decide(obs), planner.decide(obs)
    assert d.call == ToolCall("Navigate", ("moon_3",)) and d.prediction == ToolCall("Explore", ("kitchen_0",))
    assert bad.call is None and "Navigate takes 1" in (bad.error or "")


def test_the_constraint_is_part_of_the_cache_key(observations, tmp_path):
    obs = observations[1]
    reply = "Thought: t\nPrediction: Wait[]\nWait[]\nAssigned!"
    bodies: list[dict] = []
    with FakeOpenAIServer(script(reply, bodies)) as srv:
        c = client(srv.base_url, tmp_path)
        for constrained in ("none", "grammar", "none", "grammar"):
            LLMPlanner(c, constrained=constrained).decide(obs)
    assert len(bodies) == 2 and len(ResponseCache(tmp_path / "cache.sqlite", "rw")) == 2


def test_unknown_constraint_is_refused(tmp_path):
    assert CONSTRAINED == ("auto", "grammar", "json_schema", "none")
    with pytest.raises(ValueError, match="constrained.*allowed: auto, grammar, json_schema, none"):
        LLMPlanner(client(dead_url(), tmp_path, "off"), constrained="regex")


# -- failures, call ids, replay ----------------------------------------------------------------
def test_a_dead_server_raises_endpoint_error(observations, tmp_path):
    assert PlannerError is EndpointError  # the planner's name for the floor's error
    c = client(dead_url(), tmp_path, "off", max_attempts=2, backoff_base_s=0.01, timeout_s=5, outage_wait_s=0.2,
               probe_interval_s=0.05)
    with pytest.raises(EndpointError, match="agent0/step") as ei:
        LLMPlanner(c).decide(observations[0])
    assert ei.value.kind == "transport" and "outage_wait_s=0.2" in str(ei.value)
    with FakeOpenAIServer(lambda b, s: FakeReply(status=500, error_message="boom")) as srv:
        c = client(srv.base_url, tmp_path, "off", max_attempts=1)
        with pytest.raises(EndpointError, match="HTTP 500"):
            LLMPlanner(c).decide(observations[0])


class ReturningClient:
    """A client that returns a failed result instead of raising (the planner must raise it)."""

    endpoint = EndpointSpec(alias="ret", model="m", api_key_env=None)

    def chat_sync(self, messages, **kw):
        return LLMResult(text=None, usage=Usage(), latency_s=0.0, cache="off", attempts=1,
                         error="HTTP 502: bad gateway", model="m", endpoint="ret", call_id=kw["call_id"])


def test_a_failed_result_raises_and_an_empty_reply_is_an_invalid_action_in_an_episode(observations, tmp_path):
    with pytest.raises(EndpointError, match="HTTP 502"):
        LLMPlanner(ReturningClient()).decide(observations[0])
    with FakeOpenAIServer(script("")) as srv:
        planners = [LLMPlanner(client(srv.base_url, tmp_path)) for _ in (0, 1)]
        res = Episode(task(), planners, Channels(), max_cycles=2).run()
    assert res.logs and all(log.invalid and not log.ok and "empty reply" in log.feedback for log in res.logs)
    with FakeOpenAIServer(lambda b, s: FakeReply(status=503, error_message="overloaded")) as srv:
        planners = [LLMPlanner(client(srv.base_url, tmp_path, "off", max_attempts=1)) for _ in (0, 1)]
        with pytest.raises(EndpointError, match="HTTP 503"):
            Episode(task(), planners, Channels(), max_cycles=2).run()


def test_call_ids_are_logical_and_namespaced(observations, tmp_path):
    obs = observations[0]
    base = f"{obs.task.episode_id}/agent0/step{obs.step}/c{len(obs.history)}"
    c = client(dead_url(), tmp_path, "off")
    assert LLMPlanner(c).call_id(obs) == base
    assert LLMPlanner(c, namespace="run2").call_id(obs) == "run2/" + base
    assert LLMPlanner(c, namespace="run2/").call_id(obs) == "run2/" + base


def test_an_episode_replays_from_the_cache_without_a_server(tmp_path):
    def handler(body: dict, server: FakeOpenAIServer) -> FakeReply:
        n = server.n_requests
        rooms = ["kitchen_0", "bedroom_0", "living_room_0", "bathroom_0"]
        return FakeReply(f"Thought: step {n}\nPrediction: Explore[{rooms[n % 4]}]\nExplore[{rooms[(n + 1) % 4]}]\n"
                         "Assigned!", usage={"prompt_tokens": 100 + n, "completion_tokens": 7, "total_tokens": 107 + n})

    with FakeOpenAIServer(handler) as srv:
        live = Episode(task(), [LLMPlanner(client(srv.base_url, tmp_path), provider="llamacpp") for _ in (0, 1)],
                       Channels(oas=True, oana=True), max_cycles=3).run()
        n = srv.n_requests
    assert n == len(live.logs) == 6 and all(log.tokens > 0 for log in live.logs)
    assert len(ResponseCache(tmp_path / "cache.sqlite", "rw")) == n
    replay = Episode(task(), [LLMPlanner(client(dead_url(), tmp_path, "replay"), provider="llamacpp")
                              for _ in (0, 1)], Channels(oas=True, oana=True), max_cycles=3).run()
    assert [log.to_dict() for log in replay.logs] == [log.to_dict() for log in live.logs]
    assert replay.steps == live.steps and replay.percent_complete == live.percent_complete


def test_thoughts_are_recorded_apart_and_a_draft_in_them_is_never_the_call(observations, tmp_path):
    """Issue 23: a reasoning model's draft call inside its thoughts is not executed; the start of
    the thoughts goes with the decision (and the step record's ``reasoning``)."""
    obs = dataclasses.replace(observations[1], predict=False)
    room = sorted(obs.world.room_box)[0]
    reply = f"<think>Maybe Done[]\nAssigned!\nNo: explore first.</think>Thought: look around.\nExplore[{room}]\nAssigned!"
    with FakeOpenAIServer(script(reply)) as srv:
        d = LLMPlanner(client(srv.base_url, tmp_path), max_tokens=64).decide(obs)
    assert d.call == ToolCall("Explore", (room,)) and d.reasoning.startswith("Maybe Done[]")
    assert d.finish_reason == "stop"
