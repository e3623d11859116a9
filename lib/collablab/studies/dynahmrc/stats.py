"""DynaHMRC's statistics over episode rows of :func:`~.metrics.episode_metrics`
(dynahmrc.tex: figure error bars "95% confidence intervals computed via bootstrap resampling with
10,000 iterations"; appendix ``lab:statistical_significance`` / ``tab:statistical_comparison``;
``lab:sensitivity`` / ``tab:weight_sensitivity``; ``lab:llm_cost`` / ``tab:token_comparison``).

- :func:`bootstrap_ci`, :func:`summary_table`: percentile bootstrap of a mean, per group;
- :func:`paired_comparison`: mean difference ``b - a`` on matched units (the paper: "Q minus O"),
  paired-bootstrap CI and a two-sided paired t-test;
- :func:`weight_sensitivity`: the difficulty score D = alpha L + beta N + gamma Y against the
  empirical hardness, scanning beta with alpha = gamma = (1 - beta)/2;
- :func:`stage_cost_table`: LLM calls and tokens per stage.

Bootstraps use :func:`collablab.analysis.bootstrap_ci` (scipy's vectorised resampling) with a
fixed seed, so every table is reproducible.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from ...analysis import bootstrap_ci as analysis_bootstrap_ci
from ...analysis import paired_table, require_columns
from .brain import STAGES
from .difficulty import ALPHA, BETA, GAMMA, level_of

__all__ = [
    "METRICS",
    "SENSITIVITY_COLUMNS",
    "bootstrap_ci",
    "paired_comparison",
    "stage_cost_table",
    "summary_table",
    "weight_sensitivity",
]

#: The five metrics of §4.4 as episode-row columns.
METRICS = ("success", "ps", "ts", "as_per_robot", "cc")
#: Columns :func:`weight_sensitivity` reads (one row per task, means over its runs).
SENSITIVITY_COLUMNS = ("L", "N", "Y", "ps", "ts")


def bootstrap_ci(
    values: Sequence[float] | np.ndarray | pd.Series,
    n_resamples: int = 10_000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap CI ``(low, high)`` of the mean of ``values`` (NaNs dropped).

    Fewer than two values give ``(nan, nan)``; equal values give ``(v, v)``. Same seed, same
    interval.
    """
    if not 0 < level < 1:
        raise ValueError(f"level: must be in (0, 1), got {level!r}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise ValueError(f"n_resamples: must be an int >= 1, got {n_resamples!r}")
    arr = np.asarray(values, dtype=float).ravel()
    res = analysis_bootstrap_ci(arr, statistic=np.mean, method="percentile", n_resamples=n_resamples,
                                confidence_level=level, seed=seed)
    return float(res.ci_low), float(res.ci_high)


def _as_list(by: str | Sequence[str]) -> list[str]:
    return [by] if isinstance(by, str) else list(by)


def _numeric(series: pd.Series, name: str) -> pd.Series:
    try:
        return series.astype(float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: values must be numeric or bool ({exc})") from None


def summary_table(
    frame: pd.DataFrame,
    by: str | Sequence[str],
    metrics: Sequence[str] = METRICS,
    n_resamples: int = 10_000,
    level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per group of ``by``: ``n`` (episodes) and, for every metric m, ``m_mean``,
    ``m_low``, ``m_high`` (percentile bootstrap CI of the mean: the figures' error bars).
    Boolean metrics (``success``) are averaged as 0/1."""
    keys = _as_list(by)
    metrics = list(metrics)
    require_columns(frame, [*keys, *metrics])
    rows: list[dict[str, Any]] = []
    for key, group in frame.groupby(keys, sort=True, observed=True, dropna=False):
        key_t = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = dict(zip(keys, key_t))
        row["n"] = len(group)
        for m in metrics:
            arr = _numeric(group[m], m).to_numpy(dtype=float)
            row[f"{m}_mean"] = float(np.nanmean(arr)) if np.isfinite(arr).any() else float("nan")
            row[f"{m}_low"], row[f"{m}_high"] = bootstrap_ci(arr, n_resamples=n_resamples, level=level, seed=seed)
        rows.append(row)
    cols = [*keys, "n", *(f"{m}_{s}" for m in metrics for s in ("mean", "low", "high"))]
    return pd.DataFrame(rows, columns=cols)


def paired_comparison(
    frame: pd.DataFrame,
    *,
    method_col: str,
    a: Hashable,
    b: Hashable,
    pair_on: str | Sequence[str],
    metrics: Sequence[str] = METRICS,
    n_resamples: int = 10_000,
    level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """``tab:statistical_comparison``: method ``b`` against method ``a`` on units matched by
    ``pair_on`` (e.g. task id; several episodes of one unit and method are averaged first).

    One row per metric: ``metric``, ``a``, ``b``, ``difference`` (the text ``"b - a"``),
    ``mean_a``, ``mean_b``, ``mean_diff`` (mean of the paired differences b - a), ``ci_low``,
    ``ci_high`` (percentile bootstrap of the paired differences), ``p_value`` (two-sided paired
    t-test, :func:`scipy.stats.ttest_rel`; 1.0 when every difference is 0, NaN with fewer than 2
    pairs), ``n_pairs``, ``n_unmatched`` (units lacking one method, dropped).
    """
    keys = _as_list(pair_on)
    metrics = list(metrics)
    require_columns(frame, [method_col, *keys, *metrics])
    present = set(frame[method_col].dropna().tolist())
    absent = [m for m in (a, b) if m not in present]
    if absent:
        raise ValueError(f"{method_col}: method(s) {absent!r} not present; present: "
                         f"{sorted(map(str, present))}")
    rows: list[dict[str, Any]] = []
    for m in metrics:
        col = _numeric(frame[m], m)
        pairs = paired_table(frame.assign(**{m: col}), method_col, m, b, a, keys)  # diff = b - a
        d = pairs["diff"].to_numpy(dtype=float)
        n = int(d.size)
        if n >= 2 and np.all(d == 0):
            p = 1.0
        elif n >= 2:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with np.errstate(all="ignore"):
                    p = float(sps.ttest_rel(pairs["a"].to_numpy(float), pairs["b"].to_numpy(float)).pvalue)
        else:
            p = float("nan")
        lo, hi = bootstrap_ci(d, n_resamples=n_resamples, level=level, seed=seed)
        rows.append(dict(
            metric=m, a=a, b=b, difference=f"{b} - {a}",
            mean_a=float(pairs["b"].mean()) if n else float("nan"),
            mean_b=float(pairs["a"].mean()) if n else float("nan"),
            mean_diff=float(d.mean()) if n else float("nan"),
            ci_low=lo, ci_high=hi, p_value=p, n_pairs=n, n_unmatched=int(pairs.attrs["n_unmatched"]),
        ))
    return pd.DataFrame(rows, columns=["metric", "a", "b", "difference", "mean_a", "mean_b", "mean_diff",
                                       "ci_low", "ci_high", "p_value", "n_pairs", "n_unmatched"])


def _z(x: np.ndarray) -> np.ndarray:
    sd = x.std(ddof=0)
    return np.zeros_like(x) if sd == 0 else (x - x.mean()) / sd


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    if np.all(x == x[0]) or np.all(y == y[0]):
        return float("nan")
    return float(sps.spearmanr(x, y).statistic)


def _pairwise_accuracy(d: np.ndarray, h: np.ndarray) -> float:
    i, j = np.triu_indices(d.size, k=1)
    dh = h[i] - h[j]
    keep = dh != 0
    if not keep.any():
        return float("nan")
    dd = d[i][keep] - d[j][keep]
    score = np.where(dd == 0, 0.5, (np.sign(dd) == np.sign(dh[keep])).astype(float))
    return float(score.mean())


def weight_sensitivity(
    tasks_frame: pd.DataFrame,
    betas: Sequence[float] = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0),
) -> pd.DataFrame:
    """``tab:weight_sensitivity``: one row per beta with alpha = gamma = (1 - beta)/2.

    ``tasks_frame``: one row per task, columns L, N, Y (the factors of Eq.
    ``equ:difficulty_metric``, each in [0, 1]) and ps, ts (means over the task's runs). For each
    weighting, D = alpha L + beta N + gamma Y (rounded to 12 decimals so float noise makes no
    ranks or ties) and H_emp = z(1 - PS) + z(TS) (z: population z-score over the tasks; a
    constant metric contributes 0). Columns:

    - ``rho_D_PS``, ``rho_D_TS``, ``rho_D_H``: Spearman rank correlations
      (:func:`scipy.stats.spearmanr`, average ranks for ties): D is an ordinal score and the
      paper's values are rank-like; NaN when either side is constant;
    - ``pairwise_acc``: over task pairs with different H_emp, the share that D orders the same
      way as H_emp, a pair tied in D counting 1/2;
    - ``label_changes``: ``"k/n"`` tasks whose level (:func:`~.difficulty.level_of`) differs
      from the paper's weights (0.4, 0.2, 0.4); ``"baseline"`` on that row.
    """
    require_columns(tasks_frame, SENSITIVITY_COLUMNS)
    data = {c: _numeric(tasks_frame[c], c).to_numpy(dtype=float) for c in SENSITIVITY_COLUMNS}
    for c in SENSITIVITY_COLUMNS:
        if not np.isfinite(data[c]).all():
            raise ValueError(f"{c}: every task needs a finite value")
    for c in ("L", "N", "Y", "ps"):
        if ((data[c] < 0) | (data[c] > 1)).any():
            raise ValueError(f"{c}: values must be in [0, 1]")
    n = len(tasks_frame)
    if n < 2:
        raise ValueError(f"tasks_frame: needs at least 2 tasks, got {n}")
    for beta in betas:
        if not 0.0 <= float(beta) <= 1.0:
            raise ValueError(f"betas: each must be in [0, 1], got {beta!r}")

    def score(alpha: float, beta: float, gamma: float) -> np.ndarray:
        return np.round(alpha * data["L"] + beta * data["N"] + gamma * data["Y"], 12)

    base_levels = [level_of(float(v)) for v in score(ALPHA, BETA, GAMMA)]
    h = _z(1.0 - data["ps"]) + _z(data["ts"])
    rows = []
    for beta in betas:
        beta = float(beta)
        alpha = gamma = (1.0 - beta) / 2.0
        d = score(alpha, beta, gamma)
        is_base = bool(np.isclose([alpha, beta, gamma], [ALPHA, BETA, GAMMA], atol=1e-9).all())
        changed = sum(level_of(float(v)) != base for v, base in zip(d, base_levels))
        rows.append(dict(
            alpha=round(alpha, 12), beta=beta, gamma=round(gamma, 12),
            rho_D_PS=_spearman(d, data["ps"]), rho_D_TS=_spearman(d, data["ts"]), rho_D_H=_spearman(d, h),
            pairwise_acc=_pairwise_accuracy(d, h),
            label_changes="baseline" if is_base else f"{changed}/{n}",
        ))
    return pd.DataFrame(rows, columns=["alpha", "beta", "gamma", "rho_D_PS", "rho_D_TS", "rho_D_H",
                                       "pairwise_acc", "label_changes"])


def stage_cost_table(frame: pd.DataFrame, by: str | Sequence[str]) -> pd.DataFrame:
    """``tab:token_comparison`` from episode rows with :func:`~.metrics.stage_usage` columns: per
    group ``n`` and, per stage S, ``calls_S`` (mean calls per episode) and ``tokens_per_call_S``
    (mean over the episodes that used S of their tokens / calls: the table's per-stage Tokens
    column is per call), plus ``calls_total`` and ``tokens_total`` (means per episode)."""
    keys = _as_list(by)
    cols = [f"{k}_{s}" for s in STAGES for k in ("calls", "tokens")]
    require_columns(frame, [*keys, *cols, "calls_total", "tokens_total"])
    rows = []
    for key, g in frame.groupby(keys, sort=True, observed=True, dropna=False):
        key_t = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = dict(zip(keys, key_t))
        row["n"] = len(g)
        for s in STAGES:
            c = g[f"calls_{s}"].to_numpy(dtype=float)
            t = g[f"tokens_{s}"].to_numpy(dtype=float)
            row[f"calls_{s}"] = float(c.mean())
            used = c > 0
            row[f"tokens_per_call_{s}"] = float((t[used] / c[used]).mean()) if used.any() else float("nan")
        row["calls_total"] = float(g["calls_total"].mean())
        row["tokens_total"] = float(g["tokens_total"].mean())
        rows.append(row)
    out_cols = [*keys, "n", *(f"{k}_{s}" for s in STAGES for k in ("calls", "tokens_per_call")),
                "calls_total", "tokens_total"]
    return pd.DataFrame(rows, columns=out_cols)
