"""Team protocols: isolated, broadcast, discuss, leader, leader_vision, shared_memory."""

from __future__ import annotations

from .base import CommProtocol, StepComm
from .broadcast import Broadcast
from .discuss import Discuss
from .isolated import Isolated
from .leader import Leader, LeaderVision
from .shared_memory import SharedMemory

PROTOCOLS: dict[str, type[CommProtocol]] = {
    cls.name: cls for cls in (Isolated, Broadcast, Discuss, Leader, LeaderVision, SharedMemory)
}


def make_protocol(name: str, n_agents: int) -> CommProtocol:
    """A protocol by name, checked against the team size before anything runs."""
    if name not in PROTOCOLS:
        raise ValueError(f"protocol: {name!r} is not allowed; allowed: {', '.join(PROTOCOLS)}")
    cls = PROTOCOLS[name]
    if not isinstance(n_agents, int) or n_agents < 1:
        raise ValueError(f"n_agents: must be an integer >= 1, got {n_agents!r}")
    if n_agents < cls.min_agents:
        raise ValueError(f"protocol: {name!r} needs at least {cls.min_agents} agents, got n_agents={n_agents}")
    proto = cls()
    proto.reset(n_agents)
    return proto


__all__ = ["PROTOCOLS", "CommProtocol", "StepComm", "make_protocol"]
