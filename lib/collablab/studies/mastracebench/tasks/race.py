"""OptionGen's items: the user's copy of RACE read into :class:`OptionGenItem` records
(mastracebench.txt §3, Table 1, appendix "OptionGen", Fig 8).

A RACE reading-comprehension item is an article, a question, four options and the answer letter.
The task (:mod:`.option_gen`) shows the MAS only the article and the question; the judge
(:mod:`.option_gen_judge`) scores a proposal against the reference options and the answer.

**Data.** RACE cannot be shipped with this project; :func:`load_race` reads the user's copy:
the original release (a tree of per-article ``.txt``/``.json`` files, e.g.
``RACE/test/{high,middle}/*.txt``, each ``{"id", "article", "questions", "options",
"answers"}``) or a Hugging Face export (JSONL, JSON, or parquet when pyarrow, or pandas with a
parquet engine, is installed) with fields ``example_id, article, question, options, answer``.
One item per question; item ids are ``<article stem>-q<k>`` (``k`` the question's index within
its article) in both layouts, so the two layouts of the same data give the same ids and the same
selection.

Decisions the paper leaves open (ours; tested in tests/test_mastracebench_optiongen.py):

- **Selection of n items** (235 in the paper): every item is ranked by the SHA-256 of
  ``"optiongen/<seed>/<item id>"`` and the first ``n`` are taken, in that order. The choice
  depends only on the seed and the ids (not on file order or layout); with fewer than ``n``
  items all are returned. Point the loader at ``RACE/test`` to draw from the test split.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "LETTERS",
    "RACE_ENV",
    "OptionGenItem",
    "load_race",
    "read_race",
    "select_items",
]

LETTERS = ("A", "B", "C", "D")
#: environment variable :func:`load_race` reads when no path is given
RACE_ENV = "MASTRACEBENCH_RACE"


@dataclass(frozen=True)
class OptionGenItem:
    """One RACE question (Fig 8): article, question, the four reference options and the answer
    letter. Reference options are for scoring only; the MAS never sees them."""

    id: str
    article: str
    question: str
    options: tuple[str, str, str, str]
    answer: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", tuple(self.options))
        if not isinstance(self.id, str) or not self.id:
            raise ValueError(f"id: a non-empty string, got {self.id!r}")
        for name in ("article", "question"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ValueError(f"{name}: a non-empty string (item {self.id})")
        if len(self.options) != 4 or not all(isinstance(o, str) for o in self.options):
            raise ValueError(f"options: exactly four strings (item {self.id}), got {list(self.options)!r}")
        if self.answer not in LETTERS:
            raise ValueError(f"answer: one of {', '.join(LETTERS)} (item {self.id}), got {self.answer!r}")

    @property
    def name(self) -> str:
        """The item id (the name backends key their draws on)."""
        return self.id

    @property
    def correct(self) -> str:
        """The reference correct option."""
        return self.options[LETTERS.index(self.answer)]

    @property
    def distractors(self) -> tuple[str, ...]:
        """The three reference distractors, in option order."""
        k = LETTERS.index(self.answer)
        return tuple(o for i, o in enumerate(self.options) if i != k)

    def fingerprint(self) -> str:
        """SHA-256 of the item's content (a rubric file checks it against the item)."""
        text = json.dumps([self.article, self.question, list(self.options), self.answer])
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (the HF export's fields plus ``id``)."""
        return {"id": self.id, "article": self.article, "question": self.question,
                "options": list(self.options), "answer": self.answer}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> OptionGenItem:
        """Inverse of :meth:`to_dict`; a missing field raises ``ValueError`` naming it."""
        for key in ("id", "article", "question", "options", "answer"):
            if key not in d:
                raise ValueError(f"{key}: missing from the OptionGen record")
        return cls(str(d["id"]), d["article"], d["question"], tuple(d["options"]), d["answer"])


_MISSING = ("RACE cannot be shipped with this project (its authors distribute it under their own "
            "terms), so OptionGen reads your copy. Download RACE from its authors "
            "(https://www.cs.cmu.edu/~glai1/data/race/) or export the Hugging Face dataset 'ehovy/race' "
            "to JSONL/parquet, then pass the directory or file, e.g. load_race('/data/RACE/test'), or set "
            f"${RACE_ENV}.")
_SUFFIXES = (".txt", ".json", ".jsonl", ".parquet")


def _where(file: Path, at: str) -> str:
    return f"{file}: {at}" if at else str(file)


def _text_field(value: Any, file: Path, at: str, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{_where(file, at)}: field '{field}' must be a non-empty string, got {value!r:.60}")
    return value


def _options_field(value: Any, file: Path, at: str, field: str = "options") -> tuple[str, ...]:
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise ValueError(f"{_where(file, at)}: field '{field}' must be a list of 4 strings, got {value!r:.60}")
    opts = list(value)  # parquet readers give arrays
    if len(opts) != 4 or not all(isinstance(o, str) for o in opts):
        raise ValueError(f"{_where(file, at)}: field '{field}' must be a list of 4 strings, got {opts!r:.80}")
    return tuple(opts)


def _answer_field(value: Any, file: Path, at: str, field: str = "answer") -> str:
    letter = value.strip().upper() if isinstance(value, str) else None
    if letter not in LETTERS:
        raise ValueError(f"{_where(file, at)}: field '{field}' must be one of {', '.join(LETTERS)}, got {value!r}")
    return letter


def _stem(value: Any) -> str:
    return Path(str(value)).stem or str(value)


def _from_article(d: Mapping[str, Any], file: Path) -> list[OptionGenItem]:
    """The original release's per-article record -> one item per question."""
    for key in ("article", "questions", "options", "answers"):
        if key not in d:
            raise ValueError(f"{file}: field '{key}' is missing (a RACE article file holds id, article, "
                             "questions, options, answers)")
    article = _text_field(d["article"], file, "", "article")
    qs, opts, ans = d["questions"], d["options"], d["answers"]
    for key, v in (("questions", qs), ("options", opts), ("answers", ans)):
        if not isinstance(v, list):
            raise ValueError(f"{file}: field '{key}' must be a list, got {type(v).__name__}")
    if not len(qs) == len(opts) == len(ans):
        raise ValueError(f"{file}: fields 'questions', 'options', 'answers' must have equal lengths, got "
                         f"{len(qs)}, {len(opts)}, {len(ans)}")
    stem = _stem(d.get("id") or file.name)
    out = []
    for k, (q, o, a) in enumerate(zip(qs, opts, ans)):
        at = f"question {k}"
        out.append(OptionGenItem(f"{stem}-q{k}", article, _text_field(q, file, at, "questions"),
                                 _options_field(o, file, at), _answer_field(a, file, at, "answers")))
    return out


def _from_rows(rows: Iterable[Any], file: Path, line_numbers: bool = False) -> list[OptionGenItem]:
    """HF-export rows (example_id, article, question, options, answer) -> one item per row."""
    out = []
    seen: dict[str, int] = {}
    for i, row in enumerate(rows):
        at = f"line {i + 1}" if line_numbers else f"row {i}"
        if not isinstance(row, Mapping):
            raise ValueError(f"{file}: {at}: a record must be a JSON object, got {type(row).__name__}")
        for key in ("example_id", "article", "question", "options", "answer"):
            if key not in row:
                raise ValueError(f"{file}: {at}: field '{key}' is missing (an HF RACE export has example_id, "
                                 "article, question, options, answer)")
        stem = _stem(row["example_id"])
        k = seen.get(stem, 0)
        seen[stem] = k + 1
        out.append(OptionGenItem(f"{stem}-q{k}", _text_field(row["article"], file, at, "article"),
                                 _text_field(row["question"], file, at, "question"),
                                 _options_field(row["options"], file, at), _answer_field(row["answer"], file, at)))
    return out


def _read_parquet(file: Path) -> list[Any]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        pq = None
    if pq is not None:
        return pq.read_table(file).to_pylist()
    try:
        import pandas as pd

        return pd.read_parquet(file).to_dict("records")
    except ImportError as e:
        raise ValueError(f"{file}: reading parquet needs pyarrow (pip install pyarrow) or pandas with a "
                         "parquet engine; or export the data as JSONL") from e


def _read_file(file: Path) -> list[OptionGenItem]:
    if file.suffix == ".parquet":
        return _from_rows(_read_parquet(file), file)
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{file}: not UTF-8 text ({e.reason})") from None
    if file.suffix == ".jsonl":
        rows = []
        for n, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise ValueError(f"{file}: line {n}: not JSON ({e.msg})") from None
        return _from_rows(rows, file, line_numbers=True)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{file}: not JSON ({e.msg} at line {e.lineno}); a RACE file holds one JSON object") from None
    if isinstance(data, Mapping) and "questions" in data:
        return _from_article(data, file)
    if isinstance(data, Mapping) and isinstance(data.get("data"), list):
        return _from_rows(data["data"], file)
    if isinstance(data, Mapping) and "question" in data:
        return _from_rows([data], file)
    if isinstance(data, list):
        return _from_rows(data, file)
    raise ValueError(f"{file}: neither a RACE article (field 'questions') nor HF rows (field 'question')")


def read_race(path: str | os.PathLike[str] | None = None) -> list[OptionGenItem]:
    """Every question of the user's RACE copy at ``path`` (or ``$MASTRACEBENCH_RACE``), in file
    order (files sorted by relative path). Layouts and ids: module docstring. A missing path
    raises ``FileNotFoundError`` saying how to point at RACE; bad content raises ``ValueError``
    naming the file and the field."""
    if path is None:
        path = os.environ.get(RACE_ENV) or None
    if path is None:
        raise FileNotFoundError(f"no RACE path given. {_MISSING}")
    root = Path(path).expanduser()
    if not root.exists():
        raise FileNotFoundError(f"{root}: no such file or directory. {_MISSING}")
    if root.is_dir():
        files = sorted((p for p in root.rglob("*") if p.is_file() and p.suffix in _SUFFIXES
                        and not any(part.startswith(".") for part in p.relative_to(root).parts)
                        and not p.name.lower().startswith(("readme", "license"))),
                       key=lambda p: p.relative_to(root).as_posix())
    else:
        if root.suffix not in _SUFFIXES:
            raise ValueError(f"{root}: not a RACE file (expected one of {', '.join(_SUFFIXES)} or a directory)")
        files = [root]
    items: list[OptionGenItem] = []
    ids: set[str] = set()
    for file in files:
        rel = file.relative_to(root).with_suffix("").as_posix() if root.is_dir() else file.stem
        for item in _read_file(file):
            if item.id in ids:  # the same article stem in two files: tell them apart by the file
                item = OptionGenItem(f"{item.id}@{rel}", item.article, item.question, item.options, item.answer)
            ids.add(item.id)
            items.append(item)
    if not items:
        raise ValueError(f"{root}: no RACE questions found (expected {', '.join(_SUFFIXES)} files). {_MISSING}")
    return items


def select_items(items: Sequence[OptionGenItem], n: int = 235, seed: int = 0) -> list[OptionGenItem]:
    """``n`` items ranked by SHA-256 of ``"optiongen/<seed>/<id>"`` (all of them if fewer)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n: a positive integer, got {n!r}")
    ranked = sorted(items, key=lambda it: hashlib.sha256(f"optiongen/{seed}/{it.id}".encode()).hexdigest())
    return ranked[:n]


def load_race(path: str | os.PathLike[str] | None = None, n: int = 235, seed: int = 0) -> list[OptionGenItem]:
    """OptionGen's instances (Table 1: 235): :func:`read_race` then :func:`select_items`."""
    return select_items(read_race(path), n, seed)
