"""Notebook 01 on an LLM backend: a live run against an OpenAI-compatible server, then a
re-execution in replay mode with the server gone gives the same records; the server serves one of
the paper's models by its Hugging Face id, so the replayed notebook's published cell is a
reproduction of that model's rows (issue 25)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# wall time and cache status differ between live and replay; the cache mode is part of the spec
VOLATILE = {"latency_s", "note", "llm_cache_mode", "episode_key"}
#: A model the paper ran (MECoBench Table 6), served under its Hugging Face id.
SERVED = "Qwen/Qwen3-VL-32B-Instruct"


def _records(out_root: Path) -> tuple[list[dict], list[dict]]:
    (run_dir,) = [p for p in (out_root / "01_collaboration").iterdir() if p.is_dir()]
    eps = [{k: v for k, v in json.loads(line).items() if k not in VOLATILE}
           for line in (run_dir / "episodes.jsonl").open()]
    steps = [{k: v for k, v in json.loads(line).items() if k not in VOLATILE}
             for line in (run_dir / "steps.jsonl").open()]
    return eps, steps


def _published_text(executed: Path) -> str:
    """The text and HTML outputs of the executed notebook's cell tagged ``published``."""
    nb = json.loads(executed.read_text())
    (cell,) = [c for c in nb["cells"] if "published" in c.get("metadata", {}).get("tags", [])]
    out = []
    for o in cell.get("outputs", []):
        for mime in ("text/html", "text/markdown", "text/plain"):
            if mime in o.get("data", {}):
                out.append("".join(o["data"][mime]))
        if "text" in o:
            out.append("".join(o["text"]))
    return "\n".join(out)


def _run_notebook(tmp: Path, name: str, params: dict, env: dict) -> None:
    import papermill as pm

    old = dict(os.environ)
    os.environ.update(env)
    try:
        pm.execute_notebook(str(ROOT / "notebooks" / "01_collaboration.ipynb"), str(tmp / f"{name}.ipynb"),
                            parameters=params, cwd=str(ROOT / "notebooks"), progress_bar=False)
    finally:
        os.environ.clear()
        os.environ.update(old)


@pytest.mark.slow
def test_notebook_01_live_then_replay(tmp_path):
    server = subprocess.Popen([sys.executable, "-m", "collablab.llm.fake_server", "--models", SERVED],
                              stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline().split()[1])
        params = dict(backend="llm", model=SERVED, base_url=f"http://127.0.0.1:{port}/v1", provider="compat",
                      n_tasks=1, team_sizes=[1, 2], workers=1, n_resamples=200)
        cache = str(tmp_path / "llm_cache.sqlite")
        _run_notebook(tmp_path, "live", dict(params, llm_cache_mode="rw"),
                      {"COLLABLAB_OUTPUTS": str(tmp_path / "live"), "COLLABLAB_LLM_CACHE": cache,
                       "OPENAI_API_KEY": "sk-test-SECRET-NOTEBOOK"})
    finally:
        server.kill()
        server.wait()
    _run_notebook(tmp_path, "replay", dict(params, llm_cache_mode="replay"),
                  {"COLLABLAB_OUTPUTS": str(tmp_path / "replay"), "COLLABLAB_LLM_CACHE": cache})
    live_eps, live_steps = _records(tmp_path / "live")
    rep_eps, rep_steps = _records(tmp_path / "replay")
    assert live_eps and all(e["backend"].startswith("compat:") or SERVED in e["backend"] for e in live_eps)
    assert rep_eps == live_eps and rep_steps == live_steps
    assert sum(s["tokens_prompt"] for s in live_steps) > 0
    for f in list((tmp_path / "live").rglob("*")) + [Path(cache)]:
        if f.is_file():
            assert b"sk-test-SECRET-NOTEBOOK" not in f.read_bytes(), f
    published = _published_text(tmp_path / "replay.ipynb")
    assert "Qwen3-VL-32B" in published and "reproduction" in published, published[:2000]
    assert "calibration" not in published, published[:2000]
