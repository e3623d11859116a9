"""What MECoBench's agents see, step by step (issue 29 item 6; mecobench.txt appendix B.1, Fig. 17).

"Each observation view is rendered at 256 x 256 pixels, resulting in a four-view concatenated
observation of 256 x 1024. The four views are arranged in the order: front, back, left, and right"
(B.1). :func:`glimpses` replays one episode of a team and keeps, at the steps asked for, each
agent's four views (:meth:`collablab.world.household.Household.views`, the cameras a multimodal
model receives), its observation as text (the ``paper`` pipeline's text stand-in: classes and
appearances, no simulator id) and what it did next. The notebooks show them beside each other; the
team is whatever the spec runs (the heuristic by default), so a glimpse is an illustration of the
world and its views, never a result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
from PIL import Image

from ...agents.llm.prompts import observation_text, without_ids
from .episode import make_world
from .spec import config_of, make_team, resolve, task_of

__all__ = ["Glimpse", "glimpses", "lone_walk", "step_title", "team_step"]


@dataclass(frozen=True)
class Glimpse:
    """One agent at one step: what it saw before acting, and the action it took."""

    step: int
    agent: int
    room: str
    image: Image.Image  # 1024 x 256: front | back | left | right
    text: str  # the observation as text, classes only (observation_text(ids=False))
    holding: tuple[str, ...]
    action: str  # e.g. "walk to <kitchentable>"
    feedback: str  # the world's answer to that action, ids left out
    backend: str  # the team's backend (the heuristic's views are an illustration, not a result)
    goal: tuple[str, ...] = ()  # the goal's object classes (the figure lists them first)


def _action_words(act: Any, names: Mapping[int, str]) -> str:
    what = " ".join(f"<{names.get(x, x)}>" for x in (act.obj, act.target) if x is not None)
    where = act.room or (str(act.door) if act.door is not None else "")
    return " ".join(p for p in (act.name.replace("_", " "), what, where) if p)


def glimpses(spec: Mapping[str, Any], steps: Iterable[int]) -> list[Glimpse]:
    """Replay ``spec`` (a MECoBench spec: task, team size, protocol, profile, seed) and return each
    agent's :class:`Glimpse` at every step in ``steps`` the episode reaches (steps count from 0;
    the episode stops early when the task is done). ValueError for a spec :func:`resolve` refuses."""
    want = sorted({int(s) for s in steps})
    if not want or want[0] < 0:
        raise ValueError(f"steps: give one or more steps >= 0, got {want!r}")
    s = resolve(dict(spec))
    task = task_of(s)
    cfg = config_of(s)
    world = make_world(task, cfg.n_agents, cfg.seed, cfg.seen)
    team = make_team(s)
    team.reset(world, task, cfg.seed)
    names = {nid: n["class_name"] for nid, n in task.scene.nodes.items()}
    goal = tuple(sorted({p.obj_class for p in task.goal}))
    out: list[Glimpse] = []
    for t in range(min(want[-1] + 1, cfg.resolved_budget(task) // cfg.n_agents)):
        if world.success():
            break
        seen = {a: (world.views(a).image.copy(), world.observe(a)) for a in range(cfg.n_agents)} if t in want else {}
        results = world.step({a: turn.action for a, turn in team.act(world).items()})
        for r in results:
            if r.agent in seen:
                image, obs = seen[r.agent]
                out.append(Glimpse(t, r.agent, obs["room"], image, observation_text(obs, ids=False),
                                   tuple(h["class_name"] for h in obs["holding"]), _action_words(r.action, names),
                                   without_ids(r.feedback), team.backend, goal))
    return out


def _first_task(episodes: pd.DataFrame, structure: str) -> str:
    rows = episodes[episodes["structure"] == structure] if "structure" in episodes else episodes.iloc[0:0]
    ids = sorted((rows if len(rows) else episodes)["task_id"].unique())
    if not ids:
        raise ValueError("episodes: the run has no episode to take a task from")
    return str(ids[0])


def _base(params: Mapping[str, Any]) -> dict[str, Any]:
    """The run's profile (its first agent's), prior and first seed, as a spec's keys."""
    seeds = params.get("seeds") or [0]
    return {"profile": str(params.get("profile") or "medium").split(",")[0], "prior": params.get("prior") or "full",
            "seed": int(seeds[0])}


def lone_walk(episodes: pd.DataFrame, params: Mapping[str, Any], steps: int = 4) -> list[Glimpse]:
    """A lone agent's first ``steps`` steps on the run's first parallel task (notebook 01): the
    heuristic agent of the run's profile and prior, whatever backend the run used."""
    spec = {"task_id": _first_task(episodes, "parallel"), "n_agents": 1, **_base(params)}
    return glimpses(spec, range(steps))


def team_step(episodes: pd.DataFrame, params: Mapping[str, Any], step: int = 3, n_agents: int = 2,
              protocol: str = "broadcast") -> list[Glimpse]:
    """Every agent of a heuristic team at one step of the run's first sequential task (its agents
    work in different rooms), else its first parallel one (notebook 02)."""
    structure = "sequential" if (episodes.get("structure") == "sequential").any() else "parallel"
    spec = {"task_id": _first_task(episodes, structure), "n_agents": n_agents, "protocol": protocol, **_base(params)}
    return glimpses(spec, [step])


def step_title(glimpses: list[Glimpse]) -> str:
    """A figure title read from a team's glimpses: how many agents, which step, which rooms."""
    if not glimpses:
        return "No step to show"
    rooms = list(dict.fromkeys(g.room for g in glimpses))
    where = (f"each in its own room ({', '.join(rooms)})" if len(rooms) == len(glimpses) > 1
             else f"in the {rooms[0]}" if len(rooms) == 1 else f"in {', '.join(rooms)}")
    steps = sorted({g.step for g in glimpses})
    return f"{len({g.agent for g in glimpses})} agent(s) at step {', '.join(map(str, steps))}, {where}"
