"""The command line's shared pieces: a parser whose usage errors are one line (exit 2), and the
argparse types of agent specs, counts and rules options. Used by ``island-fortress`` and by the
trainers' and evaluation's own entry points."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from island_fortress_env.engine.rng import SeedError, seed_state
from island_fortress_env.env.records import RecordError, check_output_dir, check_output_file, printable
from island_fortress_env.players import AgentSpecError, check_agent_spec


class CommandLineParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose usage errors are one line on stderr (exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def require(self, extra: str, *modules: str) -> None:
        """Exit with one line naming the first of ``modules`` that cannot be imported and the
        extra that installs it (exit 2), before any work starts."""
        for name in modules:
            try:
                importlib.import_module(name)
            except ImportError:
                self.exit(2, missing_library(self.prog, name, extra))


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


def one_line(exc: BaseException) -> str:
    """The error as one line of printable text (control characters escaped)."""
    if isinstance(exc, OSError) and exc.filename is not None:
        text = f"{str(exc.filename)!r}: {exc.strerror or exc}"
    elif isinstance(exc, UnicodeDecodeError):
        text = f"a file given is not UTF-8 text ({exc.reason} at byte {exc.start})"
    else:
        text = " ".join(str(exc).split()) or type(exc).__name__
    return printable(text)


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
