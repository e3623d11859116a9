"""``manifest.json``: what was run, with which code and packages, and how far it got;
:func:`run_status` reads it from outside, without taking the run's lock."""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import json
import platform
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .grid import canonical_json
from .store import EPISODES, MANIFEST, iter_lines, lock_held, write_atomic

__all__ = ["PACKAGES", "SCHEMA", "code_version", "environment", "mark_killed", "now_iso", "package_versions",
           "read_manifest", "run_status", "spec_fields", "write_manifest"]

SCHEMA = 1
PACKAGES = ("numpy", "pandas", "pyarrow", "scipy", "statsmodels", "openai", "virtualhome", "pyyaml")
_MAX_DISTINCT = 50


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def code_version() -> dict[str, Any]:
    """Git commit and dirty flag of the checkout collablab is imported from; "unknown" outside git."""
    import collablab

    here = Path(collablab.__file__).resolve().parent
    commit = _git(["rev-parse", "HEAD"], here)
    if not commit:
        return {"commit": "unknown", "dirty": "unknown", "collablab": collablab.__version__}
    status = _git(["status", "--porcelain", "--untracked-files=no"], here)
    return {"commit": commit, "dirty": "unknown" if status is None else bool(status),
            "collablab": collablab.__version__}


def package_versions(names: Sequence[str] = PACKAGES) -> dict[str, str | None]:
    """Installed versions (``None`` when a package is not installed)."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def environment() -> dict[str, Any]:
    return {"python": sys.version.split()[0], "implementation": platform.python_implementation(),
            "platform": platform.platform(), "machine": platform.machine(),
            "packages": package_versions()}


def spec_fields(specs: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """For each parameter in the union of spec keys: in how many specs, and its distinct values."""
    fields: dict[str, dict[str, Any]] = {}
    for spec in specs:
        for k, v in spec.items():
            f = fields.setdefault(k, {"n_specs": 0, "_values": {}})
            f["n_specs"] += 1
            if len(f["_values"]) <= _MAX_DISTINCT:
                f["_values"].setdefault(canonical_json(v), v)
    out: dict[str, dict[str, Any]] = {}
    for k in sorted(fields):
        vals = fields[k].pop("_values")
        entry = {"n_specs": fields[k]["n_specs"], "n_values": len(vals)}
        if len(vals) <= _MAX_DISTINCT:
            entry["values"] = [vals[t] for t in sorted(vals)]
        else:
            entry["n_values"] = f">{_MAX_DISTINCT}"
        out[k] = entry
    return out


def read_manifest(run_dir: Path) -> dict[str, Any] | None:
    path = Path(run_dir) / MANIFEST
    if not path.exists():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def write_manifest(run_dir: Path, manifest: dict[str, Any]) -> None:
    write_atomic(Path(run_dir) / MANIFEST,
                 json.dumps(manifest, indent=1, ensure_ascii=False, default=repr) + "\n")


def mark_killed(manifest: dict[str, Any]) -> int:
    """Mark sessions still ``running`` as ``killed`` (call it holding the run's lock: no
    live process runs them); returns how many there were."""
    n = 0
    for session in manifest.get("sessions", []):
        if session.get("status") == "running":
            session["status"] = "killed"
            n += 1
    if manifest.get("status") == "running" and n:
        manifest["status"] = "killed"
    return n


def run_status(run_dir: str | Path) -> dict[str, Any]:
    """Where a run folder stands, read without taking its lock: ``status`` is the manifest's,
    except ``"running"`` while a process holds the lock and ``"killed"`` when the manifest
    says running but nobody holds it. ``committed`` counts the episode lines on disk now
    (the manifest's ``counts`` are saved every few seconds)."""
    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    if manifest is None:
        raise FileNotFoundError(f"run_dir: {run_dir} has no {MANIFEST}; not a run folder")
    locked = lock_held(run_dir)
    status = manifest.get("status")
    if locked:
        status = "running"
    elif status == "running":
        status = "killed"
    sessions = manifest.get("sessions", [])
    last = dict(sessions[-1]) if sessions else {}
    if not locked and last.get("status") == "running":
        last["status"] = "killed"
    return {"run_dir": str(run_dir), "study": manifest.get("study"), "run_id": manifest.get("run_id"),
            "status": status, "locked": locked, "counts": manifest.get("counts", {}),
            "committed": sum(1 for _ in iter_lines(run_dir / EPISODES)),
            "created": manifest.get("created"), "updated": manifest.get("updated"),
            "n_sessions": len(sessions),
            "last_session": {k: last.get(k) for k in ("status", "started", "ended", "n_new", "n_failed",
                                                       "engine", "workers")}}
