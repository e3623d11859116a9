"""PARTNR's zero-shot ReAct prompt and the one growing transcript each agent's planner keeps
(observe_share_predict.txt §3.1-3.3, §A.6; PARTNR's ``conf/zero_shot_prompt.yaml``,
``llm_zero_shot_react_planner.yaml`` and ``decentralized_zero_shot_react_summary.yaml``).

PARTNR's planner (``ZeroShotReactPlanner``) writes its prompt once and then only appends to it:
the conf prompt (system part, then ``Task: ...``, the world description, ``Possible Actions:``
and the answer format), then per planning cycle the model's reply and ``Assigned!``, then
``Result: <the skill's result>`` and ``Objects: <the objects the agent knows>`` (the decentralized
config sets ``objects_response: True``). Here the same transcript is a chat:

- ``system``: the conf prompt's system part, with PARTNR's ``{agent_role_description}``: agent 1
  (the human) is "the task giver", agent 0 (the robot) "the task receiver", in PARTNR's words;
- ``user``: ``Task: ...``, the world description, the agent's ``Possible Actions`` (PARTNR's tool
  descriptions, sorted, then ``- Done: ...``) and the answer format (:func:`first_messages`);
- per cycle, ``assistant``: the reply (``Thought: ...``, the call, ``Assigned!``;
  :func:`reply_message`) and ``user``: ``Result: ...`` / ``Objects: ...`` (:func:`result_message`).

The world description is PARTNR's ``get_world_descr``: ``Furniture:`` (every room with its
furniture), the furniture with a faucet, ``Objects:`` (PARTNR's ``get_objects_descr`` over the
agent's own belief graph: ``<object>: <furniture> in <room>``, ``held by the agent``, ``held by
the other agent``). No object states: PARTNR's planner config has
``objects_response_include_states: False`` and the decentralized config keeps it. No explored
rooms, open/closed notes or the agent's room either: PARTNR's world description has none.

The information conditions (ours, where PARTNR's shape allows; the paper's prompt text for them
is not in our copy):

- **OAS**: what the agent sees of its partner at planning time is one more line of the user turn
  that starts the cycle, ``Other agent: <visible state>`` (or ``Other agent: Acting in another
  room.``, §3.2): in the first prompt after the world description, later after ``Objects:``
  ("OAS adds the co-located partner's visible state and current percepts", §3.2). Never the
  partner's thoughts, plans or predictions.
- **OANA**: "The OANA instruction describes the agents as collaborating and presents both agents'
  possible actions" (§A.6): the system text's partner paragraph says so, the first user turn adds
  ``Possible Actions of the other agent`` and the prediction request (object classes, §3.3 "Tool
  Call Grammar"), and the answer format gets a ``Prediction:`` line after the thought.

A transcript is :class:`Transcript`: the first messages and the finished cycles; its
:meth:`~Transcript.messages` may keep only the last ``history`` cycles (a deviation, off by
default: PARTNR keeps them all).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .calls import STOP_WORD, TOOLS, mask_id
from .episode import ROLES, Observation
from .skills import ROLE_TOOLS

__all__ = [
    "ANSWERS",
    "OTHER_AGENT",
    "Transcript",
    "episode_classes",
    "first_messages",
    "objects_text",
    "partner_of",
    "prompt_template",
    "reply_message",
    "result_message",
    "tool_descriptions",
    "world_description",
]

#: How the answer is written: PARTNR's ReAct lines, or one JSON object (``json_schema`` mode).
ANSWERS = ("react", "json")
#: The label of the OAS line (ours: the paper's wording of it is not in our copy).
OTHER_AGENT = "Other agent: "
PROMPTS = Path(__file__).with_name("prompts")
_PLACEHOLDER = re.compile(r"\$([A-Z_]+)\$")


@functools.lru_cache(maxsize=None)
def prompt_template(name: str) -> str:
    """The prompt text ``prompts/<name>.txt`` of this package (trailing newlines dropped)."""
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


def tool_descriptions(tools: Sequence[str]) -> str:
    """PARTNR's ``Possible Actions`` list: ``- <tool>: <description>`` sorted by name (its
    ``Agent.tool_descriptions``), then the prompt's own ``- Done: ...`` line."""
    help_ = _tool_help()
    lines = [f"- {t}: {help_[t]}" for t in sorted(t for t in tools if t != "Done")]
    return "\n".join(lines + [f"- Done: {help_['Done']}"])


def partner_of(obs: Observation) -> tuple[str, str, tuple[str, ...]]:
    """Handle, role and tools of the agent's partner."""
    b = 1 - obs.agent
    role = ROLES[b] if obs.agent in (0, 1) else ("human" if obs.role == "robot" else "robot")
    return f"agent_{b}", role, tuple(ROLE_TOOLS[role])


# -- the world -----------------------------------------------------------------------------------
def objects_text(obs: Observation) -> str:
    """PARTNR's ``get_objects_descr`` (decentralized, room names, no states) over the agent's own
    belief graph: ``<object>: <furniture> in <room>``, ``<object>: held by the agent``, ``<object>:
    held by the other agent`` (seen carried by it), or ``No objects found yet``. A record whose
    object was gone from where the agent saw it has neither furniture nor room: PARTNR writes
    ``unknown in an unknown room`` then."""
    b = obs.beliefs
    if not b.objects:
        return "No objects found yet"
    lines = []
    for h in sorted(b.objects):
        r = b.objects[h]
        if r.held_by_me:
            lines.append(f"{h}: held by the agent")
        elif r.place is None and r.room is not None:  # seen in the partner's hands (or merged from it)
            lines.append(f"{h}: held by the other agent")
        else:
            furniture = r.place[1] if r.place is not None else "unknown"
            lines.append(f"{h}: {furniture} in {r.room or 'an unknown room'}")
    return "\n".join(lines)


def world_description(obs: Observation) -> str:
    """PARTNR's ``get_world_descr``: ``Furniture:`` with every room and its furniture (the layout
    is known from the start), the furniture that has a faucet, then ``Objects:``
    (:func:`objects_text`)."""
    w = obs.world
    by_room: dict[str, list[str]] = {r: [] for r in sorted(w.room_box)}
    for h in sorted(w.furniture):
        by_room.setdefault(w.furniture[h].room, []).append(h)
    house = "".join(f"{r}: {', '.join(fs)}\n" for r, fs in by_room.items())
    faucets = ", ".join(h for h in sorted(w.furniture) if w.furniture[h].faucet)
    return (f"Furniture:\n{house}\nThe following furnitures have a faucet: {faucets}\n"
            f"Objects:\n{objects_text(obs)}")


def episode_classes(obs: Observation) -> list[str]:
    """The object classes of the OANA prediction (Tool Call Grammar): the classes of the task's
    objects (named in the instruction, known from the start) plus every class the agent knows,
    masked as the scoring masks them (:func:`~.calls.mask_id`)."""
    classes = {mask_id(str(o["handle"])) for o in obs.task.objects if "handle" in o}
    classes |= {mask_id(h) for h in obs.beliefs.objects}
    return sorted(classes)


def _seen(obs: Observation) -> str:
    return f"{OTHER_AGENT}{obs.partner_text}" if obs.partner_text is not None else ""


# -- the turns -----------------------------------------------------------------------------------
def first_messages(obs: Observation, *, answer: str = "react") -> list[dict[str, str]]:
    """The conf prompt as the first two chat messages (system, user) for the agent of ``obs``
    (see the module docstring); ``answer`` (:data:`ANSWERS`) picks the answer format."""
    if answer not in ANSWERS:
        raise ValueError(f"answer: {answer!r}; allowed: {', '.join(ANSWERS)}")
    _, _, partner_tools = partner_of(obs)
    intro = prompt_template("partner_oana" if obs.predict else "partner_concurrent")
    role_file = f"role_{obs.role}" if (PROMPTS / f"role_{obs.role}.txt").is_file() else "role_robot"
    system = _fill(prompt_template("system"), PARTNER_INTRO=intro, ROLE=prompt_template(role_file) + "\n")
    seen = _seen(obs)
    if obs.predict:
        others = _fill(prompt_template("partner_tools"), PARTNER_TOOLS=tool_descriptions(partner_tools)) + "\n\n"
        predict = _fill(prompt_template("predict"), CLASSES=", ".join(episode_classes(obs)) or "none known yet") + "\n"
    else:
        others = predict = ""
    if answer == "react":
        fmt = _fill(prompt_template("answer_react"),
                    PREDICTION_LINE="Prediction: <next action call of the other agent>\n" if obs.predict else "",
                    PREDICTION_EXAMPLE="Prediction: Explore[<room name>]\n" if obs.predict else "")
    else:
        fmt = _fill(prompt_template("answer_json"),
                    PREDICTION_FIELD=('"prediction": {"tool": "<tool of the other agent>", "args": [...]}, '
                                      if obs.predict else ""),
                    PREDICTION_EXAMPLE='"prediction": {"tool": "Explore", "args": ["<room name>"]}, '
                    if obs.predict else "")
    user = _fill(prompt_template("user"), TASK=obs.instruction, WORLD=world_description(obs),
                 PARTNER_SEEN=f"{seen}\n\n" if seen else "", TOOLS=tool_descriptions(obs.tools),
                 PARTNER_TOOLS=others, PREDICT=predict, FORMAT=fmt)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def reply_message(reply: str, *, answer: str = "react") -> dict[str, str]:
    """The model's reply as the transcript keeps it: PARTNR appends the reply cut at its stop
    word, then ``Assigned!`` (``f"{llm_response}\\n{stopword}"``); a JSON answer is kept as is."""
    if answer not in ANSWERS:
        raise ValueError(f"answer: {answer!r}; allowed: {', '.join(ANSWERS)}")
    if answer == "json":
        return {"role": "assistant", "content": reply.strip() or "{}"}
    head = reply.split(STOP_WORD, 1)[0].strip()
    return {"role": "assistant", "content": f"{head}\n{STOP_WORD}" if head else STOP_WORD}


def result_message(obs: Observation, result: str) -> dict[str, str]:
    """PARTNR's ``Result: <result>`` / ``Objects: <objects>`` turn after a cycle, as of ``obs``
    (the agent's next planning cycle), with the OAS line when OAS is on."""
    text = _fill(prompt_template("result"), RESULT=" ".join(str(result).split()) or "(none)",
                 OBJECTS=objects_text(obs))
    seen = _seen(obs)
    return {"role": "user", "content": f"{text}\n{seen}" if seen else text}


@dataclass(frozen=True)
class Transcript:
    """One agent's growing transcript in one episode: the first messages (:func:`first_messages`),
    then one (reply, result) pair of messages per finished cycle. ``cycles`` is the number of the
    agent's earlier cycles (``len(obs.history)``) when it was last asked; ``pending`` is the reply
    to that request once it came (None before); ``answer`` is the answer format (:data:`ANSWERS`)."""

    episode_id: str
    agent: int
    answer: str
    cycles: int
    head: tuple[dict[str, str], ...]
    turns: tuple[tuple[dict[str, str], dict[str, str]], ...] = ()
    pending: dict[str, str] | None = None

    def messages(self, history: int | None = None) -> list[dict[str, str]]:
        """The chat messages of the current request: the first messages, then the finished
        cycles (only the last ``history`` of them when it is a number; None: all, PARTNR's)."""
        if history is not None and (isinstance(history, bool) or not isinstance(history, int) or history < 1):
            raise ValueError(f"history: {history!r}; allowed: None (the whole transcript) or an integer >= 1")
        kept = self.turns if history is None else self.turns[-history:] if self.turns else ()
        return [dict(m) for m in self.head] + [dict(m) for pair in kept for m in pair]

    def follows(self, obs: Observation) -> bool:
        """Whether ``obs`` is the agent's next cycle after the one this transcript answered."""
        return (self.pending is not None and self.episode_id == obs.task.episode_id and self.agent == obs.agent
                and self.cycles == len(obs.history) - 1)

    def next(self, obs: Observation) -> "Transcript":
        """The transcript of the cycle of ``obs``: this one with the last cycle's reply and result
        appended when ``obs`` follows it (:meth:`follows`), else a new one (:meth:`start`)."""
        if not self.follows(obs):
            return Transcript.start(obs, answer=self.answer)
        assert self.pending is not None
        turn = (self.pending, result_message(obs, obs.history[-1][1]))
        return Transcript(self.episode_id, self.agent, self.answer, len(obs.history), self.head, self.turns + (turn,))

    def answered(self, reply: str) -> "Transcript":
        """This transcript with the model's reply to its current request (:func:`reply_message`)."""
        return Transcript(self.episode_id, self.agent, self.answer, self.cycles, self.head, self.turns,
                          reply_message(reply, answer=self.answer))

    @staticmethod
    def start(obs: Observation, *, answer: str = "react") -> "Transcript":
        """A planner's first transcript for the agent of ``obs``. At the episode's first cycle it
        is the conf prompt alone; a planner that joins later (a test, or a planner behind a
        wrapper that answered earlier cycles itself) also gets the earlier cycles from
        ``obs.history``: each call and ``Assigned!``, then ``Result: ...`` (``Objects:`` and the
        OAS line only in the last, as of ``obs``: the earlier ones are not known)."""
        turns = []
        for i, (call, result) in enumerate(obs.history):
            last = i == len(obs.history) - 1
            user = result_message(obs, result) if last else {"role": "user", "content": f"Result: {result}"}
            turns.append((reply_message(call), user))
        return Transcript(obs.task.episode_id, obs.agent, answer, len(obs.history),
                          tuple(first_messages(obs, answer=answer)), tuple(turns))
