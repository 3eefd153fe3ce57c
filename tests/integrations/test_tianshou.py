"""Tianshou's own PettingZoo route (``tianshou.env.PettingZooEnv``) with masked DQN."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tianshou", reason="Tianshou is an optional extra: pip install '.[tianshou]'")

from .conftest import load_example, torch_threads_at_start


@pytest.fixture(scope="module")
def example():
    return load_example("tianshou_dqn")


def test_pettingzoo_env_passes_the_mask_and_numeric_infos(example):
    env = example.get_env()
    obs, info = env.reset(seed=0)
    assert obs["agent_id"] == "player_0" and any(obs["mask"])
    assert info == {"score": 0, "won": 0}


def test_tiny_masked_dqn_training_stores_only_legal_actions(example):
    args = example.get_parser().parse_args(
        [
            "--epoch", "1", "--epoch-num-steps", "600", "--num-train-envs", "1",
            "--collection-step-num-env-steps", "100", "--hidden-sizes", "32", "--batch-size", "32",
        ]
    )  # fmt: skip
    result, buffer = example.train(args)
    assert result.train_step >= 600
    stored = buffer[buffer.sample_indices(0)]
    done = np.flatnonzero(stored.done)
    assert len(done) >= 1, "at least one whole game must pass through the buffer"
    assert example.every_stored_action_legal(buffer)
    # The infos (numeric at every step) reach the buffer: final scores on the last rows.
    assert set(stored.info.keys()) >= {"score", "won"}
    assert not np.isnan(stored.info.score.astype(float)).any()
    assert set(np.unique(stored.info.won)) <= {0, 1}
    assert (stored.info.score[done] > 0).all()


def test_example_runs_torch_on_one_thread_unless_told(example, monkeypatch):
    assert torch_threads_at_start(monkeypatch, example, "train", []) == [1]
    assert torch_threads_at_start(monkeypatch, example, "train", ["--threads", "2"]) == [2]
