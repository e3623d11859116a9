"""The LLM backend of MASTraceBench: every role's request sent to an OpenAI-compatible model.

:class:`LLMBackend` answers a :class:`~.roles.Request` by sending its ``prompt`` through
:class:`collablab.llm.LLMClient` (so the response cache and replay apply) under the request's
logical ``call_id`` and ``sample`` index, which makes replay independent of call order.
Inference settings follow the paper's appendix: temperature 1.0 for MAS calls (the default
here) and 0 for Negotiation's acceptance query (eq. 17), which episodes send as role
``"opponent"`` (``probe_temperature``). OptionGen's judge has its own client (tasks.option_gen).
``extra_params`` are sent with every call and are part of the cache key; ``thinking`` (on, off,
auto) asks for the model's thinking mode, translated per server by the LLM floor. ``namespace`` prefixes every cache key's call id, so repeated runs of one unit (run 1,
run 2, ...) sample afresh instead of replaying run 0; the records keep the logical ids.

``max_tokens`` caps every reply; ``response_format`` (default None: not sent) is passed to the
API as it is, e.g. ``{"type": "json_object"}`` for llama.cpp's server, which then constrains
every reply to one JSON object (what the tasks' parsers and the role formats read). It is part
of the cache key. (With the default None, an ``EndpointSpec.default_params`` entry applies.)

Only the final answer is returned: the LLM floor keeps the thoughts (inline ``<think>`` blocks or
``reasoning_content``) apart (:mod:`collablab.llm.reply`), so a draft in them is never scored. A
reply cut at ``max_tokens`` is returned as ``Reply("", truncated=True)``: its fragment reaches no
parser, the method records an invalid proposal, and the call record says ``truncated``.

Failures are kept apart by whose they are. A reply the model gave, however bad (an empty one
included), is returned as text, and the method records it as an invalid proposal. A call that
got no reply (server down past the client's outage wait, missing key, timeout after retries)
raises the floor's :class:`~collablab.llm.EndpointError` (:data:`BackendError` is that class),
also for a client that returns a result with ``error`` set; the run grid then records a failed
unit that a rerun retries, never a silently scored result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...llm import EndpointError, LLMClient
from .roles import Reply, Request

__all__ = ["BackendError", "LLMBackend"]

#: A call got no reply (server, network, key): the floor's EndpointError.
BackendError = EndpointError


@dataclass
class LLMBackend:
    """One default client, plus optional per-model clients picked by ``context["model"]``
    (``MethodConfig.models`` names a model per agent: heterogeneous teams, Table 4)."""

    client: LLMClient
    clients: Mapping[str, LLMClient] = field(default_factory=dict)
    temperature: float = 1.0
    max_tokens: int | None = 16384
    thinking: str | None = None  # on | off | auto for every call (None: the endpoint's)
    response_format: Mapping[str, Any] | None = None
    label: str = ""
    extra_params: Mapping[str, Any] | None = None
    namespace: str = ""
    probe_temperature: float = 0.0

    def __post_init__(self) -> None:
        if not self.label:
            self.label = f"llm:{self.client.endpoint.model}"

    def _client_for(self, request: Request) -> LLMClient:
        model = request.context.get("model")
        if model is None:
            return self.client
        if model not in self.clients:
            raise ValueError(f"model: {model!r} has no client; configured: {', '.join(self.clients) or 'none'}")
        return self.clients[model]

    def answer(self, request: Request) -> Reply:
        """Send the request's prompt; a call without a reply raises :class:`~collablab.llm.EndpointError`."""
        if not request.call_id:
            raise ValueError("call_id: a request to a model needs its logical call id (trajectory.make_call_id)")
        client = self._client_for(request)
        call_id = f"{self.namespace}/{request.call_id}" if self.namespace else request.call_id
        temperature = self.probe_temperature if request.role == "opponent" else self.temperature
        result: Any = client.chat_sync(request.prompt, call_id=call_id, sample_index=request.sample,
                                       temperature=temperature, max_tokens=self.max_tokens,
                                       response_format=self.response_format, extra_params=self.extra_params,
                                       thinking=self.thinking)
        if result.error is not None:
            raise EndpointError(result) from None
        usage = result.usage
        tokens = int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0)
        if result.truncated:
            return Reply("", *tokens, truncated=True)
        return Reply(result.text or "", *tokens)
