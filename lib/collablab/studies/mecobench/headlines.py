"""A MECoBench notebook's headline (issue 24): three to five main findings, each one sentence
stating a difference of two rates with its 95% interval and what it shows against the paper.

A :class:`Contrast` names two cells of a result table (an SR, or another rate with its interval or
its cases) and the paper's direction; :func:`contrast_table` computes every contrast's difference
in percentage points with Newcombe's interval (:func:`.tables.rate_difference`) and its verdict
(:func:`~collablab.analysis.findings.verdict`, too few units to tell under
:data:`.findings.MIN_UNITS` cases in a cell: the rule of :mod:`.findings`); :func:`headline_findings`
writes one sentence per row, quoting that table (the report's ``contrasts``), so that
``tests/test_findings.py`` checks every headline number against its cell. The section bullets list
each condition's SR; the headline gives the difference they add up to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import pandas as pd

from ...analysis.findings import Finding, quote, verdict
from .findings import MIN_UNITS, backend_of, cases_of, rate_cell
from .tables import rate_difference

__all__ = ["Contrast", "contrast_table", "headline_findings"]

#: The report table the headline sentences quote.
TABLE = "contrasts"
_PP = "{:+.0f}"


@dataclass(frozen=True)
class Contrast:
    """``col`` in table ``table`` at row ``a`` minus at row ``b`` (a rate), read as "``label``: SR
    +12 pp [+3, +21], so ``effect``, as in the paper (``ref``)"; ``sign`` is the paper's direction
    (+1: a above b)."""

    label: str
    table: str
    a: Mapping[str, Any]
    b: Mapping[str, Any]
    effect: str
    ref: str
    sign: int = 1
    col: str = "SR"
    where: Mapping[str, Any] = field(default_factory=dict)  # shared by a and b
    name: str = ""  # how the sentence names ``col`` (``col`` itself when empty)


def _row(tables: Mapping[str, pd.DataFrame], c: Contrast) -> dict[str, Any] | None:
    t = tables.get(c.table)
    if t is None:
        return None
    wa, wb = {**c.where, **c.a}, {**c.where, **c.b}
    if any(k not in t.columns for k in (*wa, *wb)):
        return None
    a, b = rate_cell(t, wa, c.col), rate_cell(t, wb, c.col)
    if a is None or b is None:
        return None
    d, low, high = rate_difference(a, b)
    counts = [n for n in (cases_of(t, wa), cases_of(t, wb)) if n is not None]
    n = min(counts) if counts else None
    return {"contrast": c.label, "metric": c.name or c.col, "difference": 100 * d, "difference_low": 100 * low,
            "difference_high": 100 * high, "fewest cases": n,
            "shown": verdict(low, high, c.sign, n=n, min_n=MIN_UNITS), "effect": c.effect, "ref": c.ref,
            "backend": backend_of(t)}


def contrast_table(tables: Mapping[str, pd.DataFrame], contrasts: list[Contrast]) -> pd.DataFrame:
    """One row per contrast whose two cells the run has: the difference in percentage points with
    its 95% interval (``difference_low``/``_high``), the fewest cases of the two cells, the verdict
    (``shown``), what the paper says (``effect``, ``ref``) and the backend."""
    rows = [r for c in contrasts if (r := _row(tables, c)) is not None]
    return pd.DataFrame(rows, columns=["contrast", "metric", "difference", "difference_low", "difference_high",
                                       "fewest cases", "shown", "effect", "ref", "backend"])


def _sentence(t: pd.DataFrame, label: str) -> Finding:
    w = {"contrast": label}
    d, lo, hi = (quote(t, TABLE, w, c, _PP) for c in ("difference", "difference_low", "difference_high"))
    r = t[t.contrast == label].iloc[0]
    shown = None if pd.isna(r["shown"]) else bool(r["shown"])
    head = f"{label}: {r['metric']} {d.text} pp [{lo.text}, {hi.text}]"
    if shown:
        text = f"{head}, so {r['effect']}, as in the paper ({r['ref']})."
    elif shown is False:
        text = f"{head}, so this run does not show that {r['effect']} ({r['ref']})."
    else:
        text = f"{head}: too few units to tell whether {r['effect']} ({r['ref']})."
    return Finding(f"{r['ref']}: {r['effect']}", text, shown, (d, lo, hi))


def headline_findings(t: pd.DataFrame, limit: int = 5) -> list[Finding]:
    """One sentence per row of a :func:`contrast_table` (at most ``limit``, in its order)."""
    return [_sentence(t, label) for label in list(t["contrast"])[:limit]]
