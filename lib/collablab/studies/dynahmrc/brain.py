"""What a robot's reasoning core sees and answers at each stage of DynaHMRC (dynahmrc.tex §3.2-3.4,
``algo:collaboration``): the :class:`Context` of one call, the :class:`Reply`, and the
:class:`Brain` protocol every backend implements (the offline heuristic in :mod:`.offline`, the
LLM in :mod:`.llm_brain`).

Stages and their codes (``tab:token_comparison``): ``SD`` self-description, ``TALB`` task
allocation and leadership bidding, ``LE`` leader election (votes and the referee), ``HMRC``
execution (one action; a ``move`` takes a second call with the local costmap), ``GD`` group
discussion (each robot's reflection), ``LP`` the leader's plan update.

A context carries the robot's own view only: its scene graph (places and the objects it has
perceived), its status, the task status line, its bounded memory queues (feedback, actions,
messages; the framework empties a queue an ablation removes), the leader's current plan and the
self-descriptions of robots that joined during execution (ANC, ``newcomers``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from .layout import Point
from .robots import RobotType

__all__ = ["Brain", "Context", "PlaceView", "Plan", "Reply", "STAGES", "TaskInfo", "TeamPlanner", "letter"]

STAGES = ("SD", "TALB", "LE", "HMRC", "GD", "LP")


@dataclass(frozen=True)
class TaskInfo:
    """The task as the robots are told it: kind, the sentence, the target objects (the sandwich
    menu bottom to top; sort: each solid's colour is its panel), the receptacles' handles."""

    kind: str
    text: str
    targets: tuple[str, ...]
    receptacles: tuple[str, ...]
    working_table: str


@dataclass(frozen=True)
class PlaceView:
    """One place of a robot's scene graph as the prompt shows it."""

    handle: str
    room: str
    pos: Point
    state: str  # "open" | "close" | "" (not articulated)
    stand_poses: tuple[Point, ...]
    elevated: bool


@dataclass
class Plan:
    """A collaboration plan: its text and, when the backend writes one, a structured part the
    offline robots read (``explore``: robot -> places to search, ``roles``: robot -> role,
    ``fetch``: mover -> rooms whose objects it fetches)."""

    text: str
    explore: dict[str, list[str]] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)
    fetch: dict[str, list[str]] = field(default_factory=dict)  # mover -> rooms it fetches from


@dataclass
class Context:
    """Everything one robot has for one call."""

    name: str
    type: RobotType
    teammates: list[tuple[str, str]]  # (name, type code) of the others, current team
    task: TaskInfo
    step: int
    max_steps: int
    places: list[PlaceView]
    objects: dict[str, tuple[str, Point]]  # its scene graph's objects: handle -> (place, pos)
    pos: Point
    held: str | None
    at: str | None
    task_status: str
    feedback_history: list[str] = field(default_factory=list)
    action_history: list[str] = field(default_factory=list)
    message_history: list[str] = field(default_factory=list)  # "(content) from Sender"
    feedback_kinds: list[str] = field(default_factory=list)  # parallel to feedback_history
    leader: str | None = None
    plan: Plan | None = None
    self_descriptions: dict[str, str] = field(default_factory=dict)
    #: ANC (§4.3 "broadcast to all existing team members"): name -> self-description of each robot
    #: that joined during execution (not the robot itself), kept for every later call
    newcomers: dict[str, str] = field(default_factory=dict)
    proposals: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (plan text, speech)
    vote_history: list[dict[str, int]] = field(default_factory=list)  # LE: counts of earlier rounds
    reports: dict[str, tuple[str, str]] = field(default_factory=dict)  # LP: name -> (summary, plan)
    lessons: list[str] = field(default_factory=list)  # its own latest reflection summary, kept across steps
    costmap: list[list[str]] | None = None  # HMRC move, second call
    goal: str | None = None  # HMRC move: the object the costmap's G marks
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Reply:
    """A backend's answer: the raw ``text``, ``thoughts``, the parsed ``content`` and usage.

    ``value`` is the stage's structured result: SD the description (str), TALB ``(Plan, speech)``,
    LE the voted name, HMRC the action text (str) or, for a move's second call, ``(dx, dy)``, GD
    ``(summary, plan text)``, LP a :class:`Plan`. ``invalid`` names why a reply could not be used
    (the framework records it and, for HMRC, counts an invalid action)."""

    text: str
    value: Any = None
    thoughts: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    calls: int = 1
    invalid: str | None = None
    reasoning: str | None = None  # a model's thoughts apart from its reply (their start, recorded with the call)
    finish_reason: str | None = None  # a model's call: why its reply ended (stop, length), recorded with the call


class Brain(Protocol):
    """One robot's reasoning core. ``label`` names the backend in results."""

    label: str

    def describe(self, ctx: Context) -> Reply: ...

    def propose(self, ctx: Context) -> Reply: ...

    def vote(self, ctx: Context, candidates: list[str]) -> Reply: ...

    def referee(self, ctx: Context, candidates: list[str]) -> Reply: ...

    def act(self, ctx: Context) -> Reply: ...

    def move_offset(self, ctx: Context) -> Reply: ...

    def reflect(self, ctx: Context) -> Reply: ...

    def update_plan(self, ctx: Context) -> Reply: ...


class TeamPlanner(Protocol):
    """A centralized planner (COHERENT-style, §4.2): one call per step chooses every robot's action.
    ``act_team`` gets each active robot's global-view context in team order and returns
    ``Reply(value={robot name: action text})``. Optional: the framework uses it when the planning
    robot's backend has it, else one :meth:`Brain.act` per robot."""

    label: str

    def act_team(self, ctxs: list[Context]) -> Reply: ...


def letter(i: int) -> str:
    """Option ``i``'s letter: A ... Z, then AA, AB ..."""
    if i < 0:
        raise ValueError(f"option index: {i}; must be >= 0")
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(ord("A") + r) + s
    return s
