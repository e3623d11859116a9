"""A real model through every MASTraceBench method: SmolLM2-135M (llama.cpp, loopback) answers every
role of every method in ``methods.METHODS`` (read at run time, so methods added later are run too)
on two small instances, the MAPF 5x5 bottleneck and a 7-fact EvidenceChain case; the full
trajectories are recorded through :class:`LLMBackend` with a ResponseCache in ``rw`` mode, then,
with the server stopped, the same runs replay from the cache into identical records.

Skips when the local model is not installed, unless ``COLLABLAB_LOCAL_MODEL=1`` (CI), where a
missing model is a failure. SmolLM2-135M is far too small to solve either task; these tests check
the plumbing with real generations: every trajectory validates, every call carries the server's
token counts, one cache row per recorded call, every proposer output is the graded reply of one of
the unit's calls (valid and scored, or invalid with score 0), every answer names its source.

Cost (measured on 2 shared cores, one llama.cpp thread, before the Q8_0 file): the paper's main
configuration (3 proposers, 5 MAV questions, 2 rebuttals, 3 refinement rounds, 2 critics) made 159
calls over the eleven methods and both instances in about 250 s. :data:`CONFIG` below keeps every
loop of every method (two proposers, two MAV questions, one debate/MAPR round, one rebuttal, up to
two reflection cycles, one AgentVerse refinement with one critic, 2-4 claims): at most 52 calls per
instance for the eleven fixed-workflow methods, plus MAS-GPT's (programmer + fallback: 4). Measured
with the twelve methods: 109 calls; the whole file took 2.7-3.8 min (1.4-2.1 s a call) and 7.3 min
with other jobs competing for the cores (4 s a call); the replay takes well under a second. With the
Q8_0 file, flash attention and no RAM prompt cache: 240 s alone on the quiet machine (2.2 s a call,
most of it the 64-token JSON-grammar generations).
``response_format={"type": "json_object"}`` (llama.cpp's JSON grammar) makes every reply one JSON
object, so the parsers and role formats have something to read; 64 tokens hold a 2-robot plan or a
chain (longer replies are cut off and recorded invalid).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from collablab.llm import EndpointSpec, LLMClient, ResponseCache
from collablab.llm.local_server import LocalServer, local_model_status
from collablab.studies.mastracebench import methods as M
from collablab.studies.mastracebench.llm_backend import LLMBackend
from collablab.studies.mastracebench.tasks import EvidenceChainTask, MAPFTask, bottleneck_5x5, generate_evidence
from collablab.studies.mastracebench.tasks.base import is_invalid
from collablab.studies.mastracebench.trajectory import Proposal, Trajectory, parse_call_id, validate_trajectory

READY, WHY = local_model_status()
if not READY and os.environ.get("COLLABLAB_LOCAL_MODEL") == "1":
    raise RuntimeError(f"COLLABLAB_LOCAL_MODEL=1 but the local model is unavailable: {WHY}")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not READY, reason=f"local model unavailable: {WHY}")]

MAX_TOKENS = 64
JSON_OBJECT = {"type": "json_object"}
LABEL = "llamacpp:smollm2-135m-instruct"
#: every loop of every method, at the smallest size that still iterates (see the module docstring)
CONFIG = M.MethodConfig(proposers=2, validators=("correctness", "completeness"), rounds=1, rebuttals=1,
                        reflections=2, refine_rounds=1, critics=1)
EVIDENCE = generate_evidence(3, seed=0)[2]  # 7 facts, a 4-fact gold chain: the shortest prompt
INSTANCES = [(MAPFTask(), bottleneck_5x5(), "bottleneck_5x5"), (EvidenceChainTask(), EVIDENCE, EVIDENCE.name)]
#: roles whose reply is a solution in the task's format (graded into a proposal or an answer)
SOLUTION_ROLES = {"proposer", "affirmative", "negative", "aggregator", "judge", "synthesizer"}
#: answer sources that are steps, not an agent or role of a call (a ``fallback:<reason>`` is read by its head)
SOURCES = {"vote", "program", "fallback"}


def backend(spec: EndpointSpec, cache: Path, mode: str) -> LLMBackend:
    return LLMBackend(LLMClient(spec, ResponseCache(cache, mode)), max_tokens=MAX_TOKENS,
                      response_format=JSON_OBJECT, label=LABEL)


def run_all(be: LLMBackend) -> tuple[dict[tuple[str, str], Trajectory], dict[str, float]]:
    """Every method (as listed now) on every instance; wall seconds per method."""
    out: dict[tuple[str, str], Trajectory] = {}
    secs: dict[str, float] = {}
    for task, inst, iid in INSTANCES:
        for method in list(M.METHODS):
            t0 = time.perf_counter()
            out[(method, iid)] = M.run(method, task, inst, iid, be, CONFIG)
            secs[method] = secs.get(method, 0.0) + time.perf_counter() - t0
    return out, secs


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Live runs against the server, then (server stopped) the same runs replayed from the cache."""
    tmp = tmp_path_factory.mktemp("mastracebench_local")
    cache = tmp / "llm_cache.sqlite"
    out: dict[str, Any] = {"cache": cache, "methods": list(M.METHODS)}
    # one thread: on 2 shared cores llama.cpp's second thread mostly spins. No RAM prompt cache:
    # it saves the whole model state after every call (0.3 s) and loads one on a hit (0.6 s), more
    # than it saves on these short prompts (the last reply's prefix is reused without it); the
    # file took 288 s with it and 240 s without, alone on the quiet machine, for the same 109 calls
    srv = LocalServer(n_threads=1, n_ctx=2048, startup_timeout_s=90)
    try:
        spec = srv.start()
        t0 = time.perf_counter()
        out["live"], out["live_secs"] = run_all(backend(spec, cache, "rw"))
        out["live_s"] = time.perf_counter() - t0
    finally:
        srv.stop()
    out["server_running"] = srv.running
    t0 = time.perf_counter()
    out["replay"], _ = run_all(backend(spec, cache, "replay"))
    out["replay_s"] = time.perf_counter() - t0
    return out


def grade(task: Any, inst: Any, text: str) -> Proposal:
    """What methods.run records for a reply: the task's parse and score, invalid -> score 0."""
    parsed = task.parse(text, inst)
    if is_invalid(parsed):
        return Proposal.invalid()
    return Proposal(task.canonical(parsed), float(task.score(parsed, inst)))


def test_every_method_ran_on_every_instance_and_every_trajectory_validates(runs):
    assert runs["methods"] == list(M.METHODS) and len(runs["methods"]) >= 11
    assert set(runs["live"]) == {(m, iid) for m in runs["methods"] for _, _, iid in INSTANCES}
    for (method, iid), t in runs["live"].items():
        d = t.to_dict()
        validate_trajectory(d)
        assert (d["method"], d["instance"], d["backend"], d["state"]) == (method, iid, LABEL, None)
        assert t.calls, (method, iid)  # (a MAS-GPT program without proposer calls has no Proposer Agents)


def test_every_call_has_the_servers_token_counts_and_one_cache_row(runs):
    rows = {r["call_id"]: r for r in ResponseCache(runs["cache"], "rw").rows()}
    calls = [c for t in runs["live"].values() for c in t.calls]
    assert len(calls) == len(rows) == len({c.call_id for c in calls})  # one server reply stored per call
    for c in calls:
        row = rows[c.call_id]
        assert c.input_tokens > 0 and c.output_tokens > 0, c
        assert (c.input_tokens, c.output_tokens) == (row["prompt_tokens"], row["completion_tokens"])
        assert 1 <= c.output_tokens <= MAX_TOKENS and row["endpoint"] == "local-smollm2"
        params = json.loads(row["request"])["params"]
        assert params["response_format"] == JSON_OBJECT and params["max_tokens"] == MAX_TOKENS
        assert parse_call_id(c.call_id)[4] == c.role
    per_method = {m: sum(len(t.calls) for (mm, _), t in runs["live"].items() if mm == m) for m in runs["methods"]}
    print(f"\nlive {runs['live_s']:.1f}s for {len(calls)} calls ({runs['live_s'] / len(calls):.2f} s/call), "
          f"replay {runs['replay_s']:.3f}s; prompt tokens max {max(c.input_tokens for c in calls)}, "
          f"cut at {MAX_TOKENS}: {sum(c.output_tokens == MAX_TOKENS for c in calls)}")
    for m in runs["methods"]:
        print(f"  {m:16s} {per_method[m]:3d} calls {runs['live_secs'][m]:6.1f}s")


def test_every_output_is_a_graded_reply_and_every_answer_names_its_source(runs):
    rows = {r["call_id"]: r["text"] for r in ResponseCache(runs["cache"], "rw").rows()}
    tasks = {iid: (task, inst) for task, inst, iid in INSTANCES}
    n_valid = n_invalid = 0
    for (method, iid), t in runs["live"].items():
        task, inst = tasks[iid]
        graded = [grade(task, inst, rows[c.call_id]) for c in t.calls if c.role in SOLUTION_ROLES]
        names = [p.agent for p in t.proposers]
        for p in t.proposers:
            for out in (p.initial, p.final):
                assert out in graded, (method, iid, p.agent, out)  # the grade of one of this unit's replies
                assert (out.valid and out.canonical is not None and 0 <= out.score <= t.s_star) or \
                    (not out.valid and out.score == 0 and out.canonical is None)
                n_valid += out.valid
                n_invalid += not out.valid
        a = t.answer
        as_prop = Proposal(a.canonical, a.score, a.valid)
        if a.source != "program":  # MAS-GPT's program returns its answer: graded, but not a reply
            assert as_prop in graded or as_prop == Proposal.invalid(), (method, iid, a)  # no valid vote: invalid
        known = set(names) | {c.agent for c in t.calls} | {c.role for c in t.calls} \
            | {c.role + "s" for c in t.calls} | SOURCES
        assert a.source.split(":")[0] in known, (method, a.source)
        if a.source in names:  # an answer that is a proposer's: its final proposal
            assert as_prop == t.proposers[names.index(a.source)].final, (method, iid)
        if a.source == "vote" and a.valid:  # a majority vote picks one of the final proposals
            assert as_prop in [p.final for p in t.proposers], (method, iid)
    assert n_valid + n_invalid == 2 * sum(len(t.proposers) for t in runs["live"].values())
    print(f"\nproposer outputs: {n_valid} valid, {n_invalid} invalid; answers valid "
          f"{sum(t.answer.valid for t in runs['live'].values())} of {len(runs['live'])}")


def test_replay_without_the_server_gives_identical_records(runs):
    assert not runs["server_running"]
    assert set(runs["replay"]) == set(runs["live"])
    for key, t in runs["live"].items():
        assert runs["replay"][key].to_dict() == t.to_dict(), key
    assert runs["replay_s"] * 20 <= runs["live_s"], (runs["replay_s"], runs["live_s"])
