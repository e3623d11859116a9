"""``collablab run NN --dry-run --show-requests`` (issue 23): the first request body of each model
role, translated for the configured endpoint, with nothing sent to it."""

from __future__ import annotations

import subprocess
import sys

from collablab.runs.show_requests import role_of, sample_requests


def test_roles_are_call_ids_without_their_numbered_segments():
    assert role_of("ab12cd/s0/a1/t3/act/r0") == "act"
    assert role_of("run1/MAPR/mapf/bottleneck/proposer/agent0") == "MAPR/mapf/bottleneck/proposer"


def test_each_role_shows_what_the_configured_endpoint_would_get():
    base = {"task_id": "cl003-p", "policy": "llm", "n_agents": 2, "budget": 4, "seed": 3,
            "base_url": "http://127.0.0.1:9/v1", "llm_cache_mode": "off"}  # nothing answers there
    grid = [{**base, "protocol": "isolated", "model": "gpt-5-mini", "max_tokens": 2048, "temperature": 0.0},
            {**base, "protocol": "leader", "model": "gpt-5-mini", "max_tokens": 2048, "temperature": 0.0}]
    shown = sample_requests(grid, "collablab.studies.mecobench:run_spec")
    assert {"act", "assign"} <= set(shown)
    body = shown["act"]
    assert body["model"] == "gpt-5-mini" and body["max_completion_tokens"] == 2048
    assert "temperature" not in body and "max_tokens" not in body  # OpenAI's reasoning models refuse them
    assert body["messages"][0]["role"] == "system" and body["messages"][1]["content"].endswith("characters)")
    offline = [{**base, "policy": "heuristic", "protocol": "isolated"}]
    assert sample_requests(offline, "collablab.studies.mecobench:run_spec") == {}


def test_show_requests_needs_a_dry_run():
    proc = subprocess.run([sys.executable, "-m", "collablab.cli", "run", "01", "--show-requests"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--show-requests: only with --dry-run" in proc.stderr
