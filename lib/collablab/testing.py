"""Conformance checks shipped with the package, as PettingZoo ships ``api_test`` and ``seed_test``.

For any registered study and any of its policy x protocol combinations: one episode runs
(:func:`api_test`), its records validate against the study's versioned record schema
(:func:`check_records`), the same seed gives identical records (:func:`seed_test`), and a bad
action or a bad model reply becomes a recorded invalid action, never a crash
(:func:`invalid_action_test`, :func:`bad_reply_test`), and a model answering as reasoning models do
is read for its final answer only (:data:`REPLY_STYLES`, :func:`reply_style_test`): a draft in its
thoughts, inline or in ``reasoning_content``, is never used, and a reply cut at ``max_tokens`` is
recorded as truncated.

A study's face offers what the checks need (DESIGN.md, "where a new study goes"):

- ``run_spec(spec, wrap_team=None)`` and ``RECORD_SCHEMA`` (``{"version", "episode", "step"}``);
- ``conformance_cases(base_url)``: named specs covering every policy and protocol it offers
  (LLM specs point at ``base_url``, a scripted OpenAI-compatible server these checks start);
- ``sabotage(team)``: the team with agent 0's first action replaced by an illegal one;
- ``is_invalid(step)``: whether a step record is a recorded invalid action;
- ``usable_reply(body)``: a reply its readers use for any request of its cases (the request body
  as a server receives it), and ``is_truncated(result)``: whether an episode's records say its
  replies were cut at the token budget.

``python -m collablab.testing serve [--port N]`` serves the corpus as a process: the model id
``<study>:<style>`` answers every request of that study in that style (``GET /v1/models`` lists
them), so a grid run through ``collablab episodes`` meets each style end to end.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .llm.fake_server import FakeOpenAIServer, FakeReply
from .runs.registry import studies

Records = dict[str, Any]
#: What a model says in the conformance server: nothing any study can use.
BAD_REPLY = "I would rather not say."

__all__ = ["BAD_REPLY", "REPLY_STYLES", "ReplyStyle", "api_test", "bad_reply_test", "check_case", "check_records",
           "comparable", "conformance", "invalid_action_test", "reply_style_test", "scripted_server", "seed_test",
           "style_server", "study_module"]


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


@dataclass(frozen=True)
class ReplyStyle:
    """One way a model answers: ``make(usable, unusable)`` builds the reply from a usable answer
    and an unusable one; ``expect`` is what the records must show: ``used`` (no act is invalid),
    ``unused`` (every act is invalid: the usable text sat where no answer is read) or
    ``truncated`` (every act is invalid and the records say the replies were cut)."""

    name: str
    make: Callable[[str, str], FakeReply]
    expect: str


#: The corpus of reply styles (issue 23): how reasoning models and chatty models really answer.
REPLY_STYLES: dict[str, ReplyStyle] = {st.name: st for st in (
    ReplyStyle("plain", lambda good, bad: FakeReply(text=good), "used"),
    ReplyStyle("reasoning_content", lambda good, bad: FakeReply(text=good, reasoning=f"Draft: {bad}"), "used"),
    ReplyStyle("draft_in_reasoning_content", lambda good, bad: FakeReply(text=bad, reasoning=f"Draft:\n{good}"),
               "unused"),
    ReplyStyle("inline_thoughts", lambda good, bad: FakeReply(text=f"<think>\nDraft: {bad}\n</think>\n\n{good}"),
               "used"),
    ReplyStyle("draft_in_inline_thoughts",
               lambda good, bad: FakeReply(text=f"<think>\nDraft:\n{good}\nNo, better not.\n</think>\n\n{bad}"),
               "unused"),
    ReplyStyle("template_opened_thoughts",  # Qwen3/DeepSeek-R1 templates open <think> in the prompt
               lambda good, bad: FakeReply(text=f"Draft:\n{good}\n</think>\n\n{bad}"), "unused"),
    ReplyStyle("cut_inside_thoughts",
               lambda good, bad: FakeReply(text=f"<think>\nDraft:\n{good}\nLet me check again", finish_reason="length"),
               "truncated"),
    # cut before its last line (a stop word there would have ended it), the rest still readable
    ReplyStyle("cut_answer", lambda good, bad: FakeReply(text=good.rsplit("\n", 1)[0], finish_reason="length"),
               "truncated"),
    ReplyStyle("fenced", lambda good, bad: FakeReply(text=f"```\n{good}\n```"), "used"),
    ReplyStyle("prose_around", lambda good, bad: FakeReply(text=f"Sure. Here is my answer.\n\n{good}\n\nI hope this helps."),
               "used"),
    ReplyStyle("two_answers_after_thoughts",
               lambda good, bad: FakeReply(text=f"<think>\n{bad}\n</think>\n{good}\n\nTo repeat:\n{good}"), "used"),
    ReplyStyle("empty", lambda good, bad: FakeReply(text=""), "unused"),
)}


def _style_reply(study: Any, style: ReplyStyle, body: dict) -> FakeReply:
    return style.make(study.usable_reply(body), BAD_REPLY)


def reply_style_test(study: Any, spec: dict[str, Any], style: ReplyStyle) -> Records:
    """Run ``spec`` against a server answering in ``style``; the records must show what the style
    expects (:class:`ReplyStyle`)."""
    srv = FakeOpenAIServer(lambda body, _srv: _style_reply(study, style, body)).start()
    try:
        result = study.run_spec({**spec, "base_url": srv.base_url})
    finally:
        srv.stop()
    check_records(result, study.RECORD_SCHEMA)
    check_style_records(study, result, style, f"{spec} / {style.name}")
    return result


def check_style_records(study: Any, result: Records, style: ReplyStyle, what: str) -> None:
    """Raise AssertionError unless ``result`` shows what ``style`` expects."""
    acts = result["steps"]
    invalid = [study.is_invalid(s) for s in acts]
    if not acts:
        raise AssertionError(f"{what}: no step recorded")
    if style.expect == "used" and any(invalid):
        raise AssertionError(f"{what}: {sum(invalid)} of {len(acts)} acts invalid though the final answer was usable")
    if style.expect in ("unused", "truncated") and not all(invalid):
        raise AssertionError(f"{what}: {len(acts) - sum(invalid)} of {len(acts)} acts were read from a draft or a "
                             "fragment (they should all be invalid)")
    if (style.expect == "truncated") != bool(study.is_truncated(result)):
        raise AssertionError(f"{what}: the records {'do not say' if style.expect == 'truncated' else 'say'} "
                             "the replies were cut at the token budget")


def style_server(port: int = 0) -> FakeOpenAIServer:
    """A server answering model ``<study>:<style>`` in that style for that study (module docstring)."""
    names = [f"{name}:{style}" for name in sorted(studies()) for style in REPLY_STYLES]

    def handler(body: dict, _srv: FakeOpenAIServer) -> FakeReply:
        name, _, style = str(body.get("model", "")).partition(":")
        if name not in studies() or style not in REPLY_STYLES:
            return FakeReply(status=404, error_message=f"model {body.get('model')!r} is not served")
        return _style_reply(study_module(name), REPLY_STYLES[style], body)

    return FakeOpenAIServer(handler, port=port, models=names)


def main(argv: list[str] | None = None) -> int:
    """``python -m collablab.testing serve [--port N]``: the reply-style server; prints ``PORT <n>``."""
    ap = argparse.ArgumentParser(prog="python -m collablab.testing", description=main.__doc__)
    ap.add_argument("command", choices=["serve"])
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args(argv)
    style_server(args.port).serve_forever()
    return 0


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


if __name__ == "__main__":
    sys.exit(main())
