"""LLM access for collablab: one OpenAI-compatible client, a response cache, structured output.

Quick use (OpenAI; the key is read from ``$OPENAI_API_KEY`` at call time)::

    from collablab.llm import EndpointSpec, LLMClient
    client = LLMClient(EndpointSpec(alias="gpt-4o-mini", model="gpt-4o-mini"))
    r = client.chat_sync("Say hi", call_id="demo/hello", max_tokens=20)
    r.text, r.usage, r.cache, r.error

A ``vllm serve`` endpoint: ``EndpointSpec(alias="qwen-vllm", model="Qwen/...",
base_url="http://host:8000/v1", api_key_env=None)``. The offline local model:
:func:`collablab.llm.local_server.local_server` (see ``scripts/install_local_model.sh``).

A call returns the model's reply (an empty one included: ``r.text == ""``) or raises
:class:`EndpointError` when it got none (server down past ``outage_wait_s``, retries used
up, key rejected or missing, model not served): never a silent invalid action. Check an
endpoint before a run with :func:`check_endpoint` (raises :class:`EndpointCheckError`
naming the parameter). Per-endpoint counters: :mod:`collablab.llm.stats`; secrets kept out
of texts: :func:`redact`.

Cache: ``$COLLABLAB_LLM_CACHE`` (default ``llm_cache.sqlite`` under ``$COLLABLAB_OUTPUTS`` or
the checkout's ``outputs/``) and ``$COLLABLAB_LLM_CACHE_MODE`` (``rw`` default, ``replay`` for
CI, ``off``); the key includes the fingerprint of the served weights.
"""

from .cache import (
                    CachedReply,
                    CacheMiss,
                    ResponseCache,
                    cache_key,
                    canonical_request,
                    default_cache_mode,
                    default_cache_path,
)
from . import stats
from .client import LLMClient, forget_served, learned_served, merge_params, observe_requests, run_sync
from .limiter import EndpointLimiter, endpoint_limiter
from .preflight import EndpointCheckError, ServedModel, check_endpoint, check_endpoints
from .redact import redact
from .messages import assistant_message, image_data_url, image_part, system_message, text_part, user_message
from .structured import (
                    ChatClient,
                    StructuredResult,
                    ask,
                    chat_json,
                    extract_json,
                    find_json,
                    response_format_for,
                    validate,
)
from .types import (
                    CACHE_MODES,
                    PARAM_RULES,
                    PROVIDERS,
                    THINKING,
                    ENDPOINT_ERROR_KINDS,
                    STRUCTURED_MODES,
                    EndpointError,
                    EndpointSpec,
                    LLMCallError,
                    LLMResult,
                    Usage,
                    check_key_env_name,
                    check_structured_mode,
)

__all__ = [
    "CACHE_MODES", "PARAM_RULES", "PROVIDERS", "THINKING", "CacheMiss", "CachedReply", "ResponseCache", "cache_key",
    "canonical_request", "default_cache_mode", "default_cache_path",
    "ENDPOINT_ERROR_KINDS", "EndpointCheckError", "EndpointError", "EndpointLimiter", "EndpointSpec",
    "LLMCallError", "LLMClient", "LLMResult", "ServedModel", "Usage", "check_endpoint", "check_endpoints",
    "endpoint_limiter", "forget_served", "learned_served", "merge_params", "observe_requests", "redact", "run_sync", "stats",
    "assistant_message", "image_data_url", "image_part", "system_message", "text_part",
    "user_message",
    "STRUCTURED_MODES", "ChatClient", "StructuredResult", "ask", "chat_json", "extract_json", "find_json",
    "response_format_for", "validate", "check_key_env_name", "check_structured_mode",
]
