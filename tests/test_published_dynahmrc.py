"""DynaHMRC's published result tables as data (issue 25): ``studies/dynahmrc/published/``.

Shape and ranges always; a sample of printed rows against the paper's LaTeX source when it is on
this machine (``/work/shared/papers/dynahmrc.tex`` or ``../shared/papers/`` from the repository).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from collablab.analysis.published import load_published
from collablab.studies.dynahmrc.difficulty import LEVELS, STEP_CAPS
from collablab.studies.dynahmrc.experiments import ABLATIONS
from collablab.studies.dynahmrc.report import SETTINGS
from collablab.studies.dynahmrc.robots import ANC_TRANSITIONS, COMPOSITIONS
from collablab.studies.dynahmrc.spec import METHOD_NAMES, VARIATIONS
from collablab.studies.dynahmrc.stats import METRICS
from collablab.studies.dynahmrc.world import TASK_KINDS

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "lib/collablab/studies/dynahmrc/published"
PAPERS = (Path("/work/shared/papers/dynahmrc.tex"), ROOT / "../shared/papers/dynahmrc.tex")

RATES = ("success", "ps")
N_TYPES = {len(c.split("-")) for c in COMPOSITIONS}
#: Every condition column a table may have, with the values our study knows.
KNOWN = {
    "method": set(METHOD_NAMES), "n_types": N_TYPES, "kind": set(TASK_KINDS), "level": set(LEVELS),
    "variation": set(VARIATIONS) - {"none"}, "team": set(COMPOSITIONS), "team_after": set(COMPOSITIONS),
    "setting": set(SETTINGS), "ablation": set(ABLATIONS),
}
#: The paper's section headers, by our names.
KIND_HEADER = {"pack": "Pack Objects", "sandwich": "Make Sandwich", "sort": "Sort Solids"}
LEVEL_COLUMN = {lev: i for i, lev in enumerate(LEVELS)}  # Easy / Medium / Hard column groups


def _label(model: str, method: str, ablation: str = "full") -> str:
    """The row label as the LaTeX source prints it (macros unexpanded)."""
    if method == "dynahmrc":
        macro = {"GPT-4o": r"\sysnameo", "Qwen3-4B": r"\sysnameq"}.get(model)
        if ablation != "full":
            return rf"\makecell[c]{{\sysnameq\\$w.o.$ {ablation.removeprefix('w/o ')}}}"
        if model == "Qwen3-235B-A22B-Instruct":
            return r"\makecell[c]{Qwen3-235B-A22B\\Instruct}"
        return macro or model
    return model


#: Per file: the rows checked against the paper: (conditions, printed block headers to pass first).
SAMPLES: dict[str, list[dict]] = {
    "constant_exp": [
        {"model": "MCTS-NoINS", "method": "mcts_noins", "n_types": 2, "kind": "pack"},
        {"model": "Qwen3-4B", "method": "dynahmrc", "n_types": 3, "kind": "sort"},
        {"model": "CoELA", "method": "coela", "n_types": 4, "kind": "sandwich"},
        {"model": "GPT-4o", "method": "dynahmrc", "n_types": 2, "kind": "pack"},
    ],
    "goal_exp": [
        {"model": "MCTS", "method": "mcts", "n_types": 2, "kind": "pack"},
        {"model": "GPT-4o", "method": "dynahmrc", "n_types": 3, "kind": "sandwich"},
        {"model": "Qwen3-4B", "method": "dynahmrc", "n_types": 4, "kind": "sort"},
    ],
    "area_exp": [
        {"model": "GPT-4o", "method": "dynahmrc", "n_types": 3, "kind": "pack"},
        {"model": "CoELA", "method": "coela", "n_types": 3, "kind": "sort"},
        {"model": "Qwen3-4B", "method": "dynahmrc", "n_types": 4, "kind": "sandwich"},
    ],
    "addition_exp": [
        {"model": "MCTS", "method": "mcts", "team": "Ma-MoMa", "kind": "pack"},
        {"model": "GPT-4o", "method": "dynahmrc", "team": "Ma-UAV", "kind": "sort"},
        {"model": "Qwen3-4B", "method": "dynahmrc", "team": "Ma-Mo-UAV", "kind": "sandwich"},
    ],
    "removal_exp": [
        {"model": "CoELA", "method": "coela", "team_after": "Ma-MoMa", "kind": "pack"},
        {"model": "Qwen3-4B", "method": "dynahmrc", "team_after": "Ma-UAV", "kind": "sandwich"},
        {"model": "GPT-4o", "method": "dynahmrc", "team_after": "Ma-Mo-UAV", "kind": "sort"},
    ],
    "central_1": [
        {"model": "COHERENT", "method": "coherent", "n_types": 2, "setting": "Static"},
        {"model": "GPT-4o", "method": "dynahmrc", "n_types": 3, "setting": "IRZ"},
        {"model": "Qwen3-4B", "method": "dynahmrc", "n_types": 4, "setting": "CTO"},
    ],
    "central_2": [
        {"model": "COHERENT", "method": "coherent", "team": "Ma-MoMa", "setting": "ANC"},
        {"model": "GPT-4o", "method": "dynahmrc", "team": "Ma-MoMa-UAV", "team_after": "Ma-UAV", "setting": "REC"},
        {"model": "Qwen3-4B", "method": "dynahmrc", "team": "Ma-Mo-UAV", "setting": "ANC"},
    ],
    "ablation": [
        {"model": "Gemini-2.5-Flash", "ablation": "full", "setting": "Static"},
        {"model": "Qwen3-235B-A22B-Instruct", "ablation": "full", "setting": "REC"},
        {"model": "Qwen3-4B", "ablation": "w/o feedback", "setting": "IRZ"},
        {"model": "Qwen3-4B", "ablation": "full", "setting": "ANC"},
    ],
}


@pytest.fixture(scope="module")
def tables():
    return load_published(FOLDER)


@pytest.fixture(scope="module")
def paper() -> list[str]:
    for p in PAPERS:
        if p.exists():
            return p.read_text(encoding="utf-8").splitlines()
    pytest.skip("the DynaHMRC paper source is not on this machine")


def test_every_index_entry_loads(tables) -> None:
    assert set(tables) == set(SAMPLES), set(tables) ^ set(SAMPLES)
    for t in tables.values():
        assert t.paper == "DynaHMRC" and t.table.startswith(f"tab:{t.name} ") and t.scale == "mixed"


def test_values_and_conditions_are_ones_we_know(tables) -> None:
    for name, t in tables.items():
        r = t.rows
        assert set(r["metric"]) <= set(METRICS), name
        assert set(t.conditions) <= set(KNOWN), (name, t.conditions)
        for col in t.conditions:
            bad = set(r[col]) - KNOWN[col]
            assert not bad, f"{name}: {col} values {bad} unknown to the study"
        rates = r[r["metric"].isin(RATES)]["value"]
        assert rates.between(0, 1).all(), name
        steps = r[~r["metric"].isin(RATES)]
        assert (steps["value"] >= 0).all(), name
        assert (steps[steps["metric"] == "ts"]["value"] <= max(STEP_CAPS.values())).all(), name
        if "team_after" in r.columns:  # ANC adds along ANC_TRANSITIONS; REC is its reverse
            for _, row in r.drop_duplicates(["variation" if "variation" in r else "setting", "team"]).iterrows():
                v = row.get("variation", row.get("setting"))
                pair = (row["team"], row["team_after"]) if v == "ANC" else (row["team_after"], row["team"])
                assert ANC_TRANSITIONS.get(pair[0]) == pair[1], (name, dict(row))


def _block(paper: list[str], name: str) -> list[str]:
    start = next(i for i, line in enumerate(paper) if rf"\label{{tab:{name}}}" in line)
    end = next(i for i in range(start, len(paper)) if re.search(r"\\end\{(tabular|longtable)\}", paper[i]))
    return [line.strip() for line in paper[start:end] if line.strip() and not line.strip().startswith("%")]


def _cells(line: str) -> list[str]:
    line = re.sub(r"\\textbf\{([^}]*)\}", r"\1", line).rstrip("*").rstrip().removesuffix("\\\\")
    return [c.strip() for c in line.split("&")]


def _after(lines: list[str], i: int, needle: str) -> int:
    return next(k for k in range(i, len(lines)) if needle in lines[k])


@pytest.mark.parametrize("name", list(SAMPLES))
def test_sampled_rows_match_the_paper(tables, paper, name: str) -> None:
    r = tables[name].rows
    lines = _block(paper, name)
    for s in SAMPLES[name]:
        sel = r.loc[(r[list(s)] == list(s.values())).all(axis=1)]
        assert len(sel), (name, s)
        row0 = sel.iloc[0]
        label = _label(row0["model"], row0["method"], row0.get("ablation", "full"))
        # walk the printed block headers down to the row
        i = 0
        if "n_types" in r.columns:
            i = _after(lines, i, rf"\textbf{{{row0['n_types']} Types of Robot}}")
        if "team" in r.columns:  # headers print "A -> B" (central_2: "A -> B / B -> A", the ANC direction first)
            a, b = row0["team"], row0["team_after"]
            if name == "central_2" and row0["setting"] == "REC":
                a, b = b, a
            needle = (rf"\textbf{{{a} $\rightarrow$ {b} /" if name == "central_2"
                      else rf"\textbf{{{a}}}\boldmath$\mathbf{{\;\rightarrow\;}}$\textbf{{{b}}}}}")
            i = _after(lines, i, needle)
        if "kind" in r.columns:
            i = _after(lines, i, KIND_HEADER[row0["kind"]])
        if "setting" in r.columns:  # a method cell spanning its settings' rows
            i = next(k for k in range(i, len(lines)) if lines[k].endswith("{" + label + "}"))
            k = next(k for k in range(i, len(lines)) if _cells(lines[k])[:2] == ["", row0["setting"]])
            printed = _cells(lines[k])[2:]
        else:
            k = next(k for k in range(i, len(lines)) if _cells(lines[k])[0] in (label, label.upper()))
            printed = _cells(lines[k])[1:]
        if "level" in r.columns:
            for lev, j in LEVEL_COLUMN.items():
                _check(sel[sel["level"] == lev], printed[5 * j:5 * j + 5], f"{name} {s} {lev}: {lines[k]}")
        else:
            _check(sel, printed, f"{name} {s}: {lines[k]}")


def _check(sel, printed: list[str], where: str) -> None:
    assert len(printed) == len(METRICS) and sel["metric"].is_unique, where
    got = dict(zip(sel["metric"], sel["value"]))
    for metric, cell in zip(METRICS, printed):
        if cell in ("-", "--"):
            assert metric not in got, f"{where}: {metric} printed {cell!r} but transcribed {got[metric]}"
        else:
            assert got.get(metric) == pytest.approx(float(cell), abs=5e-5), f"{where}: {metric} {cell} vs {got.get(metric)}"
