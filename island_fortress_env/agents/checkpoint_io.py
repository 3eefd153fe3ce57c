"""The checkpoint zip's readers, shared by native and SB3 checkpoints: the members' names, the
metadata's typed fields, every member read with its checksum checked, JSON parsed as JSON and
tensors loaded with ``torch.load(weights_only=True)``, and ``CheckpointError``: what a bad file is.
``checkpoint`` is the public face; ``sb3_checkpoint`` builds SB3 models on these readers.

Every read is bounded (``_open_zip``): the file is a regular file of at most ``MAX_FILE_BYTES``
(opened without waiting on a pipe), its zip directory at most ``MAX_DIRECTORY_BYTES`` (read from
the end record before ``zipfile`` parses it), at most ``MAX_MEMBERS`` members, each named once and
declaring at most its kind's size (``member_limit``: JSON, weights, optimizer state, other) and
``MAX_TOTAL_BYTES`` together, all checked before a byte of a member is read or its checksum
computed; a member is then read in chunks and refused past its limit whatever the directory
said. Running out of memory is a ``CheckpointError`` too."""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import pickle
import stat
import struct
import warnings
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from island_fortress_env.engine.actions import ACTION_FAMILIES, NUM_ACTIONS
from island_fortress_env.engine.files import size_text
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
MAX_METADATA_BYTES = 16 * 2**20  # a JSON member: island_fortress.json is 3 KB, SB3's data 60 KB
MAX_WEIGHTS_BYTES = 64 * 2**20  # 16M float32 parameters; the largest network trained here has 1.8M
MAX_OPTIMIZER_BYTES = 3 * MAX_WEIGHTS_BYTES  # Adam's state: two moments per parameter (shipped: 3x)
MAX_OTHER_BYTES = 2**20  # any other member (SB3's version and system info: a few hundred bytes)
MAX_MEMBERS = 32  # a native checkpoint has 3 members, an SB3 one 7
MAX_TOTAL_BYTES = 2 * MAX_OPTIMIZER_BYTES  # every member together, as declared
MAX_FILE_BYTES = MAX_TOTAL_BYTES + 2**20  # stored members plus the zip's own records
MAX_DIRECTORY_BYTES = 2**20  # the zip's central directory: 32 entries need a few KB
_MEMBER_LIMITS = {
    META_MEMBER: MAX_METADATA_BYTES,
    SB3_DATA_MEMBER: MAX_METADATA_BYTES,
    WEIGHTS_MEMBER: MAX_WEIGHTS_BYTES,
    SB3_POLICY_MEMBER: MAX_WEIGHTS_BYTES,
    SB3_VARIABLES_MEMBER: MAX_WEIGHTS_BYTES,
    TRAINING_STATE_MEMBER: MAX_OPTIMIZER_BYTES,
    SB3_OPTIMIZER_MEMBER: MAX_OPTIMIZER_BYTES,
}
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
    with _open_zip(path) as zin:
        members = {n: _read_member(path, zin, n) for n in zin.namelist() if n != META_MEMBER}
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


Count = Annotated[int, Field(ge=0)]
Number = Annotated[float, Field(allow_inf_nan=False)]  # an integer is a number too


class _Fields(BaseModel):
    """Metadata fields: strict types (``"4"`` is not an integer, ``true`` not a number); a field
    may be absent (checkpoints of another trainer or an older version), never null unless said.
    Each field's description is what the error says it must be."""

    model_config = ConfigDict(strict=True, extra="allow")


class SpaceSignature(_Fields):
    env: str = Field("", description="a text")
    observation_size: Count = Field(0, description="an integer >= 0")
    num_actions: Count = Field(0, description="an integer >= 0")
    layout_digest: str = Field("", description="a text")


class Selection(_Fields):
    """Which weights a ``best.zip`` kept: the evaluation that chose them."""

    score: Number = Field(0.0, description="a number")
    decisions: Count = Field(0, description="an integer >= 0")
    games: Count = Field(0, description="an integer >= 0")


class NetworkSettings(_Fields):
    """``network.ActorCritic``'s arguments: no other key is accepted."""

    model_config = ConfigDict(strict=True, extra="forbid")

    obs_size: Count = Field(0, description="an integer >= 0")
    num_actions: Count = Field(0, description="an integer >= 0")
    cnn_channels: Count = Field(0, description="an integer >= 0")
    hidden: Count = Field(0, description="an integer >= 0")
    head_activation: str = Field("relu", description="a text")
    value_cnn_channels: Count | None = Field(None, description="an integer >= 0 or null")
    value_hidden: Count | None = Field(None, description="an integer >= 0 or null")


class CheckpointMetadata(_Fields):
    """Every metadata field the code reads and what it must be; other fields (the creation time,
    the library versions...) are kept as they are, unread."""

    format: str = Field("", description="a text")
    space_signature: SpaceSignature = Field(default_factory=SpaceSignature, description="an object")
    network: NetworkSettings = Field(
        default_factory=NetworkSettings, description="an object of network settings"
    )
    num_timesteps: Count = Field(0, description="an integer >= 0")
    updates: Count = Field(0, description="an integer >= 0")
    elapsed_seconds: Annotated[Number, Field(ge=0)] = Field(0.0, description="a number >= 0")
    training_seconds: Annotated[Number, Field(ge=0)] = Field(0.0, description="a number >= 0")
    selection: Selection = Field(default_factory=Selection, description="an object")
    env_options: dict[str, Any] = Field(default_factory=dict, description="an object")
    config: dict[str, Any] = Field(default_factory=dict, description="an object")
    run_name: str = Field("", description="a text")


def _described(loc: tuple[Any, ...]) -> str:
    """What the field at ``loc`` must be: its description in ``CheckpointMetadata``."""
    model: type[BaseModel] = CheckpointMetadata
    description = "valid"
    for part in loc:
        field = model.model_fields.get(str(part))
        if field is None:
            break
        description = field.description or description
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            model = field.annotation
    return description


def _fail(path: str | Path, why: str) -> CheckpointError:
    return CheckpointError(f"checkpoint {str(path)!r}: {why}")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def validate_metadata(path: str | Path, metadata: dict[str, Any]) -> dict[str, Any]:
    """Check every field the code reads against ``CheckpointMetadata``; a ``CheckpointError``
    names the first that is wrong. Returns ``metadata`` itself (the code reads it as a dict)."""
    try:
        CheckpointMetadata.model_validate(metadata)
    except ValidationError as exc:
        errors = exc.errors()
        unknown = [e["loc"][-1] for e in errors if e["type"] == "extra_forbidden"]
        if unknown:
            where = ".".join(map(str, errors[0]["loc"][:-1]))
            raise _fail(
                path, f"{META_MEMBER}: {where} has unknown setting(s) {_shown(sorted(unknown))}"
            ) from None
        error = errors[0]
        loc = tuple(error["loc"])
        key = ".".join(map(str, loc))
        raise _fail(
            path, f"{META_MEMBER}: {key} must be {_described(loc)}, not {_shown(error['input'])}"
        ) from None
    return metadata


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The metadata of checkpoint ``path``, after checking the zip (every member's checksum) and
    the type of every field the code reads; anything wrong is one ``CheckpointError``."""
    path = Path(path)
    if not path.exists():
        raise _fail(path, "no such file")
    try:
        with _open_zip(path) as z:
            if META_MEMBER not in z.namelist():
                raise _fail(
                    path,
                    f"no {META_MEMBER} inside; it was not written by island-fortress train, "
                    "so its observation/action spaces cannot be checked",
                )
            for info in z.infolist():  # every member's checksum: a damaged file is refused up front
                _check_member(path, z, info)
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


def member_limit(name: str) -> int:
    """The most bytes a checkpoint's member ``name`` may hold (see the module doc)."""
    return _MEMBER_LIMITS.get(name, MAX_OTHER_BYTES)


_OPEN_FLAGS = (  # a pipe swapped in for the file is opened without waiting, then refused
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
_END = struct.Struct("<4s4H2LH")  # the zip's end of central directory record
_END_SIGNATURE = b"PK\x05\x06"


@contextmanager
def _open_zip(path: str | Path) -> Iterator[zipfile.ZipFile]:
    """The zip ``path``, its file and directory checked against the limits before any member
    is read (see the module doc); a file that is not a zip is ``zipfile.BadZipFile``."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise _fail(path, f"cannot be read ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _fail(path, "is not a regular file")
        if st.st_size > MAX_FILE_BYTES:
            raise _fail(path, f"is larger than {size_text(MAX_FILE_BYTES)}, more than any checkpoint")
        _check_end_record(path, f, st.st_size)
        with zipfile.ZipFile(f) as z:
            _check_directory(path, z.infolist())
            yield z


def _check_end_record(path: str | Path, f: IO[bytes], size: int) -> None:
    """Refuse a zip whose central directory is larger than ``MAX_DIRECTORY_BYTES`` (or ZIP64's,
    which no checkpoint needs) before ``zipfile`` reads it; a file without an end record is left
    to ``zipfile`` to call what it is."""
    f.seek(max(0, size - _END.size - 0xFFFF))  # the record, after at most a 64 KB comment
    tail = f.read()
    at = tail.rfind(_END_SIGNATURE)
    if at < 0 or len(tail) - at < _END.size:
        return
    _sig, _disk, _start, _here, count, directory, offset, _comment = _END.unpack_from(tail, at)
    if count == 0xFFFF or directory == 0xFFFFFFFF or offset == 0xFFFFFFFF:
        raise _fail(path, "is a ZIP64 archive, which no checkpoint needs")
    if count > MAX_MEMBERS:
        raise _fail(path, f"holds {count} members; a checkpoint has at most {MAX_MEMBERS}")
    if directory > MAX_DIRECTORY_BYTES:
        raise _fail(path, f"its zip directory is {directory} bytes; at most {size_text(MAX_DIRECTORY_BYTES)}")


def _check_directory(path: str | Path, infos: list[zipfile.ZipInfo]) -> None:
    """The members' count, names and declared sizes against the limits (nothing is read)."""
    if len(infos) > MAX_MEMBERS:
        raise _fail(path, f"holds {len(infos)} members; a checkpoint has at most {MAX_MEMBERS}")
    names = [info.filename for info in infos]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise _fail(path, f"names member(s) {_shown(twice)} more than once")
    for info in infos:
        limit = member_limit(info.filename)
        if info.file_size > limit:
            raise _fail(
                path,
                f"member {_shown(info.filename)} declares {info.file_size} bytes; at most "
                f"{size_text(limit)} are accepted for it",
            )
    total = sum(info.file_size for info in infos)
    if total > MAX_TOTAL_BYTES:
        raise _fail(path, f"its members declare {total} bytes; at most {size_text(MAX_TOTAL_BYTES)} in all")


def _check_member(path: str | Path, z: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    """Read a member through to its end, which checks its CRC, without holding it in memory."""
    _read_member(path, z, info.filename, keep=False)


def _read_member(path: str | Path, z: zipfile.ZipFile, member: str, keep: bool = True) -> bytes:
    """One member's bytes (none unless ``keep``), read in chunks and refused past its limit
    whatever its declared size; a damaged member (bad CRC, broken compression) or one that does
    not fit in memory is a CheckpointError."""
    limit = member_limit(member)
    chunks: list[bytes] = []
    total = 0
    try:
        with z.open(member) as f:
            while chunk := f.read(min(1 << 20, limit + 1 - total)):
                total += len(chunk)
                if total > limit:
                    raise _fail(path, f"member {_shown(member)} holds more than {size_text(limit)}")
                if keep:
                    chunks.append(chunk)
        return b"".join(chunks)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError) as exc:
        raise _fail(path, f"member {member} is corrupted ({_short(exc)})") from None
    except MemoryError:
        raise _fail(path, f"member {member} does not fit in memory") from None


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
        with _open_zip(path) as z:
            present = set(z.namelist())
            return {name: _read_member(path, z, name) for name in names if name in present}
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError):
        raise _fail(path, "not a zip file, or a truncated or damaged one") from None


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
    except MemoryError:
        raise _fail(path, f"member {member} does not fit in memory") from None


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
