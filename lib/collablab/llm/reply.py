"""One reading of a model's reply before any study parser sees it: the thoughts apart from the
final answer, and a reply cut at ``max_tokens`` told apart from a finished one.

Reasoning models answer in one of three ways, and all three are read the same:

* the server separates the thoughts (vLLM with a reasoning parser, llama.cpp's
  ``--reasoning-format``, DeepSeek's API): ``message.reasoning_content`` (or ``.reasoning``) holds
  them and ``content`` holds the answer;
* the thoughts come inline: ``<think> ... </think>`` then the answer (vLLM without a reasoning
  parser, many hosted endpoints); ``<thinking>`` and ``<reasoning>`` tags are read alike;
* the chat template opened the thoughts in the prompt (Qwen3, DeepSeek-R1): the reply holds only
  the closing ``</think>``; everything before it is thought.

A ``<think>`` block that never closes holds thoughts up to the reply's end (a reply cut inside its
thoughts has no answer at all). Every complete block anywhere in the reply is thought, so a draft
answer inside one is never the answer. Stop sequences are applied here to the answer only, after
the thoughts are removed (:func:`cut_at_stop`), so a stop word the model writes while thinking
cannot end the reply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

__all__ = ["THOUGHTS_CHARS", "ReadReply", "cut_at_stop", "read_reply", "recorded_thoughts", "split_thoughts"]

#: Characters of a call's thoughts a study keeps in its records (a reasoning model's run to
#: thousands; the response cache keeps them all).
THOUGHTS_CHARS = 1000

_TAGS = "think|thinking|reasoning"
_BLOCK = re.compile(rf"<({_TAGS})>(.*?)</\1>", re.DOTALL | re.IGNORECASE)
_CLOSE = re.compile(rf"</(?:{_TAGS})>", re.IGNORECASE)
_OPEN = re.compile(rf"<(?:{_TAGS})>", re.IGNORECASE)


@dataclass(frozen=True)
class ReadReply:
    """A reply read: ``answer`` (what parsers see), ``thoughts`` (None without any),
    ``finish_reason`` (``"stop"`` when a stop sequence ended the answer here), and whether the
    thoughts never closed (``open_thoughts``: the reply ended inside them)."""

    answer: str
    thoughts: str | None
    finish_reason: str | None
    open_thoughts: bool = False


def split_thoughts(content: str | None) -> tuple[str, str | None, bool]:
    """``(answer, inline thoughts or None, thoughts left open)`` of a reply's ``content``."""
    text = content or ""
    thoughts: list[str] = []

    def keep(m: re.Match[str]) -> str:
        thoughts.append(m.group(2).strip())
        return "\n"

    text = _BLOCK.sub(keep, text)
    closes = list(_CLOSE.finditer(text))
    if closes:  # the template opened the thoughts in the prompt: all before the last close
        head = text[:closes[-1].start()]
        thoughts.insert(0, _CLOSE.sub("\n", head).strip())
        text = text[closes[-1].end():]
    open_ = _OPEN.search(text)
    if open_ is not None:  # never closed: thoughts to the end
        thoughts.append(text[open_.end():].strip())
        text = text[:open_.start()]
    inline = "\n\n".join(t for t in thoughts if t) or None
    return text.strip(), inline, open_ is not None


def cut_at_stop(answer: str, stop: str | Sequence[str] | None) -> tuple[str, bool]:
    """``answer`` up to the first stop sequence, and whether one was found (the sequence itself
    is dropped, as a server drops it)."""
    stops = [stop] if isinstance(stop, str) else [s for s in (stop or ()) if s]
    hits = [i for i in (answer.find(s) for s in stops) if i >= 0]
    if not hits:
        return answer, False
    return answer[:min(hits)].rstrip(), True


def recorded_thoughts(thoughts: str | None) -> str | None:
    """The part of ``thoughts`` a record keeps: the first :data:`THOUGHTS_CHARS` characters."""
    return thoughts[:THOUGHTS_CHARS] if thoughts else None


def read_reply(content: str | None, reasoning: str | None = None, finish_reason: str | None = None,
               stop: str | Sequence[str] | None = None) -> ReadReply:
    """The answer and thoughts of one reply (module docstring). ``reasoning`` is what the server
    sent apart; ``stop`` the call's stop sequences, applied to the answer only."""
    answer, inline, open_ = split_thoughts(content)
    parts = [p.strip() for p in (reasoning, inline) if p and p.strip()]
    answer, stopped = cut_at_stop(answer, stop)
    return ReadReply(answer=answer, thoughts="\n\n".join(parts) or None,
                     finish_reason="stop" if stopped else finish_reason, open_thoughts=open_)
