"""Broadcast: every agent sends at most one message to all before acting (Fig. 19).

Messages are composed simultaneously, so two agents may claim the same object in the same
step; each reads everyone's message before it acts.
"""

from __future__ import annotations

from ..agents.base import Message
from .base import CommProtocol, StepComm


class Broadcast(CommProtocol):
    name = "broadcast"

    def communicate(self, policies, views, images=None) -> StepComm:
        comm = StepComm(rounds=1)
        msgs = []
        for a, p in enumerate(policies):
            utt = p.speak("broadcast", [])
            comm.record(a, utt)
            if utt.text:
                msgs.append(Message(a, utt.text, "broadcast"))
        self.deliver(policies, msgs)
        return comm
