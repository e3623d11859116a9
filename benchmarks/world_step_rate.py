"""Agent-steps per second: VirtualHome's raw executor vs our multi-agent world, side by side.

The same fixed action stream (walk to a room, to the furniture an object lies on, to the object,
grab it, walk to the goal room and the goal surface, put it there, grab it again and carry it back
home) runs through
  raw    ScriptExecutor.execute_one_step(..., in_place=True) on one EnvironmentState
  world  collablab Household.step (views and bodies, legality checks, conflicts, room fixes, goal
         tracking)
on one paper-scale generated apartment and, when ../shared/data is present (or --tasks names a
MECoBench task file), on a real MECoBench scene; the ratio world/raw is printed (target >= 0.5).

    python benchmarks/world_step_rate.py [--repeats 30] [--agents 2] [--tasks FILE]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from collablab.studies.mecobench import load_tasks, task_from_record
from collablab.studies.mecobench.suite import generate_task, suite_plan
from collablab.world import vh
from collablab.world.actions import Action
from collablab.world.household import Household


def _stream(task, agent_objects):
    """Per agent: a cycle of (world Action, raw script line) pairs over its object."""
    target = task.goal[0].target_id
    troom = task.scene.rooms[task.scene.room_of(target)]
    put = "put_in" if task.goal[0].relation == "inside" else "put_on"
    raw_put = "putin" if put == "put_in" else "putback"
    tname = task.scene.nodes[target]["class_name"]
    cycles = []
    for obj in agent_objects:
        oname = task.scene.nodes[obj]["class_name"]
        oroom_id = task.scene.room_of(obj)
        oroom = task.scene.rooms[oroom_id]
        troom_id = task.scene.room_of(target)
        home = next(e["to_id"] for e in task.scene.graph["edges"] if e["from_id"] == obj and e["relation_type"] == "ON")
        hname = task.scene.nodes[home]["class_name"]
        cycles.append([
            (Action("walk_to_room", room=oroom), f"[walk] <{oroom}> ({oroom_id})"),
            (Action("walk", obj=home), f"[walk] <{hname}> ({home})"),  # small things are seen up close
            (Action("walk", obj=obj), f"[walk] <{oname}> ({obj})"),
            (Action("grab", obj=obj), f"[grab] <{oname}> ({obj})"),
            (Action("walk_to_room", room=troom), f"[walk] <{troom}> ({troom_id})"),
            (Action("walk", obj=target), f"[walk] <{tname}> ({target})"),
            (Action(put, obj=obj, target=target), f"[{raw_put}] <{oname}> ({obj}) <{tname}> ({target})"),
            (Action("grab", obj=obj), f"[grab] <{oname}> ({obj})"),
            (Action("walk_to_room", room=oroom), f"[walk] <{oroom}> ({oroom_id})"),
            (Action("walk", obj=home), f"[walk] <{hname}> ({home})"),
            (Action("put_on", obj=obj, target=home), f"[putback] <{oname}> ({obj}) <{hname}> ({home})"),
            (Action("walk_to_room", room=troom), f"[walk] <{troom}> ({troom_id})"),
        ])
    return cycles


STEPS = 12  # actions per cycle
SHARED_TASKS = Path(__file__).resolve().parents[2] / "shared" / "data" / "mecobench" / "parallel_5.json"


def _objects(task):
    """Goal objects on open furniture outside the goal room, seen from their furniture, whose
    goal target is seen from its room's centre (so the fixed stream is legal in the world)."""
    probe = Household(task.scene, 1, [task.scene.room_of(task.goal[0].target_id)], task.goal, seed=0)
    target = task.goal[0].target_id
    if not probe.sees_from(probe.stand_point(probe.room_of(target)), target):
        return []
    troom = task.scene.room_of(target)
    out = []
    for p in task.goal:
        for o in task.scene.class_ids(p.obj_class):
            on = [e["to_id"] for e in task.scene.graph["edges"] if e["from_id"] == o and e["relation_type"] == "ON"]
            inside = [e["to_id"] for e in task.scene.graph["edges"] if e["from_id"] == o
                      and e["relation_type"] == "INSIDE" and e["to_id"] not in task.scene.rooms]
            if task.scene.room_of(o) == troom or inside or not on or on[0] in task.scene.rooms:
                continue
            room = probe.stand_point(task.scene.room_of(o))
            if probe.sees_from(room, on[0]) and probe.sees_from(probe.stand_point(on[0]), o):
                out.append(o)
    return out


def generated_task():
    """A paper-scale generated apartment's parallel task with two usable objects."""
    for idx, tpl, k, apt in suite_plan(0):
        if tpl.relation != "on":
            continue
        task = task_from_record(generate_task(idx, tpl, k, apt, 0)[0])
        objs = _objects(task)
        if len(objs) >= 2:
            return task, objs[:2]
    raise RuntimeError("no suitable generated task")


def real_task(path: Path):
    """The first task of a MECoBench file with two usable objects, or None."""
    for task in load_tasks(path):
        objs = _objects(task)
        if len(objs) >= 2:
            return task, objs[:2]
    return None


def run_world(task, objs, n_agents, repeats):
    world = Household(task.scene, n_agents, [task.scene.room_of(task.goal[0].target_id)] * n_agents, task.goal, seed=0)
    cycles = _stream(task, objs[:n_agents])
    steps = 0
    t0 = time.perf_counter()
    for _ in range(repeats):
        for k in range(STEPS):
            res = world.step({a: cycles[a][k][0] for a in range(n_agents)})
            assert all(r.ok for r in res), [r.feedback for r in res]
            steps += n_agents
    return steps / (time.perf_counter() - t0)


def run_raw(task, objs, n_agents, repeats):
    eg = vh.load()
    env, ex, sc = eg.environment, eg.execution, eg.scripts
    graph = task.scene.copy_graph()
    first = max(n["id"] for n in graph["nodes"]) + 1
    for a in range(n_agents):
        graph["nodes"].append({"id": first + a, "class_name": "character", "category": "Characters",
                               "properties": [], "states": []})
        graph["edges"].append({"from_id": first + a, "relation_type": "INSIDE", "to_id": task.scene.room_of(task.goal[0].target_id)})
    g = env.EnvironmentGraph(graph)
    state = env.EnvironmentState(g, {}, instance_selection=True)
    executors = [ex.ScriptExecutor(g, {}, char_index=a) for a in range(n_agents)]
    cycles = _stream(task, objs[:n_agents])
    scripts = [[sc.Script([sc.parse_script_line(line, 0)]) for _, line in cyc] for cyc in cycles]
    steps = 0
    t0 = time.perf_counter()
    for _ in range(repeats):
        for k in range(STEPS):
            for a in range(n_agents):
                ok, state = executors[a].execute_one_step(scripts[a][k], state, in_place=True)
                assert ok, executors[a].info.get_error_string()
                steps += 1
    return steps / (time.perf_counter() - t0)


def measure(task, objs, agents: int, repeats: int, rounds: int) -> None:
    raw, world = [], []
    for _ in range(rounds):  # interleave so machine noise hits both alike
        raw.append(run_raw(task, objs, agents, repeats))
        world.append(run_world(task, objs, agents, repeats))
    r, w = max(raw), max(world)
    n = len(task.scene.nodes)
    print(f"{task.scene.name}: task {task.task_id} ({task.name}), {n} nodes, {agents} agents, "
          f"{repeats * STEPS} steps each, best of {rounds}")
    print(f"  raw executor   : {r:9.1f} agent-steps/s")
    print(f"  collablab      : {w:9.1f} agent-steps/s")
    print(f"  ratio world/raw: {w / r:.2f}  (target >= 0.50)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=30, help=f"cycles of {STEPS} actions per agent")
    ap.add_argument("--agents", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3, help="alternating measurement rounds (best of)")
    ap.add_argument("--tasks", type=Path, default=SHARED_TASKS, help="a MECoBench task file (real scene)")
    args = ap.parse_args()
    measure(*generated_task(), args.agents, args.repeats, args.rounds)
    if args.tasks.is_file():
        found = real_task(args.tasks)
        if found is None:
            print(f"{args.tasks}: no task with {args.agents} objects on open furniture outside the goal room")
        else:
            measure(*found, args.agents, args.repeats, args.rounds)
    else:
        print(f"{args.tasks} not present: real-scene measurement skipped")


if __name__ == "__main__":
    main()
