"""The Parallel view through PettingZoo's ``parallel_seed_test`` as fixed upstream (PettingZoo
pull request #1437): the check it ships up to 1.27 stops after one step, because
``any(terminations)`` over the step's dict reads its keys (agent names, always true), not its
values. The fixed logic is vendored below, with the one change (``.values()``) marked, and
returns how many steps it compared. With masked sampling (the seats' spaces draw from their
current mask) it replays whole games; with PettingZoo's unmasked sampling the game ends at the
first illegal action (``illegal_action="terminate"``)."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import data_equivalence
from pettingzoo import ParallelEnv

from island_fortress_env import island_fortress_v0

# the module (``pettingzoo.test.seed_test`` as an attribute is the AEC test function)
seed_test = importlib.import_module("pettingzoo.test.seed_test")
INSTALLED_IS_FIXED = "terminations1.values()" in inspect.getsource(
    seed_test.check_environment_deterministic_parallel
)


def fixed_check_environment_deterministic_parallel(env1, env2, num_cycles: int) -> int:
    """PettingZoo's ``check_environment_deterministic_parallel`` (pettingzoo/test/seed_test.py)
    with #1437's fix; returns the number of steps compared."""
    env1.reset(seed=42)
    env2.reset(seed=42)
    seed_test.seed_action_spaces(env1)
    seed_test.seed_action_spaces(env2)
    seed_test.seed_observation_spaces(env1)
    seed_test.seed_observation_spaces(env2)
    iterations = 0
    max_env_iters = num_cycles * len(env1.agents)
    env1.reset(seed=42)
    env2.reset(seed=42)
    seed_test.seed_action_spaces(env1)
    seed_test.seed_action_spaces(env2)
    while env1.agents:
        actions1 = {agent: env1.action_space(agent).sample() for agent in env1.agents}
        actions2 = {agent: env2.action_space(agent).sample() for agent in env2.agents}
        assert data_equivalence(actions1, actions2), "Incorrect action seeding"
        obs1, rewards1, terminations1, truncations1, infos1 = env1.step(actions1)
        obs2, rewards2, terminations2, truncations2, infos2 = env2.step(actions2)
        iterations += 1
        assert data_equivalence(obs1, obs2), "Incorrect observations"
        assert data_equivalence(rewards1, rewards2), "Incorrect values for rewards"
        assert data_equivalence(terminations1, terminations2), "Incorrect terminations."
        assert data_equivalence(truncations1, truncations2), "Incorrect truncations"
        assert data_equivalence(infos1, infos2), "Incorrect infos"
        # the fix (#1437): the values of the dicts, not their keys
        if iterations >= max_env_iters or any(terminations1.values()) or any(truncations1.values()):
            break
    env1.close()
    env2.close()
    return iterations


def fixed_parallel_seed_test(parallel_env_fn, num_cycles: int = 500) -> int:
    return fixed_check_environment_deterministic_parallel(parallel_env_fn(), parallel_env_fn(), num_cycles)


class _MaskedSpace(spaces.Discrete):
    """A seat's action space whose ``sample()`` draws from the seat's current mask (its own seeded
    generator, as PettingZoo's check seeds it)."""

    def __init__(self, n: int, masks: dict[str, np.ndarray], agent: str) -> None:
        super().__init__(n)
        self._masks, self._agent = masks, agent

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        return super().sample(mask=self._masks[self._agent])


class MaskedSampling(ParallelEnv):
    """The Parallel view unchanged, but for its spaces' ``sample()``; counts its steps.
    ``corrupt_from``: from that step on, the observations it returns are altered (a broken env)."""

    def __init__(self, env: ParallelEnv, corrupt_from: int | None = None) -> None:
        self.env, self.corrupt_from, self.steps = env, corrupt_from, 0
        self.possible_agents = env.possible_agents
        self.metadata = env.metadata
        self._masks: dict[str, np.ndarray] = {}
        self._spaces = {
            a: _MaskedSpace(int(env.action_space(a).n), self._masks, a) for a in env.possible_agents
        }

    @property
    def agents(self) -> list[str]:  # type: ignore[override]
        return self.env.agents

    def action_space(self, agent: str) -> spaces.Space:
        return self._spaces[agent]

    def observation_space(self, agent: str) -> spaces.Space:
        return self.env.observation_space(agent)

    def _keep(self, observations: dict) -> dict:
        self._masks.update({a: o["action_mask"].astype(np.int8) for a, o in observations.items()})
        if self.corrupt_from is not None and self.steps >= self.corrupt_from:
            observations = {a: {**o, "observation": o["observation"] + 1.0} for a, o in observations.items()}
        return observations

    def reset(self, seed: int | None = None, options: dict | None = None):
        observations, infos = self.env.reset(seed=seed, options=options)
        self.steps = 0
        return self._keep(observations), infos

    def step(self, actions):
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        self.steps += 1
        return self._keep(observations), rewards, terminations, truncations, infos

    def close(self) -> None:
        self.env.close()


@pytest.mark.parametrize("n", [2, 3, 4])
def test_the_fixed_check_replays_whole_games_with_masked_sampling(backend, n):
    envs: list[MaskedSampling] = []

    def make() -> MaskedSampling:
        envs.append(MaskedSampling(island_fortress_v0.parallel_env(num_players=n, backend=backend)))
        return envs[-1]

    steps = fixed_parallel_seed_test(make)
    assert steps > 100 and steps == envs[0].steps == envs[1].steps
    assert envs[0].env.agents == []  # the game ran to its end, every step compared


@pytest.mark.parametrize("n", [2, 3, 4])
def test_the_fixed_check_passes_with_pettingzoos_unmasked_sampling(backend, n):
    fixed_parallel_seed_test(
        lambda: island_fortress_v0.parallel_env(num_players=n, backend=backend, illegal_action="terminate")
    )


def test_the_fixed_check_catches_a_difference_after_the_first_step_and_the_installed_one_may_not():
    built: list[MaskedSampling] = []

    def make() -> MaskedSampling:
        # the second env's observations differ from its fifth step on
        built.append(MaskedSampling(island_fortress_v0.parallel_env(num_players=3), 5 if built else None))
        return built[-1]

    with pytest.raises(AssertionError, match="Incorrect observations"):
        fixed_parallel_seed_test(make)
    if INSTALLED_IS_FIXED:
        with pytest.raises(AssertionError, match="Incorrect observations"):
            seed_test.parallel_seed_test(make)
    else:  # the check shipped before #1437: one step, and the difference goes unseen
        seed_test.parallel_seed_test(make)
        assert built[-1].steps == 1
