"""The policy network: a small CNN over the wall image plus an MLP over everything else.

The observation's first block is the wall as 12 planes of 4 levels x 20 columns (see
``island_fortress_env.observation.WALL_PLANES``); convolutions see neighbouring cells, which
is what rows, supports and favor patterns are made of. The rest (boards, decision context,
cards) goes through a dense layer. SB3 then adds separate policy and value heads.
"""

from __future__ import annotations

import torch
from gymnasium import spaces
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from island_fortress_env.observation import GRID, LEVELS, NUM_PLANES, STRIDE, WALL_START

WALL_SIZE = NUM_PLANES * GRID


class IslandFortressExtractor(BaseFeaturesExtractor):
    def __init__(self, observation_space: spaces.Box, cnn_channels: int = 32, hidden: int = 128) -> None:
        super().__init__(observation_space, features_dim=2 * hidden)
        assert WALL_START == 0, "the wall planes must open the observation"
        rest = int(observation_space.shape[0]) - WALL_SIZE
        self.wall = nn.Sequential(
            nn.Conv2d(NUM_PLANES, cnn_channels, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.Conv2d(cnn_channels, cnn_channels, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(cnn_channels * LEVELS * STRIDE, hidden),
            nn.ReLU(),
        )
        self.board = nn.Sequential(nn.Linear(rest, hidden), nn.ReLU())

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        wall = observations[:, :WALL_SIZE].reshape(-1, NUM_PLANES, LEVELS, STRIDE)
        return torch.cat([self.wall(wall), self.board(observations[:, WALL_SIZE:])], dim=1)


def policy_kwargs(cnn_channels: int, hidden: int) -> dict:
    return {
        "features_extractor_class": IslandFortressExtractor,
        "features_extractor_kwargs": {"cnn_channels": cnn_channels, "hidden": hidden},
        "net_arch": {"pi": [hidden], "vf": [hidden]},
    }
