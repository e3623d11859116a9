"""Shared memory: no messages; every agent reads one structured memory block before acting
and updates it after (Fig. 24 orange, Fig. 29: claims, holdings, task progress)."""

from __future__ import annotations

from .base import CommProtocol, StepComm


class SharedMemory(CommProtocol):
    name = "shared_memory"
    uses_memory = True

    def communicate(self, policies, views, images=None) -> StepComm:
        return StepComm()
