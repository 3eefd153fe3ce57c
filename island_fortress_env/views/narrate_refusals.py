"""Why a role action shown is not offered, in a board-game player's words.

The reasons are the engine's (``engine.refusals.refusal``: the same checks that decide the role
choice's legal actions); this module only words them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from island_fortress_env.engine import actions as A
from island_fortress_env.engine import refusals as engine_refusals
from island_fortress_env.engine import tables
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.refusals import Reason
from island_fortress_env.views.narrate_choices import TargetKind
from island_fortress_env.views.narrate_words import plural

if TYPE_CHECKING:
    from island_fortress_env.engine import State

__all__ = ["Refusal", "refusal_words", "refusals"]


@dataclass(frozen=True)
class Refusal:
    """A role action shown but not offered, and why."""

    kind: TargetKind  # ROLE or REPEAT
    op: int
    label: str
    reason: str


_Words = Callable[["engine_refusals.Refusal", "State", int], str]
_NO_WALL_BLOCK = "no Wall Block in your supply (the Planner buys them)"


def _too_few_workers(why: engine_refusals.Refusal, state: State, p: int) -> str:
    return (
        f"the cheapest cell in region {why.region + 1} needs {why.need} Workers; you have "
        f"{plural(state.laborers[p], 'Laborer')} and {plural(state.convicts[p], 'Convict')}"
    )


def _no_replace(why: engine_refusals.Refusal, state: State, p: int) -> str:
    return (
        f"no other player's unreinforced block in region {why.region + 1} that your {why.have} "
        f"Workers can replace ({tables.REPLACE_MULTIPLIER}x the level's Workers)"
    )


_WORDS: dict[Reason, _Words] = {
    Reason.REPEAT_COST: lambda why, s, p: f"the repeat costs {why.need} Jade; you have {why.have}",
    Reason.NO_LABORER_IN_SUPPLY: lambda why, s, p: "no Laborer left in the supply",
    Reason.TOO_FEW_LABORERS: lambda why, s, p: f"needs {why.need} Laborers; you have {why.have}",
    Reason.STOCKPILE_EMPTY: lambda why, s, p: "no Wall Block left in your stockpile",
    Reason.DECK_TOO_SHORT: lambda why, s, p: f"needs {why.need} cards in the favor deck; it has {why.have}",
    Reason.NO_REINFORCEMENT: lambda why, s, p: (
        f"no Reinforcement in region {why.region + 1}, where your Taskmaster is"
    ),
    Reason.NO_WALL_BLOCK: lambda why, s, p: _NO_WALL_BLOCK,
    Reason.NO_BUILDABLE_CELL: lambda why, s, p: (
        f"no empty cell with support below in region {why.region + 1}, where your Taskmaster is"
    ),
    Reason.TOO_FEW_WORKERS: _too_few_workers,
    Reason.NO_FAVOR_CARD: lambda why, s, p: "no favor card in your hand",
    Reason.NO_COMPLETE_PATTERN: lambda why, s, p: (
        "no favor card in your hand has its pattern complete in your unreinforced blocks"
    ),
    Reason.VARIANT_OFF: lambda why, s, p: "the Friendly variant leaves this action out",
    Reason.NO_REPLACE_TARGET: _no_replace,
    Reason.TOO_FEW_WORKERS_TO_REPLACE: _no_replace,
    Reason.TOO_FEW_CONVICTS: lambda why, s, p: f"needs {why.need} Convicts; you have {why.have}",
}
# Refusals of actions that are not shown at all: the card is not the player's to play now.
_NOT_SHOWN = frozenset({Reason.CARD_NOT_IN_HAND, Reason.NO_TASKMASTER, Reason.CARD_NOT_ON_TABLE})


def refusal_words(why: engine_refusals.Refusal, state: State) -> str:
    """The engine's reason ``why`` (for the player to move in ``state``) in words."""
    words = _WORDS.get(why.reason)
    return words(why, state, state.current_player()) if words else "not possible now"


def refusals(state: State) -> list[Refusal]:
    """Why the role actions of the cards in the mover's hand (and Taskmaster B's repeats of the
    cards on the table) that are not legal now are refused. Empty outside the role choice."""
    if state.is_terminal() or state.decision != Decision.CHOOSE_ROLE_ACTION:
        return []
    out = []
    for action in range(A.ROLE, A.REPEAT + A.NUM_REPEATABLE):
        why = engine_refusals.refusal(state, action)
        if why is None or why.reason in _NOT_SHOWN:
            continue
        if action < A.REPEAT:
            op = action - A.ROLE
            out.append(Refusal(TargetKind.ROLE, op, A.OP_NAMES[op], refusal_words(why, state)))
        else:
            op = action - A.REPEAT
            out.append(Refusal(TargetKind.REPEAT, op, f"Repeat {A.op_label(op)}", refusal_words(why, state)))
    return out
