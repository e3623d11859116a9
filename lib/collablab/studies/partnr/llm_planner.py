"""PARTNR's zero-shot ReAct planner on an OpenAI-compatible model (observe_share_predict.txt
§3.1-3.3, §A.1.2 "Constraint Generation" and "Tool Call Grammar", §A.6 prompts, World
Description and Scene Summary examples).

Each planning cycle is one chat call: a system message (the planner's role, the partner, the
agent's own role) and a user message (task, world description, the OAS line when OAS is on,
the agent's tools, its earlier actions and results, the answer format). The prompt text lives
in ``prompts/*.txt`` (``$NAME$`` placeholders). The reply is PARTNR's ReAct form::

    Thought: <one line of reasoning>
    Prediction: <the partner's next action, objects as classes>      (OANA only, §3.3)
    <one tool call>
    Assigned!

World description (PARTNR's "summary" style): the layout (every room with its furniture,
known from the start, open state as the agent last saw it), then the objects of the agent's
own belief graph with where it last saw them and their states, what it holds, where it is and
the rooms it explored. The OAS line (``obs.partner_text``) is the partner's visible state
only: the prompt never holds the partner's thoughts, plans or predictions.

Constrained generation (``constrained``, :data:`CONSTRAINED`):

- ``grammar``: a GBNF grammar (:func:`tool_grammar`) sent as the request body's ``grammar``
  field (llama.cpp's OpenAI-compatible servers read it) through the OpenAI client's
  ``extra_body``. It allows one Thought line, the Prediction line under OANA (the partner's
  tools, object arguments from the episode's fixed class list: the classes of the task's
  objects plus every class the agent knows), and exactly one call of the agent's tools over
  the entities of its own world graph (rooms, furniture, known objects), then ``Assigned!``;
  a tool with no possible argument (Pick before any object is known) is left out (§A.1.2).
- ``json_schema``: the same as a JSON schema (:func:`tool_schema`) in ``response_format``
  (vLLM, OpenAI); the prompt then asks for the JSON object instead of the ReAct lines.
- ``none``: the prompt only (API models cannot use grammar-constrained decoding, §A.1.2).
- ``auto``: ``grammar`` for provider ``llamacpp``, ``json_schema`` for ``vllm``, else ``none``.

The constraint is part of the request parameters, hence of the response-cache key. Replies
are read the same way in every mode (the reply is the model's answer, never rejected for its
entities): :func:`~.calls.find_call` over the agent's tools (the JSON ``action`` is read as the
same call); a reply without a valid call is a :class:`~.episode.Decision` with ``call=None``
and ``error`` set, which the episode records as an invalid action. An entity absent from the
agent's graph (possible without a constraint) is passed on: the skills record the failure; an
empty reply is the model's too (``call=None``, ``error`` set). A call that got no reply (server
down past the client's outage wait, missing key, retries exhausted) raises the floor's
:class:`~collablab.llm.EndpointError` (:data:`PlannerError` is that class), also for a client
that returns a result with ``error`` set; a miss in ``replay`` cache mode raises the floor's
``CacheMiss``.

Call ids are logical, ``<namespace><episode_id>/agent<a>/step<t>/c<len(history)>`` (one per
planning cycle: every cycle adds one history entry), so replay does not depend on timing.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...llm import EndpointError, LLMClient, find_json, response_format_for
from ...llm.reply import recorded_thoughts
from .calls import STOP_WORD, TOOLS, ToolCall, find_call, mask_id, parse_call
from .episode import ROLES, Decision, Observation
from .skills import ROLE_TOOLS

__all__ = [
    "CONSTRAINED",
    "HISTORY_WINDOW",
    "LLMPlanner",
    "PlannerError",
    "auto_constraint",
    "build_messages",
    "episode_classes",
    "prompt_template",
    "thought_chars_for",
    "tool_grammar",
    "tool_schema",
    "world_description",
]

#: Constrained-generation modes (see the module docstring).
CONSTRAINED = ("auto", "grammar", "json_schema", "none")
#: Earlier actions shown in the prompt (the newest; older ones are counted, not listed).
HISTORY_WINDOW = 15
PROMPTS = Path(__file__).with_name("prompts")
RELATIONS = ("on", "within")
CONSTRAINTS = ("None", "next_to")
_PLACEHOLDER = re.compile(r"\$([A-Z_]+)\$")
_PREDICTION = re.compile(r"^\s*\**\s*prediction\s*\**\s*:\s*(.*)$", re.IGNORECASE)
_THOUGHT = re.compile(r"^\s*\**\s*thought\s*\**\s*:\s*(.*)$", re.IGNORECASE)
_STATE_WORDS = {"is_clean": ("clean", "dirty"), "is_filled": ("filled", "empty"),
                "is_powered_on": ("powered on", "powered off")}


#: A planning call got no reply (server down, missing key, retries exhausted): raised, never
#: recorded as an action; the unit fails and a rerun retries it. The floor's EndpointError.
PlannerError = EndpointError


# -- prompt text -------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def prompt_template(name: str) -> str:
    """The prompt text ``prompts/<name>.txt`` of this package."""
    return (PROMPTS / f"{name}.txt").read_text(encoding="utf-8").rstrip("\n")


def _fill(text: str, **values: Any) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(1) not in values:
            raise KeyError(f"prompt placeholder ${m.group(1)}$ has no value")
        return str(values[m.group(1)])
    return _PLACEHOLDER.sub(sub, text)


@functools.lru_cache(maxsize=1)
def _tool_help() -> dict[str, str]:
    out = {}
    for line in prompt_template("tools").splitlines():
        name, sep, text = line.partition(":")
        if sep and name.strip():
            out[name.strip()] = text.strip()
    missing = [t for t in TOOLS if t not in out]
    if missing:
        raise ValueError(f"prompts/tools.txt: no description for {', '.join(missing)}")
    return out


def _me(obs: Observation) -> str:
    return f"agent_{obs.agent}"


def _partner(obs: Observation) -> tuple[str, str, tuple[str, ...]]:
    """Handle, role and tools of the partner."""
    b = 1 - obs.agent
    role = ROLES[b] if obs.agent in (0, 1) else ("human" if obs.role == "robot" else "robot")
    return f"agent_{b}", role, tuple(ROLE_TOOLS[role])


def _states_text(states: Sequence[tuple[str, bool]]) -> str:
    words = [(_STATE_WORDS[n][0] if v else _STATE_WORDS[n][1]) if n in _STATE_WORDS else f"{n}={v}"
             for n, v in states]
    return ", ".join(words)


def world_description(obs: Observation) -> str:
    """The agent's world as PARTNR's summary text: rooms with their furniture (the layout, open
    states as the agent believes them), then the objects of its own belief graph with where it
    last saw them and their states, what it holds, where it is and the rooms it explored."""
    w, b = obs.world, obs.beliefs
    by_room: dict[str, list[str]] = {r: [] for r in sorted(w.room_box)}
    for h in sorted(w.furniture):
        f = w.furniture[h]
        notes = []
        if f.articulated:
            known = b.furniture_open.get(h)  # as the agent last saw it (the layout is known from the start)
            notes.append("opens" if known is None else "open" if known[0] else "closed")
        if f.faucet:
            notes.append("faucet")
        by_room.setdefault(f.room, []).append(h + (f" ({', '.join(notes)})" if notes else ""))
    lines = ["House layout (rooms and their furniture):"]
    lines += [f"- {r}: {', '.join(fs) if fs else 'no furniture'}" for r, fs in by_room.items()]
    lines.append("Objects you know of (where you last saw them):")
    if not b.objects:
        lines.append("- none found yet")
    for h in sorted(b.objects):
        r = b.objects[h]
        if r.held_by_me:
            where = "held by you"
        elif r.place is not None:
            where = f"{r.place[0]} {r.place[1]}" + (f" in {r.room}" if r.room else "")
        else:
            where = "location unknown (it was no longer where you saw it)"
        states = _states_text(r.states)
        lines.append(f"- {h}: {where}" + (f"; {states}" if states else ""))
    lines.append(f"You are in {obs.room}" + (f" and hold {obs.holding}." if obs.holding else " and hold nothing."))
    explored = sorted(b.explored)
    lines.append(f"Rooms you have explored: {', '.join(explored) if explored else 'none yet'}.")
    return "\n".join(lines)


def episode_classes(obs: Observation) -> list[str]:
    """The object classes of the OANA prediction (Tool Call Grammar): the classes of the task's
    objects (named in the instruction, known from the start) plus every class the agent knows,
    masked as the scoring masks them (:func:`~.calls.mask_id`)."""
    classes = {mask_id(str(o["handle"])) for o in obs.task.objects if "handle" in o}
    classes |= {mask_id(h) for h in obs.beliefs.objects}
    return sorted(classes)


def _one_line(text: str) -> str:
    """A history entry on one line (an invalid reply is recorded as its raw text)."""
    return " / ".join(part.strip() for part in str(text).splitlines() if part.strip()) or "(empty)"


def _history_text(obs: Observation) -> str:
    if not obs.history:
        return "Your earlier actions: none yet.\n"
    shown = obs.history[-HISTORY_WINDOW:]
    first = len(obs.history) - len(shown)
    lines = ["Your earlier actions and their results:"]
    if first:
        lines.append(f"({first} earlier actions not shown)")
    lines += [f"{first + i + 1}. {_one_line(call)} -> {_one_line(result)}" for i, (call, result) in enumerate(shown)]
    return "\n".join(lines) + "\n"


def build_messages(obs: Observation, *, answer: str = "react") -> list[dict[str, Any]]:
    """System and user messages of one planning cycle (§A.6). ``answer``: ``"react"`` (Thought /
    [Prediction /] call / Assigned!) or ``"json"`` (the JSON object of :func:`tool_schema`).

    The OAS line appears only when ``obs.partner_text`` is not None; under OANA
    (``obs.predict``) the prompt asks first for the partner's next action with object classes."""
    if answer not in ("react", "json"):
        raise ValueError(f"answer: {answer!r}; allowed: react, json")
    partner, partner_role, partner_tools = _partner(obs)
    names = {"ME": _me(obs), "PARTNER": partner, "PARTNER_ROLE": partner_role}
    intro = _fill(prompt_template("partner_oana" if obs.predict else "partner_concurrent"), **names)
    role_file = f"role_{obs.role}" if (PROMPTS / f"role_{obs.role}.txt").is_file() else "role_human"
    system = _fill(prompt_template("system"), PARTNER_INTRO=intro, ROLE=_fill(prompt_template(role_file), **names))
    help_ = _tool_help()
    tools = "\n".join(f"- {t}: {help_[t]}" for t in obs.tools)
    oas = f"What you see of {partner}: {obs.partner_text}\n" if obs.partner_text is not None else ""
    if obs.predict:
        predict = _fill(prompt_template("predict"), PARTNER=partner, PARTNER_TOOLS=", ".join(partner_tools),
                        CLASSES=", ".join(episode_classes(obs)) or "none known yet") + "\n"
    else:
        predict = ""
    if answer == "react":
        question = _fill(prompt_template("answer_react"),
                         PREDICTION_LINE=f"Prediction: <the next action of {partner}>\n" if obs.predict else "",
                         PREDICTION_EXAMPLE="Prediction: Explore[<room name>]\n" if obs.predict else "")
    else:
        question = _fill(prompt_template("answer_json"),
                         PREDICTION_FIELD=(f'"prediction": {{"tool": "<tool of {partner}>", "args": [...]}}, '
                                           if obs.predict else ""),
                         PREDICTION_EXAMPLE='"prediction": {"tool": "Explore", "args": ["<room name>"]}, '
                         if obs.predict else "")
    user = _fill(prompt_template("user"), TASK=obs.instruction, WORLD=world_description(obs) + "\n",
                 PARTNER=oas, TOOLS=tools + "\n", HISTORY=_history_text(obs), QUESTION=predict + question)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# -- constraints -------------------------------------------------------------------------------
def _entities(obs: Observation) -> dict[str, list[str]]:
    w = obs.world
    rooms, furn, objs = sorted(w.room_box), sorted(w.furniture), sorted(obs.beliefs.objects)
    return {"room": rooms, "furniture": furn, "object": objs, "target": rooms + furn + objs,
            "stateful": objs + furn}


def _prediction_entities(obs: Observation) -> dict[str, list[str]]:
    w = obs.world
    rooms, furn, classes = sorted(w.room_box), sorted(w.furniture), episode_classes(obs)
    return {"room": rooms, "furniture": furn, "object": classes, "target": rooms + furn + classes,
            "stateful": classes + furn}


def _kinds(tool: str) -> list[str]:
    """The entity kind of each required parameter of ``tool`` (Clean also takes furniture)."""
    spec = TOOLS[tool]
    n = len(spec.params) - spec.optional
    kinds = ["relation" if p == "relation" else p for p in spec.params[:n]]
    return ["stateful" if tool == "Clean" and k == "object" else k for k in kinds]


def _lit(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _call_rules(prefix: str, tools: Sequence[str], ents: Mapping[str, list[str]]) -> list[str]:
    """GBNF rules ``<prefix>call ::= ...`` over ``tools`` and entity sets ``ents``."""
    rules: dict[str, str] = {}
    alts = []
    for t in tools:
        kinds = _kinds(t)
        if any(k != "relation" and not ents.get(k) for k in kinds):
            continue  # no entity it could name: the tool cannot be called validly now
        parts = []
        for k in kinds:
            parts.append(f"{prefix}rel" if k == "relation" else f"{prefix}{k}")
            if k != "relation":
                rules[f"{prefix}{k}"] = " | ".join(_lit(e) for e in ents[k])
        body = ' ", " '.join(parts)
        if TOOLS[t].optional:
            tail = '", None, None"' + (f' | ", next_to, " {prefix}object' if ents.get("object") else "")
            rules[f"{prefix}tail"] = tail
            body += f" {prefix}tail"
        rule = f"{prefix}{t.lower()}"
        rules[rule] = f'"{t}["' + (f" {body} " if body else " ") + '"]"'
        alts.append(rule)
    rules[f"{prefix}rel"] = " | ".join(_lit(r) for r in RELATIONS)
    return [f"{prefix}call ::= " + " | ".join(alts)] + [f"{k} ::= {v}" for k, v in rules.items()]


def thought_chars_for(max_tokens: int, predict: bool) -> int:
    """How long the grammar lets a Thought be (characters) so that the call still fits in
    ``max_tokens``: about 3 characters a token after reserving 40 tokens for the call and
    ``Assigned!`` (64 with a Prediction line); at least 24, at most 600."""
    reserve = 64 if predict else 40
    return max(24, min(600, (int(max_tokens) - reserve) * 3))


def tool_grammar(obs: Observation, *, thought_chars: int = 300) -> str:
    """A GBNF grammar (llama.cpp) of one reply: a Thought line of at most ``thought_chars``
    characters, the Prediction line under OANA (the partner's tools, objects as classes of
    :func:`episode_classes`), one call of the agent's tools over the entities of its own world
    graph, then ``Assigned!`` (§A.1.2, Tool Call Grammar)."""
    if thought_chars < 1:
        raise ValueError(f"thought_chars: {thought_chars}; must be >= 1")
    root = '"Thought: " thought "\\n" '
    if obs.predict:
        root += '"Prediction: " p-call "\\n" '
    root += 'call "\\n" ' + _lit(STOP_WORD)
    lines = [f"root ::= {root}", f"thought ::= [^\\n]{{1,{int(thought_chars)}}}"]
    lines += _call_rules("", obs.tools, _entities(obs))
    if obs.predict:
        lines += _call_rules("p-", _partner(obs)[2], _prediction_entities(obs))
    return "\n".join(lines) + "\n"


def _action_schema(tools: Sequence[str], ents: Mapping[str, list[str]]) -> dict[str, Any]:
    variants = []
    for t in tools:
        kinds = _kinds(t)
        if any(k != "relation" and not ents.get(k) for k in kinds):
            continue
        items: list[dict[str, Any]] = [{"type": "string", "enum": list(RELATIONS if k == "relation" else ents[k])}
                                       for k in kinds]
        if TOOLS[t].optional:
            items += [{"type": "string", "enum": list(CONSTRAINTS)},
                      {"type": "string", "enum": ["None", *ents.get("object", [])]}]
        args: dict[str, Any] = {"type": "array", "minItems": len(items), "maxItems": len(items)}
        if items:
            args["prefixItems"] = items
        variants.append({"type": "object", "properties": {"tool": {"type": "string", "enum": [t]}, "args": args},
                         "required": ["tool", "args"], "additionalProperties": False})
    return {"anyOf": variants}


def tool_schema(obs: Observation) -> dict[str, Any]:
    """:func:`tool_grammar` as a JSON schema ``{thought, prediction (OANA), action: {tool,
    args}}`` with enums, for servers with a ``json_schema`` response format (vLLM, OpenAI)."""
    props: dict[str, Any] = {"thought": {"type": "string"}}
    required = ["thought"]
    if obs.predict:
        props["prediction"] = _action_schema(_partner(obs)[2], _prediction_entities(obs))
        required.append("prediction")
    props["action"] = _action_schema(obs.tools, _entities(obs))
    required.append("action")
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def auto_constraint(provider: str) -> str:
    """What ``constrained="auto"`` means for ``provider``: grammar (llamacpp), json_schema
    (vllm), none (any other: API models cannot be grammar-constrained, §A.1.2)."""
    return {"llamacpp": "grammar", "vllm": "json_schema"}.get(provider, "none")


# -- reading replies ---------------------------------------------------------------------------
def _as_call(value: Any, tools: Sequence[str]) -> tuple[ToolCall | None, str | None]:
    if not isinstance(value, Mapping) or not isinstance(value.get("tool"), str):
        return None, 'expected {"tool": <name>, "args": [...]}'
    args = value.get("args", [])
    if not isinstance(args, list):
        return None, "args must be a list"
    text = f"{value['tool']}[{', '.join(str(a) for a in args)}]"
    try:
        return parse_call(text, tools), None
    except ValueError as exc:
        return None, str(exc)


def _no_call_error(head: str, tools: Sequence[str]) -> str:
    for line in reversed(head.splitlines()):
        try:
            other = parse_call(line)
        except ValueError:
            continue
        return f"{other.name} is not one of your tools; yours: {', '.join(tools)}"
    return f"no valid action in the reply: write one line Tool[args] with one of your tools ({', '.join(tools)})"


def _read_react(reply: str, tools: Sequence[str], partner_tools: Sequence[str]) -> tuple[
        ToolCall | None, str, ToolCall | None, str | None]:
    head = reply.split(STOP_WORD, 1)[0]
    lines = head.splitlines()
    prediction = None
    kept, thought = [], []
    in_thought = False
    for line in lines:
        m = _PREDICTION.match(line)
        if m:
            in_thought = False
            if prediction is None:
                try:
                    prediction = parse_call(m.group(1), partner_tools)
                except ValueError:
                    prediction = None
            continue
        kept.append(line)
        t = _THOUGHT.match(line)
        if t:
            in_thought = True
            thought.append(t.group(1).strip())
        elif in_thought and line.strip():
            try:
                parse_call(line)
                in_thought = False
            except ValueError:
                thought.append(line.strip())
    call = find_call("\n".join(kept), tools)
    text = " ".join(x for x in thought if x)
    if not text:  # no Thought marker: every line that is not a call is the reasoning
        rest = []
        for line in kept:
            try:
                parse_call(line)
            except ValueError:
                if line.strip():
                    rest.append(line.strip())
        text = " ".join(rest)
    return call, text, prediction, None if call is not None else _no_call_error("\n".join(kept), tools)


def _read_json(reply: str, tools: Sequence[str], partner_tools: Sequence[str]) -> tuple[
        ToolCall | None, str, ToolCall | None, str | None]:
    obj = find_json(reply, dict, lambda d: "action" in d)
    if obj is None:
        obj = find_json(reply)
        if obj is None:
            # a model that ignored the JSON format may still have written a ReAct answer
            return _read_react(reply, tools, partner_tools)
    thought = obj.get("thought")
    thought = thought if isinstance(thought, str) else ""
    prediction, _ = _as_call(obj.get("prediction"), partner_tools) if "prediction" in obj else (None, None)
    if "action" not in obj:
        return None, thought, prediction, 'no "action" in the reply\'s JSON object'
    call, err = _as_call(obj["action"], tools)
    if call is None:
        name = obj["action"].get("tool") if isinstance(obj["action"], Mapping) else None
        if isinstance(name, str) and name in TOOLS and name not in tools:
            err = f"{name} is not one of your tools; yours: {', '.join(tools)}"
        err = f"invalid action: {err}"
    return call, thought, prediction, err


# -- the planner -------------------------------------------------------------------------------
class LLMPlanner:
    """PARTNR's zero-shot ReAct planner over one :class:`~collablab.llm.LLMClient` (a
    :class:`~.episode.Planner`; see the module docstring).

    ``provider`` (openai | vllm | llamacpp | compat) decides what ``constrained="auto"`` means;
    ``namespace`` prefixes every call id (a ``/`` is added when missing), so repeated runs of
    one unit sample afresh; ``label`` defaults to ``llm:<provider>:<model>``."""

    def __init__(self, client: LLMClient, *, constrained: str = "auto", provider: str = "openai",
                 temperature: float | None = 0.0, max_tokens: int | None = 4096, namespace: str = "",
                 label: str | None = None) -> None:
        if constrained not in CONSTRAINED:
            raise ValueError(f"constrained: {constrained!r}; allowed: {', '.join(CONSTRAINED)}")
        if max_tokens is not None and max_tokens < 1:
            raise ValueError(f"max_tokens: {max_tokens}; must be >= 1 or None (the server's budget)")
        self.client = client
        self.provider = provider
        self.constrained = constrained
        self.mode = auto_constraint(provider) if constrained == "auto" else constrained
        self.temperature, self.max_tokens = temperature, max_tokens
        self.namespace = namespace if not namespace or namespace.endswith("/") else namespace + "/"
        self.label = label or f"llm:{provider}:{client.endpoint.model}"

    def __repr__(self) -> str:
        return f"LLMPlanner({self.label!r}, mode={self.mode!r})"

    def call_id(self, obs: Observation) -> str:
        """The logical id of this planning cycle's call."""
        return f"{self.namespace}{obs.task.episode_id}/agent{obs.agent}/step{obs.step}/c{len(obs.history)}"

    def request(self, obs: Observation) -> dict[str, Any]:
        """The keyword arguments of :meth:`LLMClient.chat` for this cycle (messages included)."""
        kw: dict[str, Any] = {"call_id": self.call_id(obs), "temperature": self.temperature,
                              "max_tokens": self.max_tokens}
        if self.mode == "json_schema":
            kw["messages"] = build_messages(obs, answer="json")
            kw["response_format"] = response_format_for("json_schema", tool_schema(obs), name="tool_call")
        else:
            kw["messages"] = build_messages(obs)
            if self.mode == "grammar":
                kw["extra_params"] = {"extra_body": {"grammar": tool_grammar(
                    obs, thought_chars=thought_chars_for(self.max_tokens or 4096, obs.predict))}}
            else:
                kw["stop"] = [STOP_WORD]
        return kw

    def decide(self, obs: Observation) -> Decision:
        """One planning cycle: the model's reply read into a Decision (``call=None`` with ``error``
        when it holds no valid call, an empty reply included); a call without a reply raises
        :class:`~collablab.llm.EndpointError`."""
        kw = self.request(obs)
        messages = kw.pop("messages")
        result = self.client.chat_sync(messages, **kw)
        usage = result.usage
        tokens = int(usage.total_tokens or (usage.prompt_tokens or 0) + (usage.completion_tokens or 0))
        if result.error is not None:
            raise EndpointError(result) from None
        reply = result.text or ""
        reasoning = recorded_thoughts(result.reasoning)
        if result.truncated:  # a fragment is never read as an action (issue 23)
            where = "inside its thoughts" if not reply.strip() else "before a complete action"
            return Decision(None, raw=reply, tokens=tokens, cause="truncated", reasoning=reasoning,
                            finish_reason=result.finish_reason,
                            error=f"truncated: the reply was cut at max_tokens={self.max_tokens} {where}")
        if not reply.strip():
            return Decision(None, error=f"the model gave an empty reply (finish_reason={result.finish_reason})",
                            tokens=tokens, reasoning=reasoning, finish_reason=result.finish_reason)
        partner_tools = _partner(obs)[2]
        read = _read_json if self.mode == "json_schema" else _read_react
        call, thought, prediction, error = read(reply, obs.tools, partner_tools)
        if not obs.predict:
            prediction = None
        return Decision(call, thought, prediction, raw=reply, error=None if call is not None else error, tokens=tokens,
                        reasoning=reasoning, finish_reason=result.finish_reason)
