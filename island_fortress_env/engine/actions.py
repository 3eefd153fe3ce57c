"""The flat action table: every decision of the game is one id in a single ``Discrete(N)``.

A compound move is a short sequence of small decisions (play Builder / Build Wall, then
"build 2", then a cell, then a cell, then how many Laborers). Each family below owns a
contiguous slice of ids; the state's pending decision says which families are legal.
``ACTION_FAMILIES`` is the one table that drives ``action_to_string``, the README table and
the human prompt.
"""

from __future__ import annotations

from dataclasses import dataclass

from .tables import (
    BID_BASE,
    CONVICTS_COLLECTED,
    DOUBLE_BUILD_COST,
    FAVOR_DRAW_OPTIONS,
    MAX_BID,
    MAX_FAVOR_CARDS,
    MAX_PURCHASE,
    MAX_REGIONS,
    PURCHASE_COST,
    TASKMASTER_BUYBACK_COST,
    TREASURE_CONVICTS,
)
from .wall import MAX_CELLS

# Role cards, in the order of the printed set.
RECRUITER, PLANNER, BUILDER, TREASURER, TASKMASTER = range(5)
ROLE_NAMES = ("Recruiter", "Planner", "Builder", "Treasurer", "Taskmaster")
ROLE_KEYS = ("recruiter", "planner", "builder", "treasurer", "taskmaster")
ALL_ROLES = (1 << 5) - 1

# Role actions ("ops"). The first eleven can be repeated by Taskmaster B.
(
    OP_RECRUIT,
    OP_COLLECT_CONVICTS,
    OP_COLLECT_PRISON,
    OP_BUY_BLOCKS,
    OP_DRAW_FAVORS,
    OP_REMOVE_REINFORCEMENT,
    OP_BUILD,
    OP_PLAY_FAVOR,
    OP_REPLACE,
    OP_COLLECT_JADE,
    OP_COLLECT_TREASURE,
    OP_MOVE_TASKMASTER,
) = range(12)
NUM_OPS = 12
NUM_REPEATABLE = 11
OP_CARD = (
    RECRUITER, RECRUITER, RECRUITER,
    PLANNER, PLANNER, PLANNER,
    BUILDER, BUILDER, BUILDER,
    TREASURER, TREASURER,
    TASKMASTER,
)  # fmt: skip
OP_LETTER = ("A", "B", "C", "A", "B", "C", "A", "B", "C", "A", "B", "A")
OP_NAMES = (
    "Recruit Laborers",
    f"Collect {CONVICTS_COLLECTED} Convicts",
    "Collect from Prison",
    "Buy Wall Blocks",
    "Draw Favor Cards",
    "Remove a Reinforcement",
    "Build Wall",
    "Play a Completed Favor Card",
    "Replace a Built Block",
    "Collect Jade",
    "Collect a Treasure",
    "Move the Taskmaster",
)

# Unordered pairs of distinct prisons, for Collect a Treasure.
PRISON_PAIRS = tuple((a, b) for a in range(MAX_REGIONS) for b in range(a + 1, MAX_REGIONS))

MAX_WORKERS = 16  # two level-4 blocks, or replacing a level-4 block


@dataclass(frozen=True)
class Family:
    name: str
    start: int
    size: int
    meaning: str

    def __contains__(self, action: int) -> bool:
        return self.start <= action < self.start + self.size


_families: list[Family] = []


def _family(name: str, size: int, meaning: str) -> int:
    start = _families[-1].start + _families[-1].size if _families else 0
    _families.append(Family(name, start, size, meaning))
    return start


PASS = _family("pass", 1, "Pass: only when nothing else is legal (never seen in a normal game)")
END_TURN = _family("end_turn", 1, "End the turn (declining buyback / Governor block placement)")
BUYBACK_TASKMASTER = _family(
    "buyback_taskmaster",
    1,
    f"Pay {TASKMASTER_BUYBACK_COST} Jade to take the Taskmaster card back and act again",
)
BUYBACK_CHIP = _family(
    "buyback_chip", 1, "Spend a Buyback Chip to take the card just played back and act again"
)
KEEP_FAVOR = _family("keep_favor", MAX_FAVOR_CARDS, "Keep favor card #i (setup deal or Draw Favor Cards)")
BID = _family(
    "bid",
    MAX_BID + 1,
    f"Petition bid of b Jade (sealed); above {MAX_BID} Jade held, one base-{BID_BASE} digit of the bid",
)
ROLE = _family("role", NUM_OPS, "Play the role card and take this action (card, option A/B/C)")
REPEAT = _family(
    "repeat",
    NUM_REPEATABLE,
    "Taskmaster B: pay the Repeat cost and repeat this action of a card on the table",
)
_COUNTS = f"k = 1..{MAX_PURCHASE}, cost {'/'.join(map(str, PURCHASE_COST[1:]))} Jade"
RECRUIT_COUNT = _family("recruit", MAX_PURCHASE, f"Recruit k Laborers ({_COUNTS})")
BUY_COUNT = _family("buy_blocks", MAX_PURCHASE, f"Buy k Wall Blocks ({_COUNTS})")
DRAW_COUNT = _family(
    "draw",
    len(FAVOR_DRAW_OPTIONS),
    "Declare the draw: " + ", or ".join(f"{d} keep {k}" for d, k in FAVOR_DRAW_OPTIONS),
)
BUILD_COUNT = _family("build_count", 2, f"Build 1 block, or 2 blocks for {DOUBLE_BUILD_COST} Jade")
CELL = _family(
    "cell", MAX_CELLS, "A wall cell (build, replace, remove or place a reinforcement): region*17 + k"
)
GOVERNOR = _family("governor", MAX_CELLS, "Place the Governor block on this cell (free, any region)")
LABORERS = _family("laborers", MAX_WORKERS + 1, "Use L Laborers (the rest of the Workers are Convicts)")
MOVE_REGION = _family("move", MAX_REGIONS, "Move the Taskmaster to region r")
PRISON_PAIR = _family(
    "prisons", len(PRISON_PAIRS), f"Send the {TREASURE_CONVICTS} Convicts to this pair of prisons"
)
PLAY_FAVOR = _family("play_favor", MAX_FAVOR_CARDS, "Play completed favor card #i")
TRADE_JADE = _family("trade_jade", 1, "Favor Trade-in: discard a favor card for 1 Jade")
TRADE_CONVICT = _family("trade_convict", 1, "Favor Trade-in: discard a favor card for 1 Convict")
TRADE_DONE = _family("trade_done", 1, "Favor Trade-in: stop trading")

ACTION_FAMILIES: tuple[Family, ...] = tuple(_families)
NUM_ACTIONS: int = ACTION_FAMILIES[-1].start + ACTION_FAMILIES[-1].size


def family_of(action: int) -> Family:
    for fam in ACTION_FAMILIES:
        if action in fam:
            return fam
    raise ValueError(f"action {action} is outside the action space 0..{NUM_ACTIONS - 1}")


def op_label(op: int) -> str:
    return f"{ROLE_NAMES[OP_CARD[op]]} {OP_LETTER[op]}: {OP_NAMES[op]}"
