"""MASTraceBench (mastracebench.txt): where multi-agent gains come from.

Six graded tasks (§3, Table 1), MAS methods and CLEARS (§4), proposal trajectories and their
metrics (TS, CG, GAB, AR, AL, TC, OV, FPA; §3.3 and appendix). Built so far (issue 10): the
task rules, generators, parsers and scorers (``tasks``), the trajectory record
(``trajectory``) and the metrics and tables over stored records (``metrics``). The methods,
the offline backend and notebook 05 come next.
"""

from . import metrics, tasks, trajectory
from .tasks import TASKS

__all__ = ["TASKS", "metrics", "tasks", "trajectory"]
