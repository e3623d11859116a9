"""LLM-MCTS's commonsense world model (dynahmrc.tex appendix lab:llm_mcts_baseline: "the LLM-induced
world model provides a prior belief over states for MCTS"; Zhao et al. 2023): the world-model call's
prompt and reply reading (studies/dynahmrc/llm_brain.py), :class:`WorldPrior` (mcts.py: one call per
episode, a distribution the determinizations sample from, truncated replies recorded and falling
back to the uniform belief) and the spec wiring (``mcts_world_prior``, the episode's
``world_prior``), with scripted replies."""

from __future__ import annotations

import random
from typing import Any

import pytest
from collablab.llm import EndpointError, EndpointSpec, LLMResult, Usage
from collablab.llm.fake_server import FakeOpenAIServer, FakeReply
from collablab.studies.dynahmrc.layout import layout_of
from collablab.studies.dynahmrc.llm_brain import ask_world_prior, parse_world_prior, world_prior_messages
from collablab.studies.dynahmrc.mcts import (
    WORLD_PRIOR_MASS,
    MCTSPlanner,
    WorldPrior,
    belief_world,
    heuristic_prior,
    llm_world_prior,
)
from collablab.studies.dynahmrc.spec import resolve, run_spec
from collablab.studies.dynahmrc.tasks import position_on
from collablab.studies.dynahmrc.world import RobotWorld, TaskLayout

L = layout_of(0)
PLACES = [(h, p.room) for h, p in L.places.items()]
NAMES = {"Ma": "Bob", "MoMa": "Alice"}
TRUE_PLACE = "bed_0"  # a ground surface of the bedroom, far from the kitchen's working table


class StubClient:
    """The ``chat_sync`` surface of an LLMClient; answers ``replies`` in turn (the last one repeats)."""

    def __init__(self, replies: list[str], finish_reason: str = "stop", error: str | None = None) -> None:
        self.endpoint = EndpointSpec(alias="stub", model="stub-model", api_key_env=None)
        self.replies, self.finish_reason, self.error = list(replies), finish_reason, error
        self.calls: list[dict[str, Any]] = []

    def chat_sync(self, messages: Any, **kw: Any) -> LLMResult:
        self.calls.append({"messages": messages, **kw})
        text = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return LLMResult(text=None if self.error else text, usage=Usage(200, 40, 240), latency_s=0.0, cache="off",
                         attempts=1, error=self.error, model="stub-model", endpoint="stub", call_id=kw["call_id"],
                         finish_reason=self.finish_reason)


def hidden_world(objects: dict[str, str], targets: list[str] | None = None) -> RobotWorld:
    """Ma-MoMa in apartment 0 with ``objects`` ``{handle: place}`` lying unseen on those places, where
    the generator puts an ``l = 1`` target (reachable from a stand pose); all of them targets unless
    ``targets`` says."""
    objs = [dict(handle=h, place=p, pos=position_on(L, p, random.Random(1), level=1)) for h, p in objects.items()]
    return RobotWorld(L, [(NAMES[c], c) for c in ("Ma", "MoMa")],
                      TaskLayout("pack", list(objects) if targets is None else targets, objs))


def reply(lines: dict[str, str]) -> str:
    return "Thoughts: apples are kept on desks here.\nContents:\n" + "\n".join(f"{h}: {p}" for h, p in lines.items())


# -- the prompt and the reply reading ------------------------------------------------------------------
def test_the_prompt_lists_places_and_objects_but_never_where_an_object_lies():
    msgs = world_prior_messages("Place apple_0 into the tray.", {"apple_0": "apple"}, PLACES)
    system, user = msgs[0]["content"], msgs[1]["content"]
    assert [m["role"] for m in msgs] == ["system", "user"] and "${" not in system + user
    assert "Contents:" in system and "up to 3 places" in system and "commonsense" in system
    assert "- apple_0: a apple" in user and "Place apple_0 into the tray." in user
    assert all(f"- {h} ({room})" in user for h, room in PLACES)
    w = hidden_world({"apple_0": TRUE_PLACE})
    assert str(w.objects["apple_0"].pos[0]) not in user  # nothing of the true position


def test_reading_keeps_known_places_in_order_and_skips_the_rest():
    text = ("<think>hmm</think>Thoughts: kitchens.\nContents:\n- **apple_0**: fridge_0, the moon, kitchencounter_0\n"
            "2. cup_0 (a cup): kitchencabinet_0_top; dishwasher_0; sink_9; fridge_0\napple_0: bed_0\nbook_0: nowhere")
    got, why = parse_world_prior(text, ["apple_0", "cup_0", "book_0"], [h for h, _ in PLACES])
    assert why is None
    assert got == {"apple_0": ["fridge_0", "kitchencounter_0"],  # the first line of an object wins
                   "cup_0": ["kitchencabinet_0_top", "dishwasher_0", "fridge_0"]}  # book_0: no known place
    got, why = parse_world_prior("Thoughts: no idea.\nContents: I cannot tell.", ["apple_0"], [h for h, _ in PLACES])
    assert got is None and "no '<object>: <place>" in why


def test_a_truncated_reply_is_recorded_and_never_parsed():
    stub = StubClient([reply({"apple_0": TRUE_PLACE})], finish_reason="length")
    rec = ask_world_prior(stub, "t", {"apple_0": "apple"}, PLACES, call_id="ep/world/c0", max_tokens=64)
    assert rec["places"] == {} and rec["invalid"].startswith("truncated: the reply was cut at max_tokens=64")
    assert rec["finish_reason"] == "length" and rec["call_id"] == "ep/world/c0" and rec["tokens_in"] == 200
    empty = ask_world_prior(StubClient(["  "]), "t", {"apple_0": "apple"}, PLACES, call_id="c")
    assert empty["places"] == {} and "empty reply" in empty["invalid"]
    with pytest.raises(EndpointError):
        ask_world_prior(StubClient(["x"], error="HTTP 500"), "t", {"apple_0": "apple"}, PLACES, call_id="c")


# -- the prior -----------------------------------------------------------------------------------------
def test_the_distribution_puts_the_named_places_first_and_keeps_every_place_possible():
    w = hidden_world({"apple_0": TRUE_PLACE})
    belief, hidden = belief_world(w)
    prior = llm_world_prior(StubClient([reply({"apple_0": f"{TRUE_PLACE}, desk_0"})]))
    d = prior.distribution(belief, "apple_0")
    assert hidden == ["apple_0"] and set(d) == set(L.places) and sum(d.values()) == pytest.approx(1.0)
    floor = (1 - WORLD_PRIOR_MASS) / len(L.places)
    assert d[TRUE_PLACE] == pytest.approx(floor + WORLD_PRIOR_MASS * 2 / 3)
    assert d["desk_0"] == pytest.approx(floor + WORLD_PRIOR_MASS / 3)
    assert floor > 0 and min(d.values()) == pytest.approx(floor)
    assert WorldPrior(None).distribution(belief, "apple_0")["desk_0"] == pytest.approx(1 / len(L.places))


def test_one_call_per_episode_and_one_more_for_a_new_target():
    w = hidden_world({"apple_0": TRUE_PLACE, "cup_0": "desk_0"}, targets=["apple_0"])
    stub = StubClient([reply({"apple_0": TRUE_PLACE})])
    prior = llm_world_prior(stub, call_prefix="ep7/world")
    p = MCTSPlanner(seed=0, iterations=20, prior=prior)
    for t in (1, 2, 3):
        w.step = t
        p.decide(w)
    assert len(stub.calls) == 1 and stub.calls[0]["call_id"] == "ep7/world/c0"
    assert "- apple_0: a apple" in stub.calls[0]["messages"][1]["content"]  # only the unseen target asked
    w.targets = ["apple_0", "cup_0"]  # CTO: a new target, unseen
    p.decide(w)
    assert len(stub.calls) == 2 and "- cup_0: a cup" in stub.calls[1]["messages"][1]["content"]
    assert "apple_0" not in stub.calls[1]["messages"][1]["content"].split("Objects not seen yet")[1]
    s = prior.summary()
    assert s["belief"] == "partial" and [c["places"] for c in s["calls"]] == [{"apple_0": [TRUE_PLACE]}, {}]


def steps_to_find(prior: WorldPrior | None, seed: int, cap: int = 10) -> int:
    """Steps until some robot perceives the unseen apple (``cap + 1`` when never): LLM-MCTS as the
    spec runs it offline (the heuristic PUCT prior, the default budget) with the world prior given."""
    w = hidden_world({"apple_0": TRUE_PLACE})
    p = MCTSPlanner(seed=seed, prior=prior, policy_prior=heuristic_prior)
    for t in range(1, cap + 1):
        w.step = t
        joint = p.decide(w)
        for r in list(w.robots.values()):
            p.observe(w.execute(r.name, joint.get(r.name, "wait()")))
            w.perceive()
        if any("apple_0" in r.known for r in w.robots.values()):
            return t
    return cap + 1


def test_naming_the_true_place_finds_the_target_sooner_than_the_uniform_belief():
    seeds = range(3)
    told = [steps_to_find(llm_world_prior(StubClient([reply({"apple_0": TRUE_PLACE})])), s) for s in seeds]
    uniform = [steps_to_find(WorldPrior(None), s) for s in seeds]
    # mechanism: 80% of the determinizations put the apple on the named bed, so the rollouts that fetch
    # it from there pay and the search sends the mover there; the uniform belief spreads it over ~40 places
    # (measured: told [3, 2, 7], uniform [11, 11, 11] = never within 10 steps)
    assert 2 * sum(told) <= sum(uniform), (told, uniform)


def test_a_truncated_reply_falls_back_to_the_uniform_belief_and_says_so():
    stub = StubClient([reply({"apple_0": TRUE_PLACE})], finish_reason="length")
    prior = llm_world_prior(stub)
    w = hidden_world({"apple_0": TRUE_PLACE})
    belief, _ = belief_world(w)
    d = prior.distribution(belief, "apple_0")
    assert len(set(round(v, 12) for v in d.values())) == 1  # uniform: the fragment was not read
    prior.distribution(belief, "apple_0")
    assert len(stub.calls) == 1  # not re-asked every decision
    s = prior.summary()
    assert s["belief"] == "uniform" and s["why"].startswith("truncated:") and s["calls"][0]["places"] == {}


# -- the spec ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec, match", [
    ({"method": "llm_mcts", "mcts_world_prior": "llm"}, r"mcts_world_prior: .*model, uniform"),
    ({"method": "llm_mcts", "mcts_world_prior": 1}, r"mcts_world_prior"),
    ({"method": "mcts", "mcts_world_prior": "uniform"}, r"mcts_world_prior: 'uniform' not allowed with method 'mcts'"),
    ({"method": "dynahmrc", "mcts_world_prior": "model"}, r"mcts_world_prior: .*only llm_mcts"),
])
def test_bad_world_prior_values_are_rejected(spec, match):
    with pytest.raises(ValueError, match=match):
        resolve(spec)


def test_offline_llm_mcts_records_the_uniform_belief():
    ep = run_spec({"method": "llm_mcts", "max_steps": 2, "mcts_iterations": 10})["episode"]
    assert ep["backend"] == "heuristic" and ep["world_prior"]["belief"] == "uniform"
    assert ep["world_prior"]["why"].startswith("offline: no model") and ep["world_prior"]["calls"] == []
    assert "world_prior" not in run_spec({"method": "mcts", "max_steps": 1, "mcts_iterations": 5})["episode"]


def test_llm_mcts_on_the_llm_backend_asks_the_world_model_once_and_records_a_truncated_reply(tmp_path):
    world_bodies: list[dict] = []

    def handler(body: dict, srv: FakeOpenAIServer) -> FakeReply:
        user = body["messages"][-1]["content"]
        if "Objects not seen yet" in str(user):
            world_bodies.append(body)
            return FakeReply("Thoughts: the apple is prob", finish_reason="length")
        return FakeReply('{"scores": []}')  # an unusable policy reply: uniform scores, counted
    spec = {"method": "llm_mcts", "kind": "pack", "level": "medium", "team": "Ma-MoMa", "backend": "llm",
            "model": "fake", "provider": "compat", "llm_cache": str(tmp_path / "c.sqlite"), "llm_cache_mode": "off",
            "llm_max_attempts": 1, "max_steps": 2, "mcts_iterations": 4, "max_tokens": 32}
    with FakeOpenAIServer(handler) as srv:
        ep = run_spec({**spec, "base_url": srv.base_url})["episode"]  # targets to find: apple_0, toothpaste_0
        assert len(world_bodies) == 1  # one call for the episode
        wp = ep["world_prior"]
        assert wp["belief"] == "uniform" and wp["why"].startswith("truncated: the reply was cut at max_tokens=32")
        assert wp["calls"][0]["call_id"].endswith("/llm_mcts/none/r0/world/c0") and wp["calls"][0]["places"] == {}
        assert "apple_0" in wp["calls"][0]["objects"] and ep["backend"] == "compat:fake"
        uni = run_spec({**spec, "base_url": srv.base_url, "mcts_world_prior": "uniform"})["episode"]
    assert uni["unit"].split("/")[1] == "llm_mcts+uniform_world" and uni["world_prior"]["belief"] == "uniform"
    assert uni["world_prior"]["why"].startswith("mcts_world_prior 'uniform'")
    assert len(world_bodies) == 1  # the ablation never asks
