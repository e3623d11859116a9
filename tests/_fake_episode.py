"""A test-only episode function with deterministic records (same spec -> same records).

Spec fields it reads (all optional): ``seed``, ``n_steps`` (step records, default 20),
``n_agents`` (default 2), ``sleep_s`` (wall time to waste), ``wait_for`` (block until that
file exists, at most 20 s), ``touch`` (create that file when done), ``fail_unless`` (raise
unless that file exists), ``die_unless`` (``os._exit`` the process unless that file exists;
only use with worker processes). None of these change the records.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import time
from typing import Any

ACTIONS = ["walk", "grab", "open", "put", "close", "wait"]
DEFAULTS = {"seed": 0, "n_steps": 20, "n_agents": 2, "sleep_s": 0.0}


def run_spec(spec: dict[str, Any]) -> dict[str, Any]:
    if spec.get("sleep_s"):
        time.sleep(float(spec["sleep_s"]))
    if spec.get("wait_for"):
        deadline = time.monotonic() + 20
        while not os.path.exists(spec["wait_for"]) and time.monotonic() < deadline:
            time.sleep(0.01)
    if spec.get("fail_unless") and not os.path.exists(spec["fail_unless"]):
        raise RuntimeError(f"fake failure: {spec['fail_unless']} is missing")
    if spec.get("die_unless") and not os.path.exists(spec["die_unless"]):
        os._exit(3)
    text = json.dumps(spec, sort_keys=True)
    rng = random.Random(int(hashlib.sha256(text.encode()).hexdigest()[:16], 16))
    n_agents = int(spec.get("n_agents", DEFAULTS["n_agents"]))
    n_steps = int(spec.get("n_steps", DEFAULTS["n_steps"]))
    eid = "ep-" + hashlib.sha256(text.encode()).hexdigest()[:8]
    steps = []
    for j in range(n_steps):
        steps.append({"episode_id": eid, "step": j // n_agents, "agent": j % n_agents,
                      "action": rng.choice(ACTIONS), "status": rng.random() < 0.9,
                      "reward": rng.random(), "message": f"msg {rng.randrange(1000)}" if j % 3 else None,
                      "args": json.dumps({"obj": rng.randrange(50)})})
    progress = sorted(rng.random() for _ in range(5))
    episode = {"episode_id": eid, "seed": spec.get("seed", DEFAULTS["seed"]), "success": progress[-1] > 0.5,
               "cr": progress[-1], "progress": progress,
               "credits": {str(a): rng.randrange(4) for a in range(n_agents)},
               "goal": {"on_apple_13": 1}, "actions": n_steps, "backend": "fake"}
    if spec.get("touch"):
        open(spec["touch"], "a").close()
    return {"episode": episode, "steps": steps}


def validate(spec: dict[str, Any]) -> None:
    """A caller-supplied check: only known fields."""
    allowed = {"seed", "n_steps", "n_agents", "sleep_s", "fail_unless", "die_unless", "protocol",
               "wait_for", "touch"}
    unknown = set(spec) - allowed
    if unknown:
        raise ValueError(f"unknown field(s) {sorted(unknown)}; allowed: {sorted(allowed)}")
