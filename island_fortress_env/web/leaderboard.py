"""The leaderboard: evaluation results (what ``island-fortress evaluate --json`` prints) found in
the games directory, checked and put in one table.

An evaluation result is ``{"agents": [{"name", "spec", "games", "wins", "win_rate", "ci95":
[lo, hi], "mean_score", "seat_games"[, "rating": {"mu", "sigma", "ordinal"}]}, ...], "games",
"seed", "players", "rated"}``. Save one with ``island-fortress evaluate A B C --json >
DIR/eval-name.json``. Files that are game records are left to the replay list; a JSON file that
is neither is reported with why it was skipped. Every file is read with the bounded parser
(``web.jsontext``: a regular file, its size, depth, digits; ``NaN``, ``Infinity`` and ``1e400``
refused) and every number shown must be finite, so a bad file is one note in ``skipped``, never
a broken table.

**The overall ranking** (``overall``) pools every table: for each agent (by spec), its games and
wins over all files, and its wins against what chance would give it (a game of k players gives
each seat 1/k of a win), so 3- and 4-player tables count as fairly as 2-player ones; ranked by
that ratio ("x chance"), with the pooled win rate and its 95% Wilson interval. Ratings of
different files are not comparable and are left to each file's table.

**People** (``people``): the OpenSkill ratings of the people who finished games here
(``web.ratings``, the file ``people-ratings.json``, not an evaluation result), each shown as
``person:NAME``, beside the agents (``agent:LABEL``): those on the ladder at their fixed ladder
rating, the others as rated from people's games.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from island_fortress_env.stats import wilson
from island_fortress_env.web.errors import shown
from island_fortress_env.web.jsontext import FileRefused, read
from island_fortress_env.web.ratings import RATINGS_FILE, PeopleRatings

MAX_BYTES = 1 << 20
MAX_TEXT = 256  # an agent's name or spec
MAX_FILES = 500  # results read (in name order); the rest are counted in a note


class NotAnEvaluation(ValueError):
    """A JSON file that is not an evaluation result."""


def _number(value: Any, what: str, low: float = -math.inf, high: float = math.inf) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not low <= value <= high
    ):
        raise NotAnEvaluation(f"{what} must be a finite number in [{low}, {high}], not {shown(value)}")
    return float(value)


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise NotAnEvaluation(f"{what} must be a text of at most {MAX_TEXT} characters, not {shown(value)}")
    return value


def parse_evaluation(data: Any, source: str) -> dict[str, Any]:
    """A checked evaluation result (the fields the leaderboard shows), or ``NotAnEvaluation``."""
    if not isinstance(data, dict) or not isinstance(data.get("agents"), list) or "format" in data:
        raise NotAnEvaluation(f"{source}: not an evaluation result (no 'agents' list)")
    players = data.get("players")
    if isinstance(players, bool) or not isinstance(players, int) or not 2 <= players <= 4:
        raise NotAnEvaluation(f"{source}: 'players' must be 2-4, not {shown(players)}")
    if len(data["agents"]) != players:
        raise NotAnEvaluation(f"{source}: {len(data['agents'])} agents for {players} players")
    games = int(_number(data.get("games"), f"{source}: 'games'", 1))
    agents = []
    for i, entry in enumerate(data["agents"]):
        where = f"{source}: agent {i + 1}"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise NotAnEvaluation(f"{where}: an object with a 'name' is expected")
        ci = entry.get("ci95")
        if not isinstance(ci, list) or len(ci) != 2:
            raise NotAnEvaluation(f"{where}: 'ci95' must be [low, high]")
        row = {
            "name": _text(entry["name"], f"{where}: 'name'"),
            "spec": _text(entry.get("spec", entry["name"]), f"{where}: 'spec'"),
            "games": int(_number(entry.get("games"), f"{where}: 'games'", 0)),
            "wins": _number(entry.get("wins"), f"{where}: 'wins'", 0),
            "win_rate": _number(entry.get("win_rate"), f"{where}: 'win_rate'", 0, 1),
            "ci95": [_number(ci[0], f"{where}: 'ci95'", 0, 1), _number(ci[1], f"{where}: 'ci95'", 0, 1)],
            "mean_score": _number(entry.get("mean_score"), f"{where}: 'mean_score'"),
            "rating": None,
        }
        rating = entry.get("rating")
        if rating is not None:
            if not isinstance(rating, dict):
                raise NotAnEvaluation(f"{where}: 'rating' must be an object")
            row["rating"] = {
                k: _number(rating.get(k), f"{where}: rating {k!r}") for k in ("mu", "sigma", "ordinal")
            }
        agents.append(row)
    seed = data.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise NotAnEvaluation(f"{source}: 'seed' must be an integer or null, not {shown(seed)}")
    return {
        "file": source,
        "players": players,
        "games": games,
        "seed": seed,
        "rated": bool(data.get("rated", False)),
        "agents": agents,
    }


def overall(tables: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One ranking over every table (module doc), best first."""
    pooled: dict[str, dict[str, Any]] = {}
    for table in tables:
        for agent in table["agents"]:
            row = pooled.setdefault(
                agent["spec"],
                {"name": agent["name"], "spec": agent["spec"], "games": 0, "wins": 0.0, "expected": 0.0,
                 "points": 0.0, "tables": 0, "players": set()},
            )  # fmt: skip
            row["games"] += agent["games"]
            row["wins"] += agent["wins"]
            row["expected"] += agent["games"] / table["players"]
            row["points"] += agent["mean_score"] * agent["games"]
            row["tables"] += 1
            row["players"].add(table["players"])
    out = []
    for row in pooled.values():
        games = row["games"]
        rate = row["wins"] / games if games else 0.0
        low, high = wilson(rate, games) if games else (0.0, 0.0)
        out.append(
            {
                "name": row["name"],
                "spec": row["spec"],
                "games": games,
                "wins": row["wins"],
                "win_rate": rate,
                "ci95": [low, high],
                "chance": row["expected"] / games if games else 0.0,
                "vs_chance": row["wins"] / row["expected"] if row["expected"] else 0.0,
                "mean_score": row["points"] / games if games else 0.0,
                "tables": row["tables"],
                "players": sorted(row["players"]),
            }
        )
    out.sort(key=lambda r: (-r["vs_chance"], -r["games"], r["name"]))
    for rank, row in enumerate(out, 1):
        row["rank"] = rank
    return out


def leaderboard(root: Path) -> dict[str, Any]:
    """Every evaluation result in ``root`` and the files skipped, with why; the tables sorted by
    rating when rated, else by win rate."""
    tables = []
    skipped = []
    paths = sorted(root.glob("*.json"))
    for path in paths[:MAX_FILES]:
        if path.name == RATINGS_FILE:
            continue  # the people's ratings: their own section
        try:
            data = read(path, MAX_BYTES)
        except FileRefused as exc:
            skipped.append({"file": path.name, "reason": f"not readable JSON: it {exc}"})
            continue
        if isinstance(data, dict) and "format" in data:
            continue  # a game record: listed for replay
        try:
            table = parse_evaluation(data, path.name)
        except NotAnEvaluation as exc:
            skipped.append({"file": path.name, "reason": str(exc)})
            continue
        table["agents"].sort(
            key=lambda a: -(a["rating"]["ordinal"] if a["rating"] is not None else a["win_rate"])
        )
        tables.append(table)
    if len(paths) > MAX_FILES:
        skipped.append({"file": "", "reason": f"{len(paths) - MAX_FILES} more JSON files not read"})
    people = PeopleRatings(root).table()
    return {"overall": overall(tables), "tables": tables, "skipped": skipped, "people": people}
