"""One MECoBench episode from a flat spec dict: what grids and notebooks call.

A spec names the task (``task_id`` from our suite or a task file), the team (``n_agents``,
``protocol``, per-agent ``profile`` or ``policy``), the prior variant, budget and seed.
Unknown keys and bad values are rejected before anything runs.

Policy ``"llm"`` runs :class:`~collablab.agents.llm_policy.LLMPolicy` (MECoBench's prompts)
against an OpenAI-compatible endpoint: ``model`` (``"a,b"`` per agent), ``base_url`` (None:
the OpenAI API), ``provider`` (label prefix), ``endpoint`` (alias), ``api_key_env`` (the
variable's NAME; keys never enter specs or records), ``llm_cache``/``llm_cache_mode``,
``temperature``, ``max_tokens``, ``structured_mode``, ``multimodal``, ``grounding``; see
``LLM_DEFAULTS`` and docs/llm_backends.md. Episode records name the backend
(``openai:gpt-4o-mini``, ``vllm:Qwen/...``, ``llamacpp:smollm2-135m-instruct``).
"""

from __future__ import annotations

import functools
from typing import Any

from .agents.heuristic import HeuristicPolicy
from .agents.profiles import PROFILES
from .agents.llm_policy import LLM_DEFAULTS, check_llm_spec, make_llm_policies
from .agents.oracle import OracleTeam
from .agents.team import EmbodiedTeam
from .paths import outputs_dir
from .episode import EpisodeConfig, check_config, run_episode
from .protocols import PROTOCOLS, make_protocol
from .tasks.mecobench import PRIORS, Task, load_tasks
from .tasks.suite import load_suite

DEFAULTS: dict[str, Any] = {
    "task_source": "suite",  # "suite" (our generated tasks) or a path to a MECoBench task file
    "suite_seed": 0,
    "task_id": None,
    "n_agents": 2,
    "protocol": "broadcast",
    "policy": "heuristic",  # "heuristic" | "oracle" | "llm" (LLM keys below)
    "profile": "medium",  # heuristic profile; "a,b,c" gives one per agent (mixed teams)
    "prior": "full",
    "budget": None,
    "seed": 0,
    **LLM_DEFAULTS,  # model, base_url, provider, endpoint, api_key_env, llm_cache(_mode), ... (policy "llm")
}
POLICIES = ("heuristic", "oracle", "llm")


@functools.lru_cache(maxsize=8)
def _tasks(source: str, suite_seed: int) -> dict[str, Task]:
    if source == "suite":
        tasks = load_suite(suite_seed, cache_dir=outputs_dir() / "tasks")
    else:
        tasks = load_tasks(source)
    return {t.task_id: t for t in tasks}


def resolve(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec with defaults filled in; raises ValueError naming a bad key or value."""
    unknown = set(spec) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"spec: unknown key(s) {sorted(unknown)}; allowed: {', '.join(DEFAULTS)}")
    s = {**DEFAULTS, **spec}
    if s["task_id"] is None:
        raise ValueError("spec: task_id is required")
    if s["protocol"] not in PROTOCOLS:
        raise ValueError(f"protocol: {s['protocol']!r} is not allowed; allowed: {', '.join(PROTOCOLS)}")
    if s["policy"] not in POLICIES:
        raise ValueError(f"policy: {s['policy']!r} is not allowed; allowed: {', '.join(POLICIES)}")
    if s["prior"] not in PRIORS:
        raise ValueError(f"prior: {s['prior']!r} is not allowed; allowed: {', '.join(PRIORS)}")
    for p in str(s["profile"]).split(","):
        if p not in PROFILES:
            raise ValueError(f"profile: {p!r} is not allowed; allowed: {', '.join(PROFILES)}")
    make_protocol(s["protocol"], s["n_agents"])
    if s["policy"] == "llm":
        check_llm_spec(s)
    return s


def validate(spec: dict[str, Any]) -> None:
    """Check a spec fully (task exists, team size and budget fit) without running it."""
    s = resolve(spec)
    task = _task(s)
    check_config(task, _config(s))


def _task(s: dict[str, Any]) -> Task:
    tasks = _tasks(str(s["task_source"]), int(s["suite_seed"]))
    tid = str(s["task_id"])
    if tid not in tasks:
        some = ", ".join(list(tasks)[:6])
        raise ValueError(f"task_id: {tid!r} is not in {s['task_source']}; e.g. {some}, ...")
    return tasks[tid]


def _config(s: dict[str, Any]) -> EpisodeConfig:
    labels = {"protocol": s["protocol"], "profile": s["profile"], "policy": s["policy"]}
    if s["policy"] == "llm":
        from .llm import default_cache_mode

        labels.update(profile=None, model=s["model"],
                      llm_cache_mode=s["llm_cache_mode"] or default_cache_mode())
    return EpisodeConfig(n_agents=s["n_agents"], budget=s["budget"], seed=s["seed"], prior=s["prior"],
                         labels=labels)


def make_team(s: dict[str, Any]):
    if s["policy"] == "oracle":
        return OracleTeam()
    if s["policy"] == "llm":
        return EmbodiedTeam(make_llm_policies(s), make_protocol(s["protocol"], s["n_agents"]), prior=s["prior"])
    profiles = str(s["profile"]).split(",")
    if len(profiles) == 1:
        profiles = profiles * s["n_agents"]
    if len(profiles) != s["n_agents"]:
        raise ValueError(f"profile: {len(profiles)} profiles for {s['n_agents']} agents")
    policies = [HeuristicPolicy(p) for p in profiles]
    return EmbodiedTeam(policies, make_protocol(s["protocol"], s["n_agents"]), prior=s["prior"])


def run_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """Run one episode; returns ``{"episode": ..., "steps": [...]}`` records."""
    s = resolve(spec)
    task = _task(s)
    who = s["profile"] if s["policy"] != "llm" else "llm=" + str(s["model"]).replace("/", "_")
    eid = f"{task.task_id}-n{s['n_agents']}-{s['protocol']}-{s['prior']}-{who}-s{s['seed']}"
    return run_episode(task, make_team(s), _config(s), episode_id=eid)
