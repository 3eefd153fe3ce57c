"""The Action phase: turns, the role choice (and Taskmaster B's repeat), buyback and the Governor block."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .. import actions as A
from .. import tables
from ..checks import ALWAYS_FEASIBLE, ROLE_CHECKS
from ..decisions import Decision
from ..events import K_BUYBACK, K_GOVERNOR_LOST, K_ROLE
from ..fields import StateFields
from ..roles.builder import Builder
from ..roles.planner import Planner
from ..roles.recruiter import Recruiter
from ..roles.taskmaster import Taskmaster
from ..roles.treasurer import Treasurer
from ..wall import iter_bits

_REPEAT_COST = tuple(
    tables.REPEAT_ROLE_COST.get(A.ROLE_KEYS[A.OP_CARD[op]], 1 << 30) for op in range(A.NUM_OPS)
)  # Repeat cost per action; the Taskmaster's own action cannot be repeated
_MAX_REPEAT_COST = max(tables.REPEAT_ROLE_COST.values())
# Lookup tables for the role choice: which actions a hand of role cards offers, which a table
# of played cards offers to Taskmaster B given 0 up to the dearest Repeat cost in Jade, and the
# action ids of a set of actions.
_HAND_OPS = tuple(sum(1 << op for op in range(A.NUM_OPS) if hand >> A.OP_CARD[op] & 1) for hand in range(32))
_TABLE_OPS = tuple(
    tuple(
        sum(
            1 << op
            for op in range(A.NUM_REPEATABLE)
            if table >> A.OP_CARD[op] & 1 and jade >= _REPEAT_COST[op]
        )
        for jade in range(_MAX_REPEAT_COST + 1)
    )
    for table in range(32)
)
_ROLE_IDS = tuple(tuple(A.ROLE + op for op in range(A.NUM_OPS) if m >> op & 1) for m in range(1 << A.NUM_OPS))
_REPEAT_IDS = tuple(
    tuple(A.REPEAT + op for op in range(A.NUM_OPS) if m >> op & 1) for m in range(1 << A.NUM_OPS)
)


class ActionPhase(StateFields):
    """Turn structure; which role actions can be started; buyback; Governor block placement."""

    __slots__ = ()

    def _start_turn(self, p: int) -> None:
        self.current = p
        self.decision = Decision.CHOOSE_ROLE_ACTION
        self.actions_this_turn = 0
        self.buyback_used = False
        self.last_card = -1
        self.in_action = False

    def _end_turn(self) -> None:
        p = self.current
        self.turns_taken[p] += 1
        # docs/RULES.md C14: the action phase starts with the Governor marker's holder and goes clockwise;
        # a Governor block not placed by the end of the holder's third turn goes to the box.
        if p == self.holder and self.turns_taken[p] == tables.TURNS_PER_ROUND and self.gov_in_hand:
            self.gov_in_hand = False
            self.gov_box += 1
            self._log.append((K_GOVERNOR_LOST, p))
        self.turn_index += 1
        if self.turn_index == tables.TURNS_PER_ROUND * self.n:
            if self.gov_stock == 0:
                self._end_game()
            else:
                self._start_round()
        else:
            self._start_turn((self.holder + self.turn_index) % self.n)

    def _finish_action(self) -> None:
        self.in_action = False
        self.actions_this_turn += 1
        if self.wall_completer >= 0:
            self._end_game()
            return
        self.decision = Decision.BUYBACK_OR_END_TURN
        if len(self._turn_end_options()) == 1:  # nothing to choose but ending the turn
            self._end_turn()

    def _legal_role(self, p: int) -> Sequence[int]:
        """The role actions of the cards in hand, and (holding the Taskmaster) Taskmaster B's
        repeats of cards on the table the player can pay for, that can be carried out."""
        hand = self.roles_hand[p]
        in_hand = _HAND_OPS[hand]
        repeatable = (
            _TABLE_OPS[self.roles_table[p]][min(self.jade[p], _MAX_REPEAT_COST)]
            if hand >> A.TASKMASTER & 1
            else 0
        )
        feasible = self._feasible_ops(p, in_hand | repeatable)
        return _ROLE_IDS[feasible & in_hand] + _REPEAT_IDS[feasible & repeatable]

    def _feasible_ops(self, p: int, ops: int) -> int:
        """Which of the role actions in bit set ``ops`` can be carried out to the end: those
        ``checks.role_refusal`` finds nothing against (``ROLE_CHECKS``) (docs/RULES.md E6)."""
        ok = ops & ALWAYS_FEASIBLE
        rest = ops & ~ALWAYS_FEASIBLE
        while rest:
            low = rest & -rest
            rest ^= low
            if ROLE_CHECKS[low.bit_length() - 1](self, p) is None:
                ok |= low
        return ok

    def _on_role(self, p: int, a: int) -> None:
        if a >= A.REPEAT:
            op = a - A.REPEAT
            card = A.TASKMASTER
            # docs/RULES.md C1: Repeat Role costs Recruiter 1, Planner 2, Builder 2, Treasurer 3; the
            # Taskmaster card itself cannot be repeated. E15: any non-Taskmaster card played in an earlier
            # turn of this round.
            cost = tables.REPEAT_ROLE_COST[A.ROLE_KEYS[A.OP_CARD[op]]]
            self.jade[p] -= cost
            self.sup_jade += cost
        else:
            op = a - A.ROLE
            card = A.OP_CARD[op]
            cost = 0
        self.roles_hand[p] &= ~(1 << card)
        self.roles_table[p] |= 1 << card
        self.last_card = card
        self.op = op
        self.in_action = True
        self._log.append((K_ROLE, p, op, a >= A.REPEAT, cost))
        _ROLE_START[op](self, p)

    def _turn_end_options(self) -> list[int]:
        p = self.current
        # docs/RULES.md C2: the Taskmaster buyback (3 Jade) only right after the Taskmaster card was
        # played; a Buyback Chip buys back any card; at most one buyback per turn. E14: buyback and
        # Governor placement after an action are one decision, asked only when there is a choice.
        out = [A.END_TURN]
        if self.actions_this_turn == 1 and not self.buyback_used:
            # The hand after a buyback always holds Recruiter, Treasurer or Taskmaster
            # (three or more cards), so a second action is always possible.
            if self.last_card == A.TASKMASTER and self.jade[p] >= tables.TASKMASTER_BUYBACK_COST:
                out.append(A.BUYBACK_TASKMASTER)
            if self.chips[p] > 0:
                out.append(A.BUYBACK_CHIP)
        if self.gov_in_hand and p == self.holder:
            out.append(A.GOVERNOR)  # placeholder: any legal Governor cell
        return out

    def _legal_turn_end(self, p: int) -> Sequence[int]:
        return [a for a in self._turn_end_options() if a != A.GOVERNOR]

    def _on_turn_end(self, p: int, a: int) -> None:
        if a == A.END_TURN:
            self._end_turn()
            return
        if a == A.BUYBACK_TASKMASTER:
            self.jade[p] -= tables.TASKMASTER_BUYBACK_COST
            self.sup_jade += tables.TASKMASTER_BUYBACK_COST
        else:
            self.chips[p] -= 1
            self.sup_chips += 1
        card = self.last_card
        self.roles_table[p] &= ~(1 << card)
        self.roles_hand[p] |= 1 << card
        self.buyback_used = True
        self._log.append((K_BUYBACK, p, card, a == A.BUYBACK_CHIP))
        self.decision = Decision.CHOOSE_ROLE_ACTION

    def _governor_bits(self) -> list[int]:
        """Legal Governor placements at this decision of the holder's turn."""
        # docs/RULES.md E16: the holder may place it at every decision of their action-phase turns; during
        # a started build only cells after which the build can still be finished are offered.
        geo = self.geo
        cells = list(iter_bits(geo.buildable(self.occ)))
        if self.decision == Decision.BUILD_COUNT or self.decision == Decision.BUILD_CELL:
            # Keep only placements after which the started build can still be finished.
            p = self.current
            region_mask = geo.region_mask[self.region[p]]
            if self.decision == Decision.BUILD_COUNT:
                budget, left = self._workers(p), 1
            else:
                budget, left = self._workers(p) - self.build_need, self.build_left
            cells = [
                bit
                for bit in cells
                if not (1 << bit) & region_mask or self._build_cells(self.occ | (1 << bit), p, budget, left)
            ]
        return cells

    def _place_governor(self, p: int, bit: int) -> None:
        self.gov_in_hand = False
        self._place_block(p, bit, governor=True)
        # docs/RULES.md E17: a Governor block that fills the last cell outside an action ends the game at
        # once; inside an action, when that action ends.
        if self.wall_completer >= 0 and not self.in_action:
            self._end_game()
        elif self.decision == Decision.BUYBACK_OR_END_TURN and len(self._turn_end_options()) == 1:
            self._end_turn()


_ROLE_START: tuple[Callable[..., None], ...] = (  # indexed by actions.OP_*
    Recruiter._start_recruit,
    Recruiter._collect_convicts,
    Recruiter._collect_prison,
    Planner._start_buy,
    Planner._start_draw,
    Planner._start_remove,
    Builder._start_build,
    Builder._start_favor,
    Builder._start_replace,
    Treasurer._collect_jade,
    Treasurer._start_treasure,
    Taskmaster._start_move,
)
