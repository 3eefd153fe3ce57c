"""The Taskmaster card: A Move the Taskmaster.

B, Repeat a Previous Role, is part of the role choice (``phases/action.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import actions as A
from ..decisions import Decision
from ..events import K_MOVED
from ..fields import StateFields


class Taskmaster(StateFields):
    """Move the Taskmaster: how it starts, its legal choices and their effect."""

    __slots__ = ()

    def _start_move(self, p: int) -> None:
        """Taskmaster A (Move the Taskmaster)."""
        self.decision = Decision.MOVE_TASKMASTER

    def _legal_move(self, p: int) -> Sequence[int]:
        """Taskmaster A: any other region."""
        return [A.MOVE_REGION + r for r in range(self.geo.regions) if r != self.region[p]]

    def _on_move(self, p: int, a: int) -> None:
        self.region[p] = a - A.MOVE_REGION
        self._log.append((K_MOVED, p, self.region[p]))
        self._finish_action()
