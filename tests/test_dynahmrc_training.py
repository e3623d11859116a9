"""DynaHMRC's fine-tuning export (dynahmrc.tex §3.5, ``algo:data_collection``): step-wise samples
with system, user and assistant messages (``Thoughts`` / ``Contents``) in valid JSONL, the reasoner
given the prompts and the true action, unparseable actions left out, and a failing reasoning call
raising. Nothing is trained."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from collablab.llm import EndpointSpec, LLMResult, Usage
from collablab.studies.dynahmrc.brain import Context, PlaceView, Plan, TaskInfo
from collablab.studies.dynahmrc.llm_brain import BrainError, build_messages
from collablab.studies.dynahmrc.robots import robot_type
from collablab.studies.dynahmrc.training import (
    assistant_text,
    llm_reasoner,
    read_jsonl,
    reasoning_messages,
    samples_from_decisions,
    write_jsonl,
)


def ctx_at(step: int, name: str = "Alice", code: str = "MoMa", **changes: Any) -> Context:
    ctx = Context(name=name, type=robot_type(code), teammates=[("Bob", "Ma")],
                  task=TaskInfo("sandwich", "Make a sandwich: bread_0, ham_0, bread_1.", ("bread_0", "ham_0", "bread_1"),
                                ("cuttingboard_0",), "kitchentable_0"),
                  step=step, max_steps=30,
                  places=[PlaceView("fridge_0", "kitchen", (2.0, 1.0), "close", ((2.0, 0.4),), False)],
                  objects={"ham_0": ("fridge_0", (2.0, 1.1))} if step > 1 else {}, pos=(0.0, 0.0), held=None,
                  at=None, task_status="Latest Task Progress Status: [] is placed on the cutting board.",
                  action_history=[f"wait() #{k}" for k in range(step)], leader="Alice", plan=Plan("PLAN-X"),
                  extra={"task_id": "sandwich-3", "episode": "ep-3"})
    return replace(ctx, **changes)


class StubClient:
    def __init__(self, text: str | None = "Thoughts: The ham is in the fridge.\nContents: pick(ham_0)",
                 error: str | None = None) -> None:
        self.endpoint = EndpointSpec(alias="stub", model="stub-model", api_key_env=None)
        self.text, self.error = text, error
        self.calls: list[dict[str, Any]] = []

    def chat_sync(self, messages: Any, **kw: Any) -> LLMResult:
        self.calls.append({"messages": messages, **kw})
        return LLMResult(text=self.text, usage=Usage(10, 5, 15), latency_s=0.0, cache="off", attempts=1,
                         error=self.error, model="stub-model", endpoint="stub", call_id=kw["call_id"])


def decisions() -> list[tuple[Context, str]]:
    return [(ctx_at(1), "navigate(fridge_0, stand_pose_0)"), (ctx_at(2), "[open] fridge_0"),
            (ctx_at(3), "not an action at all"), (ctx_at(3, "Bob", "Ma"), 'communicate("need ham", Alice)')]


def test_samples_have_three_roles_meta_and_the_true_action(tmp_path):
    samples = samples_from_decisions(decisions())
    assert len(samples) == 3  # the unparseable action is left out
    for s, (ctx, _) in zip(samples, [d for d in decisions() if d[1] != "not an action at all"]):
        roles = [m["role"] for m in s["messages"]]
        assert roles == ["system", "user", "assistant"]
        assert s["messages"][:2] == build_messages(ctx, "HMRC")  # exactly the prompts the robot saw
        assert s["meta"] == {"task_id": "sandwich-3", "task_kind": "sandwich", "robot": ctx.name,
                             "type": ctx.type.code, "step": ctx.step, "stage": "HMRC"}
    assert [s["messages"][2]["content"] for s in samples] == [
        "Thoughts: \nContents: navigate(fridge_0, stand_pose_0)", "Thoughts: \nContents: open(fridge_0)",
        "Thoughts: \nContents: communicate('need ham', Alice)"]
    path = write_jsonl(samples, tmp_path / "out" / "dynahmrc.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and all(isinstance(json.loads(ln), dict) for ln in lines)
    assert read_jsonl(path) == samples


def test_the_reasoner_gets_the_prompts_and_the_true_action():
    seen: list[tuple[list[dict], str]] = []

    def reasoner(messages: list[dict], action: str) -> str:
        seen.append((messages, action))
        return f"Because of the plan, {action}."

    samples = samples_from_decisions(decisions()[:2], reasoner)
    assert [a for _, a in seen] == ["navigate(fridge_0, stand_pose_0)", "open(fridge_0)"]
    assert [m["role"] for m in seen[0][0]] == ["system", "user"] and "PLAN-X" in seen[0][0][0]["content"]
    assert samples[1]["messages"][2]["content"] == assistant_text("Because of the plan, open(fridge_0).",
                                                                  "open(fridge_0)")
    assert samples[1]["messages"][2]["content"].startswith("Thoughts: Because of the plan")


def test_llm_reasoner_builds_the_reasoning_call_and_cleans_the_reply():
    stub = StubClient()
    reason = llm_reasoner(stub, max_tokens=400)
    msgs = build_messages(ctx_at(2), "HMRC")
    assert reason(msgs, "pick(ham_0)") == "The ham is in the fridge."
    call = stub.calls[0]
    assert call["messages"] == reasoning_messages(msgs, "pick(ham_0)") and call["max_tokens"] == 400
    system, user = (m["content"] for m in call["messages"])
    assert "the action it actually took" in system
    assert msgs[0]["content"] in user and msgs[1]["content"] in user and "pick(ham_0)" in user
    assert call["call_id"].startswith("dynahmrc-reasoning/")
    assert reason(msgs, "pick(ham_0)") and stub.calls[1]["call_id"] == call["call_id"]  # a logical, stable id
    plain = llm_reasoner(StubClient("The ham is needed next.\nContents: pick(ham_0)"))
    assert plain(msgs, "pick(ham_0)") == "The ham is needed next."
    with pytest.raises(BrainError, match="HTTP 503"):
        llm_reasoner(StubClient(None, error="HTTP 503: down"))(msgs, "pick(ham_0)")
    with pytest.raises(BrainError, match="no reasoning"):
        llm_reasoner(StubClient("   "))(msgs, "pick(ham_0)")


def test_a_reasoning_call_without_a_reply_raises_endpoint_error(tmp_path):
    from collablab.llm import EndpointError, LLMClient
    from collablab.llm.fake_server import FakeOpenAIServer, FakeReply

    msgs = build_messages(ctx_at(3), "HMRC")
    with FakeOpenAIServer(lambda b, s: FakeReply(status=503, error_message="down")) as srv:
        client = LLMClient(EndpointSpec(alias="reasoner-down", model="m", base_url=srv.base_url, api_key_env=None,
                                        max_attempts=1), cache_mode="off")
        with pytest.raises(EndpointError, match="HTTP 503") as ei:
            llm_reasoner(client)(msgs, "pick(ham_0)")
    assert ei.value.kind == "transport" and ei.value.result.call_id.startswith("dynahmrc-reasoning/")


def test_a_moves_second_call_is_a_costmap_sample():
    grid = [list("....."), list("...G."), list("..R.."), list("....."), list(".....")]
    ctx = ctx_at(4, costmap=grid, goal="ham_0")
    samples = samples_from_decisions([(ctx, "move(0.2, -0.2)"), (ctx, "pick(ham_0)")])
    assert len(samples) == 1 and samples[0]["meta"]["stage"] == "HMRC_MOVE"
    assert "Local Costmap" in samples[0]["messages"][1]["content"]
    assert samples[0]["messages"][2]["content"].endswith("Contents: move(0.2, -0.2)")
    first = samples_from_decisions([(ctx_at(4), "move")])  # the first call selects the move
    assert first[0]["meta"]["stage"] == "HMRC" and first[0]["messages"][2]["content"].endswith("Contents: move()")


def test_export_successful_writes_only_successful_episodes(tmp_path):
    from collablab.studies.dynahmrc.spec import run_spec
    from collablab.studies.dynahmrc.training import export_successful, read_jsonl

    specs = [{"kind": "pack", "level": "easy", "team": "Ma-MoMa", "instance": i} for i in range(3)]
    specs.append({"kind": "pack", "level": "hard", "team": "Ma-MoMa", "instance": 0, "max_steps": 2})  # fails
    wins = [run_spec(s)["episode"]["success"] for s in specs]
    path, kept, n = export_successful(specs, tmp_path / "train.jsonl")
    assert kept == sum(wins) and 0 < kept < len(specs)
    rows = read_jsonl(path)
    assert len(rows) == n > 0
    assert {r["meta"]["task_id"] for r in rows} <= {run_spec(s)["episode"]["task"] for s, w in zip(specs, wins) if w}
    for r in rows:
        assert [m["role"] for m in r["messages"]] == ["system", "user", "assistant"]
        assert r["messages"][2]["content"].startswith("Thoughts: \nContents: ") or "Contents:" in r["messages"][2]["content"]
