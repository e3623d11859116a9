"""How a team coordinates one step (mecobench.txt §2.2, Fig. 3, appendix C.1)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from ..agents.base import Message, Policy, Utterance


@dataclass
class StepComm:
    """What was said in one step, what it cost, and any leader instructions."""

    said: dict[int, list[str]] = field(default_factory=dict)
    costs: dict[int, list[Utterance]] = field(default_factory=dict)
    instructions: dict[int, str] = field(default_factory=dict)
    rounds: int = 0

    def record(self, agent: int, utt: Utterance) -> None:
        self.costs.setdefault(agent, []).append(utt)
        if utt.text:
            self.said.setdefault(agent, []).append(utt.text)


class CommProtocol:
    """Base class: a named communication scheme run before the agents act.

    Attributes, not names, tell the team loop and the agents what a protocol offers:
    ``has_channel`` (teammates can tell each other anything at all, by message or memory),
    ``has_leader`` (one agent assigns, the others report), ``uses_memory`` (a shared memory
    block instead of messages), ``min_agents`` (the smallest team it makes sense for).
    """

    name = "base"
    min_agents = 1
    has_channel = True
    has_leader = False
    uses_memory = False

    def reset(self, n_agents: int, leader: int = 0) -> None:
        self.n_agents = n_agents
        self.leader = leader

    def communicate(self, policies: Sequence[Policy], views: list[dict[str, Any]],
                    images: Any = None) -> StepComm:
        raise NotImplementedError

    def memory_board(self, memory: dict[str, Any]) -> Any:
        """How this step's agents read and write ``memory`` (protocols with ``uses_memory``: a
        :class:`~collablab.protocols.memory_board.MemoryBoard`)."""
        raise NotImplementedError(f"protocol {self.name!r} keeps no shared memory")

    @staticmethod
    def deliver(policies: Sequence[Policy], messages: list[Message]) -> None:
        """Every agent hears the messages addressed to it: all of them when ``receivers`` is None,
        else its own and those naming it (Fig. 21-22: a report goes to the leader, an assignment
        to its ``receiver``)."""
        for a, p in enumerate(policies):
            p.hear([m for m in messages if m.receivers is None or m.sender == a or a in m.receivers])
