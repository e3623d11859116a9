"""One unit of the partner-information study from a flat spec (observe_share_predict.txt §4.1),
registered for the run grid as study ``partnr`` (:func:`run_spec`).

A unit is one task under one information condition with one pair of planners. Its records are
``{"episode": <summary and metrics>, "steps": [<one record per planning cycle>]}``
(:data:`RECORD_SCHEMA`). Decisions (ours; tested in tests/test_partnr_spec.py):

- **Tasks.** ``task_source`` ``generated`` draws from the seeded generator
  (:func:`.tasks.generate_task`; ``family`` ``mixed`` cycles the four families by ``instance``),
  ``file`` reads task ``instance`` of ``task_file`` (PARTNR field names), ``template`` instantiates
  template ``instance`` of ``template_file`` (PARTNR's instruction templates) in apartment
  ``apartment``.
- **Conditions.** ``oas``, ``ke``, ``oana`` switch the channels; ``observability`` is
  ``partial`` (Decoupled Partial Observability) or ``full`` (the control; ``ke`` must be off).
- **Planners.** ``backend`` ``heuristic`` is :class:`.offline.OfflinePlanner` with ``profile``
  (or ``agent_profiles`` = "robot,human"), the same in every condition; ``llm`` is PARTNR's
  zero-shot ReAct planner (:mod:`.llm_planner`) on ``model`` (or ``models`` = "robot,human") at
  ``base_url``, greedy by default (``temperature`` 0: the paper does not give its decoding),
  ``constrained`` auto | grammar | json_schema | none (auto: the grammar on llama.cpp and vLLM,
  PARTNR's ``constrained_generation: True``; nothing for API models, §A.1.2), ``llm_history``
  None | N >= 1 (how many earlier planning cycles each request's transcript shows; None, the
  default, is PARTNR's one growing transcript, a number keeps the first prompt and the last N
  cycles for a short context window; an ``llm_`` key, so notebook 07's ``llm_options`` sets it).
- **Limits.** ``max_cycles`` per agent (PARTNR's ``replanning_threshold`` 50), ``max_steps``.
- A failure that is not the model's (server down, no key) raises: the unit fails and a rerun
  retries it; a bad reply is a recorded invalid action (``invalid`` in its step record).
- **Why it failed.** An unsuccessful episode records ``failure`` (:func:`.explanations.explain`
  as a dict: propositions never satisfied, satisfied out of order, constraints broken) and its
  ``failure_reason``; a successful one records None in both.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from ...llm import THINKING
from ...agents.llm import ENDPOINT_DEFAULTS, backend_label, check_endpoint_keys, endpoint_client, endpoint_spec, live, per_agent
from ...runs.spec_checks import check_choice, check_int, with_defaults
from .calls import ToolCall
from .episode import Channels, Decision, Observation, Planner, run_episode
from .explanations import REASONS
from .llm_planner import LLMPlanner, check_history
from .metrics import agent_metrics, classify
from .offline import PROFILES, OfflinePlanner
from .tasks import FAMILIES, Task, generate_task, load_task, load_tasks

__all__ = ["BACKENDS", "DEFAULTS", "RECORD_SCHEMA", "SOURCES", "channels_of", "is_invalid", "make_planners", "resolve",
           "run_spec", "sabotage", "task_of", "validate"]

SOURCES = ("generated", "file", "template")
BACKENDS = ("heuristic", "llm")
OBSERVABILITY = ("partial", "full")
CONSTRAINED = ("auto", "grammar", "json_schema", "none")
VERSION = 1

DEFAULTS: dict[str, Any] = {
    "task_source": "generated",  # generated | file | template
    "family": "mixed",  # generated: rearrange | spatial | temporal | object_state | mixed
    "instance": 0,  # task index (generated: any >= 0; file/template: index into the file)
    "task_seed": 0,  # generator / apartment seed
    "scene_id": None,  # generated: None = a generated apartment; or a VirtualHome graph file (TestScene*_graph.json)
    "task_file": None,  # file: a json of task records with PARTNR's field names
    "template_file": None,  # template: PARTNR instruction templates (e.g. 20_val_object_states.json)
    "apartment": 0,  # template: which generated apartment
    "oas": False, "ke": False, "oana": False,
    "observability": "partial",  # partial | full
    "backend": "heuristic",  # heuristic | llm
    "profile": "default",  # heuristic: default | weak | strong
    "agent_profiles": None,  # heuristic: "robot,human" profiles
    "model": None, "models": None,  # llm: one model, or "robot_model,human_model"
    "base_url": None, "provider": "auto", "api_key_env": None,
    "llm_cache": None, "llm_cache_mode": None,
    # The paper gives no decoding settings (§A.1): greedy, and a budget a reasoning model's thoughts
    # fit in (the ReAct reply itself is a thought and one call; the stop word ends it).
    "temperature": 0.0, "max_tokens": 4096, "thinking": "auto", "constrained": "auto",
    "llm_history": None,  # None = PARTNR's whole transcript; N = the first prompt and the last N cycles
    "llm_max_concurrency": 2, "llm_timeout_s": 600.0, "llm_max_attempts": 4, **ENDPOINT_DEFAULTS,
    "max_cycles": 50, "max_steps": 20_000,
    "seed": 0, "run": 0,
}


def resolve(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec with defaults; ValueError naming a bad key or value (before any work)."""
    s = with_defaults(spec, DEFAULTS)
    check_choice(s, "task_source", SOURCES)
    check_choice(s, "observability", OBSERVABILITY)
    check_choice(s, "backend", BACKENDS)
    check_choice(s, "constrained", CONSTRAINED)  # on every backend: a typo is an error offline too
    check_choice(s, "thinking", THINKING)
    check_history(s["llm_history"], "llm_history")  # on every backend, like constrained
    for key in ("oas", "ke", "oana"):
        if not isinstance(s[key], bool):
            raise ValueError(f"{key}: must be true or false, got {s[key]!r}")
    for key, low in (("instance", 0), ("task_seed", 0), ("apartment", 0), ("max_cycles", 1), ("max_steps", 1),
                     ("seed", 0), ("run", 0), ("llm_max_concurrency", 1), ("llm_max_attempts", 1)):
        check_int(s, key, low)
    if s["task_source"] == "generated":
        check_choice(s, "family", (*FAMILIES, "mixed"))
        if s["scene_id"] is not None and not isinstance(s["scene_id"], str):
            raise ValueError(f"scene_id: None or a graph file path, got {s['scene_id']!r}")
    else:
        key = "task_file" if s["task_source"] == "file" else "template_file"
        if not isinstance(s[key], str) or not s[key]:
            raise ValueError(f"{key}: task_source {s['task_source']!r} needs a path")
    channels_of(s)
    if s["backend"] == "heuristic":
        check_choice(s, "profile", PROFILES)
        if s["agent_profiles"] is not None:
            if not isinstance(s["agent_profiles"], str):
                raise ValueError(f"agent_profiles: 'robot,human' profile names, got {s['agent_profiles']!r}")
            for p in per_agent(s["agent_profiles"], 2, "agent_profiles"):
                if p.strip() not in PROFILES:
                    raise ValueError(f"agent_profiles: {p.strip()!r}; allowed: {', '.join(PROFILES)}")
    else:
        _check_llm(s)
    return s


def _check_llm(s: dict[str, Any]) -> None:
    if not isinstance(s["model"], str) or not s["model"]:
        raise ValueError("model: backend 'llm' needs a model name, e.g. model='meta-llama/Llama-3.1-8B-Instruct'")
    if s["models"] is not None:
        if not isinstance(s["models"], str):
            raise ValueError(f"models: 'robot_model,human_model', got {s['models']!r}")
        per_agent(s["models"], 2, "models")
    check_endpoint_keys(s)


def channels_of(s: dict[str, Any]) -> Channels:
    """The information condition of a (resolved) spec."""
    return Channels(oas=s["oas"], ke=s["ke"], oana=s["oana"], full_obs=s["observability"] == "full")


@functools.lru_cache(maxsize=8)
def _file_tasks(path: str) -> tuple[Task, ...]:
    return tuple(load_tasks(path))


def task_of(s: dict[str, Any]) -> Task:
    """The task of a resolved spec (ValueError naming ``instance`` when out of range)."""
    if s["task_source"] == "generated":
        family = FAMILIES[s["instance"] % len(FAMILIES)] if s["family"] == "mixed" else s["family"]
        return load_task(generate_task(s["instance"], family, s["task_seed"], scene_id=s["scene_id"]))
    if s["task_source"] == "file":
        tasks = _file_tasks(s["task_file"])
        if s["instance"] >= len(tasks):
            raise ValueError(f"instance: {s['instance']} is out of range; {s['task_file']} has tasks 0..{len(tasks) - 1}")
        return tasks[s["instance"]]
    from .templates import instantiate, load_templates

    templates = load_templates(s["template_file"])
    if s["instance"] >= len(templates):
        raise ValueError(f"instance: {s['instance']} is out of range; {s['template_file']} has templates "
                         f"0..{len(templates) - 1}")
    return load_task(instantiate(templates[s["instance"]], s["apartment"], s["task_seed"]))


def validate(spec: dict[str, Any]) -> None:
    """Check a spec fully without running it (the run grid calls this before any unit starts)."""
    task_of(resolve(spec))


def _models(s: dict[str, Any]) -> list[str]:
    return [m.strip() for m in per_agent(s["models"], 2, "models")] if s["models"] else [s["model"]] * 2


def endpoints(spec: dict[str, Any]) -> list[Any]:
    """The model endpoints a spec calls (none offline or in replay mode), checked by the run grid
    before its first unit."""
    s = resolve(spec)
    return [] if s["backend"] == "heuristic" else live(s, [endpoint_spec(s, m) for m in _models(s)])


def make_planners(s: dict[str, Any]) -> list[Planner]:
    """Robot and human planners of a resolved spec."""
    if s["backend"] == "heuristic":
        names = [p.strip() for p in per_agent(s["agent_profiles"], 2, "agent_profiles")] if s["agent_profiles"] \
            else [s["profile"]] * 2
        return [OfflinePlanner(PROFILES[n], seed=s["seed"] * 1000 + s["instance"] + 7919 * s["run"], agent=a)
                for a, n in enumerate(names)]
    models = _models(s)
    provider = s["provider"] or "auto"  # auto: the server's kind, learned before the first request
    return [LLMPlanner(endpoint_client(s, m), constrained=s["constrained"], provider=provider,
                       temperature=s["temperature"], max_tokens=s["max_tokens"], history=s["llm_history"],
                       namespace=f"run{s['run']}/" if s["run"] else "", label=backend_label(s["provider"], s["base_url"], m))
            for m in models]


def _plain(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def run_spec(spec: dict[str, Any], wrap_team: Callable[[list[Planner]], list[Planner]] | None = None) -> dict[str, Any]:
    """Run one unit (see the module docstring); ``wrap_team`` lets conformance checks inject faults."""
    s = resolve(spec)
    task = task_of(s)
    planners = make_planners(s)
    if wrap_team is not None:
        planners = wrap_team(planners)
    ch = channels_of(s)
    result = run_episode(task, planners, ch, seed=s["seed"] * 1000 + s["instance"] + 7919 * s["run"],
                         max_cycles=s["max_cycles"], max_steps=s["max_steps"])
    m = agent_metrics(result, oana=ch.oana)
    kinds = classify(result.logs, result.completed_at)
    episode: dict[str, Any] = {
        "version": VERSION, "unit": task.episode_id, "task_source": s["task_source"], "family": task.family,
        "instance": s["instance"], "task_seed": s["task_seed"], "instruction": task.instruction,
        "condition": ch.name, "oas": ch.oas, "ke": ch.ke, "oana": ch.oana, "observability": s["observability"],
        "backend": "/".join(dict.fromkeys(p.label for p in planners)),
        "profile": s["profile"] if s["backend"] == "heuristic" else None, "model": s["model"], "models": s["models"],
        "seed": s["seed"], "run": s["run"], "max_cycles": s["max_cycles"], "max_steps": s["max_steps"],
        "satisfied_at": list(result.satisfied_at),
        "failure_reason": result.failure["reason"] if result.failure else None, "failure": result.failure,
        "invalid_actions": sum(log.invalid for log in result.logs),
        "truncated_replies": sum(log.invalid_cause == "truncated" for log in result.logs),
    }
    episode.update({k: _plain(v) for k, v in m["team"].items()})
    for role in ("robot", "human"):
        episode.update({f"{role}_{k}": _plain(v) for k, v in m[role].items()})
    steps = []
    seen = [0, 0]
    for log, kind in zip(result.logs, kinds):
        steps.append({"step": seen[log.agent], **log.to_dict(), "kind": kind})
        seen[log.agent] += 1
    return {"episode": episode, "steps": steps}


# -- what collablab.testing needs ----------------------------------------------------------------------
_EPISODE = {"type": "object",
            "required": ["version", "unit", "condition", "backend", "success", "percent_complete", "simulation_steps",
                         "planning_cycles", "extraneous_effort", "task_offloading", "robot_planning_cycles",
                         "human_planning_cycles"],
            "properties": {"version": {"const": VERSION}, "success": {"type": "boolean"},
                           "percent_complete": {"type": "number", "minimum": 0, "maximum": 1},
                           "simulation_steps": {"type": "integer", "minimum": 0},
                           "planning_cycles": {"type": "integer", "minimum": 0},
                           "invalid_actions": {"type": "integer", "minimum": 0},
                           "truncated_replies": {"type": "integer", "minimum": 0},
                           "failure_reason": {"enum": [None, *REASONS]},
                           "failure": {"type": ["object", "null"],
                                       "required": ["reason", "never_satisfied", "out_of_order", "broken"]},
                           "extraneous_effort": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                           "task_offloading": {"type": ["number", "null"], "minimum": 0, "maximum": 1}}}
_STEP = {"type": "object",
         "required": ["step", "agent", "role", "cycle", "call", "start", "end", "ok", "feedback", "thought", "kind",
                      "invalid"],
         "properties": {"step": {"type": "integer", "minimum": 0}, "agent": {"enum": [0, 1]},
                        "role": {"enum": ["robot", "human"]}, "call": {"type": ["string", "null"]},
                        "ok": {"type": "boolean"}, "invalid": {"type": "boolean"},
                        "invalid_cause": {"enum": [None, "truncated", "reply", "precondition"]},
                        "kind": {"enum": ["advancing", "supporting", "extraneous", "idle"]},
                        "start": {"type": "integer", "minimum": 0}, "end": {"type": "integer", "minimum": 0}}}
RECORD_SCHEMA: dict[str, Any] = {"version": VERSION, "episode": _EPISODE, "step": _STEP}


class _Sabotaged:
    """Agent 0's first decision replaced by a call naming an entity that does not exist."""

    def __init__(self, planner: Planner) -> None:
        self.planner, self.label, self.first = planner, planner.label, True

    def decide(self, obs: Observation) -> Decision:
        if self.first:
            self.first = False
            return Decision(ToolCall("Pick", ("no_such_object_0",)), "sabotaged", raw="Pick[no_such_object_0]")
        return self.planner.decide(obs)


def sabotage(team: list[Planner]) -> list[Planner]:
    """The planners with agent 0's first call made illegal (a hallucinated object)."""
    return [_Sabotaged(team[0]), *team[1:]]


def is_invalid(step: dict[str, Any]) -> bool:
    """A recorded invalid action: no readable call, or one the agent could not make (not its
    tool, or an entity outside its world graph)."""
    return bool(step["invalid"])
