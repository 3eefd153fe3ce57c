"""The public event log: one typed record per thing that happened, in order.

Every record is a ``NamedTuple`` whose first field is its ``EventKind``; the other fields are
named (``event.player``, ``event.points`` ...). Score events carry a ``ScoreReason`` member
(plus the region and level of a row or level), so no reader parses text. Enum values are
the labels shown to people (``describe.event_to_string``); code compares members.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import Any, NamedTuple


class EventKind(str, Enum):
    SETUP = "setup"
    ROUND = "round"
    INCOME = "income"
    KEPT = "kept"
    BID_PLACED = "bid_placed"
    PETITION = "petition"
    INCENTIVE = "incentive"
    ROLE = "role"
    RECRUITED = "recruited"
    BOUGHT = "bought"
    DREW = "drew"
    REINFORCEMENT_REMOVED = "reinforcement_removed"
    BUILD = "build"
    PLACE = "place"
    ROW_COMPLETE = "row_complete"
    WORKERS = "workers"
    FAVOR_PLAYED = "favor_played"
    REINFORCED = "reinforced"
    REPLACED = "replaced"
    TREASURE_COLLECTED = "treasure_collected"
    PRISON_COLLECTED = "prison_collected"
    JADE_COLLECTED = "jade_collected"
    MOVED = "moved"
    BUYBACK = "buyback"
    TRADED = "traded"
    GOVERNOR_LOST = "governor_lost"
    WALL_COMPLETE = "wall_complete"
    SCORE = "score"
    PASS = "pass"
    GAME_OVER = "game_over"


class ScoreReason(str, Enum):
    """Why a score changed. Rows and level majorities name their region/level in the event."""

    ROW = "row"  # a row completed during play: its majority scores
    ROW_AT_END = "row (end)"  # an uncompleted row scored at the end as if completed
    LEVEL = "level majority"  # a level completed during play: its majority gains a Treasure
    LEVEL_AT_END = "level majority (end)"
    TOWER = "level-4 block"
    FAVOR_CARD = "favor card"
    COLLECT_TREASURE = "collect a treasure"
    FIRST_ROUND_INCENTIVE = "first round incentive"
    BUYBACK_CHIPS = "buyback chips"
    LEAST_BUILT_REGION = "least-built region"
    MOST_TREASURE = "most treasure"
    FEWEST_TREASURE = "fewest treasure"
    MOST_JADE = "most jade"
    MOST_WORKERS = "most workers"


END_BONUS_REASONS = frozenset(
    {
        ScoreReason.BUYBACK_CHIPS,
        ScoreReason.LEAST_BUILT_REGION,
        ScoreReason.MOST_TREASURE,
        ScoreReason.FEWEST_TREASURE,
        ScoreReason.MOST_JADE,
        ScoreReason.MOST_WORKERS,
    }
)


class TradeReward(str, Enum):
    JADE = "jade"
    CONVICT = "convict"


class Setup(NamedTuple):
    kind: EventKind
    players: int
    regions: int


class RoundStarted(NamedTuple):
    kind: EventKind
    round: int


class Income(NamedTuple):
    kind: EventKind
    player: int
    jade: int


class Kept(NamedTuple):
    kind: EventKind
    player: int
    cards: int


class BidPlaced(NamedTuple):
    kind: EventKind
    player: int


class Petition(NamedTuple):
    kind: EventKind
    bids: tuple[int, ...]
    totals: tuple[int, ...]  # bid + favor petition bonus
    winner: int


class Incentive(NamedTuple):
    kind: EventKind
    player: int
    incentive: str  # one of ``config.INCENTIVES``


class Role(NamedTuple):
    kind: EventKind
    player: int
    op: int  # ``actions.OP_*``
    repeat: bool  # played through Taskmaster B
    cost: int  # Jade paid for the repeat


class Recruited(NamedTuple):
    kind: EventKind
    player: int
    laborers: int
    cost: int


class Bought(NamedTuple):
    kind: EventKind
    player: int
    blocks: int
    cost: int


class Drew(NamedTuple):
    kind: EventKind
    player: int
    draw: int
    keep: int


class ReinforcementRemoved(NamedTuple):
    kind: EventKind
    player: int
    cell: int


class Build(NamedTuple):
    kind: EventKind
    player: int
    blocks: int
    cost: int


class Place(NamedTuple):
    kind: EventKind
    player: int
    cell: int
    governor: bool


class RowComplete(NamedTuple):
    kind: EventKind
    player: int
    region: int
    level: int  # 0-based


class Workers(NamedTuple):
    kind: EventKind
    player: int
    laborers: int
    convicts: int
    dead_laborers: int


class FavorPlayed(NamedTuple):
    kind: EventKind
    player: int
    card: int


class Reinforced(NamedTuple):
    kind: EventKind
    player: int
    cell: int


class Replaced(NamedTuple):
    kind: EventKind
    player: int
    cell: int
    victim: int


class TreasureCollected(NamedTuple):
    kind: EventKind
    player: int
    prison_a: int
    prison_b: int


class PrisonCollected(NamedTuple):
    kind: EventKind
    player: int
    region: int
    jade: int
    convicts: int


class JadeCollected(NamedTuple):
    kind: EventKind
    player: int
    jade: int


class Moved(NamedTuple):
    kind: EventKind
    player: int
    region: int


class Buyback(NamedTuple):
    kind: EventKind
    player: int
    card: int
    chip: bool  # a Buyback Chip, else the Taskmaster's Jade


class Traded(NamedTuple):
    kind: EventKind
    player: int
    reward: TradeReward


class GovernorLost(NamedTuple):
    kind: EventKind
    player: int


class WallComplete(NamedTuple):
    kind: EventKind
    player: int
    jade: int
    convicts: int


class Score(NamedTuple):
    kind: EventKind
    player: int
    points: int
    reason: ScoreReason
    region: int = -1  # rows: the region (0-based); -1 otherwise
    level: int = -1  # rows and level majorities: the level (0-based); -1 otherwise


class Pass(NamedTuple):
    kind: EventKind
    player: int


class GameOver(NamedTuple):
    kind: EventKind
    scores: tuple[int, ...]
    winners: tuple[int, ...]


Event = (
    Setup | RoundStarted | Income | Kept | BidPlaced | Petition | Incentive | Role | Recruited | Bought
    | Drew | ReinforcementRemoved | Build | Place | RowComplete | Workers | FavorPlayed | Reinforced
    | Replaced | TreasureCollected | PrisonCollected | JadeCollected | Moved | Buyback | Traded
    | GovernorLost | WallComplete | Score | Pass | GameOver
)  # fmt: skip

RECORD_TYPES: dict[EventKind, type[Event]] = {
    EventKind.SETUP: Setup,
    EventKind.ROUND: RoundStarted,
    EventKind.INCOME: Income,
    EventKind.KEPT: Kept,
    EventKind.BID_PLACED: BidPlaced,
    EventKind.PETITION: Petition,
    EventKind.INCENTIVE: Incentive,
    EventKind.ROLE: Role,
    EventKind.RECRUITED: Recruited,
    EventKind.BOUGHT: Bought,
    EventKind.DREW: Drew,
    EventKind.REINFORCEMENT_REMOVED: ReinforcementRemoved,
    EventKind.BUILD: Build,
    EventKind.PLACE: Place,
    EventKind.ROW_COMPLETE: RowComplete,
    EventKind.WORKERS: Workers,
    EventKind.FAVOR_PLAYED: FavorPlayed,
    EventKind.REINFORCED: Reinforced,
    EventKind.REPLACED: Replaced,
    EventKind.TREASURE_COLLECTED: TreasureCollected,
    EventKind.PRISON_COLLECTED: PrisonCollected,
    EventKind.JADE_COLLECTED: JadeCollected,
    EventKind.MOVED: Moved,
    EventKind.BUYBACK: Buyback,
    EventKind.TRADED: Traded,
    EventKind.GOVERNOR_LOST: GovernorLost,
    EventKind.WALL_COMPLETE: WallComplete,
    EventKind.SCORE: Score,
    EventKind.PASS: Pass,
    EventKind.GAME_OVER: GameOver,
}
_make = tuple.__new__


def typed(raw: Iterable[tuple[Any, ...]]) -> list[Event]:
    """Records from the state's raw event tuples (each in its record's field order)."""
    types = RECORD_TYPES
    return [_make(types[e[0]], e) for e in raw]


# The kinds bound as module globals for the engine's hot paths (see decisions.py).
K_SETUP = EventKind.SETUP
K_ROUND = EventKind.ROUND
K_INCOME = EventKind.INCOME
K_KEPT = EventKind.KEPT
K_BID_PLACED = EventKind.BID_PLACED
K_PETITION = EventKind.PETITION
K_INCENTIVE = EventKind.INCENTIVE
K_ROLE = EventKind.ROLE
K_RECRUITED = EventKind.RECRUITED
K_BOUGHT = EventKind.BOUGHT
K_DREW = EventKind.DREW
K_REINFORCEMENT_REMOVED = EventKind.REINFORCEMENT_REMOVED
K_BUILD = EventKind.BUILD
K_PLACE = EventKind.PLACE
K_ROW_COMPLETE = EventKind.ROW_COMPLETE
K_WORKERS = EventKind.WORKERS
K_FAVOR_PLAYED = EventKind.FAVOR_PLAYED
K_REINFORCED = EventKind.REINFORCED
K_REPLACED = EventKind.REPLACED
K_TREASURE_COLLECTED = EventKind.TREASURE_COLLECTED
K_PRISON_COLLECTED = EventKind.PRISON_COLLECTED
K_JADE_COLLECTED = EventKind.JADE_COLLECTED
K_MOVED = EventKind.MOVED
K_BUYBACK = EventKind.BUYBACK
K_TRADED = EventKind.TRADED
K_GOVERNOR_LOST = EventKind.GOVERNOR_LOST
K_WALL_COMPLETE = EventKind.WALL_COMPLETE
K_SCORE = EventKind.SCORE
K_PASS = EventKind.PASS
K_GAME_OVER = EventKind.GAME_OVER
