"""Trained checkpoints: SB3's own ``.zip`` save format, with our metadata inside the same zip.

A checkpoint is what ``MaskablePPO.save`` writes, plus one extra member
``island_fortress.json``: the training config, the env options, the step count and the
observation/action *space signature*. Loading compares that signature with the running
environment and refuses a mismatch with a clear error, never silently.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from ..engine.actions import ACTION_FAMILIES, NUM_ACTIONS
from ..observation import GLOBAL_FEATURES, LAYOUT, OBS_SIZE, PLAYER_FEATURES, WALL_PLANES

META_MEMBER = "island_fortress.json"


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
            return json.loads(z.read(META_MEMBER))
    except zipfile.BadZipFile:
        raise CheckpointError(f"checkpoint {str(path)!r}: not a zip file (SB3 save format)") from None


def check_signature(path: str | Path, metadata: dict[str, Any]) -> None:
    saved = metadata.get("space_signature", {})
    here = space_signature()
    diffs = [f"{k}: checkpoint {saved.get(k)!r} != env {v!r}" for k, v in here.items() if saved.get(k) != v]
    if diffs:
        raise CheckpointError(
            f"checkpoint {str(path)!r} does not match this environment's spaces ({'; '.join(diffs)}); "
            "it was trained on a different observation/action layout"
        )


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
    """A trained policy behind the common agent interface (masked, deterministic by default)."""

    def __init__(self, path: str | Path, seed: int | None = None, deterministic: bool = True,
                 name: str | None = None) -> None:  # fmt: skip
        import torch

        torch.set_num_threads(1)  # one game per process: more threads only add overhead
        self.path = str(path)
        self.model, self.metadata = load_model(path)
        self.deterministic = deterministic
        self.name = name or Path(path).stem
        self.rng = np.random.default_rng(seed)  # sampling uses this, never torch's global RNG

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: Any = None) -> int:
        import torch

        policy = self.model.policy
        mask = action_mask.astype(bool)
        with torch.no_grad():
            obs = torch.as_tensor(observation, dtype=torch.float32).reshape(1, -1)
            dist = policy.get_distribution(obs, action_masks=mask.reshape(1, -1))
            probs = dist.distribution.probs[0].numpy().astype(np.float64)
        if self.deterministic:
            return int(np.argmax(np.where(mask, probs, -1.0)))
        probs = np.where(mask, probs, 0.0)
        return int(self.rng.choice(len(probs), p=probs / probs.sum()))
