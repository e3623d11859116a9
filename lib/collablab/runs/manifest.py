"""``manifest.json``: what was run, with which code and packages, and how far it got."""

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
from .store import MANIFEST, write_atomic

SCHEMA = 1
PACKAGES = ("numpy", "pandas", "pyarrow", "scipy", "statsmodels", "openai", "virtualhome",
            "tqdm", "pyyaml")
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
