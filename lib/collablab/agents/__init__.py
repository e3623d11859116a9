"""One agent: the policy seam (:mod:`.base`), the offline heuristic and the LLM policy, and the
name -> factory table studies build teams from (:mod:`.registry`)."""

from .base import AgentContext, Assignment, Decision, Message, Policy, Turn, Utterance
from .registry import POLICIES, PolicyKind, policy_kind

__all__ = ["POLICIES", "AgentContext", "Assignment", "Decision", "Message", "Policy", "PolicyKind", "Turn",
           "Utterance", "policy_kind"]
