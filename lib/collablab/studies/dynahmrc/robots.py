"""DynaHMRC's robot types, their atomic action sets and the team compositions
(dynahmrc.tex §3, ``tab:atomic_action``; §4.1 team configurations; §4.3 ANC/REC transitions).

Four types, each with its default name from the paper's prompts (appendix ``lab:selfDP``):

========  ============================  =====  ==========================================
code      type                          name   actions (``tab:atomic_action``)
========  ============================  =====  ==========================================
``MoMa``  mobile manipulation robot     Alice  navigate, open, pick, place, move, communicate, wait
``Ma``    (tabletop) manipulation robot Bob    pick, place, communicate, wait
``Mo``    mobile robot                  David  navigate, communicate, wait
``UAV``   drone robot                   Lucy   navigate, pick, place, communicate, wait
========  ============================  =====  ==========================================

The geometric capabilities (ours; the paper's BestMan values are not published) are fields of
:class:`RobotType`: ``reach_m`` (arm or suction reach from the base centre), ``flies`` (reaches
elevated places, ignores furniture as obstacles), ``radius_m`` (footprint used to inflate the
costmap) and ``pose_tolerance_m`` (Navigation Failed (3) beyond it).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ACTIONS", "ANC_TRANSITIONS", "COMPOSITIONS", "MANIPULATION", "REC_TRANSITIONS", "ROBOT_TYPES",
           "RobotType", "check_composition", "composition_types", "robot_type"]

#: Every atomic action name (``tab:atomic_action``).
ACTIONS = ("navigate", "open", "pick", "place", "move", "communicate", "wait")


@dataclass(frozen=True)
class RobotType:
    """One robot type: its code, prompt name, actions and geometry."""

    code: str
    kind: str
    name: str
    actions: tuple[str, ...]
    reach_m: float = 0.0
    flies: bool = False
    radius_m: float = 0.25
    pose_tolerance_m: float = 0.15
    description: str = ""

    def can(self, action: str) -> bool:
        return action in self.actions

    @property
    def mobile(self) -> bool:
        return "navigate" in self.actions

    @property
    def manipulates(self) -> bool:
        return "pick" in self.actions


#: The four types. Reach: a tabletop arm 0.85 m, a mobile arm 0.75 m, a drone's suction 0.9 m
#: (it hovers over the surface and lowers the gripper). Descriptions follow the self-description prompts' Role lines.
ROBOT_TYPES: dict[str, RobotType] = {t.code: t for t in (
    RobotType("MoMa", "mobile manipulation robot", "Alice", ACTIONS, reach_m=0.75, radius_m=0.3,
              description="configured with a wheeled chassis and a single manipulator arm; it navigates across the "
                          "ground and performs manipulation tasks, including transporting objects and opening hinged "
                          "objects"),
    RobotType("Ma", "manipulation robot", "Bob", ("pick", "place", "communicate", "wait"), reach_m=0.85,
              description="a single robotic arm fixed on a desktop; it manipulates within a limited range"),
    RobotType("Mo", "mobile robot", "David", ("navigate", "communicate", "wait"), radius_m=0.25,
              description="a wheeled chassis; it navigates and moves on the ground, cannot manipulate any objects and "
                          "cannot open any hinged objects"),
    RobotType("UAV", "drone robot", "Lucy", ("navigate", "pick", "place", "communicate", "wait"), reach_m=0.9,
              flies=True, radius_m=0.2,
              description="a quadrotor drone with a fixed suction gripper; it is capable of aerial navigation and "
                          "manipulation"),
)}
#: Types allowed to place onto the task's target receptacle (the implicit rule, §4.3): the tabletop
#: manipulator only. Never stated to the robots; revealed by Place Failed (4).
MANIPULATION = frozenset({"Ma"})
#: The six team compositions of §4.4, by number of types.
COMPOSITIONS = ("Ma-MoMa", "Ma-UAV", "Ma-MoMa-Mo", "Ma-MoMa-UAV", "Ma-Mo-UAV", "Ma-MoMa-Mo-UAV")
#: Addition of a new collaborator (ANC, §4.3): before -> after.
ANC_TRANSITIONS = {"Ma-MoMa": "Ma-MoMa-UAV", "Ma-UAV": "Ma-MoMa-UAV", "Ma-MoMa-Mo": "Ma-MoMa-Mo-UAV",
                   "Ma-Mo-UAV": "Ma-MoMa-Mo-UAV"}
#: Removal of an existing collaborator (REC), the default transition: ``tab:removal_exp`` lists four,
#: the reverses of the ANC transitions (MoMa or UAV leaves Ma-MoMa-UAV or Ma-MoMa-Mo-UAV); the run
#: spec's ``remove`` chooses any of them (:func:`.variations.removable`), and without it the drone
#: leaves (the collaborator ANC adds to Ma-MoMa and Ma-MoMa-Mo).
REC_TRANSITIONS = {"Ma-MoMa-UAV": "Ma-MoMa", "Ma-MoMa-Mo-UAV": "Ma-MoMa-Mo"}


def robot_type(code: str) -> RobotType:
    """The type of a code; ValueError naming the allowed codes."""
    if code not in ROBOT_TYPES:
        raise ValueError(f"robot type: {code!r} not allowed; allowed: {', '.join(ROBOT_TYPES)}")
    return ROBOT_TYPES[code]


def check_composition(team: str, field: str = "team") -> str:
    """``team`` if it is one of :data:`COMPOSITIONS`, else ValueError naming the field."""
    if team not in COMPOSITIONS:
        raise ValueError(f"{field}: {team!r} not allowed; allowed: {', '.join(COMPOSITIONS)}")
    return team


def composition_types(team: str) -> tuple[RobotType, ...]:
    """The robot types of a composition, in its order (``"Ma-MoMa"`` -> Ma, MoMa)."""
    return tuple(robot_type(c) for c in check_composition(team).split("-"))
