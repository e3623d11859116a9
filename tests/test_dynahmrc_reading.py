"""Notebook 06 reads as a results section (issue 24): DynaHMRC's findings follow the documented
rule for ``shown`` (:mod:`collablab.studies.dynahmrc.findings`), quote their cells, name no backend
up front, keep to one sentence of at most 300 characters, and the compact views merge each mean
with its interval."""

from __future__ import annotations

import dataclasses

import pandas as pd
from test_findings import check_consistent

from collablab.analysis.findings import MAX_SENTENCE, Finding, backend_of
from collablab.analysis.present import TableStyle, present
from collablab.studies.dynahmrc import experiments as E
from collablab.studies.dynahmrc import findings as F
from collablab.studies.dynahmrc import report as RP

B = "heuristic"


def consistent(f: Finding, tables: dict[str, pd.DataFrame]) -> None:
    """The shared check (every quote is its cell, every decimal quoted, a 'not shown' sentence names
    the backend) on the sentence as written for people: no backend label in front (the shared check
    still expects one, so it is added here), one sentence, at most 300 characters."""
    backend = backend_of(*tables.values())
    assert not f.text.startswith("**"), f.text
    assert len(f.text) <= MAX_SENTENCE, (len(f.text), f.text)
    assert f.text.count(". ") == 0, f.text
    check_consistent(dataclasses.replace(f, text=f"**{backend}**: {f.text}"), tables)


def _summary(rows: list[dict], metrics=("success",)) -> pd.DataFrame:
    out = []
    for r in rows:
        row = {k: v for k, v in r.items() if k not in ("mean", "low", "high")}
        for m in metrics:
            row.update({f"{m}_mean": r["mean"], f"{m}_low": r["low"], f"{m}_high": r["high"]})
        out.append({**row, "backend": B})
    return pd.DataFrame(out)


def test_beyond_is_the_documented_rule():
    assert F.beyond(0.8, 0.5, 0.4, 0.6, 1) is True
    assert F.beyond(0.55, 0.5, 0.4, 0.6, 1) is None  # inside the other interval: too close to tell
    assert F.beyond(0.5, 0.5, 0.4, 0.6, 1) is False
    assert F.beyond(10.0, 15.0, 14.0, 16.0, -1) is True
    assert F.beyond(16.0, 15.0, 14.0, 16.0, -1) is False


def _difficulty(values, n=36, method="DynaHMRC"):
    return _summary([{"method_label": method, "level": lv, "n": n, "mean": v, "low": v - 0.1, "high": v + 0.1}
                     for lv, v in zip(("easy", "medium", "hard"), values)])


def test_difficulty_fall_three_wordings():
    t = _difficulty([1.0, 0.7, 0.5])
    f = F.difficulty_fall(t, "DynaHMRC", B)
    consistent(f, {"by_difficulty": t})
    assert f.shown is True and "falls from 100.0% on easy tasks" in f.text and "[40.0%, 60.0%]" in f.text
    t = _difficulty([1.0, 0.3, 0.5])
    f = F.difficulty_fall(t, "DynaHMRC", B)
    consistent(f, {"by_difficulty": t})
    assert f.shown is False and "does not fall steadily" in f.text
    t = _difficulty([1.0, 0.7, 0.5], n=3)
    f = F.difficulty_fall(t, "DynaHMRC", B)
    consistent(f, {"by_difficulty": t})
    assert f.shown is None and "too few" in f.text


def _paired(diff, low, high, p, n=50, metric="success"):
    t = pd.DataFrame([{"setting": "Static", "metric": F.NAMES[metric], "mean_diff": diff, "ci_low": low,
                       "ci_high": high, "p_value": p, "p_floor": max(p, 0.001), "n_pairs": n, "backend": B}])
    return t


def test_paired_effect_uses_verdict_and_prints_small_p():
    t = _paired(0.157, 0.093, 0.231, 5.8e-5)
    f = F.paired_effect(t, "Static", "success", B)
    consistent(f, {"paired": t})
    assert f.shown is True and "+15.7% [+9.3%, +23.1%]" in f.text and "p <0.001" in f.text
    assert "success rate" in f.text and "success:" not in f.text
    t = _paired(-2.4, -3.7, -1.1, 0.02, metric="ts")
    f = F.paired_effect(t, "Static", "ts", B)
    consistent(f, {"paired": t})
    assert f.shown is True and "temporal steps: -2.40 [-3.70, -1.10]" in f.text and "p = 0.020" in f.text
    t = _paired(-0.1, -0.2, -0.05, 0.01)  # the wrong side
    f = F.paired_effect(t, "Static", "success", B)
    consistent(f, {"paired": t})
    assert f.shown is False
    t = _paired(0.05, -0.02, 0.1, 0.3, n=4)
    f = F.paired_effect(t, "Static", "success", B)
    consistent(f, {"paired": t})
    assert f.shown is None and "too few" in f.text


def _ablation(values: dict[str, float], n=168):
    return _summary([{"ablation_label": k, "n": n, "mean": v, "low": v - 0.07, "high": v + 0.07}
                     for k, v in values.items()], metrics=("success", "as_per_robot"))


def test_ablation_drops_follow_the_rule():
    t = _ablation({"full": 0.58, "w/o feedback": 0.17, "w/o history": 0.26, "w/o leader": 0.57,
                   "w/o reflection": 0.62})
    fs = F.ablation_drops(t, B)
    for f in fs:
        consistent(f, {"ablation_overall": t})
    assert fs[0].shown is True and fs[0].text.startswith("Removing feedback lowers the success rate the most")
    by = {f.claim.split(" lowers")[0]: f.shown for f in fs[1:]}
    assert by == {"without history": True, "without the leader": None, "without reflection": False}
    t = _ablation({"full": 0.58, "w/o feedback": 0.17, "w/o history": 0.1}, n=4)
    assert all(f.shown is None for f in F.ablation_drops(t, B))


def test_search_team_size_says_too_few_for_small_cells():
    t = _summary([{"method_label": "MCTS", "n_types": k, "n": n, "mean": v, "low": v - 0.2, "high": min(1, v + 0.2)}
                  for k, n, v in ((2, 12, 0.917), (3, 18, 0.722), (4, 6, 0.667))])
    f = F.search_team_size(t, "MCTS", B)
    consistent(f, {"search_by_types": t})
    assert f.shown is None and "only 6 episodes" in f.text
    t = t.assign(n=20)
    f = F.search_team_size(t, "MCTS", B)
    consistent(f, {"search_by_types": t})
    assert f.shown is True and "falls as the team grows" in f.text
    # the offline grid since issue 26's medium tiers: flat (0.65, 0.64, 0.67 at 4 tasks per cell)
    t = t.assign(success_mean=[0.646, 0.639, 0.667])
    f = F.search_team_size(t, "MCTS", B)
    consistent(f, {"search_by_types": t})
    assert f.shown is False and "does not fall as the team grows" in f.text


def test_wide_views_merge_intervals_into_one_cell(tmp_path):
    t = _summary([{"method_label": m, "team": team, "n": 18, "mean": v, "low": v - 0.2, "high": v + 0.2}
                  for m in ("DynaHMRC", "CoELA", "COHERENT") for team, v in (("Ma-MoMa", 0.5), ("Ma-UAV", 0.6))])
    w = RP.wide(t, ["team"], "method_label", ["success"])
    d = present(w, "w", TableStyle(rates=("DynaHMRC", "CoELA", "COHERENT")), tmp_path)
    assert list(d.frame.columns) == ["team", "DynaHMRC", "CoELA", "COHERENT"]
    assert d.frame.iloc[0, 1] == "50% [30, 70]" and (tmp_path / "tables" / "w.csv").exists()


def _search_dynamic(static, values: dict, n=12):
    rows = [{"method_label": "MCTS", "setting": "Static", "n": n, "mean": static, "low": static - 0.1,
             "high": static + 0.1}]
    rows += [{"method_label": "MCTS", "setting": s, "n": n, "mean": v, "low": max(0, v - 0.1), "high": v + 0.1}
             for s, v in values.items()]
    return _summary(rows)


def test_search_under_variation_follows_the_papers_direction():
    """§4.5: MCTS rises under CTO and REC, falls under IRZ and ANC, against static medium (26.5%)."""
    t = _search_dynamic(0.5, {"CTO": 0.7, "IRZ": 0.2, "ANC": 0.45, "REC": 0.3})
    fs = {s: F.search_under_variation(t, "MCTS", s, B) for s in ("CTO", "IRZ", "ANC", "REC")}
    for f in fs.values():
        consistent(f, {"search_dynamic": t})
    assert fs["CTO"].shown is True and "(paper: it rises slightly)" in fs["CTO"].text
    assert fs["IRZ"].shown is True and "Under IRZ MCTS succeeds in 20.0%" in fs["IRZ"].text
    assert fs["ANC"].shown is None and "too close to tell" in fs["ANC"].text
    assert fs["REC"].shown is False and "does not show the paper's rise" in fs["REC"].text
    t = _search_dynamic(0.5, {"IRZ": 0.2}, n=4)
    f = F.search_under_variation(t, "MCTS", "IRZ", B)
    assert f.shown is None and "too few episodes" in f.text
    assert F.search_under_variation(t, "MCTS", "CTO", B) is None  # no row, no sentence


def _sensitivity(key, values: dict, n=30, setting=None):
    """A sensitivity table: ``values`` maps (key value, method) to the success mean, interval +-0.1."""
    return _summary([{**({"setting": setting} if setting else {}), key: k, "method_label": m, "n": n, "mean": v,
                      "low": max(0.0, v - 0.1), "high": min(1.0, v + 0.1)} for (k, m), v in values.items()])


def test_timing_disrupts_reads_the_earliest_T_against_T5():
    """lab:sensitivity_dyna: earlier CTO changes are more disruptive to the baselines (tab:dT_CTO)."""
    t = _sensitivity("T", {(3, "CoELA"): 0.22, (5, "CoELA"): 0.48, (10, "CoELA"): 0.33})
    f = F.timing_disrupts(t, "CoELA", B)
    consistent(f, {"sensitivity_CTO": t})
    assert f.shown is True and "at T = 3 CoELA succeeds in 22.0%" in f.text and "[38.0%, 58.0%] at T = 5" in f.text
    t = _sensitivity("T", {(3, "CoELA"): 0.50, (5, "CoELA"): 0.48, (10, "CoELA"): 0.33})
    f = F.timing_disrupts(t, "CoELA", B)
    consistent(f, {"sensitivity_CTO": t})
    assert f.shown is False and "does not show" in f.text
    t = _sensitivity("T", {(3, "CoELA"): 0.22, (5, "CoELA"): 0.48}, n=4)
    assert F.timing_disrupts(t, "CoELA", B).shown is None


def test_zones_do_not_strictly_degrade_is_worded_like_the_appendix():
    """lab:sensitivity_dyna: IRZ results "do not strictly degrade" as zones are added (tab:dN_IRZ)."""
    t = _sensitivity("zones", {(1, "COHERENT"): 0.75, (2, "COHERENT"): 0.476, (3, "COHERENT"): 0.778})
    f = F.zones_do_not_strictly_degrade(t, "COHERENT", B)
    consistent(f, {"sensitivity_IRZ": t})
    assert f.shown is True and "does not strictly degrade as zones are added: 75.0% with 1 restricted zone" in f.text
    t = _sensitivity("zones", {(1, "COHERENT"): 0.75, (2, "COHERENT"): 0.5, (3, "COHERENT"): 0.3})
    f = F.zones_do_not_strictly_degrade(t, "COHERENT", B)
    consistent(f, {"sensitivity_IRZ": t})
    assert f.shown is False and "falls with every added zone" in f.text
    t = _sensitivity("zones", {(1, "COHERENT"): 0.75, (2, "COHERENT"): 0.5}, n=3)
    assert F.zones_do_not_strictly_degrade(t, "COHERENT", B).shown is None


def test_sensitivity_best_is_best_or_near_best_at_every_T():
    """lab:sensitivity_dyna: DynaHMRC is best or near-best at every T under ANC and REC (tab:dT_ANC_REC)."""
    vals = {(T, m): v for T, row in ((3, (0.81, 0.08)), (5, (0.80, 0.39)), (13, (0.7, 0.75)))
            for m, v in zip(("DynaHMRC", "CoELA"), row)}
    t = _sensitivity("T", vals, setting="ANC")
    f = F.sensitivity_best(t, "sensitivity_ANC_REC", "ANC", B)
    consistent(f, {"sensitivity_ANC_REC": t})
    assert f.shown is True and "T = 13: 70.0% against CoELA's 75.0%" in f.text  # near-best: inside its interval
    t = _sensitivity("T", {**vals, (13, "CoELA"): 0.95}, setting="ANC")
    f = F.sensitivity_best(t, "sensitivity_ANC_REC", "ANC", B)
    consistent(f, {"sensitivity_ANC_REC": t})
    assert f.shown is False
    assert F.sensitivity_best(t, "sensitivity_ANC_REC", "REC", B) is None  # no REC rows


def test_the_sensitivity_frame_holds_only_the_sensitivity_grid():
    """The sensitivity tables read only lab:sensitivity_dyna's grid: Pack Objects, its teams, its first
    ``sensitivity_tasks`` tasks, the full framework, the T and zone counts each table varies."""
    rows = []
    for v, key, values in (("CTO", "T", (3, 5, 10)), ("IRZ", "zones", (1, 2, 3)), ("ANC", "T", (3, 5, 13))):
        for value in values:
            for m in ("dynahmrc", "coela", "coherent"):
                for i in range(3):
                    T, z = (value, 1) if key == "T" else (5, value)
                    team = "Ma-MoMa" if v == "ANC" else "Ma-MoMa-UAV"
                    rows.append({"task": f"t{i}", "kind": "pack", "level": "medium", "team": team,
                                 "team_after": "Ma-MoMa-UAV" if v == "ANC" else team, "n_types": 2, "instance": i,
                                 "variation": v, "T": T, "zones": z if v == "IRZ" else 0, "method": m,
                                 "ablation": "none", "memory": 10, "random_votes": 0.0, "backend": B, "run": 0,
                                 "success": bool(i % 2), "ps": 0.5, "ts": 20, "as_per_robot": 10.0, "cc": 1.0,
                                 "redundant": 0, "conflicting": 0, "invalid_actions": 0, "election_rounds": 0,
                                 "L": 1.0, "N": 0.5, "Y": 0.5})
    ep = pd.DataFrame(rows)
    P = {"n_resamples": 200, "ablation_levels": ["medium"], "sensitivity": ["CTO", "IRZ", "ANC"],
         "sensitivity_teams": ["Ma-MoMa", "Ma-MoMa-UAV"], "sensitivity_tasks": 2}
    ep = pd.concat([ep, ep.assign(kind="sort"), ep.assign(ablation="feedback"), ep.assign(T=7, zones=2)])
    s = RP.sensitivity_frame(E.episode_frame(ep), P)
    assert len(s) == 3 * 3 * 3 * 2  # three variations x three settings x three methods x two tasks
    assert set(s["kind"]) == {"pack"} and set(s["ablation_label"]) == {"full"} and set(s["instance"]) == {0, 1}
    assert set(zip(s["setting"], s["T"], s["zones"])) == {("CTO", 3, 0), ("CTO", 5, 0), ("CTO", 10, 0), ("IRZ", 5, 1),
                                                          ("IRZ", 5, 2), ("IRZ", 5, 3), ("ANC", 3, 0), ("ANC", 5, 0),
                                                          ("ANC", 13, 0)}
    assert RP.sensitivity_frame(E.episode_frame(ep), {**P, "sensitivity": []}).empty
