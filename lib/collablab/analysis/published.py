"""Published results as data (issue 25): each study keeps the tables its notebook reproduces,
transcribed from its paper, under ``studies/<study>/published/``.

The folder holds one long-format CSV per paper table (``table09.csv``: the model as the paper names
it, the condition columns the table varies, ``metric``, ``value``) and ``index.csv`` naming, for each
file, the paper, the table or figure, its caption, the section or page, the scale of its rates
(``fraction``: in [0, 1]; ``percent``: in [0, 100]; ``count``; ``ratio``: a non-negative multiple,
such as a token cost over a baseline; ``mixed`` when the table holds several kinds, which its notes
name per metric), and notes (cells that could not be placed, reconstructions
from the prose). :func:`load_published` reads and checks the folder; :func:`check_table` is the shape
every transcription test applies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

__all__ = ["INDEX_COLUMNS", "SCALES", "VERDICTS", "PublishedTable", "beside_published", "check_table", "load_published"]

#: The scales a transcribed table may be on.
SCALES = ("fraction", "percent", "count", "ratio", "mixed")
#: Where a published value lies against a run's interval (:func:`beside_published`).
VERDICTS = ("inside", "above", "below", "no interval", "no published row")
#: The columns of a study's ``published/index.csv``.
INDEX_COLUMNS = ("file", "paper", "table", "caption", "section", "scale", "notes")


@dataclass(frozen=True)
class PublishedTable:
    """One transcribed paper table: its rows and its ``index.csv`` entry."""

    name: str
    rows: pd.DataFrame
    paper: str
    table: str
    caption: str
    section: str
    scale: str
    notes: str

    @property
    def conditions(self) -> list[str]:
        """The columns the table varies (every column but ``model``, ``metric`` and ``value``)."""
        return [c for c in self.rows.columns if c not in ("model", "metric", "value")]


def check_table(rows: pd.DataFrame, name: str = "") -> None:
    """ValueError naming the file and the problem unless ``rows`` has ``model``, ``metric`` and a
    numeric ``value`` with no missing cell in them and no duplicated row key."""
    where = f"{name}: " if name else ""
    for col in ("model", "metric", "value"):
        if col not in rows.columns:
            raise ValueError(f"{where}no {col!r} column; columns are {', '.join(map(str, rows.columns))}")
    if not pd.api.types.is_numeric_dtype(rows["value"]):
        raise ValueError(f"{where}'value' is not numeric (first cell {rows['value'].iloc[0]!r})")
    if rows[["model", "metric", "value"]].isna().any().any():
        raise ValueError(f"{where}a model, metric or value cell is empty")
    key = [c for c in rows.columns if c != "value"]
    dup = rows[rows.duplicated(key, keep=False)]
    if len(dup):
        raise ValueError(f"{where}{len(dup)} rows share a key, first {dup.iloc[0][key].to_dict()}")


def load_published(folder: str | Path) -> dict[str, PublishedTable]:
    """Every table named in ``<folder>/index.csv``, by file stem, each checked by :func:`check_table`
    (a file the index names that is missing, or a CSV the index does not name, is a ValueError)."""
    folder = Path(folder)
    index = pd.read_csv(folder / "index.csv", dtype=str, keep_default_na=False)
    missing = [c for c in INDEX_COLUMNS if c not in index.columns]
    if missing:
        raise ValueError(f"{folder / 'index.csv'}: missing columns {', '.join(missing)}")
    named = set(index["file"])
    stray = sorted(p.name for p in folder.glob("*.csv") if p.name != "index.csv" and p.name not in named)
    if stray:
        raise ValueError(f"{folder}: {', '.join(stray)} not named in index.csv")
    out: dict[str, PublishedTable] = {}
    for row in index.itertuples(index=False):
        path = folder / row.file
        if not path.exists():
            raise ValueError(f"{folder / 'index.csv'} names {row.file}, which does not exist")
        rows = pd.read_csv(path)
        check_table(rows, row.file)
        if row.scale not in SCALES:
            raise ValueError(f"{row.file}: scale {row.scale!r}; allowed: {', '.join(SCALES)}")
        out[path.stem] = PublishedTable(path.stem, rows, row.paper, row.table, row.caption, row.section,
                                        row.scale, row.notes)
    return out


def beside_published(run: pd.DataFrame, published: pd.DataFrame, *, on: Sequence[str], metric: str | None, value: str,
                     low: str | None = None, high: str | None = None, scale: float = 1.0) -> pd.DataFrame:
    """Each row of ``run`` (keys ``on``, its estimate ``value`` and interval ``low``/``high``) with
    the published ``metric`` for the same keys (``published`` already narrowed to one model; its
    values divided by ``scale``, e.g. 100 for a percent table beside fractions) and a verdict from
    :data:`VERDICTS`: the published value ``inside`` the run's interval, ``above`` or ``below`` it.
    With ``metric`` None every metric is kept (``on`` then names ``metric``). Keys compare as text,
    so a team size read as 2 matches one read as "2"."""
    pub = published if metric is None else published[published["metric"] == metric]
    index = dict(zip(_keys(pub, on), pub["value"].astype(float) / scale))
    rows = []
    for key, (_, r) in zip(_keys(run, on), run.iterrows()):
        p = index.get(key)
        lo, hi = (r[low] if low else None), (r[high] if high else None)
        if p is None:
            verdict = "no published row"
        elif lo is None or hi is None or pd.isna(lo) or pd.isna(hi):
            verdict = "no interval"
        else:
            verdict = "inside" if lo <= p <= hi else "above" if p > hi else "below"
        rows.append({**{c: r[c] for c in on}, "run": r[value], "run_low": lo, "run_high": hi, "published": p,
                     "verdict": verdict})
    return pd.DataFrame(rows, columns=[*on, "run", "run_low", "run_high", "published", "verdict"])


def _keys(t: pd.DataFrame, on: Sequence[str]) -> list[tuple[str, ...]]:
    """The ``on`` values of each row as text, column by column (a row-wise read would turn 2 into 2.0)."""
    return list(zip(*(t[c].astype(str) for c in on))) if len(t) else []
