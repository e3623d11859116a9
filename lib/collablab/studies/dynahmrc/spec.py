"""One DynaHMRC unit from a flat spec (dynahmrc.tex §4), registered for the run grid as study
``dynahmrc`` (:func:`run_spec`).

A unit is one task, one team composition, one method and one variation. Its records are
``{"episode": <summary and metrics>, "steps": [<one record per robot action>]}``
(:data:`RECORD_SCHEMA`); brain calls are summarised per stage in the episode record.

- **Tasks.** ``task_source`` ``generated`` draws ``kind`` x ``level`` for ``team`` from the seeded
  generator (:func:`.tasks.generate_task`, instance ``instance`` of seed ``task_seed``; ``level``
  unset is easy for a static task and medium under a variation, the paper's dynamic setting, §4.5;
  a variation at easy or hard runs the task of that tier, with the variations' 30-step cap); ``file``
  reads task ``instance`` of ``task_file``
  (:func:`.tasks.load_tasks`). ``objects`` ``unseen`` is the appendix's Unseen Target Objects
  (``tab:unseen_obj``: static Pack Objects, generated tasks only): the seen task with its targets
  renamed to classes the fine-tuning export never holds (:func:`.tasks.unseen_targets`); the episode
  record's ``objects`` says which (read from the task, so a task file's unseen targets say so too).
- **Methods.** ``dynahmrc`` (the framework, with ``history``, ``feedback``, ``leader``,
  ``reflection``, ``memory``, ``random_votes`` for the ablations), ``coela`` (CoELA's planning and
  communication modules over plan options generated from each robot's memory, :mod:`.coela`; no
  election or reflection), ``coherent`` (centralized planner), ``mcts`` / ``mcts_noins`` /
  ``llm_mcts`` (search over the joint action space, :mod:`.mcts`; ``llm_mcts`` uses the model as
  the PUCT prior and as the world-model prior on the ``llm`` backend, the heuristic PUCT prior and
  the uniform belief offline; ``mcts_world_prior`` ``uniform`` keeps the model's PUCT prior but not
  its world model, an ablation of ours that is its own unit; the episode's ``world_prior`` records
  the belief used and the world-model call, a truncated or unreadable reply saying so). The search reads the world
  after the variation's update like every method; ``mcts_learn_zones`` (default False, the paper's
  MCTS) lets it prune navigations that failed with Navigation Failed (4) under IRZ.
- **Backends.** ``heuristic`` is :class:`.offline.OfflineBrain` with ``profile`` in every role;
  ``llm`` is :class:`.llm_brain.LLMBrain` on ``model`` at ``base_url`` (temperature 0.5 as in §4.2).
- **Variations.** ``variation`` (CTO, IRZ, ANC, REC, §4.3) at step ``T``; IRZ with ``zones``; REC
  removes the robot of type ``remove`` (``tab:removal_exp``'s transitions: MoMa or UAV from
  Ma-MoMa-UAV and from Ma-MoMa-Mo-UAV; None: :data:`.robots.REC_TRANSITIONS`, the drone). The
  episode record names ``remove`` (the type removed) and ``team_after``.
- **Limits.** ``max_steps`` None uses the task's cap (20 / 30 / 50, 30 with a variation).
- **Backend label.** A search baseline has no model: its episodes say ``heuristic`` unless LLM-MCTS
  asks a model for its prior.
- A failure that is not the model's (server down, no key) raises: the unit fails and a rerun
  retries it; a bad reply is a recorded invalid action (``name`` ``invalid``).
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any, Callable

from ...llm import THINKING
from ...agents.llm import ENDPOINT_DEFAULTS, backend_label, check_endpoint_keys, endpoint_client, endpoint_spec, live
from ...runs.spec_checks import check_choice, check_int, with_defaults
from .brain import Brain, Context, Reply
from .difficulty import LEVELS
from .framework import Config, EpisodeLog, run_episode, run_joint_episode
from .layout import layout_of
from .metrics import episode_metrics
from .offline import PROFILES, OfflineBrain
from .robots import COMPOSITIONS, REC_TRANSITIONS, composition_types
from .tasks import OBJECT_SETS, Task, generate_task, is_unseen, load_tasks
from .variations import Variation, VariationPlan, plan_variation, removable, update
from .world import TASK_KINDS, RobotWorld

__all__ = ["BACKENDS", "DEFAULTS", "METHOD_NAMES", "NO_CC_METHODS", "RECORD_SCHEMA", "check_remove", "is_invalid",
           "make_world", "resolve", "run_spec", "run_unit", "sabotage", "task_of", "validate", "variation_of"]

SOURCES = ("generated", "file")
BACKENDS = ("heuristic", "llm")
METHOD_NAMES = ("dynahmrc", "coela", "coherent", "mcts", "mcts_noins", "llm_mcts")
VARIATIONS = ("none", "CTO", "IRZ", "ANC", "REC")
#: LLM-MCTS's world model: the model's commonsense belief, or the uniform belief (ablation).
WORLD_PRIORS = ("model", "uniform")
VERSION = 1
#: Methods whose CC the paper does not report ('-' in tab:central_1 / tab:central_2): their ``cc``
#: is None (see :mod:`.metrics`).
NO_CC_METHODS = ("coherent",)

DEFAULTS: dict[str, Any] = {
    "task_source": "generated", "kind": "pack", "level": None, "team": "Ma-MoMa", "instance": 0, "task_seed": 0,
    "task_file": None, "objects": "seen",
    "variation": "none", "T": 5, "zones": 1, "remove": None,
    "method": "dynahmrc",
    "history": True, "feedback": True, "leader": True, "reflection": True,
    # memory M = 10 and k_sel = 3 are the paper's (§4.2, lab:leader_vote); reflect_every (Δt) = 5 and
    # long_memory (K̄) = 20 are our choice: the paper gives no value (see framework.Config)
    "memory": 10, "long_memory": 20, "reflect_every": 5, "k_sel": 3, "random_votes": 0.0,
    "mcts_iterations": 200, "mcts_depth": 8, "mcts_c": 1.4, "mcts_max_sim_actions": 3200,
    # False: the paper's MCTS, which IRZ's zones reach only as feedback it cannot use (§4.5)
    "mcts_learn_zones": False,
    # None: the method's own (llm_mcts: the model's commonsense world model, uniform offline); only
    # llm_mcts takes "model" or "uniform" (appendix lab:llm_mcts_baseline)
    "mcts_world_prior": None,
    "backend": "heuristic", "profile": "default",
    "model": None, "base_url": None, "provider": "auto", "api_key_env": None,
    "llm_cache": None, "llm_cache_mode": None,
    # §4.2: "we set the temperature parameter to 0.5"; the paper gives no token budget: 8192 lets
    # a reasoning model think and still answer (a cut reply is an invalid action, ``truncated``).
    "temperature": 0.5, "max_tokens": 8192, "thinking": "auto",
    "llm_max_concurrency": 2, "llm_timeout_s": 600.0, "llm_max_attempts": 4, **ENDPOINT_DEFAULTS,
    "max_steps": None,  # None: the task's step cap (20 / 30 / 50; 30 with a variation)
    "seed": 0, "run": 0,
}


def resolve(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec with defaults; ValueError naming a bad key or value (before any work)."""
    s = with_defaults(spec, DEFAULTS)
    check_choice(s, "task_source", SOURCES)
    check_choice(s, "kind", TASK_KINDS)
    check_choice(s, "objects", OBJECT_SETS)
    if s["objects"] == "unseen" and (s["kind"], s["variation"], s["task_source"]) != ("pack", "none", "generated"):
        raise ValueError(f"objects: 'unseen' not allowed with kind {s['kind']!r}, variation {s['variation']!r}, "
                         f"task_source {s['task_source']!r}; allowed: seen (unseen targets are generated static "
                         f"Pack Objects tasks, tab:unseen_obj)")
    if s["level"] is None:  # the paper's: static tasks from easy, dynamic ones at medium (§4.5)
        s["level"] = "easy" if s["variation"] == "none" else "medium"
    check_choice(s, "level", LEVELS)
    check_choice(s, "team", COMPOSITIONS)
    check_choice(s, "variation", VARIATIONS)
    check_choice(s, "method", METHOD_NAMES)
    check_choice(s, "backend", BACKENDS)
    check_choice(s, "thinking", THINKING)  # on every backend: a typo is an error offline too
    for key in ("history", "feedback", "leader", "reflection", "mcts_learn_zones"):
        if not isinstance(s[key], bool):
            raise ValueError(f"{key}: must be true or false, got {s[key]!r}")
    for key, low in (("instance", 0), ("task_seed", 0), ("T", 1), ("zones", 1), ("memory", 1), ("long_memory", 1),
                     ("reflect_every", 1), ("k_sel", 1), ("mcts_iterations", 1), ("mcts_depth", 1), ("mcts_max_sim_actions", 1), ("seed", 0),
                     ("run", 0), ("llm_max_concurrency", 1), ("llm_max_attempts", 1)):
        check_int(s, key, low)
    if s["max_steps"] is not None:
        check_int(s, "max_steps", 1)
    if not isinstance(s["random_votes"], (int, float)) or not 0 <= s["random_votes"] <= 1:
        raise ValueError(f"random_votes: must be a number in [0, 1], got {s['random_votes']!r}")
    if s["task_source"] == "file" and (not isinstance(s["task_file"], str) or not s["task_file"]):
        raise ValueError("task_file: task_source 'file' needs a path to a JSON list of tasks")
    if s["variation"] != "none":
        Variation(s["variation"], s["T"], s["zones"])
    if s["mcts_world_prior"] is not None:
        check_choice(s, "mcts_world_prior", WORLD_PRIORS)
        if s["method"] != "llm_mcts":
            raise ValueError(f"mcts_world_prior: {s['mcts_world_prior']!r} not allowed with method {s['method']!r}; "
                             f"allowed: None (only llm_mcts has a world model)")
    if s["remove"] is not None and s["variation"] != "REC":
        raise ValueError(f"remove: {s['remove']!r} not allowed with variation {s['variation']!r}; allowed: None "
                         f"(only REC removes a robot)")
    if s["variation"] == "REC" and s["task_source"] == "generated":
        check_remove(s, s["team"])
    if s["backend"] == "heuristic":
        check_choice(s, "profile", PROFILES)
    else:
        if not isinstance(s["model"], str) or not s["model"]:
            raise ValueError("model: backend 'llm' needs a model name, e.g. model='Qwen/Qwen3-4B-Instruct-2507'")
        check_endpoint_keys(s)
    return s


@functools.lru_cache(maxsize=8)
def _file_tasks(path: str) -> tuple[Task, ...]:
    return tuple(load_tasks(path))


@functools.lru_cache(maxsize=256)
def _generated(kind: str, level: str, team: str, seed: int, variation: str, objects: str) -> Task:
    return generate_task(kind, level, team, seed, variation=None if variation == "none" else variation, objects=objects)


def task_of(s: dict[str, Any]) -> Task:
    """The task of a resolved spec (ValueError naming ``instance`` when out of range)."""
    if s["task_source"] == "file":
        tasks = _file_tasks(s["task_file"])
        if s["instance"] >= len(tasks):
            raise ValueError(f"instance: {s['instance']} is out of range; {s['task_file']} has tasks 0..{len(tasks) - 1}")
        return tasks[s["instance"]]
    return _generated(s["kind"], s["level"], s["team"], s["task_seed"] * 10_007 + s["instance"], s["variation"],
                      s["objects"])


def check_remove(s: dict[str, Any], team: str) -> None:
    """ValueError naming ``remove`` and the types a REC may remove from ``team`` when ``s["remove"]``
    is not one of them (None is always allowed: the default removal)."""
    if s["remove"] is None:
        return
    if team not in REC_TRANSITIONS:
        raise ValueError(f"team: REC needs one of {', '.join(REC_TRANSITIONS)}; got {team!r}")
    allowed = removable(team)
    if s["remove"] not in allowed:
        raise ValueError(f"remove: {s['remove']!r} not allowed for team {team}; allowed: {', '.join(allowed)}")


def variation_of(s: dict[str, Any], task: Task) -> Variation:
    """The resolved spec's :class:`~.variations.Variation` for ``task`` (``remove`` checked against
    the task's team)."""
    if s["variation"] == "REC":
        check_remove(s, task.team)
    return Variation(s["variation"], s["T"], s["zones"], remove=s["remove"] if s["variation"] == "REC" else None)


def validate(spec: dict[str, Any]) -> None:
    """Check a spec fully without running it (the run grid calls this before any unit starts)."""
    s = resolve(spec)
    task = task_of(s)
    if s["variation"] != "none":
        plan_variation(task, variation_of(s, task), seed=s["seed"])


def make_world(task: Task) -> RobotWorld:
    """The task's world with its starting team."""
    return RobotWorld(layout_of(task.apartment), [(t.name, t.code) for t in composition_types(task.team)],
                      task.task_layout())


def _seed(s: dict[str, Any]) -> int:
    return s["seed"] * 1000 + s["instance"] + 7919 * s["run"]


def endpoints(spec: dict[str, Any]) -> list[Any]:
    """The model endpoint a spec calls (none offline, for the search baselines without an LLM
    prior, or in replay mode), checked by the run grid before its first unit."""
    s = resolve(spec)
    return [] if s["backend"] == "heuristic" else live(s, [endpoint_spec(s, s["model"])])


def brain_maker(s: dict[str, Any]) -> Callable[[str, str], Brain]:
    """A function giving each robot (name, type code) its backend."""
    if s["backend"] == "heuristic":
        profile = PROFILES[s["profile"]]
        return lambda name, code: OfflineBrain(name, code, profile, seed=_seed(s))
    from .llm_brain import LLMBrain

    client = endpoint_client(s, s["model"])
    label = backend_label(s["provider"], s["base_url"], s["model"])
    ns = f"run{s['run']}/" if s["run"] else ""
    return lambda name, code: LLMBrain(client, temperature=s["temperature"], max_tokens=s["max_tokens"],
                                       namespace=ns, label=label)


def _config(s: dict[str, Any]) -> Config:
    method = s["method"] if s["method"] in ("dynahmrc", "coela", "coherent") else "dynahmrc"
    return Config(method=method, history=s["history"], feedback=s["feedback"], leader=s["leader"],
                  reflection=s["reflection"], memory=s["memory"], long_memory=max(s["long_memory"], s["memory"]),
                  reflect_every=s["reflect_every"], k_sel=s["k_sel"], random_votes=float(s["random_votes"]),
                  seed=_seed(s))


def _search(s: dict[str, Any], uid: str = "episode"):
    """The search planner of a resolved spec; LLM-MCTS's world model (:class:`~.mcts.WorldPrior`)
    asks the model once per episode on the ``llm`` backend (call ids ``<run ns><uid>/world/c<k>``),
    and is the uniform belief offline (no model, no commonsense) or with ``mcts_world_prior``
    ``uniform``."""
    from .mcts import MCTSPlanner, WorldPrior, heuristic_prior, llm_prior, llm_world_prior

    prior, world = None, None
    if s["method"] == "llm_mcts":
        if s["backend"] == "llm":
            client = endpoint_client(s, s["model"])
            prior = llm_prior(client, max_tokens=s["max_tokens"])
            ns = f"run{s['run']}/" if s["run"] else ""
            world = WorldPrior(None, why="mcts_world_prior 'uniform': the model's world model is not used") \
                if s["mcts_world_prior"] == "uniform" else \
                llm_world_prior(client, temperature=s["temperature"], max_tokens=s["max_tokens"],
                                call_prefix=f"{ns}{uid}/world")
        else:
            prior = heuristic_prior
            world = WorldPrior(None, why="offline: no model, hence no commonsense (uniform over the places not "
                                         "seen empty)")
    return MCTSPlanner(instructions=s["method"] != "mcts_noins", iterations=s["mcts_iterations"],
                       depth=s["mcts_depth"], c=float(s["mcts_c"]), seed=_seed(s), policy_prior=prior,
                       prior=world, max_sim_actions=s["mcts_max_sim_actions"], learn_zones=s["mcts_learn_zones"])


def run_spec(spec: dict[str, Any], wrap_team: Callable[[dict[str, Brain]], dict[str, Brain]] | None = None
             ) -> dict[str, Any]:
    """Run one unit (see the module docstring); ``wrap_team`` lets conformance checks inject faults."""
    return run_unit(spec, wrap_team)[0]


def run_unit(spec: dict[str, Any], wrap_team: Callable[[dict[str, Brain]], dict[str, Brain]] | None = None,
             record_decisions: bool = False) -> tuple[dict[str, Any], EpisodeLog]:
    """One unit's records and its episode log (with every execution decision's context and action
    when ``record_decisions``: what the training export turns into samples)."""
    s = resolve(spec)
    task = task_of(s)
    world = make_world(task)
    plan = plan_variation(task, variation_of(s, task), seed=s["seed"]) if s["variation"] != "none" else None
    applied: list[Any] = []

    def variation(w: RobotWorld, t: int) -> dict[str, Any] | None:
        if plan is None:
            return None
        ev = update(w, plan, t, applied[0] if applied else None)
        if ev is None:
            return None
        if not applied:
            applied.append(ev)
        out = {"kind": ev.kind, "step": t, "text": ev.text, "zones": [list(z) for z in ev.zones],
               "lifted": ev.lifted, "dropped": ev.dropped}
        if ev.kind == "CTO":
            out.update(added_targets=list(ev.added_targets), removed_targets=list(ev.removed_targets))
        if ev.added:
            out.update(robot=ev.added[0], code=ev.added[1])
        if ev.removed:
            out.update(robot=ev.removed)
        return out

    # a removal other than the default is part of the unit's id (and of its LLM call ids)
    rec = f"-{plan.removed_code}" if plan is not None and plan.removed_code not in (None, *removable(task.team)[:1]) \
        else ""
    learn = "+learn_zones" if s["mcts_learn_zones"] else ""  # not the paper's MCTS: its own unit
    learn += "+uniform_world" if s["mcts_world_prior"] == "uniform" else ""  # not the paper's LLM-MCTS
    uid = f"{task.id}/{s['method']}{learn}/{s['variation']}{rec}/r{s['run']}"
    cap = s["max_steps"] or task.max_steps
    if s["method"].startswith("mcts") or s["method"] == "llm_mcts":
        planner = _search(s, uid)
        log = run_joint_episode(world, planner.decide, max_steps=cap, variation=variation, observe=planner.observe)
        # search has no model; LLM-MCTS's prior is the model on the llm backend, the heuristic prior offline
        backend = backend_label(s["provider"], s["base_url"], s["model"]) \
            if s["method"] == "llm_mcts" and s["backend"] == "llm" else "heuristic"
    else:
        make = brain_maker(s)
        brains = {n: make(n, r.type.code) for n, r in world.robots.items()}
        if wrap_team is not None:
            brains = wrap_team(brains)
        log = run_episode(world, brains, max_steps=cap, text=task.text, config=_config(s),
                          variation=variation, brain_for=make, episode_id=uid, task_id=task.id,
                          record_decisions=record_decisions)
        backend = "/".join(dict.fromkeys(b.label for b in brains.values()))
    episode = _episode(s, task, world, log, backend, uid, cap, plan)
    if s["method"] == "llm_mcts":
        episode["world_prior"] = planner.prior.summary()  # the belief the search sampled from, and why
    return {"episode": episode, "steps": log.steps}, log


def _episode(s: dict[str, Any], task: Task, world: RobotWorld, log: EpisodeLog, backend: str, uid: str,
             cap: int, plan: VariationPlan | None = None) -> dict[str, Any]:
    n = len(log.participants)
    m = episode_metrics(log.steps, log.calls, n_robots=n, success=world.success(), ps=world.partial_success(),
                        ts=log.ts, max_steps=cap, report_cc=s["method"] not in NO_CC_METHODS)
    ablation = "+".join(k for k in ("history", "feedback", "leader", "reflection") if not s[k]) or "none"
    return {
        "version": VERSION, "unit": uid, "task": task.id, "kind": task.kind, "level": task.level, "team": task.team,
        "n_types": len(task.team.split("-")), "J": len(task.targets), "L": task.L, "N": task.N, "Y": task.Y,
        "D": task.D, "y": task.y, "objects": "unseen" if is_unseen(task) else "seen", "variation": s["variation"], "T": s["T"] if s["variation"] != "none" else 0,
        "zones": s["zones"] if s["variation"] == "IRZ" else 0, "method": s["method"], "ablation": ablation,
        "remove": plan.removed_code if plan is not None else None,
        "team_after": plan.team_after if plan is not None else task.team,
        "memory": s["memory"], "random_votes": float(s["random_votes"]), "backend": backend,
        "profile": s["profile"] if s["backend"] == "heuristic" else None, "model": s["model"],
        "seed": s["seed"], "run": s["run"], "instance": s["instance"], "max_steps": cap,
        "election_rounds": log.election_rounds, "referee": log.referee, "leader": log.leader,
        "leader_type": log.leader_type, "events": [e.get("kind") for e in log.events],
        **{k: v for k, v in m.items() if k not in ("success", "ps", "ts")},
        "success": bool(m["success"]), "ps": float(m["ps"]), "ts": int(m["ts"]),
    }


# -- what collablab.testing needs ----------------------------------------------------------------------
_EPISODE = {"type": "object",
            "required": ["version", "unit", "method", "backend", "success", "ps", "ts", "as_per_robot", "cc",
                         "team", "kind", "level", "variation"],
            "properties": {"version": {"const": VERSION}, "success": {"type": "boolean"},
                           "ps": {"type": "number", "minimum": 0, "maximum": 1},
                           "ts": {"type": "integer", "minimum": 0},
                           "as_per_robot": {"type": "number", "minimum": 0},
                           "cc": {"type": ["number", "null"], "minimum": 0}}}
_STEP = {"type": "object",
         "required": ["t", "step", "agent", "robot", "type", "action", "name", "kind", "ok"],
         "properties": {"t": {"type": "integer", "minimum": 1}, "step": {"type": "integer", "minimum": 0},
                        "agent": {"type": "integer", "minimum": 0}, "type": {"enum": ["Ma", "MoMa", "Mo", "UAV"]},
                        "ok": {"type": "boolean"},
                        "name": {"enum": ["navigate", "open", "pick", "place", "move", "communicate", "wait",
                                          "invalid"]}}}
RECORD_SCHEMA: dict[str, Any] = {"version": VERSION, "episode": _EPISODE, "step": _STEP}


class _Sabotaged:
    """The first robot's first action replaced by one naming an object that does not exist."""

    def __init__(self, brain: Brain) -> None:
        self.brain, self.label, self.first = brain, brain.label, True

    def __getattr__(self, name: str) -> Any:
        return getattr(self.brain, name)

    def act(self, ctx: Context) -> Reply:
        if self.first:
            self.first = False
            return Reply(text="pick(no_such_object_0)", value="pick(no_such_object_0)")
        return self.brain.act(ctx)

    def coela_plan(self, ctx: Context, options: list) -> Reply:
        """CoELA's first planning reply names an action on an object that does not exist: no option."""
        if self.first:
            self.first = False
            return Reply(text="Contents: pick(no_such_object_0)", invalid="the choice 'pick(no_such_object_0)' is "
                                                                          "not one of the options")
        return self.brain.coela_plan(ctx, options)

    def act_team(self, ctxs: list[Context]) -> Reply:
        """The central planner's first joint plan with the first robot's action made illegal."""
        reply = self.brain.act_team(ctxs)
        if self.first and ctxs:
            self.first = False
            joint = dict(reply.value) if not reply.invalid and isinstance(reply.value, dict) \
                else {c.name: "(no usable joint plan)" for c in ctxs}
            joint[ctxs[0].name] = "pick(no_such_object_0)"
            reply = replace(reply, value=joint, invalid=None)
        return reply


def sabotage(team: dict[str, Brain]) -> dict[str, Brain]:
    """The backends with the first robot's first action made illegal (a hallucinated object)."""
    first = next(iter(team))
    return {n: (_Sabotaged(b) if n == first else b) for n, b in team.items()}


def is_invalid(step: dict[str, Any]) -> bool:
    """A recorded invalid action: no readable action, one the robot's type does not have, or one
    naming something outside its scene graph (Pick Failed (2) / Navigation Failed (2))."""
    return step["name"] == "invalid" or step["kind"] in ("pick_failed_2", "navigation_failed_2")
