"""OptionGen (mastracebench.txt §3, Table 1, appendix "OptionGen", eq 10, Figs 8 and 12).

A RACE reading-comprehension item (article, question, four options, the answer letter) is
turned into an open generation task: the MAS sees only the article and the question and writes
one correct option and three distractors. Scoring is criterion-grounded: two rubrics are built
per instance from the four reference options and the answer (a correct-option rubric and a
distractor rubric), withheld from the MAS, and a judge gives s_cor and s_dis on 0-100 along six
anchored intervals each (:data:`CORRECT_ANCHORS`, :data:`DISTRACTOR_ANCHORS`); the proposal
score is S = (s_cor + s_dis) / 2 (eq 10).

Items come from :mod:`.race` (the user's RACE copy: :func:`load_race`, layouts, ids and the
selection of n items); rubrics, prompts and judges from :mod:`.option_gen_judge` (with the
proposal type :class:`OptionSet` and :func:`normalize_option`). This module is the task itself
and re-exports both modules' public names, so everything stays importable from here.

Decisions the paper leaves open (ours; tested in tests/test_mastracebench_optiongen.py):

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
import re
from collections.abc import Hashable, Mapping
from typing import Any

from ..trajectory import Call
from .base import Invalid, is_invalid, json_values
from .option_gen_judge import (
    CORRECT_ANCHORS,
    DISTRACTOR_ANCHORS,
    JUDGE_MAX_TOKENS,
    JUDGE_REASKS,
    JUDGE_TEMPERATURE,
    JUDGE_THINKING,
    OFFLINE_RUBRIC_VERSION,
    PROMPT_VERSION,
    REASK_PROMPT,
    RUBRIC_PROMPT_VERSION,
    Judge,
    JudgeError,
    LLMJudge,
    LLMRubricBuilder,
    OptionSet,
    Rubric,
    RubricCache,
    RuleJudge,
    Verdict,
    judge_prompt,
    normalize_option,
    offline_rubric,
    option_gen_score,
    parse_judge_reply,
    rubric_prompt,
    rule_scores,
)
from .race import LETTERS, RACE_ENV, OptionGenItem, load_race, read_race, select_items

__all__ = [
    "CORRECT_ANCHORS",
    "DISTRACTOR_ANCHORS",
    "JUDGE_MAX_TOKENS",
    "JUDGE_REASKS",
    "JUDGE_TEMPERATURE",
    "JUDGE_THINKING",
    "LETTERS",
    "OFFLINE_RUBRIC_VERSION",
    "PROMPT_VERSION",
    "RACE_ENV",
    "REASK_PROMPT",
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


# --- canonical form and parser ---------------------------------------------------------------------

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
_D_LINE = re.compile(r"^\W*(?:distractors?|wrong options?|incorrect options?)\s*+#?\s*+(\d*+)\W*?[:=]\s*(.*)$",
                     re.IGNORECASE)  # possessive runs: not cubic in a run of spaces
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
