"""SB3 checkpoints read without unpickling anything (``checkpoint.load_model`` is this module's).

``MaskablePPO.save`` writes the model's settings to ``data`` as JSON, pickling each one that JSON
cannot hold, and ``MaskablePPO.load`` would unpickle them. ``load_model`` builds the model as
SB3's ``BaseAlgorithm.load`` does, each pickled setting rebuilt from this trainer's classes, the
environment's spaces and the readable fields SB3 writes beside the pickle (``SB3_REBUILT``), and
the tensors read by ``checkpoint_io``.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from island_fortress_env.agents.checkpoint_io import (
    SB3_DATA_MEMBER,
    SB3_OPTIMIZER_MEMBER,
    SB3_POLICY_MEMBER,
    SB3_TENSOR_MEMBERS,
    SB3_VARIABLES_MEMBER,
    TORCH_ERRORS,
    _count,
    _fail,
    _is_int,
    _json,
    _members,
    _number,
    _optimizer_state,
    _short,
    _shown,
    _state_dict,
    _torch_load,
    check_spaces,
    read_metadata,
)
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.env.observation import (
    OBS_SIZE,
)

# --------------------------------------------------------------------------- SB3 checkpoints

# ``MaskablePPO.save`` writes the model's settings to ``data`` as JSON. A setting that JSON cannot
# hold is written as ``{":type:": <its type>, ":serialized:": <its pickle, base64>, ...its
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


def sb3_members(path: str | Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
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
    settings, params, variables = sb3_members(path)
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
