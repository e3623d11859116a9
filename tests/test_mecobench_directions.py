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

N_TASKS = 96  # every parallel (and every sequential) suite task: one seed, honest noise
SIZES = (1, 2, 3, 4, 5)


@functools.lru_cache(maxsize=None)
def episodes(structure: str, n_agents: int, protocol: str = "broadcast", prior: str = "full",
             budget: int | None = None, profile: str = "medium", seed: int = 0) -> tuple[dict, ...]:
    ids = task_ids(structure, N_TASKS)
    return tuple(run_spec({"task_id": t, "n_agents": n_agents, "protocol": protocol, "prior": prior,
                           "budget": budget, "profile": profile, "seed": seed})["episode"] for t in ids)


def sr(*args, **kw) -> float:
    return statistics.mean(float(e["success"]) for e in episodes(*args, **kw))


def auc(*args, **kw) -> float:
    """Step-CR AUC over equivalent steps (§3.2), as the notebooks report it."""
    return metrics.auc(list(episodes(*args, **kw)))


def test_a_two_agents_beat_one_on_parallel_tasks_on_sr():
    assert sr("parallel", 2) > sr("parallel", 1), (sr("parallel", 1), sr("parallel", 2))


@pytest.mark.xfail(strict=True, reason="measured AUC 0.578 (1 agent) vs 0.550 (2 agents): a subgoal takes a "
                   "heuristic agent at least six actions, so a pair's first deliveries come after about 12 "
                   "equivalent steps against 6 for a lone agent, and the pair's later lead (CR 0.91 vs 0.85) "
                   "does not make up the early area. Table 8 shows the same sign for strong models "
                   "(GPT-5.4 0.788 -> 0.731); the heuristic does not show the AUC gain of Table 9")
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


def test_e_isolated_is_below_broadcast_from_three_agents():
    gaps = {n: sr("parallel", n) - sr("parallel", n, protocol="isolated") for n in (3, 4, 5)}
    assert all(g > 0 for g in gaps.values()), gaps


def test_e_isolated_is_below_broadcast_with_two_agents():
    """Two seeds, 192 episodes per protocol: measured 0.651 (broadcast) vs 0.615 (isolated), seven
    episodes apart. One seed is too thin for this gap: after issue 28's receiver and re-sighting
    fixes, seed 0 alone ties at 0.656 (seed 1: 0.646 vs 0.604). Before them, seed 0 measured
    0.635 vs 0.625, one task of 96. The gap shows since
    suite v3 puts look-alikes beside targets: isolated agents find their targets themselves, at
    the furniture where a look-alike lies (17 wrong grabs against 7 with broadcast, where a
    sighting reported from afar is claimed before the look-alike is in view, and a teammate may
    say "that is a milk, not the juice"). Before (suite v2, no wrong grab at all) it was
    0.635 vs 0.656 and marked xfail: two isolated agents rarely fetch the same object when every
    location is given, while a false "task complete" heard over the channel idles the listener."""
    gap = sum(sr("parallel", 2, seed=s) - sr("parallel", 2, protocol="isolated", seed=s) for s in (0, 1))
    assert gap > 0, gap


def test_e_losing_the_channel_costs_more_on_sequential_tasks():
    par = sr("parallel", 2) - sr("parallel", 2, protocol="isolated")
    seq = sr("sequential", 2) - sr("sequential", 2, protocol="isolated")
    assert seq > 0 and seq > par, (seq, par)


def test_f_leader_teams_rank_by_capability():
    ranks = [sr("parallel", 2, protocol="leader", profile=p) for p in ("strong", "strong,weak", "weak")]
    assert ranks[0] > ranks[1] > ranks[2], ranks


def test_g_a_lone_agent_runs_the_same_episode_with_or_without_a_channel():
    for structure in ("parallel",):
        b, i = episodes(structure, 1), episodes(structure, 1, protocol="isolated")
        drop = ("protocol", "episode_id")
        assert [{k: v for k, v in e.items() if k not in drop} for e in b] == \
               [{k: v for k, v in e.items() if k not in drop} for e in i]


#: single-agent parallel SR of the reference models each profile is calibrated on (Table 8)
TABLE8_LONE_SR = {"strong": 0.854, "medium": 0.583, "weak": 0.354}


def test_profiles_are_calibrated_on_lone_agents_table8():
    """The one place profiles were fitted: a lone agent's parallel SR, within 0.05 of Table 8."""
    got = {p: sr("parallel", 1, profile=p) for p in TABLE8_LONE_SR}
    assert all(abs(got[p] - TABLE8_LONE_SR[p]) <= 0.05 for p in got), got
