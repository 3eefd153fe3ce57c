"""What a seat may see (``engine/visibility.py``): who has sealed a bid, whose cards a seat
sees, and the redeal of what a seat cannot see (docs/RULES.md C13, E3, E25).

The redeal must keep everything the seat sees (its observation byte for byte, its picture, its
legal actions when it is to move) and change what it cannot see, drawing only from the seed.
Every test runs on both backends (``backend``): a state of the C++ core redeals itself in C++.
"""

from __future__ import annotations

import random

import pytest
from test_hidden_information import interesting_states

from island_fortress_env.core import Game
from island_fortress_env.engine import SeedError, State, tables
from island_fortress_env.engine import events as ev
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.fields import StateFields
from island_fortress_env.engine.visibility import (
    bids_sealed,
    choosing_from,
    favor_hand,
    has_sealed_bid,
    own_bid,
    redeal_unseen,
    sealed_bid,
    sealed_bidders,
    unseen_cards,
)
from island_fortress_env.engine.wall import iter_bits
from island_fortress_env.env.observation import ObservationEncoder

GAMES = [(2, 11), (3, 12), (4, 11)]
SEEDS = range(8)


def _slots(state: State) -> dict:
    """Every public field (an engine State's and a CoreState's), the event log and the legal actions."""
    out = {}
    for name in StateFields.__slots__:
        if not name.startswith("_"):
            value = getattr(state, name)
            out[name] = tuple(value) if isinstance(value, list) else value
    out["log"] = tuple(state.log)
    out["legal"] = state.legal_actions()
    return out


def _hidden_from(state: State, seat: int) -> tuple:
    """Everything ``seat`` cannot see: the other players' cards and bids, the deck order, the
    generator."""
    others = [p for p in range(state.n) if p != seat]
    return (
        tuple(state.favor_hand[p] for p in others),
        tuple(state.drawn[p] for p in others),
        tuple(state.bids[p] for p in others),
        tuple(state.deck),
        state.rng,
    )


def _play_out(state: State, seed: int) -> None:
    chooser = random.Random(seed)
    while not state.is_terminal():
        state.apply_action(chooser.choice(state.legal_actions()))


# --------------------------------------------------------------------------- the redeal


@pytest.mark.parametrize("n,seed", GAMES)
def test_redeal_keeps_the_seats_observation_byte_for_byte(backend, n, seed):
    states = interesting_states(n, seed, backend)
    encoder = ObservationEncoder(states[0].game)
    checked = 0
    for state in states:
        before = _slots(state)
        for seat in range(n):
            seen = encoder.encode(state, seat).tobytes()
            for k in SEEDS:
                other = redeal_unseen(state, seat, k)
                assert encoder.encode(other, seat).tobytes() == seen, (
                    f"seat {seat} can tell the redeal (seed {k}) at '{state.decision_name()}'"
                )
                assert unseen_cards(other, seat) == unseen_cards(state, seat)
                assert other.component_totals() == state.component_totals()
                assert other.favor_hand[seat] == state.favor_hand[seat]
                assert other.drawn[seat] == state.drawn[seat]
                assert other.bids[seat] == state.bids[seat]
                checked += 1
        assert _slots(state) == before, "the redeal changed the original state"
    assert checked > 100


@pytest.mark.parametrize("n,seed", GAMES)
def test_redeal_keeps_the_legal_actions_of_the_seat_to_move(backend, n, seed):
    for state in interesting_states(n, seed, backend):
        seat = state.current_player()
        for k in SEEDS:
            assert redeal_unseen(state, seat, k).legal_actions() == state.legal_actions()


@pytest.mark.parametrize("n,seed", GAMES)
def test_redeal_changes_what_the_seat_cannot_see(backend, n, seed):
    """With the other players holding cards, some of eight seeds deals them differently; a
    sealed bid of another player is drawn again; the generator is always reseeded."""
    cases = [
        (state, seat, [p for p in range(n) if p != seat], [redeal_unseen(state, seat, k) for k in SEEDS])
        for state in interesting_states(n, seed, backend)
        for seat in range(n)
    ]
    assert all(o.rng != state.rng for state, _, _, redeals in cases for o in redeals)

    dealt = [
        (seat, others, redeals)
        for state, seat, others, redeals in cases
        if any(state.favor_hand[p] | state.drawn[p] for p in others) and len(unseen_cards(state, seat)) > 3
    ]
    assert len(dealt) > 20
    for seat, others, redeals in dealt:
        deals = {(tuple(o.favor_hand[p] | o.drawn[p] for p in others), tuple(o.deck)) for o in redeals}
        assert len(deals) > 1, f"seat {seat}: eight redeals dealt the same cards"

    bidding = [
        (state, seat, [p for p in others if has_sealed_bid(state, p) and state.jade[p] > 0], redeals)
        for state, seat, others, redeals in cases
    ]
    bidding = [case for case in bidding if case[2]]
    assert len(bidding) > 1
    for state, seat, bidders, redeals in bidding:
        drawn_bids = [tuple(o.bids[p] for p in bidders) for o in redeals]
        assert len(set(drawn_bids)) > 1, f"seat {seat}: the sealed bids of {bidders} were never redrawn"
        assert all(0 <= o.bids[p] <= state.jade[p] for o in redeals for p in bidders)


def test_redeal_is_a_function_of_the_seed(backend):
    state = interesting_states(3, 12, backend)[-1]
    assert _slots(redeal_unseen(state, 1, 7)) == _slots(redeal_unseen(state, 1, 7))
    assert len({tuple(redeal_unseen(state, 1, k).deck) for k in SEEDS}) > 1


@pytest.mark.parametrize("n,seed", GAMES)
def test_a_redealt_state_plays_on_to_a_legal_end(backend, n, seed):
    states = interesting_states(n, seed, backend)
    for i, state in enumerate(states[:: max(1, len(states) // 6)]):
        other = redeal_unseen(state, i % n, i)
        _play_out(other, i)
        assert other.component_totals()["favor_cards"] == state.game.totals["favor_cards"]


def test_redeal_draws_bids_above_one_hundred_and_new_leading_digits(backend):
    """With more than 100 Jade (unlimited components) a sealed bid is any amount up to the Jade
    held (E3), and the leading digit another player has entered is drawn again within it."""
    game = Game(backend=backend, num_players=3, unlimited_components=True, extra_jade=150)
    state = game.new_initial_state(3)
    while state.decision != Decision.PETITION_BID:
        state.apply_action(state.legal_actions()[0])
    first = state.current
    state.apply_action(state.legal_actions()[-1])  # the leading digit of a bid of 101+ Jade
    state.apply_action(state.legal_actions()[-1])  # the last digit: the bid is sealed
    second = state.current
    state.apply_action(state.legal_actions()[-1])  # the second bidder's leading digit
    assert state.current == second and state.bid_digits_left == 0 and state.bids[second] >= 1
    seat = next(p for p in range(3) if p not in (first, second))
    encoder = ObservationEncoder(game)
    seen = encoder.encode(state, seat).tobytes()
    redeals = [redeal_unseen(state, seat, k) for k in range(16)]
    assert all(encoder.encode(o, seat).tobytes() == seen for o in redeals)
    assert max(o.bids[first] for o in redeals) > tables.MAX_BID
    assert all(o.bids[first] <= state.jade[first] for o in redeals)
    leading = {o.bids[second] for o in redeals}
    assert len(leading) > 1 and leading <= set(range(state.jade[second] // tables.BID_BASE + 1))
    for k, other in enumerate(redeals[:4]):
        _play_out(other, k)  # every redrawn leading digit still leaves a legal bid to finish
    mine = redeal_unseen(state, second, 0)
    assert mine.bids[second] == state.bids[second], "a seat's own partial bid is never redrawn"


def test_redeal_rejects_a_bad_seat_or_seed_and_changes_nothing(backend):
    state = interesting_states(3, 12, backend)[3]
    before = _slots(state)
    with pytest.raises(ValueError, match=r"seat must be 0\.\.2"):
        redeal_unseen(state, 3, 0)
    with pytest.raises(SeedError):
        redeal_unseen(state, 0, -1)
    assert _slots(state) == before


def test_redeal_keeps_the_seats_picture(backend):
    pytest.importorskip("PIL", reason="the picture needs the [render] extra (Pillow)")
    from island_fortress_env.views.picture import table_view

    for state in interesting_states(3, 12, backend)[::4]:
        for seat in range(3):
            other = redeal_unseen(state, seat, seat + 1)
            assert table_view(other, seat) == table_view(state, seat)
            assert _hidden_from(other, seat) != _hidden_from(state, seat)


# --------------------------------------------------------------------------- who sees what


def test_sealed_bidders_are_the_bids_placed_this_round_in_the_public_log(backend):
    """Checked against the public log at every decision of a game: the seats with a
    ``BID_PLACED`` event since the round began, until the petition reveals them all."""
    state = Game(backend=backend, num_players=4).new_initial_state(5)
    chooser = random.Random(5)
    placed: set[int] = set()
    rounds = 0
    seen = 0
    while not state.is_terminal():
        for event in state.log[seen:]:
            if event.kind in (ev.EventKind.ROUND, ev.EventKind.PETITION):
                placed = set()
                rounds += event.kind == ev.EventKind.ROUND
            elif event.kind == ev.EventKind.BID_PLACED:
                placed.add(event.player)
        seen = len(state.log)
        assert bids_sealed(state) == (state.decision == Decision.PETITION_BID)
        assert sealed_bidders(state) == frozenset(placed)
        for p in range(4):
            assert has_sealed_bid(state, p) == (p in placed)
            for viewer in (None, *range(4)):
                visible = p in placed and viewer in (None, p)
                assert sealed_bid(state, p, viewer) == (state.bids[p] if visible else None)
        state.apply_action(chooser.choice(state.legal_actions()))
    assert rounds >= 5


def test_a_seat_sees_its_own_bid_as_it_enters_it_and_nobody_elses(backend):
    game = Game(backend=backend, num_players=3, unlimited_components=True, extra_jade=150)
    state = game.new_initial_state(4)
    while state.decision != Decision.PETITION_BID:
        state.apply_action(state.legal_actions()[0])
    bidder = state.current
    state.apply_action(state.legal_actions()[-1])  # one digit of two entered
    assert not has_sealed_bid(state, bidder)
    assert own_bid(state, bidder) == state.bids[bidder] > 0
    assert [own_bid(state, p) for p in range(3) if p != bidder] == [0, 0]
    assert sealed_bid(state, bidder, bidder) is None, "a partial bid is not a sealed bid yet"
    state.apply_action(state.legal_actions()[0])
    assert has_sealed_bid(state, bidder) and own_bid(state, bidder) == state.bids[bidder]


def test_cards_are_seen_by_their_owner_and_a_spectator_only(backend):
    state = Game(backend=backend, num_players=3).new_initial_state(
        1
    )  # the setup deal: every seat is choosing
    for owner in range(3):
        hand = tuple(iter_bits(state.favor_hand[owner]))
        choosing = tuple(iter_bits(state.drawn[owner]))
        assert len(choosing) == tables.FAVOR_DEAL
        for viewer in (None, 0, 1, 2):
            mine = viewer in (None, owner)
            assert favor_hand(state, owner, viewer) == (hand if mine else None)
            assert choosing_from(state, owner, viewer) == (choosing if mine else None)
    everyone = sorted(c for p in range(3) for c in iter_bits(state.drawn[p] | state.favor_hand[p]))
    for seat in range(3):
        hidden = sorted([*state.deck, *(c for c in everyone if not state.drawn[seat] >> c & 1)])
        assert unseen_cards(state, seat) == hidden
