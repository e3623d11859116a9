"""Achieved against bound LLM concurrency: 16 episodes over 4 worker processes against a slow endpoint.

A loopback fake OpenAI-compatible server answers every chat request after ``--delay-s`` seconds
(latency injection) and counts the requests in flight; a grid of 16 MECoBench LLM episodes (one
agent, cache off, so every call goes to the server) runs through ``collablab.runs.run_grid`` with
4 worker processes and ``llm_max_concurrency`` = the bound. Side by side:
  epw=1   one episode in flight per process: at most 4 calls in flight whatever the bound
  epw=4   four episodes in flight per process (threads): the shared limiter must hold the bound
          across the 4 processes, and reach it
For every row: the peak and the time-weighted mean number of requests in flight at the server
(sampled every 5 ms while the grid runs), their ratio to the bound, wall time and calls per second.
The endpoint must be slow against the episode's own CPU work (MECoBench builds a world and a prompt per
step: about 0.1-0.3 s on a loaded core) for the bound, not the CPU, to be what limits.

    python benchmarks/llm_concurrency.py [--bound 8] [--delay-s 1.5] [--budget 10]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path

from collablab.llm.fake_server import FakeOpenAIServer
from collablab.runs import run_grid


def sample(srv: FakeOpenAIServer, stop: threading.Event, out: list[int]) -> None:
    while not stop.is_set():
        out.append(srv.in_flight)
        time.sleep(0.005)


def row(srv: FakeOpenAIServer, bound: int, epw: int, budget: int, root: Path) -> dict:
    tasks = ["cl000-p", "cl001-p", "cl002-p", "cl003-p"]
    specs = [{"task_id": t, "seed": s, "policy": "llm", "model": "fake-model", "base_url": srv.base_url,
              "provider": "compat", "n_agents": 1, "protocol": "isolated", "budget": budget,
              "llm_cache_mode": "off", "llm_max_reasks": 0, "llm_max_concurrency": bound}
             for t in tasks for s in range(4)]
    n0 = srv.n_requests
    srv.reset_peak()
    samples: list[int] = []
    stop = threading.Event()
    th = threading.Thread(target=sample, args=(srv, stop, samples), daemon=True)
    th.start()
    t0 = time.perf_counter()
    res = run_grid(specs, study="mecobench", out_root=root / f"b{bound}-e{epw}", workers=4,
                   episodes_per_worker=epw, progress=False)
    wall = time.perf_counter() - t0
    stop.set()
    th.join()
    assert res.ok, res
    busy = [s for s in samples if s > 0]
    top = [i for i, s in enumerate(samples) if s == max(samples)]
    steady = samples[top[0]:top[-1] + 1] if top else []  # from the first to the last sample at the peak
    return {"bound": bound, "epw": epw, "peak": srv.max_in_flight,
            "mean": sum(busy) / len(busy) if busy else 0.0,
            "steady": sum(steady) / len(steady) if steady else 0.0, "calls": srv.n_requests - n0, "wall": wall}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bound", type=int, default=8)
    ap.add_argument("--delay-s", type=float, default=1.5)
    ap.add_argument("--budget", type=int, default=10, help="steps per episode (one call each)")
    args = ap.parse_args()
    print(f"16 episodes, 4 worker processes, endpoint latency {args.delay_s}s, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(delay_s=args.delay_s) as srv:
        rows = [row(srv, args.bound, epw, args.budget, Path(tmp)) for epw in (1, 4)]
        rows.append(row(srv, max(1, args.bound // 2), 4, args.budget, Path(tmp)))
    print(f"{'bound':>5s} {'epw':>4s} {'peak':>5s} {'peak/bound':>10s} {'busy mean/bound':>15s} "
          f"{'steady mean/bound':>17s} {'calls':>6s} {'wall s':>7s} {'calls/s':>8s}")
    for r in rows:
        print(f"{r['bound']:5d} {r['epw']:4d} {r['peak']:5d} {r['peak'] / r['bound']:10.2f} {r['mean'] / r['bound']:15.2f} "
              f"{r['steady'] / r['bound']:17.2f} {r['calls']:6d} {r['wall']:7.2f} {r['calls'] / r['wall']:8.2f}")
    print("busy: every sample with a request in flight (start-up and the last episodes' tail included); "
          "steady: from the first to the last sample at the peak")
    over = [r for r in rows if r["peak"] > r["bound"]]
    print("never above the bound" if not over else f"ABOVE THE BOUND in {len(over)} row(s)")


if __name__ == "__main__":
    main()
