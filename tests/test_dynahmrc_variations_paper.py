"""DynaHMRC's baselines and variations where the paper's claims live (issue 26, dynahmrc.tex §4.2-4.4):
COHERENT keeps the global history of the last M team steps whatever the team size and reports no
CC; after ANC every existing member's next prompts (execution, discussion, leader plan) carry the
newcomer's broadcast self-description; the spec key ``remove`` runs every REC transition of
``tab:removal_exp``; CTO changes the number of targets as well as their types."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

from collablab.studies.dynahmrc.brain import Context, Reply
from collablab.studies.dynahmrc.llm_brain import build_messages, build_team_messages
from collablab.studies.dynahmrc.robots import ANC_TRANSITIONS, ROBOT_TYPES
from collablab.studies.dynahmrc.spec import resolve, run_spec, run_unit
from collablab.studies.dynahmrc.stats import summary_table
from collablab.studies.dynahmrc.tasks import generate_task
from collablab.studies.dynahmrc.variations import Variation, plan_variation

_STEP = re.compile(r"^\(step (\d+)\) (\w+): ")


class Recorder:
    """A brain that records the contexts of every call and otherwise is the wrapped one."""

    def __init__(self, inner: Any, log: list[tuple[str, str, Context]]) -> None:
        self.inner, self.log, self.label = inner, log, inner.label

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _rec(self, stage: str, ctx: Context) -> None:
        self.log.append((stage, ctx.name, ctx))

    def act(self, ctx: Context) -> Reply:
        self._rec("HMRC", ctx)
        return self.inner.act(ctx)

    def coela_plan(self, ctx: Context, options: list) -> Reply:  # CoELA's execution-stage call
        self._rec("HMRC", ctx)
        return self.inner.coela_plan(ctx, options)

    def reflect(self, ctx: Context) -> Reply:
        self._rec("GD", ctx)
        return self.inner.reflect(ctx)

    def update_plan(self, ctx: Context) -> Reply:
        self._rec("LP", ctx)
        return self.inner.update_plan(ctx)


# -- COHERENT: the global history of M team steps --------------------------------------------------
class WaitingPlanner:
    """A central planner that lets every robot wait and records the contexts it is given."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.label, self.seen = inner, inner.label, []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def act_team(self, ctxs: list[Context]) -> Reply:
        self.seen.append(ctxs)
        return Reply("joint", value={c.name: "wait()" for c in ctxs}, tokens_in=1, tokens_out=1)


@pytest.mark.parametrize("team", ["Ma-MoMa", "Ma-MoMa-UAV", "Ma-MoMa-Mo-UAV"])
@pytest.mark.parametrize("memory", [10, 4])
def test_coherent_history_holds_the_last_m_team_steps_whatever_the_team_size(team, memory):
    planners: list[WaitingPlanner] = []

    def wrap(brains: dict) -> dict:
        first = next(iter(brains))
        planners.append(WaitingPlanner(brains[first]))
        return {**brains, first: planners[0]}

    rec, log = run_unit({"method": "coherent", "team": team, "level": "medium", "memory": memory,
                         "max_steps": memory + 4}, wrap_team=wrap)
    n = len(team.split("-"))
    names = list(log.participants)
    seen = planners[0].seen
    assert len(seen) == memory + 4
    for t, ctxs in enumerate(seen, 1):
        hist = ctxs[0].action_history
        steps = [int(_STEP.match(a).group(1)) for a in hist]
        # every robot's entry of each of the last min(M, t-1) completed team steps
        want = list(range(max(1, t - memory), t))
        assert sorted(set(steps)) == want, (t, steps)
        assert Counter(steps) == {s: n for s in want}
        assert [_STEP.match(a).group(2) for a in hist] == names * len(want)
        assert len(ctxs[0].feedback_history) == len(ctxs[0].feedback_kinds) == len(hist)
        assert all(c.action_history == hist for c in ctxs)  # the same global history for every robot
    # the rendered central prompt of the last step holds exactly those M steps
    user = build_team_messages(seen[-1])[1]["content"]
    last = memory + 4
    history = user.split("Global Action History:")[1]
    assert f"(step {last - memory}) " in history and f"(step {last - 1}) " in history
    assert f"(step {last - memory - 1}) " not in history
    assert rec["episode"]["cc"] is None


def test_coherent_reports_no_cc_and_its_tables_show_none():
    eps = [run_spec({"method": m, "team": "Ma-MoMa-UAV", "instance": i})["episode"]
           for m in ("coherent", "dynahmrc") for i in range(2)]
    import pandas as pd

    frame = pd.DataFrame(eps)
    assert frame.loc[frame["method"] == "coherent", "cc"].isna().all()
    assert (frame.loc[frame["method"] == "dynahmrc", "cc"] >= 0).all()
    assert all(isinstance(e["communications"], int) for e in eps)
    for e in eps:  # the record's cc is the communications per robot where it is reported
        if e["cc"] is not None:
            assert e["cc"] == pytest.approx(e["communications"] / e["n_robots"])
    tab = summary_table(frame, "method", n_resamples=50).set_index("method")
    assert pd.isna(tab.loc["coherent", "cc_mean"]) and tab.loc["dynahmrc", "cc_mean"] >= 0


# -- ANC: the newcomer's self-description in every member's prompts -----------------------------
@pytest.mark.parametrize("before", list(ANC_TRANSITIONS))
def test_after_anc_every_member_prompt_names_the_newcomer_and_its_capabilities(before):
    log: list[tuple[str, str, Context]] = []
    T = 3

    def wrap(brains: dict) -> dict:
        return {n: Recorder(b, log) for n, b in brains.items()}

    rec, elog = run_unit({"variation": "ANC", "team": before, "T": T, "kind": "pack", "max_steps": 12},
                         wrap_team=wrap)
    ev = next(e for e in elog.events if e["kind"] == "ANC")
    new, code = ev["robot"], ev["code"]
    members = [n for n in elog.participants if n != new]
    kind = ROBOT_TYPES[code].kind
    description = next(c for st, n, c in log if st == "HMRC" and n == members[0] and c.step >= T).newcomers[new]
    assert kind in description and all(a in description for a in ROBOT_TYPES[code].actions)  # its capabilities
    for stage in ("HMRC", "GD", "LP"):
        for name in (members if stage != "LP" else [elog.leader]):
            before_t = [c for st, n, c in log if st == stage and n == name and c.step < T]
            after_t = [c for st, n, c in log if st == stage and n == name and c.step >= T]
            assert all(not c.newcomers for c in before_t)
            if not after_t:
                continue
            ctx = after_t[0]  # its next call of that stage after the newcomer joined
            assert ctx.newcomers == {new: description}  # the offline backend's Context
            user = build_messages(ctx, stage)[1]["content"]  # the LLM prompt
            assert "New Collaborators:" in user and f"- {new} ({kind}): " in user
            assert all(a in user.split("New Collaborators:")[1] for a in ROBOT_TYPES[code].actions)
    # every existing member acted after T with the newcomer in its prompt, and the leader re-planned
    hmrc_after = {n for st, n, c in log if st == "HMRC" and c.step >= T and c.newcomers}
    assert set(members) <= hmrc_after
    assert any(st == "LP" and c.step == T and c.newcomers for st, n, c in log)
    # the newcomer itself is not its own newcomer
    assert all(new not in c.newcomers for st, n, c in log if n == new)


def test_anc_under_coela_broadcasts_the_self_description_too():
    log: list[tuple[str, str, Context]] = []
    rec, elog = run_unit({"variation": "ANC", "team": "Ma-MoMa", "method": "coela", "max_steps": 8},
                         wrap_team=lambda b: {n: Recorder(x, log) for n, x in b.items()})
    new = next(e for e in elog.events if e["kind"] == "ANC")["robot"]
    assert [c["robot"] for c in elog.calls if c["stage"] == "SD"] == [new]
    after = [c for st, n, c in log if st == "HMRC" and n != new and c.step >= 5]
    assert after and all(new in c.newcomers for c in after)
    # CoELA's planning prompt (its execution-stage call) names the newcomer
    from collablab.studies.dynahmrc.coela import plan_options
    from collablab.studies.dynahmrc.llm_brain import build_plan_messages
    user = build_plan_messages(after[0], plan_options(after[0]))[1]["content"]
    assert "New Collaborators:" in user and f"- {new} (" in user


# -- REC: every transition of tab:removal_exp --------------------------------------------------------
REMOVAL_TABLE = [("Ma-MoMa-UAV", "UAV", "Ma-MoMa"), ("Ma-MoMa-UAV", "MoMa", "Ma-UAV"),
                 ("Ma-MoMa-Mo-UAV", "UAV", "Ma-MoMa-Mo"), ("Ma-MoMa-Mo-UAV", "MoMa", "Ma-Mo-UAV")]


@pytest.mark.parametrize("team,remove,after", REMOVAL_TABLE)
@pytest.mark.parametrize("method", ["dynahmrc", "coherent", "coela", "mcts"])
def test_remove_runs_every_rec_transition_of_the_paper_at_medium(team, remove, after, method):
    T = 5
    sp = {"variation": "REC", "team": team, "remove": remove, "T": T, "method": method,
          "mcts_iterations": 10, "mcts_max_sim_actions": 200}
    rec = run_spec(sp)
    e = rec["episode"]
    assert e["level"] == "medium" and e["remove"] == remove and e["team_after"] == after
    assert "REC" in e["events"]
    gone = ROBOT_TYPES[remove].name
    late = [s for s in rec["steps"] if s["t"] >= T]
    assert late and gone not in {s["robot"] for s in late}
    assert {s["type"] for s in late} <= set(after.split("-"))
    assert run_spec(dict(sp)) == rec  # deterministic


def test_remove_is_checked_with_the_allowed_values_for_the_team():
    with pytest.raises(ValueError, match=r"^remove: 'Ma' not allowed for team Ma-MoMa-UAV; allowed: UAV, MoMa$"):
        resolve({"variation": "REC", "team": "Ma-MoMa-UAV", "remove": "Ma"})
    with pytest.raises(ValueError, match=r"^remove: 'Mo' not allowed for team Ma-MoMa-Mo-UAV; allowed: UAV, MoMa$"):
        resolve({"variation": "REC", "team": "Ma-MoMa-Mo-UAV", "remove": "Mo"})
    with pytest.raises(ValueError, match=r"^remove: 'UAV' not allowed with variation 'ANC'; allowed: None"):
        resolve({"variation": "ANC", "team": "Ma-MoMa", "remove": "UAV"})
    assert resolve({"variation": "REC", "team": "Ma-MoMa-UAV"})["remove"] is None
    # the default removal keeps the unit id it always had; another one names itself
    a = run_spec({"variation": "REC", "team": "Ma-MoMa-UAV", "max_steps": 6})["episode"]
    b = run_spec({"variation": "REC", "team": "Ma-MoMa-UAV", "remove": "MoMa", "max_steps": 6})["episode"]
    assert a["unit"].endswith("/REC/r0") and b["unit"].endswith("/REC-MoMa/r0")
    assert (a["remove"], a["team_after"]) == ("UAV", "Ma-MoMa")


# -- CTO: number and types ------------------------------------------------------------------------
def test_cto_changes_the_number_of_targets_in_some_changes_and_the_types_in_all():
    delta: Counter[int] = Counter()
    for kind in ("pack", "sort", "sandwich"):
        for seed in range(6):
            task = generate_task(kind, "medium", "Ma-MoMa-UAV", seed, variation="CTO")
            for vs in range(2):
                plan = plan_variation(task, Variation("CTO"), vs)
                assert plan.replaced  # the types always change
                d = len(plan.targets_after) - len(task.targets)
                assert d == len(plan.added_targets) - len(plan.removed_targets)
                delta[d] += 1
                if kind == "sandwich":
                    assert plan.targets_after[-1].startswith("bread_slice_")  # a slice stays on top
                if kind == "sort":
                    cols = [h.split("_")[0] for h in plan.targets_after]
                    assert len(set(cols)) == len(cols)
    assert set(delta) == {-1, 0, 1}, delta
    assert delta[0] < sum(delta.values())


def test_a_cto_episode_scores_against_the_changed_number_of_targets():
    from collablab.studies.dynahmrc.spec import task_of

    changed = 0
    for inst in range(8):
        sp = {"variation": "CTO", "kind": "pack", "team": "Ma-MoMa-UAV", "instance": inst}
        rec = run_spec(sp)
        s = resolve(sp)
        plan = plan_variation(task_of(s), Variation("CTO", s["T"]), seed=s["seed"])
        j = len(plan.targets_after)
        changed += j != len(plan.targets_before)
        ps = rec["episode"]["ps"]
        assert abs(ps * j - round(ps * j)) < 1e-9, (inst, ps, j)  # PS counts over the new targets
        if rec["episode"]["success"]:  # success places every new target, the added one included
            placed = {st["target"] for st in rec["steps"] if st["name"] == "place" and st["ok"]}
            assert set(plan.targets_after) <= placed
    assert changed >= 1


@pytest.mark.parametrize("variation, team", [("CTO", "Ma-MoMa"), ("IRZ", "Ma-MoMa-UAV"), ("ANC", "Ma-MoMa"),
                                             ("REC", "Ma-MoMa-UAV")])
def test_every_variation_runs_at_medium_and_hard_and_level_unset_is_medium(variation: str, team: str) -> None:
    """Issue 26: run_spec of every variation at medium and at hard runs the task of that tier (a
    level named is never replaced); unset, a variation runs at medium as the paper's dynamic tables."""
    base = {"team": team, "variation": variation, "kind": "pack", "max_steps": 4}
    levels = {lvl: run_spec({**base, "level": lvl})["episode"] for lvl in ("medium", "hard")}
    assert {lvl: e["level"] for lvl, e in levels.items()} == {"medium": "medium", "hard": "hard"}
    assert levels["hard"]["D"] >= 0.6 > levels["medium"]["D"]
    assert run_spec(base)["episode"]["level"] == "medium"
    assert run_spec({"team": team, "kind": "pack", "max_steps": 2})["episode"]["level"] == "easy"
