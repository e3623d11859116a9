"""Observe, Share, or Predict (observe_share_predict.txt): partner information for a human and a
robot planner on PARTNR's skills, tasks and evaluation, in our household world.

- ``world``: the shared household seen as PARTNR's world graph (ground truth, one belief graph
  per agent, views);
- ``calls`` and ``skills``: PARTNR's tool calls and oracle skills with their costs;
- ``evaluation``: propositions, dependencies, constraints, percent complete and success as
  PARTNR's evaluation document defines them;
- ``tasks`` and ``templates``: task records with PARTNR's field names, their loader, a seeded
  generator and the instruction templates;
- ``episode``: the concurrent decentralized episode with the OAS, KE and OANA channels and the
  full-observability control;
- ``offline`` (heuristic planner, labelled as such) and ``llm_planner`` (PARTNR's zero-shot
  ReAct planner on an OpenAI-compatible model);
- ``prediction`` and ``metrics``: OANA scoring and per-agent and team metrics.
"""

from . import calls, episode, evaluation, metrics, offline, prediction, skills, tasks, world
from .episode import Channels, run_episode
from .offline import OfflinePlanner, OfflineProfile

__all__ = ["Channels", "OfflinePlanner", "OfflineProfile", "calls", "episode", "evaluation", "metrics", "offline",
           "prediction", "run_episode", "skills", "tasks", "world"]
