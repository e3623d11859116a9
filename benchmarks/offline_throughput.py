"""Offline episodes per second against worker count: local processes and local Ray, side by side.

The same grid of offline units (MECoBench heuristic episodes by default, or DynaHMRC units with
``--study dynahmrc``) runs through ``collablab.runs.run_grid`` in fresh run folders with
  local  workers = 1 (in-process), 2, ... (a process pool)
  ray    workers = 1, 2, ... on a local Ray instance (``pip install collablab[ray]``; its start-up
         is timed separately and left out of the rate)
and every row prints episodes per second and its ratio to the in-process run; the records of every
row are checked equal, line for line, to the in-process run's (the files list them in completion order).

    python benchmarks/offline_throughput.py [--episodes 48] [--workers 1 2] [--study mecobench] [--no-ray]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from collablab.runs import run_grid


def specs(study: str, n: int) -> list[dict]:
    if study == "mecobench":
        from collablab.studies.mecobench.grids import task_ids

        ids = task_ids("parallel", min(n, 96)) + task_ids("sequential", min(n, 96))
        return [{"task_id": t, "profile": "medium", "n_agents": 2, "seed": i // len(ids)}
                for i, t in enumerate(ids * (1 + n // len(ids)))][:n]
    if study == "dynahmrc":
        kinds, levels = ("pack", "sort", "sandwich"), ("easy", "medium", "hard")
        return [{"kind": kinds[i % 3], "level": levels[i // 3 % 3], "team": "Ma-MoMa-Mo", "instance": i // 9}
                for i in range(n)]
    raise SystemExit(f"--study: {study!r} is not allowed; allowed: mecobench, dynahmrc")


def run(grid: list[dict], study: str, engine: str, workers: int, root: Path) -> tuple[float, list[bytes]]:
    t0 = time.perf_counter()
    res = run_grid(grid, study=study, out_root=root / f"{engine}{workers}", workers=workers,
                   engine=engine, progress=False)
    wall = time.perf_counter() - t0
    assert res.ok, res
    # the files are in completion order: compare the records, not their order
    return wall, sorted((res.run_dir / "episodes.jsonl").read_bytes().splitlines() +
                        (res.run_dir / "steps.jsonl").read_bytes().splitlines())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, default=48)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--study", default="mecobench")
    ap.add_argument("--no-ray", action="store_true")
    args = ap.parse_args()
    grid = specs(args.study, args.episodes)
    print(f"{len(grid)} {args.study} offline episodes on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        run(grid[:2], args.study, "local", 1, root / "warm")  # task suite and imports, once
        base_wall, base = run(grid, args.study, "local", 1, root)
        rows = [("local", 1, base_wall)]
        for w in args.workers:
            if w > 1:
                wall, rec = run(grid, args.study, "local", w, root)
                assert rec == base, "records differ from the in-process run"
                rows.append(("local", w, wall))
        if not args.no_ray:
            try:
                import ray
            except ImportError:
                print("ray is not installed (pip install collablab[ray]); Ray rows skipped")
            else:
                t0 = time.perf_counter()
                ray.init(num_cpus=max(args.workers), include_dashboard=False, log_to_driver=False)
                print(f"local Ray instance started in {time.perf_counter() - t0:.1f}s (not counted)")
                try:
                    for w in args.workers:
                        wall, rec = run(grid, args.study, "ray", w, root)
                        assert rec == base, "Ray records differ from the in-process run"
                        rows.append(("ray", w, wall))
                finally:
                    ray.shutdown()
    print(f"{'engine':8s} {'workers':>7s} {'wall s':>8s} {'ep/s':>8s} {'vs in-process':>14s}")
    for engine, w, wall in rows:
        print(f"{engine:8s} {w:7d} {wall:8.2f} {len(grid) / wall:8.2f} {base_wall / wall:13.2f}x")
    print("records: every row has the in-process run's lines")


if __name__ == "__main__":
    main()
