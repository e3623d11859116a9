"""Where a heuristic broadcast pair's steps go on sequential tasks, per profile, side by side:

  generated   the generator's sequential tasks (suite, a door split of the apartment)
  shaped      the generator's parallel tasks made sequential in the published shape
              (studies/mecobench/handover_shape.py: receiver in the target room only)
  real        the real parallel file's tasks in that shape (--tasks FILE, or ../shared/data's
              MECoBench parallel file when present)

For each set and profile: SR, CR, team steps used of the 80-step budget, handover failures, and
the share of steps in each use of studies/mecobench/step_use.py (walking, searching, waiting,
handing over, failed actions, conflicts), beside Table 8's two-agent sequential SR of the model the
profile was calibrated on (beside.PROFILE_MODELS).

    python benchmarks/sequential_steps.py [--seeds 4] [--suite-tasks 24] [--profiles strong,medium,weak] [--per-task]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from collablab.analysis.beside import same_model
from collablab.studies.mecobench.beside import PROFILE_MODELS, published_tables
from collablab.studies.mecobench.episode import EpisodeConfig, run_episode
from collablab.studies.mecobench.handover_shape import sequential_of
from collablab.studies.mecobench.spec import make_team, resolve
from collablab.studies.mecobench.step_use import USES, step_use
from collablab.studies.mecobench.suite import generate_suite
from collablab.studies.mecobench.tasks import task_from_record

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "mecobench" / "parallel_5.json"


def _shaped(records: list[dict]) -> list[dict]:
    out = []
    for r in records:
        try:
            out.append(sequential_of(r))
        except ValueError:  # every goal object already in the target room: no handover to make
            pass
    return out


def _row(name: str, profile: str, records: list[dict], seeds: int) -> dict:
    """One row over ``records`` (one row per task: call it with one record)."""
    eps, uses = [], {u: 0 for u in USES}
    for r in records:
        task = task_from_record(r)
        goal = {p.obj_class for p in task.goal}
        names = {n["id"]: n["class_name"] for n in task.scene.graph["nodes"]}
        targets = {names[p.target_id] for p in task.goal}
        for seed in range(seeds):
            team = make_team(resolve({"task_id": "bench", "n_agents": 2, "protocol": "broadcast", "profile": profile,
                                      "seed": seed}))
            out = run_episode(task, team, EpisodeConfig(n_agents=2, seed=seed))
            eps.append(out["episode"])
            for u, k in step_use(out["steps"], goal, targets).items():
                uses[u] += k
    total = sum(uses.values()) or 1
    return {"set": name, "profile": profile, "tasks": len(records) if len(records) > 1 else records[0]["task_id"],
            "episodes": len(eps),
            "SR": sum(e["success"] for e in eps) / len(eps), "CR": sum(e["cr"] for e in eps) / len(eps),
            "steps": sum(e["team_steps"] for e in eps) / len(eps),
            "handover failures": sum(e["handover_failures"] for e in eps) / len(eps),
            **{u: uses[u] / total for u in USES}}


def _table8() -> dict[str, float]:
    t = published_tables()["table08"].rows
    t = t[(t["structure"] == "sequential") & (t["n_agents"] == 2) & (t["metric"] == "SR")]
    out = {}
    for profile, model in PROFILE_MODELS.items():
        rows = t[[same_model(m, model) for m in t["model"]]]
        out[profile] = float(rows["value"].iloc[0]) if len(rows) else float("nan")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--suite-tasks", type=int, default=24, help="generated tasks of each structure")
    ap.add_argument("--profiles", default="strong,medium,weak")
    ap.add_argument("--tasks", type=Path, default=SHARED if SHARED.exists() else None)
    ap.add_argument("--per-task", action="store_true", help="one row per task instead of per set")
    a = ap.parse_args(argv)
    suite = generate_suite(limit=a.suite_tasks)
    sets = {"generated": [r for r in suite if r["structure"] == "sequential"],
            "shaped": _shaped([r for r in suite if r["structure"] == "parallel"])}
    if a.tasks is not None:
        sets["real"] = _shaped(json.loads(a.tasks.read_text()))
    paper = _table8()
    groups = [(name, [r] if a.per_task else recs) for name, recs in sets.items() for r in (recs if a.per_task else recs[:1])]
    rows = [_row(name, p, recs, a.seeds) for p in a.profiles.split(",") for name, recs in groups]
    t = pd.DataFrame(rows)
    t.insert(5, "paper SR", t["profile"].map(paper))
    pd.set_option("display.width", 200)
    print(t.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
