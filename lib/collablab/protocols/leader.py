"""Centralised mode: workers report to a leader, who assigns exactly one instruction to
every agent, itself included (Figs. 21-22). With vision the leader also receives every
worker's current view, as observations and as rendered images (leader-MM, §5.3)."""

from __future__ import annotations

from ..agents.base import Message
from .base import CommProtocol, StepComm


class Leader(CommProtocol):
    name = "leader"
    min_agents = 2
    has_leader = True
    vision = False

    def communicate(self, policies, views, images=None) -> StepComm:
        comm = StepComm(rounds=1)
        reports = []
        for a, p in enumerate(policies):
            if a == self.leader:
                continue
            utt = p.speak("report", [])
            comm.record(a, utt)
            if utt.text:
                reports.append(Message(a, utt.text, "report", receivers=(self.leader,)))
        leader = policies[self.leader]
        seen = {a: v for a, v in enumerate(views)} if self.vision else None
        pics = images() if (self.vision and callable(images) and leader.wants_images) else None
        plan = leader.assign(reports, seen, pics)
        comm.record(self.leader, plan.utterance)
        comm.instructions = dict(plan.instructions)
        if plan.utterance.text:
            self.deliver(policies, [Message(self.leader, plan.utterance.text, "assignment")])
        return comm


class LeaderVision(Leader):
    name = "leader_vision"
    vision = True
