"""Directional checks of MECoBench's mechanisms on seeded default runs (issue 9, "Done when").

Every condition runs the same medium heuristic profile on the same generated tasks; no code
branches on team size, prior or protocol to change how well an agent does, so any direction
below arises from the world (views, search, bodies, handovers) and the agents' information.
Directions the offline backend does not show are marked ``xfail(strict=True)`` with the
measured numbers: they fail loudly once the mechanism starts to show, and the notebooks say
plainly that the heuristic does not show them.
"""

from __future__ import annotations

import functools
import statistics

import pytest

from collablab.studies.mecobench import metrics, run_spec, task_ids

N_TASKS = 48
SIZES = (1, 2, 3, 4, 5)


@functools.lru_cache(maxsize=None)
def episodes(structure: str, n_agents: int, protocol: str = "broadcast", prior: str = "full",
             budget: int | None = None, profile: str = "medium") -> tuple[dict, ...]:
    ids = task_ids(structure, N_TASKS)
    return tuple(run_spec({"task_id": t, "n_agents": n_agents, "protocol": protocol, "prior": prior,
                           "budget": budget, "profile": profile, "seed": 0})["episode"] for t in ids)


def sr(*args, **kw) -> float:
    return statistics.mean(float(e["success"]) for e in episodes(*args, **kw))


def auc(*args, **kw) -> float:
    """Step-CR AUC over equivalent steps (§3.2), as the notebooks report it."""
    return metrics.auc(list(episodes(*args, **kw)))


def test_a_two_agents_beat_one_on_parallel_tasks_on_sr():
    assert sr("parallel", 2) > sr("parallel", 1), (sr("parallel", 1), sr("parallel", 2))


@pytest.mark.xfail(strict=True, reason="measured AUC 0.594 (1 agent) vs 0.527 (2 agents): a subgoal takes a "
                   "heuristic agent at least six actions, so a team's first deliveries come after 6n "
                   "equivalent steps (mean CR at 10 equivalent steps: 0.31 alone, 0.04 in pairs) and its "
                   "later lead (CR 0.92 vs 0.83 at 60) does not make up the early area; the heuristic "
                   "does not show the paper's AUC gain")
def test_a_two_agents_beat_one_on_parallel_tasks_on_auc():
    assert auc("parallel", 2) > auc("parallel", 1), (auc("parallel", 1), auc("parallel", 2))


def test_b_broadcast_sr_rises_then_falls_with_team_size():
    curve = [sr("parallel", n) for n in SIZES]
    peak = max(range(len(SIZES)), key=lambda i: curve[i])
    assert SIZES[peak] in (2, 3, 4) and curve[peak] > curve[0] and curve[peak] > curve[-1], curve


def test_c_location_priors_matter_to_a_lone_agent():
    full, none, noisy = (sr("parallel", 1, prior=p, budget=80) for p in ("full", "no_location", "noisy"))
    assert full - none >= 0.15, (full, none)
    assert noisy > none, (noisy, none)


def test_d_a_second_agent_gains_more_without_location_priors():
    def gain(prior: str) -> float:
        one, two = sr("parallel", 1, prior=prior, budget=80), sr("parallel", 2, prior=prior, budget=80)
        return (two - one) / one if one else float("inf")

    assert gain("no_location") > gain("full"), (gain("full"), gain("no_location"))


def test_e_isolated_is_below_broadcast_at_every_size_table9_measures():
    """Table 9 reports runs without communication for 1-4 agents (its 5-agent cell is empty)."""
    gaps = {n: sr("parallel", n) - sr("parallel", n, protocol="isolated") for n in (2, 3, 4)}
    assert all(g > 0 for g in gaps.values()), gaps


@pytest.mark.xfail(strict=True, reason="measured broadcast - isolated SR at 5 agents: 0.354 - 0.354 = 0.00 "
                   "(48 tasks; -0.02 on all 96): with 12 steps each, five isolated agents racing for the same "
                   "few objects are as likely to finish as five that split them and then wait on one "
                   "claimer; the paper has no 5-agent run without communication to compare with")
def test_e_isolated_is_below_broadcast_with_five_agents():
    gap = sr("parallel", 5) - sr("parallel", 5, protocol="isolated")
    assert gap > 0, gap


def test_e_losing_the_channel_costs_more_on_sequential_tasks():
    par = sr("parallel", 2) - sr("parallel", 2, protocol="isolated")
    seq = sr("sequential", 2) - sr("sequential", 2, protocol="isolated")
    assert seq > par > 0, (seq, par)


def test_f_leader_teams_rank_by_capability():
    ranks = [sr("parallel", 2, protocol="leader", profile=p) for p in ("strong", "strong,weak", "weak")]
    assert ranks[0] > ranks[1] > ranks[2], ranks


def test_g_a_lone_agent_runs_the_same_episode_with_or_without_a_channel():
    for structure in ("parallel",):
        b, i = episodes(structure, 1), episodes(structure, 1, protocol="isolated")
        drop = ("protocol", "episode_id")
        assert [{k: v for k, v in e.items() if k not in drop} for e in b] == \
               [{k: v for k, v in e.items() if k not in drop} for e in i]
