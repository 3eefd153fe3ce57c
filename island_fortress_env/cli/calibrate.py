"""``island-fortress calibrate``: the exploit runs' best-response learner on a small OpenSpiel game,
against a target whose exact best response is computed; the measure is told in
``research/calibrate.py``.

    island-fortress calibrate --game leduc_poker --target uniform --decisions 20000 100000 --seeds 3
    island-fortress calibrate --game kuhn_poker --target cfr:10 --json ppo.learning_rate=1e-3

Needs pyspiel (the ``openspiel`` extra) and torch (``train``): without one, one line naming it and
its extra (exit 2). A bad game, target, budget or override is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse

from island_fortress_env.cli.arguments import PROG, non_negative_int, positive_int, print_report, require
from island_fortress_env.research.calibrate_games import (
    DEFAULT_BUDGETS,
    DEFAULT_GAME,
    DEFAULT_SEEDS,
    DEFAULT_TARGET,
    TARGET_HELP,
    CalibrationError,
    parse_target,
)

NAME = f"{PROG} calibrate"


def target_text(text: str) -> str:
    """An argparse type: a target ``parse_target`` reads."""
    try:
        parse_target(text)
    except CalibrationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Train best responses with the exploit runs' learner (masked PPO, the same settings) on a "
        "small OpenSpiel game against a fixed target, value them exactly, and report how much of "
        "the target's exact exploitability they recover at each budget."
    )
    parser.epilog = (
        "Example: island-fortress calibrate --game leduc_poker --target uniform "
        "--decisions 20000 100000 --seeds 3"
    )
    parser.add_argument(
        "--game", default=DEFAULT_GAME, metavar="GAME",
        help="an OpenSpiel game string: two players, zero-sum, information-state tensors, small "
        "enough to solve (kuhn_poker, leduc_poker, goofspiel(num_cards=4,imp_info=True,"
        f"points_order=descending)); default {DEFAULT_GAME}",
    )  # fmt: skip
    parser.add_argument(
        "--target", type=target_text, default=DEFAULT_TARGET,
        help=f"the frozen policy to best-respond to: {TARGET_HELP}; default {DEFAULT_TARGET}",
    )  # fmt: skip
    parser.add_argument(
        "--decisions", type=positive_int, nargs="+", default=list(DEFAULT_BUDGETS), metavar="D",
        help="the budgets: each run learns from D decisions (default "
        f"{' '.join(str(b) for b in DEFAULT_BUDGETS)})",
    )  # fmt: skip
    parser.add_argument("--seed", type=non_negative_int, default=0, help="the first run's seed (default 0)")
    parser.add_argument(
        "--seeds", type=positive_int, default=DEFAULT_SEEDS,
        help=f"runs per budget, seeds SEED..SEED+K-1 (default {DEFAULT_SEEDS})",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the text")
    parser.add_argument(
        "overrides", nargs="*", metavar="section.key=value",
        help="trainer config overrides (before --decisions, or after another option)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    require(NAME, "openspiel", "pyspiel")
    require(NAME, "train", "torch")
    from island_fortress_env.research.calibrate import calibrate
    from island_fortress_env.research.calibrate_report import format_calibration
    from island_fortress_env.training.config import TrainConfigError

    return print_report(
        NAME,
        lambda: calibrate(
            args.game, args.target, args.decisions, args.seed, args.seeds, args.overrides
        ).to_json(),
        format_calibration,
        args.json,
        (CalibrationError, TrainConfigError),
    )
