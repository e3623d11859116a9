"""Read a run folder back: records in grid order, whatever order they finished in."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .manifest import read_manifest
from .store import EPISODES, FAILURES, INDEX, KEY, STEPS, read_records

__all__ = ["load_failures", "load_run"]

if TYPE_CHECKING:  # pandas is imported lazily: worker processes import this package too
    import pandas as pd


def _order(run_dir: Path) -> dict[str, int] | None:
    manifest = read_manifest(run_dir)
    if manifest is None:
        return None
    return {s["episode_key"]: s["grid_index"] for s in manifest.get("specs", [])}


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    if not rows:
        return pd.DataFrame(columns=[KEY, INDEX])
    return pd.DataFrame.from_records(rows)


def load_run(run_dir: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(episodes, steps)`` of the finished episodes, sorted by grid order.

    Read-only and crash-tolerant: a torn last line and steps of episodes that never
    committed are ignored. Within an episode, steps keep the order the episode function
    returned them in. Nested values (``progress``, ``credits`` ...) stay Python objects.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"run_dir: {run_dir} is not a run folder")
    order = _order(run_dir)
    episodes: list[dict[str, Any]] = []
    seen: set[str] = set()
    for rec in read_records(run_dir / EPISODES):
        if rec[KEY] not in seen:
            seen.add(rec[KEY])
            episodes.append(rec)

    def rank(rec: dict[str, Any]) -> int:
        return order.get(rec[KEY], rec[INDEX]) if order is not None else rec[INDEX]

    episodes.sort(key=rank)
    steps = [rec for rec in read_records(run_dir / STEPS) if rec[KEY] in seen]
    steps.sort(key=rank)  # stable: keeps each episode's step order
    return _frame(episodes), _frame(steps)


def load_failures(run_dir: str | Path) -> pd.DataFrame:
    """The latest failure of each episode that has not finished since (empty when none)."""
    run_dir = Path(run_dir)
    done = {rec[KEY] for rec in read_records(run_dir / EPISODES)}
    latest: dict[str, dict[str, Any]] = {}
    for rec in read_records(run_dir / FAILURES):
        if rec[KEY] not in done:
            latest[rec[KEY]] = rec
    import pandas as pd

    rows = sorted(latest.values(), key=lambda r: r[INDEX])
    return pd.DataFrame.from_records(rows) if rows else pd.DataFrame(columns=[KEY, INDEX, "error_type", "error"])
