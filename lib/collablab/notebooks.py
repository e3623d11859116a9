"""Run the research notebooks with papermill: ``python -m collablab.notebooks run-all``.

Each ``notebooks/NN_*.ipynb`` runs on its default parameters (or a named parameter set
from ``params/NN_*.yaml``) and is written, executed, to ``outputs/notebooks/``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def notebook_paths(root: Path = ROOT) -> list[Path]:
    """The research notebooks, in order."""
    return sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def parameter_set(notebook: Path, name: str, root: Path = ROOT) -> dict:
    """The parameter set ``name`` of ``params/<notebook>.yaml`` ({} for ``default``)."""
    if name == "default":
        return {}
    path = root / "params" / f"{notebook.stem}.yaml"
    sets = yaml.safe_load(path.read_text()) if path.is_file() else {}
    if name not in (sets or {}):
        allowed = ", ".join(["default", *sorted(sets or {})])
        raise SystemExit(f"params: {path.name} has no set {name!r}; allowed: {allowed}")
    return dict(sets[name] or {})


def run_all(param_set: str = "default", out_dir: Path | None = None, root: Path = ROOT,
            only: list[str] | None = None) -> int:
    """Execute every notebook with papermill; return the number that failed."""
    import papermill as pm

    out_dir = out_dir or root / "outputs" / "notebooks" / param_set
    out_dir.mkdir(parents=True, exist_ok=True)
    failures = 0
    paths = [p for p in notebook_paths(root) if not only or any(p.stem.startswith(o) for o in only)]
    if not paths:
        print("no notebooks found under notebooks/")
    for nb in paths:
        params = parameter_set(nb, param_set, root)
        t0 = time.perf_counter()
        try:
            pm.execute_notebook(str(nb), str(out_dir / nb.name), parameters=params,
                                cwd=str(root / "notebooks"), progress_bar=False)
            status = "ok"
        except Exception as exc:  # report and go on with the next notebook
            failures += 1
            status = f"FAILED: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        print(f"{nb.name:45s} {time.perf_counter() - t0:7.1f}s  {status}", flush=True)
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m collablab.notebooks")
    sub = parser.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run-all", help="run every notebook with papermill")
    run.add_argument("--params", default="default", help="parameter set: default, smoke or full")
    run.add_argument("--out", type=Path, default=None, help="output folder (default outputs/notebooks)")
    run.add_argument("--only", nargs="*", default=None, help="notebook name prefixes, e.g. 01 03")
    args = parser.parse_args(argv)
    return 1 if run_all(args.params, args.out, only=args.only) else 0


if __name__ == "__main__":
    sys.exit(main())
