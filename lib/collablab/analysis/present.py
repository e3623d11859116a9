"""Result tables for a reader's eyes: one formatting layer for every notebook (issue 24).

A study keeps its long, unrounded tables (what the findings quote and the tests check); a notebook
displays :func:`present` of one of them: a :class:`DisplayTable` whose cells are text.

- numbers: at most three decimals, fewer as values grow (one width per column: 0.012, 0.12, 1.23,
  12.3, 123), integers without decimals, thousands separated;
- rates (fractions, ``rates``) and percentages (already on 0-100, ``percents``) with a ``%``;
- p-values (``pvalues``, and every column named ``p``, ``p_*``, ``*_p``) as ``0.012`` or ``<0.001``;
- an estimate and its interval in one cell, ``0.62 [0.51, 0.72]`` (``intervals``, and every
  column ``c`` with ``c_low``/``c_high``, ``c_lo``/``c_hi`` or ``c_ci_low``/``c_ci_high``);
- no constant label column (text, or named in ``labels``; the ``backend`` column always): such
  constants go to the caption once; a result column stays even when all its rows agree;
- at most ``max_rows`` rows (the most important first, by ``order``) and at most
  :data:`MAX_COLUMNS` columns; the full table is written as CSV into the run folder and the
  caption names the file.

The HTML is written here, a plain table with inline styles (JupyterLab drops the ``<style>`` blocks
of an untrusted notebook's outputs, which is what pandas' Styler emits; inline styles survive there,
in nbconvert and in repository viewers), and a table of strings keeps the formatting testable
without a browser. The title (``TableStyle.caption``) sits above, the note (constants, rows shown,
the CSV) below; every cell stays on one line (``white-space: nowrap``); the headers may wrap.
"""

from __future__ import annotations

import math
import re
from html import escape
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["MAX_COLUMNS", "DisplayTable", "TableStyle", "fmt_interval", "fmt_number", "fmt_p", "fmt_rate",
           "number_decimals", "present"]

#: No displayed table is wider than this (issue 24: a table fits 1,200 px).
MAX_COLUMNS = 12
_P_NAME = re.compile(r"^(p|p_.*|.*_p|.*_pvalue|p_value.*)$")
_BOUNDS = (("_low", "_high"), ("_lo", "_hi"), ("_ci_low", "_ci_high"), ("_lower", "_upper"))
# Inline styles: JupyterLab sanitizes the HTML of an untrusted notebook's outputs (every executed
# notebook one has not signed) and drops <style> blocks, keeping style attributes.
_TABLE = "border-collapse: collapse; font-size: 12.5px; margin: 4px 0 2px 0;"
_TITLE = "font-weight: 600; margin: 6px 0 2px 0;"
_TH = "padding: 3px 8px; border-bottom: 1px solid #999; font-weight: 600; vertical-align: bottom;"
_TD = "padding: 2px 8px; white-space: nowrap;"
_NOTE = "font-size: 11.5px; color: #555; margin: 0 0 10px 0;"


@dataclass(frozen=True)
class TableStyle:
    """How one result table is shown: which columns are rates, percentages or p-values, which
    intervals merge into their estimate, plain names for columns, the label columns (left-aligned),
    and which rows matter most when the table is long (``order``: a column to sort by, ``-col`` for
    descending, ``|col|`` for largest magnitude first, or a function of the table); ``results`` are
    text columns that hold results (formatted already), kept even when every row agrees."""

    rates: Sequence[str] = ()
    percents: Sequence[str] = ()
    pvalues: Sequence[str] = ()
    intervals: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    rename: Mapping[str, str] = field(default_factory=dict)
    labels: Sequence[str] = ()
    drop: Sequence[str] = ()
    order: str | Callable[[pd.DataFrame], pd.DataFrame] | None = None
    max_rows: int = 15
    caption: str = ""
    results: Sequence[str] = ()


@dataclass
class DisplayTable:
    """A formatted table (``frame``: strings), the table it came from (``full``), its title (shown
    above), its note (constants, rows shown, the CSV; shown below) and the CSV file holding the full
    table (when a run folder was given)."""

    frame: pd.DataFrame
    full: pd.DataFrame
    title: str = ""
    note: str = ""
    csv_path: Path | None = None
    labels: tuple[str, ...] = ()

    @property
    def caption(self) -> str:
        """The title and the note in one line (what the text form prints)."""
        return " · ".join(x for x in (self.title, self.note) if x)

    def to_html(self) -> str:
        """The table as HTML with inline styles: the title above, one line per cell, label columns
        left-aligned and the others right-aligned, every other row shaded, the note below."""
        def align(c: Any) -> str:
            return "text-align: left;" if c in self.labels else "text-align: right;"

        head = "".join(f'<th style="{_TH} {align(c)}">{escape(str(c))}</th>' for c in self.frame.columns)
        rows = "".join(
            f'<tr style="background: {"#f5f5f5" if i % 2 else "transparent"};">'
            + "".join(f'<td style="{_TD} {align(c)}">{escape(str(v))}</td>' for c, v in zip(self.frame.columns, row))
            + "</tr>" for i, row in enumerate(self.frame.itertuples(index=False)))
        title = f'<div style="{_TITLE}">{escape(self.title)}</div>' if self.title else ""
        note = f'<div style="{_NOTE}">{escape(self.note)}</div>' if self.note else ""
        return (f'<div>{title}<table style="{_TABLE}"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'
                f"{note}</div>")

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        body = self.frame.to_string(index=False)
        return f"{body}\n{self.caption}" if self.caption else body


def fmt_p(p: float) -> str:
    """A p-value: ``<0.001`` below a thousandth, else three decimals."""
    if p is None or pd.isna(p):
        return "–"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _finite(values: Sequence[float]) -> list[float]:
    return [float(v) for v in values if v is not None and not pd.isna(v) and math.isfinite(float(v))]


def number_decimals(values: Sequence[float]) -> int:
    """Decimals for a column: none for integers, else by the largest magnitude: 3 below 0.1, 2 below 10,
    1 below 100, 0 from 100."""
    vals = _finite(values)
    if not vals or all(v.is_integer() for v in vals):
        return 0
    top = max(abs(v) for v in vals)
    return 0 if top >= 100 else 1 if top >= 10 else 2 if top >= 0.1 else 3


def _rate_decimals(values: Sequence[float]) -> int:
    """Decimals for percentages: none when every value is a whole percent, else one (62.5%)."""
    return 0 if all(round(v, 6).is_integer() for v in _finite(values)) else 1


def fmt_number(v: Any, decimals: int | None = None) -> str:
    """A number with ``decimals`` (default: from its magnitude), thousands separated; text as is."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA or v is pd.NaT:
        return "–"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if not isinstance(v, (int, float, np.integer, np.floating)):
        return str(v)
    f = float(v)
    if math.isinf(f):
        return "∞" if f > 0 else "−∞"
    d = number_decimals([f]) if decimals is None else decimals
    s = f"{f:,.{d}f}"
    return "0" if s.lstrip("-") == f"{0:.{d}f}" else s


def fmt_rate(v: Any, decimals: int | None = None, scale: float = 100.0) -> str:
    """A fraction (``scale`` 100) or a percentage (``scale`` 1) as ``62.5%``."""
    if v is None or pd.isna(v):
        return "–"
    d = _rate_decimals([float(v) * scale]) if decimals is None else decimals
    return f"{fmt_number(float(v) * scale, d)}%"


def fmt_interval(est: Any, low: Any, high: Any, decimals: int | None = None, scale: float | None = None) -> str:
    """``0.62 [0.51, 0.72]``; with ``scale`` (a rate) ``62.5% [51.0, 72.0]``; the estimate alone
    when the interval is missing."""
    if est is None or pd.isna(est):
        return "–"
    k = 1.0 if scale is None else scale
    if decimals is None:
        decimals = (number_decimals if scale is None else _rate_decimals)([float(est) * k])
    d = decimals
    head = fmt_number(float(est) * k, d) + ("%" if scale is not None else "")
    if low is None or high is None or pd.isna(low) or pd.isna(high):
        return head
    return f"{head} [{fmt_number(float(low) * k, d)}, {fmt_number(float(high) * k, d)}]"


def _intervals(t: pd.DataFrame, style: TableStyle) -> dict[str, tuple[str, str]]:
    found = dict(style.intervals)
    for c in t.columns:
        for lo, hi in _BOUNDS:
            if c not in found and f"{c}{lo}" in t.columns and f"{c}{hi}" in t.columns:
                found[c] = (f"{c}{lo}", f"{c}{hi}")
    return found


def _order(t: pd.DataFrame, order: str | Callable[[pd.DataFrame], pd.DataFrame] | None) -> tuple[pd.DataFrame, str]:
    if order is None:
        return t, "the first"
    if callable(order):
        return order(t), "the most important"
    if order.startswith("|") and order.endswith("|"):
        col = order[1:-1]
        key = t[col].abs().fillna(-1)
        return t.loc[key.sort_values(ascending=False, kind="stable").index], f"largest |{col}| first"
    col, desc = (order[1:], True) if order.startswith("-") else (order, False)
    return t.sort_values(col, ascending=not desc, na_position="last", kind="stable"), \
        f"{'largest' if desc else 'smallest'} {col} first"


def _constants(t: pd.DataFrame, labels: Sequence[str], results: Sequence[str] = ()) -> list[str]:
    """Label columns (text, or named in ``labels``) holding one value, and ``backend``: they go to the
    caption. A result column (numeric, or named in ``results``) stays even when every row has the same
    value (that is a result)."""
    if len(t) < 2:
        return ["backend"] if "backend" in t.columns else []
    return [c for c in t.columns if c not in results and t[c].astype(str).nunique(dropna=False) <= 1
            and (c == "backend" or c in labels or not pd.api.types.is_numeric_dtype(t[c])
                 or pd.api.types.is_bool_dtype(t[c]))]


def present(table: pd.DataFrame, name: str = "", style: TableStyle | None = None,
            run_dir: str | Path | None = None) -> DisplayTable:
    """``table`` formatted for display under ``style`` (see the module docstring); with ``run_dir``
    the full table is also written to ``<run_dir>/tables/<name>.csv`` and the caption names it."""
    style = style or TableStyle()
    t = table.reset_index() if not isinstance(table.index, pd.RangeIndex) else table.copy()
    if isinstance(t.columns, pd.MultiIndex):  # ("SR", "mean") -> "SR mean"
        t.columns = [" ".join(str(x) for x in c if str(x)) for c in t.columns]
    t = t.drop(columns=[c for c in style.drop if c in t.columns])
    csv_path = None
    if run_dir is not None and name:
        csv_path = Path(run_dir) / "tables" / f"{name}.csv"
        csv_path.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(csv_path, index=not isinstance(table.index, pd.RangeIndex))
    notes: list[str] = []
    consts = _constants(t, style.labels, style.results)
    shown_consts = [f"{style.rename.get(c, c)} {fmt_number(t[c].iloc[0])}" for c in consts if len(t) and not pd.isna(t[c].iloc[0])]
    n_rows = len(t)
    if n_rows > style.max_rows:  # ordered before the constants go: the order may name one
        t, how = _order(t, style.order)
        t = t.head(style.max_rows)
        notes.append(f"showing {style.max_rows} of {n_rows} rows ({how})")
    t = t.drop(columns=consts)
    intervals = _intervals(t, style)
    rates, percents = set(style.rates), set(style.percents)
    pvals = set(style.pvalues) | {c for c in t.columns if isinstance(c, str) and _P_NAME.match(c)}
    bounds = {b for lo_hi in intervals.values() for b in lo_hi}
    out: dict[str, list[str]] = {}
    for c in t.columns:
        if c in bounds and not any(c == e for e in intervals):
            continue
        col = t[c]
        if c in pvals:
            out[c] = [fmt_p(v) for v in col]
        elif c in intervals:
            lo, hi = intervals[c]
            scale = 100.0 if c in rates else 1.0 if c in percents else None
            k = scale or 1.0
            d = (number_decimals if scale is None else _rate_decimals)(
                [v for x in (col, t[lo], t[hi]) for v in pd.to_numeric(x, errors="coerce") * k])
            out[c] = [fmt_interval(e, a, b, d, scale) for e, a, b in zip(col, t[lo], t[hi])]
        elif pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
            if c in rates or c in percents:
                k = 100.0 if c in rates else 1.0
                out[c] = [fmt_rate(v, _rate_decimals(list(col * k)), k) for v in col]
            else:
                d = number_decimals(list(col))
                out[c] = [fmt_number(v, d) for v in col]
        else:
            out[c] = [fmt_number(v) for v in col]
    frame = pd.DataFrame(out).rename(columns=lambda c: style.rename.get(c, str(c)))
    if frame.shape[1] > MAX_COLUMNS:
        notes.append(f"{frame.shape[1] - MAX_COLUMNS} more columns in the CSV")
        frame = frame.iloc[:, :MAX_COLUMNS]
    if csv_path is not None:
        notes.append(f"full table: {_short(csv_path)}")
    note = " · ".join(x for x in [", ".join(shown_consts), *notes] if x)
    labels = tuple(style.rename.get(c, c) for c in style.labels) or tuple(
        c for c in frame.columns if frame[c].map(lambda s: not _numeric_text(s)).all())
    return DisplayTable(frame, table, style.caption, note, csv_path, labels)


def _numeric_text(s: str) -> bool:
    return bool(re.fullmatch(r"[−\-+<]?[\d,.]+%?( \[.*\])?|–|∞", s))


def _short(path: Path) -> str:
    """The CSV's path from the ``outputs`` folder down (where a reader finds it), else as given."""
    parts = path.parts
    return "/".join(parts[len(parts) - 1 - parts[::-1].index("outputs"):]) if "outputs" in parts else str(path)
