"""What the tests of the trainer's commands share: a small network, and running ``island-fortress``
in-process as a test sees it (its exit status and what it printed)."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import torch

from island_fortress_env.agents.checkpoint import save_policy
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.cli import app as cli
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.env.observation import OBS_SIZE
from island_fortress_env.training.config import NativeConfig, load_config

# A small network in checkpoint terms (network_kwargs'): what a trainer would record.
SMALL = {
    "obs_size": OBS_SIZE,
    "num_actions": NUM_ACTIONS,
    "cnn_channels": 2,
    "hidden": 8,
    "head_activation": "relu",
}


def small_checkpoint(path: Path, seed: int = 0) -> Path:
    """A checkpoint of the small network with seeded random weights."""
    torch.manual_seed(seed)
    return save_policy(path, ActorCritic(**SMALL), SMALL, {})


def run_command(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``island-fortress ARGV``: (exit status, stdout, stderr)."""
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def run_json(argv: Sequence[str]) -> dict[str, Any]:
    """``island-fortress ARGV --json`` that must succeed: the JSON object it printed last. For a
    module-scoped fixture, which has no ``capsys``: stdout is captured by hand."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = cli.main(list(argv))
    assert code == 0
    return json.loads(buffer.getvalue().strip().splitlines()[-1])


# One process, small rollouts: the settings of the exploit and league runs.
QUICK = (
    "train.workers=0",
    "train.pipelined=false",
    "train.rollout_decisions=4096",
    "train.games_per_collector=32",
    "ppo.minibatch_size=512",
)


def same_weights(a: dict, b: dict) -> bool:
    """Two state dicts hold the same tensors, bit for bit."""
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def league_config(*overrides: str) -> NativeConfig:
    """The native trainer's defaults with every game a league game, then ``overrides``."""
    cfg: NativeConfig = load_config(None, ["league.share=1.0", *overrides], schema=NativeConfig)
    return cfg


def members_config(*overrides: str) -> NativeConfig:
    """``league_config`` with a network small enough to save members of in milliseconds."""
    return league_config("policy.cnn_channels=2", "policy.hidden=8", *overrides)
