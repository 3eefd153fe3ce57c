"""The JSON a browser (``web``) or a bot served over HTTP (``players.remote``) gets of a position:
what one seat may see, and nothing else.

``seat_view`` starts from ``views.picture.table_view`` (the seat view model: another seat's
favor hand, the cards it chooses from and its sealed bid are absent, only their counts are
there; the deck is a count) and adds, for the seat to move only, its legal choices with their
costs and the role actions refused with why (``views.narrate``). A spectator (``seat=None``)
sees every hand and bid, as in a replay or a game between agents. Nothing of the engine state
is sent but what the view model holds; a test checks that a seat's JSON does not change when
everything the seat cannot see is dealt again.

Beside the view, two things the web app's table shows, computed from the engine:

* ``hand_progress``: each card of one seat's own hand with how far its pattern is on the wall
  (``FavorCard.matches`` / ``cells_at`` over that seat's unreinforced blocks: the cells still
  needed where it could still be completed) and when its reward counts. For that seat only.
* ``score_if_ended``: every seat's score if the game ended now, its end bonuses broken out,
  from the engine's own final scoring played on a copy of the state. Public: final scoring reads
  the wall, Jade, Treasure, Buyback Chips and Workers, which every seat sees, never a hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from island_fortress_env.engine import actions as A
from island_fortress_env.engine.favors import FavorCard
from island_fortress_env.engine.projection import final_scoring_now
from island_fortress_env.engine.wall import iter_bits
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


# A favor card's reward is paid when the card is played (engine: Builder B's rewards), not before.
_PLAY_FAVOR = A.op_label(A.OP_PLAY_FAVOR)
_PERSISTENT = ("income", "petition")  # added every round / to every bid once the card is played


def _card_timing(card: FavorCard) -> str:
    words = {"income": "the income bonus", "petition": "the petition bonus"}
    lasting = [words[k] for k in _PERSISTENT if card.rewards.get(k)]
    out = (
        f"Its reward ({narrate.card_rewards(card)}) counts once you play the card ({_PLAY_FAVOR}, "
        "with its pattern on your unreinforced blocks): nothing while it stays in your hand."
    )
    if lasting:
        verb = "lasts" if len(lasting) == 1 else "last"
        out += f" From then on {narrate.and_list(lasting)} {verb} to the end of the game."
    return out


def hand_progress(state: State, seat: int) -> list[dict[str, Any]]:
    """Each card of ``seat``'s own favor hand (module doc): ``need`` the fewest cells still to
    build (0: complete now, it can be played), at the place on the wall where its pattern's
    missing cells are all empty (None: no such place is left), those cells' labels, and when its
    reward counts. Only ever sent to ``seat`` itself: it names the hand."""
    geo = state.geo
    mine = state.own[seat] & ~state.reinf
    free = geo.valid & ~state.occ
    out = []
    for index in iter_bits(state.favor_hand[seat]):
        card = state.game.deck.cards[index]
        best: int | None = None
        for anchor in iter_bits(card.anchor_mask):
            cells = card.cells_at(anchor)
            if cells & ~geo.valid:
                continue  # the pattern would run off the wall
            missing = cells & ~mine
            if missing & ~free:
                continue  # a marked cell holds another block, or one of yours reinforced
            if best is None or missing.bit_count() < best.bit_count():
                best = missing
                if not missing:
                    break
        need = None if best is None else best.bit_count()
        out.append(
            {
                "id": index,
                "need": need,
                "size": len(card.offsets),
                "cells": [] if best is None else [geo.bit_cell[b] for b in iter_bits(best)],
                "progress": _progress_words(need, best, geo.cell_name),
                "when": _card_timing(card),
            }
        )
    return out


def _progress_words(need: int | None, missing: int | None, name: Any) -> str:
    if need is None or missing is None:
        return "no place is left on the wall where its pattern could be completed"
    if need == 0:
        return f"complete on the wall: it can be played ({_PLAY_FAVOR})"
    cells = ", ".join(name(b) for b in iter_bits(missing))
    return f"{narrate.plural(need, 'more block')} of yours needed, the nearest at {cells}"


def score_if_ended(state: State) -> dict[str, Any] | None:
    """Every seat's score if the game ended now (module doc): the engine's final scoring played on
    a copy of the state, its points by category (``narrate.BREAKDOWN_LABELS``), the totals and who
    would win. None once the game is over (the end screen says it)."""
    if state.is_terminal():
        return None
    end = final_scoring_now(state)  # the engine's end scoring, with no trade-in
    breakdown = narrate.score_breakdown(end.events, state.n)
    categories = list(dict.fromkeys(label for parts in breakdown for label in parts))
    note = "Uncompleted rows and levels and the end bonuses, scored as the game's end would score them now."
    if state.cfg.favor_trade_in:
        note += " The Favor Trade-in, before them at the end, is left out: it depends on choices to come."
    return {
        "categories": categories,
        "rows": [
            {
                "seat": p,
                "now": state.score[p],
                "points": [breakdown[p].get(c, 0) for c in categories],
                "total": end.score[p],
            }
            for p in range(state.n)
        ],
        "winners": list(end.winners),
        "note": note,
    }
