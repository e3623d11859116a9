"""Tests for collablab.analysis.significance (DynaHMRC appendix paired comparisons)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from collablab.analysis import (
    bootstrap_ci,
    compare,
    gee_logistic,
    hodges_lehmann,
    holm_adjust,
    mcnemar_test,
    mean_difference,
    paired_bootstrap_ci,
    paired_table,
    sign_flip_test,
    wilcoxon_test,
)

COLUMNS = ["contrast", "outcome", "estimand", "estimate", "ci_low", "ci_high", "test", "p_value",
           "p_adjusted", "n", "note"]


# --------------------------------------------------------------------------- #
# bootstrap
# --------------------------------------------------------------------------- #
def test_bootstrap_reproducible_from_seed() -> None:
    x = np.random.default_rng(0).normal(size=50)
    a = bootstrap_ci(x, n_resamples=2000, seed=11)
    b = bootstrap_ci(x, n_resamples=2000, seed=11)
    c = bootstrap_ci(x, n_resamples=2000, seed=12)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    assert (a.ci_low, a.ci_high) != (c.ci_low, c.ci_high)
    assert a.estimate == pytest.approx(x.mean())


@pytest.mark.parametrize("method,scipy_method", [("percentile", "percentile"), ("bca", "BCa")])
def test_bootstrap_matches_scipy(method: str, scipy_method: str) -> None:
    x = np.random.default_rng(1).exponential(size=60)
    ours = bootstrap_ci(x, method=method, n_resamples=3000, seed=5)
    ref = stats.bootstrap((x,), np.mean, method=scipy_method, n_resamples=3000, rng=np.random.default_rng(5))
    # identical resamples -> identical interval (tolerance only for float summation order)
    assert (ours.ci_low, ours.ci_high) == pytest.approx(
        (ref.confidence_interval.low, ref.confidence_interval.high), rel=1e-9)


def test_bootstrap_default_is_10000_resamples_and_two_sample() -> None:
    rng = np.random.default_rng(2)
    x, y = rng.normal(1, 1, 30), rng.normal(0, 1, 40)
    res = bootstrap_ci(x, y, statistic=mean_difference)
    assert res.n_resamples == 10_000 and res.n == 70
    assert res.estimate == pytest.approx(x.mean() - y.mean())
    # roughly the Welch interval
    ci = stats.ttest_ind(x, y, equal_var=False).confidence_interval()
    assert res.ci_low == pytest.approx(ci.low, abs=0.15) and res.ci_high == pytest.approx(ci.high, abs=0.15)


def test_percentile_ci_coverage_simulation() -> None:
    """200 normal data sets (n=40, mean 3): the 95% percentile CI covers 3 at roughly the nominal rate.

    Tolerance: coverage within [0.90, 0.99] (binomial SD of the estimate is ~1.5 points;
    the percentile interval is known to under-cover slightly at n=40).
    """
    rng = np.random.default_rng(2024)
    hits = 0
    for _ in range(200):
        x = rng.normal(3.0, 2.0, 40)
        ci = bootstrap_ci(x, n_resamples=1000, seed=rng)
        hits += ci.ci_low <= 3.0 <= ci.ci_high
    assert 0.90 <= hits / 200 <= 0.99


def test_bootstrap_degenerate_inputs() -> None:
    same = bootstrap_ci(np.ones(8), method="bca", n_resamples=200)
    assert (same.ci_low, same.ci_high) == (1.0, 1.0)
    assert "BCa undefined" in same.note and "degenerate" in same.note
    one = bootstrap_ci([2.0], n_resamples=200)
    assert one.estimate == 2.0 and math.isnan(one.ci_low) and "at least 2" in one.note
    empty = bootstrap_ci([], n_resamples=200)
    assert math.isnan(empty.estimate) and "empty" in empty.note


def test_paired_bootstrap_resamples_pairs() -> None:
    rng = np.random.default_rng(3)
    base = rng.normal(0, 5, 25)
    a, b = base + 1.0 + rng.normal(0, 0.1, 25), base
    res = paired_bootstrap_ci(a, b, n_resamples=2000, seed=0)
    direct = bootstrap_ci(a - b, n_resamples=2000, seed=0)
    assert (res.ci_low, res.ci_high) == (direct.ci_low, direct.ci_high)
    assert res.ci_high - res.ci_low < 0.2  # pairing removes the large between-task variance


# --------------------------------------------------------------------------- #
# paired tests vs scipy / statsmodels
# --------------------------------------------------------------------------- #
def test_sign_flip_exact_matches_scipy_permutation_test() -> None:
    d = np.array([0.3, -0.1, 0.5, 0.2, 0.0, 0.7, -0.4, 0.25, 0.1, 0.6])
    for alt in ("two-sided", "greater", "less"):
        ours = sign_flip_test(d, alternative=alt)
        ref = stats.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=np.inf,
                                     alternative=alt)
        assert ours.p_value == pytest.approx(ref.pvalue, abs=1e-12), alt
        assert "exact" in ours.method
    assert sign_flip_test(d).statistic == pytest.approx(d.mean())


def test_sign_flip_monte_carlo_close_to_scipy_and_seeded() -> None:
    d = np.random.default_rng(4).normal(0.3, 1.0, 30)
    ours = sign_flip_test(d, n_resamples=20_000, seed=1)
    ref = stats.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=20_000,
                                 rng=np.random.default_rng(9))
    assert "Monte Carlo" in ours.method
    assert ours.p_value == pytest.approx(ref.pvalue, abs=0.01)  # MC error ~0.003 each
    assert sign_flip_test(d, n_resamples=2000, seed=3).p_value == sign_flip_test(d, n_resamples=2000, seed=3).p_value


def test_sign_flip_no_pairs() -> None:
    res = sign_flip_test([])
    assert math.isnan(res.p_value) and "no pairs" in res.note


def test_wilcoxon_matches_scipy() -> None:
    d = np.random.default_rng(5).normal(0.4, 1.0, 20)
    ours = wilcoxon_test(d)
    ref = stats.wilcoxon(d)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    zeros = wilcoxon_test(np.zeros(6))
    assert math.isnan(zeros.p_value) and "all paired differences are zero" in zeros.note


def test_hodges_lehmann() -> None:
    d = np.array([1.0, 2.0, 10.0])
    # Walsh averages: 1, 1.5, 5.5, 2, 6, 10 -> median 3.75
    assert hodges_lehmann(d) == pytest.approx(3.75)


def test_mcnemar_matches_statsmodels_exact_and_chi2() -> None:
    # 10 discordant pairs -> exact
    a = np.array([1] * 20 + [1] * 8 + [0] * 2 + [0] * 5)
    b = np.array([1] * 20 + [0] * 8 + [1] * 2 + [0] * 5)
    ours = mcnemar_test(a, b)
    ref = mcnemar(np.array([[20, 8], [2, 5]]), exact=True)
    assert "exact" in ours.method
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    # 30 discordant pairs -> chi-square with continuity correction
    a2 = np.array([1] * 20 + [0] * 10 + [1] * 10)
    b2 = np.array([0] * 20 + [1] * 10 + [1] * 10)
    ours2 = mcnemar_test(a2, b2)
    ref2 = mcnemar(np.array([[10, 20], [10, 0]]), exact=False, correction=True)
    assert "chi-square" in ours2.method
    assert ours2.statistic == pytest.approx(ref2.statistic, rel=1e-12)
    assert ours2.p_value == pytest.approx(ref2.pvalue, rel=1e-12)


def test_mcnemar_all_successes_is_nan_with_reason() -> None:
    res = mcnemar_test(np.ones(12), np.ones(12))
    assert math.isnan(res.p_value) and "all successes" in res.note
    nonbin = mcnemar_test([0.5, 1.0], [1.0, 0.0])
    assert math.isnan(nonbin.p_value) and "not binary" in nonbin.note


def _episodes(seed: int = 0, n_tasks: int = 30, reps: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(n_tasks):
        difficulty = rng.normal(0, 1.0)
        for cond, eff in (("base", 0.0), ("ours", 0.8), ("alt", 0.3)):
            for s in range(reps):
                p = 1 / (1 + np.exp(-(0.3 + eff - difficulty)))
                succ = int(rng.random() < p)
                rows.append(dict(task_id=f"t{t}", seed=s, cond=cond, success=succ,
                                 steps=20 - 3 * eff + difficulty * 2 + rng.normal(0, 1)))
    return pd.DataFrame(rows)


def test_gee_matches_statsmodels_directly() -> None:
    df = _episodes(6, reps=4)
    df = df.sample(frac=0.7, random_state=0)  # unbalanced clusters: exchangeable != independence fit
    sub = df[df["cond"].isin(["ours", "base"])].assign(treat=lambda d: (d["cond"] == "ours").astype(float))
    ours = gee_logistic(sub, "treat", "success", "task_id")
    fit = sm.GEE(sub["success"].astype(float), sm.add_constant(sub[["treat"]]), groups=sub["task_id"],
                 family=sm.families.Binomial(), cov_struct=sm.cov_struct.Exchangeable()).fit()
    assert ours.coef == pytest.approx(fit.params["treat"], abs=1e-8)
    assert ours.se == pytest.approx(fit.bse["treat"], abs=1e-8)
    assert ours.p_value == pytest.approx(fit.pvalues["treat"], rel=1e-6)
    assert ours.odds_ratio == pytest.approx(math.exp(fit.params["treat"]), rel=1e-8)
    lo, hi = fit.conf_int().loc["treat"]
    assert (ours.ci_low, ours.ci_high) == pytest.approx((math.exp(lo), math.exp(hi)), rel=1e-8)
    assert ours.n_clusters == 30 and ours.n_episodes == len(sub)


def test_gee_single_task_and_all_successes_are_nan_with_reason() -> None:
    df = _episodes(7).assign(treat=lambda d: (d["cond"] == "ours").astype(float))
    one = gee_logistic(df[df["task_id"] == "t0"], "treat", "success", "task_id")
    assert math.isnan(one.coef) and math.isnan(one.p_value) and "only 1 cluster" in one.note
    allok = gee_logistic(df.assign(success=1), "treat", "success", "task_id")
    assert math.isnan(allok.odds_ratio) and "all successes" in allok.note
    sep = df.assign(success=np.where(df["treat"] == 1, 1, df["success"]))
    sep_res = gee_logistic(sep, "treat", "success", "task_id")
    assert math.isnan(sep_res.odds_ratio) and "separation" in sep_res.note
    with pytest.raises(ValueError, match=r"'cluster'.*available columns"):
        gee_logistic(df, "treat", "success", "cluster")


def test_holm_matches_multipletests_and_keeps_nan() -> None:
    p = np.array([0.01, 0.04, np.nan, 0.03, 0.2])
    adj = holm_adjust(p)
    ref = multipletests(p[~np.isnan(p)], method="holm")[1]
    assert np.isnan(adj[2])
    assert adj[~np.isnan(p)] == pytest.approx(ref, abs=1e-15)


# --------------------------------------------------------------------------- #
# compare()
# --------------------------------------------------------------------------- #
def test_compare_tidy_table_matches_direct_calls() -> None:
    df = _episodes(8)
    out = compare(df, "cond", ["success", "steps"], pair_col="task_id",
                  contrasts=[("ours", "base"), ("alt", "base")], n_resamples=1000, n_permutations=2000)
    assert list(out.columns) == COLUMNS
    assert len(out) == 2 * 2 * 4
    row = out[(out["contrast"] == "ours vs base") & (out["outcome"] == "steps")].set_index("test")
    pairs = paired_table(df, "cond", "steps", "ours", "base", "task_id")
    assert row.loc["sign_flip", "n"] == 30
    assert row.loc["sign_flip", "estimate"] == pytest.approx(pairs["diff"].mean())
    assert row.loc["sign_flip", "ci_low"] < row.loc["sign_flip", "estimate"] < row.loc["sign_flip", "ci_high"]
    assert row.loc["wilcoxon", "p_value"] == pytest.approx(stats.wilcoxon(pairs["diff"]).pvalue, rel=1e-12)
    # steps is not binary: McNemar / GEE say so instead of failing
    assert math.isnan(row.loc["gee", "p_value"]) and "not binary" in row.loc["gee", "note"]
    assert math.isnan(row.loc["mcnemar", "p_value"]) and "not binary" in row.loc["mcnemar", "note"]
    # GEE row equals gee_logistic on the same subset
    g = out[(out["contrast"] == "ours vs base") & (out["outcome"] == "success") & (out["test"] == "gee")].iloc[0]
    sub = df[df["cond"].isin(["ours", "base"])].assign(t=lambda d: (d["cond"] == "ours").astype(float))
    direct = gee_logistic(sub, "t", "success", "task_id")
    assert g["estimate"] == pytest.approx(direct.odds_ratio, rel=1e-10)
    assert g["n"] == len(sub)
    # Holm within (outcome, test) families across the two contrasts
    fam = out[(out["outcome"] == "steps") & (out["test"] == "wilcoxon")]
    assert fam["p_adjusted"].to_numpy() == pytest.approx(multipletests(fam["p_value"], method="holm")[1])


def test_compare_mcnemar_with_episode_level_pairs() -> None:
    df = _episodes(9)
    out = compare(df, "cond", "success", pair_col=["task_id", "seed"], contrasts=[("ours", "base")],
                  tests=["mcnemar", "sign_flip"], cluster_col="task_id", n_resamples=500, n_permutations=1000)
    row = out.set_index("test").loc["mcnemar"]
    wide = df.pivot_table(index=["task_id", "seed"], columns="cond", values="success")
    a, b = wide["ours"], wide["base"]
    table = np.array([[((a == 1) & (b == 1)).sum(), ((a == 1) & (b == 0)).sum()],
                      [((a == 0) & (b == 1)).sum(), ((a == 0) & (b == 0)).sum()]])
    exact = table[0, 1] + table[1, 0] < 25
    assert row["p_value"] == pytest.approx(mcnemar(table, exact=exact).pvalue, rel=1e-12)
    assert row["estimate"] == pytest.approx(a.mean() - b.mean())
    assert row["n"] == 90


def test_compare_degenerate_inputs() -> None:
    df = _episodes(10).assign(success=1)
    out = compare(df, "cond", "success", contrasts=[("ours", "base")], n_resamples=200, n_permutations=500)
    rows = out.set_index("test")
    assert math.isnan(rows.loc["gee", "p_value"]) and "all successes" in rows.loc["gee", "note"]
    assert math.isnan(rows.loc["wilcoxon", "p_value"]) and "all paired differences are zero" in rows.loc["wilcoxon", "note"]
    assert rows.loc["sign_flip", "p_value"] == 1.0
    single = compare(_episodes(11).query("task_id == 't0'"), "cond", "success", contrasts=[("ours", "base")],
                     tests=["gee"])
    assert math.isnan(single["p_value"].iloc[0]) and "only 1 cluster" in single["note"].iloc[0]
    absent = compare(_episodes(12), "cond", "success", contrasts=[("ours", "nope")], tests=["sign_flip"])
    assert "not present" in absent["note"].iloc[0]


def test_compare_errors_name_the_problem() -> None:
    df = _episodes(13)
    with pytest.raises(ValueError, match=r"'sr'.*available columns.*'success'"):
        compare(df, "cond", "sr")
    with pytest.raises(ValueError, match=r"'task'.*available columns"):
        compare(df, "cond", "success", pair_col="task")
    with pytest.raises(ValueError, match="unknown test"):
        compare(df, "cond", "success", tests=["ttest"])


def test_compare_exact_sign_flip_on_few_tasks_is_reproducible() -> None:
    df = _episodes(14, n_tasks=12, reps=1)
    a = compare(df, "cond", "steps", contrasts=[("ours", "base")], tests=["sign_flip"], n_resamples=500, seed=1)
    b = compare(df, "cond", "steps", contrasts=[("ours", "base")], tests=["sign_flip"], n_resamples=500, seed=1)
    pd.testing.assert_frame_equal(a, b)
    d = paired_table(df, "cond", "steps", "ours", "base")["diff"].to_numpy()
    ref = stats.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=np.inf)
    assert a["p_value"].iloc[0] == pytest.approx(ref.pvalue, abs=1e-12)
    assert "exact" in a["note"].iloc[0]


def test_holm_equals_multipletests_on_random_families_with_ties(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    # multipletests' Holm branch ends in gc.collect(), which only frees memory: skipped here it leaves
    # the reference values as they are and the 200 families take milliseconds instead of 30 s
    monkeypatch.setattr(gc, "collect", lambda *args: 0)
    rng = np.random.default_rng(3)
    for _ in range(200):
        p = np.round(rng.uniform(0, 0.2, size=rng.integers(1, 12)), 2)  # rounding makes ties
        assert holm_adjust(p) == pytest.approx(multipletests(p, method="holm")[1], abs=1e-12)


def test_mean_ci_matches_scipy_t_interval() -> None:
    from scipy import stats as st

    from collablab.analysis.significance import mean_ci

    x = np.array([0.2, 0.9, 0.4, np.nan, 0.7, 0.55])
    v = x[~np.isnan(x)]
    lo, hi = st.t.interval(0.95, v.size - 1, loc=v.mean(), scale=st.sem(v))
    assert mean_ci(x) == pytest.approx((lo, hi), abs=1e-12)  # tolerance: float rounding only
    assert all(np.isnan(mean_ci([0.3])))
