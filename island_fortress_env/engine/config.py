"""GameConfig: the table size, the variants and the component limits, validated once."""

from __future__ import annotations

import dataclasses
import operator
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from . import tables

INCENTIVES = ("wall_block", "buyback_chip", "treasure")


class ConfigError(ValueError):
    """A game configuration that cannot describe a legal game."""


@dataclass(frozen=True)
class GameConfig:
    """Everything that fixes which game is played. Defaults are the rulebook's standard game.

    Variants (all off by default):
      * Friendly: ``no_replace`` removes Builder action C; ``extra_region`` adds one region
        (never more regions than players).
      * Quicker Play: ``extra_jade``, ``start_laborers``, ``start_convicts``, ``start_blocks``.
      * First Round Incentive: ``first_round_incentive`` in ``INCENTIVES``.
      * Favor Trade-in: ``favor_trade_in``.
    ``unlimited_components`` makes Jade, Treasure, Buyback Chips, Reinforcements, Laborers and
    Convicts inexhaustible; wall blocks, Governor blocks and favor cards stay finite.
    ``favor_deck`` is a path to a deck file (JSON) replacing the shipped stand-in deck.

    These fields are the one declaration of the game's options: the C++ core's ``Config`` is
    generated from them (``core/codegen.py``: a bool stays a bool, an int is a 64-bit integer,
    an option with ``choices`` is the index of its choice, -1 for None, and ``core: "given"``
    passes whether the option is set), and the core receives every field by name.
    """

    num_players: int = 3
    no_replace: bool = False
    extra_region: bool = False
    extra_jade: int = 0
    start_laborers: int = 0
    start_convicts: int = 0
    start_blocks: int = 0
    first_round_incentive: str | None = field(default=None, metadata={"choices": INCENTIVES})
    favor_trade_in: bool = False
    unlimited_components: bool = False
    favor_deck: str | None = field(default=None, metadata={"core": "given"})

    def __post_init__(self) -> None:
        def fail(name: str, why: str) -> None:
            raise ConfigError(f"invalid game config: {name}={getattr(self, name)!r}: {why}")

        for f in fields(self):
            value = getattr(self, f.name)
            if f.type == "bool" and not isinstance(value, bool):
                fail(f.name, "must be true or false")
            if f.type == "int":
                try:  # any integer type (numpy's included), never a bool, float or string
                    if isinstance(value, bool):
                        raise TypeError
                    object.__setattr__(self, f.name, operator.index(value))
                except TypeError:
                    fail(f.name, "must be an integer")
        if not tables.MIN_PLAYERS <= self.num_players <= tables.MAX_PLAYERS:
            fail("num_players", f"Island Fortress is for {tables.MIN_PLAYERS}-{tables.MAX_PLAYERS} players")
        if self.extra_region and self.num_regions > self.num_players:
            fail("extra_region", "the Friendly variant never uses more regions than players")
        for name in ("extra_jade", "start_laborers", "start_convicts", "start_blocks"):
            if getattr(self, name) < 0:
                fail(name, "must be >= 0")
        if self.start_blocks > tables.COMPONENTS["blocks_per_player"]:
            fail("start_blocks", f"a colour has only {tables.COMPONENTS['blocks_per_player']} blocks")
        if self.first_round_incentive is not None and self.first_round_incentive not in INCENTIVES:
            fail("first_round_incentive", f"must be one of {INCENTIVES} or None")
        if isinstance(self.favor_deck, os.PathLike):
            object.__setattr__(self, "favor_deck", os.fspath(self.favor_deck))
        if self.favor_deck is not None and not isinstance(self.favor_deck, str):
            fail("favor_deck", "must be a path to a deck file")

    @property
    def num_regions(self) -> int:
        return tables.REGIONS_BY_PLAYERS[self.num_players] + (1 if self.extra_region else 0)

    @property
    def governor_blocks(self) -> int:
        return tables.GOVERNOR_BLOCKS_BY_PLAYERS[self.num_players]

    @property
    def variants(self) -> dict[str, Any]:
        """The options that differ from the standard game (for logs and checkpoints)."""
        default = GameConfig(num_players=self.num_players)
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name != "num_players" and getattr(self, f.name) != getattr(default, f.name)
        }

    @classmethod
    def from_dict(cls, options: Mapping[str, Any], also_known: Iterable[str] = ()) -> GameConfig:
        """Build from keyword options, naming any unknown key instead of ignoring it.

        ``also_known``: the options a caller takes besides the game's own (an environment's
        ``reward``, for instance), listed with the game's when an unknown option is named."""
        check_option_names(options, (*option_names(), *also_known))
        return cls(**dict(options))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def option_names() -> tuple[str, ...]:
    """The game's options: ``GameConfig``'s fields, ``num_players`` first."""
    return tuple(f.name for f in fields(GameConfig))


def check_option_names(options: Iterable[str], known: Iterable[str]) -> None:
    """Raise ``ConfigError`` naming every option not in ``known`` and listing all of ``known``."""
    accepted = set(known)
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise ConfigError(f"unknown option(s) {unknown}; known options: {sorted(accepted)}")
