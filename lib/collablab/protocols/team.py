"""The embodied team loop: observe -> communicate -> act, per step (mecobench.txt Fig. 4).

A study's episode loop drives any :class:`Team`; :class:`EmbodiedTeam` is the one made of
per-agent policies and a protocol. It needs only the world and the goal text of the task
(:class:`TaskBrief`), so it knows no study.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence

from ..agents.base import AgentContext, Policy, Turn
from ..world.household import Household
from ..world import render
from .base import CommProtocol, StepComm


class TaskBrief(Protocol):
    """What the team loop needs of a study's task: its id and the goal text agents read under a
    prior."""

    task_id: str

    def goal_text(self, prior: str) -> str: ...


class Team(Protocol):
    """Anything that decides one action per agent per step."""

    backend: str

    def reset(self, world: Household, task: Any, seed: int) -> None: ...

    def act(self, world: Household) -> dict[int, Turn]: ...


class EmbodiedTeam:
    """Per-agent policies (possibly mixed backends) coordinated by one protocol."""

    def __init__(self, policies: Sequence[Policy], protocol: CommProtocol, prior: str = "full",
                 leader: int = 0) -> None:
        self.policies = list(policies)
        self.protocol = protocol
        self.prior = prior
        self.leader = leader
        backends = sorted({p.backend for p in self.policies})
        self.backend = backends[0] if len(backends) == 1 else "mixed:" + "+".join(backends)

    def reset(self, world: Household, task: TaskBrief, seed: int) -> None:
        n = world.n_agents
        if len(self.policies) != n:
            raise ValueError(f"policies: {len(self.policies)} given for {n} agents")
        self.protocol.reset(n, self.leader)
        # a channel with nobody at the other end is no channel: a lone agent runs the same
        # episode under every protocol (Table 9 lists one 1-agent row for all of them)
        self.has_channel = self.protocol.has_channel and n > 1
        rooms = world.scene.rooms
        doors = [(d.id, rooms[d.rooms[0]], rooms[d.rooms[1]]) for d in world.scene.doors]
        text = task.goal_text(self.prior)
        for a, p in enumerate(self.policies):
            p.reset(AgentContext(
                agent=a, n_agents=n, goal_text=text, structure=world.structure,
                allowed_rooms=[rooms[r] for r in sorted(world.allowed[a])], doors=doors,
                valid_actions=world.action_names, protocol=self.protocol.name,
                leader=self.leader if self.protocol.has_leader else None, seed=seed, task_id=task.task_id,
                has_channel=self.has_channel, handovers=tuple(sorted(world.handover_links))))
        self.memory: dict[str, Any] = {"global": {}}
        self._world = world

    def act(self, world: Household) -> dict[int, Turn]:
        views = [world.observe(a) for a in range(world.n_agents)]
        for p, v in zip(self.policies, views):
            p.observe(v)
        pictures: dict[int, Any] = {}

        def images() -> dict[int, Any]:
            """Every agent's ``(raw, annotated)`` views this step, drawn once
            (:func:`~collablab.world.render.agent_views`, the one source of agent images)."""
            if not pictures:
                pictures.update({a: render.agent_views(world, a) for a in range(world.n_agents)})
            return pictures

        for a, p in enumerate(self.policies):
            if p.wants_images:  # multimodal agents see their own views each step (B.1, B.4)
                p.see(*images()[a])
                boxes = render.image_boxes(world, a)  # the decoder's candidates carry their boxes (Fig. 18)
                for v in views[a]["visible"]:
                    v["bbox"] = boxes.get(v["id"])

        comm = self.protocol.communicate(self.policies, views, images) if self.has_channel else StepComm()
        turns: dict[int, Turn] = {}
        # shared memory: what each agent reads and writes this step, settled after all acted
        board = self.protocol.memory_board(self.memory) if self.protocol.uses_memory and self.has_channel else None
        for a, p in enumerate(self.policies):
            mem = board.view(a) if board is not None else None
            d = p.act(instruction=comm.instructions.get(a), shared_memory=mem)
            extra = p.write_memory(mem) if mem is not None else None
            costs = comm.costs.get(a, []) + ([extra] if extra else [])
            said = comm.said.get(a, [])
            turns[a] = Turn(
                action=d.action,
                message=" | ".join(said) if said else None,
                tokens_prompt=d.tokens_prompt + sum(u.tokens_prompt for u in costs),
                tokens_completion=d.tokens_completion + sum(u.tokens_completion for u in costs),
                latency_s=d.latency_s + sum(u.latency_s for u in costs),
                note=d.note,
            )
        if board is not None:
            board.commit()
        return turns
