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


def score_components(log: Sequence[Event], seat: int) -> dict[str, int]:
    out = dict.fromkeys(sorted(set(SCORE_COMPONENTS.values())), 0)
    for event in log:
        if isinstance(event, Score) and event.player == seat:
            out[SCORE_COMPONENTS[event.reason]] += event.points
    return out


def jade_spent(log: Sequence[Event], seat: int) -> int:
    """Jade paid to the treasury: petition bids, purchases, double builds, repeats, buybacks."""
    spent = 0
    for event in log:
        if isinstance(event, Petition):
            if event.winner == seat:
                spent += event.bids[seat]
        elif isinstance(event, (Recruited, Bought, Build, Role)):
            if event.player == seat:
                spent += event.cost
        elif isinstance(event, Buyback) and event.player == seat and not event.chip:
            spent += tables.TASKMASTER_BUYBACK_COST  # the Taskmaster's, not a chip
    return spent


def game_figures(state: Any, seat: int) -> dict[str, Any]:
    """The figures of a finished game logged for ``seat`` (both trainers read them here only):
    win share, final score and its components, rounds, Jade spent, favors played, blocks built."""
    return {
        "win": scoring.win_share(state.winners, seat),
        "score": state.score[seat],
        "components": score_components(state.log, seat),
        "rounds": state.round,
        "jade_spent": jade_spent(state.log, seat),
        "favors_played": state.favor_played[seat].bit_count(),
        "blocks_built": state.blocks_built(seat),
    }
