"""The proposal-trajectory record of MASTraceBench (mastracebench.txt §3.1-3.3, appendix).

One :class:`Trajectory` is one evaluation unit ``x`` of §3.3: a method on one task instance
(static tasks, ``state is None``) or on one state-conditioned action decision of an episode
(dynamic tasks, ``state`` is the decision index within episode ``instance``). It holds what the
paper records and scores: every Proposer Agent's initial and final proposal, the final MAS
answer and where it came from, the maximum attainable score ``S*`` and every model call with
its tokens (TC, eq. 5). Games' episode outcomes (eq. 2 for dynamic tasks) are separate
:class:`EpisodeResult` records.

Conventions (the paper is silent on the record format; these are ours):

- Scores are on the paper's 0-100 reporting scale; an invalid output (v(y) = 0, eq. 23) has
  ``valid=False``, ``canonical=None`` and score 0 (Table 1: unparsable outputs score zero).
- ``canonical`` is the task's canonical proposal as plain JSON: tuples become lists and sets
  become lists sorted by their JSON text, so that equality (FPA, eq. 24) survives a JSON
  round trip.
- ``Call.kind`` is ``"agent"`` for every call of the MAS itself (including its own judges,
  aggregators, validators and critics) and ``"score_judge"`` / ``"acceptance_probe"`` for the
  benchmark's scoring calls (OptionGen's LLM judge, eq. 10; Negotiation's acceptance query,
  eq. 17), which TC excludes.
- A logical call id is ``method/task/instance/state/role/round/agent/sample`` with each part
  percent-encoded (a ``/`` inside ``"CLEARS w/o CCE"`` becomes ``%2F``) and ``state`` written
  ``-`` for static tasks (:func:`make_call_id`, :func:`parse_call_id`). Round 0 is the initial
  proposal round. Ids are unique within a trajectory; ``run`` tells repeated runs apart.
- Records are strict: an unknown field is an error naming it (:func:`validate_trajectory`).
- ``scorer`` (optional, written only when set) names what scored a judged task's proposals
  (OptionGen: judge kind, model, prompt version, temperature, rubric source), so a judge's
  scores are never compared across judges unknowingly; tasks scored by rules leave it out.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

__all__ = [
    "CALL_KINDS",
    "EPISODE_SCHEMA",
    "EXCLUDED_CALL_KINDS",
    "TRAJECTORY_SCHEMA",
    "TRAJECTORY_VERSION",
    "Answer",
    "Call",
    "EpisodeResult",
    "Proposal",
    "ProposerTrace",
    "Trajectory",
    "canonical_json",
    "make_call_id",
    "parse_call_id",
    "validate_episode",
    "validate_trajectory",
]

TRAJECTORY_VERSION = 1
#: ``Call.kind`` values: a call of the MAS, or one of the benchmark's own scoring calls.
CALL_KINDS: tuple[str, ...] = ("agent", "score_judge", "acceptance_probe")
#: Kinds that Token Cost (eq. 5) leaves out: they score proposals, they are not the MAS.
EXCLUDED_CALL_KINDS: frozenset[str] = frozenset({"score_judge", "acceptance_probe"})
_STATIC = "-"  # the state part of a static task's call id

_SCORE = {"type": "number", "minimum": 0, "maximum": 100}
_INT0 = {"type": "integer", "minimum": 0}
_NAME = {"type": "string", "minLength": 1}
_PROPOSAL: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["canonical", "score", "valid"],
    "properties": {"canonical": {}, "score": _SCORE, "valid": {"type": "boolean"}},
}
_ANSWER: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["canonical", "score", "valid", "source"],
    "properties": {**_PROPOSAL["properties"], "source": _NAME},
}

#: JSON Schema (draft 2020-12) of one trajectory record; ``version`` is the record version.
TRAJECTORY_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": f"collablab/mastracebench/trajectory/{TRAJECTORY_VERSION}",
    "version": TRAJECTORY_VERSION,
    "type": "object",
    "additionalProperties": False,
    "required": ["version", "method", "task", "instance", "state", "run", "backend", "s_star", "proposers",
                 "answer", "calls"],
    "properties": {
        "version": {"const": TRAJECTORY_VERSION},
        "method": _NAME,
        "task": _NAME,
        "instance": _NAME,
        "state": {"type": ["integer", "null"], "minimum": 0},
        "run": _INT0,
        "backend": _NAME,
        "s_star": {"type": "number", "minimum": 0, "maximum": 100},
        "proposers": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["agent", "initial", "final"],
                "properties": {"agent": _NAME, "initial": _PROPOSAL, "final": _PROPOSAL},
            },
        },
        "answer": _ANSWER,
        "calls": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["call_id", "role", "round", "agent", "sample", "input_tokens", "output_tokens", "kind"],
                "properties": {
                    "call_id": _NAME, "role": _NAME, "round": _INT0, "agent": _NAME, "sample": _INT0,
                    "input_tokens": _INT0, "output_tokens": _INT0, "kind": {"enum": list(CALL_KINDS)},
                    "truncated": {"const": True},  # only on a reply cut at the token budget
                },
            },
        },
        "scorer": {"type": "object"},
    },
}

#: JSON Schema of one game episode's outcome (eq. 2 for dynamic tasks; eqs 15, 18, 19 x 100).
EPISODE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": f"collablab/mastracebench/episode/{TRAJECTORY_VERSION}",
    "version": TRAJECTORY_VERSION,
    "type": "object",
    "additionalProperties": False,
    "required": ["version", "method", "task", "episode", "score", "run"],
    "properties": {
        "version": {"const": TRAJECTORY_VERSION},
        "method": _NAME, "task": _NAME, "episode": _NAME, "score": _SCORE, "run": _INT0,
    },
}


def canonical_json(value: Any, where: str = "canonical") -> Any:
    """``value`` as plain JSON (tuples -> lists, sets -> sorted lists); ``where`` names a bad field."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where}: a canonical proposal cannot hold {value!r}")
        return value
    if isinstance(value, (list, tuple)):
        return [canonical_json(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, (set, frozenset)):
        items = [canonical_json(v, f"{where}{{}}") for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ValueError(f"{where}: keys of a canonical proposal must be strings, got {k!r}")
            out[k] = canonical_json(v, f"{where}.{k}")
        return out
    raise ValueError(f"{where}: {type(value).__name__} is not JSON (allowed: null, bool, number, string, "
                     "list, tuple, set, dict with string keys)")


def _check_score(score: float, where: str) -> None:
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score) \
            or not 0 <= score <= 100:
        raise ValueError(f"{where}: score must be a finite number in [0, 100], got {score!r}")


def _check_validity(canonical: Any, score: float, valid: bool, where: str) -> None:
    if not isinstance(valid, bool):
        raise ValueError(f"{where}.valid: must be a boolean, got {valid!r}")
    if not valid and score != 0:
        raise ValueError(f"{where}.score: an invalid output scores 0 (eq. 23), got {score!r}")
    if not valid and canonical is not None:
        raise ValueError(f"{where}.canonical: an invalid output has no canonical proposal (null)")
    if valid and canonical is None:
        raise ValueError(f"{where}.canonical: a valid output needs its canonical proposal")


@dataclass(frozen=True)
class Proposal:
    """One scored output of a Proposer Agent (§3.1): canonical form, score 0-100, validity v(y)."""

    canonical: Any
    score: float
    valid: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "canonical", canonical_json(self.canonical))
        _check_score(self.score, "proposal.score")
        _check_validity(self.canonical, self.score, self.valid, "proposal")

    @classmethod
    def invalid(cls) -> Proposal:
        """An output that could not be extracted or scored: v(y) = 0, score 0."""
        return cls(None, 0.0, False)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON."""
        return {"canonical": self.canonical, "score": float(self.score), "valid": self.valid}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Proposal:
        """Inverse of :meth:`to_dict`."""
        return cls(d["canonical"], d["score"], d["valid"])


@dataclass(frozen=True)
class ProposerTrace:
    """A Proposer Agent's initial and final proposal on one unit (§3.3: S_i^init, S_i^final)."""

    agent: str
    initial: Proposal
    final: Proposal

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON."""
        return {"agent": self.agent, "initial": self.initial.to_dict(), "final": self.final.to_dict()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ProposerTrace:
        """Inverse of :meth:`to_dict`."""
        return cls(d["agent"], Proposal.from_dict(d["initial"]), Proposal.from_dict(d["final"]))


@dataclass(frozen=True)
class Answer:
    """The final MAS answer (S_MAS(x), §3.3) and its ``source``: the proposer agent whose
    proposal it is, or the aggregating step (e.g. ``"vote"``, ``"aggregator"``, ``"judge"``)."""

    canonical: Any
    score: float
    valid: bool
    source: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "canonical", canonical_json(self.canonical))
        _check_score(self.score, "answer.score")
        _check_validity(self.canonical, self.score, self.valid, "answer")
        if not isinstance(self.source, str) or not self.source:
            raise ValueError(f"answer.source: name the proposer or aggregator, got {self.source!r}")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON."""
        return {"canonical": self.canonical, "score": float(self.score), "valid": self.valid,
                "source": self.source}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Answer:
        """Inverse of :meth:`to_dict`."""
        return cls(d["canonical"], d["score"], d["valid"], d["source"])


@dataclass(frozen=True)
class Call:
    """One model call and its tokens (TC, eq. 5); ``kind`` outside ``"agent"`` is left out of TC."""

    call_id: str
    role: str
    round: int
    agent: str
    input_tokens: int
    output_tokens: int
    sample: int = 0
    kind: str = "agent"
    truncated: bool = False  # the reply was cut at the token budget: nothing of it was read

    def __post_init__(self) -> None:
        if self.kind not in CALL_KINDS:
            raise ValueError(f"call.kind: {self.kind!r} is not one of {list(CALL_KINDS)}")
        for name in ("round", "input_tokens", "output_tokens", "sample"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"call.{name}: a non-negative integer, got {v!r}")

    @property
    def tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    @property
    def counts_for_tc(self) -> bool:
        """Whether eq. 5 counts this call (MAS calls do; scoring judges and probes do not)."""
        return self.kind not in EXCLUDED_CALL_KINDS

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON."""
        return {"call_id": self.call_id, "role": self.role, "round": self.round, "agent": self.agent,
                "sample": self.sample, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "kind": self.kind, **({"truncated": True} if self.truncated else {})}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Call:
        """Inverse of :meth:`to_dict`."""
        return cls(d["call_id"], d["role"], d["round"], d["agent"], d["input_tokens"], d["output_tokens"],
                   d["sample"], d["kind"], bool(d.get("truncated", False)))


def make_call_id(method: str, task: str, instance: str, state: int | None, role: str, round: int,
                 agent: str, sample: int = 0) -> str:
    """The logical call id ``method/task/instance/state/role/round/agent/sample`` (parts
    percent-encoded; ``state`` is ``-`` for a static task)."""
    parts = [method, task, instance, _STATIC if state is None else str(int(state)), role, str(int(round)),
             agent, str(int(sample))]
    return "/".join(quote(str(p), safe=" ") for p in parts)


def parse_call_id(call_id: str) -> tuple[str, str, str, int | None, str, int, str, int]:
    """Inverse of :func:`make_call_id`; ValueError naming the bad part."""
    parts = call_id.split("/")
    if len(parts) != 8:
        raise ValueError(f"call_id {call_id!r}: needs 8 '/'-separated parts "
                         f"(method/task/instance/state/role/round/agent/sample), got {len(parts)}")
    method, task, instance, state, role, rnd, agent, sample = (unquote(p) for p in parts)
    try:
        st = None if state == _STATIC else int(state)
        return method, task, instance, st, role, int(rnd), agent, int(sample)
    except ValueError:
        raise ValueError(f"call_id {call_id!r}: state, round and sample must be integers "
                         f"(state '-' for a static task)") from None


@dataclass(frozen=True)
class Trajectory:
    """One evaluation unit x (§3.3): a static sample or one action decision of a game episode."""

    method: str
    task: str
    instance: str
    state: int | None
    s_star: float
    proposers: tuple[ProposerTrace, ...]
    answer: Answer
    calls: tuple[Call, ...] = ()
    run: int = 0
    backend: str = "unknown"
    version: int = field(default=TRAJECTORY_VERSION)
    scorer: Mapping[str, Any] | None = None  # what scored the proposals (a judge), when not rules

    def __post_init__(self) -> None:
        object.__setattr__(self, "proposers", tuple(self.proposers))
        object.__setattr__(self, "calls", tuple(self.calls))
        if self.scorer is not None:
            if not isinstance(self.scorer, Mapping):
                raise ValueError(f"scorer: a JSON object naming the judge, got {self.scorer!r}")
            object.__setattr__(self, "scorer", canonical_json(dict(self.scorer), "scorer"))
        if isinstance(self.s_star, bool) or not isinstance(self.s_star, (int, float)) \
                or not 0 <= self.s_star <= 100:
            raise ValueError(f"s_star: the maximum attainable score in [0, 100], got {self.s_star!r}")
        if self.state is not None and (isinstance(self.state, bool) or not isinstance(self.state, int)
                                       or self.state < 0):
            raise ValueError(f"state: None (static task) or a decision index >= 0, got {self.state!r}")
        outs = [("answer", self.answer)] + [(f"proposers[{i}].{k}", getattr(p, k))
                                            for i, p in enumerate(self.proposers) for k in ("initial", "final")]
        for where, o in outs:
            if o.score > self.s_star + 1e-9:
                raise ValueError(f"{where}.score: {o.score} exceeds s_star = {self.s_star}")

    @property
    def is_static(self) -> bool:
        """True for a static task's sample (no game state)."""
        return self.state is None

    @property
    def unit(self) -> tuple[str, str, str, int | None, int]:
        """``(method, task, instance, state, run)``: what identifies this unit."""
        return self.method, self.task, self.instance, self.state, self.run

    def call_id(self, role: str, round: int, agent: str, sample: int = 0) -> str:
        """This unit's logical id for a call (:func:`make_call_id`)."""
        return make_call_id(self.method, self.task, self.instance, self.state, role, round, agent, sample)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON, valid against :data:`TRAJECTORY_SCHEMA` (``scorer`` only when set)."""
        d = {"version": self.version, "method": self.method, "task": self.task, "instance": self.instance,
             "state": self.state, "run": self.run, "backend": self.backend, "s_star": float(self.s_star),
             "proposers": [p.to_dict() for p in self.proposers], "answer": self.answer.to_dict(),
             "calls": [c.to_dict() for c in self.calls]}
        if self.scorer is not None:
            d["scorer"] = dict(self.scorer)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Trajectory:
        """Validate (:func:`validate_trajectory`) and build."""
        validate_trajectory(d)
        return cls(d["method"], d["task"], d["instance"], d["state"], d["s_star"],
                   tuple(ProposerTrace.from_dict(p) for p in d["proposers"]), Answer.from_dict(d["answer"]),
                   tuple(Call.from_dict(c) for c in d["calls"]), d["run"], d["backend"], d["version"],
                   d.get("scorer"))


@dataclass(frozen=True)
class EpisodeResult:
    """One game episode's score R(z) on 0-100 (eq. 2; eqs 15, 18, 19 times 100)."""

    method: str
    task: str
    episode: str
    score: float
    run: int = 0

    def __post_init__(self) -> None:
        _check_score(self.score, "episode.score")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON, valid against :data:`EPISODE_SCHEMA`."""
        return {"version": TRAJECTORY_VERSION, "method": self.method, "task": self.task, "episode": self.episode,
                "score": float(self.score), "run": self.run}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> EpisodeResult:
        """Validate (:func:`validate_episode`) and build."""
        validate_episode(d)
        return cls(d["method"], d["task"], d["episode"], d["score"], d["run"])


def _path(parts: Sequence[Any]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "<record>"


_TYPES = {"object": Mapping, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _is_type(value: Any, name: str) -> bool:
    if name in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return name == "number" or float(value).is_integer()
    return isinstance(value, _TYPES[name])


def _fallback_errors(value: Any, schema: Mapping[str, Any], path: list[Any]) -> list[tuple[list[Any], str]]:
    """A minimal JSON Schema check (the keywords our schemas use) for when jsonschema is absent."""
    if "const" in schema and value != schema["const"]:
        return [(path, f"{value!r} was expected to be {schema['const']!r}")]
    if "enum" in schema and value not in schema["enum"]:
        return [(path, f"{value!r} is not one of {schema['enum']}")]
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is_type(value, t) for t in types):
            return [(path, f"{value!r} is not of type {' or '.join(types)}")]
    errs: list[tuple[list[Any], str]] = []
    if _is_type(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            errs.append((path, f"{value!r} is less than the minimum of {schema['minimum']}"))
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            errs.append((path, f"{value!r} must be greater than {schema['exclusiveMinimum']}"))
        if "maximum" in schema and value > schema["maximum"]:
            errs.append((path, f"{value!r} is greater than the maximum of {schema['maximum']}"))
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        errs.append((path, f"{value!r} is too short"))
    if isinstance(value, Mapping):
        errs += [(path + [k], f"'{k}' is a required property") for k in schema.get("required", ()) if k not in value]
        props = schema.get("properties", {})
        if schema.get("additionalProperties", True) is False:
            errs += [(path + [k], f"unknown field '{k}'") for k in value if k not in props]
        for k, sub in props.items():
            if k in value:
                errs += _fallback_errors(value[k], sub, path + [k])
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            errs += _fallback_errors(v, schema["items"], path + [i])
    return errs


def _schema_errors(d: Any, schema: Mapping[str, Any]) -> list[tuple[list[Any], str]]:
    try:
        import jsonschema
    except ImportError:
        return _fallback_errors(d, schema, [])
    validator = jsonschema.Draft202012Validator(schema)
    out = []
    for err in sorted(validator.iter_errors(d), key=lambda e: [str(p) for p in e.absolute_path]):
        path = list(err.absolute_path)
        if err.validator == "required":  # name the missing field itself
            missing = err.message.split("'")[1] if "'" in err.message else ""
            path = path + [missing] if missing else path
        elif err.validator == "additionalProperties":
            extra = [k for k in err.instance if k not in err.schema.get("properties", {})]
            path = path + extra[:1]
        out.append((path, err.message))
    return out


def _raise_first(kind: str, errors: list[tuple[list[Any], str]]) -> None:
    if errors:
        path, msg = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise ValueError(f"{kind} field {_path(path)}: {msg}{more}")


def _semantic_errors(d: Mapping[str, Any]) -> list[tuple[list[Any], str]]:
    errs: list[tuple[list[Any], str]] = []
    s_star = d["s_star"]
    outputs = [(["answer"], d["answer"])]
    for i, p in enumerate(d["proposers"]):
        outputs += [(["proposers", i, "initial"], p["initial"]), (["proposers", i, "final"], p["final"])]
    for path, o in outputs:
        if not o["valid"] and o["score"] != 0:
            errs.append((path + ["score"], "an invalid output scores 0 (eq. 23)"))
        if not o["valid"] and o["canonical"] is not None:
            errs.append((path + ["canonical"], "an invalid output has no canonical proposal (null)"))
        if o["valid"] and o["canonical"] is None:
            errs.append((path + ["canonical"], "a valid output needs its canonical proposal"))
        if o["score"] > s_star + 1e-9:
            errs.append((path + ["score"], f"{o['score']} exceeds s_star = {s_star} (the maximum attainable)"))
    agents = [p["agent"] for p in d["proposers"]]
    for i, a in enumerate(agents):
        if a in agents[:i]:
            errs.append((["proposers", i, "agent"], f"duplicate proposer {a!r}"))
    seen: set[str] = set()
    for i, c in enumerate(d["calls"]):
        cid = c["call_id"]
        if cid in seen:
            errs.append((["calls", i, "call_id"], f"duplicate call id {cid!r}"))
        seen.add(cid)
        try:
            parsed = parse_call_id(cid)
        except ValueError as e:
            errs.append((["calls", i, "call_id"], str(e)))
            continue
        want = (d["method"], d["task"], d["instance"], d["state"], c["role"], c["round"], c["agent"], c["sample"])
        names = ("method", "task", "instance", "state", "role", "round", "agent", "sample")
        for name, got, exp in zip(names, parsed, want):
            if got != exp:
                errs.append((["calls", i, "call_id"], f"its {name} part is {got!r}, the record says {exp!r}"))
    return errs


def validate_trajectory(d: Any) -> None:
    """Check a trajectory dict against :data:`TRAJECTORY_SCHEMA` (jsonschema when installed) and
    the record's rules (invalid -> score 0, scores <= S*, call ids match); ValueError naming the field."""
    _raise_first("trajectory", _schema_errors(d, TRAJECTORY_SCHEMA))
    _raise_first("trajectory", _semantic_errors(d))


def validate_episode(d: Any) -> None:
    """Check an episode-result dict against :data:`EPISODE_SCHEMA`; ValueError naming the field."""
    _raise_first("episode", _schema_errors(d, EPISODE_SCHEMA))
