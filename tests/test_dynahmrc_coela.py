"""CoELA as DynaHMRC's baseline (dynahmrc.tex §4.2; :mod:`collablab.studies.dynahmrc.coela`): the
planning module's options come from the robot's Context, a reply picking option k executes that
plan's primitive action, ``send a message`` calls the communication module (one ``communicate``),
cut and unreadable replies are recorded invalid, and the offline CoELA runs every variation."""

from __future__ import annotations

import re
from typing import Any, Callable

import pytest
from collablab.llm import EndpointSpec, LLMResult, Usage
from collablab.studies.dynahmrc import coela
from collablab.studies.dynahmrc.coela import MESSAGE, PlanOption, letter, plan_options
from collablab.studies.dynahmrc.llm_brain import (
    LLMBrain,
    build_comm_messages,
    build_plan_messages,
    parse_choice,
    read_comm_reply,
)
from collablab.studies.dynahmrc.offline import OfflineBrain, coela_option
from collablab.studies.dynahmrc.spec import run_spec, run_unit

_OPTION = re.compile(r"^([A-Z]{1,2})\. (.+)$", re.M)


class ScriptClient:
    """An LLMClient surface whose reply is ``answer(call kind, user prompt)``; records every call."""

    def __init__(self, answer: Callable[[str, str], str], finish_reason: str = "stop") -> None:
        self.endpoint = EndpointSpec(alias="stub", model="stub-model", api_key_env=None)
        self.answer, self.finish_reason = answer, finish_reason
        self.calls: list[dict[str, Any]] = []

    def chat_sync(self, messages: Any, **kw: Any) -> LLMResult:
        kind = kw["call_id"].split("/")[-2]
        text = self.answer(kind, messages[1]["content"])
        self.calls.append({"kind": kind, "user": messages[1]["content"], "reply": text, **kw})
        return LLMResult(text=text, usage=Usage(100, 20, 120), latency_s=0.0, cache="off", attempts=1, error=None,
                         model="stub-model", endpoint="stub", call_id=kw["call_id"],
                         finish_reason=self.finish_reason)


def options_of(user: str) -> dict[str, str]:
    return {m.group(2): m.group(1) for m in _OPTION.finditer(user.split("Available plans:")[1])}


def llm_unit(client: ScriptClient, **spec: Any):
    sp = {"method": "coela", "team": "Ma-MoMa-UAV", "level": "medium", "max_steps": 3, **spec}
    return run_unit(sp, wrap_team=lambda b: {n: LLMBrain(client, label="llm:stub") for n in b},
                    record_decisions=True)


def contexts():
    """The contexts of an offline CoELA episode's decisions (medium, three robots)."""
    _, log = run_unit({"method": "coela", "team": "Ma-MoMa-UAV", "level": "medium", "max_steps": 6},
                      record_decisions=True)
    return [c for c, _ in log.decisions]


# -- options and prompts --------------------------------------------------------------------------
def test_plan_options_follow_the_context_and_the_prompt_lists_them():
    ctxs = contexts()
    assert len({c.name for c in ctxs}) == 3
    for ctx in ctxs:
        opts = plan_options(ctx)
        kinds = [o.kind for o in opts]
        assert kinds[-1] == "wait" and kinds.count("message") == 1  # it has teammates
        assert kinds == sorted(kinds, key=("put", "grab", "open", "explore", "message", "wait").index)
        searched = set(re.findall(r"reached the target (\w+)-stand", " ".join(ctx.feedback_history)))
        for o in opts:
            if o.kind == "explore":
                closed = {p.handle for p in ctx.places if p.state == "close"}  # searched only once open
                assert ctx.type.mobile and (o.target not in searched or o.target in closed)
                assert o.action.startswith(f"navigate({o.target}, stand_pose_")
            if o.kind == "grab":
                assert o.target in ctx.task.targets and ctx.held is None
                assert o.action in (f"pick({o.target})",) or o.action.startswith(("navigate(", "move("))
            if o.kind == "put":
                assert ctx.held and o.target in (*ctx.task.receptacles, ctx.task.working_table, ctx.at)
        if not ctx.type.mobile:  # the tabletop manipulator cannot go anywhere
            assert not {"explore", "open"} & set(kinds)
            assert all(o.action.startswith(("pick(", "place(", "wait(")) for o in opts if o.kind != "message")
        system, user = build_plan_messages(ctx, opts)[0]["content"], build_plan_messages(ctx, opts)[1]["content"]
        assert "${" not in system + user and ctx.name in system and ctx.task_status in user
        assert options_of(user) == {o.label: letter(i) for i, o in enumerate(opts)}
        assert f"from A to {letter(len(opts) - 1)}" in user
        for h in ctx.message_history:
            assert h in user  # the dialogue history
        comm = build_comm_messages(ctx)
        assert "Recipients:" in comm[0]["content"] and "${" not in comm[0]["content"] + comm[1]["content"]
    # a robot that found a target gets the option to grab it
    found = [c for c in ctxs if c.type.manipulates and c.held is None and c.type.mobile
             and any(o in c.objects for o in c.task.targets)]
    for ctx in found:
        assert {o for o in ctx.task.targets if o in ctx.objects and ctx.objects[o][0] in {p.handle for p in ctx.places}} \
            <= {o.target for o in plan_options(ctx) if o.kind == "grab"} | set(re.findall(r"\w+_\d+", ctx.task_status))


def test_parse_choice_reads_a_letter_or_a_label_and_nothing_else():
    opts = [PlanOption("go grab mug_0 (on desk_1)", "pick(mug_0)", "grab", "mug_0"),
            PlanOption(MESSAGE, "", "message"), PlanOption("wait", "wait()", "wait")]
    assert parse_choice("Thoughts: x\nContents: B", opts) == (1, None)
    assert parse_choice("Contents: (C) wait", opts)[0] == 2
    assert parse_choice("Contents: I choose option A", opts)[0] == 0
    assert parse_choice("Contents: send a message", opts)[0] == 1
    assert parse_choice("Contents: A message to Bob", opts)[0] is None  # "A" is a word here
    assert parse_choice("Contents: Z", opts)[1].startswith("the choice 'Z' is not one of the options A-C")
    assert [letter(i) for i in (0, 25, 26, 27)] == ["A", "Z", "AA", "AB"]


# -- the LLM path ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["explore", "wait"])
def test_a_reply_picking_option_k_executes_that_plans_primitive_action(kind):
    picked: list[str] = []

    def answer(call: str, user: str) -> str:
        assert call == "COELA_PLAN"
        opts = options_of(user)
        label = next((lab for lab in opts if lab.startswith(kind)), "wait")
        picked.append(opts[label])
        return f"Thoughts: let us {kind}.\nContents: {opts[label]}"

    client = ScriptClient(answer)
    rec, log = llm_unit(client)
    assert len(log.decisions) == len(rec["steps"]) == len(picked) == 9
    for (ctx, action), k in zip(log.decisions, picked):
        opts = plan_options(ctx)
        chosen = opts[[letter(i) for i in range(len(opts))].index(k)]
        assert action == chosen.action and chosen.kind in (kind, "wait")
    assert any(d[1].startswith("navigate(") for d in log.decisions) == (kind == "explore")
    assert {c["module"] for c in log.calls} == {"plan"} and all(c["stage"] == "HMRC" for c in log.calls)
    assert client.calls[0]["call_id"].endswith("/Bob/COELA_PLAN/s1")


def test_send_a_message_calls_the_communication_module_once_and_communicates():
    def answer(call: str, user: str) -> str:
        if call == "COELA_PLAN":
            return f"Thoughts: tell them.\nContents: {options_of(user)[MESSAGE]}"
        return "Thoughts: they should know.\nRecipients: Alice, Nobody\nContents: mug_0 is on desk_1"

    client = ScriptClient(answer)
    rec, log = llm_unit(client, max_steps=1)
    kinds = [c["kind"] for c in client.calls]
    assert kinds == ["COELA_PLAN", "COELA_COMM"] * 3
    assert [c["module"] for c in log.calls] == ["plan", "comm"] * 3
    steps = rec["steps"]
    assert [s["name"] for s in steps] == ["communicate"] * 3
    assert steps[0]["action"] == "communicate('mug_0 is on desk_1', Alice)"  # a name outside the team is dropped
    assert steps[1]["action"] == "communicate('mug_0 is on desk_1', all)"  # Alice's only named teammate is herself
    assert rec["episode"]["cc"] > 0
    # a comm reply without Contents is an invalid action, not a message
    bad = read_comm_reply("Thoughts: hmm", plan_ctx := contexts()[0])
    assert bad.invalid and bad.value is None
    assert read_comm_reply("Contents: hello", plan_ctx).value == "communicate('hello', all)"


def test_a_truncated_or_unreadable_plan_reply_is_recorded_invalid_and_never_parsed():
    cut = ScriptClient(lambda call, user: "Thoughts: long...\nContents: A", finish_reason="length")
    rec, log = llm_unit(cut, max_steps=1)
    assert all(c["invalid"].startswith("truncated:") and c["finish_reason"] == "length" for c in log.calls)
    assert [s["name"] for s in rec["steps"]] == ["invalid"] * 3 and not log.decisions
    assert rec["episode"]["truncated_replies"] == 3
    odd = ScriptClient(lambda call, user: "Thoughts: x\nContents: ZZ")
    rec, log = llm_unit(odd, max_steps=1)
    assert all(c["invalid"].startswith("the choice 'ZZ' is not one of the options") for c in log.calls)
    assert [s["name"] for s in rec["steps"]] == ["invalid"] * 3


def test_a_truncated_message_is_an_invalid_action():
    def answer(call: str, user: str) -> str:
        return f"Contents: {options_of(user)[MESSAGE]}" if call == "COELA_PLAN" else "Thoughts: a long"

    client = ScriptClient(answer)
    client.finish_reason = "stop"
    orig = client.chat_sync

    def chat_sync(messages: Any, **kw: Any) -> LLMResult:
        r = orig(messages, **kw)
        return r if "COELA_PLAN" in kw["call_id"] else LLMResult(**{**r.__dict__, "finish_reason": "length"})

    client.chat_sync = chat_sync  # type: ignore[method-assign]
    rec, log = llm_unit(client, max_steps=1)
    comm = [c for c in log.calls if c["module"] == "comm"]
    assert len(comm) == 3 and all(c["invalid"].startswith("truncated:") for c in comm)
    assert [s["name"] for s in rec["steps"]] == ["invalid"] * 3 and rec["episode"]["cc"] == 0


# -- the offline path ------------------------------------------------------------------------------
def test_offline_coela_picks_the_option_its_rules_would_act_on():
    for ctx in contexts():
        opts = plan_options(ctx)
        brain = OfflineBrain(ctx.name, ctx.type.code)
        action = brain._choose(ctx)
        k = coela_option(action, opts, ctx)
        o = opts[k]
        assert o.action == action or o.kind in ("message", "wait") or \
            (action.startswith("navigate(") and o.action.split(",")[0] == action.split(",")[0]) or \
            (action == "move" and o.action.startswith("move(")), (action, o)
    opts = [PlanOption("explore desk_1 (bedroom)", "navigate(desk_1, stand_pose_1)", "explore", "desk_1"),
            PlanOption(MESSAGE, "", "message"), PlanOption("wait", "wait()", "wait")]
    assert coela_option("navigate(desk_1, stand_pose_0)", opts, None) == 0
    assert coela_option("communicate('x', all)", opts, None) == 1
    assert coela_option("pick(nothing_0)", opts, None) == 2


@pytest.mark.parametrize("sp", [
    {"kind": "sort", "level": "easy", "instance": 1},  # the manipulator takes a target off the wrong panel
    {"variation": "CTO", "instance": 1, "seed": 1},  # a mover sets down an object CTO made no target
    {"variation": "IRZ", "kind": "sort"},  # a mover answers "please open" a container it found restricted
])
def test_every_action_of_the_offline_rules_is_some_plan_options_action(sp, monkeypatch):
    """CoELA's plan list covers the offline robot: its rules' action is an option's own action
    (a message is the message option, a bare move the grab option that moves), never ``wait``
    standing in for an action the list lacks."""
    from collablab.studies.dynahmrc import offline

    orig, seen = offline.coela_option, []

    def check(action: str, options: list, ctx: Any) -> int:
        i = orig(action, options, ctx)
        o = options[i]
        seen.append(action)
        assert o.action == action or (o.kind == "message" and action.startswith("communicate(")) \
            or (action == "move" and o.action == "move()"), (action, [x.label for x in options])
        return i

    monkeypatch.setattr(offline, "coela_option", check)
    run_unit({"method": "coela", "team": "Ma-MoMa-UAV", "level": "medium", "kind": "pack", **sp})
    assert len(seen) > 20


@pytest.mark.parametrize("sp", [
    {"level": "easy"}, {"level": "medium"}, {"level": "medium", "team": "Ma-MoMa"},
    {"variation": "CTO"}, {"variation": "IRZ"}, {"variation": "ANC", "team": "Ma-MoMa"},
    {"variation": "REC"}, {"variation": "REC", "remove": "MoMa"},
])
def test_offline_coela_runs_static_and_under_each_variation(sp):
    spec = {"method": "coela", "team": "Ma-MoMa-UAV", "kind": "pack", **sp}
    rec, log = run_unit(spec)
    e = rec["episode"]
    assert e["backend"] == "heuristic" and e["method"] == "coela" and rec["steps"]
    plans = [c for c in log.calls if c.get("module") == "plan"]
    comms = [c for c in log.calls if c.get("module") == "comm"]
    assert len(plans) == len(rec["steps"])  # one planning call per action
    assert len(comms) == sum(s["name"] == "communicate" for s in rec["steps"])
    assert run_spec(dict(spec)) == rec  # deterministic
    if sp.get("variation") not in (None, "none"):
        assert sp["variation"] in e["events"]
