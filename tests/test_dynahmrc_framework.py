"""DynaHMRC's collaboration loop with the offline backend (dynahmrc.tex §3.2-3.4,
``algo:collaboration``, §4.3, ``tab:ablation``): leader election and the referee, the bounded
memory queues and what the history / feedback ablations leave in a context, reflection timing,
the four dynamic variations through :func:`spec.run_spec`, the implicit placing rule learnt from
Place Failed (4), the feedback ablation's direction, record schema and determinism.

Everything is offline (:class:`offline.OfflineBrain`) and deterministic; assertions on episodes
are over sets of generated tasks, not one seed.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from collablab.studies.dynahmrc import spec as spec_mod
from collablab.studies.dynahmrc.brain import Reply
from collablab.studies.dynahmrc.framework import Config, run_episode
from collablab.studies.dynahmrc.offline import OfflineBrain
from collablab.studies.dynahmrc.robots import COMPOSITIONS, MANIPULATION
from collablab.studies.dynahmrc.spec import RECORD_SCHEMA, brain_maker, make_world, resolve, run_spec, task_of
from collablab.studies.dynahmrc.variations import Variation, plan_variation


class Recording:
    """An OfflineBrain that records every context it is given, per stage."""

    def __init__(self, inner, log):
        assert isinstance(inner, OfflineBrain)
        self.inner, self.log = inner, log
        self.label = inner.label

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def _rec(self, stage, ctx):
        self.log.append((stage, ctx.name, ctx.step, ctx))

    def describe(self, ctx):
        self._rec("SD", ctx)
        return self.inner.describe(ctx)

    def propose(self, ctx):
        self._rec("TALB", ctx)
        return self.inner.propose(ctx)

    def vote(self, ctx, candidates):
        self._rec("LE", ctx)
        return self.inner.vote(ctx, candidates)

    def referee(self, ctx, candidates):
        self._rec("REF", ctx)
        return self.inner.referee(ctx, candidates)

    def act(self, ctx):
        self._rec("HMRC", ctx)
        return self.inner.act(ctx)

    def move_offset(self, ctx):
        self._rec("MOVE", ctx)
        return self.inner.move_offset(ctx)

    def reflect(self, ctx):
        self._rec("GD", ctx)
        return self.inner.reflect(ctx)

    def update_plan(self, ctx):
        self._rec("LP", ctx)
        return self.inner.update_plan(ctx)


class SelfVoter(Recording):
    """Always votes for itself: with distinct robots every round is a tie."""

    def vote(self, ctx, candidates):
        self._rec("LE", ctx)
        return Reply(text=f"Leader: {ctx.name}", value=ctx.name)


def episode(spec, config=None, wrap=Recording):
    """Run the spec's task with run_episode directly; returns (log, world, recorded contexts)."""
    s = resolve(spec)
    task = task_of(s)
    world = make_world(task)
    make = brain_maker(s)
    rec = []
    brains = {n: wrap(make(n, r.type.code), rec) for n, r in world.robots.items()}
    log = run_episode(world, brains, max_steps=task.max_steps, text=task.text,
                      config=config or spec_mod._config(s))
    return log, world, rec


# -- election -------------------------------------------------------------------------------
@pytest.mark.parametrize("team", ["Ma-MoMa-UAV", "Ma-MoMa-Mo-UAV"])
def test_a_leader_is_elected_within_k_sel_rounds(team):
    for inst in range(3):
        log, world, rec = episode({"team": team, "level": "medium", "instance": inst})
        names = list(world.robots)
        assert log.leader in names and log.leader_type == world.robots[log.leader].type.code
        assert 1 <= log.election_rounds <= 3 and len(log.votes) == log.election_rounds
        for round_ in log.votes:
            assert set(round_) == set(names) and sum(round_.values()) == len(names)
        le = [c for c in log.calls if c["stage"] == "LE"]
        assert len(le) == len(names) * log.election_rounds + (1 if log.referee else 0)
        if not log.referee:
            last = log.votes[-1]
            assert [n for n in names if last[n] == max(last.values())] == [log.leader]
        # the elected leader's proposal is everyone's plan at the first step
        first = {n: ctx for stage, n, _, ctx in rec if stage == "HMRC" and ctx.step == 1}
        assert all(ctx.leader == log.leader for ctx in first.values())
        assert len({ctx.plan.text for ctx in first.values()}) == 1


def test_self_votes_tie_every_round_and_the_referee_decides():
    for k_sel in (1, 3):
        log, world, rec = episode({"team": "Ma-MoMa-Mo-UAV", "level": "medium"}, Config(k_sel=k_sel),
                                  wrap=SelfVoter)
        names = list(world.robots)
        assert log.referee and log.election_rounds == k_sel and len(log.votes) == k_sel
        assert all(set(r.values()) == {1} for r in log.votes)
        refs = [(n, ctx) for stage, n, _, ctx in rec if stage == "REF"]
        assert len(refs) == 1 and refs[0][0] == names[0]
        assert refs[0][1].vote_history == log.votes
        assert log.leader in names
        # later rounds see the earlier rounds' counts
        le = [ctx for stage, _, _, ctx in rec if stage == "LE"]
        assert [len(c.vote_history) for c in le] == [k for k in range(k_sel) for _ in names]


def test_random_votes_with_one_round_sometimes_go_to_the_referee():
    refereed = 0
    for seed in range(12):
        log, _, _ = episode({"team": "Ma-MoMa-Mo-UAV", "level": "medium"},
                            Config(k_sel=1, random_votes=1.0, seed=seed, reflection=False))
        assert log.election_rounds == 1
        refereed += log.referee
        if not log.referee:
            assert sorted(log.votes[0].values())[-1] > sorted(log.votes[0].values())[-2]
    assert 0 < refereed < 12


def test_no_leader_skips_the_election():
    log, _, rec = episode({"team": "Ma-MoMa-UAV", "level": "medium"}, Config(leader=False))
    assert log.leader is None and log.election_rounds == 0 and log.votes == []
    assert not [c for c in log.calls if c["stage"] in ("LE", "LP")]


# -- memory -----------------------------------------------------------------------------------
def _per_robot_steps(log):
    out = defaultdict(list)
    for s in log.steps:
        out[s["robot"]].append(s)
    return out


@pytest.mark.parametrize("team", ["Ma-MoMa-UAV", "Ma-MoMa-Mo-UAV"])
def test_memory_queues_hold_the_latest_k_items(team):
    K, KK = 3, 7
    log, world, rec = episode({"team": team, "level": "medium", "kind": "pack", "instance": 1},
                              Config(memory=K, long_memory=KK, reflect_every=4))
    steps = _per_robot_steps(log)
    n_act = defaultdict(int)
    n_gd = 0
    longest = 0
    for stage, name, t, ctx in rec:
        if stage == "HMRC":
            mine = steps[name][:n_act[name]]  # the robot's earlier actions' records
            n_act[name] += 1
            assert len(ctx.feedback_history) <= K and len(ctx.action_history) <= K
            assert len(ctx.message_history) <= K and len(ctx.feedback_kinds) <= K
            assert ctx.feedback_history == [s["feedback"] for s in mine][-K:]
            assert ctx.action_history == [s["action"] for s in mine][-K:]
            assert ctx.feedback_kinds == [s["kind"] for s in mine][-K:]
            longest = max(longest, len(ctx.feedback_history))
        elif stage == "GD":
            n_gd += 1
            mine = steps[name][:n_act[name]]
            assert len(ctx.feedback_history) <= KK and len(ctx.action_history) <= KK
            assert len(ctx.message_history) <= KK
            assert ctx.feedback_history == [s["feedback"] for s in mine][-KK:]
            assert ctx.action_history == [s["action"] for s in mine][-KK:]
    assert longest == K and n_gd > 0
    assert max(len(c.feedback_history) for st, _, _, c in rec if st == "GD") == KK


def test_without_history_only_the_latest_feedback_and_without_feedback_none():
    log, _, rec = episode({"team": "Ma-MoMa-UAV", "level": "medium"}, Config(history=False))
    steps = _per_robot_steps(log)
    n_act = defaultdict(int)
    for stage, name, _, ctx in rec:
        if stage != "HMRC":
            continue
        mine = steps[name][:n_act[name]]
        n_act[name] += 1
        assert ctx.action_history == ([mine[-1]["action"]] if mine else [])  # the action the feedback answers
        assert ctx.feedback_history == ([mine[-1]["feedback"]] if mine else [])
        assert ctx.feedback_kinds == ([mine[-1]["kind"]] if mine else [])
    assert sum(n_act.values()) > 10

    log, _, rec = episode({"team": "Ma-MoMa-UAV", "level": "medium"}, Config(feedback=False))
    assert rec and all(ctx.feedback_history == [] and ctx.feedback_kinds == [] for _, _, _, ctx in rec)
    acts = [ctx for st, _, _, ctx in rec if st == "HMRC"]
    assert any(ctx.action_history for ctx in acts)  # actions are still remembered
    texts = {s["feedback"] for s in log.steps}
    for ctx in acts:
        shown = " ".join(ctx.message_history + ctx.lessons)
        assert not any(t in shown for t in texts)


# -- reflection -------------------------------------------------------------------------------
def _failing_episode(config):
    """A long episode (medium pack task 0 on the 4-type team runs to the step cap)."""
    return episode({"team": "Ma-MoMa-Mo-UAV", "level": "medium", "kind": "pack"}, config)


@pytest.mark.parametrize("every", [3, 5])
def test_reflection_every_n_steps_from_every_robot_and_one_leader_update(every):
    log, world, rec = _failing_episode(Config(reflect_every=every))
    max_steps = max(s["t"] for s in log.steps)
    done = world.success()
    want = {t for t in range(1, log.ts + 1) if t % every == 0 and t < 30 and not (done and t == log.ts)}
    gd = defaultdict(list)
    lp = defaultdict(list)
    for c in log.calls:
        if c["stage"] == "GD":
            gd[c["step"]].append(c["robot"])
        if c["stage"] == "LP":
            lp[c["step"]].append(c["robot"])
    assert set(gd) == want and len(want) >= 2 and max_steps >= max(want)
    for t in want:
        assert sorted(gd[t]) == sorted(world.robots)
        assert lp[t] == [log.leader]
    # the reflection contexts are the long ones, the plan update reaches every robot
    assert all(ctx.step % every == 0 for st, _, _, ctx in rec if st == "GD")


def test_no_reflection_and_no_leader_update():
    log, _, rec = _failing_episode(Config(reflection=False))
    assert log.ts > 5
    assert not [c for c in log.calls if c["stage"] in ("GD", "LP")]
    assert not [r for r in rec if r[0] in ("GD", "LP")]
    log, world, _ = _failing_episode(Config(leader=False))
    assert [c for c in log.calls if c["stage"] == "GD"] and not [c for c in log.calls if c["stage"] == "LP"]


# -- variations through run_spec --------------------------------------------------------------
def run_captured(spec, monkeypatch):
    """run_spec, also returning its EpisodeLog and final world."""
    seen = {}
    real = spec_mod.run_episode

    def capture(world, brains, **kw):
        log = real(world, brains, **kw)
        seen.update(log=log, world=world)
        return log

    monkeypatch.setattr(spec_mod, "run_episode", capture)
    rec = run_spec(spec)
    return rec, seen["log"], seen["world"]


def test_cto_changes_the_targets_at_T_and_success_uses_the_new_ones(monkeypatch):
    T, successes = 5, 0
    for kind in ("pack", "sort", "sandwich"):
        for inst in range(2):
            sp = {"kind": kind, "team": "Ma-MoMa-UAV", "variation": "CTO", "T": T, "instance": inst}
            rec, log, world = run_captured(sp, monkeypatch)
            s = resolve(sp)
            plan = plan_variation(task_of(s), Variation("CTO", T), seed=s["seed"])
            cto = [e for e in log.events if e["kind"] == "CTO"]
            assert len(cto) == 1 and cto[0]["step"] == T and rec["episode"]["events"][0] == "CTO"
            assert world.targets == plan.targets_after != plan.targets_before
            assert all(new in cto[0]["text"] for _, new in plan.replaced)
            assert all(s["t"] >= 1 for s in rec["steps"])
            if rec["episode"]["success"]:
                successes += 1
                assert world.success() and world.placed_targets() == world.targets
                for old, new in plan.replaced:
                    assert new in world.placed_targets() and old not in world.targets
                    assert world.objects[old].place not in world.receptacles
                    placed_at = [x["t"] for x in rec["steps"]
                                 if x["name"] == "place" and x["ok"] and x["target"] == new]
                    assert placed_at and min(placed_at) >= T
    assert successes >= 1


def test_irz_blocks_a_robot_after_T_and_the_team_still_succeeds_sometimes(monkeypatch):
    T, blocked_after, successes, n = 3, 0, 0, 0
    for kind in ("pack", "sort", "sandwich"):
        for team in ("Ma-MoMa-UAV", "Ma-MoMa-Mo-UAV"):
            for inst in range(2):
                rec, log, world = run_captured({"kind": kind, "team": team, "variation": "IRZ", "T": T,
                                                "instance": inst}, monkeypatch)
                n += 1
                ev = [e for e in log.events if e["kind"] == "IRZ"]
                assert ev and ev[0]["step"] == T and ev[0]["zones"]
                zoned = {r for r, _ in ev[0]["zones"]}
                assert zoned <= set(world.robots)
                nf4 = [x for x in rec["steps"] if x["kind"] == "navigation_failed_4"]
                assert all(x["t"] >= T for x in nf4)  # nothing was restricted before T
                blocked_after += any(x["robot"] in zoned for x in nf4)
                successes += rec["episode"]["success"]
    assert blocked_after >= 1 and 1 <= successes < n


def test_anc_adds_a_robot_that_acts_only_after_T(monkeypatch):
    T, acted, successes = 5, 0, 0
    for kind in ("pack", "sort", "sandwich"):
        for team in ("Ma-MoMa", "Ma-UAV"):
            for inst in range(2):
                rec, log, world = run_captured({"kind": kind, "team": team, "variation": "ANC", "T": T,
                                                "instance": inst}, monkeypatch)
                ev = [e for e in log.events if e["kind"] == "ANC"]
                if log.ts < T:
                    assert ev == []
                    continue
                assert len(ev) == 1 and ev[0]["step"] == T
                new = ev[0]["robot"]
                assert new not in team.split("-") and new in world.robots and new in log.participants
                mine = [x for x in rec["steps"] if x["robot"] == new]
                assert mine and min(x["t"] for x in mine) == T
                assert all(x["type"] == ev[0]["code"] for x in mine)
                # it describes itself and the leader updates the plan at once
                assert any(c["stage"] == "SD" and c["robot"] == new and c["step"] == T for c in log.calls)
                assert any(c["stage"] == "LP" and c["step"] == T for c in log.calls)
                acted += any(x["ok"] and x["name"] in ("navigate", "pick", "place", "open") for x in mine)
                successes += rec["episode"]["success"]
    assert acted >= 3 and successes >= 1


def test_rec_removes_a_robot_that_never_acts_again(monkeypatch):
    T, successes, n = 5, 0, 0
    for kind in ("pack", "sort", "sandwich"):
        for team in ("Ma-MoMa-UAV", "Ma-MoMa-Mo-UAV"):
            for inst in range(2):
                rec, log, world = run_captured({"kind": kind, "team": team, "variation": "REC", "T": T,
                                                "instance": inst}, monkeypatch)
                n += 1
                successes += rec["episode"]["success"]
                ev = [e for e in log.events if e["kind"] == "REC"]
                if log.ts < T:
                    continue
                assert len(ev) == 1 and ev[0]["step"] == T
                gone = ev[0]["robot"]
                assert not world.robots[gone].active
                before = [x for x in rec["steps"] if x["robot"] == gone]
                assert before and all(x["step"] < T for x in before)
                assert not [c for c in log.calls if c["robot"] == gone and c["step"] >= T]
    assert 1 <= successes < n


# -- the implicit placing rule ----------------------------------------------------------------
receptacles = {"tray_0", "cutting_board_0", *(f"{c}_panel" for c in ("red", "orange", "yellow", "green", "blue",
                                                                      "purple"))}


def test_a_mover_learns_the_placing_rule_and_the_manipulator_places():
    episodes_with_rule = handed = 0
    for kind in ("pack", "sort", "sandwich"):
        for team in COMPOSITIONS:
            for inst in range(3):
                rec = run_spec({"kind": kind, "team": team, "level": "medium", "instance": inst})
                steps = rec["steps"]
                fails = [(i, x) for i, x in enumerate(steps) if x["kind"] == "place_failed_4"]
                if not fails:
                    continue
                episodes_with_rule += 1
                for i, x in fails:
                    assert x["type"] not in MANIPULATION
                    obj = x["target"]
                    later = steps[i + 1:]
                    # the same mover never again tries that object onto the receptacle
                    assert not [y for y in later if y["robot"] == x["robot"] and y["name"] == "place"
                                and y["target"] == obj and y["where"] in receptacles], (rec["episode"]["unit"], x)
                    into = [y for y in later if y["name"] == "place" and y["ok"] and y["target"] == obj
                            and y["where"] in receptacles]
                    if into:
                        assert into[0]["type"] in MANIPULATION, (rec["episode"]["unit"], into[0])
                        handed += 1
    print(f"place_failed_4 in {episodes_with_rule} episodes; {handed} objects then placed by Ma")
    assert episodes_with_rule >= 10 and handed >= 10


def test_without_feedback_movers_repeat_the_forbidden_placement():
    """The contrast: the rule is learnt from the feedback text, so without it movers retry."""
    repeats = 0
    for kind in ("pack", "sort", "sandwich"):
        for team in ("Ma-MoMa", "Ma-UAV", "Ma-MoMa-UAV"):
            for inst in range(3):
                steps = run_spec({"kind": kind, "team": team, "level": "medium", "instance": inst,
                                  "feedback": False})["steps"]
                for i, x in enumerate(steps):
                    if x["kind"] == "place_failed_4":
                        repeats += any(y["robot"] == x["robot"] and y["name"] == "place" and y["target"] == x["target"]
                                       and y["where"] in receptacles for y in steps[i + 1:])
    assert repeats >= 3


# -- ablation direction -----------------------------------------------------------------------
ABLATIONS = {"full": {}, "no_history": {"history": False}, "no_feedback": {"feedback": False},
             "no_leader": {"leader": False}, "no_reflection": {"reflection": False}}


def succ(ablation):
    runs = [run_spec({"kind": kind, "team": team, "level": "medium", "instance": inst, **ABLATIONS[ablation]})
            for kind in ("pack", "sort", "sandwich") for team in COMPOSITIONS for inst in range(3)]
    return sum(r["episode"]["success"] for r in runs) / len(runs)


def test_feedback_ablation_lowers_success():
    full, no_feedback = succ("full"), succ("no_feedback")
    assert no_feedback < full


# -- records ----------------------------------------------------------------------------------
def _check(schema, value, where):
    for key in schema.get("required", []):
        assert key in value, f"{where}: missing {key}"
    for key, rule in schema.get("properties", {}).items():
        if key not in value:
            continue
        v = value[key]
        if v is None and "null" in (rule.get("type") if isinstance(rule.get("type"), list) else [rule.get("type")]):
            continue  # a nullable field (COHERENT's cc: the paper reports none)
        if isinstance(rule.get("type"), list):
            rule = {**rule, "type": next(t for t in rule["type"] if t != "null")}
        if "const" in rule:
            assert v == rule["const"], (where, key, v)
        if "enum" in rule:
            assert v in rule["enum"], (where, key, v)
        if rule.get("type") == "boolean":
            assert isinstance(v, bool), (where, key, v)
        if rule.get("type") == "integer":
            assert isinstance(v, int) and not isinstance(v, bool), (where, key, v)
        if rule.get("type") == "number":
            assert isinstance(v, (int, float)) and not isinstance(v, bool), (where, key, v)
        if "minimum" in rule:
            assert v >= rule["minimum"], (where, key, v)
        if "maximum" in rule:
            assert v <= rule["maximum"], (where, key, v)


@pytest.mark.parametrize("sp", [
    {"kind": "pack", "team": "Ma-MoMa-Mo-UAV", "level": "medium"},
    {"kind": "sandwich", "team": "Ma-UAV", "variation": "ANC", "T": 5},
    {"kind": "sort", "team": "Ma-MoMa-UAV", "variation": "IRZ", "T": 3, "method": "coherent"},
    {"kind": "pack", "team": "Ma-MoMa-UAV", "method": "coela", "feedback": False},
])
def test_run_spec_records_follow_the_schema_and_are_deterministic(sp):
    rec = run_spec(sp)
    assert rec["steps"]
    _check(RECORD_SCHEMA["episode"], rec["episode"], "episode")
    for i, x in enumerate(rec["steps"]):
        _check(RECORD_SCHEMA["step"], x, f"steps[{i}]")
    steps = [x["t"] for x in rec["steps"]]
    assert steps == sorted(steps) and steps[-1] == rec["episode"]["ts"]
    try:
        import jsonschema
    except ImportError:  # pragma: no cover
        jsonschema = None
    if jsonschema is not None:
        jsonschema.validate(rec["episode"], RECORD_SCHEMA["episode"])
        for x in rec["steps"]:
            jsonschema.validate(x, RECORD_SCHEMA["step"])
    assert run_spec(dict(sp)) == rec
    other = run_spec(dict(sp, seed=1))
    assert other["episode"]["unit"] == rec["episode"]["unit"]  # the seed is not part of the unit id
