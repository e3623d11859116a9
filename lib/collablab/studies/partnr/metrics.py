"""Per-agent and team metrics of one episode (observe_share_predict.txt §4.2-4.5, §A.3).

The paper names its metrics without formulas; these are our definitions (each tested):

- **success**, **percent complete**: PARTNR's evaluation (:mod:`.evaluation`); percent complete
  of failed episodes is the mean over episodes that did not succeed (computed in tables);
- **simulation steps**: the clock when the episode ended; **planning cycles**: decisions taken;
- **action success**: successful actions over actions (Done and Wait excluded; an invalid reply
  counts as a failed action);
- **extraneous effort**: extraneous actions over actions (Done and Wait excluded). An action is
  *advancing* when it raised the number of satisfied propositions, or picked an object the task
  names, or set a state of an entity the task names; *supporting* when it was an Explore of a
  room neither agent had explored yet, an Open, or a Navigate followed by a successful
  interaction by the same agent; everything else is *extraneous*: failed actions, repeated
  explorations, walks that lead nowhere, handling objects the task does not name;
- **task offloading**: the robot's share of the team's advancing actions;
- **exploration efficiency**: the step at which the agent's first successful object interaction
  ended (Pick, Place, Rearrange or a state tool on an object); None if it never interacted;
- **extra planning**: planning cycles after the agent's last advancing action over its cycles;
- **other-agent mention ratio**: cycles whose thought mentions the partner over cycles;
- **prediction accuracies** (OANA): :class:`.prediction.PredictionTally` rates, union and strict.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from .calls import ToolCall, parse_call
from .episode import INTERACTIONS, ROLES, ActionLog, EpisodeResult
from .prediction import PredictionTally

IDLE = ("Wait", "Done")
OBJECT_TOOLS = ("Pick", "Place", "Rearrange", "Clean", "Fill", "Pour", "PowerOn", "PowerOff")
STATE_TOOLS = ("Clean", "Fill", "Pour", "PowerOn", "PowerOff")


def _parts(call: str | None) -> tuple[str, tuple[str, ...]]:
    """``(tool, args)`` of a logged call text (``("", ())`` when there is none)."""
    c = _call(call)
    return (c.name, c.args) if c is not None else ("", ())


def task_entities(propositions: Iterable[Any]) -> set[str]:
    """Every handle the task's propositions name."""
    out: set[str] = set()

    def walk(v: Any) -> None:
        if isinstance(v, str):
            out.add(v)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
    for p in propositions:
        for v in p.args.values():
            walk(v)
    return out


def classify(logs: list[ActionLog], task_handles: set[str]) -> list[str]:
    """``"advancing" | "supporting" | "extraneous" | "idle"`` per log (see the module docstring)."""
    kinds = []
    explored: set[str] = set()
    for i, log in enumerate(logs):
        name, args = _parts(log.call)
        if name in IDLE:
            kinds.append("idle")
            continue
        if not log.ok or log.call is None:
            kinds.append("extraneous")
            continue
        if log.progress_after > log.progress_before:
            kinds.append("advancing")
        elif name in ("Pick", "Rearrange") and args and args[0] in task_handles:
            kinds.append("advancing")
        elif name in STATE_TOOLS and args and args[0] in task_handles:
            kinds.append("advancing")
        elif name == "Explore":
            kinds.append("supporting" if log.explored_new and args[0] not in explored else "extraneous")
        elif name == "Open":
            kinds.append("supporting")
        elif name == "Navigate":
            nxt = next((x for x in logs[i + 1:] if x.agent == log.agent), None)
            kinds.append("supporting" if nxt is not None and nxt.ok and _parts(nxt.call)[0] in INTERACTIONS else "extraneous")
        else:
            kinds.append("extraneous")
        if name == "Explore" and args:
            explored.add(args[0])
    return kinds


def _ratio(num: float, den: float) -> float:
    return num / den if den else math.nan


def agent_metrics(result: EpisodeResult, task_handles: set[str]) -> dict[str, dict[str, Any]]:
    """``{role: {metric: value}}`` for the robot and the human, plus ``"team"``."""
    logs = result.logs
    kinds = classify(logs, task_handles)
    out: dict[str, dict[str, Any]] = {}
    adv_by = {}
    for a, role in enumerate(ROLES):
        mine = [(log, k) for log, k in zip(logs, kinds) if log.agent == a]
        acting = [(log, k) for log, k in mine if k != "idle"]
        advancing = [log for log, k in mine if k == "advancing"]
        adv_by[role] = len(advancing)
        first = next((log.end for log, _ in mine if log.ok and _parts(log.call)[0] in OBJECT_TOOLS
                      and _parts(log.call)[1][:1] not in ((), ("None",))), None)
        last_adv = max((log.cycle for log in advancing), default=0)
        cycles = result.cycles[a]
        tally = PredictionTally(agent=role)
        for log, _ in mine:
            if log.prediction is not None or log.pred_current is not None or log.pred_next is not None:
                tally.add(_call(log.prediction), _call(log.pred_current), _call(log.pred_next))
        out[role] = {
            "planning_cycles": cycles,
            "actions": len(acting),
            "action_success": _ratio(sum(log.ok for log, _ in acting), len(acting)),
            "extraneous_effort": _ratio(sum(k == "extraneous" for _, k in acting), len(acting)),
            "advancing_actions": len(advancing),
            "exploration_efficiency": first,
            "extra_planning": _ratio(cycles - last_adv, cycles) if cycles else math.nan,
            "mention_ratio": _ratio(sum(_mentions(log) for log, _ in mine), len(mine)),
            "finished_at": max((log.end for log, _ in mine), default=0),
            "tokens": sum(log.tokens for log, _ in mine),
            **({f"pred_{k}": v for k, v in tally.rates().items()} if tally.n else {}),
        }
    team_acting = [k for k in kinds if k != "idle"]
    out["team"] = {
        "success": bool(result.success), "percent_complete": float(result.percent_complete),
        "simulation_steps": result.steps, "planning_cycles": sum(result.cycles),
        "action_success": _ratio(sum(log.ok for log, k in zip(logs, kinds) if k != "idle"), len(team_acting)),
        "extraneous_effort": _ratio(team_acting.count("extraneous"), len(team_acting)),
        "task_offloading": _ratio(adv_by["robot"], adv_by["robot"] + adv_by["human"]),
        "end_reason": result.end_reason,
    }
    return out


def _call(text: str | None) -> ToolCall | None:
    if text is None:
        return None
    try:
        return parse_call(text)
    except ValueError:
        return None


def _mentions(log: ActionLog) -> bool:
    other = "human" if log.role == "robot" else "robot"
    words = (f"agent_{1 - log.agent}", other, "partner", "other agent", "collaborator")
    low = log.thought.lower()
    return any(w in low for w in words)


__all__ = ["IDLE", "OBJECT_TOOLS", "STATE_TOOLS", "agent_metrics", "classify", "task_entities"]
