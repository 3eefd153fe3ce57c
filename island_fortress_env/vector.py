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

``make_gym(num_envs, ...)`` is the Gymnasium ``VectorEnv`` view (``GymVectorEnv``): one learning
seat per game, every other seat played by the heuristic or the random player in C++, so a
single-agent vectorised trainer (CleanRL's ``ppo.py``, for one) runs on it unchanged, the legal
actions in ``infos["action_mask"]``.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

from island_fortress_env.engine import actions as A
from island_fortress_env.engine import rng, tables
from island_fortress_env.engine.state import Game
from island_fortress_env.env.observation import OBS_HIGH, OBS_LOW, OBS_SIZE

__all__ = ["GymVectorEnv", "VectorEnv", "make", "make_gym"]

OPPONENTS = ("heuristic", "random")  # who plays the seats the learner does not


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
        np.copyto(self._actions, a, casting="unsafe")
        if not np.array_equal(self._actions, a):
            raise ValueError("actions must be ids in 0..NUM_ACTIONS-1")
        self._batch.step(
            self._actions, self.obs, self.mask, self.player, self.rewards, self.done, self._which(games)
        )
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


class GymVectorEnv(gymnasium.vector.VectorEnv):
    """Gymnasium's ``VectorEnv`` over a ``VectorEnv``: in each of ``num_envs`` games one seat
    learns and ``opponent`` (``"heuristic"`` or ``"random"``) plays every other seat in C++.

    * ``reset(seed=None)`` -> ``(obs, infos)``; ``step(actions)`` -> ``(obs, rewards,
      terminations, truncations, infos)``: ``obs`` float32[N, 1317] is the learner's observation
      at its next decision (the opponents have moved in between), ``rewards`` its win/loss return
      (docs/RULES.md E23) when its game ended on this step and 0 otherwise, ``terminations`` the
      game ended, ``truncations`` always false (a game always ends by the rules).
    * ``infos["action_mask"]`` bool[N, 380]: the learner's legal actions (``action_masks()`` too,
      sb3-contrib's name); ``infos["seat"]``: its seat in each game.
    * Autoreset in the same step (``AutoresetMode.SAME_STEP``, as EnvPool does): where a game
      ended, ``obs`` is already the next game's first decision of the learner. Games are never
      truncated, so no final observation is needed to bootstrap, and none is given.
    * The learner's seat: ``learner_seat`` in every game, or (``None``, the default) seat
      ``e % num_players`` in episode ``e`` of a game, so it plays every seat in turn.
    * ``reset(seed=S)`` starts the batch again from batch seed ``S`` (the same games as
      ``make_gym(..., seed=S)``); ``reset()`` starts the next episode in every game.
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int | Sequence[int] = 3,
        opponent: str = "heuristic",
        seed: int = 0,
        threads: int = 1,
        learner_seat: int | None = None,
        copy: bool = True,
        **options: Any,
    ) -> None:
        if opponent not in OPPONENTS:
            raise ValueError(f"opponent must be one of {OPPONENTS}, not {opponent!r}")
        self._make = lambda batch_seed: VectorEnv(num_envs, num_players, batch_seed, threads, **options)
        self._vec = self._make(seed)
        sizes = np.array([g.num_players for g in self._vec.games], dtype=np.int64)
        if learner_seat is not None:
            learner_seat = operator.index(learner_seat)
            if not 0 <= learner_seat < sizes.min():
                raise ValueError(f"learner_seat must be a seat of every table (0..{sizes.min() - 1})")
        self._fixed_seat = learner_seat
        self._opponent = opponent
        self._copy = copy
        self.num_envs = self._vec.num_games
        batch_space = gymnasium.vector.utils.batch_space
        self.single_observation_space = gymnasium.spaces.Box(OBS_LOW, OBS_HIGH, (OBS_SIZE,), np.float32)
        self.single_action_space = gymnasium.spaces.Discrete(A.NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP}
        self.seat = np.zeros(self.num_envs, dtype=np.int64)
        self._episode = np.zeros(self.num_envs, dtype=np.int64)
        self._all = np.arange(self.num_envs)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if options:
            raise ValueError(f"GymVectorEnv.reset takes no options, got {sorted(options)}")
        if seed is not None:
            if not isinstance(seed, int | np.integer) or isinstance(seed, bool):
                raise ValueError(f"seed must be one integer for the whole batch, not {seed!r}")
            self._vec = self._make(int(seed))
        self._vec.reset()
        self._episode = np.array([self._vec.episodes(i) - 1 for i in range(self.num_envs)], dtype=np.int64)
        self._seat_learners(self._all)
        no_reward, not_ended = np.zeros(self.num_envs, np.float32), np.zeros(self.num_envs, np.bool_)
        self._play_opponents(no_reward, not_ended)
        return self._out(self._vec.obs), self._infos()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        _, _, _, rewards, done = self._vec.step(actions)
        reward = rewards[self._all, self.seat].copy()
        terminated = done.copy()
        self._next_episodes(np.flatnonzero(done))
        self._play_opponents(reward, terminated)
        truncated = np.zeros(self.num_envs, dtype=np.bool_)
        return self._out(self._vec.obs), reward, terminated, truncated, self._infos()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game, bool[N, 380]."""
        return self._out(self._vec.mask)

    def state(self, index: int) -> Any:
        """A copy of game ``index``'s state (``VectorEnv.state``)."""
        return self._vec.state(index)

    def _play_opponents(self, reward: np.ndarray, terminated: np.ndarray) -> None:
        """The other seats move, in every game at once, until each game waits for its learner;
        a game that ends meanwhile adds the learner's return to ``reward`` and sets ``terminated``."""
        choose = self._vec.heuristic_actions if self._opponent == "heuristic" else self._vec.random_actions
        while True:
            waiting = self._vec.player != self.seat
            if not waiting.any():
                return
            _, _, _, rewards, done = self._vec.step(choose(waiting), games=waiting)
            ended = np.flatnonzero(done)
            if ended.size:
                reward[ended] += rewards[ended, self.seat[ended]]
                terminated[ended] = True
                self._next_episodes(ended)

    def _next_episodes(self, ended: np.ndarray) -> None:
        if ended.size:
            self._episode[ended] += 1
            self._seat_learners(ended)

    def _seat_learners(self, which: np.ndarray) -> None:
        if self._fixed_seat is not None:
            self.seat[which] = self._fixed_seat
            return
        sizes = np.array([self._vec.games[i].num_players for i in which], dtype=np.int64)
        self.seat[which] = self._episode[which] % sizes

    def _infos(self) -> dict[str, Any]:
        present = np.ones(self.num_envs, dtype=np.bool_)
        return {
            "action_mask": self.action_masks(),
            "_action_mask": present,
            "seat": self.seat.copy(),
            "_seat": present,
        }

    def _out(self, array: np.ndarray) -> np.ndarray:
        return array.copy() if self._copy else array


def make_gym(
    num_envs: int,
    num_players: int | Sequence[int] = 3,
    opponent: str = "heuristic",
    seed: int = 0,
    threads: int = 1,
    learner_seat: int | None = None,
    copy: bool = True,
    **options: Any,
) -> GymVectorEnv:
    """A Gymnasium ``VectorEnv`` of ``num_envs`` games, one learning seat each, ``opponent`` at the
    others (see ``GymVectorEnv``); ``copy=False`` returns the batch's own arrays, rewritten at the
    next call, instead of copies."""
    return GymVectorEnv(num_envs, num_players, opponent, seed, threads, learner_seat, copy, **options)
