"""DynaHMRC's robots on an OpenAI-compatible model: :class:`LLMBrain`, the LLM backend of the
:class:`~.brain.Brain` protocol (dynahmrc.tex §3.2-3.4, ``algo:collaboration``; the prompts are the
appendix blocks ``lab:selfDP``, ``lab:TALBP``, ``lab:LEP``, ``lab:HMRCP``, ``lab:RGDP``).

Every stage is one chat call (a ``move`` takes a second one): a system and a user message built by
:func:`build_messages` from ``prompts/*.txt`` (``${name}`` placeholders) and the robot's
:class:`~.brain.Context`. The calls (:data:`CALLS`):

===============  =======================  ==============================================  ==========================
call             Brain method             prompt                                          reply read into ``value``
===============  =======================  ==============================================  ==========================
``SD``           ``describe``             ``lab:selfDP`` (Role and Skills per type)       Contents (str)
``TALB``         ``propose``              ``lab:TALBP``                                   ``(Plan, speech)``
``LE``           ``vote``                 ``lab:LEP`` (+ the earlier rounds' counts)      Leader (a candidate)
``LE_REFEREE``   ``referee``              ours, in the ``lab:LEP`` style (see below)      Leader (a candidate)
``HMRC``         ``act``                  ``lab:HMRCP`` (per-type Role/Principles)        the action text
``HMRC_MOVE``    ``move_offset``          ours: the local costmap of §3.3 Planning        ``(dx, dy)``
``GD``           ``reflect``              ``lab:RGDP`` participants                       ``(summary, plan text)``
``LP``           ``update_plan``          ``lab:RGDP`` leader                             :class:`~.brain.Plan`
===============  =======================  ==============================================  ==========================

Decisions the paper leaves open (ours):

- **Referee.** §3.2 only says a referee LLM picks one leader "based on the candidate plans and the
  accumulated voting history" after ``K_sel`` = 3 rounds; ``referee_*.txt`` is a short prompt in the
  style of the election prompt, with the same Thoughts / Reasons / Leader answer.
- **Move.** The second call shows the costmap of :meth:`~.layout.Layout.local_costmap` with row and
  column labels (dy, dx in metres) and asks for ``move(dx, dy)`` or ``cell(row, column)``; the cell
  step is ``ctx.extra["costmap_step_m"]`` (default 0.2, the layout's). The skills list asks for a
  bare ``move()`` in the first call; ``act`` returns a bare ``move`` / ``[move]`` / ``move()`` as
  ``"move()"`` (the one action text that does not parse: the framework's cue for the second call);
  a move written with its offsets is an ordinary action.
- **TALB.** The Contents' two parts are asked for as ``Plan: ...`` and ``Speech: ...`` lines; a reply
  without them is read as a plan with an empty speech. The task sentence is added to the user
  prompt (the paper's ``q_i(d_i, tau_i)`` takes it; the block does not show it).
- **Task text.** ``${target_task}`` is the task sentence plus its target objects, receptacles and the
  manipulator's working table (:class:`~.brain.TaskInfo`: what the robots are told).
- **Different requirement.** ``${different_require}`` of ``lab:HMRCP`` item 4 is one sentence for the
  leader and one for the others (``require_*.txt``).
- **Examples.** The block's omitted examples are short ones of ours (``examples.txt``), each shown
  to the types that have its action.
- **Reflection in execution.** A robot's latest reflection summary (``ctx.lessons``) is shown in its
  HMRC prompt; GD and LP prompts also show the task, team, plan and task status.
- **New collaborators (ANC).** §4.3: "The self-description of a newly joined collaborator is
  broadcast to all existing team members". The appendix prompts have no slot for it, so the HMRC,
  GD and LP user prompts gain a New Collaborators section (``newcomers.txt``) with every such
  robot's description (``ctx.newcomers``), from the step it joins to the end.

Replies are read by section headers (``Thoughts:``, ``Contents:`` ...; markdown bold, numbering and a
``<think>`` block are tolerated). A reply that cannot be used gives ``Reply(invalid=why)``, never an
exception; an empty reply is the model's too (invalid). A call that got no reply (server down past
the client's outage wait, missing key, HTTP errors after the client's retries) raises the floor's
:class:`~collablab.llm.EndpointError` (the unit fails and a rerun retries it), also for a client that
returns a result with ``error`` set instead of raising. Tokens are the server's ``usage``.

Call ids are logical: ``<namespace><episode>/<robot>/<call>/s<step>`` (``/r<round>`` for votes),
``episode`` from ``ctx.extra["episode"]``.

**The centralized planner (COHERENT, §4.2).** A brain may also offer ``act_team(ctxs) -> Reply``
(an optional extension of the :class:`~.brain.Brain` protocol; the framework's ``central_step``
uses it when the first active robot's brain has it): ``ctxs`` are the contexts of every active robot
in team order, built with the global view (the union of all robots' objects, one global feedback
and action history of ``"(step t) <robot>: <item>"`` entries over the last M team steps, the same
in every context), and the reply's
``value`` is ``{robot name: action text}`` for every robot of ``ctxs``. :meth:`LLMBrain.act_team`
makes one call per step (stage ``HMRC``, id ``<namespace><episode>/central/HMRC/s<step>``) with
``central_system.txt`` (each robot's role and skills from ``role_*.txt`` / ``skills.txt``, the
output format ``Thoughts: ...`` / ``Actions:`` then one ``<robot>: <action>`` line per robot) and
``central_user.txt`` (task status, the union scene graph, every robot's status, the global
histories). Decisions (ours):

- **Lines.** The ``Actions:`` section is read (the whole reply when it has none); a line is
  ``<robot>: <action>`` (bullets, numbering, markdown tolerated); a line for a robot outside the
  team is ignored; of several lines for one robot the first that parses wins.
- **Missing robot.** A robot without a line in a usable reply gets ``wait()`` (as the search
  baselines' joint actions do).
- **Unparseable action.** A robot whose line does not parse keeps that line's text as its action,
  so the world records it as an invalid action (the others still act).
- **Unusable reply.** No line for any robot of the team (or an empty reply) gives
  ``Reply(invalid=why)``; the framework then records every robot's action as invalid.
- **Move.** There is no second call: a move must be written ``move(dx, dy)``; a bare ``move`` /
  ``move()`` is an unparseable action (recorded invalid).
"""


from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...llm import EndpointError, LLMClient, LLMResult
from ...llm.reply import recorded_thoughts
from .actions import ActionError, format_action, parse_action
from .brain import Context, Plan, Reply, letter
from .coela import PlanOption, memory_reader, options_text
from .layout import MOVE_LIMIT_M
from .robots import ACTIONS, robot_type

__all__ = ["BrainError", "CALLS", "CENTRAL_MOVE_SKILL", "DEFAULT_COSTMAP_STEP_M", "LLMBrain", "build_comm_messages",
           "build_messages", "build_plan_messages", "build_team_messages", "costmap_text", "parse_choice",
           "parse_leader", "parse_move_offset", "parse_sections", "parse_team_actions", "prompt_template",
           "read_comm_reply", "read_plan_reply", "read_reply", "read_team_reply", "scene_graph_text"]

#: The calls of one robot (see the module docstring): the six stages plus the referee and the move's
#: second call.
CALLS = ("SD", "TALB", "LE", "LE_REFEREE", "HMRC", "HMRC_MOVE", "GD", "LP")
#: The local costmap's cell size when the context does not say (``Layout.local_costmap``'s default).
DEFAULT_COSTMAP_STEP_M = 0.2
PROMPTS = Path(__file__).with_name("prompts")
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.DOTALL | re.IGNORECASE)
#: Section names of each answer format and the header words that open them.
_HEADERS: dict[str, str] = {
    "thoughts": r"thoughts?|thinking|reasoning",
    "contents": r"contents?",
    "reasons": r"reasons?",
    "leader": r"(?:selected\s+|elected\s+)?leader",
    "summaries": r"summar(?:y|ies)",
    "plans": r"plans?",
    "plan": r"(?:proposed\s+)?(?:collaboration\s+|division[- ]of[- ]labou?r\s+)?plan",
    "speech": r"(?:leader(?:ship)?\s+)?(?:campaign\s+)?speech",
    "actions": r"(?:joint\s+)?actions?",
    "recipients": r"recipients?",
}


class BrainError(RuntimeError):
    """A reasoning step could not be produced for a reason other than the model's answer (used by
    :mod:`~.training`); a call without a reply raises :class:`~collablab.llm.EndpointError`."""


# -- prompt text -------------------------------------------------------------------------------
@functools.cache
def prompt_template(name: str) -> str:
    """The text of ``prompts/<name>.txt`` (without its final newline)."""
    return (PROMPTS / f"{name}.txt").read_text(encoding="utf-8").rstrip("\n")


def _fill(template: str, **values: Any) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(1) not in values:
            raise KeyError(f"prompts/{template}.txt: placeholder ${{{m.group(1)}}} has no value")
        return str(values[m.group(1)])
    return _PLACEHOLDER.sub(sub, prompt_template(template))


def _pt(p: Sequence[float]) -> str:
    return f"[{p[0]:.2f}, {p[1]:.2f}]"


def _kind(code: str) -> str:
    return robot_type(code).kind


def _team(ctx: Context) -> dict[str, str]:
    """name -> type kind of the current team, the robot itself first."""
    return {ctx.name: ctx.type.kind, **{n: _kind(c) for n, c in ctx.teammates}}


def _teammates(ctx: Context) -> str:
    return ", ".join(f"{n} ({_kind(c)})" for n, c in ctx.teammates) or "none (you work alone)"


def _team_text(ctx: Context) -> str:
    return ", ".join(f"{n} ({k})" for n, k in _team(ctx).items())


def _target_task(ctx: Context) -> str:
    t = ctx.task
    parts = [t.text.rstrip(". ")]
    extra = []
    if t.targets:
        extra.append(f"target objects: {', '.join(t.targets)}")
    if t.receptacles:
        extra.append(f"receptacles: {', '.join(t.receptacles)}")
    if t.working_table:
        extra.append(f"the manipulation robot's working table: {t.working_table}")
    if extra:
        parts.append(f"({'; '.join(extra)})")
    return " ".join(parts)


def _skills(ctx: Context, overrides: Mapping[str, str] | None = None) -> str:
    help_ = {}
    for line in prompt_template("skills").splitlines():
        name, sep, text = line.partition(":")
        if sep:
            help_[name.strip()] = text.strip()
    missing = [a for a in ACTIONS if a not in help_]
    if missing:
        raise ValueError(f"prompts/skills.txt: no line for {', '.join(missing)}")
    help_.update(overrides or {})
    return "\n".join(f"{i}. {help_[a]}" for i, a in enumerate(ctx.type.actions, 1))


def _examples(ctx: Context) -> str:
    """The examples of ``examples.txt`` whose action this robot's type has (its first line is the
    introduction; each example starts with ``- ``)."""
    head, *rest = prompt_template("examples").split("\n- ")
    keep = [ex for ex in rest if ctx.type.can(parse_action(ex.split("Contents:", 1)[1]).name)]
    return "\n- ".join([head, *keep]) if keep else head


def _role(ctx: Context) -> str:
    return _fill(f"role_{ctx.type.code}", name=ctx.name)


def _plan_text(ctx: Context) -> str:
    text = ctx.plan.text.strip().rstrip(".").strip() if ctx.plan is not None else ""
    return text or "no plan yet"


def _leader(ctx: Context) -> str:
    return ctx.leader or "No one"


def _newcomers(ctx: Context) -> str:
    """The New Collaborators section (``newcomers.txt``, ending in a newline) of the robots that
    joined during execution, with their broadcast self-descriptions (ANC, §4.3); "" when none."""
    if not ctx.newcomers:
        return ""
    kinds = _team(ctx)
    lines = "\n".join(f"- {n} ({kinds.get(n, 'robot')}): {' '.join(d.split())}" for n, d in ctx.newcomers.items())
    return _fill("newcomers", newcomers=lines) + "\n"


def _pt1(p: Sequence[float]) -> str:
    return f"[{p[0]:.1f}, {p[1]:.1f}]"


def scene_graph_text(ctx: Context) -> str:
    """The robot's scene graph: its places by room (position, open state, stand poses, elevated;
    coordinates in metres to 0.1 m) and the objects it has perceived (where, at which point)."""
    rooms: dict[str, list[str]] = {}
    for p in ctx.places:
        fields = [f"pos: {_pt1(p.pos)}"]
        if p.state:
            fields.append(f"state: {p.state}")
        if p.stand_poses:
            fields.append("stand: [" + ", ".join(f"{k}: {_pt1(s)}" for k, s in enumerate(p.stand_poses)) + "]")
        if p.elevated:
            fields.append("elevated")
        rooms.setdefault(p.room or "unknown room", []).append(f"  {p.handle}: ({', '.join(fields)})")
    lines = ["Places (navigate(<place>, stand_pose_<k>) goes to the stand pose numbered k):"]
    for room, items in rooms.items():
        lines += [f"- {room}:", *items]
    if not rooms:
        lines.append("- none known")
    if ctx.objects:
        lines.append("Objects found:")
        lines += [f"- {h}: (at: {place}, pos: {_pt(pos)})" for h, (place, pos) in ctx.objects.items()]
    else:
        lines.append("Objects found: none yet.")
    return "\n".join(lines)


def _status(ctx: Context, head: str, subject: str) -> str:
    """A robot's pose, place and gripper as the Robot Status section writes them."""
    s = f"{head}pos: {_pt(ctx.pos)}."
    if ctx.at:
        s += f" {subject} is at {ctx.at}."
    if ctx.type.manipulates:
        s += f" The gripper is holding {ctx.held}." if ctx.held else " The gripper is empty."
        s += f" Maximum grasping range: {ctx.type.reach_m:.2f} m."
    return s


def _robot_status(ctx: Context) -> str:
    return _status(ctx, "Current robot states: ", "The robot")


def _history(items: Sequence[str]) -> str:
    if not items:
        return " none yet."
    return "".join(f"\n{i}. {' / '.join(x.strip() for x in str(it).splitlines() if x.strip())}"
                   for i, it in enumerate(items, 1))


def _proposals_text(ctx: Context, only: Sequence[str] | None = None) -> str:
    kinds = _team(ctx)
    lines = []
    for name, (plan, speech) in ctx.proposals.items():
        if only is not None and name not in only:
            continue
        who = f"{name} ({kinds[name]})" if name in kinds else name
        lines.append(f"- {who}:\n  Plan: {plan.strip() or '(none)'}\n  Campaign speech: {speech.strip() or '(none)'}")
    return "\n".join(lines) or "none"


def _votes_text(history: Sequence[Mapping[str, int]]) -> str:
    return "\n".join(f"Round {k}: " + (", ".join(f"{n} {v} vote{'s' if v != 1 else ''}" for n, v in counts.items())
                                       or "no valid vote") + "."
                     for k, counts in enumerate(history, 1)) or "none"


def _candidates(ctx: Context, candidates: Sequence[str] | None) -> list[str]:
    if candidates is not None:
        return list(candidates)
    return list(ctx.proposals) or list(_team(ctx))


def costmap_text(costmap: Sequence[Sequence[str]], step_m: float = DEFAULT_COSTMAP_STEP_M) -> str:
    """The local costmap as a labelled grid: a line of column indices, a line of each column's dx,
    then one line per row (its index, its dy, its cells), row 0 first (the most negative y)."""
    if not costmap:
        return "(empty costmap)"
    half, chalf, cols, w = len(costmap) // 2, len(costmap[0]) // 2, len(costmap[0]), 6
    lines = ["column:".ljust(14) + "".join(str(c).rjust(w) for c in range(cols)),
             "row (dy) dx:".ljust(14) + "".join(f"{(c - chalf) * step_m:+.1f}".rjust(w) for c in range(cols))]
    for r, row in enumerate(costmap):
        lines.append(f"{r:>3} ({(r - half) * step_m:+.1f})".ljust(14) + "".join(str(ch).rjust(w) for ch in row))
    return "\n".join(lines)


def _costmap_step(ctx: Context) -> float:
    return float(ctx.extra.get("costmap_step_m", DEFAULT_COSTMAP_STEP_M))


def build_messages(ctx: Context, stage: str, *, candidates: Sequence[str] | None = None) -> list[dict[str, str]]:
    """System and user messages of one call (``stage`` one of :data:`CALLS`); ``candidates`` are the
    leader candidates of ``LE`` / ``LE_REFEREE`` (default: the proposers, else the team). Pure."""
    if stage not in CALLS:
        raise ValueError(f"stage: {stage!r}; allowed: {', '.join(CALLS)}")
    common = {"name": ctx.name, "target_task": _target_task(ctx), "teammates": _teammates(ctx)}
    if stage == "SD":
        system = prompt_template("sd_system")
        user = _fill("sd_user", **common, role=_role(ctx), skills=_skills(ctx))
    elif stage == "TALB":
        intros = "\n".join(f"- {n} ({_team(ctx).get(n, 'robot')}): {d.strip()}"
                           for n, d in ctx.self_descriptions.items()) or "none"
        system = prompt_template("talb_system")
        user = _fill("talb_user", **common, self_introductions=intros)
    elif stage == "LE":
        cands = _candidates(ctx, candidates)
        votes = _fill("le_votes", vote_history=_votes_text(ctx.vote_history)) + "\n" if ctx.vote_history else ""
        system = prompt_template("le_system")
        user = _fill("le_user", name=ctx.name, plan=_proposals_text(ctx), votes=votes, candidates=", ".join(cands))
    elif stage == "LE_REFEREE":
        cands = _candidates(ctx, candidates)
        system = _fill("referee_system", rounds=len(ctx.vote_history))
        user = _fill("referee_user", target_task=common["target_task"], team=_team_text(ctx),
                     plan=_proposals_text(ctx, cands), vote_history=_votes_text(ctx.vote_history),
                     candidates=", ".join(cands))
    elif stage == "HMRC_MOVE":
        if not ctx.costmap:
            raise ValueError("HMRC_MOVE needs ctx.costmap (the local costmap of the move's second call)")
        step_m = _costmap_step(ctx)
        system = _fill("move_system", role=_role(ctx), target_task=common["target_task"], leader=_leader(ctx),
                       plan=_plan_text(ctx))
        user = _fill("move_user", goal=ctx.goal or "the target object", robot_status=_robot_status(ctx),
                     step_m=f"{step_m:g}", half=len(ctx.costmap) // 2, costmap=costmap_text(ctx.costmap, step_m))
    elif stage == "HMRC":
        if ctx.leader is None:
            require = prompt_template("require_none")
        else:
            require = prompt_template("require_leader" if ctx.leader == ctx.name else "require_member")
        system = _fill("hmrc_system", **common, role=_role(ctx), skills=_skills(ctx), leader=_leader(ctx),
                       plan=_plan_text(ctx), different_require=require, examples=_examples(ctx),
                       principles=prompt_template(f"principles_{ctx.type.code}"))
        lessons = _fill("lessons", lessons=" ".join(x.strip() for x in ctx.lessons)) + "\n" if ctx.lessons else ""
        user = _fill("hmrc_user", task_status=ctx.task_status, step=ctx.step, max_steps=ctx.max_steps,
                     scene_graph=scene_graph_text(ctx), robot_status=_robot_status(ctx),
                     feedback_history=_history(ctx.feedback_history), action_history=_history(ctx.action_history),
                     message_history=_history(ctx.message_history), newcomers=_newcomers(ctx), lessons=lessons)
    elif stage == "GD":
        system = prompt_template("gd_system")
        user = _fill("gd_user", **common, kind=ctx.type.kind, leader=_leader(ctx), plan=_plan_text(ctx),
                     newcomers=_newcomers(ctx),
                     task_status=ctx.task_status, step=ctx.step, max_steps=ctx.max_steps,
                     scene_graph=scene_graph_text(ctx), robot_status=_robot_status(ctx),
                     feedback_history=_history(ctx.feedback_history), action_history=_history(ctx.action_history),
                     message_history=_history(ctx.message_history))
    else:  # LP
        kinds = _team(ctx)
        reports = "\n".join(f"- {n} ({kinds.get(n, 'robot')}):\n  Summaries: {s.strip() or '(none)'}\n"
                            f"  Plans: {p.strip() or '(none)'}" for n, (s, p) in ctx.reports.items()) or "none"
        system = prompt_template("lp_system")
        user = _fill("lp_user", name=ctx.name, latest_plan=reports, target_task=common["target_task"],
                     team=_team_text(ctx), plan=_plan_text(ctx), newcomers=_newcomers(ctx),
                     task_status=ctx.task_status, step=ctx.step, max_steps=ctx.max_steps)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# -- the centralized planner (COHERENT) --------------------------------------------------------
#: The move's skill line in the central prompt (there is no second call with a costmap).
CENTRAL_MOVE_SKILL = ("move(<delta_x>, <delta_y>): adjust the base position by a displacement in metres along x "
                      "and y to get closer to an object it could not reach.")


def _check_team(ctxs: Sequence[Context]) -> list[Context]:
    ctxs = list(ctxs)
    if not ctxs:
        raise ValueError("act_team: no robot contexts")
    names = [c.name for c in ctxs]
    if len(set(names)) != len(names):
        raise ValueError(f"act_team: a robot appears twice in {names}")
    return ctxs


def _indent(text: str, pad: str = "  ") -> str:
    return "\n".join(pad + ln for ln in text.splitlines())


def _team_roles(ctxs: Sequence[Context]) -> str:
    return "\n".join(f"- {c.name} ({c.type.kind}):\n  Role:\n{_indent(_role(c))}\n  Skills:\n"
                     f"{_indent(_skills(c, {'move': CENTRAL_MOVE_SKILL}))}" for c in ctxs)


def _team_status(ctxs: Sequence[Context]) -> str:
    return "\n".join(_status(c, f"- {c.name} ({c.type.kind}): ", "It") for c in ctxs)


def _union_view(ctxs: Sequence[Context]) -> Context:
    """The first context with every robot's places and objects (the first robot's view of a place or
    an object wins)."""
    places = {}
    objects: dict[str, tuple[str, Any]] = {}
    for c in ctxs:
        for pv in c.places:
            places.setdefault(pv.handle, pv)
        for h, v in c.objects.items():
            objects.setdefault(h, v)
    return replace(ctxs[0], places=list(places.values()), objects=objects)


def build_team_messages(ctxs: Sequence[Context]) -> list[dict[str, str]]:
    """System and user messages of the centralized planner's one call per step (``ctxs``: every
    active robot's context in team order; task, status and the global histories are read from the
    first). Pure."""
    ctxs = _check_team(ctxs)
    first = ctxs[0]
    names = [c.name for c in ctxs]
    system = _fill("central_system", team=_team_roles(ctxs), target_task=_target_task(first),
                   move_limit=f"{MOVE_LIMIT_M:g}", action_lines="\n".join(f"{n}: <one action of {n}>" for n in names))
    user = _fill("central_user", task_status=first.task_status, step=first.step, max_steps=first.max_steps,
                 scene_graph=scene_graph_text(_union_view(ctxs)), robot_status=_team_status(ctxs),
                 feedback_history=_history(first.feedback_history), action_history=_history(first.action_history),
                 names=", ".join(names))
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# -- reading replies ---------------------------------------------------------------------------
def _header_re(names: Sequence[str], inline: bool = False) -> re.Pattern[str]:
    alts = "|".join(f"(?P<{n}>{_HEADERS[n]})" for n in names)
    # possessive runs: linear on a long line of spaces and stars (a model's markdown can hold one)
    lead = r"(?<![\w])" if inline else r"^[ \t>#*\-_]*+(?:\d+[.)][ \t]*+)?[*_ \t]*+"
    return re.compile(rf"{lead}(?:{alts})[ \t*_]*+[:：][ \t*_]*+", re.IGNORECASE | re.MULTILINE)


def parse_sections(text: str, names: Sequence[str]) -> dict[str, str]:
    """The sections of a reply under the headers ``names`` (keys of the answer formats:
    thoughts, contents, reasons, leader, summaries, plans, plan, speech), each from its header to
    the next one; the first occurrence of a header wins. Headers are looked for at line starts,
    then (for the ones not found) anywhere. A ``<think>`` block is read as the thoughts when there
    is no Thoughts section."""
    think = " ".join(m.group(1).strip() for m in _THINK.finditer(text or ""))
    body = _THINK.sub("", text or "")

    def found(group: Sequence[str], inline: bool = False) -> list[tuple[int, int, str]]:
        return [(m.start(), m.end(), next(n for n in group if m.group(n) is not None))
                for m in _header_re(group, inline).finditer(body)]

    hits = found(names)
    missing = [n for n in names if n not in {h[2] for h in hits}]
    if missing:
        taken = [(a, b) for a, b, _ in hits]
        hits += [h for h in found(missing, inline=True) if not any(a <= h[0] < b for a, b in taken)]
        hits.sort()
    out: dict[str, str] = {}
    for i, (_, end, name) in enumerate(hits):
        stop = hits[i + 1][0] if i + 1 < len(hits) else len(body)
        if name not in out:
            out[name] = body[end:stop].strip().strip("*_ ").strip()
    if "thoughts" in names and not out.get("thoughts") and think:
        out["thoughts"] = think
    return out


def parse_leader(text: str, candidates: Sequence[str]) -> tuple[str | None, str | None]:
    """``(name, None)`` when the Leader section (else the last line) names a candidate (the first
    one named), else ``(None, why)``."""
    sec = parse_sections(text, ("thoughts", "reasons", "leader"))
    said = sec.get("leader")
    if said is None:
        lines = [ln for ln in _THINK.sub("", text or "").splitlines() if ln.strip()]
        if not lines:
            return None, "no Leader: line in the reply"
        said = lines[-1]
    said = said.splitlines()[0] if said.strip() else said
    hits = []
    for c in candidates:
        m = re.search(rf"(?<![\w]){re.escape(c)}(?![\w])", said, re.IGNORECASE)
        if m:
            hits.append((m.start(), c))
    if not hits:
        return None, f"the vote {said.strip()[:60]!r} is not one of the candidates {', '.join(candidates)}"
    return min(hits)[1], None


_CELL = re.compile(r"cell\s*\(?\s*(\d+)\s*,\s*(\d+)\s*\)?|row\s*(\d+)\s*[,;]?\s*(?:and\s+)?col(?:umn)?\s*(\d+)", re.IGNORECASE)


def parse_move_offset(text: str, costmap: Sequence[Sequence[str]],
                      step_m: float = DEFAULT_COSTMAP_STEP_M) -> tuple[tuple[float, float] | None, str | None]:
    """``((dx, dy), None)`` from a move's second reply (``move(dx, dy)`` or ``cell(row, column)``
    in its Contents, else anywhere), or ``(None, why)``."""
    sec = parse_sections(text, ("thoughts", "contents"))
    body = sec.get("contents") or _THINK.sub("", text or "")
    n = len(costmap)
    m = _CELL.search(body)
    if m:
        digits = (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3), m.group(4))
        if max(len(d) for d in digits) > 6:
            return None, f"cell ({digits[0][:8]}..., {digits[1][:8]}...) is outside the costmap"
        r, c = int(digits[0]), int(digits[1])
        if not (0 <= r < n and 0 <= c < len(costmap[r])):
            return None, f"cell ({r}, {c}) is outside the {n}x{len(costmap[0]) if n else 0} costmap"
        return (round((c - len(costmap[r]) // 2) * step_m, 3), round((r - n // 2) * step_m, 3)), None
    mv = re.search(r"move\s*\(?\s*[-+]?\d", body, re.IGNORECASE)
    candidates = [body[mv.start():]] if mv else []
    candidates += [ln for ln in body.splitlines() if ln.strip()]
    for cand in candidates:
        try:
            a = parse_action(cand)
        except ActionError:
            continue
        if a.name == "move":
            return (a.dx, a.dy), None
    return None, f"no move(dx, dy) or cell(row, column) in the reply: {body.strip()[:80]!r}"


_BARE_MOVE = re.compile(r"^[`*\s]*\[?move\]?\s*(?:\(\s*\))?[`*.\s]*$", re.IGNORECASE)


def _action_of(contents: str) -> tuple[str | None, str | None]:
    """The action of a Contents section: the whole section, else its first line that is one (a
    model may explain on the lines after it; every action reads alike, ``wait()`` as ``pick(x)``)."""
    if _BARE_MOVE.match(contents):
        return "move()", None
    error = None
    for cand in [contents] + [ln for ln in contents.splitlines() if ln.strip()]:
        try:
            return format_action(parse_action(cand)), None
        except ActionError as exc:
            error = error or str(exc)
    return None, error


def read_reply(stage: str, text: str, ctx: Context, *, candidates: Sequence[str] | None = None) -> Reply:
    """The :class:`~.brain.Reply` of a reply ``text`` to call ``stage`` (no usage filled in)."""
    if stage in ("LE", "LE_REFEREE"):
        cands = _candidates(ctx, candidates)
        sec = parse_sections(text, ("thoughts", "reasons", "leader"))
        name, why = parse_leader(text, cands)
        return Reply(text, value=name, thoughts=sec.get("thoughts", ""), invalid=why)
    if stage == "GD":
        sec = parse_sections(text, ("thoughts", "summaries", "plans"))
        missing = [h.capitalize() for h in ("summaries", "plans") if not sec.get(h)]
        if missing:
            return Reply(text, thoughts=sec.get("thoughts", ""), invalid=f"no {' or '.join(missing)}: section")
        return Reply(text, value=(sec["summaries"], sec["plans"]), thoughts=sec.get("thoughts", ""))
    if stage == "HMRC_MOVE":
        sec = parse_sections(text, ("thoughts", "contents"))
        if not ctx.costmap:
            raise ValueError("HMRC_MOVE needs ctx.costmap")
        off, why = parse_move_offset(text, ctx.costmap, _costmap_step(ctx))
        return Reply(text, value=off, thoughts=sec.get("thoughts", ""), invalid=why)
    if stage not in CALLS:
        raise ValueError(f"stage: {stage!r}; allowed: {', '.join(CALLS)}")
    sec = parse_sections(text, ("thoughts", "contents"))
    thoughts, contents = sec.get("thoughts", ""), sec.get("contents")
    if stage == "HMRC":
        if contents is None:  # no Contents: header: the last line may still be the action
            lines = [ln for ln in _THINK.sub("", text or "").splitlines() if ln.strip()]
            contents = lines[-1] if lines and not re.match(r"\W*thoughts?\b", lines[-1], re.IGNORECASE) else ""
        if not contents:
            return Reply(text, thoughts=thoughts, invalid="no Contents: line with an action in the reply")
        action, why = _action_of(contents)
        return Reply(text, value=action, thoughts=thoughts, invalid=why)
    if not contents:
        return Reply(text, thoughts=thoughts, invalid="no Contents: section in the reply")
    if stage == "SD":
        return Reply(text, value=contents, thoughts=thoughts)
    if stage == "TALB":
        parts = parse_sections(contents, ("plan", "speech"))
        plan = parts.get("plan") or contents
        return Reply(text, value=(Plan(text=plan), parts.get("speech", "")), thoughts=thoughts)
    return Reply(text, value=Plan(text=contents), thoughts=thoughts)  # LP


_TEAM_LINE = re.compile(r"^[ \t>*\-+•_`]*+(?:\d+[.)][ \t]*+)?[*_` \t]*+([A-Za-z][\w\-]*)[ \t*_`]*+"
                        r"(?:\([^)\n]*\)[ \t*_`]*+)?[:：][ \t]*(.*)$")


def parse_team_actions(text: str, names: Sequence[str]) -> tuple[dict[str, str] | None, str | None]:
    """``({robot: action text}, None)`` from a centralized planner's reply (see the module
    docstring: the ``Actions:`` section, else the whole reply; one ``<robot>: <action>`` line per
    robot, a robot's first line that parses wins, else its first line's text, kept so that it is
    recorded invalid; robots without a line get ``wait()``), or ``(None, why)`` when no line names
    a robot of ``names``."""
    sec = parse_sections(text, ("thoughts", "actions"))
    body = sec.get("actions")
    if body is None:
        body = _THINK.sub("", text or "")
    canon = {n.lower(): n for n in names}
    seen: dict[str, list[str]] = {}
    for line in body.splitlines():
        m = _TEAM_LINE.match(line.strip())
        if not m or m.group(1).lower() not in canon:
            continue  # not a robot's line, or a robot outside the team
        said = m.group(2).strip().strip("`*_ ").strip()
        seen.setdefault(canon[m.group(1).lower()], []).append(said or "(no action)")
    if not seen:
        return None, (f"no '<robot>: <action>' line for any robot of the team ({', '.join(names)}) in the reply: "
                      f"{_THINK.sub('', text or '').strip()[:80]!r}")
    out: dict[str, str] = {}
    for n in names:
        out[n] = "wait()"
        for i, said in enumerate(seen.get(n, [])):
            try:
                out[n] = format_action(parse_action(said))
                break
            except ActionError:
                if i == 0:
                    out[n] = said
    return out, None


def read_team_reply(text: str, ctxs: Sequence[Context]) -> Reply:
    """The :class:`~.brain.Reply` of the centralized planner's reply ``text`` (no usage filled in)."""
    sec = parse_sections(text, ("thoughts", "actions"))
    joint, why = parse_team_actions(text, [c.name for c in ctxs])
    return Reply(text, value=joint, thoughts=sec.get("thoughts", ""), invalid=why)


# -- the brain ---------------------------------------------------------------------------------
class LLMBrain:
    """One robot's reasoning core on an :class:`~collablab.llm.LLMClient` (a :class:`~.brain.Brain`).

    ``temperature`` defaults to the paper's 0.5 (§4.2 Baselines); ``max_tokens`` bounds each reply;
    ``extra_params`` are more API parameters (e.g. vLLM's ``{"extra_body": {"chat_template_kwargs":
    {"enable_thinking": False}}}``); ``namespace`` prefixes every call id; ``label`` defaults to
    ``llm:<model>``. Any object with ``endpoint`` and ``chat_sync(messages, **kw) -> LLMResult``
    serves as the client."""

    def __init__(self, client: LLMClient, *, temperature: float | None = 0.5, max_tokens: int | None = 8192,
                 extra_params: Mapping[str, Any] | None = None, namespace: str = "",
                 label: str | None = None) -> None:
        if max_tokens is not None and max_tokens < 1:
            raise ValueError(f"max_tokens: {max_tokens}; must be >= 1 or None (the server's budget)")
        self.client = client
        self.temperature, self.max_tokens = temperature, max_tokens
        self.extra_params = dict(extra_params or {})
        self.namespace = namespace if not namespace or namespace.endswith("/") else namespace + "/"
        self.label = label or f"llm:{client.endpoint.model}"

    def __repr__(self) -> str:
        return f"LLMBrain({self.label!r}, temperature={self.temperature!r})"

    def call_id(self, ctx: Context, stage: str) -> str:
        """The logical id of one call."""
        cid = f"{self.namespace}{ctx.extra.get('episode', 'episode')}/{ctx.name}/{stage}/s{ctx.step}"
        return cid + (f"/r{len(ctx.vote_history)}" if stage in ("LE", "LE_REFEREE") else "")

    def request(self, ctx: Context, stage: str, *, candidates: Sequence[str] | None = None) -> dict[str, Any]:
        """The keyword arguments of ``LLMClient.chat`` for one call (``messages`` included)."""
        return self._request(self.call_id(ctx, stage), build_messages(ctx, stage, candidates=candidates))

    def _request(self, call_id: str, messages: list[dict[str, str]]) -> dict[str, Any]:
        """The keyword arguments of one call: its messages and id, this brain's sampling settings."""
        kw: dict[str, Any] = {"messages": messages, "call_id": call_id,
                              "temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.extra_params:
            kw["extra_params"] = dict(self.extra_params)
        return kw

    def reply_of(self, result: LLMResult, stage: str, ctx: Context, *,
                 candidates: Sequence[str] | None = None) -> Reply:
        """The Reply of a finished call (an empty reply: ``invalid``); a result with ``error`` set
        (a client that does not raise) raises :class:`~collablab.llm.EndpointError`."""
        return self._read(result, lambda text: read_reply(stage, text, ctx, candidates=candidates))

    def _read(self, result: LLMResult, read: Any) -> Reply:
        """``read(text)`` of a finished call, unless it was cut or empty (then ``invalid``, never
        parsed); token counts, thoughts and the finish reason filled in."""
        u = result.usage
        tokens = {"tokens_in": int(u.prompt_tokens or 0), "tokens_out": int(u.completion_tokens or 0)}
        if result.error is not None:
            raise EndpointError(result) from None
        early = self._unusable(result, tokens)
        if early is not None:
            return self._finished(early, result)
        reply = read(result.text or "")
        reply.tokens_in, reply.tokens_out = tokens["tokens_in"], tokens["tokens_out"]
        reply.thoughts = reply.thoughts or (result.reasoning or "")
        return self._finished(reply, result)

    def _finished(self, reply: Reply, result: LLMResult) -> Reply:
        """``reply`` with what its call's record keeps: the start of the thoughts, the finish reason."""
        reply.reasoning, reply.finish_reason = recorded_thoughts(result.reasoning), result.finish_reason
        return reply

    def _unusable(self, result: LLMResult, tokens: dict[str, int]) -> Reply | None:
        """The Reply of a reply with nothing to read: cut at ``max_tokens`` (``invalid`` starts with
        ``truncated``; never parsed from its fragment) or empty; None for a reply to read."""
        if result.truncated:
            where = "inside its thoughts" if not (result.text or "").strip() else "in its answer"
            return Reply(result.text or "", thoughts=result.reasoning or "", **tokens,
                         invalid=f"truncated: the reply was cut at max_tokens={self.max_tokens} {where}")
        if not (result.text or "").strip():
            return Reply("", thoughts=result.reasoning or "", **tokens,
                         invalid=f"the model gave an empty reply (finish_reason={result.finish_reason})")
        return None

    def ask(self, ctx: Context, stage: str, *, candidates: Sequence[str] | None = None) -> Reply:
        """One call of ``stage`` (:data:`CALLS`) and its Reply."""
        kw = self.request(ctx, stage, candidates=candidates)
        result = self.client.chat_sync(kw.pop("messages"), **kw)
        return self.reply_of(result, stage, ctx, candidates=candidates)

    def describe(self, ctx: Context) -> Reply:
        return self.ask(ctx, "SD")

    def propose(self, ctx: Context) -> Reply:
        return self.ask(ctx, "TALB")

    def vote(self, ctx: Context, candidates: list[str]) -> Reply:
        return self.ask(ctx, "LE", candidates=candidates)

    def referee(self, ctx: Context, candidates: list[str]) -> Reply:
        return self.ask(ctx, "LE_REFEREE", candidates=candidates)

    def act(self, ctx: Context) -> Reply:
        return self.ask(ctx, "HMRC")

    def move_offset(self, ctx: Context) -> Reply:
        return self.ask(ctx, "HMRC_MOVE")

    def reflect(self, ctx: Context) -> Reply:
        return self.ask(ctx, "GD")

    def update_plan(self, ctx: Context) -> Reply:
        return self.ask(ctx, "LP")

    # -- CoELA's planning and communication modules ------------------------------------------------
    def coela_plan(self, ctx: Context, options: Sequence[Any]) -> Reply:
        """CoELA's planning module (:mod:`.coela`): one call (id ``.../<robot>/COELA_PLAN/s<step>``)
        choosing one of ``options``; ``value`` the chosen option's index."""

        return self._module_call(ctx, "COELA_PLAN", build_plan_messages(ctx, options),
                                 lambda text: read_plan_reply(text, options))

    def coela_message(self, ctx: Context) -> Reply:
        """CoELA's communication module (:mod:`.coela`): one call (id ``.../<robot>/COELA_COMM/s<step>``)
        writing the message; ``value`` the ``communicate`` action text."""

        return self._module_call(ctx, "COELA_COMM", build_comm_messages(ctx), lambda text: read_comm_reply(text, ctx))

    def _module_call(self, ctx: Context, stage: str, messages: list[dict[str, str]], read: Any) -> Reply:
        """One call with ``messages``, its reply read by ``read(text)`` unless cut or empty (then
        ``invalid``, never parsed, as :meth:`reply_of`)."""
        kw = self._request(self.call_id(ctx, stage), messages)
        return self._read(self.client.chat_sync(kw.pop("messages"), **kw), read)

    # -- the centralized planner (COHERENT) -------------------------------------------------------
    def team_call_id(self, ctxs: Sequence[Context]) -> str:
        """The logical id of the centralized planner's call of a step (one per step)."""
        first = _check_team(ctxs)[0]
        return f"{self.namespace}{first.extra.get('episode', 'episode')}/central/HMRC/s{first.step}"

    def team_request(self, ctxs: Sequence[Context]) -> dict[str, Any]:
        """The keyword arguments of ``LLMClient.chat`` for the centralized planner's call."""
        return self._request(self.team_call_id(ctxs), build_team_messages(ctxs))

    def team_reply_of(self, result: LLMResult, ctxs: Sequence[Context]) -> Reply:
        """The Reply of a finished centralized call (an empty reply: ``invalid``); a result with
        ``error`` set raises :class:`~collablab.llm.EndpointError`."""
        return self._read(result, lambda text: read_team_reply(text, ctxs))

    def act_team(self, ctxs: list[Context]) -> Reply:
        """COHERENT's one call per step: every robot's action, ``value`` ``{robot: action text}``
        (see the module docstring)."""
        ctxs = _check_team(ctxs)
        kw = self.team_request(ctxs)
        result = self.client.chat_sync(kw.pop("messages"), **kw)
        return self.team_reply_of(result, ctxs)


# -- LLM-MCTS's commonsense world model (appendix lab:llm_mcts_baseline) --------------------------
#: Places asked for per object (the most likely first).
WORLD_PRIOR_RANKS = 3
_WORLD_LINE = re.compile(r"^[ \t>*\-+•_`]*+(?:\d+[.)][ \t]*+)?[*_` \t]*+([A-Za-z][\w\-]*)[ \t*_`]*+"
                         r"(?:\([^)\n]*\)[ \t*_`]*+)?[:：][ \t]*(.*)$")
_PLACE_WORD = re.compile(r"[A-Za-z][\w]*")


def world_prior_messages(task: str, objects: Mapping[str, str], places: Sequence[tuple[str, str]],
                         ranks: int = WORLD_PRIOR_RANKS) -> list[dict[str, str]]:
    """The world-model call's messages (``prompts/llm_mcts_world_*.txt``): the task sentence, the
    apartment's places ``(place, room)`` and the unseen objects ``{object: class}``. Only what the
    robots are told: the places' names and rooms and the targets, never where an object lies."""
    system = _fill("llm_mcts_world_system", ranks=ranks)
    user = _fill("llm_mcts_world_user", task=task,
                 places="\n".join(f"- {h} ({room})" for h, room in places),
                 objects="\n".join(f"- {h}: a {cls}" for h, cls in objects.items()))
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def parse_world_prior(text: str, objects: Sequence[str], places: Sequence[str],
                      ranks: int = WORLD_PRIOR_RANKS) -> tuple[dict[str, list[str]] | None, str | None]:
    """``({object: [place, ...]}, None)`` from the world model's reply: the ``Contents:`` section
    (else the whole reply), one ``<object>: <place>, <place>`` line per object; words that are not
    places of ``places`` are skipped, at most ``ranks`` places kept, the first line of an object
    wins; an object without a usable line is absent (the search keeps the uniform belief for it).
    ``(None, why)`` when no line names an object of ``objects`` with a known place."""
    sec = parse_sections(text, ("thoughts", "contents"))
    body = sec.get("contents")
    if body is None:
        body = _THINK.sub("", text or "")
    canon = {o.lower(): o for o in objects}
    known = {p.lower(): p for p in places}
    out: dict[str, list[str]] = {}
    for line in body.splitlines():
        m = _WORLD_LINE.match(line.strip())
        if not m or m.group(1).lower() not in canon or canon[m.group(1).lower()] in out:
            continue
        ranked = list(dict.fromkeys(known[w.lower()] for w in _PLACE_WORD.findall(m.group(2)) if w.lower() in known))
        if ranked:
            out[canon[m.group(1).lower()]] = ranked[:ranks]
    if not out:
        return None, (f"no '<object>: <place>, ...' line naming a place of the apartment for any object "
                      f"({', '.join(objects)}) in the reply: {_THINK.sub('', text or '').strip()[:80]!r}")
    return out, None


def ask_world_prior(client: LLMClient, task: str, objects: Mapping[str, str], places: Sequence[tuple[str, str]],
                    *, call_id: str, temperature: float | None = 0.5, max_tokens: int | None = 8192,
                    ranks: int = WORLD_PRIOR_RANKS) -> dict[str, Any]:
    """One world-model call and its record: ``places`` ``{object: [place, ...]}`` (most likely first;
    empty when the reply is unusable), ``invalid`` (None, or why: ``truncated: ...`` for a reply cut
    at ``max_tokens``, never parsed from its fragment; an empty reply; no usable line), ``call_id``,
    ``objects``, the tokens, ``finish_reason`` and the reply's start. A call without a reply raises
    :class:`~collablab.llm.EndpointError` (as every stage's)."""
    result = client.chat_sync(world_prior_messages(task, objects, places, ranks), call_id=call_id,
                              temperature=temperature, max_tokens=max_tokens)
    if result.error is not None:
        raise EndpointError(result) from None
    u = result.usage
    rec: dict[str, Any] = {"call_id": call_id, "objects": list(objects), "places": {}, "invalid": None,
                           "tokens_in": int(u.prompt_tokens or 0), "tokens_out": int(u.completion_tokens or 0),
                           "finish_reason": result.finish_reason, "reply": (result.text or "")[:400]}
    if result.truncated:
        where = "inside its thoughts" if not (result.text or "").strip() else "in its answer"
        rec["invalid"] = f"truncated: the reply was cut at max_tokens={max_tokens} {where}"
    elif not (result.text or "").strip():
        rec["invalid"] = f"the model gave an empty reply (finish_reason={result.finish_reason})"
    else:
        got, why = parse_world_prior(result.text or "", list(objects), [h for h, _ in places], ranks)
        rec["places"], rec["invalid"] = got or {}, why
    return rec


# == CoELA's planning and communication modules: prompts and replies (:mod:`.coela`) ==========
# -- CoELA prompts -----------------------------------------------------------------------------------
def _progress(ctx: Context) -> str:

    reader = memory_reader()
    visited, _, restricted, _, _ = reader._history(ctx)
    lines = [f"Task status: {ctx.task_status}", f"Step {ctx.step} of at most {ctx.max_steps}.",
             _robot_status(ctx), scene_graph_text(ctx),
             "Places I have searched: " + (", ".join(sorted(visited)) or "none yet") + ".",
             "Places I cannot enter: " + (", ".join(sorted(restricted)) or "none found") + "."]
    return "\n".join(lines)


def _common(ctx: Context) -> dict[str, Any]:

    return {"name": ctx.name, "kind": ctx.type.kind, "role": _role(ctx), "skills": _skills(ctx),
            "target_task": _target_task(ctx), "teammates": _teammates(ctx), "progress": _progress(ctx),
            "action_history": _history(ctx.action_history), "feedback_history": _history(ctx.feedback_history),
            "dialogue_history": _history(ctx.message_history), "newcomers": _newcomers(ctx)}


def build_plan_messages(ctx: Context, options: Sequence[PlanOption]) -> list[dict[str, str]]:
    """System and user messages of the planning module's call (``coela_plan_*.txt``). Pure."""

    if not options:
        raise ValueError("options: the planning module needs at least one plan option")
    c = _common(ctx)
    system = _fill("coela_plan_system", **c)
    user = _fill("coela_plan_user", **c, options=options_text(options), last=letter(len(options) - 1))
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def build_comm_messages(ctx: Context) -> list[dict[str, str]]:
    """System and user messages of the communication module's call (``coela_comm_*.txt``). Pure."""

    c = _common(ctx)
    return [{"role": "system", "content": _fill("coela_comm_system", **c)},
            {"role": "user", "content": _fill("coela_comm_user", **c)}]


# -- replies -----------------------------------------------------------------------------------
def parse_choice(text: str, options: Sequence[PlanOption]) -> tuple[int | None, str | None]:
    """``(index, None)`` of the option a planning reply picks, else ``(None, why)``. Read: the
    Contents section (else the reply's last line); a letter alone (``B``, ``B.``, ``(B)``,
    ``option B``), else an option's label written out (the longest that appears; ``send a message``
    matches its option)."""

    sec = parse_sections(text, ("thoughts", "contents"))
    said = sec.get("contents")
    if said is None:
        lines = [ln for ln in _THINK.sub("", text or "").splitlines() if ln.strip()]
        said = lines[-1] if lines else ""
    said = said.strip().strip("`*_ ").strip()
    if not said:
        return None, "no Contents: line with an option in the reply"
    letters = {letter(i): i for i in range(len(options))}
    # a letter alone or opening the answer with its punctuation: "B", "B.", "(B) ...", "B: ..."
    m = re.fullmatch(r"[(\[]?([A-Z]{1,2})(?:[)\]][.:,]?|[.:,]|(?=$))(?:\s.*)?", said, re.S)
    if m is None:  # "option B", "I choose option (B)"
        m = re.search(r"\b(?:option|action|plan)\s+[(\[]?([A-Z]{1,2})\b", said, re.I)
        m = m if m is not None and m.group(1).isupper() else None
    if m is not None and m.group(1) in letters:
        return letters[m.group(1)], None
    low = said.lower()
    hits = [(len(o.label), i) for i, o in enumerate(options) if o.label.lower() in low]
    if hits:
        return max(hits)[1], None
    return None, (f"the choice {said[:60]!r} is not one of the options "
                  f"{letter(0)}-{letter(len(options) - 1)}")


def read_plan_reply(text: str, options: Sequence[PlanOption]) -> Reply:
    """The Reply of a planning reply: ``value`` the chosen option's index (no usage filled in)."""

    idx, why = parse_choice(text, options)
    return Reply(text, value=idx, thoughts=parse_sections(text, ("thoughts",)).get("thoughts", ""), invalid=why)


def read_comm_reply(text: str, ctx: Context) -> Reply:
    """The Reply of a communication reply: ``value`` the ``communicate`` action text (recipients
    from ``Recipients:``, else ``all``; names outside the team are dropped, none left: ``all``)."""
    from .actions import Action, format_action

    sec = parse_sections(text, ("thoughts", "recipients", "contents"))
    content = (sec.get("contents") or "").strip().strip('"\'').strip()
    if not content:
        return Reply(text, thoughts=sec.get("thoughts", ""), invalid="no Contents: section with a message in the reply")
    team = {n.lower(): n for n, _ in ctx.teammates}
    said = re.split(r"[,&]|\band\b", (sec.get("recipients") or "all").splitlines()[0] if sec.get("recipients") else "all")
    names = [team[w.strip().strip("'\"`*").lower()] for w in said if w.strip().strip("'\"`*").lower() in team]
    to = tuple(dict.fromkeys(names)) or ("all",)
    return Reply(text, value=format_action(Action("communicate", content=" ".join(content.split()), to=to)),
                 thoughts=sec.get("thoughts", ""))
