"""MASTraceBench (mastracebench.txt): where multi-agent gains come from.

Six graded tasks (§3, Table 1), MAS methods and CLEARS (§4), proposal trajectories and their
metrics (TS, CG, GAB, AR, AL, TC, OV, FPA; §3.3 and appendix). Built so far (issue 10):

- ``tasks``: rules, seeded generators, parsers and scorers of MAPF, EvidenceChain, Gomoku,
  Negotiation and TacticDuel (OptionGen, which needs the user's RACE data and a judge, is next);
- ``roles``: what a method asks of a model (requests, replies, the reply formats);
- ``methods``: eleven methods as workflows over recorded calls (MAS-GPT not yet built);
- ``offline``: the heuristic backend answering every role with a capability profile;
- ``llm_backend``: every role sent to an OpenAI-compatible model through the cached client;
- ``episodes``: game episodes (Gomoku, TacticDuel, Negotiation) of a method against a fixed
  Single-Agent opponent on the same backbone, one trajectory per decision state;
- ``trajectory`` and ``metrics``: the record and the metrics and tables over stored records.

Still to come: OptionGen, MAS-GPT, run_spec and the run-grid registration, notebook 05.
"""

from . import episodes, llm_backend, methods, metrics, offline, roles, tasks, trajectory
from .episodes import play_episode
from .llm_backend import BackendError, LLMBackend
from .methods import METHODS, MethodConfig
from .offline import HeuristicBackend
from .tasks import TASKS

__all__ = ["METHODS", "TASKS", "BackendError", "HeuristicBackend", "LLMBackend", "MethodConfig", "episodes", "llm_backend",
           "methods", "play_episode", "metrics", "offline", "roles", "tasks", "trajectory"]
