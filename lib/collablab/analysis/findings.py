"""Sentences about a run, written from its result tables: the shared shape (every study).

A :class:`Finding` is a sentence whose wording depends on the numbers, the numbers it quotes
(each a :class:`Quote` naming the table cell it came from) and whether the run shows the paper's
effect (``shown``: True, False, or None when the run cannot tell). A :class:`Report` gathers a
notebook's tables and findings by section; a notebook displays ``report.show(section)`` and
nothing else interprets results. Each study writes its own finding functions over its tables
(``studies/<study>/findings.py``) with :func:`quote` and these classes; ``tests/test_findings.py``
checks that every quoted number equals its cell.

Written for people (issue 24): the backend is named once, in :meth:`Report.headline` (the cell
tagged ``headline`` after a notebook's setup: three to five main findings with their numbers and
intervals, and what the run does not show); "Reading the results" groups the findings by what the
run shows (:data:`GROUPS`); no generated sentence is longer than :data:`MAX_SENTENCE` characters.
:func:`verdict` is the shared rule for ``shown``: an interval on the paper's side of no effect
shows the effect; one on the other side, or one that rules out the paper's value while holding no
effect, does not; one that holds both no effect and the paper's value (or a cell with fewer than
``min_n`` units) is too few units to tell.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import pandas as pd

from .present import DisplayTable, TableStyle, present

__all__ = ["GROUPS", "MAX_SENTENCE", "OFFLINE_BACKENDS", "Finding", "Quote", "Report", "backend_of", "quote",
           "select_rows", "verdict"]

#: Backend labels whose numbers come from offline policies, not models.
OFFLINE_BACKENDS = frozenset({"heuristic", "oracle", "replay"})
#: No generated sentence is longer (characters; tests/test_notebook_reading.py checks every notebook).
MAX_SENTENCE = 300
#: "Reading the results" headings, by ``Finding.shown``.
GROUPS = {True: "As in the paper", False: "Not shown by this run", None: "Too few units to tell, or not checked"}


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
    styles: dict[str, TableStyle] = field(default_factory=dict)  # how each table is displayed
    run_dir: Any = None  # where :meth:`table` writes each displayed table's full CSV
    headlines: list[Finding] = field(default_factory=list)  # the three to five main findings
    limits: list[str] = field(default_factory=list)  # what this run does not show (sentences)
    agents: str = ""  # how the model agents ran (a sentence; e.g. MECoBench's agent pipeline), said with the backend

    def findings(self, *sections: str) -> list[Finding]:
        """The findings of ``sections`` (every section when none is named)."""
        for name in sections:
            if name not in self.sections:
                raise KeyError(f"section: {name!r} is not in this report; allowed: {', '.join(self.sections)}")
        return [f for name, fs in self.sections.items() if not sections or name in sections for f in fs]

    def backend_line(self) -> str:
        """Which backend produced the numbers and what they are (said once per notebook)."""
        kinds = {b.split(":")[0] for b in self.backend.split(",")}
        what = ("offline policies: the numbers show how the mechanisms behave and are not findings about LLMs"
                if kinds <= OFFLINE_BACKENDS else "model endpoints")
        return f"{self.n_episodes} {self.unit}, backend **{self.backend}** ({what})." + (f" {self.agents}" if self.agents else "")

    def header(self) -> str:
        """The backend line and what the numbers are (no claim about results)."""
        return (f"Written from this run's tables: {self.backend_line()} "
                "Intervals are 95%; the analysis tail tests the main contrasts.")

    def headline(self) -> Any:
        """IPython Markdown of :meth:`headline_markdown` (the notebook's ``headline`` cell)."""
        from IPython.display import Markdown

        return Markdown(self.headline_markdown())

    def headline_markdown(self) -> str:
        """The run's main findings (``headlines``), numbered, under the backend line, then what the
        run does not show (``limits``)."""
        items = "\n".join(f"{i}. {f.text}" for i, f in enumerate(self.headlines, 1)) or "1. (no finding)"
        limits = " ".join(self.limits)
        return (f"**This run**: {self.backend_line()}\n\n{items}"
                + (f"\n\n**What this run does not show.** {limits}" if limits else ""))

    def markdown(self, *sections: str) -> str:
        """The findings of ``sections`` as a Markdown list; with no section named, all of them under
        the header, grouped by :data:`GROUPS`."""
        if sections:
            return "\n".join(f"- {f.text}" for f in self.findings(*sections)) or "- (no finding for this section)"
        parts = [self.header()]
        for shown, title in GROUPS.items():
            fs = [f for f in self.findings() if f.shown is shown]
            if fs:
                parts.append(f"**{title}**\n\n" + "\n".join(f"- {f.text}" for f in fs))
        return "\n\n".join(parts)

    def show(self, *sections: str) -> Any:
        """IPython Markdown of :meth:`markdown` (what a notebook cell displays)."""
        from IPython.display import Markdown

        return Markdown(self.markdown(*sections))

    def table(self, name: str, style: TableStyle | None = None) -> DisplayTable:
        """A result table formatted for reading (:func:`~.present.present` with the table's style);
        its full CSV goes to the run folder. The findings quote the unformatted ``tables[name]``."""
        return present(self.tables[name], name, style or self.styles.get(name), self.run_dir)


def backend_of(*tables: pd.DataFrame | None) -> str:
    """The backend label(s) of the tables' ``backend`` columns ("unknown" without one)."""
    labels = sorted({b for t in tables if t is not None and "backend" in t.columns
                     for v in t["backend"].dropna().astype(str) for b in v.split(",")})
    return ",".join(labels) or "unknown"



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


def verdict(low: float, high: float, paper_sign: int, paper_value: float | None = None,
            n: int | None = None, min_n: int = 10) -> bool | None:
    """Whether an interval of an effect shows the paper's effect (``paper_sign`` +1 or -1): True
    when it lies on the paper's side of 0, False when it lies on the other side or holds 0 but rules
    out ``paper_value``, None (too few units to tell) when it holds 0 and the paper's value (or 0
    and no paper value is known), when a bound is missing, or when ``n`` < ``min_n``."""
    if n is not None and n < min_n:
        return None
    if low is None or high is None or pd.isna(low) or pd.isna(high):
        return None
    if low > 0 or high < 0:
        return (low > 0) == (paper_sign > 0)
    if paper_value is not None and not (low <= paper_value <= high):
        return False
    return None
