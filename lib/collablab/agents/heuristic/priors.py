"""Read a MECoBench goal text into what an agent may know (mecobench.txt Fig. 14, §3.1).

``Find and put 2 puddings on coffeetable. Possible locations: One pudding is on the plate,
the plate is on the kitchentable and inside the kitchen. / ... Appearance: ...;coffeetable is
in livingroom.`` -> goal items (class, count, relation, target class), the target's room and
the possible locations (furniture class and room) per class. Noisy priors parse the same
way: the agent cannot tell the false locations apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ROOMS = ("bathroom", "bedroom", "kitchen", "livingroom")
_FIND = re.compile(r"Find and put (\d+) ([a-z_]+) (on|inside|in) (?:the )?([a-z_]+)", re.I)
_TARGET_ROOM = re.compile(r"([a-z_]+) is in (?:the )?([a-z_]+)\.?", re.I)
_LOC = re.compile(r"One ([a-z_]+) is (on|inside) the ([a-z_]+)", re.I)


@dataclass(frozen=True)
class GoalItem:
    cls: str
    count: int
    relation: str  # "on" | "inside"
    target: str


@dataclass(frozen=True)
class PriorLocation:
    cls: str
    relation: str
    furniture: str
    room: str | None


@dataclass
class GoalKnowledge:
    items: list[GoalItem] = field(default_factory=list)
    target_room: dict[str, str] = field(default_factory=dict)  # target class -> room
    locations: list[PriorLocation] = field(default_factory=list)
    has_appearance: bool = False

    def classes(self) -> list[str]:
        return [i.cls for i in self.items]


def singular(word: str, count: int) -> str:
    w = word.lower()
    if count == 1:
        return w
    # "waterglasses" -> waterglass, "boxes" -> box, but "mouses" -> mouse (a single s is the stem's)
    if w.endswith("es") and w[:-2].endswith(("ss", "sh", "ch", "x", "zz")):
        return w[:-2]
    return w[:-1] if w.endswith("s") else w


def parse_goal_text(text: str) -> GoalKnowledge:
    """Parse any of MECoBench's goal texts (raw, with location, appearance, noise)."""
    g = GoalKnowledge(has_appearance="Appearance:" in text)
    for clause in text.split(";"):
        m = _FIND.search(clause)
        if m:
            n = int(m.group(1))
            rel = "inside" if m.group(3).lower() in ("inside", "in") else "on"
            cls = singular(m.group(2), n)
            g.items.append(GoalItem(cls, n, rel, m.group(4).lower()))
            locs = clause.split("Possible locations:", 1)
            if len(locs) == 2:
                for sent in locs[1].split("Appearance:")[0].split("/"):
                    lm = _LOC.search(sent)
                    if lm:
                        room = next((r for r in ROOMS if r in sent.lower()), None)
                        g.locations.append(PriorLocation(cls, lm.group(2).lower(), lm.group(3).lower(), room))
            continue
        t = _TARGET_ROOM.search(clause.strip())
        if t and t.group(2).lower() in ROOMS:
            g.target_room[t.group(1).lower()] = t.group(2).lower()
    return g
