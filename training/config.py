"""Training configuration of the three trainers: YAML files in ``configs/``, read by one loader
(``load_config``), validated on load, overridable by ``section.key=value`` arguments.

    schema        trainer                                           configs/             module
    NativeConfig  native multi-agent PPO (training/ppo.py)          default.yaml,        config_native
                                                                    policy-2-4p.yaml
    TrainConfig   SB3 MaskablePPO (training/train.py)               sb3.yaml, sb3-long   config_libraries
    RLlibConfig   multi-agent PPO on Ray RLlib (rllib_backend.py)   rllib.yaml           config_libraries

A schema is a pydantic model: every field's type, bounds or choices and help are declared once,
with the field (``config_base`` holds what the trainers share: the run's name and seed, the
``reward``, ``pretrain``, ``policy``, ``eval`` and ``logging`` sections, the discount's types).
Types are strict (``2.0`` is not an integer, ``"yes"`` is not a boolean; an integer is a number,
and so is a string that spells one, as YAML 1.1 reads ``1e-4``) and unknown keys are refused, so a
typo or a wrong type is one ``TrainConfigError`` that names the file and the key, before a run
starts: ``config 'configs/default.yaml': ppo.gamma: must be <= 1, not 1.5``.
"""

from __future__ import annotations

import datetime as dt
import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from island_fortress_env.training.config_base import (
    TABLE_NAMES,
    TABLE_SIZES,
    EvalSection,
    LoggingSection,
    PolicySection,
    PretrainSection,
    RewardSection,
    RunConfig,
    TrainConfigError,
    check_rules,
    fail,
)
from island_fortress_env.training.config_libraries import RLlibConfig, TrainConfig
from island_fortress_env.training.config_native import LeagueSection, NativeConfig, TablesSection

__all__ = [
    "TABLE_NAMES",
    "TABLE_SIZES",
    "EvalSection",
    "LeagueSection",
    "LoggingSection",
    "NativeConfig",
    "PolicySection",
    "PretrainSection",
    "RLlibConfig",
    "RewardSection",
    "RunConfig",
    "TablesSection",
    "TrainConfig",
    "TrainConfigError",
    "check_rules",
    "fail",
    "load_config",
    "run_metadata",
]

MAX_CONFIG_BYTES = 1 << 20  # a config is a page of YAML, not a data file
_MISSING = object()
_BOUNDS = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}
_TYPES = {
    "int_type": "int",
    "float_type": "float",
    "bool_type": "bool",
    "string_type": "str",
    "list_type": "list",
    "dict_type": "a mapping",
    "model_type": "a section (a mapping of keys)",
    "model_attributes_type": "a section (a mapping of keys)",
}


def _model_at(schema: type[BaseModel], path: Sequence[Any]) -> type[BaseModel] | None:
    """The section model at ``path`` of ``schema`` (None where it leads elsewhere)."""
    model = schema
    for part in path:
        field = model.model_fields.get(str(part))
        annotation = field.annotation if field is not None else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return None
        model = annotation
    return model


def _key(loc: Sequence[Any]) -> str:
    key = ""
    for part in loc:
        key += f"[{part}]" if isinstance(part, int) else f".{part}" if key else str(part)
    return key or "config"


def _problem(schema: type[BaseModel], error: Mapping[str, Any]) -> str:
    """One pydantic error as ``key: why``, in the words of the old hand-written checks."""
    kind, loc, ctx, value = error["type"], tuple(error["loc"]), error.get("ctx") or {}, error.get("input")
    cause = ctx.get("error")
    if isinstance(cause, TrainConfigError) and cause.key:
        return str(cause)  # a check across fields: it names its own key
    if "[key]" in loc:  # a mapping's key that is not one of its choices
        where = _key(loc[: loc.index("[key]") - 1])
        return f"{where}: unknown key {value!r}; use {ctx.get('expected', 'another')}"
    key = _key(loc)
    if kind in _BOUNDS:
        limit = next(iter(ctx.values()))
        limit = int(limit) if isinstance(limit, float) and limit.is_integer() else limit
        return f"{key}: must be {_BOUNDS[kind]} {limit}, not {value!r}"
    if kind == "literal_error":
        return f"{key}: must be {ctx['expected']}, not {value!r}"
    if kind == "extra_forbidden":
        model = _model_at(schema, loc[:-1])
        known = f"; known: {sorted(model.model_fields)}" if model is not None else ""
        return f"{key}: unknown key{known}"
    if kind in _TYPES:
        return f"{key}: expected {_TYPES[kind]}, got {value!r}"
    if kind == "string_too_short":
        return f"{key}: must not be empty"
    if cause is not None:
        return f"{key}: {cause}"
    return f"{key}: {error['msg']}"


def _check_renamed(data: Mapping[str, Any], renamed: Mapping[str, str]) -> None:
    """A key that was replaced by another is refused with an error that names the new key."""
    for old, new in renamed.items():
        node: Any = data
        for part in old.split("."):
            node = node.get(part, _MISSING) if isinstance(node, Mapping) else _MISSING
        if node is not _MISSING:
            fail(old, f"renamed to {new}")


def _set_dotted(data: dict[str, Any], dotted: str, raw_value: str) -> None:
    keys = dotted.split(".")
    if not all(keys):
        raise TrainConfigError(f"override {dotted!r}: expected section.key=value")
    node = data
    for k in keys[:-1]:
        node = node.setdefault(k, {})
        if not isinstance(node, dict):
            raise TrainConfigError(f"override {dotted!r}: {k!r} is not a section")
    try:
        node[keys[-1]] = yaml.safe_load(raw_value)
    except yaml.YAMLError:
        raise TrainConfigError(f"override {dotted!r}: the value is not valid YAML") from None


def _read_yaml(where: str) -> dict[str, Any]:
    path = Path(where)
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise TrainConfigError(f"config {where!r}: larger than {MAX_CONFIG_BYTES} bytes")
        text = path.read_text("utf-8")
    except OSError as exc:
        raise TrainConfigError(f"config {where!r}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise TrainConfigError(f"config {where!r}: not a text (YAML) file") from None
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise TrainConfigError(f"config {where!r}: invalid YAML ({exc})") from None
    if not isinstance(data, dict):
        raise TrainConfigError(f"config {where!r}: must be a mapping at the top level")
    return data


def load_config(
    path: str | Path | None = None, overrides: Sequence[str] = (), schema: type[RunConfig] = TrainConfig
) -> Any:
    """Read a YAML config (or the defaults), apply ``section.key=value`` overrides, validate.

    ``schema`` is ``TrainConfig`` (the SB3 trainer), ``NativeConfig`` (the native PPO trainer) or
    ``RLlibConfig`` (the RLlib trainer). Any problem is one ``TrainConfigError`` of one line naming
    the file and the key (the first problem found, where there are several).
    """
    where = "defaults" if path is None else str(path)
    data = {} if path is None else _read_yaml(where)
    for item in overrides:
        if "=" not in item:
            raise TrainConfigError(f"override {item!r}: expected section.key=value")
        key, value = item.split("=", 1)
        _set_dotted(data, key.strip(), value)
    try:
        _check_renamed(data, schema.RENAMED)
        return schema.model_validate(data)
    except TrainConfigError as exc:
        raise TrainConfigError(f"config {where!r}: {exc}", exc.key) from None
    except ValidationError as exc:
        errors = exc.errors()
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise TrainConfigError(f"config {where!r}: {_problem(schema, errors[0])}{more}") from None


def run_metadata(
    cfg: Any, env_options: Mapping[str, Any], libraries: Sequence[str], **extra: Any
) -> dict[str, Any]:
    """What every trainer's checkpoint records: the run name, the config, the env options, the
    creation time and the versions of this package, torch and the named ``libraries`` (module
    names), plus the trainer's own ``extra`` keys."""
    modules = ("island_fortress_env", "torch", *libraries)
    return {
        "run_name": cfg.run_name,
        **extra,
        "config": cfg.to_dict(),
        "env_options": dict(env_options),
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "versions": {name: importlib.import_module(name).__version__ for name in modules},
    }
