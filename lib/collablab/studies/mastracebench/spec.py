"""One MASTraceBench unit of work from a flat spec dict: what grids and notebooks call.

A spec names the task (``task``, Table 1), the method (``method``, Tables 2 and 9), which
instance (``instance``: an index into the task's instances, or for a game into its episodes) and
which repeat (``run``); the team (``proposers``, ``rounds``, per-agent ``agent_profiles`` offline
or ``models`` with an endpoint); and the backend (``backend``: ``heuristic`` or ``llm``).
Unknown keys and bad values are rejected, naming the key and the allowed values, before any
call is made.

One spec is one static evaluation unit (MAPF, OptionGen, EvidenceChain: one trajectory) or one
game episode (Gomoku, Negotiation, TacticDuel: one trajectory per decision of the method's
player against the fixed Single-Agent opponent, §4.1). :func:`run_spec` returns
``{"episode": <unit summary>, "steps": [<trajectory records>]}`` (:data:`RECORD_SCHEMA`), the
shape the run grid stores and resumes.

Decisions (ours; tested in tests/test_mastracebench_spec.py):

- **Instances.** MAPF's 157 are the paper's 2-robot 5x5 bottleneck (index 0) and 156 generated
  maps (:func:`~.tasks.generate_mapf`, seed ``instance_seed``); EvidenceChain's 100 are
  generated; OptionGen's come from the user's RACE copy (``race_path``: RACE cannot be
  shipped); Gomoku 50 games (25 as black, 25 as white), TacticDuel 50 duels, Negotiation 100
  scenarios each played twice with the sides' player roles and first proposer exchanged (200
  episodes; index ``2 s + p``, p the MAS's player; episodes.py). A Negotiation record's episode
  also counts the method's accept/reject runs (``responses``, ``response_tokens``), which are
  no units and not in TC.
  A smaller run takes a prefix of these lists, so its units are the paper's first units.
- **Runs.** ``run`` is the repeat index (the appendix averages static tasks over 3 runs). It
  is written in every record; an LLM run ``r > 0`` keys its cached calls apart from run 0
  (``LLMBackend.namespace``) and the heuristic draws from seed ``(seed, run)``.
- **Inference settings** (appendix, "Model and Inference Settings": "The sampling temperature is
  set to 1.0 ... max_tokens=16,384. For Qwen3-32B, thinking mode is enabled on MAPF and Gomoku
  ... and disabled on the other four benchmarks"): MAS calls at ``temperature`` 1.0 with
  ``max_tokens`` 16,384; Negotiation's acceptance probes and OptionGen's judge at 0.
  ``thinking``: ``"paper"`` (default) asks for thinking on MAPF and Gomoku and for none on the
  other tasks, on every provider (the floor translates it: :mod:`collablab.llm.wire`);
  ``"on"``/``"off"`` on every task; ``"auto"`` sends nothing (the model's default).
- **OptionGen's judge** (eq. 10) is the rule judge offline and the backbone on an LLM backend,
  unless ``judge_model`` (and ``judge_base_url``) names another model, as the paper's Qwen3-32B
  judge is one fixed model for every evaluated backbone. Its calls and tokens are recorded apart
  from the MAS's (``Call.kind == "score_judge"``, ``Trajectory.scorer``).
- **Heterogeneous teams** (Table 4): ``agent_profiles`` (``"strong,medium,weak"``) gives agent
  index ``k`` profile ``k`` offline; ``models`` (``"a,b,c"``) gives proposer ``agentk`` model
  ``k`` on an LLM backend. Function agents (validators, reviewers) with index ``k`` share
  profile ``k``: the heuristic knows agents by index only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ...agents.llm import ENDPOINT_DEFAULTS, backend_label, check_endpoint_keys, endpoint_client, endpoint_spec, live, per_agent
from ...llm import ResponseCache
from ...runs.spec_checks import check_choice, check_int, with_defaults
from . import episodes as EP
from .llm_backend import LLMBackend
from .methods import METHODS, MethodConfig, run
from .offline import PROFILES, HeuristicBackend
from .roles import Backend, Reply, Request
from .tasks import TASKS, bottleneck_5x5, generate_evidence, generate_mapf
from .trajectory import (EPISODE_SCHEMA, TRAJECTORY_SCHEMA, TRAJECTORY_VERSION, Trajectory, parse_call_id)

__all__ = ["BACKENDS", "DEFAULTS", "DYNAMIC_TASKS", "PAPER_COUNTS", "RECORD_SCHEMA", "STATIC_TASKS", "TASK_NAMES",
           "TASK_ORDER", "THINKING", "THINKING_TASKS", "instance_count", "is_invalid", "make_backend",
           "method_config", "resolve", "run_spec", "sabotage", "trajectories_of", "validate"]

#: Table 1's order: static tasks, then dynamic ones.
TASK_ORDER = ("mapf", "option_gen", "evidence_chain", "gomoku", "negotiation", "tactic_duel")
#: The tasks as the paper names them (Table 1), for headings, figures and sentences.
TASK_NAMES = {"mapf": "MAPF", "option_gen": "OptionGen", "evidence_chain": "EvidenceChain", "gomoku": "Gomoku",
              "negotiation": "Negotiation", "tactic_duel": "TacticDuel"}
STATIC_TASKS = TASK_ORDER[:3]
DYNAMIC_TASKS = TASK_ORDER[3:]
#: Units per task in the paper (Table 1; Negotiation: 100 scenarios x 2 first proposers).
PAPER_COUNTS = {"mapf": 157, "option_gen": 235, "evidence_chain": 100, "gomoku": 50, "negotiation": 200,
                "tactic_duel": 50}
BACKENDS = ("heuristic", "llm")
THINKING = ("paper", "on", "off", "auto")
#: Tasks run with thinking mode in the paper (appendix, "Model and Inference Settings").
THINKING_TASKS = ("mapf", "gomoku")

DEFAULTS: dict[str, Any] = {
    "task": None,  # one of TASK_ORDER
    "method": None,  # one of methods.METHODS
    "instance": None,  # index into the task's instances (games: episodes)
    "instance_seed": 0,  # generator seed of MAPF/EvidenceChain instances and game configurations
    "race_path": None,  # OptionGen: the user's RACE copy (directory or JSON/JSONL file)
    "run": 0,  # repeat index (static tasks are averaged over 3 runs in the paper)
    "seed": 0,  # tie-breaks and heuristic draws
    "proposers": 3,  # Proposer Agents of multi-proposer methods (Table 4's P)
    "rounds": 1,  # interaction rounds of Int./Agg. Debate and MAPR (Table 4's R)
    "setting": None,  # a label for the configuration (e.g. "3P+1R", "Scale-Het."); recorded only
    "max_decisions": None,  # games: cap on the method's decisions (None: episodes.MAX_DECISIONS)
    "backend": "heuristic",  # heuristic | llm
    "profile": "medium",  # heuristic: strong | medium | weak
    "agent_profiles": None,  # heuristic: "strong,medium,weak" = one profile per agent index
    "model": None,  # llm: the backbone (every role, the opponent and the fallback)
    "models": None,  # llm: "a,b,c" = one model per proposer (agent0, agent1, ...)
    "base_url": None,  # llm: None = the OpenAI API; e.g. http://127.0.0.1:8000/v1 for `vllm serve`
    "provider": "auto",  # llm: label prefix openai | vllm | llamacpp | compat (auto: openai without base_url)
    "api_key_env": None,  # llm: NAME of the key's variable (None: OPENAI_API_KEY for OpenAI, else no key)
    "llm_cache": None,  # llm: cache file (None: $COLLABLAB_LLM_CACHE or outputs/llm_cache.sqlite)
    "llm_cache_mode": None,  # llm: rw | replay | off
    "temperature": 1.0,  # llm: MAS calls (appendix); probes and the judge run at 0
    "max_tokens": 16384,  # llm: per call (appendix: max_tokens=16,384)
    "thinking": "paper",  # llm: paper | on | off | auto (module docstring)
    "llm_max_concurrency": 4,
    "llm_timeout_s": 600.0,
    "llm_max_attempts": 4,
    **ENDPOINT_DEFAULTS,  # llm: llm_replicas, llm_extra_body, llm_outage_wait_s
    "judge_model": None,  # OptionGen: the LLM judge's model (None: the backbone; the heuristic: the rule judge)
    "judge_base_url": None,  # OptionGen: the judge's endpoint (None: base_url)
}


def instance_count(task: str, race_path: str | None = None) -> int:
    """How many units ``task`` has: the paper's count (OptionGen: what the user's RACE copy holds,
    at most 235)."""
    if task == "option_gen":
        return len(_option_items(_need_race(race_path)))
    return PAPER_COUNTS[task]


def _need_race(race_path: str | None) -> str:
    if not race_path:
        raise ValueError("race_path: OptionGen reads RACE items from a copy you give (RACE cannot be shipped); "
                         "set race_path to its folder or JSON/JSONL file")
    return str(race_path)


def resolve(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec with defaults filled in; ValueError naming a bad key or value."""
    s = with_defaults(spec, DEFAULTS)
    check_choice(s, "task", TASK_ORDER)
    check_choice(s, "method", METHODS)
    check_choice(s, "backend", BACKENDS)
    check_choice(s, "thinking", THINKING)  # on every backend: a typo is an error offline too
    for key, low in (("instance", 0), ("instance_seed", 0), ("run", 0), ("seed", 0), ("proposers", 1),
                     ("rounds", 0), ("llm_max_concurrency", 1), ("llm_max_attempts", 1)):
        check_int(s, key, low)
    check_int(s, "max_decisions", 1, allow_none=True)
    n = instance_count(s["task"], s["race_path"])
    if s["instance"] >= n:
        raise ValueError(f"instance: {s['instance']} is out of range; {s['task']} has instances 0..{n - 1}")
    if s["judge_model"] is not None and not (isinstance(s["judge_model"], str) and s["judge_model"]):
        raise ValueError(f"judge_model: a model name or None, got {s['judge_model']!r}")
    if s["judge_base_url"] is not None and not (isinstance(s["judge_base_url"], str)
                                                and s["judge_base_url"].startswith(("http://", "https://"))):
        raise ValueError(f"judge_base_url: {s['judge_base_url']!r} must start with http:// or https://")
    if s["backend"] == "heuristic":
        check_choice(s, "profile", PROFILES)
        for p in s["agent_profiles"].split(",") if s["agent_profiles"] else []:
            if p.strip() not in PROFILES:
                raise ValueError(f"agent_profiles: {p.strip()!r} is not allowed; allowed: {', '.join(PROFILES)} "
                                 "(comma-separated, one per agent)")
    else:
        _check_llm(s)
    method_config(s)  # raises naming a bad team setting
    return s


def _check_llm(s: dict[str, Any]) -> None:
    if not isinstance(s["model"], str) or not s["model"]:
        raise ValueError("model: backend 'llm' needs a model name, e.g. model='Qwen/Qwen3-32B'")
    if s["models"] is not None:
        if not isinstance(s["models"], str) or not all(m.strip() for m in s["models"].split(",")):
            raise ValueError(f"models: one model name per proposer, comma-separated (e.g. 'a,b,c'), got {s['models']!r}")
        per_agent(s["models"], s["proposers"], "models")
    check_endpoint_keys(s, THINKING)


def validate(spec: dict[str, Any]) -> None:
    """Check a spec fully without running it (the run grid calls this before any unit starts);
    :func:`resolve` already reads OptionGen's RACE items to check the instance index."""
    resolve(spec)


def method_config(s: dict[str, Any]) -> MethodConfig:
    """The method configuration of a resolved spec (appendix defaults, Table 4's P and R)."""
    models = {}
    if s["backend"] == "llm" and s["models"]:
        models = {f"agent{k}": m for k, m in enumerate(per_agent(s["models"], s["proposers"], "models"))}
    return MethodConfig(proposers=s["proposers"], rounds=s["rounds"], seed=s["seed"], run=s["run"], models=models)


# -- instances ----------------------------------------------------------------------------------

@functools.lru_cache(maxsize=8)
def _static_instances(task: str, seed: int) -> tuple[Any, ...]:
    if task == "mapf":
        return (bottleneck_5x5(), *generate_mapf(PAPER_COUNTS["mapf"] - 1, seed))
    return tuple(generate_evidence(PAPER_COUNTS["evidence_chain"], seed))


@functools.lru_cache(maxsize=4)
def _option_items(race_path: str) -> tuple[Any, ...]:
    from .tasks.option_gen import load_race

    return tuple(load_race(race_path, n=PAPER_COUNTS["option_gen"]))


@functools.lru_cache(maxsize=8)
def _games(task: str, seed: int) -> tuple[Any, ...]:
    n = PAPER_COUNTS[task] // 2 if task == "negotiation" else PAPER_COUNTS[task]
    return tuple(EP.episode_configs(task, n, seed))


def _instance(s: dict[str, Any]) -> tuple[Any, str]:
    """(instance, its id) of a static spec."""
    if s["task"] == "option_gen":
        item = _option_items(s["race_path"])[s["instance"]]
        return item, str(item.id)
    inst = _static_instances(s["task"], s["instance_seed"])[s["instance"]]
    return inst, str(inst.name)


# -- backends -----------------------------------------------------------------------------------

def thinking_of(s: dict[str, Any]) -> str:
    """The ``thinking`` a resolved spec's method calls send: ``paper`` is on for MAPF and Gomoku
    and off for the other tasks (module docstring)."""
    if s["thinking"] == "paper":
        return "on" if s["task"] in THINKING_TASKS else "off"
    return s["thinking"]


def _cache(s: dict[str, Any]) -> ResponseCache:
    return ResponseCache(s["llm_cache"], s["llm_cache_mode"])


def endpoints(spec: dict[str, Any]) -> list[Any]:
    """The model endpoints a spec calls: the backbone, the method's other models and the OptionGen
    judge (none offline or in replay mode), checked by the run grid before its first unit."""
    s = resolve(spec)
    if s["backend"] == "heuristic":
        return []
    models = [s["model"], *sorted(set(method_config(s).models.values()))]
    out = [endpoint_spec(s, m, s["base_url"]) for m in models]
    if s["task"] == "option_gen" and s["judge_model"]:
        out.append(endpoint_spec(s, s["judge_model"], s["judge_base_url"] or s["base_url"]))
    return live(s, out)


def make_backend(s: dict[str, Any]) -> Backend:
    """The backend of a resolved spec: the heuristic with its profiles, or one LLM client per model."""
    if s["backend"] == "heuristic":
        profiles = None
        if s["agent_profiles"]:
            profiles = {k: p.strip() for k, p in enumerate(s["agent_profiles"].split(","))}
        return HeuristicBackend(profile=s["profile"], seed=s["seed"], agent_profiles=profiles, run=s["run"])
    cache = _cache(s)
    models = sorted(set(method_config(s).models.values()))
    labels = [backend_label(s["provider"], s["base_url"], m) for m in [s["model"], *models]]
    return LLMBackend(endpoint_client(s, s["model"], s["base_url"], cache),
                      clients={m: endpoint_client(s, m, s["base_url"], cache) for m in models}, temperature=float(s["temperature"]),
                      max_tokens=s["max_tokens"], label=",".join(dict.fromkeys(labels)),
                      thinking=thinking_of(s), namespace=f"run{s['run']}" if s["run"] else "")


# -- one unit -----------------------------------------------------------------------------------

def _task_object(s: dict[str, Any], backend: Backend) -> Any:
    if s["task"] != "option_gen":
        return TASKS[s["task"]]()
    from .tasks.option_gen import LLMJudge, LLMRubricBuilder, OptionGenTask, RubricCache, judge_for

    if not s["judge_model"]:
        return OptionGenTask(judge=judge_for(backend))
    client = endpoint_client(s, s["judge_model"], s["judge_base_url"] or s["base_url"], _cache(s))
    return OptionGenTask(judge=LLMJudge(client, RubricCache(LLMRubricBuilder(client))))


def _step(k: int, t: Trajectory) -> dict[str, Any]:
    return {"step": k, "agent": 0, **t.to_dict()}


def run_spec(spec: dict[str, Any], wrap_team: Callable[[Backend], Backend] | None = None) -> dict[str, Any]:
    """Run one unit; returns ``{"episode": ..., "steps": [trajectory records]}``.

    ``wrap_team`` (backend -> backend) lets conformance checks inject faults (``collablab.testing``).
    """
    s = resolve(spec)
    backend = make_backend(s)
    if wrap_team is not None:
        backend = wrap_team(backend)
    cfg = method_config(s)
    opponent_tokens = 0
    responses: list[Trajectory] = []  # Negotiation: the method's accept/reject runs (no units, not in TC)
    if s["task"] in STATIC_TASKS:
        inst, iid = _instance(s)
        trajs = [run(s["method"], _task_object(s, backend), inst, iid, backend, cfg)]
        score = trajs[0].answer.score
    else:
        game = _games(s["task"], s["instance_seed"])[s["instance"]]
        iid = EP.episode_id(s["task"], game)
        trajs, result, opponent = EP.play_episode(s["task"], s["method"], game, backend, iid, cfg, s["max_decisions"],
                                                  responses)
        score = result.score
        opponent_tokens = sum(c.tokens for t in opponent for c in t.calls)
    calls = [c for t in trajs for c in t.calls]
    episode = {"version": TRAJECTORY_VERSION, "unit": iid, "task": s["task"], "method": s["method"],
               "index": s["instance"], "instance_seed": s["instance_seed"], "run": s["run"], "seed": s["seed"],
               "backend": getattr(backend, "label", "unknown") or "unknown", "profile": s["profile"] if s["backend"] == "heuristic" else None,
               "agent_profiles": s["agent_profiles"], "model": s["model"], "models": s["models"],
               "proposers": s["proposers"], "rounds": s["rounds"],
               "setting": s["setting"] or f"{s['proposers']}P+{s['rounds']}R", "static": s["task"] in STATIC_TASKS,
               "score": float(score), "n_units": len(trajs), "valid_answers": sum(t.answer.valid for t in trajs),
               "tokens": sum(c.tokens for c in calls if c.counts_for_tc),
               "scoring_tokens": sum(c.tokens for c in calls if not c.counts_for_tc),
               "opponent_tokens": opponent_tokens, "truncated_calls": sum(c.truncated for c in calls)}
    if s["task"] == "negotiation":  # the method's accept/reject runs: counted here, in no unit (episodes.py)
        episode["responses"] = len(responses)
        episode["response_tokens"] = sum(c.tokens for t in responses for c in t.calls if c.counts_for_tc)
    return {"episode": episode, "steps": [_step(k, t) for k, t in enumerate(trajs)]}


def _plain(key: str, v: Any) -> Any:
    """A frame cell back to its record value: pandas stores a column of ints and None (``state``:
    None for static tasks) as floats with NaN."""
    if isinstance(v, float) and v != v:
        return None
    if key == "state" and isinstance(v, float):
        return int(v)
    return v


def trajectories_of(steps: Any) -> list[Trajectory]:
    """The trajectories of stored step records (rows of a run's ``steps`` frame, or dicts)."""
    fields, required = set(TRAJECTORY_SCHEMA["properties"]), set(TRAJECTORY_SCHEMA["required"])
    rows = steps.to_dict("records") if hasattr(steps, "to_dict") else list(steps)
    out = []
    for r in rows:  # an optional field (``scorer``) missing from a record is NaN in a frame
        d = {k: _plain(k, v) for k, v in r.items() if k in fields}
        out.append(Trajectory.from_dict({k: v for k, v in d.items() if k in required or v is not None}))
    return out


# -- what collablab.testing needs ---------------------------------------------------------------

_UNIT_EPISODE: dict[str, Any] = {
    "type": "object",
    "required": ["version", "unit", "task", "method", "index", "run", "seed", "backend", "setting", "static", "score",
                 "n_units", "valid_answers", "tokens", "scoring_tokens", "opponent_tokens"],
    "properties": {
        "version": {"const": TRAJECTORY_VERSION},
        "unit": {"type": "string", "minLength": 1},
        "task": {"enum": list(TASK_ORDER)},
        "method": {"enum": list(METHODS)},
        "score": EPISODE_SCHEMA["properties"]["score"],
        **{k: {"type": "integer", "minimum": 0} for k in ("index", "run", "seed", "n_units", "valid_answers", "tokens",
                                                          "scoring_tokens", "opponent_tokens", "truncated_calls",
                                                          "responses", "response_tokens")},
        "backend": {"type": "string", "minLength": 1},
        "static": {"type": "boolean"},
    },
}
_STEP: dict[str, Any] = {**TRAJECTORY_SCHEMA,
                         "required": [*TRAJECTORY_SCHEMA["required"], "step", "agent"],
                         "properties": {**TRAJECTORY_SCHEMA["properties"], "step": {"type": "integer", "minimum": 0},
                                        "agent": {"const": 0}}}
#: The versioned records of a unit: its summary (``episode``) and one trajectory per decision (``step``).
RECORD_SCHEMA: dict[str, Any] = {"version": TRAJECTORY_VERSION, "episode": _UNIT_EPISODE, "step": _STEP}

#: What the sabotaged backend says in the first unit: nothing any task can read.
_UNUSABLE = "I would rather not say."


class _Sabotaged:
    """A backend whose replies in the method's first unit (static instance, or decision 0) are unusable."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.label = getattr(backend, "label", "unknown")

    def answer(self, request: Request) -> Reply:
        _, _, instance, state, *_ = parse_call_id(request.call_id)
        if state in (None, 0) and not instance.endswith(EP.OPPONENT_SUFFIX):
            return Reply(_UNUSABLE, len(request.prompt.split()), len(_UNUSABLE.split()))
        return self.backend.answer(request)


def sabotage(backend: Backend) -> Backend:
    """``backend`` with every reply of the method's first unit made unreadable (its answer is invalid)."""
    return _Sabotaged(backend)


def is_invalid(step: dict[str, Any]) -> bool:
    """A recorded invalid action: the unit's final MAS answer could not be read (OV, eq. 23)."""
    return not step["answer"]["valid"]

