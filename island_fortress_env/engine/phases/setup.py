"""Setup: the deal (5 favor cards each, keep 3) and the keep decision it shares with Draw Favor Cards."""

from __future__ import annotations

from collections.abc import Sequence

from .. import actions as A
from .. import rng, tables
from ..decisions import Decision
from ..events import K_KEPT, K_SETUP
from ..fields import StateFields
from ..wall import iter_bits


class SetupPhase(StateFields):
    """Dealing and keeping favor cards (the keep decision also ends Planner B)."""

    __slots__ = ()

    def _setup(self) -> None:
        cfg = self.cfg
        deck = list(range(len(self.game.deck)))
        self.rng = rng.shuffle(self.rng, deck)
        self.deck = deck
        for p in range(self.n):
            # docs/RULES.md E2: Quicker Play resources and extra Jade come from the supplies (a short
            # supply gives what is left); start_blocks come from the player's own 18.
            self.jade[p] = self._take_jade(tables.STARTING_JADE + cfg.extra_jade)
            self._gain_laborers(p, cfg.start_laborers)
            self._gain_convicts(p, cfg.start_convicts)
            self.stock_blocks[p] -= cfg.start_blocks
            self.blocks[p] = cfg.start_blocks
            hand = 0
            for _ in range(tables.FAVOR_DEAL):
                hand |= 1 << self.deck.pop()
            self.drawn[p] = hand
        self._log.append((K_SETUP, self.n, self.geo.regions))
        self.decision = Decision.KEEP_DEALT_FAVORS
        self.current = 0
        self.keep_left = tables.FAVOR_KEEP

    def _legal_keep(self, p: int) -> Sequence[int]:
        return [A.KEEP_FAVOR + i for i in iter_bits(self.drawn[p])]

    def _on_keep(self, p: int, a: int) -> None:
        # docs/RULES.md E1: the setup keep is decided seat by seat (seat 0 first) as three "keep card"
        # decisions; the two returned cards go back to the deck, which is reshuffled once every seat has
        # kept. C13: the keep is private.
        card = a - A.KEEP_FAVOR
        self.drawn[p] &= ~(1 << card)
        self.favor_hand[p] |= 1 << card
        self.keep_left -= 1
        if self.keep_left:
            return
        rest = list(iter_bits(self.drawn[p]))
        self.drawn[p] = 0
        if self.decision == Decision.KEEP_DEALT_FAVORS:
            self.deck.extend(rest)
            self._log.append((K_KEPT, p, tables.FAVOR_KEEP))
            if p + 1 < self.n:
                self.current = p + 1
                self.keep_left = tables.FAVOR_KEEP
            else:
                self.rng = rng.shuffle(self.rng, self.deck)
                self._start_round()
        else:
            self.rng = rng.shuffle(self.rng, rest)  # unkept cards go under, in no telling order
            self.deck[:0] = rest
            self._finish_action()
