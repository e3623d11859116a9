"""Issue 23, end to end: through ``collablab episodes`` against an OpenAI-compatible server
process (``python -m collablab.testing serve``), every study records the final answer when a
different draft sits in the thoughts (inline or in ``reasoning_content``) and records a reply cut
at ``max_tokens`` as truncated; a MECoBench grid naming a GPT-5 model runs against a server that
refuses ``max_tokens`` and ``temperature`` the way OpenAI's reasoning models do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from collablab import testing as T
from collablab.llm.fake_server import FakeOpenAIServer
from collablab.runs.store import KEY, read_records

#: Draft in the thoughts (inline, then apart), the final answer after them, a cut reply.
STYLES = ("inline_thoughts", "draft_in_inline_thoughts", "reasoning_content", "draft_in_reasoning_content",
          "cut_inside_thoughts")
#: One model-backed case per study, a short one.
CASES = {"mecobench": "llm/broadcast/parallel", "partnr": "llm/oas+oana", "dynahmrc": "llm/dynahmrc",
         "mastracebench": "llm/MAPR/static"}


@pytest.fixture(scope="module")
def style_server():
    proc = subprocess.Popen([sys.executable, "-m", "collablab.testing", "serve"], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("PORT "), line
        yield f"http://127.0.0.1:{int(line.split()[1])}/v1"
    finally:
        proc.terminate()
        proc.wait(10)


def _episodes(tmp_path: Path, study: str, base: dict, axes: dict, env: dict | None = None) -> Path:
    grid = tmp_path / f"{study}.yaml"
    grid.write_text(yaml.safe_dump({"base": base, "axes": axes}))
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "collablab.cli", "episodes", "--study", study, "--grid", str(grid),
                           "--out-root", str(out), "--workers", "1", "--no-progress"],
                          capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})})
    assert proc.returncode == 0, proc.stderr[-2000:]
    (run,) = [p for p in (out / study).iterdir() if p.is_dir()]
    return run


@pytest.mark.parametrize("study", sorted(CASES))
def test_the_final_answer_is_recorded_and_a_cut_reply_is_truncated(study, style_server, tmp_path):
    mod = T.study_module(study)
    spec = {**mod.conformance_cases(style_server)[CASES[study]], "base_url": style_server, "llm_cache_mode": "rw",
            "llm_cache": str(tmp_path / "cache.sqlite")}
    spec.pop("model")
    run = _episodes(tmp_path, study, spec, {"model": [f"{study}:{s}" for s in STYLES]})
    model_of = {e["episode_key"]: e["spec"]["model"] for e in json.loads((run / "manifest.json").read_text())["specs"]}
    episodes = list(read_records(run / "episodes.jsonl"))
    steps = list(read_records(run / "steps.jsonl"))
    assert sorted(model_of[e[KEY]] for e in episodes) == sorted(f"{study}:{s}" for s in STYLES)
    for ep in episodes:
        style = T.REPLY_STYLES[model_of[ep[KEY]].split(":")[1]]
        result = {"episode": ep, "steps": [s for s in steps if s[KEY] == ep[KEY]]}
        T.check_style_records(mod, result, style, f"{study} / {style.name}")


def test_a_gpt5_grid_runs_against_a_server_refusing_max_tokens_and_temperature(tmp_path):
    """OpenAI's reasoning models refuse ``max_tokens`` and a temperature other than 1: the model id
    names the family, so the budget travels as ``max_completion_tokens`` and no sampling key is
    sent; with sampling left unset (MECoBench's default, App. B.2) nothing of the kind is sent."""
    meco = T.study_module("mecobench")
    with FakeOpenAIServer(lambda body, _s: meco.usable_reply(body), models=["gpt-5-mini"], reasoning_rules=True,
                          owned_by="system", require_key="sk-test") as srv:
        base = {**meco.conformance_cases(srv.base_url)["llm/broadcast/parallel"], "model": "gpt-5-mini",
                "provider": "auto", "api_key_env": "COLLABLAB_TEST_KEY", "llm_cache_mode": "off"}
        env_key = {"COLLABLAB_TEST_KEY": "sk-test"}
        run = _episodes(tmp_path, "mecobench", base, {"temperature": [None, 0.0], "max_tokens": [None, 2048]},
                        env=env_key)
        bodies = list(srv.bodies)
    assert srv.n_refused == 0 and bodies
    episodes = list(read_records(run / "episodes.jsonl"))
    assert len(episodes) == 4 and all(e["invalid_actions"] == 0 for e in episodes)
    sampling = {"temperature", "top_p", "max_tokens", "stop", "seed", "presence_penalty", "frequency_penalty"}
    assert all(not sampling & set(b) for b in bodies)
    budgets = {b.get("max_completion_tokens") for b in bodies}
    assert budgets == {None, 2048}  # unset: not sent; set: under the name these models take
