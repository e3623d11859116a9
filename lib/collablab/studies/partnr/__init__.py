"""Observe, Share, or Predict (observe_share_predict.txt): partner information for a human and a
robot planner on PARTNR's skills, tasks and evaluation, in our household world.

- ``world``: the shared household seen as PARTNR's world graph (ground truth, one belief graph
  per agent, views);
- ``calls`` and ``skills``: PARTNR's tool calls and oracle skills with their costs;
- ``evaluation``: propositions, dependencies, constraints, percent complete and success as
  PARTNR's evaluation document defines them; ``explanations``: why an episode failed;
- ``tasks`` and ``templates``: task records with PARTNR's field names, their loader, a seeded
  generator and PARTNR's instruction templates (``instructions``: the clause grammar that
  compiles them, ``house_map``: their rooms and furniture in our houses);
- ``episode``: the concurrent decentralized episode with the OAS, KE and OANA channels and the
  full-observability control (``oas``: what OAS shows of a co-located partner: its visible state
  and current percepts, never its call);
- ``offline`` (heuristic planner, labelled as such) and ``llm_planner`` (PARTNR's zero-shot
  ReAct planner on an OpenAI-compatible model; ``transcript``: its prompt from PARTNR's conf and
  the one growing transcript per agent);
- ``prediction`` and ``metrics``: OANA scoring and per-agent and team metrics;
- ``spec``: one unit from a flat spec (:func:`run_spec`), registered for the run grid as study
  ``partnr``, with the record schema and what the conformance checks need (``conformance``);
- ``experiments``, ``report``, ``findings``, ``plots``: notebook 07's grid, its tables in the
  paper's layouts (§4.2-4.5), the sentences written from them and the analysis tail (imported
  by the notebook, not here: workers that run units need none of them);
- ``beside``: a run beside the paper's Tables 2, 3, 10 and 11 (:func:`beside_paper`,
  :data:`PAPER_MODELS`), loaded on first use for the same reason.
"""

from typing import Any

from ...runs import notebook_parameters as parameters
from . import calls, episode, evaluation, llm_planner, metrics, offline, prediction, skills, tasks, transcript, world
from .conformance import conformance_cases, is_truncated, usable_reply
from .episode import Channels, run_episode
from .offline import OfflinePlanner, OfflineProfile
from .spec import DEFAULTS, RECORD_SCHEMA, endpoints, is_invalid, resolve, run_spec, sabotage, validate

__all__ = ["Channels", "DEFAULTS", "OfflinePlanner", "OfflineProfile", "PAPER_MODELS", "RECORD_SCHEMA", "beside_paper",
           "calls", "conformance_cases", "is_truncated", "usable_reply",
           "episode", "evaluation", "is_invalid", "llm_planner", "metrics", "offline", "parameters", "prediction",
           "resolve", "run_episode", "run_spec", "sabotage", "skills", "tasks", "transcript", "validate", "endpoints",
           "world"]


def __getattr__(name: str) -> Any:
    """``beside_paper`` and ``PAPER_MODELS`` from :mod:`.beside`, imported on first use (it loads the
    analysis and plotting floors, which the workers that run units do not need)."""
    if name in ("beside_paper", "PAPER_MODELS"):
        from . import beside

        return getattr(beside, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
