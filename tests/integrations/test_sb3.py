"""The SB3 example: sb3-contrib's MaskablePPO on the self-play Gymnasium view."""

from __future__ import annotations

import pytest

pytest.importorskip("sb3_contrib", reason="SB3 is in the [train] extra: pip install '.[train]'")

from .conftest import load_example, torch_threads_at_start


def test_sb3_example_trains_and_plays_only_legal_moves():
    example = load_example("sb3_maskable_ppo")
    model = example.train(timesteps=256, seed=0)
    assert model.num_timesteps >= 256
    win_share, legal = example.play(model, games=1)
    assert legal and 0.0 <= win_share <= 1.0


def test_sb3_example_runs_torch_on_one_thread_unless_told(monkeypatch):
    example = load_example("sb3_maskable_ppo")
    assert torch_threads_at_start(monkeypatch, example, "train", []) == [1]
    assert torch_threads_at_start(monkeypatch, example, "train", ["--threads", "2"]) == [2]
