"""What the OAS channel shows of a co-located partner (observe_share_predict.txt §3.2, §A.5.1-A.5.2).

The paper's words: Decoupled Partial Observability updates each agent's world graph from its own
field of view, "while OAS adds the co-located partner's visible state and current percepts"; "OAS
exposes visible behavior, not internal state; when agents are in different rooms, the observation
is 'Acting in another room.'" (§3.2). Under partial observability "OAS also supplied otherwise
missing object information" (§A.5.2), and the union target "credited readable ongoing actions,
such as a partner already walking" (§A.5.1): what is readable is the kind of motion, which OAS
shows, not the call behind it.

What an observer in the same room is shown and what stays hidden (decided here):

+--------------------------------------------+-----------------------------------------------+
| shown                                      | hidden                                        |
+============================================+===============================================+
| the partner's room                         | the call's name and arguments                 |
|                                            | (``Navigate[cabinet_1]``)                     |
+--------------------------------------------+-----------------------------------------------+
| the furniture it is at or near (within     | where a walk is heading (Navigate's target,   |
| :data:`NEAR_M` of the box)                 | the room an Explore covers next)              |
+--------------------------------------------+-----------------------------------------------+
| the object it holds                        | the object a Pick reaches for, before it is   |
|                                            | picked; where a Place will put the held       |
|                                            | object, before it does                        |
+--------------------------------------------+-----------------------------------------------+
| its kind of motion (:data:`MOTIONS`: from  | its thought, plan and prediction              |
| the phase it is in and the tool's *kind*)  |                                               |
+--------------------------------------------+-----------------------------------------------+
| the objects it sees now (its current       | what it knows but does not see now: objects   |
| percepts: the world's view rule from where | it saw earlier, in other rooms, inside closed |
| it stands, same room, not inside closed    | furniture                                     |
| furniture, not held), each with the        |                                               |
| furniture it lies on or in                 |                                               |
+--------------------------------------------+-----------------------------------------------+

Effects are visible once they happen: a finished Open shows in the layout's open states (each
agent reads those of its own room, :meth:`.world.World.observe`), a finished Place shows the
object on its furniture among the percepts. Motions: a walk phase is ``walking`` (Navigate,
Explore, Rearrange alike); Explore's looks at each piece of furniture are ``looking around``;
every other pause (Navigate's last look, Open's, Wait, no skill running, Done) is ``standing``;
an act phase is named by what the hands visibly do (:data:`ACT_MOTIONS`; Rearrange's first act
is ``picking up``, its second ``placing``).

:func:`partner_view` is given only the tool's *name* and the phase kind of the partner's running
skill, never the call's arguments, so no view can carry the call's target. The percepts become
object records of the observer's world graph (:func:`percept_records`): that is how OAS "supplied
otherwise missing object information", and without it a planner could not name an object it was
told about (a call must name entities of the caller's graph, §A.1.2).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...world.views import horizontal_distance
from .world import FLOOR, Point, Record, World

__all__ = ["ACT_MOTIONS", "ELSEWHERE", "MOTIONS", "NEAR_M", "PartnerView", "motion_of", "partner_view",
           "percept_records", "sees_from"]

#: The observation when the agents are in different rooms (§3.2, quoted).
ELSEWHERE = "Acting in another room."
#: What the hands visibly do in a skill's act phase, by tool.
ACT_MOTIONS: dict[str, str] = {
    "Pick": "picking up", "Place": "placing", "Open": "opening", "Close": "closing", "Clean": "cleaning",
    "Fill": "filling", "Pour": "pouring", "PowerOn": "switching on", "PowerOff": "switching off",
}
#: Every motion a view can show.
MOTIONS: tuple[str, ...] = ("walking", "standing", "looking around", *ACT_MOTIONS.values())
#: A partner is "at" a piece of furniture within this distance of its box (metres).
NEAR_M = 1.0


@dataclass(frozen=True)
class PartnerView:
    """What OAS shows of a co-located partner: visible state and current percepts only.

    ``in_view`` lists ``(object, relation, furniture)`` for each object the partner sees now
    (relation ``on`` or ``within``), sorted by object handle."""

    role: str
    room: str
    near: str | None
    holding: str | None
    motion: str
    in_view: tuple[tuple[str, str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.motion not in MOTIONS:
            raise ValueError(f"motion: {self.motion!r}; allowed: {', '.join(MOTIONS)}")

    def text(self, handle: str) -> str:
        """The OAS line: ``agent_1 (the human) is in kitchen_0, walking near table_3, holding
        nothing. It can see: cup_2 on table_3, apple_0 in fridge_0.``"""
        doing = self.motion
        if self.near:
            doing += f" {'near' if self.motion == 'walking' else 'at'} {self.near}"
        line = (f"{handle} (the {self.role}) is in {self.room}, {doing}, "
                f"holding {self.holding or 'nothing'}.")
        seen = [f"{h} {'in' if rel == 'within' else 'on'} {f}" for h, rel, f in self.in_view]
        return line + (f" It can see: {', '.join(seen)}." if seen else " It sees no objects around it.")


def motion_of(tool: str | None, phase_kind: str | None, holding: str | None = None) -> str:
    """The visible kind of motion of a partner running ``tool`` in a phase of kind ``phase_kind``
    (``walk``, ``look``, ``act``; None for both when no skill runs); see the module docstring."""
    if tool is None or phase_kind is None:
        return "standing"
    if phase_kind not in ("walk", "look", "act"):
        raise ValueError(f"phase_kind: {phase_kind!r}; allowed: walk, look, act")
    if phase_kind == "walk":
        return "walking"
    if tool == "Explore":
        return "looking around"
    if phase_kind == "look":
        return "standing"
    if tool == "Rearrange":
        return "placing" if holding else "picking up"
    return ACT_MOTIONS.get(tool, "standing")


def sees_from(world: World, p: Point, obj: str) -> bool:
    """The world's view rule (:meth:`.world.World.sees`) from point ``p`` for an object lying
    somewhere (a held object is not a percept here: OAS shows it as held)."""
    o = world.objects[obj]
    if o.holder is not None or o.place is None or o.room != world.room_at(p) or world.hidden(obj):
        return False
    return world.view.sees(o.size, horizontal_distance(p, o.pos))


def partner_view(world: World, role: str, pos: Point, holding: str | None, tool: str | None,
                 phase_kind: str | None) -> PartnerView:
    """The view of a partner standing (or passing) at ``pos`` now; ``tool`` is only the name of
    its running skill (None when none runs), ``phase_kind`` the kind of the phase it is in."""
    near = min((f for f in world.furniture.values() if f.cls != FLOOR), key=lambda f: horizontal_distance(pos, f.centre),
               default=None)
    near_h = near.handle if near is not None and horizontal_distance(pos, near.centre) <= near.half_extent + NEAR_M else None
    seen = tuple((h, *world.objects[h].place) for h in sorted(world.objects)  # type: ignore[misc]
                 if sees_from(world, pos, h))
    return PartnerView(role, world.room_at(pos), near_h, holding, motion_of(tool, phase_kind, holding), seen)


def percept_records(world: World, view: PartnerView, observer: int, step: int) -> dict[str, Record]:
    """The object records an observer takes from a view's percepts: what the partner sees, as the
    observer would record it on seeing it (:meth:`.world.World.record`), stamped ``step``."""
    return {h: world.record(observer, h, step) for h, _, _ in view.in_view}
