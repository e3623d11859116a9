"""Negotiation as the appendix runs it (episodes.py, tasks/negotiation.py): the sides exchange
player roles and first proposer; whoever responds decides accept/reject by a run of its own
protocol; eq 17's temperature-0 probe still scores proposals; eq 18 scores the episode. Every
expected number below is worked out by hand from the paper's equations."""

from __future__ import annotations

import json
import random

import pytest

from collablab.llm import EndpointSpec, LLMClient, ResponseCache
from collablab.llm.fake_server import FakeOpenAIServer, FakeReply
from collablab.studies.mastracebench import episodes as E
from collablab.studies.mastracebench.llm_backend import LLMBackend
from collablab.studies.mastracebench.methods import MethodConfig
from collablab.studies.mastracebench.offline import HeuristicBackend
from collablab.studies.mastracebench.roles import Reply, Request
from collablab.studies.mastracebench.spec import run_spec
from collablab.studies.mastracebench.tasks import negotiation as N
from collablab.studies.mastracebench.trajectory import parse_call_id, validate_episode, validate_trajectory

# A hand-made scenario: 1 book, 2 hats, 1 ball; player 0 values (4, 2, 2), player 1 (2, 3, 2);
# both pools are worth 10 (u_max = 10). The MAS is player 1; the opponent (player 0) opens, as in
# the second game of a scenario's pair.
CFG = N.NegotiationConfig(7, N.ITEMS, (1, 2, 1), ((4, 2, 2), (2, 3, 2)), first_proposer=0, mas_player=1)
EPISODE = "negotiation-7-p1-f0"


def split(me: dict, you: dict) -> str:
    """An offer in the proposer's view (what parse_allocation reads)."""
    return json.dumps({"self": me, "opponent": you})


ACCEPT, REJECT = '{"accept": true}', '{"accept": false}'
# round 1, the opponent offers player 1 a hat and the ball: u_1 = 3 + 2 = 5
X = split({"book": 1, "hat": 1, "ball": 0}, {"book": 0, "hat": 1, "ball": 1})
# round 2, the MAS asks for the book and both hats, the ball to the opponent: u_1 = 2 + 6 = 8
Y = split({"book": 1, "hat": 2, "ball": 0}, {"book": 0, "hat": 0, "ball": 1})
# round 3, the opponent offers player 1 both hats and the ball: u_1 = 6 + 2 = 8
Z = split({"book": 1, "hat": 0, "ball": 0}, {"book": 0, "hat": 2, "ball": 1})


class Scripted:
    """Replies by ``script(request)``; records every request."""

    label = "scripted"

    def __init__(self, script) -> None:
        self.script = script
        self.requests: list[Request] = []

    def answer(self, request: Request) -> Reply:
        self.requests.append(request)
        return Reply(self.script(request), 10, 2)


def is_opponent(r: Request) -> bool:
    return parse_call_id(r.call_id)[2].endswith(E.OPPONENT_SUFFIX)


def probe_gives_ball(r: Request) -> str:
    """Eq 17's probe (role "opponent", temperature 0): accept iff the responder gets the ball."""
    return ACCEPT if json.loads(r.context["offer"])["opponent"]["ball"] >= 1 else REJECT


def game_script(r: Request) -> str:
    """X rejected by the MAS, Y accepted by the probe but rejected by the opponent's own run,
    Z accepted by the MAS in round 3."""
    if r.role == "opponent":
        return probe_gives_ball(r)
    if r.task == N.RESPONSE_TASK:
        if is_opponent(r):
            return REJECT
        return ACCEPT if r.instance.state.round == 3 else REJECT
    if is_opponent(r):
        return X if r.instance.round == 1 else Z
    return Y


def test_a_scenarios_two_games_exchange_the_mas_player_and_who_opens():
    cfgs = E.episode_configs("negotiation", 2)
    assert [(c.scenario, c.mas_player, c.first_proposer) for c in cfgs] == [(0, 0, 0), (0, 1, 0), (1, 0, 0), (1, 1, 0)]
    ids = [E.episode_id("negotiation", c) for c in cfgs]
    assert ids == ["negotiation-0-p0-f0", "negotiation-0-p1-f0", "negotiation-1-p0-f0", "negotiation-1-p1-f0"]
    assert ids == [E.episode_id("negotiation", c) for c in E.episode_configs("negotiation", 2)]  # stable
    opened, profiles = [], []
    for cfg, eid in zip(cfgs[:2], ids[:2]):
        be = Scripted(lambda r: REJECT if r.role == "opponent" or r.task == N.RESPONSE_TASK else
                      (X if N.proposer(r.instance) == 0 else Y))
        E.play_episode("negotiation", "Single-Agent", cfg, be, eid, max_decisions=1)
        first = next(r for r in be.requests if r.role != "opponent")  # the first decision of the game
        opened.append(not is_opponent(first))
        mine = next(r for r in be.requests if r.role != "opponent" and not is_opponent(r))
        player = mine.instance.player if mine.task == N.RESPONSE_TASK else N.proposer(mine.instance)
        profiles.append(cfg.values[player])
        vals = ", ".join(f"{n} = {v}" for n, v in zip(N.ITEMS, cfg.values[player]))
        assert f"Your private values per unit: {vals}" in mine.prompt
    assert opened == [True, False]  # the MAS opens once
    assert sorted(profiles) == sorted(cfgs[0].values)  # and holds each value profile once


def test_scripted_game_eq_18_by_hand_and_the_realized_decisions_are_runs():
    be, responses = Scripted(game_script), []
    mine, res, theirs = E.play_episode("negotiation", "Single-Agent", CFG, be, EPISODE, responses=responses)
    for t in mine + theirs + responses:
        validate_trajectory(t.to_dict())
    validate_episode(res.to_dict())
    # agreement on Z in round 3: R_1 = 0.95**2 * 8 / 10 = 0.722 (eq 18), reported x 100
    assert res.score == pytest.approx(72.2)
    # the MAS's one proposal unit (round 2, Y): eq 17 = 100 * A * 0.95 * 8 / 10 with A = 1 from the
    # probe; S* = 76.0 too (the probe wants the ball given away, and the rest is worth 8 to player 1)
    unit, = mine
    assert unit.state == 0 and unit.answer.score == pytest.approx(76.0) and unit.s_star == pytest.approx(76.0)
    # ... yet the opponent's own Single-Agent run rejected Y: the probe scores, the run decides
    opp_runs = [r for r in be.requests if r.task == N.RESPONSE_TASK and is_opponent(r)]
    assert len(opp_runs) == 1 and opp_runs[0].role == "proposer" and opp_runs[0].instance.offer.counts == (
        (0, 0, 1), (1, 2, 0))
    # the MAS responded twice by runs of the method (not units): reject X, accept Z
    assert [(t.task, t.instance, t.state, t.answer.canonical) for t in responses] == [
        (N.RESPONSE_TASK, EPISODE, 0, False), (N.RESPONSE_TASK, EPISODE, 1, True)]
    assert all(c.kind == "agent" and c.role == "proposer" for t in responses for c in t.calls)
    # the unit's TC counts its one MAS call; its 12 probes (one per allocation) are out of TC
    assert [c.kind for c in unit.calls].count("agent") == 1
    assert [c.kind for c in unit.calls].count("acceptance_probe") == len(N.allocations(CFG)) == 12
    assert len(theirs) == 2  # the opponent's two proposals (X, Z)


def consistency_script(votes: tuple[str, str, str]):
    def script(r: Request) -> str:
        if r.role == "opponent":
            return REJECT  # the temperature-0 probe rejects everything: it must not decide the game
        if r.task == N.RESPONSE_TASK:
            return REJECT if is_opponent(r) else votes[r.sample]
        return X if is_opponent(r) else Y
    return script


@pytest.mark.parametrize("votes, agreed", [((ACCEPT, REJECT, ACCEPT), True), ((REJECT, ACCEPT, REJECT), False)])
def test_self_consistency_decides_by_its_majority_of_three_samples(votes, agreed):
    be, responses = Scripted(consistency_script(votes)), []
    mine, res, _ = E.play_episode("negotiation", "Consistency", CFG, be, EPISODE, MethodConfig(proposers=3),
                                  max_decisions=1, responses=responses)
    first = responses[0]
    assert [p.initial.canonical for p in first.proposers] == [v == ACCEPT for v in votes]
    assert first.answer.canonical is agreed and first.answer.source == "vote"
    asked = [r for r in be.requests if r.task == N.RESPONSE_TASK and not is_opponent(r)]
    assert [r.sample for r in asked[:3]] == [0, 1, 2] and all(r.role == "proposer" for r in asked)
    if agreed:  # X accepted in round 1: R_1 = 0.95**0 * 5 / 10 = 0.5 (eq 18); no proposal of the MAS
        assert res.score == pytest.approx(50.0) and mine == [] and len(responses) == 1
    else:  # play goes on: the MAS proposes once (the cap), the opponent rejects, X again, the MAS rejects
        assert res.score == 0.0 and len(mine) == 1 and len(responses) == 2


def test_an_unreadable_response_is_a_rejection():
    be = Scripted(lambda r: "hmm" if r.task == N.RESPONSE_TASK else (ACCEPT if r.role == "opponent" else
                                                                     (X if is_opponent(r) else Y)))
    responses: list = []
    mine, res, theirs = E.play_episode("negotiation", "Single-Agent", CFG, be, EPISODE, responses=responses)
    assert res.score == 0.0 and len(mine) + len(theirs) == CFG.max_rounds
    assert responses and all(not t.answer.valid for t in responses)


def test_probe_is_the_temperature_0_opponent_query_and_runs_sample_at_the_mas_temperature(tmp_path):
    seen: list[tuple[bool, float]] = []

    def handler(body: dict, server: FakeOpenAIServer) -> FakeReply:
        text = body["messages"][-1]["content"]
        probe = "--- Your role:" not in text
        seen.append((probe, body.get("temperature")))
        if probe or "The opponent now proposes" in text:
            return FakeReply(REJECT)
        return FakeReply(X)  # any complete split: only the temperatures matter here

    with FakeOpenAIServer(handler) as srv:
        spec = EndpointSpec(alias="fake", model="fake-model", base_url=srv.base_url, api_key_env=None)
        be = LLMBackend(LLMClient(spec, ResponseCache(tmp_path / "cache.sqlite", "rw")), temperature=1.0)
        responses: list = []
        mine, res, theirs = E.play_episode("negotiation", "Single-Agent", CFG, be, EPISODE, max_decisions=1,
                                           responses=responses)
    assert len(mine) == 1 and len(theirs) == 2 and len(responses) == 2 and res.score == 0.0
    probes = [t for p, t in seen if p]
    runs = [t for p, t in seen if not p]
    assert probes and set(probes) == {0.0}
    # 3 proposals (opponent, MAS, opponent) and 3 accept/reject runs (MAS, opponent, MAS)
    assert len(runs) == 6 and set(runs) == {1.0}


def test_offline_responses_follow_the_reservation_rule_through_the_profiles_judging_errors():
    cfg = E.episode_configs("negotiation", 1)[1]
    start = N.new_negotiation(cfg)
    state = N.advance(start, N.rule_proposal(start, random.Random(0)), False)
    decisions = [N.ResponseDecision(state, a) for a in N.allocations(cfg)]
    be = HeuristicBackend("strong")
    agree = 0
    for k, d in enumerate(decisions):
        req = Request(role="proposer", task=N.RESPONSE_TASK, instance=d, agent=0, round=0, sample=k,
                      prompt=N.render_response_prompt(d), call_id=f"m/{N.RESPONSE_TASK}/e/0/proposer/0/agent0/{k}")
        got = N.parse_response(be.answer(req).text)
        agree += got is N.rule_response(d)
    assert agree >= 0.75 * len(decisions)  # strong: rejects a good offer 5%, accepts a bad one 10% (+2% garbage)
    assert 0 < sum(N.rule_response(d) for d in decisions) < len(decisions)  # both decisions occur


def test_spec_records_count_the_response_runs_apart_from_the_units():
    rec = run_spec({"task": "negotiation", "method": "Consistency", "instance": 1})
    ep = rec["episode"]
    assert ep["unit"] == "negotiation-0-p1-f0" and ep["responses"] >= 1 and ep["response_tokens"] > 0
    assert ep["tokens"] == sum(c["input_tokens"] + c["output_tokens"] for s in rec["steps"] for c in s["calls"]
                               if c["kind"] == "agent")
    assert all(s["task"] == "negotiation" for s in rec["steps"])
    other = run_spec({"task": "gomoku", "method": "Single-Agent", "instance": 0, "max_decisions": 1})["episode"]
    assert "responses" not in other and "response_tokens" not in other
