"""Many agents coordinating one step, and the team loop: isolated, broadcast, discuss, leader,
leader_vision, shared_memory (mecobench.txt §2.2, Fig. 3, appendix C.1)."""

from __future__ import annotations

from ..world.household import check_n_agents
from .base import CommProtocol, StepComm
from .broadcast import Broadcast
from .discuss import Discuss
from .isolated import Isolated
from .leader import Leader, LeaderVision
from .shared_memory import SharedMemory
from .team import EmbodiedTeam, TaskBrief, Team

PROTOCOLS: dict[str, type[CommProtocol]] = {
    cls.name: cls for cls in (Isolated, Broadcast, Discuss, Leader, LeaderVision, SharedMemory)
}


def protocol_class(name: str) -> type[CommProtocol]:
    """The protocol called ``name``; ValueError naming the allowed protocols."""
    if name not in PROTOCOLS:
        raise ValueError(f"protocol: {name!r} is not allowed; allowed: {', '.join(PROTOCOLS)}")
    return PROTOCOLS[name]


def make_protocol(name: str, n_agents: int) -> CommProtocol:
    """A protocol by name, checked against the team size before anything runs."""
    cls = protocol_class(name)
    check_n_agents(n_agents)
    if n_agents < cls.min_agents:
        raise ValueError(f"protocol: {name!r} needs at least {cls.min_agents} agents, got n_agents={n_agents}")
    proto = cls()
    proto.reset(n_agents)
    return proto


__all__ = ["PROTOCOLS", "Broadcast", "CommProtocol", "Discuss", "EmbodiedTeam", "Isolated", "Leader",
           "LeaderVision", "SharedMemory", "StepComm", "TaskBrief", "Team", "make_protocol", "protocol_class"]
