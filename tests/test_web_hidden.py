"""Hidden information in the browser is enforced by the server: what a seat's browser receives
never holds another seat's favor hand or drawn cards, a sealed bid before the petition reveals
it, the deck order or the game's seed. That holds for every part of the answer: the position,
the moves, the recap since the seat's last turn, the warnings and notes on its choices, the
answer to an undo, its own hand's progress on the wall (its hand only), the scores if the game
ended now (public), where it stands in the round and what it confirms before the others move; the
end screen reveals every hand, and only once the game is over."""

from __future__ import annotations

import json
import random
import re

import pytest

from island_fortress_env.engine.visibility import redeal_unseen
from island_fortress_env.env.aec import raw_env
from island_fortress_env.views import narrate
from island_fortress_env.views.seatview import hand_progress, score_if_ended
from island_fortress_env.web.analysis import win_chances
from island_fortress_env.web.seatview import seat_view
from island_fortress_env.web.words import consequences, decision_notes, forced_note, stage_words
from tests.web_client import client_for, play_through


def states_of_random_games(players: int, games: int, every: int = 7):
    for seed in range(games):
        env = raw_env(num_players=players)
        env.reset(seed=seed)
        state = env.game_state
        draw = random.Random(seed)
        step = 0
        while not state.is_terminal():
            if step % every == 0:
                yield state.clone()
            legal = state.legal_actions()
            state.apply_action(legal[draw.randrange(len(legal))])
            step += 1


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_seats_view_does_not_change_when_what_it_cannot_see_is_dealt_again(players):
    """The JSON of seat k is a function of what k may know: redealing every hidden thing (other
    hands, their drawn cards, the deck order, their sealed bids) leaves it equal, while the
    spectator's view (every hand) does change."""
    names = tuple(f"p{i}" for i in range(players))
    changed = 0
    for state in states_of_random_games(players, games=3):
        for seat in range(players):
            other = redeal_unseen(state, seat, seed=seat)
            assert seat_view(other, seat, names) == seat_view(state, seat, names)
            changed += seat_view(other, None, names) != seat_view(state, None, names)
    assert changed > 0  # the redeal does change hidden things: the equality above is not idle


def hidden_from(game, seat):
    """The favor cards seat may not see now: the deck, and until the game is over the other
    seats' hands and drawn cards (the end screen reveals the hands)."""
    state = game.state
    cards = state.game.deck.cards
    hidden = set(state.deck)
    for p in range(state.n):
        if p != seat and not game.over:
            hidden |= {i for i in range(len(cards)) if (state.favor_hand[p] | state.drawn[p]) >> i & 1}
    return [cards[i] for i in sorted(hidden)]


def card_dicts(data):
    if isinstance(data, dict):
        if {"id", "name", "pattern"} <= set(data):
            yield data
        for value in data.values():
            yield from card_dicts(value)
    elif isinstance(data, list):
        for value in data:
            yield from card_dicts(value)


def check_response(snap, game):
    """No response to the person's browser holds what the person's seat may not see now."""
    seat = game.seat
    text = json.dumps(snap)
    hidden = hidden_from(game, seat)
    hidden_ids = {card.index for card in hidden}
    # Every mention of a card (its name in JSON, or its words), the longest match first: some
    # names hold others ("Mirror Cornerstone" and "Cornerstone").
    words = {}
    for card in game.state.game.deck.cards:
        words[json.dumps(card.name)] = words[narrate.card_text(card)] = card.index
    pattern = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    mentioned = {words[m.group(0)] for m in re.finditer(pattern, text)}
    assert not mentioned & hidden_ids, [c.name for c in hidden if c.index in mentioned]
    assert not {c["id"] for c in card_dicts(snap)} & hidden_ids
    assert '"seed"' not in text and '"deck"' not in text
    view = snap["view"]
    assert view["seat"] == seat
    for p in view["players"]:
        if p["seat"] != seat:
            assert p["hand"] is None and p["choosing"] is None and p["bid"] is None
    if view["choices"]:
        assert view["to_move"] == seat
    for move in snap.get("moves", []):
        if move["seat"] != seat:
            assert not move["text"].startswith(("Keep ", "Bid ")), move
    for turn in (snap.get("recap") or {}).get("turns", []):
        if turn["seat"] != seat:
            assert not any(
                re.match(r"(Keep |Bid \d|\w \(\w+\): (Keep|Bid) )", line) for line in turn["lines"]
            )
    if not game.over:
        assert "end" not in snap  # no hand is revealed before the end
    else:
        state = game.state
        for row in snap["end"]["rows"]:  # every hand, as it is
            held = [i for i in range(len(state.game.deck.cards)) if state.favor_hand[row["seat"]] >> i & 1]
            assert [c["id"] for c in row["hand"]] == held
    # The hand's progress names the person's own hand, every card of it, nothing else.
    own = game.state.favor_hand[seat]
    assert [p["id"] for p in snap["hand"]] == [
        i for i in range(len(game.state.game.deck.cards)) if own >> i & 1
    ]
    for move in snap.get("moves", []):
        if move["seat"] != seat:
            assert "why" not in move and "private" not in move, move
    if not game.over:
        sealed = [p for p in range(game.state.n) if p != seat and view["players"][p]["bid_sealed"]]
        for p in sealed:
            assert view["players"][p]["bid"] is None


@pytest.mark.parametrize(("players", "seat", "seed"), [(2, 0, 1), (2, 1, 2), (3, 1, 3), (3, 2, 4), (4, 3, 5)])
def test_no_response_of_a_played_game_holds_what_the_seat_may_not_see(tmp_path, players, seat, seed):
    with client_for(tmp_path) as client:
        last = play_through(client, players, seat, seed, check=check_response)
    assert last["over"]


def test_the_same_holds_when_the_person_takes_back_decisions(tmp_path):
    """Undo answers with the whole game again (the position, every move, the recap): it too holds
    nothing the seat may not see."""
    with client_for(tmp_path) as client:
        undone = []
        play_through(client, 3, 1, 7, check=check_response, undo=0.3, undone=undone)
    assert len(undone) > 5


def test_warnings_and_notes_use_nothing_the_seat_cannot_see():
    """The warnings on a seat's choices (a move that loses the Governor block or ends the game)
    and the notes on its decision are the same whatever is dealt again of what it cannot see."""
    names = ("p0", "p1", "p2")
    warned = 0
    for state in states_of_random_games(3, games=4, every=3):
        if state.is_terminal():
            continue
        seat = state.current_player()
        mine = consequences(state, seat, names)
        for seed in (1, 2):
            other = redeal_unseen(state, seat, seed=seed)
            assert consequences(other, seat, names) == mine
            assert decision_notes(other, seat) == decision_notes(state, seat)
        warned += bool(mine)
    assert warned > 0


def test_the_score_if_ended_the_hand_progress_and_the_seats_words_use_nothing_it_cannot_see():
    """The scores if the game ended now are public (the same for every seat and under any redeal
    of what a seat cannot see: final scoring reads no hand); a seat's hand progress, where it
    stands in the round and the note on a forced move are the same under a redeal of what that
    seat cannot see."""
    checked = 0
    for players in (2, 4):
        for state in states_of_random_games(players, games=3, every=5):
            projected = score_if_ended(state)
            for seat in range(players):
                for seed in (3, 4):
                    other = redeal_unseen(state, seat, seed=seed)
                    assert score_if_ended(other) == projected
                    assert hand_progress(other, seat) == hand_progress(state, seat)
                    assert stage_words(other, seat) == stage_words(state, seat)
                    if not state.is_terminal() and state.current_player() == seat:
                        assert forced_note(other, seat) == forced_note(state, seat)
                    checked += 1
    assert checked > 100


def test_the_same_holds_when_the_opponents_move_many_at_a_time(tmp_path):
    with client_for(tmp_path) as client:
        play_through(
            client, 3, 0, 11, opponents=["heuristic", "random"], check=check_response, moves_per_advance=40
        )


def test_a_seats_chance_to_win_uses_nothing_it_cannot_see():
    """Estimates for a seat start from redeals: two positions that differ only in what the seat
    cannot see give the same estimate; the spectator's (true position) estimate is another."""
    differs = 0
    for state in states_of_random_games(3, games=1, every=40):
        if state.is_terminal():
            continue
        seat = state.current_player()
        other = redeal_unseen(state, seat, seed=99)
        mine = win_chances(state, seat, "random", 6, seed=1)
        assert win_chances(other, seat, "random", 6, seed=1) == mine
        differs += win_chances(other, None, "random", 6, seed=1) != win_chances(
            state, None, "random", 6, seed=1
        )
    assert differs > 0
