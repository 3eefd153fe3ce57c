"""The rulebook's numbers, loaded once from ``data/rules_tables.json`` (data, not code).

These numbers, like the engine's other declarations (decisions, events, game options, the
observation's features), are the one source of the C++ core's copies: ``core/codegen.py`` writes
them into headers at build time.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def data_file(name: str) -> Any:
    """The JSON file ``data/<name>`` of the package, parsed."""
    return json.loads(resources.files(__package__).joinpath(f"data/{name}").read_text("utf-8"))


TABLES: dict[str, Any] = data_file("rules_tables.json")

PURCHASE_COST: tuple[int, ...] = tuple(TABLES["purchase_cost"])  # index = count bought (1..5)
WORKERS_PER_LEVEL: tuple[int, ...] = tuple(TABLES["workers_per_level"])  # index = level-1
REPLACE_MULTIPLIER: int = TABLES["replace_multiplier"]
DOUBLE_BUILD_COST: int = TABLES["double_build_cost"]
REPEAT_ROLE_COST: dict[str, int] = dict(TABLES["repeat_role_cost"])
TASKMASTER_BUYBACK_COST: int = TABLES["taskmaster_buyback_cost"]
ROW_POINTS: tuple[int, ...] = tuple(TABLES["row_points"])
TOWER_POINTS: int = TABLES["tower_points"]
BUYBACK_CHIP_POINTS: tuple[int, ...] = tuple(TABLES["buyback_chip_points"])
LEAST_REGION_MULTIPLIER: int = TABLES["least_region_multiplier"]
TREASURE_BONUS: int = TABLES["treasure_bonus"]
JADE_BONUS: int = TABLES["jade_bonus"]
WORKERS_BONUS: int = TABLES["workers_bonus"]
INCOME: int = TABLES["income"]
COLLECT_JADE: int = TABLES["collect_jade"]
TREASURE_PER_EXTRA_JADE: int = TABLES["treasure_per_extra_jade"]
CONVICTS_COLLECTED: int = TABLES["convicts_collected"]
LABORERS_FOR_CONVICTS: int = TABLES["laborers_for_convicts"]
STARTING_JADE: int = TABLES["starting_jade"]
FAVOR_DEAL: int = TABLES["favor_deal"]
FAVOR_KEEP: int = TABLES["favor_keep"]
REGIONS_BY_PLAYERS: dict[int, int] = {int(k): v for k, v in TABLES["regions_by_players"].items()}
GOVERNOR_BLOCKS_BY_PLAYERS: dict[int, int] = {
    int(k): v for k, v in TABLES["governor_blocks_by_players"].items()
}
COMPONENTS: dict[str, int] = dict(TABLES["components"])
MAX_BID: int = TABLES["max_bid"]  # the largest one-decision bid (the BID action family: 0..MAX_BID)
BID_BASE: int = MAX_BID + 1  # a bid above MAX_BID Jade is entered as digits in this base
TURNS_PER_ROUND: int = TABLES["turns_per_round"]  # action-phase turns of each player a round
FAVOR_DRAW_OPTIONS: tuple[tuple[int, int], ...] = tuple(
    (draw, keep) for draw, keep in TABLES["favor_draw_options"]
)  # Draw Favor Cards: (draw, keep) choices
TREASURE_CONVICTS: int = TABLES["treasure_convicts"]  # Convicts Collect a Treasure sends to prisons
MAX_PURCHASE: int = len(PURCHASE_COST) - 1  # Recruit / Buy: 1..MAX_PURCHASE at a time

MIN_PLAYERS, MAX_PLAYERS = 2, 4
PLAYER_COUNTS = tuple(range(MIN_PLAYERS, MAX_PLAYERS + 1))  # the table sizes the game is for
MAX_REGIONS = 4  # three regions for four players, plus the Friendly variant's extra one
MAX_FAVOR_CARDS = 36  # the box holds 36 favor cards; the action table has a slot for each
