"""The ``collablab`` command, installed with the package: run the research notebooks, run
episode grids, and see or merge the runs under ``outputs/``.

    collablab run [PREFIX ...] [--params NAME | --grid FILE] [--dry-run] [--shard K/N] [--force]
                  [--workers N] [--engine local|ray] [--ray-address A] [-p NAME VALUE ...]
    collablab episodes --study S --grid FILE [...]     the episode grid CLI (python -m collablab.runs)
    collablab status [DIR]                             the run folders under DIR (default outputs/)
    collablab merge SHARD_DIR ... --out DIR            join the shards of `episodes --shard K/N`
    collablab compare RUN_DIR [--paper-model ID NAME]  a finished run beside its paper's published tables
    collablab studies                                  the registered studies

``run`` executes each notebook (all, or those whose name starts with a PREFIX) with papermill
in ``notebooks/``, on a parameter set of ``params/NN_*.yaml`` (``--params``, default the
notebook's own values) into ``outputs/notebooks/<params>/``, or once per point of a notebook grid
(``--grid``: ``notebook: "02"``, ``base: {...}``, ``axes: {name: [values]}``) into
``outputs/notebooks/<grid name>/<notebook>__<point key>.ipynb``. It resumes by default: a notebook
whose output finished with the same parameters, notebook and code is skipped (``--force`` runs
it again), and the notebooks' run folders resume their episodes. While a notebook runs, a line
every few seconds tells where its grid stands (``  01_collaboration: 120/288 episodes, 20 s, about
28 s left``, read from the ``COLLABLAB_PROGRESS`` file its kernel writes). ``--dry-run`` starts no
kernel and writes nothing: each notebook's plan is computed in this process
(:mod:`collablab.runs.dry_run`). A table ends the run. Exit
status: 0 all finished; 1 something failed (run again to retry); 2 bad input: a bad option,
parameter set or parameter, or an endpoint that fails its check (no answer, a rejected or missing
key, a model not served, no OpenAI-compatible server): a notebook's ``ParameterError``, raised
before its first episode; the run stops there with one ``error:`` line naming the parameter;
130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from collablab.runs.__main__ import add_arguments, endpoint_lines, read_yaml, run_from_args
from collablab.runs.dry_run import environ, plan_notebook, read_only_caches
from collablab.runs.fingerprint import code_fingerprint
from collablab.runs.grid import canonical_json, episode_key, expand_grid
from collablab.runs.merge import merge_shards, parse_shard, shard_slice
from collablab.runs.notebook import RECORD_ENV
from collablab.runs.paths import outputs_dir
from collablab.runs.progress import PROGRESS_ENV, watch_progress
from collablab.runs.registry import studies
from collablab.runs.store import EPISODES, FAILURES, KEY, RunLockedError, read_records

__all__ = ["Point", "Row", "dry_run_point", "load_notebook_grid", "main", "notebook_paths", "parameter_set",
           "parser", "plan_points", "run_point", "run_status_rows", "select_notebooks"]

ROOT = Path(__file__).resolve().parents[2]
#: Options of ``collablab run`` given to a notebook as the parameter of the same name, if it has one.
PASSED = {"workers": "--workers", "engine": "--engine", "ray_address": "--ray-address"}
#: A notebook error of this type is bad input (exit 2): ``collablab.runs.ParameterError``.
BAD_INPUT = "ParameterError"


# -- what to run ----------------------------------------------------------------------------------
@dataclass
class Point:
    """One notebook execution: the notebook, a label (parameter set or grid point key), its
    parameters and the executed notebook's path."""

    notebook: Path
    label: str
    params: dict[str, Any]
    out: Path

    @property
    def fingerprint(self) -> str:
        """What the output depends on: parameters, notebook source, collablab's code, cache mode."""
        text = canonical_json({"params": self.params, "code": code_fingerprint(),
                               "notebook": hashlib.sha256(self.notebook.read_bytes()).hexdigest(),
                               "cache_mode": os.environ.get("COLLABLAB_LLM_CACHE_MODE", "")})
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def notebook_paths(root: Path = ROOT) -> list[Path]:
    """The research notebooks ``notebooks/NN_*.ipynb``, in order."""
    return sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def select_notebooks(prefixes: Sequence[str], root: Path = ROOT) -> list[Path]:
    """The notebooks whose name starts with one of ``prefixes`` (all for none); ValueError for a
    prefix that matches no notebook."""
    paths = notebook_paths(root)
    if not paths:
        raise ValueError(f"notebooks: no notebooks/NN_*.ipynb under {root}")
    for p in prefixes:
        if not any(nb.stem.startswith(p) for nb in paths):
            raise ValueError(f"notebooks: no notebook starts with {p!r}; allowed: "
                             f"{', '.join(nb.stem for nb in paths)}")
    return [nb for nb in paths if not prefixes or any(nb.stem.startswith(p) for p in prefixes)]


def parameter_set(notebook: Path, name: str, root: Path = ROOT) -> dict[str, Any]:
    """The parameter set ``name`` of ``params/<notebook>.yaml`` ({} for ``default``)."""
    if name == "default":
        return {}
    path = root / "params" / f"{notebook.stem}.yaml"
    sets = read_yaml(path, "params") if path.is_file() else {}
    if not isinstance(sets or {}, dict):
        raise ValueError(f"params: {path} must map set names to parameter mappings")
    if name not in (sets or {}):
        allowed = ", ".join(["default", *sorted(sets or {})])
        raise ValueError(f"params: {path.name if path.is_file() else notebook.stem} has no set {name!r}; "
                         f"allowed: {allowed}")
    if not isinstance(sets[name] or {}, dict):
        raise ValueError(f"params: {path.name}: set {name!r} must be a mapping of parameter -> value")
    return dict(sets[name] or {})


def _parameters_of(notebook: Path) -> dict[str, Any]:
    import papermill as pm

    return dict(pm.inspect_notebook(str(notebook)))


def load_notebook_grid(path: str | Path, root: Path = ROOT) -> tuple[Path, str | None, dict[str, Any],
                                                                      list[dict[str, Any]]]:
    """``(notebook, parameter set or None, base, points)`` of a notebook grid file with ``notebook``,
    optional ``params`` (a set name), ``base`` and ``axes``; every problem is a ValueError naming
    the file and the key."""
    doc = read_yaml(path, "grid")
    if not isinstance(doc, dict):
        raise ValueError(f"grid: {path}: must be a mapping with notebook, base and axes")
    unknown = set(doc) - {"notebook", "params", "base", "axes"}
    if unknown:
        raise ValueError(f"grid: {path}: unknown top-level keys {sorted(unknown)}; allowed: notebook, "
                         "params, base, axes")
    nb = doc.get("notebook")
    if isinstance(nb, int) and not isinstance(nb, bool):
        nb = f"{nb:02d}"  # notebook: 02 unquoted is the number 2 in YAML
    if not isinstance(nb, str) or not nb:
        raise ValueError(f"grid: {path}: notebook: must name one notebook by prefix, e.g. \"02\"; got {nb!r}")
    matches = select_notebooks([nb], root)
    if len(matches) != 1:
        raise ValueError(f"grid: {path}: notebook: {nb!r} matches {len(matches)} notebooks "
                         f"({', '.join(m.stem for m in matches)}); name one")
    set_name = doc.get("params")
    if set_name is not None and not isinstance(set_name, str):
        raise ValueError(f"grid: {path}: params: must name a parameter set (e.g. smoke), got {set_name!r}")
    base = doc.get("base") or {}
    try:
        points = expand_grid({}, doc.get("axes") or {})
        if not isinstance(base, dict):
            raise ValueError(f"base: must be a mapping of parameter -> value, got {type(base).__name__}")
    except ValueError as e:
        raise ValueError(f"grid: {path}: {e}") from None
    return matches[0], set_name, dict(base), points


def _check_names(nb: Path, params: dict[str, Any], names: dict[str, Any], where: str) -> None:
    bad = sorted(set(params) - set(names))
    if bad:
        raise ValueError(f"{where}: {nb.stem} has no parameter(s) {bad}; its parameters: {', '.join(names)}")


def plan_points(args: argparse.Namespace, root: Path = ROOT) -> list[Point]:
    """The notebook executions ``collablab run`` options name, in order (before ``--shard``)."""
    overrides = {name: _value(text) for name, text in (args.param or [])}
    prefixes = [*args.prefixes, *(args.only or [])]
    if args.grid:
        if prefixes:
            raise ValueError("notebooks: --grid names its notebook; give no PREFIX with it")
        nb, set_name, base, axes_points = load_notebook_grid(args.grid, root)
        names = _parameters_of(nb)
        start = parameter_set(nb, set_name or args.params, root)
        _check_names(nb, base, names, f"grid: {args.grid}: base")
        _check_names(nb, axes_points[0], names, f"grid: {args.grid}: axes")
        out_dir = Path(args.out) if args.out else outputs_dir() / "notebooks" / Path(args.grid).stem
        raw = [(nb, names, episode_key(pt), {**start, **base, **pt},
                out_dir / f"{nb.stem}__{episode_key(pt)}.ipynb") for pt in axes_points]
    else:
        out_dir = Path(args.out) if args.out else outputs_dir() / "notebooks" / args.params
        raw = []
        for nb in select_notebooks(prefixes, root):
            names = _parameters_of(nb)
            params = parameter_set(nb, args.params, root)
            _check_names(nb, params, names, f"params: {args.params}")
            raw.append((nb, names, args.params, params, out_dir / nb.name))
    points = []
    for nb, names, label, params, out in raw:
        _check_names(nb, overrides, names, "-p")
        params = {**params, **overrides}
        for name, flag in PASSED.items():
            value = getattr(args, name)
            if value is None:
                continue
            if name in names:
                params[name] = value
            else:
                print(f"note: {nb.stem} has no parameter {name!r}; {flag} does not apply to it", file=sys.stderr)
        points.append(Point(nb, label, params, out))
    return points


def _value(text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


# -- running them ---------------------------------------------------------------------------------
@dataclass
class Row:
    """What happened to one point: status, the run folders it used, wall time, an error line."""

    point: Point
    status: str
    runs: list[dict[str, Any]] = field(default_factory=list)
    wall_s: float = 0.0
    error: str = ""

    @property
    def n_failed(self) -> int:
        return sum(int(r.get("n_failed") or 0) for r in self.runs)

    @property
    def complete(self) -> bool:
        return all(r.get("n_done") == r.get("n_total") for r in self.runs)


def _read_lines(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _finished_before(pt: Point) -> dict[str, Any] | None:
    """The ``collablab`` metadata of ``pt.out`` if it finished with ``pt``'s fingerprint and every
    run folder it used is complete and still there."""
    try:
        md = json.loads(pt.out.read_text(encoding="utf-8"))["metadata"].get("collablab")
    except (OSError, ValueError, KeyError, AttributeError):
        return None
    if not isinstance(md, dict) or md.get("status") != "finished" or md.get("fingerprint") != pt.fingerprint:
        return None
    for r in md.get("runs", []):
        if r.get("n_failed") or r.get("n_done") != r.get("n_total"):
            return None
        if not (Path(r["run_dir"]) / "manifest.json").is_file():
            return None
    return md


def _mark_finished(pt: Point, runs: list[dict[str, Any]], wall_s: float) -> None:
    import nbformat

    nb = nbformat.read(str(pt.out), as_version=4)
    nb.metadata["collablab"] = {"status": "finished", "fingerprint": pt.fingerprint, "params": pt.params,
                                "runs": runs, "wall_s": round(wall_s, 3)}
    tmp = pt.out.with_name(f".{pt.out.name}.{os.getpid()}.tmp")
    nbformat.write(nb, str(tmp))
    os.replace(tmp, pt.out)


def _runs_since(t0: float) -> list[dict[str, Any]]:
    """Run folders whose manifest changed since ``t0``: what an interrupted notebook (or one that
    records no run itself) worked on."""
    out = []
    for m in sorted(outputs_dir().glob("*/*/manifest.json")):
        try:
            if m.stat().st_mtime + 1 < t0:
                continue
            man = json.loads(m.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        c = _counts(m.parent, man)
        out.append({"study": man.get("study"), "run_id": man.get("run_id"), "run_dir": str(m.parent), **c})
    return out


def _error_line(exc: BaseException) -> str:
    ename, evalue = getattr(exc, "ename", None), getattr(exc, "evalue", None)
    if ename == BAD_INPUT:  # the message names the parameter; the class name adds nothing
        return str(evalue).strip().splitlines()[0] if evalue else ename
    if ename:
        return f"{ename}: {str(evalue).strip().splitlines()[0] if evalue else ''}"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def _failed(exc: BaseException) -> str:
    """The status of a point whose notebook raised ``exc``: ``bad input`` or ``failed``."""
    return "bad input" if getattr(exc, "ename", None) == BAD_INPUT else "failed"


def _kernel_manager_class() -> type:
    """papermill's kernel manager, asking for CurveZMQ transport encryption where the kernelspec
    declares it (ipykernel's does): the kernel's channels are encrypted, and the kernel no longer
    warns on the user's terminal that it runs over TCP without encryption."""
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    class EncryptedKernelManager(AsyncKernelManager):
        @default("transport_encryption")
        def _transport_encryption_default(self) -> str:
            return "auto"

    return EncryptedKernelManager


def _execute(pt: Point, out: Path, env: dict[str, str]) -> None:
    import papermill as pm

    with environ(env):
        out.parent.mkdir(parents=True, exist_ok=True)
        pm.execute_notebook(str(pt.notebook), str(out), parameters=pt.params, cwd=str(pt.notebook.parent),
                            progress_bar=False, kernel_manager_class=_kernel_manager_class())


def run_point(pt: Point, force: bool = False) -> Row:
    """Execute ``pt`` (or skip it when it finished before and ``force`` is off)."""
    md = None if force else _finished_before(pt)
    if md is not None:
        return Row(pt, "skipped", md.get("runs", []), 0.0)
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="collablab-run-") as tmp:
        record, progress = Path(tmp) / "runs.jsonl", Path(tmp) / "progress.json"
        try:
            with watch_progress(progress, pt.notebook.stem):
                _execute(pt, pt.out, {RECORD_ENV: str(record), PROGRESS_ENV: str(progress),
                                      "COLLABLAB_OUTPUTS": str(outputs_dir())})
            status, error = "finished", ""
        except Exception as e:  # noqa: BLE001 - reported in the table, the next notebook runs
            status, error = _failed(e), _error_line(e)
        runs = _read_lines(record) or _runs_since(t0)
    wall = time.time() - t0
    if status == "finished":
        _mark_finished(pt, runs, wall)
    return Row(pt, status, runs, wall, error)


def dry_run_point(pt: Point, show_requests: bool = False, scratch: Path | None = None) -> Row:
    """What ``pt`` would run, computed in this process without a kernel
    (:func:`collablab.runs.dry_run.plan_notebook`; ``show_requests``: with the first request body of
    each model role in its runs' plans). Writes nothing but its plan in ``scratch`` (a temporary folder)."""
    md = _finished_before(pt)
    if md is not None:
        return Row(pt, "skipped", [{**r, "n_pending": 0} for r in md.get("runs", [])])
    t0 = time.time()
    plan = plan_notebook(pt.notebook, pt.params, show_requests=show_requests, scratch=scratch)
    return Row(pt, plan.status, plan.runs, time.time() - t0, plan.error)


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], right: set[int] = frozenset()) -> list[str]:
    cells = [[str(c) for c in r] for r in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]

    def fmt(r: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()

    return [fmt(list(headers)), fmt(["-" * w for w in widths]), *(fmt(r) for r in cells)]


def _rel(path: str | Path) -> str:
    """``path`` relative to the outputs root (the summary names that root once), else as given."""
    p = Path(path)
    try:
        return str(p.resolve().relative_to(outputs_dir().resolve()))
    except ValueError:
        return str(p)


def _summary(rows: list[Row]) -> list[str]:
    body = []
    for r in rows:
        done = "/".join(str(sum(int(x.get(k) or 0) for x in r.runs)) for k in ("n_done", "n_total")) if r.runs else "-"
        where = ", ".join(_rel(x["run_dir"]) for x in r.runs) or "-"
        body.append([r.point.notebook.stem, r.point.label, r.status, done, r.n_failed if r.runs else "-",
                     f"{r.wall_s:.1f}s", _rel(r.point.out) if r.status != "failed" or r.point.out.exists() else "-",
                     where])
    lines = _table(["notebook", "point", "status", "episodes", "failed", "wall", "output", "run folder"], body,
                   right={3, 4, 5})
    lines.append(f"(paths under {outputs_dir()})")
    for r in rows:
        if r.error:
            lines.append(f"{r.point.notebook.stem} {r.point.label}: {r.error}")
        for x in r.runs:
            lines += [f"  {line}" for line in endpoint_lines(x.get("endpoints"))]
    return lines


def _dry_summary(rows: list[Row]) -> list[str]:
    body, totals = [], [0, 0, 0]
    for r in rows:
        for x in r.runs or [{}]:
            n = [x.get("n_total"), x.get("n_done"), x.get("n_pending")]
            if x:
                totals = [t + int(v or 0) for t, v in zip(totals, n)]
            body.append([r.point.notebook.stem, r.point.label, *("-" if v is None else v for v in n),
                         _rel(x["run_dir"]) if x else "-", r.status if r.status != "planned" else ""])
    body.append(["total", "", *totals, "", ""])
    lines = _table(["notebook", "point", "episodes", "done", "to run", "run folder", "note"], body, right={2, 3, 4})
    lines.append(f"(run folders under {outputs_dir()})")
    lines += [f"{r.point.notebook.stem} {r.point.label}: {r.error}" for r in rows if r.error]
    for r in rows:
        for x in r.runs or []:
            if "requests" not in x:
                continue
            lines.append(f"\n{r.point.notebook.stem} {r.point.label}: " + (
                f"the first request of each of {len(x['requests'])} model role(s); nothing was sent"
                if x["requests"] else "no unit calls a model (backend heuristic?)"))
            for role, body in x["requests"].items():
                lines += [f"-- {role}", json.dumps(body, indent=2, ensure_ascii=False)]
    return lines


def _sigterm(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def cmd_run(args: argparse.Namespace) -> int:
    """``collablab run``: execute (or dry-run) the points; print the table; the exit status."""
    try:
        if args.show_requests and not args.dry_run:
            raise ValueError("--show-requests: only with --dry-run (a dry run sends nothing)")
        points = plan_points(args)
        if args.shard:
            k, n = parse_shard(args.shard)
            points = shard_slice(points, k, n)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not points:
        print("nothing to run: this shard has no notebook point", file=sys.stderr)
        return 0
    signal.signal(signal.SIGTERM, _sigterm)
    summary = _dry_summary if args.dry_run else _summary
    rows: list[Row] = []
    t0 = time.time()
    try:
        with contextlib.ExitStack() as stack:
            scratch = stack.enter_context(read_only_caches()) if args.dry_run else None
            for i, pt in enumerate(points, 1):
                t0 = time.time()
                print(f"[{i}/{len(points)}] {pt.notebook.stem} ({pt.label}){' dry run' if args.dry_run else ''} ...",
                      file=sys.stderr, flush=True)
                row = (dry_run_point(pt, args.show_requests, scratch) if args.dry_run
                       else run_point(pt, force=args.force))
                rows.append(row)
                bad = row.status == "bad input"
                print(f"[{i}/{len(points)}] {pt.notebook.stem} ({pt.label}) {row.status} in {row.wall_s:.1f}s"
                      + (f": {row.error}" if row.error and not bad else ""), file=sys.stderr, flush=True)
                if bad:  # before its first episode: fix the parameter; the points after it are not run
                    print("\n".join(summary(rows)))
                    print(f"error: {pt.notebook.stem} ({pt.label}): {row.error}", file=sys.stderr)
                    return 2
    except KeyboardInterrupt:
        if len(rows) < len(points):
            rows.append(Row(points[len(rows)], "interrupted", [] if args.dry_run else _runs_since(t0), time.time() - t0))
        print("\n".join(summary(rows)))
        print("interrupted: finished episodes are kept; run the same command again to resume", file=sys.stderr)
        return 130
    print("\n".join(summary(rows)))
    if args.dry_run:
        return 1 if any(r.status in ("failed", "interrupted") for r in rows) else 0
    return 1 if any(r.status not in ("finished", "skipped") or r.n_failed or not r.complete for r in rows) else 0


# -- status, merge, studies -----------------------------------------------------------------------
def _counts(run_dir: Path, manifest: dict[str, Any]) -> dict[str, int]:
    """Episodes done/failed/pending of a run folder from its files (read-only, no lock)."""
    keys = {s["episode_key"] for s in manifest.get("specs", [])}
    done = {r[KEY] for r in read_records(run_dir / EPISODES)} & keys
    failed = {r[KEY] for r in read_records(run_dir / FAILURES)} & keys - done
    return {"n_total": len(keys), "n_done": len(done), "n_failed": len(failed),
            "n_pending": len(keys) - len(done) - len(failed)}


def run_status_rows(root: Path) -> list[dict[str, Any]]:
    """One dict per run folder under ``root`` (or ``root`` itself): study, run_id, status (with
    ``killed``), counts, updated, backend; read without taking any lock."""
    from collablab.runs.manifest import read_manifest, run_status

    found = [root / "manifest.json"] if (root / "manifest.json").is_file() else sorted(root.rglob("manifest.json"))
    rows = []
    for m in found:
        if any(part.startswith(".") for part in m.relative_to(root).parts):
            continue
        run_dir = m.parent
        try:
            manifest = read_manifest(run_dir) or {}
            status = run_status(run_dir)
        except (OSError, ValueError) as e:
            rows.append({"study": "?", "run_id": run_dir.name, "status": f"unreadable ({e})", "run_dir": str(run_dir)})
            continue
        info = {**manifest, **(status or {})}
        rows.append({"study": info.get("study"), "run_id": info.get("run_id", run_dir.name),
                     "status": info.get("status"), **_counts(run_dir, manifest), "updated": info.get("updated"),
                     "backend": info.get("backend"), "run_dir": str(run_dir)})
    return rows


def cmd_status(args: argparse.Namespace) -> int:
    """``collablab status``: a table of the run folders under DIR."""
    root = Path(args.dir) if args.dir else outputs_dir()
    if not root.is_dir():
        print(f"error: status: {root} is not a folder", file=sys.stderr)
        return 2
    rows = run_status_rows(root)
    if not rows:
        print(f"no run folders under {root}")
        return 0
    print("\n".join(_table(["study", "run id", "status", "done", "failed", "pending", "total", "updated", "backend"],
                           [[r["study"], r["run_id"], r["status"], r.get("n_done", "-"), r.get("n_failed", "-"),
                             r.get("n_pending", "-"), r.get("n_total", "-"), r.get("updated") or "-",
                             r.get("backend") or "-"] for r in rows], right={3, 4, 5, 6})))
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    """``collablab merge``: join shard folders into ``--out``."""
    try:
        out = merge_shards(args.shards, args.out)
    except (ValueError, OSError, RunLockedError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    n = sum(1 for _ in read_records(out / EPISODES))
    print(f"merged {len(args.shards)} shards, {n} episodes", file=sys.stderr)
    print(out)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """``collablab compare RUN_DIR``: the run beside its paper's published tables, as its notebook's
    cell tagged ``published`` shows it (the study's ``beside_paper``, found through the study module
    of the run's episode function, read from the manifest). Exit 2 when RUN_DIR is not a run folder
    with finished episodes of a study that has one."""
    import importlib

    from collablab.runs.load import load_run
    from collablab.runs.manifest import read_manifest

    run_dir = Path(args.run_dir)
    manifest = read_manifest(run_dir) if run_dir.is_dir() else None
    if manifest is None:
        print(f"error: RUN_DIR: {run_dir} is not a run folder (no manifest.json); allowed: a folder under "
              f"{outputs_dir()}/<notebook>/ (see `collablab status`)", file=sys.stderr)
        return 2
    module = str(manifest.get("fn", "")).split(":")[0]
    try:
        beside_paper = importlib.import_module(module).beside_paper
    except (ImportError, AttributeError):
        print(f"error: RUN_DIR: its study ({module or 'unknown'}) has no published tables to compare with; "
              f"allowed: runs of {', '.join(sorted(studies()))}", file=sys.stderr)
        return 2
    episodes, steps = load_run(run_dir)
    if episodes.empty:
        print(f"error: RUN_DIR: {run_dir} has no finished episode yet", file=sys.stderr)
        return 2
    params = dict(manifest.get("params") or {})
    if args.paper_model:
        params["paper_models"] = {**(params.get("paper_models") or {}), **dict(args.paper_model)}
    print(beside_paper(str(manifest.get("study", "")), episodes, steps, params, None).text(), end="")
    return 0


def cmd_studies(args: argparse.Namespace) -> int:
    """``collablab studies``: the registered studies and their episode functions."""
    for name, fn in sorted(studies().items()):
        print(f"{name}\t{fn}")
    return 0


def parser() -> argparse.ArgumentParser:
    """The ``collablab`` argument parser."""
    ap = argparse.ArgumentParser(prog="collablab", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="{run,episodes,status,merge,compare,studies}")
    run = sub.add_parser("run", help="run one or all notebooks on a parameter set or over a grid")
    run.add_argument("prefixes", nargs="*", metavar="PREFIX", help="notebook name prefixes, e.g. 01 05 (default all)")
    run.add_argument("--only", nargs="+", default=None, metavar="PREFIX", help="the same as PREFIX ...")
    run.add_argument("--params", default="default", help="parameter set of params/NN_*.yaml: default, smoke, full ...")
    run.add_argument("--grid", default=None, help="notebook grid YAML (notebook:, base:, axes:; optional params:)")
    run.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"),
                     help="set a notebook parameter (VALUE is YAML), e.g. -p n_tasks 4")
    run.add_argument("--out", default=None, help="folder of the executed notebooks "
                                                 "(default outputs/notebooks/<params or grid name>)")
    run.add_argument("--force", action="store_true", help="execute notebooks that finished before too")
    run.add_argument("--dry-run", action="store_true", help="show what would run and how many episodes; run none")
    run.add_argument("--show-requests", action="store_true",
                     help="with --dry-run: print the first request body each model role would send (nothing is sent)")
    run.add_argument("--shard", default=None, metavar="K/N", help="run every N-th point, starting at the K-th")
    run.add_argument("--workers", type=int, default=None, help="the notebooks' workers parameter")
    run.add_argument("--engine", default=None, choices=("local", "ray"), help="the notebooks' engine parameter")
    run.add_argument("--ray-address", default=None, help="the notebooks' ray_address parameter")
    run.set_defaults(func=cmd_run)
    ep = sub.add_parser("episodes", help="run an episode grid (python -m collablab.runs)",
                        description="Run a grid of episodes of a study into <out-root>/<study>/<run id>/.")
    add_arguments(ep, out_root=None)
    ep.set_defaults(func=run_from_args)
    st = sub.add_parser("status", help="the run folders under DIR (default outputs/), read without locks")
    st.add_argument("dir", nargs="?", default=None, metavar="DIR")
    st.set_defaults(func=cmd_status)
    mg = sub.add_parser("merge", help="join the shard folders of `collablab episodes --shard K/N`")
    mg.add_argument("shards", nargs="+", metavar="SHARD_DIR")
    mg.add_argument("--out", required=True, help="the merged run folder (new)")
    mg.set_defaults(func=cmd_merge)
    cp = sub.add_parser("compare", help="a finished run beside its paper's published tables, with verdicts")
    cp.add_argument("run_dir", metavar="RUN_DIR", help="a run folder, e.g. outputs/01_collaboration/<run id>")
    cp.add_argument("--paper-model", nargs=2, action="append", metavar=("SERVED_ID", "PAPER_NAME"),
                    help="read a served model id as the paper's model name (adds to the run's paper_models)")
    cp.set_defaults(func=cmd_compare)
    sub.add_parser("studies", help="the registered studies").set_defaults(func=cmd_studies)
    return ap


def main(argv: list[str] | None = None) -> int:
    """The ``collablab`` console script; returns the exit status."""
    args = parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
