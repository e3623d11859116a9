"""The LLM policy: MECoBench's prompts (mecobench.txt appendix C) behind the policy seam.

Per step and protocol (§2.2, Fig. 4) the agent makes these calls:

=============  ============================================================  ===============
protocol       communicate phase                                             act phase
=============  ============================================================  ===============
isolated       none                                                          act (Fig. 24)
broadcast      one message or silence (Fig. 19)                              act
discuss        first round (Fig. 20 blue, READY/CONTINUE + LOCAL_CONTEXT),   act
               then text-only follow-up rounds (Fig. 20 orange)
leader         workers: report (Fig. 21); leader: assignments, a JSON array  act (with the
               ``[{receiver, type, content}]`` (Fig. 22)                     assignment)
leader_vision  as leader; the leader also sees every agent's view (text, and  act
               the combined image when ``multimodal``) (Fig. 22 orange)
shared_memory  none                                                          act + shared
                                                                             memory (Fig. 29)
=============  ============================================================  ===============

The act call returns the action (Fig. 26's JSON) *and* the memory update (Fig. 28, or the
shared memory of Fig. 29) in the same reply; :meth:`LLMPolicy.write_memory` applies the
shared memory from that reply, so memory costs no extra call.

Two pipelines (``LLMSettings.pipeline``; the spec key ``pipeline``):

``paper`` (the default) follows appendix B.3-B.4 and Fig. 27:

* no simulator object id reaches an agent's prompt: the observation is the agent's raw view
  image (``multimodal``; Fig. 27 has no text list, "Most of your current observation images are
  in this room"), holdings, executed actions and feedback name objects by class. Without images
  (``multimodal`` false) the agent would be blind, so the text stand-in is the observation as
  class + appearance lines without ids (:func:`~.prompts.observation_text` with ``ids=False``).
  Door numbers stay (Table 7's ``walk_to_door`` takes a door_id; Fig. 27 lists the department
  topology). What other agents wrote (messages, shared memory) and the agent's own memory pass
  verbatim: an id in them is its author's, never ours;
* Table 7's action space exactly (no ``close``, no ``wait``); "Any action name not listed in
  Table 7 is considered invalid" (B.3), so no alias mapping (:mod:`.decoding`);
* no re-ask: a reply with nothing usable is a recorded invalid action;
* object ids come from the model decoder (Fig. 25) given the candidates with their metadata and,
  when ``multimodal``, the raw and the annotated views as two images; rules only for
  receive, walk_to_room/door and handover (B.4).

``assisted`` keeps the conveniences we added on top: the observation as text with ids
(``wine (353)``) besides the image, ids the model writes accepted, rule-based grounding first
(exact, synonym, partial, fuzzy: :mod:`.grounding`) with Fig. 25's decoder as a text-only
fallback (``grounding="rules+llm"``), invalid action names mapped to valid ones ("pick up" ->
grab, "place" -> put_on, "idle" -> wait), ``close`` and ``wait`` added to Table 7's space, and
one re-ask of an unusable reply (``llm_max_reasks``).

Images reach the policy through :meth:`LLMPolicy.see` (the team loop draws them with
:func:`collablab.world.render.agent_views`); calls that carry images record how many
(``images``) and, where the server reports them, their tokens (``image_tokens``).

Every call goes through :class:`~collablab.llm.LLMClient` (cache, retries, concurrency
bound). Its call id is logical and stable -- ``<task hash>/s<seed>/a<agent>/t<step>/<phase>/r<round>``
-- so replays from the cache do not depend on call order. A reply that cannot be used (an
empty one included) becomes a recorded invalid action (``invalid_reply``); a reply cut at
``max_tokens`` becomes ``invalid_truncated`` and is never parsed. Only the final answer is read:
the thoughts (inline ``<think>`` blocks or the server's ``reasoning_content``) are kept apart by the
LLM floor (:mod:`collablab.llm.reply`); each call record keeps ``finish_reason`` and the start of
the thoughts (:func:`~collablab.llm.reply.recorded_thoughts`). A call that got no
reply at all (server down past the client's outage wait, retries used up, key missing or
rejected) raises :class:`~collablab.llm.EndpointError` out of the episode, which the run grid
records as a failed episode that a rerun retries; a cache miss in ``replay`` mode raises too
(it means the cache does not hold this run).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ...llm import LLMClient, check_structured_mode, response_format_for, system_message, user_message
from ...llm.reply import recorded_thoughts
from ...llm.structured import Parse, ask
from ...world.actions import Action
from ..base import AgentContext, Assignment, Decision, Message, Policy, Utterance
from . import decoding as D
from . import grounding as G
from .prompts import (ACTION_HELP, JSON_KEYS, PAPER_CHOICES, SCHEMAS, fill, holding_text, msg_line, observation_text,
                      progress_text, template, without_ids)
from .replies import assignments_of, parse_act, parse_assignments, parse_decoded, parse_message

DEFAULT_INSTRUCTION = "No assignment was given to you this step; choose the most useful next action yourself."
SUCCESS_PREFIXES = ("you walked", "you grabbed", "you opened", "you closed", "you put", "you are at door",
                    "you handed", "you received", "you waited", "nobody handed")


# -- settings -------------------------------------------------------------------------------
PIPELINES = ("paper", "assisted")
#: The ``grounding`` values each pipeline allows (the first is its default).
GROUNDINGS = {"paper": ("llm",), "assisted": ("rules", "rules+llm")}


def check_pipeline(pipeline: Any, grounding: Any = None, max_reasks: Any = None) -> None:
    """Reject a bad ``pipeline`` and a ``grounding`` / ``llm_max_reasks`` it does not allow
    (ValueError naming the field and the allowed values)."""
    if pipeline not in PIPELINES:
        raise ValueError(f"pipeline: {pipeline!r} is not allowed; allowed: {', '.join(PIPELINES)}")
    if grounding is not None and grounding not in GROUNDINGS[pipeline]:
        raise ValueError(f"grounding: {grounding!r} is not allowed with pipeline {pipeline!r}; allowed: "
                         f"{', '.join(GROUNDINGS[pipeline])} or None")
    if pipeline == "paper" and max_reasks not in (None, 0):
        raise ValueError(f"llm_max_reasks: {max_reasks!r} is not allowed with pipeline 'paper' (no re-ask); "
                         "allowed: 0 or None")


@dataclass(frozen=True)
class LLMSettings:
    """How the policy asks. ``structured_mode="none"`` is the paper's tagged text format
    (``[THINKING] ... [ACTION] {...}``); ``json_object`` / ``json_schema`` ask for one JSON
    object per call (grammar-constrained on llama.cpp, schema-constrained on OpenAI/vLLM).
    ``pipeline``: ``paper`` | ``assisted`` (module doc); ``grounding`` and ``max_reasks`` None
    take the pipeline's (paper: ``llm``, 0; assisted: ``rules``, 1)."""

    temperature: float | None = None  # None: not sent (the server's or model's default)
    max_tokens: int | None = None  # None: not sent (the server's budget)
    structured_mode: str = "none"
    multimodal: bool = False
    grounding: str | None = None  # paper: "llm"; assisted: "rules" | "rules+llm" (Fig. 25 when the rules fail)
    history_window: int = 10  # steps of dialogue history shown (Fig. 4: a 10-round window)
    max_reasks: int | None = None  # re-asks after a reply with nothing usable (paper: 0; assisted: 1)
    pipeline: str = "paper"

    def __post_init__(self) -> None:
        check_structured_mode(self.structured_mode)
        check_pipeline(self.pipeline, self.grounding, self.max_reasks)
        if self.grounding is None:
            object.__setattr__(self, "grounding", GROUNDINGS[self.pipeline][0])
        if self.max_reasks is None:
            object.__setattr__(self, "max_reasks", 0 if self.pipeline == "paper" else 1)

    @property
    def paper(self) -> bool:
        return self.pipeline == "paper"


@dataclass
class _Call:
    """One logical call: its reply (text or parsed JSON) and what it cost."""

    record: dict[str, Any]
    text: str | None
    parsed: Any
    parse_error: str | None  # why the reply cannot be used
    truncated: bool  # cut at the token budget (never parsed)
    tokens_prompt: int
    tokens_completion: int
    latency_s: float


def _reask(reason: str) -> str:
    return (f"Your previous reply could not be used: {reason}. "
            "Reply again, following the Output Format exactly.")


def _compact(d: Mapping[str, Any]) -> str:
    return json.dumps(d, sort_keys=True, separators=(",", ":"), default=str)


# -- the policy ------------------------------------------------------------------------------
class LLMPolicy(Policy):
    """MECoBench's prompt-driven agent over one OpenAI-compatible endpoint (see module doc)."""

    def __init__(self, client: LLMClient, settings: LLMSettings | None = None, label: str | None = None) -> None:
        self.client = client
        self.settings = settings or LLMSettings()
        self.backend = label or f"llm:{client.endpoint.model}"
        self.wants_images = self.settings.multimodal

    # -- episode state ---------------------------------------------------------------------------
    def reset(self, ctx: AgentContext) -> None:
        self.ctx = ctx
        task = "|".join([ctx.goal_text, ctx.structure, str(ctx.n_agents), ctx.protocol,
                         ",".join(ctx.allowed_rooms), str(ctx.leader)])
        self.call_prefix = f"{hashlib.sha256(task.encode()).hexdigest()[:12]}/s{ctx.seed}/a{ctx.agent}"
        self.rooms = sorted({r for _, a, b in ctx.doors for r in (a, b)} | set(ctx.allowed_rooms))
        self.memory: dict[str, Any] = {}
        self.history: list[tuple[int, list[Message]]] = []
        self.round_msgs: list[Message] = []
        self.done_actions: list[str] = []
        self.last: tuple[str, dict[str, Any] | None, str | None] | None = None  # executed, intended, error
        self.step = -1
        self.obs: dict[str, Any] = {}
        self.views: tuple[Any, Any] | None = None  # this step's (raw, annotated) views (see())
        self.actions = D.table7(ctx.structure) if self.settings.paper else tuple(ctx.valid_actions)
        self.calls: list[dict[str, Any]] = []
        self.step_notes: dict[str, Any] = {}  # what the communicate phase adds to this step's record
        self.local_context = ""
        self.pending_shared: dict[str, Any] | None = None

    def observe(self, obs: dict[str, Any]) -> None:
        if obs["step"] != self.step:
            if self.round_msgs:
                self.history.append((self.step, self.round_msgs))
                self.history = self.history[-self.settings.history_window:]
            self.round_msgs = []
            self.calls = []
            self.step_notes = {}
            self.local_context = ""
            self.pending_shared = None
            if self.last is not None and str(obs.get("feedback", "")).startswith(SUCCESS_PREFIXES):
                self.done_actions.append(self.last[0])
        self.obs = obs
        self.step = obs["step"]
        self.views = None

    def see(self, raw: Any, annotated: Any) -> None:
        self.views = (raw, annotated)

    # -- communicate ---------------------------------------------------------------------------------
    def speak(self, kind: str, dialogue: list[Message], round: int = 0) -> Utterance:
        ctx = self.ctx
        follow_up = kind == "discuss" and round > 0
        current = self._merge(self.round_msgs, dialogue)
        block = self._input_block("communicate", current, observation=not follow_up,
                                  local_context=self.local_context if follow_up else None)
        if kind == "discuss":
            name = "discuss_followup" if follow_up else "discuss_first"
            schema = name
            rules = fill(template("discussion_rules"), VALID_ACTIONS=self._valid_actions())
            prompt = fill(template(name), DISCUSSION_RULES=rules, OUTPUT_FORMAT=self._output_format(name, schema),
                          INPUT_BLOCK=block)
        elif kind == "report":
            name, schema = "report", "message"
            leader = f"Agent {ctx.leader if ctx.leader is not None else 0}"
            prompt = fill(template("report"), LEADER_NAME=leader, OUTPUT_FORMAT=self._output_format(name, schema),
                          INPUT_BLOCK=block)
        else:
            name, schema = "broadcast", "message"
            prompt = fill(template("broadcast"), VALID_ACTIONS=self._valid_actions(),
                          OUTPUT_FORMAT=self._output_format(name, schema), INPUT_BLOCK=block)
        images = self._own_view() if not follow_up else []
        call = self._call("discuss" if kind == "discuss" else name, prompt, images, schema,
                          functools.partial(parse_message, mode=self.settings.structured_mode), round)
        note: dict[str, Any] = {"call": call.record}
        text, ready = None, None  # an unreadable reply gives no READY answer (the discuss protocol counts it)
        if call.parsed is not None:
            text, ready = call.parsed["message"], call.parsed["ready"]
            if kind == "discuss" and not follow_up:
                self.local_context = call.parsed["local_context"][:600]
        else:
            note["error"] = call.parse_error
            self.step_notes.setdefault("comm_errors", []).append(f"{kind} r{round}: {note['error']}"[:200])
        return Utterance(text, ready=ready, tokens_prompt=call.tokens_prompt,
                         tokens_completion=call.tokens_completion, latency_s=call.latency_s, note=_compact(note))

    def hear(self, messages: list[Message]) -> None:
        self.round_msgs = self._merge(self.round_msgs, messages)

    def assign(self, reports: list[Message], views: dict[int, dict[str, Any]] | None,
               images: dict[int, Any] | None) -> Assignment:
        ctx = self.ctx
        agents = [f"Agent {a}" for a in range(ctx.n_agents)]
        pics = list(images.values()) if images and self.settings.multimodal else []
        if views is None:
            name = "leader"
        else:
            name = "leader_vision" if pics else "leader_vision_text"
        rules = fill(template("assignment_rules"), AGENT_NAMES=", ".join(agents), VALID_ACTIONS=self._valid_actions())
        block = self._input_block("communicate", self._merge(self.round_msgs, reports), observation=True,
                                  team_views=views)
        prompt = fill(template(name), ASSIGNMENT_RULES=rules, OUTPUT_FORMAT=self._output_format("leader", "leader"),
                      INPUT_BLOCK=block)
        image = [self._combined(images)] if pics else self._own_view()
        call = self._call("assign", prompt, image, "leader", parse_assignments)
        note: dict[str, Any] = {"call": call.record}
        items = call.parsed
        if items is None:
            note["error"] = call.parse_error
        instructions, ignored = assignments_of(items, ctx.n_agents)
        missing = [a for a in range(ctx.n_agents) if a not in instructions]
        for a in missing:
            instructions[a] = DEFAULT_INSTRUCTION
        if missing:
            note["defaulted"] = missing
        if ignored:
            note["ignored"] = ignored[:5]
        self.step_notes["assign"] = {k: v for k, v in note.items() if k != "call"}
        text = " ".join(f"Agent {a}: {instructions[a]}" for a in sorted(instructions))
        utt = Utterance(text, tokens_prompt=call.tokens_prompt, tokens_completion=call.tokens_completion,
                        latency_s=call.latency_s, note=_compact(note))
        return Assignment(instructions, utt)

    # -- act ----------------------------------------------------------------------------------------
    def act(self, instruction: str | None = None, shared_memory: dict[str, Any] | None = None) -> Decision:
        ctx = self.ctx
        shared = shared_memory is not None
        seq = ctx.structure == "sequential"
        helps = {**ACTION_HELP, "walk_to_room": ACTION_HELP["walk_to_room"].replace(
            "$ALLOWED_ROOMS$", " " + ", ".join(ctx.allowed_rooms))}
        bullets = [a for a in (ACTION_HELP if self.settings.paper else ctx.valid_actions) if a in self.actions]
        rules = fill(template("action_rules"),
                     VALID_ACTION_LIST="\n".join(f"- {helps.get(a, a)}" for a in bullets
                                                 if a != "put_in" or "put_on" not in self.actions),
                     SEQUENTIAL_RULES=(template("action_rules_sequential") + "\n") if seq else "",
                     ACTION_CHOICES=self._valid_actions(" / "), ROOM_CHOICES="|".join(self.rooms),
                     SEQUENTIAL_FIELDS=', "door": <door id> | null, "recipient": "<agent name>" | null' if seq else "",
                     SEQUENTIAL_PARAMETER_RULES=(template("parameter_rules_sequential") + "\n") if seq else "")
        if shared:
            memory_rules = template("shared_memory_rules")
            dialogue = "None (shared memory mode)."
        else:
            memory_rules = template("memory_rules")
            dialogue = self._dialogue_text(self.round_msgs, instruction)
        block = self._input_block("act", self.round_msgs, observation=True, dialogue_text=dialogue,
                                  memory=shared_memory if shared else None)
        prompt = fill(template("act_shared" if shared else "act"), ACTION_RULES=rules, MEMORY_RULES=memory_rules,
                      OUTPUT_FORMAT=self._output_format("act", "act"), INPUT_BLOCK=block)
        call = self._call("act", prompt, self._own_view(), "act", parse_act)
        note: dict[str, Any] = {}
        tokens_p, tokens_c, latency = call.tokens_prompt, call.tokens_completion, call.latency_s
        sem: dict[str, Any] | None = None
        if call.truncated:
            g = G.invalid(call.parse_error or "truncated", G.INVALID_TRUNCATED)
        elif call.parsed is None:
            g = G.invalid(f"unreadable reply: {call.parse_error}", G.INVALID_REPLY)
        else:
            sem, memory = call.parsed["action"], call.parsed["memory"]
            if self.settings.paper:
                g, dcall = self._decode(sem)
                if dcall is not None:
                    note["decoder"] = g.error or "ok"
                    tokens_p += dcall.tokens_prompt
                    tokens_c += dcall.tokens_completion
                    latency += dcall.latency_s
            else:
                g = G.ground(sem, self.obs, valid_actions=ctx.valid_actions, rooms=self.rooms, doors=ctx.doors,
                             n_agents=ctx.n_agents)
            if not g.ok and self.settings.grounding == "rules+llm" and g.action.name == G.INVALID_GROUNDING:
                g2, dcall = self._resolve(sem, g.error or "")
                tokens_p += dcall.tokens_prompt
                tokens_c += dcall.tokens_completion
                latency += dcall.latency_s
                note["resolver"] = g2.error or "ok"
                if g2.ok:
                    g = g2
            if memory is None:
                note["memory_error"] = call.parsed["memory_error"]
            elif shared:
                self.pending_shared = memory
            else:
                self.memory = memory
        self.last = (g.executed, sem, g.error)
        note.update(self.step_notes)
        note.update(status="ok" if g.ok else "invalid", executed=g.executed, calls=self.calls)
        if sem is not None:
            note["intended"] = sem
        if g.matches:
            note["match"] = g.matches
        if not g.ok:
            note["error"] = g.error
            if call.text:
                note["reply"] = call.text[:300]
        return Decision(g.action, tokens_prompt=tokens_p, tokens_completion=tokens_c, latency_s=latency,
                        note=_compact(note))

    def write_memory(self, shared_memory: dict[str, Any]) -> Utterance | None:
        """Apply the shared memory written in this step's act reply (no extra call, Fig. 29)."""
        if self.pending_shared is not None:
            shared_memory.clear()
            shared_memory.update(self.pending_shared)
            self.pending_shared = None
        return None

    # -- the paper's decoding (B.3 Table 7, B.4, Fig. 25) ----------------------------------------------
    def _decode(self, sem: Any) -> tuple[G.Grounded, _Call | None]:
        """Table 7's name as written, rules for receive / walk_to_room / walk_to_door / handover,
        the model decoder for the object-centric actions (:mod:`.decoding`)."""
        if not isinstance(sem, Mapping):
            return G.invalid("the action is not a JSON object", G.INVALID_REPLY), None
        raw = sem.get("action", sem.get("name"))
        name = D.action_name(raw, self.actions)
        if name is None:
            return G.invalid(f"action {raw!r} is not in Table 7's action space: {', '.join(self.actions)}",
                             G.INVALID_REPLY), None
        if name in D.RULE_ACTIONS:
            return G.ground({**sem, "action": name}, self.obs, valid_actions=self.actions, rooms=self.rooms,
                            doors=self.ctx.doors, n_agents=self.ctx.n_agents), None
        payload = D.decoder_input(name, sem, self.obs)
        if self.settings.multimodal:
            prompt = fill(template("decoder_vision"), RESOLVE_INPUT=json.dumps(payload, sort_keys=True))
            images = list(self._views())
        else:  # the text stand-in for the two views: the listing with ids (the decoder may see ids)
            payload["view"] = self._observation_text(ids=True)
            prompt = fill(template("decoder"), RESOLVE_INPUT=json.dumps(payload, sort_keys=True))
            images = []
        call = self._call("decode", prompt, images, "decode", parse_decoded)
        if call.truncated:
            return G.invalid(f"{name}: decoder reply cut at the token budget", G.INVALID_TRUNCATED), call
        return D.read_decoded(name, call.parsed, call.parse_error, self.obs), call

    # -- the optional LLM resolver (Fig. 25) ---------------------------------------------------------
    def _resolve(self, sem: Mapping[str, Any], why: str) -> tuple[G.Grounded, _Call]:
        vis, held = G.candidates(self.obs)
        payload = {"action": G.normalize_action_name(sem.get("action")), "parameter_1": sem.get("parameter_1"),
                   "parameter_2": sem.get("parameter_2"), "room": sem.get("room"),
                   "candidates": [{"id": c.id, "class_name": c.cls} for c in vis],
                   "holding_objects": [{"id": c.id, "class_name": c.cls} for c in held],
                   "view": self._observation_text()}
        prompt = fill(template("decoder"), RESOLVE_INPUT=json.dumps(payload, sort_keys=True))
        call = self._call("decode", prompt, [], "decode", parse_decoded)
        value = call.parsed
        if value is None:
            return G.invalid(f"{why}; resolver: {call.parse_error}"), call
        name = payload["action"]
        ids = [i for i in value["parameter_ids"] if isinstance(i, int) and not isinstance(i, bool)]
        by_id = {c.id: c for c in vis + held}
        if name in ("put_on", "put_in") and len(ids) == 2 and ids[0] in {c.id for c in held} and ids[1] in by_id:
            c1, c2 = by_id[ids[0]], by_id[ids[1]]
            return G.Grounded(Action(name, obj=c1.id, target=c2.id), None,
                              f"[{name}] <{c1.cls}> ({c1.id}) <{c2.cls}> ({c2.id})",
                              {"parameter_1": "llm", "parameter_2": "llm"}), call
        if name in ("walk", "grab", "open", "close") and ids and ids[0] in {c.id for c in vis}:
            c = by_id[ids[0]]
            return G.Grounded(Action(name, obj=c.id), None, f"[{name}] <{c.cls}> ({c.id})", {"parameter_1": "llm"}), call
        return G.invalid(f"{why}; resolver: ids {value.get('parameter_ids')!r} are not valid candidates"), call

    # -- calls --------------------------------------------------------------------------------------
    def _call(self, phase: str, prompt: str, images: Sequence[Any], schema: str,
              parse: Parse, round: int = 0) -> _Call:
        """One logical call: ask, read the reply with ``parse``, re-ask (``max_reasks``) with the
        reason when nothing usable came back. Each ask is its own cached request (``attempt``).
        :class:`~collablab.llm.EndpointError` (no reply) propagates."""
        s = self.settings
        call_id = f"{self.call_prefix}/t{self.step}/{phase}/r{round}"
        ctx = self.ctx
        names = ", ".join(f"Agent {a}" for a in range(ctx.n_agents))
        msgs: list[dict[str, Any]] = [
            system_message(fill(template("system"), AGENT_NAME=ctx.name, N_AGENTS=ctx.n_agents, AGENT_NAMES=names)),
            user_message(prompt, images)]
        rf = None if s.structured_mode == "none" else response_format_for(s.structured_mode, SCHEMAS[schema],
                                                                         name=schema)
        res = self.client.run(ask(self.client, msgs, parse, call_id=call_id, max_reasks=s.max_reasks,
                                  reask=_reask, mode=s.structured_mode, temperature=s.temperature,
                                  max_tokens=s.max_tokens, response_format=rf,
                                  seed=self.ctx.seed if s.temperature is not None else None))
        tp = sum(a.usage.prompt_tokens or 0 for a in res.asks)
        tc = sum(a.usage.completion_tokens or 0 for a in res.asks)
        image_tokens = [a.usage.image_tokens for a in res.asks if a.usage.image_tokens is not None]
        latency = res.latency_s
        caches = [a.cache for a in res.asks]
        text, parsed, parse_error = res.text, res.parsed, res.parse_error
        rec: dict[str, Any] = {"id": call_id, "phase": phase, "cache": ",".join(caches), "asks": len(caches),
                               "tokens_prompt": tp, "tokens_completion": tc, "latency_s": round_(latency)}
        last = res.asks[-1]
        rec["finish_reason"] = last.finish_reason
        if images:
            rec["images"] = len(images)
        if image_tokens:  # where the server reports them (usage.prompt_tokens_details.image_tokens)
            rec["image_tokens"] = sum(image_tokens)
        if last.reasoning:
            rec["thoughts"] = recorded_thoughts(last.reasoning)
        if parse_error:
            rec["parse_error"] = parse_error[:300]
        self.calls.append(rec)
        return _Call(rec, text, parsed, parse_error, res.truncated, tp, tc, latency)

    def _output_format(self, name: str, schema: str) -> str:
        if self.settings.structured_mode == "none":
            return template(f"out_{name}")
        return fill(template("out_json"), JSON_KEYS=JSON_KEYS[schema])

    # -- the input block (Figs. 23 and 27) --------------------------------------------------------------
    def _input_block(self, phase: str, current: list[Message], observation: bool,
                     dialogue_text: str | None = None, memory: Mapping[str, Any] | None = None,
                     local_context: str | None = None, team_views: Mapping[int, Mapping[str, Any]] | None = None) -> str:
        ctx, obs = self.ctx, self.obs
        seq = ""
        if ctx.structure == "sequential":
            topo = "\n".join(f"door {d}: {a} <-> {b}" for d, a, b in ctx.doors) or "None"
            seq = fill(template("sequential_info"), ALLOWED_ROOMS=", ".join(ctx.allowed_rooms),
                       DEPARTMENT_TOPOLOGY=topo) + "\n"
        extra = ""
        paper = self.settings.paper
        ids = not paper
        # paper: with images the observation is the image (Fig. 27 has no text list); without, the id-free text
        if observation and not (paper and self.settings.multimodal):
            extra += fill(template("observation_paper" if paper else "observation"),
                          VISIBLE_OBJECTS=self._observation_text(ids)) + "\n"
        if team_views and not (paper and self.settings.multimodal):
            views = [a for a in sorted(team_views) if a == ctx.agent] + [a for a in sorted(team_views) if a != ctx.agent]
            text = "\n".join(f"Agent {a}:\n{observation_text(team_views[a], holding=True, ids=ids)}" for a in views)
            extra += fill(template("team_views"), TEAM_VIEWS=text) + "\n"
        if local_context is not None:
            extra += fill(template("local_context"), LOCAL_CONTEXT=local_context or "None") + "\n"
        values = dict(
            MEMORY=json.dumps(memory if memory is not None else self.memory, sort_keys=True),
            CURRENT_ROUND_DIALOGUE=dialogue_text if dialogue_text is not None else self._dialogue_text(current),
            ACTION_HISTORY="\n".join(a if ids else without_ids(a) for a in self.done_actions[-20:]) or "None",
            FEEDBACK=self._feedback(), LAST_ACTION=self._last_action(), SEQUENTIAL_INFO=seq,
            CURRENT_ROOM=obs.get("room", "unknown room"), OBSERVATION=extra,
            HOLDING_OBJECTS=holding_text(obs, ids),
            TASK_GOAL="\n".join(p.strip() for p in ctx.goal_text.split(";") if p.strip()),
            TASK_PROGRESS=progress_text(obs.get("progress", [])),
        )
        if phase == "communicate":
            hist = [f"[step {t}] {msg_line(m)}" for t, msgs in self.history for m in msgs]
            values["HISTORICAL_DIALOGUE"] = "\n".join(hist) or "None"
            return fill(template("input_communicate"), **values)
        return fill(template("input_act"), **values)

    def _valid_actions(self, sep: str = ", ") -> str:
        """The action names prompts list: the world's (assisted), Table 7's in Fig. 26's order (paper)."""
        if self.settings.paper:
            return sep.join(a for a in PAPER_CHOICES if a in self.actions)
        return sep.join(self.ctx.valid_actions)

    def _dialogue_text(self, msgs: list[Message], instruction: str | None = None) -> str:
        lines = [msg_line(m) for m in msgs]
        if instruction:
            lines.append(f"Your assignment from the leader for this step: {instruction}")
        return "\n".join(lines) or "None"

    def _feedback(self) -> str:
        fb = str(self.obs.get("feedback") or "")
        if self.last is not None and self.last[2]:
            fb = (fb + " " if fb else "") + f"(Your last action could not be executed: {self.last[2]})"
        if self.settings.paper:  # objects by name, and Table 7's space (B.3), not the world's wider one
            fb = without_ids(re.sub(r"allowed actions: [a-z_]+(?:, [a-z_]+)*", "allowed actions: "
                                    + self._valid_actions(), fb))
        return fb or "None"

    def _last_action(self) -> str:
        if self.last is None:
            return "None"
        executed, intended, _ = self.last
        if self.settings.paper:
            executed = without_ids(executed)
        return f"executed: {executed}; intended: {json.dumps(intended, sort_keys=True) if intended else 'None'}"

    def _observation_text(self, ids: bool = True) -> str:
        return observation_text(self.obs, ids=ids)

    def _views(self) -> tuple[Any, Any]:
        """This step's ``(raw, annotated)`` views, given by the team loop through :meth:`see`."""
        if self.views is None:
            raise RuntimeError(f"{self.ctx.name}: multimodal policy got no views this step (the team loop "
                               "calls see() with collablab.world.render.agent_views)")
        return self.views

    def _own_view(self) -> list[Any]:
        """The image of an acting agent's own call: the raw view (paper: no ids), or the annotated
        one (assisted: today's picture with ids); none without ``multimodal``."""
        if not self.settings.multimodal:
            return []
        raw, annotated = self._views()
        return [raw if self.settings.paper else annotated]

    def _combined(self, images: Mapping[int, Any]) -> Any:
        """Every agent's view stacked, the leader's first (Fig. 22 orange): the raw views (paper)
        or the annotated ones (assisted) of the ``(raw, annotated)`` pairs."""
        from PIL import Image

        order = [self.ctx.agent] + [a for a in sorted(images) if a != self.ctx.agent]
        pick = 0 if self.settings.paper else 1
        pics = [images[a][pick] if isinstance(images[a], tuple) else images[a] for a in order if a in images]
        w = max(p.width for p in pics)
        out = Image.new("RGB", (w, sum(p.height for p in pics)), (255, 255, 255))
        y = 0
        for p in pics:
            out.paste(p, (0, y))
            y += p.height
        return out

    @staticmethod
    def _merge(a: list[Message], b: list[Message]) -> list[Message]:
        seen = {(m.sender, m.text, m.round, m.kind) for m in a}
        return list(a) + [m for m in b if (m.sender, m.text, m.round, m.kind) not in seen]


# -- text helpers ------------------------------------------------------------------------------------
def round_(x: float) -> float:
    return float(f"{x:.4f}")
