"""What :mod:`collablab.testing` needs of MECoBench: a case for every policy x protocol x
structure this study offers, a team wrapper that makes agent 0's first action illegal, and
which step records are recorded invalid actions."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from ...agents import POLICIES
from ...agents.base import Turn
from ...protocols import PROTOCOLS, Team
from ...world.actions import Action
from ...world.household import Household
from .spec import STUDY_TEAMS

#: One parallel and one sequential task of the generated suite; small budgets keep checks fast.
CASE_TASKS = {"parallel": "cl003-p", "sequential": "cl003-s"}
ILLEGAL = Action("grab", obj=10**9)  # no scene has such an object id


def conformance_cases(base_url: str) -> dict[str, dict[str, Any]]:
    """Named specs: every policy and study team x every protocol x both structures."""
    cases: dict[str, dict[str, Any]] = {}
    for structure, task in CASE_TASKS.items():
        for policy in POLICIES:
            extra = {"model": "conformance", "base_url": base_url, "provider": "compat", "llm_cache_mode": "off",
                     "llm_max_attempts": 1} if policy == "llm" else {}
            for proto in PROTOCOLS:
                cases[f"{policy}/{proto}/{structure}"] = {"task_id": task, "policy": policy, "protocol": proto,
                                                          "n_agents": 2, "budget": 8, "seed": 3, **extra}
        for team in STUDY_TEAMS:
            cases[f"{team}/{structure}"] = {"task_id": task, "policy": team, "n_agents": 2, "budget": 8}
    return cases


class _Sabotaged:
    """A team whose agent 0 tries an illegal action in the first step."""

    def __init__(self, team: Team) -> None:
        self.team = team
        self.backend = team.backend
        self.steps = 0

    def reset(self, world: Household, task: Any, seed: int) -> None:
        self.steps = 0
        self.team.reset(world, task, seed)

    def act(self, world: Household) -> dict[int, Turn]:
        turns = self.team.act(world)
        if self.steps == 0:
            turns[0] = replace(turns.get(0, Turn(ILLEGAL)), action=ILLEGAL)
        self.steps += 1
        return turns


def sabotage(team: Team) -> Team:
    """``team`` with agent 0's first action replaced by a grab of an object that does not exist."""
    return _Sabotaged(team)


def is_invalid(step: dict[str, Any]) -> bool:
    """A recorded invalid action: the world rejected it, or the model's reply could not be used."""
    return step["status"] == "invalid"


#: One tagged reply every phase reads (act, broadcast, discussion, leader, shared memory): walk to
#: a room, say nothing, ready, no assignment. ``walk_to_room`` is in Table 7's space (the ``paper``
#: pipeline takes no ``wait``) and needs no object id, so no decoder call; its room is filled in.
USABLE = ('[THINKING] I go to another room.\n[READY] <READY>\n[MESSAGE] <NO_MESSAGE>\n[LOCAL_CONTEXT] none\n'
          '[MESSAGES] []\n[ACTION] {"action": "walk_to_room", "parameter_1": null, "parameter_2": null, '
          '"room": "$ROOM$"}\n[MEMORY] {}')
_ALLOWED = re.compile(r"allowed rooms:\s*([a-z_]+)")


def usable_reply(body: dict[str, Any]) -> str:
    """A reply every request of the conformance cases can use (:data:`USABLE`), walking to the
    first allowed room the prompt names (the kitchen when it names none). The walk may fail in the
    world (already there): a failed action, never an invalid one."""
    text = json.dumps(body.get("messages", []))
    m = _ALLOWED.search(text)
    return USABLE.replace("$ROOM$", m.group(1) if m else "kitchen")


def is_truncated(result: dict[str, Any]) -> bool:
    """The episode recorded replies cut at the token budget (``invalid_truncated`` acts)."""
    return result["episode"].get("truncated_replies", 0) > 0 and all(
        s["action"] == "invalid_truncated" for s in result["steps"] if s["status"] == "invalid")
