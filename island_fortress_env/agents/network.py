"""The one network definition: every trainer (native PPO, SB3, RLlib) builds its policy from it.

``Torso`` reads the observation, in one of two shapes:

* ``cnn_channels=0`` (the native trainer's default ``policy.cnn_channels``): one dense layer over
  the whole observation. On a CPU its update is several times cheaper than the convolutional
  torso's, and per wall-clock second it learns more (docs/TRAINING.md, "The network").
* ``cnn_channels > 0``: a small CNN over the wall image (the observation's first block, 12 planes
  of 4 levels x 20 columns; see ``island_fortress_env.observation.WALL_PLANES``) plus a dense
  layer over everything else (boards, decision context, cards). Convolutions see neighbouring
  cells, which is what rows, supports and favor patterns are made of; the shipped policy has one.

``ActorCritic`` adds a policy head (one logit per action id) and a value head. Illegal actions
are removed by ``masked_logits``: their logit becomes the dtype's most negative number, so a
softmax gives them probability 0 and an argmax never picks them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
from torch import nn

from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.env.observation import GRID, LEVELS, NUM_PLANES, OBS_SIZE, STRIDE, WALL_START

WALL_SIZE = NUM_PLANES * GRID


@contextlib.contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """torch on ``threads`` threads inside the block, and on as many as before after it: a player
    that plays one game at a time in a process that also trains keeps its one thread to itself."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class Torso(nn.Module):
    """Observation -> features: ``hidden`` floats from the dense torso (``cnn_channels=0``),
    ``2 * hidden`` from the convolutional one."""

    def __init__(self, obs_size: int = OBS_SIZE, cnn_channels: int = 32, hidden: int = 128) -> None:
        super().__init__()
        if cnn_channels < 0 or hidden < 1:
            raise ValueError(f"cnn_channels must be >= 0 and hidden >= 1, not {cnn_channels} and {hidden}")
        self.wall: nn.Module | None = None
        if cnn_channels == 0:
            self.features_dim = hidden
            self.board = nn.Sequential(nn.Linear(obs_size, hidden), nn.ReLU())
            return
        assert WALL_START == 0, "the wall planes must open the observation"
        self.features_dim = 2 * hidden
        self.wall = nn.Sequential(
            nn.Conv2d(NUM_PLANES, cnn_channels, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.Conv2d(cnn_channels, cnn_channels, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(cnn_channels * LEVELS * STRIDE, hidden),
            nn.ReLU(),
        )
        self.board = nn.Sequential(nn.Linear(obs_size - WALL_SIZE, hidden), nn.ReLU())

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        if self.wall is None:
            return self.board(obs)
        wall = obs[:, :WALL_SIZE].reshape(-1, NUM_PLANES, LEVELS, STRIDE)
        return torch.cat([self.wall(wall), self.board(obs[:, WALL_SIZE:])], dim=1)


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Logits with every action outside ``mask`` (bool or 0/1, same shape) set to the minimum."""
    return torch.where(mask.bool(), logits, torch.finfo(logits.dtype).min)


HEAD_ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh}


class ActorCritic(nn.Module):
    """Shared torso, then a policy head and a value head (each one hidden layer).

    ``head_activation`` is the heads' hidden activation: ``"relu"``, or ``"tanh"`` (what SB3's
    ``MaskablePPO`` puts in its heads, so that an SB3 policy converts to this network exactly).
    ``value_cnn_channels`` and ``value_hidden`` (both or neither) give the value head a torso of
    its own, of those sizes, so that the value loss no longer trains the policy's torso.
    """

    def __init__(
        self,
        obs_size: int = OBS_SIZE,
        num_actions: int = NUM_ACTIONS,
        cnn_channels: int = 32,
        hidden: int = 128,
        head_activation: str = "relu",
        value_cnn_channels: int | None = None,
        value_hidden: int | None = None,
    ) -> None:
        super().__init__()
        if head_activation not in HEAD_ACTIVATIONS:
            raise ValueError(
                f"head_activation must be one of {sorted(HEAD_ACTIVATIONS)}, not {head_activation!r}"
            )
        act = HEAD_ACTIVATIONS[head_activation]
        self.torso = Torso(obs_size, cnn_channels, hidden)
        width = self.torso.features_dim
        self.policy_head = nn.Sequential(nn.Linear(width, hidden), act(), nn.Linear(hidden, num_actions))
        if (value_cnn_channels is None) != (value_hidden is None):
            raise ValueError(
                f"value_cnn_channels ({value_cnn_channels}) and value_hidden ({value_hidden}) "
                "go together: set both for a value torso of its own, or neither"
            )
        self.value_torso: Torso | None = None
        if value_cnn_channels is not None and value_hidden is not None:
            self.value_torso = Torso(obs_size, value_cnn_channels, value_hidden)
            width, hidden = self.value_torso.features_dim, value_hidden
        self.value_head = nn.Sequential(nn.Linear(width, hidden), act(), nn.Linear(hidden, 1))

    def forward(
        self, obs: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits, value): logits masked when ``mask`` is given, value of shape (batch,)."""
        features = self.torso(obs)
        value_features = None if self.value_torso is None else self.value_torso(obs)
        # The heads stay in float32 under autocast (a bfloat16 torso: ``train.update_dtype``): the
        # log-probabilities PPO's ratio compares must not carry bfloat16's rounding.
        with torch.autocast(features.device.type, enabled=False):
            features = features.float()
            logits = self.policy_head(features)
            if mask is not None:
                logits = masked_logits(logits, mask)
            # A shared torso: both heads read the one float32 copy of its features, so their
            # gradients add up in float32 before the cast back to the torso's dtype.
            value_features = features if value_features is None else value_features.float()
            return logits, self.value_head(value_features).squeeze(-1)
