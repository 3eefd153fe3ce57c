"""The observation's features as data: every wall plane, every scaled number and its divisor,
every card row, in the order of the vector.

The one declaration of the observation's layout: the environment's encoder
(``env/observation.py``) scales by these divisors, and the C++ core's encoder
(``core/src/observation.cpp``) by the same divisors, written into a header generated from this
module at build time (``core/codegen.py``). Standard library only, like the rest of the engine.
"""

from __future__ import annotations

from typing import NamedTuple

from . import tables
from .actions import MAX_WORKERS, OP_NAMES, ROLE_NAMES
from .decisions import Decision

MAX_PLAYERS = tables.MAX_PLAYERS
MAX_REGIONS = tables.MAX_REGIONS
CARDS = tables.MAX_FAVOR_CARDS
# The supplies shown in the global features, in order (keys of ``tables.COMPONENTS``).
SUPPLY_KEYS = ("jade", "treasure", "buyback_chips", "reinforcements", "laborers", "convicts")

# Wall planes, each a 4 x 20 grid (level-major, left to right, level 1 first).
WALL_PLANES = (
    "cell exists",
    "empty and buildable now",
    "my block",
    "block of opponent 1 (next in turn order)",
    "block of opponent 2",
    "block of opponent 3",
    "Governor block",
    "reinforced",
    "my Taskmaster's region",
    "opponent 1's Taskmaster's region",
    "opponent 2's Taskmaster's region",
    "opponent 3's Taskmaster's region",
)


class Feature(NamedTuple):
    """One scaled number of the observation: the raw count divided by ``divisor`` (1 for a
    flag or a one-hot). The label (README table, tests) is derived from the fields."""

    name: str
    divisor: int = 1
    note: str = ""  # shown in parentheses after the label
    show_divisor: bool = True  # False: the note says what the divisor is
    option: str | None = None  # a game option (``GameConfig`` field) shown as this flag

    @property
    def label(self) -> str:
        text = self.name
        if self.divisor != 1 and self.show_divisor:
            text += f" / {self.divisor}"
        return f"{text} ({self.note})" if self.note else text


_BLOCKS = tables.COMPONENTS["blocks_per_player"]

# Per-player features, for me then each opponent in turn order.
PLAYER_FEATURE_SPECS: tuple[Feature, ...] = (
    Feature("seat present"),
    Feature("Jade", 20),
    Feature("Laborers", 10),
    Feature("Convicts", 10),
    Feature("Wall Blocks in supply", 10),
    Feature("Wall Blocks left in stockpile", _BLOCKS),
    Feature("Buyback Chips", 4),
    Feature("Treasure", 20),
    Feature("score", 50),
    Feature("favor income bonus", 3),
    Feature("favor petition bonus", 3),
    Feature("favor cards in hand", 5),
    Feature("favor cards played", 5),
    Feature("blocks on the wall", _BLOCKS),
    Feature("turns taken this round", tables.TURNS_PER_ROUND),
    Feature("last revealed petition bid", 20),
    Feature("holds the Governor marker"),
    Feature("holds an unplaced Governor block"),
    Feature("is the player to move"),
    *(Feature(f"role in hand: {r}") for r in ROLE_NAMES),
    *(Feature(f"role on table: {r}") for r in ROLE_NAMES),
    *(Feature(f"Taskmaster in region {r + 1}") for r in range(MAX_REGIONS)),
    *(Feature(f"blocks in region {r + 1}", 10) for r in range(MAX_REGIONS)),
)

# The global and decision context. The options shown as flags (``option``) are consecutive.
GLOBAL_FEATURE_SPECS: tuple[Feature, ...] = (
    Feature("round", 12),
    *(Feature(f"{n} players") for n in range(2, MAX_PLAYERS + 1)),
    *(Feature(f"{r} regions") for r in range(2, MAX_REGIONS + 1)),
    Feature("variant: no Replace", option="no_replace"),
    Feature("variant: Favor Trade-in", option="favor_trade_in"),
    Feature("unlimited components", option="unlimited_components"),
    Feature("Governor blocks left", max(tables.GOVERNOR_BLOCKS_BY_PLAYERS.values())),
    Feature("favor deck size", CARDS),
    *(
        Feature(f"supply: {k}", tables.COMPONENTS[k], "fraction of the box", show_divisor=False)
        for k in SUPPLY_KEYS
    ),
    *(Feature(f"prison {r + 1}: Jade", 5) for r in range(MAX_REGIONS)),
    *(Feature(f"prison {r + 1}: Convicts", 10) for r in range(MAX_REGIONS)),
    *(Feature(f"decision: {d.label}") for d in Decision),
    *(Feature(f"action in progress: {name}") for name in OP_NAMES),
    Feature("actions taken this turn", 2),
    Feature("buyback used this turn"),
    Feature("blocks left to place in this build", 2),
    Feature("Workers this build needs", MAX_WORKERS),
    Feature("Workers to assign", MAX_WORKERS),
    # Also the base-101 digits of a sealed bid still to enter after this one (docs/RULES.md E3);
    # its label is the one in trained policies' layout signature, which must not change.
    Feature("favor cards left to keep", tables.FAVOR_KEEP),
    Feature("my sealed bid this round", 20, "mine only"),
    Feature("I have bid this round"),
)
OBSERVED_OPTIONS = tuple(f.option for f in GLOBAL_FEATURE_SPECS if f.option is not None)

# The card rows, each one bit per favor card.
PRIVATE_BLOCKS = (
    ("my favor hand", CARDS),
    ("favor cards I am choosing from (setup deal or draw)", CARDS),
    ("my hand cards whose pattern is complete now", CARDS),
    ("favor cards played by anyone", CARDS),
)
