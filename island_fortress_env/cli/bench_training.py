"""``island-fortress bench-training``: the trainers' throughput, or the learning race; what is
measured is told in ``training/bench_training.py``.

    island-fortress bench-training --seconds 150
    island-fortress bench-training --race 4 --games 96
"""

from __future__ import annotations

import argparse
import json
import sys

from island_fortress_env.cli.arguments import PROG, UsageError
from island_fortress_env.training.bench_training import (
    GPU,
    THROUGHPUT,
    OtherCheckoutError,
    native_config,
    other_checkout,
    race,
    throughput,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Training throughput and a learning race: the native trainer's default against its previous "
        "default and against the SB3 path, on the same game."
    )
    parser.add_argument("--seconds", type=float, default=150.0, help="training wall time per trainer")
    parser.add_argument(
        "--race", type=float, default=0.0, metavar="MINUTES",
        help="run the learning race instead: MINUTES of training per trainer, then an evaluation",
    )  # fmt: skip
    parser.add_argument("--games", type=int, default=96, help="race: evaluation games per table size")
    parser.add_argument(
        "--curves",
        metavar="PNG",
        help="race: also evaluate every --curve-every decisions and plot the curves here",
    )
    parser.add_argument(
        "--curve-every",
        type=int,
        default=250_000,
        metavar="DECISIONS",
        help="race: decisions between curve points",
    )
    parser.add_argument("--repeat", type=int, default=1, help="measure each trainer this many times")
    parser.add_argument(
        "--trainers", nargs="+", choices=list(THROUGHPUT), default=list(THROUGHPUT),
        help="throughput: the trainers to measure (default all four)",
    )  # fmt: skip
    parser.add_argument("--sb3", nargs="*", default=[], metavar="KEY=VALUE", help="SB3 config overrides")
    parser.add_argument(
        "--native", nargs="*", default=[], metavar="KEY=VALUE", help="native config overrides (both)"
    )
    parser.add_argument(
        "--gpu", action="store_true",
        help="throughput: the default alone, on a CUDA GPU with the settings of GPU (--native adds to them)",
    )  # fmt: skip
    parser.add_argument(
        "--against", metavar="DIR",
        help="throughput: also another version's default trainer, alone and beside 1 busy process: an "
        "installed checkout of it (git worktree add DIR COMMIT && make -C DIR install)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    if args.gpu:
        args.trainers, args.native = ["default"], [*GPU, *args.native]
    if args.seconds <= 0 or args.repeat < 1 or args.race < 0 or args.games < 1 or args.curve_every < 1:
        raise UsageError("--seconds must be > 0, --race >= 0, --repeat, --games and --curve-every >= 1")
    if args.native and (args.race or "default" in args.trainers or "previous" in args.trainers):
        from island_fortress_env.training.config import TrainConfigError
        from island_fortress_env.training.ppo import check_device

        try:  # a bad override or a device that is not there: one line before any run
            check_device(native_config(args.seconds, "/nonexistent", args.native).train.device)
        except TrainConfigError as err:
            print(f"{PROG} bench-training: error: {err}", file=sys.stderr)
            return 2
    if args.against is not None:
        try:  # not a checkout, or not installed: one line before any run
            other_checkout(args.against)
        except OtherCheckoutError as err:
            raise UsageError(str(err)) from None
    if args.race:
        out = race(args.race, args.games, args.repeat, args.native, args.curves, args.curve_every, args.json)
    else:
        out = throughput(
            args.trainers, args.seconds, args.repeat, args.sb3, args.native, args.json, args.against
        )
    if args.json:
        print(json.dumps(out))
    return 0
