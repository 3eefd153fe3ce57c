"""Game records: a finished game as a small JSON file that replays exactly.

The game is deterministic given the rules options and the seed, so a record is just those
plus the action ids in order, the agents' names and the final result::

    {"format": "island-fortress-game-record", "version": 2, "action_table": "3f2a...",
     "rules": {"num_players": 3}, "seed": 12, "agents": ["heuristic", "random", "random"],
     "actions": [7, 9, 5, ...], "scores": [41, 18, 22], "winners": [0]}

``seed`` is the seed given to ``env.reset(seed=...)`` of ``island_fortress_v0`` (an integer in
[0, 2**64)); ``rules`` the game's rules options (``num_players`` plus the variants that differ
from the standard game: only ``GameConfig`` fields, never an env option such as ``render_mode``);
``action_table`` a digest of the action table, so a record made with another action encoding is
refused instead of replayed wrongly.

A game played with a favor deck file (the rules option ``favor_deck``, a path) also records the
deck: ``"deck": {"sha256": ..., "content": {...}}``, the digest of its cards
(``engine.favors.deck_digest``) and, when it is at most ``MAX_EMBEDDED_DECK_BYTES`` as canonical
JSON (every real deck is), the deck itself. A replay reads the file at that path (with the deck
file limits) and refuses it unless it holds the same cards; where no file has that path, the
record's own copy is used. Either way the game is built from a private copy of the checked cards,
never from a file that could change in between.

Format versions: 2 (written) adds the optional ``deck``; 1 (read, never written) has no ``deck``,
and a record of it naming a deck file replays against whatever that file holds now.

    from island_fortress_env.env import records
    record = records.load("game.json")        # parsed, checked and replayed: RecordError if not
    final = records.replay(record)            # the final engine state
    for state, action in record.steps(): ...  # every decision: the state and the action taken
    records.save(record, "copy.json")         # atomic; never writes over an existing file

Reading is safe with any file: only a regular file is read (a named pipe, a device or a directory
is refused without waiting on it), a record is at most ``MAX_RECORD_BYTES``, its JSON is parsed
with bounded integers and nesting (``engine.files``, the parser deck files use too; ``parse_json``
here), and every field is checked (type, size, range) before the game is replayed; anything else
is one ``RecordError`` naming the file and the field. ``load`` and
``replay`` refuse a record that does not replay (an illegal action, a game that ends early or late,
other final scores) with a ``RecordError`` naming the step.

Writing never loses a record: ``save`` writes a temporary file in the target directory and links
it to its name only if that name is free (``os.link``, atomic), so a reader never sees half a
record and two writers never replace each other's; ``save_unique`` picks the next free name
(``NAME.json``, ``NAME-2.json``, ...). ``check_output_dir`` and ``check_output_file`` check a
path before any work starts. ``printable`` escapes text from a record (agent names, paths)
before it reaches a terminal, ``printable_lines`` a whole text but its line breaks.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from island_fortress_env.engine import DeckError, GameConfig, IllegalActionError, load_deck
from island_fortress_env.engine import files as _files
from island_fortress_env.engine.actions import ACTION_FAMILIES, NUM_ACTIONS
from island_fortress_env.engine.favors import FavorDeck, canonical_json, deck_content, deck_digest, parse_deck
from island_fortress_env.engine.files import FileRefused
from island_fortress_env.engine.files import printable as printable  # text from a file, for a terminal
from island_fortress_env.engine.files import printable_lines as printable_lines
from island_fortress_env.engine.rng import SeedError, seed_state
from island_fortress_env.engine.tables import MAX_PLAYERS, MIN_PLAYERS
from island_fortress_env.env.record_files import RecordError, checked_path, write_new
from island_fortress_env.env.record_files import check_output_dir as check_output_dir  # the writers' checks
from island_fortress_env.env.record_files import check_output_file as check_output_file
from island_fortress_env.env.record_files import temporary_path as temporary_path

if TYPE_CHECKING:
    from island_fortress_env.engine import State


def one_line(exc: BaseException) -> str:
    """An error as one line of printable text (control characters escaped): a command's message."""
    if isinstance(exc, OSError) and exc.filename is not None:
        text = f"{str(exc.filename)!r}: {exc.strerror or exc}"
    elif isinstance(exc, UnicodeDecodeError):
        text = f"a file given is not UTF-8 text ({exc.reason} at byte {exc.start})"
    else:
        text = " ".join(str(exc).split()) or type(exc).__name__
    return printable(text)


FORMAT = "island-fortress-game-record"
VERSION = 2  # the version written
VERSIONS = (1, 2)  # the versions read

MAX_RECORD_BYTES = 8 * 1024 * 1024  # a real record is a few KB
MAX_ACTIONS = 100_000  # a real game has a few hundred decisions
MAX_NAME_CHARS = 256  # an agent name
MAX_TEXT_CHARS = 4096  # a text rules option (a deck file's path)
MAX_INT_DIGITS = _files.MAX_INT_DIGITS  # 2**64 has 20 digits: no field of a record needs more
MAX_DEPTH = _files.MAX_DEPTH  # JSON nesting (a record with its deck needs 6 levels)
MAX_EMBEDDED_DECK_BYTES = 64 * 1024  # a deck larger than this as canonical JSON is recorded by digest only
INT64 = 2**63  # scores and integer rules options lie in [-2**63, 2**63)
RULES_OPTIONS = frozenset(f.name for f in dataclasses.fields(GameConfig))
FIELDS = ("format", "version", "action_table", "rules", "seed", "agents", "actions", "scores", "winners")
OPTIONAL_FIELDS = {1: (), 2: ("deck",)}  # by format version


def action_table_digest() -> str:
    """A short digest of the action table (every family's name, first id and size)."""
    table = json.dumps([(f.name, f.start, f.size) for f in ACTION_FAMILIES])
    return hashlib.sha256(table.encode()).hexdigest()[:16]


def initial_state(rules: dict[str, Any], seed: int) -> State:
    """The engine state that ``env.reset(seed=seed)`` starts from with these rules options."""
    from island_fortress_env.env.aec import raw_env  # the env owns how a reset seed becomes a game

    unknown = sorted(set(rules) - RULES_OPTIONS)
    if unknown:  # env options (render_mode, reward, ...) are not rules: never passed on
        raise RecordError(f"rules {unknown} are not rules options (those are {sorted(RULES_OPTIONS)})")
    env = raw_env(**rules)
    env.reset(seed=seed)
    assert env.game_state is not None
    return env.game_state


@dataclass(frozen=True)
class GameRecord:
    """One game: rules options, reset seed, action ids, agent names per seat, the result."""

    rules: dict[str, Any]
    seed: int
    actions: tuple[int, ...]
    agents: tuple[str, ...]
    scores: tuple[int, ...]
    winners: tuple[int, ...]
    action_table: str = field(default_factory=action_table_digest)
    source: str = field(default="game record", compare=False)  # for error messages: the file
    # The favor deck file's cards (rules option ``favor_deck``): their digest, and the deck itself
    # (``deck_content``) when small; None for a game of the shipped deck or an old record.
    deck_sha256: str | None = None
    deck_content: dict[str, Any] | None = None

    @classmethod
    def from_game(
        cls, rules: dict[str, Any], seed: int, actions: Sequence[int], agents: Sequence[str], final: State
    ) -> GameRecord:
        """The record of a finished game played from ``env.reset(seed=seed)``."""
        if not final.is_terminal():
            raise RecordError("a game record is written at the end of a game; this game is not over")
        digest, content = (
            _deck_stamp(final.game.deck) if rules.get("favor_deck") is not None else (None, None)
        )
        return cls(
            rules=dict(rules),
            seed=int(seed),
            actions=tuple(int(a) for a in actions),
            agents=tuple(agents),
            scores=tuple(final.score),
            winners=tuple(final.winners),
            deck_sha256=digest,
            deck_content=content,
        )

    @property
    def num_players(self) -> int:
        return int(self.rules.get("num_players", 3))

    def to_dict(self) -> dict[str, Any]:
        data = {
            "format": FORMAT,
            "version": VERSION,
            "action_table": self.action_table,
            "rules": dict(self.rules),
            "seed": self.seed,
            "agents": list(self.agents),
            "actions": list(self.actions),
            "scores": list(self.scores),
            "winners": list(self.winners),
        }
        if self.deck_sha256 is not None:
            deck: dict[str, Any] = {"sha256": self.deck_sha256}
            if self.deck_content is not None:
                deck["content"] = self.deck_content
            data["deck"] = deck
        return data

    @classmethod
    def from_dict(cls, data: Any, source: str = "game record") -> GameRecord:
        """Parse and check every field (type, size, range) without replaying; a ``RecordError``
        names the file and the bad field."""

        def fail(why: str) -> RecordError:
            return RecordError(f"{source}: {why}")

        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise fail(f'not an Island Fortress game record (no "format": "{FORMAT}")')
        version = data.get("version")
        if not (_is_int(version) and version in VERSIONS):
            raise fail(
                f"record format version {_shown(version)} is not supported (this reads {list(VERSIONS)})"
            )
        missing = sorted(set(FIELDS) - set(data))
        if missing:
            raise fail(f"missing field(s) {missing}")
        known = (*FIELDS, *OPTIONAL_FIELDS[version])
        extra = sorted(set(data) - set(known))
        if extra:
            raise fail(f"unknown field(s) {_shown(extra)}; a version {version} record has {list(known)}")
        table = data["action_table"]
        if table != action_table_digest():
            raise fail(
                f"made with another action table ({_shown(table)}, this version's is "
                f"{action_table_digest()!r}); its action ids mean other moves here"
            )

        def ints(name: str, low: int, high: int, most: int) -> tuple[int, ...]:
            value = data[name]
            if not isinstance(value, list) or not all(_is_int(v) for v in value):
                raise fail(f"{name!r} must be a list of integers")
            if len(value) > most:
                raise fail(f"{name!r} holds {len(value)} entries, more than {most}")
            bad = next((v for v in value if not low <= v < high), None)
            if bad is not None:
                raise fail(f"{name!r}: {_shown(bad)} is outside [{low}, {high})")
            return tuple(value)

        rules = _rules(data["rules"], fail)
        seed = data["seed"]
        if not _valid_seed(seed):
            raise fail(f"'seed' must be an integer in [0, 2**64) (the env's seed rule), not {_shown(seed)}")
        agents = data["agents"]
        if not isinstance(agents, list) or not all(isinstance(a, str) for a in agents):
            raise fail("'agents' must be a list of names")
        if len(agents) > MAX_PLAYERS:
            raise fail(f"'agents' names {len(agents)} players; a game has at most {MAX_PLAYERS}")
        long_name = next((a for a in agents if len(a) > MAX_NAME_CHARS), None)
        if long_name is not None:
            raise fail(f"'agents': a name of {len(long_name)} characters (at most {MAX_NAME_CHARS})")
        actions = ints("actions", 0, NUM_ACTIONS, MAX_ACTIONS)
        scores = ints("scores", -INT64, INT64, MAX_PLAYERS)
        winners = ints("winners", 0, MAX_PLAYERS, MAX_PLAYERS)
        if len(set(winners)) != len(winners):
            raise fail(f"'winners' names a seat twice: {list(winners)}")
        digest, content = (None, None)
        if "deck" in data:
            if rules.get("favor_deck") is None:
                raise fail("'deck' is the record of a favor deck file, but the rules name none")
            digest, content = _read_deck_stamp(data["deck"], fail)
        return cls(
            rules=rules,
            seed=seed,
            actions=actions,
            agents=tuple(agents),
            scores=scores,
            winners=winners,
            action_table=table,
            source=source,
            deck_sha256=digest,
            deck_content=content,
        )

    def initial_state(self) -> State:
        try:
            with self._checked_deck() as deck_file:
                rules = self.rules if deck_file is None else {**self.rules, "favor_deck": deck_file}
                state = initial_state(rules, self.seed)
        except RecordError:
            raise
        except DeckError as exc:  # names the deck file
            raise RecordError(f"{self.source}: {exc}") from None
        except (ValueError, TypeError) as exc:  # ConfigError, SeedError are ValueErrors
            raise RecordError(f"{self.source}: rules {self.rules!r}: {exc}") from None
        if len(self.agents) != state.n:
            raise RecordError(f"{self.source}: {len(self.agents)} agent names for {state.n} players")
        if len(self.scores) != state.n:
            raise RecordError(f"{self.source}: {len(self.scores)} scores for {state.n} players")
        return state

    @contextmanager
    def _checked_deck(self) -> Iterator[str | None]:
        """The deck file to build the game from: None (the rules' own ``favor_deck``, if any) for
        a record without a deck digest; otherwise a private copy of the deck the game was played
        with: the file at the recorded path, if there is one and it holds the same cards, or the
        record's own copy where no file has that path. Removed when the game is built."""
        if self.deck_sha256 is None:
            yield None
            return
        path = str(self.rules["favor_deck"])
        if self.deck_content is not None and not os.path.lexists(path):
            deck = parse_deck(self.deck_content, f"{self.source}: 'deck'")
        else:
            deck = load_deck(path)  # every deck file limit; a DeckError names the file
            found = deck_digest(deck)
            if found != self.deck_sha256:
                instead = (
                    "; the record holds its own copy of that deck, used where no file has that path"
                    if self.deck_content is not None
                    else ""
                )
                raise RecordError(
                    f"{self.source}: favor deck {path!r} is not the deck the game was played with "
                    f"(its cards' sha256 is {found[:16]}..., the record's "
                    f"{self.deck_sha256[:16]}...){instead}"
                )
        with tempfile.TemporaryDirectory(prefix="island-fortress-deck-") as folder:
            copy = Path(folder) / "deck.json"
            try:
                copy.write_bytes(canonical_json(deck_content(deck)))
            except OSError as exc:
                raise RecordError(
                    f"{self.source}: a copy of its favor deck cannot be written ({exc.strerror or exc})"
                ) from None
            yield str(copy)

    def steps(self) -> Iterator[tuple[State, int]]:
        """Replay: yield (state before the action, action) for every recorded action; the
        state is live (clone it to keep it). Raises ``RecordError`` naming a step that fails."""
        state = self.initial_state()
        total = len(self.actions)
        for step, action in enumerate(self.actions, start=1):
            if state.is_terminal():
                raise RecordError(
                    f"{self.source}: step {step} of {total}: the game is already over, "
                    f"yet {total - step + 1} more action(s) are recorded"
                )
            yield state, action
            try:
                state.apply_action(action)
            except IllegalActionError as exc:
                raise RecordError(f"{self.source}: step {step} of {total} does not replay: {exc}") from None
        if not state.is_terminal():
            raise RecordError(
                f"{self.source}: the {total} recorded actions end before the game is over "
                f"(round {state.round}, waiting on {state.decision_name()!r})"
            )
        if tuple(state.score) != self.scores or tuple(state.winners) != self.winners:
            raise RecordError(
                f"{self.source}: the replay ends with scores {list(state.score)} and winners "
                f"{list(state.winners)}, but the record says {list(self.scores)} and {list(self.winners)}"
            )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _valid_seed(value: Any) -> bool:
    """An ``env.reset`` seed by the env's (the engine's) rule; None, which means no seed, is
    not one a record holds."""
    if value is None:
        return False
    try:
        seed_state(value)
    except SeedError:
        return False
    return True


def _deck_stamp(deck: FavorDeck) -> tuple[str, dict[str, Any] | None]:
    """What a record keeps of a deck file: its cards' digest, and the deck when it is small."""
    content = deck_content(deck)
    return deck_digest(deck), content if len(canonical_json(content)) <= MAX_EMBEDDED_DECK_BYTES else None


def _read_deck_stamp(stamp: Any, fail: Any) -> tuple[str, dict[str, Any] | None]:
    """A record's ``deck`` field, checked: a digest, and a deck that has that digest if any."""
    if not isinstance(stamp, dict):
        raise fail("'deck' must be an object with 'sha256' (and 'content')")
    extra = sorted(set(stamp) - {"sha256", "content"})
    if extra:
        raise fail(f"'deck': unknown field(s) {_shown(extra)}; it has 'sha256' and 'content'")
    digest = stamp.get("sha256")
    if not (isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
        raise fail(f"'deck': 'sha256' must be 64 lower-case hex digits, not {_shown(digest)}")
    if "content" not in stamp:
        return digest, None
    try:
        deck = parse_deck(stamp["content"], "'deck': 'content'")
    except DeckError as exc:
        raise fail(str(exc)) from None
    if deck_digest(deck) != digest:
        raise fail("'deck': its content is not the deck of its sha256 digest")
    return digest, deck_content(deck)


def _shown(value: Any, limit: int = 60) -> str:
    """A value from a record for an error message: its repr (so control characters are
    escaped), cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _rules(rules: Any, fail: Any) -> dict[str, Any]:
    """The record's rules options: an object of ``GameConfig`` fields with JSON scalar values
    (``GameConfig`` then checks each value when the game is built)."""
    if not isinstance(rules, dict):
        raise fail("'rules' must be an object of rules options")
    unknown = sorted(set(rules) - RULES_OPTIONS)
    if unknown:
        raise fail(f"'rules': unknown rules option(s) {_shown(unknown)}; known: {sorted(RULES_OPTIONS)}")
    if not _is_int(rules.get("num_players")) or not MIN_PLAYERS <= rules["num_players"] <= MAX_PLAYERS:
        raise fail(f"'rules': num_players must be an integer {MIN_PLAYERS}-{MAX_PLAYERS}")
    for key, value in rules.items():
        if not (value is None or isinstance(value, (bool, int, str))):
            raise fail(f"'rules': {key} must be true/false, an integer, a text or null, not {_shown(value)}")
        if isinstance(value, int) and not -INT64 <= value < INT64:
            raise fail(f"'rules': {key}={_shown(value)} is out of range")
        if isinstance(value, str) and len(value) > MAX_TEXT_CHARS:
            raise fail(f"'rules': {key} is a text of {len(value)} characters (at most {MAX_TEXT_CHARS})")
    return dict(rules)


def replay(record: GameRecord) -> State:
    """Replay a record to its final state, checking every step and the result."""
    live = None
    for live, _action in record.steps():  # noqa: B007 (the live state, advanced past each action)
        pass
    assert live is not None  # steps() raises on a record without actions
    return live


def states(record: GameRecord) -> list[State]:
    """Every state of the game: ``states[0]`` the start, ``states[i]`` after ``i`` actions."""
    out: list[State] = []
    live = None
    for live, _action in record.steps():
        out.append(live.clone())
    assert live is not None
    out.append(live.clone())
    return out


def dumps(record: GameRecord) -> str:
    return json.dumps(record.to_dict(), separators=(",", ":"))


def parse_json(text: str, source: str = "game record") -> Any:
    """The bounded JSON parser of records and deck files (``engine.files.parse_json``: nesting,
    integer digits, no NaN or Infinity) for text of at most ``MAX_RECORD_BYTES`` characters; a
    ``RecordError`` naming ``source`` otherwise."""
    if len(text) > MAX_RECORD_BYTES:
        raise RecordError(f"{source}: larger than {_files.size_text(MAX_RECORD_BYTES)}; not a game record")
    try:
        return _files.parse_json(text)
    except FileRefused as exc:
        raise RecordError(f"{source}: {exc}") from None


def loads(text: str, source: str = "game record", check: bool = True) -> GameRecord:
    """Parse a record from JSON text; with ``check`` (default) replay it and refuse one that
    does not replay. Any problem is a ``RecordError`` naming ``source``."""
    record = GameRecord.from_dict(parse_json(text, source), source)
    if check:
        replay(record)
    return record


def load(path: str | Path, check: bool = True) -> GameRecord:
    """Read a record (a regular file of at most ``MAX_RECORD_BYTES``); with ``check`` (default)
    replay it and refuse one that does not replay."""
    source = f"game record {str(path)!r}"
    try:
        text = _files.read_text(path, MAX_RECORD_BYTES)
    except FileRefused as exc:
        raise RecordError(f"{source}: {exc}") from None
    return loads(text, source, check)


# --------------------------------------------------------------------------- writing


def save(record: GameRecord, path: str | Path) -> Path:
    """Write the record as JSON (a few KB) to ``path``, atomically, and only if no file has that
    name: a ``RecordError`` if one exists or the path cannot be written. Returns the path."""
    path = checked_path(path, "game record")
    try:
        write_new(path, (dumps(record) + "\n").encode("utf-8"))
    except FileExistsError:
        raise RecordError(
            f"game record {str(path)!r}: already exists; a record is never written over"
        ) from None
    except OSError as exc:
        raise RecordError(f"game record {str(path)!r}: cannot be written ({exc.strerror or exc})") from None
    return path


def save_unique(record: GameRecord, path: str | Path) -> Path:
    """Write the record as ``save`` does, to ``path`` or, if that name is taken, to the first
    free one of ``NAME-2.json``, ``NAME-3.json``, ...; returns the path written."""
    path = checked_path(path, "game record")
    for n in range(1, 10_000):
        candidate = path if n == 1 else path.with_name(f"{path.stem}-{n}{path.suffix}")
        try:
            write_new(candidate, (dumps(record) + "\n").encode("utf-8"))
        except FileExistsError:
            continue
        except OSError as exc:
            raise RecordError(
                f"game record {str(candidate)!r}: cannot be written ({exc.strerror or exc})"
            ) from None
        return candidate
    raise RecordError(f"game record {str(path)!r}: no free name beside it")
