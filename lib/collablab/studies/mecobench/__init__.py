"""MECoBench (mecobench.txt): embodied household teams, protocols, priors and their metrics.

The face a notebook imports: run one spec (:func:`run_spec`), build and run grids
(:func:`grid`, :func:`run`), and tabulate records (:func:`metric_table`, :func:`summary`, ...).
Registered for the run grid as study ``mecobench`` (``fn = collablab.studies.mecobench:run_spec``).
"""

from ...runs import notebook_parameters as parameters
from .conformance import conformance_cases, is_invalid, is_truncated, sabotage, usable_reply
from .episode import DEFAULT_BUDGET, EpisodeConfig, check_config, default_budget, init_rooms, make_world, run_episode
from . import findings, plots
from .beside import PAPER_MODELS, beside_paper
from .experiments import (behaviours_specs, collaboration_specs, missing_location_prior, modes_specs, priors_specs,
                          read_notebook, run_notebook)
from .glimpse import Glimpse, glimpses, lone_walk, step_title, team_step
from .grids import FN, MAX_TEAM, backend_of, check_team_sizes, grid, run, task_ids, team_spec
from .metrics import summary
from .oracle import OracleTeam
from .schema import RECORD_SCHEMA
from .spec import (
                   DEFAULTS,
                   POLICY_NAMES,
                   STUDY_TEAMS,
                   config_of,
                   endpoints,
                   make_team,
                   resolve,
                   run_spec,
                   task_of,
                   tasks_of,
                   validate,
)
from .suite import generate_suite, load_suite
from .tables import (
                   METRIC_COLUMNS,
                   by_objects,
                   fitted_trends,
                   message_examples,
                   metric_table,
                   same_team,
                   table8,
                   table9,
                   table10,
                   table11,
                   team_column,
                   wide,
                   with_pairs,
)
from .tasks import (PRIORS, HandoverLink, Task, TaskError, TaskFile, dump_tasks, load_task_file, load_tasks,
                    task_from_record)

__all__ = ["DEFAULTS", "DEFAULT_BUDGET", "FN", "MAX_TEAM", "METRIC_COLUMNS", "POLICY_NAMES", "PRIORS",
           "RECORD_SCHEMA", "STUDY_TEAMS", "EpisodeConfig", "OracleTeam", "Task", "TaskError", "backend_of",
           "by_objects", "check_config", "check_team_sizes", "config_of", "conformance_cases", "dump_tasks", "fitted_trends",
           "generate_suite", "grid", "init_rooms", "is_invalid", "is_truncated", "usable_reply", "load_suite", "load_tasks", "make_team", "make_world",
           "metric_table", "resolve", "run", "sabotage", "run_episode", "run_spec", "summary", "task_from_record", "task_of",
           "task_ids", "tasks_of", "team_spec", "validate", "endpoints", "wide",
           "behaviours_specs", "collaboration_specs", "modes_specs", "priors_specs", "run_notebook", "parameters",
           "findings", "plots", "default_budget", "read_notebook", "load_task_file", "TaskFile", "HandoverLink", "table11",
           "message_examples", "same_team", "table8", "table9", "table10", "team_column",
           "with_pairs", "missing_location_prior", "PAPER_MODELS", "beside_paper", "Glimpse", "glimpses",
           "lone_walk", "step_title", "team_step"]
