"""CoELA as a DynaHMRC baseline (dynahmrc.tex §4.2; Zhang et al., "Building Cooperative Embodied
Agents Modularly with Large Language Models", ICLR 2024), in this study's action space.

§4.2: "CoELA employs a decentralized, cognitive-inspired framework where LLMs perform high-level
planning and communication, while dedicated modules manage low-level perception and execution";
lab:diff_memory_length: "for CoELA ... [M] denotes the per-agent memory queue length". CoELA's five
modules, as each robot runs them here:

- **Perception** is the world's: what the robot perceives enters its scene graph (:meth:`~.world.
  RobotWorld.perceive`), as for every method.
- **Memory** is the robot's :class:`~.brain.Context`: semantic memory (its scene graph, facts
  ``<object> is on <place>`` in the messages it received, the task status), episodic memory (the
  last M actions, feedbacks and messages). What it has searched, the stand poses that failed and
  the places it cannot enter are read from that history by the same rules as the offline robot
  (:class:`~.offline.OfflineBrain`'s ``_history``; a rule-based reading of memory, no judgement).
- **Planning** is one LLM call per step (``coela_plan_*.txt``) that picks one of the high-level
  plans :func:`plan_options` generates from the memory: ``go grab <object> (on <place>)``, ``put
  <object> on <platform>``, ``open <container>``, ``explore <place> (<room>)``, ``send a message``,
  ``wait``; CoELA's options are lettered ``A.``, ``B.`` ... and so are ours.
- **Communication** is a second LLM call (``coela_comm_*.txt``) made only when the planning module
  picks ``send a message`` (CoELA: the planning module decides *when* to send, the communication
  module *what*); its message becomes one ``communicate`` action (one CC event, §4.4).
- **Execution** turns the chosen plan into this step's primitive action, by rule
  (:func:`plan_options` computes it with the option): go to the place's stand pose nearest the
  object (skipping poses that failed), pick when the object is within reach, move toward it when
  at the place but out of reach after a failed pick (the option's action is ``move()``: the framework
  shows the local costmap to the rule that picks the free cell nearest the object,
  :meth:`~.offline.OfflineBrain.move_offset`; no LLM call, the module is "dedicated"), open or
  place once at the place.

Decisions (ours, where the action space forces a reading):

- **Order of the two calls.** CoELA's released code asks the communication module for a message
  first and offers it as ``send a message: <text>``; the paper's division ("when" to the planner,
  "what" to the communicator) is kept here with the message generated only once chosen, so a step
  without a message costs one call.
- **Options.** Grab options are the known targets still to place (and objects wrongly in a
  receptacle, a target on the wrong panel included) the robot can pick: for the tabletop
  manipulator only those within its reach (it cannot go to them); explore options the navigable
  places not yet searched, not the working table or a receptacle; open options every closed
  container; put options every receptacle, the working table (a hand-off) and the place the robot
  stands at (setting the object down, e.g. one CTO made no longer a target); ``send a message``
  when the robot has teammates; ``wait`` always. The list is what the state allows, as CoELA's
  plan list comes from its belief: places its memory found restricted (Navigation Failed (4)) stay
  listed, and the planning prompt says which they are ("Places I cannot enter"): judging them is
  the planning module's job, not the list's. Each option's execution covers every step of that plan
  (walking with the object to the stand pose nearest the receptacle, another stand pose after a
  failed pick or navigation), so every action the offline robot's rules choose is some option's
  action (measured: 0 of 13,823 rule decisions without one, static and every variation, 5 seeds).
- **Recipients.** A message goes to the names on the reply's ``Recipients:`` line, to ``all`` when
  it has none (CoELA's two agents always broadcast).
- **Replies.** Both calls are read by the study's reply reading (:func:`.llm_brain.parse_sections`):
  a cut or empty reply is ``invalid`` and never parsed; a choice that names no option, or a message
  call without ``Contents:``, is ``invalid``: the framework records an invalid action.
- **Offline.** :class:`~.offline.OfflineBrain` picks among the same options the way it chooses an
  action (its rules' action mapped to the option that yields it, a slip to a random option; same
  profile), and its communication module sends the message its rules wrote.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from .brain import Context, Reply, letter
from .layout import distance

__all__ = ["KINDS", "MESSAGE", "PlanOption", "WAIT", "letter", "memory_reader", "options_text", "plan_options"]

MESSAGE = "send a message"
WAIT = "wait"
KINDS = ("grab", "put", "open", "explore", "message", "wait")


@dataclass(frozen=True)
class PlanOption:
    """One high-level plan: ``label`` as the prompt shows it, ``action`` the primitive action the
    execution module gives for this step ("" for ``send a message``: the communication module writes
    it), ``kind`` one of :data:`KINDS`, ``target`` its object or place."""

    label: str
    action: str
    kind: str
    target: str = ""


def options_text(options: Sequence[PlanOption]) -> str:
    """The options as CoELA lists them: ``A. <label>`` one per line."""
    return "\n".join(f"{letter(i)}. {o.label}" for i, o in enumerate(options))


def memory_reader() -> Any:
    """An offline robot used only to read a Context's histories (what was searched, where it cannot
    go): the same rules the offline robot acts on, no choice of its own."""
    from .offline import OfflineBrain

    return OfflineBrain("memory", "Ma")


def _pose_toward(ctx: Context, place: str, near, bad: set[int]) -> int | None:
    pv = next((p for p in ctx.places if p.handle == place), None)
    if pv is None or not pv.stand_poses:
        return None
    order = sorted(range(len(pv.stand_poses)), key=lambda k: (distance(pv.stand_poses[k], near) if near else k, k))
    return next((k for k in order if k not in bad), None)


def _go(ctx: Context, place: str, near, bad_poses: dict[str, set[int]]) -> str | None:
    k = _pose_toward(ctx, place, near, bad_poses.get(place, set()))
    return f"navigate({place}, stand_pose_{k})" if k is not None else None


def _grab(ctx: Context, obj: str, place: str, bad_poses: dict[str, set[int]]) -> str | None:
    """The execution module's step toward picking ``obj`` on ``place``: go to the stand pose nearest
    it; there (or within 1.6 m), pick; after a pick that failed for reach (Pick Failed (4)), move
    toward it (at most three moves since the last navigation, a type that can move), then try the
    next stand pose not tried (the offline robot's pick rules, :class:`~.offline.OfflineBrain`)."""
    pos = ctx.objects.get(obj, (None, None))[1]
    if not ctx.type.mobile:
        return f"pick({obj})" if pos is not None and distance(ctx.pos, pos) <= ctx.type.reach_m else None
    reader = memory_reader()
    close = pos is not None and distance(ctx.pos, pos) < 1.6
    if pos is not None and (ctx.at == place or close):
        kinds = ctx.feedback_kinds
        fails = [k for a, k in zip(ctx.action_history[-len(kinds):], kinds) if a == f"pick({obj})"] if kinds else []
        last = bool(ctx.action_history) and ctx.action_history[-1] == f"pick({obj})"
        if last and fails and fails[-1] == "pick_failed_2" and ctx.at != place:
            return _go(ctx, place, pos, bad_poses)
        if last and fails and fails[-1] == "pick_failed_4":
            if ctx.type.can("move") and reader._moves_since_navigation(ctx) < 3:
                return "move()"  # the framework's execution step reads the local costmap (see coela_act)
            tried = reader._tried_poses(ctx, place, obj) | {reader._current_pose(ctx, place)}
            k = _pose_toward(ctx, place, pos, bad_poses.get(place, set()) | tried)
            return f"navigate({place}, stand_pose_{k})" if k is not None else None
        return f"pick({obj})"
    return _go(ctx, place, pos, bad_poses)


def _put(ctx: Context, obj: str, where: str, bad_poses: dict[str, set[int]]) -> str | None:
    """The execution module's step toward placing ``obj`` on ``where``: a mobile robot first goes to
    the working table's stand pose nearest the receptacle (``where``, or the object's own for a
    hand-off on the table; skipping failed poses), then places."""
    if not ctx.type.mobile:
        return f"place({obj}, {where})"
    table = ctx.task.working_table
    aim = where if where in ctx.task.receptacles else memory_reader()._receptacle(ctx, obj)
    rec = next((p for p in ctx.places if p.handle == aim), None)
    want = _pose_toward(ctx, table, rec.pos if rec else None, bad_poses.get(table, set()))
    if ctx.at != table or (want is not None and memory_reader()._current_pose(ctx, table) != want):
        return f"navigate({table}, stand_pose_{want})" if want is not None else None
    return f"place({obj}, {where})"


def plan_options(ctx: Context) -> list[PlanOption]:
    """CoELA's list of high-level plans for robot ``ctx.name`` now, each with this step's primitive
    action (see the module docstring), in a fixed order: put, grab, open, explore, send a message,
    wait."""
    reader = memory_reader()
    remaining, wrong = reader._status(ctx)
    loc = reader._knowledge(ctx)
    visited, bad_poses, _, _, _ = reader._history(ctx)
    views = {p.handle: p for p in ctx.places}
    table = ctx.task.working_table
    out: list[PlanOption] = []
    t = ctx.type
    if ctx.held is not None and t.can("place"):
        obj = ctx.held
        for where in [*ctx.task.receptacles, table]:
            act = _put(ctx, obj, where, bad_poses)
            if act is not None:
                out.append(PlanOption(f"put {obj} on {where}", act, "put", where))
        if ctx.at and ctx.at not in (*ctx.task.receptacles, table):  # set it down where it stands
            out.append(PlanOption(f"put {obj} on {ctx.at}", f"place({obj}, {ctx.at})", "put", ctx.at))
    elif t.can("pick"):
        for obj in [*remaining, *[o for o in wrong if o not in remaining]]:
            place = loc.get(obj)
            if place is None or (place in ctx.task.receptacles and obj in remaining and obj not in wrong):
                continue
            if t.mobile and place not in views:
                continue  # a place it cannot navigate to (an elevated one for a ground robot)
            act = _grab(ctx, obj, place, bad_poses)
            if act is not None:
                out.append(PlanOption(f"go grab {obj} (on {place})", act, "grab", obj))
    if t.can("open"):
        for p in ctx.places:
            if p.state == "close":
                act = f"open({p.handle})" if ctx.at == p.handle else _go(ctx, p.handle, None, bad_poses)
                if act is not None:
                    out.append(PlanOption(f"open {p.handle} ({p.room})", act, "open", p.handle))
    if t.mobile and remaining:
        for p in sorted(ctx.places, key=lambda v: (v.room, v.handle)):
            h = p.handle
            if h in visited or h == table or h in ctx.task.receptacles or not p.stand_poses:
                continue
            if p.state == "close" and t.can("open"):
                continue  # searched by opening it
            act = _go(ctx, h, None, bad_poses)
            if act is not None:
                out.append(PlanOption(f"explore {h} ({p.room})", act, "explore", h))
    if ctx.teammates and t.can("communicate"):
        out.append(PlanOption(MESSAGE, "", "message"))
    out.append(PlanOption(WAIT, "wait()", "wait"))
    return out
