"""Glimpses: the notebooks' look at what agents see (issue 29 item 6; mecobench.txt B.1).

A glimpse replays the spec's episode: its actions are the episode's own, its image the world's
four-view camera image of that step, its text the id-free observation."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from collablab.studies import mecobench as S
from collablab.studies.mecobench.episode import EpisodeConfig, make_world

SPEC = {"task_id": "cl001-s", "n_agents": 2, "protocol": "broadcast", "profile": "medium", "seed": 0}


def test_a_glimpse_replays_the_episode_and_shows_its_views():
    g = S.glimpses(SPEC, range(5))
    rec = S.run_spec(SPEC)
    assert [(x.step, x.agent) for x in g] == [(t, a) for t in range(5) for a in range(2)]
    steps = {(s["step"], s["agent"]): s for s in rec["steps"]}
    for x in g:
        st = steps[(x.step, x.agent)]
        assert x.action.replace(" ", "_").startswith(st["action"]), (x.action, st["action"])
        assert st["obj_class"] is None or f"<{st['obj_class']}>" in x.action
        assert x.image.size == (1024, 256) and x.backend == rec["episode"]["backend"]
        assert not re.search(r"\(\d+\)", x.text + x.feedback), x.text  # no simulator id
    # step 0's image is the camera image of the world as it starts
    task = S.task_of(S.resolve(SPEC))
    world = make_world(task, 2, 0)
    assert np.array_equal(np.asarray(g[0].image), np.asarray(world.views(0).image))
    assert g[0].goal == tuple(sorted({p.obj_class for p in task.goal}))


def test_the_notebook_glimpses_pick_the_runs_tasks_and_draw():
    episodes = pd.DataFrame({"task_id": ["cl001-s", "cl000-p", "cl002-p"],
                             "structure": ["sequential", "parallel", "parallel"]})
    params = {"profile": "weak,strong", "prior": "full", "seeds": [3]}
    walk = S.lone_walk(episodes, params, steps=3)
    assert [(x.step, x.agent) for x in walk] == [(0, 0), (1, 0), (2, 0)]
    team = S.team_step(episodes, params, step=2)
    assert [(x.step, x.agent) for x in team] == [(2, 0), (2, 1)]
    fig = S.plots.glimpse_figure(team, title="one step")
    assert len(fig.axes) == 4 and "heuristic" in fig.get_suptitle()


def test_bad_steps_are_refused():
    with pytest.raises(ValueError, match="steps"):
        S.glimpses(SPEC, [])


def test_the_seen_rule_is_a_spec_key_named_in_records_only_when_changed():
    """``seen: rendered`` decides visibility by the camera's pixels (issue 29 item 3): its records
    say so, the default's do not; a bad value is refused naming the key."""
    base = {"task_id": "cl000-p", "n_agents": 1, "budget": 6}
    formula, rendered = S.run_spec(base), S.run_spec({**base, "seen": "rendered"})
    assert "seen" not in formula["episode"] and rendered["episode"]["seen"] == "rendered"
    assert "seen=rendered" in rendered["episode"]["episode_id"]
    with pytest.raises(ValueError, match="seen: 'eyes' is not allowed; allowed: formula, rendered"):
        S.resolve({**base, "seen": "eyes"})


def test_the_step_title_says_where_the_agents_are():
    episodes = pd.DataFrame({"task_id": ["cl001-s"], "structure": ["sequential"]})
    team = S.team_step(episodes, {"profile": "medium", "seeds": [0]}, step=3)
    rooms = [g.room for g in team]
    title = S.step_title(team)
    assert title.startswith("2 agent(s) at step 3, ") and all(r in title for r in rooms)
    assert ("each in its own room" in title) == (len(set(rooms)) == 2)
