"""Sentences about a run, written from its result tables: the shared shape (every study).

A :class:`Finding` is a sentence whose wording depends on the numbers, the numbers it quotes
(each a :class:`Quote` naming the table cell it came from) and whether the run shows the paper's
effect (``shown``: True, False, or None when the run cannot tell). A :class:`Report` gathers a
notebook's tables and findings by section; a notebook displays ``report.show(section)`` and
nothing else interprets results. Each study writes its own finding functions over its tables
(``studies/<study>/findings.py``) with :func:`quote` and these classes; ``tests/test_findings.py``
checks that every quoted number equals its cell.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import pandas as pd

__all__ = ["OFFLINE_BACKENDS", "Finding", "Quote", "Report", "backend_of", "lead", "quote", "select_rows"]

#: Backend labels whose numbers come from offline policies, not models.
OFFLINE_BACKENDS = frozenset({"heuristic", "oracle", "replay"})


@dataclass(frozen=True)
class Quote:
    """One number a sentence quotes: the table it came from, the row (``where``), the column, the
    value, its printed form (which appears verbatim in the sentence) and the format that printed it."""

    table: str
    where: tuple[tuple[str, Any], ...]
    column: str
    value: float
    text: str
    fmt: str = "{:.2f}"

    @property
    def shown_value(self) -> float:
        """The value as printed, on the table's scale (what comparisons use)."""
        v = float(self.text.replace("%", "").replace("+", "").replace("pp", "").strip())
        return v / 100 if "%}" in self.fmt else v


@dataclass(frozen=True)
class Finding:
    """A sentence about a run, the paper claim it checks, and the numbers it quotes."""

    claim: str
    text: str
    shown: bool | None
    quotes: tuple[Quote, ...] = ()

    def __str__(self) -> str:
        return self.text

    def _repr_markdown_(self) -> str:
        return self.text


@dataclass
class Report:
    """A notebook's result tables (by name) and findings (by section), all from one run."""

    backend: str
    n_episodes: int
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    sections: dict[str, list[Finding]] = field(default_factory=dict)
    unit: str = "episodes"  # what n_episodes counts, as the header says it

    def findings(self, *sections: str) -> list[Finding]:
        """The findings of ``sections`` (every section when none is named)."""
        for name in sections:
            if name not in self.sections:
                raise KeyError(f"section: {name!r} is not in this report; allowed: {', '.join(self.sections)}")
        return [f for name, fs in self.sections.items() if not sections or name in sections for f in fs]

    def header(self) -> str:
        """Which backend produced the numbers, and what they are (no claim about results)."""
        kinds = {b.split(":")[0] for b in self.backend.split(",")}
        what = ("the offline policies show how the mechanisms behave; these are not findings about LLMs"
                if kinds <= OFFLINE_BACKENDS else "model endpoints")
        return (f"Written from this run's tables: {self.n_episodes} {self.unit}, backend **{self.backend}** ({what}). "
                "Numbers are point estimates; the paired tests in the analysis tail give their uncertainty.")

    def markdown(self, *sections: str) -> str:
        """The findings of ``sections`` as a Markdown list; with no section named, all of them under
        the header."""
        items = "\n".join(f"- {f.text}" for f in self.findings(*sections)) or "- (no finding for this section)"
        return items if sections else f"{self.header()}\n\n{items}"

    def show(self, *sections: str) -> Any:
        """IPython Markdown of :meth:`markdown` (what a notebook cell displays)."""
        from IPython.display import Markdown

        return Markdown(self.markdown(*sections))

    def table(self, name: str, digits: int = 3) -> pd.DataFrame:
        """A result table for display (rounded); the findings quote the unrounded table."""
        return self.tables[name].round(digits)



def backend_of(*tables: pd.DataFrame | None) -> str:
    """The backend label(s) of the tables' ``backend`` columns ("unknown" without one)."""
    labels = sorted({b for t in tables if t is not None and "backend" in t.columns
                     for v in t["backend"].dropna().astype(str) for b in v.split(",")})
    return ",".join(labels) or "unknown"



def lead(backend: str, sentence: str) -> str:
    """A finding's text: the backend label in bold, then the sentence (every finding starts so)."""
    return f"**{backend}**: {sentence}"


def select_rows(t: pd.DataFrame, where: Mapping[str, Any]) -> pd.DataFrame:
    """The rows of ``t`` where every column of ``where`` equals its value."""
    sel = t
    for k, v in where.items():
        sel = sel[sel[k] == v]
    return sel



def quote(t: pd.DataFrame | None, table: str, where: Mapping[str, Any], column: str,
          fmt: str = "{:.2f}") -> Quote | None:
    """The cell of ``t`` at the one row matching ``where`` in ``column``, or None when there is no
    such row or the value is missing (NaN); ValueError when ``where`` matches several rows."""
    if t is None or column not in t.columns or any(k not in t.columns for k in where):
        return None
    rows = select_rows(t, where)
    if len(rows) > 1:
        raise ValueError(f"{table}: {dict(where)} matches {len(rows)} rows; name the row fully")
    if not len(rows) or pd.isna(rows[column].iloc[0]):
        return None
    v = float(rows[column].iloc[0])
    if math.isinf(v):
        return None
    return Quote(table, tuple(where.items()), column, v, fmt.format(v), fmt)
