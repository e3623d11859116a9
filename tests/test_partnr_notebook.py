"""Notebook 07 on its default parameters (offline): the run shows, through the mechanisms of the
heuristic planner, the partner-information issue's done-when (KE lowers simulation steps, OAS
lowers Extraneous Effort, full observability lowers steps), fits its time budget, resumes instead
of recomputing, and its tables agree with the episode records; the notebook itself executes at
smoke size with every parameter in its run manifest; the findings have both wordings."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pandas as pd
import papermill as pm
import pytest
from conftest import notebook_defaults

from collablab.analysis.findings import Finding, Report
from collablab.cli import parameter_set
from collablab.studies.partnr import experiments as E
from collablab.studies.partnr import findings as F
from collablab.studies.partnr import report as RP
from collablab.studies.partnr.spec import validate
from test_findings import check_consistent

ROOT = Path(__file__).resolve().parents[1]
NB = ROOT / "notebooks" / "07_partner_information.ipynb"
#: The default run must stay well under this on 2 cores (it takes about a minute today).
BUDGET_S = 180



@pytest.fixture(scope="session")
def default_run():
    """One default offline run per test session (the notebook's own calls), timed, in the session's
    outputs folder: nbval's execution of the notebook, later in the same xdist group
    (conftest.GROUPS), reads it instead of running it again."""
    P = notebook_defaults(NB)
    t0 = time.perf_counter()
    episodes, steps, run_dir = E.run_notebook(P)
    wall = time.perf_counter() - t0
    R = RP.read_notebook(episodes, steps, P)
    print(f"\nnotebook 07 default run: {len(episodes)} episodes in {wall:.1f} s "
          f"(+ {time.perf_counter() - t0 - wall:.1f} s reading) on {P['workers']} workers")
    return P, episodes, steps, run_dir, R, wall


def _cell(t: pd.DataFrame, condition: str, column: str) -> float:
    return float(t.loc[t["condition"] == condition, column].iloc[0])


def test_the_default_run_shows_the_done_when_criteria(default_run):
    _, episodes, _, _, R, wall = default_run
    assert len(episodes) == 40 * 12 and wall < BUDGET_S, (len(episodes), wall)
    out, full = R.tables["outcomes"], R.tables["full_outcomes"]
    steps = {c: _cell(out, c, "steps") for c in ("Obj", "OAS", "KE", "OAS+KE")}
    ee = {c: _cell(out, c, "EE") for c in ("Obj", "OAS", "KE", "OAS+KE")}
    full_obj = _cell(full, "Full:Obj", "steps")
    print(f"steps {steps}, EE {ee}, Full:Obj steps {full_obj:.1f}")
    assert steps["KE"] < steps["Obj"] and steps["OAS+KE"] < steps["OAS"], steps  # KE lowers steps
    assert ee["OAS"] < ee["Obj"] and ee["OAS+KE"] < ee["KE"], ee  # OAS lowers Extraneous Effort
    assert full_obj < steps["Obj"], (full_obj, steps["Obj"])  # full observability lowers steps
    # ... and the sentences say so
    ke, oas = R.findings("outcomes")[:2]
    shorter, = [f for f in R.findings("full_obs") if "shortens" in f.claim]
    for f in (ke, oas, shorter):
        assert f.shown is True and not f.text.startswith("**"), f.text  # the headline names the backend once
    assert f"{steps['KE']:.0f} (KE" in ke.text and f"{100 * ee['OAS']:.1f}% (OAS)" in oas.text


def test_every_sentence_matches_its_tables_and_every_section_has_one(default_run):
    *_, R, _ = default_run
    assert set(R.sections) == {"outcomes", "channels", "roles", "prediction", "strict", "full_obs", "tail"}
    for f in R.findings():
        check_consistent(f, R.tables)
        assert len(f.text) <= 300 and not f.text.startswith("**"), f.text
    # Under credit by cause (metrics.classify) the heuristic's paired OAS effect on Extraneous Effort
    # is small beside its searching after the task is complete (-1.7 pp [-6.4, +3.1] over 40 tasks):
    # that one sentence may say the run cannot tell; every other must decide.
    undecided = "OAS reduces Extraneous Effort (paired by task)"
    assert all(f.shown is not None for f in R.findings("outcomes", "prediction", "strict", "full_obs", "tail")
               if f.claim != undecided)
    assert undecided in [f.claim for f in R.findings("tail")]
    assert "not findings about LLMs" in R.markdown()
    assert 3 <= len(R.headlines) <= 5 and R.headlines == R.findings("tail") and R.limits
    head = R.headline_markdown()
    assert head.count("heuristic") == 1 and "[95% CI" in head and "does not show" in head


def test_the_tables_agree_with_the_episode_records(default_run):
    _, episodes, _, _, R, _ = default_run
    e = E.episode_frame(episodes)
    sub = e[e["condition"] == "KE+OANA"]
    row = R.tables["outcomes"].set_index("condition").loc["KE+OANA"]
    assert row["n"] == len(sub) == 40
    assert math.isclose(row["steps"], sub["simulation_steps"].mean())
    assert math.isclose(row["SR"], sub["success"].mean()) and math.isclose(row["PC_SR_gap"], row["PC"] - row["SR"])
    failed = sub[sub["success"] == 0]
    assert math.isnan(row["PC_failed"]) if not len(failed) else math.isclose(row["PC_failed"],
                                                                              failed["percent_complete"].mean())
    # prediction rates pooled from the step records equal the episodes' own counts, pooled
    for target, table in (("union", "prediction"), ("strict", "prediction_strict")):
        t = R.tables[table].set_index(["condition", "agent"])
        for agent in ("robot", "human"):
            n = sub[f"{agent}_pred_{target}_n"]
            pooled = (sub[f"{agent}_pred_{target}_type_acc"] * n).sum() / n.sum()
            assert t.loc[("KE+OANA", agent), "n"] == n.sum()
            assert math.isclose(t.loc[("KE+OANA", agent), "type_acc"], pooled)
    # the gap table is union - strict, in points
    g = R.tables["strict_gap"].set_index(["condition", "agent"]).loc[("KE+OANA", "robot")]
    u = R.tables["prediction"].set_index(["condition", "agent"]).loc[("KE+OANA", "robot")]
    s = R.tables["prediction_strict"].set_index(["condition", "agent"]).loc[("KE+OANA", "robot")]
    assert math.isclose(g["type_acc_gap"], 100 * (u["type_acc"] - s["type_acc"]))
    # every channel pair holds its other channels fixed
    assert len(RP.channel_pairs(set(E.CONDITION_ORDER))) == 20
    for channel, off, on, _ in RP.CHANNEL_PAIRS:
        a, b = E.CONDITION_KEYS[off], E.CONDITION_KEYS[on]
        changed = {k for k in set(a) | set(b) if a.get(k, False) != b.get(k, False)}
        assert changed == ({"observability"} if channel == "Full" else {channel.lower()}), (channel, off, on)


def test_the_tail_pairs_by_task_and_holm_adjusts(default_run):
    *_, R, _ = default_run
    t = R.tables["channel_tests"]
    assert set(t["channel"]) == {"OAS", "KE", "OANA", "Full"} and set(t["test"]) == {"sign_flip", "wilcoxon"}
    assert set(t["outcome"]) == set(RP.TEST_OUTCOMES) and (t.loc[t["outcome"] == "simulation_steps", "n"] == 40).all()
    row = t[(t["on"] == "KE") & (t["off"] == "Obj") & (t["outcome"] == "simulation_steps") & (t["test"] == "sign_flip")]
    e = E.episode_frame(default_run[1]).set_index(["unit", "condition"])["simulation_steps"].unstack()
    assert math.isclose(float(row["estimate"].iloc[0]), float((e["KE"] - e["Obj"]).mean()))
    assert (t["p_adjusted"].dropna() >= t.loc[t["p_adjusted"].notna(), "p_value"] - 1e-12).all()


def test_a_second_run_resumes_and_reads_the_same_records(default_run):
    P, episodes, steps, run_dir, *_ = default_run
    t0 = time.perf_counter()
    again, steps2, run_dir2 = E.run_notebook(P)
    assert run_dir2 == run_dir and len(again) == len(episodes) and len(steps2) == len(steps)
    assert time.perf_counter() - t0 < 30


def test_displayed_tables_fit_and_write_their_csv(default_run, tmp_path):
    *_, R, _ = default_run
    R = Report(R.backend, R.n_episodes, R.tables, R.sections, styles=R.styles, run_dir=tmp_path)
    for name in RP.STYLES:
        d = R.table(name)
        assert d.frame.shape[1] <= 12 and len(d.frame) <= 15, (name, d.frame.shape)
        assert d.csv_path == tmp_path / "tables" / f"{name}.csv" and d.csv_path.exists()
        assert "backend" not in d.frame.columns and "heuristic" in d.caption
    out = R.table("outcomes").frame
    assert list(out["context"]) == ["Obj", "OAS", "KE", "OAS+KE"] * 2 and "[" in out["Success Rate"].iloc[0]
    tests = R.table("paired_tests")
    assert len(tests.frame) == 12 and len(tests.full) == 20 and "12 of 20 rows" in tests.caption
    assert pd.read_csv(tests.csv_path).shape == (20, R.tables["paired_tests"].shape[1])


def test_every_section_has_a_legible_figure(default_run):
    *_, R, _ = default_run
    from collablab.studies.partnr import plots as PL

    T = R.tables
    figs = [PL.outcome_plot(T["outcomes"]), PL.direction_plot(T["channel_effects"]),
            PL.role_plot(T["roles"], T["asymmetry"]), PL.prediction_plot(T["prediction"]),
            PL.strict_plot(T["prediction"], T["prediction_strict"]), PL.full_obs_plot(T["full_vs_partial"]),
            PL.channel_test_plot(T["channel_tests"])]
    for fig in figs:
        assert fig.get_figwidth() <= 11 and "backend: heuristic" in fig.get_suptitle()
        for ax in fig.axes:
            for label in [*ax.get_xticklabels(), *ax.get_yticklabels(), ax.title]:
                assert label.get_fontsize() >= 9 or not label.get_text(), label


# -- the grid ------------------------------------------------------------------------------------------

def test_the_default_grid_is_every_condition_on_forty_tasks_ten_per_family():
    P = notebook_defaults(NB)
    specs = E.specs(P)
    assert len(specs) == 480 and P["conditions"] == list(E.CONDITION_ORDER)
    from collablab.studies.partnr.spec import resolve, task_of

    fams = pd.Series([task_of(resolve(s)).family for s in specs if s["instance"] < 40][::12]).value_counts()
    assert set(fams) == {10} and len(fams) == 4
    for s in specs[:12]:
        validate(s)


def test_conditions_take_labels_or_conformance_keys_and_refuse_unknown_ones():
    assert E.conditions_of({"conditions": ["full/oas+oana", "obj", "KE"]}) == ["Obj", "KE", "Full:OAS+OANA"]
    with pytest.raises(ValueError, match="Full:KE.*allowed"):
        E.conditions_of({"conditions": ["Full:KE"]})
    with pytest.raises(ValueError, match="n_tasks"):
        E.specs({**notebook_defaults(NB), "n_tasks": 0})


def test_params_sets_run_the_papers_size_and_an_llm_planner():
    full, llm, smoke = (parameter_set(NB, n, ROOT) for n in ("full", "llama8b", "smoke"))
    assert full["n_tasks"] == 1000 and llm["n_tasks"] == 1000 and smoke["n_tasks"] < 10
    P = {**notebook_defaults(NB), **llm}
    spec = E.specs(P)[0]
    assert spec["backend"] == "llm" and spec["model"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert spec["provider"] == "vllm" and spec["base_url"].startswith("http://")
    validate(spec)  # checks every key without reaching the server
    assert len(E.specs({**notebook_defaults(NB), **smoke})) == 4 * len(smoke["conditions"])


@pytest.mark.slow
def test_the_notebook_executes_at_smoke_size_and_records_every_parameter(tmp_path, monkeypatch):
    monkeypatch.setenv("COLLABLAB_OUTPUTS", str(tmp_path))
    names = set(pm.inspect_notebook(str(NB)))
    params = {**parameter_set(NB, "smoke", ROOT), "n_tasks": 2}
    pm.execute_notebook(str(NB), str(tmp_path / "out.ipynb"), parameters=params, cwd=str(NB.parent),
                        progress_bar=False)
    (manifest,) = (tmp_path / E.NOTEBOOK).glob("*/manifest.json")
    recorded = json.loads(manifest.read_text())["params"]
    assert names <= set(recorded), sorted(names - set(recorded))
    assert recorded["n_tasks"] == 2 and recorded["conditions"] == params["conditions"]
    out = json.loads((tmp_path / "out.ipynb").read_text())
    text = json.dumps(out["cells"][-1]["outputs"])
    assert "not findings about LLMs" in text and "**heuristic**" in text
    assert "Too few units to tell" in text and "As in the paper" not in text  # 2 tasks: nothing is asserted
    (head,) = [c for c in out["cells"] if "headline" in c["metadata"].get("tags", [])]
    assert "Too few tasks to tell" in json.dumps(head["outputs"])
    (tables,) = tmp_path.glob(f"{E.NOTEBOOK}/*/tables")
    assert {p.stem for p in tables.glob("*.csv") if not p.stem.startswith("published_")} == set(RP.STYLES)


# -- both wordings of the findings ----------------------------------------------------------------------

def _ce(rows: list[tuple[str, str, str, str, float, float]], backend: str = "heuristic") -> pd.DataFrame:
    """channel_effects rows from (channel, off, on, metric, off_value, on_value)."""
    return pd.DataFrame([{"backend": backend, "channel": c, "off": o, "on": n, "held": "", "metric": m,
                          "off_value": a, "on_value": z, "diff": z - a, "rel": (z - a) / a if a else math.nan}
                         for c, o, n, m, a, z in rows])


def _ok(f: Finding, tables: dict[str, pd.DataFrame], shown: bool | None, *phrases: str) -> None:
    check_consistent(f, tables)
    assert f.shown is shown, f.text
    for p in phrases:
        assert p in f.text, (p, f.text)


def test_ke_and_oas_sentences_both_wordings():
    ce = _ce([("KE", "Obj", "KE", "steps", 3700, 3200), ("KE", "OAS", "OAS+KE", "steps", 3500, 3000),
              ("KE", "Obj", "KE", "SR", 0.8, 0.8), ("KE", "OAS", "OAS+KE", "SR", 0.8, 0.85),
              ("OAS", "Obj", "OAS", "EE", 0.25, 0.18), ("OAS", "KE", "OAS+KE", "EE", 0.28, 0.3),
              ("KE", "Obj", "KE", "EE", 0.25, 0.28)])
    T = {"channel_effects": ce}
    _ok(F.ke_shortens_episodes(ce), T, True, "mean simulation steps go from 3700 (Obj) to 3200 (KE, -14%)",
        "KE shortens episodes", "the paper: up to 25%")
    _ok(F.oas_reduces_effort(ce), T, False, "does not show OAS lowering", "28.0% (KE) to 30.0% (OAS+KE)")
    _ok(F.ke_without_oas(ce), T, True, "raises Extraneous Effort from 25.0% (Obj) to 28.0% (KE)")
    ce2 = _ce([("KE", "Obj", "KE", "steps", 3700, 3700), ("KE", "Obj", "KE", "EE", 0.25, 0.2)])
    _ok(F.ke_shortens_episodes(ce2), {"channel_effects": ce2}, False, "This run does not show KE")
    _ok(F.ke_without_oas(ce2), {"channel_effects": ce2}, False, "does not show KE without OAS raising")
    _ok(F.ke_shortens_episodes(ce2.iloc[:0]), {"channel_effects": ce2.iloc[:0]}, None, "Not checked")


def test_oana_sentences_count_contexts_and_name_a_model_backend():
    rows = [("OANA", c, c + "+OANA", "SR", a, z) for c, a, z in
            (("Obj", 0.8, 0.7), ("OAS", 0.8, 0.8), ("KE", 0.9, 0.85), ("OAS+KE", 0.9, 0.8))]
    rows += [("OANA", c, c + "+OANA", m, 0.1, 1.0) for c in ("Obj", "OAS") for m in ("mention_R", "mention_H")]
    ce = _ce(rows, backend="vllm:llama8b")  # (a label like Llama-3.1 trips check_consistent's decimal rule)
    T = {"channel_effects": ce}
    f = F.oana_lowers_success(ce)
    _ok(f, T, True, "OANA lowers Success Rate in 3 of 4 contexts", "Obj 80.0% → 70.0%")
    assert f.text.startswith("OANA lowers") and "vllm" not in f.text  # the headline names the backend
    _ok(F.oana_raises_mentions(ce), T, True, "in all 4 context x agent pairs", "from 10.0%–10.0% without it")
    ce = _ce([("OANA", c, c + "+OANA", "SR", 0.8, 0.8) for c in ("Obj", "OAS")])
    _ok(F.oana_lowers_success(ce), {"channel_effects": ce}, False, "it is lower in 0 of 2 contexts")


def test_role_sentences_both_wordings():
    counts = pd.DataFrame([
        {"backend": "heuristic", "asymmetry": k, "label": RP.ROLE_COUNTS[k][0], "k": kk, "n": 8, "value": "",
         "mean": mean, "low": 0.52, "high": 0.61, "paper": RP.ROLE_COUNTS[k][2]}
        for k, kk, mean in (("robot_first", 7, 120.0), ("human_more_extra_planning", 2, -3.0),
                            ("offloading_over_half", 8, 0.56), ("robot_as_at_least", 5, 1.2),
                            ("robot_more_cycles", 3, -0.4), ("human_mentions_more", 3, 2.0))])
    fs = F.role_asymmetries(counts)
    T = {"role_counts": counts}
    _ok(fs[0], T, True, "comes earlier in 7 of 8", "mean lead 120 steps")
    _ok(fs[1], T, False, "does not show that the human has more Extra Planning in most conditions", "-3.0 points")
    _ok(fs[2], T, True, "range 52.0%–61.0%")
    assert len(fs) == 5  # who plans more cycles is planner-dependent in the paper: no sentence
    _ok(fs[4], T, False, "in 3 of 8 conditions without OANA")


def test_prediction_and_full_observability_sentences_both_wordings():
    means = pd.DataFrame([{"backend": "heuristic", "observability": "partial", "cells": 8, "type_acc_union": 0.55,
                           "type_acc_strict": 0.35, "cond_principal_union": 0.6, "cond_principal_strict": 0.5,
                           "cond_all_union": 0.52, "cond_all_strict": 0.524, "type_given_all_union": 0.848,
                           "type_given_all_strict": 0.857, "type_gap": 20.0, "type_rel": 0.364, "cond_all_gap": -0.4,
                           "cells_lower": 8}])
    T = {"prediction_means": means}
    _ok(F.parameter_bottleneck(means), T, True, "52.0% of predictions with the right action type", "84.8%")
    _ok(F.strict_lowers_type(means), T, True, "55.0% (union) against 35.0% (strict), 20.0 points (36.4% relative)")
    _ok(F.conditionals_hold(means), T, True, "52.0% (union) and 52.4% (strict)")
    flat = means.assign(type_acc_strict=0.56, type_gap=-1.0, cells_lower=2, cond_all_strict=0.3)
    _ok(F.strict_lowers_type(flat), {"prediction_means": flat}, False, "lower in 2 of 8")
    _ok(F.conditionals_hold(flat), {"prediction_means": flat}, False, "does not show the conditional accuracy")
    fvp = pd.DataFrame([{"backend": "heuristic", "context": "Obj", "oana": False, "steps_partial": 3700.0,
                         "steps_full": 2100.0, "steps_cut": 1 - 2100 / 3700, "EE_partial": 0.6, "EE_full": 0.55,
                         "EE_retained": 0.55 / 0.6}])
    T = {"full_vs_partial": fvp}
    _ok(F.full_obs_shortens(fvp), T, True, "3700 → 2100 steps (43% shorter) at the object-only baseline")
    _ok(F.effort_remains(fvp), T, True, "Most Extraneous Effort remains", "92% of the partial level")
    worse = fvp.assign(steps_full=3800.0, steps_cut=1 - 3800 / 3700, EE_full=0.2, EE_retained=0.2 / 0.6)
    _ok(F.full_obs_shortens(worse), {"full_vs_partial": worse}, False, "does not show full observability shortening")
    _ok(F.effort_remains(worse), {"full_vs_partial": worse}, False, "33% of the partial level")


def test_the_report_header_keeps_offline_numbers_apart_from_llm_findings():
    assert "not findings about LLMs" in Report("heuristic", 1).markdown()
    assert "not findings about LLMs" not in Report("vllm:llama8b", 1).markdown()


def test_too_few_episodes_are_said_so_and_paired_effects_follow_the_interval():
    ce = _ce([("KE", "Obj", "KE", "steps", 3700, 3200), ("KE", "OAS", "OAS+KE", "steps", 3500, 3000)])
    T = {"channel_effects": ce}
    _ok(F.ke_shortens_episodes(ce, n=4), T, None, "Too few episodes to tell whether KE shortens episodes",
        "4 per condition")
    _ok(F.ke_shortens_episodes(ce, n=40), T, True)

    def tests(lo: float, hi: float, n: int = 40) -> pd.DataFrame:
        return pd.DataFrame([{"backend": "heuristic", "channel": "KE", "on": "KE", "off": "Obj", "held": "",
                              "outcome": "simulation_steps", "test": "sign_flip", "estimand": "mean", "n": n,
                              "estimate": (lo + hi) / 2, "ci_low": lo, "ci_high": hi, "p_value": 0.01,
                              "p_adjusted": 0.02, "note": ""}])
    args = F.TESTED[0][:3] + F.TESTED[0][3:]
    for (lo, hi, n), shown, phrase in (((-600, -200, 40), True, "KE shortens episodes: KE − Obj is -400"),
                                       ((100, 300, 40), False, "This run does not show that KE shortens"),
                                       ((-300, 100, 40), None, "This run cannot tell whether KE shortens"),
                                       ((-600, -200, 4), None, "Too few tasks to tell")):
        t = tests(lo, hi, n)
        _ok(F.paired_effect(t, *args), {"channel_tests": t}, shown, phrase, "[95% CI")


def test_channel_directions_follow_the_papers_direction():
    dirs = pd.DataFrame([{"backend": "heuristic", "channel": "OAS", "metric": "EE", "pairs": 6, "lower": 5,
                          "higher": 1, "same": 0},
                         {"backend": "heuristic", "channel": "OANA", "metric": "SR", "pairs": 6, "lower": 2,
                          "higher": 3, "same": 1}])
    T = {"directions": dirs}
    _ok(F.channel_directions(dirs, "OAS"), T, True, "Extraneous Effort is lower in 5 and higher in 1 of 6 pairs")
    _ok(F.channel_directions(dirs, "OANA"), T, False, "does not show that OANA lowers Success Rate in most pairs")
    assert RP.direction_summary(dirs).set_index("channel").at["OAS", "EE"] == "5 ↓ 1 ↑"


def test_why_episodes_failed_is_built_from_the_records(default_run):
    """Issue 27: the failures table counts each condition's failed episodes and splits them by the
    records' failure_reason; the words quote its totals."""
    _, episodes, _, _, R, _ = default_run
    t = R.tables["failures"].set_index("condition")
    reasons = [c for c in RP.REASON_NAMES.values() if c in t.columns]
    assert reasons  # the default run has failures
    E = episodes.assign(success=episodes["success"].astype(bool))
    for cond, g in E.groupby("condition"):
        bad = g[~g["success"]]
        assert (t.loc[cond, "n"], t.loc[cond, "failed"]) == (len(g), len(bad))
        for key, name in RP.REASON_NAMES.items():
            share = (bad["failure_reason"] == key).mean() if len(bad) else 0.0
            assert t.loc[cond, name] == pytest.approx(share) if name in t.columns else share == 0
    assert E.loc[E["success"], "failure_reason"].isna().all()  # a success has no explanation
    words = RP.failure_words(R)
    assert words.startswith(f"{int((~E['success']).sum())} of {len(E)} episodes failed.")


def test_the_intro_says_which_findings_moved_and_the_default_run_agrees(default_run):
    """Issue 27: notebook 07's intro names four offline findings that moved with credit by cause,
    OAS as the paper's and PARTNR's rules; the default run must still read that way."""
    *_, R, _ = default_run
    shown = {f.claim: f.shown for f in R.findings()}
    intro = "".join(json.loads(NB.read_text())["cells"][0]["source"])
    for claim, expected, words in [
            ("§A.3.1: KE without OAS raises Extraneous Effort", False, "KE without OAS no longer raises"),
            ("§4.3: human more extra planning", False, "the human no longer has more Extra Planning"),
            ("§4.5: OANA lowers success under full observability", False,
             "OANA under full observability no longer lowers success"),
            ("OAS reduces Extraneous Effort (paired by task)", None, "too small to tell")]:
        assert shown[claim] is expected, claim
        assert words in intro, words
