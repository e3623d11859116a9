"""The versioned schema of MECoBench's episode and step records (JSON Schema, draft 2020-12).

Records are the single source of truth (DESIGN.md); this schema is what downstream metrics and
analyses may rely on. A change of a field's name, type or meaning bumps ``VERSION``. Extra
fields (labels such as ``model`` or ``llm_cache_mode``) are allowed.
"""

from __future__ import annotations

from typing import Any

VERSION = 1
_INT0 = {"type": "integer", "minimum": 0}
_STR_OR_NULL = {"type": ["string", "null"]}

EPISODE: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": f"collablab/mecobench/episode/{VERSION}",
    "type": "object",
    "required": ["episode_id", "task_id", "task_name", "structure", "n_subgoals", "goal", "goal_classes", "n_agents",
                 "budget", "steps_per_agent", "team_steps", "success", "completed", "cr", "progress", "credits",
                 "actions", "conflict_actions", "handover_attempts", "handover_failures", "spatial_errors", "tokens",
                 "backend", "prior", "seed", "protocol", "profile", "policy"],
    "properties": {
        "episode_id": {"type": "string", "minLength": 1},
        "task_id": {"type": "string", "minLength": 1},
        "task_name": {"type": "string"},
        "structure": {"enum": ["parallel", "sequential"]},
        "n_subgoals": {"type": "integer", "minimum": 1},
        "goal": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 1}},
        "goal_classes": {"type": "array", "items": {"type": "string"}},
        "n_agents": {"type": "integer", "minimum": 1},
        "budget": {"type": "integer", "minimum": 1},
        "steps_per_agent": {"type": "integer", "minimum": 1},
        "team_steps": _INT0,
        "success": {"type": "boolean"},
        "completed": _INT0,
        "cr": {"type": "number", "minimum": 0, "maximum": 1},
        "progress": {"type": "array", "minItems": 1, "items": {"type": "number", "minimum": 0, "maximum": 1}},
        "credits": {"type": "object", "additionalProperties": _INT0},
        "actions": _INT0, "conflict_actions": _INT0, "handover_attempts": _INT0, "handover_failures": _INT0,
        "spatial_errors": _INT0, "tokens": _INT0,
        "invalid_actions": _INT0,  # steps with status invalid (the world's, or an unusable reply)
        "truncated_replies": _INT0,  # of them, replies cut at the token budget (invalid_truncated)
        "backend": {"type": "string", "minLength": 1},
        "prior": {"enum": ["full", "no_appearance", "no_location", "none", "noisy", "noisy_no_appearance"]},
        "required_handover_count": _INT0,
        "seed": {"type": "integer"},
        "protocol": {"type": "string"},
        "profile": _STR_OR_NULL,
        "policy": {"type": "string"},
    },
}

STEP: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": f"collablab/mecobench/step/{VERSION}",
    "type": "object",
    "required": ["episode_id", "step", "agent", "action", "obj_class", "target_class", "args", "status", "feedback",
                 "conflict", "spatial_error", "handover", "completed", "message", "tokens_prompt",
                 "tokens_completion", "latency_s", "note"],
    "properties": {
        "episode_id": {"type": "string", "minLength": 1},
        "step": _INT0,
        "agent": _INT0,
        "action": {"type": "string", "minLength": 1},  # a world action, or invalid_reply / invalid_grounding
        "obj_class": _STR_OR_NULL,
        "target_class": _STR_OR_NULL,
        "args": {"type": "string"},  # the action as canonical JSON
        "status": {"enum": ["ok", "failed", "invalid", "conflict"]},
        "feedback": {"type": "string"},
        "conflict": {"type": "boolean"},
        "spatial_error": {"type": "boolean"},
        "handover": {"enum": [None, "ok", "failed"]},
        "completed": _INT0,
        "message": _STR_OR_NULL,
        "tokens_prompt": _INT0,
        "tokens_completion": _INT0,
        "latency_s": {"type": "number", "minimum": 0},
        "note": {"type": "string"},
    },
}

#: What :func:`collablab.testing.check_records` validates a MECoBench episode's records against.
RECORD_SCHEMA: dict[str, Any] = {"version": VERSION, "episode": EPISODE, "step": STEP}
