"""Test-session settings shared by pytest and the nbval-executed notebooks, and how the suite is
split over pytest-xdist workers (docs/testing.md)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# Notebooks and tests write their run folders to a fresh place, so a test never resumes a
# developer's earlier run (the notebook kernels inherit this environment, and so do the xdist
# workers: this file is read by the controller before it starts them, so all share one folder).
os.environ.setdefault("COLLABLAB_OUTPUTS", tempfile.mkdtemp(prefix="collablab-test-outputs-"))
# MECoBench's generated suite (10-30 s to generate) is built once per test session and read by
# every test, worker, kernel and subprocess, also those that give themselves a fresh outputs folder.
os.environ.setdefault("COLLABLAB_SUITE_CACHE", os.path.join(os.environ["COLLABLAB_OUTPUTS"], "tasks"))
# The local model's Q8_0 file (llm.local_server.serving_gguf, about a second) is made once per session.
os.environ.setdefault("COLLABLAB_MODEL_CACHE", os.path.join(os.environ["COLLABLAB_OUTPUTS"], "models"))

#: Test files (and notebooks) that run in one xdist worker, one after the other, because they share
#: an expensive input. Every other file is a group of its own, so that its
#: module-scoped fixtures are built once. Within a group, tests keep the collection order
#: (tests/ before notebooks/): the test module builds a notebook's default run in the session's
#: outputs folder and the notebook then reads it instead of running its episodes again.
GROUPS: dict[str, tuple[str, ...]] = {
    # a notebook's default run, built by its test module and then read by nbval's execution of it
    "nb05": ("tests/test_mastracebench_notebook.py", "notebooks/05_proposal_trajectories.ipynb"),
    "nb06": ("tests/test_dynahmrc_notebook.py", "notebooks/06_heterogeneous_dynamic_teams.ipynb"),
    "nb07": ("tests/test_partnr_notebook.py", "notebooks/07_partner_information.ipynb"),
}
#: Groups started first, longest first (their seconds in the profile of docs/testing.md), so that
#: the last minutes are small tests on both workers rather than one long group while the other
#: worker idles; every other group follows in collection order. The local model's tests each run
#: their own llama.cpp server on one thread, so two of them can run at once.
FIRST = ("tests/test_mastracebench_local_model.py", "tests/test_mecobench_directions.py",
         "tests/test_dynahmrc_local_model.py", "tests/test_llm_episode_local.py", "tests/test_partnr_local_model.py",
         "nb07", "tests/test_batch_servers.py", "nb05", "nb06", "tests/test_notebook_reading.py", "notebooks/02_modes.ipynb",
         "notebooks/03_priors.ipynb", "tests/test_cli.py", "tests/test_tasks_suite.py", "tests/test_teams.py",
         "notebooks/01_collaboration.ipynb", "tests/test_runs_ray.py", "tests/test_mecobench_grid.py",
         "tests/test_conformance.py", "tests/test_fuzz_replies.py", "notebooks/04_behaviours_and_failures.ipynb",
         "tests/test_findings.py", "tests/test_notebook_llm_replay.py")

_GROUP_OF = {path: name for name, paths in GROUPS.items() for path in paths}


def group_of(nodeid: str) -> str:
    """The xdist group of a test: its file's GROUPS entry, else its file (node ids start with the
    path from the rootdir)."""
    path = nodeid.split("::", 1)[0]
    return _GROUP_OF.get(path, path)


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """xdist's load-scope scheduler with our groups as its scopes: a group's tests go to one worker,
    in collection order; groups are handed out in collection order (--no-loadscope-reorder) to
    whichever worker is free. (xdist's own --dist loadgroup reads xdist_group marks through the
    node ids, which pytest 9.2 no longer lets a plugin change: pytest-xdist issue 1386.)"""
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

    return GroupScheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The FIRST groups lead; the rest keep the collection order."""
    rank = {name: i for i, name in enumerate(FIRST)}
    order = {id(item): i for i, item in enumerate(items)}
    items.sort(key=lambda it: (rank.get(group_of(it.nodeid), len(rank)), order[id(it)]))
