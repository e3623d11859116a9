"""DynaHMRC statistics: bootstrap CIs (figure error bars), the paired comparison
(tab:statistical_comparison) and the difficulty-weight sensitivity (tab:weight_sensitivity)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from collablab.studies.dynahmrc.stats import (
    bootstrap_ci,
    paired_comparison,
    stage_cost_table,
    summary_table,
    weight_sensitivity,
)

#: A skewed sample (mean ~0.94), so percentile, basic and BCa intervals differ by ~0.02-0.03.
SAMPLE = np.random.default_rng(42).exponential(1.0, 30)

#: Absolute tolerance of our CI against scipy's with an independent stream: with 10,000
#: resamples the Monte Carlo error of a 2.5% / 97.5% quantile of this mean is ~0.003.
TOL = 0.01


def test_bootstrap_ci_matches_scipy_percentile():
    ref = sps.bootstrap((SAMPLE,), np.mean, n_resamples=10_000, method="percentile", confidence_level=0.95,
                        rng=np.random.default_rng(123)).confidence_interval
    low, high = bootstrap_ci(SAMPLE)
    assert low == pytest.approx(ref.low, abs=TOL)
    assert high == pytest.approx(ref.high, abs=TOL)
    assert low < SAMPLE.mean() < high


def test_bootstrap_ci_reproducible_and_level():
    assert bootstrap_ci(SAMPLE, seed=7) == bootstrap_ci(SAMPLE, seed=7)
    lo90, hi90 = bootstrap_ci(SAMPLE, level=0.90)
    lo95, hi95 = bootstrap_ci(SAMPLE)
    assert lo95 < lo90 < hi90 < hi95


def test_bootstrap_ci_degenerate():
    assert bootstrap_ci([3.0, 3.0, 3.0]) == (3.0, 3.0)
    assert all(math.isnan(v) for v in bootstrap_ci([1.0]))
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci(SAMPLE, level=95)


def episodes():
    rng = np.random.default_rng(0)
    rows = []
    for method, shift in (("O", 0.0), ("Q", -2.0)):
        for task in range(8):
            for run in range(2):
                rows.append(dict(method=method, task=f"t{task}", run=run, success=bool(rng.random() < 0.6),
                                 ps=float(rng.uniform(0.4, 1.0)), ts=float(20 + task + shift + rng.normal()),
                                 as_per_robot=float(10 + shift + rng.normal()), cc=2.0))
    return pd.DataFrame(rows)


def test_summary_table_means_and_cis():
    df = episodes()
    tab = summary_table(df, "method", n_resamples=2_000)
    assert tab["method"].tolist() == ["O", "Q"] and tab["n"].tolist() == [16, 16]
    for _, r in tab.iterrows():
        g = df[df["method"] == r["method"]]
        assert r["ts_mean"] == pytest.approx(g["ts"].mean())
        assert r["success_mean"] == pytest.approx(g["success"].mean())
        assert (r["ts_low"], r["ts_high"]) == bootstrap_ci(g["ts"], n_resamples=2_000)
        assert r["cc_low"] == r["cc_high"] == 2.0
    with pytest.raises(ValueError, match="'nope'"):
        summary_table(df, "method", metrics=("ps", "nope"))


def test_paired_comparison_b_minus_a_and_scipy_p():
    df = episodes()
    tab = paired_comparison(df, method_col="method", a="O", b="Q", pair_on="task", n_resamples=2_000).set_index("metric")
    per_task = df.groupby(["method", "task"])[["ts", "ps", "success"]].mean()
    for m in ("ts", "ps"):
        o, q = per_task.loc["O"][m], per_task.loc["Q"][m]
        r = tab.loc[m]
        assert r["difference"] == "Q - O" and r["n_pairs"] == 8
        assert r["mean_diff"] == pytest.approx((q - o).mean())
        assert r["mean_a"] == pytest.approx(o.mean()) and r["mean_b"] == pytest.approx(q.mean())
        assert r["p_value"] == pytest.approx(sps.ttest_rel(q, o).pvalue, rel=1e-12)
        assert r["ci_low"] < r["mean_diff"] < r["ci_high"]
        assert (r["ci_low"], r["ci_high"]) == bootstrap_ci((q - o).to_numpy(), n_resamples=2_000)
    assert tab.loc["ts", "mean_diff"] < 0  # Q is faster by construction
    assert tab.loc["cc", "p_value"] == 1.0 and tab.loc["cc", "mean_diff"] == 0.0


def test_paired_comparison_unmatched_and_bad_input():
    df = episodes()
    df = df[~((df["method"] == "Q") & (df["task"] == "t0"))]
    tab = paired_comparison(df, method_col="method", a="O", b="Q", pair_on=["task"], metrics=("ts",))
    assert tab.loc[0, "n_pairs"] == 7 and tab.loc[0, "n_unmatched"] == 1
    with pytest.raises(ValueError, match="'task_id'"):
        paired_comparison(df, method_col="method", a="O", b="Q", pair_on="task_id")
    with pytest.raises(ValueError, match="method.*'X'"):
        paired_comparison(df, method_col="method", a="O", b="X", pair_on="task")


# Synthetic matched subset: at the paper's weights D = 0, .13, .4, .54, 1 (levels easy, easy,
# medium, medium, hard); TS ranks 1 3 2 4 5 (one adjacent swap: rho = 1 - 6*2/120 = 0.9); PS
# falls strictly (rho = -1); H_emp = z(1-PS) + z(TS) = -2.29, -1.20, -0.94, 1.25, 3.17 rises.
TASKS = pd.DataFrame({
    "L": [0.0, 0.2, 0.5, 0.6, 1.0], "N": [0.0, 0.25, 0.0, 0.5, 1.0], "Y": [0.0, 0.0, 0.5, 0.5, 1.0],
    "ps": [1.0, 0.9, 0.8, 0.6, 0.5], "ts": [10.0, 14.0, 12.0, 20.0, 30.0],
})


def test_weight_sensitivity_hand_computed():
    tab = weight_sensitivity(TASKS).set_index("beta")
    assert tab.index.tolist() == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert tab["alpha"].tolist() == pytest.approx([0.5, 0.4, 0.3, 0.2, 0.1, 0.0])
    assert (tab["alpha"] == tab["gamma"]).all()
    base = tab.loc[0.2]
    assert base["label_changes"] == "baseline"
    assert base["rho_D_TS"] == pytest.approx(0.9)
    assert base["rho_D_PS"] == pytest.approx(-1.0)
    assert base["rho_D_H"] == pytest.approx(1.0)
    assert base["pairwise_acc"] == pytest.approx(1.0)
    # beta = 0: D = (L + Y)/2 = 0, .1, .5, .55, 1: same order and levels
    assert tab.loc[0.0, "rho_D_TS"] == pytest.approx(0.9) and tab.loc[0.0, "label_changes"] == "0/5"
    # beta = 0.6: D = 0, .19, .2, .52, 1: task 3 drops to easy
    assert tab.loc[0.6, "label_changes"] == "1/5"
    # beta = 1: D = N = 0, .25, 0, .5, 1, ranks 1.5 3 1.5 4 5 (average ranks for the tie):
    # rho(D, TS) = 9.5/sqrt(9.5*10), rho(D, H) = 8/sqrt(9.5*10) = -rho(D, PS);
    # pairs: (1,3) tied in D counts 1/2, (2,3) misordered, 8 right -> 8.5/10
    one = tab.loc[1.0]
    assert one["rho_D_TS"] == pytest.approx(9.5 / math.sqrt(95))
    assert one["rho_D_H"] == pytest.approx(8 / math.sqrt(95))
    assert one["rho_D_PS"] == pytest.approx(-8 / math.sqrt(95))
    assert one["pairwise_acc"] == pytest.approx(0.85)
    assert one["label_changes"] == "1/5"


def test_weight_sensitivity_baseline_row_without_scanning_it():
    tab = weight_sensitivity(TASKS, betas=(0.0, 1.0))
    assert "baseline" not in tab["label_changes"].tolist()
    assert tab["label_changes"].tolist() == ["0/5", "1/5"]


def test_weight_sensitivity_bad_input():
    with pytest.raises(ValueError, match="'ts'"):
        weight_sensitivity(TASKS.drop(columns="ts"))
    with pytest.raises(ValueError, match="betas"):
        weight_sensitivity(TASKS, betas=(1.5,))
    with pytest.raises(ValueError, match="L"):
        weight_sensitivity(TASKS.assign(L=2.0))


def test_stage_cost_table_tokens_per_call():
    stages = ("SD", "TALB", "LE", "HMRC", "GD", "LP")
    base = {f"{k}_{s}": 0 for s in stages for k in ("calls", "tokens")}
    rows = [dict(base, method="O", calls_HMRC=2, tokens_HMRC=2000, calls_total=2, tokens_total=2000),
            dict(base, method="O", calls_HMRC=4, tokens_HMRC=2000, calls_total=4, tokens_total=2000)]
    tab = stage_cost_table(pd.DataFrame(rows), "method")
    r = tab.iloc[0]
    assert r["calls_HMRC"] == 3.0
    assert r["tokens_per_call_HMRC"] == pytest.approx((1000 + 500) / 2)
    assert math.isnan(r["tokens_per_call_SD"])
    assert r["tokens_total"] == 2000.0
