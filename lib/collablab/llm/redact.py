"""Keep secrets from the environment out of every text collablab records.

:func:`redact` replaces the value of each environment variable that holds a secret with
``***``. A variable holds a secret when its NAME

* ends with ``_API_KEY``, ``_TOKEN``, ``_SECRET`` or ``KEY`` (any case) and its value has at
  least 8 characters, or
* was registered with :func:`register` (every ``api_key_env`` of an
  :class:`~collablab.llm.types.EndpointSpec` built in this process registers itself) and its
  value has at least 4 characters.

Values are read from ``os.environ`` at each call (never stored), longest first, so a key that
contains another one is replaced whole.
"""

from __future__ import annotations

import os
import threading

__all__ = ["MIN_LEN", "MIN_LEN_REGISTERED", "SUFFIXES", "redact", "register", "registered", "secret_values"]

#: Name endings (upper-cased) that mark a secret.
SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "KEY")
#: Shortest value redacted for a variable matched by its name.
MIN_LEN = 8
#: Shortest value redacted for a registered variable.
MIN_LEN_REGISTERED = 4

_REGISTERED: set[str] = set()
_LOCK = threading.Lock()


def register(name: str | None) -> None:
    """Treat the environment variable ``name`` as a secret from now on (None: nothing)."""
    if name:
        with _LOCK:
            _REGISTERED.add(str(name))


def registered() -> frozenset[str]:
    """The names registered so far."""
    with _LOCK:
        return frozenset(_REGISTERED)


def secret_values() -> list[str]:
    """The current values of the secret variables, longest first (see the module docstring)."""
    names = registered()
    values = set()
    for name, value in os.environ.items():
        if not value:
            continue
        if name in names and len(value) >= MIN_LEN_REGISTERED:
            values.add(value)
        elif name.upper().endswith(SUFFIXES) and len(value) >= MIN_LEN:
            values.add(value)
    return sorted(values, key=lambda v: (-len(v), v))


def redact(text: str) -> str:
    """``text`` with every secret value of the environment replaced by ``***``."""
    if not text:
        return text
    for value in secret_values():
        if value in text:
            text = text.replace(value, "***")
    return text
