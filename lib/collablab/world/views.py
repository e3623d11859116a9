"""What an agent's cameras can see: MECoBench's view rule as a function of size and distance.

MECoBench agents observe four 90-degree 256x256 views around them (mecobench.txt appendix B.1).
Its public evaluator keeps an object in the observation when its projected area is at least
400 px and it is within 5 m horizontally, or when its area is at least 60,000 px at any
distance. With a 90-degree field of view the focal length is half the image width (128 px), so
an object of extent ``s`` metres at distance ``d`` spans about ``128 * s / d`` pixels and its
area is about that squared.

Decisions the paper leaves open (each is a parameter of :class:`ViewRule` and tested):

- ``s`` is the largest side of the object's bounding box (its visible extent from some side);
- ``d`` is the horizontal distance between the agent's standing point and the box centre,
  never less than ``min_distance_m`` (0.5 m: a body's reach; nothing is nearer the camera);
- the four views together cover 360 degrees, so direction does not matter; occlusion by other
  furniture is not modelled (being inside a closed container is, by the household).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping


def focal_length_px(image_px: float, fov_deg: float) -> float:
    """A pinhole camera's focal length in pixels: half the image over tan(half the field of view)."""
    return image_px / 2 / math.tan(math.radians(fov_deg) / 2)


@dataclass(frozen=True)
class ViewRule:
    """The visibility thresholds (defaults: MECoBench's evaluator)."""

    image_px: int = 256
    fov_deg: float = 90.0
    min_area_px: float = 400.0
    max_distance_m: float = 5.0
    always_area_px: float = 60_000.0
    min_distance_m: float = 0.5

    def __post_init__(self) -> None:
        for name in ("image_px", "fov_deg", "min_area_px", "max_distance_m", "always_area_px", "min_distance_m"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
                raise ValueError(f"view rule: {name} must be a positive number, got {v!r}")
        if not self.fov_deg < 180:
            raise ValueError(f"view rule: fov_deg must be below 180, got {self.fov_deg!r}")

    @property
    def focal_px(self) -> float:
        """Focal length in pixels (:func:`focal_length_px`; 128 by default)."""
        return focal_length_px(self.image_px, self.fov_deg)

    def area_px(self, extent_m: float, distance_m: float) -> float:
        """Projected area in pixels of an object of ``extent_m`` at ``distance_m``."""
        side = self.focal_px * extent_m / max(distance_m, self.min_distance_m)
        return side * side

    def sees(self, extent_m: float, distance_m: float) -> bool:
        """The evaluator's rule: >= 400 px within 5 m, or >= 60,000 px at any distance."""
        return self.sees_area(self.area_px(extent_m, distance_m), distance_m)

    def sees_area(self, area_px: float, distance_m: float) -> bool:
        """The same thresholds on an area measured elsewhere (the rendered rule: visible pixels
        summed over the four views after occlusion, :mod:`.eyes`)."""
        return area_px >= self.always_area_px or (area_px >= self.min_area_px and distance_m <= self.max_distance_m)

    def max_distance_for(self, extent_m: float) -> float:
        """The farthest distance at which an object of ``extent_m`` is still seen."""
        near = self.focal_px * extent_m / math.sqrt(self.min_area_px)
        far = self.focal_px * extent_m / math.sqrt(self.always_area_px)
        return max(min(near, self.max_distance_m), far)


DEFAULT_VIEW = ViewRule()


def box_of(node: Mapping[str, Any]) -> tuple[tuple[float, float, float], tuple[float, float, float]] | None:
    """``(centre, size)`` of a graph node's ``bounding_box``, or None when it has none."""
    bb = node.get("bounding_box")
    if not isinstance(bb, Mapping):
        return None
    try:
        c = tuple(float(x) for x in bb["center"])
        s = tuple(abs(float(x)) for x in bb["size"])
    except (KeyError, TypeError, ValueError):
        return None
    if len(c) != 3 or len(s) != 3:
        return None
    return c, s  # type: ignore[return-value]


def horizontal_distance(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Distance on the floor plane between two (x, z) points."""
    return math.hypot(a[0] - b[0], a[1] - b[1])
