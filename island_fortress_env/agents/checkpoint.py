"""Trained checkpoints: one zip file, two kinds, the same metadata member in both.

* **Native** (``island-fortress train``'s own PPO, and RLlib runs converted to it): a zip with
  ``actor_critic.pt`` (the ``network.ActorCritic`` state dict), optionally ``training_state.pt``
  (the optimizer's state, for ``--resume``) and ``island_fortress.json`` whose ``format`` is
  ``NATIVE_FORMAT`` and whose ``network`` holds the constructor arguments.
* **SB3**: what ``MaskablePPO.save`` writes (``data``, the model's settings as JSON;
  ``policy.pth``, ``policy.optimizer.pth`` and ``pytorch_variables.pth``, tensors), plus the same
  ``island_fortress.json`` member.

The metadata carries the training config, the env options, the step count, the library versions
and the observation/action *space signature*. Loading compares that signature with the running
environment and refuses a mismatch with a clear error, never silently.

Every reader (``evaluate``, ``play``, ``demo``, ``tournament``, ``serve``, ``train --resume`` with
either trainer) goes through ``read_metadata`` and ``check_signature``, so a damaged file is one
``CheckpointError`` of one line naming the file and what is wrong, before any work starts:
``read_metadata`` checks the zip, every member's checksum and the type of every metadata field the
code reads (``CheckpointMetadata``, a pydantic model); ``check_signature`` compares the spaces and
reads every member a loader uses the way the loader does.

Nothing in a checkpoint is ever unpickled. What is read, and how:

* ``island_fortress.json`` and SB3's ``data``: JSON (``json.loads``).
* ``actor_critic.pt``, ``training_state.pt`` and SB3's ``.pth`` members: ``torch.load`` with
  ``weights_only=True``, which builds tensors and plain containers only and refuses anything else.
* SB3's pickled settings: ``MaskablePPO.save`` pickles (with SB3's pickler) each setting that JSON cannot
  hold (the policy class and its arguments, the spaces, the schedules, the last observations...)
  into ``data``, and ``MaskablePPO.load`` would unpickle them, running whatever a pickle says. So
  ``load_model`` never calls ``MaskablePPO.load``: it takes each such setting from the classes
  this trainer uses, the environment's own spaces and the setting's readable fields that SB3 writes
  beside the pickle (``sb3_checkpoint.SB3_REBUILT``), leaves the ones that SB3 makes afresh (the last
  observations, the episode statistics) to SB3, refuses a pickled setting of any other kind, then
  builds the model as ``BaseAlgorithm.load`` does and fills it with the tensors.

This module is the public face; the zip's readers are in ``checkpoint_io`` and the SB3 model is
built in ``sb3_checkpoint`` (imports run that way: io <- sb3 <- here).
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import threading
import zipfile
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from island_fortress_env.agents.base import policy_action
from island_fortress_env.agents.checkpoint_io import (
    META_MEMBER,
    NATIVE_FORMAT,
    SB3_DATA_MEMBER,
    SB3_OPTIMIZER_MEMBER,
    SB3_POLICY_MEMBER,
    SB3_VARIABLES_MEMBER,
    TORCH_ERRORS,
    TRAINING_STATE_MEMBER,
    WEIGHTS_MEMBER,
    CheckpointError,
    _fail,
    _members,
    _short,
    _state_dict,
    _training_state,
    check_spaces,
    read_metadata,
    space_signature,
    validate_metadata,
    write_metadata,
)
from island_fortress_env.agents.sb3_checkpoint import load_model, sb3_members

__all__ = [  # the readers' names, read from here by every command and test
    "META_MEMBER",
    "NATIVE_FORMAT",
    "SB3_DATA_MEMBER",
    "SB3_OPTIMIZER_MEMBER",
    "SB3_POLICY_MEMBER",
    "SB3_VARIABLES_MEMBER",
    "TRAINING_STATE_MEMBER",
    "WEIGHTS_MEMBER",
    "CheckpointAgent",
    "CheckpointError",
    "check_signature",
    "check_spaces",
    "load_model",
    "load_policy",
    "load_training_state",
    "read_metadata",
    "save_policy",
    "space_signature",
    "validate_metadata",
    "write_metadata",
]


def check_signature(path: str | Path, metadata: dict[str, Any]) -> None:
    """Refuse a checkpoint that cannot be used here: other observation/action spaces, or members
    that do not load (native: the weights and the training state; SB3: the policy, its optimizer
    and variables, and the settings in ``data``, every pickled one rebuilt without its pickle or
    refused). One ``CheckpointError``."""
    check_spaces(path, metadata)
    _check_tensor_members(path, metadata)


def _check_tensor_members(path: str | Path, metadata: dict[str, Any]) -> None:
    if metadata.get("format") == NATIVE_FORMAT:
        members = _members(path, (WEIGHTS_MEMBER, TRAINING_STATE_MEMBER))
        if WEIGHTS_MEMBER not in members:
            raise _fail(path, f"no {WEIGHTS_MEMBER} inside")
        _state_dict(path, WEIGHTS_MEMBER, members[WEIGHTS_MEMBER])
        if TRAINING_STATE_MEMBER in members:
            _training_state(path, members[TRAINING_STATE_MEMBER])
        return
    sb3_members(path)


# --------------------------------------------------------------------------- native checkpoints


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
    """A native checkpoint's ``ActorCritic`` (eval mode) and metadata, after the signature check.

    The network is first built on torch's ``meta`` device (no memory) and its shapes compared
    with the saved weights, so settings that do not fit the weights never allocate anything."""
    import torch

    from island_fortress_env.agents.network import ActorCritic

    metadata = read_metadata(path)
    if metadata.get("format") != NATIVE_FORMAT:
        raise _fail(path, f"not a native checkpoint ({NATIVE_FORMAT})")
    if "network" not in metadata:
        raise _fail(path, f"{META_MEMBER} has no network settings")
    check_spaces(path, metadata)
    members = _members(path, (WEIGHTS_MEMBER,))
    if WEIGHTS_MEMBER not in members:
        raise _fail(path, f"no {WEIGHTS_MEMBER} inside")
    state_dict = _state_dict(path, WEIGHTS_MEMBER, members[WEIGHTS_MEMBER])
    try:
        with torch.device("meta"):
            shapes = {k: tuple(v.shape) for k, v in ActorCritic(**metadata["network"]).state_dict().items()}
        saved = {k: tuple(v.shape) for k, v in state_dict.items()}
        if shapes != saved:
            differ = sorted(k for k in set(shapes) | set(saved) if shapes.get(k) != saved.get(k))
            raise ValueError(f"network {metadata['network']} has other parameters: {differ[:3]}")
        net = ActorCritic(**metadata["network"])
        net.load_state_dict(state_dict)
    except TORCH_ERRORS as exc:
        raise _fail(path, f"the weights cannot be loaded ({_short(exc)})") from None
    net.eval()
    return net, metadata


def load_training_state(path: str | Path) -> dict[str, Any] | None:
    """The ``training_state`` saved with a native checkpoint, or None if it has none; a member
    that does not hold an optimizer's state is a ``CheckpointError``."""
    members = _members(path, (TRAINING_STATE_MEMBER,))
    if TRAINING_STATE_MEMBER not in members:
        return None
    return _training_state(path, members[TRAINING_STATE_MEMBER])


@dataclass(frozen=True)
class _Loaded:
    """A checkpoint's policy as loaded: a native ``ActorCritic`` (``net``) or an SB3 model."""

    net: Any
    model: Any
    metadata: dict[str, Any]


SHARED_CHECKPOINTS = 8  # the checkpoints whose loaded policies are kept for the next agent of each
SHARED_MAX_BYTES = 1 << 30  # a larger file is loaded for each agent, never hashed whole
_shared: OrderedDict[tuple[str, bytes], _Loaded] = OrderedDict()
_shared_lock = threading.Lock()


def _file_key(path: str | Path) -> tuple[str, bytes] | None:
    """``path`` and a digest of its bytes (read in chunks), or None where it cannot be read or
    is over ``SHARED_MAX_BYTES`` (the loader then says what is wrong with it, if anything)."""
    digest = hashlib.blake2b(digest_size=32)
    try:
        if os.path.getsize(path) > SHARED_MAX_BYTES:
            return None
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
    except OSError:
        return None
    return os.path.realpath(path), digest.digest()


def _load_shared(path: str | Path) -> _Loaded:
    """``path``'s policy, loaded (and checked) once per content: the agents of one checkpoint
    share its network (they only read it, each drawing from its own generator), so a server that
    makes an agent for every new game reads and checks the file once. A file whose bytes changed
    is loaded again; one that cannot be loaded is never kept."""
    key = _file_key(path)
    if key is not None:
        with _shared_lock:
            if key in _shared:
                _shared.move_to_end(key)
                return _shared[key]
    metadata = read_metadata(path)
    if metadata.get("format") == NATIVE_FORMAT:
        net, metadata = load_policy(path)
        loaded = _Loaded(net, None, metadata)
    else:
        model, metadata = load_model(path)
        loaded = _Loaded(None, model, metadata)
    if key is not None and _file_key(path) == key:  # not rewritten while it was being loaded
        with _shared_lock:
            _shared[key] = loaded
            while len(_shared) > SHARED_CHECKPOINTS:
                _shared.popitem(last=False)
    return loaded


class CheckpointAgent:
    """A trained policy (native or SB3) behind the common agent interface.

    Masked, greedy by default (``deterministic=True``); sampling uses the agent's own generator,
    and with ``threshold`` > 0 draws only from the actions of at least that probability
    (``agents.base.thresholded``: ``threshold:P:CHECKPOINT``). The agents of one checkpoint file
    share its loaded network (``_load_shared``: read and checked once per content of the file).
    """

    def __init__(
        self,
        path: str | Path,
        seed: int | None = None,
        deterministic: bool = True,
        name: str | None = None,
        threshold: float = 0.0,
    ) -> None:
        self.path = str(path)
        loaded = _load_shared(path)
        self.net, self.model, self.metadata = loaded.net, loaded.model, copy.deepcopy(loaded.metadata)
        self.deterministic = deterministic
        self.threshold = threshold
        self.name = name or Path(path).stem
        self.rng = np.random.default_rng(seed)  # sampling uses this, never torch's global RNG

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The policy's action probabilities (0 outside the mask): of one observation, or of a
        batch of them (rows of ``observation`` and ``action_mask``) in one forward pass."""
        import torch

        from island_fortress_env.agents.network import torch_threads

        single = np.ndim(observation) == 1
        mask = np.asarray(action_mask).astype(bool).reshape(-1, np.shape(action_mask)[-1])
        # one thread: a few rows a pass gain nothing from more, and a process that trains keeps its own
        with torch.no_grad(), torch_threads(1):
            obs = torch.as_tensor(observation, dtype=torch.float32).reshape(len(mask), -1)
            if self.model is None:
                logits, _ = self.net(obs, torch.as_tensor(mask))
                probs = torch.softmax(logits, dim=-1).numpy().astype(np.float64)
            else:
                dist = self.model.policy.get_distribution(obs, action_masks=mask)
                probs = dist.distribution.probs.numpy().astype(np.float64)
        probs = np.where(mask, probs, 0.0)
        return probs[0] if single else probs

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: Any = None) -> int:
        probs = self.probabilities(observation, action_mask)
        return policy_action(probs, action_mask, self.deterministic, self.threshold, self.rng)
