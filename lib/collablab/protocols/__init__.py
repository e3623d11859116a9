"""Many agents coordinating one step, and the team loop: isolated, broadcast, discuss, leader,
leader_vision, shared_memory (mecobench.txt §2.2, Fig. 3, appendix C.1)."""

from __future__ import annotations

from typing import Any, Mapping

from ..world.household import check_n_agents
from .base import CommProtocol, StepComm
from .broadcast import Broadcast
from .discuss import Discuss
from .isolated import Isolated
from .leader import Leader, LeaderVision
from .memory_board import MemoryBoard, merge_writes
from .shared_memory import SharedMemory
from .team import EmbodiedTeam, TaskBrief, Team

PROTOCOLS: dict[str, type[CommProtocol]] = {
    cls.name: cls for cls in (Isolated, Broadcast, Discuss, Leader, LeaderVision, SharedMemory)
}

#: The orderings the paper leaves open, as flat spec keys: key -> (the protocol class it sets
#: (subclasses included), its keyword, the default: the paper's closest reading, argued in the
#: class's module doc).
PROTOCOL_OPTIONS: dict[str, tuple[type[CommProtocol], str, Any]] = {
    "memory_writes": (SharedMemory, "writes", "simultaneous"),
    "leader_routing": (Leader, "routing", "receiver"),
    "discuss_consensus": (Discuss, "consensus", "all"),
    "discuss_max_rounds": (Discuss, "max_rounds", 3),
    "discuss_unreadable": (Discuss, "unreadable", "continue"),
}
PROTOCOL_DEFAULTS: dict[str, Any] = {k: default for k, (_, _, default) in PROTOCOL_OPTIONS.items()}


def protocol_class(name: str) -> type[CommProtocol]:
    """The protocol called ``name``; ValueError naming the allowed protocols."""
    if name not in PROTOCOLS:
        raise ValueError(f"protocol: {name!r} is not allowed; allowed: {', '.join(PROTOCOLS)}")
    return PROTOCOLS[name]


def check_protocol_options(options: Mapping[str, Any]) -> None:
    """ValueError naming an unknown option or a bad value (with the allowed ones), whichever
    protocol the option is for."""
    unknown = sorted(set(options) - set(PROTOCOL_OPTIONS))
    if unknown:
        raise ValueError(f"protocol options: unknown {unknown}; allowed: {', '.join(PROTOCOL_OPTIONS)}")
    for key, value in options.items():
        cls, kw, _ = PROTOCOL_OPTIONS[key]
        cls(**{kw: value})  # the class checks its own settings


def options_for(name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options (spec keys) that set protocol ``name``, defaults filled in."""
    cls = protocol_class(name)
    return {k: options.get(k, default) for k, (owner, _, default) in PROTOCOL_OPTIONS.items() if issubclass(cls, owner)}


def make_protocol(name: str, n_agents: int, **options: Any) -> CommProtocol:
    """A protocol by name with its options (:data:`PROTOCOL_OPTIONS` keys; those of other
    protocols are checked and ignored), checked against the team size before anything runs."""
    cls = protocol_class(name)
    check_protocol_options(options)
    check_n_agents(n_agents)
    if n_agents < cls.min_agents:
        raise ValueError(f"protocol: {name!r} needs at least {cls.min_agents} agents, got n_agents={n_agents}")
    proto = cls(**{PROTOCOL_OPTIONS[k][1]: v for k, v in options_for(name, options).items()})
    proto.reset(n_agents)
    return proto


__all__ = ["PROTOCOLS", "PROTOCOL_DEFAULTS", "PROTOCOL_OPTIONS", "Broadcast", "CommProtocol", "Discuss",
           "EmbodiedTeam", "Isolated", "Leader", "LeaderVision", "MemoryBoard", "SharedMemory", "StepComm",
           "TaskBrief", "Team", "check_protocol_options", "make_protocol", "merge_writes", "options_for",
           "protocol_class"]
