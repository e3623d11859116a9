"""Wrong grabs offline: the suite puts look-alikes beside targets and a confused heuristic agent grabs one.

MECoBench's object misidentification (mecobench.txt Table 21: "Agent 3 executes [grab] <dishbowl>
(misidentifying dishbowl as wineglass)") needs a look-alike in view where the agent picks its target;
suite v2 placed them anywhere, and a confused agent forgot its mistake before it reached the object,
so no heuristic run had a single wrong grab (issue: Table 20 and notebook 04's correction section
had no data offline).
"""

from __future__ import annotations

import pandas as pd

from collablab.analysis.failures import grab_events
from collablab.studies.mecobench import run_spec, task_ids, tasks_of
from collablab.world.catalog import CONFUSABLE

N = 12  # the first parallel suite tasks: a few seconds


def wrong_grabs(profile: str, n_agents: int) -> int:
    eps, steps = [], []
    for t in task_ids("parallel", 96)[:N]:
        out = run_spec({"task_id": t, "n_agents": n_agents, "profile": profile, "seed": 0})
        eps.append(out["episode"])
        steps.extend(out["steps"])
    g = grab_events(pd.DataFrame(eps), pd.DataFrame(steps))
    return int(g["wrong"].fillna(False).astype(bool).sum())


def test_the_suite_puts_a_look_alike_beside_a_target():
    tasks = tasks_of("suite", 0)
    beside = total = 0
    for t in task_ids("parallel", 96)[:N]:
        rec = tasks[t].record
        where: dict[str, set[int]] = {}
        for e in rec["init_graph"]["edges"]:
            if e["relation_type"] in ("ON", "INSIDE") and e["to_id"] not in tasks[t].scene.rooms:
                cls = next(n["class_name"] for n in rec["init_graph"]["nodes"] if n["id"] == e["from_id"])
                where.setdefault(cls, set()).add(e["to_id"])
        for key in rec["task_goal"]["0"]:
            cls = key.split("_")[1]
            if cls in CONFUSABLE:
                total += 1
                beside += bool(where[cls] & where.get(CONFUSABLE[cls], set()))
    assert total and beside >= 0.8 * total, (beside, total)


def test_a_weak_agent_grabs_look_alikes_alone_and_in_a_team():
    assert wrong_grabs("weak", 1) >= 1
    assert wrong_grabs("weak", 2) >= 1
