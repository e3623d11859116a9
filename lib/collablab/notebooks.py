"""The research notebooks and their parameter sets; ``python -m collablab.notebooks run-all
[--params NAME] [--only PREFIX ...] [--out DIR]`` is an alias of ``collablab run`` (the
``collablab`` command, :mod:`collablab.cli`), which it hands the process over to.

The notebooks and their parameter sets are found by :mod:`collablab.cli` (``notebook_paths``,
``parameter_set``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

__all__ = ["cli_argv", "main"]


def cli_argv(argv: list[str] | None = None) -> list[str]:
    """The ``collablab run`` arguments of a ``run-all`` command line."""
    parser = argparse.ArgumentParser(prog="python -m collablab.notebooks",
                                     description="An alias of `collablab run` (see `collablab run --help`).")
    sub = parser.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run-all", help="run every notebook with papermill (= collablab run)")
    run.add_argument("--params", default="default", help="parameter set: default, smoke or full")
    run.add_argument("--out", type=Path, default=None, help="output folder (default outputs/notebooks/<params>)")
    run.add_argument("--only", nargs="*", default=None, help="notebook name prefixes, e.g. 01 03")
    args, rest = parser.parse_known_args(argv)
    return ["run", *(args.only or []), "--params", args.params,
            *(["--out", str(args.out)] if args.out else []), *rest]


def main(argv: list[str] | None = None) -> None:
    """Replace this process by ``collablab run`` with the same options (exit status included)."""
    args = cli_argv(argv)
    os.execv(sys.executable, [sys.executable, "-m", "collablab.cli", *args])


if __name__ == "__main__":
    main()
