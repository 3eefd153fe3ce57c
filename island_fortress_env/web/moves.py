"""A decision taken in a live game (``Move``), as the browser's table keeps it: the words it is
told in, in full for its mover and as the other seats learn it, the public events it caused and
the wall cells it changed. ``web.games`` makes them; ``web.recap`` reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from island_fortress_env.views import narrate


@dataclass(frozen=True)
class Move:
    """One decision taken in a live game."""

    step: int  # 0-based index of the action in the game
    seat: int
    text: str  # in full
    public: str  # as the other seats learn it
    auto: bool  # the only legal choice: applied without asking
    lines: tuple[narrate.Line, ...]  # the public events it caused, in words
    cells: tuple[int, ...]  # wall cells it changed (public), for the board to show
    scores: tuple[dict[str, Any], ...] = ()  # its score changes with their reasons (words.score_change)
    revealed: str | None = None  # what it showed its mover that was hidden before (``games.revealed``)
    why: str | None = None  # the person's forced move: why it was the only choice (``words.forced_note``)
