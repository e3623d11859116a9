"""Discuss: agents speak in turn, seeing the dialogue so far; another round follows "when
consensus is not reached" (mecobench.txt §3), up to a round cap (Fig. 20, READY / CONTINUE).

- Consensus (``consensus="all"``): every agent answered READY. Fig. 20 asks each agent for
  "<READY> if, from your perspective, no more discussion is needed before agents take actions"
  and "<CONTINUE> if more discussion is still needed"; consensus is everyone's agreement that no
  more is needed, so one CONTINUE keeps the discussion going. ``"majority"`` (more than half
  READY) is the looser reading of the word.
- The cap (``max_rounds``, default 3): the paper gives none (its only count of rounds is the
  10-step dialogue window of Fig. 4). Fig. 20's first round tells the agent to keep a note "for
  your own later text-only discussion rounds", plural, so at least two follow-ups are foreseen:
  3 rounds is the smallest cap that allows them.
- An unreadable READY field (a reply that cannot be read, no [READY] block, or neither or both of
  <READY> / <CONTINUE>; ``Utterance.ready is None``) counts as CONTINUE by default
  (``unreadable="continue"``): READY is a statement the agent must make, and without it consensus
  has not been reached. ``"ready"`` is the earlier behaviour; ``"previous"`` takes the agent's last
  readable answer of this step (CONTINUE when it has none).
"""

from __future__ import annotations

from ..agents.base import Message
from .base import CommProtocol, StepComm

#: What counts as consensus, and how an unreadable READY field counts.
DISCUSS_CONSENSUS = ("all", "majority")
DISCUSS_UNREADABLE = ("continue", "ready", "previous")


def check_max_rounds(n: object) -> int:
    """``n`` if it is a whole number >= 1 (not a bool), else ValueError naming the field."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"discuss_max_rounds: must be an integer >= 1, got {n!r}")
    return n


class Discuss(CommProtocol):
    name = "discuss"
    min_agents = 2

    def __init__(self, max_rounds: int = 3, consensus: str = "all", unreadable: str = "continue") -> None:
        self.max_rounds = check_max_rounds(max_rounds)
        if consensus not in DISCUSS_CONSENSUS:
            raise ValueError(f"discuss_consensus: {consensus!r} is not allowed; allowed: {', '.join(DISCUSS_CONSENSUS)}")
        if unreadable not in DISCUSS_UNREADABLE:
            raise ValueError(f"discuss_unreadable: {unreadable!r} is not allowed; "
                             f"allowed: {', '.join(DISCUSS_UNREADABLE)}")
        self.consensus = consensus
        self.unreadable = unreadable

    def agreed(self, answers: list[bool]) -> bool:
        """Whether this round's READY answers (unreadable ones already counted) are a consensus."""
        n_ready = sum(answers)
        return n_ready == len(answers) if self.consensus == "all" else 2 * n_ready > len(answers)

    def communicate(self, policies, views, images=None) -> StepComm:
        comm = StepComm()
        dialogue: list[Message] = []
        last: dict[int, bool] = {}  # each agent's last readable answer this step
        for r in range(self.max_rounds):
            comm.rounds = r + 1
            answers = []
            for a, p in enumerate(policies):
                utt = p.speak("discuss", list(dialogue), round=r)
                comm.record(a, utt)
                if utt.text:
                    dialogue.append(Message(a, utt.text, "discuss", round=r))
                if utt.ready is not None:
                    last[a] = utt.ready
                    answers.append(utt.ready)
                elif self.unreadable == "previous":
                    answers.append(last.get(a, False))
                else:
                    answers.append(self.unreadable == "ready")
            if self.agreed(answers):
                break
        self.deliver(policies, dialogue)
        return comm
