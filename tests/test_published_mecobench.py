"""MECoBench's published result tables as data (issue 25): the transcriptions under
``studies/mecobench/published/`` load, hold values on their stated scale, name only conditions the
study knows, and a sample of cells per table matches the paper text (when the paper is on disk)."""

from __future__ import annotations

from pathlib import Path

import pytest

from collablab.analysis.published import load_published
from collablab.protocols import PROTOCOLS
from collablab.studies.mecobench.tables import METRIC_COLUMNS
from collablab.studies.mecobench.tasks import PRIORS

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "lib" / "collablab" / "studies" / "mecobench" / "published"
PAPERS = (Path("/work/shared/papers/mecobench.txt"), ROOT.parent / "shared" / "papers" / "mecobench.txt")

TABLES = {"table08": "Table 8", "table09": "Table 9", "table11": "Table 11", "table12": "Table 12",
          "table13": "Table 13", "table20": "Table 20"}

#: Condition values the paper uses that are not one of the study's own constants, and what they are.
EXTRA_VALUES = {
    # Table 8's "Avg." columns: the mean of the parallel and sequential cells (2 agents).
    "structure": {"parallel", "sequential", "average"},
    # Table 20: wrong-grab strata and the adjusted-effect row.
    "wrong_grabs": {"1", "2", "3", "4+", "adjusted"},
    # Table 20: episodes with / without a correction, and their difference (percentage points).
    "group": {"correction", "no_correction", "delta"},
}
KNOWN = {"protocol": set(PROTOCOLS), "prior": set(PRIORS), **EXTRA_VALUES}
#: Metrics beyond the study's metric columns: Table 20's number of cases.
METRICS = set(METRIC_COLUMNS) | {"cases"}
#: For ``mixed`` tables: each metric's range.
PERCENT = {"SR", "CR"}


@pytest.fixture(scope="module")
def published():
    return load_published(FOLDER)


@pytest.fixture(scope="module")
def paper_lines():
    for p in PAPERS:
        if p.exists():
            return p.read_text(encoding="utf-8").splitlines()
    pytest.skip("MECoBench paper text not on this machine")


def test_every_table_is_indexed(published):
    assert set(published) == set(TABLES)
    for name, t in published.items():
        assert t.paper == "MECoBench"
        assert t.table == TABLES[name]
        assert t.caption and t.section


def test_values_and_conditions(published):
    for name, t in published.items():
        rows = t.rows
        assert set(rows["metric"]) <= METRICS, name
        assert rows["model"].map(lambda m: isinstance(m, str) and m != "").all(), name
        for col in t.conditions:
            if col == "n_agents":
                assert rows[col].between(1, 5).all() and (rows[col] % 1 == 0).all(), name
            else:
                assert set(rows[col].astype(str)) <= KNOWN[col], (name, col, set(rows[col].astype(str)) - KNOWN[col])
        v = rows["value"]
        if t.scale == "fraction":
            assert v.between(0, 1).all(), name
        elif name == "table12":  # rates on 0-1, tokens per step a count
            tok = rows["metric"] == "TokensPerStep"
            assert v[~tok].between(0, 1).all() and (v[tok] > 0).all()
        elif name == "table20":  # SR/CR percent, cases counts, deltas in percentage points
            delta = rows["group"] == "delta"
            cases = rows["metric"] == "cases"
            assert v[~delta & ~cases].between(0, 100).all()
            assert (v[cases] >= 0).all() and (v[cases] % 1 == 0).all()
            assert v[delta].between(-100, 100).all()
        else:
            pytest.fail(f"{name}: scale {t.scale} not checked")


def _cells(t, **where) -> list[float]:
    rows = t.rows
    for k, val in where.items():
        rows = rows[rows[k] == val]
    return list(rows["value"])


def _printed(values, fmt="{:.3f}") -> str:
    return " ".join(fmt.format(v) for v in values)


def _in_paper(lines, fragment: str) -> None:
    assert any(fragment in line for line in lines), f"not in the paper text: {fragment!r}"


def test_table08_against_paper(published, paper_lines):
    t = published["table08"]
    # Parallel SR of the open-source block: Qwen3-8B-VL, Qwen3-32B-VL, Qwen3-235B-VL, 1 then 2 agents.
    _in_paper(paper_lines, _printed([v for m in ("Qwen3-8B-VL", "Qwen3-32B-VL", "Qwen3-235B-VL")
                                     for v in _cells(t, model=m, structure="parallel", metric="SR")]))
    # Parallel CR of the closed-source block: GPT-5-mini, GPT-5.4, Gemini-3.1-Pro, 1 then 2 agents.
    closed = [v for m in ("GPT-5-mini", "GPT-5.4", "Gemini-3.1-Pro")
              for v in _cells(t, model=m, structure="parallel", metric="CR")]
    _in_paper(paper_lines, _printed(closed))
    # Sequential SR of the open-source models (the '– x' line).
    open_models = ["Qwen3-8B-VL", "Qwen3-32B-VL", "Qwen3-235B-VL", "Qwen3.5-9B", "Qwen3.5-27B", "Gemma4-26B",
                   "Gemma4-31B", "InternVL-3.5-38B", "InternVL-3.5-241B", "Llama-4", "GLM-4.6V", "GLM-4.6V-Flash"]
    seq = [_cells(t, model=m, structure="sequential", metric="SR")[0] for m in open_models]
    _in_paper(paper_lines, " ".join(f"– {v:.3f}" for v in seq))
    avg_cr = [_cells(t, model=m, structure="average", metric="CR")[0] for m in ("GPT-5-mini", "GPT-5.4", "Gemini-3.1-Pro")]
    _in_paper(paper_lines, " ".join(f"– {v:.3f}" for v in avg_cr))


def test_table09_against_paper(published, paper_lines):
    t = published["table09"]
    for model in ("Qwen3-VL-8B", "Qwen3-VL-32B"):
        for metric in ("SR", "CR", "AUC"):
            _in_paper(paper_lines, _printed(_cells(t, model=model, protocol="broadcast", metric=metric)))
    _in_paper(paper_lines, _printed(_cells(t, model="Qwen3-VL-32B", protocol="isolated", metric="SR")) + " –")
    _in_paper(paper_lines, _printed(_cells(t, model="Qwen3-VL-8B", protocol="isolated", metric="CR")) + " –")


def _row(t, model, protocol, metrics_by_structure) -> str:
    out = []
    for structure, metrics in metrics_by_structure:
        sel = t.rows[(t.rows.model == model) & (t.rows.protocol == protocol) & (t.rows.structure == structure)]
        sel = sel.set_index("metric")["value"]
        out += [sel[m] for m in metrics]
    return _printed(out)


def test_table11_against_paper(published, paper_lines):
    t = published["table11"]
    layout = [("parallel", ["SR", "CR", "AUC", "CAR"]), ("sequential", ["SR", "CR", "AUC", "HFR"])]
    _in_paper(paper_lines, "Broadcast " + _row(t, "Gemma4-31B", "broadcast", layout) + " Gemma4-31B No Comm "
              + _row(t, "Gemma4-31B", "isolated", layout))
    _in_paper(paper_lines, "Broadcast " + _row(t, "Qwen3.5-9B", "broadcast", layout) + " Qwen3.5-9B No Comm "
              + _row(t, "Qwen3.5-9B", "isolated", layout))
    no_hfr = [("parallel", ["SR", "CR", "AUC", "CAR"]), ("sequential", ["SR", "CR", "AUC"])]
    _in_paper(paper_lines, "Qwen3-8B-VL No Comm " + _row(t, "Qwen3-8B-VL", "isolated", no_hfr) + " NA")
    assert len(t.rows) == 8 * 8 - 1


def test_table12_against_paper(published, paper_lines):
    t = published["table12"]
    par = [("parallel", ["SR", "CR", "AUC", "DOL"])]
    _in_paper(paper_lines, "Discuss " + _row(t, "Qwen3-32B-VL", "discuss", par))
    gpt = [("parallel", ["SR", "CR", "AUC", "DOL"])]
    row = _row(t, "GPT-5.4", "leader", gpt)
    tok = t.rows[(t.rows.model == "GPT-5.4") & (t.rows.protocol == "leader") & (t.rows.structure == "parallel")
                 & (t.rows.metric == "TokensPerStep")]["value"].iloc[0]
    _in_paper(paper_lines, f"Leader {row} {tok:.1f}")
    # Gemma4-31B: CAR then sequential SR/CR/AUC for the four modes, as one printed line.
    car_seq = " ".join(_row(t, "Gemma4-31B", p, [("parallel", ["CAR"]), ("sequential", ["SR", "CR", "AUC"])])
                       for p in ("broadcast", "discuss", "leader", "isolated"))
    _in_paper(paper_lines, car_seq)
    # Qwen3-32B-VL sequential HFR for the four modes.
    _in_paper(paper_lines, " ".join(_row(t, "Qwen3-32B-VL", p, [("sequential", ["HFR"])])
                                    for p in ("broadcast", "discuss", "leader", "isolated")))


def test_table13_against_paper(published, paper_lines):
    t = published["table13"]

    def cells(model, prior):
        return t.rows[(t.rows.model == model) & (t.rows.prior == prior)].set_index("metric")["value"]

    for model in ("GPT-5-mini", "Gemma4-31B", "Qwen3-32B-VL"):
        full, noapp = cells(model, "full"), cells(model, "no_appearance")
        _in_paper(paper_lines, f"{model} " + _printed([full.SR, full.CR, full.AUC, noapp.SR, noapp.CR]))
    rest = [v for m in ("GPT-5-mini", "Gemma4-31B", "Qwen3-32B-VL") for p in ("no_location", "none")
            for v in cells(m, p)[["SR", "CR", "AUC"]]]
    _in_paper(paper_lines, _printed(rest))
    _in_paper(paper_lines, _printed([cells(m, "no_appearance").AUC for m in ("GPT-5-mini", "Gemma4-31B", "Qwen3-32B-VL")]))


def test_table20_against_paper(published, paper_lines):
    t = published["table20"].rows

    def v(wg, group, metric):
        return t[(t.wrong_grabs.astype(str) == wg) & (t.group == group) & (t.metric == metric)]["value"].iloc[0]

    for wg in ("1", "2", "3", "4+"):
        _in_paper(paper_lines, f"{int(v(wg, 'correction', 'cases'))} {v(wg, 'correction', 'SR'):.1f} "
                               f"{v(wg, 'correction', 'CR'):.1f}")
        _in_paper(paper_lines, f"{int(v(wg, 'no_correction', 'cases'))} {v(wg, 'no_correction', 'SR'):.1f} "
                               f"{v(wg, 'no_correction', 'CR'):.1f}")
    _in_paper(paper_lines, "−6.2/ − 1.5")
    assert (v("2", "delta", "SR"), v("2", "delta", "CR")) == (-6.2, -1.5)
    assert (v("adjusted", "delta", "SR"), v("adjusted", "delta", "CR")) == (2.4, 3.5)
    _in_paper(paper_lines, "∆SR/CR +2.4/ + 3.5")
