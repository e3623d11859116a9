"""One decentralized episode: a robot and a human planner acting concurrently in simulation
time under the information conditions (observe_share_predict.txt §3.1-3.3, §4.5).

Agent 0 is the robot, agent 1 the human (PARTNR's decentralized configuration). Each agent
plans when its previous skill ends (a planning cycle); the other keeps acting meanwhile. The
clock jumps from one phase end (a waypoint reached, a look, an act) to the next; at each phase
end the acting agent observes (its view, :mod:`.world`), Knowledge Exchange merges both belief
graphs when the agents share a room, and the evaluator reads the ground truth after any change.

The channels, each switchable (:class:`Channels`):

- **OAS**: when the agents share a room at planning time, the partner's visible state (room,
  the furniture it is at, what it holds, its kind of motion) and current percepts (the objects
  it sees now), as text (:mod:`.oas`); otherwise the fixed line :data:`ELSEWHERE`. Never its
  call or the call's target, thoughts, plans or predictions. The percepts also enter the
  observer's world graph as records stamped now (:func:`.oas.percept_records`).
- **KE**: when co-located, object records merge, newest wins, with no sender recorded.
- **OANA**: before choosing its own action, the agent predicts the partner's next action; the
  prediction is logged with the union target (the partner's current action) and, once the
  partner next chooses, the strict target (its next action).
- **full observability** (control): both belief graphs are the ground truth at every event
  (KE is meaningless there and refused).

Each action's log keeps what the action itself did, for credit by cause (:mod:`.metrics`): the
change of satisfied propositions its own phases made (``progress_own``, a partner's change in the
meantime excluded), the objects its own looks located for its agent (``found``) and the container a
Pick took its object out of (``taken_from``); the result keeps the step the task was complete
(``completed_at``, :meth:`.evaluation.Evaluator.completed_at`).

An episode ends when both agents are Done, out of planning cycles (``max_cycles``, PARTNR's
``replanning_threshold`` of 50 in the decentralized configuration) or the clock passes
``max_steps``. A planner reply that is not a valid call is a failed action with feedback (a
planning cycle spent, no steps); an exception of the planner's backend (server down) is not
caught here: the unit fails and a rerun retries it.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from .calls import ToolCall
from .evaluation import Evaluator, evaluate_proposition
from .explanations import explain
from .oas import ELSEWHERE, PartnerView, partner_view, percept_records
from .skills import ROLE_TOOLS, Plan, Skills
from .tasks import Task
from .world import Beliefs, Point, World

ROLES = ("robot", "human")
INTERACTIONS = ("Pick", "Place", "Rearrange", "Open", "Close", "Clean", "Fill", "Pour", "PowerOn", "PowerOff")


@dataclass(frozen=True)
class Channels:
    """The information condition of one run (§3.2-3.3)."""

    oas: bool = False
    ke: bool = False
    oana: bool = False
    full_obs: bool = False

    def __post_init__(self) -> None:
        if self.full_obs and self.ke:
            raise ValueError("channels: ke is meaningless under full_obs (both agents know everything); allowed with "
                             "full_obs: oas, oana")

    @property
    def name(self) -> str:
        parts = [p for p, on in (("OAS", self.oas), ("KE", self.ke)) if on] or ["Obj"]
        return ("Full:" if self.full_obs else "") + "+".join(parts) + ("+OANA" if self.oana else "")


@dataclass
class Observation:
    """Everything a planner gets for one planning cycle."""

    agent: int
    role: str
    tools: tuple[str, ...]
    instruction: str
    step: int
    beliefs: Beliefs
    world: World  # the layout only (rooms, furniture, doors): planners must not read objects from it
    task: Task
    pos: Point
    room: str
    holding: str | None
    history: list[tuple[str, str]]
    partner_text: str | None  # OAS line, None when OAS is off
    partner: PartnerView | None  # the same, structured (None when off or elsewhere; :mod:`.oas`)
    predict: bool


@dataclass
class Decision:
    """A planner's answer: its call (None: no valid call), thought, prediction and cost."""

    call: ToolCall | None
    thought: str = ""
    prediction: ToolCall | None = None
    raw: str = ""
    error: str | None = None
    tokens: int = 0
    cause: str | None = None  # why there is no call: "truncated" (cut at max_tokens) or "reply"
    reasoning: str | None = None  # the model's thoughts apart from its reply (the start: recorded_thoughts)
    finish_reason: str | None = None  # the server's (an LLM planner's call; "length": cut at max_tokens)


class Planner(Protocol):
    label: str

    def decide(self, obs: Observation) -> Decision: ...


@dataclass
class ActionLog:
    """One planning cycle and the skill it started."""

    agent: int
    role: str
    cycle: int
    call: str | None
    start: int
    end: int
    ok: bool
    feedback: str
    thought: str
    prediction: str | None = None
    pred_current: str | None = None
    pred_next: str | None = None
    progress_before: int = 0  # satisfied propositions when the call was chosen (anyone's doing)
    progress_after: int = 0  # ... when its skill ended (the partner may have changed some meanwhile)
    progress_own: int = 0  # the change its own phases made (its Place, Pick, state change), partner excluded
    found: list[str] = field(default_factory=list)  # objects its own observations located for its agent
    taken_from: str | None = None  # Pick/Rearrange: the furniture its object was taken out of (within)
    explored_new: bool = False
    tokens: int = 0
    invalid: bool = False
    invalid_cause: str | None = None  # "truncated", "reply" (nothing usable) or "precondition"
    reasoning: str | None = None  # an LLM planner's thoughts before its reply (their start)
    finish_reason: str | None = None  # an LLM planner's call: why the reply ended (stop, length)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Running:
    plan: Plan
    log: ActionLog
    phase: int = 0
    phase_start: int = 0
    phase_from: Point = (0.0, 0.0)


@dataclass
class EpisodeResult:
    """What an episode leaves: the action logs, the evaluation, the clock."""

    logs: list[ActionLog]
    steps: int
    percent_complete: float
    success: bool
    cycles: list[int]
    satisfied_at: list[int]
    end_reason: str
    evaluation_log: dict[str, Any] = field(default_factory=dict)
    failure: dict[str, Any] | None = None  # why it failed (.explanations.FailureExplanation.to_dict); None: success
    completed_at: int | None = None  # the step the task's last unit was first met (None: not a success)


class Episode:
    """Run one task with two planners under ``channels`` (see the module docstring)."""

    def __init__(self, task: Task, planners: list[Planner], channels: Channels, seed: int = 0,
                 max_cycles: int = 50, max_steps: int = 20_000) -> None:
        if len(planners) != 2:
            raise ValueError(f"planners: expected 2 (robot, human), got {len(planners)}")
        self.task, self.planners, self.ch = task, planners, channels
        self.rng = random.Random(f"partnr-episode:{seed}")
        self.max_cycles, self.max_steps = max_cycles, max_steps
        self.world = task.world()
        w = self.world
        w.agent_pos = [w.room_box[r][0] for r in task.agent_rooms(w)]
        self.skills = Skills(w, random.Random(f"partnr-skills:{seed}"))
        self.beliefs = [w.initial_beliefs(a) for a in (0, 1)]
        self.evaluator = Evaluator(task.evaluation)
        self.logs: list[ActionLog] = []
        self.history: list[list[tuple[str, str]]] = [[], []]
        self.running: list[_Running | None] = [None, None]
        self.done = [False, False]
        self.exhausted = [False, False]  # out of planning cycles (rather than Done)
        self.cycles = [0, 0]
        self.pending: list[list[ActionLog]] = [[], []]  # predictions of agent a waiting for the partner's next call
        self.t = 0

    # -- helpers -------------------------------------------------------------------------------
    def _progress(self) -> int:
        return sum(evaluate_proposition(p, self.world).is_satisfied for p in self.task.evaluation.propositions)

    def pos_now(self, a: int) -> Point:
        """Where agent ``a`` is at the current time (interpolated along a walk)."""
        r = self.running[a]
        w = self.world
        if r is None or r.phase >= len(r.plan.phases):
            return w.agent_pos[a]
        ph = r.plan.phases[r.phase]
        if ph.kind != "walk" or ph.to is None or ph.steps <= 0:
            return w.agent_pos[a]
        k = min(1.0, max(0.0, (self.t - r.phase_start) / ph.steps))
        return (r.phase_from[0] + (ph.to[0] - r.phase_from[0]) * k, r.phase_from[1] + (ph.to[1] - r.phase_from[1]) * k)

    def co_located(self) -> bool:
        return self.world.room_at(self.pos_now(0)) == self.world.room_at(self.pos_now(1))

    def partner_view(self, a: int) -> PartnerView | None:
        """What OAS shows agent ``a`` of its partner now (:mod:`.oas`); None when not co-located.
        Only the running skill's tool name and phase kind are passed on, never the call."""
        b = 1 - a
        if not self.co_located():
            return None
        r = self.running[b]
        running = r is not None and not self.done[b] and r.phase < len(r.plan.phases)
        tool = r.plan.call.name if running else None  # type: ignore[union-attr]
        kind = r.plan.phases[r.phase].kind if running else None  # type: ignore[union-attr]
        return partner_view(self.world, ROLES[b], self.pos_now(b), self.skills.holding.get(b), tool, kind)

    def _sync(self) -> None:
        if self.ch.full_obs:
            self.beliefs = [self._full(a) for a in (0, 1)]
        elif self.ch.ke and self.co_located():
            a, b = self.beliefs
            a.merge(b)
            b.merge(a)

    def _full(self, a: int) -> Beliefs:
        fresh = self.world.full_beliefs(a, self.t)
        fresh.explored = self.beliefs[a].explored
        return fresh

    # -- the loop ----------------------------------------------------------------------------------
    def run(self) -> EpisodeResult:
        w = self.world
        for a in (0, 1):
            w.observe(a, self.beliefs[a], 0)
        self._sync()
        self.evaluator.update(w, 0)
        need = [0, 1]
        reason = "done"
        while True:
            self.rng.shuffle(need)
            for a in need:
                self._decide(a)
            if all(self.done):
                break
            active = [a for a in (0, 1) if self.running[a] is not None]
            if not active:
                break
            t_next = min(self._phase_end(a) for a in active)
            if t_next > self.max_steps:
                reason = "max_steps"
                self.t = self.max_steps
                break
            self.t = t_next
            need = []
            ends = [a for a in active if self._phase_end(a) == t_next]
            self.rng.shuffle(ends)
            for a in ends:
                if self._advance(a):
                    need.append(a)
            self._sync()
        if reason == "done" and (any(self.exhausted) or not all(self.done)):
            reason = "max_cycles"
        for a in (0, 1):
            for log in self.pending[a]:
                log.pred_next = None
        failure = explain(self.evaluator)
        return EpisodeResult(self.logs, self.t, self.evaluator.percent_complete(), self.evaluator.success(),
                             list(self.cycles), list(self.evaluator.satisfied_at), reason, self.evaluator.log(),
                             failure.to_dict() if failure is not None else None, self.evaluator.completed_at())

    def _phase_end(self, a: int) -> int:
        r = self.running[a]
        assert r is not None
        return r.phase_start + r.plan.phases[r.phase].steps

    def _decide(self, a: int) -> None:
        """Plan until agent ``a`` has a running skill, is Done or is out of cycles."""
        while not self.done[a] and self.running[a] is None:
            if self.cycles[a] >= self.max_cycles:
                self.done[a] = self.exhausted[a] = True
                return
            self.cycles[a] += 1
            obs = self._observation(a)
            d = self.planners[a].decide(obs)
            log = ActionLog(a, ROLES[a], self.cycles[a], d.call.text() if d.call else None, self.t, self.t, False, "",
                            d.thought, tokens=d.tokens, progress_before=self._progress(), reasoning=d.reasoning,
                            finish_reason=d.finish_reason)
            if self.ch.oana:
                log.prediction = d.prediction.text() if d.prediction else None
                b = 1 - a
                rb = self.running[b]
                last = next((x for x in reversed(self.logs) if x.agent == b), None)
                log.pred_current = (rb.plan.call.text() if rb is not None else
                                    last.call if last is not None and last.end == self.t and not self.done[b] else None)
                self.pending[a].append(log)
            # the partner's pending predictions get this call as their strict target
            for p in self.pending[1 - a]:
                p.pred_next = log.call
            self.pending[1 - a] = []
            self.logs.append(log)
            if d.call is None:
                log.invalid, log.invalid_cause = True, d.cause or "reply"
                log.feedback = d.error or "no valid action in the reply"
                log.progress_after = log.progress_before
                self.history[a].append((" ".join(d.raw.split())[:80] or "(empty)", log.feedback))
                continue
            if d.call.name == "Done":
                log.ok, log.feedback = True, "Done"
                log.progress_after = log.progress_before
                self.history[a].append((log.call or "", "Successful execution!"))
                self.done[a] = True
                return
            plan = self.skills.plan(a, ROLES[a], d.call, self.beliefs[a])
            if plan.error is not None:
                log.invalid, log.invalid_cause = True, "precondition"  # the agent could not make this call
                log.feedback = plan.error
                log.progress_after = log.progress_before
                self.history[a].append((log.call or "", plan.error))
                continue
            log.explored_new = d.call.name == "Explore" and not any(d.call.args[0] in b.explored for b in self.beliefs)
            if not plan.phases:
                plan.phases = []
                self._finish(a, _Running(plan, log), None)
                continue
            self.running[a] = _Running(plan, log, 0, self.t, self.world.agent_pos[a])

    def _observation(self, a: int) -> Observation:
        w = self.world
        view = self.partner_view(a) if self.ch.oas else None
        text = (view.text(f"agent_{1 - a}") if view is not None else ELSEWHERE) if self.ch.oas else None
        if view is not None and not self.ch.full_obs:
            mine = self.beliefs[a].objects
            for h, rec in percept_records(w, view, a, self.t).items():
                if h not in mine or (mine[h].step < rec.step and not mine[h].held_by_me):
                    mine[h] = rec
        return Observation(a, ROLES[a], ROLE_TOOLS[ROLES[a]], self.task.instruction, self.t, self.beliefs[a], w,
                           self.task, w.agent_pos[a], w.room_at(w.agent_pos[a]), self.skills.holding.get(a),
                           list(self.history[a]), text, view, self.ch.oana)

    def _advance(self, a: int) -> bool:
        """Apply the phase of agent ``a`` that ends now; True when its skill is over."""
        r = self.running[a]
        assert r is not None
        ph = r.plan.phases[r.phase]
        w = self.world
        error = None
        before = self._progress()
        if ph.kind == "walk" and r.plan.cap and self.t - r.log.start > r.plan.cap:
            w.agent_pos[a] = self.pos_now(a)
            error = f"{r.plan.call.name} failed: timed out after {r.plan.cap} steps"
        elif ph.kind == "walk" and ph.to is not None:
            w.agent_pos[a] = ph.to
        elif ph.kind == "act" and ph.effect is not None:
            source = self._container_of(r.plan.call) if self.skills.holding.get(a) is None else None
            error = ph.effect()
            if error is None and source is not None and self.skills.holding.get(a) is not None:
                r.log.taken_from = source
        r.log.progress_own += self._progress() - before
        self.evaluator.update(w, self.t)
        if not self.ch.full_obs:
            r.log.found += self._observe(a)
        r.phase += 1
        r.phase_start, r.phase_from = self.t, w.agent_pos[a]
        if error is not None or r.phase >= len(r.plan.phases):
            self._finish(a, r, error)
            return True
        return False

    def _container_of(self, call: ToolCall) -> str | None:
        """The furniture a Pick or Rearrange would take its object out of (``within`` it), else None."""
        if call.name not in ("Pick", "Rearrange") or not call.args or call.args[0] not in self.world.objects:
            return None
        place = self.world.objects[call.args[0]].place
        return place[1] if place is not None and place[0] == "within" else None

    def _observe(self, a: int) -> list[str]:
        """Agent ``a`` looks (:meth:`.world.World.observe`); the objects whose place it learnt now
        (unknown before, or known as "location unknown")."""
        b = self.beliefs[a]
        lost = {h for h, rec in b.objects.items() if rec.place is None and not rec.held_by_me}
        new = self.world.observe(a, b, self.t)
        located = [h for h in new if b.objects[h].place is not None]
        return located + sorted(h for h in lost if b.objects[h].place is not None)

    def _finish(self, a: int, r: _Running, error: str | None) -> None:
        log = r.log
        log.end, log.ok = self.t, error is None
        log.feedback = error or "Successful execution!"
        log.progress_after = self._progress()
        self.history[a].append((log.call or "", log.feedback))
        self.running[a] = None


def run_episode(task: Task, planners: list[Planner], channels: Channels, seed: int = 0,
                max_cycles: int = 50, max_steps: int = 20_000) -> EpisodeResult:
    """Run one episode (see :class:`Episode`)."""
    return Episode(task, planners, channels, seed, max_cycles, max_steps).run()


__all__ = ["ELSEWHERE", "INTERACTIONS", "ROLES", "ActionLog", "Channels", "Decision", "Episode", "EpisodeResult",
           "Observation", "PartnerView", "Planner", "run_episode"]
