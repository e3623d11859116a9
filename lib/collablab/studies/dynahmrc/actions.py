"""DynaHMRC's atomic actions as text and as data (dynahmrc.tex ``tab:atomic_action``).

Accepted spellings (the first is the one prompts show and logs use):

- ``navigate(table_3, stand_pose_0)`` or ``[navigate] to stand_pose_0 of table_3``;
- ``open(fridge_0)``, ``pick(book_0)``, ``place(book_0, tray_0)`` (``place book_0 on tray_0``);
- ``move(0.2, -0.1)`` (metres along x and y; ``1e-05`` too, as :func:`format_action` writes it);
- ``communicate("content", Bob)``: one name (unicast), names joined by ``,`` or ``&`` (multicast)
  or ``all`` (broadcast);
- ``wait()``.

A reply with no such call, or with the wrong arguments, is an invalid action (the caller records
it with the reason from :class:`ActionError`).
"""

from __future__ import annotations

import ast
import math
import re
import warnings
from dataclasses import dataclass, field

__all__ = ["Action", "ActionError", "format_action", "parse_action"]


class ActionError(ValueError):
    """A reply that is not one atomic action; the message says why."""


@dataclass(frozen=True)
class Action:
    """One atomic action: ``name`` and its arguments (unused ones empty)."""

    name: str
    target: str = ""  # navigate: place; open: container; pick/place: object
    pose: int = 0  # navigate: stand pose index
    where: str = ""  # place: platform
    dx: float = 0.0
    dy: float = 0.0
    content: str = ""
    to: tuple[str, ...] = field(default_factory=tuple)  # communicate: recipients ("all" = broadcast)

    def text(self) -> str:
        return format_action(self)


def format_action(a: Action) -> str:
    """The canonical text of an action (the form logs and prompts use)."""
    if a.name == "navigate":
        return f"navigate({a.target}, stand_pose_{a.pose})"
    if a.name in ("open", "pick"):
        return f"{a.name}({a.target})"
    if a.name == "place":
        return f"place({a.target}, {a.where})"
    if a.name == "move":
        return f"move({a.dx:g}, {a.dy:g})"
    if a.name == "communicate":
        return f"communicate({a.content!r}, {', '.join(a.to)})"
    return "wait()"


_NAME = r"[A-Za-z][\w\-]*"
_NUM = r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?"  # the exponent: format_action writes move(1e-05, 0)
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("navigate", re.compile(rf"navigate\s*\(\s*({_NAME})\s*,\s*(?:stand_pose_?|pose_?)?\s*(\d+)\s*\)", re.I)),
    ("navigate", re.compile(rf"\[navigate\]\s*to\s*(?:<)?stand_pose_?(\d+)(?:>)?\s*of\s*(?:<)?({_NAME})", re.I)),
    ("open", re.compile(rf"\[?open\]?\s*\(?\s*({_NAME})\s*\)?", re.I)),
    ("pick", re.compile(rf"\[?pick\]?\s*(?:up\s+)?\(?\s*({_NAME})\s*\)?", re.I)),
    ("place", re.compile(rf"\[?place\]?\s*\(?\s*({_NAME})\s*(?:,|\s+on\s*/?\s*into|\s+on|\s+into|\s+in)\s*({_NAME})\s*\)?",
                         re.I)),
    ("move", re.compile(rf"\[?move\]?\s*\(?\s*({_NUM})\s*(?:,|and)\s*({_NUM})\s*\)?", re.I)),
    ("communicate", re.compile(r"\[?communicate\]?\s*\(\s*(['\"])((?:\\.|(?!\1).)*?)\1\s*,\s*([^)]*)\)", re.I | re.S)),
    ("communicate", re.compile(r"\[communicate\]\s*(.*?)\s+to\s+([\w ,&]+)$", re.I | re.S)),
    ("wait", re.compile(r"\[?wait\]?\s*(?:\(\s*\))?", re.I)),
]


def _recipients(text: str) -> tuple[str, ...]:
    names = [n.strip().strip("'\"") for n in re.split(r"[,&]|\band\b", text) if n.strip().strip("'\"")]
    if not names:
        raise ActionError("communicate: no recipient (a name, names joined by ',' or 'all')")
    return ("all",) if any(n.lower() in ("all", "everyone", "team") for n in names) else tuple(names)


def _unescape(quote: str, content: str) -> str:
    """A quoted content as :func:`format_action` writes it (Python's ``repr``: ``\\n``, ``\\'``,
    ``\\xa0`` ...) back to its text; a model's own backslashes that are no such escape stay as
    written."""
    if "\\" not in content:
        return content
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an invalid escape such as "C:\\path": keep the text
        try:
            value = ast.literal_eval(quote + content + quote)
        except (ValueError, SyntaxError, SyntaxWarning, DeprecationWarning, MemoryError, RecursionError):
            return content
    return value if isinstance(value, str) else content


def parse_action(text: str) -> Action:
    """The first atomic action written in ``text`` (its last line wins over earlier mentions when a
    ``Contents:`` line is present); :class:`ActionError` when there is none."""
    s = text.strip()
    m = re.search(r"contents?\s*:\s*(.+)", s, re.I | re.S)
    if m:
        s = m.group(1).strip()
    s = s.strip("`* \n")
    for name, pat in _PATTERNS:
        hit = pat.match(s) if name != "wait" else pat.fullmatch(s.rstrip(". "))
        if not hit:
            continue
        g = hit.groups()
        if name == "navigate":
            place, pose = (g[0], g[1]) if pat.pattern.startswith("navigate") else (g[1], g[0])
            if len(pose) >= 4300:  # int()'s digit limit
                raise ActionError(f"navigate: stand pose {pose[:12]}... does not exist")
            return Action("navigate", target=place, pose=int(pose))
        if name in ("open", "pick"):
            return Action(name, target=g[0])
        if name == "place":
            return Action("place", target=g[0], where=g[1])
        if name == "move":
            dx, dy = float(g[0]), float(g[1])
            if not (math.isfinite(dx) and math.isfinite(dy)):  # 400 digits or 1e999: no offset
                raise ActionError(f"move: offsets must be finite numbers, got {g[0][:12]}, {g[1][:12]}")
            return Action("move", dx=dx, dy=dy)
        if name == "communicate":
            content, to = (_unescape(g[0], g[1]), g[2]) if len(g) == 3 else (g[0], g[1])
            if not content.strip():
                raise ActionError("communicate: empty content")
            return Action("communicate", content=content.strip(), to=_recipients(to))
        return Action("wait")
    raise ActionError(f"no atomic action in reply (expected one of navigate/open/pick/place/move/communicate/wait "
                      f"written like navigate(table_0, stand_pose_0)): {s[:80]!r}")
