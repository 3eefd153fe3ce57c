"""Text for actions and log events. Every string comes from the one action table.

A state here is either backend's (``protocol.StateProtocol``): both name their actions through
``action_to_string``."""

from __future__ import annotations

from . import actions as A
from . import tables
from .decisions import Decision
from .events import Event, Petition, Role, Score, ScoreReason
from .protocol import StateProtocol
from .tables import MAX_REGIONS
from .wall import STRIDE, WallGeometry, geometry

_CELL_VERB = {
    Decision.REMOVE_REINFORCEMENT_CELL: "remove the reinforcement at",
    Decision.BUILD_CELL: "build at",
    Decision.REINFORCE_CELL: "reinforce",
    Decision.REPLACE_CELL: "replace the block at",
}


# A public cell index names the same cell on every wall (``region * 17 + k``), so the largest
# wall answers for all.
_WALL = geometry(MAX_REGIONS)


def cell_label(cell: int) -> str:
    """A wall cell's coordinates as drawn on the board, "R2-L3-C4" (region, level 1-4, column
    1-5), by its public index (``WallGeometry.cell_name`` of its bit)."""
    return _WALL.cell_name(_WALL.cell_bits[cell])


def cell_level(cell: int) -> int:
    """The 0-based level of the cell with public index ``cell`` (the towers are the top level)."""
    return _WALL.cell_bits[cell] // STRIDE


def cell_workers(cell: int) -> int:
    """The Workers a block on the cell with public index ``cell`` needs."""
    return WallGeometry.workers_for(_WALL.cell_bits[cell])


def cell_name(state: StateProtocol, cell: int) -> str:
    if not 0 <= cell < len(state.geo.cell_bits):
        return f"cell {cell} (not on this wall)"
    return cell_label(cell)


def action_to_string(state: StateProtocol, action: int) -> str:
    fam = A.family_of(action)
    i = action - fam.start
    if fam.name in ("pass", "end_turn", "trade_jade", "trade_convict", "trade_done"):
        return fam.meaning.split(":")[0] if fam.name == "pass" else fam.meaning
    if fam.name == "buyback_taskmaster":
        return f"buy back the Taskmaster card for {tables.TASKMASTER_BUYBACK_COST} Jade"
    if fam.name == "buyback_chip":
        return "spend a Buyback Chip to take back the card just played"
    if fam.name in ("keep_favor", "play_favor"):
        deck = state.game.deck
        name = deck.cards[i].describe() if i < len(deck) else f"#{i} (not in this deck)"
        return f"{'keep' if fam.name == 'keep_favor' else 'play'} favor {name}"
    if fam.name == "bid":
        if state.decision != Decision.PETITION_BID:
            return f"bid {i} Jade"
        base = tables.BID_BASE  # above MAX_BID Jade a bid is entered as digits in this base
        place = base**state.bid_digits_left
        so_far = state.bids[state.current] * base * place
        if place > 1:
            return f"bid digit {i}: {so_far + i * place} Jade so far"
        return f"bid {so_far + i} Jade"
    if fam.name == "role":
        return f"play {A.op_label(i)}"
    if fam.name == "repeat":
        card = A.ROLE_KEYS[A.OP_CARD[i]]
        return f"play Taskmaster B: repeat {A.op_label(i)} for {tables.REPEAT_ROLE_COST[card]} Jade"
    if fam.name == "recruit":
        return f"recruit {i + 1} Laborers for {tables.PURCHASE_COST[i + 1]} Jade"
    if fam.name == "buy_blocks":
        return f"buy {i + 1} Wall Blocks for {tables.PURCHASE_COST[i + 1]} Jade"
    if fam.name == "draw":
        draw, keep = tables.FAVOR_DRAW_OPTIONS[i]
        return f"draw {draw} favor cards, keep {keep}"
    if fam.name == "build_count":
        return "build 1 block" if i == 0 else f"build 2 blocks for {tables.DOUBLE_BUILD_COST} Jade"
    if fam.name == "cell":
        verb = _CELL_VERB.get(state.decision, "cell")
        return f"{verb} {cell_name(state, i)}"
    if fam.name == "governor":
        return f"place the Governor block at {cell_name(state, i)}"
    if fam.name == "laborers":
        convicts = max(state.worker_need - i, 0)
        return f"assign {i} Laborers and {convicts} Convicts"
    if fam.name == "move":
        return f"move the Taskmaster to region {i + 1}"
    if fam.name == "prisons":
        a, b = A.PRISON_PAIRS[i]
        return f"send the Convicts to the prisons of regions {a + 1} and {b + 1}"
    raise AssertionError(fam.name)  # pragma: no cover


def score_reason_text(event: Score) -> str:
    """ "row 2 of region 1", "level 3 majority (end)", "favor card" ..."""
    reason = event.reason
    if reason is ScoreReason.ROW or reason is ScoreReason.ROW_AT_END:
        end = " (end)" if reason is ScoreReason.ROW_AT_END else ""
        return f"row {event.level + 1} of region {event.region + 1}{end}"
    if reason is ScoreReason.LEVEL or reason is ScoreReason.LEVEL_AT_END:
        end = " (end)" if reason is ScoreReason.LEVEL_AT_END else ""
        return f"level {event.level + 1} majority{end}"
    return reason.value


def event_to_string(event: Event) -> str:
    """One public log event as text."""
    if isinstance(event, Role):
        how = f" (Taskmaster B, repeat for {event.cost} Jade)" if event.repeat else ""
        return f"player {event.player} plays {A.op_label(event.op)}{how}"
    if isinstance(event, Score):
        return f"player {event.player} scores {event.points:+d} ({score_reason_text(event)})"
    if isinstance(event, Petition):
        return (
            f"bids revealed {list(event.bids)} (with favors {list(event.totals)}): "
            f"player {event.winner} wins the petition"
        )
    kind, *args = event
    return f"{kind.value} " + " ".join(str(a) for a in args)
