"""The partner-information paper's published results as data (issue 25): the folder
``studies/partnr/published/`` loads, its cells are on the paper's scale, its conditions are the
study's own, and sample cells match the paper text (observe_share_predict.txt, when present).

The paper text we hold is a prose summary without table bodies, so each table holds only the cells
the prose places (index.csv notes name the rest); the sample checks quote the prose line.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from collablab.analysis.published import load_published
from collablab.studies.partnr.episode import ROLES
from collablab.studies.partnr.experiments import CONTEXTS, FULL_CONTEXTS
from collablab.studies.partnr.report import METRICS, PREDICTION_RATES
from collablab.studies.partnr.spec import OBSERVABILITY

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "lib" / "collablab" / "studies" / "partnr" / "published"
PAPER_NAME = "observe_share_predict.txt"
PAPERS = (Path("/work/shared/papers") / PAPER_NAME, ROOT.parent / "shared" / "papers" / PAPER_NAME)

#: The planners as the paper names them (any string is allowed; these are the four it runs).
MODELS = {"Llama 8B", "Llama 70B", "Gemini", "DeepSeek"}
#: The values each condition column may take: the study's own constants.
KNOWN: dict[str, set] = {
    "context": set(CONTEXTS) | set(FULL_CONTEXTS),
    "agent": set(ROLES),
    "oana": {True, False},
    "observability": set(OBSERVABILITY),
}
#: Per table, the metrics it may hold and the scale of each (percent rates, counts).
METRIC_SCALES: dict[str, dict[str, str]] = {
    "table02": {m: "percent" for m in PREDICTION_RATES},
    "table03": {**{m: "percent" for m in METRICS}, "steps": "count", "cycles": "count"},
    "table10": {m: "percent" for m in PREDICTION_RATES},
    "table11": {m: "percent" for m in PREDICTION_RATES},
}

#: Sample cells checked against the paper: (a phrase finding the line, the cell's conditions,
#: the value as the paper prints it). The line must contain the printed value.
SAMPLES: dict[str, list[tuple[str, dict, str]]] = {
    "table02": [
        ("its robot has the weakest baseline Action Type", {"model": "DeepSeek", "context": "Obj", "agent": "robot",
                                                            "metric": "type_acc"}, "27.9%"),
        ("its robot has the weakest baseline Action Type", {"model": "Llama 8B", "context": "Obj", "agent": "robot",
                                                            "metric": "type_acc"}, "31.8%"),
        ("For Llama 8B, OAS raises Action Type accuracy", {"model": "Llama 8B", "context": "OAS", "agent": "robot",
                                                           "metric": "type_acc"}, "36.1%"),
        ("For Llama 8B, OAS raises Action Type accuracy", {"model": "Llama 8B", "context": "Obj", "agent": "robot",
                                                           "metric": "cond_principal"}, "54.2%"),
        ("For Llama 8B, OAS raises Action Type accuracy", {"model": "Llama 8B", "context": "OAS", "agent": "robot",
                                                           "metric": "cond_principal"}, "49.2%"),
    ],
    "table03": [
        ("OAS also yields the best Success Rate for Gemini", {"model": "Gemini", "context": "OAS", "oana": False,
                                                              "metric": "SR"}, "81.2%"),
        ("OAS also yields the best Success Rate for Gemini", {"model": "DeepSeek", "context": "OAS", "oana": False,
                                                              "metric": "SR"}, "83.6%"),
        ("Adding OANA partly repairs the Llama 8B", {"model": "Llama 8B", "context": "KE", "oana": False,
                                                     "metric": "steps"}, "4914"),
        ("Adding OANA partly repairs the Llama 8B", {"model": "Llama 8B", "context": "KE", "oana": True,
                                                     "metric": "steps"}, "4121"),
        ("Adding OANA partly repairs the Llama 8B", {"model": "Llama 8B", "context": "KE", "oana": True,
                                                     "metric": "EE"}, "62.7%"),
        ("Adding OANA partly repairs the Llama 8B", {"model": "Llama 8B", "context": "KE", "oana": True,
                                                     "metric": "SR"}, "56.2%"),
        ("For the Llama 8B, KE raises Extraneous Effort", {"model": "Llama 8B", "context": "Obj", "oana": False,
                                                           "metric": "EE"}, "62.3%"),
        ("The Llama 70B is the exception", {"model": "Llama 70B", "context": "KE", "oana": False,
                                            "metric": "SR"}, "76.2%"),
        ("The Llama 70B is the exception", {"model": "Llama 70B", "context": "OAS", "oana": False,
                                            "metric": "SR"}, "76.9%"),
        ("versus 77.5% under partial observability with OAS + KE", {"model": "Llama 70B", "context": "OAS+KE",
                                                                     "oana": False, "metric": "SR"}, "77.5%"),
    ],
    "table10": [  # the prose places only two cells of Table 10; both are checked
        ("Full observability gave Llama 70B its strongest predictions", {"model": "Llama 70B", "context": "OAS",
                                                                         "agent": "robot", "metric": "type_acc"}, "65.6/"),
        ("Full observability gave Llama 70B its strongest predictions", {"model": "Llama 70B", "context": "OAS",
                                                                         "agent": "human", "metric": "type_acc"}, "/70.8%"),
    ],
    "table11": [
        ("strict-target Action Type remained", {"model": "Llama 70B", "context": "Obj", "agent": "robot",
                                                "metric": "type_acc"}, "43.8/"),
        ("strict-target Action Type remained", {"model": "Llama 70B", "context": "Obj", "agent": "human",
                                                "metric": "type_acc"}, "/45.9%"),
        ("strict-target Action Type remained", {"model": "Llama 70B", "context": "OAS", "agent": "robot",
                                                "metric": "type_acc"}, "43.5/"),
        ("strict-target Action Type remained", {"model": "Llama 70B", "context": "OAS", "agent": "human",
                                                "metric": "type_acc"}, "/43.1%"),
    ],
}


def _paper_lines() -> list[str]:
    for p in PAPERS:
        if p.exists():
            return p.read_text(encoding="utf-8").splitlines()
    pytest.skip(f"{PAPER_NAME} not present (../shared/papers is optional)")


@pytest.fixture(scope="module")
def tables():
    return load_published(FOLDER)


def test_every_index_entry_loads(tables) -> None:
    index = pd.read_csv(FOLDER / "index.csv", dtype=str, keep_default_na=False)
    assert sorted(tables) == sorted(Path(f).stem for f in index["file"])
    assert set(tables) <= set(METRIC_SCALES)
    for t in tables.values():
        assert t.paper.startswith("Observe, Share, or Predict?") and t.table.startswith("Table ")
        kinds = {METRIC_SCALES[t.name][m] for m in set(t.rows["metric"])}
        assert t.scale == (kinds.pop() if len(kinds) == 1 else "mixed"), t.name


def test_values_are_on_the_papers_scale(tables) -> None:
    for name, t in tables.items():
        rows = t.rows
        assert rows["model"].map(type).eq(str).all(), name
        scales = METRIC_SCALES[name]
        unknown = set(rows["metric"]) - set(scales)
        assert not unknown, f"{name}: metrics {unknown}"
        for metric, g in rows.groupby("metric"):
            v = g["value"].astype(float)
            if scales[metric] == "percent":
                assert v.between(0, 100).all(), f"{name} {metric}: {v.tolist()}"
            else:
                assert (v >= 0).all(), f"{name} {metric}: {v.tolist()}"


def test_conditions_are_the_studys_own(tables) -> None:
    for name, t in tables.items():
        assert set(t.rows["model"]) <= MODELS, name
        for col in t.conditions:
            assert col in KNOWN, f"{name}: condition column {col!r} is not one the study knows"
            bad = set(t.rows[col]) - KNOWN[col]
            assert not bad, f"{name}: {col} values {bad}"


def test_every_table_has_three_sampled_cells(tables) -> None:
    """At least three sampled cells per table (every cell of a table the prose places fewer of)."""
    for name, t in tables.items():
        assert len(SAMPLES.get(name, [])) >= min(3, len(t.rows)), name


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_cells_match_the_paper(tables, name: str) -> None:
    lines = _paper_lines()
    rows = tables[name].rows
    for phrase, cell, printed in SAMPLES[name]:
        hits = [ln for ln in lines if phrase in ln]
        assert len(hits) == 1, f"{name}: {len(hits)} paper lines contain {phrase!r}"
        assert printed in hits[0], f"{name}: {printed} not in the line {hits[0][:120]!r}"
        match = rows
        for col, v in cell.items():
            match = match[match[col] == v]
        assert len(match) == 1, f"{name}: {len(match)} rows for {cell}"
        assert float(match["value"].iloc[0]) == pytest.approx(float(printed.strip("/%").replace(",", "")))
