"""TorchRL's PettingZoo route: ``PettingZooWrapper(use_mask=True, return_state=True)``."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torchrl", reason="TorchRL is an optional extra: pip install '.[torchrl]'")

from torchrl.envs.utils import check_env_specs

from island_fortress_env.env.global_state import STATE_SIZE

from .conftest import load_example, torch_threads_at_start


@pytest.fixture(scope="module")
def example():
    return load_example("torchrl_collector")


def test_wrapper_passes_torchrls_spec_check_with_state_and_masks(example):
    env = example.make_env(seed=1)
    check_env_specs(env, seed=1)
    td = env.reset()
    assert td["state"].shape == (STATE_SIZE,)
    np.testing.assert_array_equal(td["state"].numpy(), env._env.state())
    assert td["agents", "action_mask"].any(-1).all()
    assert set(td["agents", "info"].keys()) == {"score", "won"}


def test_collector_with_a_masked_policy_stores_only_legal_actions_and_final_infos(example):
    batch = example.collect(frames=600, seed=0)
    assert example.every_action_legal(batch)
    done = batch["next", "done"].squeeze(-1)
    assert done.sum() >= 1, "at least one game must end inside the batch"
    won = batch["next", "agents", "info", "won"]
    score = batch["next", "agents", "info", "score"]
    assert (won[done].sum(-1) >= 1).all(), "every finished game has a winner in the infos"
    assert (won[~done] == 0).all()
    assert (score[done] > 0).all()
    assert batch["next", "state"].shape == (600, STATE_SIZE)


def test_example_runs_torch_on_one_thread_unless_told(example, monkeypatch):
    assert torch_threads_at_start(monkeypatch, example, "collect", []) == [1]
    assert torch_threads_at_start(monkeypatch, example, "collect", ["--threads", "2"]) == [2]
