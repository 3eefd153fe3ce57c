"""``island-fortress``: demo | play | replay | serve | evaluate | tournament | train | bench | exploit | psro
| export.

Every user error (a bad option, a file that cannot be used, a game record that does not
replay) ends the command with one line on stderr and exit status 2, never a traceback; its text
has control characters escaped, whatever file or record it quotes. Output paths (``play
--save``, ``replay --video``, ``evaluate --save-games``) are checked when the arguments are read,
before any work starts.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from island_fortress_env.engine.tables import PLAYER_COUNTS
from island_fortress_env.players import AGENTS_HELP
from island_fortress_env.players.arguments import (
    CommandLineParser,
    agent_spec,
    missing_library,
    non_negative_int,
    one_line,
    output_path,
    positive_float,
    positive_int,
    record_file,
    rule_option,
    seed_value,
)
from island_fortress_env.tools.replay import check_video_path

video_file = output_path(check_video_path)  # replay --video: .mp4/.gif in a writable folder

PROG = "island-fortress"
# Subcommands whose modules own their full argument parsers (each is runnable on its own).
DELEGATED = {
    "train": "island_fortress_env.training.train",
    "evaluate": "island_fortress_env.training.evaluate",
    "bench": "island_fortress_env.tools.bench",
    "tournament": "island_fortress_env.tools.tournament",
    "exploit": "island_fortress_env.tools.exploit",
    "psro": "island_fortress_env.tools.psro",
    "export": "island_fortress_env.tools.export",  # a native checkpoint as ONNX, played without torch
}


# Packages of the [render] extra: without them play, replay --video and pictures cannot run.
OPTIONAL_PACKAGES = frozenset({"PIL", "imageio", "imageio_ffmpeg", "rich", "prompt_toolkit", "pygame"})


# --------------------------------------------------------------------------- subcommands


def _demo(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from island_fortress_env.tools.demo import run_demo

    if args.agents and len(args.agents) != args.players:
        parser.error(f"--agents needs one agent per seat ({args.players} players), got {len(args.agents)}")
    run_demo(players=args.players, seed=args.seed, agents=args.agents, verbose=args.verbose)
    return 0


def _play(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from island_fortress_env.tools.play import play_game

    players = args.players if args.players is not None else (len(args.agents) + 1 if args.agents else 3)
    agents = args.agents or ["heuristic"] * (players - 1)
    if len(agents) != players - 1:
        parser.error(
            f"--agents names the {players - 1} other players of a {players}-player game, got {len(agents)}"
        )
    if not 2 <= players <= 4:
        parser.error(f"give 1-3 --agents (a 2-4 player game), got {len(agents)}")
    if args.seat >= players:
        parser.error(f"--seat must be 0..{players - 1} in a {players}-player game, got {args.seat}")
    play_game(
        agents, seat=args.seat, seed=args.seed, window=args.window, save_path=args.save, rules=dict(args.rule)
    )
    return 0


def _replay(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from island_fortress_env.tools.replay import run_replay, write_video

    if args.video is None:
        run_replay(args.file)
        return 0
    from island_fortress_env.env.records import load

    frames = write_video(load(args.file), args.video, per=args.per, fps=args.fps, scale=args.scale)
    print(f"{args.video}: {frames} frames, one per {args.per}")
    return 0


def _web_import(parser: argparse.ArgumentParser, module: str, name: str) -> Any:
    """``module.name`` of the web layer; without the ``web`` extra, one line saying what to install
    (exit 2)."""
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError as exc:
        if exc.name not in ("starlette", "uvicorn"):
            raise
        parser.exit(2, missing_library(parser.prog, str(exc.name), "web"))


def _serve(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.port > 65535:
        parser.error(f"--port must be 1..65535, got {args.port}")
    serve = _web_import(parser, "island_fortress_env.web", "serve")
    serve(
        host=args.host,
        port=args.port,
        agents=args.agents,
        games_dir=args.games,
        open_browser=not args.no_browser,
    )
    return 0


def _bot_serve(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.port > 65535:
        parser.error(f"--port must be 0..65535, got {args.port}")
    if args.host not in ("127.0.0.1", "localhost", "::1") and not args.allow_remote:
        parser.error(
            f"--host {args.host} is not a loopback address: whoever reaches it could use the bot; "
            "add --allow-remote to serve it there"
        )
    bot_serve = _web_import(parser, "island_fortress_env.web.bots", "bot_serve")
    bot_serve(args.agent, host=args.host, port=args.port, allow_remote=args.allow_remote)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = CommandLineParser(
        prog=PROG,
        description="Island Fortress: demo, play, replay, train, evaluate, tournament, benchmark, export.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=CommandLineParser)

    demo = sub.add_parser("demo", help="play one game between baseline agents and show it")
    demo.add_argument("--players", type=int, default=3, choices=PLAYER_COUNTS)
    demo.add_argument("--seed", type=seed_value, default=7)
    demo.add_argument(
        "--agents", nargs="*", default=None, type=agent_spec,
        help=f"one agent per seat: {AGENTS_HELP} (default: heuristic)",
    )  # fmt: skip
    demo.add_argument("--verbose", action="store_true", help="print every decision, not only rounds")
    demo.set_defaults(func=_demo, parser=demo)

    play = sub.add_parser(
        "play",
        help="play a game yourself against agents in the terminal",
        description="Play one seat against agents; the game is saved as a game record at the end.",
    )
    play.add_argument("--players", type=int, default=None, choices=PLAYER_COUNTS, help="default 3")
    play.add_argument(
        "--agents", nargs="+", default=None, type=agent_spec, metavar="AGENT",
        help=f"the other players in seat order: {AGENTS_HELP} (default: heuristic)",
    )  # fmt: skip
    play.add_argument("--seat", type=non_negative_int, default=0, help="your seat (0 plays first; default 0)")
    play.add_argument("--seed", type=seed_value, default=None, help="env.reset seed (default: random)")
    play.add_argument("--window", action="store_true", help="also show the table as a picture in a window")
    play.add_argument(
        "--save", default=None, type=record_file, metavar="FILE",
        help="game record path, a new file (default: a dated name here)",
    )  # fmt: skip
    play.add_argument(
        "--rule", action="append", default=[], type=rule_option, metavar="KEY=VALUE",
        help="rules option / variant, e.g. --rule no_replace=true (repeatable)",
    )  # fmt: skip
    play.set_defaults(func=_play, parser=play)

    replay = sub.add_parser(
        "replay",
        help="step through a game record, or write it as a video",
        description="Step through a game record (right arrow/n/Enter next, left arrow/b back, a number and "
        "Enter to jump, e end, q quit); "
        "prints the whole game when stdin is not a terminal. With --video, write it as .mp4 or .gif.",
    )
    replay.add_argument("file", metavar="FILE", help="a game record (.json)")
    replay.add_argument(
        "--video", default=None, type=video_file, metavar="OUT", help="write out.mp4 or out.gif instead"
    )
    replay.add_argument(
        "--per", default="decision", choices=("decision", "turn"),
        help="one frame per decision (default), or per turn: each time the player to move changes",
    )  # fmt: skip
    replay.add_argument("--fps", type=positive_float, default=None, help="frames per second (default 4 / 2)")
    replay.add_argument(
        "--scale", type=positive_float, default=None, help="picture scale (default 1 for mp4, 0.5 for gif)"
    )
    replay.set_defaults(func=_replay, parser=replay)

    serve = sub.add_parser(
        "serve",
        help="play, watch, replay and analyse games in the browser",
        description="A local web app: play agents by clicking on the table, watch them, replay and "
        "analyse game records, see a leaderboard. Bound to 127.0.0.1 unless --host says otherwise.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=positive_int, default=8000, help="port (default 8000)")
    serve.add_argument("--no-browser", action="store_true", help="do not open the page in a browser")
    serve.add_argument(
        "--agents", nargs="+", default=["random", "heuristic"], type=agent_spec, metavar="AGENT",
        help=f"the agents offered for the seats: {AGENTS_HELP} "
        "(a checkpoint file or onnx:FILE also serves the analysis; default: random heuristic)",
    )  # fmt: skip
    serve.add_argument(
        "--games", default="games", metavar="DIR",
        help="game records are read from and saved to DIR, and evaluation results for the leaderboard "
        "(default games/)",
    )  # fmt: skip
    serve.set_defaults(func=_serve, parser=serve)

    bots = sub.add_parser(
        "bot-serve",
        help="serve an agent as a bot over HTTP, to play anywhere as remote:URL",
        description="Serve AGENT over the bot protocol (docs/BOT-PROTOCOL.md): GET / says the protocol, "
        "POST / answers a decision. Bound to 127.0.0.1 unless --host (and --allow-remote) say otherwise.",
    )
    bots.add_argument("agent", type=agent_spec, metavar="AGENT", help=f"the agent served: {AGENTS_HELP}")
    bots.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    bots.add_argument(
        "--port", type=non_negative_int, default=8765, help="port (default 8765; 0: a free one)"
    )
    bots.add_argument(
        "--allow-remote", action="store_true",
        help="allow a --host that is not a loopback address (the bot has no password: whoever "
        "reaches it may use it)",
    )  # fmt: skip
    bots.set_defaults(func=_bot_serve, parser=bots)

    for name in DELEGATED:
        sub.add_parser(name, help=f"see `{PROG} {name} --help`", add_help=False)
    return parser


# --------------------------------------------------------------------------- user errors


def user_errors() -> tuple[type[BaseException], ...]:
    """The project's error classes that describe a user's mistake, not a bug."""
    from island_fortress_env.agents.checkpoint import CheckpointError
    from island_fortress_env.engine import ConfigError, DeckError, SeedError
    from island_fortress_env.env.records import RecordError
    from island_fortress_env.players import AgentSpecError
    from island_fortress_env.training.config import TrainConfigError

    return (
        ConfigError,
        DeckError,
        SeedError,
        CheckpointError,
        TrainConfigError,
        RecordError,
        AgentSpecError,
        OSError,
        UnicodeDecodeError,
    )


def _check_train_config(argv: Sequence[str]) -> None:
    """``train --config FILE``: refuse a missing file or one that is not text before training
    starts (one line, like every other user error)."""
    from island_fortress_env.training.config import TrainConfigError

    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--config", default=None)
    known, _ = pre.parse_known_args(argv)
    if known.config is None:
        return
    path = Path(known.config)
    if not path.is_file():
        why = "is a directory, not a file" if path.is_dir() else "no such file"
        raise TrainConfigError(f"config {known.config!r}: {why}")
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise TrainConfigError(f"config {known.config!r}: not a text (YAML) file") from None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    command = argv[0] if argv else ""
    prog = f"{PROG} {command}" if command in DELEGATED or command in ("demo", "play", "replay") else PROG
    try:
        if command in DELEGATED:
            if command == "train":
                _check_train_config(argv[1:])
            return int(importlib.import_module(DELEGATED[command]).main(argv[1:]) or 0)
        args = parser.parse_args(argv)
        return int(args.func(args, args.parser) or 0)
    except user_errors() as exc:
        parser.exit(2, f"{prog}: error: {one_line(exc)}\n")
    except ImportError as exc:
        if exc.name not in OPTIONAL_PACKAGES:
            raise
        parser.exit(2, missing_library(prog, str(exc.name), "render"))
    except KeyboardInterrupt:
        parser.exit(130, f"\n{prog}: interrupted\n")


if __name__ == "__main__":
    sys.exit(main())
