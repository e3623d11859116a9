"""Where outputs go: ``$COLLABLAB_OUTPUTS``, else ``outputs/`` of the checkout, else ./outputs."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["outputs_dir"]

_REPO = Path(__file__).resolve().parents[3]


def outputs_dir() -> Path:
    """The outputs root (created on first use)."""
    env = os.environ.get("COLLABLAB_OUTPUTS")
    if env:
        root = Path(env)
    elif (_REPO / "pyproject.toml").is_file() and (_REPO / "lib" / "collablab").is_dir():
        root = _REPO / "outputs"
    else:
        root = Path.cwd() / "outputs"
    root.mkdir(parents=True, exist_ok=True)
    return root
