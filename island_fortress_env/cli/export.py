"""``island-fortress export CHECKPOINT OUT.onnx``: a native checkpoint's network as an ONNX model
that plays without torch (``onnx:OUT.onnx`` in every command; ``agents.onnx_agent``).

Inputs ``observation`` float32[batch, 1317] and ``action_mask`` bool[batch, 380]; outputs
``log_probs`` float32[batch, 380] (the mask applied in the graph: an illegal action has
probability 0) and ``value`` float32[batch]; ``batch`` is dynamic. Before OUT is written (replaced
if it exists, never half written), the model passes ``onnx.checker.check_model``, the player's own
checks, and onnxruntime is compared with torch on ``--positions`` positions of real games.

Needs torch and the ``onnx`` extra: ``pip install -e ".[train,onnx]"``. A bad checkpoint, an SB3
one, or an OUT that cannot be written is one line and exit status 2.

    island-fortress export checkpoints/policy-2-4p.zip policy.onnx
    island-fortress evaluate onnx:policy.onnx heuristic --games 20
"""

from __future__ import annotations

import argparse
import sys

from island_fortress_env.cli.arguments import non_negative_int, one_line
from island_fortress_env.env.records import RecordError, check_output_file

PROG = "island-fortress export"


def onnx_file(text: str) -> str:
    """An argparse type: a ``.onnx`` file name in a folder that can be written (it may exist)."""
    if not text.lower().endswith(".onnx"):
        raise argparse.ArgumentTypeError(f"OUT {text!r}: name the model file NAME.onnx")
    try:
        check_output_file(text, "OUT", overwrite=True)
    except (RecordError, OSError) as exc:
        raise argparse.ArgumentTypeError(one_line(exc)) from None
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Export a native checkpoint's network as an ONNX model (masked log-probabilities "
        "and value, a dynamic batch axis) that plays without torch as the agent onnx:OUT.onnx."
    )
    parser.add_argument("checkpoint", metavar="CHECKPOINT", help="a native checkpoint (.zip)")
    parser.add_argument("out", metavar="OUT.onnx", type=onnx_file, help="the model file to write")
    parser.add_argument(
        "--positions", type=non_negative_int, default=512,
        help="positions of real games onnxruntime is compared with torch on (default 512; 0: none)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from island_fortress_env.agents.checkpoint import CheckpointError

    try:
        from island_fortress_env.agents.onnx_export import export_onnx
        from island_fortress_env.players.positions import sample_positions

        report = export_onnx(args.checkpoint, args.out, positions=sample_positions(args.positions))
    except ImportError as exc:
        if exc.name != "torch":
            raise
        print(f"{PROG}: error: export needs torch: pip install torch==2.13.0", file=sys.stderr)
        return 2
    except (CheckpointError, OSError) as exc:
        print(f"{PROG}: error: {one_line(exc)}", file=sys.stderr)
        return 2
    print(report.text())
    return 0
