"""``island-fortress evaluate AGENT AGENT [AGENT...]``: play agents against each other (seats
rotated) and report win rates; what is played and reported is told in ``training/evaluate.py``.

    island-fortress evaluate heuristic random random --games 60 --seed 0
    island-fortress evaluate checkpoints/final.zip heuristic --games 100 --json
    island-fortress evaluate heuristic random --games 4 --save-games games/  # + a record per game
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from island_fortress_env.cli.arguments import (
    PROG,
    UsageError,
    non_negative_int,
    one_line,
    positive_int,
    record_dir,
    rule_option,
)
from island_fortress_env.engine.tables import MAX_PLAYERS, MIN_PLAYERS
from island_fortress_env.players import AGENTS_HELP, AgentSpecError, check_agent_spec
from island_fortress_env.players.seeds import run_seed
from island_fortress_env.training.evaluate import evaluate, format_table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Play agents against each other (seats rotated) and report win rates."
    parser.epilog = (
        f"AGENT: {AGENTS_HELP}. Example: {PROG} evaluate heuristic random random --games 60 --seed 0"
    )
    parser.add_argument(
        "agents",
        nargs="+",
        metavar="AGENT",
        help=f"one per seat (2-4): {AGENTS_HELP}",
    )
    parser.add_argument(
        "--games", type=positive_int, default=60,
        help="games to play, at least 1 (default 60; use a multiple of the player count)",
    )  # fmt: skip
    parser.add_argument(
        "--seed", type=non_negative_int, default=None,
        help="game g's deal is SEED's evaluation stream at g (default 0; drawn at random, and printed, "
        "when a remote: bot is seated, so that it cannot know the deals)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.add_argument(
        "--save-games", default=None, type=record_dir, metavar="DIR",
        help="write every game to DIR as a game record, RUN-game-NNNNN.json (replay with: "
        "island-fortress replay FILE); files already there are kept",
    )  # fmt: skip
    parser.add_argument(
        "--rule", action="append", default=[], type=rule_option, metavar="KEY=VALUE",
        help="rules option / variant for the environment, e.g. --rule no_replace=true (repeatable)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    k = len(args.agents)
    if not MIN_PLAYERS <= k <= MAX_PLAYERS:
        raise UsageError(f"give {MIN_PLAYERS}-{MAX_PLAYERS} AGENTs (one per seat), got {k}")
    for spec in args.agents:
        try:
            check_agent_spec(spec)
        except AgentSpecError as exc:
            raise UsageError(str(exc)) from None
    if args.games % k:
        print(
            f"warning: --games {args.games} is not a multiple of {k} players: "
            "the agents will not sit in every seat equally often",
            file=sys.stderr,
        )
    quiet = args.no_progress or (args.json and not (sys.stderr.isatty() and sys.stdout.isatty()))
    seed, drawn = run_seed(args.seed, args.agents)
    try:
        result = evaluate(
            args.agents,
            args.games,
            seed,
            progress=not quiet,
            env_options=dict(args.rule),
            save_games=args.save_games,
        )
    except (ValueError, ImportError, OSError) as exc:
        print(f"{PROG} evaluate: error: {one_line(exc)}", file=sys.stderr)
        return 2
    if drawn:
        print(
            f"seed {seed} (drawn, as a remote bot was seated; --seed {seed} replays the deals)",
            file=sys.stderr,
        )
    if args.save_games is not None:
        saved = result["saved_games"]
        where = saved[0] if len(saved) == 1 else f"{saved[0]} ... {Path(saved[-1]).name}"
        print(f"{len(saved)} game record{'s' * (len(saved) > 1)} saved: {where}", file=sys.stderr)
    if args.json:
        print(json.dumps(result))
    else:
        print(format_table(result))
    return 0
