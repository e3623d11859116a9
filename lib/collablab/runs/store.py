"""The files of one run folder, written by one process only.

``steps.jsonl`` gets an episode's steps first, then ``episodes.jsonl`` gets its episode
line: the episode line is the commit marker. Each append is flushed and fsync'ed. After a
crash, ``repair`` truncates a torn last line and steps of uncommitted episodes (which can
only sit at the end of ``steps.jsonl``), so appending can simply go on.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["EPISODES", "FAILURES", "INDEX", "KEY", "LOCK", "MANIFEST", "STEPS", "TIMINGS", "Appender", "RunLock",
           "RunLockedError", "fsync_dir", "iter_lines", "lock_held", "read_records", "repair_jsonl", "write_atomic"]

EPISODES = "episodes.jsonl"
STEPS = "steps.jsonl"
FAILURES = "failures.jsonl"
TIMINGS = "timings.jsonl"
MANIFEST = "manifest.json"
LOCK = ".lock"

KEY = "episode_key"
INDEX = "grid_index"


class RunLockedError(RuntimeError):
    """Another live process is writing this run folder."""


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temp file + ``os.replace``: readers see old or new, never half."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def iter_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """``(end_offset, line)`` for each newline-terminated line; a torn last line is not yielded."""
    if not path.exists():
        return
    with open(path, "rb") as f:
        pos = 0
        for line in f:
            if not line.endswith(b"\n"):
                return
            pos += len(line)
            yield pos, line


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """Complete JSON lines of ``path`` (read-only: a torn or unparsable last line is skipped)."""
    lines = iter_lines(path)
    prev: bytes | None = None
    for _, line in lines:
        if prev is not None:
            yield json.loads(prev)
        prev = line
    if prev is not None:
        try:
            yield json.loads(prev)
        except json.JSONDecodeError:
            return


def _truncate(path: Path, size: int) -> int:
    """Cut ``path`` to ``size`` bytes; return how many bytes were removed."""
    old = path.stat().st_size
    if old > size:
        with open(path, "r+b") as f:
            f.truncate(size)
            f.flush()
            os.fsync(f.fileno())
    return old - size


def repair_jsonl(path: Path, keep: set[str] | None = None) -> tuple[int, int]:
    """Truncate ``path`` after its last good line; return ``(good_lines, bytes_removed)``.

    A line is good when it parses and, if ``keep`` is given, its ``episode_key`` is in
    ``keep``. Only a tail may be bad: a bad line followed by a good one means the file was
    edited or corrupted, and is an error rather than something to silently drop.
    """
    if not path.exists():
        return 0, 0
    good_end = 0
    n_good = 0
    bad_at: int | None = None
    lineno = 0
    for end, line in iter_lines(path):
        lineno += 1
        try:
            rec = json.loads(line)
            ok = isinstance(rec, dict) and (keep is None or rec.get(KEY) in keep)
        except json.JSONDecodeError:
            ok = False
        if ok:
            if bad_at is not None:
                raise ValueError(f"{path}: line {bad_at} is unreadable or belongs to no finished "
                                 f"episode, but line {lineno} after it is fine; the file was "
                                 "edited or corrupted, refusing to truncate it")
            good_end, n_good = end, n_good + 1
        elif bad_at is None:
            bad_at = lineno
    return n_good, _truncate(path, good_end)


class Appender:
    """Append-only JSONL writers for one run folder; ``commit_episode`` is durable on return."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._files: dict[str, IO[bytes]] = {
            name: open(run_dir / name, "ab") for name in (EPISODES, STEPS, FAILURES, TIMINGS)}
        fsync_dir(run_dir)

    def _append(self, name: str, data: bytes, sync: bool) -> None:
        f = self._files[name]
        f.write(data)
        f.flush()
        if sync:
            os.fsync(f.fileno())

    def commit_episode(self, episode_line: bytes, steps_blob: bytes) -> None:
        if steps_blob:
            self._append(STEPS, steps_blob, sync=True)
        self._append(EPISODES, episode_line, sync=True)

    def failure(self, record: dict[str, Any]) -> None:
        self._append(FAILURES, (json.dumps(record, default=str) + "\n").encode(), sync=True)

    def timing(self, record: dict[str, Any]) -> None:
        self._append(TIMINGS, (json.dumps(record) + "\n").encode(), sync=False)

    def close(self) -> None:
        for f in self._files.values():
            try:
                f.flush()
                os.fsync(f.fileno())
            except (OSError, ValueError):
                pass
            f.close()
        self._files.clear()


class RunLock:
    """An exclusive ``flock`` on ``<run_dir>/.lock``; the OS drops it when the process dies."""

    PATIENCE_S = 0.5

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / LOCK
        self._fd: int | None = None

    def __enter__(self) -> RunLock:
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            import fcntl
        except ImportError:  # not POSIX: no lock, single-writer is the user's job
            return self
        deadline = time.monotonic() + self.PATIENCE_S  # a status probe holds it for microseconds
        while True:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() < deadline:
                    time.sleep(0.02)
                    continue
            holder = os.pread(self._fd, 64, 0).decode(errors="replace").strip() or "?"
            os.close(self._fd)
            self._fd = None
            raise RunLockedError(f"{self.path.parent} is being written by another process "
                                 f"(pid {holder}); wait for it or pick another run_id") from None
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, str(os.getpid()).encode(), 0)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def lock_held(run_dir: Path) -> bool:
    """Whether a live process holds ``run_dir``'s lock (probed with a non-blocking shared
    ``flock``, released at once; never creates the lock file)."""
    try:
        fd = os.open(Path(run_dir) / LOCK, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        import fcntl
    except ImportError:  # not POSIX: no locks
        os.close(fd)
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops our probe lock
    return False
