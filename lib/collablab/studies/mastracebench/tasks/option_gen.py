"""OptionGen (mastracebench.txt §3, Table 1, appendix "OptionGen", eq 10, Figs 8 and 12).

A RACE reading-comprehension item (article, question, four options, the answer letter) is
turned into an open generation task: the MAS sees only the article and the question and writes
one correct option and three distractors. Scoring is criterion-grounded: two rubrics are built
per instance from the four reference options and the answer (a correct-option rubric and a
distractor rubric), withheld from the MAS, and a judge gives s_cor and s_dis on 0-100 along six
anchored intervals each (:data:`CORRECT_ANCHORS`, :data:`DISTRACTOR_ANCHORS`); the proposal
score is S = (s_cor + s_dis) / 2 (eq 10).

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
- **Parser.** A JSON object with ``correct`` and ``distractors`` (aliases: ``correct_option``,
  ``correct_answer``, ``answer``; ``incorrect_options``, ``wrong_options``); also a RACE-style
  ``{"options": [4], "answer": "B"}``, or lines ``Correct: ...`` / ``Distractor 1: ...`` (or a
  ``Distractors:`` header followed by list items). The last readable object wins. Exactly three
  distractors are required (Fig 12 asks for a complete four-option set; two or four is a wrong
  format, ``Invalid``); an empty option is ``Invalid``; numbers are read as text; option labels
  such as ``"B. "`` or ``"(c) "`` are stripped. Duplicates (among the distractors or with the
  correct option) are kept: they are a quality defect that the judge scores (low s_dis), not an
  unreadable reply.
- **Canonical form** (voting, agreement, the judge's memo): each option NFKC-normalised,
  typographic quotes made plain, case-folded, whitespace collapsed, surrounding quotes and final
  ``.,;:!`` removed; the distractors sorted (a distractor *set*). The judge is shown this
  canonical text, so a score is a function of the canonical proposal: two proposals that vote
  together score alike, and the judge's prompt does not depend on which variant came first.
- **S* = 100**: the top of both anchored scales, which the reference option set reaches under
  the rule judge (and which a judge gives to an option set that fully meets both rubrics); an
  LLM judge's true maximum for an instance cannot be computed, so the scale top is used.
- **Rubrics** (:class:`Rubric`) are built before scoring by :class:`LLMRubricBuilder`
  (temperature 0, prompt :data:`RUBRIC_PROMPT_VERSION`) or by the deterministic
  :func:`offline_rubric`, and kept in a :class:`RubricCache` (optionally a JSON file; an entry
  built for a different item or by a different builder is an error, never silently reused).
- **LLM judge** (:class:`LLMJudge`): temperature 0, prompt :data:`PROMPT_VERSION` (article,
  question, both rubrics, the candidate; the reference options reach the judge only through the
  rubrics), reply ``{"correct_score": x, "distractor_score": y}``. An unreadable reply (no such
  object, or a score outside 0-100) is scored 0 and 0 without a retry, with the reason kept in
  the :class:`Verdict` (and logged): it is reproducible under replay, and a proposal that
  derails the judge (e.g. an injected instruction) gains nothing. A transport failure (server
  down, key, timeout) raises :class:`JudgeError` and is never scored.
- **Rule judge** (:class:`RuleJudge`, ``backend=heuristic``): lexical overlap rules (see
  :func:`rule_scores`) that land in the same six intervals: the reference set scores 100 and
  100; a correct option copied from a reference distractor scores 0-19; duplicate or paraphrased
  distractors score 20-59; an off-topic distractor 60-74.
- **Judge calls** are recorded apart from the MAS's cost:
  :meth:`OptionGenTask.take_scoring_calls` returns ``Call(kind="score_judge",
  role="score_judge", agent="judge-<digest>")`` records of the judge calls made since the last
  take (the digest is of the instance id and the canonical proposal, so ids do not depend on
  method or call order); the method's unit (methods.py) re-ids them under the unit and appends
  them to the trajectory, whose ``scorer`` field records the judge kind, model, prompt version
  and rubric source (:meth:`OptionGenTask.scorer_info`). Verdicts are memoised per (instance id,
  canonical proposal) for the task object's life, so an identical proposal costs one judge call
  in a whole run (it is recorded in the trajectory that first needed it). The rule judge reports
  word-count proxies (its prompt and reply), as the offline backend does for MAS calls. Rubric
  calls are preparation, not scoring of a unit: they are in the LLM cache and the rubric file,
  not in trajectories.
- **Which judge a run uses**: :func:`judge_for` (an LLM backend's client -> :class:`LLMJudge`
  with LLM rubrics; the heuristic backend -> :class:`RuleJudge` with offline rubrics).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import unicodedata
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..trajectory import Call
from .base import Invalid, is_invalid, json_values

__all__ = [
    "CORRECT_ANCHORS",
    "DISTRACTOR_ANCHORS",
    "JUDGE_TEMPERATURE",
    "LETTERS",
    "OFFLINE_RUBRIC_VERSION",
    "PROMPT_VERSION",
    "RACE_ENV",
    "RUBRIC_PROMPT_VERSION",
    "Judge",
    "JudgeError",
    "LLMJudge",
    "LLMRubricBuilder",
    "OptionGenItem",
    "OptionGenTask",
    "OptionSet",
    "Rubric",
    "RubricCache",
    "RuleJudge",
    "Verdict",
    "canonical_options",
    "judge_for",
    "judge_prompt",
    "load_race",
    "normalize_option",
    "offline_rubric",
    "option_gen_prompt",
    "option_gen_score",
    "parse_judge_reply",
    "parse_options",
    "read_race",
    "rubric_prompt",
    "rule_scores",
    "select_items",
]

log = logging.getLogger(__name__)

LETTERS = ("A", "B", "C", "D")
#: environment variable :func:`load_race` reads when no path is given
RACE_ENV = "MASTRACEBENCH_RACE"
#: the LLM judge's prompt version (recorded in every trajectory it scores)
PROMPT_VERSION = "optiongen-judge-v1"
#: the LLM rubric builder's prompt version
RUBRIC_PROMPT_VERSION = "optiongen-rubric-v1"
#: the offline rubric builder's version
OFFLINE_RUBRIC_VERSION = "optiongen-rubric-offline-v1"
#: the judge's (and the rubric builder's) temperature (appendix: 0, deterministic scores)
JUDGE_TEMPERATURE = 0.0

#: s_cor's six anchored intervals (lo, hi, what an option in it looks like), best first
CORRECT_ANCHORS: tuple[tuple[int, int, str], ...] = (
    (90, 100, "correct and complete: answers the question exactly as the article supports, with the "
              "key information of the rubric and none of its errors"),
    (75, 89, "correct: the right answer, but slightly imprecise, incomplete or with a minor unsupported detail"),
    (60, 74, "partly correct: captures the main point but misses key information or is vague"),
    (40, 59, "ambiguous: weakly supported by the article, could be read as right or as wrong"),
    (20, 39, "mostly wrong: related to the article but not the answer it supports"),
    (0, 19, "wrong: contradicts the article, restates a wrong option, is unrelated or does not answer "
            "the question"),
)
#: s_dis's six anchored intervals, best first
DISTRACTOR_ANCHORS: tuple[tuple[int, int, str], ...] = (
    (90, 100, "all three distractors are relevant, plausible at first reading, clearly wrong on careful "
              "reading, and reflect three different misunderstandings"),
    (75, 89, "all three are relevant and wrong; one is less plausible, or two rest on similar misreadings"),
    (60, 74, "one distractor is flawed (off-topic, obviously wrong, arguably correct, or a near copy of another)"),
    (40, 59, "two distractors are flawed, e.g. a pair of paraphrases of each other"),
    (20, 39, "mostly unusable: duplicates, paraphrases or off-topic options dominate the set"),
    (0, 19, "unusable: a distractor is actually correct (a second right answer), or the set is identical "
            "or unrelated to the article"),
)


class JudgeError(RuntimeError):
    """A judge (or rubric) call failed for a reason that is not the model's answer (server,
    network, key); the proposal is not scored."""


# --- items ---------------------------------------------------------------------------------------

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


# --- proposals, parser, canonical form -------------------------------------------------------------

@dataclass(frozen=True)
class OptionSet:
    """A proposal: one correct option and (when read by the parser) exactly three distractors."""

    correct: str
    distractors: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "distractors", tuple(self.distractors))

    def to_dict(self) -> dict[str, Any]:
        """The reply format of the task prompt."""
        return {"correct": self.correct, "distractors": list(self.distractors)}


_QUOTES = "\"'`"
_TYPOGRAPHIC = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def normalize_option(text: str) -> str:
    """An option's canonical text: NFKC, typographic quotes made plain, case-folded, whitespace
    collapsed, surrounding quotes and final ``.,;:!`` removed."""
    t = " ".join(unicodedata.normalize("NFKC", str(text)).translate(_TYPOGRAPHIC).casefold().split())
    prev = None
    while prev != t:
        prev = t
        t = t.strip().strip(_QUOTES).rstrip(".,;:!").strip()
    return t


def canonical_options(proposal: OptionSet | Invalid) -> Hashable:
    """``(correct, sorted distractors)`` in :func:`normalize_option` form; ``Invalid`` as is."""
    if is_invalid(proposal):
        return proposal
    return (normalize_option(proposal.correct),  # type: ignore[union-attr]
            tuple(sorted(normalize_option(d) for d in proposal.distractors)))  # type: ignore[union-attr]


def _from_canonical(canon: Any) -> OptionSet:
    return OptionSet(canon[0], tuple(canon[1]))


_LABEL = re.compile(r"^\s*\(?[A-Da-d][.):]\s+")
_CORRECT_KEYS = ("correct", "correct_option", "correct_answer", "answer")
_DISTRACTOR_KEYS = ("distractors", "distractor", "incorrect_options", "wrong_options")


def _clean(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    return _LABEL.sub("", str(value).strip().strip("*`").strip(), count=1).strip()


def _build(correct: Any, distractors: Any) -> OptionSet | Invalid:
    c = _clean(correct)
    if c is None:
        return Invalid(f"correct: must be text, got {type(correct).__name__}")
    if isinstance(distractors, Mapping):
        distractors = list(distractors.values())
    if not isinstance(distractors, list):
        return Invalid(f"distractors: must be a list of three options, got {type(distractors).__name__}")
    if len(distractors) != 3:
        return Invalid(f"distractors: exactly 3 are required, got {len(distractors)}")
    ds = [_clean(d) for d in distractors]
    if any(d is None for d in ds):
        return Invalid("distractors: every distractor must be text")
    if not c:
        return Invalid("correct: the correct option is empty")
    empty = [k + 1 for k, d in enumerate(ds) if not d]
    if empty:
        return Invalid(f"distractors: distractor {empty[0]} is empty")
    return OptionSet(c, tuple(ds))  # type: ignore[arg-type]


def _from_obj(obj: Any) -> OptionSet | Invalid | None:
    if not isinstance(obj, Mapping):
        return None
    low = {str(k).strip().lower().replace(" ", "_"): v for k, v in obj.items()}
    opts, ans = low.get("options"), low.get("answer")
    if isinstance(opts, list) and isinstance(ans, str) and ans.strip().upper() in LETTERS:
        if len(opts) != 4:
            return Invalid(f"options: a RACE-style reply needs 4 options, got {len(opts)}")
        k = LETTERS.index(ans.strip().upper())
        return _build(opts[k], [o for i, o in enumerate(opts) if i != k])
    ck = next((k for k in _CORRECT_KEYS if k in low), None)
    dk = next((k for k in _DISTRACTOR_KEYS if k in low), None)
    if ck is None and dk is None:
        return None
    if ck is None:
        return Invalid("no correct option (key 'correct')")
    if dk is None:
        return Invalid("no distractors (key 'distractors')")
    return _build(low[ck], low[dk])


_C_LINE = re.compile(r"^\W*correct(?:\s+(?:option|answer))?\W*?[:=]\s*(.*)$", re.IGNORECASE)
_D_LINE = re.compile(r"^\W*(?:distractors?|wrong options?|incorrect options?)\s*#?\s*(\d*)\W*?[:=]\s*(.*)$",
                     re.IGNORECASE)
_ITEM = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]|\(?[A-Da-d][.)])\s+(.+)$")


def _from_lines(text: str) -> OptionSet | Invalid | None:
    correct: str | None = None
    ds: list[str] = []
    listing = False
    for line in text.replace("`", "").splitlines():
        if m := _C_LINE.match(line):
            correct, listing = m.group(1), False
        elif m := _D_LINE.match(line):
            body = m.group(2).strip().strip("*").strip()
            if body:
                ds.append(body)
            listing = not body and not m.group(1)
        elif listing and (m := _ITEM.match(line)):
            ds.append(m.group(1))
        elif listing and line.strip():
            listing = False
    if correct is None and not ds:
        return None
    if correct is None:
        return Invalid("no correct option (line 'Correct: ...')")
    return _build(correct, ds)


def parse_options(text: str, instance: OptionGenItem | None = None) -> OptionSet | Invalid:
    """An :class:`OptionSet` from a reply, or ``Invalid`` with the reason (formats and rules in
    the module docstring). ``instance`` is not needed."""
    found: list[OptionSet] = []
    reason = None
    for obj in json_values(text):
        got = _from_obj(obj)
        if got is None:
            continue
        if is_invalid(got):
            reason = got.reason  # type: ignore[union-attr]
        else:
            found.append(got)  # type: ignore[arg-type]
    if found:
        return found[-1]
    if reason is None:
        got = _from_lines(text)
        if got is not None:
            return got
    return Invalid(reason or 'no option set found (expected {"correct": ..., "distractors": [...]})')


# --- prompts ---------------------------------------------------------------------------------------

def option_gen_prompt(instance: OptionGenItem) -> str:
    """The task prompt, in the spirit of Fig 12 (one correct option, three plausible but wrong
    distractors), in our own words. Only the article and the question are shown."""
    return f"""Write the four answer options of a multiple-choice reading-comprehension question.

Article:
{instance.article}

Question: {instance.question}

Write exactly one correct option and three distractors.
- The correct option answers the question accurately, as the article supports it.
- Each distractor is relevant to the article and the question and looks plausible at first
  reading, but is clearly wrong on careful reading of the article.
- The three distractors reflect different misunderstandings: none is a paraphrase of another
  or of the correct option.
- Keep the four options alike in form and length, so that the correct one does not stand out.
- If the question contains a blank (_), every option must complete it.

Reply with JSON only: {{"correct": "...", "distractors": ["...", "...", "..."]}}
"""


def _anchors(anchors: Sequence[tuple[int, int, str]]) -> str:
    return "\n".join(f"  {lo}-{hi}: {desc}" for lo, hi, desc in anchors)


def rubric_prompt(item: OptionGenItem) -> str:
    """The rubric builder's prompt (:data:`RUBRIC_PROMPT_VERSION`): two rubrics from the four
    reference options and the answer (appendix, "Scoring Definitions")."""
    opts = "\n".join(f"{letter}. {o}" for letter, o in zip(LETTERS, item.options))
    return f"""You prepare the scoring criteria for one multiple-choice reading-comprehension item.

Article:
{item.article}

Question: {item.question}

Options:
{opts}
Correct answer: {item.answer}

Write two rubrics that a grader will use to score newly written options for this question:
1. correct_rubric: the key information a valid correct option must contain (with the evidence
   in the article), and the common errors it must avoid.
2. distractor_rubric: why the reference distractors look plausible, why each is nevertheless
   wrong, and what properties suitable distractors must have (relevant, plausible, clearly
   wrong, distinct misunderstandings, not paraphrases of each other or of the answer).

Reply with JSON only: {{"correct_rubric": "...", "distractor_rubric": "..."}}
"""


def judge_prompt(item: OptionGenItem, rubric: Rubric, proposal: OptionSet) -> str:
    """The judge's prompt (:data:`PROMPT_VERSION`): article, question, both rubrics, the
    candidate (in canonical form) and the six anchored intervals of each score."""
    ds = "\n".join(f"  {k}. {d}" for k, d in enumerate(proposal.distractors, start=1))
    return f"""You grade answer options written for a multiple-choice reading-comprehension question.

Article:
{item.article}

Question: {item.question}

Correct-option rubric:
{rubric.correct}

Distractor rubric:
{rubric.distractors}

Candidate options (shown in lower case; ignore case and final punctuation):
  Correct option: {proposal.correct}
  Distractors:
{ds}

Score the two parts independently, each from 0 to 100, following the rubrics.
correct_score: correctness, completeness and consistency of the correct option with the article.
{_anchors(CORRECT_ANCHORS)}
distractor_score: plausibility, relevance, incorrectness and diversity of the three distractors.
{_anchors(DISTRACTOR_ANCHORS)}

Reply with JSON only: {{"correct_score": <0-100>, "distractor_score": <0-100>}}
"""


# --- rubrics ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rubric:
    """One instance's two rubrics (appendix): the correct-option rubric and the distractor rubric;
    ``source`` names the builder, ``item`` the item's fingerprint."""

    correct: str
    distractors: str
    source: str
    item: str = ""

    def to_dict(self) -> dict[str, str]:
        """Plain JSON."""
        return {"correct": self.correct, "distractors": self.distractors, "source": self.source, "item": self.item}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Rubric:
        """Inverse of :meth:`to_dict`; a missing field raises ``ValueError`` naming it."""
        for key in ("correct", "distractors", "source"):
            if not isinstance(d.get(key), str):
                raise ValueError(f"{key}: missing from the rubric record (a string)")
        return cls(d["correct"], d["distractors"], d["source"], str(d.get("item", "")))


_STOP = frozenset("""a an the and or but of to in on at by for with from as into about over after before
is are was were be been being am do does did doing have has had having it its it's this that these those
there their they them he him his she her hers we us our you your i me my not no so than then too very can
could would should will shall may might must just only also which who whom whose what when where why how
all any some each such own same other more most much many one indeed""".split())


def _tokens(text: str) -> list[str]:
    out = []
    plain = unicodedata.normalize("NFKC", text).translate(_TYPOGRAPHIC).casefold()
    for w in re.findall(r"[0-9a-z]+(?:'[a-z]+)?", plain):
        w = w.removesuffix("'s")
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.append(w)
    return out


def _content(text: str) -> frozenset[str]:
    """Content words (stop words dropped; all words when only stop words remain)."""
    words = _tokens(text)
    content = frozenset(w for w in words if w not in _STOP)
    return content or frozenset(words)


def _sim(a: str, b: str) -> float:
    """Token F1 of the content words of ``a`` and ``b`` (1.0 for equal normalised text)."""
    if normalize_option(a) == normalize_option(b):
        return 1.0
    x, y = _content(a), _content(b)
    if not x or not y:
        return 0.0
    common = len(x & y)
    return 2 * common / (len(x) + len(y))


def _support(text: str, context: frozenset[str]) -> float:
    words = _content(text)
    return len(words & context) / len(words) if words else 0.0


def _sentences(article: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", article) if s.strip()]


def offline_rubric(item: OptionGenItem) -> Rubric:
    """The deterministic rubric builder (no model): the reference answer, its best-supporting
    article sentence and key words, the reference distractors as errors to avoid, and the
    properties suitable distractors need."""
    sents = _sentences(item.article) or [item.article]
    target = _content(item.correct + " " + item.question)
    support = max(sents, key=lambda s: len(_content(s) & target))  # first on ties
    key = ", ".join(sorted(_content(item.correct))) or item.correct
    art = _content(item.article)

    def q(text: str) -> str:
        return '"' + text.strip().rstrip(".") + '"'

    wrong = "; ".join(q(d) for d in item.distractors)
    shared = "; ".join(f'{q(d)} ({", ".join(sorted(_content(d) & art)) or "no shared words"})'
                       for d in item.distractors)
    correct = (f"A valid correct option conveys: {q(item.correct)}. The article supports it: {q(support)}. "
               f"Key content: {key}. Errors to avoid: giving instead any of {wrong}, which the article does not "
               "support as the answer; adding claims the article does not make; being too vague to answer "
               "the question.")
    distractors = (f"The reference distractors are {wrong}. They look plausible because they reuse words and "
                   f"ideas of the article (shared words: {shared}), and they are wrong because the article "
                   f"supports {q(item.correct)} instead. Suitable distractors are relevant to the article and the "
                   "question, alike in form and length to the correct option, clearly wrong on careful reading, "
                   "and each reflects a different misunderstanding; none paraphrases another distractor or "
                   "restates the correct option.")
    return Rubric(correct, distractors, OFFLINE_RUBRIC_VERSION, item.fingerprint())


def _rubric_text(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return "\n".join(f"- {v.strip()}" for v in value)
    return None


@dataclass
class LLMRubricBuilder:
    """Rubrics from a model (temperature 0, :func:`rubric_prompt`), one call per item under the
    logical id ``mastracebench/option_gen/rubric/<item id>``. A transport failure raises
    :class:`JudgeError`; an unreadable reply raises ``ValueError`` (no rubric, no scoring)."""

    client: Any  # collablab.llm.LLMClient
    max_tokens: int | None = 1024

    @property
    def source(self) -> str:
        """``llm:<model>:<prompt version>``."""
        return f"llm:{self.client.endpoint.model}:{RUBRIC_PROMPT_VERSION}"

    def __call__(self, item: OptionGenItem) -> Rubric:
        """Build the item's rubric."""
        cid = f"mastracebench/option_gen/rubric/{item.id}"
        result = self.client.chat_sync(rubric_prompt(item), call_id=cid, sample_index=0,
                                       temperature=JUDGE_TEMPERATURE, max_tokens=self.max_tokens)
        if result.error is not None:
            raise JudgeError(f"{cid}: {result.error}")
        for obj in reversed(json_values(result.text or "")):
            if isinstance(obj, Mapping):
                c, d = _rubric_text(obj.get("correct_rubric")), _rubric_text(obj.get("distractor_rubric"))
                if c and d:
                    return Rubric(c, d, self.source, item.fingerprint())
        raise ValueError(f"{cid}: unreadable rubric reply (expected JSON with 'correct_rubric' and "
                         f"'distractor_rubric'): {(result.text or '')[:120]!r}")


class RubricCache:
    """Rubrics by item id, built on first need (or all at once by :meth:`prepare`) with
    ``builder`` (default :func:`offline_rubric`) and, when ``path`` is given, kept in that JSON
    file (``{"version": 1, "rubrics": {id: Rubric}}``), read back on the next run. An entry made
    for a different item (fingerprint) or by a different builder raises ``ValueError``."""

    def __init__(self, builder: Callable[[OptionGenItem], Rubric] | None = None,
                 path: str | os.PathLike[str] | None = None) -> None:
        self.builder = builder or offline_rubric
        self.path = Path(path) if path is not None else None
        self._rubrics: dict[str, Rubric] = {}
        if self.path is not None and self.path.exists():
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                entries = data["rubrics"]
                self._rubrics = {str(k): Rubric.from_dict(v) for k, v in entries.items()}
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError) as e:
                raise ValueError(f"{self.path}: not a rubric file ({e})") from None

    @property
    def source(self) -> str:
        """The builder's name (``OFFLINE_RUBRIC_VERSION`` or ``llm:<model>:<version>``)."""
        return str(getattr(self.builder, "source", OFFLINE_RUBRIC_VERSION if self.builder is offline_rubric
                           else getattr(self.builder, "__name__", "custom")))

    def get(self, item: OptionGenItem) -> Rubric:
        """The item's rubric (built and saved on first need)."""
        r = self._rubrics.get(item.id)
        if r is not None:
            where = f"{self.path}: " if self.path else ""
            if r.item and r.item != item.fingerprint():
                raise ValueError(f"{where}rubric of {item.id} was built for a different item (its article, "
                                 "question or options changed); use another rubric file or delete the entry")
            if r.source != self.source:
                raise ValueError(f"{where}rubric of {item.id} was built by {r.source}, this cache builds with "
                                 f"{self.source}; use another rubric file or delete it")
            return r
        r = self.builder(item)
        self._rubrics[item.id] = r
        self.save()
        return r

    def prepare(self, items: Iterable[OptionGenItem]) -> list[Rubric]:
        """Build (or read) every item's rubric before any scoring."""
        return [self.get(it) for it in items]

    def save(self) -> None:
        """Write the file (when ``path`` is set)."""
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"version": 1, "rubrics": {k: r.to_dict() for k, r in sorted(self._rubrics.items())}}
        tmp = self.path.with_suffix(self.path.suffix + ".tmp")
        tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
        tmp.replace(self.path)

    def __len__(self) -> int:
        return len(self._rubrics)


# --- judges ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Verdict:
    """A judge's two scores (0-100 each), eq 10's mean as ``score``, the reason when the reply was
    unreadable (``""`` otherwise), the judge call's tokens and its logical id."""

    correct_score: float
    distractor_score: float
    reason: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    call_id: str = ""

    @property
    def score(self) -> float:
        """S = (s_cor + s_dis) / 2 (eq 10)."""
        return option_gen_score(self.correct_score, self.distractor_score)


def option_gen_score(s_cor: float, s_dis: float) -> float:
    """Eq 10: the mean of the correct-option and distractor-set scores (each 0-100)."""
    return (float(s_cor) + float(s_dis)) / 2


class Judge(Protocol):
    """What :class:`OptionGenTask` needs of a judge: its kind/model/prompt version (recorded in the
    trajectory), its rubrics, and a verdict on a canonical proposal."""

    kind: str
    rubrics: RubricCache

    @property
    def model(self) -> str: ...

    @property
    def prompt_version(self) -> str: ...

    def judge(self, proposal: OptionSet, item: OptionGenItem, call_id: str) -> Verdict: ...


def _band(anchors: Sequence[tuple[int, int, str]], k: int, t: float) -> float:
    """A score in anchored interval ``k`` (0 = best) at position ``t`` in [0, 1] (rounded)."""
    lo, hi, _ = anchors[max(0, min(len(anchors) - 1, k))]
    return float(round(lo + max(0.0, min(1.0, t)) * (hi - lo)))


NEAR = 0.85  # content-word F1 at which two options count as the same (copy or paraphrase)


def _correct_score(p: OptionSet, item: OptionGenItem, rubric: Rubric) -> float:
    c = p.correct
    if normalize_option(c) == normalize_option(item.correct):
        return 100.0
    m_ref = _sim(c, item.correct)
    m_dis = max(_sim(c, d) for d in item.distractors)
    if m_dis >= NEAR and m_dis > m_ref:
        return _band(CORRECT_ANCHORS, 5, (1 - m_dis) / (1 - NEAR))  # a reference distractor restated
    q = m_ref - (0.2 if m_dis > m_ref else 0.0)
    supported = _support(c, _content(item.article + " " + rubric.correct)) >= 0.5
    if q >= 0.8:
        return _band(CORRECT_ANCHORS, 0, (q - 0.8) / 0.2)
    if q >= 0.6:
        return _band(CORRECT_ANCHORS, 1, (q - 0.6) / 0.2)
    if q >= 0.4:
        return _band(CORRECT_ANCHORS, 2, (q - 0.4) / 0.2)
    if q >= 0.2:
        return _band(CORRECT_ANCHORS, 3 if supported else 4, (q - 0.2) / 0.2)
    return _band(CORRECT_ANCHORS, 4 if supported else 5, max(q, 0.0) / 0.2)


def _match_reference(ds: Sequence[str], refs: Sequence[str]) -> list[int | None]:
    """Greedy one-to-one matching of proposed to reference distractors at F1 >= NEAR."""
    pairs = sorted(((-_sim(d, r), i, j) for i, d in enumerate(ds) for j, r in enumerate(refs)))
    match: list[int | None] = [None] * len(ds)
    used: set[int] = set()
    for neg, i, j in pairs:
        if -neg >= NEAR and match[i] is None and j not in used:
            match[i] = j
            used.add(j)
    return match


def _distractor_score(p: OptionSet, item: OptionGenItem, rubric: Rubric) -> float:
    ds = list(p.distractors)
    if not ds:
        return 0.0
    match = _match_reference(ds, item.distractors)
    context = _content(" ".join([item.article, item.question, *item.options, rubric.distractors]))
    norm = [normalize_option(d) for d in ds]
    flawed = [False] * len(ds)
    fatal = len(set(norm)) == 1 and len(ds) > 1
    exact_dup = len(set(norm)) < len(norm)
    for i, d in enumerate(ds):
        vouched = match[i] is not None  # a reference distractor: relevant and wrong by construction
        is_answer = norm[i] == normalize_option(p.correct) or _sim(d, p.correct) >= NEAR \
            or (not vouched and _sim(d, item.correct) >= NEAR)
        if is_answer:
            fatal = True
            flawed[i] = True
        if not vouched and _support(d, context) < 0.5:
            flawed[i] = True
        for j, e in enumerate(ds):
            if j != i and (norm[i] == norm[j] or _sim(d, e) >= NEAR) \
                    and not (vouched and match[j] is not None and match[i] != match[j]):
                flawed[i] = True
    plaus = sum(max(_sim(d, r) for r in item.distractors) for d in ds) / len(ds)
    f = sum(flawed)
    if fatal:
        return _band(DISTRACTOR_ANCHORS, 5, 1 - f / len(ds))
    if f == 0:
        return (_band(DISTRACTOR_ANCHORS, 0, (plaus - 0.5) / 0.5) if plaus >= 0.5
                else _band(DISTRACTOR_ANCHORS, 1, plaus / 0.5))
    band = min(5, 1 + f + (1 if exact_dup else 0))
    return _band(DISTRACTOR_ANCHORS, band, plaus)


def rule_scores(proposal: OptionSet, item: OptionGenItem, rubric: Rubric | None = None) -> tuple[float, float]:
    """The offline judge's ``(s_cor, s_dis)``, each in one of the six anchored intervals.

    Words are case-folded, stop words dropped, a final plural ``s`` cut; two texts' similarity is
    the F1 of their content words; NEAR = 0.85 counts as the same option.

    s_cor: 100 when the option equals the reference answer (normalised). A reference
    distractor restated (similarity >= NEAR and closer to it than to the answer) is 0-19.
    Otherwise the similarity q to the reference answer (less 0.2 when a reference distractor is
    closer) picks the interval: >= 0.8 -> 90-100, >= 0.6 -> 75-89, >= 0.4 -> 60-74, >= 0.2 ->
    40-59, else 20-39; below 0.4, an option whose content words are mostly (< 50 %) absent from the
    article and the correct-option rubric drops one interval. Position in the interval is linear in q.

    s_dis: each distractor is *flawed* when it is off-topic (< 50 % of its content words in the
    article, question, reference options or distractor rubric), restates the correct option, or
    nearly equals another distractor. A distractor matching a reference distractor (one-to-one, at
    NEAR) counts as relevant and wrong, and two distractors matching different reference ones are
    not duplicates. A distractor that restates the proposal's correct option (or the reference
    answer), or three identical distractors, is fatal: 0-19. Otherwise no flaw -> 90-100 when the
    mean best similarity to a reference distractor (plausibility) is >= 0.5, else 75-89; one flawed
    -> 60-74, two -> 40-59, three -> 20-39, one interval lower again when two are identical. Position
    in the interval follows plausibility.
    """
    rubric = rubric or offline_rubric(item)
    return _correct_score(proposal, item, rubric), _distractor_score(proposal, item, rubric)


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        v = float(value)
    elif isinstance(value, str):
        try:
            v = float(value.strip().rstrip("%"))
        except ValueError:
            return None
    else:
        return None
    return v if math.isfinite(v) and 0 <= v <= 100 else None


def parse_judge_reply(text: str) -> tuple[float, float] | str:
    """``(s_cor, s_dis)`` from a judge reply (the last JSON object with both keys, each a number in
    0-100), or the reason it is unreadable (a string)."""
    reason = "no JSON object with 'correct_score' and 'distractor_score'"
    for obj in reversed(json_values(text or "")):
        if isinstance(obj, Mapping) and "correct_score" in obj and "distractor_score" in obj:
            c, d = _num(obj["correct_score"]), _num(obj["distractor_score"])
            if c is not None and d is not None:
                return c, d
            reason = (f"scores must be numbers in [0, 100], got correct_score={obj['correct_score']!r}, "
                      f"distractor_score={obj['distractor_score']!r}")
    return reason


@dataclass
class LLMJudge:
    """The paper's judge: a model at temperature 0 with :func:`judge_prompt` (:data:`PROMPT_VERSION`).
    ``client`` is a :class:`collablab.llm.LLMClient` (cache and replay apply: the call id is the
    judge's logical id, independent of method and call order). Failure handling: module docstring."""

    client: Any  # collablab.llm.LLMClient
    rubrics: RubricCache | None = None
    max_tokens: int | None = 512
    kind: str = "llm"

    def __post_init__(self) -> None:
        if self.rubrics is None:
            self.rubrics = RubricCache()

    @property
    def model(self) -> str:
        """The judge model's name."""
        return str(self.client.endpoint.model)

    @property
    def prompt_version(self) -> str:
        """:data:`PROMPT_VERSION`."""
        return PROMPT_VERSION

    def judge(self, proposal: OptionSet, item: OptionGenItem, call_id: str) -> Verdict:
        """One judge call; a transport failure raises :class:`JudgeError`."""
        prompt = judge_prompt(item, self.rubrics.get(item), proposal)  # type: ignore[union-attr]
        result = self.client.chat_sync(prompt, call_id=call_id, sample_index=0,
                                       temperature=JUDGE_TEMPERATURE, max_tokens=self.max_tokens)
        if result.error is not None:
            raise JudgeError(f"{call_id}: {result.error}")
        tin, tout = int(result.usage.prompt_tokens or 0), int(result.usage.completion_tokens or 0)
        got = parse_judge_reply(result.text or "")
        if isinstance(got, str):
            log.warning("OptionGen judge %s: unreadable reply scored 0: %s", call_id, got)
            return Verdict(0.0, 0.0, f"unreadable judge reply: {got}", tin, tout, call_id)
        return Verdict(got[0], got[1], "", tin, tout, call_id)


@dataclass
class RuleJudge:
    """The offline judge (``backend=heuristic``): :func:`rule_scores`; tokens are word counts of
    the prompt an LLM judge would read and of the JSON verdict (offline proxies)."""

    rubrics: RubricCache | None = None
    kind: str = "rule"

    def __post_init__(self) -> None:
        if self.rubrics is None:
            self.rubrics = RubricCache()

    @property
    def model(self) -> str:
        """``"rule"`` (no model)."""
        return "rule"

    @property
    def prompt_version(self) -> str:
        """The rule set's version."""
        return "optiongen-rules-v1"

    def judge(self, proposal: OptionSet, item: OptionGenItem, call_id: str) -> Verdict:
        """Score by the rules."""
        rubric = self.rubrics.get(item)  # type: ignore[union-attr]
        c, d = rule_scores(proposal, item, rubric)
        reply = json.dumps({"correct_score": c, "distractor_score": d})
        return Verdict(c, d, "", len(judge_prompt(item, rubric, proposal).split()), len(reply.split()), call_id)


# --- the task --------------------------------------------------------------------------------------

class OptionGenTask:
    """The OptionGen task (Table 1) behind the :class:`~.base.Task` interface. ``parse`` and
    ``canonical`` need no judge (the offline backend parses with ``OptionGenTask()``); ``score``
    needs ``judge`` (:class:`LLMJudge` or :class:`RuleJudge`)."""

    name: str = "option_gen"

    def __init__(self, judge: Judge | None = None) -> None:
        self.judge = judge
        self._verdicts: dict[tuple[str, Hashable], Verdict] = {}
        self._pending: list[Call] = []

    def __repr__(self) -> str:
        return f"OptionGenTask(judge={self.judge!r})"

    @staticmethod
    def judge_call_id(item: OptionGenItem, canonical: Hashable) -> str:
        """The judge call's logical id ``mastracebench/option_gen/judge/<item id>/<digest>``."""
        return f"mastracebench/option_gen/judge/{item.id}/{_digest(item, canonical)}"

    def verdict(self, proposal: OptionSet, instance: OptionGenItem) -> Verdict:
        """The judge's verdict on the proposal's canonical form (memoised per (instance id,
        canonical proposal); a new call is queued for :meth:`take_scoring_calls`)."""
        if self.judge is None:
            raise ValueError("judge: OptionGen scoring needs a judge, e.g. OptionGenTask(judge=RuleJudge()) "
                             "offline or OptionGenTask(judge=LLMJudge(client)) (eq 10)")
        canon = canonical_options(proposal)
        key = (instance.id, canon)
        if key in self._verdicts:
            return self._verdicts[key]
        cid = self.judge_call_id(instance, canon)
        v = self.judge.judge(_from_canonical(canon), instance, cid)
        self._verdicts[key] = v
        self._pending.append(Call(cid, "score_judge", 0, f"judge-{_digest(instance, canon)}",
                                  int(v.input_tokens), int(v.output_tokens), 0, "score_judge"))
        return v

    def score(self, proposal: OptionSet | Invalid, instance: OptionGenItem) -> float:
        """Eq 10 on 0-100 by the judge; ``Invalid`` -> 0 (no judge call)."""
        if is_invalid(proposal):
            return 0.0
        return self.verdict(proposal, instance).score  # type: ignore[arg-type]

    def max_score(self, instance: OptionGenItem) -> float:
        """S* = 100 (module docstring)."""
        return 100.0

    def canonical(self, proposal: OptionSet | Invalid) -> Hashable:
        """See :func:`canonical_options`."""
        return canonical_options(proposal)

    def parse(self, text: str, instance: OptionGenItem) -> OptionSet | Invalid:
        """See :func:`parse_options`."""
        return parse_options(text, instance)

    def take_scoring_calls(self) -> list[Call]:
        """The ``"score_judge"`` calls made since the last take (ids are the judge's logical ids;
        a method re-ids them under its unit), oldest first."""
        out, self._pending = self._pending, []
        return out

    def scorer_info(self) -> dict[str, Any] | None:
        """What scored the proposals (recorded as ``Trajectory.scorer``); None without a judge."""
        if self.judge is None:
            return None
        rubrics = getattr(self.judge, "rubrics", None)
        return {"task": self.name, "judge": self.judge.kind, "model": self.judge.model,
                "prompt_version": self.judge.prompt_version, "temperature": JUDGE_TEMPERATURE,
                "rubrics": rubrics.source if rubrics is not None else None}


def _digest(item: OptionGenItem, canonical: Hashable) -> str:
    text = json.dumps([item.id, canonical], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def judge_for(backend: Any, rubrics: RubricCache | None = None) -> Judge:
    """The judge a run on ``backend`` uses: an LLM backend's default client (anything with a
    ``client`` holding an ``endpoint``, also behind wrappers that keep the wrapped backend as
    ``backend``) gives :class:`LLMJudge` on that client with rubrics built by
    :class:`LLMRubricBuilder` on it; any other backend (the heuristic) gives :class:`RuleJudge`
    with :func:`offline_rubric` rubrics. ``rubrics`` overrides the rubric cache (e.g. a JSON file)."""
    seen = 0
    b = backend
    while b is not None and seen < 8:
        client = getattr(b, "client", None)
        if client is not None and hasattr(client, "endpoint"):
            return LLMJudge(client, rubrics or RubricCache(LLMRubricBuilder(client)))
        b, seen = getattr(b, "backend", None), seen + 1
    return RuleJudge(rubrics)
