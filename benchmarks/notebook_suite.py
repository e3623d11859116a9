"""Wall time of the whole notebook suite (the README's main job), notebook by notebook.

Every research notebook runs through ``collablab run <notebook> --params <set>`` in a fresh
outputs folder (``COLLABLAB_OUTPUTS``; MECoBench's task suite is generated once, its time shown as
the first notebook's share), offline, for each parameter set named (default: ``default`` and
``smoke`` side by side); printed: seconds per notebook and set, the totals, and default / smoke; then,
for the first set, where each notebook's time goes: its slowest cells (papermill records every cell's
duration in the executed notebook) and what the rest is (kernel start, reading and writing).

    python benchmarks/notebook_suite.py [--sets default smoke] [--only 05 07] [--cells 3] [--readme [README.md]]

With ``--readme`` the table of seconds per notebook and set (all notebooks, at least two sets) also
replaces the part of README.md between ``<!-- timings:start -->`` and ``<!-- timings:end -->``, with
the command, the date, the commit and the machine (cores, CPU model) it was measured on.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", nargs="+", default=["default", "smoke"])
    ap.add_argument("--only", nargs="*", default=None, help="notebook prefixes (default: all)")
    ap.add_argument("--cells", type=int, default=3, help="slowest cells shown per notebook")
    ap.add_argument("--readme", nargs="?", const=str(ROOT / "README.md"), default=None, metavar="README",
                    help="write the table between the timings markers of README (default README.md)")
    args = ap.parse_args()
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if args.readme and (args.only or len(args.sets) < 2):
        raise SystemExit("--readme: the README's table has every notebook and at least two sets; drop --only")
    if args.readme:
        check_markers(Path(args.readme))
    if args.only:
        notebooks = [n for n in notebooks if any(n.startswith(o) for o in args.only)]
    load_start = os.getloadavg()[0]
    times: dict[str, dict[str, float]] = {}
    cells: dict[str, list[tuple[float, str]]] = {}
    for name in args.sets:
        with tempfile.TemporaryDirectory() as tmp:
            env = {**os.environ, "COLLABLAB_OUTPUTS": tmp}
            env.pop("COLLABLAB_LLM_CACHE_MODE", None)
            for nb in notebooks:
                t0 = time.perf_counter()
                proc = subprocess.run([sys.executable, "-m", "collablab.cli", "run", nb[:2], "--params", name,
                                       "--out", str(Path(tmp) / "nb")], env=env, capture_output=True, text=True)
                times.setdefault(nb, {})[name] = time.perf_counter() - t0
                if proc.returncode != 0:
                    raise SystemExit(f"{nb} ({name}) failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
                if name == args.sets[0]:
                    cells[nb] = cell_times(Path(tmp) / "nb" / f"{nb}.ipynb")
    print(f"notebook suite on {os.cpu_count()} cores (wall seconds per notebook, fresh outputs per set)")
    print(f"{'notebook':40s} " + " ".join(f"{s:>9s}" for s in args.sets))
    for nb in notebooks:
        print(f"{nb:40s} " + " ".join(f"{times[nb][s]:9.1f}" for s in args.sets))
    totals = {s: sum(times[nb][s] for nb in notebooks) for s in args.sets}
    print(f"{'total':40s} " + " ".join(f"{totals[s]:9.1f}" for s in args.sets))
    if "default" in totals and "smoke" in totals:
        print(f"default / smoke: {totals['default'] / totals['smoke']:.1f}x")
    print(f"\nwhere the time goes ({args.sets[0]}): the slowest cells, then the rest of the wall time")
    for nb in notebooks:
        top = sorted(cells[nb], reverse=True)[:args.cells]
        rest = times[nb][args.sets[0]] - sum(t for t, _ in cells[nb])
        print(f"{nb}: " + "; ".join(f"{t:.1f} s {src}" for t, src in top) + f"; outside cells {rest:.1f} s")
    if args.readme:
        load = (load_start, os.getloadavg()[0])
        write_readme(Path(args.readme), readme_table(notebooks, args.sets, times, load))
        print(f"\ntimings written to {args.readme}")


START, END = "<!-- timings:start -->", "<!-- timings:end -->"


def _fmt(seconds: float) -> str:
    s = round(seconds)
    return f"{s} s" if s < 60 else f"{s} s ({s // 60} min {s % 60:02d} s)"


def machine() -> str:
    """Cores and CPU model of this machine, e.g. ``2 cores, AMD EPYC 7B13``."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {model}"


def readme_table(notebooks: list[str], sets: list[str], times: dict[str, dict[str, float]],
                 load: tuple[float, float] | None = None) -> str:
    """The README's block: the table of seconds per notebook and set, the totals, and how it was made
    (``load``: the 1-minute load average at the start and the end of the measurement)."""
    commit = os.environ.get("COLLABLAB_COMMIT") or subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip() or "?"
    lines = ["| notebook | " + " | ".join(sets) + " |", "|---|" + "---:|" * len(sets)]
    lines += [f"| `{nb}` | " + " | ".join(f"{times[nb][s]:.0f} s" for s in sets) + " |" for nb in notebooks]
    lines.append("| all seven | " + " | ".join(_fmt(sum(times[nb][s] for nb in notebooks)) for s in sets) + " |")
    lines += ["", f"Wall seconds per notebook through `collablab run NN --params <set>`, offline (heuristic), "
                  f"each set in a fresh outputs folder (MECoBench's task suite is generated once, in notebook "
                  f"01's share). Written by `python benchmarks/notebook_suite.py --readme` on "
                  f"{time.strftime('%Y-%m-%d')} at commit `{commit}`, {machine()}"
                  + (f"; 1-minute load average {load[0]:.1f} at the start and {load[1]:.1f} at the end "
                     f"(above {os.cpu_count()}: other work shared the cores and the times are longer)"
                     if load and max(load) > (os.cpu_count() or 1) else "") + "."]
    lines[-1] = textwrap.fill(lines[-1], width=100, break_on_hyphens=False, break_long_words=False)
    return "\n".join(lines)


def check_markers(readme: Path) -> str:
    text = readme.read_text()
    if START not in text or END not in text or text.index(START) > text.index(END):
        raise SystemExit(f"--readme: {readme} has no {START} ... {END} markers")
    return text


def write_readme(readme: Path, block: str) -> None:
    """Replace the text between the timings markers of ``readme`` by ``block`` (read again just before)."""
    text = check_markers(readme)
    new = re.sub(re.escape(START) + r".*?" + re.escape(END), lambda _: f"{START}\n{block}\n{END}", text,
                 count=1, flags=re.S)
    readme.write_text(new)


def cell_times(path: Path) -> list[tuple[float, str]]:
    """(seconds, first source line) of every code cell of an executed notebook."""
    out = []
    for c in json.loads(path.read_text())["cells"]:
        if c["cell_type"] == "code":
            first = next((ln for ln in "".join(c["source"]).splitlines() if ln.strip()), "")[:60]
            out.append((float(c["metadata"].get("papermill", {}).get("duration") or 0.0), first))
    return out


if __name__ == "__main__":
    main()
