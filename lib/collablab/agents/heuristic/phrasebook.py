"""Natural-language messages of the offline heuristic agents: templates and a parser.

Agents talk in plain English (the behaviour tagger reads the same text, mecobench.txt
Table 17). Object ids are written in parentheses, e.g. ``cupcake (374)``, which is also how
MECoBench grounds objects (Fig. 18); the parser extracts facts from any message that uses
these phrasings, whoever wrote it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


# -- templates --------------------------------------------------------------------------
def plan(cls: str, oid: int, target: str) -> str:
    return f"I will grab the {cls} ({oid}) and bring it to the {target}."


def check(furniture: str, room: str, cls: str) -> str:
    return f"I'll check the {furniture} in the {room} for the {cls}."


def holding(items: list[tuple[str, int]]) -> str:
    return "I am holding " + " and ".join(f"the {cls} ({oid})" for cls, oid in items) + "."


def location(room: str, door: int | None = None) -> str:
    return f"I am at door {door}." if door is not None else f"I am in the {room}."


def sighting(cls: str, oid: int, rel: str, furniture: str, room: str, furniture_id: int | None = None) -> str:
    prep = "inside" if rel == "inside" else "on"
    where = f"{furniture} ({furniture_id})" if furniture_id is not None else furniture
    return f"I see {cls} ({oid}) {prep} the {where} in the {room}."


def delegate(agent: int, cls: str, oid: int, room: str) -> str:
    return f"Agent {agent}, please grab the {cls} ({oid}) in the {room}."


def assign_room(agent: int, room: str) -> str:
    return f"Agent {agent}, you handle the {room}."


def ask_ready(agent: int, door: int) -> str:
    return f"Agent {agent}, are you at door {door} and ready to receive?"


def self_correction(wrong: str, cls: str) -> str:
    return f"I accidentally grabbed a {wrong} instead of the {cls}. I will put it back."


def peer_correction(agent: int, wrong: str, cls: str) -> str:
    return f"Agent {agent}, that is a {wrong}, not the {cls}."


def negative(cls: str, room: str, furniture: str | None = None) -> str:
    if furniture:
        return f"I could not find the {cls} on the {furniture} in the {room}."
    return f"There is no {cls} in the {room}."


STUCK = "I am stuck: my last actions failed."
DONE = "All items have been placed. The task is complete."


def at_door_with(door: int, cls: str, oid: int) -> str:
    return f"I am at door {door} with the {cls} ({oid}). Please come to door {door} to receive it."


def ready_to_receive(door: int) -> str:
    return f"I am at door {door}, ready to receive."


def assignment(agent: int, instruction: str) -> str:
    return f"Agent {agent}: {instruction}"


# -- parsing ------------------------------------------------------------------------------
_OBJ = r"(?:the |a |an )?([a-z_]+) \((\d+)\)"
_RE = {
    "claim": re.compile(r"\bI(?: will|'ll| am going to) (?:grab|get|take|fetch) " + _OBJ, re.I),
    "sighting": re.compile(r"\bI see " + _OBJ + r" (on|inside) the ([a-z_]+)(?: \((\d+)\))? in the ([a-z_]+)", re.I),
    "check": re.compile(r"\bI(?:'ll| will) check the ([a-z_]+) in the ([a-z_]+)", re.I),
    "room": re.compile(r"\bI am in the ([a-z_]+)", re.I),
    "holding": re.compile(r"\bI am holding ([^.]*)\.", re.I),
    "door": re.compile(r"\bI am at door (\d+)", re.I),
    "door_with": re.compile(r"\bI am at door (\d+) with " + _OBJ, re.I),
    "ready": re.compile(r"\bat door (\d+),? (?:and )?ready to receive", re.I),
    "done": re.compile(r"\btask is (?:complete|done|finished)\b", re.I),
    "negative": re.compile(r"\b(?:could not find|there is no|cannot find) (?:the |a |any )?([a-z_]+)"
                           r"(?: on the ([a-z_]+))? in the ([a-z_]+)", re.I),
    "assignment": re.compile(r"\bAgent (\d+): (.+?)(?=(?:\s*Agent \d+:)|$)", re.I | re.S),
    "delegate": re.compile(r"\bAgent (\d+), please (?:grab|get|take|fetch) " + _OBJ, re.I),
    "wrong": re.compile(r"\bgrabbed an? ([a-z_]+) instead of the ([a-z_]+)", re.I),
    "peer": re.compile(r"\bAgent (\d+), that is an? ([a-z_]+), not the ([a-z_]+)", re.I),
    "handle": re.compile(r"\bAgent (\d+), you handle the ([a-z_]+)", re.I),
}


@dataclass
class Facts:
    """What a message tells its readers."""

    claims: list[int] = field(default_factory=list)
    #: cls, id, rel, furniture class, furniture id (None when not said), room
    sightings: list[tuple[str, int, str, str, int | None, str]] = field(default_factory=list)
    checking: list[tuple[str, str]] = field(default_factory=list)  # (furniture class, room) being searched
    room: str | None = None
    holding: dict[int, str] = field(default_factory=dict)  # id -> class the sender says it carries
    door: int | None = None
    offering: tuple[int, str, int] | None = None  # door, cls, id
    ready_door: int | None = None
    done: bool = False
    negatives: list[tuple[str, str | None, str]] = field(default_factory=list)  # cls, furniture, room
    assignments: dict[int, str] = field(default_factory=dict)
    delegations: dict[int, int] = field(default_factory=dict)  # agent -> object id
    corrected: set[int] = field(default_factory=set)  # agents told they hold a look-alike
    room_assignments: dict[int, str] = field(default_factory=dict)  # agent -> room to search


def parse(text: str | None) -> Facts:
    """Extract the facts a teammate can use from a message."""
    f = Facts()
    if not text:
        return f
    f.claims = [int(m.group(2)) for m in _RE["claim"].finditer(text)]
    f.sightings = [(m.group(1).lower(), int(m.group(2)), m.group(3).lower(), m.group(4).lower(),
                    int(m.group(5)) if m.group(5) else None, m.group(6).lower())
                   for m in _RE["sighting"].finditer(text)]
    f.checking = [(m.group(1).lower(), m.group(2).lower()) for m in _RE["check"].finditer(text)]
    if m := _RE["room"].search(text):
        f.room = m.group(1).lower()
    if m := _RE["holding"].search(text):
        f.holding = {int(i): c.lower() for c, i in re.findall(r"([a-z_]+) \((\d+)\)", m.group(1))}
    if m := _RE["door"].search(text):
        f.door = int(m.group(1))
    if m := _RE["door_with"].search(text):
        f.offering = (int(m.group(1)), m.group(2).lower(), int(m.group(3)))
    if m := _RE["ready"].search(text):
        f.ready_door = int(m.group(1))
    f.done = bool(_RE["done"].search(text))
    f.negatives = [(m.group(1).lower(), (m.group(2) or None) and m.group(2).lower(), m.group(3).lower())
                   for m in _RE["negative"].finditer(text)]
    f.assignments = {int(m.group(1)): m.group(2).strip() for m in _RE["assignment"].finditer(text)}
    f.delegations = {int(m.group(1)): int(m.group(3)) for m in _RE["delegate"].finditer(text)}
    f.corrected = {int(m.group(1)) for m in _RE["peer"].finditer(text)}
    f.room_assignments = {int(m.group(1)): m.group(2).lower() for m in _RE["handle"].finditer(text)}
    return f


#: Instructions a leader can give, and how a worker reads them back.
_INSTR = {
    "fetch": re.compile(r"\b(?:grab|get|fetch|take) (?:the )?([a-z_]+) \((\d+)\)", re.I),
    "deliver": re.compile(r"\b(?:deliver|put|place) (?:what you hold|your objects|the [a-z_]+)", re.I),
    "give": re.compile(r"\bhand (?:over )?(?:the )?([a-z_]+) \((\d+)\) to agent (\d+) at door (\d+)", re.I),
    "receive": re.compile(r"\b(?:go to|wait at|walk to) door (\d+) (?:and|to) receive", re.I),
    "door": re.compile(r"\bgo to door (\d+)", re.I),
    "explore": re.compile(r"\b(?:explore|search|check) the ([a-z_]+)", re.I),
    "wait": re.compile(r"\bwait\b", re.I),
}


def parse_instruction(text: str | None) -> tuple[str, tuple] | None:
    """(kind, args) of a leader instruction, or None when it cannot be read."""
    if not text:
        return None
    if m := _INSTR["give"].search(text):
        return "give", (int(m.group(2)), int(m.group(3)), int(m.group(4)))
    if m := _INSTR["receive"].search(text):
        return "receive", (int(m.group(1)),)
    if m := _INSTR["door"].search(text):
        return "door", (int(m.group(1)),)
    if m := _INSTR["fetch"].search(text):
        return "fetch", (int(m.group(2)),)
    if _INSTR["deliver"].search(text):
        return "deliver", ()
    if m := _INSTR["explore"].search(text):
        return "explore", (m.group(1).lower(),)
    if _INSTR["wait"].search(text):
        return "wait", ()
    return None
