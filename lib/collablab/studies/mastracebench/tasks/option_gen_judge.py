"""OptionGen's scoring (mastracebench.txt appendix "OptionGen", eq 10): rubrics, prompts and judges.

Scoring is criterion-grounded: two rubrics are built per instance from the four reference options
and the answer (a correct-option rubric and a distractor rubric), withheld from the MAS, and a
judge gives s_cor and s_dis on 0-100 along six anchored intervals each (:data:`CORRECT_ANCHORS`,
:data:`DISTRACTOR_ANCHORS`); the proposal score is S = (s_cor + s_dis) / 2 (eq 10,
:func:`option_gen_score`).

The proposal type (:class:`OptionSet`) and an option's canonical text (:func:`normalize_option`)
are defined here because the judge reads and compares them; the task module
(:mod:`.option_gen`: parser, canonical form, prompt, :class:`~.option_gen.OptionGenTask`) imports
this one, never the other way round, and re-exports both names.

Decisions the paper leaves open (ours; tested in tests/test_mastracebench_optiongen.py):

- **Rubrics** (:class:`Rubric`) are built before scoring by :class:`LLMRubricBuilder`
  (temperature 0, prompt :data:`RUBRIC_PROMPT_VERSION`) or by the deterministic
  :func:`offline_rubric`, and kept in a :class:`RubricCache` (optionally a JSON file; an entry
  built for a different item or by a different builder is an error, never silently reused).
- **LLM judge** (:class:`LLMJudge`): the appendix's judge settings, "temperature set to 0 to
  ensure deterministic and reproducible scores" (:data:`JUDGE_TEMPERATURE`); thinking off
  (:data:`JUDGE_THINKING`; the paper does not state the judge's thinking mode, but "Model and
  Inference Settings" disables Qwen3-32B's thinking on every task but MAPF and Gomoku, OptionGen
  included, and a verdict against given rubrics needs none); a token budget of
  :data:`JUDGE_MAX_TOKENS` (why: :class:`LLMJudge`); prompt :data:`PROMPT_VERSION` (article,
  question, both rubrics, the candidate; the reference options reach the judge only through the
  rubrics), reply ``{"correct_score": x, "distractor_score": y}``. An unreadable reply (no such
  object, a score outside 0-100, or a reply cut at the token budget) is re-asked up to
  :data:`JUDGE_REASKS` times, the reply and :data:`REASK_PROMPT` appended; if no ask gives a
  verdict, :class:`JudgeError` is raised: the proposal is never scored 0/0, the unit fails and
  the run grid records it in ``failures.jsonl`` (a rerun retries it). A transport failure
  (server down, key, timeout) raises the floor's :class:`~collablab.llm.EndpointError` and is
  never scored either.
- **Rule judge** (:class:`RuleJudge`, ``backend=heuristic``): lexical overlap rules (see
  :func:`rule_scores`) that land in the same six intervals: the reference set scores 100 and
  100; a correct option copied from a reference distractor scores 0-19; duplicate or paraphrased
  distractors score 20-59; an off-topic distractor 60-74.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .base import json_values
from .race import LETTERS, OptionGenItem

__all__ = [
    "CORRECT_ANCHORS",
    "DISTRACTOR_ANCHORS",
    "JUDGE_MAX_TOKENS",
    "JUDGE_REASKS",
    "JUDGE_TEMPERATURE",
    "JUDGE_THINKING",
    "OFFLINE_RUBRIC_VERSION",
    "PROMPT_VERSION",
    "REASK_PROMPT",
    "RUBRIC_PROMPT_VERSION",
    "Judge",
    "JudgeError",
    "LLMJudge",
    "LLMRubricBuilder",
    "OptionSet",
    "Rubric",
    "RubricCache",
    "RuleJudge",
    "Verdict",
    "judge_prompt",
    "normalize_option",
    "offline_rubric",
    "option_gen_score",
    "parse_judge_reply",
    "rubric_prompt",
    "rule_scores",
]

log = logging.getLogger(__name__)

#: the LLM judge's prompt version (recorded in every trajectory it scores)
PROMPT_VERSION = "optiongen-judge-v1"
#: the LLM rubric builder's prompt version
RUBRIC_PROMPT_VERSION = "optiongen-rubric-v1"
#: the offline rubric builder's version
OFFLINE_RUBRIC_VERSION = "optiongen-rubric-offline-v1"
#: the judge's (and the rubric builder's) temperature (appendix "OptionGen": "the temperature set to
#: 0 to ensure deterministic and reproducible scores")
JUDGE_TEMPERATURE = 0.0
#: the judge's thinking switch (``LLMClient.chat``'s ``thinking``): off, see the module docstring
JUDGE_THINKING = "off"
#: the judge's token budget per ask (why this size: :class:`LLMJudge`)
JUDGE_MAX_TOKENS = 4096
#: how many more times an unreadable verdict is asked for
JUDGE_REASKS = 2
#: the message appended, after the judge's unreadable reply, to ask again (``{why}``: the reason)
REASK_PROMPT = ("Your reply could not be read: {why}. Answer in the required format: reply with JSON only, "
                '{{"correct_score": <0-100>, "distractor_score": <0-100>}}, and nothing else.')

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
    """The LLM judge gave no readable verdict (appendix "OptionGen", eq 10) after its re-asks:
    the proposal is not scored and the unit fails (the run grid records it; a rerun retries it).
    The message names the item, the judge call and the last reply's first 200 characters."""

    def __init__(self, message: str, item: str = "", call_id: str = "", reply: str = "") -> None:
        super().__init__(message)
        self.item = item
        self.call_id = call_id
        self.reply = reply

    def __reduce__(self) -> Any:
        return (type(self), (str(self), self.item, self.call_id, self.reply))


# --- proposals (what a judge scores) -------------------------------------------------------------

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


# --- prompts ---------------------------------------------------------------------------------------

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
    logical id ``mastracebench/option_gen/rubric/<item id>``. A transport failure raises the
    floor's ``EndpointError``; an unreadable reply raises ``ValueError`` (no rubric, no scoring)."""

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
    """A judge's two scores (0-100 each), eq 10's mean as ``score``, a note when the verdict took
    re-asks (why the earlier replies were unreadable; ``""`` when the first ask gave it), the
    judge's tokens over all its asks, its logical call id, and the number of asks."""

    correct_score: float
    distractor_score: float
    reason: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    call_id: str = ""
    asks: int = 1

    @property
    def score(self) -> float:
        """S = (s_cor + s_dis) / 2 (eq 10)."""
        return option_gen_score(self.correct_score, self.distractor_score)


def option_gen_score(s_cor: float, s_dis: float) -> float:
    """Eq 10: the mean of the correct-option and distractor-set scores (each 0-100)."""
    return (float(s_cor) + float(s_dis)) / 2


class Judge(Protocol):
    """What :class:`~.option_gen.OptionGenTask` needs of a judge: its kind/model/prompt version
    (recorded in the trajectory), its rubrics, and a verdict on a canonical proposal."""

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


#: a bound on one verdict's asks in all: this many runs' worth of fresh asks
_RERUNS = 10


def _read_verdict(result: Any) -> tuple[float, float] | str:
    """``(s_cor, s_dis)`` of one judge reply, or why it is unreadable: a reply cut at the token
    budget (``finish_reason`` ``length``) is never parsed (its JSON may be a fragment)."""
    if result.truncated:
        return "the reply was cut at the token budget (finish_reason 'length') before a verdict"
    return parse_judge_reply(getattr(result, "text", None) or "")


@dataclass
class LLMJudge:
    """The paper's judge (appendix "OptionGen", eq 10): a model at temperature 0
    (:data:`JUDGE_TEMPERATURE`) with thinking off (:data:`JUDGE_THINKING`) and
    :func:`judge_prompt` (:data:`PROMPT_VERSION`). ``client`` is a :class:`collablab.llm.LLMClient`
    (cache and replay apply: the call id is the judge's logical id, independent of method and
    call order).

    ``max_tokens`` (:data:`JUDGE_MAX_TOKENS` = 4096): the verdict itself is ~20 tokens, but judges
    often write a rationale per rubric point and anchored interval before the JSON, "JSON only"
    notwithstanding; at 512 such replies were cut before the verdict. 4096 leaves room for a
    verbose rationale with thinking off and bounds a runaway reply (at most 1 + ``reasks`` asks
    of 4096 tokens per verdict); the MAS's 16,384 ("Model and Inference Settings") is for
    generation, not for a two-number verdict.

    Unreadable verdicts (no ``{"correct_score", "distractor_score"}`` object with numbers in
    0-100, or a reply cut at the budget) are re-asked up to ``reasks`` times, under the same
    call id with ``attempt`` 1, 2, ... (each its own cached call): the prompt, the last reply and
    :data:`REASK_PROMPT` with the reason. If none is readable, :class:`JudgeError`. A rerun
    replays the earlier asks from the response cache and then asks afresh with the next attempt
    numbers: asks answered from the cache do not count against ``reasks`` (the same prompt at
    temperature 0 would fail alike), so a rerun retries, and replay reproduces a run exactly.
    """

    client: Any  # collablab.llm.LLMClient
    rubrics: RubricCache | None = None
    max_tokens: int | None = JUDGE_MAX_TOKENS
    kind: str = "llm"
    thinking: str | None = JUDGE_THINKING
    reasks: int = JUDGE_REASKS

    def __post_init__(self) -> None:
        if self.rubrics is None:
            self.rubrics = RubricCache()
        if not isinstance(self.reasks, int) or isinstance(self.reasks, bool) or self.reasks < 0:
            raise ValueError(f"reasks: must be an integer >= 0, got {self.reasks!r}")

    @property
    def model(self) -> str:
        """The judge model's name."""
        return str(self.client.endpoint.model)

    @property
    def prompt_version(self) -> str:
        """:data:`PROMPT_VERSION`."""
        return PROMPT_VERSION

    def judge(self, proposal: OptionSet, item: OptionGenItem, call_id: str) -> Verdict:
        """The verdict on ``proposal``: re-asked when unreadable, :class:`JudgeError` when no ask
        gives one; a transport failure raises the floor's ``EndpointError``."""
        prompt = judge_prompt(item, self.rubrics.get(item), proposal)  # type: ignore[union-attr]
        opts = dict(call_id=call_id, sample_index=0, temperature=JUDGE_TEMPERATURE, max_tokens=self.max_tokens,
                    thinking=self.thinking)
        messages: Any = prompt
        tin = tout = fresh = 0
        whys: list[str] = []
        text = ""
        for attempt in range(_RERUNS * (1 + self.reasks)):  # replayed asks included
            result = self.client.chat_sync(messages, attempt=attempt, **opts)
            tin += int(result.usage.prompt_tokens or 0)
            tout += int(result.usage.completion_tokens or 0)
            text = result.text or ""
            got = _read_verdict(result)
            if not isinstance(got, str):
                note = "; ".join(f"ask {k + 1}: {w}" for k, w in enumerate(whys))
                return Verdict(got[0], got[1], f"read on ask {attempt + 1} ({note})" if whys else "",
                               tin, tout, call_id, attempt + 1)
            whys.append(got)
            if result.cache != "hit":
                fresh += 1
            if fresh > self.reasks:
                break
            log.info("OptionGen judge %s: unreadable verdict (%s), asking again", call_id, got)
            messages = [{"role": "user", "content": prompt}, {"role": "assistant", "content": text},
                        {"role": "user", "content": REASK_PROMPT.format(why=got)}]
        raise JudgeError(f"OptionGen judge gave no readable verdict on item {item.id} after {len(whys)} "
                         f"ask(s) (call {call_id}): {whys[-1]}; last reply begins {text[:200]!r}",
                         item.id, call_id, text[:200])


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
