"""The shared table formatting layer (analysis/present.py): what a reader sees in each cell."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from collablab.analysis.findings import Report, verdict
from collablab.analysis.present import MAX_COLUMNS, TableStyle, fmt_interval, fmt_number, fmt_p, fmt_rate, present


@pytest.mark.parametrize("value,text", [(80.0, "80"), (80.000001, "80.0"), (12.3456, "12.3"), (1.23456, "1.23"),
                                        (0.123456, "0.12"), (0.0123456, "0.012"), (1234.5, "1,234"), (-0.0001, "0"), (3, "3"),
                                        (float("nan"), "–"), (True, "yes"), ("team", "team")])
def test_numbers_keep_at_most_three_decimals(value: object, text: str) -> None:
    assert fmt_number(value) == text


def test_p_values_rates_and_intervals() -> None:
    assert fmt_p(0.0004) == "<0.001" and fmt_p(0.0123) == "0.012" and fmt_p(float("nan")) == "–"
    assert fmt_rate(0.625, 1) == "62.5%" and fmt_rate(62.5, 1, scale=1) == "62.5%"
    assert fmt_interval(0.62, 0.51, 0.72) == "0.62 [0.51, 0.72]"
    assert fmt_interval(0.625, 0.5, 0.75, 1, scale=100) == "62.5% [50.0, 75.0]"
    assert fmt_interval(0.62, float("nan"), 0.7) == "0.62"


def _table() -> pd.DataFrame:
    return pd.DataFrame({"method": ["a", "b", "c"], "task": ["x"] * 3, "SR": [0.5, 0.625, 1.0],
                         "SR_low": [0.3, 0.4, 0.8], "SR_high": [0.7, 0.8, 1.0], "steps": [80.0, 12.3456, 7.0],
                         "p_holm": [0.0001, 0.04, 0.5], "backend": ["heuristic"] * 3})


def test_present_merges_intervals_drops_constants_and_writes_the_csv(tmp_path: Path) -> None:
    run = tmp_path / "outputs" / "runs" / "r1"
    d = present(_table(), "results", TableStyle(rates=["SR"], rename={"steps": "steps taken"}), run)
    assert list(d.frame.columns) == ["method", "SR", "steps taken", "p_holm"]
    assert d.frame["SR"].tolist() == ["50.0% [30.0, 70.0]", "62.5% [40.0, 80.0]", "100.0% [80.0, 100.0]"]
    assert d.frame["steps taken"].tolist() == ["80.0", "12.3", "7.0"]
    assert d.frame["p_holm"].tolist() == ["<0.001", "0.040", "0.500"]
    assert "task x" in d.caption and "backend heuristic" in d.caption
    assert "full table: outputs/runs/r1/tables/results.csv" in d.caption
    back = pd.read_csv(run / "tables" / "results.csv")
    pd.testing.assert_frame_equal(back, _table())
    html = d.to_html()
    assert "<table" in html and "62.5% [40.0, 80.0]" in html and "white-space: nowrap" in html
    assert "backend" not in d.frame.columns and ">backend<" not in html


def test_long_and_wide_tables_are_cut_to_what_matters() -> None:
    t = pd.DataFrame({"name": [f"r{i}" for i in range(40)], "diff": np.linspace(-2, 1.9, 40),
                      **{f"m{j}": np.arange(40) * j for j in range(1, 15)}})
    d = present(t, style=TableStyle(order="|diff|", max_rows=5))
    assert d.frame.shape == (5, MAX_COLUMNS)
    assert d.frame["name"].iloc[0] == "r0" and set(d.frame["name"]) == {"r0", "r1", "r2", "r38", "r39"}
    assert "showing 5 of 40 rows (largest |diff| first)" in d.caption and "4 more columns in the CSV" in d.caption
    asc = present(t, style=TableStyle(order="-diff", max_rows=2))
    assert asc.frame["name"].tolist() == ["r39", "r38"]


def test_one_row_tables_keep_their_columns_but_not_the_backend() -> None:
    d = present(_table().head(1))
    assert "task" in d.frame.columns and "backend" not in d.frame.columns


def test_report_table_uses_its_style_and_run_dir(tmp_path: Path) -> None:
    R = Report(backend="heuristic", n_episodes=3, tables={"t": _table()}, styles={"t": TableStyle(rates=["SR"])},
               run_dir=tmp_path)
    assert R.table("t").frame["SR"].iloc[0] == "50.0% [30.0, 70.0]"
    assert (tmp_path / "tables" / "t.csv").exists()


@pytest.mark.parametrize("low,high,sign,paper,n,expected", [
    (0.1, 0.3, 1, None, None, True), (0.1, 0.3, -1, None, None, False), (-0.3, -0.1, -1, None, None, True),
    (-0.1, 0.2, 1, 0.15, None, None), (-0.1, 0.05, 1, 0.3, None, False), (-0.1, 0.2, 1, None, None, None),
    (0.1, 0.3, 1, None, 6, None), (float("nan"), 0.3, 1, None, None, None)])
def test_verdict_rule(low: float, high: float, sign: int, paper: float | None, n: int | None,
                      expected: bool | None) -> None:
    assert verdict(low, high, sign, paper, n) is expected


def test_a_result_shared_by_every_row_stays_a_column() -> None:
    t = pd.DataFrame({"team": ["a", "b"], "n_agents": [2, 2], "SR": [0.0, 0.0], "kind": ["x", "x"]})
    d = present(t, style=TableStyle(labels=["team", "n_agents"]))
    assert list(d.frame.columns) == ["team", "SR"] and "n_agents 2" in d.caption and "kind x" in d.caption


def test_a_long_table_may_be_ordered_by_a_label_shared_by_every_row() -> None:
    t = pd.DataFrame({"kind": ["x"] * 20, "v": range(20)})
    assert present(t, style=TableStyle(order="-kind", max_rows=3)).frame.shape == (3, 1)


def test_two_level_columns_are_joined() -> None:
    t = pd.DataFrame([[1, 0.5], [2, 0.25]], columns=pd.MultiIndex.from_tuples([("n", ""), ("SR", "mean")]))
    assert list(present(t).frame.columns) == ["n", "SR mean"]
