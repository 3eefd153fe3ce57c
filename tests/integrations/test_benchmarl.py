"""BenchMARL's route: the game as a BenchMARL task over its Parallel API, trained by BenchMARL's
own ``Experiment`` (MAPPO and IPPO), the policy masked by the Parallel view's masks."""

from __future__ import annotations

import pytest

pytest.importorskip("benchmarl", reason="BenchMARL is an optional extra: pip install '.[benchmarl]'")

import torch
from torchrl.envs.utils import check_env_specs

from island_fortress_env import island_fortress_v0
from island_fortress_env.env.global_state import STATE_SIZE

from .conftest import load_example, torch_threads_at_start

PASS = island_fortress_v0.PASS


@pytest.fixture(scope="module")
def example():
    return load_example("benchmarl_mappo")


def test_the_task_builds_an_env_that_passes_torchrls_spec_check(example):
    task = example.IslandFortressTask.FOUR_PLAYERS.get_task(config={"num_players": 4})
    env = task.get_env_fun(num_envs=1, continuous_actions=False, seed=0, device="cpu")()
    check_env_specs(env, seed=0)
    assert task.group_map(env) == {"player": [f"player_{i}" for i in range(4)]}
    assert task.action_mask_spec(env)["player", "action_mask"].shape == (4, PASS + 1)
    assert task.state_spec(env)["state"].shape == (STATE_SIZE,)
    assert set(task.observation_spec(env)["player"].keys()) == {"observation"}
    assert not task.supports_continuous_actions() and task.max_steps(env) == 2000


@pytest.mark.parametrize("algorithm", ["mappo", "ippo"])
def test_an_experiment_trains_and_its_policy_plays_legal_actions(example, algorithm):
    experiment = example.make_experiment(players=2, algorithm=algorithm, iterations=1, frames=200, seed=1)
    experiment.run()
    assert experiment.n_iters_performed == 1 and experiment.total_frames == 200
    env = experiment.test_env
    with torch.no_grad():
        rollout = env.rollout(400, policy=experiment.policy, break_when_any_done=True)
    mask = rollout["player", "action_mask"]
    action = rollout["player", "action"]
    assert mask.gather(-1, action.unsqueeze(-1)).all(), "every seat's action is allowed by its mask"
    assert ((action == PASS).sum(-1) == 1).all(), "one seat acts, the other passes"
    assert rollout["next", "done"].any(), "a 2-player game ends within 400 steps"


def test_example_runs_torch_on_one_thread_unless_told(example, monkeypatch):
    assert torch_threads_at_start(monkeypatch, example, "make_experiment", []) == [1]
    assert torch_threads_at_start(monkeypatch, example, "make_experiment", ["--threads", "2"]) == [2]
