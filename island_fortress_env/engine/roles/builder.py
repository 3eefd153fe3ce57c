"""The Builder card: A Build Wall, B Play a Completed Favor Card, C Replace a Built Block."""

from __future__ import annotations

from collections.abc import Sequence

from .. import actions as A
from .. import tables
from ..checks import cheapest_build, replace_targets, replace_workers
from ..decisions import Decision
from ..events import K_BUILD, K_FAVOR_PLAYED, K_REINFORCED, K_REPLACED, K_WORKERS, ScoreReason
from ..fields import StateFields
from ..wall import WallGeometry, iter_bits

_FAVOR_CARD = ScoreReason.FAVOR_CARD


def laborers_lost(laborers: int) -> int:
    """Of the Laborers assigned to a build or a replace, half (rounded up) die."""
    return (laborers + 1) // 2


class Builder(StateFields):
    """Each action: how it starts, its legal choices and their effect; Workers pay for A and C."""

    __slots__ = ()

    def _start_build(self, p: int) -> None:
        """Builder A (Build Wall): a Convict goes to the prison, then 1 or 2 blocks."""
        self._to_prison(self.region[p])
        self.decision = Decision.BUILD_COUNT

    def _legal_build_count(self, p: int) -> Sequence[int]:
        return [A.BUILD_COUNT + c - 1 for c in (1, 2) if self._can_build(p, c, self.jade[p])]

    def _on_build_count(self, p: int, a: int) -> None:
        # docs/RULES.md C11: Build Wall with two blocks is one action: count, first cell, optionally the
        # Governor block, second cell, then the Workers for both together.
        count = a - A.BUILD_COUNT + 1
        if count == 2:
            self.jade[p] -= tables.DOUBLE_BUILD_COST
            self.sup_jade += tables.DOUBLE_BUILD_COST
        self.build_left = count
        self.build_need = 0
        self._log.append((K_BUILD, p, count, tables.DOUBLE_BUILD_COST if count == 2 else 0))
        self.decision = Decision.BUILD_CELL

    def _legal_build_cell(self, p: int) -> Sequence[int]:
        bits = self._build_cells(self.occ, p, self._workers(p) - self.build_need, self.build_left)
        return sorted(A.CELL + self.geo.bit_cell[b] for b in bits)

    def _on_build_cell(self, p: int, a: int) -> None:
        bit = self.geo.cell_bits[a - A.CELL]
        self.blocks[p] -= 1
        self.build_need += WallGeometry.workers_for(bit)
        self.build_left -= 1
        # docs/RULES.md E10: blocks of a Build land when their cell is chosen and everything they complete
        # scores then; the Workers are assigned after the last cell.
        self._place_block(p, bit, governor=False)
        if not self.build_left:
            self.worker_need = self.build_need
            self.decision = Decision.ASSIGN_LABORERS

    def _legal_laborers(self, p: int) -> Sequence[int]:
        """How many of the Workers needed are Laborers (the rest are Convicts)."""
        # docs/RULES.md E11: Workers are assigned as "L Laborers" (the rest Convicts): L ranges over
        # what the player holds; the requirement is exact.
        need = self.worker_need
        low = max(0, need - self.convicts[p])
        high = min(need, self.laborers[p])
        return range(A.LABORERS + low, A.LABORERS + high + 1)

    def _on_laborers(self, p: int, a: int) -> None:
        self._pay_workers(p, a - A.LABORERS)
        self._finish_action()

    def _pay_workers(self, p: int, laborers: int) -> None:
        """All assigned Convicts and half the assigned Laborers (rounded up) die (docs/RULES.md C11)."""
        convicts = self.worker_need - laborers
        dead_laborers = laborers_lost(laborers)
        self.convicts[p] -= convicts
        self.sup_convicts += convicts
        self.laborers[p] -= dead_laborers
        self.sup_laborers += dead_laborers
        self._log.append((K_WORKERS, p, laborers, convicts, dead_laborers))

    def _build_cells(self, occ: int, p: int, budget: int, left: int) -> list[int]:
        """Cells (bit indexes) where the next block of a build may go so the build can finish."""
        geo = self.geo
        region_mask = geo.region_mask[self.region[p]]
        candidates = geo.buildable(occ) & region_mask
        out = []
        for bit in iter_bits(candidates):
            need = WallGeometry.workers_for(bit)
            if need > budget:
                break  # bits ascend by level, so every later cell costs at least as much
            if left == 1:
                out.append(bit)
                continue
            # docs/RULES.md E6: the first block of two goes only where a second can follow, on a
            # cell that exists (however many Workers there are) and that the rest can pay for.
            second = cheapest_build(geo, occ | (1 << bit), region_mask)
            if second is not None and second <= budget - need:
                out.append(bit)
        return out

    def _can_build(self, p: int, count: int, jade: int) -> bool:
        if self.blocks[p] < count or (count == 2 and jade < tables.DOUBLE_BUILD_COST):
            return False
        return bool(self._build_cells(self.occ, p, self._workers(p), count))

    def _start_favor(self, p: int) -> None:
        """Builder B (Play a Completed Favor Card)."""
        self.decision = Decision.PLAY_FAVOR_CARD

    def _legal_favor(self, p: int) -> Sequence[int]:
        return [A.PLAY_FAVOR + i for i in self._playable_favors(p)]

    def _on_favor(self, p: int, a: int) -> None:
        card = a - A.PLAY_FAVOR
        self.favor_hand[p] &= ~(1 << card)
        self.favor_played[p] |= 1 << card  # laid on the table: public from now on
        self.favor_card = card
        self._log.append((K_FAVOR_PLAYED, p, card))
        # docs/RULES.md E12: choose the card, then the block of a matching pattern to reinforce, then the
        # rewards are paid; with no Reinforcement left in the stockpile the card is still played and no
        # token is placed.
        if self.sup_reinf > 0 or self.unlimited:
            self.decision = Decision.REINFORCE_CELL
        else:  # no Reinforcement left in the stockpile: none is placed (docs/RULES.md C7)
            self._favor_rewards(p, card)

    def _legal_reinforce(self, p: int) -> Sequence[int]:
        mask = self._favor_cells(p, self.favor_card)
        return sorted(A.CELL + self.geo.bit_cell[b] for b in iter_bits(mask))

    def _on_reinforce(self, p: int, a: int) -> None:
        bit = self.geo.cell_bits[a - A.CELL]
        self.reinf |= 1 << bit
        self.sup_reinf -= 1
        self._log.append((K_REINFORCED, p, a - A.CELL))
        self._favor_rewards(p, self.favor_card)

    def _favor_rewards(self, p: int, card: int) -> None:
        r = self.game.deck.cards[card].rewards
        self.income_bonus[p] += r["income"]
        self.petition_bonus[p] += r["petition"]
        self.jade[p] += self._take_jade(r["jade"])
        if r["vp"]:
            self._score(p, r["vp"], _FAVOR_CARD)
        if r["treasure"]:
            self._gain_treasure(p, r["treasure"], _FAVOR_CARD)
        for _ in range(r["buyback_chips"]):
            self._gain_chip(p)
        self._gain_convicts(p, r["convicts"])
        self._gain_laborers(p, r["laborers"])
        blocks = min(r["wall_blocks"], self.stock_blocks[p])
        self.stock_blocks[p] -= blocks
        self.blocks[p] += blocks
        self.favor_card = -1
        self._finish_action()

    def _playable_favors(self, p: int) -> list[int]:
        return list(iter_bits(self.game.playable_cards(self.favor_hand[p], self.own[p] & ~self.reinf)))

    def _favor_cells(self, p: int, card: int) -> int:
        fav = self.game.deck.cards[card]
        cells = 0
        for anchor in iter_bits(fav.matches(self.own[p] & ~self.reinf)):
            cells |= fav.cells_at(anchor)
        return cells

    def _start_replace(self, p: int) -> None:
        """Builder C (Replace a Built Block)."""
        self.decision = Decision.REPLACE_CELL

    def _legal_replace(self, p: int) -> Sequence[int]:
        return sorted(A.CELL + self.geo.bit_cell[b] for b in iter_bits(self._replace_cells(p)))

    def _on_replace(self, p: int, a: int) -> None:
        bit = self.geo.cell_bits[a - A.CELL]
        b = 1 << bit
        # docs/RULES.md E13: Replace: the target is any other player's unreinforced block in the
        # Taskmaster's region; the removed block returns to its owner's supply; nothing is scored again
        # (no row, level, tower).
        victim = next(q for q in range(self.n) if self.own[q] & b)
        self.own[victim] &= ~b
        self.blocks[victim] += 1  # the removed block goes back to its owner's supply
        self.own[p] |= b
        self.blocks[p] -= 1
        self._log.append((K_REPLACED, p, a - A.CELL, victim))
        self.worker_need = replace_workers(bit)
        self.decision = Decision.ASSIGN_LABORERS

    def _replace_targets(self, p: int) -> int:
        """Other players' unreinforced blocks in the region of ``p``'s Taskmaster."""
        return replace_targets(self, p)

    def _replace_cells(self, p: int) -> int:
        """Replace targets ``p`` has the (double) Workers for."""
        budget = self._workers(p)
        out = 0
        for bit in iter_bits(self._replace_targets(p)):
            if replace_workers(bit) <= budget:
                out |= 1 << bit
        return out
