"""The setup, income and the petition: the rulebook's rules and docs/RULES.md's rulings on them.

One or more tests per rule (the rulebook and the rulings of docs/RULES.md). Scenario states come
from ``scenario.py``: a real game played to the round-1 action phase, then edited through helpers
that keep every component accounted for (``do`` checks the component totals after every action).
Seats: Adam = 0, Bill = 1, Charles = 2.
"""

from __future__ import annotations

import pytest
from scenario import (
    ADAM,
    BILL,
    CHARLES,
    action_phase_state,
    assert_consistent,
    bid_all,
    clear_prisons,
    do,
    events,
    finish_round,
    keep_setup,
    legal,
    park,
    play_turns,
    quiet_turn,
    round_two_bids,
    set_player,
)

from island_fortress_env.engine import Game, IllegalActionError
from island_fortress_env.engine import actions as A
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.events import EventKind

# ================================================================ setup


@pytest.mark.parametrize("players, regions, governor", [(2, 2, 12), (3, 2, 12), (4, 3, 11)])
def test_setup_by_player_count(players, regions, governor):
    """Setup: 2/2/3 regions, 12/12/11 Governor blocks, 12 Jade each, Taskmasters in the
    leftmost region, 18 blocks per colour in the stockpile, 5 favor cards dealt to each."""
    game = Game(num_players=players)
    s = game.new_initial_state(3)
    assert s.geo.regions == regions and len(s.geo.cell_bits) == 17 * regions
    assert s.gov_stock == governor == game.totals["governor_blocks"]
    assert s.jade == [12] * players
    assert s.region == [0] * players
    assert s.stock_blocks == [18] * players and s.blocks == [0] * players
    assert s.laborers == s.convicts == s.chips == s.treasure == s.score == [0] * players
    assert [d.bit_count() for d in s.drawn] == [5] * players
    assert s.favor_hand == [0] * players
    assert len(s.deck) == 36 - 5 * players
    assert s.holder == -1 and s.round == 0
    assert s.decision == Decision.KEEP_DEALT_FAVORS and s.current_player() == 0
    assert_consistent(s)


# docs/RULES.md E1: the setup keep is decided seat by seat; returned cards go back to the deck.
def test_setup_each_player_keeps_three_of_five_privately_and_returns_two():
    """Setup: each player keeps 3 of the 5 dealt cards (seat 0 first) choosing only among
    their own; the other 2 go back into the deck, which is then reshuffled; the public log
    names no kept card."""
    s = Game(num_players=3).new_initial_state(5)
    dealt = list(s.drawn)
    unshuffled = list(s.deck)
    returned = []
    for p in range(3):
        assert s.current_player() == p
        assert legal(s) == [A.KEEP_FAVOR + i for i in range(36) if dealt[p] >> i & 1]
        keep = legal(s)[1:4]
        do(s, *keep)
        assert s.favor_hand[p] == sum(1 << (a - A.KEEP_FAVOR) for a in keep)
        returned += [i for i in range(36) if dealt[p] >> i & 1 and not s.favor_hand[p] >> i & 1]
        unshuffled += returned[-2:]
    assert s.decision == Decision.PETITION_BID and s.round == 1
    assert sorted(s.deck) == sorted(unshuffled) and s.deck != unshuffled  # reshuffled
    assert s.drawn == [0, 0, 0]
    assert len(s.deck) == 36 - 9 and set(returned) <= set(s.deck)
    assert events(s, EventKind.KEPT) == [("kept", p, 3) for p in range(3)]


# ================================================================ income


def test_income_is_three_in_round_one_and_treasure_gives_no_income():
    """Income: every player takes 3 Jade, in the first round too; Treasures never add income
    (FAQ)."""
    s = Game(num_players=3).new_initial_state(0)
    keep_setup(s)
    assert s.jade == [15, 15, 15]
    assert [e[1:] for e in events(s, EventKind.INCOME)] == [(0, 3), (1, 3), (2, 3)]

    s = action_phase_state(holder=ADAM)
    clear_prisons(s)
    set_player(s, BILL, treasure=6)
    before = list(s.jade)
    finish_round(s)
    assert [s.jade[p] - before[p] for p in range(3)] == [3, 3, 3]


# docs/RULES.md C8: income from a short treasury is paid in turn order from the marker's holder.
def test_income_from_a_short_treasury_is_paid_in_turn_order_from_the_holder():
    """Ruling 8: income from a short treasury is paid in turn order starting with the marker
    holder. Bill holds the marker and 4 Jade remain: Bill 3, Charles 1, Adam 0."""
    s = action_phase_state(holder=BILL)
    clear_prisons(s)
    play_turns(s, 8)
    park(s, "jade", leave=4, seat=ADAM)
    before = list(s.jade)
    mark = len(s.log)
    quiet_turn(s)
    assert s.decision == Decision.PETITION_BID and s.round == 2
    assert [e[1:] for e in events(s, EventKind.INCOME, mark)] == [(BILL, 3), (CHARLES, 1), (ADAM, 0)]
    assert [s.jade[p] - before[p] for p in range(3)] == [0, 3, 1]
    assert s.sup_jade == 0


# ================================================================ petition


def test_bids_range_from_zero_to_all_jade_held():
    """Petition: a player may bid any amount from zero to all the Jade they hold."""
    s = round_two_bids()
    p = s.current_player()
    set_player(s, p, jade=7)
    assert legal(s) == [A.BID + b for b in range(8)]
    set_player(s, p, jade=0)
    assert legal(s) == [A.BID]
    with pytest.raises(IllegalActionError):
        s.apply_action(A.BID + 1)


def test_bids_are_placed_in_turn_order_from_the_holder_and_logged_sealed():
    """Petition: bids are collected from the marker holder clockwise; the log records only
    that a bid was placed until all are revealed together."""
    s = round_two_bids(holder=CHARLES)
    order = []
    mark = len(s.log)
    while s.decision == Decision.PETITION_BID:
        order.append(s.current_player())
        do(s, A.BID + 1 + s.current_player())
    assert order == [CHARLES, ADAM, BILL]
    assert [e for e in s.log[mark:] if e[0] == "bid_placed"] == [
        ("bid_placed", CHARLES),
        ("bid_placed", ADAM),
        ("bid_placed", BILL),
    ]
    assert events(s, EventKind.PETITION, mark)[0][1] == (1, 2, 3)


def test_petition_winner_alone_pays_takes_marker_governor_block_and_fills_own_prison():
    """Petition: the winner discards the bid Jade, takes the marker and a Governor block, and
    1 Jade and 1 Convict go to the prison of the winner's Taskmaster region; the others keep
    all their Jade. The winner plays the first turn, with all five Role Cards in hand."""
    s = round_two_bids(holder=ADAM)
    clear_prisons(s)
    set_player(s, BILL, region=1)
    stock, sup_jade, sup_convicts = s.gov_stock, s.sup_jade, s.sup_convicts
    bid_all(s, {ADAM: 2, BILL: 4, CHARLES: 3})
    assert s.holder == BILL
    assert s.jade == [10, 6, 10]
    assert s.gov_in_hand and s.gov_stock == stock - 1
    assert s.prison_jade == [0, 1] and s.prison_convicts == [0, 1]
    assert s.sup_jade == sup_jade + 4 - 1 and s.sup_convicts == sup_convicts - 1
    assert s.decision == Decision.CHOOSE_ROLE_ACTION and s.current_player() == BILL
    assert s.roles_hand == [A.ALL_ROLES] * 3 and s.roles_table == [0] * 3


def test_petition_bonus_from_played_favors_adds_to_the_bid():
    """Petition: played Favor Cards add to the bid; the total decides."""
    s = round_two_bids(holder=ADAM)
    set_player(s, CHARLES, petition_bonus=3)
    bid_all(s, {ADAM: 2, BILL: 4, CHARLES: 2})
    assert s.holder == CHARLES and s.jade == [10, 10, 8]


@pytest.mark.parametrize(
    "holder, bids, winner",
    [
        (BILL, {ADAM: 3, CHARLES: 3}, CHARLES),  # from Bill clockwise: Charles first
        (CHARLES, {ADAM: 3, BILL: 3}, ADAM),  # from Charles clockwise: Adam first
        (ADAM, {ADAM: 3, CHARLES: 3}, CHARLES),  # the holder cannot keep it
        (BILL, {ADAM: 2, BILL: 2, CHARLES: 2}, CHARLES),
    ],
)
def test_petition_tie_on_hand_jade_moves_marker_clockwise_from_the_holder(holder, bids, winner):
    """Petition tie (same total, same hand Jade): the marker moves clockwise from its previous
    position to the first tied player; the previous holder never retains it this way."""
    s = round_two_bids(holder=holder)
    bid_all(s, bids)
    assert s.holder == winner


# docs/RULES.md E4, E24: round 1's tie is split by the game's seeded generator.
def test_round_one_tie_is_random_but_reproducible_from_the_seed():
    """Petition: a tie in the first round is split at random; the engine's draw comes from the
    game seed, so the same seed gives the same winner, and different seeds differ."""

    def winner(seed, bids):
        s = Game(num_players=3).new_initial_state(seed)
        keep_setup(s)
        bid_all(s, bids)
        return s.holder

    two_way = [winner(seed, {ADAM: 2, CHARLES: 2}) for seed in range(16)]
    assert set(two_way) == {ADAM, CHARLES}
    assert two_way == [winner(seed, {ADAM: 2, CHARLES: 2}) for seed in range(16)]
    assert len({winner(seed, {}) for seed in range(16)}) == 3
