"""MECoBench beside its paper (studies/mecobench/beside.py, issue 25): served ids read as the paper's
names, heuristic runs as calibration and reference (never a reproduction), an LLM run of a paper model
as a reproduction of that model's rows, ``paper_models``, Table 20 from the analysis tail's stratified
correction analysis, and what a reader sees.

The runs here are synthetic episode frames with the record fields :mod:`collablab.studies.mecobench.metrics`
reads (success, completed, progress, credits, actions ...), built per condition with a chosen number of
successes, so that each interval can be computed by hand; LLM runs are the same rows relabelled with an
endpoint backend and the served model (as a replayed run records them)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from collablab.analysis import correction_analysis
from collablab.analysis.beside import KINDS, Beside, paper_model, same_model
from collablab.analysis.lift import wilson_ci
from collablab.studies import mecobench as S
from collablab.studies.mecobench import beside as MB
from collablab.studies.mecobench.episode import default_budget

SERVED_32B = "Qwen/Qwen3-VL-32B-Instruct"


def _episode(i: int, structure: str, protocol: str, n_agents: int, prior: str, success: bool, **labels: object) -> dict:
    done = 4 if success else 2
    return {"episode_id": f"e{i}-{structure}-{protocol}-{n_agents}-{prior}", "task_id": f"t{i}", "structure": structure,
            "protocol": protocol, "n_agents": n_agents, "prior": prior, "budget": default_budget(structure, prior),
            "success": success, "completed": done, "n_subgoals": 4, "cr": done / 4,
            "progress": [0.0, done / 8, done / 4], "credits": {str(a): done // n_agents for a in range(n_agents)},
            "actions": 20, "conflict_actions": i % 3, "handover_attempts": 2 if structure == "sequential" else 0,
            "handover_failures": i % 2 if structure == "sequential" else 0, "required_handover_count": 0,
            "spatial_errors": i % 2, "tokens": 0, "seed": 0, **labels}


def _run(cells: list[tuple[str, str, int, str, int, int]], **labels: object) -> pd.DataFrame:
    """Episodes per (structure, protocol, n_agents, prior, successes, cases)."""
    labels = {"backend": "heuristic", "policy": "heuristic", "profile": "medium", **labels}
    rows = [_episode(i, st, pr, n, prior, i < k, **labels)
            for st, pr, n, prior, k, cases in cells for i in range(cases)]
    return pd.DataFrame(rows)


CELLS = [("parallel", "broadcast", 1, "full", 14, 24), ("parallel", "broadcast", 2, "full", 19, 24),
         ("parallel", "broadcast", 3, "full", 18, 24), ("parallel", "isolated", 2, "full", 15, 24),
         ("sequential", "broadcast", 2, "full", 10, 24), ("sequential", "isolated", 2, "full", 3, 24)]
P_HEURISTIC = {"backend": "heuristic", "profile": "medium", "model": "", "paper_models": {}}
NO_STEPS = pd.DataFrame(columns=["episode_id"])


def _llm(served: str) -> pd.DataFrame:
    return _run(CELLS, backend=f"vllm:{served}", policy="llm", model=served)


def _published(table: str, model: str) -> pd.DataFrame:
    rows = MB.published_tables()[table].rows
    return rows[rows["model"] == model]


def _by_table(B: Beside) -> dict[str, list]:
    out: dict[str, list] = {}
    for c in B.comparisons:
        out.setdefault(c.table.table.split(" (")[0], []).append(c)
    return out


# -- model names -------------------------------------------------------------------------------------
def test_every_default_is_a_model_of_the_published_tables() -> None:
    models = {m for t in MB.published_tables().values() for m in t.rows["model"]}
    assert set(MB.PAPER_MODELS.values()) <= models
    assert set(MB.PROFILE_MODELS.values()) <= models and MB.REFERENCE_MODEL in models
    for t in MB.published_tables().values():  # every model the paper ran has a default, in any table's spelling
        for m in set(t.rows["model"]) - {"all"}:
            assert any(same_model(m, v) for v in MB.PAPER_MODELS.values()), (t.name, m)
    assert MB._spelling(MB.published_tables()["table08"], "Qwen3-VL-32B") == "Qwen3-32B-VL"


@pytest.mark.parametrize("served, name", [
    (SERVED_32B, "Qwen3-VL-32B"),
    ("Qwen3-VL-32B-Instruct-AWQ", "Qwen3-VL-32B"),                 # no org, a quantization suffix
    ("qwen3-vl-8b-instruct-q4_k_m.gguf", "Qwen3-VL-8B"),           # a llama.cpp file name
    ("Qwen/Qwen3-VL-235B-A22B-Instruct-FP8", "Qwen3-235B-VL"),
    ("google/gemma-4-31b-it", "Gemma4-31B"),
    ("OpenGVLab/InternVL3_5-38B", "InternVL-3.5-38B"),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "Llama-4"),
    ("gpt-5.4", "GPT-5.4"),
    ("gpt-5.4-mini", "GPT-5-mini"),                                # Table 6's identifier of GPT-5-mini
    ("Qwen/Qwen3-VL-4B-Instruct", None),                           # a size the paper did not run
])
def test_served_ids_read_as_the_papers_names(served: str, name: str | None) -> None:
    assert paper_model(served, MB.PAPER_MODELS) == name


def test_the_face_exports_it() -> None:
    assert S.beside_paper is MB.beside_paper and S.PAPER_MODELS is MB.PAPER_MODELS
    assert {"beside_paper", "PAPER_MODELS"} <= set(S.__all__)


# -- heuristic runs: calibration and reference -----------------------------------------------------------
def test_a_heuristic_run_is_calibration_and_reference_never_a_reproduction() -> None:
    B = S.beside_paper("01_collaboration", _run(CELLS), NO_STEPS, P_HEURISTIC)
    assert B.comparisons and {c.kind for c in B.comparisons} <= {"calibration", "reference"}
    assert all(c.kind in KINDS for c in B.comparisons)
    cal = [c for c in B.comparisons if c.kind == "calibration"]
    assert len(cal) == 1 and cal[0].table.table == "Table 8" and cal[0].model == "Qwen3-32B-VL"
    row = cal[0].rows.iloc[0]
    assert (row["structure"], int(row["n_agents"]), row["metric"]) == ("parallel", 1, "SR")
    # by hand: 14 of 24 lone-agent parallel episodes solved; Table 8 prints 0.583 for Qwen3-32B-VL
    lo, hi = wilson_ci(14, 24)
    assert row["run"] == pytest.approx(14 / 24) and (row["run_low"], row["run_high"]) == pytest.approx((lo, hi))
    assert row["published"] == 0.583 and row["verdict"] == ("inside" if lo <= 0.583 <= hi else "?")
    # by hand: Table 8 prints 0.365 for the sequential 2-agent SR; the run solved 10 of 24
    t8 = next(c for c in B.comparisons if c.table.table == "Table 8" and c.kind == "reference")
    seq = t8.rows[(t8.rows["structure"] == "sequential") & (t8.rows["metric"] == "SR")].iloc[0]
    lo, hi = wilson_ci(10, 24)
    assert seq["verdict"] == ("inside" if lo <= 0.365 <= hi else "below" if 0.365 < lo else "above")
    # the 2-agent average: mean of the two cells with the MOVER interval
    avg = t8.rows[(t8.rows["structure"] == "average") & (t8.rows["metric"] == "SR")].iloc[0]
    (pl, ph), (sl, sh) = wilson_ci(19, 24), wilson_ci(10, 24)
    p, s = 19 / 24, 10 / 24
    assert avg["run"] == pytest.approx((p + s) / 2)
    assert avg["run_low"] == pytest.approx((p + s) / 2 - math.hypot(p - pl, s - sl) / 2)
    assert avg["run_high"] == pytest.approx((p + s) / 2 + math.hypot(ph - p, sh - s) / 2)
    assert any("`medium`" in n and "Qwen3-VL-32B" in n and "calibration" in n for n in B.notes)
    assert B.figure() is not None and B.comparisons[0].table.table == "Table 9"  # notebook 01 leads with Table 9


def test_each_profile_beside_its_model_and_mixed_teams_left_out() -> None:
    runs = pd.concat([_run(CELLS[:2], profile=p) for p in ("strong", "weak", "strong,weak")], ignore_index=True)
    B = S.beside_paper("04_behaviours", runs, NO_STEPS, {"backend": "heuristic", "profiles": ["strong", "weak"]})
    cal = {c.model for c in B.comparisons if c.kind == "calibration"}
    assert cal == {"GPT-5.4", "Qwen3-8B-VL"}
    assert any("other teams" in n for n in B.notes)
    mixed = S.beside_paper("01_collaboration", _run(CELLS, profile="strong,weak"), NO_STEPS,
                           {"backend": "heuristic", "profile": "strong,weak"})
    assert not mixed.comparisons and any("mixed team" in n for n in mixed.notes)


def test_only_the_papers_conditions_are_compared() -> None:
    eps = _run(CELLS).assign(budget=30)  # not the paper's budget
    B = S.beside_paper("01_collaboration", eps, NO_STEPS, {**P_HEURISTIC, "budget": 30})
    assert not B.comparisons and any("budget" in n for n in B.notes)
    assert "No published table has a row" in B.text()


# -- LLM runs -------------------------------------------------------------------------------------------
def test_an_llm_run_of_a_paper_model_is_a_reproduction_of_its_rows() -> None:
    """Synthetic rows relabelled as a vLLM run of Qwen/Qwen3-VL-32B-Instruct (what a replayed run records)."""
    B = S.beside_paper("01_collaboration", _llm(SERVED_32B), NO_STEPS,
                       {"backend": "llm", "model": SERVED_32B, "paper_models": {}})
    assert B.model == "Qwen3-VL-32B" and {c.kind for c in B.comparisons} == {"reproduction"}
    tables = _by_table(B)
    assert {"Table 8", "Table 9", "Table 11", "Table 12"} <= set(tables)
    for name, stem, model in (("Table 9", "table09", "Qwen3-VL-32B"), ("Table 8", "table08", "Qwen3-32B-VL")):
        (c,) = tables[name]
        assert c.model == model
        pub = _published(stem, model).set_index([*c.table.conditions, "metric"])["value"]
        placed = c.rows[c.rows["verdict"] != "no published row"]
        assert len(placed)
        for _, r in placed.iterrows():
            key = tuple(int(r[k]) if k == "n_agents" else r[k] for k in [*c.table.conditions, "metric"])
            assert r["published"] == pytest.approx(pub.loc[key])
    assert "Qwen3-VL-32B" in B.lead() and "reproduction" in B.text()


def test_paper_models_maps_an_unknown_id_and_unknown_models_are_a_reference() -> None:
    served = "my-org/gemma-finetune-v2"
    B = S.beside_paper("01_collaboration", _llm(served), NO_STEPS,
                       {"backend": "llm", "model": served, "paper_models": {served: "Gemma4-31B"}})
    assert B.model == "Gemma4-31B" and {c.model for c in B.comparisons} == {"Gemma4-31B"}
    assert {c.kind for c in B.comparisons} == {"reproduction"}
    assert any("Table 9" in n and "no rows" in n for n in B.notes)  # Table 9 ran only the Qwen3-VL models
    ref = S.beside_paper("01_collaboration", _llm(served), NO_STEPS, {"backend": "llm", "model": served})
    assert ref.model is None and ref.comparisons
    assert {c.kind for c in ref.comparisons} == {"reference"}
    assert {c.model for c in ref.comparisons} <= {"Qwen3-VL-32B", "Qwen3-32B-VL"}
    assert "paper_models" in ref.lead()


# -- Table 20 -------------------------------------------------------------------------------------------
def _indicators() -> pd.DataFrame:
    """Failure indicators of 80 parallel episodes: wrong grabs 1-5, correction on every third."""
    rows = []
    for i in range(80):
        wg = i % 5 + 1
        corr = i % 3 == 0
        rows.append({"episode_id": f"e{i}", "structure": "parallel", "n_wrong_grabs": wg, "correction": corr,
                     "success": (i * 7) % 10 < (7 if wg < 3 else 4) + corr, "cr": 0.5 + 0.1 * ((i * 3) % 5),
                     "backend": "heuristic"})
    return pd.DataFrame(rows)


def test_table20_cells_come_from_the_tails_correction_analysis() -> None:
    ind = _indicators()
    cells = MB.table20_cells(ind)
    one = ind[(ind["n_wrong_grabs"] == 1) & ind["correction"]]
    k, n = int(one["success"].sum()), len(one)
    sr = cells[(cells["wrong_grabs"] == "1") & (cells["group"] == "correction") & (cells["metric"] == "SR")].iloc[0]
    assert (sr["value"], sr["n"]) == (pytest.approx(k / n), n)
    assert (sr["low"], sr["high"]) == pytest.approx(wilson_ci(k, n))
    four = cells[(cells["wrong_grabs"] == "4+") & (cells["group"] == "no_correction")]
    assert int(four["n"].iloc[0]) == int(((ind["n_wrong_grabs"] >= 4) & ~ind["correction"]).sum())
    adj = cells[(cells["wrong_grabs"] == "adjusted") & (cells["metric"] == "SR")].iloc[0]
    assert adj["value"] == pytest.approx(correction_analysis(ind).results["parallel"].adjusted("success") / 100)
    assert adj["low"] < adj["value"] < adj["high"]
    c = MB._compare(cells[cells["group"] != "delta"], MB.published_tables()["table20"], "all", "reference", "")
    assert c is not None and c.kind == "reference" and c.x == "wrong_grabs" and c.hue == "group"
    r = c.rows[(c.rows["wrong_grabs"] == "1") & (c.rows["group"] == "correction") & (c.rows["metric"] == "SR")].iloc[0]
    assert r["published"] == pytest.approx(0.829)  # 82.9% on the fraction scale
    lo, hi = wilson_ci(k, n)
    assert r["verdict"] == ("inside" if lo <= 0.829 <= hi else "below" if 0.829 < lo else "above")
    assert MB.table20_cells(ind.assign(correction=False)).empty


def test_a_run_without_wrong_grabs_says_why_table20_is_missing() -> None:
    B = S.beside_paper("04_behaviours", _run(CELLS), NO_STEPS, {"backend": "heuristic", "profiles": ["medium"]})
    assert not any(c.table.table == "Table 20" for c in B.comparisons)
    assert any(n.startswith("Table 20 (correction by wrong grabs) is not compared") for n in B.notes)


# -- what a reader sees -----------------------------------------------------------------------------------
def test_text_and_html_name_the_tables_and_verdicts(tmp_path) -> None:
    B = S.beside_paper("01_collaboration", _run(CELLS), NO_STEPS, P_HEURISTIC, tmp_path)
    text, html = B.text(), B._repr_html_()
    for s in ("MECoBench Table 9 · Qwen3-VL-32B · reference", "MECoBench Table 8 · Qwen3-32B-VL · calibration",
              "inside", "never a reproduction"):
        assert s in text and s in html, s
    assert "verdict" in text and "reproduction ·" not in text
    assert (tmp_path / "tables" / "published_table09.csv").exists()
    assert (tmp_path / "tables" / "published_table08_calibration.csv").exists()
