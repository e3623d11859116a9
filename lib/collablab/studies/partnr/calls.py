"""PARTNR's high-level tool calls as data (observe_share_predict.txt §A.1.1, §A.1.2, "Tool Call Grammar").

A call is written ``Name[arg, arg, ...]``: ``Navigate[counter_22]``, ``Wait[]``,
``Place[cup_1, on, table_2, None, None]``. :data:`TOOLS` lists the fourteen tools of the skill
library with their parameters; the robot's grammar omits the five state-changing tools
(``human_only``, §A.1.1/A.1.2), so :data:`ROBOT_TOOLS` is a strict subset of :data:`HUMAN_TOOLS`.

Conventions (the paper is silent on them; these are ours):

- ``Place`` and ``Rearrange`` take 3 or 5 arguments; a 3-argument call is padded with
  ``"None"`` for the spatial constraint and reference object, on parsing and on construction
  of a :class:`ToolCall`, so both spellings are the same value.
- Tool names match exactly (case-sensitive); arguments are stripped of whitespace and of
  surrounding quotes or backticks; an empty argument is malformed.
- :func:`find_call` reads only the text before the first stop word ``"Assigned!"`` (the
  planner stops generating there) and returns the *last* whole line that parses as a call of
  an allowed tool, so a tool named inside the ``Thought:`` line never wins over the action line.
- :func:`mask_id` masks an instance handle to its class (§3.3, "Tool Call Grammar"): first a
  simulator hash suffix ``_:<digits>`` (or ``:<digits>``) is removed, then one trailing
  ``_<digits>`` instance suffix. Case is preserved; words without a suffix (``on``,
  ``next_to``, ``None``, ``cup``) are unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "HUMAN_TOOLS",
    "ROBOT_TOOLS",
    "STOP_WORD",
    "TOOLS",
    "ToolCall",
    "ToolSpec",
    "find_call",
    "mask_id",
    "parse_call",
]

#: The planner's stop word: generation ends here (PARTNR's zero-shot ReAct prompt).
STOP_WORD = "Assigned!"


@dataclass(frozen=True)
class ToolSpec:
    """One tool of the skill library: its parameters, principal parameter and who may call it.

    ``optional`` counts trailing parameters that may be left out together (they default to
    ``"None"``): a call has all parameters or all but the optional ones.
    """

    name: str
    params: tuple[str, ...]
    principal: str | None
    human_only: bool
    optional: int = 0

    @property
    def arities(self) -> tuple[int, ...]:
        """The accepted argument counts, fewest first."""
        n = len(self.params)
        return (n - self.optional, n) if self.optional else (n,)


def _spec(name: str, *params: str, human_only: bool = False, optional: int = 0) -> ToolSpec:
    return ToolSpec(name, tuple(params), params[0] if params else None, human_only, optional)


_PLACEMENT = ("object", "relation", "furniture", "constraint", "reference")

TOOLS: dict[str, ToolSpec] = {s.name: s for s in (
    _spec("Navigate", "target"),
    _spec("Explore", "room"),
    _spec("Pick", "object"),
    _spec("Place", *_PLACEMENT, optional=2),
    _spec("Rearrange", *_PLACEMENT, optional=2),
    _spec("Open", "furniture"),
    _spec("Close", "furniture"),
    _spec("Wait"),
    _spec("Done"),
    _spec("Clean", "object", human_only=True),
    _spec("Fill", "object", human_only=True),
    _spec("Pour", "object", human_only=True),
    _spec("PowerOn", "object", human_only=True),
    _spec("PowerOff", "object", human_only=True),
)}
#: The robot's grammar: every tool except the object-state-changing ones (§A.1.2).
ROBOT_TOOLS: tuple[str, ...] = tuple(n for n, s in TOOLS.items() if not s.human_only)
#: The human's grammar: all tools.
HUMAN_TOOLS: tuple[str, ...] = tuple(TOOLS)

_HASH = re.compile(r"_?:\d+$")
_INSTANCE = re.compile(r"^(.+?)_\d+$")
_CALL = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*\[([^\[\]]*)\]$", re.DOTALL)
_QUOTES = "\"'`"


def mask_id(handle: str) -> str:
    """The class of an instance handle: ``cup_1`` -> ``cup``, ``cup_1_:0000`` -> ``cup``.

    Removes a hash suffix ``_:<digits>``, then one trailing ``_<digits>``; other text is kept.
    """
    h = _HASH.sub("", handle.strip())
    m = _INSTANCE.match(h)
    return m.group(1) if m else h


@dataclass(frozen=True)
class ToolCall:
    """One high-level action ``name[args]``; a 3-argument Place/Rearrange is padded to 5."""

    name: str
    args: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        args = tuple(str(a) for a in self.args)
        spec = TOOLS.get(self.name)
        if spec is not None and spec.optional and len(args) == len(spec.params) - spec.optional:
            args += ("None",) * spec.optional
        object.__setattr__(self, "args", args)

    def text(self) -> str:
        """The call as the planner writes it: ``Place[cup_1, on, table_2, None, None]``."""
        return f"{self.name}[{', '.join(self.args)}]"

    def masked(self) -> ToolCall:
        """The same call with every instance id masked to its class (:func:`mask_id`)."""
        return ToolCall(self.name, tuple(mask_id(a) for a in self.args))

    def __str__(self) -> str:
        return self.text()


def _allowed(tools: Sequence[str]) -> tuple[str, ...]:
    names = tuple(tools)
    unknown = [t for t in names if t not in TOOLS]
    if unknown:
        raise ValueError(f"unknown tool name(s) {unknown} in tools; known: {', '.join(TOOLS)}")
    return names


def _unquote(arg: str) -> str:
    """``arg`` without surrounding whitespace and quotes, however nested (``' "x" '`` -> ``x``), so
    that a parsed call's text parses to the same call."""
    while (inner := arg.strip().strip(_QUOTES).strip()) != arg:
        arg = inner
    return arg


def parse_call(text: str, tools: Sequence[str] = tuple(TOOLS)) -> ToolCall:
    """Parse one ``Name[a, b, ...]`` call of one of ``tools``.

    Raises ValueError naming the allowed tools (unknown or disallowed tool), the expected
    arity and parameters (wrong argument count) or the expected form (malformed text).
    """
    allowed = _allowed(tools)
    s = text.strip().strip(_QUOTES).strip()
    m = _CALL.match(s)
    if not m:
        raise ValueError(f"malformed tool call {text!r}: expected Name[arg, ...]")
    name, body = m.group(1), m.group(2)
    if name not in allowed:
        raise ValueError(f"unknown tool {name!r} in {text!r}; allowed tools: {', '.join(allowed)}")
    spec = TOOLS[name]
    args = tuple(_unquote(a) for a in body.split(",")) if body.strip() else ()
    if any(not a for a in args):
        raise ValueError(f"malformed tool call {text!r}: empty argument")
    if len(args) not in spec.arities:
        counts = " or ".join(str(k) for k in spec.arities)
        raise ValueError(f"{name} takes {counts} argument(s) ({', '.join(spec.params) or 'none'}), "
                         f"got {len(args)} in {text!r}")
    return ToolCall(name, args)


def find_call(reply: str, tools: Sequence[str]) -> ToolCall | None:
    """The action call of a ReAct reply, or None when no line is a call of one of ``tools``.

    Only text before the first :data:`STOP_WORD` counts; of it, the last line that parses
    wholly as a call (:func:`parse_call`) is the action.
    """
    allowed = _allowed(tools)
    head = reply.split(STOP_WORD, 1)[0]
    for line in reversed(head.splitlines()):
        if not line.strip():
            continue
        try:
            return parse_call(line, allowed)
        except ValueError:
            continue
    return None
