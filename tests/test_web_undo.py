"""Undo in the browser app shows the person nothing hidden: a move of theirs that showed them
what they could not see before (favor cards drawn from the deck, the other seats' sealed bids
when their bid was the last) stands, since the replay would deal the same again; every other
decision can still be taken back. And ``/advance`` and ``/undo`` refuse keys they do not read."""

from __future__ import annotations

import random
from collections import Counter
from typing import TYPE_CHECKING

from island_fortress_env.engine import events as ev
from island_fortress_env.engine.infoset import seat_fields
from island_fortress_env.engine.visibility import redeal_unseen
from tests.web_client import error, live_game, start, unchanged

if TYPE_CHECKING:
    from island_fortress_env.web.games import Move

# (players, the person's seat, seed): 12 games against heuristic bots.
GAMES = [(2, 0, 1), (2, 1, 2), (3, 2, 3), (2, 0, 4), (2, 1, 5), (3, 0, 6)]
GAMES += [(2, 0, 7), (2, 1, 8), (3, 1, 9), (2, 0, 10), (2, 1, 11), (3, 2, 12)]
REDEALS = 4
SAMPLE = 0.1  # the share of the undos offered that are taken (each replays the game)


def shows_hidden(before, action: int, after, seat: int) -> bool:
    """Whether ``seat``'s move showed it something it could not see: on positions it cannot tell
    from ``before`` (everything it cannot see dealt again), the same move leaves it another view."""
    seen = seat_fields(after, seat)
    for k in range(REDEALS):
        other = redeal_unseen(before, seat, seed=k)
        other.apply_action(action)
        if seat_fields(other, seat) != seen:
            return True
    return False


def kind_of(game, moves) -> str:
    """What the person's moves showed, by the engine's events: a draw, or the petition's bids."""
    for move in moves:
        after = game.history[move.step + 1].log[len(game.history[move.step].log) :]
        if any(isinstance(e, ev.Drew) for e in ev.typed(after)):
            return "draw"
        if any(isinstance(e, ev.Petition) for e in ev.typed(after)):
            return "bids"
    return "other"


def test_no_undo_shows_what_a_move_drew_or_revealed(client):
    """12 seeded games against heuristic bots; after every decision of the person's (and each of
    their forced moves that follows it) the server's answer says whether undo is offered: not
    where the moves it would take back showed something hidden (and the undo, tried every time,
    is a 409 saying why, nothing changed), everywhere else yes (the undo tried on a sample, then
    the same choice made again). 0 peeks: no undo took back a move that showed anything hidden."""
    counts: Counter[str] = Counter()
    for players, seat, seed in GAMES:
        snap = start(client, players, seat, ["heuristic"] * (players - 1), seed)
        token, game_id = snap["token"], snap["id"]
        game = live_game(client, game_id)
        draw = random.Random(seed)
        hidden: dict[int, bool] = {}  # step -> whether the person's move at it showed anything hidden
        tried: set[int] = set()  # how many actions the game held when an undo was tried
        for _ in range(5000):
            if snap["over"]:
                break
            mine = undone_by_undo(game, seat)
            if mine and len(game.actions) not in tried:
                tried.add(len(game.actions))
                for move in mine:
                    if move.step not in hidden:
                        before, after = game.history[move.step], game.history[move.step + 1]
                        hidden[move.step] = shows_hidden(before, game.actions[move.step], after, seat)
                shown = any(hidden[m.step] for m in mine)
                texts = [m.text for m in mine]
                action = game.actions[mine[0].step]
                if not shown and draw.random() >= SAMPLE:  # the server says so; the undo itself sampled
                    assert snap["can_undo"] and "undo_refused" not in snap, (seed, texts)
                    counts["offered"] += 1
                    continue
                response = client.post(f"/api/games/{game_id}/undo", json={"token": token})
                if response.status_code != 200:
                    message = error(response, 409)
                    assert "so it stands" in message and any(t in message for t in texts), message
                    assert not snap["can_undo"] and snap["undo_refused"] == message
                    unchanged(client, {**snap, "token": token}, snap)
                    counts[f"refused {kind_of(game, mine) if shown else 'without cause'}"] += 1
                    continue
                assert snap["can_undo"] and "undo_refused" not in snap, (seed, texts)
                counts["peeks" if shown else "undone"] += 1
                response = client.post(f"/api/games/{game_id}/act", json={"token": token, "action": action})
            elif snap["waiting"]:
                choice = draw.choice(snap["view"]["choices"])["action"]
                response = client.post(f"/api/games/{game_id}/act", json={"token": token, "action": choice})
            else:
                # one move at a time while the person's forced moves follow their decision
                moves = 1 if game.state.current_player() == seat else 50
                response = client.post(f"/api/games/{game_id}/advance", json={"token": token, "moves": moves})
            assert response.status_code == 200, response.text
            snap = response.json()
        else:
            raise AssertionError(f"game {seed} did not end")
    assert counts["peeks"] == 0, counts
    assert counts["refused without cause"] == 0, counts  # every other decision can be taken back
    # both kinds of hidden information were met, and many decisions taken back
    assert counts["refused draw"] >= 3 and counts["refused bids"] >= 3 and counts["undone"] >= 50, counts
    assert counts["refused other"] == 0, counts


def undone_by_undo(game, seat: int) -> list[Move]:
    """The person's moves an undo would take back: their last decision and their forced moves
    after it, when no other seat has moved since (none otherwise)."""
    mine: list[Move] = []
    for move in reversed(game.moves):
        if move.seat != seat:
            return []
        mine.insert(0, move)
        if not move.auto:
            return mine
    return []


def test_advance_and_undo_refuse_keys_they_do_not_read(client):
    """A misspelt key is one 400 naming it, the game unchanged; the page's own bodies (``token``,
    ``moves``) still play."""
    snap = start(client, players=2, seat=1, seed=3)  # seat 0, a bot, keeps its favor cards first
    game_id, token = snap["id"], snap["token"]
    for path, extra in (
        ("advance", {"moves": 1, "move": 5}),
        ("advance", {"Moves": 3}),
        ("advance", {"moves": 1, "seat": 0, "steps": 2}),
        ("undo", {"step": 0}),
    ):
        message = error(client.post(f"/api/games/{game_id}/{path}", json={"token": token, **extra}), 400)
        for key in set(extra) - {"token", "moves"}:
            assert repr(key) in message, message
        unchanged(client, snap, snap)
    moved = client.post(f"/api/games/{game_id}/advance", json={"token": token, "moves": 1})
    assert moved.status_code == 200 and moved.json()["step"] == snap["step"] + 1, moved.text
    assert client.post(f"/api/games/{game_id}/advance", json={"token": token}).status_code == 200
