"""On-disk response cache in front of every LLM call.

One SQLite file (WAL journal, busy timeout) with one row per key, safe for
several threads and processes writing at once.

Modes
-----
``rw``      look up first; on a miss call the model and store the reply (default).
``replay``  look up only; a miss raises :class:`CacheMiss` naming the call id.
            For re-executing notebooks and for CI: no model is ever called.
``off``     no lookup, no store.

The key (:func:`cache_key`) is a SHA-256 over a canonical JSON of the endpoint
*alias*, the model, the served fingerprint (what identifies the weights the server
serves under that model id: :attr:`~collablab.llm.preflight.ServedModel.fingerprint`),
the messages (image bytes replaced by their SHA-256), the request parameters
(``extra_body`` included), the logical call id, the sample index and the logical
attempt number. Images enter the key as the SHA-256 of their bytes (PNG, encoded
deterministically by :mod:`~collablab.llm.messages`), and the stored ``request`` holds that
hash, not the base64: a replay is exact and the file stays small. The ``base_url`` and the API key are never part of it (nor of
anything stored): pointing an alias at another server of the same weights keeps
the cache valid, while a swapped checkpoint under the same model id misses.

Every reply the model gave is stored, an empty one included (it is the model's
answer and replays as such); failed calls store nothing. The ``served`` table keeps
the fingerprints seen per endpoint alias and model (:meth:`ResponseCache.record_served`),
so a replay uses the one recorded last (:meth:`ResponseCache.served_fingerprint`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .types import CACHE_MODES

__all__ = [
    "CacheMiss",
    "CachedReply",
    "ResponseCache",
    "cache_key",
    "canonical_request",
    "default_cache_path",
    "default_cache_mode",
]

KEY_VERSION = 2
_REPO = Path(__file__).resolve().parents[3]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key               TEXT PRIMARY KEY,
    created_at        REAL NOT NULL,
    endpoint          TEXT NOT NULL,
    model             TEXT NOT NULL,
    call_id           TEXT NOT NULL,
    sample_index      INTEGER NOT NULL,
    attempt           INTEGER NOT NULL,
    text              TEXT NOT NULL,
    finish_reason     TEXT,
    response_model    TEXT,
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    total_tokens      INTEGER,
    request           TEXT NOT NULL,
    reasoning         TEXT,
    image_tokens      INTEGER
)
"""

_SERVED_SCHEMA = """
CREATE TABLE IF NOT EXISTS served (
    endpoint    TEXT NOT NULL,
    model       TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    info_json   TEXT NOT NULL,
    seen_at     REAL NOT NULL,
    PRIMARY KEY (endpoint, model, fingerprint)
)
"""


class CacheMiss(LookupError):
    """Raised in ``replay`` mode when a request is not in the cache."""

    def __init__(self, call_id: str, key: str, *, sample_index: int = 0, attempt: int = 0,
                 endpoint: str = "", path: str | os.PathLike[str] | None = None):
        self.call_id = call_id
        self.key = key
        self.sample_index = sample_index
        self.attempt = attempt
        self.endpoint = endpoint
        self.path = str(path) if path is not None else None
        super().__init__(
            f"cache miss in replay mode: call_id={call_id!r} sample_index={sample_index} "
            f"attempt={attempt} endpoint={endpoint!r} key={key[:16]}… not in {self.path}. "
            "Re-run with cache mode 'rw' (and a live endpoint) to record it."
        )


def default_cache_path() -> Path:
    """``$COLLABLAB_LLM_CACHE``, else ``llm_cache.sqlite`` in the outputs root:
    ``$COLLABLAB_OUTPUTS``, else the checkout's ``outputs/``, else ``./outputs``."""
    env = os.environ.get("COLLABLAB_LLM_CACHE")
    if env:
        return Path(env)
    out = os.environ.get("COLLABLAB_OUTPUTS")
    if out:
        return Path(out) / "llm_cache.sqlite"
    if (_REPO / "pyproject.toml").is_file() and (_REPO / "lib" / "collablab").is_dir():
        return _REPO / "outputs" / "llm_cache.sqlite"
    return Path.cwd() / "outputs" / "llm_cache.sqlite"


def default_cache_mode() -> str:
    """``$COLLABLAB_LLM_CACHE_MODE`` (``rw``/``replay``/``off``), default ``rw``."""
    mode = os.environ.get("COLLABLAB_LLM_CACHE_MODE", "rw").strip().lower() or "rw"
    if mode not in CACHE_MODES:
        raise ValueError(f"COLLABLAB_LLM_CACHE_MODE={mode!r}: expected one of {CACHE_MODES}")
    return mode


# --------------------------------------------------------------------------- key


def _hash_data_url(url: str) -> str:
    """``data:<mime>;base64,<b64>`` -> ``data:<mime>;sha256,<hex of decoded bytes>``."""
    head, sep, payload = url.partition(",")
    if not sep:
        return "sha256:" + hashlib.sha256(url.encode()).hexdigest()
    mime = head[5:].split(";")[0]
    if head.endswith(";base64"):
        try:
            raw = base64.b64decode(payload, validate=False)
        except (binascii.Error, ValueError):
            raw = payload.encode()
    else:
        raw = payload.encode()
    return f"data:{mime};sha256,{hashlib.sha256(raw).hexdigest()}"


def _normalize(obj: Any) -> Any:
    """Canonical, JSON-able form: image data URLs hashed, tuples -> lists, None dropped in dicts."""
    if isinstance(obj, Mapping):
        out = {}
        for k, v in obj.items():
            if v is None:
                continue
            if k == "url" and isinstance(v, str) and v.startswith("data:"):
                out[str(k)] = _hash_data_url(v)
            else:
                out[str(k)] = _normalize(v)
        return out
    if isinstance(obj, (list, tuple)):
        return [_normalize(v) for v in obj]
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return "bytes:sha256," + hashlib.sha256(bytes(obj)).hexdigest()
    if isinstance(obj, float) and obj.is_integer() and abs(obj) < 2**53:
        # 1 and 1.0 are the same sampling parameter
        return int(obj)
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    if hasattr(obj, "model_dump"):  # pydantic objects (e.g. openai types)
        return _normalize(obj.model_dump(exclude_none=True))
    raise TypeError(f"cannot put {type(obj).__name__} into a cache key")


def canonical_request(*, endpoint: str, model: str, messages: Sequence[Mapping[str, Any]],
                      params: Mapping[str, Any] | None, call_id: str, sample_index: int = 0,
                      attempt: int = 0, served: str | None = None) -> str:
    """The canonical JSON that :func:`cache_key` hashes (also stored, for inspection).
    ``served``: the served fingerprint (None when unknown, e.g. cache mode ``off``)."""
    doc = {
        "v": KEY_VERSION,
        "endpoint": str(endpoint),
        "model": str(model),
        "served": served,
        "messages": _normalize(list(messages)),
        "params": _normalize(dict(params or {})),
        "call_id": str(call_id),
        "sample_index": int(sample_index),
        "attempt": int(attempt),
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def cache_key(**kwargs: Any) -> str:
    """SHA-256 hex of :func:`canonical_request` (same keyword arguments)."""
    return hashlib.sha256(canonical_request(**kwargs).encode("utf-8")).hexdigest()


# ------------------------------------------------------------------------ store


@dataclass(frozen=True)
class CachedReply:
    key: str
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    total_tokens: int | None
    finish_reason: str | None
    response_model: str | None
    model: str
    endpoint: str
    call_id: str
    sample_index: int
    attempt: int
    created_at: float
    reasoning: str | None = None
    image_tokens: int | None = None


#: Columns later versions added to ``responses`` (an older file gets them on first write).
_ADDED_COLUMNS = (("reasoning", "TEXT"), ("image_tokens", "INTEGER"))


class ResponseCache:
    """SQLite-backed response cache; one instance may be shared by threads and loops.

    Each (process, thread) gets its own connection, so the object survives ``fork``.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, mode: str | None = None,
                 *, busy_timeout_s: float = 60.0):
        mode = default_cache_mode() if mode is None else mode
        if mode not in CACHE_MODES:
            raise ValueError(f"cache mode {mode!r}: expected one of {CACHE_MODES}")
        self.mode = mode
        self.path = Path(path) if path is not None else default_cache_path()
        self.busy_timeout_s = float(busy_timeout_s)
        self._local = threading.local()
        self._init_lock = threading.Lock()
        self._initialized = False

    def __repr__(self) -> str:
        return f"ResponseCache(path={str(self.path)!r}, mode={self.mode!r})"

    # -- connections
    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "pid", None) == os.getpid():
            return conn
        if self.mode == "replay" and not self.path.exists():
            # Don't create an empty cache file in replay mode; lookups will just miss.
            raise FileNotFoundError(str(self.path))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(self.path), timeout=self.busy_timeout_s,
                               isolation_level=None, check_same_thread=True)
        conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_s * 1000)}")
        self._ensure_schema(conn)
        self._local.conn = conn
        self._local.pid = os.getpid()
        return conn

    def _ensure_schema(self, conn: sqlite3.Connection) -> None:
        if self.mode == "replay":
            return
        # journal_mode=WAL is persistent in the file; setting it again is cheap.
        for attempt in range(50):
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute(_SCHEMA)
                conn.execute(_SERVED_SCHEMA)
                have = _columns(conn, "responses")
                for name, kind in _ADDED_COLUMNS:  # a file of an older version
                    if name not in have:
                        conn.execute(f"ALTER TABLE responses ADD COLUMN {name} {kind}")
                return
            except sqlite3.OperationalError as exc:  # "database is locked" during creation
                if "duplicate column" in str(exc):  # another process added it first
                    return
                if "locked" not in str(exc) or attempt == 49:
                    raise
                time.sleep(0.05 * (attempt + 1))

    def _has(self, conn: sqlite3.Connection, column: str) -> bool:
        """Whether the file's responses table has ``column`` (older files lack the added ones)."""
        known = getattr(self._local, "columns", None)
        if known is None or known[0] is not conn:
            known = (conn, _columns(conn, "responses"))
            self._local.columns = known
        return column in known[1]

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "pid", None) == os.getpid():
            conn.close()
        self._local.conn = None

    # -- operations
    def get(self, key: str) -> CachedReply | None:
        if self.mode == "off":
            return None
        row = self._lookup(lambda conn: (
            "SELECT key, text, prompt_tokens, completion_tokens, total_tokens, finish_reason, "
            "response_model, model, endpoint, call_id, sample_index, attempt, created_at, "
            f"{'reasoning' if self._has(conn, 'reasoning') else 'NULL'}, "
            f"{'image_tokens' if self._has(conn, 'image_tokens') else 'NULL'} FROM responses WHERE key = ?"), (key,))
        return CachedReply(*row) if row else None

    def _lookup(self, sql: Callable[[sqlite3.Connection], str], args: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """The first row of the query ``sql(conn)``; None when there is no file (replay) or no table yet."""
        try:
            conn = self._connect()
            return conn.execute(sql(conn), args).fetchone()
        except FileNotFoundError:
            return None
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return None
            raise

    def put(self, key: str, *, text: str, endpoint: str, model: str, call_id: str,
            sample_index: int, attempt: int, request: str, prompt_tokens: int | None = None,
            completion_tokens: int | None = None, total_tokens: int | None = None,
            finish_reason: str | None = None, response_model: str | None = None,
            reasoning: str | None = None, image_tokens: int | None = None) -> bool:
        """Store one reply (an empty ``text`` too). Non-``rw`` modes store nothing.

        Returns whether a row was written (an existing row for the key is kept).
        """
        if self.mode != "rw" or text is None:
            return False
        conn = self._connect()
        cur = conn.execute(
            "INSERT INTO responses (key, created_at, endpoint, model, call_id, sample_index, "
            "attempt, text, finish_reason, response_model, prompt_tokens, completion_tokens, "
            "total_tokens, request, reasoning, image_tokens) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
            "ON CONFLICT(key) DO NOTHING",
            (key, time.time(), endpoint, model, str(call_id), int(sample_index), int(attempt),
             str(text), finish_reason, response_model, prompt_tokens, completion_tokens,
             total_tokens, request, reasoning, image_tokens))
        return cur.rowcount == 1

    # -- served fingerprints
    def record_served(self, endpoint: str, model: str, fingerprint: str,
                      info: Mapping[str, Any] | None = None) -> bool:
        """Note that ``endpoint`` served ``model`` as ``fingerprint`` now (``rw`` mode only)."""
        if self.mode != "rw":
            return False
        conn = self._connect()
        conn.execute(
            "INSERT INTO served (endpoint, model, fingerprint, info_json, seen_at) VALUES (?,?,?,?,?) "
            "ON CONFLICT(endpoint, model, fingerprint) DO UPDATE SET info_json = excluded.info_json, "
            "seen_at = excluded.seen_at",
            (endpoint, model, fingerprint, json.dumps(dict(info or {}), sort_keys=True, default=str),
             time.time()))
        return True

    def served_fingerprint(self, endpoint: str, model: str) -> str | None:
        """The fingerprint recorded last for ``endpoint`` and ``model`` (None: none recorded)."""
        if self.mode == "off":
            return None
        row = self._lookup(lambda conn: "SELECT fingerprint FROM served WHERE endpoint = ? AND model = ? "
                           "ORDER BY seen_at DESC, rowid DESC LIMIT 1", (endpoint, model))
        return row[0] if row else None

    def served_rows(self) -> list[dict[str, Any]]:
        """The ``served`` table as dicts (``info`` parsed), oldest first."""
        try:
            cur = self._connect().execute(
                "SELECT endpoint, model, fingerprint, info_json, seen_at FROM served ORDER BY seen_at")
        except (FileNotFoundError, sqlite3.OperationalError):
            return []
        return [{"endpoint": e, "model": m, "fingerprint": f, "info": json.loads(i), "seen_at": t}
                for e, m, f, i, t in cur.fetchall()]

    def __len__(self) -> int:
        try:
            return int(self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()[0])
        except (FileNotFoundError, sqlite3.OperationalError):
            return 0

    def rows(self) -> list[dict[str, Any]]:
        """All rows as dicts (for inspection / DataFrames)."""
        try:
            cur = self._connect().execute("SELECT * FROM responses ORDER BY created_at")
        except (FileNotFoundError, sqlite3.OperationalError):
            return []
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})").fetchall()}
