"""MASTraceBench's tasks (mastracebench.txt Table 1): rules, instance generators, parsers, scorers.

Static tasks: MAPF, OptionGen (items read from the user's RACE copy, scored by a judge:
``OptionGenTask(judge=...)``), EvidenceChain. Dynamic tasks: Gomoku, Negotiation, TacticDuel.
Every task class follows :class:`Task`; :data:`TASKS` names them.
"""

from .base import Invalid, Task, is_invalid
from .evidence_chain import EvidenceChainTask, EvidenceInstance, generate_evidence
from .gomoku import GomokuTask, gomoku_games
from .mapf import MAPFInstance, MAPFTask, bottleneck_5x5, generate_mapf
from .negotiation import NegotiationTask, negotiation_configs
from .option_gen import LLMJudge, OptionGenItem, OptionGenTask, RuleJudge, load_race
from .tactic_duel import TacticDuelTask, duels

#: task name -> task class (static tasks first, as in Table 1)
TASKS = {"mapf": MAPFTask, "option_gen": OptionGenTask, "evidence_chain": EvidenceChainTask, "gomoku": GomokuTask,
         "negotiation": NegotiationTask, "tactic_duel": TacticDuelTask}

__all__ = ["TASKS", "EvidenceChainTask", "EvidenceInstance", "GomokuTask", "Invalid", "LLMJudge", "MAPFInstance",
           "MAPFTask", "NegotiationTask", "OptionGenItem", "OptionGenTask", "RuleJudge", "Task", "TacticDuelTask",
           "bottleneck_5x5", "duels", "generate_evidence", "generate_mapf", "gomoku_games", "is_invalid", "load_race",
           "negotiation_configs"]
