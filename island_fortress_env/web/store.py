"""The games directory: game records listed, opened for replay, saved and uploaded.

Records are read and written with ``env.records`` (``load``/``save``/``states``). A record is
named by its file name alone (letters, digits, ``.``, ``_``, ``-``, ending in ``.json``) and
always resolved inside the directory, so no request reaches a file elsewhere. An opened record
is replayed once and kept (a few at a time) with every state, the public event log in words
and what was chosen at each step.
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

from island_fortress_env.env.records import GameRecord, RecordError, load, save, states
from island_fortress_env.views import narrate
from island_fortress_env.web.errors import BadRequest, NotFound, TooLarge

if TYPE_CHECKING:
    from island_fortress_env.engine import State

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,150}\.json")
MAX_RECORD_BYTES = 1 << 20  # a record is a few KB; an upload beyond 1 MiB is refused
OPEN_RECORDS = 6  # replayed records kept in memory


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
    """Replay ``record`` (checked by ``states``) and put every step into words."""
    all_states = states(record)
    names = tuple(record.agents)
    narrator = narrate.Narrator(names, all_states[0].game.deck.cards)
    final_log = all_states[-1].log
    lines = []
    seen = 0
    for state in all_states:
        upto = len(state.log)
        lines.append(tuple(narrator.lines(final_log[seen:upto])))
        seen = upto
    moves = tuple(
        narrate.describe_choice(s, a).label for s, a in zip(all_states, record.actions, strict=False)
    )
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
        self._headers: dict[str, tuple[float, int, dict[str, Any] | None]] = {}
        self._lock = threading.Lock()

    def path(self, name: Any) -> Path:
        """The file of record ``name``: a plain file name inside the directory, or a 400."""
        if not isinstance(name, str) or not NAME.fullmatch(name) or ".." in name:
            raise BadRequest(
                f"bad record name {name!r}: a file name in the games directory "
                "(letters, digits, '.', '_', '-', ending in .json), no folders"
            )
        path = (self.root / name).resolve()
        if path.parent != self.root:  # pragma: no cover - the pattern admits no separator
            raise BadRequest(f"record {name!r} is outside the games directory")
        return path

    def open(self, name: Any) -> Replay:
        """Record ``name`` replayed (cached while the file is unchanged)."""
        path = self.path(name)
        if not path.is_file():
            raise NotFound(f"no record {name!r} in the games directory")
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
        with self._lock:
            self._open[key] = replay
            while len(self._open) > OPEN_RECORDS:
                self._open.popitem(last=False)
        return replay

    def header(self, path: Path) -> dict[str, Any] | None:
        """A record file's summary without replaying it; None for a file that is not a record."""
        stat = path.stat()
        cached = self._headers.get(path.name)
        if cached is not None and cached[:2] == (stat.st_mtime, stat.st_size):
            return cached[2]
        summary = None
        if stat.st_size <= MAX_RECORD_BYTES:
            try:
                record = GameRecord.from_dict(json.loads(path.read_text("utf-8")), path.name)
                summary = {
                    "name": path.name,
                    "players": record.num_players,
                    "agents": list(record.agents),
                    "scores": list(record.scores),
                    "winners": list(record.winners),
                    "decisions": len(record.actions),
                    "modified": stat.st_mtime,
                }
            except (RecordError, ValueError, UnicodeDecodeError, OSError):
                summary = None
        self._headers[path.name] = (stat.st_mtime, stat.st_size, summary)
        return summary

    def list(self) -> list[dict[str, Any]]:
        """Every game record in the directory, newest first (other JSON files are left out)."""
        out = []
        for path in self.root.glob("*.json"):
            if NAME.fullmatch(path.name) and path.is_file():
                summary = self.header(path)
                if summary is not None:
                    out.append(summary)
        out.sort(key=lambda s: (-s["modified"], s["name"]))
        return out

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
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise BadRequest("the upload is not a text (UTF-8) file") from None
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BadRequest(f"the upload is not valid JSON ({exc.msg} at line {exc.lineno})") from None
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
            raise BadRequest(f"uploaded record: {exc}") from None
        digest = hashlib.sha256(json.dumps(record.to_dict(), sort_keys=True).encode()).hexdigest()[:16]
        name = f"upload-{digest}.json"
        if not self.path(name).exists():
            self.save(record, name.removesuffix(".json"))
        return name
