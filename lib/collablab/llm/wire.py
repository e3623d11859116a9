"""What a logical request sends on the wire, per provider and model family.

A call names its settings once, the same for every server (``temperature``, ``max_tokens``,
``stop``, ``thinking``); this module turns them into the request body the endpoint accepts:

* **thinking** (:data:`THINKING`): ``on`` / ``off`` ask for the model's thinking mode or not,
  ``auto`` sends nothing (the model's and server's default). vLLM, llama.cpp's server and other
  OpenAI-compatible servers get ``chat_template_kwargs`` (``enable_thinking``, read by Qwen3's
  template, and ``thinking``, read by DeepSeek-V3.1's and Granite's); OpenAI's reasoning models
  get ``reasoning_effort`` (``minimal`` for off on GPT-5, ``low`` on the o-series, which has no
  minimal; on sends nothing, they always reason); other OpenAI models get nothing.
* **parameter rules** (:data:`PARAM_RULES`): OpenAI's reasoning models (o1, o3, o4-mini, the GPT-5
  family except ``gpt-5-chat``) reject ``max_tokens`` and any ``temperature`` but the default; under
  ``reasoning`` rules ``max_tokens`` travels as ``max_completion_tokens`` and the sampling keys
  (temperature, top_p, penalties, logit_bias, stop, seed) are not sent. ``auto`` applies them when the
  model id names such a model on any provider but vLLM and llama.cpp (which serve open weights and
  take every key); ``standard`` and ``reasoning`` force one or the other.
* **stop**: a stop sequence is applied to the answer by the client after the thoughts are removed
  (:func:`~collablab.llm.reply.cut_at_stop`), and sent to the server only where the model cannot
  be thinking (``thinking: off``, or an OpenAI model, whose thoughts never appear in the text):
  a server applies stop sequences to the whole generation, thoughts included, and would end the
  reply inside them.

A setting left unset (None) is not sent at all: the server's default applies.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from .preflight import OPENAI_BASE_URL, ServedModel, display_url
from .types import PARAM_RULES, PROVIDERS, THINKING

__all__ = ["PARAM_RULES", "PROVIDERS", "THINKING", "is_reasoning_model", "resolve_provider", "wire_body", "wire_params"]

_REASONING_ID = re.compile(r"^(?:openai/)?(?:o[1-9](?:-|$)|gpt-5(?!-chat))", re.IGNORECASE)
_SAMPLING = ("temperature", "top_p", "presence_penalty", "frequency_penalty", "logit_bias", "stop", "seed")


def is_reasoning_model(model: str) -> bool:
    """Whether ``model`` names one of OpenAI's reasoning models (o1, o3, o4-mini, gpt-5, gpt-5-mini, ...)."""
    return bool(_REASONING_ID.match(model))


def resolve_provider(provider: str, base_url: str | None, served: ServedModel | None = None) -> str:
    """``provider`` unless it is ``auto``; then ``openai`` for the OpenAI API, else what the
    server's model list says (``owned_by`` ``vllm`` or ``llamacpp``), else ``compat``."""
    if provider != "auto":
        return provider
    if base_url is None or display_url(base_url) == OPENAI_BASE_URL:
        return "openai"
    owner = (served.owned_by or "").lower() if served is not None else ""
    if owner == "vllm":
        return "vllm"
    if owner in ("llamacpp", "llama.cpp", "llama-cpp"):
        return "llamacpp"
    return "compat"


def _merge_extra(params: dict[str, Any], extra: Mapping[str, Any]) -> None:
    body = dict(params.get("extra_body") or {})
    for k, v in extra.items():
        if isinstance(v, Mapping) and isinstance(body.get(k), Mapping):
            body[k] = {**v, **body[k]}  # what the caller set by hand wins
        else:
            body.setdefault(k, v)
    params["extra_body"] = body


def wire_params(params: Mapping[str, Any], *, provider: str, model: str, rules: str = "auto") -> dict[str, Any]:
    """The request parameters ``params`` (logical: ``thinking`` included) become on ``provider``
    (resolved, not ``auto``) for ``model`` under ``rules`` (module docstring)."""
    out = {k: v for k, v in params.items() if v is not None and k != "thinking"}
    thinking = params.get("thinking") or "auto"
    reasoning = rules == "reasoning" or (rules == "auto" and provider not in ("vllm", "llamacpp")
                                         and is_reasoning_model(model))
    if thinking != "auto":
        if provider == "openai" or reasoning:
            if reasoning and thinking == "off":
                out.setdefault("reasoning_effort", "low" if re.match(r"^(?:openai/)?o\d", model) else "minimal")
        else:
            on = thinking == "on"
            _merge_extra(out, {"chat_template_kwargs": {"enable_thinking": on, "thinking": on}})
    may_think = not (thinking == "off" or (provider == "openai" and not reasoning))
    if may_think or reasoning:
        out.pop("stop", None)
    if reasoning:
        for k in _SAMPLING:
            out.pop(k, None)
        if "max_tokens" in out:
            out["max_completion_tokens"] = out.pop("max_tokens")
    return out


def wire_body(params: Mapping[str, Any], *, provider: str, model: str, rules: str = "auto") -> dict[str, Any]:
    """The JSON keys (besides ``model`` and ``messages``) a request with ``params`` carries: the
    :func:`wire_params` with ``extra_body`` merged in, as the OpenAI client sends them."""
    wire = wire_params(params, provider=provider, model=model, rules=rules)
    body = {k: v for k, v in wire.items() if k != "extra_body"}
    body.update(wire.get("extra_body") or {})
    return body
