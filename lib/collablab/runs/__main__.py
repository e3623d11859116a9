"""CLI: ``python -m collablab.runs --study S [--fn mod:func] --grid grid.yaml [--workers N]``.

``--study`` names the output folder and, without ``--fn``, a registered study whose episode
function runs the grid (``python -m collablab.runs --list-studies``).

``grid.yaml`` holds ``base:`` (a mapping) and ``axes:`` (parameter -> list), and optionally
``params:`` (copied into the manifest). Prints the run folder on the last line of stdout.
Exit status: 0 all episodes done, 1 some failed (run again to retry), 2 bad input,
130 interrupted (SIGINT/SIGTERM; finished episodes are kept, run again to resume).
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from .grid import expand_grid
from .registry import studies, study_fn
from .runner import run_grid
from .store import RunLockedError
from .worker import resolve


def load_grid_file(path: str | Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``(specs, params)`` from a grid YAML file with ``base``/``axes``/``params``."""
    doc = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(doc, dict):
        raise ValueError(f"grid: {path} must be a mapping with 'base' and 'axes'")
    unknown = set(doc) - {"base", "axes", "params"}
    if unknown:
        raise ValueError(f"grid: unknown top-level keys {sorted(unknown)} in {path}; "
                         "allowed: base, axes, params")
    params = doc.get("params") or {}
    if not isinstance(params, dict):
        raise ValueError(f"grid.params: must be a mapping, got {type(params).__name__}")
    return expand_grid(doc.get("base") or {}, doc.get("axes") or {}), params


def pick_validate(option: str, fn: str) -> Callable[[dict[str, Any]], Any] | None:
    """``auto``: the ``validate`` function next to ``fn`` if its module has one; ``none``; or a path."""
    if option == "none":
        return None
    if option == "auto":
        resolve(fn)
        return getattr(importlib.import_module(fn.split(":")[0]), "validate", None)
    try:
        return resolve(option)
    except ValueError as e:
        raise ValueError(str(e).replace("fn:", "--validate:", 1)) from None


def _sigterm(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m collablab.runs", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", help="study name: the folder under --out-root and, without --fn, the "
                                    "registered study that runs the grid")
    ap.add_argument("--grid", help="YAML file with base: and axes:")
    ap.add_argument("--fn", default=None, help="episode function 'module:function' (default: the study's)")
    ap.add_argument("--list-studies", action="store_true", help="print the registered studies and exit")
    ap.add_argument("--workers", type=int, default=2, help="worker processes; 1 runs in-process")
    ap.add_argument("--run-id", default=None, help="run folder name (default: hash of fn + grid)")
    ap.add_argument("--out-root", default="outputs", help="root of run folders (default outputs)")
    ap.add_argument("--backend", default=None, help="backend label for the manifest")
    ap.add_argument("--validate", default="auto",
                    help="spec check 'module:function', 'none', or 'auto' (default): the "
                         "validate() in fn's module if it has one")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    if args.list_studies:
        for name, fn in sorted(studies().items()):
            print(f"{name}\t{fn}")
        return 0
    if not args.study or not args.grid:
        print("error: --study and --grid are required (or --list-studies)", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _sigterm)  # a batch scheduler's stop ends like Ctrl-C
    try:
        specs, params = load_grid_file(args.grid)
        fn = args.fn or study_fn(args.study)
        res = run_grid(specs, fn=fn, study=args.study, run_id=args.run_id,
                       out_root=args.out_root, workers=args.workers,
                       progress=not args.no_progress, params={"grid_file": str(args.grid), **params},
                       backend=args.backend, validate=pick_validate(args.validate, fn))
    except (ValueError, OSError, RunLockedError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: finished episodes are kept; run the same command again to resume",
              file=sys.stderr)
        return 130
    print(res, file=sys.stderr)
    print(res.run_dir)
    return 0 if res.ok else 1


if __name__ == "__main__":
    sys.exit(main())
