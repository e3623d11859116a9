"""Records of a fixed set of specs (every protocol, both structures, heuristic, oracle, LLM
episodes replayed from the cache) hash as committed in tests/data/record_hashes.json.

A refactor must keep them; an intended change of behaviour rewrites the file with
``python scripts/record_hashes.py --write`` in the same commit, saying why."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "record_hashes.py"


def _script():
    spec = importlib.util.spec_from_file_location("record_hashes", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_records_hash_as_committed():
    rh = _script()
    want = json.loads(rh.HASHES.read_text())
    got = rh.compute()
    assert set(got) == set(want)
    differ = {k: (want[k], got[k]) for k in want if want[k] != got[k]}
    assert not differ, f"records changed for {sorted(differ)}; if intended, run scripts/record_hashes.py --write"


def test_hash_sees_a_changed_record():
    rh = _script()
    rec = {"episode": {"a": 1, "llm_cache_mode": "rw"}, "steps": [{"latency_s": 0.1, "note": "{}", "x": 1}]}
    same = {"episode": {"a": 1, "llm_cache_mode": "replay"}, "steps": [{"latency_s": 9.0, "note": "{}", "x": 1}]}
    other = {"episode": {"a": 1}, "steps": [{"latency_s": 0.1, "note": "{}", "x": 2}]}
    assert rh.digest(rec) == rh.digest(same) != rh.digest(other)
