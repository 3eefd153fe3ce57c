"""``island-fortress serve``: the local web app (``web``): play agents by clicking on the table,
watch them, replay and analyse game records, see a leaderboard. Needs the ``web`` extra."""

from __future__ import annotations

import argparse

from island_fortress_env.cli.arguments import PROG, UsageError, agent_spec, import_optional, positive_int
from island_fortress_env.players import AGENTS_HELP

WEB_LIBRARIES = ("starlette", "uvicorn")  # the web extra's: without them, one line saying so


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "A local web app: play agents by clicking on the table, watch them, replay and "
        "analyse game records, see a leaderboard. Bound to 127.0.0.1 unless --host says otherwise."
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=positive_int, default=8000, help="port (default 8000)")
    parser.add_argument("--no-browser", action="store_true", help="do not open the page in a browser")
    parser.add_argument(
        "--agents", nargs="+", default=["random", "heuristic"], type=agent_spec, metavar="AGENT",
        help=f"the agents offered for the seats: {AGENTS_HELP} "
        "(a checkpoint file or onnx:FILE also serves the analysis; default: random heuristic)",
    )  # fmt: skip
    parser.add_argument(
        "--games", default="games", metavar="DIR",
        help="game records are read from and saved to DIR, and evaluation results for the leaderboard "
        "(default games/)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    if args.port > 65535:
        raise UsageError(f"--port must be 1..65535, got {args.port}")
    serve = import_optional(f"{PROG} serve", "web", WEB_LIBRARIES, "island_fortress_env.web", "serve")
    serve(
        host=args.host,
        port=args.port,
        agents=args.agents,
        games_dir=args.games,
        open_browser=not args.no_browser,
    )
    return 0
