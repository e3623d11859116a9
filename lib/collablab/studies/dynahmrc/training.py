"""DynaHMRC's fine-tuning data: successful trajectories as step-wise chat samples (dynahmrc.tex §3.5
"Data Construction and Model Adaptation", ``fig:data``, ``algo:data_collection``; training recipe
in ``docs/dynahmrc_finetuning.md``, hyperparameters ``tab:hyper``).

Every execution decision of a successful episode becomes one sample: the system and user prompts the
robot saw (:func:`~.llm_brain.build_messages`, stage ``HMRC``; ``HMRC_MOVE`` when the context holds
the move's local costmap) and the answer ``Thoughts: <reasoning>\\nContents: <action>``, where the
action is the one actually executed (in canonical form) and the reasoning is written afterwards by a
model that is given both prompts and that true action (:func:`llm_reasoner`; the paper uses GPT-4o).

The file is JSONL in the OpenAI / LLaMA-Factory "messages" form, one sample a line::

    {"messages": [{"role": "system", "content": ...}, {"role": "user", "content": ...},
                  {"role": "assistant", "content": "Thoughts: ...\\nContents: pick(fork_0)"}],
     "meta": {"task_id": ..., "task_kind": "pack", "robot": "Alice", "type": "MoMa", "step": 10,
              "stage": "HMRC"}}

``meta.task_id`` is ``ctx.extra["task_id"]`` (else ``ctx.extra["episode"]``); fine-tuning tools
ignore the ``meta`` column. A move is two samples when the framework records both calls: the first
call's context with the action ``move()`` (the selection) and the second call's context (with its
``costmap``) with ``move(dx, dy)``. Decisions whose action does not parse (or, for a move's second
call, is not a ``move``) are left out: they are not examples to learn from.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ...llm import LLMClient
from .actions import ActionError, format_action, parse_action
from .brain import Context
from .llm_brain import BrainError, build_messages, parse_sections, prompt_template
from .tasks import is_unseen

__all__ = ["Reasoner", "assistant_text", "export_successful", "llm_reasoner", "read_jsonl", "reasoning_messages", "sample",
           "samples_from_decisions", "write_jsonl"]

#: A reasoner: (system + user messages of one decision, the true action) -> the reasoning text.
Reasoner = Callable[[list[dict[str, str]], str], str]
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_BARE_MOVE = re.compile(r"^\s*\[?move\]?\s*(?:\(\s*\))?\s*\.?\s*$", re.IGNORECASE)


def assistant_text(reasoning: str, action: str) -> str:
    """The supervised answer: ``Thoughts: <reasoning>`` then ``Contents: <action>``."""
    return f"Thoughts: {reasoning.strip()}\nContents: {action.strip()}"


def _stage(ctx: Context) -> str:
    return "HMRC_MOVE" if ctx.costmap else "HMRC"


def _canonical(ctx: Context, action: str) -> str | None:
    if _stage(ctx) == "HMRC" and _BARE_MOVE.match(action):
        return "move()"  # the first call of a move (its offsets are the second call's sample)
    try:
        a = parse_action(action)
    except ActionError:
        return None
    if _stage(ctx) == "HMRC_MOVE" and a.name != "move":
        return None
    return format_action(a)


def sample(ctx: Context, action: str, reasoning: str = "") -> dict[str, Any]:
    """One training sample of a decision (``action`` already canonical)."""
    stage = _stage(ctx)
    messages = build_messages(ctx, stage)
    meta = {"task_id": ctx.extra.get("task_id", ctx.extra.get("episode")), "task_kind": ctx.task.kind,
            "robot": ctx.name, "type": ctx.type.code, "step": ctx.step, "stage": stage}
    return {"messages": messages + [{"role": "assistant", "content": assistant_text(reasoning, action)}],
            "meta": meta}


def samples_from_decisions(decisions: Iterable[tuple[Context, str]],
                           reasoner: Reasoner | None = None) -> list[dict[str, Any]]:
    """Samples of the ``(context, executed action)`` pairs of successful episodes' execution calls,
    in order; the reasoning is ``reasoner(system + user messages, action)`` or empty when
    ``reasoner`` is None. Unparseable actions are skipped."""
    out = []
    for ctx, action in decisions:
        canon = _canonical(ctx, action)
        if canon is None:
            continue
        reasoning = reasoner(build_messages(ctx, _stage(ctx)), canon) if reasoner is not None else ""
        out.append(sample(ctx, canon, reasoning))
    return out


def _fill(template: str, **values: str) -> str:
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], prompt_template(template))


def reasoning_messages(messages: list[dict[str, str]], action: str) -> list[dict[str, str]]:
    """The reasoning-generation call: the robot's system and user prompts and the true action."""
    by_role = {m["role"]: m["content"] for m in messages}
    user = _fill("reasoning_user", system_prompt=by_role.get("system", ""), user_prompt=by_role.get("user", ""),
                 action=action)
    return [{"role": "system", "content": prompt_template("reasoning_system")}, {"role": "user", "content": user}]


def _clean_reasoning(text: str) -> str:
    sec = parse_sections(text, ("thoughts", "contents"))
    if sec.get("thoughts"):
        return sec["thoughts"]
    body = re.sub(r"<think>.*?(?:</think>|$)", "", text, flags=re.DOTALL | re.IGNORECASE)
    return re.split(r"(?im)^\W*contents?\s*:", body)[0].strip()


def llm_reasoner(client: LLMClient, *, temperature: float = 0.0, max_tokens: int = 1024,
                 namespace: str = "dynahmrc-reasoning/") -> Reasoner:
    """A :data:`Reasoner` on a model (the paper's GPT-4o step): one call per decision, its id
    ``<namespace><hash of prompts and action>``. A call that gets no reply raises the client's
    ``EndpointError``; an empty reply (or a result carrying an error, from a client that does not
    raise) raises :class:`~.llm_brain.BrainError`."""
    ns = namespace if not namespace or namespace.endswith("/") else namespace + "/"

    def reason(messages: list[dict[str, str]], action: str) -> str:
        msgs = reasoning_messages(messages, action)
        digest = hashlib.sha256(json.dumps([msgs, action], sort_keys=True).encode("utf-8")).hexdigest()[:20]
        result = client.chat_sync(msgs, call_id=f"{ns}{digest}", temperature=temperature, max_tokens=max_tokens)
        if result.error is not None:
            raise BrainError(f"reasoning call {result.call_id}: {result.error}")
        text = _clean_reasoning(result.text or "")
        if not text:
            raise BrainError(f"reasoning call {result.call_id}: the model gave no reasoning")
        return text

    return reason


def write_jsonl(samples: Iterable[dict[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write ``samples`` one JSON object a line (UTF-8); returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", encoding="utf-8") as f:
        for s in samples:
            f.write(json.dumps(s, ensure_ascii=False) + "\n")
    return p


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The samples of a JSONL file."""
    with Path(path).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def export_successful(specs: Iterable[dict[str, Any]], path: str | os.PathLike[str],
                      reasoner: Reasoner | None = None) -> tuple[Path, int, int]:
    """Run each unit spec (``spec.run_spec`` keys) with its decisions recorded and write the samples
    of the successful ones to ``path`` (``algo:data_collection``: only trajectories that complete the
    task are kept). With the offline backend the trajectories play the paper's human-designed
    scripts; with an LLM backend, its generated ones. Returns (path, episodes kept, samples).
    A spec whose task has unseen targets (:func:`.tasks.unseen_targets`) is refused before any runs:
    those objects are the held-out test of ``tab:unseen_obj``."""
    from .spec import resolve, run_unit, task_of

    specs = list(specs)
    for i, spec in enumerate(specs):
        if is_unseen(task_of(resolve(dict(spec)))):
            raise ValueError(f"specs[{i}].objects: 'unseen' not allowed in a fine-tuning export; allowed: seen "
                             f"(unseen target objects are held out of training, tab:unseen_obj)")
    samples: list[dict[str, Any]] = []
    kept = 0
    for spec in specs:
        rec, log = run_unit(dict(spec), record_decisions=True)
        if rec["episode"]["success"]:
            kept += 1
            samples += samples_from_decisions(log.decisions, reasoner)
    return write_jsonl(samples, path), kept, len(samples)
