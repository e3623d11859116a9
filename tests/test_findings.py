"""Notebook text that cannot lie: every findings function gives the paper's wording only when the
numbers show the effect, and the other wording (naming the backend) when they do not; every number a
sentence quotes is the table cell it names; and each notebook's experiment, run at smoke size
through the notebook's own code path, produces only sentences consistent with its tables."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import notebook_defaults

from collablab.cli import notebook_paths, parameter_set
from collablab.studies import mecobench as S
from collablab.studies.mecobench import findings as F
from collablab.studies.mecobench import tables as T

ROOT = Path(__file__).resolve().parents[1]
B = "heuristic"


# -- what "consistent" means ------------------------------------------------------------------------
def _decimals(text: str) -> list[str]:
    """Decimal numbers of a sentence, without section numbers (§6.2) and table/figure names."""
    return re.findall(r"\d+\.\d+", re.sub(r"§[\d.]+", "", text))


def check_consistent(f: F.Finding, tables: dict[str, pd.DataFrame]) -> None:
    """Every quote is the cell it names and appears verbatim; every decimal in the text is quoted;
    a 'not shown' sentence says so (the notebook's headline names the backend once, issue 24)."""
    assert isinstance(f.text, str) and f.text and f.claim
    backend = F.backend_of(*tables.values())
    lead = f"**{backend}**: "  # (issue 24: findings no longer start with it; studies not yet moved still do)
    body = f.text[len(lead):] if f.text.startswith(lead) else f.text
    for q in f.quotes:
        assert q.text in f.text, (q.text, f.text)
        t = tables[q.table]
        rows = t
        for k, v in q.where:
            rows = rows[rows[k] == v]
        assert len(rows), (q, "no such row")
        assert all(math.isclose(float(x), q.value, rel_tol=0, abs_tol=1e-12) for x in rows[q.column]), (q, rows)
        digits = len(re.sub(r"[^\d.]", "", q.text).partition(".")[2])
        scale = 100 if "%}" in q.fmt else 1
        assert abs(q.shown_value * scale - q.value * scale) <= 0.5 * 10 ** -digits + 1e-9, q
    quoted = " ".join(q.text for q in f.quotes)
    for d in _decimals(body):  # the label may hold a version (Llama-3.1-8B)
        assert d in quoted, (d, f.text)
    if f.shown is False:
        assert "not" in f.text, f.text


def _t(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{**r, "backend": r.get("backend", B)} for r in rows])


def _ok(f: F.Finding, tables: dict[str, pd.DataFrame], shown: bool | None, *phrases: str) -> None:
    check_consistent(f, tables)
    assert f.shown is shown, f.text
    for p in phrases:
        assert p in f.text, (p, f.text)


# -- §4 (MECoBench; issue 24: intervals and "too few units to tell") ---------------------------------
def _t8(sr1, sr2, cases=200):
    return _t([{"structure": "parallel", "n_agents": n, "cases": cases, "SR": v, "AUC": 0.5}
               for n, v in ((1, sr1), (2, sr2))])


def test_second_agent_gain_follows_the_interval():
    t = _t8(0.4, 0.6)
    _ok(F.second_agent_gain(t), {"table8": t}, True, "SR is 40% with 1 agent and 60% with 2 agents",
        "A second agent raises SR, as in the paper")
    t = _t8(0.6, 0.4)
    _ok(F.second_agent_gain(t), {"table8": t}, False, "This run does not show the paper's gain from a second agent")
    t = _t8(0.4, 0.6, cases=6)  # the same numbers from 6 tasks: too few units to tell
    _ok(F.second_agent_gain(t), {"table8": t}, None, "Too few units to tell whether a second agent raises SR")
    t = T.table8(pd.DataFrame({"structure": "parallel", "protocol": "broadcast", "n_agents": [1] * 4 + [2] * 4,
                               "success": [0, 0, 1, 0, 1, 1, 1, 0], "completed": 1, "n_subgoals": 2,
                               "progress": [[0, 1]] * 8, "credits": [{}] * 8, "actions": 4, "conflict_actions": 0,
                               "handover_attempts": 0, "handover_failures": 0, "spatial_errors": 0, "tokens": 0,
                               "budget": 60, "backend": B}))
    f = F.second_agent_gain(t)
    _ok(f, {"table8": t}, None, "25% [", "75% [")  # Wilson intervals from the table's own cells
    _ok(F.second_agent_gain(t.iloc[:1]), {"table8": t.iloc[:1]}, None, "Not checked")


def _scaling(values: dict[tuple[str, int], float], metric="SR", structure="parallel", prior="full", cases=200):
    return _t([{"structure": structure, "prior": prior, "protocol": p, "n_agents": n, metric: v, "cases": cases}
               for (p, n), v in values.items()])


W = {"structure": "parallel", "prior": "full"}


def test_inverted_u_follows_the_intervals():
    bc = {"structure": "parallel", "prior": "full", "protocol": "broadcast"}
    t = _scaling({("broadcast", n): v for n, v in zip(range(1, 6), [0.42, 0.5, 0.71, 0.55, 0.5])})
    _ok(F.inverted_u(t, bc), {"scaling": t}, True, "42% (1 agent)", "peaks at 3 agents", "as in the paper")
    t = _scaling({("broadcast", n): v for n, v in zip(range(1, 6), [0.42, 0.5, 0.61, 0.65, 0.7])})
    _ok(F.inverted_u(t, bc), {"scaling": t}, False, "SR is highest with 5 agents", "This run does not show")
    t = _scaling({("broadcast", n): 0.5 for n in range(1, 4)})
    _ok(F.inverted_u(t, bc), {"scaling": t}, False, "the same at every team size")
    t = _scaling({("broadcast", n): v for n, v in zip(range(1, 6), [0.42, 0.5, 0.71, 0.55, 0.5])}, cases=8)
    _ok(F.inverted_u(t, bc), {"scaling": t}, None, "Too few units to tell")
    t = _scaling({("broadcast", n): v for n, v in zip(range(1, 4), [0.5, 0.7, 0.6])}, cases=8)
    _ok(F.inverted_u(t, bc), {"scaling": t}, None)
    t = _scaling({("broadcast", 1): 0.4, ("broadcast", 2): 0.5})
    _ok(F.inverted_u(t, bc), {"scaling": t}, None, "fewer than three team sizes")


def _comm(bc: list[float], iso: list[float], sizes=(1, 2, 3, 4), cases=200):
    return _scaling({**{("broadcast", n): v for n, v in zip(sizes, bc)},
                     **{("isolated", n): v for n, v in zip(sizes, iso)}}, cases=cases)


def test_communication_helps_combines_team_sizes():
    t = _comm([0.4, 0.7, 0.65, 0.6], [0.4, 0.5, 0.45, 0.3])
    _ok(F.communication_helps(t, W), {"scaling": t}, True, "70% vs 50% (2 agents)", "at every team size, as in the paper")
    t = _comm([0.4, 0.6, 0.3, 0.3], [0.4, 0.5, 0.55, 0.5])
    _ok(F.communication_helps(t, W), {"scaling": t}, False, "broadcast is not ahead with 3 and 4 agents")
    t = _comm([0.4, 0.7, 0.65, 0.6], [0.4, 0.5, 0.45, 0.3], cases=5)
    _ok(F.communication_helps(t, W), {"scaling": t}, None, "Too few units")
    _ok(F.communication_helps(_comm([0.4], [0.4], sizes=(1,)), W), {"scaling": _comm([0.4], [0.4], sizes=(1,))},
        None, "Not checked")


def test_communication_gap_widens_needs_a_lead_to_widen():
    t = _comm([0.4, 0.6, 0.65, 0.6], [0.4, 0.5, 0.45, 0.3])
    f = F.communication_gap_widens(t, W)
    _ok(f, {"scaling": t}, True, "ahead of isolated agents with 2 agents (60% vs 50%)", "60% vs 30% with 4 agents")
    assert "65%" not in f.text  # the middle sizes are communication_helps' sentence, not repeated here
    t = _comm([0.4, 0.45, 0.65, 0.6], [0.4, 0.5, 0.45, 0.3])  # a sign change is not a widening gap
    _ok(F.communication_gap_widens(t, W), {"scaling": t}, False, "behind", "no lead to widen")
    t = _comm([0.4, 0.6, 0.65, 0.6], [0.4, 0.5, 0.45, 0.3], cases=4)
    _ok(F.communication_gap_widens(t, W), {"scaling": t}, None)


def _t11(par_bc, par_iso, seq_bc, seq_iso, hfr_bc=0.3, hfr_iso=0.6, cases=200):
    return _t([{"structure": s, "protocol": p, "SR": v, "HFR": h, "cases": cases} for s, p, v, h in (
        ("parallel", "broadcast", par_bc, math.nan), ("parallel", "isolated", par_iso, math.nan),
        ("sequential", "broadcast", seq_bc, hfr_bc), ("sequential", "isolated", seq_iso, hfr_iso))])


def test_communication_by_structure_and_handovers():
    t = _t11(0.8, 0.7, 0.6, 0.2)
    _ok(F.communication_by_structure(t), {"table11": t}, True, "60% vs 20% on sequential", "costs more on sequential")
    t = _t11(0.8, 0.3, 0.6, 0.4)
    _ok(F.communication_by_structure(t), {"table11": t}, False, "larger drop on sequential tasks")
    t = _t11(0.8, 0.7, 0.6, 0.2, cases=6)
    _ok(F.communication_by_structure(t), {"table11": t}, None)
    _ok(F.communication_by_structure(t.iloc[:2]), {"table11": t.iloc[:2]}, None, "Not checked")
    t = _t11(0.8, 0.6, 0.4, 0.1, 0.3, 0.6)
    _ok(F.handover_failures_without_communication(t), {"table11": t}, True, "HFR is 60% isolated vs 30%")
    t = _t11(0.8, 0.6, 0.4, 0.1, 0.6, 0.3)
    _ok(F.handover_failures_without_communication(t), {"table11": t}, False, "rise in HFR")
    t = _t11(0.8, 0.6, 0.4, 0.1, math.nan, 0.3)
    _ok(F.handover_failures_without_communication(t), {"table11": t}, None, "HFR is NA")


def _trends(slopes: dict[int, float], structure="parallel", prior="full", cases=40):
    """Trend lines as :func:`.tables.objects_trends` gives them: slopes in percentage points per object."""
    return _t([{"structure": structure, "prior": prior, "n_agents": n, "slope": s * 100, "intercept": 100.0,
                "min_objects": 2, "max_objects": 7, "cases": cases} for n, s in slopes.items()])


def test_objects_decline_and_robust():
    t = _trends({1: -0.12, 2: -0.05, 3: -0.04})
    _ok(F.objects_decline(t, W), {"trends": t}, True, "-12.0 pp (1 agent)", "SR falls as tasks have more objects")
    _ok(F.objects_robust(t, W), {"trends": t}, True, "slope of -12.0 pp", "flatter with 2 and 3 agents")
    t = _trends({1: -0.05, 2: 0.0, 3: -0.12})
    _ok(F.objects_decline(t, W), {"trends": t}, False, "decline for 2 agents")
    _ok(F.objects_robust(t, W), {"trends": t}, False, "not with 3")
    t = _trends({1: -0.12, 2: -0.05}, cases=6)
    _ok(F.objects_decline(t, W), {"trends": t}, None, "Too few units")
    _ok(F.objects_robust(_trends({2: -0.05}), W), {"trends": _trends({2: -0.05})}, None, "Not checked")


# -- §5 ---------------------------------------------------------------------------------------------
def _modes(srs: dict[str, float], structure="parallel", cases=200):
    return _t([{"structure": structure, "protocol": p, "SR": v, "AUC": 0.5, "cases": cases} for p, v in srs.items()])


def test_protocol_ranking_by_intervals():
    t = _modes({"isolated": 0.3, "broadcast": 0.55, "leader": 0.75, "discuss": 0.5})
    _ok(F.protocol_ranking(t, "parallel"), {"modes": t}, True, "leader 75%, broadcast 55%, discuss 50%, isolated 30%",
        "The leader ranks first, as in the paper", "Isolated agents rank last, as in the paper")
    t = _modes({"isolated": 0.65, "broadcast": 0.8, "leader": 0.4, "discuss": 0.3})
    _ok(F.protocol_ranking(t, "parallel"), {"modes": t}, False, "leader ranking first: it ranks 3rd",
        "isolated agents ranking last")
    t = _modes({"isolated": 0.3, "broadcast": 0.7, "leader": 0.7})
    _ok(F.protocol_ranking(t, "parallel"), {"modes": t}, None, "Too few units to tell whether the leader")
    _ok(F.protocol_ranking(_modes({"broadcast": 0.7}), "parallel"), {"modes": _modes({"broadcast": 0.7})}, None,
        "Not checked")


def test_leader_scaling_wordings():
    t = _scaling({("leader", 2): 0.8, ("broadcast", 2): 0.7, ("leader", 5): 0.6, ("broadcast", 5): 0.65})
    _ok(F.leader_scaling(t, W), {"scaling": t}, True, "80% vs 70% with 2 agents", "shrinks as the team grows")
    t = _scaling({("leader", 2): 0.8, ("broadcast", 2): 0.7, ("leader", 5): 0.9, ("broadcast", 5): 0.65})
    _ok(F.leader_scaling(t, W), {"scaling": t}, False, "does not shrink")
    t = _scaling({("leader", 2): 0.6, ("broadcast", 2): 0.7, ("leader", 5): 0.5, ("broadcast", 5): 0.65})
    _ok(F.leader_scaling(t, W), {"scaling": t}, False, "it does not beat broadcast with 2 agents")
    t = _scaling({("leader", 2): 0.8, ("broadcast", 2): 0.7, ("leader", 5): 0.6, ("broadcast", 5): 0.65}, cases=3)
    _ok(F.leader_scaling(t, W), {"scaling": t}, None)


def _mixed(weak, mixed, strong, cases=200):
    return _t([{"profile": p, "SR": v, "cases": cases} for p, v in
               (("weak,weak", weak), ("strong,weak", mixed), ("strong,strong", strong))])


def test_mixed_leader_wordings():
    args = ("profile", "weak,weak", "strong,weak", "strong,strong")
    t = _mixed(0.3, 0.6, 0.9)
    _ok(F.mixed_leader(t, *args), {"mixed": t}, True, "SR is 60% for the strong,weak team", "as in the paper")
    t = _mixed(0.6, 0.3, 0.9)
    _ok(F.mixed_leader(t, *args), {"mixed": t}, False, "lift from a strong leader")
    t = _mixed(0.3, 0.9, 0.6)
    _ok(F.mixed_leader(t, *args), {"mixed": t}, False, "gap to the all-strong team")
    t = _mixed(0.3, 0.6, 0.9, cases=5)
    _ok(F.mixed_leader(t, *args), {"mixed": t}, None)
    _ok(F.mixed_leader(t.iloc[:2], *args), {"mixed": t.iloc[:2]}, None, "Not checked")


def _memory(rows: dict[tuple[str, int, str], tuple[float, float, float]], cases=200):
    return _t([{"structure": s, "n_agents": n, "protocol": p, "SR": sr, "AUC": auc, "AUC_low": auc - 0.04,
                "AUC_high": auc + 0.04, "TokensPerStep": tok, "cases": cases} for (s, n, p), (sr, auc, tok) in rows.items()])


def test_shared_memory_findings():
    t = _memory({("parallel", 2, "shared_memory"): (0.8, 0.6, 10), ("parallel", 2, "broadcast"): (0.6, 0.5, 20),
                 ("parallel", 4, "shared_memory"): (0.7, 0.5, 10), ("parallel", 4, "broadcast"): (0.5, 0.4, 20),
                 ("sequential", 2, "shared_memory"): (0.2, 0.3, 10), ("sequential", 2, "broadcast"): (0.4, 0.4, 20)})
    tb = {"memory": t}
    _ok(F.shared_memory_vs_broadcast(t, "parallel"), tb, True, "80% vs 60% (2 agents)", "Shared memory raises SR")
    _ok(F.shared_memory_vs_broadcast(t, "sequential"), tb, True, "Shared memory lowers SR, as in the paper")
    _ok(F.shared_memory_progress(t, "parallel"), tb, True, "makes progress sooner")
    _ok(F.memory_tokens(t, "parallel"), tb, True, "10.0 vs 20.0 (2 agents)", "fewer tokens")
    t = _memory({("parallel", 2, "shared_memory"): (0.4, 0.4, 0), ("parallel", 2, "broadcast"): (0.6, 0.5, 0),
                 ("sequential", 2, "shared_memory"): (0.6, 0.3, 0), ("sequential", 2, "broadcast"): (0.4, 0.4, 0)})
    tb = {"memory": t}
    _ok(F.shared_memory_vs_broadcast(t, "parallel"), tb, False, "This run does not show")
    _ok(F.shared_memory_vs_broadcast(t, "sequential"), tb, False)
    _ok(F.shared_memory_progress(t, "parallel"), tb, False)
    _ok(F.memory_tokens(t, "parallel"), tb, None, "cannot be checked")
    _ok(F.shared_memory_vs_broadcast(t, "parallel"), tb, False)
    t = _memory({("parallel", 2, "shared_memory"): (0.7, 0.6, 0), ("parallel", 2, "broadcast"): (0.6, 0.5, 0)}, cases=7)
    _ok(F.shared_memory_vs_broadcast(t, "parallel"), {"memory": t}, None, "Too few units")
    _ok(F.shared_memory_vs_broadcast(t, "sequential"), {"memory": t}, None, "Not checked")


# -- §6.1 -------------------------------------------------------------------------------------------
def _priors(srs: dict[tuple[str, int], float], budgets=None, cases=200):
    budgets = budgets or {}
    return _t([{"prior": p, "budget": budgets.get(p, S.default_budget("parallel", p)), "n_agents": n, "SR": v,
                "cases": cases} for (p, n), v in srs.items()])


def test_budgets_used_both_wordings():
    expected = {p: S.default_budget("parallel", p) for p in ("full", "no_location")}
    t = _priors({("full", 1): 0.5, ("full", 2): 0.6, ("no_location", 1): 0.2})
    _ok(F.budgets_used(t, expected), {"priors": t}, True, "60 for full priors", "80 for no-location priors",
        "the paper's budgets")
    t = _priors({("full", 1): 0.5, ("no_location", 1): 0.2}, budgets={"full": 80})
    _ok(F.budgets_used(t, expected), {"priors": t}, None, "not the paper's budgets for full priors")


def test_default_budget_is_the_papers():
    assert S.default_budget("parallel", "full") == S.default_budget("parallel", "no_appearance") == 60
    for p in ("no_location", "none", "noisy", "noisy_no_appearance"):
        assert S.default_budget("parallel", p) == 80
    assert S.default_budget("sequential", "full") == 80


def test_prior_ablation_all_wordings():
    t = _priors({("full", 2): 0.8, ("no_location", 2): 0.3, ("noisy", 2): 0.7, ("no_appearance", 2): 0.8,
                 ("none", 2): 0.95})
    tb = {"priors": t}
    _ok(F.prior_ablation(t, "no_location"), tb, True, "SR is 30% with no-location priors and 80% with full priors",
        "Missing locations cost SR, as in the paper")
    _ok(F.prior_ablation(t, "noisy"), tb, True, "Noisy locations cost SR")
    _ok(F.prior_ablation(t, "none"), tb, False, "the paper's drop in SR with missing locations")
    _ok(F.prior_ablation(t, "no_appearance"), tb, None, "model-dependent")
    _ok(F.prior_ablation(t, "noisy", n_agents=3), tb, None, "Not checked")
    t = _priors({("full", 2): 0.8, ("no_location", 2): 0.3}, cases=5)
    _ok(F.prior_ablation(t, "no_location"), {"priors": t}, None, "Too few units")


def _t3(rows: dict[str, tuple[float, float]], cases=200):
    t = _t([{"prior": p, "SR 1 agent": a, "SR 2 agents": b, "cases 1 agent": cases, "cases 2 agents": cases}
            for p, (a, b) in rows.items()])
    t["relative gain"] = ((t["SR 2 agents"] - t["SR 1 agent"]) / t["SR 1 agent"].where(t["SR 1 agent"] > 0)).astype(float)
    return t


def test_gain_under_missing_priors_wordings():
    t = _t3({"full": (0.8, 0.9), "no_location": (0.2, 0.4), "noisy": (0.5, 0.7)})
    _ok(F.gain_under_missing_priors(t), {"table3": t}, True, "20% → 40% (no-location priors)",
        "A second agent helps under every missing or noisy prior")
    t = _t3({"full": (0.8, 0.9), "no_location": (0.4, 0.1), "noisy": (0.5, 0.7)})
    _ok(F.gain_under_missing_priors(t), {"table3": t}, False, "This run does not show")
    t = _t3({"full": (0.8, 0.9), "no_location": (0.2, 0.4)}, cases=4)
    _ok(F.gain_under_missing_priors(t), {"table3": t}, None, "Too few units")
    _ok(F.gain_under_missing_priors(_t3({"full": (0.8, 0.9)})), {"table3": _t3({"full": (0.8, 0.9)})}, None,
        "Not checked")


def test_largest_gain_prior_wordings():
    t = _t3({"full": (0.8, 0.9), "no_location": (0.2, 0.25), "noisy": (0.5, 0.7)})
    _ok(F.largest_gain_prior(t), {"table3": t}, True, "+40% (noisy priors)", "largest with noisy priors, as in the paper")
    t = _t3({"full": (0.4, 0.9), "no_location": (0.2, 0.25), "noisy": (0.5, 0.7)})
    _ok(F.largest_gain_prior(t), {"table3": t}, False, "+125% (full priors)", "it is largest with full priors")
    t = _t3({"full": (0.8, 0.9), "no_location": (0.2, 0.25), "noisy": (0.5, 0.7)}, cases=3)
    _ok(F.largest_gain_prior(t), {"table3": t}, None)


# -- §6.2, appendices E-F ---------------------------------------------------------------------------
def _ind(rows: list[tuple[str, bool, bool, bool, bool, bool]]):
    """(profile, success, false_completion, dup_grab, wrong_grab, correction_self) per episode."""
    return _t([{"profile": p, "protocol": "broadcast", "structure": "parallel", "success": s, "false_completion": fc,
                "dup_grab": dg, "wrong_grab": wg, "correction_self": cs}
               for p, s, fc, dg, wg, cs in rows])


def test_failure_rates_table():
    ind = _ind([("strong", True, False, False, False, False), ("weak", False, True, True, True, True),
                ("weak", True, False, False, True, False)])
    t = T.failure_rates(ind, ["profile"])
    row = t[(t.profile == "all") & (t.indicator == "false_completion")].iloc[0]
    assert (row["episodes"], row["with"], row["SR with"], row["SR without"]) == (3, 1, 0.0, 1.0)
    row = t[(t.profile == "weak") & (t.indicator == "wrong_grab")].iloc[0]
    assert (row["episodes"], row["with"], row["rate"]) == (2, 2, 1.0)
    c = T.correction_rates(ind, "profile")
    assert c[(c.profile == "weak") & c.wrong_grab]["rate"].iloc[0] == 0.5


def test_false_completions_all_wordings():
    ind = _ind([("strong", True, False, False, False, False)] * 30 + [("weak", False, True, False, False, False)] * 12
               + [("weak", True, False, False, False, False)] * 12)
    t = T.failure_rates(ind, ["profile"])
    _ok(F.false_completions(t, "profile"), {"failures": t}, True, "12 of 54 episodes (22.2%)",
        "most often with profile weak (50.0%)", "SR is 0% in those episodes and 100% in the others",
        "False completions are destructive, as in the paper")
    ind = _ind([("strong", False, False, False, False, False), ("weak", True, True, False, False, False)])
    t = T.failure_rates(ind, ["profile"])
    _ok(F.false_completions(t, "profile"), {"failures": t}, None, "Too few units")
    ind = _ind([("strong", True, False, False, False, False)] * 2)
    t = T.failure_rates(ind, ["profile"])
    _ok(F.false_completions(t, "profile"), {"failures": t}, None, "No episode had a false completion (0 of 2)")


def _by_profile(rates: dict[str, float], indicator: str, episodes=40):
    return _t([{"profile": p, "indicator": indicator, "rate": r, "episodes": episodes} for p, r in rates.items()])


@pytest.mark.parametrize("fn,indicator,paper", [
    (F.wrong_grabs_by_profile, "wrong_grab", True),
    (F.dup_grabs_by_profile, "dup_grab", False),
    (F.false_completions_by_profile, "false_completion", False),
])
def test_failure_by_profile_both_wordings(fn, indicator, paper):
    t = _by_profile({"strong": 0.05, "medium": 0.1, "weak": 0.2}, indicator)
    f = fn(t)
    _ok(f, {"failures": t}, True if paper else None, "5.0% (strong), 10.0% (medium) and 20.0% (weak)", "rising from")
    assert ("in line with the paper" in f.text) == paper and ("no claim by capability" in f.text) != paper
    t = _by_profile({"strong": 0.05, "medium": 0.3, "weak": 0.2}, indicator)
    _ok(fn(t), {"failures": t}, False if paper else None, "not rising steadily")
    t = _by_profile({"strong": 0.05, "medium": 0.1, "weak": 0.2}, indicator, episodes=4)
    if paper:
        _ok(fn(t), {"failures": t}, None, "Too few units")
    _ok(fn(t.iloc[:1]), {"failures": t.iloc[:1]}, None, "Not checked")


def test_a_failure_no_profile_shows_cannot_be_checked():
    t = _t([{"profile": p, "indicator": "wrong_grab", "episodes": 40, "rate": 0.0} for p in ("strong", "weak")])
    _ok(F.wrong_grabs_by_profile(t, ("strong", "weak")), {"failures": t}, None, "No episode of any profile had a wrong grab")


def test_handover_failures_by_profile_both_wordings():
    t = _t([{"structure": "sequential", "profile": p, "HFR": v, "cases": 20} for p, v in (("strong", 0.2), ("medium", 0.3), ("weak", 0.6))])
    _ok(F.handover_failures_by_profile(t), {"profiles": t}, True, "20% (strong)", "rising from the strong to the weak")
    t = _t([{"structure": "sequential", "profile": p, "HFR": v, "cases": 20} for p, v in (("strong", 0.4), ("medium", 0.3), ("weak", 0.6))])
    _ok(F.handover_failures_by_profile(t), {"profiles": t}, False, "not rising steadily")


def _t18(sr_q, sr_no, obj_q, obj_no, n=20):
    return _t([{"structure": "parallel", "Q.": "w/ Q.", "#Case": n, "Avg. #Obj.": obj_q, "SR (%)": sr_q},
               {"structure": "parallel", "Q.": "w/o Q.", "#Case": n, "Avg. #Obj.": obj_no, "SR (%)": sr_no}])


def test_coordination_queries_wordings():
    t = _t18(60.0, 75.0, 4.7, 4.35)
    _ok(F.coordination_queries(t, "parallel"), {"table18": t}, True, "SR 60.0% and 4.70 objects", "as in the paper")
    t = _t18(80.0, 75.0, 4.7, 4.35)
    _ok(F.coordination_queries(t, "parallel"), {"table18": t}, False, "lower SR and more objects")
    _ok(F.coordination_queries(_t18(60.0, 75.0, 4.7, 4.35, n=5), "parallel"), {"table18": _t18(60.0, 75.0, 4.7, 4.35, n=5)},
        None, "Too few units")
    _ok(F.coordination_queries(t, "sequential"), {"table18": t}, None, "Not checked")


def _t19(adj_sr, adj_cr, raw_sr=-5.0):
    return _t([{"group": "parallel", "cond": "WG", "row": "Raw Δ", "SR (%)": raw_sr, "CR (%)": 1.0},
               {"group": "parallel", "cond": "WG", "row": "Adj. Δ", "SR (%)": adj_sr, "CR (%)": adj_cr}])


def test_correction_effect_both_wordings():
    t = _t19(2.4, 3.5)
    _ok(F.correction_effect(t, "parallel"), {"table19": t}, True, "SR by +2.4 pp and CR by +3.5 pp",
        "(raw SR difference -5.0 pp)", "Correction helps, as in the paper")
    t = _t19(-2.4, 3.5)
    _ok(F.correction_effect(t, "parallel"), {"table19": t}, False, "adjusted gain from correction")
    _ok(F.correction_effect(_t19(0.02, 3.5), "parallel"), {"table19": _t19(0.02, 3.5)}, False)
    _ok(F.correction_effect(_t19(math.nan, math.nan), "parallel"), {"table19": _t19(math.nan, math.nan)}, None,
        "Not checked")


def test_self_correction_by_profile_wordings():
    rows = ([("strong", True, False, False, True, True)] * 10 + [("strong", True, False, False, False, False)] * 10
            + [("weak", True, False, False, True, True)] * 5 + [("weak", True, False, False, True, False)] * 5
            + [("weak", True, False, False, False, False)] * 10)
    t = T.correction_rates(_ind(rows), "profile")
    _ok(F.self_correction_by_profile(t), {"corrections": t}, True, "100.0% vs 0.0% (strong); 50.0% vs 0.0% (weak)",
        "for every profile, as in the paper")
    t = T.correction_rates(_ind([("strong", True, False, False, True, False)] * 10
                                + [("strong", True, False, False, False, True)] * 10), "profile")
    _ok(F.self_correction_by_profile(t), {"corrections": t}, False, "error-triggered correction for strong")
    t = T.correction_rates(_ind(rows[:2] + rows[10:12]), "profile")
    _ok(F.self_correction_by_profile(t), {"corrections": t}, None, "Too few units")
    t = T.correction_rates(_ind([("strong", True, False, False, False, False)]), "profile")
    _ok(F.self_correction_by_profile(t), {"corrections": t}, None, "Not checked")


def test_quote_refuses_an_ambiguous_row_and_reads_missing_as_none():
    t = _t([{"a": 1, "x": 0.5}, {"a": 1, "x": 0.6}, {"a": 2, "x": math.nan}])
    with pytest.raises(ValueError, match="matches 2 rows"):
        F.quote(t, "t", {"a": 1}, "x")
    assert F.quote(t, "t", {"a": 2}, "x") is None and F.quote(t, "t", {"a": 3}, "x") is None


def test_the_backend_is_named_once_for_llm_runs_too():
    t = _t8(0.6, 0.4).assign(backend="vllm:Qwen/Qwen3-VL-8B")
    f = F.second_agent_gain(t)
    assert "vllm" not in f.text and "This run does not show" in f.text
    r = F.Report("vllm:Qwen/Qwen3-VL-8B", 4, {"table8": t}, {"table8": [f]}, headlines=[f])
    assert "not findings about LLMs" not in r.markdown() and "not findings about LLMs" in F.Report(B, 1).markdown()
    assert r.markdown("table8") == f"- {f.text}" and r.headline_markdown().count("vllm:Qwen/Qwen3-VL-8B") == 1
    with pytest.raises(KeyError, match="table8"):
        r.findings("nope")


def test_mecobench_headlines_state_a_difference_with_its_interval():
    from collablab.studies.mecobench.headlines import Contrast, contrast_table, headline_findings

    def run(sr1, sr2, cases=200):
        t = _t8(sr1, sr2, cases).assign(SR_low=lambda d: d.SR - 0.07, SR_high=lambda d: d.SR + 0.07)
        c = contrast_table({"table8": t}, [Contrast("Two agents vs one", "table8", {"n_agents": 2}, {"n_agents": 1},
                                                    "a second agent raises SR", "Table 8"),
                                           Contrast("Missing", "nope", {}, {}, "x", "y")])
        (f,) = headline_findings(c)
        check_consistent(f, {"contrasts": c})
        assert f.text.count(". ") == 0 and len(f.text) <= 300  # one sentence
        return f

    f = run(0.4, 0.6)
    assert f.shown is True and f.text.startswith("Two agents vs one: SR +20 pp [+10, +30], so a second agent")
    assert run(0.6, 0.4).shown is False and "does not show" in run(0.6, 0.4).text
    assert run(0.4, 0.45).shown is None and "too few units to tell" in run(0.4, 0.45).text
    assert run(0.4, 0.6, cases=6).shown is None


# -- every notebook at smoke size, through the notebook's own code path ------------------------------
NOTEBOOK_OF = {"01_collaboration": "01_collaboration", "02_modes": "02_modes", "03_priors": "03_priors",
               "04_behaviours_and_failures": "04_behaviours"}


def _smoke_params(nb: Path) -> dict:
    P = notebook_defaults(nb)
    return {**P, **parameter_set(nb, "smoke", ROOT), "workers": 1}


def _sections_shown(nb: Path) -> list[tuple[str, ...]]:
    cells = json.loads(nb.read_text())["cells"]
    src = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    return [tuple(re.findall(r'"([^"]+)"', args)) for args in re.findall(r"R\.show\(([^)]*)\)", src)]


def _run_and_read(nb: Path, P: dict):
    """The notebook's own run and reading calls: MECoBench's by notebook name, MASTraceBench's (05),
    Observe-Share-Predict's (07)."""
    src = nb.read_text()
    if nb.stem == "05_proposal_trajectories":
        from collablab.studies.mastracebench import experiments as E, report as RP

        assert "E.run_notebook(P)" in src and "RP.read_notebook(episodes, steps, P, run_dir)" in src
        episodes, steps, run_dir = E.run_notebook(P)
        return episodes, RP.read_notebook(episodes, steps, P, run_dir)
    if nb.stem == "06_heterogeneous_dynamic_teams":
        from collablab.studies.dynahmrc import experiments as E6, report as RP6

        assert "E.run_notebook(P)" in src and "RP.read_notebook(episodes, steps, P, run_dir)" in src
        episodes, steps, run_dir = E6.run_notebook(P)
        return episodes, RP6.read_notebook(episodes, steps, P, run_dir)
    if nb.stem == "07_partner_information":
        from collablab.studies.partnr import experiments as E7, report as RP7

        assert "E.run_notebook(P)" in src and "RP.read_notebook(episodes, steps, P, run_dir)" in src
        episodes, steps, run_dir = E7.run_notebook(P)
        return episodes, RP7.read_notebook(episodes, steps, P, run_dir)
    name = NOTEBOOK_OF[nb.stem]
    assert f'S.read_notebook(\\"{name}\\"' in src and f'S.run_notebook(\\"{name}\\"' in src
    episodes, steps, run_dir = S.run_notebook(name, P)
    return episodes, S.read_notebook(name, episodes, steps, P, run_dir)


@pytest.mark.parametrize("nb", notebook_paths(ROOT), ids=lambda p: p.stem)
def test_notebook_sentences_match_their_tables(nb, tmp_path, monkeypatch):
    monkeypatch.setenv("COLLABLAB_OUTPUTS", str(tmp_path))  # (the suite stays in the session's suite cache)
    shown = _sections_shown(nb)
    assert () in shown, "the last cell shows every finding"
    episodes, R = _run_and_read(nb, _smoke_params(nb))
    assert {s for args in shown for s in args} == set(R.sections), "every section is shown, none is missing"
    assert R.findings() and R.backend == "heuristic" and R.n_episodes == len(episodes)
    mecobench_headlines = R.headlines if nb.stem in NOTEBOOK_OF else []  # quote the report's contrasts table
    for f in [*R.findings(), *mecobench_headlines]:
        check_consistent(f, R.tables)
    assert "not findings about LLMs" in R.markdown()


def test_the_reading_cells_hold_no_hand_written_interpretation():
    """'Reading the results' is a heading and a static sentence; the sentences come from R.show()."""
    for nb in notebook_paths(ROOT):
        cells = json.loads(nb.read_text())["cells"]
        i = next(k for k, c in enumerate(cells) if "".join(c["source"]).startswith("## Reading the results"))
        assert "".join(cells[i]["source"]).count(".") <= 2 and "".join(cells[i + 1]["source"]).strip() == "R.show()"
