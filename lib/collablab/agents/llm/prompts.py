"""MECoBench's prompts (mecobench.txt appendix C): the templates in ``prompts/*.txt``, the
``$NAME$`` filler, the JSON schemas of the structured modes, and the text views of
messages, progress and observations that fill the input blocks (Figs. 23 and 27)."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..base import Message
from .grounding import appearance

PROMPTS = Path(__file__).with_name("prompts")
_PLACEHOLDER = re.compile(r"\$([A-Z_]+)\$")

#: Fig. 26's "Valid Actions" bullets (Table 7 for the sequential ones).
ACTION_HELP = {
    "put_on": "put one object you are holding on a surface or into a container",
    "open": "open an enclosure",
    "close": "close an enclosure",
    "grab": "grab an object",
    "walk": "walk to something visible",
    "walk_to_room": "walk to another room (allowed rooms:$ALLOWED_ROOMS$)",
    "wait": "wait (do nothing this step)",
    "walk_to_door": "walk to a door of the department topology (to hand over or receive there)",
    "handover": "hand an object you are holding to another agent standing at the same door",
    "receive": "receive an object from another agent at the same door",
}


@functools.lru_cache(maxsize=None)
def template(name: str) -> str:
    """A prompt template from ``agents/llm/prompts/<name>.txt``."""
    return (PROMPTS / f"{name}.txt").read_text(encoding="utf-8").rstrip("\n")


def fill(text: str, **values: Any) -> str:
    """Replace ``$NAME$`` placeholders (single pass: inserted text is never re-scanned)."""
    def sub(m: re.Match) -> str:
        key = m.group(1)
        if key not in values:
            raise KeyError(f"prompt placeholder ${key}$ has no value")
        return str(values[key])

    return _PLACEHOLDER.sub(sub, text)



_STR = {"type": "string"}
_OBJ_PARAM = {"anyOf": [{"type": "object", "properties": {"name": _STR, "description": _STR}}, {"type": "null"}]}
SCHEMAS: dict[str, dict[str, Any]] = {
    "message": {"type": "object", "properties": {"thinking": _STR, "message": _STR},
                "required": ["thinking", "message"]},
    "discuss_first": {"type": "object", "properties": {"thinking": _STR, "ready": {"enum": ["<READY>", "<CONTINUE>"]},
                                                       "message": _STR, "local_context": _STR},
                      "required": ["thinking", "ready", "message", "local_context"]},
    "discuss_followup": {"type": "object", "properties": {"thinking": _STR, "ready": {"enum": ["<READY>", "<CONTINUE>"]},
                                                          "message": _STR},
                         "required": ["thinking", "ready", "message"]},
    "leader": {"type": "object", "properties": {
        "thinking": _STR,
        "messages": {"type": "array", "items": {"type": "object", "properties": {
            "receiver": _STR, "type": _STR, "content": _STR}, "required": ["receiver", "content"]}}},
        "required": ["thinking", "messages"]},
    "act": {"type": "object", "properties": {
        "thinking": _STR,
        "action": {"type": "object", "properties": {
            "action": _STR, "parameter_1": _OBJ_PARAM, "parameter_2": _OBJ_PARAM,
            "room": {"anyOf": [_STR, {"type": "null"}]}}, "required": ["action"]},
        "memory_thinking": _STR, "memory": {"type": "object"}},
        "required": ["action", "memory"]},
    "decode": {"type": "object", "properties": {"action": _STR, "parameter_ids": {"type": "array"}},
               "required": ["action", "parameter_ids"]},
}
JSON_KEYS = {
    "message": '"thinking" (brief reasoning), "message" ("<NO_MESSAGE>" or the message text)',
    "discuss_first": '"thinking", "ready" ("<READY>" or "<CONTINUE>"), "message" ("<NO_MESSAGE>" or the '
                     'message text), "local_context" (a short private note for your later text-only rounds)',
    "discuss_followup": '"thinking", "ready" ("<READY>" or "<CONTINUE>"), "message" ("<NO_MESSAGE>" or the message text)',
    "leader": '"thinking", "messages" (the JSON array of assignments: '
              '[{"receiver": "<exact agent name>", "type": "assignment", "content": "..."}])',
    "act": '"thinking" (brief reasoning for the next action), "action" (the JSON action object), '
           '"memory_thinking" (brief reasoning for the memory update), "memory" (the updated memory JSON)',
}



def msg_line(m: Message) -> str:
    to = "" if m.receivers is None else " to " + ", ".join(f"Agent {r}" for r in m.receivers)
    return f"Agent {m.sender} ({m.kind}{to}): {m.text}"


def progress_text(progress: Sequence[Mapping[str, Any]]) -> str:
    if not progress:
        return "None"
    lines = [f"{p['class']} {p['relation']} {p['target']}: {p['satisfied']}/{p['required']} done" for p in progress]
    done = sum(p["satisfied"] for p in progress)
    total = sum(p["required"] for p in progress)
    return "\n".join(lines + [f"Total: {done}/{total} subgoals satisfied."])


#: Fig. 26's action choices in its order (``walk / walk_to_room / grab / put_in / put_on / open``),
#: then Table 7's sequential actions: the paper pipeline's ``$ACTION_CHOICES$``.
PAPER_CHOICES = ("walk", "walk_to_room", "grab", "put_in", "put_on", "open", "walk_to_door", "handover", "receive")

_ID_FORMS = re.compile(r"\s*\((\d+)\)")


def without_ids(text: str) -> str:
    """``"you grabbed <juice> (376)"`` -> ``"you grabbed <juice>"``: the paper pipeline's feedback
    and executed actions name objects, never their simulator ids (B.4: only the decoder sees ids)."""
    return _ID_FORMS.sub("", text)


def observation_text(obs: Mapping[str, Any], holding: bool = False, ids: bool = True) -> str:
    """Visible objects with ids, relations and states, the doors and agents here (text view).

    ``ids=False`` (the paper pipeline's text stand-in for the camera images): each object by
    class and catalogue appearance, its support by class, no simulator id; doors keep their
    number (``door 6``), the name Table 7's ``walk_to_door`` takes and Fig. 27's department
    topology lists."""
    visible = obs.get("visible", [])
    cls_of = {v["id"]: v["class_name"] for v in visible}
    lines = []

    def ref(oid: Any) -> str:
        cls = cls_of.get(oid, "something")
        if not ids:
            return f"door {oid}" if cls == "door" else cls
        return f"{cls} ({oid})"

    for v in visible:
        props, states = set(v.get("properties", [])), set(v.get("states", []))
        bits = []
        if v.get("inside") is not None:
            bits.append(f"inside {ref(v['inside'])}")
        elif v.get("on") is not None:
            bits.append(f"on {ref(v['on'])}")
        if "GRABBABLE" not in props:
            kinds = [k for k, p in (("container", "CONTAINERS"), ("surface", "SURFACES")) if p in props]
            bits += kinds
        if "CAN_OPEN" in props and "GRABBABLE" not in props:
            bits.append("open" if "OPEN" in states else "closed")
        if v.get("held_by") is not None:
            bits.append(f"held by Agent {v['held_by']}")
        if ids:
            head = f"- {v['class_name']} ({v['id']})"
        elif v["class_name"] == "door":
            head = f"- door {v['id']}"
        else:
            look = appearance(v["class_name"])
            head = f"- {v['class_name']}" + (f" [{look}]" if look else "")
        lines.append(head + (": " + ", ".join(bits) if bits else ""))
    if not lines:
        lines.append("- nothing notable")
    where = f"You are at door {obs['at_door']} of the {obs.get('room')}." if obs.get("at_door") is not None else \
        f"You are in the {obs.get('room')}."
    doors = ", ".join(f"door {d['id']} to the {d['to']}" for d in obs.get("doors", []))
    others = "; ".join(f"Agent {o['agent']} (holding: {', '.join(o['holding']) or 'nothing'})"
                       for o in obs.get("agents_here", []))
    lines.append(where + (f" Doors here: {doors}." if doors else "") + (f" Agents here: {others}." if others else ""))
    if holding:
        lines.append(f"Holding: {holding_text(obs, ids)}.")
    return "\n".join(lines)


def holding_text(obs: Mapping[str, Any], ids: bool = True) -> str:
    """What the agent holds: ``juice (376), wine (378)``, or by class only (``ids=False``)."""
    held = obs.get("holding", [])
    return ", ".join(f"{h['class_name']} ({h['id']})" if ids else str(h["class_name"]) for h in held) or "nothing"
