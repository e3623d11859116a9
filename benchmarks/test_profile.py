"""Where the test suite's time goes: a pytest ``--durations=0`` log grouped by file and by phase.

Run the suite with ``--durations=0`` (every setup, call and teardown with its seconds), keep the log,
and read it here. A module- or session-scoped fixture's cost lands in the *setup* of the first test
that asks for it, so the biggest setups name the expensive shared inputs; an nbval notebook's
cells are grouped under the notebook.

    .venv/bin/python -m pytest -p no:cacheprovider --durations=0 > suite.log
    python benchmarks/test_profile.py suite.log [--top 25]
    python benchmarks/test_profile.py before.log after.log   # two logs side by side, per file
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

LINE = re.compile(r"^\s*(\d+(?:\.\d+)?)s (setup|call|teardown)\s+(\S.*)$")
SUMMARY = re.compile(r"=+ (.*) in ([\d.]+)s")


def read(path: Path) -> tuple[list[tuple[float, str, str]], str]:
    """(seconds, phase, node id) of every timed phase, and the closing summary line."""
    rows, summary = [], ""
    for line in path.read_text(errors="replace").splitlines():
        if m := LINE.match(line):
            rows.append((float(m[1]), m[2], m[3].strip()))
        elif (m := SUMMARY.search(line)) and ("passed" in line or "failed" in line):
            summary = f"{m[1]} in {float(m[2]):.0f} s"
    return rows, summary


def file_of(node: str) -> str:
    return node.split("::", 1)[0]


def by_file(rows: list[tuple[float, str, str]]) -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    for s, _, node in rows:
        out[file_of(node)] += s
    return dict(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="+", type=Path, help="one log, or a before and an after log")
    ap.add_argument("--top", type=int, default=25, help="rows per table")
    args = ap.parse_args()
    runs = [read(p) for p in args.logs]
    for p, (rows, summary) in zip(args.logs, runs):
        print(f"{p}: {summary}; {sum(s for s, *_ in rows):.0f} s of timed phases "
              f"(setup {sum(s for s, ph, _ in rows if ph == 'setup'):.0f}, "
              f"call {sum(s for s, ph, _ in rows if ph == 'call'):.0f}, "
              f"teardown {sum(s for s, ph, _ in rows if ph == 'teardown'):.0f})")
    files = [by_file(rows) for rows, _ in runs]
    names = sorted(set().union(*files), key=lambda f: -files[0].get(f, 0.0))
    head = " ".join(f"{'log ' + str(i + 1):>9s}" for i in range(len(files)))
    print(f"\nseconds by file (summed over tests; with -n 2 the wall time is about half)\n{'file':58s} {head}")
    for f in names[:args.top]:
        print(f"{f:58s} " + " ".join(f"{d.get(f, 0.0):9.1f}" for d in files))
    rest = names[args.top:]
    if rest:
        print(f"{'(' + str(len(rest)) + ' more files)':58s} "
              + " ".join(f"{sum(d.get(f, 0.0) for f in rest):9.1f}" for d in files))
    rows = runs[0][0]
    setups = sorted((r for r in rows if r[1] == "setup"), reverse=True)[:args.top]
    print(f"\nlargest setups of {args.logs[0]} (a shared fixture is paid in its first user's setup)")
    for s, _, node in setups:
        print(f"{s:8.1f}  {node}")
    calls = sorted((r for r in rows if r[1] != "setup"), reverse=True)[:args.top]
    print(f"\nlargest calls and teardowns of {args.logs[0]}")
    for s, ph, node in calls:
        print(f"{s:8.1f}  {ph:8s} {node}")


if __name__ == "__main__":
    main()
