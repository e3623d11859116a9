"""Hashes of the episode and step records of a fixed set of MECoBench specs.

A refactor that must not change behaviour is checked by comparing these hashes before and
after it (``tests/test_record_hashes.py`` does so on every test run):

    .venv/bin/python scripts/record_hashes.py            # compare with tests/data/record_hashes.json
    .venv/bin/python scripts/record_hashes.py --write    # after an intended change of behaviour

The set covers every protocol, both structures, heuristic (one profile and a mixed team),
the oracle, two prior variants, and LLM episodes of both pipelines (assisted: every LLM
protocol; paper: the model decoder, Table 7's space, no re-ask) run live against a scripted
OpenAI-compatible server and then replayed from the cache with the server gone (the replayed
records are the ones hashed; live and replay must agree).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from collablab.llm.fake_server import FakeOpenAIServer, FakeReply
from collablab.studies.mecobench import run_spec
from collablab.testing import comparable

HASHES = Path(__file__).resolve().parents[1] / "tests" / "data" / "record_hashes.json"
PROTOCOLS = ("isolated", "broadcast", "discuss", "leader", "leader_vision", "shared_memory")


def offline_specs() -> dict[str, dict[str, Any]]:
    """Named specs that need no server: heuristic and oracle teams."""
    out: dict[str, dict[str, Any]] = {}
    for task in ("cl003-p", "cl003-s"):
        for proto in PROTOCOLS:
            out[f"heuristic/{task}/{proto}"] = {"task_id": task, "protocol": proto, "n_agents": 2, "seed": 1}
        out[f"oracle/{task}"] = {"task_id": task, "policy": "oracle", "n_agents": 2}
    out["heuristic/mixed-leader"] = {"task_id": "cl010-p", "protocol": "leader", "profile": "strong,weak",
                                     "n_agents": 2, "seed": 2}
    out["heuristic/solo-noisy"] = {"task_id": "cl011-p", "n_agents": 1, "prior": "noisy", "budget": 80}
    out["heuristic/three-none"] = {"task_id": "cl012-p", "n_agents": 3, "prior": "none", "protocol": "discuss"}
    return out


LLM_PROTOCOLS = ("broadcast", "discuss", "leader", "shared_memory")


class Scripted:
    """Replies by phase and per-agent call count: messages, a leader's JSON, and act replies
    that walk, grab, say nothing usable (an invalid reply, re-asked) and wait."""

    ACTS = [
        {"action": "walk_to_room", "parameter_1": None, "parameter_2": None, "room": "kitchen"},
        {"action": "grab", "parameter_1": {"name": "cupcake", "description": ""}, "parameter_2": None, "room": None},
        None,
        {"action": "wait", "parameter_1": None, "parameter_2": None, "room": None},
    ]

    def __init__(self) -> None:
        self.count: Counter = Counter()

    def __call__(self, body: dict, srv: FakeOpenAIServer) -> FakeReply:
        agent = int(re.search(r"You are Agent (\d+)", body["messages"][0]["content"]).group(1))
        users = [m for m in body["messages"] if m["role"] == "user"]
        first = users[0]["content"]
        text = first if isinstance(first, str) else " ".join(p.get("text", "") for p in first if isinstance(p, dict))
        n = self.count[(text[:40], agent)]
        self.count[(text[:40], agent)] += 1
        if "resolving object_ids" in text:  # the decoder (Fig. 25): a candidate of the named class
            inp = json.loads(text.split("Input JSON:", 1)[1])
            want = (inp.get("parameter_1") or {}).get("name")
            ids = ([c["id"] for c in inp["candidates"] if c["class_name"] == want]  # else the closest: the first
                   or [c["id"] for c in inp["candidates"]])[:1]
            held = [h["id"] for h in inp["holding_objects"]][:1]
            return FakeReply(text=json.dumps({"action": inp["action"], "parameter_ids": held + ids
                                              if inp["action"] in ("put_on", "put_in") else ids}))
        if "produce TWO outputs" in text:
            act = self.ACTS[n % len(self.ACTS)]
            if act is None and len(users) == 1:
                return FakeReply(text="I am not sure what to do.")
            act = act or self.ACTS[-1]
            return FakeReply(text=f"[THINKING] step {n}.\n[ACTION] {json.dumps(act)}\n"
                                  f"[THINKING] note.\n[MEMORY] {json.dumps({'seen': n})}")
        if "acting as the leader" in text:
            return FakeReply(text='[THINKING] split.\n[MESSAGES] [{"receiver": "Agent 0", "type": "assignment", '
                                  '"content": "search the kitchen"}, {"receiver": "Agent 1", "type": "assignment", '
                                  '"content": "search the bedroom"}]')
        if "FIRST discussion round" in text:
            return FakeReply(text=f"[THINKING] t.\n[READY] {'<CONTINUE>' if n % 2 == 0 else '<READY>'}\n"
                                  "[MESSAGE] I take the kitchen.\n[LOCAL_CONTEXT] kitchen is mine")
        if "FOLLOW-UP" in text:
            return FakeReply(text="[THINKING] ok.\n[READY] <READY>\n[MESSAGE] <NO_MESSAGE>")
        return FakeReply(text=f"[THINKING] share.\n[MESSAGE] Agent {agent} is searching, step {n}.")


def digest(rec: dict[str, Any]) -> str:
    text = json.dumps(comparable(rec), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def llm_records(tmp: Path) -> dict[str, dict[str, Any]]:
    """LLM episodes live against the scripted server, then replayed from the cache without it."""
    cache = str(tmp / "llm_cache.sqlite")
    base = {"policy": "llm", "model": "scripted", "provider": "vllm", "llm_cache": cache, "llm_max_attempts": 1,
            "n_agents": 2, "budget": 8}
    specs = {f"llm/{task}/{proto}": {**base, "task_id": task, "protocol": proto, "pipeline": "assisted"}
             for task in ("cl003-p", "cl003-s") for proto in LLM_PROTOCOLS}
    paper = {f"llm-paper/{task}/{proto}": {**base, "task_id": task, "protocol": proto, "pipeline": "paper"}
             for task in ("cl003-p", "cl003-s") for proto in ("broadcast", "leader")}
    live, urls = {}, {}
    for group in (specs, paper):  # a fresh script per pipeline: its reply counts start at 0
        srv = FakeOpenAIServer(Scripted()).start()
        try:
            live.update({k: run_spec({**s, "base_url": srv.base_url, "llm_cache_mode": "rw"}) for k, s in group.items()})
            urls.update({k: srv.base_url for k in group})
        finally:
            srv.stop()
    out = {}
    for k, s in {**specs, **paper}.items():
        rec = run_spec({**s, "base_url": urls[k], "llm_cache_mode": "replay"})
        if comparable(rec) != comparable(live[k]):
            raise AssertionError(f"{k}: replayed records differ from the live run")
        out[k] = rec
    return out


def compute() -> dict[str, str]:
    """``{name: hash}`` for every spec of the fixed set."""
    hashes = {k: digest(run_spec(s)) for k, s in offline_specs().items()}
    with tempfile.TemporaryDirectory() as tmp:
        hashes.update({k: digest(r) for k, r in llm_records(Path(tmp)).items()})
    return dict(sorted(hashes.items()))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"write {HASHES.name} instead of comparing")
    args = ap.parse_args(argv)
    got = compute()
    if args.write:
        HASHES.parent.mkdir(parents=True, exist_ok=True)
        HASHES.write_text(json.dumps(got, indent=1) + "\n")
        print(f"wrote {len(got)} hashes to {HASHES}")
        return 0
    want = json.loads(HASHES.read_text())
    bad = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
    for k in bad:
        print(f"DIFFERS {k}: committed {want.get(k)} now {got.get(k)}")
    print(f"{len(got) - len(bad)} of {len(set(want) | set(got))} record hashes match")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
