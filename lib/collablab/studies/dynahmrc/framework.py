"""DynaHMRC's collaboration loop (dynahmrc.tex §3.2-3.4, ``algo:collaboration``) and the
decentralized and centralized baselines' loops (§4.2), over :class:`~.world.RobotWorld`.

Stages, in order: self-description (SD), task allocation and leadership bidding (TALB), leader
election (LE: at most ``k_sel`` rounds of one vote per robot; the vote counts of a round without a
unique winner are fed back to the next round; then a referee decides), then the execution loop:
each step every active robot, one after another, picks one atomic action (HMRC; a ``move`` takes a
second call with the local costmap) and gets its feedback; when ``t mod reflect_every == 0`` every
robot reflects over a longer history (GD) and the leader updates the plan (LP). The leader is
fixed for the episode.

Memory (§3.3 Memory Module): three bounded queues per robot (feedback, messages, actions) of
``memory`` items (K = 10); reflection reads the last ``long_memory`` items (K-bar > K). Messages
received since the robot's last turn are part of its observation (Messages Information), so they
are shown even when history is ablated.

Ablations (``tab:ablation``, lab:leader_vote, lab:diff_memory_length), all in :class:`Config`:
``history`` off keeps only the latest feedback (with the action it answers) and the new messages; ``feedback`` off removes every
feedback text (the scene graph still updates: it is observation); ``leader`` off skips the election
and each robot follows its own proposal; ``reflection`` off skips GD and LP; ``memory`` sets K;
``random_votes`` replaces each vote with a uniformly random candidate with that probability.

Baselines: ``coela`` (decentralized, no self-description, allocation, election or reflection:
CoELA's modules, :mod:`.coela`; each step the planning module picks one of the high-level plans
generated from the robot's memory, ``send a message`` calls the communication module, the execution
module gives the primitive action: :meth:`_Episode.coela_act`) and ``coherent`` (one centralized planner with the
union of all robots' observations choosing every robot's action each step: COHERENT-style). §4.2:
"The LLM has access to global robot observations and the complete global interaction history";
lab:diff_memory_length: "For COHERENT, M denotes the length of global interaction history retained
in the centralized prompt". Its history is therefore the last ``memory`` (M) *team steps*, every
robot's action and feedback of each (``(step t) <robot>: <item>`` entries), so it holds M steps
whatever the team size, as each DynaHMRC robot holds its own last M actions. Search baselines are
in :mod:`.mcts` and run through :func:`run_joint_episode`.

New collaborators (ANC, §4.3: "The self-description of a newly joined collaborator is broadcast to
all existing team members"): the newcomer describes itself (an ``SD`` call, in every decentralized
method: the broadcast belongs to the variation, not to DynaHMRC's stages) and every member's
:attr:`~.brain.Context.newcomers` carries the description from then on, so each execution,
discussion and leader-plan prompt names it. COHERENT's robots do not describe themselves (they
only execute); its central prompt lists the newcomer's role and skills from the step it joins.

Decisions (ours): the referee is the first robot's backend asked as a neutral arbiter; if the
leader is removed (REC) the runner-up of the last election round takes over (no new election: the
paper never re-elects); a robot that joins (ANC) describes itself to the team, receives the current
plan, and the leader updates the plan at once (an LP call).
"""

from __future__ import annotations

import random
import re
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from .actions import ActionError, parse_action
from .brain import Brain, Context, PlaceView, Plan, Reply, TaskInfo
from .coela import plan_options
from .offline import OfflineBrain
from .world import Feedback, RobotWorld

__all__ = ["Config", "EpisodeLog", "METHODS", "MOVE_SELECTION", "run_episode", "run_joint_episode", "task_info"]

METHODS = ("dynahmrc", "coela", "coherent")
#: A first-call reply that selects ``move`` without its offsets (the offsets come from the second
#: call with the local costmap, §3.3).
MOVE_SELECTION = re.compile(r"^\[?move\]?\s*(\(\s*\))?\.?$", re.I)


@dataclass(frozen=True)
class Config:
    """One method's loop and its ablations. Defaults: ``memory`` M = 10 is the paper's (§4.2 "the
    memory queue length is set to M_l = 10 by default"), ``k_sel`` = 3 too (lab:leader_vote: "referee
    arbitration after three rounds"); ``reflect_every`` (Δt = 5) and ``long_memory`` (K̄ = 20) are
    our choice: the paper names Δt (algo:collaboration, §3.5) and asks only K̄ > K (§3.4), giving
    no value for either."""

    method: str = "dynahmrc"
    history: bool = True
    feedback: bool = True
    leader: bool = True
    reflection: bool = True
    memory: int = 10
    long_memory: int = 20
    reflect_every: int = 5
    k_sel: int = 3
    random_votes: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method: {self.method!r} not allowed; allowed: {', '.join(METHODS)}")
        for name in ("memory", "long_memory", "reflect_every", "k_sel"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: must be an integer >= 1, got {v!r}")
        if not 0.0 <= float(self.random_votes) <= 1.0:
            raise ValueError(f"random_votes: must be in [0, 1], got {self.random_votes!r}")


@dataclass
class EpisodeLog:
    """What an episode produced: step and call records, election facts, variation events."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    election_rounds: int = 0
    referee: bool = False
    leader: str | None = None
    leader_type: str | None = None
    votes: list[dict[str, int]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    participants: dict[str, str] = field(default_factory=dict)
    ts: int = 0
    decisions: list[tuple[Context, str]] = field(default_factory=list)  # HMRC (context, action) pairs
    counts: dict[str, int] = field(default_factory=dict)  # actions per robot so far

    def add_step(self, record: dict[str, Any]) -> None:
        """Append a step record, numbering it: ``agent`` is the robot's index in joining order,
        ``step`` its own action count from 0 (``t`` is the team's 1-based temporal step)."""
        robot = record["robot"]
        if robot not in self.participants:
            self.participants[robot] = record["type"]
        record["agent"] = list(self.participants).index(robot)
        record["step"] = self.counts.get(robot, 0)
        self.counts[robot] = record["step"] + 1
        self.steps.append(record)


@dataclass
class _Memory:
    feedback: deque
    kinds: deque
    actions: deque
    messages: deque
    long_feedback: deque
    long_actions: deque
    long_messages: deque
    long_kinds: deque
    new_messages: list[str] = field(default_factory=list)
    latest: str = ""
    latest_kind: str = ""
    lessons: list[str] = field(default_factory=list)
    plan: Plan | None = None


def task_info(world: RobotWorld, text: str) -> TaskInfo:
    """The task as told to the robots."""
    return TaskInfo(world.kind, text, tuple(world.targets), tuple(world.receptacles), world.layout.working_table)


def _places(world: RobotWorld, name: str) -> list[PlaceView]:
    r = world.robots[name]
    handles = world.navigable(r) if r.type.mobile else [world.layout.working_table]
    out = []
    for h in handles:
        p = world.layout.place(h)
        state = ("open" if world.open.get(h, True) else "close") if p.openable else ""
        out.append(PlaceView(h, p.room, p.centre, state, tuple(p.stand_poses), p.elevated))
    for h, p in world.receptacles.items():
        out.append(PlaceView(h, p.room, p.centre, "", (), False))
    return out


class _Episode:
    def __init__(self, world: RobotWorld, brains: Mapping[str, Brain], config: Config, text: str,
                 variation: Callable[[RobotWorld, int], dict[str, Any] | None] | None,
                 brain_for: Callable[[str, str], Brain] | None, record_decisions: bool) -> None:
        self.w, self.brains, self.cfg = world, dict(brains), config
        self.text = text
        self.variation, self.brain_for = variation, brain_for
        self.rng = random.Random(f"dynahmrc-episode:{config.seed}")
        self.log = EpisodeLog(participants={n: r.type.code for n, r in world.robots.items()})
        self.mem: dict[str, _Memory] = {n: self._new_memory() for n in world.robots}
        # COHERENT: the global history, the last ``memory`` team steps (each a list of every robot's
        # (name, feedback)), and the step being played
        self.global_steps: deque[list[tuple[int, str, Feedback]]] = deque(maxlen=config.memory)
        self.global_now: list[tuple[int, str, Feedback]] = []
        self.descriptions: dict[str, str] = {}
        self.newcomers: dict[str, str] = {}  # ANC: name -> self-description broadcast to the team
        self.proposals: dict[str, tuple[Plan, str]] = {}
        self.leader: str | None = None
        self.ranking: list[str] = []
        self.record = record_decisions
        self.usage = (0, 0)
        self.max_steps = 0
        self.episode_id = "episode"
        self.task_id = ""
        self.noticed: set[str] = set()  # removed robots the team has noticed (a missing reflection)

    def _new_memory(self) -> _Memory:
        k, kk = self.cfg.memory, self.cfg.long_memory
        return _Memory(deque(maxlen=k), deque(maxlen=k), deque(maxlen=k), deque(maxlen=k),
                       deque(maxlen=kk), deque(maxlen=kk), deque(maxlen=kk), deque(maxlen=kk))

    # -- contexts -----------------------------------------------------------------------------
    def context(self, name: str, *, long: bool = False, central: bool = False) -> Context:
        """Robot ``name``'s view. Its teammates are everyone who joined; a removed robot stays listed
        until a group discussion misses its report (REC comes without warning)."""
        w, m, cfg = self.w, self.mem[name], self.cfg
        r = w.robots[name]
        if central:  # COHERENT: the union of every robot's objects
            objects = {}
            for other in w.active():
                for h, p in other.known.items():
                    objects[h] = (p, w.objects[h].pos)
        else:
            objects = {h: (p, w.objects[h].pos) for h, p in r.known.items()}
        if long:
            fb, kinds = list(m.long_feedback), list(m.long_kinds)
            acts, msgs = list(m.long_actions), list(m.long_messages)
        elif cfg.history:
            fb, kinds, acts, msgs = list(m.feedback), list(m.kinds), list(m.actions), list(m.messages)
        else:
            fb, kinds, msgs = ([m.latest] if m.latest else []), ([m.latest_kind] if m.latest else []), []
            acts = list(m.actions)[-1:] if m.latest else []  # the action the latest feedback answers
        if not cfg.history or long:
            msgs = (msgs + [x for x in m.new_messages if x not in msgs])[-(cfg.long_memory if long else cfg.memory):]
        if not cfg.feedback:
            fb, kinds = [], []
        return Context(
            name=name, type=r.type, teammates=[(n, o.type.code) for n, o in w.robots.items()
                                               if n != name and (o.active or n not in self.noticed)],
            task=task_info(w, self.text), step=w.step, max_steps=self.max_steps, places=_places(w, name),
            objects=objects, pos=r.pos, held=r.held, at=r.at, task_status=w.task_status(),
            feedback_history=fb, action_history=acts, message_history=msgs, feedback_kinds=kinds,
            leader=self.leader, plan=m.plan, self_descriptions=dict(self.descriptions),
            newcomers={n: d for n, d in self.newcomers.items() if n != name},
            proposals={n: (p.text, s) for n, (p, s) in self.proposals.items()}, lessons=list(m.lessons),
            extra={"episode": self.episode_id, "task_id": self.task_id})

    def _call(self, stage: str, name: str, reply: Reply, module: str | None = None) -> Reply:
        self.log.calls.append({"stage": stage, "robot": name, "step": self.w.step, "tokens_in": reply.tokens_in,
                               "tokens_out": reply.tokens_out, "invalid": reply.invalid,
                               **({"module": module} if module else {}),
                               **({"reasoning": reply.reasoning} if reply.reasoning else {}),
                               **({"finish_reason": reply.finish_reason} if reply.finish_reason else {})})
        return reply

    # -- initial stages -----------------------------------------------------------------------
    def describe(self, name: str) -> None:
        reply = self._call("SD", name, self.brains[name].describe(self.context(name)))
        self.descriptions[name] = str(reply.value or reply.text) if not reply.invalid else reply.text

    def propose(self, name: str) -> None:
        reply = self._call("TALB", name, self.brains[name].propose(self.context(name)))
        if reply.invalid or not isinstance(reply.value, tuple):
            self.proposals[name] = (Plan(reply.text), "")
        else:
            plan, speech = reply.value
            self.proposals[name] = (plan if isinstance(plan, Plan) else Plan(str(plan)), str(speech))

    def elect(self) -> None:
        names = [r.name for r in self.w.active()]
        history: list[dict[str, int]] = []
        counts: dict[str, int] = {}
        for k in range(1, self.cfg.k_sel + 1):
            counts = {n: 0 for n in names}
            for voter in names:
                ctx = self.context(voter)
                ctx.vote_history = [dict(h) for h in history]
                reply = self._call("LE", voter, self.brains[voter].vote(ctx, list(names)))
                vote = reply.value if not reply.invalid and reply.value in counts else None
                if self.cfg.random_votes and self.rng.random() < self.cfg.random_votes:
                    vote = self.rng.choice(names)
                if vote is not None:
                    counts[vote] += 1
            history.append(counts)
            self.log.election_rounds = k
            top = max(counts.values())
            winners = [n for n in names if counts[n] == top]
            if len(winners) == 1:
                self.leader = winners[0]
                break
        else:
            ctx = self.context(names[0])
            ctx.vote_history = [dict(h) for h in history]
            reply = self._call("LE", names[0], self.brains[names[0]].referee(ctx, list(names)))
            top = max(counts.values())
            tied = [n for n in names if counts[n] == top]
            self.leader = reply.value if not reply.invalid and reply.value in names else tied[0]
            self.log.referee = True
        self.log.votes = history
        self.ranking = sorted(names, key=lambda n: (-sum(h.get(n, 0) for h in history), names.index(n)))
        self.log.leader = self.leader
        self.log.leader_type = self.w.robots[self.leader].type.code if self.leader else None
        plan = self.proposals.get(self.leader, (Plan(""), ""))[0]
        for n in self.mem:
            self.mem[n].plan = plan

    # -- execution ----------------------------------------------------------------------------
    def _remember(self, name: str, fb: Feedback) -> None:
        m = self.mem[name]
        for q in (m.feedback, m.long_feedback):
            q.append(fb.text)
        m.kinds.append(fb.kind)
        m.long_kinds.append(fb.kind)
        for q in (m.actions, m.long_actions):
            q.append(fb.action)
        m.latest, m.latest_kind = fb.text, fb.kind

    def _collect_messages(self, name: str) -> None:
        r, m = self.w.robots[name], self.mem[name]
        m.new_messages = [f"({x.content}) from {x.sender}" for x in r.inbox]
        for text in m.new_messages:
            m.messages.append(text)
            m.long_messages.append(text)
        r.inbox.clear()

    def act(self, name: str, ctx: Context | None = None, stage_calls: bool = True) -> Feedback:
        w = self.w
        self._collect_messages(name)
        ctx = ctx or self.context(name)
        brain = self.brains[name]
        reply = brain.act(ctx)
        self.usage = (self.usage[0] + reply.tokens_in, self.usage[1] + reply.tokens_out)
        if stage_calls:
            self._call("HMRC", name, reply)
        text = str(reply.value) if not reply.invalid and reply.value is not None else reply.text
        action = None
        bare_move = not reply.invalid and MOVE_SELECTION.match(text.strip()) is not None
        if not reply.invalid and not bare_move:
            try:
                action = parse_action(text)
            except ActionError:
                action = None
        ctx2: Context | None = None
        if bare_move and w.robots[name].type.can("move"):
            ctx2 = replace(ctx)
            goal = self._move_goal(name)
            ctx2.goal = goal
            target = w.objects[goal].pos if goal in w.objects else w.robots[name].pos
            ctx2.costmap = w.layout.local_costmap(w.robots[name].pos, target, w.robots[name].type.radius_m,
                                                  w.robots[name].type.flies)
            reply2 = brain.move_offset(ctx2)
            self.usage = (self.usage[0] + reply2.tokens_in, self.usage[1] + reply2.tokens_out)
            if stage_calls:
                self._call("HMRC", name, reply2)
            if reply2.invalid or not isinstance(reply2.value, tuple):
                text, action = reply2.text, None
                reply = reply2
            else:
                text = f"move({reply2.value[0]:g}, {reply2.value[1]:g})"
                action = parse_action(text)
        fb = w.execute(name, text if action is not None else (reply.text or "(empty reply)"))
        if self.record and action is not None:
            if ctx2 is not None:  # a move is two decisions: the selection, then the offsets
                self.log.decisions += [(ctx, "move()"), (ctx2, fb.action)]
            else:
                self.log.decisions.append((ctx, fb.action))
        self.log.add_step(_step_record(w.step, name, w.robots[name].type.code, fb))
        self._remember(name, fb)
        w.perceive()
        return fb

    def coela_act(self, name: str) -> Feedback:
        """CoELA's step (:mod:`.coela`): the planning module picks one of the plan options generated
        from the robot's memory (one call, recorded as stage ``HMRC``, module ``plan``); ``send a
        message`` calls the communication module (module ``comm``) whose message is the step's
        ``communicate``; any other option's primitive action is executed. An unusable reply of
        either module (cut, empty, no option) is recorded as an invalid action."""
        w = self.w
        self._collect_messages(name)
        ctx = self.context(name)
        brain = self.brains[name]
        options = plan_options(ctx)
        reply = self._call("HMRC", name, brain.coela_plan(ctx, options), module="plan")
        self.usage = (self.usage[0] + reply.tokens_in, self.usage[1] + reply.tokens_out)
        ok = not reply.invalid and isinstance(reply.value, int) and 0 <= reply.value < len(options)
        if not ok:
            text = f"(no plan chosen: {reply.invalid or f'option {reply.value!r} is not listed'})"
        elif options[reply.value].kind == "message":
            msg = self._call("HMRC", name, brain.coela_message(ctx), module="comm")
            self.usage = (self.usage[0] + msg.tokens_in, self.usage[1] + msg.tokens_out)
            text = str(msg.value) if not msg.invalid and msg.value else f"(no message written: {msg.invalid})"
        else:
            text = options[reply.value].action
            if text == "move()":  # the execution module's move: the free costmap cell nearest the object
                r = w.robots[name]
                goal = options[reply.value].target
                cm = w.layout.local_costmap(r.pos, w.objects[goal].pos if goal in w.objects else r.pos,
                                            r.type.radius_m, r.type.flies)
                off = OfflineBrain(name, r.type.code).move_offset(replace(ctx, goal=goal, costmap=cm)).value
                text = f"move({off[0]:g}, {off[1]:g})"
        fb = w.execute(name, text)
        if self.record and fb.kind != "invalid_action":
            self.log.decisions.append((ctx, fb.action))
        self.log.add_step(_step_record(w.step, name, w.robots[name].type.code, fb))
        self._remember(name, fb)
        w.perceive()
        return fb

    def _move_goal(self, name: str) -> str | None:
        """The object a move aims at: the one of the robot's latest failed pick."""
        for a in reversed(self.mem[name].actions):
            if a.startswith("pick("):
                return a[5:-1]
        return None

    def reflect(self) -> None:
        self.noticed |= {n for n, r in self.w.robots.items() if not r.active}
        reports: dict[str, tuple[str, str]] = {}
        for r in self.w.active():
            reply = self._call("GD", r.name, self.brains[r.name].reflect(self.context(r.name, long=True)))
            if reply.invalid or not isinstance(reply.value, tuple):
                summary, plan = reply.text, ""
            else:
                summary, plan = str(reply.value[0]), str(reply.value[1])
            reports[r.name] = (summary, plan)
            self.mem[r.name].lessons = [s for s in summary.splitlines() if s.strip()]
        if self.leader is not None and self.cfg.leader:
            self.update_plan(reports)

    def update_plan(self, reports: dict[str, tuple[str, str]]) -> None:
        ctx = self.context(self.leader)
        ctx.reports = reports
        reply = self._call("LP", self.leader, self.brains[self.leader].update_plan(ctx))
        if not reply.invalid:
            plan = reply.value if isinstance(reply.value, Plan) else Plan(str(reply.value or reply.text))
            for r in self.w.active():
                self.mem[r.name].plan = plan

    def on_event(self, event: dict[str, Any]) -> None:
        self.log.events.append(event)
        kind = event.get("kind")
        if kind == "CTO" and event.get("text"):
            self.text = str(event["text"])
        if kind == "ANC":
            name = event["robot"]
            if self.brain_for is None:
                raise ValueError("ANC: the episode needs brain_for to give the new robot a backend")
            self.brains[name] = self.brain_for(name, event["code"])
            self.mem[name] = self._new_memory()
            self.log.participants[name] = event["code"]
            if self.cfg.method != "coherent":  # the newcomer's self-description, broadcast (§4.3)
                self.describe(name)
                self.newcomers[name] = self.descriptions[name]
            if self.cfg.method == "dynahmrc":
                if self.leader is not None:
                    self.mem[name].plan = self.mem[self.leader].plan
                    self.update_plan({})
                else:
                    self.propose(name)
                    self.mem[name].plan = self.proposals[name][0]
        if kind == "REC" and event.get("robot") == self.leader:
            alive = [n for n in self.ranking if self.w.robots[n].active]
            self.leader = alive[0] if alive else None
            self.log.events.append({"kind": "leader_takeover", "step": self.w.step, "leader": self.leader})

    def run(self, max_steps: int) -> EpisodeLog:
        w, cfg = self.w, self.cfg
        self.max_steps = max_steps
        if cfg.method == "dynahmrc":
            for r in w.active():
                self.describe(r.name)
            for r in w.active():
                self.propose(r.name)
            if cfg.leader:
                self.elect()
            else:
                for n in self.mem:
                    self.mem[n].plan = self.proposals[n][0]
        for t in range(1, max_steps + 1):
            w.step = t
            if self.variation is not None:
                event = self.variation(w, t)
                if event:
                    self.on_event(event)
            if cfg.method == "coherent":
                self.central_step()
            else:
                for r in list(w.robots.values()):
                    if r.active:
                        (self.coela_act if cfg.method == "coela" else self.act)(r.name)
                        if w.success():
                            break
            self.log.ts = t
            if w.success():
                break
            if cfg.method == "dynahmrc" and cfg.reflection and t % cfg.reflect_every == 0 and t < max_steps:
                self.reflect()
        return self.log

    def central_step(self) -> None:
        """COHERENT: one planner call per step chooses every robot's action (one ``HMRC`` call
        record per step), reading the union of observations and one global history.

        When the first active robot's brain has ``act_team`` (see :mod:`.llm_brain`) it is the
        planner: every robot's context is built first (messages collected, the global view and
        history), one ``act_team`` call gives ``{robot: action text}``, and the robots execute in
        team order (stopping at success). A robot the plan leaves out waits; an unusable reply
        (``invalid``) makes every robot's action an invalid one; a bare ``move`` is invalid (no
        second call: the central planner writes ``move(dx, dy)``). Without ``act_team`` each
        robot's brain is asked in turn with the global context (its usage summed into the record)."""
        w = self.w
        names = [r.name for r in w.active()]
        self.usage = (0, 0)
        self.global_now = []

        def central_context(name: str) -> Context:
            self._collect_messages(name)
            ctx = self.context(name, central=True)
            fb, kinds, acts = self.global_history()
            ctx.feedback_history = fb if self.cfg.feedback else []
            ctx.feedback_kinds = kinds if self.cfg.feedback else []
            ctx.action_history = acts
            return ctx

        def remember_globally(name: str, fb: Feedback) -> None:
            self.global_now.append((w.step, name, fb))

        planner = getattr(self.brains[names[0]], "act_team", None) if names else None
        if planner is None:
            for name in names:
                fb = self.act(name, central_context(name), stage_calls=False)
                remember_globally(name, fb)
                if w.success():
                    break
            self.log.calls.append({"stage": "HMRC", "robot": "central", "step": w.step, "tokens_in": self.usage[0],
                                   "tokens_out": self.usage[1], "invalid": None})
            self.global_steps.append(self.global_now)
            return
        ctxs = [central_context(name) for name in names]
        reply = planner(ctxs)
        self.usage = (reply.tokens_in, reply.tokens_out)
        self._call("HMRC", "central", reply)
        joint = reply.value if not reply.invalid and isinstance(reply.value, Mapping) else None
        for name, ctx in zip(names, ctxs):
            if not w.robots[name].active:
                continue
            # an unusable plan: a text that never parses, so the world records an invalid action
            text = "(no usable joint plan)" if joint is None else str(joint.get(name, "wait()"))
            try:
                action = None if MOVE_SELECTION.match(text.strip()) else parse_action(text)
            except ActionError:
                action = None
            fb = w.execute(name, text)
            if self.record and action is not None:
                self.log.decisions.append((ctx, fb.action))
            self.log.add_step(_step_record(w.step, name, w.robots[name].type.code, fb))
            self._remember(name, fb)
            w.perceive()
            remember_globally(name, fb)
            if w.success():
                break
        self.global_steps.append(self.global_now)

    def global_history(self) -> tuple[list[str], list[str], list[str]]:
        """COHERENT's global interaction history (feedback texts, their kinds, actions), oldest
        first: every robot's entries of the last ``memory`` completed team steps, then those of the
        step being played, each written ``(step t) <robot>: <item>``."""
        fb: list[str] = []
        kinds: list[str] = []
        acts: list[str] = []
        for group in [*self.global_steps, self.global_now]:
            for t, name, f in group:
                fb.append(f"(step {t}) {name}: {f.text}")
                kinds.append(f.kind)
                acts.append(f"(step {t}) {name}: {f.action}")
        return fb, kinds, acts


def _step_record(step: int, robot: str, code: str, fb: Feedback) -> dict[str, Any]:
    try:
        a = parse_action(fb.action)
        name, target, where = a.name, a.target, a.where
    except ActionError:
        name, target, where = "invalid", "", ""
    if fb.kind == "invalid_action":
        name = "invalid"
    return {"t": step, "robot": robot, "type": code, "action": fb.action, "name": name, "target": target,
            "where": where, "kind": fb.kind, "ok": fb.ok, "feedback": fb.text}


def run_episode(world: RobotWorld, brains: Mapping[str, Brain], *, max_steps: int, text: str,
                config: Config = Config(),
                variation: Callable[[RobotWorld, int], dict[str, Any] | None] | None = None,
                brain_for: Callable[[str, str], Brain] | None = None,
                record_decisions: bool = False, episode_id: str = "episode", task_id: str = "") -> EpisodeLog:
    """Run one episode of ``config.method`` to success or ``max_steps``; the world is changed in
    place. ``variation(world, t)`` is called before the robots act in step ``t`` and returns an
    event dict (``kind`` CTO/IRZ/ANC/REC ...) or None; ``brain_for(name, code)`` gives a robot that
    joins its backend."""
    missing = [n for n in world.robots if n not in brains]
    if missing:
        raise ValueError(f"brains: no backend for robots {missing}")
    ep = _Episode(world, brains, config, text, variation, brain_for, record_decisions)
    ep.episode_id, ep.task_id = episode_id, task_id or episode_id
    return ep.run(max_steps)


def run_joint_episode(world: RobotWorld, decide: Callable[[RobotWorld], Mapping[str, str]], *, max_steps: int,
                      variation: Callable[[RobotWorld, int], dict[str, Any] | None] | None = None,
                      observe: Callable[[Feedback], None] | None = None) -> EpisodeLog:
    """A centralized search baseline's episode: ``decide(world)`` gives every active robot's action
    text for the step (it must read only what the robots have observed); they act in team order.
    ``variation(world, t)`` runs before the decision of step ``t`` (as in :func:`run_episode`);
    ``observe(feedback)`` receives every executed action's feedback."""
    log = EpisodeLog(participants={n: r.type.code for n, r in world.robots.items()})
    for t in range(1, max_steps + 1):
        world.step = t
        if variation is not None:
            event = variation(world, t)
            if event:
                log.events.append(event)
                if event.get("kind") == "ANC":
                    log.participants[event["robot"]] = event["code"]
        joint = decide(world)
        for r in list(world.robots.values()):
            if not r.active:
                continue
            fb = world.execute(r.name, joint.get(r.name, "wait()"))
            log.add_step(_step_record(t, r.name, r.type.code, fb))
            if observe is not None:
                observe(fb)
            world.perceive()
            if world.success():
                break
        log.ts = t
        if world.success():
            break
    return log

