"""MASTraceBench trajectory records and metrics (mastracebench.txt §3.3, eqs 2-5, 23-24) on
hand-built trajectories: every GAB and AR label, AL of both signs, TC without scoring calls,
OV with invalid outputs, FPA, CG, games, Table 7's correlations against scipy, and the tables."""

from __future__ import annotations

import json
import math
import sys

import jsonschema
import pandas as pd
import pytest
from collablab.studies.mastracebench import metrics as M
from collablab.studies.mastracebench.trajectory import (
    TRAJECTORY_SCHEMA,
    Answer,
    Call,
    EpisodeResult,
    Proposal,
    ProposerTrace,
    Trajectory,
    make_call_id,
    parse_call_id,
    validate_episode,
    validate_trajectory,
)
from scipy import stats

THIRD, TWO_THIRDS = 100 / 3, 200 / 3


def P(score: float, canonical: object = None) -> Proposal:
    return Proposal(f"plan-{score:.4f}" if canonical is None else canonical, score)


def traj(inits, finals, answer, *, method="Int. Debate", task="mapf", instance="i0", state=None, s_star=100.0,
         calls=(), canon_finals=None, answer_valid=True, run=0) -> Trajectory:
    """A unit with proposers a0, a1, ...; ``None`` in ``inits``/``finals`` is an invalid proposal."""
    props = []
    for i, (a, b) in enumerate(zip(inits, finals)):
        init = Proposal.invalid() if a is None else P(a)
        if b is None:
            fin = Proposal.invalid()
        else:
            fin = P(b, None if canon_finals is None else canon_finals[i])
        props.append(ProposerTrace(f"a{i}", init, fin))
    ans = Answer(f"plan-{answer:.4f}", answer, True, "vote") if answer_valid else Answer(None, 0.0, False, "vote")
    t = Trajectory(method, task, instance, state, s_star, tuple(props), ans, run=run)
    if calls:
        t = Trajectory(method, task, instance, state, s_star, tuple(props), ans,
                       tuple(Call(t.call_id(role, rnd, agent), role, rnd, agent, i_t, o_t, kind=kind)
                             for role, rnd, agent, i_t, o_t, kind in calls), run=run)
    return t


# ------------------------------------------------------------------ the paper's MAPF example (§3.3)

def test_mapf_example_strongest_initial_lost_is_regress():
    t = traj([100, THIRD, THIRD], [TWO_THIRDS, TWO_THIRDS, TWO_THIRDS], TWO_THIRDS)
    assert M.best_initial(t) == 100
    assert M.gab(t) == "Regress"
    ar = {a.agent: (a.group, a.label) for a in M.agent_refinement(t)}
    assert ar == {"a0": ("strong", "Regress"), "a1": ("weak", "Partial"), "a2": ("weak", "Partial")}


def test_mapf_example_new_value_is_improve():
    t = traj([THIRD] * 3, [THIRD, TWO_THIRDS, THIRD], TWO_THIRDS)
    assert M.gab(t) == "Improve"


def test_mapf_example_loss_at_aggregation_is_positive_al():
    t = traj([100, THIRD, THIRD], [100, TWO_THIRDS, THIRD], TWO_THIRDS)
    assert M.aggregation_gap(t) == pytest.approx(THIRD)
    assert M.aggregation_loss([t]) == pytest.approx(33.3333, abs=1e-3)


# ------------------------------------------------------------------ GAB

def test_every_gab_label_and_s_star_decides_keep():
    assert M.gab(traj([80, 40], [80, 80], 90)) == "Improve"
    assert M.gab(traj([80, 40], [80, 80], 70)) == "Regress"
    assert M.gab(traj([100, 40], [100, 100], 100)) == "OptKeep"
    assert M.gab(traj([60, 40], [60, 60], 60)) == "SubKeep"
    assert M.gab(traj([60, 40], [60, 60], 60, s_star=60)) == "OptKeep"  # S* of the unit, not 100


def test_gab_tolerance_is_tight():
    assert M.gab(traj([50, 10], [50, 50], 50 + 1e-9)) == "SubKeep"
    assert M.gab(traj([50, 10], [50, 50], 50 + 1e-3)) == "Improve"
    assert M.gab(traj([50, 10], [50, 50], 50 - 1e-3)) == "Regress"
    assert M.gab_label(50, 50, 50 + 1e-3) == "SubKeep"


def test_no_proposers_no_gab_ar_al():
    t = Trajectory("MAS-GPT", "mapf", "i0", None, 100.0, (), Answer("x", 40.0, True, "program"))
    assert M.gab(t) is None and M.agent_refinement(t) == [] and M.aggregation_gap(t) is None
    assert math.isnan(M.aggregation_loss([t]))


# ------------------------------------------------------------------ AR

def test_every_ar_label_strong_and_weak():
    t = traj([60, 60, 60, 20, 20, 20, 20, 20], [80, 40, 60, 70, 60, 40, 20, 10], 60)
    labels = [(a.group, a.label) for a in M.agent_refinement(t)]
    assert labels == [("strong", "Improve"), ("strong", "Regress"), ("strong", "SubKeep"), ("weak", "Surpass"),
                      ("weak", "Reach"), ("weak", "Partial"), ("weak", "Keep"), ("weak", "Degrade")]
    opt = traj([100, 100, 50], [100, 90, 100], 100)  # a tie at the top: both are strong
    assert [(a.group, a.label) for a in M.agent_refinement(opt)] == [
        ("strong", "OptKeep"), ("strong", "Regress"), ("weak", "Reach")]


def test_weak_label_refuses_a_strong_agent():
    with pytest.raises(ValueError, match="Strong Agent"):
        M.weak_label(50, 60, 50)
    assert M.weak_label(50 - 1e-3, 50, 50) == "Reach"


# ------------------------------------------------------------------ AL

def test_al_negative_when_answer_beats_every_final_and_mean_over_units():
    neg = traj([40, 50], [40, 50], 70)
    assert M.aggregation_gap(neg) == -20
    pos = traj([100, THIRD, THIRD], [100, TWO_THIRDS, THIRD], TWO_THIRDS)
    assert M.aggregation_loss([neg, pos]) == pytest.approx((THIRD - 20) / 2)


# ------------------------------------------------------------------ TS / CG

def test_ts_cg_signs_and_baseline_needed():
    units = [traj([50], [50], 50, method="Single-Agent", instance="a"),
             traj([50], [50], 50, method="Single-Agent", instance="b"),
             traj([60, 60], [70, 70], 70, method="MAPR", instance="a"),
             traj([60, 60], [70, 70], 70, method="MAPR", instance="b"),
             traj([20, 20], [30, 30], 30, method="Adv. Debate", instance="a"),
             traj([20, 20], [30, 30], 50, method="Adv. Debate", instance="b")]
    scores = M.task_scores(units)
    assert scores[("MAPR", "mapf")] == 70 and scores[("Adv. Debate", "mapf")] == 40
    cg = M.collaboration_gains(scores)
    assert cg == {("MAPR", "mapf"): 20.0, ("Adv. Debate", "mapf"): -10.0}
    assert M.collaboration_gain(40, 50) < 0
    with pytest.raises(ValueError, match="Single-Agent"):
        M.collaboration_gains({("MAPR", "mapf"): 70.0})
    table = M.ts_cg_table(units)
    assert list(table.index) == ["Single-Agent", "MAPR", "Adv. Debate"]
    assert table.loc["Adv. Debate", ("mapf", "CG")] == -10 and math.isnan(table.loc["Single-Agent", ("mapf", "CG")])


def test_never_parsable_method_has_ov_zero_and_finite_ts_zero():
    dead = [traj([None, None], [None, None], 0, method="Broken", instance=str(i), answer_valid=False)
            for i in range(3)]
    assert M.output_validity(dead) == 0.0
    assert M.task_score(dead) == 0.0
    assert M.gab(dead[0]) == "SubKeep"  # 0 = b = 0 < S*
    assert M.final_proposal_agreement(dead) == 0.0  # invalid finals do not agree


def test_games_ts_from_episodes_and_labels_per_state():
    episodes = [EpisodeResult("Int. Debate", "gomoku", f"g{i}", s) for i, s in enumerate([100, 0, 100, 100])]
    episodes += [EpisodeResult("Single-Agent", "gomoku", f"g{i}", s) for i, s in enumerate([100, 0, 0, 100])]
    states = [traj([80, 40, 40], [80, 80, 40], 80, task="gomoku", instance="g0", state=0, s_star=80),
              traj([60, 40, 20], [60, 60, 60], 40, task="gomoku", instance="g0", state=1, s_star=100),
              traj([40, 40, 40], [60, 60, 60], 60, task="gomoku", instance="g0", state=2, s_star=100)]
    assert [M.gab(t) for t in states] == ["OptKeep", "Regress", "Improve"]
    assert M.episode_task_score(episodes[:4]) == 75
    with pytest.raises(ValueError, match="episode"):
        M.task_score(states)
    scores = M.task_scores(states, episodes)  # per-state answers do not enter a game's TS
    assert scores == {("Int. Debate", "gomoku"): 75.0, ("Single-Agent", "gomoku"): 50.0}
    assert M.collaboration_gains(scores) == {("Int. Debate", "gomoku"): 25.0}
    g = M.gab_table(states)
    assert g.loc[("Int. Debate", "gomoku")].to_dict() == pytest.approx(
        {"Improve": 100 / 3, "Regress": 100 / 3, "OptKeep": 100 / 3, "SubKeep": 0.0, "n": 3})


# ------------------------------------------------------------------ TC

def test_tc_counts_agent_calls_only_and_is_a_multiplier():
    single = traj([50], [50], 50, method="Single-Agent", task="optiongen",
                  calls=[("solver", 0, "a0", 80, 20, "agent"), ("judge", 0, "scorer", 500, 50, "score_judge")])
    mas = traj([50, 50], [50, 50], 50, method="Adv. Debate", task="optiongen",
               calls=[("debater", 0, "a0", 80, 20, "agent"), ("debater", 0, "a1", 80, 20, "agent"),
                      ("judge", 1, "judge", 90, 10, "agent"),  # the method's own judge counts
                      ("judge", 0, "scorer", 900, 100, "score_judge"),
                      ("probe", 0, "opponent", 400, 1, "acceptance_probe")])
    assert M.token_cost(single) == 100 and M.token_cost(mas) == 300
    assert M.tc_multipliers([single, mas]) == {("Single-Agent", "optiongen"): 1.0, ("Adv. Debate", "optiongen"): 3.0}
    table = M.tc_table([mas, single])
    assert list(table.index) == ["Single-Agent", "Adv. Debate"] and table.loc["Adv. Debate", "optiongen"] == 3.0


# ------------------------------------------------------------------ OV / FPA

def test_ov_counts_initial_final_and_answer():
    t = traj([None, 50, 40], [50, 50, None], 50)  # 7 outputs, 2 invalid
    assert M.output_validity([t]) == pytest.approx(5 / 7)
    u = traj([50, 40], [50, 50], 0, answer_valid=False)  # 5 outputs, 1 invalid
    assert M.output_validity([t, u]) == pytest.approx(9 / 12)
    with pytest.raises(ValueError, match="scores 0"):
        Proposal("x", 10.0, False)


def test_fpa_agreement_disagreement_and_not_applicable():
    agree = traj([50, 40, 30], [50, 50, 50], 50, method="Consistency", canon_finals=[(1, 2), [1, 2], (1, 2)])
    differ = traj([50, 40, 30], [50, 50, 50], 50, method="Consistency", canon_finals=["x", "x", "y"])
    assert M.final_agreement(agree) is True and M.final_agreement(differ) is False
    assert M.final_proposal_agreement([agree, differ]) == 0.5
    assert M.final_proposal_agreement([agree, agree, differ]) == pytest.approx(2 / 3)
    sets = traj([50, 40], [50, 50], 50, canon_finals=[frozenset({"b", "a"}), ["a", "b"]])
    assert M.final_agreement(sets) is True  # sets compare as sorted lists, as after a JSON round trip
    solo = traj([50], [60], 60, method="Reflection")
    assert M.final_agreement(solo) is None and M.final_proposal_agreement([solo]) is None
    multi_but_na = traj([50, 40], [50, 50], 50, method="MAS-GPT", canon_finals=["x", "x"])
    assert M.final_proposal_agreement([multi_but_na]) is None
    assert M.final_proposal_agreement([multi_but_na], not_applicable=()) == 1.0
    table = M.ov_fpa_table([agree, differ, solo])
    assert table.loc["Consistency", ("mapf", "FPA")] == 50.0
    assert math.isnan(table.loc["Reflection", ("mapf", "FPA")]) and table.loc["Reflection", ("mapf", "OV")] == 100


# ------------------------------------------------------------------ Table 7 correlations

def test_correlation_matches_scipy():
    x, y = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2.0, 1.0, 4.0, 3.0, 7.0, 5.0]
    c = M.correlation(x, y)
    rho, p_rho = stats.spearmanr(x, y)
    r, p_r = stats.pearsonr(x, y)
    assert (c.spearman, c.spearman_p, c.pearson, c.pearson_p, c.n) == pytest.approx((rho, p_rho, r, p_r, 6))
    assert c.spearman == pytest.approx(1 - 6 * 6 / (6 * 35))  # squared rank gaps sum to 6 by hand
    with pytest.raises(ValueError):
        M.correlation([1, 2], [1, 2])


def test_proposal_ts_correlation_across_methods():
    trajs, eps = [], []
    for k, (m, prop, wins) in enumerate([("A", 20, 1), ("B", 40, 2), ("C", 60, 2), ("D", 80, 4)]):
        trajs.append(traj([prop, prop], [prop, prop], prop, method=m, task="tactic_duel", instance="g", state=0))
        eps += [EpisodeResult(m, "tactic_duel", f"g{i}", 100 if i < wins else 0) for i in range(4)]
    c = M.proposal_ts_correlation(trajs, eps)
    assert c.n == 4
    assert c.pearson == pytest.approx(stats.pearsonr([20, 40, 60, 80], [25, 50, 50, 100])[0])
    assert M.mean_proposal_score(trajs[:1]) == 20
    assert M.mean_proposal_score([traj([10, 30], [50, 70], 90)], "initial") == 20
    assert M.mean_proposal_score([traj([10, 30], [50, 70], 90)]) == 40
    assert M.mean_proposal_score([traj([10, 30], [50, 70], 90)], "answer") == 90


def test_table7_scores_the_moves_played_not_the_drafts():
    """Issue 28: Table 7 is "over all replayed moves". Methods A-D play moves scoring 20, 40, 60, 80
    (TS 25, 50, 50, 100) while their proposers' drafts score the reverse (80 ... 20): the played
    moves correlate positively with TS, the drafts would negatively."""
    trajs, eps = [], []
    for m, played, draft, wins in [("A", 20, 80, 1), ("B", 40, 60, 2), ("C", 60, 40, 2), ("D", 80, 20, 4)]:
        trajs.append(traj([draft, draft], [draft, draft], played, method=m, task="gomoku", instance="g", state=0))
        eps += [EpisodeResult(m, "gomoku", f"g{i}", 100 if i < wins else 0) for i in range(4)]
    c = M.proposal_ts_correlation(trajs, eps)
    assert c.pearson == pytest.approx(stats.pearsonr([20, 40, 60, 80], [25, 50, 50, 100])[0]) and c.pearson > 0
    assert M.proposal_ts_correlation(trajs, eps, which="proposals").pearson == pytest.approx(-c.pearson)


# ------------------------------------------------------------------ tables of Layer 2

def test_gab_ar_al_tables_and_table4_summary():
    units = [traj([100, THIRD, THIRD], [TWO_THIRDS, TWO_THIRDS, TWO_THIRDS], TWO_THIRDS, instance="a"),
             traj([THIRD] * 3, [THIRD, TWO_THIRDS, THIRD], TWO_THIRDS, instance="b"),
             traj([100, 50, 50], [100, 100, 50], 100, instance="c"),
             traj([50, 50, 20], [50, 50, 20], 50, instance="d")]
    g = M.gab_table(units).loc[("Int. Debate", "mapf")]
    assert g[list(M.GAB_LABELS)].tolist() == [25.0, 25.0, 25.0, 25.0] and g["n"] == 4
    ar = M.ar_table(units)
    strong = ar.loc[("Int. Debate", "mapf", "strong")]  # a0 | a0 a1 a2 | a0 | a0 a1
    assert strong["n"] == 7
    assert strong[list(M.AR_STRONG_LABELS)].tolist() == pytest.approx([100 / 7, 100 / 7, 100 / 7, 400 / 7])
    assert strong[list(M.AR_WEAK_LABELS)].isna().all()
    weak = ar.loc[("Int. Debate", "mapf", "weak")]  # Partial Partial | Reach Keep | Keep
    assert weak["n"] == 5 and weak[list(M.AR_WEAK_LABELS)].tolist() == [0.0, 20.0, 40.0, 40.0, 0.0]
    s = M.refinement_summary(units).loc[("Int. Debate", "mapf")]
    assert s.to_dict() == pytest.approx({"GI": 25.0, "GR": 25.0, "WI": 60.0, "SR": 100 / 7})
    lossy = traj([100, 50], [100, 60], 60, method="Consistency", instance="a")  # gap 40
    gainy = traj([40, 50], [40, 50], 70, method="Consistency", instance="b")  # gap -20
    al = M.al_table([*units, lossy, gainy, traj([20, 20], [20, 20], 20, method="Consistency", task="gomoku",
                                                 instance="g", state=0)])
    assert isinstance(al, pd.DataFrame) and list(al.columns) == ["mapf", "gomoku"]
    assert al.loc["Int. Debate", "mapf"] == 0.0 and al.loc["Consistency", "mapf"] == 10.0
    assert math.isnan(al.loc["Int. Debate", "gomoku"]) and al.loc["Consistency", "gomoku"] == 0.0


# ------------------------------------------------------------------ the record

def _good() -> Trajectory:
    return traj([100, THIRD], [100, TWO_THIRDS], TWO_THIRDS, method="CLEARS w/o CCE", task="gomoku", state=3,
                calls=[("proposer", 0, "a0", 10, 5, "agent"), ("judge", 0, "scorer", 7, 1, "score_judge")])


def test_round_trip_and_schema_is_valid_json_schema():
    t = _good()
    d = json.loads(json.dumps(t.to_dict()))
    validate_trajectory(d)
    assert Trajectory.from_dict(d) == t
    jsonschema.Draft202012Validator.check_schema(TRAJECTORY_SCHEMA)
    assert TRAJECTORY_SCHEMA["version"] == 1 and d["version"] == 1
    e = EpisodeResult("MAPR", "negotiation", "cfg1/rev", 61.5, run=2)
    assert EpisodeResult.from_dict(json.loads(json.dumps(e.to_dict()))) == e


def test_call_id_format_survives_slashes():
    cid = make_call_id("CLEARS w/o CCE", "mapf", "inst/7", None, "proposer", 1, "a2", 3)
    assert cid.count("/") == 7 and cid.startswith("CLEARS w%2Fo CCE/mapf/inst%2F7/-/proposer/1/a2/3")
    assert parse_call_id(cid) == ("CLEARS w/o CCE", "mapf", "inst/7", None, "proposer", 1, "a2", 3)
    with pytest.raises(ValueError, match="8"):
        parse_call_id("a/b/c")


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d.pop("answer"), "answer"),
    (lambda d: d["proposers"][1]["initial"].update(score="high"), "proposers[1].initial.score"),
    (lambda d: d["proposers"][0]["final"].update(score=120), "proposers[0].final.score"),
    (lambda d: d.update(colour="red"), "colour"),
    (lambda d: d["answer"].update(valid=False), "answer.score"),
    (lambda d: d["calls"][0].update(kind="oracle"), "calls[0].kind"),
    (lambda d: d["calls"][0].update(round=2), "calls[0].call_id"),
    (lambda d: d.update(s_star=50.0), "answer.score"),  # 66.7 > S*
    (lambda d: d.update(version=2), "version"),
])
def test_validation_names_the_field(mutate, field):
    d = _good().to_dict()
    mutate(d)
    with pytest.raises(ValueError) as err:
        validate_trajectory(d)
    assert f"field {field}:" in str(err.value)


def test_validation_without_jsonschema_still_names_the_field(monkeypatch):
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # import jsonschema -> ImportError
    d = _good().to_dict()
    validate_trajectory(d)
    d["proposers"][0]["initial"]["score"] = -1
    with pytest.raises(ValueError, match=r"field proposers\[0\]\.initial\.score:"):
        validate_trajectory(d)
    with pytest.raises(ValueError, match="field calls:"):
        validate_trajectory({**_good().to_dict(), "calls": {}})
    with pytest.raises(ValueError, match="field episode:"):
        validate_episode({"version": 1, "method": "m", "task": "t", "score": 1.0, "run": 0})
