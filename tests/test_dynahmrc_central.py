"""DynaHMRC's COHERENT baseline as a true centralized planner (dynahmrc.tex §4.2, appendix
``lab:coherent_fail_case``, ``tab:token_comparison``: one HMRC call per step for the whole team):
the central prompt holds every robot and the global history, a reply's ``<robot>: <action>`` lines
become each robot's action, an episode makes one model call per step, an unusable reply makes every
robot's step invalid, and the offline backend plays the same protocol. No network: a stub client
and the loopback fake server."""

from __future__ import annotations

import re
from typing import Any

import pytest
from collablab.llm import EndpointSpec, LLMResult, Usage
from collablab.llm.fake_server import FakeOpenAIServer, FakeReply
from collablab.studies.dynahmrc.brain import Context, PlaceView, Reply, TaskInfo
from collablab.studies.dynahmrc.framework import Config, run_episode
from collablab.studies.dynahmrc.llm_brain import (
    LLMBrain,
    build_team_messages,
    parse_team_actions,
    read_team_reply,
)
from collablab.studies.dynahmrc.offline import OfflineBrain
from collablab.studies.dynahmrc.robots import robot_type
from collablab.studies.dynahmrc.spec import (
    make_world,
    resolve,
    run_spec,
    run_unit,
    task_of,
)

GLOBAL_FB = ["Alice: FB-ALICE reached drawer_0.", "Bob: FB-BOB Invalid action: cannot navigate."]
GLOBAL_ACTS = ["Alice: navigate(drawer_0, stand_pose_0)", "Bob: wait()"]


def team_ctxs(step: int = 4) -> list[Context]:
    """Three global-view contexts (Alice MoMa, Bob Ma, Lucy UAV) as the framework builds them."""
    task = TaskInfo("pack", "Put book_0 into the tray.", ("book_0",), ("tray_0",), "kitchentable_0")
    places = [PlaceView("drawer_0", "kitchen", (1.0, 2.0), "close", ((1.0, 1.5),), False),
              PlaceView("kitchentable_0", "kitchen", (0.0, 0.0), "", ((0.5, 0.0),), False)]
    high = PlaceView("bookshelf_0_top", "livingroom", (4.0, 2.0), "", ((4.0, 2.0),), True)
    out = []
    for name, code, pos, held, at in (("Alice", "MoMa", (1.0, 1.5), "cup_3", "drawer_0"),
                                      ("Bob", "Ma", (0.0, 0.3), None, "kitchentable_0"),
                                      ("Lucy", "UAV", (3.9, 2.1), None, None)):
        mates = [(n, c) for n, c in (("Alice", "MoMa"), ("Bob", "Ma"), ("Lucy", "UAV")) if n != name]
        out.append(Context(
            name=name, type=robot_type(code), teammates=mates, task=task, step=step, max_steps=20,
            places=places + ([high] if code == "UAV" else []),
            objects={"fork_0": ("drawer_0", (1.1, 2.05))} if name != "Lucy" else {"book_0": ("bookshelf_0_top",
                                                                                              (4.0, 2.0))},
            pos=pos, held=held, at=at, task_status="Latest Task Progress Status: the tray is empty.",
            feedback_history=list(GLOBAL_FB), action_history=list(GLOBAL_ACTS), extra={"episode": "ep3"}))
    return out


class StubClient:
    """The LLMClient surface the brain uses (``endpoint``, ``chat_sync``); answers in turn."""

    def __init__(self, replies: list[str]) -> None:
        self.endpoint = EndpointSpec(alias="stub", model="stub-model", api_key_env=None)
        self.replies = list(replies)
        self.calls: list[dict[str, Any]] = []

    def chat_sync(self, messages: Any, **kw: Any) -> LLMResult:
        self.calls.append({"messages": messages, **kw})
        text = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return LLMResult(text=text, usage=Usage(300, 40, 340), latency_s=0.0, cache="off", attempts=1, error=None,
                         model="stub-model", endpoint="stub", call_id=kw["call_id"], finish_reason="stop")


# -- the prompt ----------------------------------------------------------------------------------
def test_the_central_prompt_holds_every_robot_and_the_global_history():
    system, user = (m["content"] for m in build_team_messages(team_ctxs()))
    assert "centralized planner" in system and "${" not in system + user
    for name, kind in (("Alice", "mobile manipulation robot"), ("Bob", "manipulation robot"),
                       ("Lucy", "drone robot")):
        assert f"- {name} ({kind}):" in system and f"\n{name}: <one action of {name}>" in system
        assert f"You are an intelligent robot named {name}" in system  # role_*.txt
        assert f"- {name} ({kind}): pos:" in user  # its status
    bob = system.split("- Bob (")[1].split("- Lucy (")[0]
    assert "pick(<object>)" in bob and "navigate(" not in bob  # each robot's own skills
    assert "move(<delta_x>, <delta_y>)" in system and "shown a local costmap" not in system  # no second call
    assert "Actions:" in system and "Thoughts:" in system
    assert "The gripper is holding cup_3" in user and "It is at kitchentable_0" in user
    for item in GLOBAL_FB + GLOBAL_ACTS:
        assert item in user
    assert user.index("FB-ALICE") < user.index("FB-BOB")  # oldest first, newest last
    # the union scene graph: Lucy's elevated place and object, the others' fork
    assert "bookshelf_0_top" in user and "book_0: (at: bookshelf_0_top" in user and "fork_0: (at: drawer_0" in user
    assert "Put book_0 into the tray" in system and "Step 4 of at most 20" in user
    assert "Choose the next action of every robot: Alice, Bob, Lucy." in user
    with pytest.raises(ValueError, match="no robot"):
        build_team_messages([])


# -- reading replies -----------------------------------------------------------------------------
def test_a_reply_with_a_line_per_robot_becomes_every_robots_action():
    names = ["Alice", "Bob", "Lucy"]
    text = ("Thoughts: Alice: should I open? yes.\n**Actions:**\n1. **Alice**: open(drawer_0)\n"
            "- Bob (manipulation robot): `pick(fork_0)`\nlucy: navigate(bookshelf_0_top, 0)\nZed: wait()\n")
    joint, why = parse_team_actions(text, names)
    assert why is None
    assert joint == {"Alice": "open(drawer_0)", "Bob": "pick(fork_0)", "Lucy": "navigate(bookshelf_0_top, stand_pose_0)"}
    # a missing robot waits; an unparseable action is kept (the world records it invalid); a bare move too
    joint, why = parse_team_actions("Actions:\nAlice: fly to the moon\nBob: move()", names)
    assert why is None and joint == {"Alice": "fly to the moon", "Bob": "move()", "Lucy": "wait()"}
    # of several lines for a robot the first that parses wins; without an Actions header the whole reply is read
    joint, _ = parse_team_actions("Alice: hmm\nAlice: move(0.2, -0.1)\nBob: wait()", names)
    assert joint["Alice"] == "move(0.2, -0.1)" and joint["Lucy"] == "wait()"
    r = read_team_reply("Thoughts: go.\nActions:\nAlice: wait()", team_ctxs())
    assert r.invalid is None and r.thoughts == "go." and set(r.value) == set(names)
    for garbage in ("I would rather not say.", "", "Actions:\nZed: wait()"):
        r = read_team_reply(garbage, team_ctxs())
        assert r.value is None and "no '<robot>: <action>' line" in (r.invalid or ""), garbage


def test_act_team_is_one_call_with_its_own_id_and_the_servers_usage():
    stub = StubClient(["Thoughts: split up.\nActions:\nAlice: open(drawer_0)\nBob: wait()\nLucy: pick(book_0)",
                       "nothing useful"])
    brain = LLMBrain(stub, namespace="run2", max_tokens=300)
    r = brain.act_team(team_ctxs(step=4))
    assert len(stub.calls) == 1 and stub.calls[0]["call_id"] == "run2/ep3/central/HMRC/s4"
    assert stub.calls[0]["messages"] == build_team_messages(team_ctxs(step=4))
    assert stub.calls[0]["max_tokens"] == 300 and stub.calls[0]["temperature"] == 0.5
    assert r.value == {"Alice": "open(drawer_0)", "Bob": "wait()", "Lucy": "pick(book_0)"}
    assert (r.tokens_in, r.tokens_out, r.invalid) == (300, 40, None)
    bad = brain.act_team(team_ctxs(step=5))
    assert stub.calls[1]["call_id"] == "run2/ep3/central/HMRC/s5"  # one distinct id per step
    assert bad.value is None and bad.invalid and (bad.tokens_in, bad.tokens_out) == (300, 40)


# -- episodes ------------------------------------------------------------------------------------
def _llm_spec(url: str, tmp_path, **extra: Any) -> dict[str, Any]:
    return {"method": "coherent", "team": "Ma-MoMa-UAV", "backend": "llm", "model": "fake", "base_url": url,
            "provider": "compat", "llm_cache": str(tmp_path / "cache.sqlite"), "llm_cache_mode": "off",
            "llm_max_attempts": 1, "max_steps": 5, **extra}


def _server(answer):
    bodies: list[dict] = []

    def handler(body: dict, server: FakeOpenAIServer) -> FakeReply:
        bodies.append(body)
        return FakeReply(answer(body), usage={"prompt_tokens": 500, "completion_tokens": 30, "total_tokens": 530})
    return FakeOpenAIServer(handler), bodies


def _names(body: dict) -> list[str]:
    user = body["messages"][-1]["content"]
    return re.search(r"Choose the next action of every robot: (.*)\.", user).group(1).split(", ")


def test_a_coherent_episode_makes_one_model_call_per_step(tmp_path):
    def answer(body: dict) -> str:  # the drone explores the first elevated place, the others wait
        names = _names(body)
        user = body["messages"][-1]["content"]
        high = re.search(r"^  (\w+): \(pos: [^\n]*elevated\)$", user, re.MULTILINE)
        lines = [f"{n}: navigate({high.group(1)}, stand_pose_0)" if high and n == "Lucy" else f"{n}: wait()"
                 for n in names]
        return "Thoughts: plan.\nActions:\n" + "\n".join(lines)

    srv, bodies = _server(answer)
    with srv:
        rec, log = run_unit(_llm_spec(srv.base_url, tmp_path))
    ts = rec["episode"]["ts"]
    hmrc = [c for c in log.calls if c["stage"] == "HMRC"]
    assert ts == 5 and len(hmrc) == ts == len(bodies) == len(log.calls)
    assert [c["step"] for c in hmrc] == list(range(1, ts + 1)) and all(c["robot"] == "central" for c in hmrc)
    assert all(c["tokens_in"] == 500 and c["tokens_out"] == 30 and c["invalid"] is None for c in hmrc)
    assert rec["episode"]["calls_HMRC"] == ts and rec["episode"]["tokens_HMRC"] == 530 * ts
    team = list(log.participants)
    assert all(_names(b) == team for b in bodies)  # every call plans for the whole team
    per_step = {t: [s["robot"] for s in rec["steps"] if s["t"] == t] for t in range(1, ts + 1)}
    assert all(v == team for v in per_step.values())  # every robot acts once per step, in team order
    lucy = [s for s in rec["steps"] if s["robot"] == "Lucy"]
    assert lucy[0]["name"] == "navigate" and all(s["name"] == "wait" for s in rec["steps"] if s["robot"] != "Lucy")
    # the global history of step 2's prompt holds step 1's actions of every robot
    user2 = bodies[1]["messages"][-1]["content"]
    assert all(f"{n}: " in user2.split("Global Action History:")[1] for n in team)


def test_a_garbage_reply_makes_every_robots_step_invalid(tmp_path):
    srv, bodies = _server(lambda body: "I would rather not say.")
    with srv:
        rec, log = run_unit(_llm_spec(srv.base_url, tmp_path, max_steps=3))
    steps = rec["steps"]
    assert len(bodies) == 3 and len(steps) == 3 * len(log.participants)
    assert all(s["name"] == "invalid" and s["kind"] == "invalid_action" for s in steps)
    assert all(c["invalid"] for c in log.calls) and len(log.calls) == 3
    assert rec["episode"]["invalid_actions"] == len(steps)
    assert "Invalid action" in bodies[1]["messages"][-1]["content"]  # the planner sees its failure


class Planner:
    """A brain whose ``act_team`` gives fixed joint actions; its other stages are the offline robot's."""

    def __init__(self, inner: OfflineBrain, joint: dict[str, str]) -> None:
        self.inner, self.joint, self.label, self.seen = inner, joint, inner.label, []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def act_team(self, ctxs: list[Context]) -> Reply:
        self.seen.append([c.name for c in ctxs])
        return Reply("joint", value=dict(self.joint), tokens_in=10, tokens_out=2)


def test_missing_robots_wait_and_a_bare_move_is_invalid():
    s = resolve({"method": "coherent", "team": "Ma-MoMa-UAV"})
    world = make_world(task_of(s))
    names = list(world.robots)
    mover = next(n for n, r in world.robots.items() if r.type.code == "MoMa")
    planner = Planner(OfflineBrain(names[0], world.robots[names[0]].type.code), {mover: "move()"})
    brains = {n: planner if n == names[0] else OfflineBrain(n, r.type.code) for n, r in world.robots.items()}
    log = run_episode(world, brains, max_steps=2, text=task_of(s).text, config=Config(method="coherent"),
                      record_decisions=True)
    assert planner.seen == [names, names]
    for st in log.steps:
        assert st["name"] == ("invalid" if st["robot"] == mover else "wait"), st
    assert [(c["stage"], c["robot"], c["tokens_in"]) for c in log.calls] == [("HMRC", "central", 10)] * 2
    assert {ctx.name for ctx, _ in log.decisions} == set(names) - {mover}  # only valid actions are decisions


def test_without_act_team_each_robot_is_asked_and_one_record_is_logged():
    class PerRobot:
        def __init__(self, inner: OfflineBrain) -> None:
            self.inner, self.label, self.acts = inner, inner.label, 0

        def __getattr__(self, name: str) -> Any:
            if name == "act_team":
                raise AttributeError(name)
            return getattr(self.inner, name)

        def act(self, ctx: Context) -> Reply:
            self.acts += 1
            return self.inner.act(ctx)

    team: dict[str, PerRobot] = {}

    def wrap(brains: dict) -> dict:
        team.update({n: PerRobot(b) for n, b in brains.items()})
        return dict(team)

    rec, log = run_unit({"method": "coherent", "team": "Ma-MoMa", "max_steps": 4}, wrap_team=wrap)
    assert all(b.acts >= 1 for b in team.values())
    assert len([c for c in log.calls if c["stage"] == "HMRC"]) == rec["episode"]["ts"]


# -- the offline backend ---------------------------------------------------------------------------
@pytest.mark.parametrize("sp", [{"method": "coherent"},
                                {"method": "coherent", "team": "Ma-MoMa-Mo-UAV", "kind": "sort", "instance": 2}])
def test_offline_coherent_runs_and_logs_one_hmrc_call_per_step(sp):
    rec = run_spec(sp)
    e = rec["episode"]
    assert rec["steps"] and e["calls_HMRC"] == e["ts"] == e["calls_total"] and e["tokens_HMRC"] > 0
    assert run_spec(dict(sp)) == rec  # deterministic
    _, log = run_unit(dict(sp))
    assert [c["step"] for c in log.calls] == list(range(1, e["ts"] + 1))
    assert all(c["robot"] == "central" and c["stage"] == "HMRC" for c in log.calls)


def test_offline_act_team_decides_for_every_robot_and_writes_moves_with_offsets():
    ctxs = team_ctxs()
    brain = OfflineBrain("Alice", "MoMa", seed=3)
    r = brain.act_team(ctxs)
    assert set(r.value) == {"Alice", "Bob", "Lucy"} and r.invalid is None
    solo = [OfflineBrain(c.name, c.type.code).act(c) for c in ctxs]
    assert r.tokens_in == sum(x.tokens_in for x in solo)  # summed proxies
    assert parse_team_actions(r.text, ["Alice", "Bob", "Lucy"])[0] == r.value
    alice = ctxs[0]
    alice.action_history = ["Alice: pick(fork_0)"]
    move = OfflineBrain._team_move(alice)
    m = re.fullmatch(r"move\((-?[\d.]+), (-?[\d.]+)\)", move)
    assert m and float(m.group(2)) > 0  # toward fork_0 (above Alice)
    alice.action_history = []
    assert OfflineBrain._team_move(alice) == "wait()"
