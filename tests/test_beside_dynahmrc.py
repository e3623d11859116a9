"""Notebook 06's run beside dynahmrc.tex's tables (issue 25, ``studies/dynahmrc/beside.py``).

The run is a tiny in-process grid of notebook 06 (:func:`experiments.specs` at small parameters,
each unit through :func:`run_spec` on the heuristic backend: about 50 episodes in a few seconds).
An LLM run is the same episodes relabelled: the LLM methods' ``backend`` column set to the label a
vLLM run of the served model writes (``vllm:<model>``) and ``P["model"]`` to the served id; the
search baselines keep ``heuristic``, as in a real LLM run (they ask no model). One test runs
notebook 06's grid for real against the scripted fake server serving the paper's Qwen3-4B id, replays
it from the response cache with the server gone, and reads it as ``collablab compare`` does (the run
folder's manifest params).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import notebook_defaults
from matplotlib.figure import Figure
from statsmodels.stats.proportion import proportion_confint

from collablab.analysis.beside import paper_model
from collablab.llm.fake_server import FakeOpenAIServer, FakeReply
from collablab.runs import load_run
from collablab.studies import dynahmrc as S
from collablab.studies.dynahmrc import experiments as E
from collablab.studies.dynahmrc.beside import ABLATION_REFERENCE, REFERENCE_MODEL

PUBLISHED = Path(S.__file__).with_name("published")
NB = Path(__file__).resolve().parents[1] / "notebooks" / "06_heterogeneous_dynamic_teams.ipynb"
P0 = {
    "kinds": ["pack"], "levels": ["easy", "medium"], "teams": ["Ma-MoMa", "Ma-MoMa-Mo-UAV"],
    "methods": ["dynahmrc", "coela", "coherent"], "search_methods": ["mcts"], "search_levels": ["easy"],
    "search_tasks": 1, "mcts_iterations": 5, "mcts_max_sim_actions": 60, "variations": ["CTO", "ANC"], "T": 5,
    "ablations": ["w/o feedback"], "ablation_levels": ["medium"], "n_tasks": 2, "task_seed": 0, "runs": [0],
    "backend": "heuristic", "profile": "default", "model": "", "base_url": "", "provider": "auto",
    "llm_cache_mode": "", "n_resamples": 200, "paper_models": {},
}


def _published() -> dict[str, pd.DataFrame]:
    """Every transcribed table, read here from its CSV, by file stem."""
    return {p.stem: pd.read_csv(p) for p in PUBLISHED.glob("*.csv") if p.name != "index.csv"}


@pytest.fixture(scope="module")
def episodes() -> pd.DataFrame:
    return pd.DataFrame([S.run_spec(s)["episode"] for s in E.specs(P0)])


def _llm(episodes: pd.DataFrame, served: str, **more) -> tuple[pd.DataFrame, dict]:
    """The heuristic episodes relabelled as an LLM run of ``served`` (module docstring)."""
    e = episodes.copy()
    llm = ~e["method"].str.contains("mcts")
    e.loc[llm, "backend"] = f"vllm:{served}"
    e.loc[llm, "model"] = served
    return e, {**P0, "backend": "llm", "model": served, **more}


# --------------------------------------------------------------------------- model names


def test_every_default_is_a_published_model() -> None:
    models = {m for t in _published().values() for m in t["model"]}
    assert set(S.PAPER_MODELS.values()) <= models
    assert {"GPT-4o", "Qwen3-4B", "Gemini-2.5-Flash", "Claude-3.7-Sonnet", "DeepSeek-V3",
            "Qwen3-235B-A22B-Instruct"} <= set(S.PAPER_MODELS.values())
    assert {REFERENCE_MODEL, ABLATION_REFERENCE} <= models


@pytest.mark.parametrize("served, name", [
    ("gpt-4o", "GPT-4o"),
    ("gpt-4o-2024-08-06", "GPT-4o"),                          # a dated OpenAI id
    ("openai/gpt-4o", "GPT-4o"),                              # OpenRouter
    ("Qwen/Qwen3-4B-Instruct-2507", "Qwen3-4B"),              # as vLLM serves it
    ("Qwen3-4B-Instruct-2507-AWQ", "Qwen3-4B"),               # no org, a quantization suffix
    ("qwen3-4b-instruct-2507-q4_k_m.gguf", "Qwen3-4B"),       # a llama.cpp file
    ("claude-3-7-sonnet-20250219", "Claude-3.7-Sonnet"),
    ("deepseek-ai/DeepSeek-V3-0324", "DeepSeek-V3"),
    ("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "Qwen3-235B-A22B-Instruct"),
    ("google/gemini-2.5-flash", "Gemini-2.5-Flash"),
    ("gpt-4o-mini", None),                                    # another model
    ("Qwen/Qwen3-8B", None),
])
def test_served_ids_map_to_the_papers_names(served: str, name: str | None) -> None:
    assert paper_model(served, S.PAPER_MODELS) == name


# --------------------------------------------------------------------------- heuristic run


def test_a_heuristic_run_is_a_reference_beside_gpt4o(episodes: pd.DataFrame) -> None:
    B = S.beside_paper("06_heterogeneous_dynamic_teams", episodes, pd.DataFrame(), P0)
    assert B.comparisons and B.backend == "heuristic" and B.model is None
    assert {c.kind for c in B.comparisons} == {"reference"}
    tables = {c.table.name for c in B.comparisons}
    assert {"constant_exp", "goal_exp", "addition_exp", "central_1", "central_2", "ablation"} <= tables
    by = {(c.table.name, c.model) for c in B.comparisons}
    assert ("constant_exp", "GPT-4o") in by and ("constant_exp", "CoELA") in by and ("constant_exp", "MCTS") in by
    assert ("ablation", ABLATION_REFERENCE) in by and ("central_1", "COHERENT") in by
    assert "GPT-4o" in B.notes[0] and "tuned on no paper cell" in B.notes[0]
    assert any("MCTS" in n and "reference" in n for n in B.notes)
    # the paper prints no AS or CC for MCTS: its rows compare SUCC, PS and TS only
    mcts = next(c for c in B.comparisons if c.model == "MCTS")
    assert set(mcts.rows["metric"]) == {"success", "ps", "ts"}
    # ablations without a transcribed row (our appendix variants) are left out
    abl = next(c for c in B.comparisons if c.table.name == "ablation")
    assert set(abl.rows["ablation"]) == {"full", "w/o feedback"}


def test_one_cell_checked_by_hand(episodes: pd.DataFrame) -> None:
    """DynaHMRC's success on 2-type static Pack Objects, easy: the run's Wilson interval made here
    with statsmodels, the published value read from the CSV, the verdict decided here."""
    B = S.beside_paper("06_heterogeneous_dynamic_teams", episodes, pd.DataFrame(), P0)
    c = next(c for c in B.comparisons if c.table.name == "constant_exp" and c.model == "GPT-4o")
    mine = episodes[(episodes["method"] == "dynahmrc") & (episodes["variation"] == "none")
                    & (episodes["ablation"] == "none") & (episodes["n_types"] == 2) & (episodes["kind"] == "pack")
                    & (episodes["level"] == "easy")]
    k, n = int(mine["success"].sum()), len(mine)
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    pub = pd.read_csv(PUBLISHED / "constant_exp.csv")
    p = pub[(pub["model"] == "GPT-4o") & (pub["n_types"] == 2) & (pub["kind"] == "pack") & (pub["level"] == "easy")
            & (pub["metric"] == "success")]["value"].item()
    verdict = "inside" if lo - 1e-9 <= p <= hi + 1e-9 else "above" if p > hi else "below"
    at = (c.rows["n_types"].astype(str) == "2") & (c.rows["kind"] == "pack") & (c.rows["level"] == "easy")
    row = c.rows[at & (c.rows["metric"] == "success")].iloc[0]
    assert row["n"] == n and row["run"] == pytest.approx(k / n)
    assert row["run_low"] == pytest.approx(lo if k else 0.0) and row["run_high"] == pytest.approx(hi if k < n else 1.0)
    assert row["published"] == pytest.approx(p) and row["verdict"] == verdict
    # a mean: the run's temporal steps of the same cell, inside its own bootstrap interval
    ts = c.rows[at & (c.rows["metric"] == "ts")].iloc[0]
    assert ts["run"] == pytest.approx(mine["ts"].mean()) and ts["run_low"] <= ts["run"] <= ts["run_high"]


# --------------------------------------------------------------------------- LLM runs


def test_an_llm_run_of_a_paper_model_picks_its_rows(episodes: pd.DataFrame) -> None:
    e, P = _llm(episodes, "Qwen/Qwen3-4B-Instruct-2507")
    B = S.beside_paper("06_heterogeneous_dynamic_teams", e, pd.DataFrame(), P)
    assert B.model == "Qwen3-4B" and B.backend == "vllm:Qwen/Qwen3-4B-Instruct-2507"
    assert "is the paper's **Qwen3-4B**" in B.lead() and any("fine-tuned" in n for n in B.notes)
    own = [c for c in B.comparisons if c.model == "Qwen3-4B"]
    assert own and {c.kind for c in own} == {"reproduction"}
    assert {"constant_exp", "goal_exp", "ablation"} <= {c.table.name for c in own}
    pub = _published()
    for c in own:
        placed = c.rows[c.rows["published"].notna()]
        assert len(placed)
        mine = pub[c.table.name][pub[c.table.name]["model"] == "Qwen3-4B"]
        for _, r in placed.iterrows():
            sel = mine
            for col in c.on:
                sel = sel[sel[col].astype(str) == str(r[col])]
            assert r["published"] == pytest.approx(sel["value"].item())
    # the paper ran CoELA and COHERENT on GPT-4o, MCTS on no model: references here
    assert {c.kind for c in B.comparisons if c.model in ("CoELA", "COHERENT", "MCTS")} == {"reference"}


def test_gpt4o_reproduces_the_llm_baselines_too(episodes: pd.DataFrame) -> None:
    e, P = _llm(episodes, "gpt-4o-2024-08-06")
    B = S.beside_paper("06_heterogeneous_dynamic_teams", e, pd.DataFrame(), P)
    kinds = {(c.table.name, c.model): c.kind for c in B.comparisons}
    assert kinds[("constant_exp", "GPT-4o")] == kinds[("constant_exp", "CoELA")] == "reproduction"
    assert kinds[("central_1", "COHERENT")] == "reproduction" and kinds[("constant_exp", "MCTS")] == "reference"
    abl = next(c for c in B.comparisons if c.table.name == "ablation")
    assert abl.model == "GPT-4o" and set(abl.rows["ablation"]) == {"full"}  # the paper ablated Qwen3-4B only


def test_a_model_of_the_ablation_table_only(episodes: pd.DataFrame) -> None:
    e, P = _llm(episodes, "claude-3-7-sonnet-20250219")
    B = S.beside_paper("06_heterogeneous_dynamic_teams", e, pd.DataFrame(), P)
    own = [c for c in B.comparisons if c.model == "Claude-3.7-Sonnet"]
    assert [c.table.name for c in own] == ["ablation"] and own[0].kind == "reproduction"
    assert not any(c.model == "GPT-4o" for c in B.comparisons)


def test_paper_models_maps_an_unknown_served_id(episodes: pd.DataFrame) -> None:
    e, P = _llm(episodes, "my-org/dynahmrc-ft-4b", paper_models={"my-org/dynahmrc-ft-4b": "Qwen3-4B"})
    B = S.beside_paper("06_heterogeneous_dynamic_teams", e, pd.DataFrame(), P)
    assert B.model == "Qwen3-4B"
    assert {c.kind for c in B.comparisons if c.model == "Qwen3-4B"} == {"reproduction"}


def test_paper_models_may_spell_the_papers_name_its_own_way(episodes: pd.DataFrame) -> None:
    e, P = _llm(episodes, "my-org/ft", paper_models={"my-org/ft": "qwen3 4b"})
    B = S.beside_paper("06_heterogeneous_dynamic_teams", e, pd.DataFrame(), P)
    assert {c.kind for c in B.comparisons if c.model == "Qwen3-4B"} == {"reproduction"}


def test_an_unknown_model_is_a_reference_and_the_lead_says_how_to_map_it(episodes: pd.DataFrame) -> None:
    e, P = _llm(episodes, "my-org/dynahmrc-ft-4b")
    B = S.beside_paper("06_heterogeneous_dynamic_teams", e, pd.DataFrame(), P)
    assert B.model is None and B.served == "my-org/dynahmrc-ft-4b"
    assert {c.kind for c in B.comparisons} == {"reference"}
    assert {c.model for c in B.comparisons if c.table.name == "constant_exp"} >= {REFERENCE_MODEL}
    assert "paper_models" in B.lead() and "did not run this model" in B.notes[0]


def test_a_replayed_llm_run_of_the_papers_qwen3_4b_picks_its_rows(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COLLABLAB_OUTPUTS", str(tmp_path / "out"))
    monkeypatch.setenv("COLLABLAB_LLM_CACHE", str(tmp_path / "cache.sqlite"))
    served = "Qwen/Qwen3-4B-Instruct-2507"
    P = {**notebook_defaults(NB), "kinds": ["pack"], "levels": ["easy"], "teams": ["Ma-MoMa"],
         "methods": ["dynahmrc", "coela"], "search_methods": [], "search_levels": [], "variations": [],
         "ablations": [], "sensitivity": [], "n_tasks": 1, "workers": 1, "n_resamples": 200, "backend": "llm", "model": served,
         "provider": "vllm", "llm_cache_mode": "rw"}

    def waiting(body: dict, server: FakeOpenAIServer) -> FakeReply:
        return FakeReply("Thoughts: I wait.\nContents: wait()", usage={"prompt_tokens": 9, "completion_tokens": 4,
                                                                        "total_tokens": 13})
    with FakeOpenAIServer(waiting, models=[served]) as srv:
        P["base_url"] = srv.base_url
        E.run_notebook(P)
    *_, run_dir = E.run_notebook({**P, "llm_cache_mode": "replay"})  # the server is gone
    manifest = json.loads((Path(run_dir) / "manifest.json").read_text())
    episodes, steps = load_run(run_dir)
    assert len(episodes) == 2 and set(episodes["backend"]) == {f"vllm:{served}"}
    B = S.beside_paper(manifest["study"], episodes, steps, manifest["params"], run_dir)
    assert B.model == "Qwen3-4B" and [(c.table.name, c.model, c.kind) for c in B.comparisons] == [
        ("constant_exp", "Qwen3-4B", "reproduction"), ("constant_exp", "CoELA", "reference"),
        ("central_1", "Qwen3-4B", "reproduction")]
    cell = B.comparisons[0].rows.set_index("metric")["published"]
    assert cell.to_dict() == pytest.approx({"success": 1.0, "ps": 1.0, "ts": 4.6667, "as_per_robot": 2.7666,
                                            "cc": 0.2333})
    assert "is the paper's Qwen3-4B" in B.text()
    assert (Path(run_dir) / "tables" / "published_constant_exp.csv").exists() or B._repr_html_()


# --------------------------------------------------------------------------- what a reader sees


def test_text_html_and_figure(episodes: pd.DataFrame) -> None:
    B = S.beside_paper("06_heterogeneous_dynamic_teams", episodes, pd.DataFrame(), P0)
    text, html = B.text(), B._repr_html_()
    for out in (text, html):
        assert "tab:constant_exp" in out and "tab:central_1" in out and "reference" in out
        assert "inside" in out and ("above" in out or "below" in out)
    assert "<table" in html and "verdict" in html
    fig = B.figure()
    assert isinstance(fig, Figure) and "tab:central_1" in fig.get_suptitle()


def test_an_empty_run_has_no_comparison() -> None:
    B = S.beside_paper("06_heterogeneous_dynamic_teams", pd.DataFrame(), pd.DataFrame(), P0)
    assert not B.comparisons and "No published table" in B.text()
