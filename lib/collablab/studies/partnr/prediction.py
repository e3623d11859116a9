"""Scoring Other-Agent Next-Action (OANA) predictions (observe_share_predict.txt §3.3, §4.4, §4.5, §A.2, §A.5).

A prediction is a :class:`~.calls.ToolCall` or ``None`` (no valid prediction: wrong at every
granularity). It is compared with two targets: the partner's action running when the prediction
was made (``current``) and the partner's next chosen action (``next``); either may be ``None``
(no action, or the episode ended), and a ``None`` target matches nothing.

Conventions (decided here; §A.2 gives only examples):

- Both sides are masked to classes first (:meth:`ToolCall.masked`), so ``Pick[cup_3]`` matches
  ``Pick[cup_1]`` and the class-level ``Pick[cup]``. A 3-argument Place/Rearrange is padded to
  5 with ``"None"``, so relation, constraint and reference are always compared.
- :class:`PredictionScore` reports each granularity *raw*: ``type`` (same tool name),
  ``principal`` (same principal parameter, whatever the tools) and ``all_params`` (same
  parameter tuple, whatever the tools); the *joint* scores the paper reports require the type
  too: ``Navigate[book]`` vs ``Pick[book]`` has ``principal`` true but ``joint_principal``
  false (§A.2).
- A call without parameters (``Wait[]``, ``Done[]``) has no principal parameter; for it the
  parameter comparisons equal the type comparison, so ``Wait[]`` matches ``Wait[]`` at every
  granularity and ``Done[]`` at none.
- Targets (§3.3, §A.5.1): ``strict`` scores against ``next`` only; ``union`` credits a
  granularity if the prediction matches ``current`` or ``next`` there. Joint scores are joined
  per target first (type and parameter of the same action), then united.
- Rates (:meth:`PredictionTally.rates`): ``type_acc``, ``principal_acc`` and ``all_acc`` are
  joint accuracies over all predictions; ``cond_principal`` and ``cond_all`` are the joint
  counts over predictions with the right type; ``type_given_all`` is the joint count over
  predictions whose parameters are all right (the paper's 84.8%, §A.3.3). NaN on a zero
  denominator.
- **No target** (ours): a prediction made when the partner has no action left has both targets
  ``None`` (in an episode: the partner was Done or out of planning cycles, so it ran nothing
  and chose nothing after; or, at the very first cycle, its first reply was no valid call):
  there is nothing to predict, and it is counted apart (``no_target``), in no
  accuracy's denominator, for union and strict alike; ``no_target_share`` is its share of all
  predictions made. The paper scores predictions "compared with current and next partner
  actions" (§3.3); with neither action there is no comparison.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .calls import TOOLS, ToolCall, parse_call

__all__ = [
    "GRANULARITIES",
    "TARGETS",
    "PredictionScore",
    "PredictionTally",
    "prediction_table",
    "score_against",
    "score_prediction",
]

#: The keys of one target's scores, raw then joint.
GRANULARITIES: tuple[str, ...] = ("type", "principal", "all_params", "joint_principal", "joint_all")
#: The two targets (§3.3, §A.5.1).
TARGETS: tuple[str, ...] = ("union", "strict")


@dataclass(frozen=True)
class PredictionScore:
    """One prediction against one target, both masked to classes; the fields are raw."""

    type: bool
    principal: bool
    all_params: bool

    @property
    def joint_principal(self) -> bool:
        """Right tool and right principal parameter."""
        return self.type and self.principal

    @property
    def joint_all(self) -> bool:
        """Right tool and every parameter right."""
        return self.type and self.all_params

    def as_dict(self) -> dict[str, bool]:
        """The five granularities of :data:`GRANULARITIES`."""
        return {g: bool(getattr(self, g)) for g in GRANULARITIES}


_WRONG = PredictionScore(False, False, False)


def score_against(pred: ToolCall | None, target: ToolCall | None) -> PredictionScore:
    """Score ``pred`` against one target after masking both to classes."""
    if pred is None or target is None:
        return _WRONG
    p, t = pred.masked(), target.masked()
    same_type = p.name == t.name
    if not p.args or not t.args:
        principal = all_params = same_type and p.args == t.args
    else:
        principal, all_params = p.args[0] == t.args[0], p.args == t.args
    return PredictionScore(same_type, principal, all_params)


def score_prediction(pred: ToolCall | None, current: ToolCall | None,
                     next_: ToolCall | None) -> dict[str, dict[str, bool]]:
    """``{"union": {...}, "strict": {...}}``, each mapping :data:`GRANULARITIES` to a bool."""
    on_current, on_next = score_against(pred, current).as_dict(), score_against(pred, next_).as_dict()
    return {"union": {g: on_current[g] or on_next[g] for g in GRANULARITIES}, "strict": on_next}


def _ratio(num: int, den: int) -> float:
    return num / den if den else math.nan


@dataclass
class PredictionTally:
    """Counts of scored predictions (one tally per agent, say) and their rates.

    ``counts`` maps ``"<target>.<granularity>"`` to the number of predictions credited there.
    """

    agent: str | None = None
    n: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    no_target: int = 0

    @property
    def made(self) -> int:
        """Every prediction counted: scored (``n``) and without a target (``no_target``)."""
        return self.n + self.no_target

    def add(self, pred: ToolCall | None, current: ToolCall | None,
            next_: ToolCall | None) -> dict[str, dict[str, bool]] | None:
        """Score one prediction (:func:`score_prediction`), count it and return its scores; one
        with neither target is counted in ``no_target`` only and returns None."""
        if current is None and next_ is None:
            self.no_target += 1
            return None
        scored = score_prediction(pred, current, next_)
        self.add_scored(scored)
        return scored

    def add_scored(self, scored: Mapping[str, Mapping[str, bool]]) -> None:
        """Count one prediction already scored by :func:`score_prediction`."""
        missing = [f"{t}.{g}" for t in TARGETS for g in GRANULARITIES if g not in scored.get(t, {})]
        if missing:
            raise ValueError(f"scored prediction lacks {missing}")
        self.n += 1
        for t in TARGETS:
            for g in GRANULARITIES:
                key = f"{t}.{g}"
                self.counts[key] = self.counts.get(key, 0) + bool(scored[t][g])

    def rates(self) -> dict[str, float]:
        """``<target>_<rate>`` for target in :data:`TARGETS` (with ``_n`` scored, ``_no_target``
        and ``_no_target_share``); NaN where a denominator is 0."""
        out: dict[str, float] = {}
        for t in TARGETS:
            c = {g: self.counts.get(f"{t}.{g}", 0) for g in GRANULARITIES}
            out.update({
                f"{t}_type_acc": _ratio(c["type"], self.n),
                f"{t}_principal_acc": _ratio(c["joint_principal"], self.n),
                f"{t}_all_acc": _ratio(c["joint_all"], self.n),
                f"{t}_cond_principal": _ratio(c["joint_principal"], c["type"]),
                f"{t}_cond_all": _ratio(c["joint_all"], c["type"]),
                f"{t}_type_given_all": _ratio(c["joint_all"], c["all_params"]),
                f"{t}_n": self.n,
                f"{t}_no_target": self.no_target,
                f"{t}_no_target_share": _ratio(self.no_target, self.made),
            })
        return out


def _as_call(value: ToolCall | str | None, lenient: bool) -> ToolCall | None:
    if value is None or isinstance(value, ToolCall):
        return value
    try:
        return parse_call(value, tuple(TOOLS))
    except ValueError:
        if lenient:
            return None
        raise


def prediction_table(records: Iterable[Mapping[str, object]], by: Sequence[str] = ("agent",)) -> list[dict[str, object]]:
    """One row of rates per group of records, groups in order of first appearance.

    Each record has ``prediction``, ``current`` and ``next`` (a ToolCall, call text or None)
    and the ``by`` keys. An unparsable prediction text counts as no prediction; an
    unparsable target text is a ValueError.
    """
    tallies: dict[tuple[object, ...], PredictionTally] = {}
    for rec in records:
        key = tuple(rec.get(k) for k in by)
        tally = tallies.setdefault(key, PredictionTally())
        tally.add(_as_call(rec.get("prediction"), True),  # type: ignore[arg-type]
                  _as_call(rec.get("current"), False), _as_call(rec.get("next"), False))  # type: ignore[arg-type]
    return [{**dict(zip(by, key)), **tally.rates()} for key, tally in tallies.items()]
