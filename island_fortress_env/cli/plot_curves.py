"""``island-fortress plot-curves RUN_DIR``: a run's learning curves from its TensorBoard event
files, as a PNG (``training/plot_curves.py``).

    island-fortress plot-curves runs/policy-2-4p --out docs/learning_curve_2-4p.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

from island_fortress_env.cli.arguments import UsageError
from island_fortress_env.training.plot_curves import plot, read_scalars


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Plot learning curves from TensorBoard event files to a PNG (for the README)."
    parser.add_argument("run_dir", help="a TensorBoard run directory, e.g. runs/default-3p_1")
    parser.add_argument("--out", default="docs/learning_curve.png")
    parser.add_argument("--print", action="store_true", help="also print the last value of every tag")


def run(args: argparse.Namespace) -> int:
    if not Path(args.run_dir).is_dir():
        raise UsageError(f"RUN_DIR {args.run_dir!r}: no such directory")
    if args.print:
        for tag, series in sorted(read_scalars(args.run_dir).items()):
            print(f"{tag:40s} step {series[-1][0]:>8d}  {series[-1][1]:.4f}  (n={len(series)})")
    print(plot(args.run_dir, args.out))
    return 0
