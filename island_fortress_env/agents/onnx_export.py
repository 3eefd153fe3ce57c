"""A native checkpoint's network as an ONNX model (``island-fortress export``): torch's exporter
(``torch.onnx.export``, the ``torch.export`` route), the interface ``agents.onnx_agent`` plays
(its module doc), checked three ways before the file is written: ``onnx.checker.check_model``
(full check, shapes inferred), the player's own checks, and onnxruntime's log-probabilities and
values against torch's on the positions given (observations and masks of real games:
``players.positions.sample_positions``, which ``island-fortress export`` passes).

Needs torch (the ``train`` extra) and the ``onnx`` extra (onnx, onnxruntime, onnxscript: torch's
exporter builds the graph with onnxscript); playing the file needs the ``onnx`` extra only.
SB3 checkpoints are refused: export takes a native one.
"""

from __future__ import annotations

import json
import logging
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from island_fortress_env.agents.checkpoint import NATIVE_FORMAT, CheckpointError, load_policy, read_metadata
from island_fortress_env.agents.checkpoint_io import space_signature
from island_fortress_env.agents.onnx_agent import (
    INPUTS,
    INSTALL,
    META_CHECKPOINT,
    META_FORMAT,
    META_NETWORK,
    META_SIGNATURE,
    META_TIMESTEPS,
    ONNX_FORMAT,
    OUTPUTS,
    OnnxAgent,
    check_onnx_bytes,
)
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.env.observation import OBS_SIZE

LOG_PROB_TOLERANCE = 1e-3  # the largest difference allowed in a legal action's log-probability
VALUE_TOLERANCE = 1e-4
DOC = (
    "Island Fortress policy. Inputs: observation float32[batch, {obs}] (the seat-relative vector), "
    "action_mask bool[batch, {actions}] (legal actions). Outputs: log_probs float32[batch, {actions}], "
    "the masked policy's log-probabilities (an illegal action's logit is float32's lowest before the "
    "log-softmax: probability 0), value float32[batch]."
)


class _Policy(torch.nn.Module):
    """``ActorCritic`` with its mask applied in the graph and a log-softmax on top."""

    def __init__(self, net: torch.nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(
        self, observation: torch.Tensor, action_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        logits, value = self.net(observation, action_mask)
        return torch.log_softmax(logits, dim=-1), value


@dataclass(frozen=True)
class ExportReport:
    """What ``export_onnx`` wrote and how closely onnxruntime follows torch."""

    path: Path
    size: int
    opset: int
    positions: int
    log_prob_error: float  # the largest |onnxruntime - torch| over legal actions' log-probabilities
    value_error: float
    same_greedy: int  # positions where both pick the same greedy action

    def text(self) -> str:
        return (
            f"{self.path}: {self.size:,} bytes, ONNX opset {self.opset}; onnxruntime against torch on "
            f"{self.positions} positions: the same greedy action in {self.same_greedy}, log-probabilities "
            f"within {self.log_prob_error:.1e}, values within {self.value_error:.1e}"
        )


@contextmanager
def _quiet() -> Iterator[None]:
    """torch's exporter warns and logs about things that do not concern this network."""
    logger = logging.getLogger("torch.onnx")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)


def _program(net: torch.nn.Module) -> Any:
    """The ONNX model (``onnx.ModelProto``) of ``net`` with a dynamic batch axis."""
    policy = _Policy(net).eval()
    example = (torch.zeros(2, OBS_SIZE), torch.ones(2, NUM_ACTIONS, dtype=torch.bool))
    batch = torch.export.Dim("batch")
    with _quiet(), torch.no_grad():
        program = torch.onnx.export(
            policy,
            example,
            input_names=list(INPUTS),
            output_names=list(OUTPUTS),
            dynamic_shapes=({0: batch}, {0: batch}),
            external_data=False,
            dynamo=True,
            verbose=False,
        )
    assert program is not None  # the torch.export route returns its program
    return program.model_proto


def export_onnx(
    checkpoint: str | Path, out: str | Path, positions: tuple[np.ndarray, np.ndarray] | None = None
) -> ExportReport:
    """Write native ``checkpoint``'s network to ``out`` as ONNX (module doc), after checking it,
    onnxruntime against torch on ``positions`` (observations, masks) where given; a
    ``CheckpointError`` for a checkpoint that cannot be exported or a model that fails a check."""
    try:
        import onnx
    except ImportError:
        raise CheckpointError(f"export needs onnx, onnxruntime and onnxscript: {INSTALL}") from None
    if read_metadata(checkpoint).get("format") != NATIVE_FORMAT:
        raise CheckpointError(
            f"checkpoint {str(checkpoint)!r}: an SB3 checkpoint; export takes a native one "
            "(island-fortress train's own format)"
        )
    net, metadata = load_policy(checkpoint)
    try:
        model = _program(net)
    except ImportError as exc:  # onnxscript, which torch's exporter needs
        raise CheckpointError(f"export needs {exc.name}: {INSTALL}") from None
    model.graph.doc_string = DOC.format(obs=OBS_SIZE, actions=NUM_ACTIONS)
    props = {
        META_FORMAT: ONNX_FORMAT,
        META_SIGNATURE: json.dumps(space_signature(), sort_keys=True),
        META_CHECKPOINT: Path(checkpoint).name,
        META_NETWORK: json.dumps(metadata["network"], sort_keys=True),
    }
    if "num_timesteps" in metadata:
        props[META_TIMESTEPS] = str(metadata["num_timesteps"])
    onnx.helper.set_model_props(model, props)
    onnx.checker.check_model(model, full_check=True)
    data = model.SerializeToString()
    agent = OnnxAgent(check_onnx_bytes(data, out))
    report = _compare(net, agent, positions)
    out = Path(out)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, out)  # never half a model
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)
    return ExportReport(out, len(data), opset, **report)


def _compare(net: torch.nn.Module, agent: OnnxAgent, positions: tuple[np.ndarray, np.ndarray] | None) -> dict:
    """onnxruntime's outputs against torch's on ``positions``; a ``CheckpointError`` where they
    differ."""
    if positions is None or not len(positions[0]):
        return {"positions": 0, "log_prob_error": 0.0, "value_error": 0.0, "same_greedy": 0}
    obs, mask = positions
    with torch.no_grad():
        logits, values = net(torch.from_numpy(obs), torch.from_numpy(mask))
        torch_logp = torch.log_softmax(logits, dim=-1).numpy()
    onnx_logp, onnx_values = agent.forward(obs, mask)
    log_prob_error = float(np.abs(np.where(mask, onnx_logp - torch_logp, 0.0)).max())
    value_error = float(np.abs(onnx_values - values.numpy()).max())
    if log_prob_error > LOG_PROB_TOLERANCE or value_error > VALUE_TOLERANCE:
        raise CheckpointError(
            f"the exported model does not follow torch's: log-probabilities differ by {log_prob_error:.1e}, "
            f"values by {value_error:.1e}"
        )
    same = int((np.argmax(np.where(mask, onnx_logp, -np.inf), 1) == np.argmax(torch_logp, 1)).sum())
    return {
        "positions": len(obs),
        "log_prob_error": log_prob_error,
        "value_error": value_error,
        "same_greedy": same,
    }
