"""Confidence intervals and significance tests for condition comparisons.

Follows the DynaHMRC appendix ("Statistical Significance Comparison", Table
``tab:statistical_comparison``; error bars "computed via bootstrap resampling
with 10,000 iterations"): paired comparisons on matched tasks reported as mean
difference, 95% CI and p-value.  On top of that: Wilcoxon signed-rank,
McNemar for paired binary success, a task-clustered logistic GEE, and Holm
correction across a table of contrasts.

Every function returns NaN plus a human-readable ``note`` for degenerate
inputs (no pairs, all successes, a single task, ...) instead of raising from
inside scipy/statsmodels.  Missing columns raise ``ValueError`` naming the
column and listing the available ones.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from .present import TableStyle

__all__ = [
    "CONTRAST_STYLE",
    "OUTCOME_NAMES",
    "RATE_OUTCOMES",
    "BootstrapCI",
    "GEEResult",
    "TestResult",
    "TESTS",
    "bootstrap_ci",
    "mean_ci",
    "compare",
    "contrast_table",
    "gee_logistic",
    "hodges_lehmann",
    "holm_adjust",
    "mcnemar_test",
    "mean_difference",
    "paired_bootstrap_ci",
    "paired_table",
    "require_columns",
    "sign_flip_test",
    "wilcoxon_test",
]

Alternative = Literal["two-sided", "greater", "less"]
CIMethod = Literal["percentile", "bca", "basic"]
SeedLike = int | np.random.Generator | None

#: Test names understood by :func:`compare`.
TESTS: tuple[str, ...] = ("sign_flip", "wilcoxon", "mcnemar", "gee")

_SCIPY_CI_METHOD = {"percentile": "percentile", "bca": "BCa", "basic": "basic"}


# --------------------------------------------------------------------------- #
# input validation
# --------------------------------------------------------------------------- #
def require_columns(df: pd.DataFrame, columns: Iterable[Hashable | None]) -> None:
    """Raise ``ValueError`` naming each missing column and listing available ones."""
    missing = [c for c in columns if c is not None and c not in df.columns]
    if missing:
        names = ", ".join(repr(c) for c in missing)
        raise ValueError(
            f"column(s) {names} not found in DataFrame; "
            f"available columns: {[str(c) for c in df.columns]}"
        )


def _is_binary(values: np.ndarray) -> bool:
    v = values[~np.isnan(values)]
    return bool(np.all((v == 0) | (v == 1)))


def _join(notes: Iterable[str]) -> str:
    return "; ".join(n for n in notes if n)


# --------------------------------------------------------------------------- #
# bootstrap
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class BootstrapCI:
    """Point estimate and bootstrap confidence interval."""

    estimate: float
    ci_low: float
    ci_high: float
    method: str
    confidence_level: float
    n_resamples: int
    n: int
    note: str = ""


def mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Difference of means ``mean(x) - mean(y)`` (two-sample bootstrap statistic)."""
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def _accepts_axis(fn: Callable[..., Any]) -> bool:
    try:
        return "axis" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def mean_ci(values: Sequence[float] | np.ndarray | pd.Series, confidence_level: float = 0.95) -> tuple[float, float]:
    """The t interval of the mean of ``values`` (missing values dropped): mean ± t·sd/√n with n-1
    degrees of freedom (``scipy.stats.t.interval``); NaN bounds with fewer than two values."""
    v = pd.to_numeric(pd.Series(values), errors="coerce").astype(float).dropna().to_numpy()
    if v.size < 2:
        return float("nan"), float("nan")
    half = float(stats.t.ppf(0.5 + confidence_level / 2, v.size - 1)) * float(v.std(ddof=1)) / float(np.sqrt(v.size))
    return float(v.mean()) - half, float(v.mean()) + half


def bootstrap_ci(
    *samples: Sequence[float] | np.ndarray | pd.Series,
    statistic: Callable[..., Any] = np.mean,
    method: CIMethod = "percentile",
    n_resamples: int = 10_000,
    confidence_level: float = 0.95,
    seed: SeedLike = 0,
) -> BootstrapCI:
    """Bootstrap CI of ``statistic(*samples)``; samples are resampled independently.

    ``method`` is ``"percentile"`` or ``"bca"`` (bias-corrected and accelerated,
    Efron 1987), both computed with :func:`scipy.stats.bootstrap`; default
    10,000 resamples as in the DynaHMRC appendix.  A ``statistic`` with an
    ``axis`` argument is evaluated vectorised.  ``seed`` (int or
    ``numpy.random.Generator``) makes the interval reproducible.  NaNs are
    dropped (noted).  Fewer than two observations in a sample gives a NaN
    interval; if BCa is undefined (degenerate bootstrap distribution, e.g. all
    values equal) the percentile interval is reported and the note says so.
    """
    if not samples:
        raise ValueError("bootstrap_ci needs at least one sample")
    if method not in _SCIPY_CI_METHOD:
        raise ValueError(f"method must be one of {sorted(_SCIPY_CI_METHOD)}, got {method!r}")
    notes: list[str] = []
    arrays = []
    for s in samples:
        a = np.asarray(s, dtype=float).ravel()
        n_nan = int(np.isnan(a).sum())
        if n_nan:
            notes.append(f"{n_nan} NaN value(s) dropped")
            a = a[~np.isnan(a)]
        arrays.append(a)
    n_total = int(sum(a.size for a in arrays))
    vectorized = _accepts_axis(statistic)

    def nan_result(note: str, estimate: float = float("nan")) -> BootstrapCI:
        return BootstrapCI(estimate, float("nan"), float("nan"), method, confidence_level,
                           n_resamples, n_total, _join([*notes, note]))

    if any(a.size == 0 for a in arrays):
        return nan_result("empty sample: statistic undefined")
    with np.errstate(all="ignore"):
        estimate = float(statistic(*arrays, axis=-1) if vectorized else statistic(*arrays))
    if any(a.size < 2 for a in arrays):
        return nan_result("bootstrap needs at least 2 observations per sample", estimate)

    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    batch = max(1, min(n_resamples, int(4_000_000 // max(n_total, 1))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            res = stats.bootstrap(
                tuple(arrays), statistic, n_resamples=n_resamples, batch=batch,
                vectorized=vectorized, paired=False, confidence_level=confidence_level,
                method=_SCIPY_CI_METHOD[method], rng=rng,
            )
            low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
            if method == "bca" and not (np.isfinite(low) and np.isfinite(high)):
                res = stats.bootstrap(
                    tuple(arrays), statistic, n_resamples=0, bootstrap_result=res,
                    vectorized=vectorized, confidence_level=confidence_level,
                    method="percentile", rng=rng,
                )
                low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
                notes.append("BCa undefined (degenerate bootstrap distribution); percentile interval reported")
    dist = np.asarray(res.bootstrap_distribution, dtype=float)
    if dist.size and np.nanmax(dist) == np.nanmin(dist):
        notes.append("bootstrap distribution is degenerate (every resample gives the same value)")
    return BootstrapCI(estimate, low, high, method, confidence_level, n_resamples, n_total, _join(notes))


def paired_bootstrap_ci(
    a: Sequence[float] | np.ndarray | pd.Series,
    b: Sequence[float] | np.ndarray | pd.Series,
    *,
    method: CIMethod = "percentile",
    n_resamples: int = 10_000,
    confidence_level: float = 0.95,
    seed: SeedLike = 0,
) -> BootstrapCI:
    """Bootstrap CI of the mean paired difference ``mean(a - b)``, resampling pairs.

    DynaHMRC appendix, paired comparison table ("Mean Difference", "95% CI").
    """
    a_arr, b_arr = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a_arr.shape != b_arr.shape:
        raise ValueError(f"paired samples differ in length: {a_arr.shape} vs {b_arr.shape}")
    return bootstrap_ci(a_arr - b_arr, statistic=np.mean, method=method, n_resamples=n_resamples,
                        confidence_level=confidence_level, seed=seed)


# --------------------------------------------------------------------------- #
# paired tests
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class TestResult:
    """Outcome of one hypothesis test."""

    __test__ = False  # not a pytest test class

    statistic: float
    p_value: float
    method: str
    n: int
    note: str = ""


def _finite(x: Sequence[float] | np.ndarray | pd.Series) -> tuple[np.ndarray, str]:
    arr = np.asarray(x, dtype=float).ravel()
    n_bad = int((~np.isfinite(arr)).sum())
    return arr[np.isfinite(arr)], (f"{n_bad} non-finite difference(s) dropped" if n_bad else "")


def sign_flip_test(
    differences: Sequence[float] | np.ndarray | pd.Series,
    *,
    alternative: Alternative = "two-sided",
    n_resamples: int = 10_000,
    exact_max_n: int = 16,
    seed: SeedLike = 0,
) -> TestResult:
    """Sign-flip permutation test of H0: mean paired difference = 0.

    Under H0 each pair's difference is symmetric about zero, so its sign is
    exchangeable.  With ``n <= exact_max_n`` pairs all ``2**n`` sign vectors
    are enumerated (exact p); otherwise ``n_resamples`` random sign vectors are
    drawn and ``p = (1 + #{|T*| >= |T|}) / (1 + B)``.  Statistic: mean
    difference.  Two-sided p uses ``|T*| >= |T|`` (the null is symmetric, so
    this equals scipy's ``2 * min(p_less, p_greater)``).
    """
    if alternative not in ("two-sided", "greater", "less"):
        raise ValueError(f"alternative must be 'two-sided', 'greater' or 'less', got {alternative!r}")
    d, note = _finite(differences)
    n = int(d.size)
    if n == 0:
        return TestResult(float("nan"), float("nan"), "sign-flip permutation", 0, _join([note, "no pairs"]))
    obs = float(d.mean())
    tol = 1e-12 * max(1.0, float(np.max(np.abs(d))))

    def count_extreme(null: np.ndarray) -> int:
        if alternative == "two-sided":
            return int(np.sum(np.abs(null) >= abs(obs) - tol))
        if alternative == "greater":
            return int(np.sum(null >= obs - tol))
        return int(np.sum(null <= obs + tol))

    if n <= exact_max_n:
        codes = np.arange(2**n, dtype=np.int64)[:, None]
        signs = 1.0 - 2.0 * ((codes >> np.arange(n)) & 1)
        null = signs @ d / n
        p = count_extreme(null) / null.size
        method = f"sign-flip permutation (exact, {2**n} sign vectors)"
    else:
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        batch = max(1, min(n_resamples, int(2_000_000 // n)))
        hits, done = 0, 0
        while done < n_resamples:
            m = min(batch, n_resamples - done)
            signs = rng.choice(np.array([-1.0, 1.0]), size=(m, n))
            hits += count_extreme(signs @ d / n)
            done += m
        p = (1 + hits) / (1 + n_resamples)
        method = f"sign-flip permutation (Monte Carlo, {n_resamples} resamples)"
    return TestResult(obs, float(min(1.0, p)), method, n, note)


def wilcoxon_test(
    differences: Sequence[float] | np.ndarray | pd.Series,
    *,
    alternative: Alternative = "two-sided",
    zero_method: Literal["wilcox", "pratt", "zsplit"] = "wilcox",
    method: Literal["auto", "exact", "asymptotic"] = "auto",
) -> TestResult:
    """Wilcoxon signed-rank test of the paired differences (:func:`scipy.stats.wilcoxon`).

    ``zero_method="wilcox"`` discards zero differences (scipy default).  All
    differences zero gives NaN with a note instead of scipy's 0/0 warning.
    """
    d, note = _finite(differences)
    n = int(d.size)
    if n == 0:
        return TestResult(float("nan"), float("nan"), "Wilcoxon signed-rank", 0, _join([note, "no pairs"]))
    if not np.any(d != 0):
        return TestResult(float("nan"), float("nan"), "Wilcoxon signed-rank", n,
                          _join([note, "all paired differences are zero: Wilcoxon undefined"]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(all="ignore"):
            res = stats.wilcoxon(d, zero_method=zero_method, alternative=alternative, method=method)
    notes = [note]
    n_zero = int(np.sum(d == 0))
    if n_zero and zero_method == "wilcox":
        notes.append(f"{n_zero} zero difference(s) discarded")
    notes += [f"scipy: {w.message}" for w in caught]
    return TestResult(float(res.statistic), float(res.pvalue), "Wilcoxon signed-rank", n, _join(notes))


def hodges_lehmann(differences: Sequence[float] | np.ndarray | pd.Series) -> float:
    """Hodges-Lehmann pseudomedian: median of the Walsh averages (d_i + d_j)/2, i <= j."""
    d, _ = _finite(differences)
    if d.size == 0:
        return float("nan")
    i, j = np.triu_indices(d.size)
    return float(np.median((d[i] + d[j]) / 2.0))


def mcnemar_test(
    a: Sequence[float] | np.ndarray | pd.Series,
    b: Sequence[float] | np.ndarray | pd.Series,
    *,
    exact: bool | None = None,
    correction: bool = True,
) -> TestResult:
    """McNemar test for paired binary outcomes (statsmodels ``mcnemar``).

    ``a`` and ``b`` are 0/1 outcomes of the same pairs under two conditions.
    ``exact=None`` uses the exact binomial test when there are fewer than 25
    discordant pairs, else the chi-square version (with continuity correction
    if ``correction``).  No discordant pairs (e.g. all successes in both
    conditions) gives NaN with a reason.
    """
    from statsmodels.stats.contingency_tables import mcnemar

    x, y = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"paired samples differ in length: {x.shape} vs {y.shape}")
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    n = int(x.size)
    if n == 0:
        return TestResult(float("nan"), float("nan"), "McNemar", 0, "no pairs")
    if not (_is_binary(x) and _is_binary(y)):
        return TestResult(float("nan"), float("nan"), "McNemar", n,
                          "outcome is not binary per pair (McNemar needs one 0/1 outcome per pair and "
                          "condition; pass a pair key that identifies single episodes)")
    n11 = int(np.sum((x == 1) & (y == 1)))
    n10 = int(np.sum((x == 1) & (y == 0)))
    n01 = int(np.sum((x == 0) & (y == 1)))
    n00 = int(np.sum((x == 0) & (y == 0)))
    discordant = n10 + n01
    if discordant == 0:
        kind = "all successes" if n11 == n else ("all failures" if n00 == n else "all pairs agree")
        return TestResult(float("nan"), float("nan"), "McNemar", n,
                          f"no discordant pairs ({kind}): McNemar undefined")
    use_exact = discordant < 25 if exact is None else exact
    res = mcnemar(np.array([[n11, n10], [n01, n00]]), exact=use_exact, correction=correction)
    method = "McNemar (exact binomial)" if use_exact else (
        "McNemar (chi-square, continuity-corrected)" if correction else "McNemar (chi-square)")
    return TestResult(float(res.statistic), float(res.pvalue), method, n,
                      f"discordant pairs: {n10} (a only) / {n01} (b only)")


# --------------------------------------------------------------------------- #
# clustered logistic model
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class GEEResult:
    """Treatment effect from a logistic GEE; CI is on the odds-ratio scale."""

    coef: float
    se: float
    odds_ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    n_episodes: int
    n_clusters: int
    note: str = ""


def gee_logistic(
    df: pd.DataFrame,
    treatment: str,
    outcome: str,
    cluster: str,
    *,
    covariates: Sequence[str] = (),
    confidence_level: float = 0.95,
    min_clusters_warn: int = 10,
) -> GEEResult:
    """Logistic GEE of a binary outcome on a binary treatment, clustered by ``cluster``.

    statsmodels ``GEE`` with ``Binomial`` family (logit link), ``Exchangeable``
    working correlation and robust (sandwich) standard errors; returns the
    treatment log-odds coefficient, odds ratio, Wald CI (on the OR scale) and
    p.  Impossible fits give NaN with a reason: fewer than 2 clusters,
    constant outcome (e.g. all successes), no treatment variation, or an arm
    whose outcome is constant (separation: OR 0 or infinite).
    """
    import statsmodels.api as sm
    from statsmodels.tools.sm_exceptions import ConvergenceWarning

    require_columns(df, [treatment, outcome, cluster, *covariates])
    data = df[[treatment, outcome, cluster, *covariates]]
    n_drop = int(data.isna().any(axis=1).sum())
    data = data.dropna()
    notes = [f"{n_drop} row(s) with missing values dropped" if n_drop else ""]
    y = data[outcome].to_numpy(dtype=float)
    t = data[treatment].to_numpy(dtype=float)
    n, k = int(y.size), int(data[cluster].nunique())

    def nan_result(reason: str) -> GEEResult:
        nan = float("nan")
        return GEEResult(nan, nan, nan, nan, nan, nan, n, k, _join([*notes, reason]))

    if n == 0:
        return nan_result("no episodes")
    if not _is_binary(y):
        return nan_result(f"outcome {outcome!r} is not binary: logistic GEE not applicable")
    if not _is_binary(t):
        return nan_result(f"treatment {treatment!r} must be coded 0/1")
    if k < 2:
        return nan_result(f"only {k} cluster ({cluster!r}): GEE needs at least 2 clusters")
    if np.all(t == t[0]):
        return nan_result("treatment does not vary: effect not estimable")
    if np.all(y == y[0]):
        return nan_result(f"outcome is constant (all {'successes' if y[0] == 1 else 'failures'}): "
                          "logistic GEE undefined")
    for arm, label in ((1.0, "treated"), (0.0, "control")):
        ya = y[t == arm]
        if np.all(ya == ya[0]):
            return nan_result(f"outcome constant in the {label} arm (all "
                              f"{'successes' if ya[0] == 1 else 'failures'}): separation, "
                              "odds ratio not estimable")
    exog = sm.add_constant(data[[treatment, *covariates]].astype(float), has_constant="add")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with np.errstate(all="ignore"):
                model = sm.GEE(y, exog, groups=data[cluster].to_numpy(), family=sm.families.Binomial(),
                               cov_struct=sm.cov_struct.Exchangeable())
                fit = model.fit()
                ci = fit.conf_int(alpha=1 - confidence_level)
    except Exception as exc:  # statsmodels raises a variety of linear-algebra errors
        return nan_result(f"GEE fit failed: {type(exc).__name__}: {exc}")
    if any(issubclass(w.category, ConvergenceWarning) for w in caught):
        notes.append("GEE did not converge: estimates unreliable")
    if k < min_clusters_warn:
        notes.append(f"only {k} clusters: robust SEs may be anti-conservative")
    coef = float(fit.params[treatment])
    lo, hi = (float(v) for v in np.asarray(ci.loc[treatment]))
    return GEEResult(coef, float(fit.bse[treatment]), float(np.exp(coef)), float(np.exp(lo)),
                     float(np.exp(hi)), float(fit.pvalues[treatment]), n, k, _join(notes))


# --------------------------------------------------------------------------- #
# multiplicity
# --------------------------------------------------------------------------- #
def holm_adjust(p_values: Sequence[float] | np.ndarray | pd.Series) -> np.ndarray:
    """Holm step-down adjusted p-values, equal to statsmodels ``multipletests(method="holm")``
    (tested); computed directly because multipletests runs ``gc.collect()`` on every call.

    NaN p-values are left out of the family and stay NaN.
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if ok.any():
        q = p[ok]
        m = q.size
        order = np.argsort(q, kind="mergesort")
        stepped = np.maximum.accumulate((m - np.arange(m)) * q[order])
        adj = np.empty(m)
        adj[order] = np.minimum(stepped, 1.0)
        out[ok] = adj
    return out


# --------------------------------------------------------------------------- #
# matched pairs and the one-call comparison table
# --------------------------------------------------------------------------- #
def paired_table(
    df: pd.DataFrame,
    condition_col: str,
    outcome: str,
    a: Hashable,
    b: Hashable,
    pair_col: str | Sequence[str] = "task_id",
) -> pd.DataFrame:
    """Match conditions ``a`` and ``b`` on ``pair_col`` (e.g. task id, or [task id, seed]).

    Returns one row per pair present under both conditions with the mean
    outcome under ``a`` and ``b`` (columns ``a``, ``b``), the episode counts
    ``n_a``/``n_b`` and ``diff = a - b``.  Pairs missing either condition are
    dropped; ``.attrs["n_unmatched"]`` counts them.
    """
    keys = [pair_col] if isinstance(pair_col, str) else list(pair_col)
    require_columns(df, [condition_col, outcome, *keys])
    sub = df.loc[df[condition_col].isin([a, b]) & df[outcome].notna(), [*keys, condition_col, outcome]]
    sub = sub.assign(_y=sub[outcome].astype(float), _a=sub[condition_col] == a)
    grouped = sub.groupby([*keys, "_a"], observed=True, sort=True)["_y"].agg(["mean", "size"])
    wide = grouped.unstack("_a")
    for flag in (True, False):
        if ("mean", flag) not in wide.columns:
            wide[("mean", flag)] = np.nan
            wide[("size", flag)] = np.nan
    out = pd.DataFrame({
        "a": wide[("mean", True)], "b": wide[("mean", False)],
        "n_a": wide[("size", True)], "n_b": wide[("size", False)],
    })
    matched = out.dropna(subset=["a", "b"]).copy()
    matched["n_a"] = matched["n_a"].astype(int)
    matched["n_b"] = matched["n_b"].astype(int)
    matched["diff"] = matched["a"] - matched["b"]
    matched.attrs["n_unmatched"] = int(len(out) - len(matched))
    return matched


_COLUMNS = ["contrast", "outcome", "estimand", "estimate", "ci_low", "ci_high", "test",
            "p_value", "p_adjusted", "n", "note"]


def compare(
    df: pd.DataFrame,
    condition_col: str,
    outcome: str | Sequence[str],
    pair_col: str | Sequence[str] = "task_id",
    contrasts: Sequence[tuple[Hashable, Hashable]] | None = None,
    tests: Sequence[str] = TESTS,
    *,
    cluster_col: str | None = None,
    ci_method: CIMethod = "percentile",
    n_resamples: int = 10_000,
    n_permutations: int = 10_000,
    exact_max_n: int = 16,
    confidence_level: float = 0.95,
    seed: SeedLike = 0,
    holm_family: Sequence[str] | None = ("outcome", "test"),
) -> pd.DataFrame:
    """Tidy table of paired condition contrasts, one row per contrast x outcome x test.

    For each contrast ``(a, b)`` the estimate is ``a - b``; ``contrasts=None``
    compares every pair of conditions in order of appearance.  Tests:

    - ``"sign_flip"``: mean paired difference over matched ``pair_col`` units
      (per-unit mean outcome), paired-bootstrap CI (``ci_method``), sign-flip
      permutation p (DynaHMRC appendix paired comparison).
    - ``"wilcoxon"``: Hodges-Lehmann pseudomedian of the differences, no CI,
      Wilcoxon signed-rank p.
    - ``"mcnemar"``: difference in paired success proportions, paired-bootstrap
      CI, McNemar p (needs one binary outcome per pair and condition).
    - ``"gee"``: odds ratio a vs b from a logistic GEE over all episodes of the
      two conditions, clustered by ``cluster_col`` (default: ``pair_col`` or its
      first element), exchangeable correlation, Wald CI.

    ``n`` is the number of matched pairs (GEE: episodes).  ``p_adjusted`` is
    Holm-adjusted within each ``holm_family`` group (default: the contrasts
    sharing an outcome and a test; ``None`` = the whole table).  Returned
    columns: contrast, outcome, estimand, estimate, ci_low, ci_high, test,
    p_value, p_adjusted, n, note.
    """
    outcomes = [outcome] if isinstance(outcome, str) else list(outcome)
    keys = [pair_col] if isinstance(pair_col, str) else list(pair_col)
    cluster = cluster_col if cluster_col is not None else keys[0]
    require_columns(df, [condition_col, *outcomes, *keys, cluster])
    unknown = [t for t in tests if t not in TESTS]
    if unknown:
        raise ValueError(f"unknown test(s) {unknown}; choose from {list(TESTS)}")
    if contrasts is None:
        levels = list(pd.unique(df[condition_col].dropna()))
        contrasts = [(levels[i], levels[j]) for i in range(len(levels)) for j in range(i + 1, len(levels))]
    present = set(pd.unique(df[condition_col].dropna()))
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)

    rows: list[dict[str, Any]] = []
    for a, b in contrasts:
        label = f"{a} vs {b}"
        absent = [c for c in (a, b) if c not in present]
        for out in outcomes:
            def row(test: str, estimand: str, estimate: float = float("nan"), lo: float = float("nan"),
                    hi: float = float("nan"), p: float = float("nan"), n: int = 0, note: str = "") -> None:
                rows.append(dict(contrast=label, outcome=out, estimand=estimand, estimate=estimate,
                                 ci_low=lo, ci_high=hi, test=test, p_value=p, p_adjusted=float("nan"),
                                 n=n, note=note))

            if absent:
                for test in tests:
                    row(test, "", note=f"condition(s) {absent} not present in {condition_col!r}")
                continue
            pairs = paired_table(df, condition_col, out, a, b, keys)
            n_pairs = len(pairs)
            base_note = (f"{pairs.attrs['n_unmatched']} unit(s) lacking one condition dropped"
                         if pairs.attrs["n_unmatched"] else "")
            boot: BootstrapCI | None = None
            if {"sign_flip", "mcnemar"} & set(tests):
                boot = paired_bootstrap_ci(pairs["a"], pairs["b"], method=ci_method, n_resamples=n_resamples,
                                           confidence_level=confidence_level, seed=rng)
            for test in tests:
                if test == "sign_flip":
                    assert boot is not None
                    res = sign_flip_test(pairs["diff"], n_resamples=n_permutations, exact_max_n=exact_max_n,
                                         seed=rng)
                    row(test, f"mean paired difference {a} - {b}", boot.estimate, boot.ci_low, boot.ci_high,
                        res.p_value, n_pairs, _join([base_note, res.method, f"CI: paired bootstrap {ci_method}",
                                                     res.note, boot.note]))
                elif test == "wilcoxon":
                    res = wilcoxon_test(pairs["diff"])
                    row(test, f"Hodges-Lehmann pseudomedian {a} - {b}", hodges_lehmann(pairs["diff"]),
                        p=res.p_value, n=n_pairs, note=_join([base_note, res.note]))
                elif test == "mcnemar":
                    assert boot is not None
                    res = mcnemar_test(pairs["a"], pairs["b"])
                    binary = _is_binary(pairs["a"].to_numpy()) and _is_binary(pairs["b"].to_numpy())
                    row(test, f"difference in paired success proportion {a} - {b}",
                        boot.estimate if binary else float("nan"),
                        boot.ci_low if binary else float("nan"), boot.ci_high if binary else float("nan"),
                        res.p_value, n_pairs, _join([base_note, res.method, res.note]))
                elif test == "gee":
                    sub = df.loc[df[condition_col].isin([a, b])]
                    sub = sub.assign(_treat=(sub[condition_col] == a).astype(float))
                    g = gee_logistic(sub, "_treat", out, cluster, confidence_level=confidence_level)
                    row(test, f"odds ratio {a} vs {b} (logistic GEE, clustered by {cluster})",
                        g.odds_ratio, g.ci_low, g.ci_high, g.p_value, g.n_episodes,
                        _join([f"{g.n_clusters} clusters", g.note]))
    table = pd.DataFrame(rows, columns=_COLUMNS)
    if len(table):
        if holm_family:
            for _, idx in table.groupby(list(holm_family), sort=False).groups.items():
                table.loc[idx, "p_adjusted"] = holm_adjust(table.loc[idx, "p_value"])
        else:
            table["p_adjusted"] = holm_adjust(table["p_value"])
    return table


# --------------------------------------------------------------------------- #
# display: one row per contrast and outcome
# --------------------------------------------------------------------------- #
#: Plain names of the outcomes the notebooks compare.
OUTCOME_NAMES: dict[str, str] = {"success": "success rate", "cr": "completion rate"}
#: Outcomes that are shares (0-1): their differences are shown in percentage points.
RATE_OUTCOMES: frozenset[str] = frozenset({"success", "cr"})
_TEST_P = {"sign_flip": "p_sign_flip", "wilcoxon": "p_wilcoxon", "mcnemar": "p_mcnemar", "gee": "p_gee"}

#: How :func:`contrast_table` is shown: differences and odds ratios in their own columns with
#: their 95% CIs, Holm-adjusted p-values (raw ones in the CSV), smallest sign-flip p first.
CONTRAST_STYLE = TableStyle(
    rename={"contrast": "contrast (a vs b)", "n": "pairs", "difference": "difference a − b",
            "odds_ratio": "odds ratio a vs b (GEE)", "p_sign_flip": "p sign-flip",
            "p_wilcoxon": "p Wilcoxon", "p_mcnemar": "p McNemar", "p_gee": "p GEE"},
    labels=("contrast", "outcome"),
    drop=tuple(f"{p}_raw" for p in _TEST_P.values()),
    order="p_sign_flip", max_rows=12,
    caption="differences: mean paired difference with a paired-bootstrap 95% CI, in percentage points for "
            "rates; odds ratio: logistic GEE clustered by task, Wald 95% CI; p-values Holm-adjusted per "
            "outcome and test")


def contrast_table(comparisons: pd.DataFrame) -> pd.DataFrame:
    """:func:`compare`'s long table (one row per contrast x outcome x test) as one row per contrast
    and outcome: the sign-flip mean difference (x100, percentage points, for :data:`RATE_OUTCOMES`)
    with its CI, the odds ratio (GEE) with its CI in a column of its own, each test's Holm-adjusted
    p (``p_<test>``) and raw p (``p_<test>_raw``). Numbers are :func:`compare`'s (DynaHMRC appendix,
    paired comparison)."""
    require_columns(comparisons, ["contrast", "outcome", "test", "estimate", "ci_low", "ci_high",
                                  "p_value", "p_adjusted", "n"])
    rows = []
    for (contrast, outcome), part in comparisons.groupby(["contrast", "outcome"], sort=False):
        by_test = {r["test"]: r for r in part.to_dict("records")}
        k = 100.0 if outcome in RATE_OUTCOMES else 1.0
        row: dict[str, Any] = {"contrast": contrast, "outcome": OUTCOME_NAMES.get(str(outcome), str(outcome)),
                               "n": int(by_test.get("sign_flip", part.iloc[0])["n"])}
        if "sign_flip" in by_test:
            r = by_test["sign_flip"]
            row.update(difference=r["estimate"] * k, difference_low=r["ci_low"] * k,
                       difference_high=r["ci_high"] * k)
        if "gee" in by_test:
            r = by_test["gee"]
            row.update(odds_ratio=r["estimate"], odds_ratio_low=r["ci_low"], odds_ratio_high=r["ci_high"])
        for test, col in _TEST_P.items():
            if test in by_test:
                row[col], row[f"{col}_raw"] = by_test[test]["p_adjusted"], by_test[test]["p_value"]
        rows.append(row)
    return pd.DataFrame(rows)
