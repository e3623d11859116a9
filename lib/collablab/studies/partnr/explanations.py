"""Why a PARTNR episode failed: a structured explanation from the evaluator, recorded with every
unsuccessful episode (PARTNR's evaluation document: the TaskEvaluationLog "enables detailed logging
and agent feedback"; observe_share_predict.txt §4.1 scores episodes by Success and Percent Complete).

PARTNR explains a failed episode in two steps: when some proposition was never satisfied it lists
those ("Episode failed. Missing steps"); otherwise it lists the broken constraints ("All steps were
completed, but constraints were broken": steps "completed out of order", "completed steps were
later undone", placements that should have used the same / different furniture, room or object).
:func:`explain` keeps all three lists, whatever the first step finds, and names one ``reason``:

* ``never_satisfied``: some proposition was never fully satisfied (PARTNR's first step);
* else the first constraint kind that invalidated a unit, in the order PARTNR's evaluation document
  lists the constraints: ``out_of_order`` (TemporalConstraint), ``same_argument``
  (SameArgConstraint), ``different_argument`` (DifferentArgConstraint), ``undone``
  (TerminalSatisfactionConstraint);
* ``no_propositions``: a task without propositions (it scores 0.0).

A successful episode has no explanation (``None``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .evaluation import Evaluator, before

__all__ = ["REASONS", "FailureExplanation", "explain"]

#: The failure reasons in priority order (the first that applies is the episode's ``reason``).
REASONS: tuple[str, ...] = ("never_satisfied", "out_of_order", "same_argument", "different_argument", "undone",
                            "no_propositions")
#: The constraint kind that each constraint type's broken units count as.
_KIND = {"TemporalConstraint": "out_of_order", "SameArgConstraint": "same_argument",
         "DifferentArgConstraint": "different_argument", "TerminalSatisfactionConstraint": "undone"}


@dataclass(frozen=True)
class FailureExplanation:
    """Why an episode failed (see the module docstring). Every entry names propositions and
    constraints by their index in the task's lists.

    - ``never_satisfied``: ``{"proposition", "function_name", "units_done", "units"}`` for each
      proposition never fully satisfied (``units_done`` of its ``number`` were);
    - ``out_of_order``: ``{"constraint", "proposition", "satisfied_at", "predecessors"}`` for each
      proposition a TemporalConstraint invalidated: its earliest invalid unit's step and the
      predecessors not satisfied strictly before it (``{"proposition", "satisfied_at", "tie"}``;
      ``satisfied_at`` -1: never; ``tie``: the same step);
    - ``broken``: ``{"constraint", "type", "propositions", "units"}`` for each SameArg,
      DifferentArg or TerminalSatisfaction constraint that invalidated units (the propositions
      it hit and how many units);
    - ``reason``: one of :data:`REASONS`.
    """

    reason: str
    never_satisfied: tuple[dict[str, Any], ...] = ()
    out_of_order: tuple[dict[str, Any], ...] = ()
    broken: tuple[dict[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if self.reason not in REASONS:
            raise ValueError(f"FailureExplanation.reason: invalid {self.reason!r}; allowed: {', '.join(REASONS)}")

    def to_dict(self) -> dict[str, Any]:
        """The explanation as JSON-ready dicts and lists (the episode record's ``failure``)."""
        d = asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}

    def text(self) -> str:
        """One line per finding, for a reader (PARTNR's explanation in our terms)."""
        lines = [f"reason: {self.reason}"]
        lines += [f"never satisfied: proposition {m['proposition']} ({m['function_name']}, "
                  f"{m['units_done']}/{m['units']} units)" for m in self.never_satisfied]
        for o in self.out_of_order:
            late = ", ".join(f"{p['proposition']} ({_when(p['satisfied_at'])}{', same step' if p['tie'] else ''})"
                               for p in o["predecessors"])
            lines.append(f"out of order: proposition {o['proposition']} at step {o['satisfied_at']} came before "
                         f"proposition(s) {late} (constraint {o['constraint']})")
        lines += [f"{b['type']} {b['constraint']} broken: proposition(s) {', '.join(map(str, b['propositions']))} "
                  f"({b['units']} unit(s))" for b in self.broken]
        return "\n".join(lines)


def _when(step: int) -> str:
    return "never" if step == -1 else f"step {step}"


def explain(evaluator: Evaluator) -> FailureExplanation | None:
    """Why the episode ``evaluator`` followed failed; None when it succeeded."""
    if evaluator.success():
        return None
    task = evaluator.task
    if not task.propositions:
        return FailureExplanation("no_propositions")
    done, steps, validity = evaluator.satisfied_at, evaluator.unit_steps, evaluator.unit_validity()
    missing = tuple({"proposition": i, "function_name": p.function_name,
                     "units_done": sum(t != -1 for t in steps[i]), "units": p.units}
                    for i, p in enumerate(task.propositions) if done[i] == -1)
    order: list[dict[str, Any]] = []
    broken: list[dict[str, Any]] = []
    kinds: set[str] = set()
    for c, (con, valid) in enumerate(zip(task.constraints, validity)):
        hit = [(i, k) for i, units in enumerate(valid) for k, ok in enumerate(units) if not ok and steps[i][k] != -1]
        if not hit:
            continue
        kinds.add(_KIND[con.type])
        if con.type != "TemporalConstraint":
            broken.append({"constraint": c, "type": con.type, "propositions": sorted({i for i, _ in hit}),
                           "units": len(hit)})
            continue
        ancestors = con.ancestors()
        for b in sorted({i for i, _ in hit}):
            t = min(steps[b][k] for i, k in hit if i == b)
            late = [{"proposition": a, "satisfied_at": done[a], "tie": done[a] == t}
                    for a in sorted(ancestors.get(b, ())) if not before(done[a], t)]
            order.append({"constraint": c, "proposition": b, "satisfied_at": t, "predecessors": late})
    # every proposition held yet Percent Complete < 1: some constraint invalidated a unit
    reason = "never_satisfied" if missing else next(r for r in REASONS if r in kinds)
    return FailureExplanation(reason, missing, tuple(order), tuple(broken))
