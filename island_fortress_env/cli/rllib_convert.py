"""``island-fortress rllib-convert CHECKPOINT_DIR OUT.zip``: an RLlib checkpoint directory as a
native checkpoint, for ``evaluate`` and every other command (``adapters/rllib.py``; the ``rllib``
extra).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from island_fortress_env.agents.checkpoint import CheckpointError
from island_fortress_env.cli.arguments import PROG, import_optional

PROG_HERE = f"{PROG} rllib-convert"


def _adapter(name: str) -> Any:
    return import_optional(PROG_HERE, "rllib", ("ray",), "island_fortress_env.adapters.rllib", name)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Convert an RLlib checkpoint directory to a native checkpoint (.zip) for evaluate."
    shared = _adapter("SHARED_POLICY")
    parser.add_argument("checkpoint_dir", help="directory written by Algorithm.save_to_path")
    parser.add_argument("out", help="native checkpoint to write (.zip)")
    parser.add_argument("--module-id", default=shared, help=f"module to export ({shared!r})")


def run(args: argparse.Namespace) -> int:
    export_native_checkpoint = _adapter("export_native_checkpoint")
    try:
        path = export_native_checkpoint(args.checkpoint_dir, args.out, args.module_id)
    except CheckpointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(path)
    return 0
