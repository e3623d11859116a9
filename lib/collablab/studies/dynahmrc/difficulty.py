"""DynaHMRC's task difficulty (dynahmrc.tex §4.1, Eq. ``equ:difficulty_metric``):
D = alpha L + beta N + gamma Y with alpha = 0.4, beta = 0.2, gamma = 0.4.

- location: each target's level ``l`` (0, 1, 2; read below); L = lambda max(l)/2 +
  (1 - lambda) sum(l)/(2J) with lambda = 0.8;
- quantity: N = (J - J_min)/(J_max - J_min) with J_min = 1, J_max = 5;
- collaboration: Y = y / Y_max with y the fewest robots beyond one manipulator the task needs and
  Y_max = 2.

Levels: easy D in [0, 0.3], medium (0.3, 0.6), hard [0.6, 1]; step caps 20 / 30 / 50.

**Our reading of the location levels (issue 26).** The paper: ``l = 0`` "placed on the tabletop
where the manipulation robot's base is located and lies within its operational range"; ``l = 1``
"also placed on the tabletop but lies outside the robot's operational range, necessitating at
least one instance of inter-robot collaboration"; ``l = 2`` "not on the tabletop, requiring
additional exploration steps and transportation efforts to move it onto the working surface". Read
with "tabletop" as the working table only, any target elsewhere is ``l = 2``, L >= 0.84, and since
only the tabletop manipulator places onto the receptacle it needs a collaborator (y >= 1): D >=
0.6 (the least at J = 1: 0.4 * 1 + 0.2 * 0 + 0.4 * 0.5), hard. Medium tasks would then hold nothing to find, against §4.1: "The
objects involved in the aforementioned tasks are randomly distributed within the environment. As
a result, ... robots must also explore the unknown environment to locate target objects." (Eq. 9's
other terms leave no room: with ``l = 2`` and J = 1, D < 0.6 needs y = 0.) We therefore read the
levels by what a target asks of the team beyond the exploration §4.1 gives every task:

- ``l = 0``: on the working table within the tabletop manipulator's reach (as the paper);
- ``l = 1``: in the open but out of that reach: on the working table beyond it (the paper's
  case), or on a ground surface, or in a container that is not shut, anywhere in the apartment,
  where a mobile robot must find it and bring it over: "at least one instance of inter-robot
  collaboration";
- ``l = 2``: hidden: inside a closed openable container (only the mobile manipulator opens) or on
  an elevated place (only the drone reaches): "additional exploration steps and transportation
  efforts".

The formula, its weights and the bins are the paper's. Easy keeps its meaning (every target at
``l = 0``); medium is the farthest target in the open (``l = 1``) with one collaborator, now mostly
away from the working table; hard is some hidden target (or J = 5 all in the open, D = 0.6).
``tasks.tier_summary`` shows D and the targets to find per tier.
"""

from __future__ import annotations

from typing import Sequence

__all__ = ["ALPHA", "BETA", "GAMMA", "J_MAX", "J_MIN", "LAMBDA", "LEVELS", "STEP_CAPS", "Y_MAX", "collaboration_factor",
           "difficulty", "level_of", "location_factor", "quantity_factor"]

ALPHA, BETA, GAMMA = 0.4, 0.2, 0.4
LAMBDA = 0.8
J_MIN, J_MAX = 1, 5
Y_MAX = 2
LEVELS = ("easy", "medium", "hard")
STEP_CAPS = {"easy": 20, "medium": 30, "hard": 50}


def location_factor(levels: Sequence[int], lam: float = LAMBDA) -> float:
    """L from the targets' location levels (each 0, 1 or 2; ``tasks.location_level`` reads them)."""
    if not levels:
        raise ValueError("location levels: a task has at least one target")
    if any(v not in (0, 1, 2) for v in levels):
        raise ValueError(f"location levels: each must be 0, 1 or 2, got {list(levels)}")
    return lam * max(levels) / 2 + (1 - lam) * sum(levels) / (2 * len(levels))


def quantity_factor(j: int) -> float:
    """N from the number of targets J (1..5)."""
    if not J_MIN <= j <= J_MAX:
        raise ValueError(f"J: the number of targets must be in {J_MIN}..{J_MAX}, got {j}")
    return (j - J_MIN) / (J_MAX - J_MIN)


def collaboration_factor(y: int) -> float:
    """Y from y, the fewest extra robots needed (0..2)."""
    if not 0 <= y <= Y_MAX:
        raise ValueError(f"y: the extra robots needed must be in 0..{Y_MAX}, got {y}")
    return y / Y_MAX


def difficulty(levels: Sequence[int], y: int, alpha: float = ALPHA, beta: float = BETA,
               gamma: float = GAMMA) -> float:
    """D for a task with these target location levels and collaboration need."""
    if min(alpha, beta, gamma) < 0 or abs(alpha + beta + gamma - 1) > 1e-9:
        raise ValueError(f"weights: alpha, beta, gamma must be >= 0 and sum to 1, got {alpha}, {beta}, {gamma}")
    return alpha * location_factor(levels) + beta * quantity_factor(len(levels)) + gamma * collaboration_factor(y)


def level_of(d: float) -> str:
    """easy [0, 0.3], medium (0.3, 0.6), hard [0.6, 1]."""
    if not 0 <= d <= 1 + 1e-12:
        raise ValueError(f"D: must be in [0, 1], got {d}")
    return "easy" if d <= 0.3 + 1e-12 else ("medium" if d < 0.6 - 1e-12 else "hard")
