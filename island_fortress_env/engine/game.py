"""``Game``: a validated configuration plus the immutable things every state of it shares.

A game holds its ``GameConfig``, the favor deck it deals, the wall's geometry, the component
totals (``UNLIMITED`` where a supply never runs out) and a memo of which favor cards a hand can
play. ``new_initial_state(seed)`` makes the engine's ``State`` (``state.py``); this module imports
no state: ``state.py`` names its ``State`` class here as it is imported, and the engine's package
imports it, so every ``Game`` makes states whichever module it was imported from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from . import tables
from .config import ConfigError, GameConfig
from .favors import FavorDeck, load_deck
from .protocol import StateProtocol
from .wall import WallGeometry, geometry, iter_bits

__all__ = ["UNLIMITED", "Game"]

UNLIMITED = 10**9  # where the ledger of an unlimited supply starts (docs/RULES.md C7)


class Game:
    """A validated configuration plus the immutable things every state shares."""

    # What ``new_initial_state`` calls: the engine's ``State`` class, set by ``state.py``.
    _state_type: ClassVar[Callable[[Game, int | None], StateProtocol]]

    def __init__(self, config: GameConfig | None = None, **options: Any) -> None:
        if config is None:
            config = GameConfig.from_dict(options)
        elif options:
            raise ConfigError("pass either a GameConfig or keyword options, not both")
        self.config = config
        self.num_players = config.num_players
        self.deck: FavorDeck = load_deck(config.favor_deck)
        need = tables.FAVOR_DEAL * config.num_players
        if len(self.deck) < need:
            raise ConfigError(
                f"invalid game config: favor deck {self.deck.name!r} has {len(self.deck)} cards, "
                f"but dealing {tables.FAVOR_DEAL} to {config.num_players} players needs {need}"
            )
        self.geometry: WallGeometry = geometry(config.num_regions)
        limit = (lambda n: UNLIMITED) if config.unlimited_components else (lambda n: n)
        comp = tables.COMPONENTS
        self.totals = {
            "jade": limit(comp["jade"]),
            "treasure": limit(comp["treasure"]),
            "buyback_chips": limit(comp["buyback_chips"]),
            "reinforcements": limit(comp["reinforcements"]),
            "laborers": limit(comp["laborers"]),
            "convicts": limit(comp["convicts"]),
            "blocks_per_player": comp["blocks_per_player"],
            "governor_blocks": config.governor_blocks,
            "favor_cards": len(self.deck),
        }
        self._playable: dict[tuple[int, int], int] = {}

    def new_initial_state(self, seed: int | None = None) -> StateProtocol:
        """A new game's first state: an engine ``State`` (``core.game.Game`` makes the core's)."""
        return Game._state_type(self, seed)

    def playable_cards(self, hand: int, blocks: int) -> int:
        """The cards of ``hand`` whose pattern is complete in ``blocks`` (a bit set of card ids).

        Memoised: a hand and a player's unreinforced blocks change on few steps, while the
        question is asked at every role choice and every observation.
        """
        key = (hand, blocks)
        found = self._playable.get(key)
        if found is None:
            cards = self.deck.cards
            found = 0
            for i in iter_bits(hand):
                if cards[i].matches(blocks):
                    found |= 1 << i
            if len(self._playable) >= 1 << 16:
                self._playable.clear()
            self._playable[key] = found
        return found

    def __repr__(self) -> str:
        return f"Game({self.config!r})"
