"""A Gymnasium single-agent view of the AEC environment: one learning seat against frozen players.

The learner plays one seat; every other seat is played by one opponent kind drawn per
episode from a weighted pool: ``snapshot`` (a frozen copy of the learner, from the newest
few saved), ``random`` or ``heuristic``, as in the native trainer's league games
(``training/league.py``). The learner's seat rotates between episodes so it learns every
seat. ``action_masks()`` is what sb3-contrib's MaskablePPO asks for.

An action outside the mask forfeits the game (reward -1, ``info["illegal_action"]``), as
PettingZoo's ``TerminateIllegalWrapper`` does; masked learners never do that.

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

from island_fortress_env.agents import RandomAgent
from island_fortress_env.engine.results import GameResult, game_result
from island_fortress_env.engine.scoring import win_loss_returns
from island_fortress_env.env.aec import raw_env
from island_fortress_env.env.observation import action_mask
from island_fortress_env.training.figures import result_figures
from island_fortress_env.training.shaping import score_gain_reward

OPPONENT_KINDS = ("snapshot", "random", "heuristic")


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
    ) -> None:
        super().__init__()
        self.aec = raw_env(num_players=num_players, **(env_options or {}))
        self.num_players = num_players
        weights = {k: float(v) for k, v in (opponents or {"random": 1.0}).items() if v > 0}
        unknown = set(weights) - set(OPPONENT_KINDS)
        if unknown:
            raise ValueError(f"unknown opponent kind(s) {sorted(unknown)}; known: {OPPONENT_KINDS}")
        self.opponent_weights = weights
        self.reward_win = reward_win
        self.reward_vp = reward_vp
        self.reward_vp_relative = reward_vp_relative
        # The spaces of the wrapped env (one seat's view), not a second copy of them.
        seat_spaces = self.aec.observation_spaces[self.aec.possible_agents[0]]
        self.observation_space = seat_spaces["observation"]
        self.action_space = self.aec.action_space(self.aec.possible_agents[0])
        self.snapshot_paths: list[str] = list(snapshot_paths)
        self._snapshot_cache: OrderedDict[str, Any] = OrderedDict()
        self._episode = 0
        self._seed = seed
        self.np_random, _ = gym.utils.seeding.np_random(seed)
        self.learner_seat = 0
        self.opponent_kind = "random"
        self._opponents: dict[int, Any] = {}
        self._random = RandomAgent(seed=seed)
        self._heuristic: Any = None  # a HeuristicAgent, made on first use

    # -- pool management (called in the worker process through VecEnv.env_method)
    def set_snapshot_pool(self, paths: Sequence[str]) -> None:
        self.snapshot_paths = list(paths)

    def _snapshot_agent(self):
        from island_fortress_env.agents.checkpoint import CheckpointAgent

        path = self.snapshot_paths[int(self.np_random.integers(len(self.snapshot_paths)))]
        if path not in self._snapshot_cache:
            self._snapshot_cache[path] = CheckpointAgent(
                path, seed=int(self.np_random.integers(2**31 - 1)), deterministic=False, name="snapshot"
            )
            while len(self._snapshot_cache) > 3:
                self._snapshot_cache.popitem(last=False)
        return self._snapshot_cache[path]

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
            self._random.reset(seed)
            if self._heuristic is not None:
                self._heuristic.reset(seed)
            for agent in self._snapshot_cache.values():
                agent.reset(seed)
        self.aec.reset(seed=int(self.np_random.integers(2**31 - 1)))
        self.learner_seat = self._episode % self.num_players
        self._episode += 1
        self.opponent_kind = self._draw_opponent_kind()
        if self.opponent_kind == "snapshot":
            agent = self._snapshot_agent()
        elif self.opponent_kind == "heuristic":
            if self._heuristic is None:
                from island_fortress_env.baseline.heuristic import HeuristicAgent

                self._heuristic = HeuristicAgent(seed=self._seed)
            agent = self._heuristic
        else:
            agent = self._random
        self._opponents = {s: agent for s in range(self.num_players) if s != self.learner_seat}
        self._steps = 0
        self._play_opponents()
        return self._observe(), {}

    def step(self, action: int):
        state = self.aec.game_state
        seat = self.learner_seat
        if int(action) not in state.legal_actions():
            # As PettingZoo's TerminateIllegalWrapper: the game is forfeited (-1). A masked
            # learner never gets here; unmasked samplers (env checkers) must not crash.
            return self._observe(), -1.0, True, False, {"illegal_action": int(action)}
        before = state.score[:]
        self.aec.step(int(action))
        self._steps += 1
        self._play_opponents()
        reward = self.reward_vp * score_gain_reward(before, state.score, seat, self.reward_vp_relative)
        terminated = state.is_terminal()
        info: dict[str, Any] = {}
        if terminated:
            reward += self.reward_win * win_loss_returns(self.num_players, state.winners)[seat]
            info["episode_stats"] = self._episode_stats()
        return self._observe(), float(reward), terminated, False, info

    def action_masks(self) -> np.ndarray:
        return action_mask(self.aec.game_state).astype(bool)  # all False once the game is over

    # -- internals
    def _observe(self) -> np.ndarray:
        return self.aec.encoder.encode(self.aec.game_state, self.learner_seat)

    def _play_opponents(self) -> None:
        """Let the other seats move until the learner must decide or the game is over.

        The learner's own score can change on an opponent's move (a row it leads is
        completed); ``step`` measures the score after this, so that reward is not lost.
        """
        aec = self.aec
        state = aec.game_state
        while not state.is_terminal() and state.current_player() != self.learner_seat:
            seat = state.current_player()
            obs = aec.observe(aec.agent_selection)
            action = self._opponents[seat].act(obs["observation"], obs["action_mask"], state)
            aec.step(action)

    def _episode_stats(self) -> dict[str, Any]:
        return {"opponent": self.opponent_kind, "length": self._steps,
                **result_figures(self._result(), [self.learner_seat])[0]}  # fmt: skip

    def _result(self) -> GameResult:
        """The finished game's record (its seed and length are not logged: zeros)."""
        return game_result(self.aec.game_state, seed=0, length=0)
