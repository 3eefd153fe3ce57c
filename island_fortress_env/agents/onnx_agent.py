"""A policy exported to ONNX (``island-fortress export``), played by onnxruntime without torch.

The model's interface (what ``agents.onnx_export`` writes, and what any model must have to play):

* inputs ``observation`` float32[batch, OBS_SIZE] (the env's seat-relative vector) and
  ``action_mask`` bool[batch, NUM_ACTIONS] (uint8 accepted too, where a model declares it);
* outputs ``log_probs`` float32[batch, NUM_ACTIONS], the policy's log-probabilities with the
  mask applied in the graph (an illegal action's logit is float32's lowest number before the
  log-softmax, so its probability is 0), and ``value`` float32[batch], the value head;
* ``batch`` any size (a dynamic axis);
* metadata ``island_fortress.space_signature``: the observation/action space signature of the
  checkpoint it came from, compared with this environment's as a checkpoint's is.

ONNX files are untrusted input. ``read_onnx_model`` reads a regular file of at most
``MAX_ONNX_BYTES``, parses it as protobuf (``onnx``: no code runs) and refuses what would make
onnxruntime read other files or run anything but standard operators: tensors stored outside the
file (external data), operators of any domain but the standard one (custom operator libraries
are never registered either), local functions, and control flow (subgraphs), in the model's
graph and in its training graphs (``training_info``, which onnxruntime does not run) alike.
onnxruntime then loads the checked bytes (never the path: it reads nothing beside them) on its CPU
provider, and a probe run checks the outputs' shapes and that they are finite. Every run in play
checks them again: a NaN or an infinite log-probability of a legal action, or value, is an
``OnnxModelError`` naming the file. What is not bounded: the memory and time a graph of standard
operators asks for at run time.

The agents of one model share one onnxruntime session (``shared_model``: keyed by the SHA-256 of
the file's bytes, the last ``SHARED_MODELS`` contents kept), as the agents of a checkpoint share
its network: a server that makes an agent for every new game checks and loads each model once.
A session's ``run`` may be called from several threads at once (onnxruntime's guarantee); every
agent draws from its own generator.

``OnnxAgent`` has ``CheckpointAgent``'s face: ``act``, ``reset``, ``deterministic`` and
``probabilities(observations, masks)`` for one or a batch of positions (the batched runner's one
forward pass for all of a seat's games), plus ``forward`` (log-probabilities and values) for the
search player. ``onnx`` and ``onnxruntime`` are imported when a model is read, never before.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from island_fortress_env.agents.base import policy_action
from island_fortress_env.agents.checkpoint_io import CheckpointError, _short, space_signature
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.engine.files import FileRefused, parse_json, read_file
from island_fortress_env.env.observation import OBS_SIZE

MAX_ONNX_BYTES = 64 * 2**20  # 16M float32 weights: far more than any network of this game
MAX_METADATA_CHARS = 64 * 2**10  # one metadata value
ONNX_FORMAT = "island_fortress.onnx.v1"
INPUTS = ("observation", "action_mask")
OUTPUTS = ("log_probs", "value")
META_FORMAT = "island_fortress.format"
META_SIGNATURE = "island_fortress.space_signature"
META_CHECKPOINT = "island_fortress.checkpoint"  # the checkpoint's file name
META_NETWORK = "island_fortress.network"  # its ActorCritic settings, JSON
META_TIMESTEPS = "island_fortress.num_timesteps"
INSTALL = "pip install 'island-fortress-env[onnx]'"
_FLOAT, _UINT8, _BOOL = 1, 2, 9  # onnx.TensorProto's element types
_EXTERNAL = 1  # onnx.TensorProto.EXTERNAL
_GRAPH_ATTRIBUTES = (5, 10)  # onnx.AttributeProto.GRAPH, GRAPHS: control flow's subgraphs
_STANDARD_DOMAINS = ("", "ai.onnx")
SHARED_MODELS = 8  # the model contents whose checked bytes and session are kept for the next agent
_shared: OrderedDict[bytes, tuple[OnnxModel, Any]] = OrderedDict()
_seen: OrderedDict[tuple[Any, ...], bytes] = OrderedDict()  # a file as it stood, and its bytes' SHA-256
_shared_lock = threading.Lock()


class OnnxModelError(CheckpointError):
    """An ONNX file that cannot be played here (one line, naming the file)."""


def is_onnx_path(path: str | Path) -> bool:
    """Whether ``path`` names an ONNX model by its suffix (how ``search:FILE`` tells one)."""
    return str(path).lower().endswith(".onnx")


def _fail(path: str | Path, why: str) -> OnnxModelError:
    return OnnxModelError(f"ONNX model {str(path)!r}: {why}")


@dataclass(frozen=True)
class OnnxModel:
    """A checked model: its bytes (what onnxruntime loads), the mask's element type it takes and
    its metadata (``island_fortress.*`` keys)."""

    path: str
    data: bytes
    mask_dtype: type
    metadata: dict[str, str]


def _libraries(path: str | Path) -> tuple[Any, Any]:
    try:
        import onnx
        import onnxruntime
    except ImportError as exc:
        raise _fail(
            path, f"playing it needs onnx and onnxruntime ({exc.name} is missing): {INSTALL}"
        ) from None
    return onnx, onnxruntime


def read_onnx_model(path: str | Path) -> OnnxModel:
    """The checked model at ``path`` (module doc); anything wrong is one ``OnnxModelError``."""
    try:
        data = read_file(path, MAX_ONNX_BYTES)
    except FileRefused as exc:
        raise _fail(path, str(exc)) from None
    return check_onnx_bytes(data, path)


def check_onnx_bytes(data: bytes, path: str | Path = "<bytes>") -> OnnxModel:
    """``data`` as a checked model (``read_onnx_model`` without the file); ``path`` names it."""
    onnx, _ = _libraries(path)
    if data[:4] == b"PK\x03\x04":
        raise _fail(path, "is a zip file, not an ONNX model (a checkpoint plays as its path, without onnx:)")
    try:
        model = onnx.ModelProto.FromString(data)
    except Exception as exc:  # protobuf's DecodeError, or its recursion limit
        raise _fail(path, f"not an ONNX model ({_short(exc)})") from None
    if model.ir_version <= 0 or not model.HasField("graph") or not model.graph.node:
        raise _fail(path, "not an ONNX model (no graph)")
    _check_contents(path, model)
    metadata = _metadata(path, model)
    mask_dtype = _check_interface(path, model)
    return OnnxModel(str(path), data, mask_dtype, metadata)


def check_onnx_model(path: str | Path) -> OnnxModel:
    """``read_onnx_model``, then loaded by onnxruntime and run once (``load_session``): what an
    ``onnx:FILE`` agent spec is checked by before any game starts. The session is kept for the
    agents of the file (``shared_model``)."""
    return shared_model(path)[0]


def shared_model(source: str | Path | OnnxModel) -> tuple[OnnxModel, Any]:
    """The checked model of ``source`` (a file, or a model already checked) and its onnxruntime
    session, one per content: bytes loaded before (by their SHA-256) are neither checked nor
    loaded again, only named by the path given. A file read before that still stands as it did
    (the same inode, size and change times) is not read again."""
    path = source.path if isinstance(source, OnnxModel) else str(source)
    standing = None if isinstance(source, OnnxModel) else _standing(source)
    with _shared_lock:
        key = _seen.get(standing) if standing is not None else None
        found = _shared.get(key) if key is not None else None
    if key is None or found is None:
        if isinstance(source, OnnxModel):
            data = source.data
        else:
            try:
                data = read_file(source, MAX_ONNX_BYTES)
            except FileRefused as exc:
                raise _fail(source, str(exc)) from None
        key = hashlib.sha256(data).digest()
        with _shared_lock:
            found = _shared.get(key)
        if found is None:
            model = source if isinstance(source, OnnxModel) else check_onnx_bytes(data, path)
            found = (model, load_session(model))
    with _shared_lock:
        found = _shared.setdefault(key, found)  # one session even where two loads raced
        _shared.move_to_end(key)
        while len(_shared) > SHARED_MODELS:
            _shared.popitem(last=False)
        if standing is not None and _standing(path) == standing:  # not rewritten while read
            _seen[standing] = key
            _seen.move_to_end(standing)
            while len(_seen) > 8 * SHARED_MODELS:
                _seen.popitem(last=False)
    model, session = found
    return (model if model.path == path else replace(model, path=path)), session


def _standing(path: str | Path) -> tuple[Any, ...] | None:
    """A regular file as it stands (its real path, device, inode, size and time of last change),
    to know a file read before without reading it again; None for anything else."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _graphs(model: Any) -> list[Any]:
    """The model's graph and its training graphs (``training_info``'s initialization and
    algorithm): every graph a reader of the file might load tensors of."""
    out = [model.graph]
    for info in model.training_info:
        out += [info.initialization, info.algorithm]
    return out


def _tensors(graph: Any) -> list[Any]:
    """Every tensor a graph stores: initializers (sparse ones' parts too) and constants."""
    out = list(graph.initializer)
    for sparse in graph.sparse_initializer:
        out += [sparse.values, sparse.indices]
    for node in graph.node:
        for attribute in node.attribute:
            out += [attribute.t, *attribute.tensors]
            for sparse in (attribute.sparse_tensor, *attribute.sparse_tensors):
                out += [sparse.values, sparse.indices]
    return out


def _check_contents(path: str | Path, model: Any) -> None:
    """Standard operators in flat graphs (the model's and its training ones), every tensor inside
    the file."""
    if model.functions:
        raise _fail(path, "defines local functions; only standard ONNX operators are played")
    for graph in _graphs(model):
        for node in graph.node:
            if node.domain not in _STANDARD_DOMAINS:
                raise _fail(
                    path,
                    f"uses operator {node.domain}.{node.op_type}; only standard ONNX operators are played",
                )
            if any(a.type in _GRAPH_ATTRIBUTES or a.HasField("g") or a.graphs for a in node.attribute):
                raise _fail(path, f"uses control flow ({node.op_type} with a subgraph); a policy needs none")
        if any(t.data_location == _EXTERNAL or t.external_data for t in _tensors(graph)):
            raise _fail(path, "keeps tensors in other files (external data); a model must be one file")


def _metadata(path: str | Path, model: Any) -> dict[str, str]:
    """The ``island_fortress.*`` metadata, with the space signature compared with this env's."""
    metadata = {p.key: p.value for p in model.metadata_props if p.key.startswith("island_fortress.")}
    if any(len(value) > MAX_METADATA_CHARS for value in metadata.values()):
        raise _fail(path, "its metadata is too large")
    if metadata.get(META_FORMAT, ONNX_FORMAT) != ONNX_FORMAT:
        raise _fail(path, f"format {metadata[META_FORMAT]!r}, not {ONNX_FORMAT!r}")
    if META_SIGNATURE not in metadata:
        raise _fail(
            path,
            f"no {META_SIGNATURE} metadata, so its observation/action spaces cannot be checked "
            "(island-fortress export writes it)",
        )
    try:
        saved = parse_json(metadata[META_SIGNATURE])
    except (FileRefused, ValueError) as exc:
        raise _fail(path, f"{META_SIGNATURE} is not usable JSON ({_short(exc)})") from None
    if not isinstance(saved, dict):
        raise _fail(path, f"{META_SIGNATURE} must hold a JSON object")
    here = space_signature()
    diffs = [f"{k}: model {saved.get(k)!r} != env {v!r}" for k, v in here.items() if saved.get(k) != v]
    if diffs:
        raise _fail(
            path,
            f"does not match this environment's spaces ({'; '.join(diffs)}); "
            "it was trained on a different observation/action layout",
        )
    return metadata


def _shape(value_info: Any) -> tuple[int, list[str]]:
    """An input's or output's element type and its dimensions as text (a name for a symbolic one)."""
    tensor = value_info.type.tensor_type
    dims = [str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?") for d in tensor.shape.dim]
    return tensor.elem_type, dims


_TYPE_NAMES = {_FLOAT: "float32", _UINT8: "uint8", _BOOL: "bool"}


def _check_interface(path: str | Path, model: Any) -> type:
    """The inputs and outputs the module doc lists; returns the mask's numpy type."""
    stored = {t.name for t in model.graph.initializer}
    inputs = {i.name: i for i in model.graph.input if i.name not in stored}
    outputs = {o.name: o for o in model.graph.output}
    if sorted(inputs) != sorted(INPUTS) or sorted(outputs) != sorted(OUTPUTS):
        raise _fail(
            path,
            f"takes {sorted(inputs)} and gives {sorted(outputs)}; a policy takes {list(INPUTS)} "
            f"and gives {list(OUTPUTS)}",
        )
    wanted = {
        "input observation": (inputs["observation"], (_FLOAT,), OBS_SIZE),
        "input action_mask": (inputs["action_mask"], (_BOOL, _UINT8), NUM_ACTIONS),
        "output log_probs": (outputs["log_probs"], (_FLOAT,), NUM_ACTIONS),
        "output value": (outputs["value"], (_FLOAT,), None),
    }
    for what, (info, types, size) in wanted.items():
        elem, dims = _shape(info)
        rank_ok = len(dims) == (1 if size is None else 2) and (size is None or dims[1] == str(size))
        if elem not in types or not rank_ok:
            need = "/".join(_TYPE_NAMES[t] for t in types) + (
                "[batch]" if size is None else f"[batch, {size}]"
            )
            have = f"{_TYPE_NAMES.get(elem, f'type {elem}')}[{', '.join(dims)}]"
            raise _fail(path, f"{what} is {have}; this environment's is {need}")
    return np.bool_ if _shape(inputs["action_mask"])[0] == _BOOL else np.uint8


def load_session(model: OnnxModel) -> Any:
    """An onnxruntime session of the checked bytes (CPU, one thread, errors only in its log), run
    once on two blank positions to check its outputs (``shared_model`` keeps one per content)."""
    _, ort = _libraries(model.path)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # one game per process, as CheckpointAgent's torch threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(model.data, sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime's own error types (Fail, InvalidGraph, NotImplemented...)
        raise _fail(model.path, f"onnxruntime cannot load it ({_short(exc)})") from None
    blank = np.zeros((2, OBS_SIZE), dtype=np.float32)
    _run(session, model, blank, np.ones((2, NUM_ACTIONS), dtype=np.bool_))
    return session


def _run(session: Any, model: OnnxModel, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(log_probs, values) of a batch, with their shapes checked, and the values and the legal
    actions' log-probabilities finite (``mask``: the legal actions, as bools)."""
    try:
        log_probs, values = session.run(
            list(OUTPUTS), {"observation": obs, "action_mask": mask.astype(model.mask_dtype, copy=False)}
        )
    except Exception as exc:
        raise _fail(model.path, f"onnxruntime cannot run it ({_short(exc)})") from None
    n = len(obs)
    if np.shape(log_probs) != (n, NUM_ACTIONS) or np.shape(values) != (n,):
        raise _fail(
            model.path,
            f"gave log_probs {np.shape(log_probs)} and value {np.shape(values)} for {n} positions, "
            f"not ({n}, {NUM_ACTIONS}) and ({n},)",
        )
    log_probs, values = np.asarray(log_probs), np.asarray(values)
    legal = np.asarray(mask, dtype=bool)
    for name, given in (("log_probs", log_probs[legal]), ("value", values)):
        if not np.isfinite(given).all():
            what = "NaN" if np.isnan(given).any() else "an infinite"
            raise _fail(
                model.path,
                f"gave {what} {name} of a position (a policy's values, and log-probabilities of "
                "the legal actions, are finite)",
            )
    return log_probs, values


class OnnxAgent:
    """An exported policy behind the common agent interface, played by onnxruntime (module doc).

    Greedy by default (``deterministic=True``); sampling uses the agent's own generator, with
    ``threshold`` > 0 only among the actions of at least that probability (as ``CheckpointAgent``)."""

    def __init__(
        self,
        path: str | Path | OnnxModel,
        seed: int | None = None,
        deterministic: bool = True,
        name: str | None = None,
        threshold: float = 0.0,
    ) -> None:
        self.model, self.session = shared_model(path)
        self.path = self.model.path
        self.deterministic = deterministic
        self.threshold = threshold
        self.name = name or f"onnx:{Path(self.path).stem}"
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def forward(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(log_probs float32[B, NUM_ACTIONS], values float32[B]) of a batch, in one run."""
        mask = np.asarray(masks).astype(bool, copy=False).reshape(-1, NUM_ACTIONS)
        obs = np.ascontiguousarray(observations, dtype=np.float32).reshape(len(mask), OBS_SIZE)
        return _run(self.session, self.model, obs, mask)

    def probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The policy's action probabilities (0 outside the mask): of one observation, or of a
        batch of them (rows of ``observation`` and ``action_mask``) in one run."""
        single = np.ndim(observation) == 1
        mask = np.asarray(action_mask).astype(bool).reshape(-1, NUM_ACTIONS)
        log_probs, _ = self.forward(observation, mask)
        probs = np.where(mask, np.exp(log_probs.astype(np.float64)), 0.0)
        return probs[0] if single else probs

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: Any = None) -> int:
        probs = self.probabilities(observation, action_mask)
        return policy_action(probs, action_mask, self.deterministic, self.threshold, self.rng)
