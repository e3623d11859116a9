"""The paper pipeline (mecobench.txt B.3-B.4, Figs. 25-27) against a scripted OpenAI-compatible
server, and the assisted one beside it: no object id in any prompt to an acting agent, Table 7's
action space without aliases, no re-ask, the model decoder alone grounds objects, the pipeline in
the records, and replay from the cache with the server gone."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import pytest

from collablab.agents.llm import decoding as D
from collablab.llm.fake_server import FakeOpenAIServer, FakeReply
from collablab.studies.mecobench import resolve, run_spec
from collablab.studies.mecobench.spec import task_of
from conftest import replay_comparable


def text_of(body: dict, roles: tuple[str, ...] = ("system", "user", "assistant")) -> str:
    out = []
    for m in body["messages"]:
        if m["role"] in roles:
            c = m["content"]
            out.append(c if isinstance(c, str) else " ".join(p.get("text", "") for p in c if p.get("type") == "text"))
    return "\n".join(out)


def images_of(body: dict) -> int:
    return sum(1 for m in body["messages"] if isinstance(m["content"], list)
               for p in m["content"] if p.get("type") == "image_url")


def pictures_of(body: dict) -> list:
    """The request's images, decoded (PNG data URLs)."""
    import base64
    import io

    from PIL import Image

    out = []
    for m in body["messages"]:
        for p in (m["content"] if isinstance(m["content"], list) else []):
            if p.get("type") == "image_url":
                head, data = p["image_url"]["url"].split(",", 1)
                assert head == "data:image/png;base64", head
                out.append(Image.open(io.BytesIO(base64.b64decode(data))))
    return out


def phase_of(body: dict) -> str:
    t = text_of(body, ("user",))
    for marker, phase in (("resolving object_ids", "decode"), ("produce TWO outputs", "act"),
                          ("acting as the leader", "assign"), ("report message to the leader", "report"),
                          ("FIRST discussion round", "discuss"), ("FOLLOW-UP", "discuss"),
                          ("send ONE helpful message", "broadcast")):
        if marker in t:
            return phase
    return "unknown"


def act(action: str, p1: str | None = None, room: str | None = None, **extra: Any) -> str:
    a = {"action": action, "parameter_1": {"name": p1, "description": "the one I see"} if p1 else None,
         "parameter_2": None, "room": room, **extra}
    return f"[THINKING] next.\n[ACTION] {json.dumps(a)}\n[THINKING] note.\n[MEMORY] {json.dumps({'global': {}})}"


#: Agent 0's act replies in order (the last repeats): a room, an object the decoder grounds,
#: alias and extra names Table 7 does not list, an unreadable reply.
ACTS = [act("walk_to_room", room="kitchen"), act("walk", "kitchentable"), act("pick up", "cupcake"),
        act("wait"), act("close", "fridge"), "I am not sure what to do.", act("grab", "cupcake")]


class Scripted:
    """Act replies by agent and count; the decoder answers the candidate of the named class (else
    the first, Fig. 25 rule 6) or, with ``decoder_reply``, that text; every body is kept."""

    def __init__(self, decoder_reply: str | None = None, image_tokens: int | None = None) -> None:
        self.count: Counter = Counter()
        self.bodies: list[dict] = []
        self.decoder_reply = decoder_reply
        self.image_tokens = image_tokens

    def __call__(self, body: dict, srv: FakeOpenAIServer) -> FakeReply:
        self.bodies.append(body)
        agent = int(re.search(r"You are Agent (\d+)", body["messages"][0]["content"]).group(1))
        ph = phase_of(body)
        n = self.count[(ph, agent)]
        self.count[(ph, agent)] += 1
        usage = None
        if self.image_tokens is not None and images_of(body):
            usage = {"prompt_tokens": 500, "completion_tokens": 5, "total_tokens": 505,
                     "prompt_tokens_details": {"image_tokens": self.image_tokens * images_of(body)}}
        if ph == "decode":
            if self.decoder_reply is not None:
                return FakeReply(self.decoder_reply, usage=usage)
            inp = json.loads(text_of(body, ("user",)).split("Input JSON:", 1)[1])
            want = (inp.get("parameter_1") or {}).get("name")
            ids = [c["id"] for c in inp["candidates"] if c["class_name"] == want] or [c["id"] for c in inp["candidates"]]
            return FakeReply(json.dumps({"action": inp["action"], "parameter_ids": ids[:1]}), usage=usage)
        if ph == "act":
            return FakeReply(ACTS[min(n, len(ACTS) - 1)] if agent == 0 else act("walk_to_room", room="bedroom"),
                             usage=usage)
        if ph == "assign":
            return FakeReply('[THINKING] t\n[MESSAGES] [{"receiver": "Agent 0", "type": "assignment", "content": '
                             '"search the kitchen"}, {"receiver": "Agent 1", "type": "assignment", "content": '
                             '"search the bedroom"}]', usage=usage)
        if ph == "discuss":
            return FakeReply("[THINKING] t\n[READY] <READY>\n[MESSAGE] I search the kitchen.\n[LOCAL_CONTEXT] kitchen",
                             usage=usage)
        return FakeReply("[THINKING] t\n[MESSAGE] I search the kitchen.", usage=usage)


def spec(srv: FakeOpenAIServer, tmp_path, **kw: Any) -> dict[str, Any]:
    return {"task_id": "cl003-p", "policy": "llm", "model": "fake-vl", "base_url": srv.base_url, "provider": "vllm",
            "n_agents": 2, "budget": 16, "llm_cache": str(tmp_path / "cache.sqlite"), "llm_cache_mode": "rw",
            "llm_max_attempts": 1, **kw}


_ID_FORMS = (re.compile(r"\((\d+)\)"), re.compile(r"\bid\b\W{0,4}(\d+)", re.I))


def ids_in(text: str, node_ids: set[int]) -> set[int]:
    """The scene's node ids ``text`` names as ``(353)``, ``id 353``, ``id: 353`` or ``"id": 353``."""
    return {int(m) for rx in _ID_FORMS for m in rx.findall(text)} & node_ids


def node_ids(s: dict[str, Any]) -> set[int]:
    return set(task_of(resolve(s)).scene.nodes)


def own_steps(rec: dict, agent: int = 0) -> list[dict]:
    return [s for s in rec["steps"] if s["agent"] == agent]


# -- no ids reach an acting agent ---------------------------------------------------------------------
@pytest.mark.parametrize("task,protocol,multimodal", [
    ("cl003-p", "broadcast", False), ("cl003-p", "discuss", True), ("cl003-p", "leader_vision", False),
    ("cl003-p", "leader", True), ("cl003-s", "shared_memory", False), ("cl003-s", "leader_vision", True)])
def test_paper_prompts_to_acting_agents_carry_no_object_id(serve, tmp_path, task, protocol, multimodal):
    script = Scripted()
    srv = serve(script)
    s = spec(srv, tmp_path, task_id=task, protocol=protocol, multimodal=multimodal)
    rec = run_spec(s)
    ids = node_ids(s)
    phases = Counter(phase_of(b) for b in script.bodies)
    assert phases["act"] >= 8 and phases["decode"] >= 1, phases
    for b in script.bodies:
        if phase_of(b) != "decode":
            assert not ids_in(text_of(b), ids), (phase_of(b), sorted(ids_in(text_of(b), ids))[:5])
    # the scan finds ids where they are: the decoder's candidates
    assert all(ids_in(text_of(b), ids) for b in script.bodies if phase_of(b) == "decode")
    assert rec["episode"]["pipeline"] == "paper"


def test_assisted_prompts_do_show_ids(serve, tmp_path):
    script = Scripted()
    s = spec(serve(script), tmp_path, pipeline="assisted")
    rec = run_spec(s)
    acts = [text_of(b) for b in script.bodies if phase_of(b) == "act"]
    assert all(ids_in(t, node_ids(s)) for t in acts)
    assert rec["episode"]["pipeline"] == "assisted"


def test_text_only_paper_agent_reads_its_view_as_class_lines_and_a_multimodal_one_gets_the_image(serve, tmp_path):
    script = Scripted()
    run_spec(spec(serve(script), tmp_path, budget=4))
    act0 = next(text_of(b, ("user",)) for b in script.bodies if phase_of(b) == "act")
    seen = act0.split("**Current observation")[1].split("**Holding objects:**")[0]
    assert "as text instead of images" in seen and re.search(r"^- [a-z]+", seen, re.M)
    assert all(images_of(b) == 0 for b in script.bodies)
    mm = Scripted()
    run_spec(spec(serve(mm), tmp_path, budget=4, multimodal=True, seed=1))
    act_mm = next(b for b in mm.bodies if phase_of(b) == "act")
    assert "**Current observation" not in text_of(act_mm) and images_of(act_mm) == 1
    assert "Most of your current observation images are in this room." in text_of(act_mm)


# -- Table 7, no aliases, no re-ask, the decoder alone ------------------------------------------------
def test_paper_action_space_is_table7_without_aliases_and_nothing_is_reasked(serve, tmp_path):
    script = Scripted()
    rec = run_spec(spec(serve(script), tmp_path))
    s0 = own_steps(rec)
    notes0 = [json.loads(s["note"]) for s in s0]
    assert [s["action"] for s in s0[:6]] == ["walk_to_room", "walk", "invalid_reply", "invalid_reply",
                                             "invalid_reply", "invalid_reply"]
    assert "'pick up' is not in Table 7's action space" in notes0[2]["error"]
    assert "'wait'" in notes0[3]["error"] and "'close'" in notes0[4]["error"]
    assert notes0[1]["match"] == {"parameter_1": "decoder"} and notes0[1]["decoder"] == "ok"
    assert notes0[0].get("decoder") is None  # walk_to_room: a rule-based mapping (B.4), no decoder call
    assert all(c["asks"] == 1 for n in notes0 for c in n["calls"])  # the unreadable reply (step 5) too
    assert all(sum(m["role"] == "user" for m in b["messages"]) == 1 for b in script.bodies)
    act = next(text_of(b, ("user",)) for b in script.bodies if phase_of(b) == "act")
    assert '"<one of: walk / walk_to_room / grab / put_in / put_on / open >"' in act
    assert "wait" not in act.split("### Valid Actions")[1].split("### Interaction Rules")[0]
    # the feedback names Table 7's space, not the world's wider one
    later = [text_of(b, ("user",)) for b in script.bodies if phase_of(b) == "act" and "You are Agent 0" in text_of(b)][3]
    fb = later.split("**Last action feedback:**")[1].split("**")[0]
    assert "allowed actions: walk, walk_to_room, grab, put_in, put_on, open" in fb and "close" not in fb


def test_assisted_maps_aliases_and_reasks(serve, tmp_path):
    script = Scripted()
    rec = run_spec(spec(serve(script), tmp_path, pipeline="assisted"))
    s0 = own_steps(rec)
    n0 = [json.loads(s["note"]) for s in s0]
    assert s0[2]["action"] != "invalid_reply" and "pick up" not in (n0[2].get("error") or "")  # an alias of grab
    assert s0[3]["action"] == "wait" and s0[3]["status"] == "ok"
    assert n0[5]["calls"][-1]["asks"] == 2  # the unreadable reply was asked again


def test_an_unusable_decoder_reply_is_a_recorded_invalid_grounding_without_rule_fallback(serve, tmp_path):
    script = Scripted(decoder_reply="I cannot tell which one.")
    rec = run_spec(spec(serve(script), tmp_path, budget=4))
    s0 = own_steps(rec)[1]  # walk kitchentable: the rules would ground it, the paper's decoder alone may
    n = json.loads(s0["note"])
    assert s0["action"] == "invalid_grounding" and "decoder reply unusable" in n["error"]
    assert [c["phase"] for c in n["calls"]][-2:] == ["act", "decode"] and n["calls"][-1]["asks"] == 1


def test_a_decoder_call_without_a_reply_fails_the_episode(serve, tmp_path):
    from collablab.llm import EndpointError

    script = Scripted(decoder_reply=None)

    def handler(body: dict, srv: FakeOpenAIServer) -> FakeReply:
        if phase_of(body) == "decode":
            return FakeReply(status=500, error_message="decoder down")
        return script(body, srv)
    srv = FakeOpenAIServer(handler).start()
    try:
        with pytest.raises(EndpointError, match="/decode/"):
            run_spec(spec(srv, tmp_path, budget=4))
    finally:
        srv.stop()


# -- images, their tokens, replay ------------------------------------------------------------------------
def test_multimodal_paper_sends_one_view_to_acting_calls_two_to_the_decoder_and_replays(serve, tmp_path):
    script = Scripted(image_tokens=258)
    srv = serve(script)
    s = spec(srv, tmp_path, protocol="leader_vision", multimodal=True)
    live = run_spec(s)
    by_phase: dict[str, list[int]] = {}
    for b in script.bodies:
        by_phase.setdefault(phase_of(b), []).append(images_of(b))
    assert set(by_phase["decode"]) == {2} and set(by_phase["act"]) == {1}
    assert set(by_phase["assign"]) == {1} and set(by_phase["report"]) == {1}  # the combined image; a worker's own
    # the paper's cameras (B.1): every acting and decoder image a 1024 x 256 four-view PNG; the
    # decoder's second image is the annotated copy, and its candidates carry their boxes (Fig. 18)
    for b in script.bodies:
        if phase_of(b) in ("act", "decode"):
            pics = pictures_of(b)
            assert all(p.format == "PNG" and p.size == (1024, 256) for p in pics), [p.size for p in pics]
            if phase_of(b) == "decode":
                assert pics[0].tobytes() != pics[1].tobytes()
                assert '"bbox": [' in text_of(b, ("user",))
    calls = [c for st in live["steps"] for c in json.loads(st["note"])["calls"]]
    dec = [c for c in calls if c["phase"] == "decode"]
    assert dec and all(c["images"] == 2 and c["image_tokens"] == 516 for c in dec)
    assert all(c["images"] == 1 and c["image_tokens"] == 258 for c in calls if c["phase"] == "act")
    # the cache keeps the images' hashes, not their bytes
    from collablab.llm import ResponseCache

    rows = ResponseCache(tmp_path / "cache.sqlite", "rw").rows()
    assert rows and all("base64" not in r["request"] and len(r["request"]) < 60_000 for r in rows)
    assert any(";sha256," in r["request"] for r in rows)
    srv.stop()
    again = run_spec({**s, "llm_cache_mode": "replay"})
    assert replay_comparable(again) == replay_comparable(live)
    assert [c.get("image_tokens") for st in again["steps"] for c in json.loads(st["note"])["calls"]] == \
        [c.get("image_tokens") for c in calls]


def test_views_change_the_cache_key(serve, tmp_path, monkeypatch):
    """Another picture is another request: a replay with a different raw view misses."""
    from PIL import ImageDraw

    from collablab.llm.cache import CacheMiss
    from collablab.world import render

    script = Scripted()
    srv = serve(script)
    s = spec(srv, tmp_path, multimodal=True, budget=2)
    run_spec(s)
    real = render.agent_views

    def marked(world, agent):
        raw, ann = real(world, agent)
        ImageDraw.Draw(raw).point((0, 0), fill=(1, 2, 3))
        return raw, ann
    monkeypatch.setattr(render, "agent_views", marked)
    with pytest.raises(CacheMiss):
        run_spec({**s, "llm_cache_mode": "replay"})


# -- the pieces ---------------------------------------------------------------------------------------------
def test_decoding_reads_table7_names_and_decoder_ids():
    assert D.action_name(" Grab ", D.TABLE7_PARALLEL) == "grab"
    assert D.action_name("pick up", D.TABLE7_PARALLEL) is None and D.action_name("wait", D.TABLE7_SEQUENTIAL) is None
    assert D.action_name("receive", D.TABLE7_PARALLEL) is None and D.action_name("receive", D.TABLE7_SEQUENTIAL)
    obs = {"agent": 0, "room": "kitchen", "holding": [{"id": 5, "class_name": "mug"}], "visible": [
        {"id": 11, "class_name": "kitchentable", "properties": ["SURFACES"], "states": []},
        {"id": 21, "class_name": "juice", "properties": ["GRABBABLE"], "states": [], "on": 11}]}
    g = D.read_decoded("grab", {"parameter_ids": ["21"]}, None, obs)  # Fig. 18 writes ids as strings
    assert g.ok and g.action.obj == 21
    put = D.read_decoded("put_on", {"parameter_ids": [5, 11]}, None, obs)
    assert put.ok and (put.action.obj, put.action.target) == (5, 11)
    assert not D.read_decoded("put_on", {"parameter_ids": [11, 5]}, None, obs).ok  # [0] must be held
    assert not D.read_decoded("grab", {"parameter_ids": [99]}, None, obs).ok
    assert not D.read_decoded("grab", None, "no JSON", obs).ok
    inp = D.decoder_input("grab", {"parameter_1": {"name": "juice"}}, obs)
    assert inp["candidates"][1]["on"] == {"id": 11, "class_name": "kitchentable"} and inp["holding_objects"][0]["id"] == 5
    with pytest.raises(ValueError, match="structure: 'mixed' is not allowed; allowed: parallel, sequential"):
        D.table7("mixed")


@pytest.mark.parametrize("extra,msg", [
    ({"pipeline": "magic"}, "pipeline: 'magic' is not allowed; allowed: paper, assisted"),
    ({"grounding": "rules"}, "grounding: 'rules' is not allowed with pipeline 'paper'; allowed: llm or None"),
    ({"llm_max_reasks": 1}, "llm_max_reasks: 1 is not allowed with pipeline 'paper' (no re-ask); allowed: 0 or None"),
    ({"pipeline": "assisted", "grounding": "llm"}, "grounding: 'llm' is not allowed with pipeline 'assisted'")])
def test_pipeline_spec_errors_name_the_field(extra, msg):
    with pytest.raises(ValueError, match=re.escape(msg)):
        resolve({"task_id": "cl003-p", "policy": "llm", "model": "m", **extra})


def test_heuristic_records_carry_no_pipeline():
    rec = run_spec({"task_id": "cl003-p", "n_agents": 2, "budget": 2})
    assert "pipeline" not in rec["episode"]


def test_a_cache_file_of_an_older_version_gains_the_image_tokens_column(tmp_path):
    import sqlite3

    from collablab.llm import ResponseCache

    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:  # the responses table before image_tokens (reasoning already there)
        conn.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, created_at REAL NOT NULL, endpoint TEXT NOT NULL, "
                     "model TEXT NOT NULL, call_id TEXT NOT NULL, sample_index INTEGER NOT NULL, attempt INTEGER NOT "
                     "NULL, text TEXT NOT NULL, finish_reason TEXT, response_model TEXT, prompt_tokens INTEGER, "
                     "completion_tokens INTEGER, total_tokens INTEGER, request TEXT NOT NULL, reasoning TEXT)")
        conn.execute("INSERT INTO responses VALUES ('k0', 0, 'e', 'm', 'c', 0, 0, 'old', NULL, NULL, 1, 1, 2, '{}', NULL)")
    assert ResponseCache(path, "replay").get("k0").image_tokens is None  # read-only: no column, still readable
    cache = ResponseCache(path, "rw")
    assert cache.get("k0").text == "old"
    cache.put("k1", text="new", endpoint="e", model="m", call_id="c", sample_index=0, attempt=1, request="{}",
              image_tokens=258)
    assert cache.get("k1").image_tokens == 258 and cache.get("k0").image_tokens is None


# -- through the command line, as a batch user runs it (issue 29, "Done when") ------------------------
def _episodes_cli(tmp_path, name: str, base: dict, axes: dict) -> tuple[list[dict], list[dict]]:
    import os
    import subprocess
    import sys

    import yaml

    from collablab.runs.store import read_records

    grid = tmp_path / f"{name}.yaml"
    grid.write_text(yaml.safe_dump({"base": base, "axes": axes}))
    out = tmp_path / name
    proc = subprocess.run([sys.executable, "-m", "collablab.cli", "episodes", "--study", "mecobench", "--grid",
                           str(grid), "--out-root", str(out), "--workers", "1", "--no-progress"],
                          capture_output=True, text=True, timeout=600, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr[-2000:]
    (run,) = [p for p in (out / "mecobench").iterdir() if p.is_dir()]
    steps = sorted(read_records(run / "steps.jsonl"), key=lambda s: (s["episode_id"], s["step"], s["agent"]))
    return sorted(read_records(run / "episodes.jsonl"), key=lambda e: e["episode_id"]), steps


def test_a_multimodal_grid_through_collablab_episodes_sends_the_views_and_replays_without_the_server(serve, tmp_path):
    """A MECoBench LLM grid with ``multimodal: true`` through ``collablab episodes``: every act
    request carries one 1024 x 256 PNG, every decoder request the raw and the annotated views, no
    prompt to an acting agent names an object id, and the records replay from the cache with the
    server gone."""
    script = Scripted()
    srv = serve(script)
    base = {**{k: v for k, v in spec(srv, tmp_path, multimodal=True, budget=4).items() if k != "task_id"},
            "model": "fake-model"}
    axes = {"task_id": ["cl003-p", "cl003-s"], "protocol": ["broadcast", "leader_vision"]}
    live, live_steps = _episodes_cli(tmp_path, "live", base, axes)
    assert len(live) == 4 and {e["pipeline"] for e in live} == {"paper"}
    ids = node_ids({"task_id": "cl003-p"}) | node_ids({"task_id": "cl003-s"})
    phases = Counter(phase_of(b) for b in script.bodies)
    assert phases["act"] >= 12 and phases["decode"] >= 1, phases
    for b in script.bodies:
        pics = pictures_of(b)
        if phase_of(b) == "act":
            assert [p.size for p in pics] == [(1024, 256)]
        if phase_of(b) == "decode":
            assert [p.size for p in pics] == [(1024, 256)] * 2
        else:
            assert not ids_in(text_of(b), ids), (phase_of(b), sorted(ids_in(text_of(b), ids))[:5])
    srv.stop()
    again, again_steps = _episodes_cli(tmp_path, "replay", {**base, "llm_cache_mode": "replay"}, axes)
    drop = ("episode_key", "llm_cache_mode", "latency_s")  # the key names the cache mode
    assert [{k: v for k, v in e.items() if k not in drop} for e in again] == \
        [{k: v for k, v in e.items() if k not in drop} for e in live]
    acted = [(s["episode_id"], s["step"], s["agent"], s["action"], s["args"], s["status"]) for s in live_steps]
    assert acted and acted == [(s["episode_id"], s["step"], s["agent"], s["action"], s["args"], s["status"])
                               for s in again_steps]


def test_the_notebooks_say_which_pipeline_ran():
    """The backend line every notebook opens with names the pipeline LLM episodes ran (issue 29:
    "the notebooks say which ran"); offline runs say nothing about pipelines."""
    import pandas as pd

    from collablab.analysis.findings import Report
    from collablab.studies.mecobench.experiments import pipeline_sentence

    llm = pd.DataFrame({"backend": ["vllm:m"] * 2, "pipeline": ["paper", "paper"]})
    line = Report("vllm:m", 2, agents=pipeline_sentence(llm)).backend_line()
    assert "paper's agent pipeline" in line and "assisted" not in line
    both = pipeline_sentence(pd.DataFrame({"pipeline": ["assisted", "paper"]}))
    assert both.index("paper's agent pipeline") < both.index("assisted pipeline")
    assert pipeline_sentence(pd.DataFrame({"backend": ["heuristic"], "pipeline": [None]})) == ""
    assert Report("heuristic", 3).backend_line().endswith("not findings about LLMs).")


class Thinking(Scripted):
    """Decoder replies as reasoning models give them: a draft naming a wrong id inside the thoughts,
    then the final answer in a fence with prose around it."""

    def __call__(self, body: dict, srv: FakeOpenAIServer) -> FakeReply:
        reply = super().__call__(body, srv)
        if phase_of(body) != "decode":
            return reply
        wrong = json.dumps({"action": "walk", "parameter_ids": [987654]})
        return FakeReply(f"<think>\nMaybe {wrong}? No.\n</think>\nHere it is:\n```json\n{reply.text}\n```\nDone.")


def test_the_decoder_reads_only_a_reasoning_models_final_answer(serve, tmp_path):
    """Only the final answer of a decoder reply is read: the draft's id in the thoughts is never
    grounded, and the step is the object the final answer names."""
    script = Thinking()
    rec = run_spec(spec(serve(script), tmp_path, budget=4))
    s0 = own_steps(rec)[1]  # walk kitchentable, grounded by the decoder
    n = json.loads(s0["note"])
    assert s0["action"] == "walk" and s0["obj_class"] == "kitchentable" and n["decoder"] == "ok"
    assert "987654" not in s0["args"]


class CutDecoder(Scripted):
    """The decoder's reply is cut at the token budget (``finish_reason: length``) mid-answer."""

    def __call__(self, body: dict, srv: FakeOpenAIServer) -> FakeReply:
        reply = super().__call__(body, srv)
        if phase_of(body) != "decode":
            return reply
        return FakeReply(reply.text[: len(reply.text) // 2], finish_reason="length")


def test_a_cut_decoder_reply_is_recorded_as_cut_never_parsed(serve, tmp_path):
    rec = run_spec(spec(serve(CutDecoder()), tmp_path, budget=4))
    s0 = own_steps(rec)[1]
    n = json.loads(s0["note"])
    assert s0["action"] == "invalid_truncated" and s0["status"] == "invalid" and "cut at the token budget" in n["error"]
    assert rec["episode"]["truncated_replies"] >= 1  # counted with the act replies cut at the budget
    assert n["calls"][-1]["phase"] == "decode" and n["calls"][-1]["finish_reason"] == "length"


class ReasoningServer(Scripted):
    """Every reply as a reasoning model sends it through a vLLM-style server: act and decoder
    drafts in ``reasoning_content`` (a wrong id in the decoder's), the decoder's final answer
    fenced with prose around it, and every second decoder reply cut at the token budget."""

    def __call__(self, body: dict, srv: FakeOpenAIServer) -> FakeReply:
        reply = super().__call__(body, srv)
        if phase_of(body) != "decode":
            return FakeReply(reply.text, reasoning="Let me think about the room first.", usage=reply.usage)
        n = sum(phase_of(b) == "decode" for b in self.bodies)
        if n % 2 == 0:
            return FakeReply(reply.text[: len(reply.text) // 2], finish_reason="length")
        wrong = json.dumps({"action": "walk", "parameter_ids": [987654]})
        return FakeReply(f"Sure.\n```json\n{reply.text}\n```\nThat is my answer.", reasoning=f"Maybe {wrong}? No.")


def test_reasoning_replies_through_collablab_episodes(serve, tmp_path):
    """Through ``collablab episodes`` against a server: decoder answers with their drafts in
    ``reasoning_content`` ground the final answer's object (never the draft's id), a decoder reply
    cut at the budget is a recorded ``invalid_truncated`` step, and the thoughts are kept."""
    script = ReasoningServer()
    base = {**{k: v for k, v in spec(serve(script), tmp_path, budget=16).items() if k != "task_id"},
            "model": "fake-model"}
    episodes, steps = _episodes_cli(tmp_path, "reasoning", base, {"task_id": ["cl003-p"]})
    notes = [json.loads(s["note"]) for s in steps]
    decoded = [(s, n) for s, n in zip(steps, notes) if n.get("decoder")]
    assert decoded and all("987654" not in s["args"] for s, _ in decoded)
    assert any(n["decoder"] == "ok" and s["status"] != "invalid" for s, n in decoded)
    cut = [s for s, n in decoded if s["action"] == "invalid_truncated"]
    assert cut and episodes[0]["truncated_replies"] >= len(cut)
    assert any(c.get("thoughts") for n in notes for c in n["calls"] if c["phase"] == "act")
