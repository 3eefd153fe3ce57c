"""Why an action is not legal now: one typed record per refusal, from the rules' own checks.

``refusal`` answers for any action id of a state of either backend (``protocol.StateProtocol``):
``None`` exactly when the action is legal, otherwise a ``Refusal`` saying which precondition
fails and the numbers it compares. At the role choice a role card's actions and Taskmaster B's
repeats are answered by the rule checks the role choice itself uses (``checks.py``: the card in
hand or on the table, the Repeat cost, ``role_refusal``); any other action is refused as not
asked now or not among the choices offered. The words for a person are the views'
(``views.refusal_words``); this module holds the rules.

The records and the checks are ``checks.py``'s, named here too for the readers of refusals.
"""

from __future__ import annotations

from . import actions as A
from . import tables
from .checks import (
    ALWAYS_FEASIBLE,
    ROLE_CHECKS,
    SMALLEST_DRAW,
    Reason,
    Refusal,
    cheapest_build,
    cheapest_cell,
    double_build_refusal,
    replace_targets,
    replace_workers,
    role_refusal,
)
from .decisions import Decision
from .protocol import StateProtocol

__all__ = [
    "ALWAYS_FEASIBLE",
    "ROLE_CHECKS",
    "SMALLEST_DRAW",
    "Reason",
    "Refusal",
    "cheapest_build",
    "cheapest_cell",
    "double_build_refusal",
    "refusal",
    "replace_targets",
    "replace_workers",
    "role_refusal",
]


def _role_choice_refusal(state: StateProtocol, p: int, action: int) -> Refusal | None:
    if action < A.REPEAT:  # a card in hand
        op = action - A.ROLE
        if not state.roles_hand[p] >> A.OP_CARD[op] & 1:
            return Refusal(Reason.CARD_NOT_IN_HAND)
        return role_refusal(state, p, op)
    op = action - A.REPEAT  # Taskmaster B
    if not state.roles_hand[p] >> A.TASKMASTER & 1:
        return Refusal(Reason.NO_TASKMASTER)
    card = A.OP_CARD[op]  # never the Taskmaster: its own action is not repeatable
    if not state.roles_table[p] >> card & 1:
        return Refusal(Reason.CARD_NOT_ON_TABLE)
    cost = tables.REPEAT_ROLE_COST[A.ROLE_KEYS[card]]
    if state.jade[p] < cost:
        return Refusal(Reason.REPEAT_COST, cost, state.jade[p])
    return role_refusal(state, p, op)


def refusal(state: StateProtocol, action: int) -> Refusal | None:
    """Why ``action`` is not legal for the player to move in ``state``; None when it is legal.

    At the role choice a role card's actions and Taskmaster B's repeats are answered by the
    rules' checks (the card in hand or on the table, the Repeat cost, ``role_refusal``); any
    other action is refused as not asked now or not among the choices offered."""
    if not 0 <= action < A.NUM_ACTIONS:
        return Refusal(Reason.OUTSIDE)
    if state.is_terminal():
        return Refusal(Reason.GAME_OVER)
    if state.decision == Decision.CHOOSE_ROLE_ACTION and A.ROLE <= action < A.REPEAT + A.NUM_REPEATABLE:
        return _role_choice_refusal(state, state.current_player(), action)
    legal = state.legal_actions()
    if action in legal:
        return None
    family = A.family_of(action)
    if any(a in family for a in legal):
        return Refusal(Reason.NOT_OFFERED)
    return Refusal(Reason.NOT_ASKED)
