"""``island-fortress bench-web``: how quickly the web app answers a move, played through HTTP
(and with ``--browser``, by clicking in headless Chromium); what is timed is told in
``web/latency.py``.

    island-fortress bench-web --games 6 --players 3 --opponent heuristic
"""

from __future__ import annotations

import argparse

from island_fortress_env.cli.arguments import PROG, fail, import_optional
from island_fortress_env.cli.serve import WEB_LIBRARIES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "How quickly the web app answers a move (docs/WEB.md's targets)."
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--players", type=int, default=3, choices=(2, 3, 4))
    parser.add_argument("--opponent", default="heuristic", help="the bots' agent spec (default heuristic)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--browser", type=int, default=0, metavar="GAMES",
        help="also play GAMES games by clicking in headless Chromium and time each click drawn",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    prog = f"{PROG} bench-web"
    measure = import_optional(prog, "web", WEB_LIBRARIES, "island_fortress_env.web.latency", "measure")
    try:
        measure(args.games, args.players, args.opponent, args.seed, args.browser)
    except ImportError as exc:
        if not str(exc.name).startswith("selenium"):
            raise
        fail("--browser needs Selenium (pip install 'island-fortress-env[browser]')")
    return 0
