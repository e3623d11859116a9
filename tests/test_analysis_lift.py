"""Tests for collablab.analysis.lift (MECoBench Table 22 lift, Table 2 behaviour effects)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from collablab.analysis import behaviour_effect_table, lift_table


def _small() -> pd.DataFrame:
    # 10 episodes, 4 successes.  dup: in 3 of 6 failures and 1 of 4 successes.
    return pd.DataFrame({
        "success": [1, 1, 1, 1, 0, 0, 0, 0, 0, 0],
        "dup":     [1, 0, 0, 0, 1, 1, 1, 0, 0, 0],
        "halluc":  [0, 0, 0, 0, 1, 0, 1, 0, 0, 0],   # failures only -> infinite lift
        "never":   [0] * 10,
        "always":  [1] * 10,
        "cr":      [1.0, 1.0, 1.0, 1.0, 0.5, 0.25, 0.75, 0.5, 0.0, 0.25],
        "task":    ["par"] * 5 + ["seq"] * 5,
    })


def test_lift_table_hand_computed() -> None:
    t = lift_table(_small(), ["dup"]).set_index("indicator").loc["dup"]
    assert t["n"] == 10 and t["n_with"] == 4
    assert t["freq"] == pytest.approx(0.4)
    assert t["rate_failed"] == pytest.approx(3 / 6)
    assert t["rate_success"] == pytest.approx(1 / 4)
    assert t["lift"] == pytest.approx(2.0)
    assert t["sr_with"] == pytest.approx(1 / 4)
    assert t["sr_without"] == pytest.approx(3 / 6)
    assert t["delta_sr"] == pytest.approx(-0.25)
    assert t["note"] == ""


def test_wilson_and_newcombe_intervals_match_statsmodels() -> None:
    t = lift_table(_small(), ["dup"], confidence_level=0.9).iloc[0]
    assert (t["rate_failed_ci_low"], t["rate_failed_ci_high"]) == pytest.approx(
        proportion_confint(3, 6, alpha=0.1, method="wilson"), abs=1e-12)
    assert (t["sr_with_ci_low"], t["sr_with_ci_high"]) == pytest.approx(
        proportion_confint(1, 4, alpha=0.1, method="wilson"), abs=1e-12)
    assert (t["delta_sr_ci_low"], t["delta_sr_ci_high"]) == pytest.approx(
        confint_proportions_2indep(1, 4, 3, 6, method="newcomb", alpha=0.1), abs=1e-12)


def test_infinite_lift_is_inf_with_note() -> None:
    t = lift_table(_small(), ["halluc"]).iloc[0]
    assert math.isinf(t["lift"]) and t["lift"] > 0
    assert "lift infinite" in t["note"]
    assert t["sr_with"] == 0.0 and t["rate_success"] == 0.0


def test_never_seen_indicator_gives_nan_lift_with_reason() -> None:
    t = lift_table(_small(), ["never"]).iloc[0]
    assert math.isnan(t["lift"]) and math.isnan(t["sr_with"]) and math.isnan(t["delta_sr"])
    assert t["freq"] == 0.0
    assert "never observed" in t["note"] and "0/0" in t["note"]


def test_indicator_in_every_episode() -> None:
    t = lift_table(_small(), ["always"]).iloc[0]
    assert t["lift"] == pytest.approx(1.0)
    assert math.isnan(t["sr_without"]) and math.isnan(t["delta_sr"])
    assert "every episode" in t["note"]


def test_no_successes_gives_nan_lift() -> None:
    df = _small().assign(success=0)
    t = lift_table(df, ["dup"]).iloc[0]
    assert math.isnan(t["lift"]) and "no successful episodes" in t["note"]


def test_percent_scales_rates_not_lift() -> None:
    a = lift_table(_small(), ["dup"]).iloc[0]
    b = lift_table(_small(), ["dup"], percent=True).iloc[0]
    assert b["freq"] == pytest.approx(40.0)
    assert b["delta_sr"] == pytest.approx(-25.0)
    assert b["delta_sr_ci_low"] == pytest.approx(100 * a["delta_sr_ci_low"])
    assert b["lift"] == pytest.approx(a["lift"])


def test_bootstrap_intervals_are_seeded() -> None:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"success": rng.random(200) < 0.6, "x": rng.random(200) < 0.3})
    a = lift_table(df, ["x"], ci="bootstrap", n_resamples=500, seed=1)
    b = lift_table(df, ["x"], ci="bootstrap", n_resamples=500, seed=1)
    c = lift_table(df, ["x"], ci="bootstrap", n_resamples=500, seed=2)
    pd.testing.assert_frame_equal(a, b)
    assert a["delta_sr_ci_low"].iloc[0] != c["delta_sr_ci_low"].iloc[0]
    # the bootstrap interval is close to the analytic one on 200 episodes
    w = lift_table(df, ["x"]).iloc[0]
    assert a["delta_sr_ci_low"].iloc[0] == pytest.approx(w["delta_sr_ci_low"], abs=0.05)
    assert a["delta_sr_ci_low"].iloc[0] < a["delta_sr"].iloc[0] < a["delta_sr_ci_high"].iloc[0]


def test_by_group_equals_subset() -> None:
    df = _small()
    t = lift_table(df, ["dup"], by="task").set_index("task")
    sub = lift_table(df[df["task"] == "seq"], ["dup"]).iloc[0]
    assert t.loc["seq", "n"] == 5 and t.loc["seq", "rate_failed"] == pytest.approx(sub["rate_failed"])
    # par has a single failure (which has dup) and 4 successes (one with dup)
    assert t.loc["par", "lift"] == pytest.approx(1 / (1 / 4))


def test_missing_values_are_dropped_with_note() -> None:
    df = _small().astype({"dup": float})
    df.loc[0, "dup"] = np.nan
    t = lift_table(df, ["dup"]).iloc[0]
    assert t["n"] == 9 and "1 row(s) with missing values dropped" in t["note"]


def test_missing_column_raises_value_error_listing_columns() -> None:
    with pytest.raises(ValueError, match=r"'dup_grab'.*available columns.*'dup'"):
        lift_table(_small(), ["dup_grab"])
    with pytest.raises(ValueError, match=r"'sr'.*available columns"):
        behaviour_effect_table(_small(), ["dup"], outcomes=["sr"])


def test_non_binary_indicator_raises() -> None:
    with pytest.raises(ValueError, match="'cr' must be binary"):
        lift_table(_small(), ["cr"])


def test_behaviour_effect_table_hand_computed_and_welch_ci() -> None:
    df = _small()
    t = behaviour_effect_table(df, ["dup"], outcomes=["success", "cr"], percent=True).iloc[0]
    assert t["freq"] == pytest.approx(40.0)
    cr_with = df.loc[df["dup"] == 1, "cr"].to_numpy()
    cr_without = df.loc[df["dup"] == 0, "cr"].to_numpy()
    assert t["delta_success"] == pytest.approx(-25.0)
    assert t["delta_cr"] == pytest.approx(100 * (cr_with.mean() - cr_without.mean()))
    ci = stats.ttest_ind(cr_with, cr_without, equal_var=False).confidence_interval(0.95)
    assert (t["delta_cr_ci_low"], t["delta_cr_ci_high"]) == pytest.approx((100 * ci.low, 100 * ci.high),
                                                                            rel=1e-10)


def test_behaviour_effect_table_degenerate_and_bootstrap() -> None:
    df = _small()
    t = behaviour_effect_table(df, ["never", "dup"], outcomes=["success"], ci="bootstrap", n_resamples=300)
    never = t.set_index("behaviour").loc["never"]
    assert math.isnan(never["delta_success"]) and "never observed" in never["note"]
    dup = t.set_index("behaviour").loc["dup"]
    assert dup["delta_success_ci_low"] <= dup["delta_success"] <= dup["delta_success_ci_high"]
    t2 = behaviour_effect_table(df, ["never", "dup"], outcomes=["success"], ci="bootstrap", n_resamples=300)
    pd.testing.assert_frame_equal(t, t2)
