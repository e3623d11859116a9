"""Notebook 07's run beside its paper (``studies/partnr/beside.py``, issue 25): served model ids map
onto the paper's four planners, an offline run is a reference (never a reproduction) with verdicts
checked by hand, an LLM run of a paper model picks that model's published cells, ``paper_models``
maps a served id the defaults do not know, and the result reads as text and HTML.

One tiny offline run (4 generated tasks x 8 conditions, in this process) serves most tests; their
"LLM runs" are that run's episodes relabelled with an LLM backend (the ``backend`` column and
``P["model"]``): ``beside_paper`` reads only the records and the parameters. One test runs the
notebook's grid for real against the scripted fake server serving the paper's Llama 8B id, then
replays it from the response cache with the server gone, and reads it as ``collablab compare``
does (the run folder's manifest params).
"""

from __future__ import annotations

from pathlib import Path

import json

import pandas as pd
import pytest
from conftest import notebook_defaults
from statsmodels.stats.proportion import proportion_confint

from collablab.analysis.beside import paper_model
from collablab.analysis.published import load_published
from collablab.llm.fake_server import FakeOpenAIServer, FakeReply
from collablab.runs import load_run, run_grid
from collablab.studies import partnr as S
from collablab.studies.partnr import experiments as E

ROOT = Path(__file__).resolve().parents[1]
NB = ROOT / "notebooks" / "07_partner_information.ipynb"
PUBLISHED = load_published(ROOT / "lib" / "collablab" / "studies" / "partnr" / "published")
CONDITIONS = ["OAS", "KE", "OAS+KE", "KE+OANA", "Obj+OANA", "OAS+OANA", "Full:Obj+OANA", "Full:OAS+OANA"]
PERCENT = {"SR", "EE", "type_acc", "cond_principal"}  # steps is a count


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """``(episodes, steps, P, run_dir)`` of a tiny offline run of notebook 07's grid."""
    P = {**notebook_defaults(NB), "n_tasks": 4, "conditions": CONDITIONS, "workers": 1}
    out = tmp_path_factory.mktemp("outputs")
    res = run_grid(E.specs(P), study="partnr", fn=E.FN, out_root=out, workers=1, progress=False, params=P)
    episodes, steps = load_run(res.run_dir)
    return episodes, steps, P, res.run_dir


def _as_llm(episodes: pd.DataFrame, P: dict, served: str, **extra) -> tuple[pd.DataFrame, dict]:
    return episodes.assign(backend=f"vllm:{served}"), {**P, "backend": "llm", "model": served, **extra}


def test_paper_models_name_the_papers_planners_and_usual_ids_map_to_them():
    published = {m for t in PUBLISHED.values() for m in t.rows["model"]}
    assert set(S.PAPER_MODELS.values()) == published == {"Llama 8B", "Llama 70B", "Gemini", "DeepSeek"}
    served = {
        "meta-llama/Llama-3.1-8B-Instruct": "Llama 8B",
        "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf": "Llama 8B",
        "llama3.1:8b-instruct-q4_K_M": "Llama 8B",
        "hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4": "Llama 70B",
        "meta-llama/Llama-3.3-70B-Instruct-FP8": "Llama 70B",
        "google/gemini-3.1-flash-lite-preview": "Gemini",
        "gemini-3.1-flash-lite": "Gemini",
        "deepseek/deepseek-v3.2": "DeepSeek",
        "deepseek-ai/DeepSeek-V3.2-Exp": "DeepSeek",
    }
    assert {s: paper_model(s, S.PAPER_MODELS) for s in served} == served
    assert paper_model("Qwen/Qwen3-VL-32B-Instruct", S.PAPER_MODELS) is None


def test_an_offline_run_is_a_reference_with_verdicts_checked_by_hand(run):
    episodes, steps, P, run_dir = run
    B = S.beside_paper("07_partner_information", episodes, steps, P, run_dir)
    assert B.model is None and B.comparisons
    assert {c.kind for c in B.comparisons} == {"reference"}
    assert {c.table.name: c.model for c in B.comparisons} == {
        "table03": "Llama 8B", "table02": "Llama 8B", "table10": "Llama 70B", "table11": "Llama 70B"}
    assert any("Llama 8B" in n and "most transcribed cells" in n for n in B.notes)
    # Table 3, KE without OANA, Success Rate: the paper's 54.3% against a Wilson interval computed here
    ke = episodes[episodes["condition"] == "KE"]
    k, n = int(ke["success"].astype(bool).sum()), len(ke)
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    lo, hi = (0.0 if k == 0 else lo), (1.0 if k == n else hi)
    want = "inside" if lo <= 0.543 <= hi else "above" if 0.543 > hi else "below"
    t3 = next(c for c in B.comparisons if c.table.name == "table03").rows  # keys as text, as compared
    row = t3[(t3["context"] == "KE") & (t3["oana"].astype(str) == "False") & (t3["metric"] == "SR")].iloc[0]
    assert row["published"] == pytest.approx(0.543) and row["n"] == n
    assert (row["run"], row["run_low"], row["run_high"]) == pytest.approx((k / n, lo, hi))
    assert row["verdict"] == want
    # ... and the steps cell stays a count (the mixed table's percent metrics alone are rescaled)
    steps_row = t3[(t3["context"] == "KE") & (t3["oana"].astype(str) == "False") & (t3["metric"] == "steps")].iloc[0]
    assert steps_row["published"] == 4914 and steps_row["run"] == pytest.approx(ke["simulation_steps"].mean())


def test_an_llm_run_of_a_paper_model_picks_that_models_rows(run):
    episodes, steps, P, run_dir = run
    e, Q = _as_llm(episodes, P, "meta-llama/Llama-3.1-70B-Instruct")
    B = S.beside_paper("07_partner_information", e, steps, Q, run_dir)
    assert B.model == "Llama 70B" and B.served == Q["model"]
    assert {c.kind for c in B.comparisons} == {"reproduction"} and {c.model for c in B.comparisons} == {"Llama 70B"}
    assert {c.table.name for c in B.comparisons} == {"table03", "table10", "table11"}  # Table 2 has no 70B cell
    placed = 0
    for c in B.comparisons:
        csv = PUBLISHED[c.table.name].rows
        csv = csv[csv["model"] == "Llama 70B"]
        keys = [k for k in c.on if k != "metric"]
        for _, r in c.rows[c.rows["published"].notna()].iterrows():
            hit = csv[(csv["metric"] == r["metric"]) & (csv[keys].astype(str) == r[keys].astype(str)).all(axis=1)]
            scale = 100 if r["metric"] in PERCENT else 1
            assert r["published"] == pytest.approx(float(hit["value"].iloc[0]) / scale)
            placed += 1
    assert placed >= 6  # KE and OAS+KE SR (Table 3), OAS R/H (Table 10), Obj and OAS R/H (Table 11)
    assert "Llama 70B" in B.lead() and "reproduction" in B.text()


def test_paper_models_maps_an_unknown_id_and_an_unmapped_one_is_a_reference(run):
    episodes, steps, P, run_dir = run
    e, Q = _as_llm(episodes, P, "my-org/house-planner-awq", paper_models={"my-org/house-planner-awq": "Gemini"})
    B = S.beside_paper("07_partner_information", e, steps, Q)
    assert B.model == "Gemini" and [(c.table.name, c.kind) for c in B.comparisons] == [("table03", "reproduction")]
    row = B.comparisons[0].rows.dropna(subset=["published"])
    assert list(row["context"]) == ["OAS"] and list(row["published"]) == [pytest.approx(0.812)]
    e, Q = _as_llm(episodes, P, "my-org/house-planner-awq")
    B = S.beside_paper("07_partner_information", e, steps, Q)
    assert B.model is None and B.comparisons and {c.kind for c in B.comparisons} == {"reference"}
    assert "paper_models" in B.lead() and "reference" in B.lead()


def test_text_and_html_name_the_tables_and_the_verdicts(run):
    episodes, steps, P, run_dir = run
    B = S.beside_paper("07_partner_information", episodes, steps, P, run_dir)
    text, html = B.text(), B._repr_html_()
    for out in (text, html):
        assert "Table 3" in out and "Table 2" in out and "Llama 8B" in out and "verdict" in out
        assert "no published row" in out and any(v in out for v in ("inside", "above", "below"))
    assert "reproduction" not in text.replace("never a reproduction", "").replace("not a reproduction", "")
    assert (Path(run_dir) / "tables" / "published_table03.csv").exists()
    assert B.figure() is not None


def test_a_run_without_episodes_shows_no_table_and_does_not_raise():
    B = S.beside_paper("07_partner_information", pd.DataFrame(), pd.DataFrame(), {"backend": "heuristic"})
    assert not B.comparisons and "No published table" in B.text()


def test_a_replayed_llm_run_of_the_papers_llama_8b_is_its_reproduction(tmp_path, monkeypatch):
    monkeypatch.setenv("COLLABLAB_OUTPUTS", str(tmp_path / "out"))
    monkeypatch.setenv("COLLABLAB_LLM_CACHE", str(tmp_path / "cache.sqlite"))
    served = "meta-llama/Llama-3.1-8B-Instruct"
    P = {**notebook_defaults(NB), "n_tasks": 2, "workers": 1, "max_cycles": 3, "conditions": ["KE", "KE+OANA"],
         "backend": "llm", "model": served, "provider": "vllm", "constrained": "none", "llm_cache_mode": "rw"}

    def waiting(body: dict, server: FakeOpenAIServer) -> FakeReply:
        return FakeReply("Thought: I look around.\nPrediction: Wait[]\nWait[]", usage={"prompt_tokens": 9,
                         "completion_tokens": 4, "total_tokens": 13})
    with FakeOpenAIServer(waiting, models=[served]) as srv:
        P["base_url"] = srv.base_url
        E.run_notebook(P)
    *_, run_dir = E.run_notebook({**P, "llm_cache_mode": "replay"})  # the server is gone
    manifest = json.loads((Path(run_dir) / "manifest.json").read_text())
    episodes, steps = load_run(run_dir)
    assert len(episodes) == 4 and set(episodes["backend"]) == {f"vllm:{served}"}
    B = S.beside_paper(manifest["study"], episodes, steps, manifest["params"], run_dir)
    assert B.model == "Llama 8B" and [(c.table.name, c.kind) for c in B.comparisons] == [
        ("table03", "reproduction"), ("table02", "reproduction")]
    t3 = B.comparisons[0].rows
    assert dict(zip(t3["oana"].astype(str) + t3["metric"], t3["published"])) == pytest.approx(
        {"FalseSR": 0.543, "FalseEE": 0.696, "Falsesteps": 4914, "TrueSR": 0.562, "TrueEE": 0.627, "Truesteps": 4121})
    assert "is the paper's Llama 8B" in B.text()
