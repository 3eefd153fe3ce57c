"""A readable text view of a state: the wall, prisons, Taskmasters and every player's board.

The wall is drawn with its coordinates: region, level L1-L4 and column C1-C5, the names the
browser and ``narrate.cell_label`` use (R2-L3-C4). Seats are named as everywhere else
("B (heuristic)", or just "B" when no names are given), and the last events are told in words
(``narrate.last_lines``). Public information only, so it is safe to show at any seat (favor
hands appear as counts, sealed bids as "seals a petition bid"). Every line is printable: control
characters in a name (a favor card's from a deck file, an agent's) are shown as escapes
(``engine.files.printable``), so the text cannot drive a terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from island_fortress_env.engine.files import printable
from island_fortress_env.engine.wall import COLUMNS_PER_REGION, STRIDE
from island_fortress_env.views.narrate import last_lines, seat_name

if TYPE_CHECKING:
    from island_fortress_env.engine.state import State

PLAYER_MARKS = "ABCD"  # builder's marks of seats 0-3; lower case when reinforced
LAST_EVENTS = 6  # the events told under the board by default
_REGION_WIDTH = 3 * COLUMNS_PER_REGION - 1  # "C1 C2 C3 C4 C5"


def _cell_char(state: State, bit: int) -> str:
    b = 1 << bit
    if not state.geo.valid & b:
        return " "
    if not state.occ & b:
        return "."
    if state.gov_bits & b:
        return "G"
    for p in range(state.n):
        if state.own[p] & b:
            mark = PLAYER_MARKS[p]
            return mark.lower() if state.reinf & b else mark
    return "?"


def render_wall(state: State) -> list[str]:
    """The wall by region, top level first, each cell under its column label (C1-C5)."""
    geo = state.geo
    gap = "   "
    lines = ["      " + gap.join(f"Region {r + 1}".ljust(_REGION_WIDTH) for r in range(geo.regions))]
    columns = " ".join(f"C{c + 1}" for c in range(COLUMNS_PER_REGION))
    lines.append("      " + gap.join(columns for _ in range(geo.regions)))
    for level in range(3, -1, -1):
        parts = []
        for r in range(geo.regions):
            cells = [
                " " + _cell_char(state, level * STRIDE + r * COLUMNS_PER_REGION + c)
                for c in range(COLUMNS_PER_REGION)
            ]
            parts.append(" ".join(cells))
        lines.append(f"  L{level + 1}  " + gap.join(parts))
    camps = []
    for r in range(geo.regions):
        here = "".join(PLAYER_MARKS[p] for p in range(state.n) if state.region[p] == r) or "-"
        camps.append(f"camp {here}".ljust(_REGION_WIDTH))
    lines.append("      " + gap.join(camps) + "  (Taskmasters)")
    prisons = [f"{state.prison_jade[r]}J {state.prison_convicts[r]}C" for r in range(geo.regions)]
    lines.append("      " + gap.join(p.ljust(_REGION_WIDTH) for p in prisons) + "  (prisons: Jade, Convicts)")
    return lines


ROLE_LETTERS = "RPBTM"  # Recruiter, Planner, Builder, Treasurer, taskMaster


def _roles(mask: int) -> str:
    return "".join(ROLE_LETTERS[c] if mask >> c & 1 else "." for c in range(5))


def render_players(state: State, names: Sequence[str] = ()) -> list[str]:
    seats = [seat_name(names, p) for p in range(state.n)]
    width = max(4, *(len(seat) for seat in seats))
    head = f"  {'seat':<{width}} score jade lab conv blocks stock chips treas favors inc pet roles"
    lines = [head]
    for p in range(state.n):
        marker = "*" if p == state.current and not state.is_terminal() else " "
        gov = " Governor" if p == state.holder else ""
        if p == state.holder and state.gov_in_hand:
            gov += " (block in hand)"
        lines.append(
            f" {marker}{seats[p]:<{width}} {state.score[p]:5d} {state.jade[p]:4d} "
            f"{state.laborers[p]:3d} {state.convicts[p]:4d} {state.blocks[p]:6d} "
            f"{state.stock_blocks[p]:5d} {state.chips[p]:5d} {state.treasure[p]:5d} "
            f"{state.favor_hand[p].bit_count():2d}/{state.favor_played[p].bit_count():<3d} "
            f"{state.income_bonus[p]:3d} {state.petition_bonus[p]:3d} {_roles(state.roles_hand[p])}{gov}"
        )
    return lines


def render_text(state: State, last_events: int = LAST_EVENTS, names: Sequence[str] = ()) -> str:
    """The board as text. ``names``: the name given for each seat ("heuristic", "you"); the
    seats are their marks alone without them. ``last_events``: how many of the last events
    of the public log are told under the board (0: none)."""
    names = tuple(names) + ("",) * (state.n - len(names))
    if state.is_terminal():
        won = " and ".join(seat_name(names, w) for w in state.winners)
        verb = "win (tied)" if len(state.winners) > 1 else "wins"
        status = f"Game over after round {state.round}: {won} {verb}"
    else:
        stage = "The deal" if state.round == 0 else f"Round {state.round}"  # round 0: the setup keep
        status = f"{stage}: {seat_name(names, state.current)} to move: {state.decision_name()}"
    if state.unlimited:  # an unlimited supply's count is a ledger, not what is left
        supply = "supply: unlimited"
    else:
        supply = (
            f"supply: {state.sup_laborers} Laborers, {state.sup_convicts} Convicts, "
            f"{state.sup_reinf} Reinforcements"
        )
    lines = [
        status,
        f"Governor blocks left {state.gov_stock} · favor deck {len(state.deck)} · {supply}",
        "",
        *render_wall(state),
        "  (A-D: players' blocks, lower case = reinforced, G: Governor, .: empty; a cell is R2-L3-C4)",
        "",
        *render_players(state, names),
        "  (roles in hand: R Recruiter, P Planner, B Builder, T Treasurer, M Taskmaster)",
    ]
    if last_events > 0:
        told = last_lines(state.log, names, state.game.deck.cards, last_events)
        if told:
            lines += ["", "  What happened last:", *("    " + line.text for line in told)]
    return "\n".join(printable(line.rstrip()) for line in lines)
