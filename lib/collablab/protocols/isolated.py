"""Isolated mode: no communication at all (Fig. 3, "no comm")."""

from __future__ import annotations

from .base import CommProtocol, StepComm


class Isolated(CommProtocol):
    name = "isolated"
    has_channel = False

    def communicate(self, policies, views, images=None) -> StepComm:
        return StepComm()
