"""Tiny native training runs for the trainer's tests: a config that trains in seconds and a
recorder of every PPO update (the two ways a collector plays its games are the ``backend``
fixture's, ``conftest.py``)."""

from __future__ import annotations

import copy
from pathlib import Path

import torch

from island_fortress_env.training.config import NativeConfig, load_config

ROOT = Path(__file__).resolve().parents[1]


def tiny_config(base: Path, run_name: str, *extra: str, config: str = "default.yaml") -> NativeConfig:
    """``configs/<config>`` made tiny (a network of 4 channels and 16 units, 600 decisions in
    rollouts of 300, one process), its runs and checkpoints under ``base``, then ``extra``."""
    return load_config(
        ROOT / "configs" / config,
        [
            f"run_name={run_name}",
            "pretrain.games=3",
            "pretrain.epochs=1",
            "train.total_decisions=600",
            "train.rollout_decisions=300",
            "train.games_per_collector=3",
            "train.workers=0",
            "train.pipelined=false",
            "train.fit_threads=false",  # the same threads in every run: the same losses
            "train.checkpoint_every=300",
            "train.max_minutes=0",
            "ppo.minibatch_size=100",
            "ppo.n_epochs=2",
            "league.share=0.5",
            "league.snapshot=1.0",
            "league.heuristic=0.0",
            "league.random=1.0",
            "league.snapshot_every=300",
            "policy.cnn_channels=4",
            "policy.hidden=16",
            "eval.every=300",
            "eval.games=1",
            "eval.final_games=1",
            "eval.opponents=[random]",
            "eval.keep_best=false",
            "logging.progress_bar=false",
            f"logging.runs_dir={base / 'runs'}",
            f"logging.checkpoints_dir={base / 'ckpt'}",
            *extra,
        ],
        schema=NativeConfig,
    )


def record_updates(monkeypatch) -> list[dict]:
    """From now on, every PPO update of a run is recorded first: the weights, the optimizer state
    (Adam's moments and step counts) and the learning rate it starts from, and its rollout's size."""
    from island_fortress_env.training import ppo

    calls: list[dict] = []
    update = ppo.ppo_update

    def recorded(net, optimizer, rollout, cfg, rng, regulariser=None):
        calls.append(
            {
                "weights": copy.deepcopy(net.state_dict()),
                "optimizer": copy.deepcopy(optimizer.state_dict()),
                "lr": optimizer.param_groups[0]["lr"],
                "decisions": len(rollout),
            }
        )
        return update(net, optimizer, rollout, cfg, rng, regulariser)

    monkeypatch.setattr(ppo, "ppo_update", recorded)
    return calls


def assert_same(a, b, where: str = "") -> None:
    """``a`` and ``b`` are equal, tensors included (bit for bit)."""
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and torch.equal(a, b), where
    elif isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), where
        for key in a:
            assert_same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{i}]")
    else:
        assert a == b, where
