"""One MECoBench episode from a flat spec dict: what grids and notebooks call.

A spec names the task (``task_id`` from our suite or a task file), the team (``n_agents``,
``protocol``, per-agent ``profile`` or ``policy``), the prior variant, budget and seed.
Unknown keys and bad values are rejected before anything runs.

Policy ``"llm"`` runs :class:`~collablab.agents.llm.LLMPolicy` (MECoBench's prompts)
against an OpenAI-compatible endpoint: ``model`` (``"a,b"`` per agent), ``base_url`` (None:
the OpenAI API), ``provider`` (label prefix), ``endpoint`` (alias), ``api_key_env`` (the
variable's NAME; keys never enter specs or records), ``llm_cache``/``llm_cache_mode``,
``temperature``, ``max_tokens``, ``structured_mode``, ``pipeline`` (paper | assisted),
``multimodal``, ``grounding``; see
``LLM_DEFAULTS`` and docs/llm_backends.md. The protocol's open orderings are keys too
(``memory_writes``, ``leader_routing``, ``discuss_consensus``, ``discuss_max_rounds``,
``discuss_unreadable``: :data:`collablab.protocols.PROTOCOL_OPTIONS`); a record names those that
differ from the defaults. Episode records name the backend
(``openai:gpt-4o-mini``, ``vllm:Qwen/...``, ``llamacpp:smollm2-135m-instruct``).
"""

from __future__ import annotations

import functools
from typing import Any

from ...agents import POLICIES, policy_kind
from ...protocols import PROTOCOL_DEFAULTS, EmbodiedTeam, Team, make_protocol, options_for, protocol_class
from ...runs.spec_checks import check_choice, check_int, with_defaults
from ...world.household import SEEN_RULES
from .episode import EpisodeConfig, check_config, run_episode
from .oracle import OracleTeam
from .suite import load_suite, suite_cache_dir
from .tasks import PRIORS, Task, load_task_file, load_tasks

#: Teams this study offers besides the policies of :data:`collablab.agents.POLICIES`.
STUDY_TEAMS = {"oracle": OracleTeam}
#: Every value the ``policy`` key takes (the notebooks' ``backend`` parameter takes the same).
POLICY_NAMES = (*POLICIES, *STUDY_TEAMS)

DEFAULTS: dict[str, Any] = {
    "task_source": "suite",  # "suite" (our generated tasks) or a path to a MECoBench task file
    "suite_seed": 0,
    "task_id": None,
    "n_agents": 2,
    "protocol": "broadcast",
    "policy": "heuristic",  # one of POLICY_NAMES: heuristic | llm | oracle
    "prior": "full",
    "budget": None,
    "seed": 0,
    # what counts as seen (world.household.SEEN_RULES): "formula" (size and distance, the default:
    # benchmarks/seen_agreement.py) or "rendered" (the camera's visible pixels, so the text
    # observation, the images and what walk/grab allow agree; about 50x slower per step)
    "seen": "formula",
}
DEFAULTS.update(PROTOCOL_DEFAULTS)  # memory_writes, leader_routing, discuss_*: the paper's readings
for _kind in POLICIES.values():  # profile (heuristic); model, base_url, ... (llm): see each policy's DEFAULTS
    DEFAULTS.update(_kind.defaults)


@functools.lru_cache(maxsize=8)
def tasks_of(source: str, suite_seed: int = 0) -> dict[str, Task]:
    """Good tasks by id: our generated suite (``source="suite"``) or a MECoBench task file (its
    rejected records are left out with one warning; :func:`task_of` quotes why)."""
    if source == "suite":
        tasks = load_suite(suite_seed, cache_dir=suite_cache_dir())
    else:
        tasks = load_tasks(source)
    return {t.task_id: t for t in tasks}


def resolve(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec with defaults filled in; raises ValueError naming a bad key or value."""
    s = with_defaults(spec, DEFAULTS)
    if s["task_id"] is None:
        raise ValueError("spec: task_id is required")
    for key, low, none in (("n_agents", 1, False), ("seed", 0, False), ("suite_seed", 0, False), ("budget", 1, True)):
        check_int(s, key, low, allow_none=none)
    if s["policy"] not in POLICY_NAMES:
        raise ValueError(f"policy: {s['policy']!r} is not allowed; allowed: {', '.join(POLICY_NAMES)}")
    protocol_class(s["protocol"])
    if s["prior"] not in PRIORS:
        raise ValueError(f"prior: {s['prior']!r} is not allowed; allowed: {', '.join(PRIORS)}")
    check_choice(s, "seen", SEEN_RULES)
    make_protocol(s["protocol"], s["n_agents"], **protocol_options(s))  # options, team size against the protocol
    if s["policy"] in POLICIES:
        policy_kind(s["policy"]).check(s)
    return s


def protocol_options(s: dict[str, Any]) -> dict[str, Any]:
    """The spec's protocol options (:data:`collablab.protocols.PROTOCOL_OPTIONS` keys)."""
    return {k: s[k] for k in PROTOCOL_DEFAULTS}


def changed_options(s: dict[str, Any]) -> dict[str, Any]:
    """The options that set the spec's protocol, and the ``seen`` rule, where they differ from the
    defaults: records name them (labels, episode id); default runs carry none, so their records
    stay as they were."""
    out = {k: v for k, v in options_for(s["protocol"], s).items() if v != PROTOCOL_DEFAULTS[k]}
    return out | ({"seen": s["seen"]} if s["seen"] != DEFAULTS["seen"] else {})


def validate(spec: dict[str, Any]) -> None:
    """Check a spec fully (task exists, team size and budget fit) without running it."""
    s = resolve(spec)
    check_config(task_of(s), config_of(s))


def task_of(s: dict[str, Any]) -> Task:
    """The task a resolved spec names; ValueError with examples when it does not exist, or
    quoting why the task file's record of that id was rejected (the grid runs the others)."""
    source = str(s["task_source"])
    tasks = tasks_of(source, int(s["suite_seed"]))
    tid = str(s["task_id"])
    if tid not in tasks:
        rejected = {} if source == "suite" else load_task_file(source).rejected  # error path only
        if tid in rejected:
            raise ValueError(f"task_id: {tid!r} in {source} was rejected: {rejected[tid]}")
        some = ", ".join(list(tasks)[:6])
        raise ValueError(f"task_id: {tid!r} is not in {source}; e.g. {some}, ...")
    return tasks[tid]


def config_of(s: dict[str, Any]) -> EpisodeConfig:
    """The episode settings of a resolved spec, with the labels its records carry."""
    labels = {"protocol": s["protocol"], "profile": s["profile"], "policy": s["policy"], **changed_options(s)}
    if s["policy"] in POLICIES:
        labels.update(policy_kind(s["policy"]).labels(s))
    return EpisodeConfig(n_agents=s["n_agents"], budget=s["budget"], seed=s["seed"], prior=s["prior"],
                         labels=labels, seen=s["seen"])


def make_team(s: dict[str, Any]) -> Team:
    """The team of a resolved spec: a study team (the oracle) or policies under a protocol."""
    if s["policy"] in STUDY_TEAMS:
        return STUDY_TEAMS[s["policy"]]()
    policies = policy_kind(s["policy"]).make(s)
    protocol = make_protocol(s["protocol"], s["n_agents"], **protocol_options(s))
    return EmbodiedTeam(policies, protocol, prior=s["prior"])


def backends(s: dict[str, Any]) -> list[str]:
    """The backend labels a resolved spec's records carry (``heuristic``, ``oracle``, ``vllm:...``)."""
    return policy_kind(s["policy"]).backends(s) if s["policy"] in POLICIES else [s["policy"]]


def endpoints(spec: dict[str, Any]) -> list[Any]:
    """The model endpoints a spec's team calls (none offline or in replay mode): the run grid checks
    them (key, server, model served) before its first episode."""
    s = resolve(spec)
    return policy_kind(s["policy"]).endpoints(s) if s["policy"] in POLICIES else []


def episode_id(s: dict[str, Any]) -> str:
    """A readable id: task, team size, protocol, prior, who plays, seed."""
    who = "llm=" + str(s["model"]).replace("/", "_") if s["policy"] == "llm" else s["profile"]
    opts = "".join(f"-{k}={v}" for k, v in changed_options(s).items())
    return f"{s['task_id']}-n{s['n_agents']}-{s['protocol']}{opts}-{s['prior']}-{who}-s{s['seed']}"


def run_spec(spec: dict[str, Any], wrap_team: Any = None) -> dict[str, Any]:
    """Run one episode; returns ``{"episode": ..., "steps": [...]}`` records.

    ``wrap_team`` (team -> team) lets conformance checks inject faults (``collablab.testing``).
    """
    s = resolve(spec)
    team = make_team(s)
    if wrap_team is not None:
        team = wrap_team(team)
    return run_episode(task_of(s), team, config_of(s), episode_id=episode_id(s))
