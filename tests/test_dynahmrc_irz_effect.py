"""IRZ costs the team something, by mechanism (issue 26; dynahmrc.tex §4.3 IRZ, §4.5): on the
offline backend, with one profile everywhere, the same medium tasks run with and without their
restricted zones. A zone blocks a room or route the plan needs (tests/test_dynahmrc_tiers.py) and is
revealed only by Navigation Failed (4), so the team loses steps re-planning and some episodes run out
of the 30-step cap.

The comparison is paired: each task once without a zone and once with it. The test asks that more
episodes are lost than won (an exact sign test on the discordant pairs, one-sided p < 0.05) and
that mean TS does not fall. Measured on these 90 tasks (seeds 1000-1029 per team), SUCC without ->
with zones: DynaHMRC 0.556 -> 0.344, CoELA 0.344 -> 0.267, COHERENT 0.311 -> 0.178 (21/7/12 episodes
lost against 2/0/0 won); TS 23.5 -> 25.4, 26.3 -> 27.3, 26.7 -> 27.8.
"""

from __future__ import annotations

import json
from statistics import mean

import pytest
from scipy.stats import binomtest

from collablab.studies.dynahmrc.spec import run_spec
from collablab.studies.dynahmrc.tasks import generate_task

TEAMS = ("Ma-MoMa-Mo", "Ma-MoMa-UAV", "Ma-MoMa-Mo-UAV")
PER_TEAM = 30


@pytest.fixture(scope="module")
def task_file(tmp_path_factory) -> str:
    tasks = [generate_task("pack", "medium", team, 1000 + i, variation="IRZ") for team in TEAMS for i in range(PER_TEAM)]
    path = tmp_path_factory.mktemp("irz") / "tasks.json"
    path.write_text(json.dumps([t.to_dict() for t in tasks]))
    return str(path)


@pytest.mark.parametrize("method", ["dynahmrc", "coela", "coherent"])
def test_irz_lowers_success_on_the_same_medium_tasks(task_file, method):
    pairs = []
    for i in range(len(TEAMS) * PER_TEAM):
        base = {"task_source": "file", "task_file": task_file, "instance": i, "method": method, "T": 5}
        free = run_spec({**base, "variation": "none"})["episode"]
        zoned = run_spec({**base, "variation": "IRZ"})
        # the zone is the only difference: same task, same 30-step cap, and it was met in the episode
        assert free["max_steps"] == zoned["episode"]["max_steps"] == 30
        pairs.append((free, zoned))
    lost = sum(f["success"] and not z["episode"]["success"] for f, z in pairs)
    won = sum(z["episode"]["success"] and not f["success"] for f, z in pairs)
    assert lost > won, (method, lost, won)
    assert binomtest(lost, lost + won, 0.5, alternative="greater").pvalue < 0.05, (method, lost, won)
    assert mean(z["episode"]["ts"] for _, z in pairs) >= mean(f["ts"] for f, _ in pairs), method
    # the loss comes through the zone: a robot was refused a navigation with Navigation Failed (4)
    refused = sum(any(s["kind"] == "navigation_failed_4" for s in z["steps"]) for _, z in pairs)
    assert refused >= len(pairs) / 2, (method, refused)
