"""``VectorEnv``: many games at once, stepped in the C++ core (the package's docstring says how).

Each game is a C++ core game (the same rules, observation and mask bytes as the engine and the
PettingZoo env); the games are split over ``threads`` threads with the GIL released, and the
arrays of every game are written in place at every call. ``game_bytes()`` and ``heuristic_bytes()``
are the memory one game of a batch needs, checked before a batch is made.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from island_fortress_env.core.memory import check_memory
from island_fortress_env.engine import actions as A
from island_fortress_env.engine import rng, scoring, tables
from island_fortress_env.engine.game import Game
from island_fortress_env.env.observation import OBS_SIZE
from island_fortress_env.vector.common import (
    MAX_GAMES,
    MAX_THREADS,
    FinalResults,
    _continued_state,
    _count,
    _index,
    _player_counts,
    _with_game,
)

__all__ = ["VectorEnv", "game_bytes", "heuristic_bytes"]

# The bytes of a game's arrays here: obs, mask, player, rewards, done, the actions given to step,
# the arrays random_actions, heuristic_actions and score_gains return, the games tuple and the
# list of the core's games made for the batch.
_ARRAY_BYTES = (
    OBS_SIZE * 4 + A.NUM_ACTIONS + 4 + tables.MAX_PLAYERS * 4 + 1 + 8 + 8 + 8 + tables.MAX_PLAYERS * 8
)
_LIST_BYTES = 8 + 8 + 16


def game_bytes() -> int:
    """The memory one game of a batch needs (bytes): its arrays here and its slot in the core
    (state, history, heuristic player), not the heuristic player's caches (``heuristic_bytes()``)."""
    from island_fortress_env.core.state import _core

    return _ARRAY_BYTES + _LIST_BYTES + int(_core.BATCH_GAME_BYTES)


def heuristic_bytes() -> int:
    """The memory the heuristic player's caches add to one game of a batch, on its first call."""
    from island_fortress_env.core.state import _core

    return int(_core.HEURISTIC_BYTES)


class VectorEnv:
    """``num_games`` games in the C++ core; see the package's docstring (``vector``)."""

    backend = "core"  # where its games are stepped (``vector.make``'s backend)

    def __init__(
        self,
        num_games: int,
        num_players: int | Sequence[int] = 3,
        seed: int = 0,
        threads: int = 1,
        **options: Any,
    ) -> None:
        from island_fortress_env.core.state import OBS_SIZE, CoreState, _core, core_game

        self._CoreState = CoreState
        num_games = _count(num_games, "num_games", 1, MAX_GAMES)
        threads = _count(threads, "threads", 1, MAX_THREADS)
        counts = _player_counts(num_players)
        self.seed = rng.seed_state(seed)
        check_memory(num_games, game_bytes(), "the arrays and games of a batch")
        self.threads = threads
        self._options = options
        self._core_game = core_game
        by_size = {n: Game(num_players=n, **options) for n in dict.fromkeys(counts)}
        self._by_size = by_size
        # Game i is a table of counts[i % len(counts)] players (until set_players changes it).
        self.games: tuple[Game, ...] = tuple(by_size[counts[i % len(counts)]] for i in range(num_games))
        self._next_games: dict[int, Game] = {}  # set_players' tables, from each game's next episode
        self.num_games = num_games
        self._core = _core
        self._batch = _core.Batch(
            [core_game(g) for g in self.games], self.seed, threads, list(scoring.COMPONENT_INDEX)
        )
        self.final = FinalResults(**self._batch.final_arrays())  # views of the core's own arrays
        self.obs = np.zeros((num_games, OBS_SIZE), dtype=np.float32)
        self.mask = np.zeros((num_games, A.NUM_ACTIONS), dtype=np.bool_)
        self.player = np.zeros(num_games, dtype=np.int32)
        self.rewards = np.zeros((num_games, tables.MAX_PLAYERS), dtype=np.float32)
        self.done = np.zeros(num_games, dtype=np.bool_)
        self._started = False
        self._heuristic_checked = False  # the heuristic caches' memory was checked
        self._lock = threading.Lock()  # one call at a time (the core batch holds its own too)

    def reset(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A new game in every slot (the next episode of each); returns (obs, mask, player)."""
        with self._lock:
            self._batch.reset(self.obs, self.mask, self.player, self.rewards, self.done)
            self._started = True
            self._start_next_games(range(self.num_games))
            return self.obs, self.mask, self.player

    def step(
        self, actions: Any, games: Any = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One action per game; returns (obs, mask, player, rewards, done). An illegal action
        raises ``ValueError`` naming the game, and no game changes. With ``games`` (bool[N]) only
        the games where it is true move (the others' actions are ignored, -1 will do): the rest
        keep their obs, mask and player and get zero rewards and ``done`` false."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        a = np.asarray(actions)
        if a.shape != (self.num_games,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_games} integers, not {a.dtype} {a.shape}")
        if a.dtype != np.int64 or not a.flags.c_contiguous:
            converted = a.astype(np.int64)
            if not np.array_equal(converted, a):
                raise ValueError("actions must be ids in 0..NUM_ACTIONS-1")
            a = converted
        which = self._which(games)
        with self._lock:
            self._batch.step(a, self.obs, self.mask, self.player, self.rewards, self.done, which)
            if self._next_games:
                self._start_next_games(np.flatnonzero(self.done))
            return self.obs, self.mask, self.player, self.rewards, self.done

    def random_actions(self, games: Any = None) -> np.ndarray:
        """A uniformly random legal action in every game (a new int64 array); with ``games``
        (bool[N]), only in the games where it is true: -1 elsewhere, and those games draw nothing."""
        self._require_started()
        out = np.empty(self.num_games, dtype=np.int64)
        which = self._which(games)
        with self._lock:
            self._batch.random_actions(out, which)
        return out

    def heuristic_actions(self, games: Any = None) -> np.ndarray:
        """The heuristic player's action in every game (a new int64 array); with ``games``
        (bool[N]), only in the games where it is true (-1 elsewhere). The first call checks that
        the memory available holds the player's caches (``MemoryError`` if not; nothing made)."""
        self._require_started()
        out = np.empty(self.num_games, dtype=np.int64)
        which = self._which(games)
        with self._lock:
            if not self._heuristic_checked:
                check_memory(self.num_games, heuristic_bytes(), "the heuristic player's caches")
                self._heuristic_checked = True
            self._batch.heuristic_actions(out, which)
        return out

    def score_gains(self) -> np.ndarray:
        """Every seat's points scored on the last ``step()``, per game (int64[N, 4], a new array):
        in a game that ended on that step (``done``), those of its last move. Zero for absent seats
        and after ``reset()``. The score of seat ``s`` is the sum of its gains over the episode."""
        out = np.zeros((self.num_games, tables.MAX_PLAYERS), dtype=np.int64)
        with self._lock:
            self._batch.score_gains(out)
        return out

    def set_players(self, index: int, num_players: int) -> None:
        """Game ``index``'s episodes from its next one on are tables of ``num_players`` (the episode
        under way keeps its own; ``games[index]`` changes when the next one starts)."""
        index = _index(index, self.num_games)
        (num_players,) = _player_counts(num_players)
        with self._lock:
            game = self._by_size.get(num_players)
            if game is None:
                game = self._by_size[num_players] = Game(num_players=num_players, **self._options)
            self._batch.set_game(index, self._core_game(game))
            self._next_games[index] = game

    def set_seed(self, index: int, seed: int) -> None:
        """Game ``index``'s next episode is dealt from ``seed`` (0..2**64-1), the episodes after
        it from their own seeds again (the episode under way keeps its own; ``game_seed(index)``
        gives ``seed`` once it has started)."""
        index = _index(index, self.num_games)
        seed = _count(seed, "seed", 0, 2**64 - 1)
        with self._lock:
            self._batch.set_seed(index, seed)

    def set_state(self, index: int, state: Any, seed: int) -> None:
        """Game ``index`` continues from a copy of ``state`` (a ``core.state.CoreState`` of a game
        under way, of any table size and rules), its random chooser and heuristic player seeded
        from ``seed`` (0..2**64-1) as those of an episode dealt from it; ``obs``, ``mask`` and
        ``player`` show its decision at once. When it ends, its final results count the decisions
        taken from ``state`` on, with ``seed`` as its seed; the episodes after it are dealt as
        before. A finished game raises ``ValueError``, another kind of state ``TypeError``."""
        self._require_started()
        index = _index(index, self.num_games)
        seed = _count(seed, "seed", 0, 2**64 - 1)
        _continued_state(state, self._CoreState, "CoreState")
        with self._lock:
            outputs = (self.obs, self.mask, self.player, self.rewards, self.done)
            self._batch.set_state(index, state._s, seed, *outputs)
            self.games = _with_game(self.games, self._next_games, index, state.game)

    def _start_next_games(self, started: Any) -> None:
        """``games`` follows the games of ``started`` that began an episode of a table set by
        ``set_players``."""
        changed = [(int(i), self._next_games.pop(int(i))) for i in started if int(i) in self._next_games]
        if changed:
            games = list(self.games)
            for i, game in changed:
                games[i] = game
            self.games = tuple(games)

    def _which(self, games: Any) -> np.ndarray | None:
        if games is None:
            return None
        which = np.asarray(games)
        if which.shape != (self.num_games,) or which.dtype != np.bool_:
            raise ValueError(f"games must be {self.num_games} booleans, not {which.dtype} {which.shape}")
        return np.ascontiguousarray(which).view(np.uint8)

    def state(self, index: int) -> Any:
        """A copy of game ``index``'s state as a ``core.state.CoreState`` (batched games keep no
        event log, so its ``log`` holds no events)."""
        self._require_started()
        index = _index(index, self.num_games)
        state = object.__new__(self._CoreState)
        with self._lock:
            state._init(self.games[index], self._batch.state(index), [], 0)
        return state

    def game_seed(self, index: int, episode: int | None = None) -> int:
        """The seed of game ``index``'s episode ``episode`` as the batch seed gives it, or (no
        ``episode``) the seed of the episode being played, ``set_seed``'s where it chose one."""
        index = _index(index, self.num_games)
        if episode is None:
            self._require_started()
            with self._lock:
                return int(self._batch.seed(index))
        if isinstance(episode, bool):
            raise TypeError(f"episode must be an integer, not a bool ({episode!r})")
        try:
            number = operator.index(episode)
        except TypeError:
            raise TypeError(f"episode must be an integer, not {episode!r}") from None
        if not 0 <= number < 2**64:
            raise ValueError(f"episode must be 0..2**64-1, not {number}")
        return int(self._core.game_seed(self.seed, index, number))

    def episodes(self, index: int) -> int:
        """How many episodes game ``index`` has started."""
        index = _index(index, self.num_games)
        with self._lock:
            return int(self._batch.episode(index))

    def _require_started(self) -> None:
        if not self._started:
            raise RuntimeError("call reset() first")
