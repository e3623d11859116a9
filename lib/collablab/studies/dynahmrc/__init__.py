"""DynaHMRC (dynahmrc.tex): decentralized heterogeneous robot teams under dynamic change, on the
shared household world with a geometric robot layer.

- ``robots``, ``actions``: the four robot types, their atomic action sets, the compositions;
- ``layout`` and ``world``: places, stand poses, costmap and the world with every feedback kind;
- ``difficulty``, ``tasks``, ``variations``: Eq. 9, the task generator and loader, CTO/IRZ/ANC/REC;
- ``brain``, ``framework``: the stages' contexts and the collaboration loop (and the CoELA- and
  COHERENT-style loops); ``offline`` (rule-based, labelled heuristic) and ``llm_brain`` backends;
- ``mcts``: MCTS, MCTS-NoINS and LLM-MCTS over the joint action space;
- ``metrics``, ``stats``: SUCC/PS/TS/AS/CC, tokens per stage, coordination counts, bootstrap CIs,
  paired comparisons and the difficulty-weight sensitivity; ``training``: the JSONL export;
- ``spec``: one unit from a flat spec (:func:`run_spec`), registered as study ``dynahmrc``;
- ``experiments``, ``report``: notebook 06's grid and tables (imported by the notebook, not here);
- ``beside``: a run beside the paper's tables (:func:`beside_paper`, :data:`PAPER_MODELS`; issue 25).
"""

from ...runs import notebook_parameters as parameters
from . import actions, brain, difficulty, framework, layout, metrics, offline, robots, stats, tasks, variations, world
from .beside import PAPER_MODELS, beside_paper
from .conformance import conformance_cases, is_truncated, usable_reply
from .spec import DEFAULTS, RECORD_SCHEMA, endpoints, is_invalid, resolve, run_spec, sabotage, validate

__all__ = ["DEFAULTS", "PAPER_MODELS", "RECORD_SCHEMA", "actions", "beside_paper", "brain", "conformance_cases", "is_truncated", "usable_reply", "difficulty", "framework",
           "is_invalid", "layout", "metrics", "offline", "parameters", "resolve", "robots", "run_spec", "sabotage",
           "stats", "tasks", "validate", "endpoints", "variations", "world"]
