"""The Recruiter card: A Recruit Laborers, B Collect 6 Convicts, C Collect from Prison."""

from __future__ import annotations

from collections.abc import Sequence

from .. import actions as A
from .. import tables
from ..decisions import Decision
from ..events import K_PRISON_COLLECTED, K_RECRUITED
from ..fields import StateFields


class Recruiter(StateFields):
    """Each action: how it starts, its legal choices and their effect."""

    __slots__ = ()

    def _start_recruit(self, p: int) -> None:
        """Recruiter A (Recruit Laborers): a Convict goes to the prison, then choose how many."""
        # docs/RULES.md E8: the Convict that Recruiter A, Planner A and Builder A send to the prison goes
        # when the card is played.
        self._to_prison(self.region[p])
        self.decision = Decision.RECRUIT_COUNT

    # docs/RULES.md E7: only counts the stockpile can supply and the player can pay; Collect 6 Convicts
    # from a short stockpile gives what is left.
    def _legal_recruit(self, p: int) -> Sequence[int]:
        """Recruiter A: 1..5 Laborers the supply holds and the player can pay for."""
        return [
            A.RECRUIT_COUNT + k - 1
            for k in range(1, tables.MAX_PURCHASE + 1)
            if (k <= self.sup_laborers or self.unlimited) and tables.PURCHASE_COST[k] <= self.jade[p]
        ]

    def _on_recruit(self, p: int, a: int) -> None:
        k = a - A.RECRUIT_COUNT + 1
        cost = tables.PURCHASE_COST[k]
        self.jade[p] -= cost
        self.sup_jade += cost
        self.sup_laborers -= k
        self.laborers[p] += k
        self._log.append((K_RECRUITED, p, k, cost))
        self._finish_action()

    def _collect_convicts(self, p: int) -> None:
        """Recruiter B (Collect 6 Convicts): pay 2 Laborers to the supply, take 6 Convicts."""
        self.laborers[p] -= tables.LABORERS_FOR_CONVICTS
        self.sup_laborers += tables.LABORERS_FOR_CONVICTS
        self._gain_convicts(p, tables.CONVICTS_COLLECTED)
        self._finish_action()

    def _collect_prison(self, p: int) -> None:
        """Recruiter C (Collect from Prison): everything in the prison of the Taskmaster's region."""
        region = self.region[p]
        self.jade[p] += self.prison_jade[region]
        self.convicts[p] += self.prison_convicts[region]
        self._log.append(
            (K_PRISON_COLLECTED, p, region, self.prison_jade[region], self.prison_convicts[region])
        )
        self.prison_jade[region] = 0
        self.prison_convicts[region] = 0
        self._finish_action()
