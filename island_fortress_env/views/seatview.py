"""The JSON a browser (``web``) or a bot served over HTTP (``players.remote``) gets of a position:
what one seat may see, and nothing else.

``seat_view`` starts from ``views.picture.table_view`` (the seat view model: another seat's
favor hand, the cards it chooses from and its sealed bid are absent, only their counts are
there; the deck is a count) and adds, for the seat to move only, its legal choices with their
costs and the role actions refused with why (``views.narrate``). A spectator (``seat=None``)
sees every hand and bid, as in a replay or a game between agents. Nothing of the engine state
is sent but what the view model holds; a test checks that a seat's JSON does not change when
everything the seat cannot see is dealt again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from island_fortress_env.engine.favors import FavorCard
from island_fortress_env.views import narrate
from island_fortress_env.views.picture import CellView, PlayerView, TableView, table_view

if TYPE_CHECKING:
    from island_fortress_env.engine import State


def card_json(card: FavorCard) -> dict[str, Any]:
    """A favor card the viewer may see: its deck index (the id its choices use), name,
    pattern (rows, top first) and rewards in words."""
    return {
        "id": card.index,
        "name": card.name,
        "pattern": list(card.pattern),
        "rewards": narrate.card_rewards(card),
    }


def _cards(cards: tuple[FavorCard, ...] | None) -> list[dict[str, Any]] | None:
    return None if cards is None else [card_json(c) for c in cards]


def _cell_json(index: int, cell: CellView) -> dict[str, Any]:
    return {
        "cell": index,
        "label": narrate.cell_label(index),
        "region": cell.region,
        "level": cell.level,
        "column": cell.column,
        "owner": cell.owner,  # a seat, -1 for a Governor block, None when empty
        "reinforced": cell.reinforced,
        "buildable": cell.buildable,
    }


def _player_json(pl: PlayerView) -> dict[str, Any]:
    out = {f.name: getattr(pl, f.name) for f in fields(pl)}  # the card tuples are replaced below
    out["mark"] = narrate.MARKS[pl.seat]
    out["roles_hand"] = list(pl.roles_hand)
    out["roles_table"] = list(pl.roles_table)
    out["favor_played"] = [card_json(c) for c in pl.favor_played]
    out["hand"] = _cards(pl.hand)
    out["choosing"] = _cards(pl.choosing)
    return out


def view_json(view: TableView) -> dict[str, Any]:
    """A ``TableView`` as JSON-ready data (every field of it, nothing more)."""
    return {
        "seat": view.seat,
        "regions": view.regions,
        "round": view.round,
        "status": view.status,
        "decision": view.decision,
        "cells": [_cell_json(i, c) for i, c in enumerate(view.cells)],
        "prisons": [
            {"jade": j, "convicts": c} for j, c in zip(view.prison_jade, view.prison_convicts, strict=True)
        ],
        "players": [_player_json(p) for p in view.players],
        "governor_blocks_left": view.governor_blocks_left,
        "deck_size": view.deck_size,
        "supply": [{"name": name, "amount": amount} for name, amount in view.supply],
    }


def choice_json(choice: narrate.Choice) -> dict[str, Any]:
    return {
        "action": choice.action,
        "label": choice.label,
        "cost": choice.cost,
        "kind": choice.kind.value,
        "value": choice.value,
        "other": choice.other,
    }


def seat_view(
    state: State, seat: int | None, names: Sequence[str], with_choices: bool = True
) -> dict[str, Any]:
    """What ``seat`` (``None``: a spectator) may see of ``state``, as JSON-ready data.

    The legal choices (and the refused role actions) are added when ``seat`` is the player to
    move, or for a spectator when ``with_choices``; never another seat's."""
    view = table_view(state, seat, tuple(names))
    out = view_json(view)
    terminal = state.is_terminal()
    mover = None if terminal else state.current_player()
    out["to_move"] = mover
    out["terminal"] = terminal
    out["pending"] = narrate.pending_text(state, names)
    stage = "The deal" if view.round == 0 else f"Round {view.round}"
    out["headline"] = view.status if terminal else f"{stage} · {out['pending']}"
    out["choices"] = []
    out["refusals"] = []
    if mover is not None and (seat == mover or (seat is None and with_choices)):
        out["choices"] = [choice_json(narrate.describe_choice(state, a)) for a in state.legal_actions()]
        out["refusals"] = [
            {"kind": r.kind.value, "op": r.op, "label": r.label, "reason": r.reason}
            for r in narrate.refusals(state)
        ]
    if terminal:
        out["winners"] = list(state.winners)
        out["breakdown"] = narrate.score_breakdown(state.log, state.n)
    return out


def positions(states: Sequence[State]) -> list[dict[str, Any]]:
    """Each state's round and seat to move (None at the end): public, for the step bar."""
    return [{"round": s.round, "mover": None if s.is_terminal() else s.current_player()} for s in states]
