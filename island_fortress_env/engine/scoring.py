"""Majorities, end-game scoring and the winner: pure functions of the wall and the boards.

Kept apart from the phase machine so each scoring rule reads as one short function.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import tables
from .events import END_BONUS_REASONS, ScoreReason

# What a score is made of, for the record of a finished game (engine/results.py and the batched
# core's vector.FinalResults): the component of every ScoreReason, and the components in order.
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
COMPONENTS: tuple[str, ...] = tuple(sorted(set(SCORE_COMPONENTS.values())))
# The index in COMPONENTS of each ScoreReason, in their order (what the C++ core is given).
COMPONENT_INDEX: tuple[int, ...] = tuple(COMPONENTS.index(SCORE_COMPONENTS[r]) for r in ScoreReason)


def majority(counts: Sequence[int]) -> list[int]:
    """Players holding the most blocks; nobody when nobody has a block (ties all win)."""
    best = max(counts)
    if best <= 0:
        return []
    return [p for p, c in enumerate(counts) if c == best]


def blocks_in(own: Sequence[int], mask: int) -> list[int]:
    return [(o & mask).bit_count() for o in own]


def buyback_chip_points(chips: int) -> int:
    table = tables.BUYBACK_CHIP_POINTS
    return table[min(chips, len(table) - 1)]


def least_region_points(own: int, region_masks: Sequence[int]) -> int:
    """Three points per block in the region where the player built the fewest."""
    return tables.LEAST_REGION_MULTIPLIER * min((own & m).bit_count() for m in region_masks)


def most(values: Sequence[int]) -> list[int]:
    best = max(values)
    return [p for p, v in enumerate(values) if v == best]


def fewest(values: Sequence[int]) -> list[int]:
    low = min(values)
    return [p for p, v in enumerate(values) if v == low]


def end_bonuses(
    chips: Sequence[int],
    own: Sequence[int],
    region_masks: Sequence[int],
    treasure: Sequence[int],
    jade: Sequence[int],
    workers: Sequence[int],
) -> list[tuple[int, int, ScoreReason]]:
    """The five end-game categories as (player, points, reason) triples, in rulebook order."""
    events: list[tuple[int, int, ScoreReason]] = []
    n = len(chips)
    for p in range(n):
        pts = buyback_chip_points(chips[p])
        if pts:
            events.append((p, pts, ScoreReason.BUYBACK_CHIPS))
    for p in range(n):
        pts = least_region_points(own[p], region_masks)
        if pts:
            events.append((p, pts, ScoreReason.LEAST_BUILT_REGION))
    for p in most(treasure):
        events.append((p, tables.TREASURE_BONUS, ScoreReason.MOST_TREASURE))
    for p in fewest(treasure):
        events.append((p, -tables.TREASURE_BONUS, ScoreReason.FEWEST_TREASURE))
    for p in most(jade):
        events.append((p, tables.JADE_BONUS, ScoreReason.MOST_JADE))
    for p in most(workers):
        events.append((p, tables.WORKERS_BONUS, ScoreReason.MOST_WORKERS))
    return events


def standing_keys(
    scores: Sequence[int], blocks_built: Sequence[int], jade: Sequence[int], treasure: Sequence[int]
) -> list[tuple[int, int, int, int]]:
    """Per player, the key the rulebook ranks by: score, then blocks in the wall, Jade, Treasure."""
    return [(scores[p], blocks_built[p], jade[p], treasure[p]) for p in range(len(scores))]


def winners(
    scores: Sequence[int], blocks_built: Sequence[int], jade: Sequence[int], treasure: Sequence[int]
) -> list[int]:
    """Highest score; ties broken by blocks in the wall, then Jade, then Treasure."""
    keys = standing_keys(scores, blocks_built, jade, treasure)
    best = max(keys)
    return [p for p, k in enumerate(keys) if k == best]


def finishing_positions(
    scores: Sequence[int], blocks_built: Sequence[int], jade: Sequence[int], treasure: Sequence[int]
) -> list[int]:
    """Each player's finishing position (1 = winner) by the order ``winners`` breaks ties in;
    players still tied share a position, and the next one counts them all (1, 1, 3)."""
    keys = standing_keys(scores, blocks_built, jade, treasure)
    return [1 + sum(1 for other in keys if other > key) for key in keys]


def win_share(winners_: Sequence[int], player: int) -> float:
    """``player``'s share of the win: remaining ties share it (C17), ``1/k`` for each of ``k`` tied
    winners (E23), 0 for a loser."""
    return 1.0 / len(winners_) if player in winners_ else 0.0


def win_loss_returns(num_players: int, winners_: Sequence[int]) -> list[float]:
    """Zero-sum returns: the k winners share the win, losers pay for it.

    A win is worth ``share * n/(n-1) - 1/(n-1)`` with share = 1/k for a winner and 0 otherwise,
    so a sole winner gets +1, every loser -1/(n-1), and with 2 players this is the classic
    +1/-1 (0/0 for a tie). Returns always sum to zero.
    """
    n = num_players
    return [win_share(winners_, p) * n / (n - 1) - 1.0 / (n - 1) for p in range(n)]
