"""Reading model replies: the tagged text of mecobench.txt Figs. 19-24 (``[THINKING]``,
``[MESSAGE]``, ``[ACTION]``, ``[MEMORY]`` ...) or one JSON object in the structured modes.

Each ``parse_*`` function is a parse hook for :func:`collablab.llm.structured.ask`: reply text
-> ``(value, None)`` or ``(None, why it cannot be used)``.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from ...llm.structured import find_json

_TAG = re.compile(r"\[\s*(THINKING|MESSAGES|MESSAGE|READY|LOCAL_CONTEXT|ACTION|MEMORY)\s*\]", re.I)


def sections(text: str | None) -> dict[str, list[str]]:
    """``[TAG] content`` blocks of a reply, per tag in order of appearance."""
    out: dict[str, list[str]] = {}
    if not text:
        return out
    parts = _TAG.split(text)
    for i in range(1, len(parts) - 1, 2):
        out.setdefault(parts[i].upper(), []).append(parts[i + 1].strip())
    return out


def action_json(value: Any) -> dict[str, Any] | None:
    """The action object inside a parsed value (``{"action": {...}}`` wrappers unwrapped)."""
    if not isinstance(value, Mapping):
        return None
    inner = value.get("action")
    if isinstance(inner, Mapping) and ("action" in inner or "name" in inner):
        return dict(inner)
    if "action" in value:
        return dict(value)
    return None


def read_action(text: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """The action JSON of an act reply (``[ACTION] {...}``), or ``(None, why)``."""
    if not text or not text.strip():
        return None, "empty reply"
    secs = sections(text)
    def has_action(v: Any) -> bool:
        return action_json(v) is not None

    for block in secs.get("ACTION", []):
        act = action_json(find_json(block, want=has_action))
        if act is not None:
            return act, None
    act = action_json(find_json(text, want=has_action))  # tolerate a missing or empty [ACTION] tag
    if act is not None:
        return act, None
    return None, ("no JSON action object in the [ACTION] block" if "ACTION" in secs
                  else "no [ACTION] block and no JSON action object in the reply")


def read_memory(text: str | None) -> tuple[dict[str, Any] | None, str | None]:
    blocks = sections(text).get("MEMORY", [])
    for block in reversed(blocks):
        mem = find_json(block)
        if isinstance(mem, dict):
            return mem, None
    return None, "no JSON object in a [MEMORY] block" if blocks else "no [MEMORY] block"


NO_MESSAGE = "<NO_MESSAGE>"


def read_message(text: str | None) -> tuple[str | None, str | None]:
    """The message of a communicate reply: None for silence; ``(None, why)`` if unreadable."""
    if text is None or not text.strip():
        return None, "empty reply"
    secs = sections(text)
    if "MESSAGE" in secs:
        body = secs["MESSAGE"][0]
    elif secs:
        return None, "no [MESSAGE] block"
    else:
        body = text  # "output the message text ONLY"
    body = body.strip().strip('"').strip()
    if not body or "NO_MESSAGE" in body.upper():
        return None, None
    return body, None


def ready_of(value: Any) -> bool | None:
    """True for <READY>, False for <CONTINUE>, None when the answer names neither or both."""
    text = str(value or "").upper()
    ready, cont = bool(re.search(r"\bREADY\b", text)), bool(re.search(r"\bCONTINUE\b", text))
    return None if ready == cont else ready


def read_ready(text: str | None) -> tuple[bool | None, str | None]:
    """The [READY] block's answer (Fig. 20), or None and why when it cannot be read (the discuss
    protocol decides how that counts)."""
    blocks = sections(text).get("READY", [])
    if not blocks:
        return None, "no [READY] block"
    ready = ready_of(blocks[0])
    return ready, None if ready is not None else "[READY] names neither or both of <READY> and <CONTINUE>"


def message_of(value: Any) -> str | None:
    text = str(value or "").strip().strip('"').strip()
    return None if not text or "NO_MESSAGE" in text.upper() else text


# -- reading replies: the tagged text of Figs. 19-24, or one JSON object (structured modes) -------------
def parse_message(text: str | None, mode: str = "none") -> tuple[dict[str, Any] | None, str | None]:
    """``{"message": str | None, "ready": bool | None, "local_context": str}`` of a communicate reply
    (``ready`` None: no readable READY answer)."""
    if text is None or not text.strip():
        return None, "empty reply"
    secs = sections(text)
    if "MESSAGE" in secs or "READY" in secs:
        msg, _ = read_message(text) if "MESSAGE" in secs else (None, None)
        ready, _ = read_ready(text)
        return {"message": msg, "ready": ready, "local_context": (secs.get("LOCAL_CONTEXT") or [""])[0]}, None
    obj = find_json(text, want=lambda v: "message" in v)
    if obj is not None:
        return {"message": message_of(obj.get("message")),
                "ready": ready_of(obj.get("ready")),
                "local_context": str(obj.get("local_context") or "")}, None
    if mode == "none" and not secs:  # "Otherwise, output the message text ONLY."
        msg, _ = read_message(text)
        return {"message": msg, "ready": None, "local_context": ""}, None
    return None, "no [MESSAGE] block" if mode == "none" else 'no JSON object with a "message" key'


def parse_assignments(text: str | None) -> tuple[list[Any] | None, str | None]:
    """The leader's JSON array ``[{"receiver", "type", "content"}, ...]`` (Fig. 22)."""
    if text is None or not text.strip():
        return None, "empty reply"
    blocks = sections(text).get("MESSAGES", [])
    where = blocks[0] if blocks else text
    items = find_json(where, list)
    if not (isinstance(items, list) and any(isinstance(i, dict) for i in items)):
        wrapped = find_json(where, dict)
        items = wrapped.get("messages") if isinstance(wrapped, dict) else None
    if not (isinstance(items, list) and any(isinstance(i, dict) and "receiver" in i for i in items)):
        return None, "no JSON array of assignments with receivers" + ("" if blocks else " (no [MESSAGES] block)")
    return items, None


def parse_act(text: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """``{"action": {...}, "memory": dict | None, "memory_error": str | None}`` of an act reply."""
    sem, why = read_action(text)
    if sem is None:
        return None, why
    mem, mem_err = read_memory(text)
    if mem is None:
        obj = find_json(text, want=lambda v: isinstance(v.get("memory"), dict))
        if obj is not None:
            mem, mem_err = obj["memory"], None
    return {"action": sem, "memory": mem, "memory_error": mem_err}, None


def parse_decoded(text: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """Fig. 25's decoder reply ``{"action": ..., "parameter_ids": [...]}``."""
    obj = find_json(text, want=lambda v: isinstance(v.get("parameter_ids"), list))
    if obj is None:
        return None, 'no JSON object with a "parameter_ids" list'
    return obj, None


def assignments_of(items: Any, n_agents: int) -> tuple[dict[int, str], list[str]]:
    """Leader JSON items -> {agent: instruction}; items naming no agent (or a repeat) are ignored."""
    out: dict[int, str] = {}
    ignored: list[str] = []
    if not isinstance(items, list):
        return out, ignored
    for it in items:
        if not isinstance(it, Mapping):
            ignored.append(str(it)[:80])
            continue
        m = re.search(r"(\d+)", str(it.get("receiver", "")))
        content = str(it.get("content") or "").strip()
        try:
            a = int(m.group(1)) if m else None
        except ValueError:  # past int()'s 4300-digit limit: no agent
            a = None
        if a is None or not 0 <= a < n_agents or a in out or not content:
            ignored.append(str(it.get("receiver"))[:40])
            continue
        out[a] = content
    return out, ignored
