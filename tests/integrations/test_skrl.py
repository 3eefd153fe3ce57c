"""skrl's PettingZoo route: ``wrap_env`` over the game's Parallel API, MAPPO and IPPO with masked
policies."""

from __future__ import annotations

import pytest

pytest.importorskip("skrl", reason="skrl is an optional extra: pip install '.[skrl]'")

import torch
from skrl.envs.wrappers.torch import wrap_env
from skrl.envs.wrappers.torch.pettingzoo_envs import PettingZooWrapper

from island_fortress_env import island_fortress_v0

from .conftest import load_example, torch_threads_at_start

PASS = island_fortress_v0.PASS


@pytest.fixture(scope="module")
def example():
    return load_example("skrl_mappo")


def test_skrl_picks_its_pettingzoo_wrapper_for_the_parallel_view():
    env = wrap_env(island_fortress_v0.parallel_env(num_players=3), verbose=False)
    assert isinstance(env, PettingZooWrapper)
    observations, _ = env.reset()
    assert env.num_agents == 3 and set(observations) == set(env.possible_agents)
    assert env.state()["player_0"].shape == (1, env.state_spaces["player_0"].shape[0])


@pytest.mark.parametrize("algorithm", ["mappo", "ippo"])
def test_training_runs_and_the_policy_picks_legal_actions_and_pass(example, algorithm):
    env, agent = example.train(players=2, algorithm=algorithm, rollouts=64, iterations=2, seed=1)
    game = env._unwrapped
    observations, _ = env.reset()
    states = env.state()
    steps = 0
    while game.agents:  # a whole game by the trained policy: the env raises on any illegal action
        mover = game.possible_agents[game.game_state.current_player()]
        with torch.no_grad():
            actions, _ = agent.act(observations, states, timestep=0, timesteps=1)
        for uid, action in actions.items():
            if uid == mover:
                assert int(action) in game.game_state.legal_actions()
            else:
                assert int(action) == PASS
        observations, rewards, terminated, _, _ = env.step(actions)
        states = env.state()
        steps += 1
    assert steps > 50 and all(bool(t) for t in terminated.values())
    assert sum(float(r) for r in rewards.values()) == pytest.approx(0.0)  # win/loss is zero-sum
    env.close()


def test_example_runs_torch_on_one_thread_unless_told(example, monkeypatch):
    assert torch_threads_at_start(monkeypatch, example, "train", []) == [1]
    assert torch_threads_at_start(monkeypatch, example, "train", ["--threads", "2"]) == [2]
