"""MASTraceBench's dynamic games against hand computation (mastracebench.txt appendix):
Gomoku's Table 6 and eqs 15-16, Negotiation's eqs 17-18, TacticDuel's Table 8 and eqs 19-22."""

from __future__ import annotations

import random

import pytest
from collablab.studies.mastracebench.tasks import gomoku as G
from collablab.studies.mastracebench.tasks import negotiation as N
from collablab.studies.mastracebench.tasks import tactic_duel as T
from collablab.studies.mastracebench.tasks.base import Invalid, Task, is_invalid

# ---------------------------------------------------------------- Gomoku


def board(black=(), white=(), to_move=G.BLACK, size=G.SIZE) -> G.GomokuState:
    rows = [[G.EMPTY] * size for _ in range(size)]
    for color, cells in ((G.BLACK, black), (G.WHITE, white)):
        for r, c in cells:
            rows[r][c] = color
    return G.GomokuState(tuple(tuple(r) for r in rows), to_move, tuple(black) + tuple(white))


# Table 6 as printed: (pattern length, open endpoints) -> value.
TABLE6_SELF = {(5, 2): 5, (5, 1): 5, (4, 2): 4, (4, 1): 2, (3, 2): 3, (3, 1): 2}
TABLE6_DEFENSE = {(5, 2): 2, (5, 1): 5, (4, 2): 4, (4, 1): 3, (3, 2): 3, (3, 1): 2}
MOVE = (7, 7)


def line(length: int) -> list[tuple[int, int]]:
    """``length - 1`` stones to the left of MOVE, so a stone at MOVE makes a run of ``length``."""
    return [(7, 7 - k) for k in range(1, length)]


@pytest.mark.parametrize("length,ends", sorted(TABLE6_SELF))
def test_gomoku_self_pattern_values(length, ends):
    blocker = [] if ends == 2 else [(7, 7 - length)]
    s = board(black=line(length), white=blocker)
    assert G.formation_score(s, MOVE) == TABLE6_SELF[length, ends]
    assert G.defense_score(s, MOVE) == 0
    assert G.move_score(s, MOVE) == min(100, 20 * TABLE6_SELF[length, ends])


@pytest.mark.parametrize("length,ends", sorted(TABLE6_DEFENSE))
def test_gomoku_defense_pattern_values(length, ends):
    blocker = [] if ends == 2 else [(7, 7 - length)]
    s = board(black=blocker, white=line(length))  # black to move blocks white's run
    assert G.defense_score(s, MOVE) == TABLE6_DEFENSE[length, ends]
    assert G.formation_score(s, MOVE) == 0


def test_gomoku_blocking_a_closed_four_scores_the_top_defense_value():
    # White XXXX closed on the left by black; black takes the only open end (7, 7).
    s = board(black=[(7, 2)], white=[(7, 3), (7, 4), (7, 5), (7, 6)])
    assert G.defense_score(s, MOVE) == 5 and G.formation_score(s, MOVE) == 0
    assert G.GomokuTask().score(MOVE, s) == 100.0
    # The far end of an open four only scores 2: the opponent still wins at the other end.
    s = board(white=[(7, 3), (7, 4), (7, 5), (7, 6)])
    assert G.defense_score(s, MOVE) == 2


def test_gomoku_dead_short_and_broken_patterns_score_zero():
    assert G.formation_score(board(black=line(4), white=[(7, 3), (7, 8)]), MOVE) == 0  # no open end
    assert G.formation_score(board(black=line(2)), MOVE) == 0  # two stones
    # A run against the edge has one open end: (7, 0) (7, 1) + move (7, 2).
    assert G.formation_score(board(black=[(7, 0), (7, 1)]), (7, 2)) == 2
    # Broken X_X + move: only the contiguous pair through the move counts.
    assert G.formation_score(board(black=[(7, 4), (7, 6)]), MOVE) == 0
    # X_XX + move makes a contiguous open three; the detached stone does not join.
    assert G.formation_score(board(black=[(7, 3), (7, 5), (7, 6)]), MOVE) == 3


def test_gomoku_patterns_accumulate_and_the_report_is_clipped():
    s = board(black=[(7, 5), (7, 6), (5, 7), (6, 7)])  # open three across and down
    assert G.raw_score(s, MOVE) == 6
    assert G.move_score(s, MOVE) == 100.0  # 20 * 6 = 120, clipped


@pytest.mark.parametrize("direction", G.DIRECTIONS)
def test_gomoku_five_wins_in_every_direction(direction):
    dr, dc = direction
    cells = [(7 + k * dr, 7 + k * dc) for k in range(-2, 3)]
    s = board(black=cells[:4], white=[(0, 0), (0, 2), (0, 4), (0, 6)])
    assert s.winner is None
    after = G.place(s, cells[4])
    assert after.winner == G.BLACK and G.is_over(after)
    assert G.episode_score(after, G.BLACK) == 1.0 and G.episode_score(after, G.WHITE) == 0.0
    assert G.parse_move("H8", after) == Invalid("the game is over")


def test_gomoku_overline_wins_and_four_does_not():
    s = board(black=[(3, 0), (3, 1), (3, 2), (3, 4), (3, 5)])
    assert G.place(s, (3, 3)).winner == G.BLACK  # six in a row (free-style)
    s = board(black=[(3, 0), (3, 1), (3, 2)])
    assert G.place(s, (3, 3)).winner is None
    with pytest.raises(ValueError):
        G.place(s, (3, 0))


def test_gomoku_parser():
    s = board(black=[(7, 7)], to_move=G.WHITE)
    assert G.parse_move('{"row": 3, "col": 4}', s) == (3, 4)
    assert G.parse_move('Answer: {"move": "A1"}', s) == (0, 0)
    assert G.parse_move("o15", s) == (14, 14)
    assert G.parse_move("I play (7, 8)", s) == (7, 8)
    assert G.parse_move("D4 looks nice but I choose I8.", s) == (7, 8)  # last mention
    assert G.move_name((7, 8)) == "I8"
    for text in ("H8", "(7, 7)", '{"row": 7, "col": 7}'):
        assert "occupied" in G.parse_move(text, s).reason
    for text in ("P3", "(15, 0)", "(-1, 3)", "A16"):
        assert "off the" in G.parse_move(text, s).reason
    assert G.parse_move("no idea", s) == Invalid("no move found")


def test_gomoku_invalid_moves_score_zero_and_task_shape():
    task = G.GomokuTask()
    s = board(black=[(7, 6), (7, 5)], white=[(0, 0)])
    assert isinstance(task, Task)
    assert task.score(Invalid("x"), s) == 0.0
    assert task.score((7, 6), s) == 0.0  # occupied
    assert task.score((20, 3), s) == 0.0  # off the board
    best = max(task.score(m, s) for m in G.legal_moves(s))
    assert task.max_score(s) == best == 60.0  # an open three
    assert task.canonical([7, 4]) == (7, 4) and task.canonical(Invalid("x")) == Invalid("x")
    assert task.parse("H8", s) == (7, 7)


def test_gomoku_greedy_opponent_wins_then_blocks():
    s = board(black=[(7, 3), (7, 4), (7, 5), (7, 6)], white=[(3, 3), (3, 4), (3, 5), (3, 6)])
    assert G.greedy_move(s, random.Random(0)) in {(7, 2), (7, 7)}  # its own five first
    s = board(black=[(7, 2), (0, 14)], white=[(7, 3), (7, 4), (7, 5), (7, 6)])
    assert G.greedy_move(s, random.Random(0)) == (7, 7)
    assert G.greedy_move(G.new_game(), random.Random(0)) == (7, 7)


def test_gomoku_play_records_invalid_moves_and_is_seeded():
    def bad(state):
        return Invalid("garbled")

    runs = []
    for _ in range(2):
        rng = random.Random(1)
        end, log = G.play_gomoku(G.new_game(), {G.BLACK: lambda s, rng=rng: G.greedy_move(s, rng), G.WHITE: bad},
                                 seed=3)
        runs.append(end.moves)
    assert runs[0] == runs[1]
    assert end.winner == G.BLACK and G.is_over(end)
    white = [e for e in log if e["color"] == G.WHITE]
    assert white and all(e["invalid"] == "garbled" and e["score"] == 0.0 for e in white)


def test_gomoku_games_split_colours():
    games = G.gomoku_games(50, seed=7)
    assert len(games) == 50
    assert sum(g.mas_color == G.BLACK for g in games) == 25
    assert sum(g.mas_color == G.WHITE for g in games) == 25
    assert games == G.gomoku_games(50, seed=7) and games != G.gomoku_games(50, seed=8)
    with pytest.raises(ValueError):
        G.gomoku_games(0)


def test_gomoku_prompt_shows_the_board():
    text = G.render_prompt(board(black=[(7, 7)], to_move=G.WHITE))
    assert "white (O)" in text and "H8" in text and " 8 . . . . . . . X" in text


# ---------------------------------------------------------------- Negotiation

CFG = N.NegotiationConfig(0, ("book", "hat", "ball"), (1, 2, 1), ((4, 2, 2), (2, 3, 2)))


def alloc(p0, p1=None) -> N.Allocation:
    p1 = p1 or tuple(n - x for n, x in zip(CFG.counts, p0))
    return N.Allocation((tuple(p0), tuple(p1)))


def test_negotiation_utilities():
    a = alloc((1, 0, 0))
    assert N.utility(CFG, 0, a) == 4 and N.utility(CFG, 1, a) == 8
    assert N.max_utility(CFG, 0) == 10 == N.max_utility(CFG, 1)
    assert len(N.allocations(CFG)) == 2 * 3 * 2


def test_negotiation_episode_score_eq18_with_discount():
    s = N.new_negotiation(CFG)
    s = N.advance(s, alloc((1, 2, 1)), False)  # round 1, player 0 proposes, rejected
    s = N.advance(s, alloc((0, 0, 0)), False)  # round 2, player 1 proposes, rejected
    assert N.proposer(s) == 0 and s.round == 3
    s = N.advance(s, alloc((1, 0, 0)), True)
    assert N.is_over(s)
    assert N.episode_score(s, 0) == pytest.approx(0.95 ** 2 * 0.4)
    assert N.episode_score(s, 1) == pytest.approx(0.95 ** 2 * 0.8)
    early = N.advance(N.new_negotiation(CFG), alloc((1, 0, 0)), True)
    assert N.episode_score(s, 0) / N.episode_score(early, 0) == pytest.approx(0.95 ** 2)


def test_negotiation_without_agreement_scores_zero():
    s = N.new_negotiation(CFG)
    for _ in range(10):
        s = N.advance(s, alloc((1, 1, 0)), False)
    assert N.is_over(s) and s.agreement is None
    assert N.episode_score(s, 0) == 0.0 == N.episode_score(s, 1)
    with pytest.raises(ValueError):
        N.advance(s, alloc((1, 1, 0)), True)


def test_negotiation_proposal_score_eq17():
    yes, no = (lambda a, s: True), (lambda a, s: False)
    s1 = N.new_negotiation(CFG)
    assert N.proposal_score(alloc((1, 1, 0)), s1, yes) == pytest.approx(60.0)
    assert N.proposal_score(alloc((1, 1, 0)), s1, no) == 0.0
    s2 = N.advance(s1, alloc((1, 1, 0)), False)  # round 2: player 1 proposes
    assert N.proposal_score(alloc((1, 1, 0)), s2, yes) == pytest.approx(100 * 0.95 * 5 / 10)
    assert N.proposal_score(Invalid("x"), s2, yes) == 0.0
    assert N.proposal_score(N.Allocation(((1, 2, 1), (1, 0, 0))), s2, yes) == 0.0  # over-allocated


def test_negotiation_reservation_rule_and_task():
    rule = N.ReservationRule()
    s1 = N.new_negotiation(CFG)
    assert rule.share(s1) == pytest.approx(0.6)
    last = N.NegotiationState(CFG, round=10)
    assert rule.share(last) == pytest.approx(0.2)
    assert rule(alloc((0, 1, 0)), s1)  # responder (1) keeps book+hat+ball = 2+3+2 = 7 >= 6
    assert not rule(alloc((0, 2, 0)), s1)  # responder keeps 4 < 6
    task = N.NegotiationTask()
    assert isinstance(task, Task)
    # S*: player 0's best split that leaves player 1 at least 6 of 10 is (1, 0, 1): 6 for 6.
    brute = max(100 * N.utility(CFG, 0, a) / 10 for a in N.allocations(CFG)
                if N.utility(CFG, 1, a) >= 6)
    assert task.max_score(s1) == pytest.approx(brute) == pytest.approx(60.0)
    assert task.canonical(alloc((1, 0, 1))) == ((1, 0, 1), (0, 2, 0))


def test_negotiation_parser():
    s1 = N.new_negotiation(CFG)  # player 0 proposes
    assert N.parse_allocation("I take book, hat; you take ball", s1) == alloc((1, 2, 0))
    assert N.parse_allocation("I take the book and a hat. You take the rest", s1) == alloc((1, 1, 0))
    assert N.parse_allocation("I take nothing", s1) == alloc((0, 0, 0))
    assert N.parse_allocation('{"self": {"book": 1, "hats": 1}, "opponent": {"hat": 1, "ball": 1}}',
                              s1) == alloc((1, 1, 0))
    assert N.parse_allocation('{"allocation": {"you": {"ball": 1}}}', s1) == alloc((1, 2, 0))
    s2 = N.advance(s1, alloc((1, 1, 0)), False)  # player 1 proposes: "I" is player 1
    assert N.parse_allocation("I take 2 hats; you take book and ball", s2) == alloc((1, 0, 1))
    assert "pool has" in N.parse_allocation("I take 3 hats", s1).reason
    both = '{"self": {"book": 1, "hat": 2, "ball": 1}, "opponent": {"hat": 2}}'
    assert "does not make" in N.parse_allocation(both, s1).reason
    assert "not allocated" in N.parse_allocation("I take book; you take ball", s1).reason
    assert "unknown item" in N.parse_allocation('{"self": {"pen": 1}}', s1).reason
    assert N.parse_allocation("let us talk", s1) == Invalid("no allocation found")
    assert N.parse_response('{"accept": true}') is True
    assert N.parse_response("I must reject this.") is False
    assert is_invalid(N.parse_response("hmm"))


def test_negotiation_configs_exchange_player_roles_and_first_proposer():
    """Appendix: "evaluated twice with the player roles and first proposer exchanged": across a
    scenario's pair the MAS holds each value profile once and makes the first offer once."""
    cfgs = N.negotiation_configs(100, seed=5)
    assert len(cfgs) == 200
    for a, b in zip(cfgs[::2], cfgs[1::2]):
        assert (a.scenario, a.counts, a.values) == (b.scenario, b.counts, b.values)
        assert (a.mas_player, b.mas_player) == (0, 1)  # the MAS plays value profile 0, then 1
        mas_opens = [c.first_proposer == c.mas_player for c in (a, b)]
        assert mas_opens == [True, False]  # the MAS opens game 2k, the opponent game 2k+1
        assert 5 <= sum(a.counts) <= 7 and a.values[0] != a.values[1]
        assert N.max_utility(a, 0) == 10 == N.max_utility(a, 1)
        assert all(x + y > 0 for x, y in zip(*a.values))
    assert cfgs == N.negotiation_configs(100, seed=5) and cfgs != N.negotiation_configs(100, seed=6)
    assert N.proposer(N.new_negotiation(cfgs[1])) == 0 != cfgs[1].mas_player


def test_negotiation_offline_play_is_seeded_and_rational():
    rule = N.ReservationRule()
    cfg = N.negotiation_configs(3, seed=1)[0]
    logs = []
    for _ in range(2):
        rngs = {0: random.Random(0), 1: random.Random(1)}
        end, log = N.play_negotiation(N.new_negotiation(cfg),
                                      {p: (lambda s, r=rngs[p]: N.rule_proposal(s, r, rule)) for p in (0, 1)},
                                      {0: rule, 1: rule})
        logs.append(log)
    assert logs[0] == logs[1]
    s = N.new_negotiation(cfg)
    offer = N.rule_proposal(s, random.Random(0), rule)
    assert N.utility(cfg, 0, offer) >= 0.6 * 10
    end, log = N.play_negotiation(s, {0: lambda s: Invalid("garbled"), 1: lambda s: Invalid("x")},
                                  {0: rule, 1: rule})
    assert len(log) == 10 and not any(e["accepted"] for e in log) and N.episode_score(end, 0) == 0.0
    assert "accept" in N.render_prompt(s, 1, offer) and "Propose" in N.render_prompt(s, 0)


# ---------------------------------------------------------------- TacticDuel

A = ("Quick", "Heavy", "Guard", "Counter", "Feint", "Charge", "Burst")
# d(row, column) worked out by hand from Table 8.
HAND_DAMAGE = {
    "Quick":   (2, 2, 0, 2, 2, 2, 2),
    "Heavy":   (4, 4, 0, 0, 4, 4, 4),
    "Guard":   (0, 0, 0, 0, 0, 0, 0),
    "Counter": (1, 4, 0, 1, 1, 1, 1),
    "Feint":   (1, 1, 4, 1, 1, 1, 1),
    "Charge":  (0, 0, 0, 0, 0, 0, 0),
    "Burst":   (6, 6, 2, 6, 6, 6, 6),
}
ENERGY_DELTA = {"Charge": 2, "Burst": -2}


@pytest.mark.parametrize("a0", A)
@pytest.mark.parametrize("a1", A)
def test_duel_every_pair_resolves_as_table8(a0, a1):
    assert T.ACTIONS == A
    s = T.DuelState(energy=(2, 2))
    after = T.resolve(s, a0, a1)
    d01, d10 = HAND_DAMAGE[a0][A.index(a1)], HAND_DAMAGE[a1][A.index(a0)]
    assert (T.damage(a0, a1), T.damage(a1, a0)) == (d01, d10)
    assert after.hp == (20 - d10, 20 - d01)
    assert after.energy == (2 + ENERGY_DELTA.get(a0, 0), 2 + ENERGY_DELTA.get(a1, 0))
    assert after.last == (a0, a1) and after.round == 1
    assert T.proposal_value(a0, a1) == d01 - d10 + (a0 == "Charge")


def test_duel_burst_needs_two_energy_and_no_repeats():
    s = T.new_duel()
    assert "Burst" not in T.legal_actions(s, 0)
    assert T.parse_action("Burst", T.DuelDecision(s, 0)).reason.startswith("Burst is not legal")
    with pytest.raises(ValueError):
        T.resolve(s, "Burst", "Quick")
    s = T.resolve(s, "Charge", "Quick")  # player 0 now has 2 energy and last = Charge
    assert s.energy == (2, 0) and "Burst" in T.legal_actions(s, 0)
    assert "Charge" not in T.legal_actions(s, 0) and "Quick" not in T.legal_actions(s, 1)
    assert is_invalid(T.parse_action('{"action": "Quick"}', T.DuelDecision(s, 1)))
    with pytest.raises(ValueError):
        T.resolve(s, "Charge", "Heavy")
    s = T.resolve(s, "Burst", "Heavy")
    assert s.energy == (0, 0) and "Burst" not in T.legal_actions(s, 0)
    assert "Burst" not in T.legal_actions(T.DuelState(energy=(1, 0)), 0)


def test_duel_limit_win_draw_and_knockout():
    s = T.new_duel(max_rounds=1)
    win = T.resolve(s, "Quick", "Charge")
    assert T.is_over(win) and T.winner(win) == 0
    assert (T.episode_score(win, 0), T.episode_score(win, 1)) == (1.0, 0.0)
    draw = T.resolve(s, "Quick", "Quick")
    assert T.winner(draw) is None and T.episode_score(draw, 0) == 0.5 == T.episode_score(draw, 1)
    ko = T.resolve(T.DuelState(hp=(3, 20)), "Guard", "Feint")  # Feint pierces Guard: 4 damage
    assert T.is_over(ko) and ko.round == 1 and T.winner(ko) == 1
    both = T.resolve(T.DuelState(hp=(2, 1)), "Quick", "Quick")  # 0 vs -1: higher HP wins
    assert T.winner(both) == 0
    with pytest.raises(ValueError):
        T.winner(T.new_duel())


def test_duel_score_mapping_endpoints():
    assert T.VALUE_RANGE == (-5, 6)
    assert T.scaled_value("Charge", "Burst") == 0.0  # -6 + 1 = -5
    assert T.scaled_value("Burst", "Charge") == 100.0  # 6 - 0 = 6
    assert T.scaled_value("Charge", "Charge") == pytest.approx(100 * 6 / 11)
    assert T.scaled_value("Quick", "Quick") == pytest.approx(100 * 5 / 11)


def test_duel_task_parse_and_score():
    task = T.TacticDuelTask()
    assert isinstance(task, Task)
    s = T.resolve(T.new_duel(), "Charge", "Quick")
    dec = T.DuelDecision(s, 0, opponent_action="Guard")
    assert task.parse("I think heavy is risky; I go with burst", dec) == "Burst"
    assert task.parse('{"action": "feint"}', dec) == "Feint"
    assert task.parse('{"action": "Dance"}', dec) == Invalid("unknown action 'Dance'")
    assert task.parse("...", dec) == Invalid("no action named")
    assert task.score("Feint", dec) == pytest.approx(100 * (4 + 5) / 11)
    assert task.score("Charge", dec) == 0.0  # a repeat is illegal: 0
    assert task.score(Invalid("x"), dec) == 0.0
    assert task.max_score(dec) == task.score("Feint", dec)
    with pytest.raises(ValueError):
        task.score("Quick", T.DuelDecision(s, 0))
    assert task.canonical("Quick") == "Quick"


def test_duel_rule_opponent_and_play():
    # At the start, Heavy has the best summed value against the six legal replies (by hand: 5).
    assert T.rule_action(T.new_duel(), 0, random.Random(0)) == "Heavy"
    ends = []
    for _ in range(2):
        rng = random.Random(4)
        end, log = T.play_duel(T.new_duel(), {0: lambda s, p, rng=rng: T.rule_action(s, p, rng),
                                              1: lambda s, p: "Charge"}, seed=2)
        ends.append((end, log))
    assert ends[0] == ends[1]
    end, log = ends[0]
    assert T.is_over(end) and all(e["invalid"] is None for e in log if e["player"] == 0)
    assert any(e["invalid"] for e in log if e["player"] == 1)  # the repeated Charge is replaced
    for r in end.history:
        assert r.actions[0] in T.ACTIONS


def test_duels_alternate_sides():
    ds = T.duels(50, seed=3)
    assert len(ds) == 50 and sum(d.mas_player for d in ds) == 25
    assert ds == T.duels(50, seed=3) and ds != T.duels(50, seed=4)
    assert "Legal actions now: Quick, Heavy, Guard, Counter, Feint, Charge." in T.render_prompt(T.new_duel(), 0)
