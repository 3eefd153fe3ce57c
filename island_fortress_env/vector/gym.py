"""``GymVectorEnv`` (``make_gym``): Gymnasium's ``VectorEnv`` over a batch of C++ core games.

One learning seat per game, every other seat played by the heuristic or the random player in
C++, so a single-agent vectorised trainer (CleanRL's ``ppo.py``, for one) runs on it unchanged,
the legal actions in ``infos["action_mask"]``.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

from island_fortress_env.core.memory import check_memory
from island_fortress_env.engine import actions as A
from island_fortress_env.env.observation import OBS_HIGH, OBS_LOW, OBS_SIZE
from island_fortress_env.vector.common import MAX_GAMES, _count
from island_fortress_env.vector.core_batch import VectorEnv, game_bytes, heuristic_bytes

__all__ = ["OPPONENTS", "GymVectorEnv", "make_gym"]

OPPONENTS = ("heuristic", "random")  # who plays the seats the learner does not


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
        if opponent == "heuristic":  # the batch and the opponent's caches, counted before either is made
            count = _count(num_envs, "num_games", 1, MAX_GAMES)
            check_memory(count, game_bytes() + heuristic_bytes(), "a batch and its heuristic player's caches")
        self._make = lambda batch_seed: VectorEnv(num_envs, num_players, batch_seed, threads, **options)
        self._vec = self._make(seed)
        self._vec._heuristic_checked = opponent == "heuristic"
        self._lock = threading.Lock()  # one call at a time
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
        if seed is not None and (not isinstance(seed, int | np.integer) or isinstance(seed, bool)):
            raise ValueError(f"seed must be one integer for the whole batch, not {seed!r}")
        with self._lock:
            return self._reset(seed)

    def _reset(self, seed: int | None) -> tuple[np.ndarray, dict[str, Any]]:
        if seed is not None:
            self._vec = self._make(int(seed))
        self._vec.reset()
        self._episode = np.array([self._vec.episodes(i) - 1 for i in range(self.num_envs)], dtype=np.int64)
        self._seat_learners(self._all)
        no_reward, not_ended = np.zeros(self.num_envs, np.float32), np.zeros(self.num_envs, np.bool_)
        self._play_opponents(no_reward, not_ended)
        return self._out(self._vec.obs), self._infos()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        with self._lock:
            return self._step(actions)

    def _step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
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
