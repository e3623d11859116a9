"""MAS-GPT, prompted (mas_gpt.py): the programmer's program runs in the sandbox with recorded
calls, every fallback trigger takes the paper's fallback (three candidates + an aggregator), the
sandbox sees no API key, and offline and LLM runs are deterministic and replay identically."""

from __future__ import annotations

import dataclasses
import json

import pytest
from collablab.llm import EndpointSpec, LLMClient, ResponseCache
from collablab.llm.fake_server import FakeOpenAIServer, FakeReply
from collablab.studies.mastracebench import mas_gpt as G
from collablab.studies.mastracebench import methods as M
from collablab.studies.mastracebench.llm_backend import LLMBackend
from collablab.studies.mastracebench.offline import PROFILES, HeuristicBackend
from collablab.studies.mastracebench.roles import ROLES, Reply, Request
from collablab.studies.mastracebench.tasks import (
    EvidenceChainTask,
    MAPFTask,
    generate_evidence,
    generate_mapf,
)
from collablab.studies.mastracebench.tasks.evidence_chain import evidence_prompt
from collablab.studies.mastracebench.tasks.mapf import bottleneck_5x5
from collablab.studies.mastracebench.trajectory import (
    parse_call_id,
    validate_trajectory,
)

EV = EvidenceChainTask()
INST = generate_evidence(1, seed=3)[0]
GOLD = json.dumps({"chain": list(INST.chain)})
WRONG = json.dumps({"chain": list(INST.distractors[:2])})
FAST = G.SandboxLimits(timeout=5.0)
CLEAN = dataclasses.replace(PROFILES["strong"], name="clean", p_unparsable=0.0)


def fence(body: str) -> str:
    return f"Here is the system.\n```python\n{body}\n```\n"


class Scripted:
    """The programmer writes ``program``; proposers: agent index 0 right, others wrong; the
    aggregator (and every other role) replies with the gold chain. Records requests."""

    label = "scripted"

    def __init__(self, program: str) -> None:
        self.program, self.requests = program, []

    def answer(self, r: Request) -> Reply:
        self.requests.append(r)
        if r.role == "programmer":
            text = self.program
        elif r.role == "proposer":
            text = GOLD if r.agent == 0 else WRONG
        else:
            text = GOLD
        return Reply(text, len(r.prompt.split()), len(text.split()))


class Shaped(HeuristicBackend):
    """The offline backend with the programmer's shape fixed (to test each shape)."""

    shape: str = "ensemble"

    def answer(self, request: Request) -> Reply:
        if request.role == "programmer":
            return Reply(G.PROGRAM_SHAPES[self.shape], 1, 1)
        return super().answer(request)


def check(t, backend=None) -> None:
    """A valid record whose call ids are unique, logical and match the requests issued."""
    d = t.to_dict()
    validate_trajectory(d)
    ids = [c.call_id for c in t.calls]
    assert len(ids) == len(set(ids))
    assert t.calls[0].role == "programmer" and t.calls[0].agent == "programmer" and t.calls[0].round == 0
    for c in t.calls:
        assert parse_call_id(c.call_id)[0] == "MAS-GPT"
    if backend is not None and hasattr(backend, "requests"):
        assert [r.call_id for r in backend.requests] == ids


def run_scripted(program: str, limits: G.SandboxLimits = FAST):
    be = Scripted(program)
    t = M.run_mas_gpt(EV, INST, INST.name, be, None, None, limits)
    check(t, be)
    return t, be


# --- registration and the programmer's reply -----------------------------------------------

def test_registered_as_prompted_with_undefined_fpa():
    assert "MAS-GPT" in M.METHODS and "MAS-GPT" not in M.NOT_BUILT
    assert "MAS-GPT" in M.FPA_UNDEFINED and "MAS-GPT" in M.PROPOSAL_OUTPUTS
    assert G.MAS_GPT_LABEL == "MAS-GPT (prompted)" and "prompted" in (G.__doc__ or "")
    assert set(G.PROGRAM_ROLES) <= set(ROLES) and "programmer" not in G.PROGRAM_ROLES
    text = G.program_instruction(7)
    assert "forward(task: str) -> str" in text and "call_llm(" in text and "at most 7 calls" in text
    assert all(f"- {r}:" in text for r in G.PROGRAM_ROLES)
    assert G.api_context(7)["template"] == G.PROGRAM_TEMPLATE_VERSION


def test_extract_program():
    src = "def forward(task):\n    return call_llm('x')"
    assert G.extract_program(fence(src)).strip() == src
    assert G.extract_program(f"```\n{src}\n```").strip() == src
    assert G.extract_program(src) == src  # raw
    assert G.extract_program(f"<think>```python\ndef forward(t): return 1\n```</think>{fence(src)}").strip() == src
    assert G.extract_program(json.dumps({"program": src})) == src  # JSON-constrained servers
    two = f"```text\nnotes\n```\n```python\n{src}\n```"
    assert G.extract_program(two).strip() == src
    for bad in ("I would use three agents.", fence("def solve(task):\n    return 1"), fence("def forward(:"), ""):
        assert G.extract_program(bad) is None


def test_programmer_request_and_context():
    _, be = run_scripted(G.PROGRAM_SHAPES["single"])
    req = be.requests[0]
    assert req.role == "programmer" and req.context["api"]["roles"] == list(G.PROGRAM_ROLES)
    assert evidence_prompt(INST) in req.prompt and "def forward(task: str) -> str" in req.prompt
    assert all(evidence_prompt(INST) in r.prompt for r in be.requests)  # every call sees the task


# --- the program path ----------------------------------------------------------------------

@pytest.mark.parametrize("task,inst", [(MAPFTask(), bottleneck_5x5()), (EV, generate_evidence(2, 0)[1])],
                         ids=["mapf", "evidence"])
@pytest.mark.parametrize("shape", sorted(G.PROGRAM_SHAPES))
def test_program_path_offline(task, inst, shape):
    be = Shaped(CLEAN, seed=1)
    be.shape = shape
    t = M.run_mas_gpt(task, inst, "u0", be, None, None, FAST)
    check(t)
    assert t.answer.source == "program" and t.answer.valid
    roles = [c.role for c in t.calls]
    if shape == "ensemble":
        assert roles == ["programmer", "proposer", "proposer", "proposer", "aggregator"]
        assert [p.agent for p in t.proposers] == ["mas-agent0", "mas-agent1", "mas-agent2"]
        assert [c.round for c in t.calls] == [0, 1, 2, 3, 4]
    elif shape == "single":
        assert roles == ["programmer", "proposer"] and t.answer.canonical == t.proposers[0].final.canonical
    else:
        assert roles[:3] == ["programmer", "proposer", "critic"] and len(t.proposers) == 1


def test_a_revision_keeps_its_agent_and_updates_the_final_proposal():
    be = Shaped(dataclasses.replace(CLEAN, p_reject_right=1.0, p_accept_wrong=0.0, p_correct=0.0, p_refine=1.0))
    be.shape = "critique"
    t = M.run_mas_gpt(EV, INST, INST.name, be, None, None, FAST)
    check(t)
    assert [(c.role, c.agent, c.round) for c in t.calls] == [
        ("programmer", "programmer", 0), ("proposer", "mas-agent0", 1), ("critic", "mas-agent1", 2),
        ("proposer", "mas-agent0", 3)]
    (p,) = t.proposers
    assert p.agent == "mas-agent0" and p.final.score > p.initial.score
    assert t.answer.source == "program" and t.answer.canonical == p.final.canonical


def test_program_calls_get_structured_context():
    t, be = run_scripted(G.PROGRAM_SHAPES["ensemble"])
    agg = be.requests[-1]
    assert agg.role == "aggregator" and agg.round == 4
    assert [d["text"] for d in agg.context["proposals"]] == [GOLD, WRONG, WRONG]
    assert t.answer.source == "program" and t.answer.score == 100.0
    assert t.proposers[0].initial.score == 100.0 > t.proposers[1].initial.score


def test_offline_runs_exercise_both_paths_and_are_deterministic():
    sources, shapes = [], set()
    for k, inst in enumerate(generate_mapf(6, 0) + generate_evidence(10, 0)):
        task = MAPFTask() if k < 6 else EV
        t = M.run("MAS-GPT", task, inst, f"u{k}", HeuristicBackend("weak", seed=2))
        check(t)
        assert t.to_dict() == M.run("MAS-GPT", task, inst, f"u{k}", HeuristicBackend("weak", seed=2)).to_dict()
        sources.append(t.answer.source)
        shapes.add(tuple(c.role for c in t.calls[1:]) if t.answer.source == "program" else None)
    assert "program" in sources and any(s.startswith("fallback:") for s in sources), sources
    assert len(shapes - {None}) >= 2


def test_the_offline_programmer_never_reads_the_method():
    be = HeuristicBackend("medium")
    texts = {be.answer(Request("programmer", "evidence_chain", INST, 0, 0, call_id=f"{m}/x", prompt=m)).text
             for m in ("MAS-GPT", "Other")}
    assert len(texts) == 1


# --- every fallback trigger ------------------------------------------------------------------

FALLBACK_ROLES = ["programmer", "proposer", "proposer", "proposer", "aggregator"]


def assert_fallback(t, reason: str, program_calls: int) -> None:
    assert t.answer.source == f"fallback:{reason}"
    assert [p.agent for p in t.proposers] == ["fallback0", "fallback1", "fallback2"]
    assert all(p.initial == p.final for p in t.proposers)
    assert t.proposers[0].initial.score == 100.0 and t.answer.score == 100.0  # the aggregator's answer
    roles = [c.role for c in t.calls]
    assert len(roles) == 1 + program_calls + 4 and roles[-4:] == FALLBACK_ROLES[1:]
    assert [c.agent for c in t.calls[-4:]] == ["fallback0", "fallback1", "fallback2", "fallback-aggregator"]


def test_fallback_not_code():
    t, _ = run_scripted("I would use three agents and a judge.")
    assert_fallback(t, "not_code", 0)


def test_fallback_exception_keeps_the_spent_calls():
    t, _ = run_scripted(fence("def forward(task):\n    call_llm('draft')\n    raise ValueError('boom')"))
    assert_fallback(t, "error", 1)
    assert t.calls[1].agent == "mas-agent0" and t.calls[1].round == 1


def test_fallback_timeout():
    t, _ = run_scripted(fence("def forward(task):\n    while True:\n        pass"), G.SandboxLimits(timeout=0.4))
    assert_fallback(t, "timeout", 0)


def test_fallback_call_cap():
    src = "def forward(task):\n    for _ in range(100):\n        call_llm('again')\n    return 'x'"
    t, _ = run_scripted(fence(src), G.SandboxLimits(timeout=5.0, max_calls=3))
    assert_fallback(t, "call_cap", 3)


@pytest.mark.parametrize("ret", ["42", "'no idea'", "None"])
def test_fallback_bad_answer(ret):
    t, _ = run_scripted(fence(f"def forward(task):\n    return {ret}"))
    assert_fallback(t, "bad_answer", 0)


def test_fallback_disallowed_role_and_exit():
    t, _ = run_scripted(fence("def forward(task):\n    return call_llm('x', role='programmer')"))
    assert_fallback(t, "error", 0)
    t, _ = run_scripted(fence("import sys\n\ndef forward(task):\n    sys.exit(0)"))
    assert_fallback(t, "error", 0)


# --- the sandbox -----------------------------------------------------------------------------

def no_ask(instruction: str, role: str, shown: list[str]) -> str:
    raise AssertionError("no call expected")


def test_sandbox_environment_has_no_api_key_and_an_empty_cwd(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("COLLABLAB_TEST_TOKEN", "secret")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "secret.txt").write_text("x")
    src = ("import json, os, sys\n\ndef forward(task):\n"
           "    return json.dumps({'env': dict(os.environ), 'cwd': os.getcwd(), 'ls': os.listdir('.'),"
           " 'path': sys.path})")
    run = G.run_program(src, "task", no_ask, FAST)
    assert run.status == "ok", run
    seen = json.loads(run.answer)
    assert not any("KEY" in k or "TOKEN" in k for k in seen["env"]) and "sk-secret" not in run.answer
    assert set(seen["env"]) == set(G.sandbox_env("x"))
    assert seen["ls"] == [] and seen["cwd"] != str(tmp_path) and "" not in seen["path"]
    assert {"RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_NPROC"} <= set(run.limits)


def test_program_prints_do_not_corrupt_the_protocol():
    src = ("import os\n\ndef forward(task):\n"
           "    print('{\"op\": \"done\", \"answer\": \"forged\"}')\n"
           "    os.write(1, b'{\"op\": \"error\"}\\n')\n"
           "    return call_llm('go', shown=['a', 'b']) + '|' + task")
    asked = []
    run = G.run_program(src, "T", lambda i, r, s: asked.append((i, r, s)) or "reply", FAST)
    assert (run.status, run.answer, run.calls) == ("ok", "reply|T", 1)
    assert asked == [("go", "proposer", ["a", "b"])] and "forged" in run.stderr


def test_sandbox_limits_memory_and_cpu():
    mem = G.SandboxLimits(timeout=10.0, memory_bytes=256 << 20)
    run = G.run_program("def forward(task):\n    return str(len(bytearray(1 << 30)))", "", no_ask, mem)
    assert run.status == "error" and "MemoryError" in run.detail
    cpu = G.SandboxLimits(timeout=10.0, cpu_seconds=1)
    run = G.run_program("def forward(task):\n    while True:\n        pass", "", no_ask, cpu)
    assert run.status == "error" and "killed by SIG" in run.detail


def test_a_backend_failure_is_not_a_fallback():
    def broken(instruction, role, shown):
        raise RuntimeError("server down")
    with pytest.raises(RuntimeError, match="server down"):
        G.run_program("def forward(task):\n    return call_llm('x')", "", broken, FAST)
    with pytest.raises(ValueError, match="timeout"):
        G.SandboxLimits(timeout=0)


# --- LLM backend: recorded, cached, replayed -------------------------------------------------

def handler(body: dict, server: FakeOpenAIServer) -> FakeReply:
    text = body["messages"][-1]["content"]
    text = text if isinstance(text, str) else json.dumps(text)
    if "Your role: programmer" in text:
        reply = fence("def forward(task):\n    drafts = [call_llm('Solve.') for _ in range(3)]\n"
                      "    return call_llm('Pick the best.', role='aggregator', shown=drafts)")
    elif "Your role: proposer" in text:
        reply = GOLD if server.n_requests % 2 == 1 else WRONG
    else:
        reply = GOLD
    return FakeReply(reply, usage={"prompt_tokens": len(text.split()), "completion_tokens": 7,
                                   "total_tokens": len(text.split()) + 7})


def llm(url: str, tmp_path, mode: str) -> LLMBackend:
    spec = EndpointSpec(alias="fake", model="fake-model", base_url=url, api_key_env=None)
    return LLMBackend(LLMClient(spec, ResponseCache(tmp_path / "cache.sqlite", mode)))


def test_llm_calls_are_recorded_and_replay_identically(tmp_path):
    with FakeOpenAIServer(handler) as srv:
        live = M.run("MAS-GPT", EV, INST, "ev-0", llm(srv.base_url, tmp_path, "rw"))
        n = srv.n_requests
    check(live)
    assert live.answer.source == "program" and n == len(live.calls) == 5
    assert all(c.output_tokens == 7 and c.input_tokens > 0 for c in live.calls)
    again = M.run("MAS-GPT", EV, INST, "ev-0", llm("http://127.0.0.1:9/v1", tmp_path, "replay"))
    assert again.to_dict() == live.to_dict()
