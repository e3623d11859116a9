"""Indicator lift tables and behaviour-effect tables.

- :func:`lift_table` follows MECoBench Appendix F / Table 22 (failure modes):
  "Freq. denotes the fraction of episodes containing the behavior; lift is
  the ratio of its rate in failed episodes to that in successful episodes",
  plus SR with / without the indicator and ΔSR.
- :func:`behaviour_effect_table` follows MECoBench §4.3 / Table 2: "Freq.
  denotes the percentage of cases containing each behavior. ΔSR and ΔCR are
  percentage-point differences between cases with and without the behavior."
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from .significance import bootstrap_ci, mean_difference, require_columns

__all__ = ["behaviour_effect_table", "lift_table", "newcombe_diff_ci", "wilson_ci"]

RateCI = Literal["wilson", "bootstrap"]
DiffCI = Literal["welch", "bootstrap", "none"]
_NAN = float("nan")


def wilson_ci(count: int, n: int, confidence_level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``count / n`` (NaN if ``n == 0``)."""
    from statsmodels.stats.proportion import proportion_confint

    if n <= 0:
        return _NAN, _NAN
    lo, hi = proportion_confint(count, n, alpha=1 - confidence_level, method="wilson")
    # the exact bounds at count = 0 / count = n are 0 / 1; strip floating-point fuzz
    return (0.0 if count == 0 else float(lo)), (1.0 if count == n else float(hi))


def newcombe_diff_ci(count1: int, n1: int, count2: int, n2: int,
                     confidence_level: float = 0.95) -> tuple[float, float]:
    """Newcombe hybrid-score CI (from Wilson intervals) for ``count1/n1 - count2/n2``.

    statsmodels ``confint_proportions_2indep(method="newcomb")``; NaN if a group is empty.
    """
    from statsmodels.stats.proportion import confint_proportions_2indep

    if n1 <= 0 or n2 <= 0:
        return _NAN, _NAN
    lo, hi = confint_proportions_2indep(count1, n1, count2, n2, method="newcomb", compare="diff",
                                        alpha=1 - confidence_level)
    return float(lo), float(hi)


def _welch_diff_ci(x: np.ndarray, y: np.ndarray, confidence_level: float) -> tuple[float, float]:
    if x.size < 2 or y.size < 2:
        return _NAN, _NAN
    vx, vy = x.var(ddof=1) / x.size, y.var(ddof=1) / y.size
    se2 = vx + vy
    d = x.mean() - y.mean()
    if se2 == 0:
        return float(d), float(d)
    dof = se2**2 / ((vx**2 / (x.size - 1) if vx else 0.0) + (vy**2 / (y.size - 1) if vy else 0.0))
    q = float(stats.t.ppf(0.5 + confidence_level / 2, dof))
    return float(d - q * math.sqrt(se2)), float(d + q * math.sqrt(se2))


def _as_binary(series: pd.Series, name: str, role: str) -> pd.Series:
    vals = series.astype(float)
    bad = ~vals.isin([0.0, 1.0]) & vals.notna()
    if bad.any():
        raise ValueError(f"{role} column {name!r} must be binary (0/1 or bool); found values "
                         f"{sorted(pd.unique(series[bad]).tolist())[:5]}")
    return vals


def _groups(df: pd.DataFrame, by: str | None) -> list[tuple[Any, pd.DataFrame]]:
    if by is None:
        return [(None, df)]
    return [(k, g) for k, g in df.groupby(by, sort=False, dropna=False)]


def _lift_row(ind: np.ndarray, y: np.ndarray, ci: RateCI, confidence_level: float, n_resamples: int,
              seed: int | np.random.Generator | None) -> dict[str, Any]:
    n = int(ind.size)
    with_ = ind == 1
    n_with, n_succ = int(with_.sum()), int((y == 1).sum())
    n_fail = n - n_succ
    k_fail, k_succ = int((with_ & (y == 0)).sum()), int((with_ & (y == 1)).sum())
    notes: list[str] = []

    def rate(k: int, m: int) -> float:
        return k / m if m else _NAN

    def rate_ci(values: np.ndarray, k: int) -> tuple[float, float]:
        if ci == "wilson":
            return wilson_ci(k, values.size, confidence_level)
        b = bootstrap_ci(values, n_resamples=n_resamples, confidence_level=confidence_level, seed=seed)
        return b.ci_low, b.ci_high

    r_fail, r_succ = rate(k_fail, n_fail), rate(k_succ, n_succ)
    sr_with, sr_without = rate(k_succ, n_with), rate(n_succ - k_succ, n - n_with)
    if n == 0:
        notes.append("no episodes")
    if n_with == 0:
        notes.append("indicator never observed: lift 0/0 undefined, SR with undefined")
    elif n_with == n:
        notes.append("indicator present in every episode: SR without undefined")
    if n_succ == 0 and n:
        notes.append("no successful episodes: rate in successes undefined")
    if n_fail == 0 and n:
        notes.append("no failed episodes: rate in failures undefined")
    if n_succ and n_fail:
        if k_succ == 0 and k_fail > 0:
            lift = math.inf
            notes.append("never seen in successful episodes: lift infinite")
        elif k_succ == 0 and k_fail == 0:
            lift = _NAN
            if n_with:  # pragma: no cover - cannot happen when both groups non-empty
                notes.append("lift 0/0 undefined")
        else:
            lift = r_fail / r_succ
    else:
        lift = _NAN
        if n:
            notes.append("lift undefined (needs both failed and successful episodes)")

    fr_lo, fr_hi = rate_ci(ind, n_with)
    rf_lo, rf_hi = rate_ci(ind[y == 0], k_fail)
    rs_lo, rs_hi = rate_ci(ind[y == 1], k_succ)
    sw_lo, sw_hi = rate_ci(y[with_], k_succ)
    so_lo, so_hi = rate_ci(y[~with_], n_succ - k_succ)
    delta = sr_with - sr_without
    if ci == "wilson":
        d_lo, d_hi = newcombe_diff_ci(k_succ, n_with, n_succ - k_succ, n - n_with, confidence_level)
    else:
        b = bootstrap_ci(y[with_], y[~with_], statistic=mean_difference, n_resamples=n_resamples,
                         confidence_level=confidence_level, seed=seed)
        d_lo, d_hi = b.ci_low, b.ci_high
    return dict(n=n, n_with=n_with, n_failed=n_fail, n_success=n_succ,
                freq=rate(n_with, n), freq_ci_low=fr_lo, freq_ci_high=fr_hi,
                rate_failed=r_fail, rate_failed_ci_low=rf_lo, rate_failed_ci_high=rf_hi,
                rate_success=r_succ, rate_success_ci_low=rs_lo, rate_success_ci_high=rs_hi,
                lift=lift,
                sr_with=sr_with, sr_with_ci_low=sw_lo, sr_with_ci_high=sw_hi,
                sr_without=sr_without, sr_without_ci_low=so_lo, sr_without_ci_high=so_hi,
                delta_sr=delta, delta_sr_ci_low=d_lo, delta_sr_ci_high=d_hi,
                note="; ".join(notes))


_PERCENT_PREFIXES = ("freq", "rate_failed", "rate_success", "sr_with", "sr_without", "delta_sr")


def lift_table(
    df: pd.DataFrame,
    indicators: Sequence[str],
    outcome: str = "success",
    *,
    by: str | None = None,
    ci: RateCI = "wilson",
    confidence_level: float = 0.95,
    percent: bool = False,
    n_resamples: int = 10_000,
    seed: int | np.random.Generator | None = 0,
) -> pd.DataFrame:
    """Failure-mode lift table, one row per indicator (and ``by`` group): MECoBench Table 22.

    Columns: ``freq`` (share of episodes with the indicator), ``rate_failed`` /
    ``rate_success`` (share of failed / successful episodes with it),
    ``lift = rate_failed / rate_success``, ``sr_with`` / ``sr_without``
    (success rate of episodes with / without it), ``delta_sr = sr_with -
    sr_without``, counts, CIs and ``note``.

    CIs: ``ci="wilson"`` (default) gives Wilson score intervals for every rate
    and the Newcombe hybrid-score interval for ΔSR; ``ci="bootstrap"`` gives
    percentile bootstrap intervals (``n_resamples``, ``seed``), ΔSR by
    resampling the with/without groups independently.  ``percent=True``
    reports rates and ΔSR in percent / percentage points (lift is a ratio).

    Lift is ``inf`` when the indicator occurs in failures but never in
    successes, and NaN (with the reason in ``note``) for 0/0 (indicator never
    seen) or when there are no successes or no failures.  Rows with a missing
    indicator or outcome are dropped for that indicator.
    """
    if isinstance(indicators, str):
        indicators = [indicators]
    require_columns(df, [outcome, *indicators, by])
    if ci not in ("wilson", "bootstrap"):
        raise ValueError(f"ci must be 'wilson' or 'bootstrap', got {ci!r}")
    rows = []
    for key, part in _groups(df, by):
        y_all = _as_binary(part[outcome], outcome, "outcome")
        for name in indicators:
            x_all = _as_binary(part[name], name, "indicator")
            keep = x_all.notna() & y_all.notna()
            row = _lift_row(x_all[keep].to_numpy(), y_all[keep].to_numpy(), ci, confidence_level, n_resamples,
                            seed)
            n_drop = int((~keep).sum())
            if n_drop:
                row["note"] = "; ".join(filter(None, [f"{n_drop} row(s) with missing values dropped", row["note"]]))
            rows.append({**({by: key} if by is not None else {}), "indicator": name, **row,
                         "ci_method": "wilson/newcombe" if ci == "wilson" else "bootstrap percentile"})
    table = pd.DataFrame(rows)
    if percent and len(table):
        cols = [c for c in table.columns if c.startswith(_PERCENT_PREFIXES)]
        table[cols] = table[cols] * 100.0
    return table


def behaviour_effect_table(
    df: pd.DataFrame,
    behaviours: Sequence[str],
    outcomes: Sequence[str] = ("success", "cr"),
    *,
    by: str | None = None,
    ci: DiffCI = "welch",
    confidence_level: float = 0.95,
    percent: bool = False,
    n_resamples: int = 10_000,
    seed: int | np.random.Generator | None = 0,
) -> pd.DataFrame:
    """Behaviour-effect table in the style of MECoBench Table 2 (Freq., ΔSR, ΔCR).

    For each binary behaviour column (and ``by`` group, e.g. task type):
    ``freq`` = share of episodes with the behaviour and, per outcome ``o``,
    ``o_with``, ``o_without`` and ``delta_o = o_with - o_without`` (episode
    means).  CI of each Δ: ``"welch"`` (Welch t interval, unequal variances),
    ``"bootstrap"`` (percentile, groups resampled independently) or
    ``"none"``.  ``percent=True`` gives percent / percentage points, as in
    Table 2.  Undefined Δ (behaviour never or always present) is NaN with a note.
    """
    if isinstance(behaviours, str):
        behaviours = [behaviours]
    if isinstance(outcomes, str):
        outcomes = [outcomes]
    require_columns(df, [*behaviours, *outcomes, by])
    if ci not in ("welch", "bootstrap", "none"):
        raise ValueError(f"ci must be 'welch', 'bootstrap' or 'none', got {ci!r}")
    scale = 100.0 if percent else 1.0
    rows = []
    for key, part in _groups(df, by):
        for name in behaviours:
            x = _as_binary(part[name], name, "behaviour")
            notes: list[str] = []
            ok = x.notna()
            if (~ok).any():
                notes.append(f"{int((~ok).sum())} row(s) with missing behaviour dropped")
            n, n_with = int(ok.sum()), int((x[ok] == 1).sum())
            if n_with == 0:
                notes.append("behaviour never observed: Δ undefined")
            elif n_with == n:
                notes.append("behaviour present in every episode: Δ undefined")
            row: dict[str, Any] = {**({by: key} if by is not None else {}), "behaviour": name, "n": n,
                                   "n_with": n_with, "freq": (n_with / n * scale) if n else _NAN}
            for o in outcomes:
                y = part[o].astype(float)
                w = y[ok & (x == 1) & y.notna()].to_numpy()
                wo = y[ok & (x == 0) & y.notna()].to_numpy()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    m_w = float(w.mean()) if w.size else _NAN
                    m_wo = float(wo.mean()) if wo.size else _NAN
                if ci == "welch":
                    lo, hi = _welch_diff_ci(w, wo, confidence_level)
                elif ci == "bootstrap":
                    b = bootstrap_ci(w, wo, statistic=mean_difference, n_resamples=n_resamples,
                                     confidence_level=confidence_level, seed=seed)
                    lo, hi = b.ci_low, b.ci_high
                else:
                    lo, hi = _NAN, _NAN
                row[f"{o}_with"], row[f"{o}_without"] = m_w * scale, m_wo * scale
                row[f"delta_{o}"] = (m_w - m_wo) * scale
                row[f"delta_{o}_ci_low"], row[f"delta_{o}_ci_high"] = lo * scale, hi * scale
            row["note"] = "; ".join(notes)
            rows.append(row)
    return pd.DataFrame(rows)
