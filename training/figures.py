"""The figures of a finished game that both trainers log to TensorBoard (``game/``): win share,
final score and its components, rounds, Jade spent, favors played, blocks built."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from island_fortress_env.engine import scoring, tables
from island_fortress_env.engine.events import (
    END_BONUS_REASONS,
    Bought,
    Build,
    Buyback,
    Event,
    Petition,
    Recruited,
    Role,
    Score,
    ScoreReason,
)

# Score reasons grouped into the components logged to TensorBoard.
SCORE_COMPONENTS: dict[ScoreReason, str] = {
    ScoreReason.ROW: "rows",
    ScoreReason.ROW_AT_END: "rows",
    ScoreReason.LEVEL: "levels",
    ScoreReason.LEVEL_AT_END: "levels",
    ScoreReason.TOWER: "towers",
    ScoreReason.FAVOR_CARD: "favors",
    ScoreReason.COLLECT_TREASURE: "treasure",
    ScoreReason.FIRST_ROUND_INCENTIVE: "treasure",
    **dict.fromkeys(END_BONUS_REASONS, "end_bonus"),
}


def score_components(log: Sequence[Event], seats: Sequence[int]) -> list[dict[str, int]]:
    """Each of ``seats``' points by component, in one pass over ``log``."""
    out = {seat: dict.fromkeys(sorted(set(SCORE_COMPONENTS.values())), 0) for seat in seats}
    for event in log:
        if isinstance(event, Score) and event.player in out:
            out[event.player][SCORE_COMPONENTS[event.reason]] += event.points
    return [out[seat] for seat in seats]


def jade_spent(log: Sequence[Event], seats: Sequence[int]) -> list[int]:
    """The Jade each of ``seats`` paid to the treasury (petition bids, purchases, double builds,
    repeats, buybacks), in one pass over ``log``."""
    spent = dict.fromkeys(seats, 0)
    for event in log:
        if isinstance(event, Petition):
            if event.winner in spent:
                spent[event.winner] += event.bids[event.winner]
        elif isinstance(event, (Recruited, Bought, Build, Role)):
            if event.player in spent:
                spent[event.player] += event.cost
        elif isinstance(event, Buyback) and event.player in spent and not event.chip:
            spent[event.player] += tables.TASKMASTER_BUYBACK_COST  # the Taskmaster's, not a chip
    return [spent[seat] for seat in seats]


def game_figures(state: Any, seats: Sequence[int]) -> list[dict[str, Any]]:
    """The figures of a finished game logged for each of ``seats`` (both trainers read them here
    only): win share, final score and its components, rounds, Jade spent, favors played, blocks
    built. The event log is read once for all of them."""
    log = state.log
    per_seat = zip(seats, score_components(log, seats), jade_spent(log, seats), strict=True)
    return [
        {
            "win": scoring.win_share(state.winners, seat),
            "score": state.score[seat],
            "components": components,
            "rounds": state.round,
            "jade_spent": jade,
            "favors_played": state.favor_played[seat].bit_count(),
            "blocks_built": state.blocks_built(seat),
        }
        for seat, components, jade in per_seat
    ]
