"""The leaderboard: evaluation results (what ``island-fortress evaluate --json`` prints) found in
the games directory, checked and put in one table.

An evaluation result is ``{"agents": [{"name", "spec", "games", "wins", "win_rate", "ci95":
[lo, hi], "mean_score", "seat_games"[, "rating": {"mu", "sigma", "ordinal"}]}, ...], "games",
"seed", "players", "rated"}``. Save one with ``island-fortress evaluate A B C --json >
DIR/eval-name.json``. Files that are game records are left to the replay list; a JSON file that
is neither is reported with why it was skipped.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

MAX_BYTES = 1 << 20


class NotAnEvaluation(ValueError):
    """A JSON file that is not an evaluation result."""


def _number(value: Any, what: str, low: float = -math.inf, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise NotAnEvaluation(f"{what} must be a number in [{low}, {high}], not {value!r}")
    return float(value)


def parse_evaluation(data: Any, source: str) -> dict[str, Any]:
    """A checked evaluation result (the fields the leaderboard shows), or ``NotAnEvaluation``."""
    if not isinstance(data, dict) or not isinstance(data.get("agents"), list) or "format" in data:
        raise NotAnEvaluation(f"{source}: not an evaluation result (no 'agents' list)")
    players = data.get("players")
    if isinstance(players, bool) or not isinstance(players, int) or not 2 <= players <= 4:
        raise NotAnEvaluation(f"{source}: 'players' must be 2-4, not {players!r}")
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
            "name": entry["name"],
            "spec": str(entry.get("spec", entry["name"])),
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
    if len(agents) != players:
        raise NotAnEvaluation(f"{source}: {len(agents)} agents for {players} players")
    return {
        "file": source,
        "players": players,
        "games": games,
        "seed": data.get("seed"),
        "rated": bool(data.get("rated", False)),
        "agents": agents,
    }


def leaderboard(root: Path) -> dict[str, Any]:
    """Every evaluation result in ``root`` and the files skipped, with why; the tables sorted by
    rating when rated, else by win rate."""
    tables = []
    skipped = []
    for path in sorted(root.glob("*.json")):
        if not path.is_file():
            continue
        if path.stat().st_size > MAX_BYTES:
            skipped.append({"file": path.name, "reason": f"larger than {MAX_BYTES} bytes"})
            continue
        try:
            data = json.loads(path.read_text("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, OSError) as exc:
            skipped.append({"file": path.name, "reason": f"not readable JSON ({exc})"})
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
    return {"tables": tables, "skipped": skipped}
