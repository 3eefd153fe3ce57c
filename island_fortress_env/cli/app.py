"""``island-fortress``: every command, one module each, registered in ``COMMANDS``.

A command is a module of this package with ``add_arguments(parser)`` (its options, and its
``description``/``epilog`` when it has them) and ``run(args) -> int`` (its exit status). Only the
command named is imported, so that one command never loads what another needs.

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
from typing import Any

from island_fortress_env.cli.arguments import PROG, CommandLineParser, UsageError, missing_library, one_line

# name -> (module of this package, the line `island-fortress --help` shows). Adding a command is
# its module and one line here.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("demo", "play one game between baseline agents and show it"),
    "play": ("play", "play a game yourself against agents in the terminal"),
    "replay": ("replay", "step through a game record, or write it as a video"),
    "serve": ("serve", "play, watch, replay and analyse games in the browser"),
    "bot-serve": ("bot_serve", "serve an agent as a bot over HTTP, to play anywhere as remote:URL"),
    "train": ("train", "self-play training: native multi-agent PPO, SB3 MaskablePPO or RLlib"),
    "evaluate": ("evaluate", "play agents against each other (seats rotated) and report win rates"),
    "bench": ("bench", "benchmark both backends against PettingZoo and OpenSpiel reference games"),
    "bench-training": ("bench_training", "the trainers' throughput, or a learning race between them"),
    "bench-web": ("bench_web", "how quickly the web app answers a move, through HTTP or clicks"),
    "tournament": ("tournament", "rank agents on one ladder over every table size given"),
    "exploit": ("exploit", "train best responses to an agent: its approximate exploitability"),
    "calibrate": ("calibrate", "the best-response learner on a small game, against the exact best response"),
    "psro": ("psro", "rounds of PSRO: best responses, then the policy trained on against them"),
    "export": ("export", "a native checkpoint's network as an ONNX model that plays without torch"),
    "rllib-convert": ("rllib_convert", "an RLlib checkpoint directory as a native checkpoint (.zip)"),
    "openenv-serve": ("openenv_serve", "serve the game as an OpenEnv environment on uvicorn"),
    "plot-curves": ("plot_curves", "a run's learning curves from its TensorBoard files, as a PNG"),
    "snapshot": ("snapshot", "save a picture of a seeded game between heuristic players"),
    "doc-tables": ("doc_tables", "print docs/SPACES.md's tables of the actions and the observation"),
}

# Packages of the [render] extra: without them play, replay --video and pictures cannot run.
OPTIONAL_PACKAGES = frozenset({"PIL", "imageio", "imageio_ffmpeg", "rich", "prompt_toolkit", "pygame"})


def build_parser() -> CommandLineParser:
    """The parser of ``island-fortress`` itself: the list of commands."""
    parser = CommandLineParser(
        prog=PROG,
        description="Island Fortress: demo, play, replay, train, evaluate, tournament, benchmark, export.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=CommandLineParser)
    for name, (_, line) in COMMANDS.items():
        sub.add_parser(name, help=line, add_help=False)
    return parser


def command_parser(name: str) -> tuple[CommandLineParser, Any]:
    """The parser of command ``name`` and its module."""
    module = importlib.import_module(f"{__package__}.{COMMANDS[name][0]}")
    parser = CommandLineParser(prog=f"{PROG} {name}")
    module.add_arguments(parser)
    return parser, module


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


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    top = build_parser()
    if not argv or argv[0] not in COMMANDS:
        top.parse_args(argv)  # --help, or no or an unknown command: the parser's own answer
        return 2
    name = argv[0]
    prog = f"{PROG} {name}"
    parser: argparse.ArgumentParser = top
    try:
        parser, module = command_parser(name)
        args = parser.parse_intermixed_args(argv[1:])  # positionals may follow the options
        return int(module.run(args) or 0)
    except UsageError as exc:
        parser.error(str(exc))
    except user_errors() as exc:
        parser.exit(2, f"{prog}: error: {one_line(exc)}\n")
    except ImportError as exc:
        if exc.name not in OPTIONAL_PACKAGES:
            raise
        parser.exit(2, missing_library(prog, str(exc.name), "render"))
    except KeyboardInterrupt:
        parser.exit(130, f"\n{prog}: interrupted\n")
