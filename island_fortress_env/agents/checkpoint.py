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
code reads (``METADATA_FIELDS``); ``check_signature`` compares the spaces and reads every member a
loader uses the way the loader does.

Nothing in a checkpoint is ever unpickled. What is read, and how:

* ``island_fortress.json`` and SB3's ``data``: JSON (``json.loads``).
* ``actor_critic.pt``, ``training_state.pt`` and SB3's ``.pth`` members: ``torch.load`` with
  ``weights_only=True``, which builds tensors and plain containers only and refuses anything else.
* SB3's pickled settings: ``MaskablePPO.save`` pickles (cloudpickle) each setting that JSON cannot
  hold (the policy class and its arguments, the spaces, the schedules, the last observations...)
  into ``data``, and ``MaskablePPO.load`` would unpickle them, running whatever a pickle says. So
  ``load_model`` never calls ``MaskablePPO.load``: it takes each such setting from the classes
  this trainer uses, the environment's own spaces and the setting's readable fields that SB3 writes
  beside the pickle (``SB3_REBUILT``), leaves the ones that SB3 makes afresh (the last
  observations, the episode statistics) to SB3, refuses a pickled setting of any other kind, then
  builds the model as ``BaseAlgorithm.load`` does and fills it with the tensors.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import pickle
import re
import warnings
import zipfile
import zlib
from collections.abc import Callable
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
SB3_DATA_MEMBER = "data"  # MaskablePPO.save's JSON of the model's settings
SB3_POLICY_MEMBER = "policy.pth"  # the policy's state dict
SB3_OPTIMIZER_MEMBER = "policy.optimizer.pth"  # its optimizer's state dict
SB3_VARIABLES_MEMBER = "pytorch_variables.pth"  # torch variables outside the state dicts (PPO: none)
SB3_TENSOR_MEMBERS = (SB3_POLICY_MEMBER, SB3_OPTIMIZER_MEMBER, SB3_VARIABLES_MEMBER)
MAX_METADATA_BYTES = 16 * 1024 * 1024
# What torch.load, and building or filling a network with settings that do not fit, raise.
TORCH_ERRORS = (
    RuntimeError,
    EOFError,
    pickle.UnpicklingError,
    ValueError,
    TypeError,
    KeyError,
    AttributeError,
)


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


# --------------------------------------------------------------------------- metadata


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _count(value: Any) -> bool:
    return _is_int(value) and value >= 0


def _number(value: Any) -> bool:
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value)


def _seconds(value: Any) -> bool:
    return _number(value) and value >= 0


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _object(value: Any) -> bool:
    return isinstance(value, dict)


def _count_or_null(value: Any) -> bool:
    return value is None or _count(value)


Fields = dict[str, tuple[Callable[[Any], bool], str]]

# Every metadata field the code reads and what it must be. A field may be absent (checkpoints of
# another trainer or an older version); when present it must pass, else the checkpoint is refused.
METADATA_FIELDS: Fields = {
    "format": (_text, "a text"),
    "space_signature": (_object, "an object"),
    "network": (_object, "an object of network settings"),
    "num_timesteps": (_count, "an integer >= 0"),
    "updates": (_count, "an integer >= 0"),
    "elapsed_seconds": (_seconds, "a number >= 0"),
    "training_seconds": (_seconds, "a number >= 0"),
    "selection": (_object, "an object"),
    "env_options": (_object, "an object"),
    "config": (_object, "an object"),
    "run_name": (_text, "a text"),
}
SIGNATURE_FIELDS: Fields = {
    "env": (_text, "a text"),
    "observation_size": (_count, "an integer >= 0"),
    "num_actions": (_count, "an integer >= 0"),
    "layout_digest": (_text, "a text"),
}
SELECTION_FIELDS: Fields = {
    "score": (_number, "a number"),
    "decisions": (_count, "an integer >= 0"),
    "games": (_count, "an integer >= 0"),
}
NETWORK_FIELDS: Fields = {  # ActorCritic's arguments
    "obs_size": (_count, "an integer >= 0"),
    "num_actions": (_count, "an integer >= 0"),
    "cnn_channels": (_count, "an integer >= 0"),
    "hidden": (_count, "an integer >= 0"),
    "head_activation": (_text, "a text"),
    "value_cnn_channels": (_count_or_null, "an integer >= 0 or null"),
    "value_hidden": (_count_or_null, "an integer >= 0 or null"),
}
_NESTED = {"space_signature": SIGNATURE_FIELDS, "selection": SELECTION_FIELDS, "network": NETWORK_FIELDS}


def _fail(path: str | Path, why: str) -> CheckpointError:
    return CheckpointError(f"checkpoint {str(path)!r}: {why}")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def validate_metadata(path: str | Path, metadata: dict[str, Any]) -> dict[str, Any]:
    """Check the type of every field the code reads (``METADATA_FIELDS`` and the fields of
    ``space_signature``, ``selection`` and ``network``); a ``CheckpointError`` names the first
    that is wrong. Returns ``metadata``."""

    def check(data: dict[str, Any], fields: Fields, where: str) -> None:
        for name, (test, what) in fields.items():
            if name in data and not test(data[name]):
                raise _fail(path, f"{META_MEMBER}: {where}{name} must be {what}, not {_shown(data[name])}")

    check(metadata, METADATA_FIELDS, "")
    for name, fields in _NESTED.items():
        if name in metadata:
            check(metadata[name], fields, f"{name}.")
    unknown = sorted(set(metadata.get("network", {})) - set(NETWORK_FIELDS))
    if unknown:
        raise _fail(path, f"{META_MEMBER}: network has unknown setting(s) {_shown(unknown)}")
    return metadata


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The metadata of checkpoint ``path``, after checking the zip (every member's checksum) and
    the type of every field the code reads; anything wrong is one ``CheckpointError``."""
    path = Path(path)
    if not path.is_file():
        raise _fail(path, "no such file")
    try:
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():  # every member's checksum: a damaged file is refused up front
                _check_member(path, z, info)
            if META_MEMBER not in z.namelist():
                raise _fail(
                    path,
                    f"no {META_MEMBER} inside; it was not written by island-fortress train, "
                    "so its observation/action spaces cannot be checked",
                )
            if z.getinfo(META_MEMBER).file_size > MAX_METADATA_BYTES:
                raise _fail(path, f"{META_MEMBER} is too large to be metadata")
            raw = _read_member(path, z, META_MEMBER)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error, ValueError) as exc:
        if isinstance(exc, CheckpointError):
            raise
        raise _fail(
            path, "not a zip file, or a truncated or damaged one (a checkpoint is a whole zip file)"
        ) from None
    metadata = _json(path, META_MEMBER, raw)
    if not isinstance(metadata, dict):
        raise _fail(path, f"{META_MEMBER} must hold a JSON object, not a {type(metadata).__name__}")
    return validate_metadata(path, metadata)


def _json(path: str | Path, member: str, raw: bytes) -> Any:
    """A member's JSON, parsed safely: bad text, too deep nesting and too long integers (Python's
    limit on their digits) are a ``CheckpointError``."""
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _fail(path, f"{member} is not valid JSON ({_short(exc)})") from None
    except RecursionError:
        raise _fail(path, f"{member} is not usable JSON (nested too deeply)") from None
    except ValueError as exc:
        raise _fail(path, f"{member} is not usable JSON ({_short(exc)})") from None


def _check_member(path: str | Path, z: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    """Read a member through to its end, which checks its CRC, without holding it in memory."""
    try:
        with z.open(info) as f:
            while f.read(1 << 20):
                pass
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError) as exc:
        raise _fail(path, f"member {info.filename} is corrupted ({_short(exc)})") from None


def _read_member(path: str | Path, z: zipfile.ZipFile, member: str) -> bytes:
    """One member's bytes; a damaged member (bad CRC, broken compression) is a CheckpointError."""
    try:
        return z.read(member)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError) as exc:
        raise _fail(path, f"member {member} is corrupted ({_short(exc)})") from None


def _short(exc: BaseException) -> str:
    """The gist of a library's error: torch's own reason when it refuses to unpickle, else the
    first line (and the line after it where the first only announces a list, as torch's "Error(s)
    in loading state_dict for ...:" does); at most 160 characters."""
    text = str(exc)
    if "WeightsUnpickler error:" in text:
        text = text.split("WeightsUnpickler error:", 1)[1]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = lines[0] if lines else type(exc).__name__
    if first.endswith(":") and len(lines) > 1:
        first = f"{first} {lines[1]}"
    return first if len(first) <= 160 else first[:157] + "..."


# --------------------------------------------------------------------------- checks


def check_signature(path: str | Path, metadata: dict[str, Any]) -> None:
    """Refuse a checkpoint that cannot be used here: other observation/action spaces, or members
    that do not load (native: the weights and the training state; SB3: the policy, its optimizer
    and variables, and the settings in ``data``, every pickled one rebuilt without its pickle or
    refused). One ``CheckpointError``."""
    check_spaces(path, metadata)
    _check_tensor_members(path, metadata)


def check_spaces(path: str | Path, metadata: dict[str, Any]) -> None:
    """Refuse a checkpoint trained on other observation/action spaces (one ``CheckpointError``)."""
    saved = metadata.get("space_signature", {})
    here = space_signature()
    diffs = [f"{k}: checkpoint {saved.get(k)!r} != env {v!r}" for k, v in here.items() if saved.get(k) != v]
    if diffs:
        raise CheckpointError(
            f"checkpoint {str(path)!r} does not match this environment's spaces ({'; '.join(diffs)}); "
            "it was trained on a different observation/action layout"
        )


def _members(path: str | Path, names: tuple[str, ...]) -> dict[str, bytes]:
    """The named members that the zip holds, by name."""
    try:
        with zipfile.ZipFile(path) as z:
            present = set(z.namelist())
            return {name: _read_member(path, z, name) for name in names if name in present}
    except (zipfile.BadZipFile, OSError):
        raise _fail(path, "not a zip file, or a truncated or damaged one") from None


def _check_tensor_members(path: str | Path, metadata: dict[str, Any]) -> None:
    if metadata.get("format") == NATIVE_FORMAT:
        members = _members(path, (WEIGHTS_MEMBER, TRAINING_STATE_MEMBER))
        if WEIGHTS_MEMBER not in members:
            raise _fail(path, f"no {WEIGHTS_MEMBER} inside")
        _state_dict(path, WEIGHTS_MEMBER, members[WEIGHTS_MEMBER])
        if TRAINING_STATE_MEMBER in members:
            _training_state(path, members[TRAINING_STATE_MEMBER])
        return
    _sb3_members(path)


def _torch_load(path: str | Path, member: str, raw: bytes) -> Any:
    """A tensor member, loaded with ``weights_only`` (tensors and plain containers only); a
    member that is not one is a ``CheckpointError`` of one line."""
    import torch

    try:
        with warnings.catch_warnings():  # torch warns about unusual pickle protocols: the error says it
            warnings.simplefilter("ignore")
            return torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except TORCH_ERRORS as exc:
        raise _fail(path, f"member {member} is not a PyTorch tensor file ({_short(exc)})") from None


def _state_dict(path: str | Path, member: str, raw: bytes) -> dict[str, Any]:
    """A member holding a state dict: names to tensors."""
    import torch

    state = _torch_load(path, member, raw)
    if not isinstance(state, dict) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()
    ):
        raise _fail(path, f"member {member} is not a state dict (names to tensors)")
    return state


def _training_state(path: str | Path, raw: bytes) -> dict[str, Any]:
    """The training state member: ``{"optimizer": <an optimizer's state dict>}``."""
    state = _torch_load(path, TRAINING_STATE_MEMBER, raw)
    if not isinstance(state, dict):
        raise _fail(path, f"member {TRAINING_STATE_MEMBER} does not hold an optimizer's state")
    _optimizer_state(path, TRAINING_STATE_MEMBER, state.get("optimizer"))
    return state


def _optimizer_state(path: str | Path, member: str, state: Any) -> dict[str, Any]:
    """``state``, loaded from ``member``, if it is an optimizer's state dict."""
    if not (
        isinstance(state, dict)
        and isinstance(state.get("state"), dict)
        and isinstance(state.get("param_groups"), list)
        and all(isinstance(g, dict) and isinstance(g.get("params"), list) for g in state["param_groups"])
    ):
        raise _fail(path, f"member {member} does not hold an optimizer's state")
    return state


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


# --------------------------------------------------------------------------- SB3 checkpoints

# ``MaskablePPO.save`` writes the model's settings to ``data`` as JSON. A setting that JSON cannot
# hold is written as ``{":type:": <its type>, ":serialized:": <its cloudpickle, base64>, ...its
# first-level fields, readable}``, and ``MaskablePPO.load`` would unpickle it, running whatever the
# pickle says. Here no pickle is ever read: each such setting is rebuilt from the classes this
# trainer uses and its readable fields (``SB3_REBUILT``), or left for SB3 to make afresh, and any
# other is refused.
SB3_PICKLED = ":serialized:"
SB3_TYPE = ":type:"
_ABSENT = object()


def _pickled(value: Any) -> bool:
    return isinstance(value, dict) and SB3_PICKLED in value


def _fields(path: str | Path, key: str, value: Any, *types: str) -> dict[str, Any]:
    """The readable fields of setting ``key``, which SB3 pickled as one of ``types``."""
    if not (_pickled(value) and value.get(SB3_TYPE) in types):
        raise _fail(
            path,
            f"{SB3_DATA_MEMBER}: {key} is {_described(value)}, not a {' or '.join(types)} as SB3 saves one",
        )
    return {k: v for k, v in value.items() if k not in (SB3_TYPE, SB3_PICKLED)}


def _described(value: Any) -> str:
    if _pickled(value):
        return f"a pickled {_shown(value.get(SB3_TYPE))}"
    return _shown(value)


def _class_named(path: str | Path, key: str, value: Any, name: str, module: str) -> None:
    """Setting ``key`` must be class ``module.name`` as SB3 pickles a class: its readable
    ``__module__`` and ``__init__`` name it."""
    fields = _fields(path, key, value, "<class 'abc.ABCMeta'>")
    init = fields.get("__init__")
    if fields.get("__module__") != module or not (
        isinstance(init, str) and init.startswith(f"<function {name}.__init__ ")
    ):
        raise _fail(path, f"{SB3_DATA_MEMBER}: {key} is not {module}.{name}")


def _sb3_policy_class(path: str | Path, key: str, value: Any) -> Any:
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    if value is not _ABSENT:
        _class_named(path, key, value, "MaskableActorCriticPolicy", "sb3_contrib.common.maskable.policies")
    return MaskableActorCriticPolicy


def _sb3_rollout_buffer_class(path: str | Path, key: str, value: Any) -> None:
    """None: MaskablePPO then makes its ``MaskableRolloutBuffer`` for a Box observation."""
    if value is not None:
        _class_named(path, key, value, "MaskableRolloutBuffer", "sb3_contrib.common.maskable.buffers")


def _sb3_observation_space(path: str | Path, key: str, value: Any) -> Any:
    """The environment's observation space, after checking the saved one's readable fields."""
    from gymnasium import spaces

    from island_fortress_env.env.observation import OBS_HIGH, OBS_LOW

    if value is not _ABSENT:
        fields = _fields(path, key, value, "<class 'gymnasium.spaces.box.Box'>")
        if fields.get("_shape") != [OBS_SIZE] or fields.get("dtype") != "float32":
            raise _fail(path, f"{SB3_DATA_MEMBER}: {key} is not a float32 Box of shape ({OBS_SIZE},)")
    return spaces.Box(OBS_LOW, OBS_HIGH, (OBS_SIZE,), np.float32)


def _sb3_action_space(path: str | Path, key: str, value: Any) -> Any:
    """The environment's action space, after checking the saved one's readable fields (numpy
    integers, which SB3 writes as text)."""
    from gymnasium import spaces

    if value is not _ABSENT:
        fields = _fields(path, key, value, "<class 'gymnasium.spaces.discrete.Discrete'>")
        if str(fields.get("n")) != str(NUM_ACTIONS) or str(fields.get("start", 0)) != "0":
            raise _fail(path, f"{SB3_DATA_MEMBER}: {key} is not Discrete({NUM_ACTIONS})")
    return spaces.Discrete(NUM_ACTIONS)


def _sb3_made_afresh(*types: str) -> Callable[[str | Path, str, Any], None]:
    """A setting SB3 makes again itself (the last observations, the episode statistics, the
    learning-rate schedule): None, after checking the saved one's type."""

    def rebuild(path: str | Path, key: str, value: Any) -> None:
        if value is not None:
            _fields(path, key, value, *types)

    return rebuild


_NUMBER = r"([-+0-9.eE]+)"
_SCHEDULES = {
    "ConstantSchedule": re.compile(rf"ConstantSchedule\(val={_NUMBER}\)"),
    "LinearSchedule": re.compile(
        rf"LinearSchedule\(start={_NUMBER}, end={_NUMBER}, end_fraction={_NUMBER}\)"
    ),
}


def _sb3_schedule(path: str | Path, key: str, value: Any) -> Any:
    """A number, or the constant or linear schedule that the readable ``value_schedule`` of a
    pickled ``FloatSchedule`` describes (``ConstantSchedule(val=0.2)``)."""
    from stable_baselines3.common.utils import FloatSchedule, LinearSchedule

    if value is None or _number(value):
        return value
    text = _fields(path, key, value, "<class 'stable_baselines3.common.utils.FloatSchedule'>").get(
        "value_schedule"
    )
    for name, pattern in _SCHEDULES.items():
        match = pattern.fullmatch(text) if isinstance(text, str) else None
        if match:
            try:
                numbers = [float(n) for n in match.groups()]
            except ValueError:
                break
            if name == "ConstantSchedule":
                return numbers[0]
            return FloatSchedule(LinearSchedule(*numbers))
    raise _fail(
        path, f"{SB3_DATA_MEMBER}: {key} is a schedule other than a constant or a linear one: {_shown(text)}"
    )


# The features extractors an SB3 checkpoint of this project names (the trainer's, by either module
# name it has had, and SB3's default), as (module, class).
SB3_EXTRACTORS = {
    "training.policy.IslandFortressExtractor": (
        "island_fortress_env.training.policy",
        "IslandFortressExtractor",
    ),
    "island_fortress_env.training.policy.IslandFortressExtractor": (
        "island_fortress_env.training.policy",
        "IslandFortressExtractor",
    ),
    "stable_baselines3.common.torch_layers.FlattenExtractor": (
        "stable_baselines3.common.torch_layers",
        "FlattenExtractor",
    ),
}
_BOOLEAN_POLICY_KWARGS = ("share_features_extractor", "ortho_init", "normalize_images")


def _sizes(value: Any) -> bool:
    return isinstance(value, list) and all(_is_int(v) and v > 0 for v in value)


def _sb3_policy_kwargs(path: str | Path, key: str, value: Any) -> dict[str, Any]:
    """The policy's keyword arguments from their readable form: the features extractor (one of
    ``SB3_EXTRACTORS``, named as ``<class '...'>``) and its integer settings, ``net_arch`` and
    a few switches; any other argument is refused."""
    import importlib

    if value is None:
        return {}
    fields = (
        value
        if isinstance(value, dict) and not _pickled(value)
        else _fields(path, key, value, "<class 'dict'>")
    )
    kwargs: dict[str, Any] = {}
    for name, item in fields.items():
        where = f"{SB3_DATA_MEMBER}: {key}.{name}"
        if name == "device":  # SB3 drops it too: the device is the loader's
            continue
        if name == "features_extractor_class":
            match = re.fullmatch(r"<class '([\w.]+)'>", item) if isinstance(item, str) else None
            if not match or match.group(1) not in SB3_EXTRACTORS:
                raise _fail(path, f"{where} is {_shown(item)}, not one of {sorted(SB3_EXTRACTORS)}")
            module, attribute = SB3_EXTRACTORS[match.group(1)]
            kwargs[name] = getattr(importlib.import_module(module), attribute)
        elif name == "features_extractor_kwargs":
            if not (isinstance(item, dict) and all(map(_count, item.values()))):
                raise _fail(path, f"{where} must be an object of integers >= 0, not {_shown(item)}")
            kwargs[name] = dict(item)
        elif name == "net_arch":
            if isinstance(item, list) and len(item) == 1 and isinstance(item[0], dict):
                item = item[0]  # SB3 < 1.8's form, as SB3 converts it
            if not (
                _sizes(item)
                or (isinstance(item, dict) and set(item) <= {"pi", "vf"} and all(map(_sizes, item.values())))
            ):
                raise _fail(
                    path, f"{where} must be layer sizes (a list, or pi and vf lists), not {_shown(item)}"
                )
            kwargs[name] = item
        elif name in _BOOLEAN_POLICY_KWARGS:
            if not isinstance(item, bool):
                raise _fail(path, f"{where} must be true or false, not {_shown(item)}")
            kwargs[name] = item
        else:
            raise _fail(path, f"{where}: a policy argument this loader does not rebuild")
    return kwargs


# Every setting that SB3 pickles in a MaskablePPO checkpoint, and how it is rebuilt without the pickle.
SB3_REBUILT: dict[str, Callable[[str | Path, str, Any], Any]] = {
    "policy_class": _sb3_policy_class,
    "policy_kwargs": _sb3_policy_kwargs,
    "observation_space": _sb3_observation_space,
    "action_space": _sb3_action_space,
    "rollout_buffer_class": _sb3_rollout_buffer_class,
    "learning_rate": _sb3_schedule,
    "clip_range": _sb3_schedule,
    "clip_range_vf": _sb3_schedule,
    "lr_schedule": _sb3_made_afresh(
        "<class 'stable_baselines3.common.utils.FloatSchedule'>", "<class 'function'>"
    ),  # from learning_rate
    "_last_obs": _sb3_made_afresh("<class 'numpy.ndarray'>"),  # reset before training
    "_last_episode_starts": _sb3_made_afresh("<class 'numpy.ndarray'>"),
    "_last_original_obs": _sb3_made_afresh("<class 'numpy.ndarray'>"),
    "ep_info_buffer": _sb3_made_afresh("<class 'collections.deque'>"),  # made before training
    "ep_success_buffer": _sb3_made_afresh("<class 'collections.deque'>"),
}
SB3_ALWAYS = ("policy_class", "observation_space", "action_space")  # set even where data has none


def _sb3_settings(path: str | Path, raw: bytes) -> dict[str, Any]:
    """The model settings in an SB3 checkpoint's ``data`` member (its bytes ``raw``): the JSON
    values as they are, every pickled one rebuilt (``SB3_REBUILT``) without reading its pickle; a
    pickled setting of any other name is refused with a ``CheckpointError``."""
    data = _json(path, SB3_DATA_MEMBER, raw)
    if not isinstance(data, dict):
        raise _fail(path, f"{SB3_DATA_MEMBER} must hold a JSON object")
    for key, value in data.items():
        if _pickled(value) and key not in SB3_REBUILT:
            raise _fail(
                path,
                f"{SB3_DATA_MEMBER}: {key} is {_described(value)}, which is never unpickled and "
                "cannot be rebuilt without it",
            )
    settings = {k: v for k, v in data.items() if k not in SB3_REBUILT}
    for key, rebuild in SB3_REBUILT.items():
        if key in data or key in SB3_ALWAYS:
            settings[key] = rebuild(path, key, data.get(key, _ABSENT))
    return settings


def _sb3_members(path: str | Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """An SB3 checkpoint's settings (``_sb3_settings``), state dicts (policy and optimizer) and
    torch variables, every tensor member loaded with ``weights_only``."""
    members = _members(path, (SB3_DATA_MEMBER, *SB3_TENSOR_MEMBERS))
    for name in (SB3_DATA_MEMBER, SB3_POLICY_MEMBER, SB3_OPTIMIZER_MEMBER):
        if name not in members:
            raise _fail(path, f"no {name} inside (an SB3 checkpoint has one)")
    settings = _sb3_settings(path, members[SB3_DATA_MEMBER])
    optimizer = _torch_load(path, SB3_OPTIMIZER_MEMBER, members[SB3_OPTIMIZER_MEMBER])
    params = {  # by the names of MaskablePPO's attributes, as set_parameters takes them
        "policy": _state_dict(path, SB3_POLICY_MEMBER, members[SB3_POLICY_MEMBER]),
        "policy.optimizer": _optimizer_state(path, SB3_OPTIMIZER_MEMBER, optimizer),
    }
    variables: dict[str, Any] = {}
    if SB3_VARIABLES_MEMBER in members:
        import torch

        loaded = _torch_load(path, SB3_VARIABLES_MEMBER, members[SB3_VARIABLES_MEMBER])
        if not isinstance(loaded, dict) or not all(
            isinstance(k, str) and (v is None or isinstance(v, torch.Tensor)) for k, v in loaded.items()
        ):
            raise _fail(path, f"member {SB3_VARIABLES_MEMBER} is not names to tensors")
        variables = loaded
    return settings, params, variables


def load_model(
    path: str | Path, device: str = "cpu", env: Any = None, tensorboard_log: str | None = None
) -> tuple[Any, dict[str, Any]]:
    """A MaskablePPO model from checkpoint ``path``, after checking its metadata and spaces, built
    as ``MaskablePPO.load`` builds one but without unpickling anything: the settings come from
    ``_sb3_settings``, the tensors from ``torch.load(weights_only=True)``. ``env`` (and
    ``tensorboard_log``) to train on, as ``MaskablePPO.load``'s. Returns (model, metadata)."""
    metadata = read_metadata(path)
    check_spaces(path, metadata)
    settings, params, variables = _sb3_members(path)
    try:
        with warnings.catch_warnings():  # SB3 and torch warnings: the error says what is wrong
            warnings.simplefilter("ignore")
            model = _sb3_model(settings, params, variables, device, env, tensorboard_log)
    except (*TORCH_ERRORS, AssertionError, OverflowError, MemoryError) as exc:  # settings out of range
        raise _fail(path, f"the SB3 model cannot be loaded ({_short(exc)})") from None
    return model, metadata


def _sb3_model(
    settings: dict[str, Any],
    params: dict[str, Any],
    variables: dict[str, Any],
    device: str,
    env: Any,
    tensorboard_log: str | None,
) -> Any:
    """``BaseAlgorithm.load``'s steps, from settings and tensors already read."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.save_util import recursive_setattr
    from stable_baselines3.common.utils import check_for_correct_spaces

    settings = dict(settings)
    if env is not None:
        env = MaskablePPO._wrap_env(env, settings.get("verbose", 0))
        check_for_correct_spaces(env, settings["observation_space"], settings["action_space"])
        settings["n_envs"] = env.num_envs
    model = MaskablePPO(policy=settings["policy_class"], env=env, device=device, _init_setup_model=False)
    # Only attributes the model has are set (a setting of another name is left out), and never
    # one that SB3 does not save (the device, the env, the logger, ...).
    own = (set(vars(model)) | set(SB3_REBUILT) | {"n_envs"}) - set(model._excluded_save_params())
    model.__dict__.update({k: v for k, v in settings.items() if k in own})
    if tensorboard_log is not None:
        model.tensorboard_log = tensorboard_log
    # The policy's names and shapes checked first on torch's meta device, so settings that do not
    # fit the weights never allocate anything.
    with torch.device("meta"):
        probe = model.policy_class(
            model.observation_space, model.action_space, lambda _: 0.0, **model.policy_kwargs
        )
    probe.load_state_dict(params["policy"])
    model._setup_model()
    model.set_parameters(params, exact_match=True, device=device)
    names = model._get_torch_save_params()[1]
    for name, tensor in variables.items():
        if name not in names:
            raise ValueError(
                f"{SB3_VARIABLES_MEMBER} names {name!r}, not one of the model's variables {names}"
            )
        if tensor is not None:
            recursive_setattr(model, f"{name}.data", tensor.data)
    return model  # (MaskablePPO has no gSDE: no exploration noise to sample, as load would)


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
