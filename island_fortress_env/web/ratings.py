"""Ratings for people: an OpenSkill rating (Plackett-Luce, as ``evaluate`` and ``tournament``
rate agents) for each name that finished a game in the browser, kept in the games directory.

**A name per browser.** The page asks for a name once and keeps it (``localStorage``); it is
sent with each new game (``POST /api/play`` {..., name}). ``check_name`` bounds it: 1 to
``MAX_NAME`` characters, letters and digits of any script, spaces (never two together) and
``. _ ' -``, starting with a letter or a digit; no ``:``, so a person shown as ``person:NAME``
can never be taken for an agent (a spec names its kind with a colon, ``search:64``). Two names
that differ only by case are one person (the last spelling is shown). Anything else is a 400.

**The update.** When a game with a named person ends, every seat is rated from the finishing
positions (``engine.results``: score, then blocks, Jade, Treasure; ties share a place). An agent
on the project's ladder (``web.levels.LADDER``) plays at its ladder rating and is not moved by a
person's game: a few games cannot improve on hundreds, and the person's rating is then on the
ladder's scale, comparable with the "ladder" figure the start page shows for each level (the
ladder is measured at 2 players; at 3 and 4 it is the same figure, an approximation). An agent
not on the ladder is rated here from people's games, starting at OpenSkill's default, and moves
with each game (``agents`` in the file, shown as ``agent:LABEL``).

**The file**, ``RATINGS_FILE`` in the games directory: ``{"kind": KIND, "version": 1, "people":
{key: {"name", "mu", "sigma", "games", "wins", "last"}}, "agents": {label: {...}}}``. It is read
with the bounded parser (``web.jsontext.read``: a regular file of at most ``MAX_BYTES``) and every
field is checked; a file that fails is never overwritten (the leaderboard says why, and games go
on unrated until it is fixed or removed). It is written atomically (a temporary file in the same
directory, then ``os.replace``), so a reader never sees half of it; at most ``MAX_PEOPLE`` people
are kept (the one who played longest ago goes first), so it stays under ``MAX_BYTES``. One
server process writes it at a time (a lock); two servers sharing a directory may lose an update,
never the file.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import math
import os
import tempfile
import threading
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from island_fortress_env.engine.results import game_result
from island_fortress_env.players import AgentSpecError, parse_agent_spec
from island_fortress_env.stats import RatedGame, Rating, new_rating, rate_games
from island_fortress_env.web.errors import BadRequest, shown
from island_fortress_env.web.jsontext import FileRefused, read
from island_fortress_env.web.levels import LADDER, LADDER_SOURCE, rating_of

if TYPE_CHECKING:
    from island_fortress_env.engine import State

RATINGS_FILE = "people-ratings.json"
KIND = "island-fortress-people-ratings"
MAX_NAME = 32
MAX_PEOPLE = 500
MAX_AGENTS = 100  # agents rated from people's games (the server's own, so few)
MAX_BYTES = 256 * 1024
PERSON = "person:"  # how a person is shown beside the agents
AGENT = "agent:"
_PUNCTUATION = frozenset(" ._'-")
_BOUND = 1e6  # |mu|, sigma and counts of a rating read from the file

logger = logging.getLogger(__name__)


class RatingsRefused(ValueError):
    """The ratings file cannot be used (it says why, naming the file)."""


def check_name(value: Any) -> str:
    """A person's name as sent by the page, checked (module doc), or a 400 saying what is wrong."""
    if not isinstance(value, str):
        raise BadRequest(f"'name' must be a text of 1-{MAX_NAME} characters, not {shown(value)}")
    name = unicodedata.normalize("NFC", value).strip()
    if not 1 <= len(name) <= MAX_NAME:
        raise BadRequest(
            f"'name' must be 1-{MAX_NAME} characters (spaces at the ends aside), not {len(name)}"
        )
    bad = sorted({c for c in name if not (c.isalnum() or c in _PUNCTUATION)})
    if bad:
        raise BadRequest(
            f"'name' may hold letters, digits, spaces and . _ ' - only, not {shown(''.join(bad))}"
        )
    if not name[0].isalnum():
        raise BadRequest(f"'name' must start with a letter or a digit, not {shown(name[0])}")
    if "  " in name:
        raise BadRequest("'name' may not hold two spaces together")
    return name


def now() -> str:
    """The date a rating was last moved (the file's ``last``: who played longest ago goes first)."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def key_of(name: str) -> str:
    return name.casefold()


def _rating(entry: Any, where: str) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise RatingsRefused(f"{where}: an object is expected")
    out: dict[str, Any] = {}
    for field, low in (("mu", -_BOUND), ("sigma", 1e-9), ("games", 0), ("wins", 0)):
        v: Any = entry.get(field)
        number = isinstance(v, int | float) and not isinstance(v, bool)
        if not number or not math.isfinite(v) or not low <= v <= _BOUND:
            raise RatingsRefused(f"{where}: {field!r} must be a finite number in [{low}, {_BOUND:g}]")
        out[field] = float(v)
    if out["wins"] > out["games"] or out["games"] != int(out["games"]):
        raise RatingsRefused(f"{where}: 'games' must be a whole number at least 'wins'")
    out["games"] = int(out["games"])
    last = entry.get("last", "")
    if not isinstance(last, str) or len(last) > 40:
        raise RatingsRefused(f"{where}: 'last' must be a date text")
    out["last"] = last
    return out


def parse_ratings(data: Any, source: str = RATINGS_FILE) -> dict[str, Any]:
    """The checked content of a ratings file, or ``RatingsRefused``."""
    if not isinstance(data, dict) or data.get("kind") != KIND or data.get("version") != 1:
        raise RatingsRefused(f"{source}: not a people's ratings file (kind {KIND!r}, version 1)")
    people, agents = data.get("people"), data.get("agents")
    if not isinstance(people, dict) or len(people) > MAX_PEOPLE:
        raise RatingsRefused(f"{source}: 'people' must be an object of at most {MAX_PEOPLE} people")
    if not isinstance(agents, dict) or len(agents) > MAX_AGENTS:
        raise RatingsRefused(f"{source}: 'agents' must be an object of at most {MAX_AGENTS} agents")
    out: dict[str, Any] = {"people": {}, "agents": {}}
    for key, entry in people.items():
        row = _rating(entry, f"{source}: person {shown(key)}")
        try:
            name = check_name(entry.get("name"))
        except BadRequest as exc:
            raise RatingsRefused(f"{source}: person {shown(key)}: {exc.message}") from None
        if key != key_of(name):
            raise RatingsRefused(f"{source}: person {shown(key)} is filed under another name's key")
        out["people"][key] = {"name": name, **row}
    for label, entry in agents.items():
        if not isinstance(label, str) or not 1 <= len(label) <= 256:
            raise RatingsRefused(f"{source}: an agent's label must be a text of 1-256 characters")
        out["agents"][label] = _rating(entry, f"{source}: agent {shown(label)}")
    return out


def _label(spec: str) -> str:
    try:
        return parse_agent_spec(spec).label
    except AgentSpecError:
        return spec


def _row(name: str, rating: dict[str, Any]) -> dict[str, Any]:
    """A rating as the leaderboard shows it, with its ordinal (``mu - 3 sigma``)."""
    mu, sigma = rating["mu"], rating["sigma"]
    return {"name": name, "mu": mu, "sigma": sigma, "ordinal": mu - 3 * sigma, "games": rating["games"],
            "wins": rating["wins"]}  # fmt: skip


class PeopleRatings:
    """The people's ratings of one games directory (module doc)."""

    def __init__(self, root: Path) -> None:
        self.path = Path(root) / RATINGS_FILE
        self._lock = threading.Lock()

    def load(self) -> dict[str, Any]:
        """The file's checked content (empty when there is none yet), or ``RatingsRefused``."""
        if not self.path.exists():
            return {"people": {}, "agents": {}}
        try:
            data = read(self.path, MAX_BYTES)
        except FileRefused as exc:
            raise RatingsRefused(f"{RATINGS_FILE} {exc}") from None
        return parse_ratings(data)

    def _write(self, data: dict[str, Any]) -> None:
        people = data["people"]
        while True:
            text = json.dumps({"kind": KIND, "version": 1, **data}, ensure_ascii=True, allow_nan=False)
            if len(text) <= MAX_BYTES or not people:
                break
            del people[min(people, key=lambda k: people[k]["last"])]
        fd, tmp = tempfile.mkstemp(prefix=".people-ratings-", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="ascii") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def rate(
        self, name: str, specs: tuple[str, ...], seat: int, state: State, seed: int, length: int
    ) -> dict[str, Any]:
        """Rate the finished game ``state`` of person ``name`` at ``seat`` against agents
        ``specs`` (module doc). Returns the person's new rating, or ``{"error": why}`` when it
        could not be rated (the game stands either way)."""
        try:
            default = new_rating()
        except ImportError:
            return {"error": "people's ratings need openskill (pip install 'island-fortress-env[web]')"}
        result = game_result(state, seed, length)
        key = key_of(name)
        with self._lock:
            try:
                data = self.load()
            except RatingsRefused as exc:
                logger.warning("%s; this game is not rated", exc)
                return {"error": f"{exc}; this game is not rated"}
            people, agents = data["people"], data["agents"]
            before = people.get(key, {"mu": default.mu, "sigma": default.sigma, "games": 0, "wins": 0.0})
            start: list[Rating | None] = []
            ladder_seats: set[int] = set()  # agents of the ladder play at its rating, unmoved (module doc)
            for p, spec in enumerate(specs):
                if p == seat:
                    start.append(Rating(before["mu"], before["sigma"]))
                    continue
                ladder = rating_of(spec)
                pooled = agents.get(_label(spec))
                if ladder is not None:
                    start.append(Rating(ladder.mu, ladder.sigma))
                    ladder_seats.add(p)
                elif pooled is not None:
                    start.append(Rating(pooled["mu"], pooled["sigma"]))
                else:
                    start.append(None)
            game = RatedGame(tuple(range(len(specs))), tuple(int(r) for r in result.rank))
            new = rate_games([game], start, fixed=ladder_seats)
            stamp = now()
            for p, spec in enumerate(specs):
                if p == seat or rating_of(spec) is not None:
                    continue
                label = _label(spec)
                if label not in agents and len(agents) >= MAX_AGENTS:
                    continue
                old = agents.get(label, {"games": 0, "wins": 0.0})
                agents[label] = {
                    "mu": new[p].mu, "sigma": new[p].sigma, "games": old["games"] + 1,
                    "wins": old["wins"] + result.win[p], "last": stamp,
                }  # fmt: skip
            people.pop(key, None)
            while len(people) >= MAX_PEOPLE:
                del people[min(people, key=lambda k: people[k]["last"])]
            mine = new[seat]
            people[key] = {
                "name": name, "mu": mine.mu, "sigma": mine.sigma, "games": before["games"] + 1,
                "wins": before["wins"] + result.win[seat], "last": stamp,
            }  # fmt: skip
            try:
                self._write(data)
            except OSError as exc:
                logger.warning("%s could not be written (%s); this game is not rated", RATINGS_FILE, exc)
                return {"error": f"{RATINGS_FILE} could not be written; this game is not rated"}
        return _row(PERSON + name, people[key])

    def person(self, name: str) -> dict[str, Any] | None:
        """The rating of ``name`` (checked), or None when that name has finished no game."""
        try:
            row = self.load()["people"].get(key_of(name))
        except RatingsRefused:
            return None
        if row is None:
            return None
        return _row(PERSON + row["name"], row)

    def table(self) -> dict[str, Any]:
        """The leaderboard's people section: every person and the agents they played, best
        first by ordinal (``mu - 3 sigma``), each named apart (``person:``, ``agent:``)."""
        try:
            data = self.load()
        except RatingsRefused as exc:
            return {"file": RATINGS_FILE, "people": [], "agents": [], "error": str(exc)}
        people = [{**_row(PERSON + r["name"], r), "last": r["last"]} for r in data["people"].values()]
        agents = [
            {**_row(AGENT + label, r), "source": "rated from people's games"}
            for label, r in data["agents"].items()
        ]
        agents += [
            {"name": AGENT + label, "mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal, "games": None,
             "wins": None, "source": f"fixed: {LADDER_SOURCE}"}
            for label, r in LADDER.items()
        ]  # fmt: skip
        people.sort(key=lambda r: (-r["ordinal"], r["name"]))
        agents.sort(key=lambda r: (-r["ordinal"], r["name"]))
        return {"file": RATINGS_FILE, "people": people, "agents": agents, "error": None}
