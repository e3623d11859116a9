"""Conformance checks shipped with the package, as PettingZoo ships ``api_test`` and ``seed_test``.

For any registered study and any of its policy x protocol combinations: one episode runs
(:func:`api_test`), its records validate against the study's versioned record schema
(:func:`check_records`), the same seed gives identical records (:func:`seed_test`), and a bad
action or a bad model reply becomes a recorded invalid action, never a crash
(:func:`invalid_action_test`, :func:`bad_reply_test`).

A study's face offers what the checks need (DESIGN.md, "where a new study goes"):

- ``run_spec(spec, wrap_team=None)`` and ``RECORD_SCHEMA`` (``{"version", "episode", "step"}``);
- ``conformance_cases(base_url)``: named specs covering every policy and protocol it offers
  (LLM specs point at ``base_url``, a scripted OpenAI-compatible server these checks start);
- ``sabotage(team)``: the team with agent 0's first action replaced by an illegal one;
- ``is_invalid(step)``: whether a step record is a recorded invalid action.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from .llm.fake_server import FakeOpenAIServer, FakeReply
from .runs.registry import studies

Records = dict[str, Any]
#: What a model says in the conformance server: nothing any study can use.
BAD_REPLY = "I would rather not say."

__all__ = ["BAD_REPLY", "api_test", "bad_reply_test", "check_case", "check_records", "comparable", "conformance",
           "invalid_action_test", "scripted_server", "seed_test", "study_module"]


def study_module(name: str) -> Any:
    """The face module of registered study ``name`` (from its ``module:function`` entry point)."""
    return importlib.import_module(studies()[name].split(":")[0])


def check_records(result: Records, schema: Mapping[str, Any]) -> None:
    """Raise AssertionError listing every way ``result`` breaks the study's record schema."""
    import jsonschema

    if not isinstance(result, dict) or set(result) != {"episode", "steps"}:
        raise AssertionError(f"an episode returns {{'episode': ..., 'steps': [...]}}, got {type(result).__name__}")
    errors = []
    for what, rec, sch in [("episode", result["episode"], schema["episode"]),
                           *((f"steps[{i}]", s, schema["step"]) for i, s in enumerate(result["steps"]))]:
        v = jsonschema.validators.validator_for(sch)(sch)
        errors += [f"{what}.{'.'.join(map(str, e.absolute_path)) or '$'}: {e.message}" for e in v.iter_errors(rec)]
    try:
        json.dumps(result, allow_nan=False)
    except (TypeError, ValueError) as e:
        errors.append(f"records are not plain JSON: {e}")
    if errors:
        raise AssertionError(f"records break schema v{schema.get('version')}:\n" + "\n".join(errors[:20]))


def comparable(rec: Records) -> Records:
    """Records without what may differ between two runs of the same seed: wall time and cache
    status (of LLM calls), and the cache mode label."""
    def clean(note: Any) -> Any:
        try:
            n = json.loads(note)
        except (TypeError, ValueError):
            return note
        if isinstance(n, dict):
            for c in n.get("calls", []):
                c.pop("latency_s", None)
                c.pop("cache", None)
        return n
    ep = {k: v for k, v in rec["episode"].items() if k != "llm_cache_mode"}
    return {"episode": ep, "steps": [{**{k: v for k, v in s.items() if k != "latency_s"}, "note": clean(s.get("note"))}
                                     for s in rec["steps"]]}


def api_test(study: Any, spec: dict[str, Any]) -> Records:
    """One episode runs and its records validate; returns them."""
    result = study.run_spec(dict(spec))
    check_records(result, study.RECORD_SCHEMA)
    if not result["steps"]:
        raise AssertionError(f"{spec}: the episode recorded no step")
    return result


def seed_test(study: Any, spec: dict[str, Any]) -> None:
    """The same spec and seed give identical records (wall time aside)."""
    a, b = comparable(study.run_spec(dict(spec))), comparable(study.run_spec(dict(spec)))
    if a != b:
        diff = next((i for i, (x, y) in enumerate(zip(a["steps"], b["steps"])) if x != y), None)
        raise AssertionError(f"{spec}: two runs of one seed differ (first differing step record: {diff})")


def invalid_action_test(study: Any, spec: dict[str, Any]) -> Records:
    """An illegal action is recorded as an invalid action and the episode goes on."""
    result = study.run_spec(dict(spec), wrap_team=study.sabotage)
    check_records(result, study.RECORD_SCHEMA)
    first = [s for s in result["steps"] if s["step"] == 0 and s["agent"] == 0]
    if not first or not study.is_invalid(first[0]):
        raise AssertionError(f"{spec}: agent 0's illegal first action was not recorded as invalid: {first}")
    return result


def bad_reply_test(study: Any, spec: dict[str, Any]) -> Records:
    """With a model that never says anything usable, every act is a recorded invalid action."""
    result = study.run_spec(dict(spec))
    check_records(result, study.RECORD_SCHEMA)
    acts = result["steps"]
    if not acts or not all(study.is_invalid(s) for s in acts):
        raise AssertionError(f"{spec}: unusable replies were not all recorded as invalid actions")
    return result


@contextmanager
def scripted_server(reply: Callable[[dict], str] | None = None) -> Iterator[str]:
    """A loopback OpenAI-compatible server answering ``reply(body)`` (default :data:`BAD_REPLY`);
    yields its base URL."""
    srv = FakeOpenAIServer(lambda body, _srv: FakeReply(text=(reply or (lambda b: BAD_REPLY))(body))).start()
    try:
        yield srv.base_url
    finally:
        srv.stop()


def check_case(study: Any, spec: dict[str, Any], server_url: str) -> None:
    """Every check on one case; model-backed cases (pointing at ``server_url``) also get the bad reply."""
    api_test(study, spec)
    seed_test(study, spec)
    invalid_action_test(study, spec)
    if spec.get("base_url") == server_url:  # its model says nothing usable
        bad_reply_test(study, spec)


def conformance(name: str) -> list[str]:
    """Run every check over every case of registered study ``name``; return what was checked."""
    study = study_module(name)
    with scripted_server() as url:
        cases = study.conformance_cases(url)
        for spec in cases.values():
            check_case(study, spec, url)
    return list(cases)
