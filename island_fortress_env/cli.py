"""``island-fortress``: demo | train | evaluate | bench."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

# Subcommands whose modules own their full argument parsers (each is runnable on its own).
DELEGATED = {"train": "training.train", "evaluate": "training.evaluate", "bench": "island_fortress_env.bench"}


def _demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    run_demo(players=args.players, seed=args.seed, agents=args.agents, verbose=args.verbose)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="island-fortress", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="play one game between baseline agents and show it")
    demo.add_argument("--players", type=int, default=3, choices=(2, 3, 4))
    demo.add_argument("--seed", type=int, default=7)
    demo.add_argument(
        "--agents", nargs="*", default=None,
        help="one agent per seat: random, heuristic or a checkpoint path (default: heuristic)",
    )  # fmt: skip
    demo.add_argument("--verbose", action="store_true", help="print every decision, not only rounds")
    demo.set_defaults(func=_demo)

    for name in DELEGATED:
        sub.add_parser(name, help=f"see `island-fortress {name} --help`", add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if argv and argv[0] in DELEGATED:
        import importlib

        return int(importlib.import_module(DELEGATED[argv[0]]).main(argv[1:]) or 0)
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
