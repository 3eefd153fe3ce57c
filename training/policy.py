"""SB3's view of the project's network: ``network.Torso`` as a features extractor.

SB3's ``MaskablePPO`` then adds its own policy and value layers (``net_arch``), of the same
widths as ``network.ActorCritic``'s heads.
"""

from __future__ import annotations

import torch
from gymnasium import spaces
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from island_fortress_env.agents.network import Torso


class IslandFortressExtractor(BaseFeaturesExtractor):
    def __init__(self, observation_space: spaces.Box, cnn_channels: int = 32, hidden: int = 128) -> None:
        torso = Torso(int(observation_space.shape[0]), cnn_channels, hidden)
        super().__init__(observation_space, features_dim=torso.features_dim)
        self.torso = torso
        self._register_load_state_dict_pre_hook(_torso_keys)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.torso(observations)


def _torso_keys(state_dict: dict, prefix: str, *_args: object) -> None:
    """A checkpoint whose extractor names its torso's layers ``<prefix>wall.*`` /
    ``<prefix>board.*`` (``checkpoints/baseline-3p.zip``) loads them as ``<prefix>torso.*``."""
    for key in [k for k in state_dict if k.startswith((prefix + "wall.", prefix + "board."))]:
        state_dict[prefix + "torso." + key[len(prefix) :]] = state_dict.pop(key)


def policy_kwargs(cnn_channels: int, hidden: int) -> dict:
    return {
        "features_extractor_class": IslandFortressExtractor,
        "features_extractor_kwargs": {"cnn_channels": cnn_channels, "hidden": hidden},
        "net_arch": {"pi": [hidden], "vf": [hidden]},
    }
