"""The offline heuristic backend of MASTraceBench (offline.py): renders round-trip through every
task's parser, replies are deterministic, and each mechanism (persuasion, adoption, refinement,
validation, choice, CLEARS claims, garbage) is observable when its probability is forced."""

from __future__ import annotations

import dataclasses
import random

import pytest
from collablab.studies.mastracebench import offline as O
from collablab.studies.mastracebench.roles import Request, parse_claim_votes, parse_claims, parse_rating, parse_verdict
from collablab.studies.mastracebench.tasks import TASKS, is_invalid
from collablab.studies.mastracebench.tasks import evidence_chain as E
from collablab.studies.mastracebench.tasks import gomoku as G
from collablab.studies.mastracebench.tasks import mapf as M
from collablab.studies.mastracebench.tasks import negotiation as N
from collablab.studies.mastracebench.tasks import tactic_duel as T


def _gomoku_state() -> G.GomokuState:
    s = G.new_game()
    for m in ((7, 7), (7, 8), (6, 6), (8, 8), (5, 5)):
        s = G.place(s, m)
    return s


def _instances():
    cfgs = N.negotiation_configs(2)
    return [
        ("mapf", M.bottleneck_5x5()),
        ("mapf", M.generate_mapf(2)[1]),
        ("evidence_chain", E.generate_evidence(2)[0]),
        ("evidence_chain", E.generate_evidence(2)[1]),
        ("gomoku", _gomoku_state()),
        ("negotiation", N.new_negotiation(cfgs[0])),
        ("negotiation", N.new_negotiation(cfgs[1])),
        ("tactic_duel", T.DuelDecision(T.new_duel(), 0)),
        ("tactic_duel", T.DuelDecision(T.resolve(T.new_duel(), "Charge", "Quick"), 0)),
    ]


CASES = _instances()
IDS = [f"{t}-{k}" for k, (t, _) in enumerate(CASES)]
BASE = O.PROFILES["strong"]


def prof(**kw) -> O.MASProfile:
    kw.setdefault("p_unparsable", 0.0)
    return dataclasses.replace(BASE, name="test", **kw)


def best_of(task, inst):
    return O.KITS[task].best(inst, random.Random(0))


def value(task, inst, p) -> float:
    return 0.0 if is_invalid(p) else O.KITS[task].value(p, inst)


def is_right(task, inst, p) -> bool:
    kit = O.KITS[task]
    bar = min(kit.top(inst), value(task, inst, best_of(task, inst)))
    return not is_invalid(p) and value(task, inst, p) >= bar - 1e-9


def wrongs(task, inst, n=6):
    """Distinct degraded proposals that are not right."""
    out = []
    best = best_of(task, inst)
    for k in range(40):
        p = O.KITS[task].degrade(best, inst, random.Random(k))
        if not is_right(task, inst, p) and all(TASKS[task]().canonical(p) != TASKS[task]().canonical(q) for q in out):
            out.append(p)
        if len(out) == n:
            break
    return out


def render(task, inst, p) -> str:
    return O.KITS[task].render(p, inst)


def parse(task, inst, text):
    return TASKS[task]().parse(text, inst)


def canon(task, p):
    return TASKS[task]().canonical(p)


def req(task, inst, role="proposer", agent=0, rnd=0, sample=0, prompt="", **context):
    return Request(role=role, task=task, instance=inst, agent=agent, round=rnd, sample=sample,
                   prompt=prompt, context=context)


# --- renders -----------------------------------------------------------------------------------

@pytest.mark.parametrize("task,inst", CASES, ids=IDS)
def test_render_round_trips_through_the_task_parser(task, inst):
    best = best_of(task, inst)
    props = [best] + [O.KITS[task].degrade(best, inst, random.Random(k)) for k in range(8)]
    for p in props:
        text = render(task, inst, p)
        assert "\n" not in text
        back = parse(task, inst, text)
        assert not is_invalid(back), (text, back)
        assert canon(task, back) == canon(task, p)
        assert parse(task, inst, f"feasibility claim: {text}") == back  # claim lines parse too


@pytest.mark.parametrize("task,inst", CASES, ids=IDS)
def test_degrade_is_worse_and_best_is_right(task, inst):
    assert is_right(task, inst, best_of(task, inst))
    assert wrongs(task, inst, 1), "degrade found no worse proposal"


# --- determinism, tokens, labels --------------------------------------------------------------

@pytest.mark.parametrize("task,inst", CASES, ids=IDS)
def test_same_request_same_reply(task, inst):
    r = req(task, inst, prompt="solve this task now")
    a = O.HeuristicBackend("medium", seed=3).answer(r)
    b = O.HeuristicBackend("medium", seed=3).answer(r)
    assert a == b
    assert a.input_tokens == 4 and a.output_tokens == len(a.text.split())


def test_agents_and_samples_draw_independently():
    task, inst = "evidence_chain", E.generate_evidence(1)[0]
    be = O.HeuristicBackend(prof(p_correct=0.5))
    texts = {be.answer(req(task, inst, agent=a, sample=s)).text for a in range(6) for s in range(4)}
    assert len(texts) > 1
    assert O.HeuristicBackend().label == "heuristic"


# --- mechanisms --------------------------------------------------------------------------------

@pytest.mark.parametrize("task,inst", CASES, ids=IDS)
def test_persuadable_strong_proposer_adopts_a_wrong_majority(task, inst):
    best, wrong = best_of(task, inst), wrongs(task, inst, 1)[0]
    shown = [{"agent": 1, "text": render(task, inst, wrong)},
             {"agent": 2, "text": render(task, inst, wrong)},
             {"agent": 3, "text": render(task, inst, best)}]
    be = O.HeuristicBackend(prof(p_correct=1.0, p_persuade=1.0))
    out = parse(task, inst, be.answer(req(task, inst, rnd=1, own=render(task, inst, best),
                                          proposals=shown)).text)
    assert canon(task, out) == canon(task, wrong)
    # without persuasion the strong proposer keeps (or refines toward) its correct answer
    be = O.HeuristicBackend(prof(p_correct=1.0, p_persuade=0.0))
    out = parse(task, inst, be.answer(req(task, inst, rnd=1, own=render(task, inst, best),
                                          proposals=shown)).text)
    assert is_right(task, inst, out)


@pytest.mark.parametrize("task,inst", CASES, ids=IDS)
def test_weak_proposer_adopts_a_better_peer(task, inst):
    best, wrong = best_of(task, inst), wrongs(task, inst, 1)[0]
    be = O.HeuristicBackend(prof(p_correct=0.0, p_persuade=0.0, p_adopt_better=1.0, p_refine=0.0))
    shown = [{"agent": 1, "text": render(task, inst, best)}]
    out = parse(task, inst, be.answer(req(task, inst, rnd=1, own=render(task, inst, wrong),
                                          proposals=shown)).text)
    assert canon(task, out) == canon(task, best)


@pytest.mark.parametrize("task,inst", CASES, ids=IDS)
def test_refinement_raises_the_own_score(task, inst):
    be = O.HeuristicBackend(prof(p_persuade=0.0, p_adopt_better=0.0, p_refine=1.0))
    for wrong in wrongs(task, inst, 3):
        out = parse(task, inst, be.answer(req(task, inst, role="reflector", rnd=1,
                                              own=render(task, inst, wrong))).text)
        assert value(task, inst, out) > value(task, inst, wrong)


def verdict(role: str, text: str) -> bool | None:
    """Approval as a method reads it: an evaluator's rating passes at 8/10 (AgentVerse)."""
    return parse_rating(text) >= 8 if role == "evaluator" else parse_verdict(text)


@pytest.mark.parametrize("role", ["validator", "critic", "reviewer", "evaluator", "judge"])
@pytest.mark.parametrize("task,inst", CASES, ids=IDS)
def test_validators_without_error_never_approve_wrong(task, inst, role):
    be = O.HeuristicBackend(prof(p_accept_wrong=0.0, p_reject_right=0.0))
    for k, wrong in enumerate(wrongs(task, inst)):
        for rnd in range(3):
            r = req(task, inst, role=role, rnd=rnd, sample=k,
                    proposals=[{"agent": 1, "text": render(task, inst, wrong)}])
            assert verdict(role, be.answer(r).text) is False
    r = req(task, inst, role=role, proposals=[{"agent": 1, "text": render(task, inst, best_of(task, inst))}])
    assert verdict(role, be.answer(r).text) is True
    always = O.HeuristicBackend(prof(p_accept_wrong=1.0))
    r = req(task, inst, role=role, proposals=[{"agent": 1, "text": render(task, inst, wrongs(task, inst, 1)[0])}])
    assert verdict(role, always.answer(r).text) is True


@pytest.mark.parametrize("task,inst", CASES, ids=IDS)
def test_aggregator_picks_best_or_majority(task, inst):
    best, wrong = best_of(task, inst), wrongs(task, inst, 1)[0]
    shown = [{"agent": a, "text": render(task, inst, p)} for a, p in enumerate((wrong, best, wrong))]
    pick = O.HeuristicBackend(prof(p_pick_best=1.0)).answer(req(task, inst, role="aggregator", proposals=shown))
    assert canon(task, parse(task, inst, pick.text)) == canon(task, best)
    vote = O.HeuristicBackend(prof(p_pick_best=0.0)).answer(req(task, inst, role="judge", proposals=shown))
    assert canon(task, parse(task, inst, vote.text)) == canon(task, wrong)


@pytest.mark.parametrize("task,inst", CASES, ids=IDS)
def test_unparsable_replies_parse_to_invalid(task, inst):
    be = O.HeuristicBackend(prof(p_unparsable=1.0))
    for role in ("proposer", "aggregator", "reflector"):
        assert is_invalid(parse(task, inst, be.answer(req(task, inst, role=role)).text))
    assert parse_verdict(be.answer(req(task, inst, role="validator")).text) is None
    if task == "negotiation":
        assert is_invalid(N.parse_response(be.answer(req(task, inst)).text))


@pytest.mark.parametrize("task,inst", CASES, ids=IDS)
def test_clears_claims_verdicts_and_synthesis(task, inst):
    best, wrong = best_of(task, inst), wrongs(task, inst, 1)[0]
    claimer = O.HeuristicBackend(prof(p_correct=1.0, p_persuade=0.0, p_refine=0.0))
    lines = [ln.split(" claim: ", 1)[1]
             for ln in parse_claims(claimer.answer(req(task, inst, role="claimer", n=3)).text)]
    assert len(lines) == 3
    assert all(is_right(task, inst, parse(task, inst, ln)) for ln in lines)  # ties may differ
    n_free = parse_claims(claimer.answer(req(task, inst, role="claimer", sample=1)).text)
    assert 2 <= len(n_free) <= 4
    claims = [{"id": "a1", "agent": 0, "text": f"answer claim: {render(task, inst, wrong)}"},
              {"id": "b1", "agent": 1, "text": f"answer claim: {render(task, inst, best)}"}]
    exact = O.HeuristicBackend(prof(p_accept_wrong=0.0, p_reject_right=0.0))
    votes = parse_claim_votes(exact.answer(req(task, inst, role="reviewer", claims=claims)).text, ["a1", "b1"])
    assert votes == ({"b1"}, {"a1"})
    synth = exact.answer(req(task, inst, role="synthesizer", claims=claims))
    assert canon(task, parse(task, inst, synth.text)) == canon(task, best)
    tallied = [dict(claims[0], stance="preserve"), dict(claims[1], stance="avoid")]
    synth = exact.answer(req(task, inst, role="synthesizer", claims=tallied))
    assert canon(task, parse(task, inst, synth.text)) == canon(task, wrong)


def test_opponents_play_the_rule():
    be = O.HeuristicBackend("weak")
    s = _gomoku_state()
    move = parse("gomoku", s, be.answer(req("gomoku", s, role="opponent")).text)
    assert G.move_score(s, move) == G.move_score(s, G.greedy_move(s, random.Random(0)))
    st = N.new_negotiation(N.negotiation_configs(1)[0])
    everything = N.Allocation((st.config.counts, (0,) * len(st.config.counts)))
    text = render("negotiation", st, everything)  # the proposer keeps it all: rejected
    assert N.parse_response(be.answer(req("negotiation", st, role="opponent", offer=text)).text) is False
    d = T.DuelDecision(T.new_duel(), 1)
    act = parse("tactic_duel", d, be.answer(req("tactic_duel", d, role="opponent")).text)
    assert act == T.rule_action(d.state, 1, random.Random(0)) or act in T.legal_actions(d.state, 1)


def test_recruiter_and_heterogeneous_agents():
    inst = M.bottleneck_5x5()
    be = O.HeuristicBackend("weak", agent_profiles={1: prof(p_correct=1.0)})
    assert len(be.answer(req("mapf", inst, role="recruiter", n=4)).text.splitlines()) == 4
    assert be.profile_for(0).name == "weak" and be.profile_for(1).name == "test"
    out = parse("mapf", inst, be.answer(req("mapf", inst, agent=1)).text)
    assert M.score_mapf(out, inst) == 100.0


# --- profiles ----------------------------------------------------------------------------------

def test_profile_lookup_error_names_field_and_allowed_values():
    with pytest.raises(ValueError, match=r"profile: 'genius' is not allowed; allowed: strong, medium, weak"):
        O.get_profile("genius")
    with pytest.raises(ValueError, match="profile"):
        O.HeuristicBackend("genius").answer(req("mapf", M.bottleneck_5x5()))
    with pytest.raises(ValueError, match="p_refine"):
        dataclasses.replace(BASE, p_refine=1.5)
    assert set(O.PROFILES) == {"strong", "medium", "weak"}
    assert O.get_profile("strong") is O.PROFILES["strong"]


def test_strong_beats_weak_on_initial_proposals():
    cases = E.generate_evidence(10)
    def mean(name):
        be = O.HeuristicBackend(name)
        return sum(E.score_evidence(parse("evidence_chain", c, be.answer(req("evidence_chain", c, agent=a)).text), c)
                   for c in cases for a in range(3)) / 30
    assert mean("strong") > mean("medium") > mean("weak")
