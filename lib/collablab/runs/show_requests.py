"""``collablab run NN --dry-run --show-requests``: the first request body each role would send.

Nothing is sent to the configured endpoint. The grid's first model-backed unit of each kind
(protocol, method, team size, task: :data:`KIND_KEYS`; at most :data:`MAX_UNITS`) runs against a
loopback stand-in server that answers every request with the study's ``usable_reply`` (its
conformance reply; "ok" for a study without one), until :data:`MAX_REQUESTS` requests of it were seen;
every logical request is observed (:func:`collablab.llm.observe_requests`) and the first one of
each role (its call id without the segments that hold numbers: ``act``, ``MAPR/mapf/proposer``,
...) is shown as the body the configured endpoint would get: the spec's model, the messages (each
cut at :data:`SHOWN_CHARS` characters) and the parameters translated for the spec's provider and
parameter rules (:func:`collablab.llm.wire.wire_body`). Without a call the provider of
``provider: auto`` with a base URL cannot be detected: it is shown as ``compat``.
"""

from __future__ import annotations

import importlib
from typing import Any, Mapping, Sequence

__all__ = ["KIND_KEYS", "MAX_REQUESTS", "MAX_UNITS", "SHOWN_CHARS", "role_of", "sample_requests"]

#: Requests observed before a sample unit is stopped.
MAX_REQUESTS = 400
#: Units run at most, and the spec keys whose values make a unit of another kind.
MAX_UNITS = 8
KIND_KEYS = ("protocol", "method", "n_agents", "task", "structure", "team", "oana", "variation")
#: Characters of each message shown.
SHOWN_CHARS = 600


class _Enough(Exception):
    """Enough requests were observed."""


def role_of(call_id: str) -> str:
    """A call id without its segments that hold numbers (episode hashes, steps, rounds, agents)."""
    return "/".join(p for p in call_id.split("/") if p and not any(ch.isdigit() for ch in p)) or call_id


def _shown(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        c = m.get("content")
        if isinstance(c, list):  # content parts: images shown by kind only
            c = " ".join(str(p.get("text", "")) if p.get("type") == "text" else f"<{p.get('type')}>" for p in c)
        c = str(c or "")
        out.append({"role": m.get("role"), "content": c if len(c) <= SHOWN_CHARS
                    else c[:SHOWN_CHARS] + f" … ({len(c)} characters)"})
    return out


def sample_requests(grid: Sequence[Mapping[str, Any]], fn: str) -> dict[str, dict[str, Any]]:
    """The first request body of each role of the units of ``grid`` that call a model (module
    docstring); ``{}`` when no unit does."""
    from ..llm import observe_requests
    from ..llm.fake_server import FakeOpenAIServer, FakeReply
    from ..llm.wire import resolve_provider, wire_body

    module = importlib.import_module(fn.split(":")[0])
    run = getattr(module, fn.split(":")[1])
    endpoints = getattr(module, "endpoints", lambda s: [])
    kinds: dict[tuple, dict[str, Any]] = {}
    for s in grid:
        kind = tuple(repr(s.get(k)) for k in KIND_KEYS)
        if kind not in kinds and len(kinds) < MAX_UNITS and endpoints(dict(s)):
            kinds[kind] = dict(s)
    if not kinds:
        return {}
    spec = next(iter(kinds.values()))
    usable = getattr(module, "usable_reply", lambda body: "ok")
    real_url = (str(spec.get("base_url") or "").split(",")[0].strip() or None)
    provider = resolve_provider(str(spec.get("provider") or "auto").split(",")[0].strip() or "auto", real_url)
    rules = spec.get("llm_param_rules") or "auto"
    seen: dict[str, dict[str, Any]] = {}
    count = [0]

    def observe(call_id: str, endpoint: Any, params: dict, messages: list) -> None:
        count[0] += 1
        if count[0] > MAX_REQUESTS:
            raise _Enough()
        role = role_of(call_id)
        if role not in seen:
            seen[role] = {"model": endpoint.model, "messages": _shown(messages),
                          **wire_body(params, provider=provider, model=endpoint.model, rules=rules)}

    with FakeOpenAIServer(lambda body, _s: FakeReply(text=usable(body))) as srv, observe_requests(observe):
        for unit in kinds.values():
            count[0] = 0
            local = {**unit, "base_url": srv.base_url, "llm_cache_mode": "off", "api_key_env": None,
                     "llm_replicas": None, "llm_max_attempts": 1}
            if "judge_base_url" in unit:
                local["judge_base_url"] = None
            try:
                run(local)
            except Exception:  # noqa: BLE001 - _Enough, or the stand-in's replies did not suit a role
                pass
    return seen
