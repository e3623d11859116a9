"""A short hash of collablab's own source files, so results of changed code never mix."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

__all__ = ["code_fingerprint"]

_PKG = Path(__file__).resolve().parents[1]  # the collablab package


@functools.lru_cache(maxsize=1)
def code_fingerprint(length: int = 8) -> str:
    """Hex digest over every .py/.yaml/.txt/.json file of the installed package."""
    h = hashlib.sha256()
    for p in sorted(_PKG.rglob("*")):
        if p.suffix in (".py", ".yaml", ".txt", ".json") and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(_PKG)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()[:length]
