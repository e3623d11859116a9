"""MECoBench's action space (mecobench.txt appendix B.3, Table 7) as plain data."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping

#: Actions of parallel tasks (Table 7) plus ``close`` (Fig. 4) and ``wait``.
PARALLEL_ACTIONS = ("walk", "walk_to_room", "grab", "open", "close", "put_on", "put_in", "wait")
#: Sequential tasks add the cross-room handover actions.
SEQUENTIAL_ACTIONS = PARALLEL_ACTIONS + ("walk_to_door", "handover", "receive")
#: Actions that conflict when several agents aim them at the same object in one step (B.3).
CONFLICT_ACTIONS = frozenset({"grab", "open"})

_FIELDS = ("obj", "target", "room", "door", "recipient")


@dataclass(frozen=True)
class Action:
    """One agent's action. ``obj``: object/container id; ``target``: put destination id;
    ``room``: room name or id (walk_to_room); ``door``: door id; ``recipient``: agent index."""

    name: str
    obj: int | None = None
    target: int | None = None
    room: str | int | None = None
    door: int | None = None
    recipient: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Action":
        if "name" not in d:
            raise ValueError("action: missing field 'name'")
        unknown = set(d) - {"name", *_FIELDS}
        if unknown:
            raise ValueError(f"action: unknown field(s) {sorted(unknown)}; allowed: name, {', '.join(_FIELDS)}")
        return cls(**dict(d))

    def describe(self) -> str:
        """Short text such as ``grab(371)`` or ``put_on(371 -> 318)``."""
        if self.name in ("put_on", "put_in"):
            return f"{self.name}({self.obj} -> {self.target})"
        if self.name == "handover":
            return f"handover({self.obj} -> agent {self.recipient})"
        arg = next((getattr(self, f) for f in ("obj", "room", "door") if getattr(self, f) is not None), "")
        return f"{self.name}({arg})"


WAIT = Action("wait")
