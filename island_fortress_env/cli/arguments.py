"""The command line's shared pieces: a parser whose usage errors are one line (exit 2), the
argparse types of agent specs, counts and rules options, and the one-line errors every command
gives. Used by every command of ``island-fortress``."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from island_fortress_env.engine.rng import SeedError, seed_state
from island_fortress_env.env.records import RecordError, check_output_dir, check_output_file, one_line
from island_fortress_env.players import AgentSpecError, check_agent_spec

PROG = "island-fortress"


class CommandLineParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose usage errors are one line on stderr (exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class UsageError(Exception):
    """A command's arguments do not fit together: its parser's one line (exit 2), with the hint
    to see its ``--help``."""


def fail(line: str) -> NoReturn:
    """End a command with ``line`` (a whole line: ``PROG: error: ...``) on stderr, exit status 2."""
    sys.stderr.write(line if line.endswith("\n") else line + "\n")
    raise SystemExit(2)


def require(prog: str, extra: str, *modules: str) -> None:
    """Exit with one line naming the first of ``modules`` that cannot be imported and the extra
    that installs it (exit 2), before any work starts."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            fail(missing_library(prog, name, extra))


def import_optional(prog: str, extra: str, libraries: tuple[str, ...], module: str, name: str) -> Any:
    """``module.name``; when one of ``libraries`` (those of ``extra``) is missing, one line
    saying what to install (exit 2)."""
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError as exc:
        if exc.name not in libraries:
            raise
        fail(missing_library(prog, str(exc.name), extra))


def missing_library(prog: str, name: str, extra: str) -> str:
    """The one line (exit 2) for an optional library that is not installed: which one, and the
    extra that installs it."""
    return f"{prog}: error: {name} is missing: pip install 'island-fortress-env[{extra}]'\n"


def _int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``minimum``, else one clear sentence."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got {value}")
        return value

    return parse


non_negative_int = _int_at_least(0)
positive_int = _int_at_least(1)


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def agent_spec(text: str) -> str:
    """``random``, ``heuristic``, ``mcts[:N]`` or a checkpoint file whose metadata fits this env."""
    try:
        check_agent_spec(text)
    except AgentSpecError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def rule_option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` (VALUE read as YAML: ``true``, ``3``, ``wall_block``); not ``num_players``,
    which the number of agents fixes."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    if key == "num_players":
        raise argparse.ArgumentTypeError("num_players is set by the number of agents, not by --rule")
    import yaml

    try:
        return key, yaml.safe_load(value)
    except yaml.YAMLError:
        raise argparse.ArgumentTypeError(f"--rule {text!r}: the value is not valid YAML") from None


def seed_value(text: str) -> int:
    """An ``env.reset`` seed: an integer in [0, 2**64)."""
    value = non_negative_int(text)
    try:
        return seed_state(value)
    except SeedError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def output_path(check: Callable[[str], Any]) -> Callable[[str], str]:
    """An argparse type: a path that ``check`` (an output path check) accepts."""

    def parse(text: str) -> str:
        try:
            check(text)
        except (RecordError, OSError) as exc:
            raise argparse.ArgumentTypeError(one_line(exc)) from None
        return text

    return parse


# play --save: a new file in a writable folder
record_file = output_path(lambda text: check_output_file(text, "game record"))
# evaluate --save-games: a writable (or creatable) folder
record_dir = output_path(lambda text: check_output_dir(text, "game records directory"))


def print_report(
    prog: str,
    work: Callable[[], dict[str, Any]],
    text: Callable[[dict[str, Any]], str],
    as_json: bool,
    errors: tuple[type[BaseException], ...],
) -> int:
    """Run a command's ``work`` and print the report it returns: one JSON object when ``as_json``
    (stdout then carries the JSON only: what the work prints goes to stderr), else ``text(report)``.
    One of ``errors`` raised by the work is one line on stderr and exit status 2."""
    redirect = contextlib.redirect_stdout(sys.stderr) if as_json else contextlib.nullcontext()
    try:
        with redirect:
            report = work()
    except errors as exc:
        print(f"{prog}: error: {one_line(exc)}", file=sys.stderr)
        return 2
    print(json.dumps(report) if as_json else text(report))
    return 0
