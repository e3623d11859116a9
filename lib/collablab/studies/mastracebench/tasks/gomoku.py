"""Gomoku (mastracebench.txt appendix "Gomoku", eqs 15-16, Table 6): rules, scores, parser.

Free-style Gomoku on a 15x15 board: black (1) moves first, players alternate on empty
intersections, five *or more* in a row (horizontal, vertical, diagonal) wins, a full board
ends the game without a winner. Episode score R = 1 for a win, else 0 (eq 15). A proposed move
scores S = F + D (eq 16) with the pattern values of Table 6 (:data:`SELF`, :data:`DEFENSE`).

How patterns are counted (decisions; tests/test_mastracebench_games.py checks each):

- For F the player's stone is placed hypothetically at the move; for D an opponent stone is.
  In each of the four directions through the move the *contiguous* run of that colour
  containing the move is one pattern: its length (5 or more = Five, 4 = Four, 3 = Three) and its
  open endpoints (the cell just past each end is on the board and empty). Broken shapes such
  as ``X_XX`` are not joined: only the contiguous part through the move counts.
- A run of at most two stones or with no open endpoint scores 0, as Table 6 says, a Five
  included (a "dead" five that still wins scores 0; the paper's rule, kept literally).
- The four directions' values add up (Table 6: "contributions are accumulated").
- Reported scores are ``20 * S`` *clipped at 100* (S at 5, a winning move's value): a move that
  forms or blocks several patterns can reach S = 40, and every task scores on 0-100 (``base``).
  :func:`raw_score` keeps the unclipped S. Invalid moves (off the board, occupied, after the
  end, unparseable) score 0.
- Coordinates: a move is ``(row, col)``, 0-based, row 0 at the top. ``"H8"`` means column H
  (A..O, left to right) and row 8 (1..15, top to bottom), i.e. ``(7, 7)``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .base import Invalid, flat_json_objects, is_invalid

__all__ = [
    "BLACK",
    "DEFENSE",
    "EMPTY",
    "REPORT_FACTOR",
    "SELF",
    "SIZE",
    "WHITE",
    "GomokuGame",
    "GomokuState",
    "GomokuTask",
    "Move",
    "defense_score",
    "episode_score",
    "formation_score",
    "gomoku_games",
    "greedy_move",
    "is_legal",
    "is_over",
    "legal_moves",
    "move_name",
    "move_score",
    "new_game",
    "opponent",
    "parse_move",
    "pattern_value",
    "place",
    "play_gomoku",
    "raw_score",
    "render_prompt",
    "run_through",
]

SIZE = 15
EMPTY, BLACK, WHITE = 0, 1, 2
#: Table 6, "Self" column: run length -> {open endpoints: value}.
SELF: dict[int, dict[int, int]] = {5: {2: 5, 1: 5}, 4: {2: 4, 1: 2}, 3: {2: 3, 1: 2}}
#: Table 6, "Defense" column.
DEFENSE: dict[int, dict[int, int]] = {5: {2: 2, 1: 5}, 4: {2: 4, 1: 3}, 3: {2: 3, 1: 2}}
#: Proposal scores are reported as ``REPORT_FACTOR * S`` (appendix, after eq 16).
REPORT_FACTOR = 20
DIRECTIONS: tuple[tuple[int, int], ...] = ((0, 1), (1, 0), (1, 1), (1, -1))
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

Move = tuple[int, int]
Board = tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class GomokuState:
    """The board (``EMPTY``/``BLACK``/``WHITE`` per cell), who moves, the moves so far, the winner."""

    board: Board
    to_move: int = BLACK
    moves: tuple[Move, ...] = ()
    winner: int | None = None

    @property
    def size(self) -> int:
        """Board side length."""
        return len(self.board)


def new_game(size: int = SIZE) -> GomokuState:
    """An empty ``size`` x ``size`` board, black to move."""
    if size < 5:
        raise ValueError(f"size must be at least 5, got {size}")
    return GomokuState(tuple((EMPTY,) * size for _ in range(size)))


def opponent(color: int) -> int:
    """The other colour."""
    return WHITE if color == BLACK else BLACK


def _on(board: Board, r: int, c: int) -> bool:
    return 0 <= r < len(board) and 0 <= c < len(board)


def is_over(state: GomokuState) -> bool:
    """Someone has five, or the board is full."""
    return state.winner is not None or len(state.moves) == state.size ** 2


def is_legal(state: GomokuState, move: Move) -> bool:
    """On the board, empty, and the game not over."""
    r, c = move
    return not is_over(state) and _on(state.board, r, c) and state.board[r][c] == EMPTY


def legal_moves(state: GomokuState) -> tuple[Move, ...]:
    """Every empty cell, row by row (none once the game is over)."""
    if is_over(state):
        return ()
    return tuple((r, c) for r in range(state.size) for c in range(state.size)
                 if state.board[r][c] == EMPTY)


def run_through(board: Board, move: Move, color: int, direction: tuple[int, int]) -> tuple[int, int]:
    """(length, open endpoints) of the contiguous ``color`` run through ``move`` along
    ``direction``, with ``move`` counted as ``color`` whatever the board holds there."""
    r0, c0 = move
    dr, dc = direction
    length, opened = 1, 0
    for sign in (1, -1):
        r, c = r0 + sign * dr, c0 + sign * dc
        while _on(board, r, c) and board[r][c] == color:
            length += 1
            r, c = r + sign * dr, c + sign * dc
        opened += int(_on(board, r, c) and board[r][c] == EMPTY)
    return length, opened


def pattern_value(length: int, open_ends: int, table: Mapping[int, Mapping[int, int]]) -> int:
    """Table 6: the value of one run; 0 for at most two stones or no open endpoint."""
    if length <= 2 or open_ends == 0:
        return 0
    return table[min(length, 5)][open_ends]


def _score(state: GomokuState, move: Move, color: int, table: Mapping[int, Mapping[int, int]]) -> int:
    return sum(pattern_value(*run_through(state.board, move, color, d), table) for d in DIRECTIONS)


def formation_score(state: GomokuState, move: Move) -> int:
    """F(a; s): Table 6 "Self" values of the mover's runs through ``move``, summed."""
    return _score(state, move, state.to_move, SELF)


def defense_score(state: GomokuState, move: Move) -> int:
    """D(a; s): Table 6 "Defense" values of the runs an opponent stone at ``move`` would form."""
    return _score(state, move, opponent(state.to_move), DEFENSE)


def raw_score(state: GomokuState, move: Move) -> int:
    """S = F + D (eq 16), unscaled; 0 for an illegal move."""
    if not is_legal(state, move):
        return 0
    return formation_score(state, move) + defense_score(state, move)


def move_score(state: GomokuState, move: Move | Invalid) -> float:
    """The reported proposal score ``min(100, 20 * S)``; 0 for an invalid or illegal move."""
    if is_invalid(move):
        return 0.0
    return float(min(100, REPORT_FACTOR * raw_score(state, move)))  # type: ignore[arg-type]


def place(state: GomokuState, move: Move) -> GomokuState:
    """The state after the mover places a stone at ``move``; ``ValueError`` if illegal."""
    if not is_legal(state, move):
        raise ValueError(f"illegal move {move}: off the board, occupied or the game is over")
    r, c = move
    color = state.to_move
    rows = list(state.board)
    rows[r] = rows[r][:c] + (color,) + rows[r][c + 1:]
    board = tuple(rows)
    five = any(run_through(board, move, color, d)[0] >= 5 for d in DIRECTIONS)
    return GomokuState(board, opponent(color), state.moves + (move,), color if five else None)


def episode_score(state: GomokuState, color: int) -> float:
    """R of eq 15: 1 if ``color`` won, else 0 (a loss, a full board or an unfinished game)."""
    return float(state.winner == color)


def move_name(move: Move) -> str:
    """``(7, 7)`` -> ``"H8"``."""
    return f"{LETTERS[move[1]]}{move[0] + 1}"


_PAIR = re.compile(r"[(\[]\s*(-?\d+)\s*,\s*(-?\d+)\s*[)\]]")
_NAME = re.compile(r"\b([A-Za-z])(\d{1,2})\b")


def _from_json(text: str) -> Move | None:
    for obj in flat_json_objects(text):
        if not isinstance(obj, dict):
            continue
        if isinstance(obj.get("row"), int) and isinstance(obj.get("col"), int):
            return obj["row"], obj["col"]
        name = obj.get("move")
        if isinstance(name, str) and (n := _NAME.fullmatch(name.strip())):
            return int(n.group(2)) - 1, LETTERS.index(n.group(1).upper())
        if isinstance(name, list) and len(name) == 2 and all(isinstance(v, int) for v in name):
            return name[0], name[1]
    return None


def parse_move(text: str, state: GomokuState) -> Move | Invalid:
    """A move from a reply, or ``Invalid`` (unparseable, off the board, occupied, game over).

    Read in order: a JSON object ``{"row": r, "col": c}`` or ``{"move": "H8"}`` (first one
    that parses); otherwise the *last* ``(r, c)``/``[r, c]`` pair (0-based) or ``H8`` name in
    the text, whichever comes later.
    """
    move = _from_json(text)
    if move is None:
        found: list[tuple[int, Move]] = [(m.start(), (int(m.group(1)), int(m.group(2))))
                                         for m in _PAIR.finditer(text)
                                         if max(len(m.group(1)), len(m.group(2))) < 4300]  # int()'s limit
        found += [(m.start(), (int(m.group(2)) - 1, LETTERS.index(m.group(1).upper())))
                  for m in _NAME.finditer(text)]
        if not found:
            return Invalid("no move found")
        move = max(found)[1]
    r, c = move
    if not _on(state.board, r, c):
        return Invalid(f"move {move} is off the {state.size}x{state.size} board")
    if is_over(state):
        return Invalid("the game is over")
    if state.board[r][c] != EMPTY:
        return Invalid(f"{move_name(move)} {move} is occupied")
    return move


@dataclass(frozen=True)
class GomokuTask:
    """The Gomoku task (Table 1): proposals are moves, scored by eq 16 times 20 (clipped at 100)."""

    name: str = "gomoku"

    def score(self, proposal: object, state: GomokuState) -> float:
        """See :func:`move_score`."""
        return move_score(state, proposal)  # type: ignore[arg-type]

    def max_score(self, state: GomokuState) -> float:
        """S*: the best score over every legal move (0 when none)."""
        return max((move_score(state, m) for m in legal_moves(state)), default=0.0)

    def canonical(self, proposal: object) -> object:
        """``(row, col)`` as a tuple of ints; an ``Invalid`` stays itself."""
        if is_invalid(proposal):
            return proposal
        return tuple(int(v) for v in proposal)  # type: ignore[union-attr]

    def parse(self, text: str, state: GomokuState) -> Move | Invalid:
        """See :func:`parse_move`."""
        return parse_move(text, state)


def render_prompt(state: GomokuState) -> str:
    """The task prompt in the spirit of Fig. 14: board, legality, priorities, answer format."""
    n = state.size
    mark = {EMPTY: ".", BLACK: "X", WHITE: "O"}
    rows = [f"{r + 1:>2} " + " ".join(mark[v] for v in state.board[r]) for r in range(n)]
    head = "   " + " ".join(LETTERS[:n])
    me = "black (X)" if state.to_move == BLACK else "white (O)"
    last = move_name(state.moves[-1]) if state.moves else "none (you open the game)"
    return (
        f"You play Gomoku on a {n}x{n} board as {me}. Black moves first; players alternate.\n"
        "Five or more of your stones in a row (horizontally, vertically or diagonally) wins.\n"
        f"Board (columns A-{LETTERS[n - 1]} left to right, rows 1-{n} top to bottom):\n"
        f"{head}\n" + "\n".join(rows) + "\n"
        f"Opponent's last move: {last}.\n"
        "You may only place a stone on an empty point ('.') inside the board.\n"
        "Priorities: win now if you can; otherwise block an opponent five; then build open fours "
        "and threes of your own, or break the opponent's.\n"
        'Answer with JSON: {"move": "H8"} (column letter, row number).'
    )


def greedy_move(state: GomokuState, rng: random.Random) -> Move:
    """Offline stand-in opponent: an immediate win if there is one, else the move with the
    highest S (eq 16) among empty cells within two of a stone (the centre on an empty board),
    ties broken by ``rng``."""
    legal = legal_moves(state)
    if not legal:
        raise ValueError("no legal move: the game is over")
    if not state.moves:
        return state.size // 2, state.size // 2
    color = state.to_move
    wins = [m for m in legal if any(run_through(state.board, m, color, d)[0] >= 5 for d in DIRECTIONS)]
    if wins:
        return rng.choice(wins)
    near = [m for m in legal if any(abs(m[0] - r) <= 2 and abs(m[1] - c) <= 2 for r, c in state.moves)]
    scored = {m: raw_score(state, m) for m in near}
    best = max(scored.values())
    return rng.choice([m for m in near if scored[m] == best])


Policy = Callable[[GomokuState], "Move | Invalid"]


def play_gomoku(state: GomokuState, policies: Mapping[int, Policy], seed: int = 0
                ) -> tuple[GomokuState, list[dict[str, object]]]:
    """Alternate ``policies[colour](state)`` until the game ends. An invalid or illegal move
    is replaced by a seeded random legal move and recorded as invalid."""
    rng = random.Random(f"gomoku-fallback-{seed}")
    log: list[dict[str, object]] = []
    while not is_over(state):
        color = state.to_move
        move = policies[color](state)
        ok = not is_invalid(move) and is_legal(state, move)  # type: ignore[arg-type]
        chosen: Move = move if ok else rng.choice(legal_moves(state))  # type: ignore[assignment]
        log.append({"ply": len(state.moves) + 1, "color": color, "move": chosen,
                    "score": move_score(state, move),
                    "invalid": None if ok else getattr(move, "reason", f"illegal {move!r}")})
        state = place(state, chosen)
    return state, log


@dataclass(frozen=True)
class GomokuGame:
    """One game of the 50 per pairing: its seed and the colour the evaluated MAS plays."""

    index: int
    seed: int
    mas_color: int
    size: int = SIZE


def gomoku_games(n: int = 50, seed: int = 0) -> tuple[GomokuGame, ...]:
    """``n`` games, the MAS black in even-numbered games and white in odd ones (25/25 for 50)."""
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    rng = random.Random(f"gomoku-{seed}")
    return tuple(GomokuGame(i, rng.randrange(2**31), BLACK if i % 2 == 0 else WHITE) for i in range(n))
