"""What both batches of ``vector`` share: their limits, the record of a finished game
(``FinalResults``) and the checks of their arguments (``_count``, ``_index``, ``_player_counts``,
for the package's own modules)."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

import numpy as np

from island_fortress_env.engine import tables

__all__ = ["MAX_GAMES", "MAX_THREADS", "FinalResults"]

MAX_THREADS = 256  # threads one batch may run on (the core's limit, kMaxThreads)
MAX_GAMES = 2**31 - 1  # games one batch may hold (the core counts them in an int)


@dataclass(frozen=True)
class FinalResults:
    """The record of the games that ended on the last ``step()`` (``VectorEnv.final``): read-only
    arrays that every ``step()`` and ``reset()`` rewrite in place (copy what must be kept), valid in
    the rows where ``done`` is true and zero in the others; per seat (P = 4), zero for absent seats.
    Row ``i`` is ``engine.results.game_result`` of the game that ended in slot ``i``."""

    players: np.ndarray  # int32[N]: the table size
    seed: np.ndarray  # uint64[N]: the seed the game was dealt from
    length: np.ndarray  # int32[N]: the decisions taken in it
    rounds: np.ndarray  # int32[N]: the rounds played
    score: np.ndarray  # int64[N, P]: final scores
    rank: np.ndarray  # int32[N, P]: finishing position, 1 = winner (scoring.finishing_positions)
    win: np.ndarray  # float32[N, P]: win share, 1/m for m tied winners (scoring.win_share)
    blocks_built: np.ndarray  # int32[N, P]: blocks on the wall
    favors_played: np.ndarray  # int32[N, P]: favor cards laid on the table
    jade_spent: np.ndarray  # int64[N, P]: Jade paid to the supply (engine.results.jade_spent)
    components: np.ndarray  # int64[N, P, C]: points by component, in scoring.COMPONENTS order


def _integer(value: Any, name: str) -> int:
    """``value`` as an integer: ``TypeError`` for what is no integer, a bool included."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, not a bool ({value!r})")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, not {value!r}") from None


def _count(value: Any, name: str, low: int, high: int) -> int:
    """``value`` as an integer in low..high: ``TypeError`` for what is no integer (a bool
    included), ``ValueError`` outside the range."""
    number = _integer(value, name)
    if not low <= number <= high:
        raise ValueError(f"{name} must be {low}..{high:,}, not {number}")
    return number


def _index(value: Any, size: int) -> int:
    """``value`` as the index of a game of a batch of ``size``: ``TypeError`` for what is no
    integer (a bool included), ``IndexError`` outside 0..size-1."""
    index = _integer(value, "a game index")
    if not 0 <= index < size:
        raise IndexError(f"no game {index} in a batch of {size}")
    return index


def _player_counts(num_players: Any) -> tuple[int, ...]:
    """``num_players`` (a table size or a sequence of them) as a tuple of table sizes."""
    if isinstance(num_players, bool):
        raise TypeError(f"num_players must be an integer or a sequence of them, not a bool ({num_players!r})")
    try:
        values: tuple[Any, ...] = (operator.index(num_players),)
    except TypeError:
        try:
            values = tuple(num_players)
        except TypeError:
            raise TypeError(
                f"num_players must be an integer or a sequence of them, not {num_players!r}"
            ) from None
    counts = []
    for n in values:
        if isinstance(n, bool):
            raise TypeError(f"num_players must be integers, not a bool ({n!r})")
        try:
            counts.append(operator.index(n))
        except TypeError:
            raise TypeError(f"num_players must be integers, not {n!r}") from None
    if not counts or any(n not in tables.PLAYER_COUNTS for n in counts):
        raise ValueError(f"num_players must be one of {tables.PLAYER_COUNTS} or a sequence of them")
    return tuple(counts)


def _continued_state(state: Any, kind: type[Any], kind_name: str) -> None:
    """``set_state``'s checks of the state to continue, alike for both batches: of ``kind`` (else
    ``TypeError``), a game under way (else ``ValueError``)."""
    if not isinstance(state, kind):
        raise TypeError(f"the batch continues a {kind_name}, not a {type(state).__name__}")
    if state.is_terminal():
        raise ValueError("the game is over: a batch continues a game under way")


def _with_game(games: tuple[Any, ...], next_games: dict[int, Any], index: int, game: Any) -> tuple[Any, ...]:
    """``games`` with game ``index`` playing ``game`` for the episode under way (a state
    ``set_state`` continued); ``next_games`` keeps the slot's own table for the episodes after it."""
    if game is games[index]:
        return games
    next_games.setdefault(index, games[index])
    return (*games[:index], game, *games[index + 1 :])
