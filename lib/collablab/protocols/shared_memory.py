"""Shared memory: no messages; every agent reads one structured memory block before acting
and updates it in the same reply (Fig. 24 orange, Fig. 29: claims, holdings, task progress).
Whether a step's writes are seen within the step (``writes``) is :mod:`.memory_board`'s."""

from __future__ import annotations

from typing import Any

from .base import CommProtocol, StepComm
from .memory_board import MEMORY_WRITES, MemoryBoard


class SharedMemory(CommProtocol):
    name = "shared_memory"
    uses_memory = True

    def __init__(self, writes: str = "simultaneous") -> None:
        if writes not in MEMORY_WRITES:
            raise ValueError(f"memory_writes: {writes!r} is not allowed; allowed: {', '.join(MEMORY_WRITES)}")
        self.writes = writes

    def communicate(self, policies, views, images=None) -> StepComm:
        return StepComm()

    def memory_board(self, memory: dict[str, Any]) -> MemoryBoard:
        return MemoryBoard(memory, self.writes)
