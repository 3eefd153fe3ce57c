"""What the person at the table is told beside the position: the recap since their last turn and
the end screen.

* ``recap``: the moves since the person's last turn (the other seats' turns, and the events
  they caused: the petition, a round's end), each turn in words with the wall cells it changed,
  and every score change with its reason, from the moves' typed ``Score`` events
  (``words.score_change``). Only what the table saw: the other seats' moves as the table learnt
  them (a kept card and a sealed bid stay hidden) and public events.
* ``end_screen``: once the game is over, the score table by category for every seat
  (``narrate.score_breakdown``), the tie-break counts, and every hand revealed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from island_fortress_env.engine import visibility
from island_fortress_env.views import narrate
from island_fortress_env.views.seatview import card_json

if TYPE_CHECKING:
    from island_fortress_env.engine import State
    from island_fortress_env.web.moves import Move

# The end screen's columns, in the order of the end scoring (rows and level majorities scored
# during play and at the end share a column).
CATEGORIES = tuple(dict.fromkeys(narrate.BREAKDOWN_LABELS.values()))


def recap_window(moves: Sequence[Move], seat: int) -> tuple[int, int]:
    """The moves since ``seat``'s last turn, as ``moves[start:end]``: the trailing moves of
    ``seat`` itself (its turn under way) are left out, and the window reaches back to the last
    move of ``seat`` before them."""
    end = len(moves)
    while end > 0 and moves[end - 1].seat == seat:
        end -= 1
    start = end
    while start > 0 and moves[start - 1].seat != seat:
        start -= 1
    return start, end


def recap(
    moves: Sequence[Move], seat: int, history: Sequence[State], names: Sequence[str]
) -> dict[str, Any] | None:
    """The recap since ``seat``'s last turn (module doc), or None when nothing happened since."""
    start, end = recap_window(moves, seat)
    if start == end:
        return None
    turns: list[dict[str, Any]] = []
    for move in moves[start:end]:
        if not turns or turns[-1]["seat"] != move.seat:
            turns.append({"seat": move.seat, "step": move.step, "lines": [], "cells": []})
        turn = turns[-1]
        said = [line.text for line in move.lines]
        turn["lines"].extend(said or [f"{narrate.seat_name(names, move.seat)}: {move.public}."])
        turn["cells"].extend(c for c in move.cells if c not in turn["cells"])
    return {
        "from": start,
        "to": end,
        "turns": turns,
        "scores": [change for move in moves[start:end] for change in move.scores],
        "before": list(history[start].score),
        "after": list(history[end].score),
    }


def end_screen(state: State, names: Sequence[str]) -> dict[str, Any]:
    """The end of a finished game: each seat's points by category, its total, whether it won,
    the tie-break counts (blocks in the wall, Jade, Treasure) and its favor cards, every hand
    revealed. Refused (``ValueError``) before the end: the hands are hidden until then."""
    if not state.is_terminal():
        raise ValueError("the end screen is for a finished game only: the hands are hidden until then")
    breakdown = narrate.score_breakdown(state.log, state.n)
    used = [c for c in CATEGORIES if any(c in parts for parts in breakdown)]
    cards = state.game.deck.cards
    rows = []
    for p in range(state.n):
        hand = visibility.favor_hand(state, p, None) or ()
        rows.append(
            {
                "seat": p,
                "name": narrate.seat_name(names, p),
                "total": state.score[p],
                "winner": p in state.winners,
                "points": [breakdown[p].get(c, 0) for c in used],
                "blocks_on_wall": state.own[p].bit_count(),
                "jade": state.jade[p],
                "treasure": state.treasure[p],
                "hand": [card_json(cards[i]) for i in hand],
                "played": [card_json(c) for c in cards if state.favor_played[p] >> c.index & 1],
            }
        )
    return {"categories": used, "rows": rows, "winners": list(state.winners)}
