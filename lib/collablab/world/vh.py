"""Load VirtualHome's evolving-graph executor without running ``virtualhome/__init__``.

``virtualhome==2.3.0`` (installed ``--no-deps``) has a top-level ``__init__`` that
imports the Unity client and pokes ``sys.path[5]``; it breaks in a plain venv. The
symbolic executor lives in ``virtualhome/simulation/evolving_graph`` and only needs
numpy, so we import that folder as a package of its own under a private name.

In that private copy, ``execution.DeleteEdges`` is :mod:`.vh_changers`' indexed subclass: the
same resulting state with far fewer calls (the module says how that is checked).
"""

from __future__ import annotations

import importlib
import importlib.util
import random
import sys
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

from .vh_changers import indexed_delete_edges

_ALIAS = "_collablab_vh_evolving_graph"


class EvolvingGraph(NamedTuple):
    """The executor modules we use."""

    environment: ModuleType
    execution: ModuleType
    scripts: ModuleType
    path: Path


def _package_dir() -> Path:
    spec = importlib.util.find_spec("virtualhome")  # finds, does not execute
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            "virtualhome is not installed. Install it with "
            "`pip install --no-deps virtualhome==2.3.0` (see README)."
        )
    root = Path(list(spec.submodule_search_locations)[0])
    eg = root / "simulation" / "evolving_graph"
    if not (eg / "execution.py").is_file():
        raise ImportError(f"virtualhome at {root} has no simulation/evolving_graph/execution.py")
    return eg


def load() -> EvolvingGraph:
    """Import (once) and return VirtualHome's evolving-graph modules."""
    if _ALIAS not in sys.modules:
        eg = _package_dir()
        spec = importlib.util.spec_from_file_location(
            _ALIAS, eg / "__init__.py", submodule_search_locations=[str(eg)]
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[_ALIAS] = module
        # evolving_graph/utils.py calls random.seed(123) at import time; keep the
        # caller's global random state untouched.
        saved = random.getstate()
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(_ALIAS, None)
            raise
        finally:
            random.setstate(saved)
        environment = importlib.import_module(f"{_ALIAS}.environment")
        execution = importlib.import_module(f"{_ALIAS}.execution")
        execution.DeleteEdges = indexed_delete_edges(environment)
    pkg = sys.modules[_ALIAS]
    return EvolvingGraph(
        environment=importlib.import_module(f"{_ALIAS}.environment"),
        execution=importlib.import_module(f"{_ALIAS}.execution"),
        scripts=importlib.import_module(f"{_ALIAS}.scripts"),
        path=Path(pkg.__file__).parent,
    )
