"""Per-agent and team metrics of one episode (observe_share_predict.txt §4.2-4.5, §A.3).

The paper names its metrics without formulas; these are our definitions (each tested):

- **success**, **percent complete**: PARTNR's evaluation (:mod:`.evaluation`); percent complete
  of failed episodes is the mean over episodes that did not succeed (computed in tables);
- **simulation steps**: the clock when the episode ended; **planning cycles**: decisions taken;
- **action success**: successful actions over actions (Done and Wait excluded; an invalid reply
  counts as a failed action);
- **extraneous effort**: extraneous actions over actions (Done and Wait excluded), each action
  classed by :func:`classify` (below);
- **task offloading**: the robot's share of the team's advancing actions;
- **exploration efficiency**: the step at which the agent's first successful object interaction
  ended (Pick, Place, Rearrange or a state tool on an object); None if it never interacted;
- **extra planning**: planning cycles after the agent's last advancing action over its cycles;
- **other-agent mention ratio**: cycles whose thought mentions the partner over cycles;
- **prediction accuracies** (OANA): :class:`.prediction.PredictionTally` rates, union and strict;
  a prediction made when the partner had no action left is counted apart (``pred_no_target``).

**Credit by cause.** Each action is *advancing*, *supporting*, *extraneous* or *idle*, judged
by what the action itself did, never by what changed while it ran: a partner's Place that lands
during my Navigate is the partner's. The paper's words this rests on: Task Offloading measures
"work allocation" and "the division of labor" (§A.3.2, §4.3), so the work must be credited to
the agent that did it; Extraneous Effort measures "duplicated actions" and "redundant work"
(§A.3.2, §A.4.1), work that coordination could have spared ("revealing targets without showing
that the partner is already acting on them", §A.3.1); Extra Planning counts the cycles an agent
spends "after it stops acting" usefully (§A.3.2). Progress is PARTNR's: "the number of
propositions satisfied" (TaskPercentComplete, evaluation_README.md); an action's own effect
(:attr:`.episode.ActionLog.progress_own`) is the change of that number its own phases made.

The rules, first match wins (an *object action of the agent* is its advancing action or its
supporting Pick naming the object; *later* means later in the log; *located* means the action's
own view put the object's place into its agent's world graph, :attr:`.episode.ActionLog.found`):

====  ======================================================  ===========  ============================================
case  the action                                              class        example
====  ======================================================  ===========  ============================================
1     Wait or Done                                            idle         ``Done[]`` after its last Place
2     failed, or no valid call                                extraneous   Pick of an object the partner holds
3     chosen once the task was complete (``completed_at``:    extraneous   Open[cabinet] after the last unit was met
      its last unit met, the episode a success)
4     any call whose own effect raised the satisfied count;   advancing    Place[cup, on, table] meets is_on_top
      a Place (or Rearrange) of a held object counts net of
      its own Pick (the carry)
5     Place or Rearrange whose carry nets zero or less        extraneous   Pick[cup] off the goal (-1), Place back (+1)
6     Pick followed, while the agent holds the object, by     supporting   Pick[cup] ... Place[cup, on, table]
      an advancing action of the same agent
7     any other Pick                                          extraneous   Pick[cup] placed where no proposition asks
8     Open of furniture from which a later supporting Pick    supporting   my Open[fridge], the partner's Pick[milk]
      or advancing Rearrange of either agent took its                      out of it
      object, or into which a later advancing Place or
      Rearrange put one ("within"); the last Open before it
9     Navigate whose next own action is an advancing or       supporting   Navigate[table] then Place[cup, on, table]
      supporting interaction
10    Navigate or Explore that located an object of a later   supporting   Explore[kitchen] finds the cup it then picks
      object action of the same agent
11    the team's first Explore of a room (no agent had        supporting   Explore[bedroom] finds a book and a lamp,
      explored it) or first Open of a furniture, that                      none of them the task's
      located at least one object (a search new to the team)
12    anything else: walks that lead nowhere, searches        extraneous   Navigate[cup] while the partner's Place of
      repeated or locating nothing, Close, effects that                    the cup lands; Open of a cabinet the partner
      raised nothing                                                       opened and closed before
====  ======================================================  ===========  ============================================

Decided here: a walk is credited only through a later useful action of its own agent, a Pick
through the carry it starts, an Open through whoever uses the container (it stays open for
both); Explore and Navigate only through their own agent's later actions (what Knowledge
Exchange passes on carries no sender, §3.2). A search of a room or furniture nobody had searched,
which located something, is supporting even when nothing it located was the task's (case 11):
under partial observability searching is the work of finding the objects, and the paper's
Extraneous Effort is about "duplicated" and "redundant" work, most of which "survived perfect
object knowledge" (§A.4.1), so it cannot be mostly search; under full observability a search
locates nothing and is extraneous.
"""

from __future__ import annotations

import math
from typing import Any

from .calls import ToolCall, parse_call
from .episode import INTERACTIONS, ROLES, ActionLog, EpisodeResult
from .prediction import PredictionTally

IDLE = ("Wait", "Done")
OBJECT_TOOLS = ("Pick", "Place", "Rearrange", "Clean", "Fill", "Pour", "PowerOn", "PowerOff")


def _parts(call: str | None) -> tuple[str, tuple[str, ...]]:
    """``(tool, args)`` of a logged call text (``("", ())`` when there is none)."""
    c = _call(call)
    return (c.name, c.args) if c is not None else ("", ())


ADVANCING, SUPPORTING, EXTRANEOUS, IDLE_KIND = "advancing", "supporting", "extraneous", "idle"
KINDS = (ADVANCING, SUPPORTING, EXTRANEOUS, IDLE_KIND)
PUTS_DOWN = ("Place", "Rearrange")


def classify(logs: list[ActionLog], completed_at: int | None = None) -> list[str]:
    """:data:`KINDS` per log by the rules of the module docstring (credit by cause).

    ``logs`` are one episode's, in the order they were chosen; ``completed_at`` is the step at
    which the task was complete (:attr:`.episode.EpisodeResult.completed_at`; None: never).
    """
    n = len(logs)
    parts = [_parts(log.call) for log in logs]
    kinds: list[str | None] = [None] * n
    for i, log in enumerate(logs):  # cases 1-3
        if parts[i][0] in IDLE:
            kinds[i] = IDLE_KIND
        elif not log.ok or log.call is None or (completed_at is not None and log.start >= completed_at):
            kinds[i] = EXTRANEOUS
    picks = _carries(logs, parts)
    for i, log in enumerate(logs):  # cases 4-5
        if kinds[i] is None:
            net = log.progress_own + (logs[picks[i]].progress_own if i in picks else 0)
            if net > 0:
                kinds[i] = ADVANCING
            elif parts[i][0] in PUTS_DOWN:
                kinds[i] = EXTRANEOUS
    for p, span in _holding(logs, parts, kinds).items():  # cases 6-7
        kinds[p] = SUPPORTING if any(kinds[j] == ADVANCING for j in span) else EXTRANEOUS
    for i in _used_opens(logs, parts, kinds):  # case 8
        kinds[i] = SUPPORTING
    searched: set[tuple[str, str]] = set()
    for i, log in enumerate(logs):  # cases 9-12
        name, args = parts[i]
        first = name in ("Open", "Explore") and log.ok and bool(args) and (name, args[0]) not in searched
        if first:
            searched.add((name, args[0]))
        if kinds[i] is not None:
            continue
        nxt = next((j for j in range(i + 1, n) if logs[j].agent == log.agent), None)
        led = (name == "Navigate" and nxt is not None and parts[nxt][0] in INTERACTIONS
               and kinds[nxt] in (ADVANCING, SUPPORTING))
        found = name in ("Navigate", "Explore") and bool(set(log.found) & _object_actions(logs, parts, kinds, i))
        new = first and bool(log.found) and (name == "Open" or log.explored_new)
        kinds[i] = SUPPORTING if led or found or new else EXTRANEOUS
    return [k or EXTRANEOUS for k in kinds]


def _carries(logs: list[ActionLog], parts: list[tuple[str, tuple[str, ...]]]) -> dict[int, int]:
    """``{put-down index: its Pick's index}``: a successful Place (or Rearrange) of the object an
    agent holds since its own successful Pick."""
    held: dict[int, tuple[int, str]] = {}
    out = {}
    for i, log in enumerate(logs):
        name, args = parts[i]
        if not log.ok or log.call is None or not args:
            continue
        if name == "Pick":
            held[log.agent] = (i, args[0])
        elif name in PUTS_DOWN and log.agent in held and held[log.agent][1] == args[0]:
            out[i] = held.pop(log.agent)[0]
    return out


def _holding(logs: list[ActionLog], parts: list[tuple[str, tuple[str, ...]]],
             kinds: list[str | None]) -> dict[int, list[int]]:
    """``{unclassed Pick: the agent's own actions while it held the object}`` (to the put-down)."""
    out: dict[int, list[int]] = {}
    for p, log in enumerate(logs):
        if kinds[p] is not None or parts[p][0] != "Pick":
            continue
        obj, span = parts[p][1][0] if parts[p][1] else "", []
        for j in range(p + 1, len(logs)):
            if logs[j].agent != log.agent:
                continue
            span.append(j)
            if logs[j].ok and parts[j][0] in PUTS_DOWN and parts[j][1][:1] == (obj,):
                break
        out[p] = span
    return out


def _used_opens(logs: list[ActionLog], parts: list[tuple[str, tuple[str, ...]]],
                kinds: list[str | None]) -> set[int]:
    """Opens whose container a later useful Pick, Place or Rearrange of either agent used (case 8)."""
    used = set()
    for j, log in enumerate(logs):
        name, args = parts[j]
        useful = (kinds[j] == SUPPORTING and name == "Pick") or (kinds[j] == ADVANCING and name in PUTS_DOWN)
        if not useful:
            continue
        containers = {log.taken_from} - {None}
        if name in PUTS_DOWN and len(args) >= 3 and args[1] == "within":
            containers.add(args[2])
        for f in containers:
            opens = [i for i in range(j) if kinds[i] is None and parts[i][0] == "Open" and parts[i][1][:1] == (f,)
                     and logs[i].end <= log.end]
            if opens:
                used.add(opens[-1])
    return used


def _object_actions(logs: list[ActionLog], parts: list[tuple[str, tuple[str, ...]]],
                    kinds: list[str | None], i: int) -> set[str]:
    """Objects named first by the later advancing actions and supporting Picks of log ``i``'s agent."""
    a = logs[i].agent
    return {parts[j][1][0] for j in range(i + 1, len(logs)) if logs[j].agent == a and parts[j][1]
            and (kinds[j] == ADVANCING or (kinds[j] == SUPPORTING and parts[j][0] == "Pick"))}


def _ratio(num: float, den: float) -> float:
    return num / den if den else math.nan


def agent_metrics(result: EpisodeResult, oana: bool = False) -> dict[str, dict[str, Any]]:
    """``{role: {metric: value}}`` for the robot and the human, plus ``"team"``; with ``oana``
    every planning cycle carried a prediction (§3.3), scored by :class:`.prediction.PredictionTally`."""
    logs = result.logs
    kinds = classify(logs, result.completed_at)
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
        for log, _ in mine if oana else ():
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
            **({f"pred_{k}": v for k, v in tally.rates().items()} if tally.made else {}),
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


__all__ = ["ADVANCING", "EXTRANEOUS", "IDLE", "IDLE_KIND", "KINDS", "OBJECT_TOOLS", "PUTS_DOWN", "SUPPORTING", "agent_metrics",
           "classify"]
