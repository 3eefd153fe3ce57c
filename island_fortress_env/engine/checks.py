"""The rule checks: why a role action cannot be carried out now, and the wall's cheapest cells.

``role_refusal`` is the test of docs/RULES.md E6 (a role action is offered only when it can be
carried out to the end): the role choice's legal actions are the ones it finds nothing against
(``phases/action.py``, through ``ROLE_CHECKS``); ``double_build_refusal`` says what stops Build
Wall's larger count. Each check answers ``None`` or a ``Refusal`` saying which precondition fails
and the numbers it compares; the cheapest cells and the Replace targets are the Builder's too
(``roles/builder.py``).

The checks read a state's public fields only (``protocol.FieldsProtocol``), so the phase and
role mixins pass themselves and the C++ core's ``CoreState`` is answered the same way. This
module imports no state: it sits below the phases and roles; ``refusals.py``, above the state,
answers for any action id with these checks.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import NamedTuple

from . import tables
from .protocol import FieldsProtocol
from .wall import WallGeometry

__all__ = [
    "ALWAYS_FEASIBLE",
    "ROLE_CHECKS",
    "SMALLEST_DRAW",
    "Reason",
    "Refusal",
    "cheapest_build",
    "cheapest_cell",
    "double_build_refusal",
    "replace_targets",
    "replace_workers",
    "role_refusal",
]


class Reason(str, Enum):
    """Which precondition an illegal action fails."""

    OUTSIDE = "outside"  # not an action id at all
    GAME_OVER = "game_over"
    NOT_ASKED = "not_asked"  # its family is not a choice of the decision asked now
    NOT_OFFERED = "not_offered"  # of a family asked now, but not one of the choices
    CARD_NOT_IN_HAND = "card_not_in_hand"  # the role card is on the table (played this round)
    NO_TASKMASTER = "no_taskmaster"  # a repeat needs the Taskmaster card in hand
    CARD_NOT_ON_TABLE = "card_not_on_table"  # a repeat is of a card played this round
    REPEAT_COST = "repeat_cost"  # Jade for the Repeat cost (need, have)
    NO_LABORER_IN_SUPPLY = "no_laborer_in_supply"  # Recruit Laborers
    TOO_FEW_LABORERS = "too_few_laborers"  # Collect Convicts (need, have)
    STOCKPILE_EMPTY = "stockpile_empty"  # Buy Wall Blocks: none left in the player's stockpile
    DECK_TOO_SHORT = "deck_too_short"  # Draw Favor Cards (need, have)
    NO_REINFORCEMENT = "no_reinforcement"  # Remove a Reinforcement (region)
    NO_WALL_BLOCK = "no_wall_block"  # Build / Replace: no Wall Block in the player's supply
    NO_BUILDABLE_CELL = "no_buildable_cell"  # Build: no empty cell with support (region)
    TOO_FEW_WORKERS = "too_few_workers"  # Build: the cheapest cell's Workers (need, have, region)
    # Build 2 blocks (``double_build_refusal``); too few Workers for the cheapest two cells is
    # TOO_FEW_WORKERS, their Workers together
    TOO_FEW_WALL_BLOCKS = "too_few_wall_blocks"  # Wall Blocks in the player's supply (need, have)
    SECOND_BLOCK_COST = "second_block_cost"  # the second block's Jade (need, have)
    NO_SECOND_CELL = "no_second_cell"  # room for one block only (region)
    NO_FAVOR_CARD = "no_favor_card"  # Play a Completed Favor Card: an empty hand
    NO_COMPLETE_PATTERN = "no_complete_pattern"  # ... no card's pattern complete
    VARIANT_OFF = "variant_off"  # Replace, in the Friendly variant (no_replace)
    NO_REPLACE_TARGET = "no_replace_target"  # no other player's unreinforced block (region)
    TOO_FEW_WORKERS_TO_REPLACE = "too_few_workers_to_replace"  # the cheapest target (need, have, region)
    TOO_FEW_CONVICTS = "too_few_convicts"  # Collect a Treasure (need, have)


class Refusal(NamedTuple):
    """Why an action is refused: the reason and, where it compares numbers, what is needed and
    what there is; ``region`` is the region of the player's Taskmaster where that matters. (A
    NamedTuple: the role choice makes one for each action it leaves out.)"""

    reason: Reason
    need: int = 0
    have: int = 0
    region: int = -1


SMALLEST_DRAW = min(draw for draw, _ in tables.FAVOR_DRAW_OPTIONS)
# The records the role choice makes most, made once (an Enum member read and a record made cost
# more than the check itself, and the choice is asked at every turn).
_NO_LABORER = Refusal(Reason.NO_LABORER_IN_SUPPLY)
_STOCKPILE_EMPTY = Refusal(Reason.STOCKPILE_EMPTY)
_NO_WALL_BLOCK = Refusal(Reason.NO_WALL_BLOCK)
_NO_FAVOR_CARD = Refusal(Reason.NO_FAVOR_CARD)
_NO_PATTERN = Refusal(Reason.NO_COMPLETE_PATTERN)
_VARIANT_OFF = Refusal(Reason.VARIANT_OFF)
_TOO_FEW_LABORERS = tuple(
    Refusal(Reason.TOO_FEW_LABORERS, tables.LABORERS_FOR_CONVICTS, have)
    for have in range(tables.LABORERS_FOR_CONVICTS)
)
_TOO_FEW_CONVICTS = tuple(
    Refusal(Reason.TOO_FEW_CONVICTS, tables.TREASURE_CONVICTS, have)
    for have in range(tables.TREASURE_CONVICTS)
)
_DECK_TOO_SHORT = tuple(Refusal(Reason.DECK_TOO_SHORT, SMALLEST_DRAW, have) for have in range(SMALLEST_DRAW))
_NO_REINFORCEMENT = tuple(Refusal(Reason.NO_REINFORCEMENT, 0, 0, r) for r in range(tables.MAX_REGIONS))
_NO_BUILDABLE_CELL = tuple(Refusal(Reason.NO_BUILDABLE_CELL, 0, 0, r) for r in range(tables.MAX_REGIONS))
_TOO_FEW_WORKERS = Reason.TOO_FEW_WORKERS
_NO_REPLACE_TARGET = Reason.NO_REPLACE_TARGET
_TOO_FEW_WORKERS_TO_REPLACE = Reason.TOO_FEW_WORKERS_TO_REPLACE


def cheapest_cell(geo: WallGeometry, occupied: int, region_mask: int) -> int | None:
    """The bit of the cheapest cell buildable among ``region_mask``'s cells, None if none: the
    lowest set bit of a cell set is its lowest level, so its cheapest."""
    cells = geo.buildable(occupied) & region_mask
    return (cells & -cells).bit_length() - 1 if cells else None


def cheapest_build(geo: WallGeometry, occupied: int, region_mask: int) -> int | None:
    """Workers for the cheapest block buildable among ``region_mask``'s cells, None if none
    (``cheapest_cell``). A Governor block never makes a build possible that was not possible
    without it: a cell it supports is always dearer than the cell it stands on."""
    bit = cheapest_cell(geo, occupied, region_mask)
    return None if bit is None else WallGeometry.workers_for(bit)


def replace_targets(state: FieldsProtocol, p: int) -> int:
    """Other players' unreinforced blocks in the region of ``p``'s Taskmaster (a bit set)."""
    mine_or_fixed = state.own[p] | state.gov_bits | state.reinf
    return state.occ & ~mine_or_fixed & state.geo.region_mask[state.region[p]]


def replace_workers(bit: int) -> int:
    """Workers to replace the block at ``bit``: a multiple of its level's."""
    return tables.REPLACE_MULTIPLIER * WallGeometry.workers_for(bit)


def _recruit(state: FieldsProtocol, p: int) -> Refusal | None:
    # one Laborer costs nothing
    return None if state.sup_laborers >= 1 or state.unlimited else _NO_LABORER


def _collect_convicts(state: FieldsProtocol, p: int) -> Refusal | None:
    need, have = tables.LABORERS_FOR_CONVICTS, state.laborers[p]
    return None if have >= need else _TOO_FEW_LABORERS[have]


def _buy_blocks(state: FieldsProtocol, p: int) -> Refusal | None:
    return None if state.stock_blocks[p] >= 1 else _STOCKPILE_EMPTY


def _draw_favors(state: FieldsProtocol, p: int) -> Refusal | None:
    have = len(state.deck)
    return None if have >= SMALLEST_DRAW else _DECK_TOO_SHORT[have]


def _remove_reinforcement(state: FieldsProtocol, p: int) -> Refusal | None:
    region = state.region[p]
    if state.reinf & state.geo.region_mask[region]:
        return None
    return _NO_REINFORCEMENT[region]


def _build(state: FieldsProtocol, p: int) -> Refusal | None:
    if state.blocks[p] < 1:
        return _NO_WALL_BLOCK
    region = state.region[p]
    cheapest = cheapest_build(state.geo, state.occ, state.geo.region_mask[region])
    if cheapest is None:
        return _NO_BUILDABLE_CELL[region]
    workers = state.laborers[p] + state.convicts[p]
    return None if cheapest <= workers else Refusal(_TOO_FEW_WORKERS, cheapest, workers, region)


def double_build_refusal(state: FieldsProtocol, p: int) -> Refusal | None:
    """What stops ``p``, at Build Wall's count, building two blocks; None exactly when "Build 2
    blocks" is a legal choice (docs/RULES.md C11: the second block costs ``DOUBLE_BUILD_COST``
    Jade and the Workers of both are paid together; E6: the first block goes only where a second
    can follow). The Workers compared are the cheapest two cells': the lowest buildable cell, then
    the cheapest one buildable once it is built (no other first cell makes a cheaper pair)."""
    count = 2  # the blocks of the larger build
    if state.blocks[p] < count:
        return Refusal(Reason.TOO_FEW_WALL_BLOCKS, count, state.blocks[p])
    if state.jade[p] < tables.DOUBLE_BUILD_COST:
        return Refusal(Reason.SECOND_BLOCK_COST, tables.DOUBLE_BUILD_COST, state.jade[p])
    region = state.region[p]
    geo, mask = state.geo, state.geo.region_mask[region]
    low = cheapest_cell(geo, state.occ, mask)
    if low is None:
        return _NO_BUILDABLE_CELL[region]
    second = cheapest_build(geo, state.occ | (1 << low), mask)
    if second is None:
        return Refusal(Reason.NO_SECOND_CELL, 0, 0, region)
    need, workers = WallGeometry.workers_for(low) + second, state.laborers[p] + state.convicts[p]
    return None if need <= workers else Refusal(_TOO_FEW_WORKERS, need, workers, region)


def _play_favor(state: FieldsProtocol, p: int) -> Refusal | None:
    hand = state.favor_hand[p]
    if not hand:
        return _NO_FAVOR_CARD
    return None if state.game.playable_cards(hand, state.own[p] & ~state.reinf) else _NO_PATTERN


def _replace(state: FieldsProtocol, p: int) -> Refusal | None:
    if state.cfg.no_replace:
        return _VARIANT_OFF
    if state.blocks[p] < 1:
        return _NO_WALL_BLOCK
    workers = state.laborers[p] + state.convicts[p]
    targets = replace_targets(state, p)
    if not targets:
        return Refusal(_NO_REPLACE_TARGET, 0, workers, state.region[p])
    need = replace_workers((targets & -targets).bit_length() - 1)  # the lowest is the cheapest
    if need <= workers:
        return None
    return Refusal(_TOO_FEW_WORKERS_TO_REPLACE, need, workers, state.region[p])


def _collect_treasure(state: FieldsProtocol, p: int) -> Refusal | None:
    need, have = tables.TREASURE_CONVICTS, state.convicts[p]
    return None if have >= need else _TOO_FEW_CONVICTS[have]


def _always(state: FieldsProtocol, p: int) -> Refusal | None:
    return None


# Each role action's test, indexed by ``actions.OP_*``. None depends on Jade (every action's
# cheapest form is free; a repeat's cost is ``refusal``'s to check), and each is an existence check.
ROLE_CHECKS: tuple[Callable[[FieldsProtocol, int], Refusal | None], ...] = (
    _recruit,
    _collect_convicts,
    _always,  # Collect from Prison
    _buy_blocks,
    _draw_favors,
    _remove_reinforcement,
    _build,
    _play_favor,
    _replace,
    _always,  # Collect Jade
    _collect_treasure,
    _always,  # Move the Taskmaster
)
# Collect from Prison, Collect Jade and Move the Taskmaster are always possible (docs/RULES.md E6).
ALWAYS_FEASIBLE = sum(1 << op for op, check in enumerate(ROLE_CHECKS) if check is _always)


def role_refusal(state: FieldsProtocol, p: int, op: int) -> Refusal | None:
    """What stops ``p`` carrying role action ``op`` out to the end now; None when nothing does
    (docs/RULES.md E6: a role action is offered only when it can be carried out to the end)."""
    return ROLE_CHECKS[op](state, p)
