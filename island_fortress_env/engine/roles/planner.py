"""The Planner card: A Buy Wall Blocks, B Draw Favor Cards, C Remove a Reinforcement.

The cards drawn by B are kept with the keep decision of the setup (``phases/setup.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import actions as A
from .. import tables
from ..decisions import Decision
from ..events import K_BOUGHT, K_DREW, K_REINFORCEMENT_REMOVED
from ..fields import StateFields
from ..wall import iter_bits


class Planner(StateFields):
    """Each action: how it starts, its legal choices and their effect."""

    __slots__ = ()

    def _start_buy(self, p: int) -> None:
        """Planner A (Buy Wall Blocks): a Convict goes to the prison, then choose how many."""
        self._to_prison(self.region[p])
        self.decision = Decision.BUY_BLOCKS_COUNT

    def _legal_buy(self, p: int) -> Sequence[int]:
        """Planner A: 1..5 blocks the stockpile holds and the player can pay for."""
        return [
            A.BUY_COUNT + k - 1
            for k in range(1, tables.MAX_PURCHASE + 1)
            if k <= self.stock_blocks[p] and tables.PURCHASE_COST[k] <= self.jade[p]
        ]

    def _on_buy(self, p: int, a: int) -> None:
        k = a - A.BUY_COUNT + 1
        cost = tables.PURCHASE_COST[k]
        self.jade[p] -= cost
        self.sup_jade += cost
        self.stock_blocks[p] -= k
        self.blocks[p] += k
        self._log.append((K_BOUGHT, p, k, cost))
        self._finish_action()

    def _start_draw(self, p: int) -> None:
        """Planner B (Draw Favor Cards): declare the draw first."""
        self.decision = Decision.DRAW_FAVORS_COUNT

    def _legal_draw(self, p: int) -> Sequence[int]:
        """Planner B: the draw options the deck is long enough for."""
        # docs/RULES.md C10: declare 3 (keep 2) or 5 (keep 1) first; an option is illegal when the deck is
        # shorter.
        return [
            A.DRAW_COUNT + i
            for i, (draw, _) in enumerate(tables.FAVOR_DRAW_OPTIONS)
            if draw <= len(self.deck)
        ]

    def _on_draw(self, p: int, a: int) -> None:
        draw, keep = tables.FAVOR_DRAW_OPTIONS[a - A.DRAW_COUNT]
        for _ in range(draw):
            self.drawn[p] |= 1 << self.deck.pop()
        # docs/RULES.md E9: unkept drawn favor cards go under the deck in an order shuffled by the game's
        # generator (when the keep ends).
        self.keep_left = keep
        self._log.append((K_DREW, p, draw, keep))
        self.decision = Decision.KEEP_DRAWN_FAVORS

    def _start_remove(self, p: int) -> None:
        """Planner C (Remove a Reinforcement)."""
        self.decision = Decision.REMOVE_REINFORCEMENT_CELL

    def _legal_remove(self, p: int) -> Sequence[int]:
        """Planner C: any Reinforcement in the region of the player's Taskmaster."""
        geo = self.geo
        mask = self.reinf & geo.region_mask[self.region[p]]
        return sorted(A.CELL + geo.bit_cell[b] for b in iter_bits(mask))

    def _on_remove(self, p: int, a: int) -> None:
        bit = self.geo.cell_bits[a - A.CELL]
        self.reinf &= ~(1 << bit)
        self.sup_reinf += 1
        self._log.append((K_REINFORCEMENT_REMOVED, p, a - A.CELL))
        self._finish_action()
