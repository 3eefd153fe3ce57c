"""The end of the game: the completed wall, Favor Trade-in, final scoring and the winners."""

from __future__ import annotations

from collections.abc import Sequence

from .. import actions as A
from .. import scoring
from ..decisions import TERMINAL, Decision
from ..events import K_GAME_OVER, K_TRADED, K_WALL_COMPLETE, TradeReward
from ..fields import StateFields


class GameEnd(StateFields):
    """Game end (docs/RULES.md C15, E17-E21)."""

    __slots__ = ()

    def _end_game(self) -> None:
        if self.gov_in_hand:
            self.gov_in_hand = False
            self.gov_box += 1
        # docs/RULES.md E18: the builder of the last block takes every prison's Jade and Convicts before
        # final scoring; a Governor block still in hand goes to the box (above). C15: the game ends after
        # the current action when the last wall cell is filled, otherwise at the end of the round in which
        # the last Governor block left the stockpile.
        w = self.wall_completer
        if w >= 0:  # the builder of the last block empties every prison
            got_jade = sum(self.prison_jade)
            got_convicts = sum(self.prison_convicts)
            self.jade[w] += got_jade
            self.convicts[w] += got_convicts
            self.prison_jade = [0] * self.geo.regions
            self.prison_convicts = [0] * self.geo.regions
            self._log.append((K_WALL_COMPLETE, w, got_jade, got_convicts))
        self.in_action = False
        # docs/RULES.md E20: Favor Trade-in: from the last petition winner clockwise, each player with
        # cards in hand trades one card at a time for 1 Jade or 1 Convict (offered only while the supply
        # has one) or stops.
        if self.cfg.favor_trade_in:
            start = max(self.holder, 0)
            self.order = [(start + i) % self.n for i in range(self.n)]
            self.order_pos = -1
            self._next_trader()
        else:
            self._final_scoring()

    def _next_trader(self) -> None:
        self.order_pos += 1
        while self.order_pos < self.n and not self.favor_hand[self.order[self.order_pos]]:
            self.order_pos += 1
        if self.order_pos == self.n:
            self._final_scoring()
        else:
            self.decision = Decision.FAVOR_TRADE_IN
            self.current = self.order[self.order_pos]

    def _legal_trade(self, p: int) -> Sequence[int]:
        """Favor Trade-in: a card for 1 Jade or 1 Convict while the supply has one; or stop."""
        out = []
        if self.sup_jade > 0 or self.unlimited:
            out.append(A.TRADE_JADE)
        if self.sup_convicts > 0 or self.unlimited:
            out.append(A.TRADE_CONVICT)
        out.append(A.TRADE_DONE)
        return out

    def _on_trade(self, p: int, a: int) -> None:
        if a == A.TRADE_DONE:
            self._next_trader()
            return
        hand = self.favor_hand[p]
        low = hand & -hand
        self.favor_hand[p] = hand ^ low
        self.favor_discard |= low
        if a == A.TRADE_JADE:
            self.jade[p] += self._take_jade(1)
        else:
            self._gain_convicts(p, 1)
        self._log.append((K_TRADED, p, TradeReward.JADE if a == A.TRADE_JADE else TradeReward.CONVICT))
        if not self.favor_hand[p]:
            self._next_trader()

    def _final_scoring(self) -> None:
        geo = self.geo
        # docs/RULES.md E19: end-game order: Favor Trade-in (variant), then uncompleted rows (all regions,
        # levels 1-3), then uncompleted levels (Treasure + 1 VP to the majority), then Buyback Chips,
        # least-built region, Treasure, Jade, Workers.
        for r in range(geo.regions):  # uncompleted rows and levels score as if completed
            for level in range(3):
                mask = geo.row_mask[r][level]
                if self.occ & mask != mask:
                    self._score_row(r, level, completed=False)
        for level in range(3):
            mask = geo.level_mask[level]
            if self.occ & mask != mask:
                self._score_level(level, completed=False)
        workers = [self.laborers[p] + self.convicts[p] for p in range(self.n)]
        for p, pts, reason in scoring.end_bonuses(
            self.chips, self.own, geo.region_mask, self.treasure, self.jade, workers
        ):
            self._score(p, pts, reason)
        self.winners = scoring.winners(
            self.score, [o.bit_count() for o in self.own], self.jade, self.treasure
        )
        self._log.append((K_GAME_OVER, tuple(self.score), tuple(self.winners)))
        self.decision = Decision.GAME_OVER
        self.current = TERMINAL
