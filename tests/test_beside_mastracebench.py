"""Notebook 05 beside MASTraceBench's tables (issue 25): the model names, an offline run as a reference
beside Qwen3-32B with a verdict checked by hand, an LLM run's own rows, ``paper_models``, Table 4's
heterogeneous teams, and what a reader sees.

The runs are tiny and in process: the notebook's specs (five methods, MAPF and EvidenceChain, one
Gomoku episode, three Table 4 settings) played through ``run_spec`` on the heuristic backend, their
records put in frames as ``load_run`` gives them. Most LLM runs are those frames *relabelled*: the
``backend`` column set to a vLLM label and ``model``/``models`` to served ids (the records' numbers stay
the heuristic's; what is tested is which of the paper's rows a run is put beside). One LLM run is real:
the notebook's specs against the scripted OpenAI-compatible server (``FakeOpenAIServer``) serving
``Qwen/Qwen3-32B`` and a scale-heterogeneous team, through the response cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import notebook_defaults
from scipy import stats

from collablab.analysis.beside import paper_model
from collablab.llm.fake_server import FakeOpenAIServer, FakeReply
from collablab.analysis.published import load_published
from collablab.studies import mastracebench as S
from collablab.studies.mastracebench import beside as BS
from collablab.studies.mastracebench import experiments as E

NB = Path(__file__).resolve().parents[1] / "notebooks" / "05_proposal_trajectories.ipynb"
TABLES = load_published(BS.PUBLISHED)
NAME = "05_proposal_trajectories"


def _frames(P: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The records of P's specs, run in process, as ``load_run`` gives them."""
    episodes, steps = [], []
    for i, spec in enumerate(E.specs(P)):
        r = S.run_spec(spec)
        episodes.append({"episode_key": f"k{i}", "grid_index": i, **r["episode"]})
        steps += [{"episode_key": f"k{i}", "grid_index": i, **s} for s in r["steps"]]
    return pd.DataFrame(episodes), pd.DataFrame(steps)


@pytest.fixture(scope="module")
def tiny() -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    P = notebook_defaults(NB)
    P.update(methods=["Single-Agent", "Consistency", "Int. Debate", "MAPR", "Reflection"],
             tasks=["mapf", "evidence_chain", "gomoku"], n_units={"mapf": 8, "evidence_chain": 8, "gomoku": 1},
             runs=[0], max_decisions=4, n_resamples=200,
             table4_settings=[{"label": "Main (3P+1R)", "proposers": 3, "rounds": 1},
                              {"label": "3P+2R", "proposers": 3, "rounds": 2},
                              {"label": "Scale-Het.", "proposers": 3, "rounds": 1,
                               "agent_profiles": "strong,medium,weak"}])
    return (P, *_frames(P))


def _llm(P: dict, episodes: pd.DataFrame, served: str, team: str | None = None, **more) -> tuple[dict, pd.DataFrame]:
    """The tiny run relabelled as an LLM run of ``served`` (its Scale-Het. setting as the team ``team``)."""
    e = episodes.assign(backend=f"vllm:{served}", model=served, profile=None)
    het = e["agent_profiles"].notna()
    e["agent_profiles"] = None
    e["models"] = np.where(het, team, None) if team else None
    return {**P, "backend": "llm", "model": served, **more}, e


def test_paper_models_are_the_published_models_and_served_ids_map_to_them():
    models = {m for t in TABLES.values() for m in t.rows["model"]}
    assert set(BS.PAPER_MODELS.values()) <= models
    members = {x for m in TABLES["table04"].rows["model"] for x in m.split(" + ")}
    assert set(BS.TEAM_MODELS.values()) <= members
    assert members <= set(BS.TEAM_MODELS.values())  # every Table 4 team member has a served id
    for served in ("Qwen/Qwen3-32B", "Qwen/Qwen3-32B-AWQ", "qwen3-32b-instruct-q4_k_m.gguf", "Qwen3-32B-FP8"):
        assert paper_model(served, BS.PAPER_MODELS) == "Qwen3-32B", served
    for served, name in (("meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-8B-Instruct"),
                         ("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", "Llama-3.1-8B-Instruct"),
                         ("mistralai/Ministral-8B-Instruct-2410", "Mistral-8B-Instruct"),
                         ("Qwen/Qwen3-14B-AWQ", "Qwen3-14B"), ("Qwen/Qwen3-8B", "Qwen3-8B")):
        assert paper_model(served, BS.TEAM_MODELS) == name, served
    assert paper_model("Qwen/Qwen3-8B", BS.PAPER_MODELS) is None  # not a backbone of Tables 2, 3, 9, 10
    assert S.PAPER_MODELS is BS.PAPER_MODELS and "beside_paper" in S.__all__


def test_an_offline_run_is_a_reference_beside_qwen3_32b_with_a_verdict_checked_by_hand(tiny):
    P, episodes, steps = tiny
    B = S.beside_paper(NAME, episodes, steps, P)
    names = [c.table.name for c in B.comparisons]
    assert names == ["table02", "table09", "table03", "table10", "table04", "table04_scale_het"], names
    assert {c.kind for c in B.comparisons} == {"reference"}
    assert {c.model for c in B.comparisons[:-1]} == {"Qwen3-32B"}
    assert B.comparisons[-1].model == "Qwen3-32B + Qwen3-14B + Qwen3-8B"
    assert B.model is None and B.served is None and any("Qwen3-32B" in n and "calibration" in n for n in B.notes)
    # TS of Single-Agent on MAPF: units' scores, a t interval by hand, the paper's 69.66
    sa = episodes[(episodes.method == "Single-Agent") & (episodes.task == "mapf") & (episodes.setting == "3P+1R")]
    x = sa["score"].to_numpy(float)
    lo, hi = stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=x.std(ddof=1) / np.sqrt(len(x)))
    lo, hi = max(lo, 0.0), min(hi, 100.0)
    want = "inside" if lo <= 69.66 <= hi else "above" if 69.66 > hi else "below"
    r = B.comparisons[0].rows.set_index(["method", "task", "metric"]).loc[("Single-Agent", "mapf", "TS")]
    assert r["run"] == pytest.approx(x.mean()) and (r["run_low"], r["run_high"]) == pytest.approx((lo, hi))
    assert r["published"] == pytest.approx(69.66) and r["verdict"] == want
    # Table 4's main setting is the paper's Main (3P+1R), percentages against fractions
    t4 = B.comparisons[4].rows.set_index(["setting", "method", "metric"])
    assert t4.loc[("3P+1R", "MAPR", "GR"), "published"] == pytest.approx(0.447)
    assert set(B.comparisons[4].rows["setting"]) == {"3P+1R", "3P+2R"}
    assert B.figure() is not None and B.comparisons[4].x  # Table 4 over the settings


def test_an_llm_run_of_the_papers_backbone_picks_its_rows(tiny):
    P, episodes, steps = tiny
    P2, e = _llm(P, episodes, "Qwen/Qwen3-32B-AWQ", "Qwen/Qwen3-8B,Qwen/Qwen3-14B,Qwen/Qwen3-32B")
    B = S.beside_paper(NAME, e, steps, P2)
    assert B.model == "Qwen3-32B" and B.served == "Qwen/Qwen3-32B-AWQ" and "is the paper's" in B.lead()
    assert {c.kind for c in B.comparisons} == {"reproduction"}
    for c in B.comparisons[:4]:
        pub = c.table.rows[c.table.rows["model"] == "Qwen3-32B"].set_index(["method", "task", "metric"])["value"]
        got = c.rows.dropna(subset=["published"]).set_index(["method", "task", "metric"])["published"]
        scale = 100 if c.table.name == "table09" else 1
        assert len(got) and np.allclose(got * scale, pub.loc[got.index]), c.table.name
    het = B.comparisons[-1]
    assert het.model == "Qwen3-32B + Qwen3-14B + Qwen3-8B" and het.kind == "reproduction"
    pub = TABLES["table04"].rows.query("setting == 'Scale-Het.' and method == 'MAPR' and metric == 'SR'")["value"]
    assert het.rows.set_index(["method", "metric"]).loc[("MAPR", "SR"), "published"] == pytest.approx(pub.iloc[0] / 100)
    # the family team, in another order and with served ids
    P3, e3 = _llm(P, episodes, "Qwen/Qwen3-32B",
                  "mistralai/Ministral-8B-Instruct-2410,Qwen/Qwen3-8B,meta-llama/Llama-3.1-8B-Instruct")
    fam = S.beside_paper(NAME, e3, steps, P3).comparisons[-1]
    assert fam.model == "Qwen3-8B + Llama-3.1-8B-Instruct + Mistral-8B-Instruct"
    assert fam.table.name.endswith("family_het")


def test_a_scripted_server_run_of_qwen3_32b_is_a_reproduction(tmp_path):
    team = ["Qwen/Qwen3-32B", "Qwen/Qwen3-14B", "Qwen/Qwen3-8B"]
    P = notebook_defaults(NB)
    with FakeOpenAIServer(lambda body, srv: FakeReply('{"chain": ["f0", "f1"]}'), models=team) as srv:
        P.update(methods=["Single-Agent", "Int. Debate", "MAPR"], tasks=["evidence_chain"],
                 n_units={"evidence_chain": 2}, runs=[0], n_resamples=200, backend="llm", model=team[0],
                 base_url=srv.base_url, provider="vllm", llm_cache_mode="rw",
                 llm_options={"llm_cache": str(tmp_path / "cache.sqlite")},
                 table4_settings=[{"label": "Main (3P+1R)", "proposers": 3, "rounds": 1},
                                  {"label": "Scale-Het.", "proposers": 3, "rounds": 1, "models": ",".join(team)}])
        E.check_parameters(P)
        episodes, steps = _frames(P)
        assert srv.n_requests > 0
    assert episodes["backend"].str.startswith("vllm:Qwen/Qwen3-32B").all()
    B = S.beside_paper(NAME, episodes, steps, P)
    assert B.model == "Qwen3-32B" and {c.kind for c in B.comparisons} == {"reproduction"}
    assert [c.table.name for c in B.comparisons] == ["table02", "table09", "table10", "table04", "table04_scale_het"]
    t2 = B.comparisons[0].rows.set_index(["method", "task", "metric"])
    assert t2.loc[("MAPR", "evidence_chain", "CG"), "published"] == pytest.approx(3.79)
    assert B.comparisons[-1].model == "Qwen3-32B + Qwen3-14B + Qwen3-8B"


def test_paper_models_maps_a_served_id_and_an_unknown_model_is_a_reference(tiny):
    P, episodes, steps = tiny
    P2, e = _llm(P, episodes, "my-org/house-model-awq", paper_models={"my-org/house-model-awq": "Qwen3-32B"})
    B = S.beside_paper(NAME, e, steps, P2)
    assert B.model == "Qwen3-32B" and B.comparisons[0].kind == "reproduction"
    P3, e3 = _llm(P, episodes, "my-org/house-model-awq", "x/a,x/b,x/c")
    U = S.beside_paper(NAME, e3, steps, P3)
    assert U.model is None and {c.kind for c in U.comparisons} == {"reference"}
    assert {c.model for c in U.comparisons} == {"Qwen3-32B"}  # no such team in Table 4: not compared
    assert "paper_models" in U.lead() and any("Scale-Het." in n and "not compared" in n for n in U.notes)


def test_what_a_reader_sees(tiny, tmp_path):
    P, episodes, steps = tiny
    B = S.beside_paper(NAME, episodes, steps, P, tmp_path)
    text = B.text()
    for s in ("MASTraceBench Table 2 · Qwen3-32B · reference", "Table 9", "Table 3", "Table 4", "inside",
              "no interval", "never a reproduction"):  # one Gomoku episode: no interval
        assert s in text, s
    assert any(v in text for v in ("above", "below"))
    html = B._repr_html_()
    assert "<table" in html and "Table 2" in html and "reference only" in html and "Qwen3-32B" in html
    assert (tmp_path / "tables" / "published_table02.csv").exists()
    assert (tmp_path / "tables" / "published_table04_scale_het.csv").exists()
