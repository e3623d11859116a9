"""Policy ``llm`` from a run spec: the spec keys (``LLM_DEFAULTS``), their checks, the backend
label (``<provider>:<model>``) and one :class:`~collablab.agents.llm.policy.LLMPolicy` per agent
(docs/llm_backends.md)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable, Mapping

from ...llm import CACHE_MODES, PARAM_RULES, THINKING, EndpointSpec, LLMClient, ResponseCache, check_key_env_name, default_cache_mode
from .policy import LLMPolicy, LLMSettings, check_pipeline

#: Endpoint keys every study with an LLM backend takes (docs/llm_backends.md, "Batch runs").
ENDPOINT_DEFAULTS: dict[str, Any] = {
    "llm_replicas": None,  # more base URLs serving the same model (list, or one string of space-separated URLs)
    "llm_extra_body": None,  # dict sent as the request's extra_body (guided_json, chat_template_kwargs, ...)
    "llm_outage_wait_s": 600.0,  # how long a call waits for a down server to answer again before the episode fails
    "llm_param_rules": "auto",  # auto | standard | reasoning (OpenAI's reasoning models: max_completion_tokens, no sampling keys)
}

#: Spec keys of policy "llm" (see docs/llm_backends.md). ``model``, ``base_url``, ``provider``,
#: ``endpoint`` and ``api_key_env`` take "a,b,..." for one value per agent (mixed teams).
LLM_DEFAULTS: dict[str, Any] = {
    "model": None,  # e.g. "gpt-4o-mini", "Qwen/Qwen3-VL-8B-Instruct", "smollm2-135m-instruct"
    "base_url": None,  # None: the OpenAI API; e.g. "http://127.0.0.1:8000/v1" for `vllm serve`
    "provider": "auto",  # backend label prefix: openai | vllm | llamacpp | compat; auto: openai without base_url
    "endpoint": None,  # endpoint alias (cache key + concurrency bound); None: the backend label
    "api_key_env": None,  # NAME of the key's env var; None: OPENAI_API_KEY for OpenAI, no key otherwise
    "llm_cache": None,  # cache file; None: $COLLABLAB_LLM_CACHE or outputs/llm_cache.sqlite
    "llm_cache_mode": None,  # rw | replay | off; None: $COLLABLAB_LLM_CACHE_MODE or rw
    # MECoBench App. B.2: "we adopt the recommended generation configurations ... For closed-source
    # models, we use the official APIs with their default generation settings": sampling and the
    # token budget are left to the server (None: not sent), thinking as the model's default.
    "temperature": None,
    "max_tokens": None,
    "thinking": "auto",  # on | off | auto (not sent): the model's thinking mode (collablab.llm.wire)
    "structured_mode": "none",  # none (the paper's tagged text) | json_object (llama.cpp) | json_schema
    # paper (App. B.3-B.4: no ids in prompts, Table 7 exactly, the model decoder, no re-ask) |
    # assisted (ids shown, rules first, action aliases, close/wait, one re-ask): LLMPolicy's doc
    "pipeline": "paper",
    "multimodal": False,  # send the views: each agent its own, the decoder raw + annotated, leader_vision all
    "grounding": None,  # None: the pipeline's (paper: llm; assisted: rules) | rules+llm (assisted: Fig. 25 after the rules)
    "llm_max_concurrency": 4,  # calls in flight per endpoint alias, process-wide
    "llm_timeout_s": 120.0,  # per HTTP attempt
    "llm_max_attempts": 4,  # HTTP attempts per call (retries on 429/5xx/timeouts/connection errors)
    "llm_max_reasks": None,  # re-asks (with the reason) after a reply with nothing usable; None: paper 0, assisted 1
    **ENDPOINT_DEFAULTS,
}
PROVIDERS = ("auto", "openai", "vllm", "llamacpp", "compat")
_PER_AGENT = ("model", "base_url", "provider", "endpoint", "api_key_env")


def per_agent(value: Any, n: int, key: str) -> list[Any]:
    """``"a,b"`` -> one value per agent (a single value is shared); empty items are None."""
    if value is None or not isinstance(value, str):
        return [value] * n
    items = [v.strip() or None for v in value.split(",")]
    if len(items) == 1:
        return items * n
    if len(items) != n:
        raise ValueError(f"{key}: {len(items)} comma-separated values for {n} agents; give 1 or {n}")
    return items


def provider_of(provider: str | None, base_url: str | None) -> str:
    if provider in (None, "auto"):
        return "openai" if base_url is None else "compat"
    return provider


def backend_label(provider: str | None, base_url: str | None, model: str) -> str:
    """``openai:gpt-4o-mini``, ``vllm:Qwen/Qwen3-VL-8B-Instruct``, ``llamacpp:smollm2-135m-instruct``."""
    return f"{provider_of(provider, base_url)}:{model}"


def replicas_of(s: Mapping[str, Any]) -> tuple[str, ...]:
    """The spec's ``llm_replicas`` as a tuple of base URLs (a string holds them space-separated)."""
    r = s.get("llm_replicas")
    if r is None:
        return ()
    if isinstance(r, str):
        return tuple(r.split())
    if isinstance(r, (list, tuple)) and all(isinstance(u, str) for u in r):
        return tuple(r)
    raise ValueError(f"llm_replicas: must be a list of base URLs or one string of space-separated URLs, got {r!r}")


def endpoint_options(s: Mapping[str, Any]) -> dict[str, Any]:
    """The :class:`EndpointSpec` fields a resolved spec sets (limits, replicas, extra_body, outage wait)."""
    extra = s.get("llm_extra_body")
    thinking = s.get("thinking")
    return dict(max_concurrency=int(s["llm_max_concurrency"]), timeout_s=float(s["llm_timeout_s"]),
                max_attempts=int(s["llm_max_attempts"]), replicas=replicas_of(s),
                outage_wait_s=float(s.get("llm_outage_wait_s", ENDPOINT_DEFAULTS["llm_outage_wait_s"])),
                default_params={"extra_body": dict(extra)} if extra else {},
                param_rules=s.get("llm_param_rules") or "auto",
                thinking=thinking if thinking in THINKING else "auto")


def check_endpoint_options(s: Mapping[str, Any]) -> None:
    """Reject bad ``llm_replicas``, ``llm_extra_body`` and ``llm_outage_wait_s`` (ValueError naming the key)."""
    for url in replicas_of(s):
        if not re.match(r"^https?://", url):
            raise ValueError(f"llm_replicas: {url!r} must start with http:// or https://")
    if replicas_of(s) and s["base_url"] is None:
        raise ValueError("llm_replicas: need base_url (replicas are more servers of the base_url's model)")
    extra = s.get("llm_extra_body")
    if extra is not None and not (isinstance(extra, Mapping) and all(isinstance(k, str) for k in extra)):
        raise ValueError(f"llm_extra_body: must be a mapping of request fields (e.g. {{'guided_json': {{...}}}}) "
                         f"or None, got {extra!r}")
    v = s.get("llm_outage_wait_s", 0.0)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
        raise ValueError(f"llm_outage_wait_s: must be a number of seconds >= 0, got {v!r}")
    rules = s.get("llm_param_rules", "auto")
    if rules not in PARAM_RULES:
        raise ValueError(f"llm_param_rules: {rules!r} is not allowed; allowed: {', '.join(PARAM_RULES)}")


def check_sampling(s: Mapping[str, Any], thinking: tuple[str, ...] = THINKING) -> None:
    """Reject a bad ``temperature`` (a number in [0, 2], or None: not sent), ``max_tokens`` (an
    integer >= 1, or None: the server's budget) and ``thinking`` (one of ``thinking``)."""
    t = s["temperature"]
    if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= 2):
        raise ValueError(f"temperature: must be a number in [0, 2] or None (not sent), got {t!r}")
    m = s["max_tokens"]
    if m is not None and (isinstance(m, bool) or not isinstance(m, int) or m < 1):
        raise ValueError(f"max_tokens: must be an integer >= 1 or None (the server's budget), got {m!r}")
    if "thinking" in s and s["thinking"] not in thinking:
        raise ValueError(f"thinking: {s['thinking']!r} is not allowed; allowed: {', '.join(thinking)}")


def endpoint_spec(s: Mapping[str, Any], model: str, base_url: str | None = None) -> EndpointSpec:
    """The endpoint of ``model`` at ``base_url`` (default: the spec's) with the spec's key
    (``api_key_env``, ``OPENAI_API_KEY`` for OpenAI itself) and limits (``llm_max_concurrency``,
    ``llm_timeout_s``, ``llm_max_attempts``); its alias is the backend label."""
    url = s["base_url"] if base_url is None else base_url
    env = s["api_key_env"]
    if env is None and provider_of(s["provider"], url) == "openai":
        env = "OPENAI_API_KEY"
    opts = endpoint_options(s)
    if url != s["base_url"]:  # another server (e.g. a judge's): the spec's replicas are not its replicas
        opts["replicas"] = ()
    return EndpointSpec(alias=backend_label(s["provider"], url, model), model=model, base_url=url,
                        api_key_env=env, provider=s["provider"] or "auto", **opts)


def endpoint_client(s: Mapping[str, Any], model: str, base_url: str | None = None,
                    cache: ResponseCache | None = None) -> LLMClient:
    """A client of :func:`endpoint_spec` through ``cache`` (default: the spec's ``llm_cache`` and
    ``llm_cache_mode``)."""
    return LLMClient(endpoint_spec(s, model, base_url),
                     cache if cache is not None else ResponseCache(s["llm_cache"], s["llm_cache_mode"]))


def live(s: Mapping[str, Any], endpoints: Iterable[EndpointSpec]) -> list[EndpointSpec]:
    """The distinct ``endpoints`` (by alias) a resolved spec will call over the network: none when
    its cache mode (``llm_cache_mode``, else ``$COLLABLAB_LLM_CACHE_MODE``) is ``replay``, where every
    reply comes from the cache. The run grid checks these before its first episode."""
    if (s["llm_cache_mode"] or default_cache_mode()) == "replay":
        return []
    return list({e.alias: e for e in endpoints}.values())


def check_endpoint_keys(s: Mapping[str, Any], thinking: tuple[str, ...] = THINKING) -> None:
    """Reject bad single-endpoint keys of a resolved spec, the ones every study with one endpoint
    shares: ``base_url``, ``provider``, ``api_key_env``, ``llm_cache_mode``, ``temperature``,
    ``max_tokens``, ``thinking`` (one of ``thinking``), ``llm_timeout_s`` (ValueError naming the
    key and the allowed values)."""
    check_sampling(s, thinking)
    url = s["base_url"]
    if url is not None and not (isinstance(url, str) and re.match(r"^https?://", url)):
        raise ValueError(f"base_url: {url!r} must start with http:// or https://")
    if s["provider"] not in PROVIDERS:
        raise ValueError(f"provider: {s['provider']!r} is not allowed; allowed: {', '.join(PROVIDERS)}")
    check_key_env_name(s["api_key_env"])
    if s["llm_cache_mode"] is not None and s["llm_cache_mode"] not in CACHE_MODES:
        raise ValueError(f"llm_cache_mode: {s['llm_cache_mode']!r} is not allowed; allowed: {', '.join(CACHE_MODES)}")
    v = s["llm_timeout_s"]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
        raise ValueError(f"llm_timeout_s: must be a positive number, got {v!r}")
    check_endpoint_options(s)


def check_llm_spec(s: Mapping[str, Any]) -> None:
    """Reject bad LLM keys of a resolved spec (ValueError naming the key and allowed values)."""
    n = s["n_agents"]
    models = per_agent(s["model"], n, "model")
    if any(not isinstance(m, str) or not m for m in models):
        raise ValueError("model: policy 'llm' needs a model name, e.g. model='gpt-4o-mini' "
                         "(or 'a,b' for one model per agent)")
    for key in _PER_AGENT[1:]:
        if s[key] is not None and not isinstance(s[key], str):
            raise ValueError(f"{key}: must be a string or None, got {s[key]!r}")
        per_agent(s[key], n, key)
    for p in per_agent(s["provider"], n, "provider"):
        if p not in PROVIDERS and p is not None:
            raise ValueError(f"provider: {p!r} is not allowed; allowed: {', '.join(PROVIDERS)}")
    for url in per_agent(s["base_url"], n, "base_url"):
        if url is not None and not re.match(r"^https?://", url):
            raise ValueError(f"base_url: {url!r} must start with http:// or https://")
    for env in per_agent(s["api_key_env"], n, "api_key_env"):
        check_key_env_name(env)
    if s["llm_cache_mode"] is not None and s["llm_cache_mode"] not in CACHE_MODES:
        raise ValueError(f"llm_cache_mode: {s['llm_cache_mode']!r} is not allowed; allowed: {', '.join(CACHE_MODES)}")
    if s["llm_cache"] is not None and not isinstance(s["llm_cache"], (str, Path)):
        raise ValueError(f"llm_cache: must be a file path or None, got {s['llm_cache']!r}")
    check_sampling(s)
    for key, lo in (("llm_max_concurrency", 1), ("llm_max_attempts", 1), ("llm_max_reasks", 0)):
        v = s[key]
        if key == "llm_max_reasks" and v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise ValueError(f"{key}: must be an integer >= {lo}, got {v!r}")
    v = s["llm_timeout_s"]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
        raise ValueError(f"llm_timeout_s: must be a positive number, got {v!r}")
    if not isinstance(s["multimodal"], bool):
        raise ValueError(f"multimodal: must be true or false, got {s['multimodal']!r}")
    check_endpoint_options(s)
    if replicas_of(s) and len(set(zip(*(per_agent(s[k], n, k) for k in _PER_AGENT)))) > 1:
        raise ValueError("llm_replicas: replicas need one endpoint for the whole team (the agents name different ones)")
    check_pipeline(s["pipeline"], s["grounding"], s["llm_max_reasks"])  # raises naming the key
    LLMSettings(structured_mode=s["structured_mode"], grounding=s["grounding"], pipeline=s["pipeline"],
                max_reasks=s["llm_max_reasks"])


def llm_endpoints(s: Mapping[str, Any]) -> list[EndpointSpec]:
    """One :class:`EndpointSpec` per agent of a resolved spec with policy ``llm`` (mixed teams: the
    per-agent ``model``, ``base_url``, ``provider``, ``endpoint`` alias and ``api_key_env``)."""
    n = s["n_agents"]
    cols = {k: per_agent(s[k], n, k) for k in _PER_AGENT}
    out = []
    for a in range(n):
        model, url, prov, alias, env = (cols[k][a] for k in _PER_AGENT)
        if env is None and provider_of(prov, url) == "openai":
            env = "OPENAI_API_KEY"
        out.append(EndpointSpec(alias=alias or backend_label(prov, url, model), model=model, base_url=url,
                                api_key_env=env, structured_mode=s["structured_mode"], provider=prov or "auto",
                                **endpoint_options(s)))
    return out


def make_llm_policies(s: Mapping[str, Any]) -> list[LLMPolicy]:
    """One :class:`LLMPolicy` per agent from a resolved spec; clients of one endpoint share a bound."""
    cache = ResponseCache(s["llm_cache"], s["llm_cache_mode"])
    settings = LLMSettings(temperature=s["temperature"], max_tokens=s["max_tokens"],
                           structured_mode=s["structured_mode"], multimodal=bool(s["multimodal"]),
                           grounding=s["grounding"], pipeline=s["pipeline"],
                           max_reasks=None if s["llm_max_reasks"] is None else int(s["llm_max_reasks"]))
    labels = [backend_label(p, u, m) for p, u, m in zip(*(per_agent(s[k], s["n_agents"], k)
                                                          for k in ("provider", "base_url", "model")))]
    clients: dict[tuple, LLMClient] = {}
    out = []
    for spec, label in zip(llm_endpoints(s), labels):
        key = (spec.alias, spec.model, spec.base_url, spec.api_key_env)
        if key not in clients:
            clients[key] = LLMClient(spec, cache)
        out.append(LLMPolicy(clients[key], settings, label=label))
    return out
