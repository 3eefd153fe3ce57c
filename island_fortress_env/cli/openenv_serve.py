"""``island-fortress openenv-serve``: the game served as an OpenEnv environment on uvicorn
(``adapters/openenv.py``; the ``openenv`` extra).

    island-fortress openenv-serve --host 127.0.0.1 --port 8000
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from island_fortress_env.cli.arguments import PROG, UsageError, import_optional
from island_fortress_env.engine import ConfigError

PROG_HERE = f"{PROG} openenv-serve"
LIBRARIES = ("openenv", "fastapi", "pydantic", "uvicorn")  # the openenv extra's


def _adapter(name: str) -> Any:
    return import_optional(PROG_HERE, "openenv", LIBRARIES, "island_fortress_env.adapters.openenv", name)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Serve Island Fortress as an OpenEnv environment."
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--players", type=int, default=3, help="a reset's default table size (2-4)")
    parser.add_argument("--backend", choices=("core", "python"), default=None)
    parser.add_argument("--max-sessions", type=int, default=_adapter("DEFAULT_MAX_SESSIONS"))


def run(args: argparse.Namespace) -> int:
    if args.max_sessions < 1:
        raise UsageError("--max-sessions must be at least 1")
    make_app = _adapter("make_app")
    try:
        app = make_app(args.players, args.backend, max_sessions=args.max_sessions)
    except (ValueError, ConfigError) as error:
        print(f"{PROG_HERE}: error: {error}", file=sys.stderr)
        return 2
    import uvicorn

    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
