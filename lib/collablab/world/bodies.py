"""Agents take space: where an agent stands and how many fit at one spot (mecobench.txt B.3).

MECoBench runs agents as Unity characters: they stand somewhere, block each other at a
crowded counter or doorway and can get stuck (Table 18). The symbolic household keeps the
part that matters for collaboration:

- an agent stands at a point on the floor plane: the centre of the room it walked into, the
  centre of the box of what it walked to, or half a metre into its side of a door;
- a piece of furniture (and everything on or in it) is one spot; at most
  ``furniture_capacity`` agents stand at it, at most ``door_capacity`` at a door; a walk to a
  full spot fails with feedback naming who is there (the walker stays where it was);
- a handover needs giver and receiver at the same door and within ``handover_distance_m``
  (2 m, appendix B.3).

Rooms have no capacity (their entry point is not a bottleneck in the paper's scenes).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BodyRule:
    """How much room agents take (defaults documented in the module docstring)."""

    furniture_capacity: int = 2
    door_capacity: int = 2
    handover_distance_m: float = 2.0
    door_standoff_m: float = 0.5

    def __post_init__(self) -> None:
        for name in ("furniture_capacity", "door_capacity"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"body rule: {name} must be an integer >= 1, got {v!r}")
        for name in ("handover_distance_m", "door_standoff_m"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
                raise ValueError(f"body rule: {name} must be a positive number, got {v!r}")


DEFAULT_BODY = BodyRule()
