"""Where a team's steps go: each step record of an episode in one use (issue 28's step-use
breakdown; mecobench.txt §3.1 sequential tasks, appendix B.3 action space).

A sequential pair has 80 steps (§3.1); a team that "completes most objects and then runs out" spends
them somewhere. :func:`step_use` puts each step of ``run_episode``'s step records in exactly one of
:data:`USES`, first match wins:

=================  ====================================================================================
use                a step that ...
=================  ====================================================================================
``conflict``       collided with a teammate's action (the world's ``conflict`` flag: same object, §3.2 CAR)
``handing over``   moved an object between agents (a ``handover`` that succeeded, a ``receive`` that got
                   an object)
``waiting``        waited: ``wait``, a ``receive`` nobody answered, a ``walk_to_door`` to the door the
                   agent already stands at, a ``handover`` the partner did not receive
``failed``         any other action the world refused (already open, already holding, not holding, ...)
``manipulating``   grabbed or put a goal object
``walking``        walked to a goal object, a goal target or a door
``searching``      walked to or opened other furniture, or walked into a room
=================  ====================================================================================

The split reads the step's own record only (the class it walked to or opened), so it is a fast
reading, not a plan: a walk to the counter a goal object lies on, or the open of the fridge that
holds it, counts as searching. Ours: the paper has no such breakdown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["USES", "step_use"]

#: The uses, in the order of the table above (the first that matches).
USES = ("conflict", "handing over", "waiting", "failed", "manipulating", "walking", "searching")


def _use(s: Mapping[str, Any], goal: set[str], targets: set[str]) -> str:
    action, ok, feedback = s["action"], s["status"] == "ok", str(s.get("feedback") or "")
    if s.get("conflict"):
        return "conflict"
    if action == "handover" and s.get("handover") == "ok" or action == "receive" and "you received" in feedback:
        return "handing over"
    if (action == "wait" or action == "receive" or action == "walk_to_door" and "already at door" in feedback
            or action == "handover" and "did not receive" in feedback):
        return "waiting"
    if not ok:
        return "failed"
    if action in ("grab", "put_on", "put_in") and s.get("obj_class") in goal:
        return "manipulating"
    if action == "walk_to_door" or action == "walk" and s.get("obj_class") in goal | targets:
        return "walking"
    return "searching"


def step_use(steps: Iterable[Mapping[str, Any]], goal_classes: Iterable[str],
             target_classes: Iterable[str]) -> dict[str, int]:
    """Steps per use (:data:`USES`, every use present, zeros included) of one or more episodes'
    step records; ``goal_classes`` are the goal objects' classes, ``target_classes`` their target
    furniture's."""
    goal, targets = set(goal_classes), set(target_classes)
    counts = Counter(_use(s, goal, targets) for s in steps)
    return {u: counts.get(u, 0) for u in USES}
