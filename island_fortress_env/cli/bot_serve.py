"""``island-fortress bot-serve AGENT``: an agent served over the bot protocol
(docs/BOT-PROTOCOL.md), to play anywhere as ``remote:URL``. Needs the ``web`` extra."""

from __future__ import annotations

import argparse

from island_fortress_env.cli.arguments import PROG, UsageError, agent_spec, import_optional, non_negative_int
from island_fortress_env.cli.serve import WEB_LIBRARIES
from island_fortress_env.players import AGENTS_HELP

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Serve AGENT over the bot protocol (docs/BOT-PROTOCOL.md): GET / says the protocol, "
        "POST / answers a decision. Bound to 127.0.0.1 unless --host (and --allow-remote) say otherwise."
    )
    parser.add_argument("agent", type=agent_spec, metavar="AGENT", help=f"the agent served: {AGENTS_HELP}")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=non_negative_int, default=8765, help="port (default 8765; 0: a free one)"
    )
    parser.add_argument(
        "--allow-remote", action="store_true",
        help="allow a --host that is not a loopback address (the bot has no password: whoever "
        "reaches it may use it)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    if args.port > 65535:
        raise UsageError(f"--port must be 0..65535, got {args.port}")
    if args.host not in LOOPBACK and not args.allow_remote:
        raise UsageError(
            f"--host {args.host} is not a loopback address: whoever reaches it could use the bot; "
            "add --allow-remote to serve it there"
        )
    prog = f"{PROG} bot-serve"
    bot_serve = import_optional(prog, "web", WEB_LIBRARIES, "island_fortress_env.web.bots", "bot_serve")
    bot_serve(args.agent, host=args.host, port=args.port, allow_remote=args.allow_remote)
    return 0
