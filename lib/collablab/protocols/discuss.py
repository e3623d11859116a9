"""Discuss: agents speak in turn, seeing the dialogue so far; another round follows while
anyone answers CONTINUE, up to a round cap (Fig. 20, READY / CONTINUE)."""

from __future__ import annotations

from ..agents.base import Message
from .base import CommProtocol, StepComm


class Discuss(CommProtocol):
    name = "discuss"
    min_agents = 2

    def __init__(self, max_rounds: int = 3) -> None:
        if max_rounds < 1:
            raise ValueError(f"max_rounds: must be >= 1, got {max_rounds}")
        self.max_rounds = max_rounds

    def communicate(self, policies, views, images=None) -> StepComm:
        comm = StepComm()
        dialogue: list[Message] = []
        for r in range(self.max_rounds):
            comm.rounds = r + 1
            ready = True
            for a, p in enumerate(policies):
                utt = p.speak("discuss", list(dialogue), round=r)
                comm.record(a, utt)
                if utt.text:
                    dialogue.append(Message(a, utt.text, "discuss", round=r))
                ready = ready and utt.ready
            if ready:
                break
        self.deliver(policies, dialogue)
        return comm
