"""PARTNR's planner loop (issue 27, item 4): one growing transcript per agent in PARTNR's shape.
Three planning cycles of the robot against the fake OpenAI server: the first request is the conf
prompt (system, user), every later request is the previous one plus the model's reply (``Thought``,
call, ``Assigned!``) and ``Result: ...`` / ``Objects: ...`` (with the OAS line); ``history`` keeps
only the last N cycles; a planner starts a new transcript for a new episode. The rendered
three-cycle transcript is the example in docs/partnr_planner.md (checked here, so it cannot go
stale)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from collablab.llm import EndpointSpec, LLMClient, ResponseCache
from collablab.llm.fake_server import FakeOpenAIServer, FakeReply
from collablab.runs.notebook import llm_option_keys
from collablab.studies.partnr import spec as S
from collablab.studies.partnr.episode import Channels, Episode, EpisodeResult
from collablab.studies.partnr.llm_planner import LLMPlanner
from collablab.studies.partnr.tasks import generate_task, load_task
from collablab.studies.partnr.transcript import Transcript

DOC = Path(__file__).resolve().parents[1] / "docs" / "partnr_planner.md"
ROBOT = "the task receiver"  # PARTNR's role words for agent 0, in its system message
#: The robot's replies, one per cycle: explore its room, then a Pick of what it cannot reach, then Wait.
SCRIPT = ["Thought: Since there are no objects found I should explore a room I have not explored yet\n"
          "Explore[{room}]",
          "Thought: I found the {cls}, I will pick it up\nPick[{obj}]",
          "Thought: I am not close enough, the other agent may get it\nWait[]"]


def task():
    return load_task(generate_task(0, "rearrange"))


def run(history: int | None = None, replies: list[str] | None = None, channels: Channels = Channels(oas=True),
        provider: str = "openai") -> tuple[list[list[dict[str, str]]], EpisodeResult, list[dict[str, Any]]]:
    """Three cycles of each agent on the fake server: the robot follows ``replies`` (default
    :data:`SCRIPT`, filled in from its own first prompt), the human waits. Returns the robot's
    request messages, the episode and every request body."""
    t = task()
    w = t.world()
    room = t.agent_rooms(w)[0]  # where the robot starts
    bodies: list[dict[str, Any]] = []
    filled: list[str] = []

    def handler(body: dict, server: FakeOpenAIServer) -> FakeReply:
        bodies.append(body)
        if ROBOT not in body["messages"][0]["content"]:
            return FakeReply("Thought: I wait for now\nWait[]\nAssigned!")
        k = sum(ROBOT in b["messages"][0]["content"] for b in bodies) - 1
        if replies is not None:
            return FakeReply(replies[min(k, len(replies) - 1)])
        if k == 1:  # the first object the exploration found
            seen = body["messages"][-1]["content"].split("Objects: ", 1)[1].splitlines()[0].split(": ")[0]
            filled.append(SCRIPT[1].format(cls=seen.rsplit("_", 1)[0], obj=seen))
        else:
            filled.append(SCRIPT[min(k, 2)].format(room=room))
        return FakeReply(filled[-1] + "\nAssigned!")

    with FakeOpenAIServer(handler) as srv:
        ep = EndpointSpec(alias="fake", model="fake-model", base_url=srv.base_url, api_key_env=None)
        planners = [LLMPlanner(LLMClient(ep, ResponseCache(None, "off")), provider=provider, history=history)
                    for _ in (0, 1)]
        res = Episode(t, planners, channels, max_cycles=3).run()
    robot = [b["messages"] for b in bodies if ROBOT in b["messages"][0]["content"]]
    return robot, res, bodies


def render(messages: list[dict[str, str]]) -> str:
    """A transcript as the docs show it: each message under ``[n] role``."""
    return "\n\n".join(f"[{i}] {m['role']}\n{m['content']}" for i, m in enumerate(messages, 1))


@pytest.fixture(scope="module")
def three():
    return run()


def test_three_cycles_grow_one_transcript_in_partnrs_shape(three):
    requests, res, _ = three
    logs = [log for log in res.logs if log.agent == 0]
    assert [len(r) for r in requests] == [2, 4, 6] and len(logs) == 3
    assert [m["role"] for m in requests[-1]] == ["system", "user", "assistant", "user", "assistant", "user"]
    for earlier, later in zip(requests, requests[1:]):
        assert later[:len(earlier)] == earlier  # appended to, never rewritten
    first = requests[0][1]["content"]
    assert first.startswith("Task: ") and "\nPossible Actions:\n" in first and first.endswith("Assigned!")
    for k, log in enumerate(logs[:2]):
        reply, result = requests[-1][2 + 2 * k], requests[-1][3 + 2 * k]
        # PARTNR appends the reply and its stop word: f"{llm_response}\n{stopword}"
        assert reply["content"].startswith("Thought: ") and reply["content"].endswith(f"\n{log.call}\nAssigned!")
        assert result["content"].startswith(f"Result: {log.feedback}\nObjects: ")
        assert result["content"].splitlines()[-1].startswith("Other agent: ")  # OAS is on
    assert logs[0].call.startswith("Explore[") and logs[0].ok
    assert logs[1].call.startswith("Pick[") and not logs[1].ok  # the failure is the next result


def test_objects_are_reported_after_each_action_without_states(three):
    """PARTNR's ``Objects:`` after every result (objects_response: True): the exploration's finds
    appear in the first result; no object states (objects_response_include_states: False)."""
    requests, _, _ = three
    before = requests[0][1]["content"].split("\nObjects:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    after = requests[-1][3]["content"].split("Objects: ", 1)[1].splitlines()[:-1]
    assert set(before) < set(after) or before == ["No objects found yet"] and after
    text = "\n".join(m["content"] for m in requests[-1][1:] if m["role"] == "user")
    assert not re.search(r"\b(clean|dirty|filled|empty|powered on|powered off|States:)", text, re.I)


def test_history_keeps_the_first_prompt_and_the_last_n_cycles(three):
    full, _, _ = three
    short, _, _ = run(history=1)
    assert [len(r) for r in short] == [2, 4, 4]
    assert short[2] == full[2][:2] + full[2][4:]  # the first prompt, then only the last cycle
    assert short[1] == full[1]


def test_an_invalid_reply_is_kept_with_its_error_as_the_result():
    replies = ["I am not sure what to do.", "Thought: look around\nWait[]\nAssigned!"]
    requests, res, _ = run(replies=replies)
    first = next(log for log in res.logs if log.agent == 0)
    assert first.invalid and requests[1][2]["content"] == "I am not sure what to do.\nAssigned!"
    assert requests[1][3]["content"].startswith(f"Result: {first.feedback}\nObjects: ")


def test_a_planner_starts_a_new_transcript_for_a_new_episode(tmp_path):
    bodies: list[dict] = []

    def handler(body: dict, server: FakeOpenAIServer) -> FakeReply:
        bodies.append(body)
        return FakeReply("Thought: t\nWait[]\nAssigned!")

    with FakeOpenAIServer(handler) as srv:
        ep = EndpointSpec(alias="fake", model="fake-model", base_url=srv.base_url, api_key_env=None)
        planners = [LLMPlanner(LLMClient(ep, ResponseCache(None, "off"))) for _ in (0, 1)]
        for _ in range(2):
            Episode(task(), planners, Channels(), max_cycles=2).run()
    assert [len(b["messages"]) for b in bodies if ROBOT in b["messages"][0]["content"]] == [2, 4, 2, 4]


def test_a_planner_joining_late_gets_the_earlier_cycles_from_the_history(three):
    """E.g. behind a wrapper that answered the first cycle itself: the calls and results so far."""
    _, res, _ = three
    obs_calls = [(log.call, log.feedback) for log in res.logs if log.agent == 0][:2]
    msgs = Transcript.start(_observation_at(obs_calls)).messages()
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert msgs[2]["content"] == f"{obs_calls[0][0]}\nAssigned!" and msgs[3]["content"] == f"Result: {obs_calls[0][1]}"
    assert msgs[5]["content"].startswith(f"Result: {obs_calls[1][1]}\nObjects: ")


def _observation_at(history: list[tuple[str, str]]):
    from collablab.studies.partnr.episode import Observation
    from collablab.studies.partnr.skills import ROLE_TOOLS
    from collablab.studies.partnr.world import Beliefs

    t = task()
    w = t.world()
    return Observation(0, "robot", ROLE_TOOLS["robot"], t.instruction, 100, Beliefs(0), w, t, (0.0, 0.0),
                       sorted(w.room_box)[0], None, list(history), None, None, False)


@pytest.mark.parametrize("bad", [0, -2, 1.5, "all", True])
def test_bad_history_is_refused_naming_the_field(bad):
    c = LLMClient(EndpointSpec(alias="x", model="m", base_url="http://127.0.0.1:9/v1", api_key_env=None),
                  ResponseCache(None, "off"))
    with pytest.raises(ValueError, match=r"history: .*allowed: None \(the whole transcript, PARTNR's\) or an integer"):
        LLMPlanner(c, history=bad)


def test_the_spec_key_llm_history_reaches_both_planners():
    s = S.resolve({"backend": "llm", "model": "m", "base_url": "http://127.0.0.1:9/v1", "llm_history": 5})
    assert [p.history for p in S.make_planners(s)] == [5, 5]
    assert S.DEFAULTS["llm_history"] is None  # PARTNR's behaviour by default
    assert "llm_history" in llm_option_keys(S.DEFAULTS)  # notebook 07's llm_options can set it


def test_the_docs_show_this_rendered_transcript(three):
    requests, _, _ = three
    doc = DOC.read_text(encoding="utf-8")
    block = doc.split("<!-- rendered transcript: begin -->\n```text\n", 1)[1].split("\n```\n<!-- rendered", 1)[0]
    assert block == render(requests[-1])
