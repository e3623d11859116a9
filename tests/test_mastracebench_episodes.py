"""Dynamic-task episodes (episodes.py): a MAS method against a fixed Single-Agent opponent on the
same backend, with the offline backend and small caps so every test runs in seconds."""

from __future__ import annotations

import random

import pytest
from collablab.studies.mastracebench import episodes as E
from collablab.studies.mastracebench.offline import HeuristicBackend
from collablab.studies.mastracebench.roles import Reply
from collablab.studies.mastracebench.tasks import gomoku as G
from collablab.studies.mastracebench.tasks import negotiation as N
from collablab.studies.mastracebench.tasks import tactic_duel as T
from collablab.studies.mastracebench.trajectory import (
    parse_call_id,
    validate_episode,
    validate_trajectory,
)


class Recording(HeuristicBackend):
    """The offline backend, remembering every request."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.seen = []

    def answer(self, request):
        self.seen.append(request)
        return super().answer(request)


class GarbageForMethod(Recording):
    """Unreadable replies to every call of the evaluated method's units (not the opponent's)."""

    def answer(self, request):
        if parse_call_id(request.call_id)[2].endswith(":opponent"):
            return super().answer(request)
        self.seen.append(request)
        return Reply("no idea", 1, 2)


def check(mine, res, theirs):
    for t in mine + theirs:
        validate_trajectory(t.to_dict())
    validate_episode(res.to_dict())


def test_gomoku_single_agent_episode_is_valid_and_indexed():
    game = G.gomoku_games(2)[0]
    mine, res, theirs = E.play_episode("gomoku", "Single-Agent", game, HeuristicBackend("medium"), "gomoku-0")
    check(mine, res, theirs)
    assert mine and theirs and res.task == "gomoku" and res.episode == "gomoku-0" and res.score in (0.0, 100.0)
    assert [t.state for t in mine] == list(range(len(mine)))
    assert {t.instance for t in mine} == {"gomoku-0"} and {t.instance for t in theirs} == {"gomoku-0:opponent"}
    assert mine[0].s_star == 0.0  # the opening: every move scores 0


def test_episodes_are_deterministic():
    for task in E.DYNAMIC_TASKS:
        cfg = E.episode_configs(task, 2)[0]
        runs = [E.play_episode(task, "Int. Debate", cfg, HeuristicBackend("medium", seed=3), "ep", max_decisions=8)
                for _ in range(2)]
        a, b = ([t.to_dict() for t in r[0] + r[2]] + [r[1].to_dict()] for r in runs)
        assert a == b, task


def test_gomoku_colours_alternate_and_the_method_plays_its_colour():
    games = E.episode_configs("gomoku")
    assert len(games) == 50 and sum(g.mas_color == G.BLACK for g in games) == 25
    assert [g.mas_color for g in games[:4]] == [G.BLACK, G.WHITE, G.BLACK, G.WHITE]
    for game in games[:2]:
        be = Recording("medium")
        E.play_episode("gomoku", "Single-Agent", game, be, "g", max_decisions=3)
        first = next(r for r in be.seen if parse_call_id(r.call_id)[2] == "g")
        assert first.instance.to_move == game.mas_color
        assert len(first.instance.moves) == (0 if game.mas_color == G.BLACK else 1)


def test_gomoku_cap_ends_the_game_not_won():
    mine, res, _ = E.play_episode("gomoku", "Single-Agent", G.gomoku_games(1)[0], HeuristicBackend(), "g",
                                  max_decisions=3)
    assert len(mine) == 3 and res.score == 0.0
    with pytest.raises(ValueError, match="max_decisions"):
        E.play_episode("gomoku", "Single-Agent", G.gomoku_games(1)[0], HeuristicBackend(), "g", max_decisions=0)


def test_invalid_gomoku_answers_use_the_seeded_fallback_and_stay_invalid():
    game = G.gomoku_games(1)[0]  # the method is black
    be = GarbageForMethod("medium")
    mine, res, theirs = E.play_episode("gomoku", "Int. Debate", game, be, "g", max_decisions=4)
    check(mine, res, theirs)
    assert len(mine) == 4 and all(not t.answer.valid and t.answer.score == 0 for t in mine)
    expected = random.Random(f"gomoku-fallback-{game.seed}").choice(G.legal_moves(G.new_game()))
    reply_state = next(r.instance for r in be.seen if parse_call_id(r.call_id)[2] == "g:opponent")
    assert reply_state.moves == (expected,)


def test_opponent_calls_are_not_in_the_method_trajectories():
    for task in E.DYNAMIC_TASKS:
        cfg = E.episode_configs(task, 1)[0]
        mine, res, theirs = E.play_episode(task, "MAPR", cfg, HeuristicBackend("medium"), "ep", max_decisions=5)
        check(mine, res, theirs)
        assert mine and (theirs or task == "negotiation"), task  # a first offer may be accepted
        assert {t.method for t in mine} == {"MAPR"} and {t.method for t in theirs} <= {"Single-Agent"}
        mine_ids = {c.call_id for t in mine for c in t.calls}
        their_ids = {c.call_id for t in theirs for c in t.calls}
        assert not mine_ids & their_ids
        assert all(parse_call_id(i)[:3] == ("MAPR", task, "ep") for i in mine_ids)


def _realized(mine, theirs, duel):
    """Replay the duel from the recorded answers and the documented fallback."""
    rng = random.Random(f"tactic-duel-fallback-{duel.seed}")
    state, me, out = T.new_duel(duel.hp, duel.max_rounds), duel.mas_player, []
    for tm, to in zip(mine, theirs):
        acts = []
        for p, t in ((0, tm if me == 0 else to), (1, to if me == 0 else tm)):
            acts.append(t.answer.canonical if t.answer.valid else rng.choice(T.legal_actions(state, p)))
        out.append((state, acts))
        state = T.resolve(state, *acts)
    return out, state


@pytest.mark.parametrize("backend", [HeuristicBackend("weak", seed=1), GarbageForMethod("medium")])
def test_duel_proposals_are_rescored_against_the_realized_opponent_action(backend):
    for duel in T.duels(2):
        mine, res, theirs = E.play_episode("tactic_duel", "Int. Debate", duel, backend, "d")
        check(mine, res, theirs)
        me = duel.mas_player
        rounds, final = _realized(mine, theirs, duel)
        assert T.is_over(final) and res.score == 100.0 * T.episode_score(final, me)
        for t, (state, acts) in zip(mine, rounds):
            opp = acts[1 - me]
            outs = [t.answer] + [x for p in t.proposers for x in (p.initial, p.final)]
            for o in outs:
                want = T.scaled_value(o.canonical, opp) if o.valid else 0.0
                assert o.score == pytest.approx(want)
            assert t.s_star == pytest.approx(max(T.scaled_value(a, opp) for a in T.legal_actions(state, me)))
        if isinstance(backend, GarbageForMethod):
            assert all(not t.answer.valid for t in mine)


def test_duel_cap_applies_the_limit_rule():
    mine, res, theirs = E.play_episode("tactic_duel", "Single-Agent", T.duels(1)[0], HeuristicBackend(), "d",
                                       max_decisions=2)
    assert len(mine) == len(theirs) == 2
    _, final = _realized(mine, theirs, T.duels(1)[0])
    w = None if final.hp[0] == final.hp[1] else int(final.hp[1] > final.hp[0])
    assert res.score == (50.0 if w is None else 100.0 * (w == 0))


def test_negotiation_probes_are_excluded_from_tc_and_scores_follow_eq_17():
    cfgs = N.negotiation_configs(3)
    assert [(c.mas_player, c.first_proposer) for c in cfgs[:2]] == [(0, 0), (1, 0)]
    for cfg in cfgs:
        responses = []
        mine, res, theirs = E.play_episode("negotiation", "Single-Agent", cfg, HeuristicBackend("medium"),
                                           E.episode_id("negotiation", cfg), responses=responses)
        check(mine, res, theirs)
        for t in mine + theirs:
            probes = [c for c in t.calls if c.kind == "acceptance_probe"]
            assert probes and not any(c.counts_for_tc for c in probes)
            assert [c.kind for c in t.calls if c.counts_for_tc] == ["agent"]  # Single-Agent: one call
        if cfg.first_proposer == cfg.mas_player:
            assert mine and mine[0].state == 0
        # the method's accept/reject decisions are runs of its own (no units; the new test file
        # test_mastracebench_negotiation_episodes.py checks them by hand)
        for t in responses:
            validate_trajectory(t.to_dict())
            assert t.task == N.RESPONSE_TASK and t.instance == E.episode_id("negotiation", cfg)


def test_unknown_task_is_refused():
    with pytest.raises(ValueError, match="dynamic task"):
        E.play_episode("mapf", "Single-Agent", None, HeuristicBackend(), "x")
