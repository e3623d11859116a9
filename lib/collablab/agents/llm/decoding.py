"""The paper pipeline's action decoding (mecobench.txt B.3 Table 7, B.4, Figs. 18 and 25).

* The action space is Table 7's, exactly: "Any action name not listed in Table 7 is considered
  invalid" (B.3). No alias ("pick up" is no ``grab``), no ``close``, no ``wait``. A name is read
  with surrounding whitespace stripped and case folded ("Grab" is ``grab``); nothing else is
  forgiven (decision: the paper is silent on case).
* "Actions that do not require object grounding, such as receive, walk_to_room/door, and
  handover, are resolved by rule-based mappings" (B.4): :data:`RULE_ACTIONS` go through
  :func:`~collablab.agents.llm.grounding.ground`.
* "For object-centric actions, including walk, grab, open, put_on, and put_in, semantic object
  descriptions are grounded to concrete simulator object identifiers": by the model decoder only
  (Fig. 25's prompt), which "uses visible object candidates, their bounding boxes, and metadata,
  together with both the original and bbox-annotated views". :func:`decoder_input` is its input
  JSON; :func:`read_decoded` turns its reply into an executable action.
* An unusable decoder reply (no ``parameter_ids`` list, ids that are not candidates, a held
  object missing for ``put_*``) is a recorded ``invalid_grounding``: Fig. 25 tells the decoder
  "If unsure, choose the closest matching candidate rather than returning null", so a reply that
  still names none is its failure, not ours to repair (no rule fallback, no re-ask). Ids written
  as decimal strings (Fig. 18 lists candidates as ``{"id": "376"}``) are read as ids.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...world.actions import Action
from . import grounding as G

#: Table 7, parallel tasks.
TABLE7_PARALLEL = ("walk", "walk_to_room", "grab", "open", "put_on", "put_in")
#: Table 7, sequential tasks: the parallel actions plus the cross-room handover actions.
TABLE7_SEQUENTIAL = TABLE7_PARALLEL + ("walk_to_door", "handover", "receive")
#: B.4: resolved by rule-based mappings.
RULE_ACTIONS = ("walk_to_room", "walk_to_door", "handover", "receive")
#: B.4: object-centric, grounded by the model decoder.
DECODED_ACTIONS = ("walk", "grab", "open", "put_on", "put_in")


def table7(structure: str) -> tuple[str, ...]:
    """Table 7's action space of a task structure (``parallel`` | ``sequential``)."""
    if structure not in ("parallel", "sequential"):
        raise ValueError(f"structure: {structure!r} is not allowed; allowed: parallel, sequential")
    return TABLE7_SEQUENTIAL if structure == "sequential" else TABLE7_PARALLEL


def action_name(raw: Any, allowed: Sequence[str]) -> str | None:
    """The Table 7 name ``raw`` is (whitespace stripped, case folded), else None (invalid)."""
    name = str(raw).strip().lower() if isinstance(raw, str) else None
    return name if name in allowed else None


def _metadata(v: Mapping[str, Any], cls_of: Mapping[int, str]) -> dict[str, Any]:
    out: dict[str, Any] = {"id": int(v["id"]), "class_name": v["class_name"]}
    look = G.appearance(v["class_name"])
    if look:
        out["description"] = look
    for rel in ("on", "inside"):
        if v.get(rel) is not None:
            out[rel] = {"id": v[rel], "class_name": cls_of.get(v[rel], "")}
    if v.get("states"):
        out["states"] = sorted(v["states"])
    if v.get("bbox") is not None:  # the cameras' boxes, once observations carry them (B.1)
        out["bbox"] = v["bbox"]
    return out


def decoder_input(name: str, sem: Mapping[str, Any], obs: Mapping[str, Any]) -> dict[str, Any]:
    """Fig. 25's ``$RESOLVE_INPUT$``: the semantic action, the visible candidates and the held
    objects with their metadata (class, appearance, support, states; boxes when observed)."""
    visible = list(obs.get("visible", []))
    cls_of = {v["id"]: v["class_name"] for v in visible}
    return {"action": name, "parameter_1": sem.get("parameter_1"), "parameter_2": sem.get("parameter_2"),
            "room": sem.get("room"), "candidates": [_metadata(v, cls_of) for v in visible],
            "holding_objects": [_metadata(h, cls_of) for h in obs.get("holding", [])]}


def _ids(value: Any) -> list[int]:
    out = []
    for i in value if isinstance(value, list) else []:
        if isinstance(i, int) and not isinstance(i, bool):
            out.append(i)
        elif isinstance(i, str) and i.strip().isdecimal() and len(i.strip()) < 20:
            out.append(int(i.strip()))
        else:
            out.append(-1)  # keeps positions: parameter_ids[0] is the held object for put_*
    return out


def read_decoded(name: str, value: Mapping[str, Any] | None, why: str | None,
                 obs: Mapping[str, Any]) -> G.Grounded:
    """The executable action the decoder's reply names, or a recorded ``invalid_grounding``."""
    if value is None:
        return G.invalid(f"{name}: decoder reply unusable: {why}")
    vis, held = G.candidates(obs)
    seen = {c.id: c for c in vis}
    hand = {c.id: c for c in held}
    ids = _ids(value.get("parameter_ids"))
    if name in ("put_on", "put_in"):
        if len(ids) < 2 or ids[0] not in hand or ids[1] not in seen or ids[1] == ids[0]:
            return G.invalid(f"{name}: the decoder named no held object and visible target")
        c1, c2 = hand[ids[0]], seen[ids[1]]
        return G.Grounded(Action(name, obj=c1.id, target=c2.id), None,
                          f"[{name}] <{c1.cls}> ({c1.id}) <{c2.cls}> ({c2.id})",
                          {"parameter_1": "decoder", "parameter_2": "decoder"})
    if not ids or ids[0] not in seen:
        return G.invalid(f"{name}: the decoder named no visible candidate")
    c = seen[ids[0]]
    return G.Grounded(Action(name, obj=c.id), None, f"[{name}] <{c.cls}> ({c.id})", {"parameter_1": "decoder"})
