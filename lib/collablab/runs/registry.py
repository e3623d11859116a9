"""Studies by name: the entry points of group ``collablab.studies`` (DESIGN.md, Registries).

Each entry point names a study's episode function, ``name = "package.module:function"``
(``pyproject.toml`` lists collablab's own; a separate package can register more). The run grid
finds a study's function here when its caller names the study and gives no ``fn``; this
floor never imports a study itself.
"""

from __future__ import annotations

from importlib.metadata import entry_points

__all__ = ["GROUP", "studies", "study_fn"]

GROUP = "collablab.studies"


def studies() -> dict[str, str]:
    """``{study name: "module:function"}`` of every registered study."""
    return {ep.name: ep.value for ep in entry_points(group=GROUP)}


def study_fn(name: str) -> str:
    """The episode function of study ``name``; ValueError naming the registered studies."""
    known = studies()
    if name not in known:
        hint = ", ".join(sorted(known)) or "none (is collablab installed? pip install -e .)"
        raise ValueError(f"study: {name!r} is not a registered study; give fn='module:function' or one of: {hint}")
    return known[name]
