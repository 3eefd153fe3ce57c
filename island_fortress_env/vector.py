"""Many games at once, stepped in C++: ``make(num_games, ...)`` -> ``reset()`` / ``step(actions)``.

The shape of EnvPool and pgx: one call applies one action in every game and returns numpy arrays
for all of them, with no Python object per game per step. Each game is a C++ core game (the same
rules, observation and mask bytes as the engine and the PettingZoo env); the games are split over
``threads`` threads with the GIL released.

    import island_fortress_env.vector as vector

    env = vector.make(64, num_players=(2, 3, 4), seed=0, threads=2)
    obs, mask, player = env.reset()
    for _ in range(1000):
        obs, mask, player, rewards, done = env.step(env.random_actions())

Arrays (N = num_games), written in place at every call and returned (copy what must be kept):

* ``obs`` float32[N, OBS_SIZE]: the observation of the player to move in each game (seat-relative);
* ``mask`` bool[N, NUM_ACTIONS]: that player's legal actions;
* ``player`` int32[N]: the seat to move;
* ``rewards`` float32[N, 4]: the win/loss returns of every seat (docs/RULES.md E23) in the games
  that ended on this step, zero elsewhere and for absent seats;
* ``done`` bool[N]: the game ended on this step. It has been replaced by a new game already: ``obs``,
  ``mask`` and ``player`` are the new game's first decision.

``score_gains()`` gives every seat's points scored on the last step (per-seat score deltas, for a
dense reward), ``set_players(i, n)`` changes the table size of game ``i`` from its next episode on,
and ``random_actions``/``heuristic_actions`` take a mask of the games to decide for.

Episode ``e`` of game ``i`` is the game ``core.new_initial_state(game, seed=game_seed(i, e))``
(episodes count from 0); ``random_actions`` draws like ``engine.play_random_game`` from that seed,
and ``heuristic_actions`` plays like ``HeuristicAgent(seed=that seed)`` at every seat.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from island_fortress_env.engine import actions as A
from island_fortress_env.engine import rng, tables
from island_fortress_env.engine.state import Game

__all__ = ["VectorEnv", "make"]


class VectorEnv:
    """``num_games`` games in the C++ core; see the module docstring."""

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
        num_games = operator.index(num_games)
        if num_games < 1:
            raise ValueError(f"num_games must be >= 1, not {num_games}")
        counts = (num_players,) if isinstance(num_players, int) else tuple(num_players)
        if not counts or any(n not in tables.PLAYER_COUNTS for n in counts):
            raise ValueError(f"num_players must be one of {tables.PLAYER_COUNTS} or a sequence of them")
        threads = operator.index(threads)
        if threads < 1:
            raise ValueError(f"threads must be >= 1, not {threads}")
        self.seed = rng.seed_state(seed)
        self._options = options
        self._core_game = core_game
        by_size = {n: Game(num_players=n, **options) for n in dict.fromkeys(counts)}
        self._by_size = by_size
        # Game i is a table of counts[i % len(counts)] players (until set_players changes it).
        self.games: tuple[Game, ...] = tuple(by_size[counts[i % len(counts)]] for i in range(num_games))
        self._next_games: dict[int, Game] = {}  # set_players' tables, from each game's next episode
        self.num_games = num_games
        self._core = _core
        self._batch = _core.Batch([core_game(g) for g in self.games], self.seed, threads)
        self.obs = np.zeros((num_games, OBS_SIZE), dtype=np.float32)
        self.mask = np.zeros((num_games, A.NUM_ACTIONS), dtype=np.bool_)
        self.player = np.zeros(num_games, dtype=np.int32)
        self.rewards = np.zeros((num_games, tables.MAX_PLAYERS), dtype=np.float32)
        self.done = np.zeros(num_games, dtype=np.bool_)
        self._actions = np.zeros(num_games, dtype=np.int64)
        self._started = False

    def reset(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A new game in every slot (the next episode of each); returns (obs, mask, player)."""
        self._batch.reset(self.obs, self.mask, self.player, self.rewards, self.done)
        self._started = True
        self._start_next_games(range(self.num_games))
        return self.obs, self.mask, self.player

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One action per game; returns (obs, mask, player, rewards, done). An illegal action
        raises ``ValueError`` naming the game, and no game changes."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        a = np.asarray(actions)
        if a.shape != (self.num_games,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_games} integers, not {a.dtype} {a.shape}")
        np.copyto(self._actions, a, casting="unsafe")
        if not np.array_equal(self._actions, a):
            raise ValueError("actions must be ids in 0..NUM_ACTIONS-1")
        self._batch.step(self._actions, self.obs, self.mask, self.player, self.rewards, self.done)
        if self._next_games:
            self._start_next_games(np.flatnonzero(self.done))
        return self.obs, self.mask, self.player, self.rewards, self.done

    def random_actions(self, games: Any = None) -> np.ndarray:
        """A uniformly random legal action in every game (a new int64 array); with ``games``
        (bool[N]), only in the games where it is true: -1 elsewhere, and those games draw nothing."""
        self._require_started()
        out = np.empty(self.num_games, dtype=np.int64)
        self._batch.random_actions(out, self._which(games))
        return out

    def heuristic_actions(self, games: Any = None) -> np.ndarray:
        """The heuristic player's action in every game (a new int64 array); with ``games``
        (bool[N]), only in the games where it is true (-1 elsewhere)."""
        self._require_started()
        out = np.empty(self.num_games, dtype=np.int64)
        self._batch.heuristic_actions(out, self._which(games))
        return out

    def score_gains(self) -> np.ndarray:
        """Every seat's points scored on the last ``step()``, per game (int64[N, 4], a new array):
        in a game that ended on that step (``done``), those of its last move. Zero for absent seats
        and after ``reset()``. The score of seat ``s`` is the sum of its gains over the episode."""
        out = np.zeros((self.num_games, tables.MAX_PLAYERS), dtype=np.int64)
        self._batch.score_gains(out)
        return out

    def set_players(self, index: int, num_players: int) -> None:
        """Game ``index``'s episodes from its next one on are tables of ``num_players`` (the episode
        under way keeps its own; ``games[index]`` changes when the next one starts)."""
        index = operator.index(index)
        if not 0 <= index < self.num_games:
            raise IndexError(f"no game {index} in a batch of {self.num_games}")
        if num_players not in tables.PLAYER_COUNTS:
            raise ValueError(f"num_players must be one of {tables.PLAYER_COUNTS}, not {num_players!r}")
        game = self._by_size.get(num_players)
        if game is None:
            game = self._by_size[num_players] = Game(num_players=num_players, **self._options)
        self._batch.set_game(index, self._core_game(game))
        self._next_games[index] = game

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
        index = operator.index(index)
        if not 0 <= index < self.num_games:
            raise IndexError(f"no game {index} in a batch of {self.num_games}")
        state = object.__new__(self._CoreState)
        state._init(self.games[index], self._batch.state(index), [], 0)
        return state

    def game_seed(self, index: int, episode: int | None = None) -> int:
        """The seed of game ``index``'s episode ``episode`` (default: the one being played)."""
        if episode is None:
            self._require_started()
            return int(self._batch.seed(index))
        return int(self._core.game_seed(self.seed, index, episode))

    def episodes(self, index: int) -> int:
        """How many episodes game ``index`` has started."""
        return int(self._batch.episode(index))

    def _require_started(self) -> None:
        if not self._started:
            raise RuntimeError("call reset() first")


def make(
    num_games: int, num_players: int | Sequence[int] = 3, seed: int = 0, threads: int = 1, **options: Any
) -> VectorEnv:
    """``num_games`` games of ``num_players`` players (or a table size per game, cycling through a
    sequence such as ``(2, 3, 4)``), seeded from ``seed``, stepped on ``threads`` threads; ``options``
    are the game's variants (``engine.GameConfig``)."""
    return VectorEnv(num_games, num_players, seed, threads, **options)
