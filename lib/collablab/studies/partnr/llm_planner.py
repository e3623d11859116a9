"""PARTNR's zero-shot ReAct planner on an OpenAI-compatible model (observe_share_predict.txt
§3.1-3.3, §A.1.2 "Constraint Generation" and "Tool Call Grammar", §A.6 prompts; PARTNR's
``conf/llm_zero_shot_react_planner.yaml`` and ``decentralized_zero_shot_react_summary.yaml``).

**The loop.** Like PARTNR's ``ZeroShotReactPlanner``, the planner keeps one growing transcript per
agent (:class:`~.transcript.Transcript`): the conf prompt, then per planning cycle the model's reply
(``Thought: ...``, the call, ``Assigned!``) and ``Result: ...`` / ``Objects: ...``. Each cycle is one
chat call with the whole transcript; the next cycle appends to it. ``history`` (spec key
``llm_history``; None: every cycle, PARTNR's behaviour; a number N: the first prompt and the last N
cycles) is the one deviation offered, for a model whose context window is too short. A planner that did not answer the agent's
previous cycle (a new episode, a test handing it an observation) starts a new transcript
(:meth:`~.transcript.Transcript.start`). The reply is PARTNR's ReAct form::

    Thought: <one line of reasoning>
    Prediction: <the partner's next action, objects as classes>      (OANA only, §3.3)
    <one tool call>
    Assigned!

**Constrained generation** (``constrained``, :data:`CONSTRAINED`). PARTNR's decentralized config sets
``constrained_generation: True``: "the grammar permits only valid tool calls over observed entities"
(§A.1.2), and the paper's later vLLM runs kept "the same model weights and decoding settings"
(§A.1), so the grammar is sent to every server that takes one:

- ``grammar``: a GBNF grammar (:func:`tool_grammar`): one ``Thought:`` line of at most
  :func:`thought_chars_for` characters (so the call still fits in ``max_tokens``), the
  ``Prediction:`` line under OANA (the partner's tools, object arguments from the episode's classes),
  exactly one call of the agent's tools over the entities of its own world graph (rooms, furniture,
  known objects; a tool with no possible argument is left out), then ``Assigned!``. The request body
  carries it where the server reads it (:func:`grammar_body`): llama.cpp's ``grammar``; on vLLM
  ``structured_outputs.grammar`` (vLLM >= 0.10.2; its docs: "guided_grammar -> {"structured_outputs":
  {"grammar": ...}}", the old field "removed in v0.12.0") and ``guided_grammar`` (older vLLM, which
  ignores the newer field). Both servers read the same dialect: vLLM's default backend (xgrammar)
  takes "GBNF grammars" ("xgrammar only supports GBNF grammars, so we must convert Lark"), with
  repetition ranges (``{1,N}``).
- ``json_schema``: the same choices as a JSON schema (:func:`tool_schema`) in ``response_format``,
  the prompt asking for the JSON object (a choice, no longer any provider's default).
- ``none``: the prompt only ("API-accessed models do not use this type of constraint generation",
  §A.1.2); the stop word ``Assigned!`` ends the answer.
- ``auto``: ``grammar`` for provider ``llamacpp`` and ``vllm``, else ``none`` (:func:`auto_constraint`).
  Provider ``auto`` (the spec's default) is the server's kind
  (:meth:`~collablab.llm.LLMClient.server_provider`): what its model list says (``owned_by``
  ``vllm`` or ``llamacpp``; anything else is ``compat``), learned before the first request, so a vLLM server gets the grammar from the first cycle on.

The constraint is part of the request parameters, hence of the response-cache key. Replies are
read the same way in every mode after the shared reply reader (:mod:`collablab.llm.reply`) has
taken thoughts apart and marked a reply cut at ``max_tokens`` (never read: an invalid action with
cause ``truncated``): :func:`~.calls.find_call` over the agent's tools (the JSON ``action`` is read
as the same call); a reply without a valid call is a :class:`~.episode.Decision` with ``call=None``
and ``error`` set, which the episode records as an invalid action; an entity absent from the
agent's graph (possible without a constraint) is passed on for the skills to reject. A call that got
no reply (server down past the client's outage wait, missing key, retries exhausted) raises the
floor's :class:`~collablab.llm.EndpointError` (:data:`PlannerError`); a miss in ``replay`` cache
mode raises the floor's ``CacheMiss``.

Call ids are logical, ``<namespace><episode_id>/agent<a>/step<t>/c<len(history)>`` (one per
planning cycle: every cycle adds one history entry), so replay does not depend on timing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...llm import EndpointError, LLMClient, find_json, response_format_for
from ...llm.reply import recorded_thoughts
from .calls import STOP_WORD, TOOLS, ToolCall, find_call, parse_call
from .episode import Decision, Observation
from .transcript import Transcript, episode_classes, partner_of, prompt_template, world_description

__all__ = [
    "CONSTRAINED",
    "LLMPlanner",
    "PlannerError",
    "auto_constraint",
    "build_messages",
    "check_history",
    "episode_classes",
    "grammar_body",
    "prompt_template",
    "thought_chars_for",
    "tool_grammar",
    "tool_schema",
    "world_description",
]

#: Constrained-generation modes (see the module docstring).
CONSTRAINED = ("auto", "grammar", "json_schema", "none")
#: The providers whose servers take a grammar (:func:`grammar_body` names the fields they read).
GRAMMAR_PROVIDERS = ("llamacpp", "vllm")
RELATIONS = ("on", "within")
CONSTRAINTS = ("None", "next_to")
_PREDICTION = re.compile(r"^\s*\**\s*prediction\s*\**\s*:\s*(.*)$", re.IGNORECASE)
_THOUGHT = re.compile(r"^\s*\**\s*thought\s*\**\s*:\s*(.*)$", re.IGNORECASE)


#: A planning call got no reply (server down, missing key, retries exhausted): raised, never
#: recorded as an action; the unit fails and a rerun retries it. The floor's EndpointError.
PlannerError = EndpointError
def check_history(history: Any, field: str = "history") -> int | None:
    """``history`` if it is None (the whole transcript, PARTNR's) or an integer >= 1 (the last N
    cycles); ValueError naming ``field`` and the allowed values otherwise."""
    if history is None or (not isinstance(history, bool) and isinstance(history, int) and history >= 1):
        return history
    raise ValueError(f"{field}: {history!r}; allowed: None (the whole transcript, PARTNR's) or an integer >= 1 "
                     "(the last N planning cycles)")


def build_messages(obs: Observation, *, answer: str = "react", history: int | None = None) -> list[dict[str, Any]]:
    """The chat messages a planner that joins at ``obs`` sends (:meth:`.Transcript.start`): the
    conf prompt, then the agent's earlier cycles from ``obs.history``. A planner that answered the
    earlier cycles sends its own transcript instead (:meth:`LLMPlanner.request`)."""
    return Transcript.start(obs, answer=answer).messages(check_history(history))


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
        lines += _call_rules("p-", partner_of(obs)[2], _prediction_entities(obs))
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
        props["prediction"] = _action_schema(partner_of(obs)[2], _prediction_entities(obs))
        required.append("prediction")
    props["action"] = _action_schema(obs.tools, _entities(obs))
    required.append("action")
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def auto_constraint(provider: str) -> str:
    """What ``constrained="auto"`` means for ``provider``: ``grammar`` on the servers that take
    one (llamacpp, vllm: PARTNR's ``constrained_generation: True``), ``none`` on any other ("API-
    accessed models do not use this type of constraint generation", §A.1.2)."""
    return "grammar" if provider in GRAMMAR_PROVIDERS else "none"


def grammar_body(provider: str, grammar: str) -> dict[str, Any]:
    """The request-body fields that carry ``grammar`` to ``provider``'s server: vLLM's
    ``structured_outputs.grammar`` (current) and ``guided_grammar`` (before v0.12.0; each version
    ignores the field it does not know), llama.cpp's ``grammar`` (also for any other provider
    asked for a grammar explicitly: llama.cpp's field is the common one)."""
    if provider == "vllm":
        return {"structured_outputs": {"grammar": grammar}, "guided_grammar": grammar}
    return {"grammar": grammar}


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
    :class:`~.episode.Planner`; see the module docstring). It keeps each agent's transcript of the
    current episode.

    ``provider`` (openai | vllm | llamacpp | compat, or auto:
    :meth:`~collablab.llm.LLMClient.server_provider` at the first request) decides what
    ``constrained="auto"`` means and where a grammar goes; ``history`` (None | N >= 1) how many
    earlier cycles each request shows;
    ``namespace`` prefixes every call id (a ``/`` is added when missing), so repeated runs of one
    unit sample afresh; ``label`` defaults to ``llm:<provider>:<model>``."""

    def __init__(self, client: LLMClient, *, constrained: str = "auto", provider: str = "openai",
                 temperature: float | None = 0.0, max_tokens: int | None = 4096, namespace: str = "",
                 label: str | None = None, history: int | None = None) -> None:
        if constrained not in CONSTRAINED:
            raise ValueError(f"constrained: {constrained!r}; allowed: {', '.join(CONSTRAINED)}")
        if max_tokens is not None and max_tokens < 1:
            raise ValueError(f"max_tokens: {max_tokens}; must be >= 1 or None (the server's budget)")
        self.client = client
        self.provider = provider
        self.constrained = constrained
        self._mode: str | None = None if provider == "auto" else self._mode_for(provider)
        self.temperature, self.max_tokens = temperature, max_tokens
        self.history = check_history(history)
        self.namespace = namespace if not namespace or namespace.endswith("/") else namespace + "/"
        self.label = label or f"llm:{provider}:{client.endpoint.model}"
        self.transcripts: dict[int, Transcript] = {}  # per agent: the transcript of its last request

    def __repr__(self) -> str:
        return f"LLMPlanner({self.label!r}, mode={self._mode or self.constrained!r})"

    def _mode_for(self, provider: str) -> str:
        return auto_constraint(provider) if self.constrained == "auto" else self.constrained

    @property
    def mode(self) -> str:
        """The constraint this planner sends (``grammar``, ``json_schema`` or ``none``); with
        provider ``auto`` it is known once the server's kind is
        (:meth:`~collablab.llm.LLMClient.server_provider`)."""
        if self._mode is None:
            self.provider = self.client.server_provider()
            self._mode = self._mode_for(self.provider)
        return self._mode

    @property
    def answer(self) -> str:
        """How the model is asked to answer: ``json`` under ``json_schema``, else ``react``."""
        return "json" if self.mode == "json_schema" else "react"

    def call_id(self, obs: Observation) -> str:
        """The logical id of this planning cycle's call."""
        return f"{self.namespace}{obs.task.episode_id}/agent{obs.agent}/step{obs.step}/c{len(obs.history)}"

    def transcript(self, obs: Observation) -> Transcript:
        """The agent's transcript for the cycle of ``obs``: the last one with its reply and the
        result appended when ``obs`` is its next cycle, else a new one (nothing is stored here)."""
        last = self.transcripts.get(obs.agent)
        return last.next(obs) if last is not None else Transcript.start(obs, answer=self.answer)

    def request(self, obs: Observation, transcript: Transcript | None = None) -> dict[str, Any]:
        """The keyword arguments of :meth:`LLMClient.chat` for this cycle (messages included)."""
        t = transcript if transcript is not None else self.transcript(obs)
        kw: dict[str, Any] = {"call_id": self.call_id(obs), "temperature": self.temperature,
                              "max_tokens": self.max_tokens, "messages": t.messages(self.history)}
        if self.mode == "json_schema":
            kw["response_format"] = response_format_for("json_schema", tool_schema(obs), name="tool_call")
        elif self.mode == "grammar":
            grammar = tool_grammar(obs, thought_chars=thought_chars_for(self.max_tokens or 4096, obs.predict))
            kw["extra_params"] = {"extra_body": grammar_body(self.provider, grammar)}
        else:
            kw["stop"] = [STOP_WORD]
        return kw

    def decide(self, obs: Observation) -> Decision:
        """One planning cycle: the transcript sent, the model's reply read into a Decision
        (``call=None`` with ``error`` when it holds no valid call, an empty or cut reply included)
        and appended to the transcript; a call without a reply raises
        :class:`~collablab.llm.EndpointError` (the transcript is left as it was)."""
        t = self.transcript(obs)
        kw = self.request(obs, t)
        messages = kw.pop("messages")
        result = self.client.chat_sync(messages, **kw)
        usage = result.usage
        tokens = int(usage.total_tokens or (usage.prompt_tokens or 0) + (usage.completion_tokens or 0))
        if result.error is not None:
            raise EndpointError(result) from None
        reply = result.text or ""
        self.transcripts[obs.agent] = t.answered(reply)
        reasoning = recorded_thoughts(result.reasoning)
        if result.truncated:  # a fragment is never read as an action (issue 23)
            where = "inside its thoughts" if not reply.strip() else "before a complete action"
            return Decision(None, raw=reply, tokens=tokens, cause="truncated", reasoning=reasoning,
                            finish_reason=result.finish_reason,
                            error=f"truncated: the reply was cut at max_tokens={self.max_tokens} {where}")
        if not reply.strip():
            return Decision(None, error=f"the model gave an empty reply (finish_reason={result.finish_reason})",
                            tokens=tokens, reasoning=reasoning, finish_reason=result.finish_reason)
        partner_tools = partner_of(obs)[2]
        read = _read_json if self.mode == "json_schema" else _read_react
        call, thought, prediction, error = read(reply, obs.tools, partner_tools)
        if not obs.predict:
            prediction = None
        return Decision(call, thought, prediction, raw=reply, error=None if call is not None else error, tokens=tokens,
                        reasoning=reasoning, finish_reason=result.finish_reason)
