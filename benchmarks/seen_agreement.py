"""How often the formula view rule and the rendered view rule disagree about what an agent sees.

Both rules use MECoBench's evaluator thresholds (>= 400 px within 5 m, or >= 60,000 px at any
distance; collablab.world.views): the formula sizes each object as (128 * largest side / horizontal
distance)^2 with no occlusion; the rendered rule counts its visible pixels in the agent's four
256x256 views (collablab.world.camera / eyes: B.1's camera at 1.8 m pitched down 30 degrees, with
occlusion). Poses per room: its centre (facing its first door), in front of every piece of
furniture (walked to from the room's centre) and at every door. Candidates: every node of the room
an agent could act on (not a room, wall, floor, ceiling or door-jamb alias; not inside a closed
container). Printed per scene set and object size class (largest side: small < 0.3 m, medium
< 1 m, large): pairs seen by the formula, by the render, and both directions' disagreement rates;
then for the grabbable objects alone, and for a grabbable object seen from in front of the furniture
it lies on or in ("at its spot": where an agent walks to pick it up).

    python benchmarks/seen_agreement.py [--tasks 16] [--real FILE] [--vh DIR]
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

from collablab.studies.mecobench import task_from_record
from collablab.studies.mecobench.suite import generate_suite
from collablab.world import Household, load_virtualhome_graph
from collablab.world.scene import STRUCTURAL_CATEGORIES, Scene
from collablab.world.views import horizontal_distance

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
SIZE_CLASSES = (("small <0.3m", 0.3), ("medium <1m", 1.0), ("large", float("inf")))


def size_class(extent: float) -> str:
    return next(name for name, top in SIZE_CLASSES if extent < top)


def poses(w: Household, room: int) -> list[tuple[tuple[float, float], int, tuple[float, float], int | None]]:
    """(point, spot, heading, door) an agent can stand at in ``room`` (module docstring)."""
    c = w.stand_point(room)
    out = [(c, room, w.heading[0], None)]
    for nid in w.members(room):
        n = w.scene.nodes[nid]
        if (n["category"] in STRUCTURAL_CATEGORIES or w.scene.is_door_node(nid)
                or "GRABBABLE" in n.get("properties", ()) or w.box3(nid) is None):
            continue
        p = w.stand_point(nid)
        d = horizontal_distance(c, p)
        out.append((p, nid, ((p[0] - c[0]) / d, (p[1] - c[1]) / d) if d > 1e-6 else (0.0, 1.0), None))
    for door in w.scene.doors_of(room):
        p = w.stand_point(door.id, 0)
        d = horizontal_distance(c, p)
        out.append((p, door.id, ((p[0] - c[0]) / d, (p[1] - c[1]) / d) if d > 1e-6 else (0.0, 1.0), door.id))
    return out


def measure(scenes: list[tuple[Scene, list]], label: str) -> None:
    """Count (pose, object) pairs seen by each rule in every room of every scene."""
    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # pairs, formula, render, both
    n_poses = n_disagree = 0
    t0 = time.perf_counter()
    for scene, goal in scenes:
        for room in sorted(scene.rooms):
            w = Household(scene, 1, [room], goal, seed=0, seen="rendered")
            for point, spot, heading, door in poses(w, room):
                w.pos[0], w.spot[0], w.heading[0], w.at_door[0] = point, spot, heading, door
                views = w.views(0)
                n_poses += 1
                differs = False
                for nid in w.members(room):
                    n = scene.nodes[nid]
                    if (n["category"] in STRUCTURAL_CATEGORIES or nid in w.char_ids or nid in (scene.aliases or {})
                            or w.hidden_by(nid) is not None or w.box3(nid) is None):
                        continue
                    f = w.sees_from(point, nid)
                    r = w.view.sees_area(views.total(nid), horizontal_distance(point, w.center_of(nid)))
                    differs |= f != r
                    kinds = [size_class(max(w.box3(nid)[1]))]
                    if "GRABBABLE" in n.get("properties", ()):
                        kinds.append("grabbable")
                        if w.anchor(nid) == spot:
                            kinds.append("at its spot")
                    for k in kinds + ["all"]:
                        t = tally[(label, k)]
                        t[0] += 1
                        t[1] += f
                        t[2] += r
                        t[3] += f and r
                n_disagree += differs
    secs = time.perf_counter() - t0
    print(f"\n{label}: {len(scenes)} scene(s), {n_poses} poses ({secs:.0f} s); "
          f"poses where the rules disagree on some object: {n_disagree / max(n_poses, 1):.1%}")
    print(f"  {'objects':<13}{'pairs':>8}{'formula':>9}{'render':>8}{'both':>7}"
          f"{'formula-not-render':>20}{'render-not-formula':>20}")
    for k in [name for name, _ in SIZE_CLASSES] + ["grabbable", "at its spot", "all"]:
        pairs, f, r, both = tally[(label, k)]
        if not pairs:
            continue
        print(f"  {k:<13}{pairs:>8}{f:>9}{r:>8}{both:>7}"
              f"{(f - both) / max(f, 1):>19.1%} {(r - both) / max(r, 1):>19.1%}")
    print("  (formula-not-render: share of the formula's seen pairs the render does not see; "
          "render-not-formula: the reverse)")
    pairs, f, r, _ = tally[(label, "at its spot")]
    if pairs:
        print(f"  a grabbable object seen from its own furniture: formula {f / pairs:.1%}, render {r / pairs:.1%}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", type=int, default=16, help="generated parallel tasks (8 apartments, own placements)")
    ap.add_argument("--real", type=Path, default=SHARED / "mecobench" / "parallel_5.json")
    ap.add_argument("--vh", type=Path, default=SHARED / "virtualhome" / "example_graphs")
    args = ap.parse_args()
    recs = [r for r in generate_suite(0, limit=args.tasks) if r.get("task_id", "").endswith("-p")]
    gen = [(t.scene, t.goal) for t in map(task_from_record, recs)]
    measure(gen, "generated suite")
    if args.real.is_file():
        import json

        data = json.loads(args.real.read_text())
        records = data if isinstance(data, list) else data.get("tasks", data)
        real = [(t.scene, t.goal) for t in map(task_from_record, records)]
        measure(real, f"MECoBench {args.real.name}")
    else:
        print(f"{args.real} not present: MECoBench scenes skipped")
    graphs = sorted(args.vh.glob("TestScene*_graph.json")) if args.vh.is_dir() else []
    if graphs:
        measure([(load_virtualhome_graph(p), []) for p in graphs if not p.name.startswith("Trimmed")],
                f"VirtualHome {len(graphs)} TestScene graphs")
    else:
        print(f"{args.vh}: no VirtualHome TestScene graphs; skipped")


if __name__ == "__main__":
    main()
