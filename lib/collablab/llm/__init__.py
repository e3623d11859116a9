"""LLM access for collablab: one OpenAI-compatible client, a response cache, structured output.

Quick use (OpenAI; the key is read from ``$OPENAI_API_KEY`` at call time)::

    from collablab.llm import EndpointSpec, LLMClient
    client = LLMClient(EndpointSpec(alias="gpt-4o-mini", model="gpt-4o-mini"))
    r = client.chat_sync("Say hi", call_id="demo/hello", max_tokens=20)
    r.text, r.usage, r.cache, r.error

A ``vllm serve`` endpoint: ``EndpointSpec(alias="qwen-vllm", model="Qwen/...",
base_url="http://host:8000/v1", api_key_env=None)``. The offline local model:
:func:`collablab.llm.local_server.local_server` (see ``scripts/install_local_model.sh``).

Cache: ``$COLLABLAB_LLM_CACHE`` (default ``outputs/llm_cache.sqlite``) and
``$COLLABLAB_LLM_CACHE_MODE`` (``rw`` default, ``replay`` for CI, ``off``).
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
from .client import LLMClient, run_sync
from .limiter import EndpointLimiter, endpoint_limiter
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
                    STRUCTURED_MODES,
                    EndpointSpec,
                    LLMCallError,
                    LLMResult,
                    Usage,
                    check_key_env_name,
                    check_structured_mode,
)

__all__ = [
    "CACHE_MODES", "CacheMiss", "CachedReply", "ResponseCache", "cache_key",
    "canonical_request", "default_cache_mode", "default_cache_path",
    "EndpointLimiter", "EndpointSpec", "LLMCallError", "LLMClient", "LLMResult", "Usage",
    "endpoint_limiter", "run_sync",
    "assistant_message", "image_data_url", "image_part", "system_message", "text_part",
    "user_message",
    "STRUCTURED_MODES", "ChatClient", "StructuredResult", "ask", "chat_json", "extract_json", "find_json",
    "response_format_for", "validate", "check_key_env_name", "check_structured_mode",
]
