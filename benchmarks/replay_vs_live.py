"""Replay against live: the same LLM grid from a server, then from the response cache alone.

A loopback fake OpenAI-compatible server answers after ``--delay-s`` seconds; a grid of MECoBench
LLM episodes runs live (cache ``rw``, a fresh cache file), then again with ``llm_cache_mode=replay``
and the server stopped (a miss would raise). Printed side by side: wall time, calls, calls per
second, and the ratio live / replay; the replayed records are checked equal to the live ones
(latency and cache status aside).

    python benchmarks/replay_vs_live.py [--episodes 8] [--delay-s 0.2] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from collablab.llm.fake_server import FakeOpenAIServer
from collablab.runs import run_grid
from collablab.testing import comparable


def records(run_dir: Path) -> list[dict]:
    eps = [json.loads(x) for x in (run_dir / "episodes.jsonl").read_text().splitlines()]
    steps = [json.loads(x) for x in (run_dir / "steps.jsonl").read_text().splitlines()]
    drop = lambda r: {k: v for k, v in r.items() if k not in ("episode_key", "llm_cache_mode")}  # noqa: E731
    return [comparable({"episode": drop(e), "steps": [drop(s) for s in steps if s["grid_index"] == e["grid_index"]]})
            for e in sorted(eps, key=lambda e: e["grid_index"])]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, default=8)
    ap.add_argument("--delay-s", type=float, default=0.2)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cache = root / "cache.sqlite"
        srv = FakeOpenAIServer(delay_s=args.delay_s).start()
        base = {"policy": "llm", "model": "fake-model", "base_url": srv.base_url, "provider": "compat",
                "n_agents": 2, "protocol": "broadcast", "budget": 8, "llm_cache": str(cache)}
        tasks = ["cl000-p", "cl001-p", "cl002-p", "cl003-p"]
        specs = [{**base, "task_id": tasks[i % 4], "seed": i // 4} for i in range(args.episodes)]
        t0 = time.perf_counter()
        live = run_grid(specs, study="mecobench", out_root=root / "live", workers=args.workers, progress=False)
        live_s = time.perf_counter() - t0
        calls = srv.n_requests
        srv.stop()
        t0 = time.perf_counter()
        replay = run_grid([{**s, "llm_cache_mode": "replay"} for s in specs], study="mecobench",
                          out_root=root / "replay", workers=args.workers, progress=False)
        replay_s = time.perf_counter() - t0
        assert live.ok and replay.ok, (live, replay)
        same = records(live.run_dir) == records(replay.run_dir)
    print(f"{args.episodes} MECoBench LLM episodes, {calls} calls, endpoint latency {args.delay_s}s, "
          f"{args.workers} workers")
    print(f"{'mode':8s} {'wall s':>8s} {'calls/s':>9s}")
    print(f"{'live':8s} {live_s:8.2f} {calls / live_s:9.1f}")
    print(f"{'replay':8s} {replay_s:8.2f} {calls / replay_s:9.1f}")
    print(f"live / replay: {live_s / replay_s:.1f}x; replayed records equal the live ones: {same}")


if __name__ == "__main__":
    main()
