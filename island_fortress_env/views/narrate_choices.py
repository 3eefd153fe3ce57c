"""What can be chosen, in a board-game player's words.

``describe_choice`` turns a legal action into a ``Choice``: its words, what it costs ("Collect 6
Convicts: costs 2 Laborers") and the thing on the table it is chosen by (a wall cell, a role card,
a favor card, a bid amount, a region, a pair of prisons...). ``action_words`` is its words alone:
the one way an action is said to a person, by the command line, the terminal, the web app and
the docs. ``public_move_text`` is what the other seats may learn of a move; ``pending_text`` what
the player to move is in the middle of. Every number is the engine's (its rules tables and its
functions), none is worked out here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from island_fortress_env.engine import actions as A
from island_fortress_env.engine import events as ev
from island_fortress_env.engine import tables, visibility
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.describe import cell_workers
from island_fortress_env.engine.refusals import replace_workers
from island_fortress_env.engine.roles.builder import laborers_lost
from island_fortress_env.engine.roles.treasurer import jade_to_collect
from island_fortress_env.views.narrate_words import (
    MARKS,
    ROLE_NAMES,
    card_text,
    cell_label,
    plural,
    seat_name,
)

if TYPE_CHECKING:
    from island_fortress_env.engine import State

__all__ = [
    "Choice",
    "TargetKind",
    "action_words",
    "describe_choice",
    "is_hidden_move",
    "pending_text",
    "public_move_text",
]


class TargetKind(str, Enum):
    """What on the table a choice is made by."""

    CELL = "cell"  # a wall cell: build, replace, remove or reinforce
    GOVERNOR = "governor"  # a wall cell for the Governor block
    ROLE = "role"  # a role card's action (value: the action, ``actions.OP_*``)
    REPEAT = "repeat"  # Taskmaster B: repeat this action of a card on the table
    FAVOR = "favor"  # a favor card (value: its index in the deck): keep or play
    BID = "bid"  # the petition bid (value: the amount)
    REGION = "region"  # Move the Taskmaster to this region
    PRISONS = "prisons"  # Collect a Treasure: this pair of prisons (value, other)
    OPTION = "option"  # a count or a yes/no: shown as a button


@dataclass(frozen=True)
class Choice:
    """A legal action as the player sees it."""

    action: int
    label: str  # "Recruit 3 Laborers"
    cost: str  # "costs 2 Jade"; "" when free
    kind: TargetKind
    value: int = -1
    other: int = -1  # the second prison of a pair


def _op_cost(state: State, player: int, op: int) -> str:
    """What a role action costs or gives, as far as it is known when the card is played."""
    costs = "/".join(str(c) for c in tables.PURCHASE_COST[1:])
    region = state.region[player] + 1
    prison = f"; a Convict from the supply goes to the prison of region {region}"
    if op == A.OP_RECRUIT:
        return f"then 1-{tables.MAX_PURCHASE} Laborers for {costs} Jade{prison}"
    if op == A.OP_COLLECT_CONVICTS:
        return f"costs {tables.LABORERS_FOR_CONVICTS} Laborers"
    if op == A.OP_COLLECT_PRISON:
        r = state.region[player]
        return (
            f"free: takes {plural(state.prison_jade[r], 'Jade')} and "
            f"{plural(state.prison_convicts[r], 'Convict')} from the prison of region {region}"
        )
    if op == A.OP_BUY_BLOCKS:
        return f"then 1-{tables.MAX_PURCHASE} Wall Blocks for {costs} Jade{prison}"
    if op == A.OP_DRAW_FAVORS:
        return "free: " + ", or ".join(f"draw {d} keep {k}" for d, k in tables.FAVOR_DRAW_OPTIONS)
    if op == A.OP_REMOVE_REINFORCEMENT:
        return f"free: a Reinforcement in region {region}"
    if op == A.OP_BUILD:
        workers = "/".join(str(w) for w in tables.WORKERS_PER_LEVEL)
        return (
            f"Workers {workers} by level (all Convicts and half the Laborers used die); "
            f"a second block costs {tables.DOUBLE_BUILD_COST} Jade{prison}"
        )
    if op == A.OP_PLAY_FAVOR:
        return "free: reinforce a block of the pattern and take the card's rewards"
    if op == A.OP_REPLACE:
        return f"{tables.REPLACE_MULTIPLIER}x the Workers of the block's level, in region {region}"
    if op == A.OP_COLLECT_JADE:
        return f"free: gains {plural(jade_to_collect(state.treasure[player]), 'Jade')}"
    if op == A.OP_COLLECT_TREASURE:
        return f"costs {tables.TREASURE_CONVICTS} Convicts (to two prisons); gains a Treasure (1 VP)"
    return "free"


def _cell_choice(state: State, action: int, cell: int) -> Choice:
    where = cell_label(cell)
    decision = state.decision
    if decision == Decision.BUILD_CELL:
        need = cell_workers(cell)
        return Choice(action, f"Build at {where}", f"needs {need} Workers", TargetKind.CELL, cell)
    if decision == Decision.REPLACE_CELL:
        bit = state.geo.cell_bits[cell]
        need = replace_workers(bit)
        owner = state.owner_at(bit)
        whose = f"{MARKS[owner]}'s block" if owner is not None and owner >= 0 else "the block"
        return Choice(action, f"Replace {whose} at {where}", f"needs {need} Workers", TargetKind.CELL, cell)
    if decision == Decision.REINFORCE_CELL:
        return Choice(action, f"Reinforce the block at {where}", "", TargetKind.CELL, cell)
    return Choice(action, f"Remove the Reinforcement at {where}", "", TargetKind.CELL, cell)


def _count_choice(state: State, action: int, name: str, i: int) -> Choice:
    """Recruit or buy ``i + 1``, or build ``i + 1`` blocks."""
    count = i + 1
    if name == "build_count":
        cost = f"costs {tables.DOUBLE_BUILD_COST} Jade" if i else ""
        return Choice(action, f"Build {plural(count, 'block')}", cost, TargetKind.OPTION, count)
    what = "Laborer" if name == "recruit" else "Wall Block"
    verb = "Recruit" if name == "recruit" else "Buy"
    jade = tables.PURCHASE_COST[count]
    cost = f"costs {jade} Jade" if jade else "free"
    return Choice(action, f"{verb} {plural(count, what)}", cost, TargetKind.OPTION, count)


def describe_choice(state: State, action: int) -> Choice:
    """A legal action of the player to move, with its cost and the thing it is chosen by."""
    fam = A.family_of(action)
    i = action - fam.start
    p = state.current_player()
    name = fam.name
    if name == "role":
        return Choice(action, f"{A.OP_NAMES[i]}", _op_cost(state, p, i), TargetKind.ROLE, i)
    if name == "repeat":
        jade = tables.REPEAT_ROLE_COST[A.ROLE_KEYS[A.OP_CARD[i]]]
        label = f"Repeat {A.op_label(i)}"
        return Choice(action, label, f"costs {jade} Jade; {_op_cost(state, p, i)}", TargetKind.REPEAT, i)
    if name in ("recruit", "buy_blocks", "build_count"):
        return _count_choice(state, action, name, i)
    if name == "draw":
        draw, keep = tables.FAVOR_DRAW_OPTIONS[i]
        return Choice(action, f"Draw {draw} favor cards, keep {keep}", "", TargetKind.OPTION, draw)
    if name == "cell":
        return _cell_choice(state, action, i)
    if name == "governor":
        return Choice(action, f"Governor block at {cell_label(i)}", "free", TargetKind.GOVERNOR, i)
    if name == "laborers":
        convicts = max(state.worker_need - i, 0)
        label = f"{plural(i, 'Laborer')} and {plural(convicts, 'Convict')}"
        lost = f"loses {plural(laborers_lost(i), 'Laborer')} and {plural(convicts, 'Convict')}"
        return Choice(action, label, lost, TargetKind.OPTION, i)
    if name == "move":
        return Choice(action, f"Move the Taskmaster to region {i + 1}", "free", TargetKind.REGION, i)
    if name == "prisons":
        a, b = A.PRISON_PAIRS[i]
        label = f"Convicts to the prisons of regions {a + 1} and {b + 1}"
        return Choice(action, label, f"costs {tables.TREASURE_CONVICTS} Convicts", TargetKind.PRISONS, a, b)
    if name in ("keep_favor", "play_favor"):
        deck = state.game.deck.cards
        text = card_text(deck[i]) if i < len(deck) else f"#{i}"
        verb = "Keep" if name == "keep_favor" else "Play"
        return Choice(action, f"{verb} {text}", "", TargetKind.FAVOR, i)
    if name == "bid":
        if (
            state.decision == Decision.PETITION_BID
            and not state.bid_digits_left
            and not visibility.own_bid(state, p)
        ):
            pays = f"costs {plural(i, 'Jade')} if it wins" if i else "free"
            return Choice(action, f"Bid {plural(i, 'Jade')}", pays, TargetKind.BID, i)
        return Choice(action, state.action_to_string(action).capitalize(), "", TargetKind.OPTION, i)
    return _turn_choice(state, action, name)


def _turn_choice(state: State, action: int, name: str) -> Choice:
    """The end of a turn (buyback, end the turn), the Favor Trade-in, and Pass: buttons numbered
    in the order of their action ids."""
    if name == "end_turn":
        return Choice(action, "End the turn", "", TargetKind.OPTION, action - A.END_TURN)
    if name == "buyback_taskmaster":
        label = "Buy back the Taskmaster and act again"
        cost = f"costs {tables.TASKMASTER_BUYBACK_COST} Jade"
        return Choice(action, label, cost, TargetKind.OPTION, action - A.END_TURN)
    if name == "buyback_chip":
        label = f"Buy back the {ROLE_NAMES[state.last_card]} and act again"
        return Choice(action, label, "costs a Buyback Chip", TargetKind.OPTION, action - A.END_TURN)
    if name == "trade_jade":
        label = "Trade in a favor card for 1 Jade"
        return Choice(action, label, "costs a favor card", TargetKind.OPTION, action - A.TRADE_JADE)
    if name == "trade_convict":
        label = "Trade in a favor card for 1 Convict"
        return Choice(action, label, "costs a favor card", TargetKind.OPTION, action - A.TRADE_JADE)
    if name == "trade_done":
        return Choice(action, "Stop trading", "", TargetKind.OPTION, action - A.TRADE_JADE)
    return Choice(action, "Pass", "", TargetKind.OPTION, 0)


def action_words(state: State, action: int) -> str:
    """``action`` (legal for the player to move in ``state``) in words: "Recruit 3 Laborers",
    "Build at R2-L3-C4". What the command line, the terminal, the web app and the docs say of a
    move; what the other seats may learn of it is ``public_move_text``."""
    return describe_choice(state, action).label


# What the other seats learn of a move: the card kept and the sealed bid stay hidden.
_HIDDEN_FAMILIES = {A.KEEP_FAVOR: "keeps a favor card", A.BID: "seals a petition bid"}


def is_hidden_move(action: int) -> bool:
    """Whether the other seats may not learn which action this is (a kept card, a bid)."""
    return A.family_of(action).start in _HIDDEN_FAMILIES


def public_move_text(state: State, action: int) -> str:
    """``action`` (of the player to move in ``state``) as the other seats may learn of it."""
    hidden = _HIDDEN_FAMILIES.get(A.family_of(action).start)
    if hidden is not None:
        return hidden
    return action_words(state, action)


def pending_text(state: State, names: Sequence[str]) -> str:
    """What the player to move is in the middle of: the role action started this turn and the
    steps taken so far (from the public log), then the decision asked now."""
    if state.is_terminal():
        return "The game is over."
    p = state.current_player()
    asked = Decision(state.decision).label
    if not state.in_action or state.op < 0:
        return f"{seat_name(names, p)}: {asked}."
    log = state.log
    start = max(i for i, e in enumerate(log) if isinstance(e, ev.Role) and e.player == p)
    steps = []
    role = log[start]
    assert isinstance(role, ev.Role)
    for event in log[start + 1 :]:
        if isinstance(event, ev.Build):
            steps.append(plural(event.blocks, "block"))
        elif isinstance(event, ev.Place) and not event.governor:
            steps.append(f"block at {cell_label(event.cell)}")
        elif isinstance(event, ev.Replaced):
            steps.append(f"replaced {cell_label(event.cell)}")
        elif isinstance(event, ev.FavorPlayed):
            steps.append(f"card {state.game.deck.cards[event.card].name}")
        elif isinstance(event, ev.Drew):
            steps.append(f"drew {event.draw}")
    done = f" ({', '.join(steps)})" if steps else ""
    card = ROLE_NAMES[A.OP_CARD[role.op]]
    return f"{seat_name(names, p)}: {card} {A.OP_LETTER[role.op]}, {A.OP_NAMES[role.op]}{done}; now: {asked}."
