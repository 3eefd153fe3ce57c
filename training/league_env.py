"""A Gymnasium single-agent view of the AEC environment: one learning seat against frozen players.

The learner plays one seat; every other seat is played by one opponent kind drawn per
episode from a weighted pool: ``snapshot`` (a frozen copy of the learner, from the newest
few saved), ``random`` or ``heuristic``, as in the native trainer's league games
(``training/league.py``). The learner's seat rotates between episodes so it learns every
seat. ``action_masks()`` is what sb3-contrib's MaskablePPO asks for.

An action outside the mask forfeits the game (reward -1, ``info["illegal_action"]``), as
PettingZoo's ``TerminateIllegalWrapper`` does; masked learners never do that.

The games are played through the one game runner (``players.runner``) on a batch of one game
(``vector.make``'s: the C++ core's where it is built, else the Python engine's; ``backend``): the
learner's seat plays the action ``step`` is given, the other seats their policies' (the batch's
own random and heuristic players, a snapshot's network), until the learner is to move again. The
batch deals its next game as one ends, so the observation returned with ``terminated`` is the
learner's last (a finished game's value is never bootstrapped from it).

The episode's last ``info`` carries ``episode_stats``: the opponent kind, the win share,
the final score and its components, the game length, Jade spent and favors played. The
training callback turns those into TensorBoard curves.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from island_fortress_env import vector
from island_fortress_env.engine import actions as A
from island_fortress_env.engine.results import GameResult
from island_fortress_env.engine.scoring import win_loss_returns
from island_fortress_env.env.observation import OBS_HIGH, OBS_LOW, OBS_SIZE
from island_fortress_env.players.runner import GameRunner, Games, Seating, SeatPolicy
from island_fortress_env.players.seat_policies import BatchSeats, CheckpointSeats
from island_fortress_env.training.figures import result_figures
from island_fortress_env.training.shaping import gain_reward

OPPONENT_KINDS = ("snapshot", "random", "heuristic")
SNAPSHOTS_KEPT = 3  # snapshot networks held in memory, the most recently drawn
SEED_BOUND = 2**31 - 1  # a game's deal and its seats' seeds are drawn below this


class LearnerSeat:
    """The learning seat in the runner: it plays the action ``LeagueEnv.step`` was given."""

    name = "learner"

    def __init__(self) -> None:
        self.action = -1

    def begin(self, slot: int, seat: int, seed: int | None) -> None:
        pass

    def act(self, observations: np.ndarray, masks: np.ndarray, games: Games) -> np.ndarray:
        return np.full(len(games), self.action, dtype=np.int64)


class LeagueEnv(gym.Env):
    metadata = {"render_modes": []}  # noqa: RUF012 (Gymnasium declares it an instance attribute)

    def __init__(
        self,
        num_players: int = 3,
        env_options: dict | None = None,
        opponents: dict[str, float] | None = None,
        reward_win: float = 1.0,
        reward_vp: float = 1.0,
        reward_vp_relative: bool = False,
        snapshot_paths: Sequence[str] = (),
        seed: int | None = None,
        backend: str = "auto",
    ) -> None:
        super().__init__()
        self.batch = vector.make(1, num_players=num_players, backend=backend, **(env_options or {}))
        self.num_players = num_players
        weights = {k: float(v) for k, v in (opponents or {"random": 1.0}).items() if v > 0}
        unknown = set(weights) - set(OPPONENT_KINDS)
        if unknown:
            raise ValueError(f"unknown opponent kind(s) {sorted(unknown)}; known: {OPPONENT_KINDS}")
        self.opponent_weights = weights
        self.reward_win = reward_win
        self.reward_vp = reward_vp
        self.reward_vp_relative = reward_vp_relative
        self.observation_space = gym.spaces.Box(OBS_LOW, OBS_HIGH, (OBS_SIZE,), np.float32)
        self.action_space = gym.spaces.Discrete(A.NUM_ACTIONS)
        self.snapshot_paths: list[str] = list(snapshot_paths)
        self._snapshots: OrderedDict[str, SeatPolicy] = OrderedDict()
        self._batch_players = {kind: BatchSeats(kind) for kind in ("random", "heuristic")}
        self._learner = LearnerSeat()
        self._episode = 0
        self.np_random, _ = gym.utils.seeding.np_random(seed)
        self.learner_seat = 0
        self.opponent_kind = "random"
        self.runner: GameRunner | None = None
        self.result: GameResult | None = None  # the last game's record, once it has ended
        self._observation = np.zeros(OBS_SIZE, dtype=np.float32)
        self._steps = 0

    # -- pool management (called in the worker process through VecEnv.env_method)
    def set_snapshot_pool(self, paths: Sequence[str]) -> None:
        self.snapshot_paths = list(paths)

    def _snapshot_policy(self) -> SeatPolicy:
        from island_fortress_env.agents.checkpoint import CheckpointAgent

        path = self.snapshot_paths[int(self.np_random.integers(len(self.snapshot_paths)))]
        if path not in self._snapshots:
            agent = CheckpointAgent(path, deterministic=False, name="snapshot")
            self._snapshots[path] = CheckpointSeats(agent)
            while len(self._snapshots) > SNAPSHOTS_KEPT:
                self._snapshots.popitem(last=False)
        self._snapshots.move_to_end(path)
        return self._snapshots[path]

    def _draw_opponent_kind(self) -> str:
        kinds = [k for k in self.opponent_weights if k != "snapshot" or self.snapshot_paths]
        if not kinds:  # only "snapshot" asked for, and none saved yet: play the random agent
            return "random"
        w = np.array([self.opponent_weights[k] for k in kinds])
        return kinds[int(self.np_random.choice(len(kinds), p=w / w.sum()))]

    # -- Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:  # a seeded reset restarts everything: seat rotation, opponents
            self._episode = 0
        n = self.num_players
        self.learner_seat = self._episode % n
        self._episode += 1
        self.opponent_kind = self._draw_opponent_kind()
        kind = self.opponent_kind
        opponent = self._snapshot_policy() if kind == "snapshot" else self._batch_players[kind]
        policies = tuple(self._learner if s == self.learner_seat else opponent for s in range(n))
        deal, *seeds = (int(v) for v in self.np_random.integers(SEED_BOUND, size=n + 1))
        dealt = iter([Seating(n, deal, policies, tuple(seeds))])
        self.runner = GameRunner(self.batch, lambda _slot: next(dealt, None))
        self.result, self._steps = None, 0
        self._play_opponents()
        return self._observe(), {}

    def step(self, action: int):
        runner, seat = self.runner, self.learner_seat
        if runner is None or self.result is not None:
            raise RuntimeError("step() before reset() or after the game ended: call reset()")
        action = int(action)
        if not (0 <= action < A.NUM_ACTIONS and self.batch.mask[0, action]):
            # As PettingZoo's TerminateIllegalWrapper: the game is forfeited (-1). A masked
            # learner never gets here; unmasked samplers (env checkers) must not crash.
            return self._observe(), -1.0, True, False, {"illegal_action": action}
        self._learner.action = action
        gained = self._advance()
        self._steps += 1
        gained += self._play_opponents()
        reward = self.reward_vp * gain_reward(gained.tolist(), seat, self.reward_vp_relative)
        info: dict[str, Any] = {}
        if self.result is not None:
            winners = [s for s, win in enumerate(self.result.win) if win > 0]
            reward += self.reward_win * win_loss_returns(self.num_players, winners)[seat]
            info["episode_stats"] = self._episode_stats()
        return self._observe(), float(reward), self.result is not None, False, info

    def action_masks(self) -> np.ndarray:
        if self.result is not None:
            return np.zeros(A.NUM_ACTIONS, dtype=bool)  # the game is over
        return self.batch.mask[0].astype(bool)

    # -- internals
    def _observe(self) -> np.ndarray:
        """The learner's observation (module doc: its last one once the game has ended)."""
        if self.result is None:
            self._observation = self.batch.obs[0].astype(np.float32, copy=True)
        return self._observation

    def _advance(self) -> np.ndarray:
        """One decision of the game: the points every seat gained on it."""
        assert self.runner is not None
        step = self.runner.step()
        if step.finished:
            self.result = step.finished[0].final
        return step.score_gains[0, : self.num_players].astype(np.int64)

    def _play_opponents(self) -> np.ndarray:
        """Let the other seats move until the learner must decide or the game is over; the points
        every seat gained meanwhile (the learner's own score can change on an opponent's move, when
        a row it leads is completed: ``step`` counts those too)."""
        gained = np.zeros(self.num_players, dtype=np.int64)
        while self.result is None and int(self.batch.player[0]) != self.learner_seat:
            gained += self._advance()
        return gained

    def _episode_stats(self) -> dict[str, Any]:
        assert self.result is not None
        return {"opponent": self.opponent_kind, "length": self._steps,
                **result_figures(self.result, [self.learner_seat])[0]}  # fmt: skip
