"""``island-fortress psro START``: rounds of best responses and of training against them (PSRO);
the rounds are told in ``research/psro.py``.

    island-fortress psro checkpoints/policy-2-4p.zip --rounds 3 --players 2 3 \\
        --exploit-minutes 15 --train-minutes 55 tables.two=2.0 league.random=0.1
"""

from __future__ import annotations

import argparse
from pathlib import Path

from island_fortress_env.cli.arguments import (
    UsageError,
    non_negative_int,
    one_line,
    positive_float,
    positive_int,
    print_report,
)
from island_fortress_env.engine.tables import PLAYER_COUNTS
from island_fortress_env.research.exploit import ExploitError
from island_fortress_env.research.psro import (
    ANSWER_NASH,
    ANSWER_POLICY,
    ANSWERS,
    DEFAULT_CONFIG,
    DEFAULT_MINUTES,
    DEFAULT_PAIRING_GAMES,
    PsroError,
    Settings,
    check,
    format_report,
    psro,
)
from island_fortress_env.training.config import TrainConfigError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Rounds of PSRO from checkpoint START: best responses to the current policy "
        "(island-fortress exploit), then the policy trained on against every policy and best "
        "response so far (league.members); ends with best responses to the last policy."
    )
    parser.epilog = (
        "Example: island-fortress psro checkpoints/policy-2-4p.zip --rounds 3 --players 2 3 "
        "--exploit-minutes 15 --train-minutes 55 tables.two=2.0"
    )
    parser.add_argument("start", metavar="START", help="the checkpoint of the first policy")
    parser.add_argument("--rounds", type=positive_int, default=1, help="policy runs (default 1)")
    parser.add_argument(
        "--players", type=int, nargs="+", default=[2], choices=PLAYER_COUNTS,
        help="table sizes of the best responses (default 2)",
    )  # fmt: skip
    parser.add_argument(
        "--answer", choices=ANSWERS, default=ANSWER_POLICY,
        help="what each round's best response answers: the current policy, which is then trained on "
        "against the population (policy, the default), or the Nash mixture of the population's "
        "2-player meta-game, with no policy runs (nash: PSRO proper)",
    )  # fmt: skip
    parser.add_argument(
        "--pairing-games", type=positive_int, default=DEFAULT_PAIRING_GAMES,
        help=f"--answer nash: games of each pairing of the meta-game (default {DEFAULT_PAIRING_GAMES})",
    )  # fmt: skip
    parser.add_argument(
        "--workers", type=positive_int, default=1,
        help="--answer nash: processes playing the meta-game's pairings at once (default 1)",
    )  # fmt: skip
    parser.add_argument("--config", default=None, help=f"the policy's runs (default {DEFAULT_CONFIG})")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument(
        "--exploit-minutes", type=positive_float, default=None,
        help=f"each best response's budget (default {DEFAULT_MINUTES:g} minutes)",
    )  # fmt: skip
    budget.add_argument("--exploit-decisions", type=positive_int, default=None, help="or decisions")
    train = parser.add_mutually_exclusive_group()
    train.add_argument("--train-minutes", type=positive_float, default=None,
                       help="each policy run's budget (default: the config's)")  # fmt: skip
    train.add_argument("--train-decisions", type=positive_int, default=None, help="or decisions")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="seed (default 0)")
    parser.add_argument(
        "--games", type=positive_int, default=None, help="each best response's evaluation games"
    )
    parser.add_argument(
        "--exploit-set", action="append", default=[], metavar="section.key=value",
        help="an override of the best responses' trainer (repeatable)",
    )  # fmt: skip
    parser.add_argument("--name", default="psro", help="run name: checkpoints/NAME/psro.json (default psro)")
    parser.add_argument("--out", default=".", metavar="DIR", help="write DIR/runs/ and DIR/checkpoints/")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument(
        "overrides", nargs="*", metavar="section.key=value", help="the policy runs' overrides"
    )


def run(args: argparse.Namespace) -> int:
    from island_fortress_env.agents.checkpoint import CheckpointError

    settings = Settings(
        args.start, args.rounds, list(args.players), args.config or DEFAULT_CONFIG, args.exploit_minutes,
        args.exploit_decisions, args.train_minutes, args.train_decisions, args.seed, args.games,
        list(args.overrides), list(args.exploit_set), args.answer, args.pairing_games,
    )  # fmt: skip
    try:
        if args.answer == ANSWER_NASH and args.config is not None:
            raise PsroError("--answer nash trains no policy between rounds: drop --config")
        check(settings, args.name, Path(args.out))
    except (PsroError, ExploitError, TrainConfigError, CheckpointError) as exc:
        raise UsageError(one_line(exc)) from None
    return print_report(
        "island-fortress psro",
        lambda: psro(settings, args.name, args.out, args.workers),
        format_report,
        args.json,
        (PsroError, ExploitError, TrainConfigError, CheckpointError, OSError),
    )
