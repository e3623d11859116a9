"""Plain-text progress of a grid run, readable wherever the run is seen afterwards.

:class:`Progress` counts the episodes of one :func:`.runner.run_grid` call and shows them:

- inside an IPython kernel: one plain-text display, updated in place (``display_id``) at most every
  :data:`KERNEL_EVERY_S` and at the end, so an executed notebook is saved with the final line
  (``288 of 288 episodes in 45 s (0 failed)``); no widget, nothing on stderr;
- elsewhere: a line on stderr at most every :data:`STDERR_EVERY_S` and at the end (on a terminal
  the line is rewritten in place, in a log file each is a line of its own);
- with ``COLLABLAB_PROGRESS=<file>`` (:data:`PROGRESS_ENV`) also ``{"done", "total", "failed",
  "elapsed_s", "eta_s"}`` as JSON in ``<file>`` (replaced atomically), at most every
  :data:`FILE_EVERY_S` and at the end: how ``collablab run`` follows a notebook's kernel
  (:func:`watch_progress`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

__all__ = ["FILE_EVERY_S", "KERNEL_EVERY_S", "PROGRESS_ENV", "STDERR_EVERY_S", "WATCH_EVERY_S", "Progress",
           "duration", "in_kernel", "read_progress", "watch_line", "watch_progress"]

PROGRESS_ENV = "COLLABLAB_PROGRESS"
KERNEL_EVERY_S = 2.0
STDERR_EVERY_S = 5.0
FILE_EVERY_S = 1.0
#: How often :func:`watch_progress` prints a line (when something changed).
WATCH_EVERY_S = 5.0


def in_kernel() -> bool:
    """Whether this code runs inside an IPython kernel (a notebook), not a terminal IPython or script."""
    if "IPython" not in sys.modules:
        return False
    shell = sys.modules["IPython"].get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def duration(seconds: float) -> str:
    """``45 s``, ``3 min 20 s``, ``2 h 05 min``."""
    s = max(0, int(round(seconds)))
    if s < 120:
        return f"{s} s"
    if s < 7200:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


class Progress:
    """Episodes done of ``total`` (``initial`` of them before this run), shown as the module says.

    ``show=False``: no display and no stderr line (the ``COLLABLAB_PROGRESS`` file is still
    written). ``stream`` (default stderr) and ``kernel`` (default: :func:`in_kernel`) choose where
    the lines go; ``clock`` is for tests."""

    def __init__(self, total: int, initial: int = 0, *, label: str = "", show: bool = True,
                 stream: TextIO | None = None, kernel: bool | None = None, path: str | os.PathLike[str] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.initial, self.done, self.failed = int(total), int(initial), int(initial), 0
        self.label = label
        self._clock = clock
        self._t0 = clock()
        self._stream = stream if stream is not None else sys.stderr
        self._kernel = (in_kernel() if kernel is None else kernel) and show
        self._lines = show and not self._kernel
        self._tty = self._lines and bool(getattr(self._stream, "isatty", lambda: False)())
        env = os.environ.get(PROGRESS_ENV) if path is None else os.fspath(path)
        self._path = Path(env) if env else None
        self._last = {"kernel": self._t0, "lines": self._t0, "file": -float("inf")}
        self._handle: Any = None
        self._closed = False
        if self._kernel:
            from IPython.display import display

            self._handle = display({"text/plain": self.line()}, raw=True, display_id=True)
        self._write_file()

    # -- what is shown ------------------------------------------------------------------------------
    @property
    def elapsed_s(self) -> float:
        return self._clock() - self._t0

    @property
    def eta_s(self) -> float | None:
        """Seconds left at this run's pace; None until two episodes and a twentieth of the work are
        done (the first episodes also pay for starting the workers: an estimate from them is far off)."""
        new = self.done - self.initial
        if self.done >= self.total:
            return 0.0
        enough = max(2, (self.total - self.initial) // 20)
        return self.elapsed_s / new * (self.total - self.done) if new >= enough else None

    def state(self) -> dict[str, Any]:
        """``{"done", "total", "failed", "elapsed_s", "eta_s"}`` (the ``COLLABLAB_PROGRESS`` file)."""
        eta = self.eta_s
        return {"done": self.done, "total": self.total, "failed": self.failed,
                "elapsed_s": round(self.elapsed_s, 1), "eta_s": None if eta is None else round(eta, 1)}

    def line(self, final: bool = False) -> str:
        """``120 of 288 episodes, 20 s, about 28 s left (1 failed)``; at the end
        ``288 of 288 episodes in 45 s (0 failed)`` (``, 40 resumed`` when some were done before)."""
        resumed = f", {self.initial} resumed" if self.initial else ""
        head = f"{self.label}: " if self.label and self._lines else ""
        if final:
            return f"{head}{self.done} of {self.total} episodes in {duration(self.elapsed_s)} ({self.failed} failed{resumed})"
        eta = self.eta_s
        left = "" if eta is None else f", about {duration(eta)} left"
        return (f"{head}{self.done} of {self.total} episodes, {duration(self.elapsed_s)}{left} "
                f"({self.failed} failed{resumed})")

    # -- counting -----------------------------------------------------------------------------------
    def update(self, n: int = 1, failed: int = 0) -> None:
        """``n`` more episodes finished, ``failed`` of them failed."""
        self.done += n
        self.failed += failed
        now = self._clock()
        if self._kernel and now - self._last["kernel"] >= KERNEL_EVERY_S:
            self._last["kernel"] = now
            self._handle.update({"text/plain": self.line()}, raw=True)
        if self._lines and now - self._last["lines"] >= STDERR_EVERY_S:
            self._last["lines"] = now
            self._emit(self.line(), end="")
        if self._path is not None and now - self._last["file"] >= FILE_EVERY_S:
            self._write_file()

    def close(self) -> None:
        """Show the final line (once)."""
        if self._closed:
            return
        self._closed = True
        if self._kernel:
            self._handle.update({"text/plain": self.line(final=True)}, raw=True)
        if self._lines:
            self._emit(self.line(final=True), end="\n")
        self._write_file()

    def _emit(self, text: str, end: str) -> None:
        if self._tty:  # rewrite the terminal's line in place
            self._stream.write("\r" + text + "\x1b[K" + end)
        else:
            self._stream.write(text + "\n")
        self._stream.flush()

    def _write_file(self) -> None:
        if self._path is None:
            return
        self._last["file"] = self._clock()
        tmp = self._path.with_name(f".{self._path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(self.state()), encoding="utf-8")
            os.replace(tmp, self._path)
        except OSError:  # a progress file that cannot be written never stops a run
            tmp.unlink(missing_ok=True)


# -- following a run from outside -----------------------------------------------------------------
def read_progress(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The state a :class:`Progress` last wrote to ``path``; None before it wrote one (or unreadable)."""
    try:
        state = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) and {"done", "total"} <= set(state) else None


def watch_line(label: str, state: Mapping[str, Any]) -> str:
    """``  01_collaboration: 120/288 episodes, 20 s, about 28 s left`` (``, 2 failed`` when some did)."""
    eta = state.get("eta_s")
    left = "" if eta is None or state["done"] >= state["total"] else f", about {duration(eta)} left"
    failed = f", {state['failed']} failed" if state.get("failed") else ""
    return f"  {label}: {state['done']}/{state['total']} episodes, {duration(state.get('elapsed_s') or 0)}{left}{failed}"


def _aged(path: str | os.PathLike[str], state: dict[str, Any]) -> dict[str, Any]:
    """``state`` as of now: a running grid's time advanced by the age of its file."""
    if state["done"] >= state["total"]:
        return state
    try:
        age = max(0.0, time.time() - os.stat(path).st_mtime)
    except OSError:
        return state
    eta = state.get("eta_s")
    return {**state, "elapsed_s": (state.get("elapsed_s") or 0) + age,
            "eta_s": None if eta is None else max(0.0, eta - age)}


@contextlib.contextmanager
def watch_progress(path: str | os.PathLike[str], label: str, stream: TextIO | None = None,
                   every_s: float = WATCH_EVERY_S) -> Iterator[None]:
    """While the body runs, print :func:`watch_line` of ``path`` to ``stream`` (default stdout)
    every ``every_s`` seconds when the episodes done, failed or planned changed."""
    out = stream if stream is not None else sys.stdout
    stop = threading.Event()

    def loop() -> None:
        shown: tuple[Any, ...] | None = None
        while not stop.wait(every_s):
            state = read_progress(path)
            if state is None:
                continue
            key = (state.get("done"), state.get("failed"), state.get("total"))
            if key != shown:
                shown = key
                print(watch_line(label, _aged(path, state)), file=out, flush=True)

    thread = threading.Thread(target=loop, name="collablab-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
