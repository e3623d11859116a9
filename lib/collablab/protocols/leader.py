"""Centralised mode: workers report to a leader, who assigns exactly one instruction to
every agent, itself included (Figs. 21-22). With vision the leader also receives every
worker's current view, as observations and as rendered images (leader-MM, §5.3).

Routing follows the prompts: a worker must "send ONE report message to the leader agent ... and
wait for the leader's assignment" (Fig. 21), so a report goes to the leader only, and the leader
hears the reports before it assigns ("Based on your current observation, memory, dialogue, and the
workers' reports", Fig. 22); the leader answers with a list of messages each naming its
``"receiver": "<exact agent name>"`` (Fig. 22), so an assignment goes to its receiver only. What
an agent reads as "Current round dialogue" when it acts (Fig. 27) is what it sent and what was
sent to it: a worker its report and its own assignment, the leader the reports and every
assignment it gave. The paper never shows a worker another worker's assignment; ``routing="all"``
(the earlier behaviour: the whole assignment list to everyone) is kept as a setting because §3's
"assign actions to the team" does not say the list stays private.
"""

from __future__ import annotations

from ..agents.base import Message
from .base import CommProtocol, StepComm

#: Who hears the leader's assignments.
LEADER_ROUTING = ("receiver", "all")


class Leader(CommProtocol):
    name = "leader"
    min_agents = 2
    has_leader = True
    vision = False

    def __init__(self, routing: str = "receiver") -> None:
        if routing not in LEADER_ROUTING:
            raise ValueError(f"leader_routing: {routing!r} is not allowed; allowed: {', '.join(LEADER_ROUTING)}")
        self.routing = routing

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
        self.deliver(policies, reports)  # the leader has the reports before it assigns
        leader = policies[self.leader]
        seen = {a: v for a, v in enumerate(views)} if self.vision else None
        pics = images() if (self.vision and callable(images) and leader.wants_images) else None
        plan = leader.assign(reports, seen, pics)
        comm.record(self.leader, plan.utterance)
        comm.instructions = dict(plan.instructions)
        if self.routing == "all":
            if plan.utterance.text:
                self.deliver(policies, [Message(self.leader, plan.utterance.text, "assignment")])
        else:
            self.deliver(policies, [Message(self.leader, text, "assignment", receivers=(a,))
                                    for a, text in sorted(plan.instructions.items()) if text])
        return comm


class LeaderVision(Leader):
    name = "leader_vision"
    vision = True
