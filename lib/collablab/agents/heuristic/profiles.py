"""Capability profiles of the offline heuristic agent (how it errs, per decision)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    """How capable the heuristic agent is; probabilities are per decision. Every condition of a
    study runs the same profile; the values were chosen once (stronger profiles err less on every
    count, believing a teammate's "task complete" against the progress report included) and are
    not tuned per condition.

    Calibration, on one condition only: ``drift`` was set so that a lone agent on the 96 parallel
    suite tasks (full priors, 60 steps, seed 0) has about the single-agent parallel SR of three
    reference models in mecobench.txt Table 8: strong 0.844 (GPT-5.4 0.854), medium 0.552
    (Qwen3-VL-32B 0.583), weak 0.312 (Qwen3-VL-8B 0.354), measured on suite v3, whose look-alikes lie
    beside their targets (a wrong grab costs steps; on v2, without them, 0.854, 0.583 and 0.333). The values are the ones that match
    those lone-agent numbers; what teams, protocols and priors then do follows from them.
    ``tests/test_mecobench_directions.py`` checks the calibration within 0.05."""

    name: str
    p_wrong_grab: float = 0.0  # target a visible look-alike instead of the real object
    p_notice_mistake: float = 1.0  # per step, notice that a held object is the wrong one
    p_false_done: float = 0.0  # per step (once half done), believe the task is complete
    p_believe_done: float = 0.0  # believe a teammate's "task is complete"
    p_forget_claim: float = 0.0  # ignore teammates' claims when choosing a target
    p_explore_random: float = 0.0  # take a random room instead of the plan
    p_zone_slip: float = 0.0  # a random room may lie outside its zone (a spatial error)
    p_silent: float = 0.0  # stay silent instead of sending a useful message
    report_limit: int = 4  # sightings per message
    delegates: bool = True  # asks teammates to grab things it saw near them
    drift: float = 0.0  # long-horizon lapses: see :func:`lapse_chance`


def lapse_chance(profile: "Profile", decisions: int) -> float:
    """Chance that the agent's next decision comes with a lapse of memory.

    LLM agents reason over their whole action history (mecobench.txt §2.3: "to support
    long-horizon execution over dozens of steps"), and the longer it is the more of the early
    observations they lose and the more often they repeat themselves. We model that as a chance
    that grows with the agent's own number of decisions so far, ``drift * decisions / 60``
    capped at one half; a lapse repeats the previous action and forgets the oldest third of what
    the agent saw (objects and furniture it looked at). It depends only on
    the agent's own history, never on team size, prior or protocol; it is why, at one total
    step budget, members of a team (each with a shorter history) forget less than a lone agent.
    """
    return min(0.5, profile.drift * decisions / 60)


PROFILES: dict[str, Profile] = {
    "oracle_like": Profile("oracle_like", p_notice_mistake=1.0),
    "strong": Profile("strong", p_wrong_grab=0.03, p_notice_mistake=0.6, p_false_done=0.002,
                      p_believe_done=0.1, p_forget_claim=0.05, p_explore_random=0.02, p_silent=0.05, drift=0.3),
    "medium": Profile("medium", p_wrong_grab=0.12, p_notice_mistake=0.35, p_false_done=0.006,
                      p_believe_done=0.3, p_forget_claim=0.2, p_explore_random=0.06, p_zone_slip=0.25, p_silent=0.15,
                      report_limit=3, drift=0.6),
    "weak": Profile("weak", p_wrong_grab=0.3, p_notice_mistake=0.15, p_false_done=0.015,
                    p_believe_done=0.8, p_forget_claim=0.45, p_explore_random=0.15, p_zone_slip=0.5, p_silent=0.35,
                    report_limit=2, delegates=False, drift=0.7),
}


def get_profile(name: str) -> Profile:
    if name not in PROFILES:
        raise ValueError(f"profile: {name!r} is not allowed; allowed: {', '.join(PROFILES)}")
    return PROFILES[name]
