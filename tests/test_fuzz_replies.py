"""Property-based fuzzing (hypothesis) of every place where a model's reply text is parsed or
grounded into an action, in all four studies and in ``collablab.llm.structured`` (issue 13).

Property: a reader never raises anything but its documented error type; it returns a value of its
documented shape or its "unusable" marker (``(None, why)``, :class:`Invalid`, ``ActionError``,
``ValueError`` for PARTNR's ``parse_call``); a grounded action names only what the agent can see or
holds and runs in the real world; a valid reply written by a formatter reads back to the same value.

- MECoBench: ``agents.llm.replies`` (tagged ``[ACTION]``/``[MEMORY]``/``[MESSAGE]`` replies,
  ``assignments_of``) and ``agents.llm.grounding`` (``obj_ref``, ``ground``) against the observations
  of a real suite task (parallel and sequential, empty-handed and holding an object); grounded
  actions are then executed by a fresh :class:`Household` in the same state.
- MASTraceBench: ``roles.parse_*``, every task's ``parse`` with real instances (scored and made
  canonical), ``parse_response``, ``parse_judge_reply``, ``mas_gpt.extract_program``; the offline
  ``render_*`` writers read back by the parsers.
- DynaHMRC: ``actions.parse_action`` (``format_action`` reads back), ``RobotWorld.execute`` of any
  reply text, ``llm_brain``'s readers (sections, votes, team actions, a move's costmap reply,
  ``read_reply`` of every stage) and whole episodes of :class:`LLMBrain` robots on fuzzed replies.
- PARTNR: ``calls.parse_call``/``find_call``/``mask_id`` (``ToolCall.text`` reads back),
  :class:`LLMPlanner` on fuzzed replies in ReAct and JSON mode, and whole episodes of such planners
  (their calls planned and executed by the skills).
- ``collablab.llm.structured``: ``extract_json``, ``find_json``, ``close_truncated``, ``validate``.

Strategies: arbitrary unicode text (control characters included), token soups of each grammar's
own pieces, the same repeated up to a few KB, numbers past ``int``'s 4300-digit string limit and
non-decimal digits, JSON values with wrong types, NaN and infinities, mutated JSON (cut off, quotes
dropped, trailing commas, fenced, inside ``<think>``), and near-misses of valid replies.

Runs are reproducible (``derandomize=True``, no example database). ``COLLABLAB_FUZZ_EXAMPLES=<n>``
runs every property on ``n`` examples instead of its CI budget (the whole file: ~40 s on one core).

Every crash found is kept as an explicit ``@example`` or a named test next to its property (JSON
nested ~1000 deep, numbers past 4300 digits, exponent offsets, furniture used as an object, ...).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import math
import os
import re
import time
from typing import Any

import pytest
from collablab.agents.llm import grounding as G
from collablab.agents.llm import replies as R
from collablab.agents.llm.prompts import SCHEMAS
from collablab.llm import EndpointSpec, LLMResult, Usage
from collablab.llm.structured import close_truncated, extract_json, find_json, validate
from collablab.studies.dynahmrc import llm_brain as LB
from collablab.studies.dynahmrc.actions import Action as DAction
from collablab.studies.dynahmrc.actions import ActionError, format_action, parse_action
from collablab.studies.mastracebench import mas_gpt as MG
from collablab.studies.mastracebench import offline as OFF
from collablab.studies.mastracebench import roles as ROLES
from collablab.studies.mastracebench.tasks import evidence_chain as EC
from collablab.studies.mastracebench.tasks import gomoku as GM
from collablab.studies.mastracebench.tasks import is_invalid
from collablab.studies.mastracebench.tasks import mapf as MP
from collablab.studies.mastracebench.tasks import negotiation as NG
from collablab.studies.mastracebench.tasks import option_gen as OG
from collablab.studies.mastracebench.tasks import option_gen_judge as OJ
from collablab.studies.mastracebench.tasks import tactic_duel as TD
from collablab.studies.partnr.calls import (
    HUMAN_TOOLS,
    ROBOT_TOOLS,
    TOOLS,
    ToolCall,
    find_call,
    mask_id,
    parse_call,
)
from collablab.world.actions import Action
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

# ----------------------------------------------------------------------------------- settings

_EXAMPLES = os.environ.get("COLLABLAB_FUZZ_EXAMPLES")


def fuzz(ci_examples: int) -> settings:
    """``ci_examples`` examples (or ``COLLABLAB_FUZZ_EXAMPLES``), reproducible, no deadline."""
    return settings(max_examples=int(_EXAMPLES) if _EXAMPLES else ci_examples, deadline=None, derandomize=True,
                    database=None, print_blob=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.large_base_example])


# ----------------------------------------------------------------------------------- strategies

HUGE = ["9" * 4301, "1" * 4400, "-" + "7" * 4301, "0." + "3" * 4400]  # past int()'s digit limit
ODD_DIGITS = ["²", "³", "¹", "①", "⑽", "¾", "٣", "৪", "߃", "𝟗", "五", "〇", "Ⅷ", "１２"]
COMMON = [
    "{", "}", "[", "]", "(", ")", "<", ">", '"', "'", "`", ":", ",", ";", "=", "->", "#", "*", "**", "_", "-", ".",
    "\\", "\\n", "\\u0000", "\\ud800", "\\\"", "null", "true", "false", "NaN", "Infinity", "-Infinity", "1e999",
    "-0", "0x1F", "1e-05", "3.14", "007", " ", "  ", "\t", "\n", "\r\n", "\x00", "\x1b[31m", "\u200b", "\ufeff",
    "\u202e", "：", "→", "é", "中文", "🙂", "```", "```json\n", "```python\n", "\n```", "<think>", "</think>",
    "<THINK>", "</think", "Thought:", "Thoughts:", "Answer:", "Final answer:", "json", "{}", "[]", '{"', '":',
    '"}', "[[", "]]", "{{", "}}",
]
SPECIAL_STRINGS = ["", " ", "None", "null", "NaN", "-1", "0", "1", "²", "9" * 4301, "A", "a. x", "*", "<think>",
                   "</think>", "[ACTION]", "Contents:", "\x00", "\n"]

ALIASES = ["walkto", "goto", "moveto", "approach", "pick", "pickup", "take", "shut", "putin", "placeinside", "putback",
           "handto", "give", "noop", "idle", "none", "gotoroom", "walktodoor", "Put On", "[Grab]"]


def soup(pieces: list[str], max_size: int = 30) -> st.SearchStrategy[str]:
    """Concatenations of a grammar's own pieces, the common ones, short random text and numbers."""
    atom = st.one_of(st.sampled_from(pieces + COMMON), st.text(max_size=6),
                     st.integers(-10**6, 10**6).map(str), st.floats().map(repr), st.sampled_from(ODD_DIGITS))
    return st.lists(atom, max_size=max_size).map("".join)


def texts(pieces: list[str]) -> st.SearchStrategy[str]:
    """Arbitrary text, token soups, soups repeated up to a few KB, and a huge number inside."""
    s = soup(pieces)
    return st.one_of(
        st.text(max_size=300),
        st.text(alphabet=st.characters(categories=("Cc", "Cf", "Zs", "Zl", "Zp", "Sm", "Po", "Ps", "Pe", "Nd", "No")),
                max_size=200),
        s, s, s,
        st.builds(lambda a, n: a * n, soup(pieces, 8), st.integers(2, 300)).map(lambda t: t[:6000]),
        st.builds(lambda a, h, b: a + h + b, s, st.sampled_from(HUGE), s),
        st.builds(lambda a, d, n, b: a + d * n + b, s, st.sampled_from(["[", '{"a":', '[{"x":', "{", "(", "[[]"]),
                  st.integers(900, 1500), s),  # nested past json's recursion limit
        st.builds(lambda a, b, c: a + b + c, st.sampled_from(["<think>", "```json\n", "**", "> "]), s,
                  st.sampled_from(["</think>", "\n```", "**", ""])),
    )


json_keys = st.one_of(st.text(max_size=8), st.sampled_from([
    "action", "name", "parameter_1", "parameter_2", "object", "target", "room", "door", "recipient", "id",
    "description", "memory", "message", "ready", "local_context", "messages", "receiver", "content", "type",
    "parameter_ids", "approve", "score", "claims", "endorse", "challenge", "chain", "robot_1", "robot_2", "plan",
    "row", "col", "move", "self", "opponent", "allocation", "accept", "correct", "distractors", "options",
    "answer", "correct_score", "distractor_score", "program", "code", "thought", "prediction", "tool", "args"]))
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12),
                         st.sampled_from(SPECIAL_STRINGS))
json_values = st.recursive(json_scalars, lambda ch: st.lists(ch, max_size=4) | st.dictionaries(json_keys, ch, max_size=4),
                           max_leaves=14)
finite_json = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12),
                                     st.floats(allow_nan=False, allow_infinity=False)),
                           lambda ch: st.lists(ch, max_size=4) | st.dictionaries(st.text(max_size=8), ch, max_size=4),
                           max_leaves=14)


def _mutate(text: str, op: str, at: int) -> str:
    i = at % (len(text) + 1)
    return {
        "keep": text, "cut": text[:i], "drop": text[:i] + text[i + 1:], "dup": text[:i] + text[i:i + 1] + text[i:],
        "quote": text.replace('"', "'"), "comma": text.replace("}", ",}").replace("]", ",]"),
        "fence": f"Here you go:\n```json\n{text}\n```\nDone.", "think": f"<think>{text}</think>\n{text}",
        "open-think": f"<think>{text}", "twice": f"{text}\n{text}", "prose": f"Sure! {text} Hope that helps.",
        "nest": "{" + f'"x": {text}' + "}", "brackets": f"[{text}]",
    }[op]


def mutated(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    ops = st.sampled_from(["keep", "keep", "cut", "drop", "dup", "quote", "comma", "fence", "think", "open-think",
                           "twice", "prose", "nest", "brackets"])
    return st.builds(_mutate, inner, ops, st.integers(0, 10**6))


def dumps(value: Any) -> str:
    return json.dumps(value, allow_nan=True, ensure_ascii=False)


json_texts = mutated(json_values.map(dumps))

# ----------------------------------------------------------------------------------- collablab.llm.structured


@fuzz(150)
@given(st.one_of(texts([]), json_texts))
@example("[" * 950 + "]" * 950)
@example('{"a": ' * 300 + "1" + "}" * 299)
@example('```json\n{"a": 1,}\n```')
def test_structured_json_readers_never_raise(text):
    value, err = extract_json(text)
    assert (err is None) or (value is None and isinstance(err, str) and err)
    for kind in (dict, list):
        got = find_json(text, kind)
        assert got is None or isinstance(got, kind)
    assert isinstance(close_truncated(text), str)


@fuzz(150)
@given(finite_json, st.sampled_from(["", "Sure: ", "<think>hmm</think>\n", "Answer - "]), st.booleans())
def test_structured_json_round_trips(value, prose, fenced):
    text = json.dumps(value)
    assert extract_json(text) == (value, None)
    body = f"```json\n{text}\n```" if fenced else text
    got, err = extract_json(prose + body + ("\nThanks." if prose else ""))
    if isinstance(value, dict) or fenced or not prose:
        assert err is None and got == value
    if isinstance(value, dict):
        assert find_json(prose + body + " the end", dict) == value


@fuzz(150)
@given(json_values, st.sampled_from(sorted(SCHEMAS)))
def test_structured_validate_never_raises(value, schema):
    err = validate(value, SCHEMAS[schema])
    assert err is None or (isinstance(err, str) and err)


DEEP = '{"action": ' + "[" * 5000  # a degenerate reply: an object, then a bracket repeated


@pytest.mark.parametrize("reader", ["extract_json", "find_json", "find_json-list", "parse_act", "parse_message",
                                    "parse_assignments", "parse_decoded", "read_memory"])
def test_structured_deep_nesting_is_unusable_not_a_crash(reader):
    fn = {"extract_json": extract_json, "find_json": find_json, "find_json-list": lambda t: find_json(t, list),
          "parse_act": R.parse_act, "parse_message": lambda t: R.parse_message(t, "json_object"),
          "parse_assignments": R.parse_assignments, "parse_decoded": R.parse_decoded,
          "read_memory": lambda t: R.read_memory("[MEMORY] " + t)}[reader]
    if reader.startswith("find_json"):  # a search: an inner list shallow enough to decode may be found
        got = fn(DEEP)
        assert got is None or isinstance(got, list if reader.endswith("list") else dict)
        return
    value, why = fn(DEEP)
    assert value is None and why


@pytest.mark.parametrize("text", ["9" * 4301, "```json\n" + "9" * 4301 + "\n```", '{"score": ' + "9" * 4301 + "}"])
def test_structured_huge_number_is_unusable_not_a_crash(text):
    value, why = extract_json(text)
    assert value is None and why


# ----------------------------------------------------------------------------------- MECoBench


@dataclasses.dataclass
class MecoState:
    """A real suite task's world after ``setup`` steps, seen by agent 0."""

    label: str
    task: Any
    setup: list[dict[int, Action]]
    obs: dict[str, Any]
    valid_actions: tuple[str, ...]
    rooms: list[str]
    doors: list[tuple[int, str, str]]

    def world(self):
        from collablab.studies.mecobench import make_world

        w = make_world(self.task, 2, 0)
        for acts in self.setup:
            w.step(acts)
        return w


@functools.cache
def meco_states() -> tuple[MecoState, ...]:
    from collablab.studies.mecobench import make_world
    from collablab.studies.mecobench.suite import load_suite

    out = []
    for task in load_suite(0, limit=1):  # cl000-p (parallel) and cl000-s (sequential)
        w = make_world(task, 2, 0)
        names = w.scene.rooms
        doors = [(d.id, names[d.rooms[0]], names[d.rooms[1]]) for d in w.scene.doors]
        rooms = sorted({r for _, a, b in doors for r in (a, b)} | {names[r] for r in w.allowed[0]})

        def state(label, setup, world, task=task, rooms=rooms, doors=doors):
            return MecoState(f"{task.task_id}-{label}", task, setup, world.observe(0), tuple(world.action_names),
                             rooms, doors)

        out.append(state("empty", [], w))
        obs = w.observe(0)
        grab = next(v for v in obs["visible"] if "GRABBABLE" in v["properties"] and v["held_by"] is None)
        setup = [{0: Action("walk", obj=grab["id"]), 1: Action("wait")}, {0: Action("grab", obj=grab["id"]), 1: Action("wait")}]
        for acts in setup:
            w.step(acts)
        assert w.observe(0)["holding"], "setup: agent 0 holds an object"
        out.append(state("holding", setup, w))
    return tuple(out)


def _meco_pieces() -> list[str]:
    s = meco_states()
    cls = sorted({v["class_name"] for st_ in s for v in st_.obs["visible"]} | {h["class_name"] for st_ in s for h in st_.obs["holding"]})
    ids = sorted({str(v["id"]) for st_ in s for v in st_.obs["visible"]})
    return (["[THINKING]", "[ACTION]", "[ MEMORY ]", "[MESSAGE]", "[MESSAGES]", "[READY]", "[LOCAL_CONTEXT]",
             "[action]", "READY", "CONTINUE", "<NO_MESSAGE>", "NO_MESSAGE", '"action": ', '"parameter_1": ',
             '"parameter_2": ', '"receiver": "Agent 1"', '"content": ', '"parameter_ids": [', '"memory": {',
             '"message": ', "Agent 0", "Agent 1", "Agent 9"] + list(s[0].valid_actions) + ALIASES
            + cls + ids + s[0].rooms)


meco_text = st.deferred(lambda: st.one_of(texts(_meco_pieces()), json_texts))


@fuzz(120)
@given(meco_text, st.sampled_from(["none", "json_object", "json_schema"]))
@example("[MESSAGES] [{\"receiver\": \"Agent " + "9" * 4400 + "\", \"content\": \"go\"}]", "none")
@example("[ACTION] " + '{"a":' * 3, "none")
def test_meco_reply_readers_never_raise(text, mode):
    secs = R.sections(text)
    assert all(isinstance(k, str) and all(isinstance(b, str) for b in v) for k, v in secs.items())
    got = {name: fn(text) for name, fn in (
        ("read_action", R.read_action), ("read_memory", R.read_memory), ("read_message", R.read_message),
        ("parse_assignments", R.parse_assignments), ("parse_act", R.parse_act), ("parse_decoded", R.parse_decoded),
        ("parse_message", lambda t: R.parse_message(t, mode)))}
    for name, (value, why) in got.items():  # a value, or None and why (read_message: None, None is silence)
        assert (value is None) != (why is None) or (name == "read_message" and value is None), (name, value, why)
        assert why is None or (isinstance(why, str) and why)
    assert R.read_ready(text)[0] in (True, False, None)  # None: no readable READY answer
    act = got["parse_act"][0]
    if act is not None:
        assert isinstance(act["action"], dict) and ("action" in act["action"] or "name" in act["action"])
        assert act["memory"] is None or isinstance(act["memory"], dict)
    msg = got["parse_message"][0]
    if msg is not None:
        assert (msg["message"] is None or isinstance(msg["message"], str)) and msg["ready"] in (True, False, None)
        assert isinstance(msg["local_context"], str)
    out, ignored = R.assignments_of(got["parse_assignments"][0], 3)
    assert set(out) <= {0, 1, 2} and all(isinstance(v, str) and v for v in out.values())
    assert all(isinstance(i, str) for i in ignored)


@fuzz(150)
@given(json_values, st.integers(0, 5))
@example([{"receiver": "Agent " + "9" * 4400, "content": "x"}], 2)
def test_meco_assignments_of_never_raises(items, n):
    out, ignored = R.assignments_of(items, n)
    assert set(out) <= set(range(n)) and all(isinstance(i, str) for i in ignored)


def _obj_values() -> st.SearchStrategy[Any]:
    s = meco_states()
    cls = sorted({v["class_name"] for v in s[0].obs["visible"]})
    ids = [v["id"] for v in s[0].obs["visible"]]
    name = st.one_of(st.sampled_from(cls), st.sampled_from(cls).map(str.upper), st.sampled_from(cls).map(lambda c: c + "s"),
                     st.sampled_from(cls).map(lambda c: "red " + c), st.sampled_from(cls).map(lambda c: c[:-1] + "x"),
                     st.text(max_size=10), st.sampled_from(SPECIAL_STRINGS + ODD_DIGITS))
    oid = st.one_of(st.sampled_from(ids), st.sampled_from(ids).map(lambda i: i + 1), st.integers(),
                    st.floats(), st.booleans(), st.none(), st.sampled_from(HUGE + ODD_DIGITS + ["376", " 12 "]))
    text_ref = st.builds(lambda n, i, f: f.format(n=n, i=i), name, oid,
                         st.sampled_from(["{n} ({i})", "{n} #{i}", "{n} <{i}>", "id: {i}", "{i}", "{n}", "({i}"]))
    dict_ref = st.fixed_dictionaries({}, optional={"name": name | json_scalars, "description": st.text(max_size=40) | text_ref,
                                                   "id": oid, "class_name": name, "object_id": oid})
    return st.one_of(text_ref, dict_ref, oid, st.lists(text_ref | dict_ref, max_size=2), json_values)


obj_values = st.deferred(_obj_values)


@fuzz(200)
@given(obj_values)
@example("²")
@example("9" * 4400)
@example("juice (" + "9" * 4400 + ")")
@example({"name": "juice", "id": float("inf")})
@example({"name": "juice", "id": float("nan")})
def test_meco_obj_ref_never_raises(value):
    ref = G.obj_ref(value)
    assert isinstance(ref.name, str) and isinstance(ref.description, str)
    assert ref.id is None or (isinstance(ref.id, int) and not isinstance(ref.id, bool))


def _sems() -> st.SearchStrategy[Any]:
    s = meco_states()
    names = st.one_of(st.sampled_from(list(s[1].valid_actions) + ALIASES),
                      st.sampled_from(["[Grab]", "pick up", "put-in", "Walk To Room", "GRAB", "fly", ""]), json_scalars)
    rooms = st.one_of(st.sampled_from(s[0].rooms), st.sampled_from(s[0].rooms).map(lambda r: f"the {r} area"),
                      st.sampled_from(["living room", "garage", "door 5", "door to the kitchen"]), obj_values)
    agents = st.one_of(st.sampled_from(["Agent 0", "Agent 1", "agent_1", "Agent " + "9" * 4400, "Bob"]),
                       st.integers(-2, 3), json_scalars, st.fixed_dictionaries({"name": st.sampled_from(["Agent 1", "x"])}))
    doors = st.one_of(st.sampled_from([d for d, _, _ in s[1].doors]), st.sampled_from(["door 5", "door " + "9" * 4400,
                                                                                        "the door to the kitchen"]),
                      obj_values)
    sem = st.fixed_dictionaries({"action": names}, optional={
        "parameter_1": obj_values | rooms | doors, "parameter_2": obj_values | agents, "object": obj_values,
        "target": obj_values, "room": rooms, "door": doors, "recipient": agents, "name": names})
    return st.one_of(sem, sem, sem, json_values)


sems = st.deferred(_sems)


def _check_grounded(g: G.Grounded, s: MecoState) -> None:
    vis, held = G.candidates(s.obs)
    assert isinstance(g, G.Grounded) and isinstance(g.executed, str)
    if not g.ok:
        assert isinstance(g.error, str) and g.error and g.action.name in (G.INVALID_REPLY, G.INVALID_GROUNDING)
        return
    a = g.action
    assert a.name in s.valid_actions, a
    vis_ids, held_ids = {c.id for c in vis}, {c.id for c in held}
    if a.name in ("walk", "grab", "open", "close"):
        assert a.obj in vis_ids
    if a.name in ("put_on", "put_in", "handover"):
        assert a.obj in held_ids
    if a.name in ("put_on", "put_in"):
        assert a.target in vis_ids and a.target != a.obj
    if a.name == "handover":
        assert a.recipient in (0, 1) and a.recipient != s.obs["agent"]
    if a.name == "walk_to_room":
        assert a.room in s.rooms
    if a.name == "walk_to_door":
        assert a.door in {d for d, _, _ in s.doors}
    w = s.world()  # the grounded action runs in the world it was grounded in
    results = w.step({0: a, 1: Action("wait")})
    assert {r.agent for r in results} == {0, 1}


@fuzz(200)
@given(sems, st.integers(0, 3))
@example({"action": "walk", "parameter_1": "²"}, 0)
@example({"action": "grab", "parameter_1": {"name": "juice", "id": float("inf")}}, 0)
@example({"action": "walk", "parameter_1": "fryingpan (" + "9" * 4400 + ")"}, 0)
@example({"action": "grab", "parameter_1": {"name": "wine", "description": "the one #" + "9" * 4400}}, 0)
@example({"action": "walk_to_door", "parameter_1": "door " + "9" * 4400}, 1)
@example({"action": "handover", "parameter_1": None, "recipient": "Agent " + "9" * 4400}, 3)
def test_meco_ground_never_raises_and_runs(sem, which):
    s = meco_states()[which]
    g = G.ground(sem, s.obs, valid_actions=s.valid_actions, rooms=s.rooms, doors=s.doors, n_agents=2)
    _check_grounded(g, s)


def _act_replies() -> st.SearchStrategy[str]:
    memory = st.one_of(st.just(""), json_values.map(lambda v: " [MEMORY] " + dumps(v)),
                       st.just(' [MEMORY] {"found": {"juice": "kitchen"}}'))
    body = st.builds(lambda think, sem, mem: f"[THINKING] {think}\n[ACTION] {dumps(sem)}{mem}",
                     st.text(max_size=40), sems, memory)
    return mutated(body)


@fuzz(200)
@given(st.deferred(_act_replies), st.integers(0, 3))
def test_meco_act_replies_parse_and_ground(text, which):
    s = meco_states()[which]
    parsed, why = R.parse_act(text)
    if parsed is None:
        assert isinstance(why, str) and why
        return
    g = G.ground(parsed["action"], s.obs, valid_actions=s.valid_actions, rooms=s.rooms, doors=s.doors, n_agents=2)
    _check_grounded(g, s)


@fuzz(100)
@given(st.data(), st.integers(0, 3), st.sampled_from(["plain", "think", "fence", "untagged", "wrapped"]))
def test_meco_written_ids_round_trip(data, which, style):
    """An action naming a candidate by class and id reads and grounds to exactly that candidate."""
    s = meco_states()[which]
    vis, held = G.candidates(s.obs)
    if held and "put_on" in s.valid_actions and data.draw(st.booleans()):
        h = data.draw(st.sampled_from(held))
        t = data.draw(st.sampled_from([c for c in vis if "SURFACES" in c.props and c.id != h.id]))
        sem = {"action": "put_on", "parameter_1": {"name": h.cls, "id": h.id}, "parameter_2": f"{t.cls} ({t.id})"}
        want = Action("put_on", obj=h.id, target=t.id)
    else:
        c = data.draw(st.sampled_from(vis))
        sem = {"action": "walk", "parameter_1": {"name": c.cls, "description": "the one I saw", "id": c.id}}
        want = Action("walk", obj=c.id)
    blob = json.dumps(sem)
    text = {"plain": f"[THINKING] go\n[ACTION] {blob}\n[MEMORY] {{}}",
            "think": f"<think>[ACTION] {{\"action\": \"wait\"}}</think>\n[ACTION]\n{blob}",
            "fence": f"[ACTION]\n```json\n{blob}\n```", "untagged": f"I will do {blob}.",
            "wrapped": "[ACTION] " + json.dumps({"action": sem})}[style]
    parsed, why = R.parse_act(text)
    assert why is None, why
    if style == "think":  # the first [ACTION] block wins, even inside <think>
        return
    g = G.ground(parsed["action"], s.obs, valid_actions=s.valid_actions, rooms=s.rooms, doors=s.doors, n_agents=2)
    assert g.ok and g.action == want, (g, want)


words = st.lists(st.text(alphabet=st.characters(categories=("L", "N")), min_size=1, max_size=8), min_size=1,
                 max_size=6).map(" ".join)


@fuzz(100)
@given(words, st.booleans(), st.text(alphabet=st.characters(categories=("L",)), max_size=20))
def test_meco_message_round_trips(message, ready, local):
    text = f"[MESSAGE] {message}\n[READY] {'READY' if ready else 'CONTINUE'}\n[LOCAL_CONTEXT] {local}"
    parsed, why = R.parse_message(text)
    assert why is None
    assert parsed == {"message": message, "ready": ready, "local_context": local}


# ----------------------------------------------------------------------------------- MASTraceBench



@functools.cache
def mas_instances() -> dict[str, list[tuple[Any, Any]]]:
    """Per task: (task object, instance or decision state) pairs of real generated instances."""
    game = GM.new_game()
    for mv in ((7, 7), (7, 8), (8, 8)):
        game = GM.place(game, mv)
    duel = TD.new_duel()
    duel2 = TD.resolve(duel, "Charge", "Quick")
    neg = NG.new_negotiation(NG.negotiation_configs(1, 0)[0])
    return {
        "mapf": [(MP.MAPFTask(), i) for i in MP.generate_mapf(2, 0)],
        "evidence_chain": [(EC.EvidenceChainTask(), i) for i in EC.generate_evidence(2, 0)],
        "gomoku": [(GM.GomokuTask(), GM.new_game()), (GM.GomokuTask(), game)],
        "tactic_duel": [(TD.TacticDuelTask(), TD.DuelDecision(duel, 0, "Heavy")),
                        (TD.TacticDuelTask(), TD.DuelDecision(duel2, 0, "Guard"))],
        "negotiation": [(NG.NegotiationTask(), neg), (NG.NegotiationTask(), NG.advance(neg, NG.allocations(neg.config)[0], False))],
        "option_gen": [(OG.OptionGenTask(), None)],
    }


MAS_PIECES = [
    '{"approve": true}', '{"approve": "yes"}', "approve", "reject", "revise", "LGTM", '{"score": ', "/10",
    '{"claims": [', '{"endorse": [', '"challenge": [', "c1", "c2", "- ", "1. ", "2) ", "robot_1", "Robot 2:",
    "r3", '"plan": ', "U", "D", "L", "R", "S", "up", "stay", "wait", "URDL", '{"chain": [', "fact 3", "F3", "#3",
    "Chain: 3 -> 1 -> 5", "3, 1, 5", "evidence", '{"row": ', '"col": ', '{"move": "H8"}', "H8", "Z99", "(7, 7)",
    "[7,7]", '{"action": "', "Attack", "Defend", "Burst", "Charge", "attack", '{"self": {"book": ', '"opponent": {',
    "I take", "you take", "the rest", "2 books", "a hat", "ball", "balls", "nothing", '{"accept": true}', "accept",
    "rejected", '{"correct": "', '"distractors": [', "Correct:", "Distractors:", "Distractor 1:", "A. ", "(b) ",
    '"options": [', '"answer": "B"', '"answer": ""', '{"correct_score": ', '"distractor_score": ', "95%", "def forward(task):",
    "    return call_llm('x')", "```python\n", '{"program": "', "import os", "forward = lambda t: t",
] + list(TD.ACTIONS)

mas_text = st.one_of(texts(MAS_PIECES), json_texts)


def _check_proposal(task: Any, inst: Any, got: Any) -> None:
    assert is_invalid(got) or got is not None
    if is_invalid(got):
        assert isinstance(got.reason, str) and got.reason
    hash(task.canonical(got))
    if task.name != "option_gen":  # OptionGen's score needs a judge
        score = task.score(got, inst)
        assert 0.0 <= score <= 100.0 and not math.isnan(score)


@fuzz(300)
@given(mas_text, st.sampled_from(["mapf", "evidence_chain", "gomoku", "tactic_duel", "negotiation", "option_gen"]),
       st.integers(0, 1))
@example("[" * 1200, "mapf", 0)
@example('{"a": ' + "[" * 1200 + "}", "gomoku", 0)
@example('{"a": ' + "[" * 1200 + "}", "tactic_duel", 0)
@example("{" + '"self": {' * 1200, "negotiation", 0)
@example('{"robot_' + "1" * 4400 + '": "U"}', "mapf", 0)
@example("Robot " + "1" * 4400 + ": U R", "mapf", 0)
@example("(" + "9" * 4400 + ", 1)", "gomoku", 0)
@example("I take " + "9" * 4400 + " books", "negotiation", 0)
@example('["F' + "9" * 4400 + '"]', "evidence_chain", 0)
@example("Chain: 3, " + "9" * 4400, "evidence_chain", 0)
@example("1" + " " * 12 + "1" + " " * 12 + "1" + " " * 12 + "x", "evidence_chain", 0)
@example(" " * 100 + "x", "evidence_chain", 0)
@example("Distractors" + " " * 300 + "x", "option_gen", 0)
def test_mas_task_parsers_never_raise(text, name, k):
    task, inst = mas_instances()[name][k % len(mas_instances()[name])]
    _check_proposal(task, inst, task.parse(text, inst))


@fuzz(80)
@given(mas_text, st.lists(st.sampled_from(["c1", "c2", "3", "x"]), max_size=3))
@example("[" * 1200, ["c1"])
@example('{"approve": ' + "[" * 1200, [])
def test_mas_role_parsers_never_raise(text, shown):
    v = ROLES.parse_verdict(text)
    assert v in (True, False, None)
    r = ROLES.parse_rating(text)
    assert isinstance(r, float) and 0.0 <= r <= 10.0
    claims = ROLES.parse_claims(text)
    assert all(isinstance(c, str) and c.strip() == c and c for c in claims)
    e, c = ROLES.parse_claim_votes(text, shown)
    assert e <= set(shown) and c <= set(shown)
    resp = NG.parse_response(text)
    assert resp in (True, False) or is_invalid(resp)
    judged = OJ.parse_judge_reply(text)
    assert isinstance(judged, str) or all(0.0 <= x <= 100.0 for x in judged)
    prog = MG.extract_program(text)
    assert prog is None or (isinstance(prog, str) and "forward" in prog)


@pytest.mark.parametrize("text", ['{"program": ' + "[" * 5000, "[" * 5000, "```python\n" + "(" * 500 + "\n```"])
def test_mas_gpt_deeply_nested_program_reply_is_no_program(text):
    assert MG.extract_program(text) is None


moves = st.text(alphabet="UDLRS", max_size=12).map(tuple)


@fuzz(150)
@given(st.data(), st.sampled_from(["mapf", "evidence_chain", "gomoku", "tactic_duel", "negotiation", "option_gen"]))
def test_mas_rendered_replies_read_back(data, name):
    """Each offline writer's reply (the format every method asks for) parses to what it wrote."""
    task, inst = data.draw(st.sampled_from(mas_instances()[name]))
    if name == "mapf":
        value = tuple(data.draw(moves) for _ in range(inst.n_robots))
        text = OFF.render_mapf(value, inst)
    elif name == "evidence_chain":
        value = tuple(data.draw(st.lists(st.integers(0, 10**6), max_size=8)))
        text = OFF.render_evidence(value, inst)
    elif name == "gomoku":
        value = data.draw(st.sampled_from(GM.legal_moves(inst)))
        text = OFF.render_gomoku(value, inst)
    elif name == "tactic_duel":
        value = data.draw(st.sampled_from(TD.legal_actions(inst.state, inst.player)))
        text = OFF.render_tactic_duel(value, inst)
    elif name == "negotiation":
        value = data.draw(st.sampled_from(NG.allocations(inst.config)))
        text = NG.render_allocation(value, inst)
    else:
        opt = st.text(alphabet=st.characters(categories=("L", "N", "Zs"), include_characters='"{}[],\\\'?!-'),
                      min_size=1, max_size=30).map(str.strip).filter(lambda s: s and not re.match(r"^\(?[A-Da-d][.):]\s", s))
        value = OG.OptionSet(data.draw(opt), tuple(data.draw(opt) for _ in range(3)))
        text = OFF.render_option_gen(value, inst)
    wrap = data.draw(st.sampled_from(["{}", "Final answer: {}", "```json\n{}\n```", "<think>draft</think>\n{}"]))
    assert task.parse(wrap.format(text), inst) == value, text


@fuzz(100)
@given(st.booleans(), st.floats(allow_nan=False), st.lists(st.text(max_size=20), max_size=4),
       st.lists(st.sampled_from(["c1", "c2", "c3"]), max_size=3), st.lists(st.sampled_from(["c1", "c2", "c9"]), max_size=3))
def test_mas_role_replies_read_back(approve, score, claims, endorse, challenge):
    assert ROLES.parse_verdict(json.dumps({"approve": approve, "feedback": "reject" if approve else "ok"})) is approve
    assert ROLES.parse_rating(json.dumps({"score": score})) == min(10.0, max(0.0, score))
    assert ROLES.parse_claims(json.dumps({"claims": claims})) == [c.strip() for c in claims if c.strip()]
    shown = ["c1", "c2", "c3"]
    got = ROLES.parse_claim_votes(json.dumps({"endorse": endorse, "challenge": challenge}), shown)
    assert got == (set(endorse) & set(shown), set(challenge) & set(shown))


@pytest.mark.parametrize("line", [
    "1" + " " * 40 + "1" + " " * 40 + "1" + " " * 40 + "then",  # aligned columns
    " " * 200 + "x", "1" + " " * 2000 + "x", "Chain:" + " " * 2000 + "3 -> 1" + " " * 2000 + "x"])
def test_mas_evidence_line_reader_is_fast_on_whitespace_runs(line):
    """The id-line pattern backtracked exponentially on runs of spaces (1 s at 10 spaces between
    three ids, 11 s for 80 leading spaces)."""
    t0 = time.perf_counter()
    got = EC.parse_evidence(line)
    assert time.perf_counter() - t0 < 2.0 and (is_invalid(got) or isinstance(got, tuple))


@pytest.mark.parametrize("text", ["Distractors" + " " * 1500 + "x", "robot" + " " * 1500 + "-" * 1500 + " " * 1500 + "x",
                                  " " * 1500 + "-" * 1500 + " " * 1500 + "robot 1 x"])
def test_mas_line_readers_are_fast_on_whitespace_runs(text):
    """OptionGen's ``Distractors:`` line and MAPF's ``Robot k:`` line were cubic in a run of spaces."""
    t0 = time.perf_counter()
    OG.parse_options(text)
    MP.parse_mapf(text, mas_instances()["mapf"][0][1])
    assert time.perf_counter() - t0 < 2.0


# ----------------------------------------------------------------------------------- DynaHMRC



class _Stub:
    """The client surface the brains and planners use (``endpoint``, ``chat_sync``): replies in turn."""

    def __init__(self, replies: list[str]) -> None:
        self.endpoint = EndpointSpec(alias="stub", model="stub-model", api_key_env=None)
        self.replies, self.i = list(replies) or [""], 0

    def chat_sync(self, messages: Any, **kw: Any) -> LLMResult:
        text = self.replies[self.i % len(self.replies)]
        self.i += 1
        return LLMResult(text=text, usage=Usage(3, 2, 5), latency_s=0.0, cache="off", attempts=1, error=None,
                         model="stub-model", endpoint="stub", call_id=str(kw.get("call_id", "")), finish_reason="stop")


@dataclasses.dataclass
class DynaState:
    task: Any
    world: Any  # after a short offline episode (known objects, opened containers)
    ctxs: list[Any]  # robots' HMRC contexts seen in it
    move_ctx: Any  # a context with a real local costmap (HMRC_MOVE)
    places: list[str]
    objects: list[str]
    robots: list[str]


@functools.cache
def dyna_state() -> DynaState:
    from collablab.studies.dynahmrc import spec as spec_mod
    from collablab.studies.dynahmrc.framework import Config, run_episode

    s = spec_mod.resolve({"team": "Ma-MoMa-UAV", "level": "medium", "instance": 0})
    task = spec_mod.task_of(s)
    world = spec_mod.make_world(task)
    make = spec_mod.brain_maker(s)
    seen: list[Any] = []

    class Seeing:
        def __init__(self, inner):
            self.inner, self.label = inner, inner.label

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def act(self, ctx):
            seen.append(ctx)
            return self.inner.act(ctx)

    brains = {n: Seeing(make(n, r.type.code)) for n, r in world.robots.items()}
    run_episode(world, brains, max_steps=4, text=task.text, config=Config())
    mover = next(r for r in world.robots.values() if r.type.can("move"))
    ctx = next(c for c in reversed(seen) if c.name == mover.name)
    goal = min(world.objects)
    costmap = world.layout.local_costmap(mover.pos, world.objects[goal].pos, mover.type.radius_m, mover.type.flies)
    move_ctx = dataclasses.replace(ctx, costmap=costmap, goal=goal)
    return DynaState(task, world, seen, move_ctx, sorted(world.layout.places), sorted(world.objects), sorted(world.robots))


def _dyna_pieces() -> list[str]:
    d = dyna_state()
    return (["navigate(", "[navigate] to ", "stand_pose_", "stand_pose_9", " of ", "open(", "[open] ", "pick(",
             "pick up ", "place(", " on ", " into ", " in ", "move(", "move()", "[move]", "and", "communicate(",
             "[communicate] ", " to ", "all", "everyone", "wait()", "[wait]", "Contents:", "contents :", "Thoughts:",
             "Reasons:", "Leader:", "Summaries:", "Plans:", "Plan:", "Speech:", "Actions:", "cell(", "cell (2, 3)",
             "row 2 col 3", "row", "column", "0.2", "-0.35", "1e-05", "e+16", "inf", "nan", "stand_pose_" + "9" * 4400]
            + d.places[:12] + d.objects[:12] + d.robots + [f"{r}:" for r in d.robots])


dyna_text = st.deferred(lambda: texts(_dyna_pieces()))


@fuzz(300)
@given(dyna_text)
@example("navigate(table_0, stand_pose_" + "9" * 4400 + ")")
@example("[navigate] to stand_pose_" + "9" * 4400 + " of table_0")
@example("move(" + "9" * 400 + ", 0)")
@example("move(1e-05, 0.1)")
def test_dyna_parse_action_raises_only_action_error(text):
    try:
        a = parse_action(text)
    except ActionError as exc:
        assert str(exc)
        return
    assert isinstance(a, DAction)
    if a.name == "move":
        assert math.isfinite(a.dx) and math.isfinite(a.dy)
    canon = format_action(a)
    assert format_action(parse_action(canon)) == canon  # the logged text reads back to itself


def _dyna_actions() -> st.SearchStrategy[DAction]:
    d = dyna_state()
    num = st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: round(x, 3)) | st.floats(allow_nan=False, allow_infinity=False)
    # format_action writes the content with repr() (escaping quotes, backslashes, newlines, a
    # non-breaking space ...) and parse_action unescapes it: any content reads back
    content = st.text(min_size=1, max_size=40).map(str.strip).filter(bool)
    return st.one_of(
        st.builds(lambda p, k: DAction("navigate", target=p, pose=k), st.sampled_from(d.places), st.integers(0, 10**6)),
        st.builds(lambda o: DAction("open", target=o), st.sampled_from(d.places)),
        st.builds(lambda o: DAction("pick", target=o), st.sampled_from(d.objects)),
        st.builds(lambda o, p: DAction("place", target=o, where=p), st.sampled_from(d.objects), st.sampled_from(d.places)),
        st.builds(lambda x, y: DAction("move", dx=x, dy=y), num, num),
        st.builds(lambda c, to: DAction("communicate", content=c, to=to), content,
                  st.sampled_from([("all",)] + [(r,) for r in d.robots] + [tuple(d.robots[:2])])),
        st.just(DAction("wait")),
    )


@fuzz(200)
@given(st.deferred(_dyna_actions), st.sampled_from(["{}", "Contents: {}", "Thoughts: ok\nContents: `{}`", "**{}**"]))
@example(DAction("move", dx=1e-05, dy=0.1), "{}")
@example(DAction("move", dx=-2.5e16, dy=0.0), "{}")
def test_dyna_formatted_actions_read_back(action, wrap):
    text = format_action(action)
    got = parse_action(wrap.format(text))
    if action.name == "move":  # the text keeps 6 significant digits
        assert (got.name, got.dx, got.dy) == ("move", float(f"{action.dx:g}"), float(f"{action.dy:g}"))
    else:
        assert got == action


@fuzz(200)
@given(dyna_text, st.integers(0, 2))
def test_dyna_world_executes_any_reply(text, k):
    from collablab.studies.dynahmrc.world import FEEDBACK_KINDS

    d = dyna_state()
    world = copy.deepcopy(d.world)
    fb = world.execute(d.robots[k], text)
    assert fb.kind in FEEDBACK_KINDS and isinstance(fb.text, str) and isinstance(fb.ok, bool)


@fuzz(250)
@given(dyna_text)
@example("Contents: cell(" + "9" * 4400 + ", 1)")
def test_dyna_reply_readers_never_raise(text):
    d = dyna_state()
    names = ("thoughts", "contents", "reasons", "leader", "summaries", "plans", "plan", "speech", "actions")
    secs = LB.parse_sections(text, names)
    assert set(secs) <= set(names) and all(isinstance(v, str) for v in secs.values())
    name, why = LB.parse_leader(text, d.robots)
    assert (name in d.robots and why is None) or (name is None and isinstance(why, str))
    joint, why = LB.parse_team_actions(text, d.robots)
    assert (joint is None and isinstance(why, str)) or (set(joint) == set(d.robots) and why is None)
    cm = d.move_ctx.costmap
    off, why = LB.parse_move_offset(text, cm)
    assert (off is None and isinstance(why, str)) or (why is None and all(math.isfinite(v) for v in off))
    for stage in LB.CALLS:
        reply = LB.read_reply(stage, text, d.move_ctx if stage == "HMRC_MOVE" else d.ctxs[-1])
        assert reply.invalid is None or isinstance(reply.invalid, str)
        if stage == "HMRC" and reply.invalid is None and reply.value != "move()":
            parse_action(reply.value)  # the action text the framework executes reads back


@pytest.mark.parametrize("text", ["Contents: cell(" + "9" * 4400 + ", 1)", "row " + "9" * 4400 + " col 1"])
def test_dyna_move_reply_with_a_huge_cell_is_invalid_not_a_crash(text):
    off, why = LB.parse_move_offset(text, dyna_state().move_ctx.costmap)
    assert off is None and why


def _dyna_replies() -> st.SearchStrategy[list[str]]:
    d = dyna_state()
    act = _dyna_actions().map(format_action)
    reply = st.one_of(
        st.builds(lambda t, a: f"Thoughts: {t}\nContents: {a}", st.text(max_size=20), act),
        st.just("Thoughts: the object is out of reach\nContents: move()"),
        st.builds(lambda x, y: f"Thoughts: step\nContents: move({x}, {y})", st.sampled_from(["0.00001", "1e-05", "0.2", "9" * 400]),
                  st.sampled_from(["0.1", "-0.00002", "0"])),
        st.builds(lambda r, c: f"Contents: cell({r}, {c})", st.integers(-2, 14), st.integers(-2, 14)),
        st.builds(lambda n: f"Thoughts: x\nReasons: y\nLeader: {n}", st.sampled_from(d.robots + ["Nobody", ""])),
        st.just("Thoughts: ok\nSummaries: went well\nPlans: keep going"),
        st.builds(lambda t: f"Thoughts: x\nContents: Plan: {t}\nSpeech: vote for me", st.text(max_size=30)),
        st.builds(lambda acts: "Actions:\n" + "\n".join(f"{r}: {a}" for r, a in zip(d.robots, acts)),
                  st.lists(act, min_size=3, max_size=3)),
        dyna_text,
    )
    return st.lists(reply, min_size=1, max_size=8)


@fuzz(60)
@given(st.deferred(_dyna_replies))
@example(["Thoughts: x\nContents: move()", "Thoughts: y\nContents: move(0.00001, 0.1)"])
@example(["Thoughts: x\nContents: move()", "Contents: move(" + "9" * 400 + ", 0)"])
def test_dyna_llm_episode_survives_any_replies(replies):
    """Whole episodes of LLM robots (every stage's call answered by the fuzzed replies in turn)."""
    from collablab.studies.dynahmrc import spec as spec_mod
    from collablab.studies.dynahmrc.framework import Config, run_episode

    d = dyna_state()
    world = spec_mod.make_world(d.task)
    brains = {n: LB.LLMBrain(_Stub(replies[i:] + replies[:i])) for i, n in enumerate(world.robots)}
    log = run_episode(world, brains, max_steps=3, text=d.task.text, config=Config(k_sel=1, reflect_every=2))
    assert log.steps and all(s["kind"] for s in log.steps)


# ----------------------------------------------------------------------------------- PARTNR



@dataclasses.dataclass
class PartnrState:
    task: Any
    observations: list[Any]  # each agent's last Observation of a short heuristic episode
    entities: list[str]


@functools.cache
def partnr_state() -> PartnrState:
    from collablab.studies.partnr.episode import Channels, Episode
    from collablab.studies.partnr.offline import OfflinePlanner
    from collablab.studies.partnr.tasks import generate_task, load_task

    task = load_task(generate_task(0, "rearrange"))
    seen: dict[int, Any] = {}

    class Seeing:
        label = "seeing"

        def __init__(self, agent):
            self.inner, self.agent = OfflinePlanner(agent=agent), agent

        def decide(self, obs):
            seen[self.agent] = obs
            return self.inner.decide(obs)

    ep = Episode(task, [Seeing(0), Seeing(1)], Channels(oas=True, oana=True), max_cycles=4)
    ep.run()
    w = ep.world
    entities = sorted(w.objects) + sorted(w.furniture) + sorted(w.room_box)
    return PartnrState(task, [seen[0], seen[1]], entities)


def _partnr_pieces() -> list[str]:
    p = partnr_state()
    return (list(TOOLS) + [f"{t}[" for t in TOOLS] + ["]", "[]", "on", "within", "next_to", "None", "Assigned!",
                                                    "Thought:", "**Thought**:", "Prediction:", "Agent_1_Action:",
                                                    "_:0000", "_1", '{"tool": "', '"args": [', '"action": {',
                                                    '"prediction": {', '"thought": "'] + p.entities[:30])


partnr_text = st.deferred(lambda: texts(_partnr_pieces()))
tool_sets = st.sampled_from([tuple(TOOLS), ROBOT_TOOLS, HUMAN_TOOLS, ("Wait",), ("Navigate", "Pick")])


@fuzz(300)
@given(partnr_text, tool_sets)
@example("Place[cup_1, on, table_2]", ROBOT_TOOLS)
@example("Navigate[a, b]", ROBOT_TOOLS)
@example("'Pick[`cup_1`]'", ROBOT_TOOLS)
@example('Pick["  "x]', ROBOT_TOOLS)
def test_partnr_call_readers_never_raise(text, tools):
    try:
        call = parse_call(text, tools)
    except ValueError as exc:
        assert str(exc)
    else:
        assert call.name in tools and len(call.args) in TOOLS[call.name].arities
        assert parse_call(call.text(), tools) == call
    found = find_call(text, tools)
    assert found is None or (found.name in tools and parse_call(found.text(), tools) == found)
    for line in text.splitlines()[:5]:
        assert isinstance(mask_id(line), str)


def _partnr_calls() -> st.SearchStrategy[ToolCall]:
    p = partnr_state()
    arg = st.one_of(st.sampled_from(p.entities), st.sampled_from(["on", "within", "next_to", "None", "cup_1_:0042"]),
                    st.text(alphabet=st.characters(categories=("L", "N"), include_characters="_-:"), min_size=1, max_size=12))

    def call(name: str, args: list[str], short: bool) -> ToolCall:
        spec = TOOLS[name]
        return ToolCall(name, tuple(args[:spec.arities[0] if short else len(spec.params)]))

    return st.builds(call, st.sampled_from(list(TOOLS)), st.lists(arg, min_size=5, max_size=5), st.booleans())


@fuzz(150)
@given(st.deferred(_partnr_calls), st.sampled_from(["{}", "  {}  ", "`{}`", "Thought: go\n{}\nAssigned!", "'{}'"]))
def test_partnr_calls_read_back(call, wrap):
    text = wrap.format(call.text())
    got = find_call(text, tuple(TOOLS)) if "\n" in text else parse_call(text)
    assert got == call


def _planner(replies: list[str], constrained: str):
    from collablab.studies.partnr.llm_planner import LLMPlanner

    return LLMPlanner(_Stub(replies), constrained=constrained, provider="compat")


def _partnr_replies() -> st.SearchStrategy[str]:
    call = st.deferred(_partnr_calls)
    react = st.builds(lambda t, c, pr: f"Thought: {t}\n{c.text()}\nAssigned!" + (f"\nPrediction: {pr.text()}" if pr else ""),
                      st.text(max_size=30), call, st.none() | call)
    jsonish = st.builds(lambda t, c, pr, junk: dumps({"thought": t, "action": {"tool": c.name, "args": list(c.args) + junk},
                                                      **({"prediction": {"tool": pr.name, "args": list(pr.args)}} if pr else {})}),
                        st.text(max_size=30), call, st.none() | call, st.lists(json_scalars, max_size=1))
    return st.one_of(mutated(react), mutated(jsonish), partnr_text, json_texts)


@fuzz(150)
@given(st.deferred(_partnr_replies), st.sampled_from(["none", "json_schema", "grammar"]), st.integers(0, 1))
@example('{"thought": "x", "action": {"tool": "Navigate", "args": [{"a": [1, {"b": null}]}]}}', "json_schema", 0)
def test_partnr_planner_reads_any_reply(text, constrained, agent):
    from collablab.studies.partnr.episode import Decision

    obs = partnr_state().observations[agent]
    d = _planner([text], constrained).decide(obs)
    assert isinstance(d, Decision) and isinstance(d.thought, str)
    if d.call is None:
        assert isinstance(d.error, str) and d.error
    else:
        assert d.call.name in obs.tools and d.error is None


def test_partnr_json_planner_deep_nesting_is_invalid_not_a_crash():
    d = _planner(['{"action": ' + "[" * 5000], "json_schema").decide(partnr_state().observations[0])
    assert d.call is None


def _scripts() -> st.SearchStrategy[list[str]]:
    p = partnr_state()
    known = st.sampled_from(p.entities)
    seq = st.lists(st.deferred(_partnr_calls).map(lambda c: f"Thought: next\n{c.text()}\nAssigned!"), max_size=6)
    explore = st.builds(lambda r, o, f, g: [f"Explore[{r}]", f"Navigate[{o}]", f"Pick[{o}]", f"Navigate[{f}]",
                                            f"Place[{o}, on, {f}, None, {g}]", f"Rearrange[{o}, within, {f}, next_to, {g}]"],
                        st.sampled_from(sorted(partnr_state().observations[0].world.room_box)), known, known, known)
    return st.one_of(seq, explore, st.lists(st.deferred(_partnr_replies), max_size=4))


def _fresh_partnr_episode(script0: list[str], script1: list[str]):
    from collablab.studies.partnr.episode import Channels, Episode

    planners = [_planner(script0 + ["Done[]"], "none"), _planner(script1 + ["Done[]"], "none")]
    ep = Episode(partnr_state().task, planners, Channels(oas=True, oana=True), max_cycles=len(script0) + len(script1) + 2)
    return planners, ep


@fuzz(80)
@given(st.deferred(_scripts), st.deferred(_scripts))
def test_partnr_episode_survives_any_calls(script0, script1):
    """Whole episodes whose planners answer the fuzzed replies in turn: every call is planned by the
    skills and its phases executed in the world."""
    _, ep = _fresh_partnr_episode(script0, script1)
    result = ep.run()
    assert result is not None and all(isinstance(log.feedback, str) for log in ep.logs)


def test_partnr_place_with_a_furniture_as_reference_is_a_failed_call():
    """Found by the fuzzer: ``Place[obj, on, furniture, None, <furniture>]`` once the object is held
    next to the furniture looked the reference up among objects (KeyError in the skill)."""
    w = _fresh_partnr_episode([], [])[1].world
    o = next(x for x in w.objects.values() if x.place and not w.hidden(x.handle))
    rel, furn = o.place
    other = next(f for f in w.furniture if f != furn)
    script = [f"Explore[{o.room}]", f"Navigate[{o.handle}]", f"Pick[{o.handle}]", f"Navigate[{furn}]",
              f"Place[{o.handle}, {rel}, {furn}, None, {other}]"]
    _, ep = _fresh_partnr_episode(script, [])
    ep.run()
    logs = [log for log in ep.logs if log.agent == 0]
    assert [log.ok for log in logs[:4]] == [True] * 4, [(log.call, log.feedback) for log in logs]
    assert logs[4].call.startswith("Place[") and not logs[4].ok and other in logs[4].feedback
