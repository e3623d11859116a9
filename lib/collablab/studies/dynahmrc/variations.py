"""DynaHMRC's four dynamic variations, world side (dynahmrc.tex §4.3 Task Variations and
Constraints; ``tab:goal_exp`` CTO, ``tab:area_exp`` IRZ, ``tab:addition_exp`` ANC,
``tab:removal_exp`` REC, all at T = 5; appendix ``lab:sensitivity_dyna``: CTO at T = 3/5/10,
IRZ with 1-3 zones, ANC/REC at T = 3/5/13; §4.5 case study).

The framework calls :func:`apply` (or :func:`update` every step) at step ``T`` before the robots act
in that step; the :class:`VariationPlan` is computed up front from the task by
:func:`plan_variation` (deterministic in task, variation and seed). Decisions (ours):

- **CTO** (change of the task objective; §4.3: "Changes in the number and types of target
  objects"): the types change: one target (up to two when J >= 3) is replaced, in place in the
  ordered target list, by an object of the same family lying elsewhere (off the working table,
  fetchable by the team); and in half of the changes (drawn) the number changes too: one more target of that
  kind (a sandwich's under its top slice) or, drawn evenly when both are possible, one fewer (never
  one just replaced, never a bread slice); the other half keep J, as §4.5's case does. Tasks
  generated with ``variation="CTO"`` carry spare objects from the start as distractors; otherwise
  the plan adds a new object at T. Sort keeps the targets' colours distinct; sandwich replaces a
  filling, which for J = 2 is the base ingredient (the §4.5 case ``[bacon_0, bread_slice_0] ->
  [cucumber_0, bread_slice_0]``). ``world.targets`` changes
  and the event carries the new task sentence. An object no longer wanted that already lies in the
  tray, on a panel or in the sandwich stack counts as misplaced: the team must take it out
  (SUCC requires no non-target in the receptacle; ``world.partial_success`` subtracts it), and
  in a sandwich every layer above the first mismatch must come off.
- **IRZ** (temporary restricted zones): ``zones`` pairs (robot, room), each barring one mobile
  robot (never the tabletop manipulator) from one room other than the working table's, written to
  ``world.restricted``. Chosen so that every target keeps a fetcher that is not barred from it (paths
  included: a barred room blocks the way through it too), preferring zones that block a room or
  route the team needs (:func:`.tasks.zone_blocks`: a room holding a target to find, or a robot's
  only way to it), then rooms holding targets, then rooms holding other objects (§4.3;
  ``lab:sensitivity_dyna`` "block critical paths"). Robots are not told; they learn it only from
  Navigation Failed (4). "Temporary" is relative to the operation: by default (``duration=None``) a
  zone lasts to the end of the episode; with ``duration=k`` :func:`update` lifts it at step
  ``T + k``. A robot standing in the planned room at T gets the plan's fallback zone instead (the
  world would trap it there).
- **ANC**: a robot of the type the transition adds (``robots.ANC_TRANSITIONS``) joins at its start
  pose under its type's name (``_2``, ``_3``, ... when the name is taken); the framework
  broadcasts its self-description (every member's prompts carry it from then on:
  :attr:`~.brain.Context.newcomers`).
- **REC**: the robot of the type ``Variation.remove`` names (the run spec's ``remove``; default: the
  one ``robots.REC_TRANSITIONS`` removes; ``tab:removal_exp``'s four transitions remove either the
  mobile manipulator or the drone from Ma-MoMa-UAV and Ma-MoMa-Mo-UAV, and REC tasks are generated
  feasible for both resulting teams) is disconnected without warning (``world.remove_robot``: what
  it holds drops onto the place it last reached). If it was the leader, the runner-up of the
  election takes over (the framework's job; the event names the removed robot).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from .robots import ANC_TRANSITIONS, REC_TRANSITIONS, ROBOT_TYPES, check_composition
from .tasks import FILLINGS, HOUSEHOLD_OBJECTS, IRZ_MAX_ZONES, MOVERS, SHAPES, VARIATION_KINDS, Task, can_fetch, \
    feasible, find_zones, position_on, rec_afters, task_text, team_codes, zone_blocks, zone_candidates, \
    zones_feasible
from .world import COLOURS, RobotWorld

__all__ = ["ALLOWED_T", "IRZ_TEAMS", "MAX_ZONES", "Variation", "VariationEvent", "VariationPlan", "apply",
           "plan_variation", "removable", "update", "validate_variation"]

#: Trigger steps of the paper (main tables T = 5; ``lab:sensitivity_dyna``). IRZ: any step of the
#: 30-step cap, 5 by default.
ALLOWED_T: dict[str, tuple[int, ...]] = {"CTO": (3, 5, 10), "ANC": (3, 5, 13), "REC": (3, 5, 13),
                                         "IRZ": tuple(range(1, 30))}
MAX_ZONES = IRZ_MAX_ZONES
#: IRZ runs on the 3- and 4-type compositions only.
IRZ_TEAMS = ("Ma-MoMa-Mo", "Ma-MoMa-UAV", "Ma-Mo-UAV", "Ma-MoMa-Mo-UAV")


@dataclass(frozen=True)
class Variation:
    """One dynamic variation setting: ``kind``, trigger step ``T``, IRZ ``zones`` and ``duration``."""

    kind: str = "none"
    T: int = 5
    zones: int = 1
    duration: int | None = None
    remove: str | None = None  # REC: the type code removed (default: robots.REC_TRANSITIONS)

    def __post_init__(self) -> None:
        if self.kind not in VARIATION_KINDS:
            raise ValueError(f"variation.kind: {self.kind!r} not allowed; allowed: {', '.join(VARIATION_KINDS)}")
        if self.kind == "none":
            return
        if self.T not in ALLOWED_T[self.kind]:
            allowed = "1..29" if self.kind == "IRZ" else ", ".join(map(str, ALLOWED_T[self.kind]))
            raise ValueError(f"variation.T: {self.T!r} not allowed for {self.kind}; allowed: {allowed}")
        if self.remove is not None and (self.kind != "REC" or self.remove not in MOVERS):
            raise ValueError(f"variation.remove: {self.remove!r} not allowed for {self.kind}; allowed: "
                             f"{', '.join(MOVERS) if self.kind == 'REC' else 'None'}")
        if self.kind == "IRZ":
            if not isinstance(self.zones, int) or not 1 <= self.zones <= MAX_ZONES:
                raise ValueError(f"variation.zones: {self.zones!r} not allowed; allowed: 1..{MAX_ZONES}")
            if self.duration is not None and (not isinstance(self.duration, int) or self.duration < 1):
                raise ValueError(f"variation.duration: {self.duration!r} not allowed; allowed: None (until the end) "
                                 f"or a positive number of steps")


def validate_variation(variation: Variation, team: str) -> Variation:
    """``variation`` if it applies to ``team``; ValueError naming the allowed compositions."""
    check_composition(team)
    if variation.kind == "IRZ" and team not in IRZ_TEAMS:
        raise ValueError(f"team: IRZ needs a 3- or 4-type team; allowed: {', '.join(IRZ_TEAMS)}; got {team!r}")
    if variation.kind == "ANC" and team not in ANC_TRANSITIONS:
        raise ValueError(f"team: ANC needs one of {', '.join(ANC_TRANSITIONS)}; got {team!r}")
    if variation.kind == "REC":
        if team not in REC_TRANSITIONS:
            raise ValueError(f"team: REC needs one of {', '.join(REC_TRANSITIONS)}; got {team!r}")
        codes = removable(team)
        if variation.remove is not None and variation.remove not in codes:
            raise ValueError(f"variation.remove: {variation.remove!r} not allowed for {team}; allowed: "
                             f"{', '.join(codes)}")
    return variation


def removable(team: str) -> list[str]:
    """The type codes a REC may remove from ``team`` (the default first)."""
    return [next(c for c in team.split("-") if c not in after.split("-")) for after in rec_afters(team)]


@dataclass
class VariationPlan:
    """What will happen at step ``step`` (computed up front)."""

    kind: str
    step: int
    team_before: str
    team_after: str
    targets_before: list[str] = field(default_factory=list)
    targets_after: list[str] = field(default_factory=list)
    replaced: list[tuple[str, str]] = field(default_factory=list)  # CTO (old, new)
    added_targets: list[str] = field(default_factory=list)  # CTO: a target more
    removed_targets: list[str] = field(default_factory=list)  # CTO: a target fewer
    new_objects: list[dict[str, Any]] = field(default_factory=list)  # CTO objects added at T
    text_after: str = ""
    zones: list[tuple[str, str]] = field(default_factory=list)  # IRZ (robot code, room)
    fallbacks: list[list[tuple[str, str]]] = field(default_factory=list)  # IRZ per zone
    duration: int | None = None
    added: tuple[str, str] | None = None  # ANC (name, code)
    removed_code: str | None = None  # REC


@dataclass
class VariationEvent:
    """What changed in the world: for the framework, the logs and the robots' prompts."""

    kind: str
    step: int
    new_targets: list[str] = field(default_factory=list)
    replaced: list[tuple[str, str]] = field(default_factory=list)
    added_targets: list[str] = field(default_factory=list)  # CTO
    removed_targets: list[str] = field(default_factory=list)  # CTO
    text: str = ""
    zones: list[tuple[str, str]] = field(default_factory=list)  # (robot name, room)
    lifted: bool = False
    added: tuple[str, str] | None = None  # (name, code)
    removed: str | None = None
    dropped: str | None = None


# -- planning ----------------------------------------------------------------------------------
def plan_variation(task: Task, variation: Variation, seed: int = 0) -> VariationPlan:
    """The deterministic plan of ``variation`` on ``task``."""
    validate_variation(variation, task.team)
    rng = random.Random(f"dynahmrc-variation|{task.id}|{variation.kind}|{variation.T}|{variation.zones}|{seed}")
    plan = VariationPlan(variation.kind, variation.T, task.team, task.team, list(task.targets), list(task.targets),
                         text_after=task.text, duration=variation.duration)
    if variation.kind == "CTO":
        _plan_cto(task, plan, rng)
    elif variation.kind == "IRZ":
        _plan_irz(task, plan, variation.zones, rng)
    elif variation.kind == "ANC":
        plan.team_after = ANC_TRANSITIONS[task.team]
        code = next(c for c in plan.team_after.split("-") if c not in task.team.split("-"))
        plan.added = (ROBOT_TYPES[code].name, code)
        if not feasible(task, task.team):
            raise ValueError(f"task {task.id}: infeasible for {task.team} before the new collaborator joins")
    elif variation.kind == "REC":
        plan.removed_code = variation.remove or removable(task.team)[0]
        plan.team_after = "-".join(c for c in task.team.split("-") if c != plan.removed_code)
        if not feasible(task, plan.team_after):
            raise ValueError(f"task {task.id}: infeasible for {plan.team_after} after removing "
                             f"{plan.removed_code}; generate it with variation='REC'")
    return plan


def _family_class(task: Task, old: dict[str, Any], taken_cls: set[str], taken_colours: set[str],
                  rng: random.Random) -> tuple[str, str]:
    """(cls, colour) of a fresh replacement for ``old``."""
    if task.kind == "pack":
        return rng.choice([c for c in HOUSEHOLD_OBJECTS if c not in taken_cls] or list(HOUSEHOLD_OBJECTS)), ""
    if task.kind == "sort":
        col = rng.choice([c for c in COLOURS if c not in taken_colours])
        return f"{col}_{rng.choice(SHAPES)}", col
    return rng.choice([c for c in FILLINGS if c not in taken_cls]), ""


def _plan_cto(task: Task, plan: VariationPlan, rng: random.Random) -> None:
    L = task.layout
    codes = team_codes(task.team) & frozenset(MOVERS)
    targets = list(task.targets)
    if task.kind == "sandwich":
        slots = [i for i, t in enumerate(targets) if task.object(t)["cls"] != "bread_slice"]
        if not slots:  # a one-slice menu: the slice itself changes
            slots = list(range(len(targets)))
    else:
        slots = list(range(len(targets)))
    n = min(len(slots), 2 if len(targets) >= 3 and rng.random() < 0.5 else 1)
    chosen = sorted(rng.sample(slots, n))
    by = {o["handle"]: o for o in task.objects}
    remaining = [t for i, t in enumerate(targets) if i not in chosen]
    taken_cls = {by[t]["cls"] for t in remaining}
    taken_col = {by[t]["colour"] for t in remaining}
    used: set[str] = set(targets)
    counts: dict[str, int] = {}
    for h in by:
        cls, _, k = h.rpartition("_")
        if k.isdigit():
            counts[cls] = max(counts.get(cls, 0), int(k) + 1)

    def fetchable(o: dict[str, Any]) -> bool:
        return any(can_fetch(L, c, o["place"], o["pos"], bool(o["inside"])) for c in codes)

    for i in chosen:
        old = by[targets[i]]
        cands = [o for o in task.objects if o["handle"] not in used and o["place"] != L.working_table
                 and fetchable(o) and _same_family(task.kind, old, o, taken_cls, taken_col)]
        if cands:
            new = cands[0]
        else:
            new = _new_object(task, old, taken_cls, taken_col, counts, codes, rng)
            plan.new_objects.append(new)
        used.add(new["handle"])
        taken_cls.add(new["cls"])
        taken_col.add(new["colour"])
        plan.replaced.append((targets[i], new["handle"]))
        targets[i] = new["handle"]
    # the number (§4.3: "Changes in the number and types of target objects"): in half of the changes,
    # one target more or fewer (§4.5's case keeps it: [bacon_0, bread_slice_0] -> [cucumber_0, bread_slice_0])
    resize = rng.random() < 0.5
    droppable = [i for i in range(len(targets)) if i not in chosen
                 and not (task.kind == "sandwich" and by[targets[i]]["cls"] == "bread_slice")]
    free = {"pack": True, "sort": len(taken_col & set(COLOURS)) < len(COLOURS),
            "sandwich": any(c not in taken_cls for c in FILLINGS)}[task.kind]
    if resize and free and (not droppable or rng.random() < 0.5):
        template = {"cls": "", "colour": ""}  # a fresh object, solid or filling (never a bread slice)
        cands = [o for o in task.objects if o["handle"] not in used and o["place"] != L.working_table
                 and fetchable(o) and o["cls"] != "bread_slice"
                 and _same_family(task.kind, template, o, taken_cls, taken_col)]
        if cands:
            new = cands[0]
        else:
            new = _new_object(task, template, taken_cls, taken_col, counts, codes, rng)
            plan.new_objects.append(new)
        # a sandwich's new filling goes under its top slice; the others join the end of the list
        targets.insert(len(targets) - 1 if task.kind == "sandwich" else len(targets), new["handle"])
        plan.added_targets.append(new["handle"])
    elif resize and droppable:
        plan.removed_targets.append(targets.pop(rng.choice(droppable)))
    plan.targets_after = targets
    plan.text_after = task_text(task.kind, targets)


def _same_family(kind: str, old: dict[str, Any], o: dict[str, Any], taken_cls: set[str], taken_col: set[str]) -> bool:
    if kind == "pack":
        return o["cls"] in HOUSEHOLD_OBJECTS
    if kind == "sort":
        return o["colour"] in COLOURS and o["colour"] not in taken_col
    if old["cls"] == "bread_slice":
        return o["cls"] == "bread_slice"
    return o["cls"] in FILLINGS and o["cls"] not in taken_cls


def _new_object(task: Task, old: dict[str, Any], taken_cls: set[str], taken_col: set[str], counts: dict[str, int],
                codes: frozenset[str], rng: random.Random) -> dict[str, Any]:
    L = task.layout
    if old["cls"] == "bread_slice":
        cls, col = "bread_slice", ""
    else:
        cls, col = _family_class(task, old, taken_cls, taken_col, rng)
    handle = f"{cls}_{counts.get(cls, 0)}"
    counts[cls] = counts.get(cls, 0) + 1
    slots = [(h, inside) for h, p in sorted(L.places.items()) if h != L.working_table
             for inside in ((False,) if not p.container or p.elevated else ((True,) if not p.surface else (False, True)))]
    rng.shuffle(slots)
    for place, inside in slots:
        for _ in range(3):
            q = position_on(L, place, rng)
            if any(can_fetch(L, c, place, q, inside) for c in codes):
                return {"handle": handle, "cls": cls, "place": place, "inside": inside, "pos": [q[0], q[1]],
                        "colour": col}
    raise ValueError(f"CTO: no place for a new target fetchable by {task.team}")


def _plan_irz(task: Task, plan: VariationPlan, n: int, rng: random.Random) -> None:
    """``n`` zones that keep the task feasible, those that block a room or route the team needs first
    (§4.3: the framework "must reassign the corresponding exploration responsibilities to other
    collaborators"; ``lab:sensitivity_dyna``: the difficulty "depends on whether restricted zones
    block critical paths"): :func:`.tasks.zone_blocks`, a room holding a target to find or a robot's
    only way to it; then rooms holding targets, then other objects; ties in a seeded random order.
    Every medium IRZ task with a target to find outside the working table's room that a second robot
    could reach gets a blocking zone (``tests/test_dynahmrc_tiers.py`` states the share)."""
    L = task.layout
    tgt_rooms = {L.place(task.object(t)["place"]).room for t in task.targets}
    obj_rooms = {L.place(o["place"]).room for o in task.objects}
    cands = zone_candidates(task)
    rng.shuffle(cands)
    cands.sort(key=lambda z: (not zone_blocks(task, z), z[1] not in tgt_rooms, z[1] not in obj_rooms))
    chosen = find_zones(task, n, cands)
    if chosen is None:
        raise ValueError(f"IRZ: no {n} restricted zones keep task {task.id} feasible; generate it with "
                         f"variation='IRZ'")
    plan.zones = chosen
    for i in range(len(chosen)):
        others = chosen[:i] + chosen[i + 1:]
        plan.fallbacks.append([z for z in cands if z not in chosen and zones_feasible(task, others + [z])])


# -- applying ----------------------------------------------------------------------------------
def _robot_of(world: RobotWorld, code: str) -> str:
    for name, r in world.robots.items():
        if r.active and r.type.code == code:
            return name
    raise ValueError(f"variation: no active {code} robot in the team ({', '.join(world.robots)})")


def apply(world: RobotWorld, plan: VariationPlan) -> VariationEvent:
    """Apply ``plan`` to ``world`` now (the framework calls it at step ``plan.step``)."""
    ev = VariationEvent(plan.kind, plan.step)
    if plan.kind == "CTO":
        for spec in plan.new_objects:
            if spec["handle"] not in world.objects:
                world.add_object(dict(spec, pos=tuple(spec["pos"])))
        world.targets = list(plan.targets_after)
        ev.new_targets, ev.replaced, ev.text = list(plan.targets_after), list(plan.replaced), plan.text_after
        ev.added_targets, ev.removed_targets = list(plan.added_targets), list(plan.removed_targets)
    elif plan.kind == "IRZ":
        used: list[tuple[str, str]] = []
        for i, (code, room) in enumerate(plan.zones):
            options = [(code, room)] + (plan.fallbacks[i] if i < len(plan.fallbacks) else [])
            for c, r in options:
                name = _robot_of(world, c)
                if (c, r) not in used and world.layout.room_at(world.robots[name].pos) != r:
                    world.restricted.setdefault(name, set()).add(r)
                    used.append((c, r))
                    ev.zones.append((name, r))
                    break
    elif plan.kind == "ANC":
        assert plan.added is not None
        base, code = plan.added
        name, k = base, 2
        while name in world.robots:
            name, k = f"{base}_{k}", k + 1
        world.add_robot(name, code)
        ev.added = (name, code)
    elif plan.kind == "REC":
        assert plan.removed_code is not None
        name = _robot_of(world, plan.removed_code)
        ev.removed, ev.dropped = name, world.remove_robot(name)
    return ev


def update(world: RobotWorld, plan: VariationPlan, step: int,
           applied: VariationEvent | None = None) -> VariationEvent | None:
    """Call at every step before the robots act: applies the plan at ``plan.step``; for an IRZ with
    a ``duration``, lifts the zones of ``applied`` (the event apply returned) at ``plan.step +
    duration``. None when nothing changes."""
    if plan.kind == "none":
        return None
    if step == plan.step:
        return apply(world, plan)
    if plan.kind == "IRZ" and plan.duration is not None and applied is not None \
            and step == plan.step + plan.duration:
        for name, room in applied.zones:
            world.restricted.get(name, set()).discard(room)
        return VariationEvent("IRZ", step, zones=list(applied.zones), lifted=True)
    return None
