"""Trained checkpoints: one zip file, two kinds, the same metadata member in both.

* **Native** (``island-fortress train``'s own PPO, and RLlib runs converted to it): a zip with
  ``actor_critic.pt`` (the ``network.ActorCritic`` state dict, loaded with ``weights_only``) and
  ``island_fortress.json`` whose ``format`` is ``NATIVE_FORMAT`` and whose ``network`` holds the
  constructor arguments.
* **SB3**: what ``MaskablePPO.save`` writes, plus the same ``island_fortress.json`` member.

The metadata carries the training config, the env options, the step count, the library versions
and the observation/action *space signature*. Loading compares that signature with the running
environment and refuses a mismatch with a clear error, never silently.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from island_fortress_env.engine.actions import ACTION_FAMILIES, NUM_ACTIONS
from island_fortress_env.env.observation import (
    GLOBAL_FEATURES,
    LAYOUT,
    OBS_SIZE,
    PLAYER_FEATURES,
    WALL_PLANES,
)

META_MEMBER = "island_fortress.json"
WEIGHTS_MEMBER = "actor_critic.pt"
TRAINING_STATE_MEMBER = "training_state.pt"  # optimizer state for --resume (native, optional)
NATIVE_FORMAT = "island_fortress.actor_critic.v1"


class CheckpointError(ValueError):
    """A checkpoint that cannot be used with this environment."""


def space_signature() -> dict[str, Any]:
    """What a policy depends on: sizes plus a digest of the observation layout (every feature's
    name, which includes its scale) and of the action table."""
    layout = json.dumps([
        LAYOUT, WALL_PLANES, PLAYER_FEATURES, GLOBAL_FEATURES,
        [(f.name, f.start, f.size) for f in ACTION_FAMILIES],
    ])  # fmt: skip
    return {
        "env": "island_fortress_v0",
        "observation_size": OBS_SIZE,
        "num_actions": NUM_ACTIONS,
        "layout_digest": hashlib.sha256(layout.encode()).hexdigest()[:16],
    }


def write_metadata(path: str | Path, metadata: dict[str, Any]) -> None:
    """Add (or replace) our metadata member in an SB3 checkpoint zip."""
    path = Path(path)
    meta = {"space_signature": space_signature(), **metadata}
    with zipfile.ZipFile(path, "r") as zin:
        members = {n: zin.read(n) for n in zin.namelist() if n != META_MEMBER}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zout:
        for name, data in members.items():
            zout.writestr(name, data)
        zout.writestr(META_MEMBER, json.dumps(meta, indent=2, sort_keys=True, default=str))


def read_metadata(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r}: no such file")
    try:
        with zipfile.ZipFile(path) as z:
            if META_MEMBER not in z.namelist():
                raise CheckpointError(
                    f"checkpoint {str(path)!r}: no {META_MEMBER} inside; it was not written by "
                    "island-fortress train, so its observation/action spaces cannot be checked"
                )
            raw = _read_member(path, z, META_MEMBER)
    except zipfile.BadZipFile:
        raise CheckpointError(f"checkpoint {str(path)!r}: not a zip file (SB3 save format)") from None
    try:
        metadata = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"checkpoint {str(path)!r}: {META_MEMBER} is not valid JSON ({exc})") from None
    if not isinstance(metadata, dict):
        raise CheckpointError(
            f"checkpoint {str(path)!r}: {META_MEMBER} must hold a JSON object, "
            f"not a {type(metadata).__name__}"
        )
    return metadata


def _read_member(path: str | Path, z: zipfile.ZipFile, member: str) -> bytes:
    """One member's bytes; a damaged member (bad CRC, broken compression) is a CheckpointError."""
    try:
        return z.read(member)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
        raise CheckpointError(f"checkpoint {str(path)!r}: member {member} is corrupted ({exc})") from None


def check_signature(path: str | Path, metadata: dict[str, Any]) -> None:
    saved = metadata.get("space_signature", {})
    here = space_signature()
    diffs = [f"{k}: checkpoint {saved.get(k)!r} != env {v!r}" for k, v in here.items() if saved.get(k) != v]
    if diffs:
        raise CheckpointError(
            f"checkpoint {str(path)!r} does not match this environment's spaces ({'; '.join(diffs)}); "
            "it was trained on a different observation/action layout"
        )


def save_policy(
    path: str | Path,
    net: Any,
    network: dict[str, Any],
    metadata: dict[str, Any],
    training_state: dict[str, Any] | None = None,
) -> Path:
    """Write a native checkpoint: ``net`` (an ``ActorCritic`` built with ``**network``) + metadata.

    ``training_state`` (e.g. the optimizer's state dict) is stored beside the weights so that a
    run can resume exactly; playing the policy never reads it.

    Written to a temporary file first and renamed, so a crash never leaves half a checkpoint.
    """
    import torch

    path = Path(path)
    meta = {
        **metadata,
        "format": NATIVE_FORMAT,
        "network": dict(network),
        "space_signature": space_signature(),
    }
    weights = io.BytesIO()
    torch.save(net.state_dict(), weights)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr(META_MEMBER, json.dumps(meta, indent=2, sort_keys=True, default=str))
        z.writestr(WEIGHTS_MEMBER, weights.getvalue())
        if training_state is not None:
            extra = io.BytesIO()
            torch.save(training_state, extra)
            z.writestr(TRAINING_STATE_MEMBER, extra.getvalue())
    os.replace(tmp, path)
    return path


def load_policy(path: str | Path) -> tuple[Any, dict[str, Any]]:
    """A native checkpoint's ``ActorCritic`` (eval mode) and metadata, after the signature check."""
    import torch

    from island_fortress_env.agents.network import ActorCritic

    metadata = read_metadata(path)
    if metadata.get("format") != NATIVE_FORMAT:
        raise CheckpointError(f"checkpoint {str(path)!r}: not a native checkpoint ({NATIVE_FORMAT})")
    check_signature(path, metadata)
    with zipfile.ZipFile(path) as z:
        if WEIGHTS_MEMBER not in z.namelist():
            raise CheckpointError(f"checkpoint {str(path)!r}: no {WEIGHTS_MEMBER} inside")
        raw = _read_member(path, z, WEIGHTS_MEMBER)
    try:
        state_dict = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
        net = ActorCritic(**metadata["network"])
        net.load_state_dict(state_dict)
    except (RuntimeError, KeyError, TypeError, ValueError, EOFError, pickle.UnpicklingError) as exc:
        raise CheckpointError(f"checkpoint {str(path)!r}: the weights cannot be loaded ({exc})") from None
    net.eval()
    return net, metadata


def load_training_state(path: str | Path) -> dict[str, Any] | None:
    """The ``training_state`` saved with a native checkpoint, or None if it has none."""
    import torch

    with zipfile.ZipFile(path) as z:
        if TRAINING_STATE_MEMBER not in z.namelist():
            return None
        raw = _read_member(path, z, TRAINING_STATE_MEMBER)
    try:
        return torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except (RuntimeError, EOFError, pickle.UnpicklingError) as exc:
        raise CheckpointError(
            f"checkpoint {str(path)!r}: {TRAINING_STATE_MEMBER} cannot be loaded ({exc})"
        ) from None


def load_model(path: str | Path, device: str = "cpu"):
    """Load a MaskablePPO checkpoint after checking its metadata and spaces."""
    metadata = read_metadata(path)
    check_signature(path, metadata)
    from sb3_contrib import MaskablePPO  # heavy import, only when a checkpoint is used

    model = MaskablePPO.load(str(path), device=device)
    obs_shape = getattr(model.observation_space, "shape", None)
    if obs_shape != (OBS_SIZE,) or getattr(model.action_space, "n", None) != NUM_ACTIONS:
        raise CheckpointError(
            f"checkpoint {str(path)!r}: model spaces {obs_shape}/{getattr(model.action_space, 'n', None)} "
            f"do not match the environment's ({OBS_SIZE},)/{NUM_ACTIONS}"
        )
    return model, metadata


class CheckpointAgent:
    """A trained policy (native or SB3) behind the common agent interface.

    Masked, greedy by default (``deterministic=True``); sampling uses the agent's own generator.
    """

    def __init__(
        self, path: str | Path, seed: int | None = None, deterministic: bool = True, name: str | None = None
    ) -> None:
        import torch

        torch.set_num_threads(1)  # one game per process: more threads only add overhead
        self.path = str(path)
        self.metadata = read_metadata(path)
        if self.metadata.get("format") == NATIVE_FORMAT:
            self.net, self.metadata = load_policy(path)
            self.model = None
        else:
            self.model, self.metadata = load_model(path)
            self.net = None
        self.deterministic = deterministic
        self.name = name or Path(path).stem
        self.rng = np.random.default_rng(seed)  # sampling uses this, never torch's global RNG

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The policy's action probabilities (0 outside the mask)."""
        import torch

        mask = action_mask.astype(bool)
        with torch.no_grad():
            obs = torch.as_tensor(observation, dtype=torch.float32).reshape(1, -1)
            if self.model is None:
                logits, _ = self.net(obs, torch.as_tensor(mask).reshape(1, -1))
                probs = torch.softmax(logits, dim=-1)[0].numpy().astype(np.float64)
            else:
                assert self.model is not None
                dist = self.model.policy.get_distribution(obs, action_masks=mask.reshape(1, -1))
                probs = dist.distribution.probs[0].numpy().astype(np.float64)
        return np.where(mask, probs, 0.0)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: Any = None) -> int:
        probs = self.probabilities(observation, action_mask)
        if self.deterministic:
            return int(np.argmax(np.where(action_mask.astype(bool), probs, -1.0)))
        return int(self.rng.choice(len(probs), p=probs / probs.sum()))
