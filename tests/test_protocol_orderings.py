"""The protocols' orderings the paper leaves unstated (issue 29), shown on hand-made steps with
scripted policies: who reads which shared memory when and how same-step writes merge (Fig. 24,
29; §3 Eq. 1), where reports and assignments go (Figs. 21-22, 27), when a discussion stops
(§3 "when consensus is not reached", Fig. 20), and the settings that keep the other readings."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable

import pytest
from conftest import mini_world

from collablab.agents.base import AgentContext, Assignment, Decision, Message, Policy, Utterance
from collablab.agents.llm.replies import parse_message, read_ready
from collablab.protocols import (PROTOCOL_DEFAULTS, Discuss, EmbodiedTeam, check_protocol_options, make_protocol,
                                 merge_writes)
from collablab.studies.mecobench import resolve, run_spec
from collablab.world.actions import Action


@dataclass
class Brief:
    task_id: str = "hand-made"

    def goal_text(self, prior: str) -> str:
        return "put the cupcake on the table"


class Scripted(Policy):
    """Says what ``answers`` holds per (kind, round) (a READY answer: True, False or None),
    writes ``write(me, step, memory)`` into the shared memory, assigns ``plan``; logs what it
    hears, reads and is told."""

    backend = "scripted"

    def __init__(self, answers: dict[int, bool | None] | None = None,
                 write: Callable[[int, int, dict[str, Any]], None] | None = None,
                 plan: dict[int, str] | None = None) -> None:
        self.answers = answers or {}
        self.write = write
        self.plan = plan or {}

    def reset(self, ctx: AgentContext) -> None:
        self.ctx, self.step = ctx, -1
        self.heard: list[Message] = []
        self.read: list[dict[str, Any]] = []
        self.told: list[str | None] = []
        self.rounds: list[int] = []
        self.heard_at_assign: list[Message] | None = None

    def observe(self, obs: dict[str, Any]) -> None:
        self.step = obs["step"]

    def speak(self, kind: str, dialogue: list[Message], round: int = 0) -> Utterance:
        self.rounds.append(round)
        ready = self.answers.get(round, True)
        return Utterance(f"{kind} of Agent {self.ctx.agent} r{round}", ready=ready)

    def hear(self, messages: list[Message]) -> None:
        self.heard += messages

    def assign(self, reports, views, images) -> Assignment:
        self.heard_at_assign = list(self.heard)
        text = " ".join(f"Agent {a}: {t}" for a, t in sorted(self.plan.items()))
        return Assignment(dict(self.plan), Utterance(text))

    def act(self, instruction: str | None = None, shared_memory: dict[str, Any] | None = None) -> Decision:
        self.told.append(instruction)
        if shared_memory is not None:
            self.read.append(copy.deepcopy(shared_memory))
        return Decision(Action("wait"))

    def write_memory(self, shared_memory: dict[str, Any]) -> Utterance | None:
        if self.write is not None:
            self.write(self.ctx.agent, self.step, shared_memory)
        return None


def team_of(policies: list[Scripted], protocol: str, **options: Any) -> tuple[EmbodiedTeam, Any]:
    world = mini_world(n_agents=len(policies))
    team = EmbodiedTeam(policies, make_protocol(protocol, len(policies), **options))
    team.reset(world, Brief(), seed=0)
    return team, world


def run_steps(team: EmbodiedTeam, world: Any, n: int) -> None:
    for _ in range(n):
        world.step({a: t.action for a, t in team.act(world).items()})


def claim(me: int, step: int, mem: dict[str, Any]) -> None:
    """Claim the cupcake and say where I am (the heuristic's and Fig. 29's shape)."""
    g = mem.setdefault("global", {})
    g.setdefault("agent_locations", {})[f"Agent {me}"] = f"room {me} at step {step}"
    g["claims"] = [c for c in g.get("claims", []) if c["agent"] != f"Agent {me}"] + [
        {"agent": f"Agent {me}", "object": "cupcake", "state": "planned"}]


def claims_of(mem: dict[str, Any]) -> list[str]:
    return [c["agent"] for c in mem.get("global", {}).get("claims", [])]


# -- shared memory --------------------------------------------------------------------------------------------
def test_simultaneous_writes_are_not_seen_within_the_step_and_both_are_seen_after():
    ps = [Scripted(write=claim), Scripted(write=claim)]
    team, world = team_of(ps, "shared_memory")
    run_steps(team, world, 2)
    assert claims_of(ps[1].read[0]) == [] and claims_of(ps[0].read[0]) == []  # agent 0's same-step claim unseen
    assert claims_of(ps[0].read[1]) == claims_of(ps[1].read[1]) == ["Agent 0", "Agent 1"]
    assert ps[1].read[1]["global"]["agent_locations"] == {"Agent 0": "room 0 at step 0", "Agent 1": "room 1 at step 0"}


def test_sequential_writes_let_a_later_agent_read_an_earlier_ones_claim():
    ps = [Scripted(write=claim), Scripted(write=claim)]
    team, world = team_of(ps, "shared_memory", memory_writes="sequential")
    run_steps(team, world, 1)
    assert claims_of(ps[0].read[0]) == [] and claims_of(ps[1].read[0]) == ["Agent 0"]


def test_an_agent_cannot_overwrite_another_agents_entries_or_claims():
    base = {"global": {"agent_status": {"Agent 0": "idle", "Agent 1": "idle"}, "claims": [
        {"agent": "Agent 1", "object": "apple", "state": "planned"}]}}
    w0 = copy.deepcopy(base)  # agent 0 rewrites everyone's status and drops agent 1's claim
    w0["global"]["agent_status"] = {"Agent 0": "fetching", "Agent 1": "lost"}
    w0["global"]["claims"] = [{"agent": "Agent 0", "object": "cupcake", "state": "planned"}]
    w1 = copy.deepcopy(base)  # agent 1 marks its claim held
    w1["global"]["claims"] = [{"agent": "Agent 1", "object": "apple", "state": "holding"}]
    got = merge_writes(base, {0: w0, 1: w1})["global"]
    assert got["agent_status"] == {"Agent 0": "fetching", "Agent 1": "idle"}
    assert got["claims"] == [{"agent": "Agent 0", "object": "cupcake", "state": "planned"},
                             {"agent": "Agent 1", "object": "apple", "state": "holding"}]


def test_two_same_step_claims_of_one_object_both_stand():
    base: dict[str, Any] = {"global": {}}
    ws = {a: {"global": {"claims": [{"agent": a, "object": "cupcake", "id": 13}]}} for a in (0, 1)}
    assert merge_writes(base, ws)["global"]["claims"] == [{"agent": 0, "object": "cupcake", "id": 13},
                                                          {"agent": 1, "object": "cupcake", "id": 13}]


def test_room_lists_merge_as_sets_and_leaves_take_the_last_change_in_agent_order():
    base = {"kitchen": {"objects": ["apple", "cupcake"], "exploration": "unexplored"}, "global": {"notes": ["a"]}}
    w0 = {"kitchen": {"objects": ["cupcake", "plate"], "exploration": "partially_explored"}, "global": {"notes": ["a"]}}
    w1 = {"kitchen": {"objects": ["apple", "cupcake", "mug"], "exploration": "explored"},
          "bedroom": {"objects": ["book"]}, "global": {"notes": ["a"]}}
    got = merge_writes(base, {1: w1, 0: w0})
    assert got["kitchen"] == {"objects": ["cupcake", "plate", "mug"], "exploration": "explored"}
    assert got["bedroom"] == {"objects": ["book"]} and got["global"] == {"notes": ["a"]}
    assert merge_writes(base, {0: {"kitchen": base["kitchen"]}}) == {"kitchen": base["kitchen"]}  # left out: deleted
    assert merge_writes(base, {0: copy.deepcopy(base), 1: copy.deepcopy(base)}) == base


def test_a_write_that_leaves_out_a_block_keeps_what_others_own_in_it():
    base = {"global": {"agent_holding": {"Agent 0": [], "Agent 1": ["apple"]}, "notes": ["x"],
                       "claims": [{"agent": "Agent 1", "object": "apple"}]}}
    got = merge_writes(base, {0: {"kitchen": {"objects": ["plate"]}}, 1: copy.deepcopy(base)})
    assert got == {"global": {"agent_holding": {"Agent 1": ["apple"]}, "claims": [{"agent": "Agent 1", "object": "apple"}]},
                   "kitchen": {"objects": ["plate"]}}


# -- leader -----------------------------------------------------------------------------------------------------
def leader_team(**options: Any) -> list[Scripted]:
    plan = {0: "search the kitchen", 1: "grab the cupcake", 2: "open the fridge"}
    ps = [Scripted(plan=plan), Scripted(), Scripted()]
    team, world = team_of(ps, "leader", **options)
    run_steps(team, world, 1)
    return ps


def test_an_assignment_reaches_only_its_receiver_and_the_leader_hears_the_reports_first():
    ps = leader_team()
    texts = {a: [(m.sender, m.kind, m.text) for m in p.heard] for a, p in enumerate(ps)}
    assert texts[1] == [(1, "report", "report of Agent 1 r0"), (0, "assignment", "grab the cupcake")]
    assert not any("open the fridge" in t for _, _, t in texts[1])  # agent 2's assignment is not agent 1's
    assert texts[2][-1] == (0, "assignment", "open the fridge")
    assert [m.text for m in ps[0].heard_at_assign] == ["report of Agent 1 r0", "report of Agent 2 r0"]
    assert [t for _, k, t in texts[0] if k == "assignment"] == ["search the kitchen", "grab the cupcake",
                                                                "open the fridge"]
    assert [p.told[0] for p in ps] == ["search the kitchen", "grab the cupcake", "open the fridge"]


def test_leader_routing_all_sends_the_whole_list_to_everyone():
    ps = leader_team(leader_routing="all")
    assert any("open the fridge" in m.text for m in ps[1].heard)


# -- discussion ------------------------------------------------------------------------------------------------
R, C, U = True, False, None
ALWAYS_C = {r: C for r in range(9)}


@pytest.mark.parametrize("answers, options, rounds", [
    ([{0: C}, {0: R}], {}, 2),  # one CONTINUE: another round; all READY: stop
    ([{0: R}, {0: R}], {}, 1),
    ([ALWAYS_C, {0: R}], {}, 3),  # never agreed: the cap (3 by default)
    ([ALWAYS_C, ALWAYS_C], {"discuss_max_rounds": 5}, 5),
    ([{0: U}, {0: R}], {}, 2),  # unreadable counts as CONTINUE
    ([{0: U}, {0: R}], {"discuss_unreadable": "ready"}, 1),
    ([{0: C, 1: U, 2: U}, {0: R}], {"discuss_unreadable": "previous"}, 3),  # its CONTINUE stands until it says READY
    ([{0: R, 1: U}, {0: C, 1: R}], {"discuss_unreadable": "previous"}, 2),
    ([{0: C}, {0: R}, {0: R}], {}, 2),
    ([{0: C}, {0: R}, {0: R}], {"discuss_consensus": "majority"}, 1),  # 2 of 3 READY
    ([{0: C}, {0: R}], {"discuss_consensus": "majority"}, 2),  # 1 of 2 is no majority
])
def test_discussion_stops_exactly_when_the_consensus_rule_says(answers, options, rounds):
    ps = [Scripted(answers=a) for a in answers]
    team, world = team_of(ps, "discuss", **options)
    run_steps(team, world, 1)
    assert [p.rounds for p in ps] == [list(range(rounds))] * len(ps)


def test_an_unreadable_ready_field_reads_as_none():
    assert read_ready("[READY] <READY>\n[MESSAGE] hi") == (True, None)
    assert read_ready("[READY] <CONTINUE>") == (False, None)
    assert read_ready("[READY] <READY> or <CONTINUE>")[0] is None
    assert read_ready("[READY] sure\n[MESSAGE] hi")[0] is None and read_ready("[MESSAGE] hi")[0] is None
    assert parse_message('{"message": "hi", "ready": "maybe"}', "json_object")[0]["ready"] is None
    assert parse_message('{"message": "hi", "ready": "<CONTINUE>"}', "json_object")[0]["ready"] is False
    assert parse_message("just text", "none")[0]["ready"] is None


# -- settings ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("key, value, allowed", [
    ("memory_writes", "random", "simultaneous, sequential"), ("leader_routing", "some", "receiver, all"),
    ("discuss_consensus", "most", "all, majority"), ("discuss_unreadable", "skip", "continue, ready, previous"),
])
def test_a_bad_setting_names_the_field_and_the_allowed_values(key, value, allowed):
    with pytest.raises(ValueError, match=f"^{key}: '{value}' is not allowed; allowed: {allowed}$"):
        check_protocol_options({key: value})
    with pytest.raises(ValueError, match=f"^{key}: "):  # checked whatever the spec's protocol
        resolve({"task_id": "cl003-p", "protocol": "broadcast", key: value})


def test_bad_round_caps_and_unknown_settings():
    for bad in (0, True, 2.5):
        with pytest.raises(ValueError, match="^discuss_max_rounds: must be an integer >= 1"):
            Discuss(max_rounds=bad)
    with pytest.raises(ValueError, match="unknown.*allowed: memory_writes"):
        make_protocol("discuss", 2, rounds=3)


def test_records_name_a_changed_setting_and_default_runs_name_none():
    base = {"task_id": "cl003-p", "protocol": "shared_memory", "n_agents": 2, "budget": 4}
    default = run_spec(base)["episode"]
    seq = run_spec({**base, "memory_writes": "sequential", "leader_routing": "all"})["episode"]
    assert not set(PROTOCOL_DEFAULTS) & set(default)
    assert seq["memory_writes"] == "sequential" and "leader_routing" not in seq  # not this protocol's
    assert "-memory_writes=sequential-" in seq["episode_id"] and "memory_writes" not in default["episode_id"]
