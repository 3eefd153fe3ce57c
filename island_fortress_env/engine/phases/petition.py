"""The Petition phase: income, the sealed bids (docs/RULES.md E3) and the Governor marker."""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any, NamedTuple

from .. import actions as A
from .. import rng, tables
from ..decisions import Decision
from ..events import K_BID_PLACED, K_INCENTIVE, K_INCOME, K_PETITION, K_ROUND, ScoreReason
from ..fields import StateFields


class TieBreak(str, Enum):
    """How the petition's winner was found (docs/RULES.md E4)."""

    NONE = "none"  # one seat has the highest total
    MORE_JADE = "more_jade"  # of the seats tied on the total, one bid the most Jade
    RANDOM = "random"  # still tied in round 1 (no marker yet): drawn at random
    CLOCKWISE = "clockwise"  # still tied: the marker moves clockwise from its holder, never staying


class PetitionOrder(NamedTuple):
    """The petition's result before any draw: the highest total, the seats that reach it, those
    of them who bid the most Jade, how the tie (if any) is broken and the winner (-1 when it is
    drawn at random among ``contenders``)."""

    best: int
    tied: tuple[int, ...]
    contenders: tuple[int, ...]
    tie_break: TieBreak
    winner: int


def petition_order(bids: Sequence[int], totals: Sequence[int], holder: int) -> PetitionOrder:
    """Who wins the petition with these sealed ``bids`` and their ``totals`` (bid + favor petition
    bonus), the Governor marker held by ``holder`` (-1 in round 1) (docs/RULES.md E4): the highest
    total, then the most Jade bid, then clockwise from the holder (at random in round 1)."""
    n = len(bids)
    best = max(totals)
    tied = tuple(p for p in range(n) if totals[p] == best)
    if len(tied) == 1:
        return PetitionOrder(best, tied, tied, TieBreak.NONE, tied[0])
    most_jade = max(bids[p] for p in tied)
    contenders = tuple(p for p in tied if bids[p] == most_jade)
    if len(contenders) == 1:
        return PetitionOrder(best, tied, contenders, TieBreak.MORE_JADE, contenders[0])
    if holder < 0:  # round 1: the tie is split at random
        return PetitionOrder(best, tied, contenders, TieBreak.RANDOM, -1)
    # the marker moves clockwise and never stays with its holder
    winner = next((holder + k) % n for k in range(1, n) if (holder + k) % n in contenders)
    return PetitionOrder(best, tied, contenders, TieBreak.CLOCKWISE, winner)


class PetitionPrize(NamedTuple):
    """What winning the petition gives besides the Governor marker and the first turn of the
    round: a Governor block to place (while the stock has one) and, in round 1, the First Round
    Incentive (its kind; None when the variant is off or after round 1)."""

    governor_block: bool
    incentive: str | None


def petition_prize(state: StateFields | Any) -> PetitionPrize:
    """What the winner of the petition now being bid takes (``_resolve_petition``; the incentive:
    docs/RULES.md E5). Public fields only: the C++ core's state is answered the same way."""
    incentive = state.cfg.first_round_incentive if state.round == 1 else None
    return PetitionPrize(state.gov_stock > 0, incentive or None)


class PetitionPhase(StateFields):
    """Round start (income), bids entered one digit at a time, and their resolution."""

    __slots__ = ()

    def _start_round(self) -> None:
        self.round += 1
        self._log.append((K_ROUND, self.round))
        start = max(self.holder, 0)
        for i in range(self.n):  # income, paid in turn order from the marker (docs/RULES.md C8)
            p = (start + i) % self.n
            got = self._take_jade(tables.INCOME + self.income_bonus[p])
            self.jade[p] += got
            self._log.append((K_INCOME, p, got))
        self.bids = [0] * self.n
        self.order = [(start + i) % self.n for i in range(self.n)]
        self.order_pos = 0
        self.decision = Decision.PETITION_BID
        self._begin_bid(self.order[0])

    def _begin_bid(self, p: int) -> None:
        """``p`` seals a bid: one decision per base-101 digit of the Jade held (one decision
        for up to 100 Jade), most significant first (docs/RULES.md E3)."""
        self.current = p
        jade = self.jade[p]
        digits = 0
        while jade > tables.MAX_BID:
            jade //= tables.BID_BASE
            digits += 1
        self.bid_digits_left = digits

    def _legal_bid_digits(self, p: int) -> range:
        """Digits that keep the bid, completed with zeros, within the Jade held."""
        place = tables.BID_BASE**self.bid_digits_left
        high = min(self.jade[p] // place - self.bids[p] * tables.BID_BASE, tables.MAX_BID)
        return range(A.BID, A.BID + high + 1)

    def _on_bid(self, p: int, a: int) -> None:
        self.bids[p] = self.bids[p] * tables.BID_BASE + a - A.BID
        if self.bid_digits_left:
            self.bid_digits_left -= 1
            return
        self._log.append((K_BID_PLACED, p))
        self.order_pos += 1
        if self.order_pos < self.n:
            self._begin_bid(self.order[self.order_pos])
        else:
            self._resolve_petition()

    def _resolve_petition(self) -> None:
        n = self.n
        bids = self.bids
        totals = [bids[p] + self.petition_bonus[p] for p in range(n)]
        # docs/RULES.md E4: highest total, then most hand Jade, then the marker moves clockwise from its
        # holder and never stays; in round 1 the tie is split uniformly at random by the game's seeded
        # generator (E24).
        order = petition_order(bids, totals, self.holder)
        winner = order.winner
        if order.tie_break is TieBreak.RANDOM:
            self.rng, i = rng.below(self.rng, len(order.contenders))
            winner = order.contenders[i]
        self.last_bids = tuple(bids)
        self.bids = [0] * n
        self._log.append((K_PETITION, self.last_bids, tuple(totals), winner))
        paid = bids[winner]
        self.jade[winner] -= paid
        self.sup_jade += paid
        self.holder = winner
        prize = petition_prize(self)
        if prize.governor_block:
            self.gov_stock -= 1
            self.gov_in_hand = True
        r = self.region[winner]
        self._to_prison(r, jade=1)
        if prize.incentive:
            self._first_round_incentive(winner)
        for p in range(n):
            self.roles_hand[p] = A.ALL_ROLES
            self.roles_table[p] = 0
            self.turns_taken[p] = 0
        self.turn_index = 0
        self._start_turn(winner)

    def _first_round_incentive(self, p: int) -> None:
        # docs/RULES.md E5: First Round Incentive: wall_block comes from the winner's own stockpile (none
        # if empty); treasure is worth 1 VP like every Treasure.
        kind = self.cfg.first_round_incentive
        if kind == "wall_block":
            if self.stock_blocks[p] > 0:
                self.stock_blocks[p] -= 1
                self.blocks[p] += 1
        elif kind == "buyback_chip":
            self._gain_chip(p)
        elif kind == "treasure":
            self._gain_treasure(p, 1, ScoreReason.FIRST_ROUND_INCENTIVE)
        self._log.append((K_INCENTIVE, p, kind))
