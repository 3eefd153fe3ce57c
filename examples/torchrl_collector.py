"""TorchRL: PettingZooWrapper (masks and global state on) and a collector with a masked policy.

One policy is shared by both seats (``ALL_IN_ONE_GROUP``); its logits go through TorchRL's
``MaskedCategorical`` with the env's ``action_mask``, so it only ever samples legal actions.
``return_state=True`` adds PettingZoo's global ``state`` (for a centralised critic), and the
numeric infos (``score``, ``won``) arrive under ``("agents", "info")`` at every step.

    pip install torch==2.13.0 && pip install -e ".[torchrl]"    # the README's "Install with pip"
    python examples/torchrl_collector.py --frames 1000
"""

from __future__ import annotations

import argparse

import torch
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.utils import MarlGroupMapType
from torchrl.modules import MaskedCategorical, ProbabilisticActor

from island_fortress_env import island_fortress_v0
from island_fortress_env.engine import NUM_ACTIONS
from island_fortress_env.env.observation import OBS_SIZE


def make_env(seed: int = 0) -> PettingZooWrapper:
    return PettingZooWrapper(
        env=island_fortress_v0.env(num_players=2),
        use_mask=True,  # one seat acts at a time
        return_state=True,
        group_map=MarlGroupMapType.ALL_IN_ONE_GROUP,
        categorical_actions=True,
        seed=seed,
    )


def make_policy(hidden: int = 128) -> ProbabilisticActor:
    logits = TensorDictModule(
        nn.Sequential(nn.Linear(OBS_SIZE, hidden), nn.Tanh(), nn.Linear(hidden, NUM_ACTIONS)),
        in_keys=[("agents", "observation", "observation")],
        out_keys=[("agents", "logits")],
    )
    return ProbabilisticActor(
        module=logits,
        in_keys={"logits": ("agents", "logits"), "mask": ("agents", "action_mask")},
        out_keys=[("agents", "action")],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
    )


def collect(frames: int, seed: int = 0):
    """All frames of one collection (a TensorDict with ``frames`` steps)."""
    torch.manual_seed(seed)
    collector = Collector(make_env(seed), make_policy(), frames_per_batch=frames, total_frames=frames)
    batch = next(iter(collector))
    collector.shutdown()
    return batch


def every_action_legal(batch) -> bool:
    """The acting seat's action (``("agents", "mask")``) is allowed by its action mask."""
    acting = batch["agents", "mask"]
    action = batch["agents", "action"]
    allowed = batch["agents", "action_mask"].gather(-1, action.unsqueeze(-1)).squeeze(-1)
    return bool(allowed[acting].all()) and bool((acting.sum(-1) == 1).all())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args()
    # One game step per policy call on a small network: the calls are too small to split, so
    # more threads only wait on each other and on the game. With torch's default (a thread per
    # core) `--frames 600` runs about 2x slower on a busy 2-core machine.
    torch.set_num_threads(args.threads)
    batch = collect(args.frames, args.seed)
    done = batch["next", "done"].squeeze(-1)
    won = batch["next", "agents", "info", "won"][done]
    print(batch)
    print(f"{args.frames} frames, {int(done.sum())} games ended, wins per seat at the ends: {won.tolist()}")
    print(f"every action legal: {every_action_legal(batch)}")


if __name__ == "__main__":
    main()
