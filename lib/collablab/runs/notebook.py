"""A notebook's parameters as the run records them: the plain values among the notebook's
globals, which are the tagged ``parameters`` cell with papermill's injected values applied."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_PLAIN = (str, int, float, bool, type(None))
_IPYTHON = {"In", "Out", "exit", "quit", "get_ipython"}


def _plain(v: Any) -> bool:
    if isinstance(v, _PLAIN):
        return True
    if isinstance(v, (list, tuple)):
        return all(_plain(x) for x in v)
    if isinstance(v, Mapping):
        return all(isinstance(k, str) and _plain(x) for k, x in v.items())
    return False


def notebook_parameters(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """``{name: value}`` of the plain values (numbers, strings, lists, dicts) among ``namespace``.

    Call it as ``parameters(globals())`` in the cell right after the parameters cell, before
    anything else is defined: then it holds exactly the parameters, with the values papermill
    injected (DESIGN.md habit 1: the parameters cell has typed values only). Names starting
    with ``_`` and IPython's own are left out.
    """
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in namespace.items()
            if not k.startswith("_") and k not in _IPYTHON and _plain(v)}
