"""CLI: ``python -m collablab.runs --study S [--fn mod:func] --grid grid.yaml [--workers N]``
(also ``collablab episodes ...``).

``--study`` names the output folder and, without ``--fn``, a registered study whose episode
function runs the grid (``python -m collablab.runs --list-studies``).

``grid.yaml`` holds ``base:`` (a mapping) and ``axes:`` (parameter -> list), and optionally
``params:`` (copied into the manifest). Prints the run folder on the last line of stdout.
``--dry-run`` prints how many episodes would run without running any; ``--shard k/n`` runs the
k-th of n interleaved slices of the grid into ``<run_id>.shard-k-of-n`` (``collablab merge``
joins the shards). Exit status: 0 all episodes done; 1 some failed (run again to retry); 2 bad
input, before the first episode, with a message naming the parameter: options, grid, specs, or an
endpoint that fails its check (no answer: a wrong URL or a server not up yet, then start it or
wait for it with ``--wait-for-server S``; a rejected or missing key; a model not served; no
OpenAI-compatible server); 130 interrupted (SIGINT/SIGTERM;
finished episodes are kept, run again to resume).
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

from .grid import default_run_id, expand_grid, normalize_specs
from .llm_hooks import preflight_error_kind
from .merge import SHARD_PARAM, parse_shard, shard_info, shard_run_id, shard_slice
from .notebook import cache_mode, pending_counts
from .paths import outputs_dir
from .registry import studies, study_fn
from .runner import run_grid
from .store import RunLockedError
from .worker import resolve

__all__ = ["add_arguments", "endpoint_lines", "load_grid_file", "main", "pick_validate", "read_yaml",
           "run_from_args"]

ENGINES = ("local", "ray")


def read_yaml(path: str | Path, field: str = "grid") -> Any:
    """The YAML document of ``path``; a syntax error is a ValueError ``<field>: <path>: line L, column C: ...``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ValueError(f"{field}: {path}: cannot read it ({e.strerror or e})") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        what = getattr(e, "problem", None) or str(e).splitlines()[0]
        ctx, cmark = getattr(e, "context", None), getattr(e, "context_mark", None)
        if ctx and cmark is not None:
            what += f" ({ctx} that starts at line {cmark.line + 1}, column {cmark.column + 1})"
        elif ctx:
            what += f" ({ctx})"
        raise ValueError(f"{field}: {path}: {where}{what}") from None


def load_grid_file(path: str | Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``(specs, params)`` from a grid YAML file with ``base``/``axes``/``params``."""
    doc = read_yaml(path)
    if not isinstance(doc, dict):
        raise ValueError(f"grid: {path} must be a mapping with 'base' and 'axes'")
    unknown = set(doc) - {"base", "axes", "params"}
    if unknown:
        raise ValueError(f"grid: unknown top-level keys {sorted(unknown)} in {path}; "
                         "allowed: base, axes, params")
    params = doc.get("params") or {}
    if not isinstance(params, dict):
        raise ValueError(f"grid.params: must be a mapping, got {type(params).__name__}")
    try:
        return expand_grid(doc.get("base") or {}, doc.get("axes") or {}), params
    except ValueError as e:
        raise ValueError(f"grid: {path}: {e}") from None


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


def add_arguments(ap: argparse.ArgumentParser, out_root: str | None = "outputs") -> None:
    """The episode-grid options (``python -m collablab.runs`` and ``collablab episodes``); an
    ``out_root`` of None defaults ``--out-root`` to :func:`.paths.outputs_dir`."""
    ap.add_argument("--study", help="study name: the folder under --out-root and, without --fn, the "
                                    "registered study that runs the grid")
    ap.add_argument("--grid", help="YAML file with base: and axes:")
    ap.add_argument("--fn", default=None, help="episode function 'module:function' (default: the study's)")
    ap.add_argument("--list-studies", action="store_true", help="print the registered studies and exit")
    ap.add_argument("--workers", type=int, default=2, help="worker processes; 1 runs in-process")
    ap.add_argument("--engine", default="local", choices=ENGINES,
                    help="local worker processes (default) or ray (pip install collablab[ray])")
    ap.add_argument("--episodes-per-worker", type=int, default=1,
                    help="episodes run concurrently (threads) in each worker (default 1)")
    ap.add_argument("--ray-address", default=None, help="ray: a cluster's address (default: a local Ray)")
    ap.add_argument("--run-id", default=None, help="run folder name (default: hash of fn + grid)")
    ap.add_argument("--out-root", default=out_root,
                    help=f"root of run folders (default {out_root or '$COLLABLAB_OUTPUTS or the checkout outputs/'})")
    ap.add_argument("--backend", default=None, help="backend label for the manifest")
    ap.add_argument("--validate", default="auto",
                    help="spec check 'module:function', 'none', or 'auto' (default): the "
                         "validate() in fn's module if it has one")
    ap.add_argument("--max-total-tokens", type=int, default=None,
                    help="stop submitting episodes once the run used this many LLM tokens")
    ap.add_argument("--max-tokens-per-minute", type=int, default=None,
                    help="hold submissions back while the last minute's LLM tokens exceed this")
    ap.add_argument("--wait-for-server", type=float, default=0.0, metavar="S",
                    help="wait up to S seconds for every model endpoint to answer (a vllm serve still loading)")
    ap.add_argument("--dry-run", action="store_true", help="print how many episodes would run; run none")
    ap.add_argument("--shard", default=None, metavar="K/N",
                    help="run the K-th of N interleaved slices of the grid into <run_id>.shard-K-of-N")
    ap.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")


def _budget(args: argparse.Namespace) -> dict[str, int] | None:
    budget = {k: v for k, v in (("max_total_tokens", args.max_total_tokens),
                                ("max_tokens_per_minute", args.max_tokens_per_minute)) if v is not None}
    for k, v in budget.items():
        if v < 1:
            raise ValueError(f"--{k.replace('_', '-')}: must be an integer >= 1, got {v}")
    return budget or None


def endpoint_lines(endpoints: Any) -> list[str]:
    """A table of per-endpoint calls, throughput, errors and latency (``RunResult.endpoints``)."""
    if not endpoints:
        return []

    def num(v: Any, fmt: str) -> str:
        return "-" if v is None else format(v, fmt)

    lines = [f"{'endpoint':24s} {'calls':>6} {'calls/s':>8} {'hits':>6} {'errors':>7} {'tokens':>9} "
             f"{'lat p50':>8} {'p95':>7} {'max':>7}"]
    for alias, s in sorted(endpoints.items()):
        errors = s.get("errors") or {}
        err = f"{s.get('n_errors', 0)}" + (" (" + ", ".join(f"{k} {v}" for k, v in errors.items()) + ")"
                                           if errors else "")
        lines.append(f"{alias[:24]:24s} {s.get('calls', 0):>6} {num(s.get('calls_per_s'), '.2f'):>8} "
                     f"{s.get('cache_hits', 0):>6} {err:>7} {s.get('tokens', 0):>9} "
                     f"{num(s.get('latency_p50_s'), '.2f'):>8} {num(s.get('latency_p95_s'), '.2f'):>7} "
                     f"{num(s.get('latency_max_s'), '.2f'):>7}")
    return lines


def run_from_args(args: argparse.Namespace) -> int:
    """Run (or dry-run, or shard) the grid the parsed options name; returns the exit status."""
    if args.list_studies:
        for name, fn in sorted(studies().items()):
            print(f"{name}\t{fn}")
        return 0
    if not args.study or not args.grid:
        print("error: --study and --grid are required (or --list-studies)", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _sigterm)  # a batch scheduler's stop ends like Ctrl-C
    try:
        out_root = args.out_root or str(outputs_dir())
        specs, params = load_grid_file(args.grid)
        fn = args.fn or study_fn(args.study)
        validate = pick_validate(args.validate, fn)
        run_id = args.run_id
        params = {"grid_file": str(args.grid), **params}
        if args.shard or args.dry_run:
            grid = normalize_specs(specs, validate)
            if run_id is None:
                run_id = default_run_id(grid, fn) + ("-replay" if cache_mode({}) == "replay" else "")
            if args.shard:
                k, n = parse_shard(args.shard)
                params[SHARD_PARAM] = shard_info(grid, fn, run_id, k, n)
                specs, run_id = shard_slice(grid, k, n), shard_run_id(run_id, k, n)
                if not specs:
                    raise ValueError(f"shard: {k}/{n} of a grid of {len(grid)} specs is empty; use n <= {len(grid)}")
        if args.dry_run:
            run_dir = Path(out_root) / args.study / run_id
            c = pending_counts(specs, run_dir, validate)
            print(f"{'study':20s} {'run id':34s} {'total':>7} {'done':>7} {'to run':>7}")
            print(" ".join("-" * w for w in (20, 34, 7, 7, 7)))
            print(f"{args.study[:20]:20s} {run_id[:34]:34s} {c['n_total']:>7} {c['n_done']:>7} {c['n_pending']:>7}")
            print(run_dir)
            return 0
        extra: dict[str, Any] = {}
        if args.engine != "local":
            extra["engine"] = args.engine
        if args.ray_address:
            extra["ray_address"] = args.ray_address
        if args.episodes_per_worker != 1:
            extra["episodes_per_worker"] = args.episodes_per_worker
        if args.wait_for_server:
            extra["preflight_wait_s"] = args.wait_for_server
        budget = _budget(args)
        if budget:
            extra["budget"] = budget
        res = run_grid(specs, fn=fn, study=args.study, run_id=run_id,
                       out_root=out_root, workers=args.workers,
                       progress=not args.no_progress, params=params,
                       backend=args.backend, validate=validate, **extra)
    except (ValueError, OSError, RunLockedError) as e:
        hint = (" (no episode ran: start the server, or wait for it with --wait-for-server S)"
                if preflight_error_kind(e) == "transport" else "")
        print(f"error: {e}{hint}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: finished episodes are kept; run the same command again to resume",
              file=sys.stderr)
        return 130
    print(res, file=sys.stderr)
    for line in endpoint_lines(getattr(res, "endpoints", None)):
        print(line, file=sys.stderr)
    print(res.run_dir)
    return 0 if res.ok else 1


def main(argv: list[str] | None = None, prog: str = "python -m collablab.runs") -> int:
    """Parse ``argv`` and run; returns the exit status."""
    ap = argparse.ArgumentParser(prog=prog, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(ap)
    return run_from_args(ap.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
