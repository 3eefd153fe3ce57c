"""The Treasurer card: A Collect Jade, B Collect a Treasure."""

from __future__ import annotations

from collections.abc import Sequence

from .. import actions as A
from .. import tables
from ..decisions import Decision
from ..events import K_JADE_COLLECTED, K_TREASURE_COLLECTED, ScoreReason
from ..fields import StateFields


def jade_to_collect(treasure: int) -> int:
    """Collect Jade's Jade for a player holding ``treasure`` Treasure (before a short supply)."""
    return tables.COLLECT_JADE + treasure // tables.TREASURE_PER_EXTRA_JADE


class Treasurer(StateFields):
    """Each action: how it starts, its legal choices and their effect."""

    __slots__ = ()

    def _collect_jade(self, p: int) -> None:
        """Treasurer A (Collect Jade): 3, plus 1 for every 3 Treasure held."""
        got = self._take_jade(jade_to_collect(self.treasure[p]))
        self.jade[p] += got
        self._log.append((K_JADE_COLLECTED, p, got))
        self._finish_action()

    def _start_treasure(self, p: int) -> None:
        """Treasurer B (Collect a Treasure): choose the two prisons for the Convicts."""
        self.decision = Decision.TREASURE_PRISONS

    def _legal_prisons(self, p: int) -> Sequence[int]:
        """Treasurer B: any two different prisons of this wall."""
        return [A.PRISON_PAIR + i for i, (a, b) in enumerate(A.PRISON_PAIRS) if b < self.geo.regions]

    def _on_prisons(self, p: int, a: int) -> None:
        r1, r2 = A.PRISON_PAIRS[a - A.PRISON_PAIR]
        # docs/RULES.md C9: Collect a Treasure uses 2 Convicts from the player's own supply, sent to 2
        # different prisons the player picks (one decision: a pair of regions).
        self.convicts[p] -= tables.TREASURE_CONVICTS  # one to each of the two prisons
        self.prison_convicts[r1] += 1
        self.prison_convicts[r2] += 1
        self._log.append((K_TREASURE_COLLECTED, p, r1, r2))
        self._gain_treasure(p, 1, ScoreReason.COLLECT_TREASURE)
        self._finish_action()
