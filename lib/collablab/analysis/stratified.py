"""Stratified (severity-adjusted) treatment effects.

MECoBench Appendix E.2, Tables 19-20 ("Correction Helps Recover from
Errors"): the effect of a binary treatment (correction) on outcomes (SR, CR)
is confounded by error severity (number of wrong grabs), so episodes are
stratified by severity (#WG = 1, 2, 3, 4+) and per-stratum differences are
averaged "using shared stratum weights for both groups".  The weights that
reproduce the published +2.4 SR / +3.5 CR points of Table 20 are the pooled
stratum shares ``w_s = (n_treated_s + n_control_s) / N`` (direct
standardisation to the combined analysed population); see
``tests/test_analysis_stratified.py``.

For binary outcomes the Mantel-Haenszel pooled odds ratio, its
Robins-Breslow-Greenland CI, the CMH test of OR = 1 and the Breslow-Day
homogeneity test come from ``statsmodels`` ``StratifiedTable``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from .significance import require_columns

__all__ = [
    "StratifiedResult",
    "mantel_haenszel",
    "stratified_effect",
    "stratified_effect_from_summary",
    "top_code",
]

Weighting = Literal["pooled", "treated", "control", "equal"]
Bins = Callable[[Any], Hashable] | Mapping[Any, Hashable] | Sequence[float] | None


def top_code(k: int, label: str | None = None) -> Callable[[Any], Any]:
    """Stratum labeller: values below ``k`` keep their value (as text), the rest are ``"k+"``.

    ``top_code(4)`` maps 1, 2, 3, 5 to ``"1"``, ``"2"``, ``"3"``, ``"4+"`` (Table 20's #WG strata).
    """
    top = label if label is not None else f"{k}+"

    def label_of(value: Any) -> Any:
        if value is None or pd.isna(value):
            return np.nan
        return top if value >= k else f"{value:g}"

    return label_of


@dataclass(frozen=True)
class StratifiedResult:
    """Per-stratum table, raw/adjusted effects and Mantel-Haenszel summaries.

    - ``table``: one row per stratum x group (stratum, group, n, outcome means,
      per-stratum ``delta_<outcome>`` = treated - control, stratum ``weight``, note).
    - ``effects``: one row per outcome (raw means and Δ over the analysed set,
      adjusted Δ = Σ_s w_s Δ_s, its normal-approximation SE and CI, note).
    - ``mantel_haenszel``: one row per binary outcome (pooled OR, CI, CMH p,
      Breslow-Day statistic and p, note).
    - ``weights``: weight per stratum (0 for strata excluded from the weights).
    """

    table: pd.DataFrame
    effects: pd.DataFrame
    mantel_haenszel: pd.DataFrame
    weights: pd.Series
    weighting: str
    notes: tuple[str, ...]

    def adjusted(self, outcome: str) -> float:
        """Adjusted Δ for ``outcome``."""
        return float(self.effects.set_index("outcome").loc[outcome, "adjusted_delta"])

    def raw(self, outcome: str) -> float:
        """Raw Δ (treated mean - control mean) for ``outcome``."""
        return float(self.effects.set_index("outcome").loc[outcome, "raw_delta"])


# --------------------------------------------------------------------------- #
# Mantel-Haenszel
# --------------------------------------------------------------------------- #
_MH_COLUMNS = ["outcome", "odds_ratio", "ci_low", "ci_high", "cmh_statistic", "p_value",
               "breslow_day_statistic", "breslow_day_p", "n_strata", "note"]


def mantel_haenszel(
    tables: Sequence[np.ndarray] | np.ndarray,
    *,
    confidence_level: float = 0.95,
    correction: bool = False,
) -> dict[str, Any]:
    """Mantel-Haenszel pooled OR over 2x2 tables ``[[treated_yes, treated_no], [control_yes, control_no]]``.

    Uses ``statsmodels.stats.contingency_tables.StratifiedTable``: pooled OR,
    its CI (Robins-Breslow-Greenland variance), CMH test of OR = 1
    (``correction`` = continuity correction) and the Breslow-Day test of
    homogeneous ORs (no Tarone adjustment).  Tables with an empty row are
    skipped; degenerate data (0/0 OR, e.g. all successes) give NaN with a note.
    """
    from statsmodels.stats.contingency_tables import StratifiedTable

    nan = float("nan")
    out: dict[str, Any] = dict(odds_ratio=nan, ci_low=nan, ci_high=nan, cmh_statistic=nan, p_value=nan,
                               breslow_day_statistic=nan, breslow_day_p=nan, n_strata=0, note="")
    arr = [np.asarray(t, dtype=float).reshape(2, 2) for t in tables]
    arr = [t for t in arr if t[0].sum() > 0 and t[1].sum() > 0]
    out["n_strata"] = len(arr)
    if not arr:
        out["note"] = "no stratum with both groups present: Mantel-Haenszel undefined"
        return out
    t3 = np.stack(arr, axis=2)
    a, b, c, d = t3[0, 0], t3[0, 1], t3[1, 0], t3[1, 1]
    n = t3.sum(axis=(0, 1))
    num, den = float(np.sum(a * d / n)), float(np.sum(b * c / n))
    notes: list[str] = []
    if num == 0 and den == 0:
        yes = t3[:, 0].sum()
        kind = ("all successes" if yes == t3.sum() else "all failures" if yes == 0
                else "no stratum has both outcomes in both groups")
        out["note"] = f"Mantel-Haenszel OR undefined (0/0; {kind})"
        return out
    st = StratifiedTable(t3)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if den == 0:
            out["odds_ratio"] = math.inf
            notes.append("pooled OR infinite (no treated-failure/control-success cells): CI undefined")
        elif num == 0:
            out["odds_ratio"] = 0.0
            notes.append("pooled OR is 0 (no treated-success/control-failure cells): CI undefined")
        else:
            out["odds_ratio"] = float(st.oddsratio_pooled)
            lo, hi = st.oddsratio_pooled_confint(alpha=1 - confidence_level)
            out["ci_low"], out["ci_high"] = float(lo), float(hi)
        try:
            res = st.test_null_odds(correction=correction)
            out["cmh_statistic"], out["p_value"] = float(res.statistic), float(res.pvalue)
        except Exception as exc:  # pragma: no cover - defensive
            notes.append(f"CMH test failed: {type(exc).__name__}")
        if not np.isfinite(out["p_value"]):
            out["p_value"] = nan
            notes.append("CMH test undefined (zero variance)")
        if len(arr) < 2:
            notes.append("Breslow-Day needs at least 2 strata")
        else:
            try:
                bd = st.test_equal_odds(adjust=False)
                out["breslow_day_statistic"], out["breslow_day_p"] = float(bd.statistic), float(bd.pvalue)
            except Exception as exc:
                notes.append(f"Breslow-Day failed: {type(exc).__name__}")
            if not np.isfinite(out["breslow_day_p"]):
                out["breslow_day_statistic"] = out["breslow_day_p"] = nan
                notes.append("Breslow-Day undefined (zero cells)")
    out["note"] = "; ".join(notes)
    return out


# --------------------------------------------------------------------------- #
# core: works on per-stratum cell summaries
# --------------------------------------------------------------------------- #
@dataclass
class _Cell:
    n: int
    mean: dict[str, float]
    var: dict[str, float]  # variance of one observation, NaN if unknown
    count: dict[str, float]  # number of "yes" for binary outcomes, NaN otherwise


def _weights_for(strata: list[Hashable], n_t: dict[Hashable, int], n_c: dict[Hashable, int],
                 usable: list[Hashable], weights: Weighting | Mapping[Hashable, float]) -> tuple[pd.Series, str]:
    if isinstance(weights, Mapping):
        missing = [s for s in usable if s not in weights]
        if missing:
            raise ValueError(f"custom weights lack stratum/strata {missing}; given: {list(weights)}")
        raw = {s: float(weights[s]) for s in usable}
        name = "custom weights (renormalised over usable strata)"
    elif weights == "pooled":
        raw = {s: float(n_t[s] + n_c[s]) for s in usable}
        name = "pooled stratum share w_s = (n_treated_s + n_control_s) / N"
    elif weights == "treated":
        raw = {s: float(n_t[s]) for s in usable}
        name = "treated-group stratum share (ATT-style)"
    elif weights == "control":
        raw = {s: float(n_c[s]) for s in usable}
        name = "control-group stratum share"
    elif weights == "equal":
        raw = {s: 1.0 for s in usable}
        name = "equal stratum weights"
    else:
        raise ValueError(f"weights must be 'pooled', 'treated', 'control', 'equal' or a mapping, got {weights!r}")
    total = sum(raw.values())
    w = pd.Series({s: (raw.get(s, 0.0) / total if total > 0 else 0.0) for s in strata}, dtype=float)
    return w, name


def _analyse(
    cells: dict[tuple[Hashable, str], _Cell],
    strata: list[Hashable],
    outcomes: list[str],
    binary: list[str],
    labels: tuple[str, str],
    weights: Weighting | Mapping[Hashable, float],
    confidence_level: float,
    mh_correction: bool,
    notes: list[str],
) -> StratifiedResult:
    empty = _Cell(0, {o: np.nan for o in outcomes}, {o: np.nan for o in outcomes}, {o: np.nan for o in outcomes})
    get = lambda s, g: cells.get((s, g), empty)  # noqa: E731
    n_t = {s: get(s, "treated").n for s in strata}
    n_c = {s: get(s, "control").n for s in strata}
    usable = [s for s in strata if n_t[s] > 0 and n_c[s] > 0]
    stratum_note: dict[Hashable, str] = {}
    for s in strata:
        if s not in usable:
            stratum_note[s] = (f"stratum {s!r} has n_treated={n_t[s]}, n_control={n_c[s]}: "
                               "Δ undefined, excluded from the weights")
            notes.append(stratum_note[s])
    w, weighting = _weights_for(strata, n_t, n_c, usable, weights)

    rows = []
    for s in strata:
        for g, label in zip(("treated", "control"), labels):
            cell = get(s, g)
            row: dict[str, Any] = {"stratum": s, "group": label, "n": cell.n}
            for o in outcomes:
                row[o] = cell.mean[o] if cell.n > 0 else np.nan
            for o in outcomes:
                row[f"delta_{o}"] = (get(s, "treated").mean[o] - get(s, "control").mean[o]
                                     if s in usable else np.nan)
            row["weight"] = float(w[s])
            row["note"] = stratum_note.get(s, "")
            rows.append(row)
    table = pd.DataFrame(rows, columns=["stratum", "group", "n", *outcomes,
                                        *[f"delta_{o}" for o in outcomes], "weight", "note"])

    z = float(stats.norm.ppf(0.5 + confidence_level / 2))
    eff_rows = []
    for o in outcomes:
        note = []
        tot_t, tot_c = sum(n_t.values()), sum(n_c.values())
        mt = sum(get(s, "treated").n * get(s, "treated").mean[o] for s in strata if n_t[s]) / tot_t if tot_t else np.nan
        mc = sum(get(s, "control").n * get(s, "control").mean[o] for s in strata if n_c[s]) / tot_c if tot_c else np.nan
        if usable:
            deltas = np.array([get(s, "treated").mean[o] - get(s, "control").mean[o] for s in usable])
            ws = w[usable].to_numpy()
            adj = float(np.sum(ws * deltas))
            var_terms = [get(s, "treated").var[o] / n_t[s] + get(s, "control").var[o] / n_c[s] for s in usable]
            se = float(math.sqrt(np.sum(ws**2 * np.asarray(var_terms)))) if np.all(np.isfinite(var_terms)) else np.nan
            if not np.isfinite(se):
                note.append("SE needs per-cell variances (unavailable or a cell has n=1)")
        else:
            adj, se = np.nan, np.nan
            note.append("no stratum has both groups: adjusted Δ undefined")
        if len(usable) < len(strata) and usable:
            note.append(f"{len(strata) - len(usable)} stratum/strata excluded from the weights")
        eff_rows.append(dict(outcome=o, treated_mean=mt, control_mean=mc, raw_delta=mt - mc, adjusted_delta=adj,
                             adjusted_se=se, ci_low=adj - z * se, ci_high=adj + z * se, n_treated=tot_t,
                             n_control=tot_c, n_strata_used=len(usable), weighting=weighting,
                             note="; ".join(note)))
    effects = pd.DataFrame(eff_rows)

    mh_rows = []
    for o in binary:
        tabs = []
        for s in usable:
            ct, cc = get(s, "treated"), get(s, "control")
            tabs.append(np.array([[ct.count[o], ct.n - ct.count[o]], [cc.count[o], cc.n - cc.count[o]]]))
        mh_rows.append({"outcome": o, **mantel_haenszel(tabs, confidence_level=confidence_level,
                                                        correction=mh_correction)})
    mh = pd.DataFrame(mh_rows, columns=_MH_COLUMNS)
    return StratifiedResult(table, effects, mh, w.rename("weight"), weighting, tuple(notes))


# --------------------------------------------------------------------------- #
# public entry points
# --------------------------------------------------------------------------- #
def _label_strata(values: pd.Series, bins: Bins, labels: Sequence[Hashable] | None) -> pd.Series:
    if bins is None:
        return values
    if callable(bins):
        return values.map(bins)
    if isinstance(bins, Mapping):
        return values.map(dict(bins))
    cut = pd.cut(values, bins=list(bins), right=False, labels=labels)
    return cut.astype(object).where(cut.notna(), np.nan)


def stratified_effect(
    df: pd.DataFrame,
    treatment: str,
    outcomes: str | Sequence[str],
    stratum: str,
    strata: Sequence[Hashable] | None = None,
    *,
    bins: Bins = None,
    labels: Sequence[Hashable] | None = None,
    treated: Any = True,
    weights: Weighting | Mapping[Hashable, float] = "pooled",
    group_labels: tuple[str, str] = ("treated", "control"),
    percent: bool = False,
    confidence_level: float = 0.95,
    mh_correction: bool = False,
) -> StratifiedResult:
    """Raw and severity-adjusted effect of a binary treatment (MECoBench App. E.2, Tables 19-20).

    Episodes (rows) are grouped by ``treatment == treated`` (treated) vs the
    rest (control) and by stratum label, obtained from column ``stratum``
    via ``bins``: ``None`` (raw values), a callable (e.g. ``top_code(4)`` for
    #WG strata 1, 2, 3, 4+), a mapping, or left-closed bin edges (with
    optional ``labels``).  ``strata`` selects and orders the strata; episodes
    in other strata (e.g. #WG = 0) are outside the analysed set.

    Raw Δ = treated mean - control mean over the analysed set.  Adjusted Δ =
    Σ_s w_s (treated mean_s - control mean_s) with shared weights; default
    ``"pooled"`` is w_s = (n_treated_s + n_control_s) / N, which reproduces
    Table 20.  Strata lacking either group get n=0 rows, NaN Δ and are
    excluded from the weights (noted).  SE of the adjusted Δ: normal
    approximation treating weights as fixed, Σ w_s² (s²_t/n_t + s²_c/n_c).
    Binary outcomes (0/1 values) also get a Mantel-Haenszel summary.
    ``percent`` reports means and Δ in percentage points.
    """
    outcome_list = [outcomes] if isinstance(outcomes, str) else list(outcomes)
    require_columns(df, [treatment, stratum, *outcome_list])
    notes: list[str] = []
    data = df[[treatment, stratum, *outcome_list]]
    n_missing = int(data.isna().any(axis=1).sum())
    if n_missing:
        notes.append(f"{n_missing} episode(s) with missing treatment/stratum/outcome dropped")
        data = data.dropna()
    levels = pd.unique(data[treatment])
    if len(levels) > 2:
        raise ValueError(f"treatment column {treatment!r} must be binary; found {len(levels)} values: "
                         f"{list(levels)[:10]}")
    label = _label_strata(data[stratum], bins, labels)
    if strata is None:
        observed = label.dropna()
        if pd.api.types.is_numeric_dtype(data[stratum]):
            order = data[stratum][observed.index].groupby(observed).min().sort_values()
            strata_list = list(order.index)
        else:
            strata_list = sorted(pd.unique(observed), key=str)
    else:
        strata_list = list(strata)
    inside = label.isin(strata_list)
    n_out = int((~inside).sum())
    if n_out:
        notes.append(f"{n_out} episode(s) outside the strata {strata_list} excluded from the analysed set")
    data, label = data[inside], label[inside]
    is_treated = (data[treatment] == treated).to_numpy()
    if len(levels) and not is_treated.any():
        notes.append(f"no episode has {treatment} == {treated!r}")
    binary = [o for o in outcome_list
              if len(data) and bool(data[o].astype(float).isin([0.0, 1.0]).all())]
    scale = 100.0 if percent else 1.0

    cells: dict[tuple[Hashable, str], _Cell] = {}
    group = np.where(is_treated, "treated", "control")
    for (s, g), part in data.groupby([label.to_numpy(), group], sort=False):
        vals = {o: part[o].astype(float).to_numpy() for o in outcome_list}
        n = len(part)
        cells[(s, g)] = _Cell(
            n=n,
            mean={o: float(v.mean()) * scale for o, v in vals.items()},
            var={o: (float(v.var(ddof=1)) * scale**2 if n > 1 else np.nan) for o, v in vals.items()},
            count={o: (float(v.sum()) if o in binary else np.nan) for o, v in vals.items()},
        )
    return _analyse(cells, strata_list, outcome_list, binary, group_labels, weights, confidence_level,
                    mh_correction, notes)


def stratified_effect_from_summary(
    summary: pd.DataFrame,
    outcomes: str | Sequence[str],
    *,
    treated: Hashable,
    stratum: str = "stratum",
    group: str = "group",
    n: str = "n",
    strata: Sequence[Hashable] | None = None,
    weights: Weighting | Mapping[Hashable, float] = "pooled",
    binary_outcomes: Sequence[str] = (),
    scale: float = 1.0,
    confidence_level: float = 0.95,
    mh_correction: bool = False,
) -> StratifiedResult:
    """Same analysis from published per-stratum summaries (e.g. MECoBench Table 20).

    ``summary`` has one row per stratum x group with the case count ``n``
    and outcome means (in any unit; Δ comes out in the same unit).  Rows with
    ``group == treated`` are the treated group, the other group value is the
    control.  ``binary_outcomes`` are rates (fraction × ``scale``, e.g.
    ``scale=100`` for SR in %): their event counts are reconstructed as
    round(rate / scale × n), enabling the Mantel-Haenszel summary and the
    binomial SE p(1-p)/n of the adjusted Δ.  Other outcomes get no SE.
    """
    outcome_list = [outcomes] if isinstance(outcomes, str) else list(outcomes)
    require_columns(summary, [stratum, group, n, *outcome_list])
    unknown = [o for o in binary_outcomes if o not in outcome_list]
    if unknown:
        raise ValueError(f"binary_outcomes {unknown} are not among outcomes {outcome_list}")
    groups = list(pd.unique(summary[group].dropna()))
    if treated not in groups:
        raise ValueError(f"treated group {treated!r} not found in column {group!r}; values: {groups}")
    others = [g for g in groups if g != treated]
    if len(others) > 1:
        raise ValueError(f"column {group!r} must hold two groups; found {groups}")
    labels = (str(treated), str(others[0]) if others else "control")
    if summary.duplicated([stratum, group]).any():
        raise ValueError(f"duplicate ({stratum!r}, {group!r}) rows in summary")
    strata_list = list(pd.unique(summary[stratum])) if strata is None else list(strata)
    cells: dict[tuple[Hashable, str], _Cell] = {}
    for _, r in summary.iterrows():
        if r[stratum] not in strata_list:
            continue
        k = int(r[n])
        mean, var, count = {}, {}, {}
        for o in outcome_list:
            m = float(r[o])
            mean[o] = m
            if o in binary_outcomes and k > 0 and np.isfinite(m):
                p = m / scale
                count[o] = float(round(p * k))
                var[o] = p * (1 - p) * scale**2
            else:
                count[o], var[o] = np.nan, np.nan
        cells[(r[stratum], "treated" if r[group] == treated else "control")] = _Cell(k, mean, var, count)
    return _analyse(cells, strata_list, outcome_list, list(binary_outcomes), labels, weights, confidence_level,
                    mh_correction, [])
