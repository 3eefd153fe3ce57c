"""``island-fortress tournament AGENT AGENT [AGENT...]``: a ladder of many agents at once; what is
played and rated is told in ``research/tournament.py``.

    island-fortress tournament random heuristic checkpoints/policy-2-4p.zip --players 2 3 --games 12
    island-fortress tournament random heuristic mcts:50 --games 6 --out ladder.json --plot ladder.png
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from island_fortress_env.cli.arguments import PROG, UsageError, non_negative_int, positive_int, require
from island_fortress_env.engine.tables import MAX_PLAYERS, MIN_PLAYERS, PLAYER_COUNTS
from island_fortress_env.players import AGENTS_HELP, check_agent_spec
from island_fortress_env.players.seeds import run_seed
from island_fortress_env.research.tournament import format_ladder, plot_ladder, tournament


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Play every table of the agents given (seats rotated) and rank them on one ladder; "
        "from the 2-player tables, the head-to-head matrix and a Nash mixture of that meta-game."
    )
    parser.epilog = (
        f"Example: {PROG} tournament random heuristic checkpoints/policy-2-4p.zip --players 2 3 --games 12"
    )
    parser.add_argument(
        "agents", nargs="+", metavar="AGENT",
        help=AGENTS_HELP,
    )  # fmt: skip
    parser.add_argument(
        "--players", nargs="+", type=int, choices=PLAYER_COUNTS, default=[2], metavar="N",
        help=f"table sizes to play, from {MIN_PLAYERS} to {MAX_PLAYERS} (default: 2)",
    )  # fmt: skip
    parser.add_argument(
        "--games", type=positive_int, default=10,
        help="games per table (default 10; a multiple of the table size seats everyone equally)",
    )  # fmt: skip
    parser.add_argument(
        "--seed", type=non_negative_int, default=None,
        help="the seed every game's deal is drawn from (default 0; drawn at random, and printed, when a "
        "remote: bot plays)",
    )  # fmt: skip
    parser.add_argument(
        "--workers", type=positive_int, default=1,
        help="processes playing the tables at once (default 1; the same ladder for any number)",
    )  # fmt: skip
    parser.add_argument(
        "--out", type=Path, default=None,
        help="write the ladder as JSON to this file (also the agent mixture:FILE, the Nash mixture)",
    )  # fmt: skip
    parser.add_argument("--plot", type=Path, default=None, help="draw the ratings to this PNG file")
    parser.add_argument("--json", action="store_true", help="print the JSON instead of the table")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def _check_output(path: Path | None, flag: str) -> None:
    """Refuse an output file that cannot be written before any game is played."""
    if path is None:
        return
    if not str(path).strip():
        raise UsageError(f"{flag}: an empty path")
    if path.is_dir():
        raise UsageError(f"{flag} {str(path)!r}: is a directory, not a file")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"{flag} {str(path)!r}: no such directory {str(parent)!r}")


def run(args: argparse.Namespace) -> int:
    if len(args.agents) < MIN_PLAYERS:
        raise UsageError(f"give at least {MIN_PLAYERS} AGENTs, got {len(args.agents)}")
    _check_output(args.out, "--out")
    _check_output(args.plot, "--plot")
    sizes = sorted(set(args.players))
    if all(n > len(args.agents) for n in sizes):
        raise UsageError(
            f"--players {sizes}: every table size needs more than the {len(args.agents)} agents given"
        )
    for spec in args.agents:
        check_agent_spec(spec)  # an AgentSpecError is a user error: one line, exit 2
    # openskill.models too: the ratings' module, which an install of openskill may lack or break
    libraries = ["openskill", "openskill.models", "scipy"] + (["matplotlib"] if args.plot is not None else [])
    require(f"{PROG} tournament", "train", *libraries)
    seed, drawn = run_seed(args.seed, args.agents)
    result = tournament(
        args.agents, sizes, args.games, seed, progress=not args.no_progress, workers=args.workers
    )
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=1) + "\n", "utf-8")
    if args.plot is not None:
        plot_ladder(result, args.plot)
    print(json.dumps(result) if args.json else format_ladder(result))
    if drawn:
        print(
            f"seed {seed} (drawn, as a remote bot played; --seed {seed} replays the deals)", file=sys.stderr
        )
    if args.out is not None and "meta_nash" in result and not args.json:
        print(
            f"The Nash mixture plays as the agent mixture:{args.out}; a best response to it: "
            f"{PROG} exploit mixture:{args.out} --players 2"
        )
    return 0
