"""A readable text view of a state: the wall, prisons, Taskmasters and every player's board.

Public information only, so it is safe to show at any seat (favor hands appear as counts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from island_fortress_env.engine.describe import event_to_string
from island_fortress_env.engine.wall import COLUMNS_PER_REGION, STRIDE

if TYPE_CHECKING:
    from island_fortress_env.engine.state import State

PLAYER_MARKS = "ABCD"  # builder's marks of seats 0-3; lower case when reinforced


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
    geo = state.geo
    lines = ["      " + "   ".join(f"Region {r + 1}".ljust(9) for r in range(geo.regions))]
    for level in range(3, -1, -1):
        parts = []
        for r in range(geo.regions):
            cells = [
                _cell_char(state, level * STRIDE + r * COLUMNS_PER_REGION + c)
                for c in range(COLUMNS_PER_REGION)
            ]
            parts.append(" ".join(cells))
        lines.append(f"  L{level + 1}  " + "   ".join(parts))
    camps = []
    for r in range(geo.regions):
        here = "".join(PLAYER_MARKS[p] for p in range(state.n) if state.region[p] == r) or "-"
        camps.append(f"camp {here}".ljust(9))
    lines.append("      " + "   ".join(camps))
    prisons = [f"{state.prison_jade[r]}J {state.prison_convicts[r]}C".ljust(9) for r in range(geo.regions)]
    lines.append("      " + "   ".join(prisons) + "  (prisons: Jade, Convicts)")
    return lines


ROLE_LETTERS = "RPBTM"  # Recruiter, Planner, Builder, Treasurer, taskMaster


def _roles(mask: int) -> str:
    return "".join(ROLE_LETTERS[c] if mask >> c & 1 else "." for c in range(5))


def render_players(state: State) -> list[str]:
    head = "  seat score jade lab conv blocks stock chips treas favors inc pet roles"
    lines = [head]
    for p in range(state.n):
        marker = "*" if p == state.current else " "
        gov = " Governor" if p == state.holder else ""
        if p == state.holder and state.gov_in_hand:
            gov += " (block in hand)"
        lines.append(
            f" {marker}{PLAYER_MARKS[p]}({p}) {state.score[p]:5d} {state.jade[p]:4d} "
            f"{state.laborers[p]:3d} {state.convicts[p]:4d} {state.blocks[p]:6d} "
            f"{state.stock_blocks[p]:5d} {state.chips[p]:5d} {state.treasure[p]:5d} "
            f"{state.favor_hand[p].bit_count():2d}/{state.favor_played[p].bit_count():<3d} "
            f"{state.income_bonus[p]:3d} {state.petition_bonus[p]:3d} {_roles(state.roles_hand[p])}{gov}"
        )
    return lines


def render_text(state: State, last_events: int = 0) -> str:
    if state.is_terminal():
        status = f"Game over after round {state.round}: winner(s) {[PLAYER_MARKS[w] for w in state.winners]}"
    else:
        status = (
            f"Round {state.round}: player {PLAYER_MARKS[state.current]}({state.current}) "
            f"to move: {state.decision_name()}"
        )
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
        "  (A-D: players' blocks, lower case = reinforced, G: Governor, .: empty)",
        "",
        *render_players(state),
        "  (roles in hand: R Recruiter, P Planner, B Builder, T Treasurer, M Taskmaster)",
    ]
    if last_events:
        lines += ["", *("  " + event_to_string(e) for e in state.log[-last_events:])]
    return "\n".join(lines)
