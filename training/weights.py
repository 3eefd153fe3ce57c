"""The native trainer's network and its starting weights from a checkpoint.

``network_kwargs`` turns a config's ``policy`` section into ``ActorCritic``'s arguments (what a
native checkpoint records as its ``network``). ``initial_weights`` reads the weights a run starts
from (``policy.init_from``): a native checkpoint's as they are, an SB3 MaskablePPO policy's
converted exactly to ``ActorCritic``'s layout (``SB3_TO_NATIVE``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from island_fortress_env.agents.checkpoint import (
    NATIVE_FORMAT,
    CheckpointError,
    load_model,
    load_policy,
    read_metadata,
)
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.env.observation import OBS_SIZE
from island_fortress_env.training.config import NativeConfig


def network_kwargs(cfg: NativeConfig) -> dict[str, Any]:
    """``ActorCritic``'s keyword arguments for ``cfg.policy``."""
    kwargs = {
        "obs_size": OBS_SIZE,
        "num_actions": NUM_ACTIONS,
        "cnn_channels": cfg.policy.cnn_channels,
        "hidden": cfg.policy.hidden,
        "head_activation": cfg.policy.head_activation,
    }
    if cfg.policy.value_hidden:  # the value head's own torso
        kwargs["value_cnn_channels"] = cfg.policy.value_cnn_channels
        kwargs["value_hidden"] = cfg.policy.value_hidden
    return kwargs


def load_same_network(path: str, network: Mapping[str, Any]) -> tuple[ActorCritic, dict[str, Any]]:
    """A native checkpoint and its metadata, if its whole network (a value torso included) is
    ``network``, in ``network_kwargs``' terms; otherwise a ``CheckpointError`` that names every
    argument that differs. A checkpoint whose network names no ``head_activation`` has relu heads."""
    net, meta = load_policy(path)
    saved = {"head_activation": "relu", **meta["network"]}
    wanted = dict(network)
    if saved != wanted:
        differs = ", ".join(
            f"{key} {saved.get(key, 'unset')} there, {wanted.get(key, 'unset')} in the config"
            for key in sorted(set(saved) | set(wanted))
            if saved.get(key) != wanted.get(key)
        )
        raise CheckpointError(f"checkpoint {path!r}: its network does not match the config's: {differs}")
    return net, meta


# SB3 MaskablePPO policy parameter -> ActorCritic parameter (prefix renames; policy.py's layout)
SB3_TO_NATIVE = {
    "features_extractor.torso.": "torso.",
    "mlp_extractor.policy_net.0.": "policy_head.0.",
    "action_net.": "policy_head.2.",
    "mlp_extractor.value_net.0.": "value_head.0.",
    "value_net.": "value_head.2.",
}


def initial_weights(path: str, network: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    """The weights of checkpoint ``path`` for an ``ActorCritic(**network)``: a native checkpoint's
    as they are, an SB3 one's renamed (``SB3_TO_NATIVE``; its heads are tanh). A checkpoint of
    another architecture is refused with a ``CheckpointError``."""
    if read_metadata(path).get("format") == NATIVE_FORMAT:
        return load_same_network(path, network)[0].state_dict()
    model, _meta = load_model(path)
    out: dict[str, torch.Tensor] = {}
    for key, value in model.policy.state_dict().items():
        for old, new in SB3_TO_NATIVE.items():
            if key.startswith(old):
                out[new + key[len(old) :]] = value
    target = ActorCritic(**network).state_dict()
    shapes_ok = set(out) == set(target) and all(out[k].shape == target[k].shape for k in target)
    if not shapes_ok or network["head_activation"] != "tanh":
        raise CheckpointError(
            f"checkpoint {path!r}: its SB3 policy does not convert to ActorCritic({dict(network)}); "
            "it needs the same cnn_channels and hidden, and policy.head_activation=tanh"
        )
    return out
