"""Two rhythm bugs the step-use breakdown showed on sequential tasks in the published shape
(issue 28; mecobench.txt §3.1 sequential tasks, appendix B.3 handover):

- a served offer kept the receiver at the door: it answered ``receive`` for three more steps
  after taking the object, while the giver walked off to fetch the next one;
- a giver that handed one of two objects over walked off with the other;
- a carrier that could not see its target from where it stood (a door of a large room, one
  corner of it) and had searched the room already waited with the object in hand.

Both are read from episodes stepped by hand on the generated sequential shape of the suite's
parallel tasks, and on the real parallel file's scenes when ``../shared/data`` holds it. Before
the fix these episodes held 48 stale receives and a receiver idle 7 steps in a row with an object
for its own room (with the real file present).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collablab.studies.mecobench.episode import EpisodeConfig, make_world
from collablab.studies.mecobench.handover_shape import sequential_of
from collablab.studies.mecobench.spec import make_team, resolve
from collablab.studies.mecobench.suite import generate_suite
from collablab.studies.mecobench.tasks import task_from_record

REAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "mecobench" / "parallel_5.json"


def _shaped(records: list[dict]) -> list[dict]:
    out = []
    for r in records:
        try:
            out.append(sequential_of(r))
        except ValueError:
            pass
    return out


def _stepped(record: dict, seed: int, profile: str = "strong") -> list[dict]:
    """One broadcast episode stepped by hand: per step and agent, the action, its note, what the
    agent held before acting and the messages of that step."""
    task = task_from_record(record)
    team = make_team(resolve({"task_id": "rhythm", "n_agents": 2, "protocol": "broadcast", "profile": profile,
                              "seed": seed}))
    cfg = EpisodeConfig(n_agents=2, seed=seed)
    world = make_world(task, 2, seed)
    team.reset(world, task, seed)
    rows = []
    for t in range(cfg.resolved_budget(task) // 2):
        if world.success():
            break
        held = {a: list(world.holding(a)) for a in range(2)}
        turns = team.act(world)
        results = world.step({a: turn.action for a, turn in turns.items()})
        said = " ".join(turns[a].message or "" for a in turns)
        for r in results:
            rows.append({"step": t, "agent": r.agent, "action": r.action.name, "feedback": r.feedback,
                         "note": turns[r.agent].note or "", "held": held[r.agent], "said": said})
    return rows


def _records() -> list[dict]:
    shaped = _shaped([r for r in generate_suite(limit=12) if r["structure"] == "parallel"])
    if REAL.exists():
        data = json.loads(REAL.read_text())
        shaped += _shaped(data if isinstance(data, list) else list(data.values()))
    return shaped


@pytest.fixture(scope="module")
def episodes() -> list[list[dict]]:
    recs = _records()
    assert len(recs) >= 4
    return [_stepped(r, seed) for r in recs for seed in (0, 1)]


def test_a_receiver_stops_receiving_once_the_offer_is_served(episodes):
    """After a successful receive, the receiver answers ``receive`` again only while a teammate
    offers something at a door (its message says so that step)."""
    stale = 0
    for rows in episodes:
        got = {(r["step"], r["agent"]) for r in rows if r["action"] == "receive" and "you received" in r["feedback"]}
        for r in rows:
            if (r["action"] == "receive" and (r["step"] - 1, r["agent"]) in got and not r["note"].startswith("lost")
                    and "to receive it" not in r["said"]):
                stale += 1
    assert stale == 0, stale


def test_a_carrier_never_idles_with_an_object_for_its_own_zone(episodes):
    """No agent waits two steps in a row holding an object it could deliver itself, unless it
    believes the task complete or lost track (the profile's slips)."""
    worst = 0
    for rows in episodes:
        run: dict[int, int] = {}
        for r in rows:
            idle = (r["action"] == "wait" and r["held"] and r["note"] in ("delivering", "fetching", "nothing to do"))
            run[r["agent"]] = run.get(r["agent"], 0) + 1 if idle and r["agent"] == 1 else 0
            worst = max(worst, run[r["agent"]])
    assert worst < 2, worst


def test_a_giver_at_the_door_empties_its_hands(episodes):
    """A giver that handed one of two held objects over hands the second over next, while its
    receiver stands at the door, instead of carrying it off to fetch another first."""
    carried_off = 0
    for rows in episodes:
        giver = {r["step"]: r for r in rows if r["agent"] == 0}
        for t, r in giver.items():
            nxt = giver.get(t + 1)
            if (r["action"] == "handover" and "you handed" in r["feedback"] and len(r["held"]) == 2
                    and nxt is not None and not nxt["note"].startswith(("lost", "random"))):
                carried_off += nxt["action"] not in ("handover", "wait")
    assert carried_off == 0, carried_off
