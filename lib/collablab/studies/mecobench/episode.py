"""Run one MECoBench episode: a team acts in a household until success or budget (§3.1).

The effective budget is the total number of steps over all agents (mecobench.txt §3.1):
by default 60 for parallel tasks with location priors and 80 for sequential tasks and for
runs without location priors or with noisy ones (§6.1: "we extend the effective step budget
to 80 steps to allow sufficient search"), so each of n agents gets ``budget // n`` steps. Everything the episode produces is plain records (dicts) that the
metrics and analyses read; nothing downstream re-runs agents.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ...agents.base import Turn
from ...agents.llm.grounding import INVALID_TRUNCATED
from ...protocols.team import Team
from ...world.household import Household, check_n_agents
from .tasks import Task, TaskError

DEFAULT_BUDGET = {"parallel": 60, "sequential": 80}
#: priors whose locations are missing or noisy: the paper's search budget (§6.1)
SEARCH_PRIORS = frozenset({"no_location", "none", "noisy", "noisy_no_appearance"})
SEARCH_BUDGET = 80


def default_budget(structure: str, prior: str) -> int:
    """The paper's total step budget for a structure and prior variant (§3.1, §6.1)."""
    return SEARCH_BUDGET if prior in SEARCH_PRIORS else DEFAULT_BUDGET[structure]


@dataclass
class EpisodeConfig:
    n_agents: int
    budget: int | None = None  # total steps over agents; None -> default for the structure
    seed: int = 0
    prior: str = "full"
    labels: dict[str, Any] = field(default_factory=dict)  # protocol, profile, ... copied to records
    seen: str = "formula"  # Household(seen=...): the view rule's formula or the rendered pixels

    def resolved_budget(self, task: Task) -> int:
        return int(self.budget if self.budget is not None else default_budget(task.structure, self.prior))


def check_config(task: Task, cfg: EpisodeConfig) -> None:
    """Reject bad team sizes and budgets before any episode starts."""
    try:
        check_n_agents(cfg.n_agents)
    except ValueError as e:
        raise TaskError(str(e)) from None
    task.check_team(cfg.n_agents)
    budget = cfg.resolved_budget(task)
    if budget < cfg.n_agents:
        raise TaskError(f"budget: {budget} total steps is below the team size {cfg.n_agents}; "
                        "each agent needs at least one step")
    task.goal_text(cfg.prior)  # raises for an unknown or missing prior


def init_rooms(task: Task, n_agents: int, seed: int) -> list[int]:
    """Start rooms: the task's ``init_room_ids``, then its ``init_rooms`` names, then cycling."""
    rooms = list(task.init_room_ids)
    names = task.record.get("init_rooms") or []
    for name in names[len(rooms):]:
        try:
            rooms.append(task.scene.room_id(name))
        except ValueError:
            break
    if task.allowed_rooms:
        out = []
        for i in range(n_agents):
            zone = task.allowed_rooms.get(i, sorted(task.scene.rooms))
            out.append(rooms[i] if i < len(rooms) and rooms[i] in zone else sorted(zone)[0])
        return out
    all_rooms = sorted(task.scene.rooms)
    while len(rooms) < n_agents:
        rooms.append(all_rooms[(seed + len(rooms)) % len(all_rooms)])
    return rooms[:n_agents]


def make_world(task: Task, n_agents: int, seed: int, seen: str = "formula") -> Household:
    links = [(h.from_agent, h.to_agent, h.door_id) for h in task.handover_chain]
    return Household(task.scene, n_agents, init_rooms(task, n_agents, seed), task.goal,
                     structure=task.structure, allowed_rooms=task.allowed_rooms, seed=seed, handover_links=links,
                     seen=seen)


def _cls(world: Household, nid: int | None) -> str | None:
    node = world.node(nid) if isinstance(nid, int) else None
    return None if node is None else node.class_name


def run_episode(task: Task, team: Team, cfg: EpisodeConfig, episode_id: str | None = None) -> dict[str, Any]:
    """Run one episode; return ``{"episode": {...}, "steps": [...]}`` records."""
    check_config(task, cfg)
    budget = cfg.resolved_budget(task)
    steps_per_agent = budget // cfg.n_agents
    eid = episode_id or f"{task.task_id}-n{cfg.n_agents}-s{cfg.seed}"
    world = make_world(task, cfg.n_agents, cfg.seed, cfg.seen)
    team.reset(world, task, cfg.seed)
    done, total = world.completion()
    progress = [done / total]
    steps: list[dict[str, Any]] = []
    for t in range(steps_per_agent):
        if world.success():
            break
        turns = team.act(world)
        results = world.step({a: turn.action for a, turn in turns.items()})
        for r in results:
            turn = turns.get(r.agent, Turn(r.action))
            steps.append({
                "episode_id": eid, "step": t, "agent": r.agent, "action": r.action.name,
                "obj_class": _cls(world, r.action.obj), "target_class": _cls(world, r.action.target),
                "args": json.dumps(r.action.to_dict(), sort_keys=True), "status": r.status,
                "feedback": r.feedback, "conflict": r.conflict, "spatial_error": r.spatial_error,
                "handover": r.handover, "completed": len(r.completed), "message": turn.message,
                "tokens_prompt": turn.tokens_prompt, "tokens_completion": turn.tokens_completion,
                "latency_s": turn.latency_s, "note": turn.note,
            })
        done, total = world.completion()
        progress.append(done / total)
    handovers = [s for s in steps if s["handover"] is not None]
    episode = {
        "episode_id": eid, "task_id": task.task_id, "task_name": task.name, "structure": task.structure,
        "n_subgoals": total, "goal": {p.key: p.count for p in task.goal},
        "goal_classes": sorted({p.obj_class for p in task.goal}), "n_agents": cfg.n_agents, "budget": budget, "steps_per_agent": steps_per_agent,
        "team_steps": len(progress) - 1, "success": world.success(), "completed": done, "cr": done / total,
        "progress": progress, "credits": {str(k): v for k, v in world.credits().items()},
        "actions": len(steps), "conflict_actions": sum(s["conflict"] for s in steps),
        "handover_attempts": len(handovers),
        "handover_failures": sum(s["handover"] == "failed" for s in handovers),
        "required_handover_count": task.required_handover_count,
        "spatial_errors": sum(s["spatial_error"] for s in steps),
        "invalid_actions": sum(s["status"] == "invalid" for s in steps),
        "truncated_replies": sum(s["action"] == INVALID_TRUNCATED for s in steps),
        "tokens": sum(s["tokens_prompt"] + s["tokens_completion"] for s in steps),
        "backend": team.backend, "prior": cfg.prior, "seed": cfg.seed, **cfg.labels,
    }
    return {"episode": episode, "steps": steps}
