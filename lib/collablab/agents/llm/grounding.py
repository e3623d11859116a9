"""Action decoding and grounding (mecobench.txt appendix B.4, Fig. 18; Table 7).

An LLM agent names objects semantically (``{"name": "juice", "description": "beige
bottle ..."}``); before execution the semantic action is decoded into an executable
:class:`~collablab.world.actions.Action` whose objects are simulator ids among the agent's
visible candidates (and held objects for ``put_*`` / ``handover``).

Rule-based, no model call (Fig. 25's LLM resolver is optional, see ``llm_policy``):

1. an id the model wrote (``"id": 376``, ``"juice (376)"``) if it is a candidate;
2. the class name: exact, then plural / synonym / an adjective-qualified class
   ("red apple"), then a partial name ("table" -> kitchentable, coffeetable), then a
   close spelling (:mod:`difflib`);
3. among the candidates of the best tier: those that suit the action (grabbable for grab,
   a closed container for open, a surface for put_on ...), then the description's token
   overlap with each candidate's catalogue appearance, location and state, then the lower id.

Failures never raise: :func:`ground` returns a :class:`Grounded` with ``error`` set and the
action :data:`INVALID_GROUNDING`, which the world records as an invalid action.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from ...world.actions import Action
from ...world.catalog import LOOKALIKES, TASK_OBJECTS

#: Action names for replies that could not be used; not in the action space, so the world
#: records them as invalid actions (B.3 "Invalid actions").
INVALID_REPLY = "invalid_reply"  # no reply / unparseable reply / no action in it
INVALID_GROUNDING = "invalid_grounding"  # an action whose objects could not be grounded
INVALID_TRUNCATED = "invalid_truncated"  # a reply cut at the token budget (never parsed)

OBJECT_ACTIONS = ("walk", "grab", "open", "close", "put_on", "put_in", "handover")

_ACTION_ALIASES = {
    "walk": "walk", "walkto": "walk", "goto": "walk", "moveto": "walk", "move": "walk", "approach": "walk",
    "navigate": "walk", "navigateto": "walk",
    "walktoroom": "walk_to_room", "gotoroom": "walk_to_room", "movetoroom": "walk_to_room",
    "grab": "grab", "pick": "grab", "pickup": "grab", "take": "grab", "get": "grab", "grasp": "grab",
    "open": "open", "close": "close", "shut": "close",
    "puton": "put_on", "placeon": "put_on", "put": "put_on", "place": "put_on", "putback": "put_on",
    "putin": "put_in", "putinside": "put_in", "placein": "put_in", "placeinside": "put_in", "putinto": "put_in",
    "walktodoor": "walk_to_door", "gotodoor": "walk_to_door",
    "handover": "handover", "give": "handover", "handto": "handover",
    "receive": "receive", "wait": "wait", "noop": "wait", "idle": "wait", "none": "wait",
}

#: Everyday words for catalogue classes (normalised: lower case, letters and digits only).
SYNONYMS: dict[str, tuple[str, ...]] = {
    "soap": ("barsoap",), "soapbar": ("barsoap",), "phone": ("cellphone",), "smartphone": ("cellphone",),
    "mobilephone": ("cellphone",), "mobile": ("cellphone",), "remote": ("remotecontrol",),
    "tvremote": ("remotecontrol",), "fork": ("cutleryfork",), "knife": ("cutleryknife",),
    "glass": ("waterglass", "wineglass"), "drinkingglass": ("waterglass",), "cup": ("mug", "waterglass"),
    "computermouse": ("mouse",), "game": ("boardgame",), "cake": ("poundcake", "cupcake"),
    "bottle": ("juice", "wine", "milk"), "bowl": ("dishbowl",), "dish": ("plate", "dishbowl"),
    "notebook": ("notes",), "bun": ("creamybuns",), "buns": ("creamybuns",), "carafe": ("coffeepot",),
    "refrigerator": ("fridge",), "cupboard": ("cabinet",), "closet": ("cabinet",), "shelf": ("bookshelf",),
    "bookcase": ("bookshelf",), "couch": ("sofa",), "oven": ("stove",), "table": ("kitchentable", "coffeetable"),
    "diningtable": ("kitchentable",), "counter": ("kitchencounter", "bathroomcounter"),
    "tv": ("tvstand",), "television": ("tvstand",), "bedsidetable": ("nightstand",), "tvtable": ("tvstand",),
    "washbasin": ("sink",), "toiletbowl": ("toilet",),
}

_STOP = frozenset("the a an and with of in on at to its it is this that for from near by some one".split())


def norm(text: Any) -> str:
    """``"Kitchen Table"`` -> ``"kitchentable"``."""
    return re.sub(r"[^a-z0-9]", "", str(text or "").lower())


def singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def tokens(text: Any) -> set[str]:
    """Content words (singular) plus joined neighbours, so "kitchen table" also gives "kitchentable"."""
    words = re.findall(r"[a-z]+", str(text or "").lower())
    out = {singular(w) for w in words if len(w) > 2 and w not in _STOP}
    out |= {singular(a + b) for a, b in zip(words, words[1:]) if a not in _STOP and b not in _STOP}
    return out


def normalize_action_name(name: Any) -> str:
    """``"[Grab]"``, ``"pick up"``, ``"put-in"`` -> canonical names; unknown names pass through."""
    n = norm(re.sub(r"[\[\]<>]", "", str(name or "")))
    return _ACTION_ALIASES.get(n, str(name or "").strip().lower().replace(" ", "_").replace("-", "_"))


# -- objects ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ObjRef:
    """What the model said about one object."""

    name: str = ""
    description: str = ""
    id: int | None = None

    @property
    def empty(self) -> bool:
        return not self.name and not self.description and self.id is None


_ID_IN_TEXT = re.compile(r"(?:\(|#|\bid[:= ]*|<)\s*(\d+)\s*(?:\)|>)?", re.I)


def _int(digits: str) -> int | None:
    """The number a run of decimal digits spells; None past ``int``'s 4300-digit limit (no id)."""
    try:
        return int(digits)
    except ValueError:
        return None


def obj_ref(value: Any) -> ObjRef:
    """Read a parameter the model wrote: a dict, a string such as ``"juice (376)"`` or an id."""
    if value is None:
        return ObjRef()
    if isinstance(value, bool):
        return ObjRef()
    if isinstance(value, int):
        return ObjRef(id=value)
    if isinstance(value, float) and value.is_integer():
        return ObjRef(id=int(value))
    if isinstance(value, str):
        s = value.strip()
        if s.isdecimal() and (n := _int(s)) is not None:  # isdigit() holds for "²", which int() refuses
            return ObjRef(id=n)
        m = _ID_IN_TEXT.search(s)
        name = re.sub(r"[\(<#].*$", "", s).strip() if m else s
        return ObjRef(name=name, id=_int(m.group(1)) if m else None)
    if isinstance(value, Mapping):
        name = value.get("name") or value.get("class_name") or value.get("object") or ""
        desc = value.get("description") or value.get("desc") or ""
        oid = value.get("id", value.get("object_id"))
        try:
            oid = int(oid) if oid is not None and not isinstance(oid, bool) else None
        except (TypeError, ValueError, OverflowError):  # OverflowError: an infinite float
            oid = None
        if oid is None:
            inner = obj_ref(str(name)) if name else ObjRef()
            oid, name = inner.id, inner.name or str(name)
        return ObjRef(str(name).strip(), str(desc).strip(), oid)
    if isinstance(value, (list, tuple)) and value:
        return obj_ref(value[0])
    return ObjRef(name=str(value))


@dataclass(frozen=True)
class Candidate:
    id: int
    cls: str
    props: frozenset[str] = frozenset()
    states: frozenset[str] = frozenset()
    held_by: int | None = None
    text: str = ""  # class, appearance, location, room and state words for description matching


def appearance(cls: str) -> str:
    o = TASK_OBJECTS.get(cls) or LOOKALIKES.get(cls)
    return o.appearance if o is not None else ""


def candidates(obs: Mapping[str, Any]) -> tuple[list[Candidate], list[Candidate]]:
    """(visible, held) candidates of an observation (``Household.observe``)."""
    visible = list(obs.get("visible", []))
    cls_of = {v["id"]: v["class_name"] for v in visible}
    room = obs.get("room", "")
    vis = []
    for v in visible:
        where = []
        if v.get("inside") is not None:
            where.append(f"inside {cls_of.get(v['inside'], '')}")
        if v.get("on") is not None:
            where.append(f"on {cls_of.get(v['on'], '')}")
        states = " ".join(s.lower() for s in v.get("states", []))
        text = f"{v['class_name']} {appearance(v['class_name'])} {' '.join(where)} {room} {states}"
        vis.append(Candidate(int(v["id"]), v["class_name"], frozenset(v.get("properties", [])),
                             frozenset(v.get("states", [])), v.get("held_by"), text))
    held = [Candidate(int(h["id"]), h["class_name"], frozenset({"GRABBABLE"}), frozenset(), obs.get("agent"),
                      f"{h['class_name']} {appearance(h['class_name'])} held hand")
            for h in obs.get("holding", [])]
    return vis, held


def _suits(c: Candidate, role: str) -> bool:
    p, s = c.props, c.states
    if role == "grab":
        return "GRABBABLE" in p and c.held_by is None
    if role == "open":
        return "CAN_OPEN" in p and "OPEN" not in s
    if role == "close":
        return "CAN_OPEN" in p and "OPEN" in s
    if role == "surface":
        return "SURFACES" in p
    if role == "container":
        return "CONTAINERS" in p
    return True


def _tiers(ref: ObjRef, cands: Sequence[Candidate]) -> Iterable[tuple[str, list[Candidate]]]:
    """Candidate groups from the most to the least certain match."""
    by_id = {c.id: c for c in cands}
    ids = [ref.id] if ref.id is not None else []
    ids += [i for m in _ID_IN_TEXT.finditer(ref.description) if (i := _int(m.group(1))) is not None]
    hit = [by_id[i] for i in ids if i in by_id]
    if hit:
        yield "id", hit[:1]
    n = norm(ref.name)
    if not n:
        return
    classes = sorted({c.cls for c in cands})
    yield "class", [c for c in cands if c.cls == n]
    sing = singular(n)
    syn = set(SYNONYMS.get(n, ())) | set(SYNONYMS.get(sing, ()))
    yield "synonym", [c for c in cands if c.cls == sing or c.cls in syn]
    inner = [k for k in classes if len(k) >= 3 and k in n]  # "redapple" contains "apple"
    if inner:
        longest = max(len(k) for k in inner)
        yield "qualified", [c for c in cands if c.cls in inner and len(c.cls) == longest]
    if len(sing) >= 3:
        yield "partial", [c for c in cands if sing in c.cls]
    close = set(difflib.get_close_matches(n, classes, n=3, cutoff=0.75))
    close |= set(difflib.get_close_matches(sing, classes, n=3, cutoff=0.75))
    yield "fuzzy", [c for c in cands if c.cls in close]


def ground_object(ref: ObjRef, cands: Sequence[Candidate], role: str = "any") -> tuple[Candidate | None, str]:
    """The best candidate for ``ref`` and how it matched (``"class"``, ``"fuzzy"`` ...), or
    ``(None, reason)``."""
    if ref.empty:
        return None, "no object given"
    if not cands:
        return None, "no candidate objects"
    want = tokens(ref.description) | tokens(ref.name)
    for how, group in _tiers(ref, cands):
        if not group:
            continue
        suited = [c for c in group if _suits(c, role)] or group
        best = max(suited, key=lambda c: (len(want & tokens(c.text)), -c.id))
        return best, how
    label = ref.name or ref.description or str(ref.id)
    return None, f"no visible object matches {label!r}"


# -- actions ----------------------------------------------------------------------------------
@dataclass
class Grounded:
    """A decoded action: executable (``error`` None) or recorded invalid."""

    action: Action
    error: str | None = None
    executed: str = ""  # Fig. 18 form: ``[grab] <juice> (376)``
    matches: dict[str, str] = field(default_factory=dict)  # parameter -> how it matched

    @property
    def ok(self) -> bool:
        return self.error is None


def invalid(why: str, name: str = INVALID_GROUNDING) -> Grounded:
    return Grounded(Action(name), why, f"[{name}]")


def _room_name(value: Any, rooms: Sequence[str], strict: bool = False) -> str | None:
    n = norm(obj_ref(value).name if isinstance(value, Mapping) else value)
    if not n:
        return None
    for r in rooms:
        if norm(r) == n or singular(n) == norm(r):
            return r
    if strict:
        return None
    for r in rooms:
        if norm(r) in n:  # "the kitchen area"
            return r
    return None


def _room_in_text(text: str, rooms: Sequence[str]) -> str | None:
    """The one room a phrase names (``"Walk to the bathroom"``), else None."""
    found = {r for r in rooms if re.search(rf"\b{re.escape(r)}\b", text.lower().replace("living room", "livingroom"))}
    return found.pop() if len(found) == 1 else None


def _agent_index(value: Any, n_agents: int) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < n_agents else None
    if isinstance(value, Mapping):
        value = value.get("name") or value.get("id")
    m = re.search(r"(\d+)", str(value or ""))
    n = _int(m.group(1)) if m else None
    return n if n is not None and 0 <= n < n_agents else None


def _fmt(name: str, c: Candidate | None = None, extra: str = "") -> str:
    if c is None:
        return f"[{name}]" + (f" <{extra}>" if extra else "")
    return f"[{name}] <{c.cls}> ({c.id})" + extra


def ground(sem: Mapping[str, Any], obs: Mapping[str, Any], *, valid_actions: Sequence[str],
           rooms: Sequence[str], doors: Sequence[tuple[int, str, str]] = (), n_agents: int = 1) -> Grounded:
    """Decode one semantic action (Fig. 26's JSON) against the agent's observation."""
    if not isinstance(sem, Mapping):
        return invalid("the action is not a JSON object", INVALID_REPLY)
    raw_name = sem.get("action", sem.get("name"))
    if not raw_name:
        return invalid("the action JSON has no 'action' field", INVALID_REPLY)
    name = normalize_action_name(raw_name)
    p1, p2 = sem.get("parameter_1"), sem.get("parameter_2")
    if p1 is None and "object" in sem:
        p1 = sem.get("object")
    if p2 is None and "target" in sem:
        p2 = sem.get("target")
    vis, held = candidates(obs)
    me = obs.get("agent")
    here = obs.get("room")

    # a room named as a walk target is a walk_to_room; a door a walk_to_door
    if name == "walk" and sem.get("room") and obj_ref(p1).empty:
        name = "walk_to_room"
    if name == "walk" and _room_name(p1, rooms, strict=True) and not ground_object(obj_ref(p1), vis)[0]:
        sem = {**sem, "room": _room_name(p1, rooms, strict=True)}
        name = "walk_to_room"
    if name == "walk" and "walk_to_door" in valid_actions and norm(obj_ref(p1).name).startswith("door"):
        name = "walk_to_door"
    if name not in valid_actions:
        return invalid(f"action {raw_name!r} is not one of: {', '.join(valid_actions)}", INVALID_REPLY)

    if name in ("wait", "receive"):
        return Grounded(Action(name), None, _fmt(name))
    if name == "walk_to_room":
        room = _room_name(sem.get("room") or p1, rooms) or _room_in_text(obj_ref(p1).description, rooms)
        if room is None:
            return invalid(f"walk_to_room: unknown room {sem.get('room') or obj_ref(p1).name!r}; "
                           f"rooms: {', '.join(rooms)}")
        return Grounded(Action(name, room=room), None, _fmt(name, extra=room))
    if name == "walk_to_door":
        door_ids = [d for d, _, _ in doors]
        ref = sem.get("door", p1)
        r = obj_ref(ref)
        said = [r.id] if r.id is not None else []
        said += [i for x in re.findall(r"\b(\d+)\b", f"{r.name} {r.description}") if (i := _int(x)) is not None]
        oid = next((d for d in said if not door_ids or d in door_ids), None)
        if oid is None:  # "the door to the kitchen"
            room = _room_name(sem.get("room"), rooms) if sem.get("room") else None
            room = room or _room_in_text(f"{r.name} {r.description}", rooms)
            oid = next((d for d, a, b in doors if {a, b} == {here, room}), None) if room else None
            if oid is None and room:
                oid = next((d for d, a, b in doors if room in (a, b)), None)
        if oid is None:
            return invalid(f"walk_to_door: no door id in {ref!r}; doors: {door_ids}")
        return Grounded(Action(name, door=int(oid)), None, _fmt(name, extra=f"door {oid}"))

    if name in ("walk", "grab", "open", "close"):
        role = {"walk": "any"}.get(name, name)
        c, how = ground_object(obj_ref(p1), vis, role)
        if c is None:
            return invalid(f"{name}: {how}")
        return Grounded(Action(name, obj=c.id), None, _fmt(name, c), {"parameter_1": how})

    if name in ("put_on", "put_in", "handover"):
        if not held:
            return invalid(f"{name}: you are not holding anything")
        r1 = obj_ref(p1)
        if r1.empty and len(held) == 1:
            c1, how1 = held[0], "only_held"
        else:
            c1, how1 = ground_object(r1, held)
        if c1 is None:
            return invalid(f"{name}: {how1.replace('visible', 'held')}")
        if name == "handover":
            who = _agent_index(sem.get("recipient", p2), n_agents)
            if who is None or who == me:
                return invalid(f"handover: recipient {sem.get('recipient', p2)!r} is not another agent's name")
            return Grounded(Action(name, obj=c1.id, recipient=who), None, _fmt(name, c1, f" -> Agent {who}"),
                            {"parameter_1": how1})
        role = "surface" if name == "put_on" else "container"
        c2, how2 = ground_object(obj_ref(p2), [c for c in vis if c.id != c1.id], role)
        if c2 is None:
            return invalid(f"{name}: target {how2}")
        return Grounded(Action(name, obj=c1.id, target=c2.id), None,
                        f"[{name}] <{c1.cls}> ({c1.id}) <{c2.cls}> ({c2.id})",
                        {"parameter_1": how1, "parameter_2": how2})
    return invalid(f"action {name!r} cannot be grounded", INVALID_REPLY)  # pragma: no cover - exhaustive
