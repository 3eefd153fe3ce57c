"""The games directory: game records listed, opened for replay, saved and uploaded.

Records are read and written with ``env.records`` (``load``/``save``/``states``). A record is
named by its file name alone (letters, digits, ``.``, ``_``, ``-``, ending in ``.json``) and
always resolved inside the directory, so no request reaches a file elsewhere. An opened record
is replayed once and kept (a few at a time) with every state, the public event log in words
and what was chosen at each step.

Any file may be in the directory: the listing reads each with the bounded parser
(``web.jsontext``) and leaves out a file that is not a record, with a note for one that claims to
be a record (a ``"format"``) or is not JSON within the bounds; a bad file never breaks the
listing, and opening one is a 400.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from island_fortress_env.env.records import GameRecord, RecordError, load, printable, save, states
from island_fortress_env.views import narrate
from island_fortress_env.web.errors import BadRequest, NotFound, TooLarge, shown
from island_fortress_env.web.jsontext import FileRefused, parse, read
from island_fortress_env.web.words import prison_lines, prisons_of, seat_names

if TYPE_CHECKING:
    from island_fortress_env.engine import State

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,150}\.json")
MAX_RECORD_BYTES = 1 << 20  # a record is a few KB; an upload beyond 1 MiB is refused
OPEN_RECORDS = 6  # replayed records kept in memory
LISTED = 2000  # files read for the listing (newest first); the rest are counted in a note

# A file's summary for the listing, or why it is left out (None: a JSON file of another kind).
Header = tuple[dict[str, Any] | None, str | None]


@dataclass(frozen=True)
class Replay:
    """A record replayed: ``states[i]`` is the position after ``i`` actions."""

    name: str
    record: GameRecord
    states: tuple[State, ...]
    names: tuple[str, ...]
    lines: tuple[tuple[narrate.Line, ...], ...]  # lines[i]: the events of action i - 1 (lines[0]: the deal)
    moves: tuple[str, ...]  # moves[i]: action i in full words
    public: tuple[str, ...]  # moves[i] as the other seats learnt it

    @property
    def total(self) -> int:
        return len(self.record.actions)


def replay_record(name: str, record: GameRecord) -> Replay:
    """Replay ``record`` (checked by ``states``) and put every step into words, the seats named
    as on the play page (``words.seat_names``: "you" for the person, an agent by its label)."""
    all_states = states(record)
    names = seat_names(record.agents)
    narrator = narrate.Narrator(names, all_states[0].game.deck.cards)
    final_log = all_states[-1].log
    lines = []
    seen = 0
    before = None
    for state in all_states:
        upto = len(state.log)
        new = final_log[seen:upto]
        said = narrator.lines(new)
        if before is not None:
            said.extend(prison_lines(prisons_of(before), prisons_of(state), new))
        lines.append(tuple(said))
        seen, before = upto, state
    moves = tuple(narrate.action_words(s, a) for s, a in zip(all_states, record.actions, strict=False))
    public = tuple(narrate.public_move_text(s, a) for s, a in zip(all_states, record.actions, strict=False))
    return Replay(name, record, tuple(all_states), names, tuple(lines), moves, public)


class RecordStore:
    """Game records in one directory (created if missing)."""

    def __init__(self, root: str | Path) -> None:
        root = Path(root)
        if root.exists() and not root.is_dir():
            raise RecordError(f"games directory {str(root)!r}: exists and is not a directory")
        root.mkdir(parents=True, exist_ok=True)
        self.root = root.resolve()
        self._open: OrderedDict[tuple[str, float, int], Replay] = OrderedDict()
        self._headers: dict[str, tuple[float, int, Header]] = {}
        self._lock = threading.Lock()

    def path(self, name: Any) -> Path:
        """The file of record ``name``: a plain file name inside the directory, or a 400."""
        if not isinstance(name, str) or not NAME.fullmatch(name) or ".." in name:
            raise BadRequest(
                f"bad record name {shown(name)}: a file name in the games directory "
                "(letters, digits, '.', '_', '-', ending in .json), no folders"
            )
        path = (self.root / name).resolve()
        if path.parent != self.root:  # pragma: no cover - the pattern admits no separator
            raise BadRequest(f"record {shown(name)} is outside the games directory")
        return path

    def open(self, name: Any) -> Replay:
        """Record ``name`` replayed (cached while the file is unchanged)."""
        path = self.path(name)
        if not path.is_file():
            raise NotFound(f"no record {shown(name)} in the games directory")
        stat = path.stat()
        key = (path.name, stat.st_mtime, stat.st_size)
        with self._lock:
            found = self._open.get(key)
            if found is not None:
                self._open.move_to_end(key)
                return found
        try:
            record = load(path, check=False)
            replay = replay_record(path.name, record)
        except RecordError as exc:
            raise BadRequest(str(exc)) from None
        except (ValueError, TypeError) as exc:  # rules options that no game accepts
            raise BadRequest(f"record {path.name!r}: {printable(exc)}") from None
        with self._lock:
            self._open[key] = replay
            while len(self._open) > OPEN_RECORDS:
                self._open.popitem(last=False)
        return replay

    def header(self, path: Path) -> Header:
        """A record file's summary without replaying it, or why it is left out of the listing
        (see the module doc)."""
        stat = path.stat()
        cached = self._headers.get(path.name)
        if cached is not None and cached[:2] == (stat.st_mtime, stat.st_size):
            return cached[2]
        found: Header
        try:
            data = read(path, MAX_RECORD_BYTES)
            if not isinstance(data, dict) or "format" not in data:
                found = None, None  # another kind of JSON file (an evaluation result)
            else:
                record = GameRecord.from_dict(data, path.name)
                found = (
                    {
                        "name": path.name,
                        "players": record.num_players,
                        "agents": list(seat_names(record.agents)),
                        "scores": list(record.scores),
                        "winners": list(record.winners),
                        "decisions": len(record.actions),
                        "modified": stat.st_mtime,
                    },
                    None,
                )
        except FileRefused as exc:
            found = None, f"{path.name} {exc}"
        except RecordError as exc:
            found = None, str(exc)
        with self._lock:
            self._headers[path.name] = (stat.st_mtime, stat.st_size, found)
        return found

    def list(self) -> dict[str, Any]:
        """Every game record in the directory, newest first, and the files left out with why
        (``{"records": [...], "skipped": [{"file", "reason"}]}``; JSON files of other kinds are
        left out without a note)."""
        paths = []
        for path in self.root.glob("*.json"):
            try:
                if NAME.fullmatch(path.name) and path.is_file():
                    paths.append((-path.stat().st_mtime, path.name, path))
            except OSError:  # removed while listed
                continue
        paths.sort()
        records = []
        skipped = []
        for _, _, path in paths[:LISTED]:
            try:
                summary, reason = self.header(path)
            except OSError:  # removed while listed
                continue
            if summary is not None:
                records.append(summary)
            elif reason is not None:
                skipped.append({"file": path.name, "reason": reason})
        if len(paths) > LISTED:
            skipped.append({"file": "", "reason": f"{len(paths) - LISTED} older files not read"})
        return {"records": records, "skipped": skipped}

    def save(self, record: GameRecord, stem: str) -> str:
        """Write ``record`` as ``stem.json`` (``env.records.save``); returns the file name."""
        name = f"{stem}.json"
        save(record, self.path(name))
        return name

    def upload(self, data: bytes) -> str:
        """A record sent by the browser: checked (it must replay to its result), then saved under
        a name made from its content, so the same record uploaded twice is one file."""
        if len(data) > MAX_RECORD_BYTES:
            raise TooLarge(f"the record is {len(data)} bytes; at most {MAX_RECORD_BYTES} are accepted")
        try:
            raw = parse(data, MAX_RECORD_BYTES)
        except FileRefused as exc:
            raise BadRequest(f"the upload {exc}") from None
        try:
            record = GameRecord.from_dict(raw, "uploaded record")
            if record.rules.get("favor_deck") is not None:
                raise BadRequest(
                    "uploaded record: a favor deck file of the server cannot be named in an upload"
                )
            replay_record("upload", record)  # refuses a record that does not replay
        except RecordError as exc:
            raise BadRequest(str(exc)) from None
        except (ValueError, TypeError) as exc:  # rules options that no game accepts
            raise BadRequest(f"uploaded record: {printable(exc)}") from None
        digest = hashlib.sha256(json.dumps(record.to_dict(), sort_keys=True).encode()).hexdigest()[:16]
        name = f"upload-{digest}.json"
        if not self.path(name).exists():
            self.save(record, name.removesuffix(".json"))
        return name
