"""Four-view renders per second, and the world's step rate with the rendered view rule on vs off.

  renders   collablab.world.eyes.render_agent (B.1's four 256x256 views of the agent's room) at
            every pose of benchmarks/seen_agreement.py (room centres, in front of each piece of
            furniture, at each door), each pose once (no cache)
  steps     the same fixed action stream (per agent: into a room, to each piece of furniture seen
            from its centre, on to the next room) through Household.step with every agent's
            observe() before each step (what a policy reads), seen="formula" vs seen="rendered",
            interleaved rounds, best of; the ratio rendered/formula is printed
on one paper-scale generated apartment and, when ../shared/data is present, on a real MECoBench
scene.

    python benchmarks/render_rate.py [--agents 2] [--steps 40] [--rounds 3]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from seen_agreement import poses

from collablab.studies.mecobench import load_tasks, task_from_record
from collablab.studies.mecobench.suite import generate_task, suite_plan
from collablab.world import Household, eyes
from collablab.world.actions import Action
from collablab.world.scene import STRUCTURAL_CATEGORIES

SHARED_TASKS = Path(__file__).resolve().parents[2] / "shared" / "data" / "mecobench" / "parallel_5.json"


def render_rate(task) -> tuple[float, int]:
    """(four-view renders per second, poses) over every pose of every room."""
    n, secs = 0, 0.0
    for room in sorted(task.scene.rooms):
        w = Household(task.scene, 1, [room], task.goal, seed=0)
        for point, spot, heading, door in poses(w, room):
            w.pos[0], w.spot[0], w.heading[0], w.at_door[0] = point, spot, heading, door
            t0 = time.perf_counter()
            eyes.render_agent(w, 0)
            secs += time.perf_counter() - t0
            n += 1
    return n / secs, n


def stream(task, agent: int) -> list[Action]:
    """Per room (rotated per agent): walk in, walk to each large piece of furniture both rules see."""
    rooms = sorted(task.scene.rooms)
    rooms = rooms[agent % len(rooms):] + rooms[:agent % len(rooms)]
    probe = {s: Household(task.scene, 1, [rooms[0]], task.goal, seed=0, seen=s) for s in ("formula", "rendered")}
    out: list[Action] = []
    for room in rooms:
        out.append(Action("walk_to_room", room=task.scene.rooms[room]))
        for s, w in probe.items():
            if w.agent_room(0) != room:
                w.step({0: Action("walk_to_room", room=task.scene.rooms[room])})
        for nid in probe["formula"].members(room):
            n = task.scene.nodes[nid]
            if (n["category"] in STRUCTURAL_CATEGORIES or task.scene.is_door_node(nid)
                    or "GRABBABLE" in n.get("properties", ())):
                continue
            if all(w.visible(0, nid) for w in probe.values()):
                out += [Action("walk", obj=nid), Action("walk_to_room", room=task.scene.rooms[room])]
    return out


def step_rate(task, seen: str, agents: int, steps: int, plans: list[list[Action]]) -> float:
    """Agent-steps per second (observe + step) under one view rule."""
    start = sorted(task.scene.rooms)[0]
    w = Household(task.scene, agents, [start] * agents, task.goal, seed=0, seen=seen)
    t0 = time.perf_counter()
    for k in range(steps):
        for a in range(agents):
            w.observe(a)
        w.step({a: plans[a][k % len(plans[a])] for a in range(agents)})
    return steps * agents / (time.perf_counter() - t0)


def measure(task, agents: int, steps: int, rounds: int) -> None:
    rr, n_poses = render_rate(task)
    plans = [stream(task, a) for a in range(agents)]
    fo, re = [], []
    for _ in range(rounds):  # interleaved so machine noise hits both alike
        fo.append(step_rate(task, "formula", agents, steps, plans))
        re.append(step_rate(task, "rendered", agents, steps, plans))
    f, r = max(fo), max(re)
    print(f"{task.scene.name}: task {task.task_id}, {len(task.scene.nodes)} nodes, {len(task.scene.rooms)} rooms")
    print(f"  four-view renders   : {rr:8.1f} /s  ({n_poses} poses, 4 x 256 x 256 each)")
    print(f"  steps, formula rule : {f:8.1f} agent-steps/s  (observe + step, {agents} agents, {steps} steps, "
          f"best of {rounds})")
    print(f"  steps, rendered rule: {r:8.1f} agent-steps/s")
    print(f"  ratio rendered/formula: {r / f:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agents", type=int, default=2)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tasks", type=Path, default=SHARED_TASKS, help="a MECoBench task file (real scene)")
    args = ap.parse_args()
    idx, tpl, k, apt = suite_plan(0)[0]
    measure(task_from_record(generate_task(idx, tpl, k, apt, 0)[0]), args.agents, args.steps, args.rounds)
    if args.tasks.is_file():
        measure(load_tasks(args.tasks)[0], args.agents, args.steps, args.rounds)
    else:
        print(f"{args.tasks} not present: real-scene measurement skipped")


if __name__ == "__main__":
    main()
