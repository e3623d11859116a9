"""MASTraceBench (mastracebench.txt): where multi-agent gains come from.

Six graded tasks (§3, Table 1), MAS methods and CLEARS (§4), proposal trajectories and their
metrics (TS, CG, GAB, AR, AL, TC, OV, FPA; §3.3 and appendix). Built so far (issue 10):

- ``tasks``: rules, seeded generators, parsers and scorers of MAPF, EvidenceChain, Gomoku,
  Negotiation and TacticDuel (OptionGen, which needs the user's RACE data and a judge, is next);
- ``roles``: what a method asks of a model (requests, replies, the reply formats);
- ``methods``: twelve methods as workflows over recorded calls; MAS-GPT is prompted (``mas_gpt``:
  the backbone writes the program, run in a sandboxed subprocess, with the paper's fallback);
- ``offline``: the heuristic backend answering every role with a capability profile;
- ``llm_backend``: every role sent to an OpenAI-compatible model through the cached client;
- ``episodes``: game episodes (Gomoku, TacticDuel, Negotiation) of a method against a fixed
  Single-Agent opponent on the same backbone, one trajectory per decision state;
- ``trajectory`` and ``metrics``: the record and the metrics and tables over stored records;
- ``spec``: one unit of work from a flat spec (:func:`run_spec`), registered for the run grid
  as study ``mastracebench`` (``fn = collablab.studies.mastracebench:run_spec``), with the
  record schema and what the conformance checks need (``conformance``);
- ``experiments``, ``report``, ``findings``, ``plots``: notebook 05's grid, its tables (Tables 2-4,
  7, 9, 10, Figs. 4-6, 10), the sentences written from them and the analysis tail;
- ``beside``: a run beside the paper's Tables 2, 3, 4, 9 and 10 (:func:`beside_paper`, :data:`PAPER_MODELS`).
"""

from ...runs import notebook_parameters as parameters
from . import episodes, llm_backend, methods, metrics, offline, roles, tasks, trajectory
from .episodes import play_episode
from .llm_backend import BackendError, LLMBackend
from .methods import METHODS, MethodConfig
from .offline import HeuristicBackend
from .conformance import conformance_cases, is_truncated, usable_reply
from .spec import DEFAULTS, RECORD_SCHEMA, endpoints, TASK_ORDER, is_invalid, resolve, run_spec, sabotage, trajectories_of, validate
from .tasks import TASKS
from .beside import PAPER_MODELS, beside_paper

__all__ = ["PAPER_MODELS", "beside_paper", "DEFAULTS", "RECORD_SCHEMA", "TASK_ORDER", "conformance_cases", "is_invalid", "is_truncated", "usable_reply", "resolve", "run_spec",
           "sabotage", "trajectories_of", "validate", "endpoints", "parameters", "METHODS", "TASKS", "BackendError", "HeuristicBackend", "LLMBackend", "MethodConfig", "episodes", "llm_backend",
           "methods", "play_episode", "metrics", "offline", "roles", "tasks", "trajectory"]
