"""Notebook 05's sentences for people (issue 24): each MASTraceBench finding takes its wording from
its interval or its documented unit threshold (as in the paper / not shown / too few units to tell),
quotes only cells of its tables, names no backend, and keeps every sentence under 300 characters;
the displayed tables fit 12 columns."""

from __future__ import annotations

import pandas as pd
import pytest
from test_findings import check_consistent
from test_notebook_reading import sentences

from collablab.analysis.findings import MAX_SENTENCE
from collablab.analysis.present import MAX_COLUMNS
from collablab.studies.mastracebench import findings as F

B = "heuristic"


def _t(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{**r, "backend": B} for r in rows])


def _t2(cg: float, low: float, high: float, n: int = 90, method: str = "Int. Debate", task: str = "mapf") -> pd.DataFrame:
    return _t([{"method": "Single-Agent", "task": task, "TS": 50.0, "CG": float("nan"), "n": n,
                "CG_low": float("nan"), "CG_high": float("nan")},
               {"method": method, "task": task, "TS": 50.0 + cg, "CG": cg, "n": n, "CG_low": low, "CG_high": high},
               {"method": "Consistency", "task": task, "TS": 50.0, "CG": 0.0, "n": n, "CG_low": -2.0, "CG_high": 2.0}])


def _gab(method: str = "Int. Debate", task: str = "mapf", improve: float = 10.0, regress: float = 5.0) -> pd.DataFrame:
    return _t([{"method": method, "task": task, "Improve": improve, "Regress": regress, "OptKeep": 70.0,
                "SubKeep": 100.0 - 70.0 - improve - regress, "n": 90}])


def _ok(f: F.Finding, tables: dict[str, pd.DataFrame], shown: bool | None, *phrases: str) -> None:
    check_consistent(f, tables)
    assert f.shown is shown, f.text
    assert not f.text.startswith("**"), f.text
    assert all(len(s) <= MAX_SENTENCE for s in sentences(f.text)), f.text
    for p in phrases:
        assert p in f.text, (p, f.text)


@pytest.mark.parametrize("low,high,n,shown,phrase", [
    (3.0, 13.0, 90, True, "gains most clearly over Single-Agent"),
    (-2.0, 13.0, 90, None, "too few units to tell"),
    (3.0, 13.0, 10, None, "too few units to tell"),  # a game's cell: under MIN_UNITS
])
def test_gain_through_interaction_follows_the_interval(low, high, n, shown, phrase):
    t2, gab = _t2(8.2, low, high, n), _gab()
    f = F.gain_through_interaction(t2, gab)
    if n < F.MIN_UNITS:
        assert f.shown is None and "too few units to tell" in f.text and not f.quotes, f.text
        return
    _ok(f, {"table2": t2, "gab": gab}, shown, phrase, f"+8.2 [{low:.1f}, {high:.1f}]")


def test_loss_through_regress_wordings():
    t2, gab = _t2(-8.0, -14.0, -2.0, method="MAPR"), _gab("MAPR", improve=5.0, regress=30.0)
    _ok(F.loss_through_regress(t2, gab), {"table2": t2, "gab": gab}, True, "MAPR loses to Single-Agent on MAPF",
        "GAB Regress")
    t2 = _t2(-8.0, -14.0, 2.0, method="MAPR")
    _ok(F.loss_through_regress(t2, gab), {"table2": t2, "gab": gab}, None, "too few units to tell")
    t2 = _t2(8.0, 2.0, 14.0, method="MAPR")
    _ok(F.loss_through_regress(t2, gab), {"table2": t2, "gab": gab}, False, "does not lose through regress")


def test_gains_over_single_counts_cells_with_intervals_and_enough_units():
    t2 = pd.concat([_t2(8.0, 3.0, 13.0), _t2(1.0, -3.0, 5.0, method="MAV", task="evidence_chain")])
    _ok(F.gains_over_single(t2), {"table2": t2}, True, "interactive methods in 1 of 1", "other methods in 0 of 3")
    small = _t2(8.0, 3.0, 13.0, n=6)
    _ok(F.gains_over_single(small), {"table2": small}, None, "too few units to tell")


def test_point_comparisons_leave_out_tasks_with_few_units():
    rows = [{"method": m, "task": k, "TS": 50.0, "CG": cg, "n": n, "CG_low": 0.0, "CG_high": 1.0}
            for k, n, a, b in (("mapf", 90, 5.0, 3.0), ("gomoku", 6, 1.0, 9.0)) for m, cg in
            (("CLEARS", a), ("CLEARS w/o CCE", b))]
    t2 = _t(rows)
    _ok(F.cce_helps(t2), {"table2": t2}, True, "MAPF +5.0 vs +3.0", "Gomoku: too few units to tell")
    _ok(F.clears_top_cg(t2), {"table2": t2}, True, "CLEARS has the highest CG on 1 of 1 tasks", "Gomoku")
    games = t2[t2["task"] == "gomoku"]
    _ok(F.cce_helps(games), {"table2": games}, None, "too few units to tell")


def test_settings_finding_names_at_most_three_exceptions():
    t4 = _t([{"setting": f"S{i}", "method": "MAPR", "task": "evidence_chain", "GI": 5.0, "GR": 1.0 if i < 5 else 9.0,
              "WI": 50.0, "SR": 5.0} for i in range(7)])
    f = F.regress_across_settings(t4)
    _ok(f, {"table4": t4}, False, "in 2 of 7 cells", "and 2 more")
    assert f.text.count(" vs ") == 3


def test_al_follows_agreement_reads_the_correlation():
    al = _t([{"method": f"m{i}", "task": "mapf", "AL": 20.0 - 2 * i} for i in range(8)])
    fpa = _t([{"method": f"m{i}", "task": "mapf", "OV": 90.0, "FPA": 10.0 * i} for i in range(8)])
    t = F.al_fpa_correlation(al, fpa)
    _ok(F.al_follows_agreement(t), {"al_fpa": t}, True, "p < .001", "over 8 method-task cells")


def test_the_smoke_tables_fit_a_screen(tmp_path, monkeypatch):
    """Every table notebook 05 displays (its styles) is at most 12 columns wide, with numbers of at
    most three decimals, and written in full to the run folder; at smoke size every CG cell is too
    few units to tell."""
    from conftest import notebook_defaults
    from test_mastracebench_notebook import NB

    from collablab.cli import parameter_set
    from collablab.studies.mastracebench import experiments as E, report as RP

    monkeypatch.setenv("COLLABLAB_OUTPUTS", str(tmp_path))
    P = {**notebook_defaults(NB), **parameter_set(NB, "smoke", NB.parents[1]), "workers": 1}
    episodes, steps, run_dir = E.run_notebook(P)
    R = RP.read_notebook(episodes, steps, P, run_dir)
    assert set(R.styles) <= set(R.tables)
    for name in R.styles:
        d = R.table(name)
        assert d.frame.shape[1] <= MAX_COLUMNS, name
        assert not d.frame.apply(lambda c: c.astype(str).str.contains(r"\d\.\d{4,}")).any().any(), name
        assert d.csv_path is not None and d.csv_path.exists(), name
    for f in [*R.findings(), *R.headlines]:
        check_consistent(f, R.tables)
        assert all(len(s) <= MAX_SENTENCE for s in sentences(f.text)), f.text
    assert all(f.shown is None for f in R.findings("table2")[:3]), "every cell is too few units to tell"
    assert 3 <= len(R.headlines) <= 5 and "too few units to tell" in R.headline_markdown()
