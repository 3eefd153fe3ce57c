"""Saved OpenSpiel states of Island Fortress: the record a state is saved as, and a reader of
OpenSpiel's serialized text that never unpickles it.

**The record.** A state is saved as what makes it from its game: the seed of its first state and
its steps, each an action id or a redeal (``["redeal", seat, seed]``: ``engine.visibility.
redeal_unseen``), plus the game's configuration. Played again it is the same state, generator,
hidden cards and event log included, on either backend. It is JSON, one line::

    {"island_fortress_state": 1, "config": {...}, "seed": 8120, "steps": [17, 40, ["redeal", 0, 5], 141]}

read by the bounded parser (``engine.files.parse_json``) and checked field by field
(``parse_record``): at most ``MAX_RECORD_CHARS`` characters and ``MAX_STEPS`` steps, action ids in
the table, seats 0-3, seeds in [0, 2**64), the option names of ``GameConfig``. Whether the steps
are legal is the replay's question (``adapters.openspiel``).

**OpenSpiel's text.** ``pyspiel.serialize_game_and_state`` writes a ``[Game]`` section (the game
string) and a ``[State]`` section: ``history=`` (``player:action`` pairs), ``move_number=`` and
``__dict__=``, the base64 of a pickle of the Python state's attributes. The adapter's one attribute
pickles as a call of ``island_fortress_env.adapters.openspiel._saved_deal`` on the record.
``read_serialized`` takes that text apart without unpickling anything: the pickle's opcodes are
read with ``pickletools.genops`` (which reads, never runs) and only the exact shape the adapter
writes is accepted; any other opcode, global or value is refused. The game string is parsed here
too, before pyspiel sees any of it (``parse_game_string``: pyspiel's own parser recurses once per
nesting level): at most ``MAX_GAME_STRING_CHARS`` characters, this game's name and its known
parameters, flat (no nested game), each at most once and each value a bool, an integer of the
option's range or one of the option's known strings (a ``favor_deck`` only where the caller names
that deck file); the game is then built from the parsed parameters. ``read_state`` reads the
``[State]`` section alone (``game.deserialize_state``'s text). A bad text is one
``SavedStateError`` (a ``ValueError``) saying what is wrong.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import io
import json
import pickletools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from island_fortress_env.core.game import BACKENDS
from island_fortress_env.engine import NUM_ACTIONS, tables
from island_fortress_env.engine.config import INCENTIVES, ConfigError, GameConfig, option_names
from island_fortress_env.engine.files import FileRefused, parse_json

RECORD_KEY = "island_fortress_state"
RECORD_VERSION = 1
MAX_STEPS = 8000  # four times the longest game OpenSpiel is told of (2,000 decisions at 4 players)
MAX_RECORD_CHARS = 256 * 1024  # a record of MAX_STEPS redeals is about 250 KB
MAX_SERIALIZED_CHARS = 2 * MAX_RECORD_CHARS  # OpenSpiel's text: the record in base64, the history
RESTORE_MODULE = "island_fortress_env.adapters.openspiel"  # where the pickled call points
RESTORE_NAME = "_saved_deal"
_SEED_LIMIT = 2**64
_HISTORY = re.compile(r"(?:\d{1,3}:\d{1,3}(?:,\d{1,3}:\d{1,3})*)?")

SHORT_NAME = "python_island_fortress"
DEFAULT_PLAYERS = 3
# The game's pyspiel parameters and their defaults: the players, every option of GameConfig ("" for
# None: pyspiel parameters have no None), the seed of the deal seeds and the backend.
GAME_PARAMETERS: dict[str, Any] = {
    "players": DEFAULT_PLAYERS,
    **{
        f.name: "" if f.default is None else f.default
        for f in dataclasses.fields(GameConfig)
        if f.name != "num_players"
    },
    "rng_seed": 0,
    "backend": "",
}
# The game string pyspiel writes is about 250 characters; a favor deck's path adds its length.
MAX_GAME_STRING_CHARS = 8192
MAX_PARAMETER_INT = 2**31 - 1  # pyspiel's integer parameters are C++ ints
_KNOWN_STRINGS = {"backend": ("", *BACKENDS), "first_round_incentive": ("", *INCENTIVES)}
_INT = re.compile(r"\d{1,10}")
_BOOLS = {"True": True, "true": True, "False": False, "false": False}


class SavedStateError(ValueError):
    """A saved state that cannot be read or does not make a state of the game."""


Step = int | tuple[int, int]  # an action id, or (seat, seed) of a redeal


@dataclass(frozen=True)
class Record:
    """A parsed record: the game's configuration (as ``GameConfig.to_dict``), the first state's
    seed and the steps from it."""

    config: dict[str, Any]
    seed: int
    steps: tuple[Step, ...]


def record_text(config: dict[str, Any], seed: int, steps: Iterable[Step]) -> str:
    """The record of a state (one line of JSON)."""
    written = [s if isinstance(s, int) else ["redeal", s[0], s[1]] for s in steps]
    record = {RECORD_KEY: RECORD_VERSION, "config": config, "seed": seed, "steps": written}
    return json.dumps(record, separators=(",", ":"))


def _integer(value: Any, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value < high:
        raise SavedStateError(f"{what} must be an integer in [{low}, {high}), not {value!r}")
    return value


def parse_record(text: Any) -> Record:
    """The record in ``text``, checked (see the module doc); else ``SavedStateError``."""
    if not isinstance(text, str):
        raise SavedStateError(f"a saved state's record is text, not {type(text).__name__}")
    if len(text) > MAX_RECORD_CHARS:
        raise SavedStateError(f"the record is longer than {MAX_RECORD_CHARS} characters")
    try:
        data = parse_json(text)
    except FileRefused as error:
        raise SavedStateError(f"the record is not readable JSON: {error}") from None
    keys = {RECORD_KEY, "config", "seed", "steps"}
    if not isinstance(data, dict) or set(data) != keys:
        raise SavedStateError(f"the record must be an object with exactly the keys {sorted(keys)}")
    if data[RECORD_KEY] != RECORD_VERSION or isinstance(data[RECORD_KEY], bool):
        raise SavedStateError(f"unknown record version {data[RECORD_KEY]!r} (this reader: {RECORD_VERSION})")
    config = data["config"]
    if not isinstance(config, dict) or set(config) != set(option_names()):
        raise SavedStateError(f"the record's config must name exactly the game's options {option_names()}")
    for name, value in config.items():
        if value is not None and not isinstance(value, (bool, int, str)):
            raise SavedStateError(f"the record's config option {name!r} is {type(value).__name__}")
    seed = _integer(data["seed"], 0, _SEED_LIMIT, "the seed")
    raw = data["steps"]
    if not isinstance(raw, list) or len(raw) > MAX_STEPS:
        raise SavedStateError(f"the steps must be a list of at most {MAX_STEPS}")
    steps: list[Step] = []
    for i, step in enumerate(raw):
        if isinstance(step, list) and len(step) == 3 and step[0] == "redeal":
            seat = _integer(step[1], 0, tables.MAX_PLAYERS, f"step {i}: the redeal's seat")
            steps.append((seat, _integer(step[2], 0, _SEED_LIMIT, f"step {i}: the redeal's seed")))
        elif isinstance(step, list):
            raise SavedStateError(f'step {i} must be an action id or ["redeal", seat, seed], not {step!r}')
        else:
            steps.append(_integer(step, 0, NUM_ACTIONS, f"step {i}"))
    return Record(config, seed, tuple(steps))


def game_config(params: dict[str, Any]) -> GameConfig:
    """The engine configuration named by the pyspiel parameters (raises ``ConfigError``)."""
    options = {k: v for k, v in params.items() if k not in ("players", "rng_seed", "backend")}
    options["first_round_incentive"] = options.get("first_round_incentive") or None
    options["favor_deck"] = options.get("favor_deck") or None
    return GameConfig.from_dict({"num_players": params.get("players", DEFAULT_PLAYERS), **options})


def _shown(text: str) -> str:
    """``text`` quoted, shortened, every character that is not printable escaped (``repr``)."""
    return repr(text if len(text) <= 40 else text[:37] + "...")


def parse_game_string(text: Any, favor_decks: Iterable[str] = ()) -> dict[str, Any]:
    """The parameters of the game string ``text`` (``name(key=value,...)``, as pyspiel writes
    it), every one of ``GAME_PARAMETERS`` (the defaults for those it leaves out), checked without
    recursion: at most ``MAX_GAME_STRING_CHARS`` characters, this game's name, known parameters,
    flat, each once, each value of its option's type and range. A ``favor_deck`` other than ""
    must be one of ``favor_decks`` (a text names no file of this machine unless the caller does).
    Anything else is one ``SavedStateError``."""
    if not isinstance(text, str):
        raise SavedStateError(f"a game string is text, not {type(text).__name__}")
    if len(text) > MAX_GAME_STRING_CHARS:
        raise SavedStateError(f"the game string is longer than {MAX_GAME_STRING_CHARS} characters")
    name, paren, rest = text.partition("(")
    if name != SHORT_NAME:
        raise SavedStateError(f"the text saves a state of {_shown(name)}, not of {SHORT_NAME!r}")
    if paren and not rest.endswith(")"):
        raise SavedStateError(f"the game string must be {SHORT_NAME}(parameter=value,...)")
    inner = rest[:-1]
    if "(" in inner or ")" in inner:
        raise SavedStateError("the game string's parameters must be flat (parameter=value), not nested")
    params = dict(GAME_PARAMETERS)
    seen: set[str] = set()
    for item in inner.split(",") if inner else ():
        key, equals, value = item.partition("=")
        if not equals or "=" in value:
            raise SavedStateError(f"the game string's parameter {_shown(item)} is not parameter=value")
        if key not in GAME_PARAMETERS:
            raise SavedStateError(
                f"the game string names an unknown parameter {_shown(key)}; known: {sorted(GAME_PARAMETERS)}"
            )
        if key in seen:
            raise SavedStateError(f"the game string names the parameter {key!r} twice")
        seen.add(key)
        params[key] = _parameter(key, value, tuple(favor_decks))
    try:
        game_config(params)
    except ConfigError as error:
        raise SavedStateError(f"the game string: {error}") from None
    return params


def _parameter(key: str, value: str, favor_decks: tuple[str, ...]) -> Any:
    """The value of parameter ``key`` written ``value``, checked against its default's type."""
    default = GAME_PARAMETERS[key]
    if isinstance(default, bool):
        if value not in _BOOLS:
            raise SavedStateError(f"the game string's {key} must be True or False, not {_shown(value)}")
        return _BOOLS[value]
    if isinstance(default, int):
        low, high = (tables.MIN_PLAYERS, tables.MAX_PLAYERS) if key == "players" else (0, MAX_PARAMETER_INT)
        if not _INT.fullmatch(value) or not low <= int(value) <= high:
            raise SavedStateError(
                f"the game string's {key} must be an integer in [{low}, {high}], not {_shown(value)}"
            )
        return int(value)
    known = _KNOWN_STRINGS.get(key, ("", *favor_decks))
    if value not in known:
        if key == "favor_deck":
            raise SavedStateError(
                f"the game string names the favor deck file {_shown(value)}, which the caller "
                "did not name among the deck files a text may use"
            )
        raise SavedStateError(f"the game string's {key} must be one of {list(known)}, not {_shown(value)}")
    return value


@dataclass(frozen=True)
class SavedState:
    """The ``[State]`` section, taken apart (``read_state``)."""

    history: tuple[tuple[int, int], ...]  # (player, action) pairs, as OpenSpiel wrote them
    move_number: int
    record: Record


@dataclass(frozen=True)
class Serialized:
    """OpenSpiel's serialized game and state, taken apart (``read_serialized``)."""

    game_string: str
    parameters: dict[str, Any]  # the game string's, parsed (``parse_game_string``)
    state: SavedState


def read_serialized(text: Any, favor_decks: Iterable[str] = ()) -> Serialized:
    """``pyspiel.serialize_game_and_state``'s text of a state of this game, taken apart and
    checked without unpickling (see the module doc); else ``SavedStateError``."""
    if not isinstance(text, str):
        raise SavedStateError(f"a serialized state is text, not {type(text).__name__}")
    if len(text) > MAX_SERIALIZED_CHARS:
        raise SavedStateError(f"the serialized state is longer than {MAX_SERIALIZED_CHARS} characters")
    sections = _sections(text)
    game_lines = sections["[Game]"]
    if len(game_lines) != 1 or not game_lines[0]:
        raise SavedStateError("the [Game] section must be one game string")
    parameters = parse_game_string(game_lines[0], favor_decks)
    return Serialized(game_lines[0], parameters, _state(sections["[State]"]))


def read_state(text: Any) -> SavedState:
    """The text of a state alone (``state.serialize()``, the ``[State]`` section that
    ``game.deserialize_state`` takes), taken apart and checked without unpickling."""
    if not isinstance(text, str):
        raise SavedStateError(f"a serialized state is text, not {type(text).__name__}")
    if len(text) > MAX_SERIALIZED_CHARS:
        raise SavedStateError(f"the serialized state is longer than {MAX_SERIALIZED_CHARS} characters")
    return _state([line for line in text.split("\n") if line])


def _state(state_lines: list[str]) -> SavedState:
    if len(state_lines) != 3:
        raise SavedStateError("the [State] section must be three lines: history=, move_number=, __dict__=")
    history_text = _field(state_lines[0], "history=")
    if not _HISTORY.fullmatch(history_text):
        raise SavedStateError("history= must be player:action pairs separated by commas")
    history = tuple(
        (int(p), int(a)) for p, a in (pair.split(":") for pair in history_text.split(",") if pair)
    )
    move_text = _field(state_lines[1], "move_number=")
    if not move_text.isdigit() or len(move_text) > 6:
        raise SavedStateError("move_number= must be a number")
    try:
        pickled = base64.b64decode(_field(state_lines[2], "__dict__="), validate=True)
    except (binascii.Error, ValueError):
        raise SavedStateError("__dict__= is not base64") from None
    return SavedState(history, int(move_text), parse_record(_record_in_pickle(pickled)))


def _sections(text: str) -> dict[str, list[str]]:
    """The lines of each section ([Meta], [Game], [State]) of OpenSpiel's text."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.split("\n"):
        if line in ("[Meta]", "[Game]", "[State]", "[GameRNGState]"):
            if line in sections:
                raise SavedStateError(f"the section {line} appears twice")
            current = sections[line] = []
        elif current is not None:
            if line:
                current.append(line)
        elif line and not line.startswith("#"):
            raise SavedStateError("text before the first section")
    if "[GameRNGState]" in sections:
        raise SavedStateError("a [GameRNGState] section: this game's generators are in its states")
    if sections.get("[Meta]") != ["Version: 1"]:
        raise SavedStateError("not OpenSpiel's serialized game and state (its [Meta] section, Version: 1)")
    for name in ("[Game]", "[State]"):
        if name not in sections:
            raise SavedStateError(f"no {name} section")
    return sections


def _field(line: str, tag: str) -> str:
    if not line.startswith(tag):
        raise SavedStateError(f"expected a line starting with {tag}")
    return line[len(tag) :]


_STRINGS = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"}
_IGNORED = {"PROTO", "FRAME", "MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT"}
_NOT_OURS = "the pickled attributes are not the game's one record"


def _record_in_pickle(data: bytes) -> str:
    """The record text in the pickled attributes ``{"_deal": _saved_deal(record)}``: the opcodes
    are read, never run, and only that shape is accepted."""
    stack: list[Any] = []
    try:
        for opcode, arg, _pos in pickletools.genops(io.BytesIO(data)):
            name = opcode.name
            if name in _IGNORED:
                continue
            if name == "STOP":
                break
            stack.append(_pickle_step(name, arg, stack))
    except SavedStateError:
        raise
    except (ValueError, IndexError, TypeError, AttributeError, UnicodeDecodeError):
        raise SavedStateError("the pickled attributes are not a pickle this game writes") from None
    if len(stack) != 1 or not isinstance(stack[0], dict) or set(stack[0]) != {"_deal"}:
        raise SavedStateError(_NOT_OURS)
    return stack[0]["_deal"].text


def _pickle_step(name: str, arg: Any, stack: list[Any]) -> Any:
    """What opcode ``name`` (with ``arg``) leaves on the stack, taking its operands from it; only
    the opcodes of ``{"_deal": _saved_deal(record)}`` are known."""
    if name == "EMPTY_DICT":
        return {}
    if name in _STRINGS:
        return arg
    if name in ("STACK_GLOBAL", "GLOBAL"):
        where = (stack.pop(-2), stack.pop()) if name == "STACK_GLOBAL" else tuple(str(arg).split(" ", 1))
        if where != (RESTORE_MODULE, RESTORE_NAME):
            raise SavedStateError(f"the pickled attributes name {'.'.join(map(str, where))}, not the record")
        return _Restore
    if name == "TUPLE1":
        return (stack.pop(),)
    if name == "REDUCE":
        args, function = stack.pop(), stack.pop()
        if function is not _Restore or len(args) != 1 or not isinstance(args[0], str):
            raise SavedStateError(_NOT_OURS)
        return _Restore(args[0])
    if name == "SETITEM":
        value, key, target = stack.pop(), stack.pop(), stack.pop()
        if target != {} or key != "_deal" or not isinstance(value, _Restore):
            raise SavedStateError(_NOT_OURS)
        return {key: value}
    raise SavedStateError(f"the pickled attributes hold a {name} opcode")


@dataclass(frozen=True)
class _Restore:
    """The call ``_saved_deal(text)`` as read from a pickle (never made)."""

    text: str
