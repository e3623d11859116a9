"""The policy seam: what every embodied agent (heuristic or LLM) offers the team loop.

Per step (mecobench.txt §2.2, Fig. 4) each agent observes, communicates under the team's
protocol (speak / hear, or report / assign with a leader, or read / write a shared memory),
then acts. Policies return what they said and did together with what it cost (tokens,
latency) so every record names its backend and cost.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from ..world.actions import Action


@dataclass
class Message:
    """One utterance in a step's dialogue."""

    sender: int
    text: str
    kind: str = "broadcast"  # broadcast | discuss | report | assignment
    receivers: tuple[int, ...] | None = None  # None: everyone
    round: int = 0


@dataclass
class AgentContext:
    """Everything an agent is told at the start of an episode."""

    agent: int
    n_agents: int
    goal_text: str
    structure: str
    allowed_rooms: list[str]
    doors: list[tuple[int, str, str]]  # (door id, room, room) -- MECoBench's department topology
    valid_actions: tuple[str, ...]
    protocol: str
    leader: int | None = None
    seed: int = 0
    task_id: str = ""  # the episode's task, the same under every protocol, team size and prior
    has_channel: bool = True  # the protocol lets teammates tell each other anything (messages or memory)
    #: the task's handover chain: (giver, receiver, door id); empty when any pair may hand over
    handovers: tuple[tuple[int, int, int], ...] = ()

    @property
    def name(self) -> str:
        return f"Agent {self.agent}"


@dataclass
class Utterance:
    """A message (or silence) with its cost."""

    text: str | None
    ready: bool | None = True  # discuss protocol: READY / CONTINUE; None: the answer could not be read
    tokens_prompt: int = 0
    tokens_completion: int = 0
    latency_s: float = 0.0
    note: str = ""


@dataclass
class Assignment:
    """A leader's instructions: one per agent, itself included (Fig. 22)."""

    instructions: dict[int, str]
    utterance: Utterance = field(default_factory=lambda: Utterance(None))


@dataclass
class Decision:
    """An agent's action for this step, with what choosing it cost."""

    action: Action
    tokens_prompt: int = 0
    tokens_completion: int = 0
    latency_s: float = 0.0
    note: str = ""


class Policy(ABC):
    """One agent's decision maker. Subclasses: the heuristic planner, the LLM policy."""

    backend: str = "unknown"
    wants_images: bool = False

    @abstractmethod
    def reset(self, ctx: AgentContext) -> None: ...

    @abstractmethod
    def observe(self, obs: dict[str, Any]) -> None: ...

    def see(self, raw: Any, annotated: Any) -> None:
        """This step's own views, for policies with ``wants_images``: the raw view the agent acts
        on and the bbox-annotated view with ids its decoder uses (mecobench.txt B.4)."""

    @abstractmethod
    def speak(self, kind: str, dialogue: list[Message], round: int = 0) -> Utterance:
        """Compose a message: kind is broadcast | discuss | report."""

    @abstractmethod
    def hear(self, messages: list[Message]) -> None: ...

    @abstractmethod
    def assign(self, reports: list[Message], views: dict[int, dict[str, Any]] | None,
               images: dict[int, Any] | None) -> Assignment:
        """As leader: one instruction per agent, from reports (and views, with vision)."""

    @abstractmethod
    def act(self, instruction: str | None = None, shared_memory: dict[str, Any] | None = None) -> Decision: ...

    def write_memory(self, shared_memory: dict[str, Any]) -> Utterance | None:
        """Shared-memory protocol: update the shared block after acting (Fig. 29)."""
        return None


@dataclass
class Turn:
    """One agent's decision in one step as the team loop records it: the action, what the
    agent said this step, and what it all cost."""

    action: Action
    message: str | None = None
    tokens_prompt: int = 0
    tokens_completion: int = 0
    latency_s: float = 0.0
    note: str = ""
