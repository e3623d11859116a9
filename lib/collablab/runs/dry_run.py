"""``collablab run --dry-run`` without a kernel: what a notebook would run, computed in this process.

A notebook's setup cell calls its study's notebook entry with ``P``, the parameters
(:data:`NOTEBOOK_ENTRIES` names that entry for each notebook: no code cell is read).
:func:`plan_notebook` builds the same ``P`` (the tagged ``parameters`` cell executed into a dict,
then the given values applied, as papermill injects them; :func:`notebook_parameters`) and calls
the entry, in the notebook's folder, under ``COLLABLAB_DRY_RUN``: the entry checks every
parameter (:class:`ParameterError` on a bad one) and :func:`run_notebook_grid` records the plan
and raises :class:`DryRun` before its first episode. :func:`read_only_caches` keeps a dry run from
writing anything: MECoBench's task suite is read from its cache when there, else generated into
a temporary folder.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .notebook import DRY_RUN_ENV, SHOW_REQUESTS_ENV, DryRun, ParameterError, notebook_parameters
from .paths import outputs_dir

__all__ = ["NOTEBOOK_ENTRIES", "SUITE_CACHE_ENV", "NotebookEntry", "Plan", "environ", "notebook_entry", "parameters_cell",
           "plan_notebook", "read_only_caches", "with_parameters"]

#: MECoBench's suite cache (``collablab.studies.mecobench.suite.SUITE_CACHE_ENV``; a floor names no study).
SUITE_CACHE_ENV = "COLLABLAB_SUITE_CACHE"


@dataclass(frozen=True)
class NotebookEntry:
    """The call a notebook's setup cell makes: ``entry`` (``"module:function"``) with ``args``, then ``P``."""

    entry: str
    args: tuple[Any, ...] = ()


_MECOBENCH = "collablab.studies.mecobench:run_notebook"
#: Notebook (file stem) -> the study entry its setup cell calls (``tests/test_dry_run.py`` checks
#: that each notebook's setup cell makes this call). A new notebook adds its line here.
NOTEBOOK_ENTRIES: dict[str, NotebookEntry] = {
    "01_collaboration": NotebookEntry(_MECOBENCH, ("01_collaboration",)),
    "02_modes": NotebookEntry(_MECOBENCH, ("02_modes",)),
    "03_priors": NotebookEntry(_MECOBENCH, ("03_priors",)),
    "04_behaviours_and_failures": NotebookEntry(_MECOBENCH, ("04_behaviours",)),
    "05_proposal_trajectories": NotebookEntry("collablab.studies.mastracebench.experiments:run_notebook"),
    "06_heterogeneous_dynamic_teams": NotebookEntry("collablab.studies.dynahmrc.experiments:run_notebook"),
    "07_partner_information": NotebookEntry("collablab.studies.partnr.experiments:run_notebook"),
}
#: A notebook with this parameter set reads that run folder instead of calling its entry.
READ_RUN = "read_run"


@dataclass
class Plan:
    """What a dry run found: ``status`` (``planned``, ``no grid``, ``bad input``, ``failed``), the
    plans of the grids it would run (:func:`run_notebook_grid`'s ``COLLABLAB_DRY_RUN`` lines) and
    an error line."""

    status: str
    runs: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""


def notebook_entry(notebook: str | Path) -> NotebookEntry:
    """The entry of ``notebook`` (a path or stem); ValueError naming the registry when it has none."""
    stem = Path(notebook).stem
    if stem not in NOTEBOOK_ENTRIES:
        raise ValueError(f"notebook: {stem!r} has no entry in collablab.runs.dry_run.NOTEBOOK_ENTRIES; "
                         f"known: {', '.join(NOTEBOOK_ENTRIES)}")
    return NOTEBOOK_ENTRIES[stem]


def parameters_cell(notebook: str | Path) -> str:
    """The source of ``notebook``'s first code cell tagged ``parameters`` (where papermill injects)."""
    nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            src = cell.get("source", "")
            return "".join(src) if isinstance(src, list) else str(src)
    raise ValueError(f"notebook: {Path(notebook).name} has no code cell tagged 'parameters'")


def with_parameters(notebook: str | Path, params: Mapping[str, Any]) -> dict[str, Any]:
    """``P`` as the notebook's ``S.parameters(globals())`` sees it after papermill injected ``params``:
    the parameters cell executed, then ``params`` assigned over it."""
    namespace: dict[str, Any] = {}
    exec(compile(parameters_cell(notebook), f"{Path(notebook).name}:parameters", "exec"), namespace)  # noqa: S102
    namespace.update(copy.deepcopy(dict(params)))
    return notebook_parameters(namespace)


@contextlib.contextmanager
def environ(values: Mapping[str, str]) -> Iterator[None]:
    """Set environment variables for the block, then put back what was there."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def read_only_caches() -> Iterator[Path]:
    """A temporary folder for the whole dry run (yielded) that stands in for MECoBench's suite cache
    (``$COLLABLAB_SUITE_CACHE``, else ``<outputs>/tasks``): the suites cached there are linked in, read
    only; a suite not cached yet is generated into the temporary folder, which goes at the end."""
    real = Path(os.environ.get(SUITE_CACHE_ENV) or outputs_dir() / "tasks")
    with tempfile.TemporaryDirectory(prefix="collablab-dry-") as tmp:
        overlay = Path(tmp) / "tasks"
        overlay.mkdir()
        for cached in sorted(real.glob("*.json")) if real.is_dir() else []:
            (overlay / cached.name).symlink_to(cached.resolve())
        with environ({SUITE_CACHE_ENV: str(overlay)}):
            yield Path(tmp)


def plan_notebook(notebook: str | Path, params: Mapping[str, Any], *, show_requests: bool = False,
                  scratch: str | Path | None = None) -> Plan:
    """What ``notebook`` would run with ``params`` (module docstring): no kernel, no episode, no file
    written but a plan file in ``scratch`` (a temporary folder, e.g. :func:`read_only_caches`'s).
    ``show_requests``: each plan also holds the first request body of each model role."""
    with contextlib.ExitStack() as stack:
        folder = Path(scratch) if scratch is not None else Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="collablab-dry-")))
        plan_file = folder / f"plan-{Path(notebook).stem}.jsonl"
        plan_file.unlink(missing_ok=True)
        env = {DRY_RUN_ENV: str(plan_file)}
        if show_requests:
            env[SHOW_REQUESTS_ENV] = "1"
        try:
            P = with_parameters(notebook, params)
            if P.get(READ_RUN):
                return Plan("no grid", error=f"reads the run folder in {READ_RUN} ({P[READ_RUN]}); runs no episode")
            entry = notebook_entry(notebook)
            module, function = entry.entry.split(":")
            call = getattr(importlib.import_module(module), function)
            with environ(env), contextlib.chdir(Path(notebook).resolve().parent):
                call(*entry.args, P)
            return Plan("no grid", _plans(plan_file), "its entry returned without reaching a grid")
        except DryRun:
            return Plan("planned", _plans(plan_file))
        except ParameterError as e:
            return Plan("bad input", _plans(plan_file), _first_line(e))
        except Exception as e:  # noqa: BLE001 - reported in the table, the next notebook is planned
            return Plan("failed", _plans(plan_file), f"{type(e).__name__}: {_first_line(e)}")


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else ""


def _plans(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
