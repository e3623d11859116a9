"""DynaHMRC's LLM brain (dynahmrc.tex §3.2-3.3, appendix prompt blocks) against the scripted fake
OpenAI server and a stub client: every stage's prompt holds the paper's sections and the context's
content, replies become values, bad replies become ``Reply.invalid`` (a vote for a non-candidate
too), a move's second call reads a cell or an offset of the local costmap, an empty reply is an
invalid reply, and a call without a reply raises EndpointError out of the brain and the episode."""

from __future__ import annotations

import socket
from dataclasses import replace
from typing import Any

import pytest
from collablab.llm import EndpointError, EndpointSpec, LLMClient, LLMResult, ResponseCache, Usage
from collablab.llm.fake_server import FakeOpenAIServer, FakeReply
from collablab.studies.dynahmrc.actions import parse_action
from collablab.studies.dynahmrc.brain import (
    STAGES,
    Context,
    PlaceView,
    Plan,
    Reply,
    TaskInfo,
)
from collablab.studies.dynahmrc.llm_brain import (
    CALLS,
    LLMBrain,
    build_messages,
    costmap_text,
    parse_leader,
    parse_move_offset,
    parse_sections,
    prompt_template,
)
from collablab.studies.dynahmrc.robots import ROBOT_TYPES, robot_type

CANDIDATES = ["Alice", "Bob", "Lucy"]


def make_ctx(code: str = "MoMa", **changes: Any) -> Context:
    """A hand-built context of Alice (or another type) in a pack task at step 7."""
    t = robot_type(code)
    costmap = [["." for _ in range(5)] for _ in range(5)]
    costmap[2][2], costmap[1][3], costmap[0][0] = "R", "G", "#"
    ctx = Context(
        name=t.name, type=t, teammates=[(n, c) for n, c in (("Bob", "Ma"), ("Lucy", "UAV")) if n != t.name],
        task=TaskInfo("pack", "Put book_0 and bowl_0 into the tray.", ("book_0", "bowl_0"), ("tray_0",),
                      "kitchentable_0"),
        step=7, max_steps=30,
        places=[PlaceView("drawer_0", "kitchen", (1.0, 2.0), "close", ((1.0, 1.5), (1.5, 2.0)), False),
                PlaceView("bookshelf_0_top", "livingroom", (4.0, 2.0), "", ((4.0, 2.0),), True)],
        objects={"fork_0": ("drawer_0", (1.1, 2.05))}, pos=(0.5, 0.75), held="cup_3", at="drawer_0",
        task_status="Latest Task Progress Status: ['book_0'] has been placed in the tray.",
        feedback_history=["FB-ONE reached drawer_0.", "FB-TWO the drawer is closed."],
        action_history=["navigate(drawer_0, stand_pose_0)", "open(drawer_0)"],
        message_history=["(MSG-BOB please bring bowl_0) from Bob"],
        leader="Lucy", plan=Plan("PLAN-LUCY: Lucy searches high places, Alice opens containers."),
        self_descriptions={"Alice": "SD-ALICE", "Bob": "SD-BOB", "Lucy": "SD-LUCY"},
        proposals={"Alice": ("P-ALICE", "S-ALICE"), "Bob": ("P-BOB", "S-BOB"), "Lucy": ("P-LUCY", "S-LUCY")},
        vote_history=[{"Alice": 1, "Bob": 1, "Lucy": 1}],
        reports={"Alice": ("SUM-ALICE", "NEXT-ALICE"), "Bob": ("SUM-BOB", "NEXT-BOB")},
        lessons=["LESSON: open drawers before searching."], costmap=None, goal=None)
    return replace(ctx, **changes)


def joined(msgs: list[dict]) -> tuple[str, str]:
    assert [m["role"] for m in msgs] == ["system", "user"]
    return msgs[0]["content"], msgs[1]["content"]


class StubClient:
    """The LLMClient surface the brain uses: ``endpoint`` and ``chat_sync``; answers in turn."""

    def __init__(self, replies: list[str], error: str | None = None, finish_reason: str = "stop") -> None:
        self.endpoint = EndpointSpec(alias="stub", model="stub-model", api_key_env=None)
        self.replies, self.error, self.finish_reason = list(replies), error, finish_reason
        self.calls: list[dict[str, Any]] = []

    def chat_sync(self, messages: Any, **kw: Any) -> LLMResult:
        self.calls.append({"messages": messages, **kw})
        text = None if self.error else (self.replies.pop(0) if len(self.replies) > 1 else self.replies[0])
        return LLMResult(text=text, usage=Usage(120, 30, 150), latency_s=0.0, cache="off", attempts=1,
                         error=self.error, model="stub-model", endpoint="stub", call_id=kw["call_id"],
                         finish_reason=self.finish_reason)


# -- prompts -----------------------------------------------------------------------------------
def test_every_call_has_a_prompt_and_the_stages_are_the_brains():
    assert set(STAGES) <= set(CALLS)
    ctx = make_ctx(costmap=[list("..R.."), list(".G..."), list("....."), list("....."), list(".....")], goal="fork_0")
    for stage in CALLS:
        system, user = joined(build_messages(ctx, stage, candidates=CANDIDATES))
        assert system.strip() and user.strip() and "${" not in system + user, stage
    with pytest.raises(ValueError, match="stage"):
        build_messages(ctx, "XX")


def test_self_description_prompt_per_type():
    for code, t in ROBOT_TYPES.items():
        system, user = joined(build_messages(make_ctx(code), "SD"))
        assert "Initial stage, where each robot introduces itself" in system and "Let's think step by step!" in system
        assert "Task Objective and Context:" in user and "Put book_0 and bowl_0 into the tray" in user
        assert f"You are an intelligent robot named {t.name}" in user and "Role:" in user and "Skills:" in user
        assert "Thoughts:" in user and "Contents: concise self-introduction" in user
        skills = user.split("Skills:")[1].split("Output Response Format:")[0]
        for a in ("navigate(", "open(", "pick(", "place(", "move(", "communicate(", "wait()"):
            assert (a in skills) == t.can(a.split("(")[0]), (code, a)
    assert "wheeled chassis and a single manipulator arm" in joined(build_messages(make_ctx("MoMa"), "SD"))[1]
    assert "single robotic arm fixed on a desktop" in joined(build_messages(make_ctx("Ma"), "SD"))[1]
    assert "quadrotor drone with a fixed suction gripper" in joined(build_messages(make_ctx("UAV"), "SD"))[1]


def test_talb_and_election_prompts_hold_the_team_information():
    ctx = make_ctx()
    system, user = joined(build_messages(ctx, "TALB"))
    assert "propose a follow-up division of labor plan" in system and "campaign speech" in system
    assert all(s in user for s in ("SD-ALICE", "SD-BOB", "SD-LUCY", "Principles:", "Plan:", "Speech:"))
    system, user = joined(build_messages(ctx, "LE", candidates=CANDIDATES))
    assert "Objectively elect a leader (self-nomination allowed)" in system
    assert all(s in user for s in ("P-BOB", "S-LUCY", "Reasons:", "Leader:", "Alice, Bob, Lucy"))
    assert "Round 1: Alice 1 vote, Bob 1 vote, Lucy 1 vote." in user
    assert "Voting History" not in joined(build_messages(replace(ctx, vote_history=[]), "LE"))[1]
    system, user = joined(build_messages(ctx, "LE_REFEREE", candidates=["Alice", "Lucy"]))
    assert "referee" in system and "P-LUCY" in user and "P-BOB" not in user and "Round 1:" in user
    assert "Candidates: Alice, Lucy." in user


def test_hmrc_prompt_holds_every_section_and_the_context():
    ctx = make_ctx()
    system, user = joined(build_messages(ctx, "HMRC"))
    for section in ("Role:", "Skills:", "Task Objective and Context:", "Output Response Format:", "CoT:",
                    "Examples:", "Principles:"):
        assert section in system, section
    assert "Lucy is the elected leader and proposed the collaboration plan: PLAN-LUCY" in system
    assert "If grasp fails, try other stand poses or adjust base position." in system  # MoMa's principles
    assert "carry out your part of the leader's plan" in system
    for section in ("Task Status:", "Scene Graph:", "Robot Status:", "Feedback History:", "Action History:",
                    "Receive Message History:"):
        assert section in user, section
    assert "['book_0'] has been placed in the tray" in user and "Step 7 of at most 30" in user
    assert "- kitchen:\n  drawer_0: (pos: [1.0, 2.0], state: close, stand: [0: [1.0, 1.5], 1: [1.5, 2.0]])" in user
    assert "stand_pose_<k>" in user and "bookshelf_0_top: (pos: [4.0, 2.0], stand: [0: [4.0, 2.0]], elevated)" in user
    assert "- fork_0: (at: drawer_0, pos: [1.10, 2.05])" in user
    assert "pos: [0.50, 0.75]" in user and "holding cup_3" in user and "0.75 m" in user
    assert user.index("FB-ONE") < user.index("FB-TWO")  # oldest to newest
    assert "1. navigate(drawer_0, stand_pose_0)\n2. open(drawer_0)" in user
    assert "MSG-BOB please bring bowl_0) from Bob" in user and "LESSON" in user
    empty = joined(build_messages(make_ctx(feedback_history=[], action_history=[], message_history=[], lessons=[]),
                                  "HMRC"))[1]
    assert empty.count("none yet.") >= 3 and "Reflection:" not in empty
    bob_sys = joined(build_messages(make_ctx("Ma"), "HMRC"))[0]
    assert "Request help promptly for distant or missing objects." in bob_sys and "navigate(" not in bob_sys
    leader_sys = joined(build_messages(make_ctx("UAV"), "HMRC"))[0]
    assert "as the leader" in leader_sys
    david = joined(build_messages(make_ctx("Mo"), "HMRC"))[1]
    assert "gripper" not in david


def test_reflection_and_plan_update_prompts():
    ctx = make_ctx()
    system, user = joined(build_messages(ctx, "GD"))
    assert "group discussion session" in system and "successful experiences and failure lessons" in system
    assert all(s in user for s in ("Summaries:", "Plans:", "FB-TWO", "MSG-BOB", "PLAN-LUCY", "fork_0", "Task Status:"))
    system, user = joined(build_messages(replace(ctx, name="Lucy", type=robot_type("UAV")), "LP"))
    assert "leadership summary stage" in system and "Assign specific tasks to each one, including yourself." in system
    assert "named Lucy, you are the leader" in user and "SUM-BOB" in user and "NEXT-ALICE" in user
    assert "Contents: output the latest heterogeneous robots plan." in user


def test_move_prompt_shows_the_labelled_costmap():
    grid = [["." for _ in range(11)] for _ in range(11)]
    grid[5][5], grid[2][8], grid[0][0] = "R", "G", "#"
    ctx = make_ctx(costmap=grid, goal="fork_0", extra={"costmap_step_m": 0.2})
    system, user = joined(build_messages(ctx, "HMRC_MOVE"))
    assert "local costmap" in system and "fork_0" in user and "move(dx, dy)" in user and "cell(row, column)" in user
    text = costmap_text(grid, 0.2)
    assert text in user
    lines = text.splitlines()
    assert lines[0].split()[1:] == [str(c) for c in range(11)]
    assert lines[1].split()[-11:][0] == "-1.0" and lines[1].split()[-1] == "+1.0"
    assert lines[2 + 5].split()[:2] == ["5", "(+0.0)"] and lines[2 + 5].split()[2:][5] == "R"
    assert lines[2 + 2].split()[2:][8] == "G"
    with pytest.raises(ValueError, match="costmap"):
        build_messages(make_ctx(), "HMRC_MOVE")


def test_prompt_files_ship_with_the_package():
    for name in ("sd_system", "hmrc_user", "referee_user", "move_user", "skills", "reasoning_system",
                 *(f"role_{c}" for c in ROBOT_TYPES), *(f"principles_{c}" for c in ROBOT_TYPES)):
        assert prompt_template(name).strip(), name


# -- reading replies ---------------------------------------------------------------------------
def test_sections_tolerate_markdown_numbering_and_think_blocks():
    sec = parse_sections("<think>hidden</think>\n1. **Thoughts:** a\nb\n2. **Contents:** `pick(x_0)`",
                         ("thoughts", "contents"))
    assert sec == {"thoughts": "a\nb", "contents": "`pick(x_0)`"}
    assert parse_sections("<think>why</think>Contents: wait()", ("thoughts", "contents"))["thoughts"] == "why"
    assert parse_sections("Thoughts: go now. Contents: wait()", ("thoughts", "contents"))["contents"] == "wait()"


def test_each_stage_reply_becomes_its_value_with_tokens():
    ctx = make_ctx()
    stub = StubClient([
        "Thoughts: I am mobile.\nContents: I am Alice, I navigate and open things.",
        "Thoughts: t\nContents:\nPlan: Alice opens, Lucy flies.\nSpeech: Vote for me.",
        "Thoughts: t\nReasons: best plan\nLeader: **Lucy**",
        "Thoughts: t\nReasons: r\nLeader: Alice",
        "Thoughts: The drawer holds fork_0.\nContents: pick(fork_0)",
        "Thoughts: t\nSummaries: book_0 is done.\nPlans: find bowl_0.",
        "Thoughts: t\nContents: Alice searches the kitchen; Lucy the shelves.",
    ])
    brain = LLMBrain(stub, max_tokens=300)
    sd = brain.describe(ctx)
    assert sd.value == "I am Alice, I navigate and open things." and sd.thoughts == "I am mobile." and not sd.invalid
    assert (sd.tokens_in, sd.tokens_out, sd.calls) == (120, 30, 1)
    plan, speech = brain.propose(ctx).value
    assert isinstance(plan, Plan) and plan.text == "Alice opens, Lucy flies." and speech == "Vote for me."
    assert brain.vote(ctx, CANDIDATES).value == "Lucy"
    assert brain.referee(ctx, ["Alice", "Lucy"]).value == "Alice"
    act = brain.act(ctx)
    assert act.value == "pick(fork_0)" and act.invalid is None and parse_action(act.value).target == "fork_0"
    assert brain.reflect(ctx).value == ("book_0 is done.", "find bowl_0.")
    lp = brain.update_plan(ctx)
    assert isinstance(lp.value, Plan) and lp.value.text == "Alice searches the kitchen; Lucy the shelves."
    first = stub.calls[0]
    assert first["temperature"] == 0.5 and first["max_tokens"] == 300  # the paper's temperature by default
    assert [c["call_id"] for c in stub.calls][:3] == ["episode/Alice/SD/s7", "episode/Alice/TALB/s7",
                                                      "episode/Alice/LE/s7/r1"]
    assert brain.label == "llm:stub-model"
    assert LLMBrain(stub, temperature=0.0).request(ctx, "SD")["temperature"] == 0.0


def test_hmrc_action_forms_and_bad_replies():
    ctx = make_ctx()
    brain = LLMBrain(StubClient(["x"]))
    read = {
        "Thoughts: go\n**Contents:** [navigate] to stand_pose_1 of drawer_0": "navigate(drawer_0, stand_pose_1)",
        "Thoughts: tell\nContents: communicate(\"bowl_0 is on sofa_0\", Bob, Lucy)":
            "communicate('bowl_0 is on sofa_0', Bob, Lucy)",
        "Thoughts: adjust\nContents: move": "move()",  # the cue for the second call (the costmap)
        "Thoughts: adjust\nContents: [move]": "move()",
        "Thoughts: adjust\nContents: `move()`": "move()",
        "Thoughts: adjust\nContents: move(0.2, -0.1)": "move(0.2, -0.1)",
    }
    for text, action in read.items():
        r = brain.reply_of(StubClient([text]).chat_sync([], call_id="c"), "HMRC", ctx)
        assert r.value == action and r.invalid is None, text
    for text, why in (("Thoughts: I am not sure what to do.", "Contents"),
                      ("Thoughts: hmm\nContents: dance around the table", "no atomic action")):
        r = brain.reply_of(StubClient([text]).chat_sync([], call_id="c"), "HMRC", ctx)
        assert isinstance(r, Reply) and r.value is None and why in (r.invalid or ""), text
        assert r.tokens_in == 120
    cut = StubClient(["Thoughts: a very long"], finish_reason="length").chat_sync([], call_id="c")
    assert (brain.reply_of(cut, "HMRC", ctx).invalid or "").startswith("truncated:")
    for stage, text in (("SD", "I am Alice."), ("GD", "Thoughts: t\nSummaries: s"), ("LP", "Thoughts: only")):
        assert brain.reply_of(StubClient([text]).chat_sync([], call_id="c"), stage, ctx).invalid, stage


def test_a_vote_must_name_a_candidate():
    assert parse_leader("Thoughts: t\nReasons: r\nLeader: Lucy (drone robot)", CANDIDATES) == ("Lucy", None)
    assert parse_leader("Leader: lucy", CANDIDATES) == ("Lucy", None)
    name, why = parse_leader("Thoughts: t\nReasons: r\nLeader: David", CANDIDATES)
    assert name is None and "not one of the candidates" in why
    brain = LLMBrain(StubClient(["Thoughts: t\nReasons: r\nLeader: Bob"]))
    r = brain.vote(make_ctx(), ["Alice", "Lucy"])  # Bob is not a candidate of this round
    assert r.value is None and "not one of the candidates" in (r.invalid or "")
    assert parse_leader("Leader: Bobby", ["Bob"])[0] is None  # whole names only


def test_move_offset_reads_a_cell_or_an_offset():
    grid = [["." for _ in range(11)] for _ in range(11)]
    grid[5][5], grid[2][8] = "R", "G"
    assert parse_move_offset("Thoughts: t\nContents: cell(2, 8)", grid, 0.2) == ((0.6, -0.6), None)
    assert parse_move_offset("Contents: row 5, column 6", grid, 0.2) == ((0.2, 0.0), None)
    assert parse_move_offset("Thoughts: t\nContents: move(0.4, -0.6)", grid, 0.2) == ((0.4, -0.6), None)
    assert parse_move_offset("Contents: cell(12, 0)", grid, 0.2)[1].startswith("cell (12, 0) is outside")
    assert parse_move_offset("Contents: pick(fork_0)", grid, 0.2)[0] is None
    ctx = make_ctx(costmap=grid, goal="fork_0")
    stub = StubClient(["Thoughts: G is up and right; the free cell next to it.\nContents: cell(3, 7)", "no idea"])
    brain = LLMBrain(stub)
    r = brain.move_offset(ctx)
    assert r.value == (0.4, -0.4) and r.invalid is None and r.thoughts.startswith("G is up")
    assert stub.calls[0]["call_id"] == "episode/Alice/HMRC_MOVE/s7"
    bad = brain.move_offset(ctx)
    assert bad.value is None and "no move(dx, dy) or cell(row, column)" in (bad.invalid or "")


# -- the fake server: transport, failures, ids ----------------------------------------------------
def script(replies: list[str], bodies: list[dict]):
    queue = list(replies)

    def handler(body: dict, server: FakeOpenAIServer) -> FakeReply:
        bodies.append(body)
        text = queue.pop(0) if len(queue) > 1 else queue[0]
        return FakeReply(text, usage={"prompt_tokens": 77, "completion_tokens": 11, "total_tokens": 88})
    return handler


def client(url: str, tmp_path, mode: str = "off", **spec: Any) -> LLMClient:
    ep = EndpointSpec(alias="fake", model="fake-model", base_url=url, api_key_env=None, **spec)
    return LLMClient(ep, ResponseCache(tmp_path / "cache.sqlite", mode))


def dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_through_the_fake_server(tmp_path):
    bodies: list[dict] = []
    ctx = make_ctx(extra={"episode": "ep9"})
    with FakeOpenAIServer(script(["Thoughts: open it\nContents: open(drawer_0)", ""], bodies)) as srv:
        brain = LLMBrain(client(srv.base_url, tmp_path), namespace="run1", max_tokens=200,
                         extra_params={"extra_body": {"top_k": 20}})
        r = brain.act(ctx)
        empty = brain.act(ctx)
    assert r.value == "open(drawer_0)" and (r.tokens_in, r.tokens_out) == (77, 11)
    assert empty.value is None and "empty reply" in (empty.invalid or "")
    body = bodies[0]
    assert body["temperature"] == 0.5 and body["max_tokens"] == 200 and body["top_k"] == 20
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "PLAN-LUCY" in body["messages"][0]["content"] and "FB-TWO" in body["messages"][1]["content"]
    assert brain.call_id(ctx, "HMRC") == "run1/ep9/Alice/HMRC/s7"


def test_a_failure_that_is_not_the_models_raises(tmp_path):
    with FakeOpenAIServer(lambda b, s: FakeReply(status=500, error_message="boom")) as srv, \
            pytest.raises(EndpointError, match="HTTP 500") as ei:
        LLMBrain(client(srv.base_url, tmp_path, max_attempts=2, backoff_base_s=0.01)).act(make_ctx())
    assert ei.value.kind == "transport"
    c = client(dead_url(), tmp_path, max_attempts=1, timeout_s=2)
    with pytest.raises(EndpointError, match="Alice/SD"):
        LLMBrain(c).describe(make_ctx())
    # a client that returns its failure instead of raising it: the brain raises it
    with pytest.raises(EndpointError, match="no key") as ei:
        LLMBrain(StubClient(["x"], error="no key in OPENAI_API_KEY")).vote(make_ctx(), CANDIDATES)
    assert ei.value.result.call_id == "episode/Alice/LE/s7/r1"


def test_an_empty_reply_is_invalid_not_an_error():
    for text in ("", "  \n"):
        brain = LLMBrain(StubClient([text]))
        r = brain.act(make_ctx())
        assert r.value is None and r.invalid == "the model gave an empty reply (finish_reason=stop)"
        assert (r.tokens_in, r.tokens_out) == (120, 30)
        cut = LLMBrain(StubClient([text], finish_reason="length")).act(make_ctx())
        assert cut.value is None and cut.invalid == "truncated: the reply was cut at max_tokens=8192 inside its thoughts"
        team = brain.act_team([make_ctx(), make_ctx("Ma")])
        assert team.value is None and "empty reply" in team.invalid


def _episode_spec(url: str, tmp_path, **extra: Any) -> dict[str, Any]:
    return {"method": "coherent", "team": "Ma-MoMa-UAV", "backend": "llm", "model": "fake", "base_url": url,
            "provider": "compat", "llm_cache": str(tmp_path / "cache.sqlite"), "llm_cache_mode": "rw",
            "llm_max_attempts": 1, "max_steps": 3, **extra}


def test_in_an_episode_an_empty_reply_is_an_invalid_step_and_a_dead_server_fails_the_episode(tmp_path):
    from collablab.studies.dynahmrc.spec import run_unit

    with FakeOpenAIServer(lambda b, s: FakeReply("")) as srv:
        rec, log = run_unit(_episode_spec(srv.base_url, tmp_path))
        assert srv.n_requests == 3
    assert rec["steps"] and all(s["name"] == "invalid" and s["kind"] == "invalid_action" for s in rec["steps"])
    assert all("empty reply" in c["invalid"] for c in log.calls)
    with FakeOpenAIServer(lambda b, s: FakeReply(status=503, error_message="overloaded")) as srv:
        with pytest.raises(EndpointError, match="HTTP 503") as ei:
            run_unit(_episode_spec(srv.base_url, tmp_path, llm_cache_mode="off"))
    assert ei.value.kind == "transport" and "/central/HMRC/s1" in str(ei.value)
    with pytest.raises(EndpointError, match="connection"):
        run_unit(_episode_spec(dead_url(), tmp_path, llm_cache_mode="off"))
