"""One or more tests per rule of Island Fortress (the rulebook and the rulings of docs/RULES.md).

Scenario states come from ``scenario.py``: a real game played to the round-1 action phase,
then edited through helpers that keep every component accounted for (``do`` checks the
component totals after every action). Seats: Adam = 0, Bill = 1, Charles = 2.
"""

from __future__ import annotations

import json

import pytest
from scenario import (
    ADAM,
    AT_END,
    BILL,
    CHARLES,
    GOV,
    LEVELS,
    ROWS,
    action_phase_state,
    assert_consistent,
    at,
    bid_all,
    bit,
    clear_prisons,
    do,
    empty_hand,
    end_game,
    events,
    exhaust_governor_stock,
    fill_row,
    fill_wall_except,
    find_action,
    finish_round,
    give_favor,
    gov_at,
    governor_cells,
    keep_setup,
    legal,
    owner,
    park,
    play_turns,
    points_by,
    put_block,
    quiet_turn,
    reinforce,
    repeat,
    repeat_ops,
    role,
    role_ops,
    score_events,
    set_all,
    set_player,
    set_prison,
    shrink_deck,
)

from island_fortress_env.engine import ConfigError, Game, IllegalActionError, scoring
from island_fortress_env.engine import actions as A
from island_fortress_env.engine import state as S
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.events import EventKind, ScoreReason
from island_fortress_env.engine.wall import bit_of, geometry


def cells_of(state, actions, family=A.CELL):
    """The (region, level, col) of each action of ``family`` in ``actions``."""
    out = set()
    for a in actions:
        if family <= a < family + A.MAX_CELLS:
            b = state.geo.cell_bits[a - family]
            level, column = divmod(b, 20)
            out.add((column // 5, level + 1, column % 5))
    return out


def round_two_bids(holder=ADAM, **options):
    """Round 2, waiting on the first sealed bid; ``holder`` won round 1; everyone has 10 Jade."""
    s = action_phase_state(holder=holder, **options)
    finish_round(s)
    assert s.decision == Decision.PETITION_BID and s.round == 2
    set_all(s, jade=10)
    return s


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


# ================================================================ turn structure


# docs/RULES.md C14: the action phase starts with the marker's holder and goes clockwise.
def test_action_phase_order_holder_first_clockwise_three_turns_each():
    """Action Phase: starting with the holder and going clockwise, each player takes one turn
    at a time until all have taken three; then the next round begins with income and bids."""
    s = action_phase_state(holder=BILL)
    starts = []
    while s.decision != Decision.PETITION_BID:
        assert s.decision == Decision.CHOOSE_ROLE_ACTION
        starts.append(s.current_player())
        quiet_turn(s)
    assert starts == [BILL, CHARLES, ADAM] * 3
    assert s.round == 2
    assert s.current_player() == BILL  # next round's bids start with the holder


def test_each_turn_plays_exactly_one_more_role_card():
    """Action Phase: every player ends each turn with one more Role Card played."""
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, chips=1)
    do(s, role(A.OP_MOVE_TASKMASTER), A.MOVE_REGION + 1, A.BUYBACK_CHIP)
    do(s, role(A.OP_COLLECT_JADE))
    assert s.roles_table[ADAM].bit_count() == 1 and s.turns_taken[ADAM] == 1


def test_no_second_buyback_in_a_turn():
    """Buyback: after a buyback and the second action the turn ends; a Buyback Chip cannot be
    used again (at most two actions per turn)."""
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=10, chips=2)
    do(s, role(A.OP_MOVE_TASKMASTER), A.MOVE_REGION + 1)
    assert legal(s) == [A.END_TURN, A.BUYBACK_TASKMASTER, A.BUYBACK_CHIP]
    do(s, A.BUYBACK_CHIP, role(A.OP_MOVE_TASKMASTER), A.MOVE_REGION + 0)
    assert s.current_player() == BILL
    assert s.chips[ADAM] == 1 and s.jade[ADAM] == 10


def test_taskmaster_buyback_then_no_chip_buyback():
    """FAQ: after the Taskmaster buyback a Buyback Chip cannot give a third action."""
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=10, chips=2)
    do(s, role(A.OP_MOVE_TASKMASTER), A.MOVE_REGION + 1, A.BUYBACK_TASKMASTER)
    do(s, role(A.OP_MOVE_TASKMASTER), A.MOVE_REGION + 0)
    assert s.current_player() == BILL
    assert s.chips[ADAM] == 2 and s.jade[ADAM] == 7


def test_taskmaster_buyback_only_right_after_the_taskmaster_card():
    """Ruling 2: the 3-Jade buyback is offered only right after the Taskmaster card; a Buyback
    Chip buys back any card."""
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=10, chips=0)
    do(s, role(A.OP_COLLECT_JADE))
    assert s.current_player() == BILL  # no choice: the turn ended by itself

    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=10, chips=1)
    do(s, role(A.OP_COLLECT_JADE))
    assert legal(s) == [A.END_TURN, A.BUYBACK_CHIP]
    do(s, A.BUYBACK_CHIP)
    assert s.roles_hand[ADAM] == A.ALL_ROLES and s.chips[ADAM] == 0


def test_taskmaster_buyback_needs_three_jade():
    """Ruling 2: the Taskmaster buyback costs 3 Jade; with 2 it is not offered."""
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=2, chips=0)
    do(s, role(A.OP_MOVE_TASKMASTER), A.MOVE_REGION + 1)
    assert s.current_player() == BILL
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=3, chips=0)
    do(s, role(A.OP_MOVE_TASKMASTER), A.MOVE_REGION + 1, A.BUYBACK_TASKMASTER)
    assert s.jade[ADAM] == 0 and s.decision == Decision.CHOOSE_ROLE_ACTION


def test_a_played_card_cannot_be_played_again_in_the_round():
    """Role cards: a card on the table is not in the hand (only buyback returns it)."""
    s = action_phase_state(holder=ADAM, governor=False)
    do(s, role(A.OP_COLLECT_JADE))
    play_turns(s, 2)
    assert not {A.OP_COLLECT_JADE, A.OP_COLLECT_TREASURE} & role_ops(s)


# ================================================================ Recruiter


@pytest.mark.parametrize("count, cost", [(1, 0), (2, 1), (3, 2), (4, 4), (5, 6)])
def test_recruit_cost_table(count, cost):
    """Recruiter A: 1-5 Laborers cost 0/1/2/4/6 Jade."""
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=6, laborers=0)
    do(s, role(A.OP_RECRUIT), A.RECRUIT_COUNT + count - 1)
    assert s.laborers[ADAM] == count and s.jade[ADAM] == 6 - cost


# docs/RULES.md E7: only counts the stockpile can supply and the player can pay.
def test_recruit_counts_limited_by_jade():
    """Recruiter A: a count whose cost cannot be paid is illegal (docs/RULES.md C7)."""
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=3)
    do(s, role(A.OP_RECRUIT))
    assert legal(s) == [A.RECRUIT_COUNT + k for k in range(3)]
    set_player(s, ADAM, jade=0)
    assert legal(s) == [A.RECRUIT_COUNT]  # one Laborer is free


@pytest.mark.parametrize(
    "op, finish",
    [
        (A.OP_RECRUIT, [A.RECRUIT_COUNT]),
        (A.OP_BUY_BLOCKS, [A.BUY_COUNT]),
        (A.OP_BUILD, [A.BUILD_COUNT, None, A.LABORERS + 2]),
    ],
)
# docs/RULES.md E8: option A's Convict goes to the prison when the card is played.
def test_option_a_actions_send_a_convict_to_the_taskmasters_prison(op, finish):
    """Recruiter A, Planner A and Builder A each put one Convict from the stockpile in the
    prison of the region where the Taskmaster stands."""
    s = action_phase_state(holder=ADAM, governor=False)
    clear_prisons(s)
    set_player(s, ADAM, region=1, blocks=1, laborers=2, convicts=0)
    supply = s.sup_convicts
    do(s, role(op))
    assert s.prison_convicts == [0, 1] and s.prison_jade == [0, 0]
    do(s, *[a if a is not None else at(s, 1, 1, 0) for a in finish])
    assert s.prison_convicts == [0, 1] and s.sup_convicts == supply - 1


@pytest.mark.parametrize(
    "op", [A.OP_COLLECT_CONVICTS, A.OP_COLLECT_JADE, A.OP_MOVE_TASKMASTER, A.OP_DRAW_FAVORS]
)
def test_other_actions_send_nothing_to_prison(op):
    """Only option A of Recruiter, Planner and Builder fills a prison."""
    s = action_phase_state(holder=ADAM, governor=False)
    clear_prisons(s)
    set_player(s, ADAM, laborers=2)
    do(s, role(op))
    while s.current_player() == ADAM and s.decision != Decision.CHOOSE_ROLE_ACTION:
        do(s, legal(s)[0])
    assert s.prison_convicts == [0, 0] and s.prison_jade == [0, 0]


def test_collect_six_convicts_pays_two_laborers():
    """Recruiter B: discard 2 Laborers to the stockpile, take 6 Convicts; illegal with fewer
    than 2 Laborers."""
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, laborers=1, convicts=1)
    assert A.OP_COLLECT_CONVICTS not in role_ops(s)
    set_player(s, ADAM, laborers=3)
    laborers = s.sup_laborers
    do(s, role(A.OP_COLLECT_CONVICTS))
    assert s.laborers[ADAM] == 1 and s.convicts[ADAM] == 7
    assert s.sup_laborers == laborers + 2


def test_collect_from_prison_takes_everything_in_the_taskmasters_region_only():
    """Recruiter C: take all Jade and Convicts from the prison of the Taskmaster's region."""
    s = action_phase_state(holder=ADAM, governor=False)
    set_prison(s, 0, jade=2, convicts=3)
    set_prison(s, 1, jade=1, convicts=4)
    set_player(s, ADAM, region=1, jade=0, convicts=0)
    do(s, role(A.OP_COLLECT_PRISON))
    assert (s.jade[ADAM], s.convicts[ADAM]) == (1, 4)
    assert s.prison_jade == [2, 0] and s.prison_convicts == [3, 0]


# ================================================================ Planner


@pytest.mark.parametrize("count, cost", [(1, 0), (2, 1), (3, 2), (4, 4), (5, 6)])
def test_buy_blocks_cost_table(count, cost):
    """Planner A: 1-5 Wall Blocks of the player's colour from the stockpile cost 0/1/2/4/6."""
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=6, blocks=0)
    do(s, role(A.OP_BUY_BLOCKS), A.BUY_COUNT + count - 1)
    assert s.blocks[ADAM] == count and s.stock_blocks[ADAM] == 18 - count
    assert s.jade[ADAM] == 6 - cost


def test_buy_blocks_limited_by_the_colours_stockpile():
    """Planner A: only blocks left in the colour's stockpile can be bought; none left makes the
    action illegal (docs/RULES.md C7: wall blocks are finite)."""
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=10, blocks=16)
    do(s, role(A.OP_BUY_BLOCKS))
    assert legal(s) == [A.BUY_COUNT, A.BUY_COUNT + 1]
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=10, blocks=18)
    assert A.OP_BUY_BLOCKS not in role_ops(s)


# docs/RULES.md C10, E9: declare 3 (keep 2); unkept cards go under the deck in a shuffled order.
def test_draw_three_keep_two_unkept_to_the_bottom():
    """Planner B: declare 3 (keep 2) before drawing; the top three are drawn, two kept, the
    other goes to the bottom of the deck."""
    s = action_phase_state(holder=ADAM, governor=False)
    hand = s.favor_hand[ADAM]
    top = set(s.deck[-3:])
    size = len(s.deck)
    do(s, role(A.OP_DRAW_FAVORS))
    assert s.decision == Decision.DRAW_FAVORS_COUNT and s.drawn[ADAM] == 0  # declared before drawing
    do(s, A.DRAW_COUNT)
    assert legal(s) == sorted(A.KEEP_FAVOR + i for i in top)
    keep = legal(s)[:2]
    do(s, *keep)
    kept = {a - A.KEEP_FAVOR for a in keep}
    assert s.favor_hand[ADAM] == hand | sum(1 << i for i in kept)
    assert len(s.deck) == size - 2 and s.deck[0] in top - kept
    assert s.current_player() == BILL


def test_draw_five_keep_one_unkept_to_the_bottom():
    """Planner B: declare 5 (keep 1); the four others go to the bottom of the deck."""
    s = action_phase_state(holder=ADAM, governor=False)
    top = set(s.deck[-5:])
    size = len(s.deck)
    do(s, role(A.OP_DRAW_FAVORS), A.DRAW_COUNT + 1)
    assert legal(s) == sorted(A.KEEP_FAVOR + i for i in top)
    do(s, A.KEEP_FAVOR + max(top))
    assert s.favor_hand[ADAM] >> max(top) & 1
    assert len(s.deck) == size - 1
    assert set(s.deck[:4]) == top - {max(top)}


# docs/RULES.md C10, E6: a draw option is illegal when the deck is shorter.
def test_draw_illegal_when_the_deck_is_short():
    """Ruling 10: an option is illegal when the deck holds fewer cards than declared."""
    s = action_phase_state(holder=ADAM, governor=False)
    shrink_deck(s, leave=4, seat=CHARLES)
    do(s, role(A.OP_DRAW_FAVORS))
    assert legal(s) == [A.DRAW_COUNT]
    s = action_phase_state(holder=ADAM, governor=False)
    shrink_deck(s, leave=2, seat=CHARLES)
    assert A.OP_DRAW_FAVORS not in role_ops(s)


def test_remove_a_reinforcement_only_in_the_taskmasters_region():
    """Planner C: remove a Reinforcement (own or an opponent's block) in the Taskmaster's
    region, back to the stockpile; not possible when that region has none."""
    s = action_phase_state(holder=ADAM, governor=False)
    put_block(s, BILL, 0, 1, 0, reinforced=True)
    put_block(s, ADAM, 0, 1, 1, reinforced=True)
    put_block(s, BILL, 1, 1, 0, reinforced=True)
    set_player(s, ADAM, region=1)
    do(s, role(A.OP_REMOVE_REINFORCEMENT))
    assert cells_of(s, legal(s)) == {(1, 1, 0)}
    supply = s.sup_reinf
    do(s, at(s, 1, 1, 0))
    assert s.sup_reinf == supply + 1
    assert s.reinf == (1 << bit(s, 0, 1, 0)) | (1 << bit(s, 0, 1, 1))

    s = action_phase_state(holder=ADAM, governor=False)
    put_block(s, BILL, 1, 1, 0, reinforced=True)
    assert A.OP_REMOVE_REINFORCEMENT not in role_ops(s)
    put_block(s, ADAM, 0, 1, 0, reinforced=True)
    do(s, role(A.OP_REMOVE_REINFORCEMENT))
    assert cells_of(s, legal(s)) == {(0, 1, 0)}


# ================================================================ Builder A: Build Wall


def test_build_needs_support_and_an_empty_cell_in_the_taskmasters_region():
    """Build Wall: an empty cell in the Taskmaster's region, with a block directly below
    unless on level 1."""
    s = action_phase_state(holder=ADAM, governor=False)
    put_block(s, BILL, 0, 1, 0)
    put_block(s, CHARLES, 0, 1, 1)
    put_block(s, BILL, 0, 2, 0)
    put_block(s, BILL, 1, 1, 0)
    set_player(s, ADAM, blocks=1, laborers=20)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT)
    assert cells_of(s, legal(s)) == {(0, 1, 2), (0, 1, 3), (0, 1, 4), (0, 2, 1), (0, 3, 0)}


def test_build_in_the_other_region_after_moving():
    """Build Wall: the location must be in the Taskmaster's region."""
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, region=1, blocks=1, laborers=2)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT)
    assert cells_of(s, legal(s)) == {(1, 1, c) for c in range(5)}


def test_towers_only_above_the_end_columns():
    """Build Wall: a level-4 block needs a level-3 block below and an end column of the
    region; the wall has no level-4 cell elsewhere."""
    s = action_phase_state(holder=ADAM, governor=False)
    for level in (1, 2, 3):
        fill_row(s, 0, level, [BILL, CHARLES, BILL, CHARLES, BILL])
    set_player(s, ADAM, blocks=1, laborers=8)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT)
    assert cells_of(s, legal(s)) == {(0, 4, 0), (0, 4, 4)}
    geo = geometry(2)
    towers = {b for b in geo.cell_bits if b >= bit_of(3, 0)}
    assert towers == {bit_of(3, c) for c in (0, 4, 5, 9)}


@pytest.mark.parametrize(
    "workers, cells",
    [
        (2, {(0, 1, 3), (0, 1, 4)}),
        (4, {(0, 1, 3), (0, 1, 4), (0, 2, 2)}),
        (6, {(0, 1, 3), (0, 1, 4), (0, 2, 2), (0, 3, 1)}),
        (8, {(0, 1, 3), (0, 1, 4), (0, 2, 2), (0, 3, 1), (0, 4, 0)}),
    ],
)
def test_build_workers_per_level(workers, cells):
    """Build Wall: a block on level 1/2/3/4 needs 2/4/6/8 Workers."""
    s = action_phase_state(holder=ADAM, governor=False)
    fill_row(s, 0, 1, [BILL, BILL, BILL, None, None])
    fill_row(s, 0, 2, [BILL, BILL, None, None, None])
    put_block(s, BILL, 0, 3, 0)
    set_player(s, ADAM, blocks=1, laborers=workers - 1, convicts=1)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT)
    assert cells_of(s, legal(s)) == cells


# docs/RULES.md E11: Workers are assigned as "L Laborers", the rest Convicts; C11: the deaths.
def test_build_worker_assignment_and_deaths():
    """Build Wall: Workers may be Laborers or Convicts; every Convict and half the Laborers,
    rounded up, die."""
    s = action_phase_state(holder=ADAM, governor=False)
    fill_row(s, 0, 1, [BILL, BILL, None, None, None])
    fill_row(s, 0, 2, [BILL, None, None, None, None])
    set_player(s, ADAM, blocks=1, laborers=4, convicts=3)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT, at(s, 0, 3, 0))
    assert legal(s) == [A.LABORERS + 3, A.LABORERS + 4]  # 6 Workers, at most 3 Convicts
    do(s, A.LABORERS + 3)
    assert (s.laborers[ADAM], s.convicts[ADAM]) == (4 - 2, 0)
    assert events(s, EventKind.WORKERS)[-1] == ("workers", ADAM, 3, 3, 2)


def test_build_two_blocks_costs_one_jade_and_two_blocks():
    """Build Wall: building two blocks costs 1 Jade; the blocks must be in supply."""
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=0, blocks=2, laborers=8)
    do(s, role(A.OP_BUILD))
    assert legal(s) == [A.BUILD_COUNT]
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=1, blocks=1, laborers=8)
    do(s, role(A.OP_BUILD))
    assert legal(s) == [A.BUILD_COUNT]
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=1, blocks=0, laborers=8)
    assert A.OP_BUILD not in role_ops(s)
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=1, blocks=2, laborers=4)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT + 1, at(s, 0, 1, 0), at(s, 0, 1, 1), A.LABORERS + 4)
    assert s.jade[ADAM] == 0 and s.blocks[ADAM] == 0 and s.laborers[ADAM] == 2


# docs/RULES.md E6: a role action is offered only when it can be carried out to the end.
def test_build_two_blocks_only_if_workers_cover_both():
    """Build Wall: Workers for both blocks are assigned together, so the second cell must be
    affordable with what the first leaves."""
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=1, blocks=2, laborers=5)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT + 1, at(s, 0, 1, 0))
    assert cells_of(s, legal(s)) == {(0, 1, c) for c in range(1, 5)}  # 2 + 4 > 5: not on top

    s = action_phase_state(holder=ADAM, governor=False)
    put_block(s, BILL, 0, 1, 0)
    set_player(s, ADAM, jade=1, blocks=2, laborers=5)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT)
    assert (0, 2, 0) in cells_of(s, legal(s))  # a single block may go on level 2
    s = action_phase_state(holder=ADAM, governor=False)
    put_block(s, BILL, 0, 1, 0)
    set_player(s, ADAM, jade=1, blocks=2, laborers=5)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT + 1)
    assert (0, 2, 0) not in cells_of(s, legal(s))  # 4 + 2 > 5: no second block after it


# ================================================================ Builder B: Play a Favor


def _favor_state(*cards):
    s = action_phase_state(holder=ADAM, governor=False)
    empty_hand(s, ADAM)
    idx = [give_favor(s, ADAM, name) for name in cards]
    return s, idx


def test_favor_pattern_in_the_cards_orientation_only():
    """Play a Favor: the pattern must match in the card's orientation (no mirror or rotation)."""
    s, (corner, mirror, rampart, _post) = _favor_state(
        "Cornerstone", "Mirror Cornerstone", "Short Rampart", "Watch Post"
    )
    fill_row(s, 0, 1, [ADAM, ADAM, ADAM, None, None])
    put_block(s, ADAM, 0, 2, 1)  # .X / XX over columns 0-1 (and X. / XX over columns 1-2)
    do(s, role(A.OP_PLAY_FAVOR))
    assert legal(s) == sorted(A.PLAY_FAVOR + i for i in (corner, mirror, rampart))

    s, (corner, mirror, rampart, _post) = _favor_state(
        "Cornerstone", "Mirror Cornerstone", "Short Rampart", "Watch Post"
    )
    fill_row(s, 0, 1, [ADAM, ADAM, None, None, None])
    put_block(s, ADAM, 0, 2, 1)
    do(s, role(A.OP_PLAY_FAVOR))
    assert legal(s) == [A.PLAY_FAVOR + mirror]


def test_favor_pattern_at_any_height_including_the_towers():
    """Play a Favor: the pattern may sit on any rows (FAQ), up to the level-4 towers."""
    s, (post,) = _favor_state("Watch Post")
    put_block(s, BILL, 0, 1, 0)
    put_block(s, ADAM, 0, 2, 0)
    put_block(s, ADAM, 0, 3, 0)
    assert A.OP_PLAY_FAVOR not in role_ops(s)  # two of Adam's blocks in the column
    put_block(s, ADAM, 0, 4, 0)
    do(s, role(A.OP_PLAY_FAVOR), A.PLAY_FAVOR + post)
    assert cells_of(s, legal(s)) == {(0, 2, 0), (0, 3, 0), (0, 4, 0)}


def test_favor_pattern_needs_own_unreinforced_blocks_not_governor_blocks():
    """Play a Favor: every marked block must be the player's own, without a Reinforcement;
    Governor blocks never count (FAQ, docs/RULES.md C4)."""
    for others in ([ADAM, GOV, ADAM], [ADAM, BILL, ADAM]):
        s, (_rampart,) = _favor_state("Short Rampart")
        fill_row(s, 0, 1, others)
        assert A.OP_PLAY_FAVOR not in role_ops(s)
    s, (_rampart,) = _favor_state("Short Rampart")
    fill_row(s, 0, 1, [ADAM, ADAM, ADAM])
    reinforce(s, 0, 1, 1)
    assert A.OP_PLAY_FAVOR not in role_ops(s)
    put_block(s, ADAM, 0, 1, 3)
    put_block(s, ADAM, 0, 1, 4)
    assert A.OP_PLAY_FAVOR in role_ops(s)  # columns 2-4 are clear


def test_favor_pattern_may_straddle_regions_and_lie_outside_the_taskmasters_region():
    """Play a Favor: the pattern need not be in the Taskmaster's region and may straddle two
    regions; the Reinforcement goes on a block of the pattern."""
    s, (rampart,) = _favor_state("Short Rampart")
    put_block(s, ADAM, 0, 1, 3)
    put_block(s, ADAM, 0, 1, 4)
    put_block(s, ADAM, 1, 1, 0)
    put_block(s, ADAM, 1, 1, 2)  # not part of any match
    set_player(s, ADAM, region=1)
    do(s, role(A.OP_PLAY_FAVOR), A.PLAY_FAVOR + rampart)
    assert s.decision == Decision.REINFORCE_CELL
    assert cells_of(s, legal(s)) == {(0, 1, 3), (0, 1, 4), (1, 1, 0)}
    supply = s.sup_reinf
    do(s, at(s, 0, 1, 4))
    assert s.reinf == 1 << bit(s, 0, 1, 4) and s.sup_reinf == supply - 1
    assert s.favor_played[ADAM] == 1 << rampart and s.favor_hand[ADAM] == 0


def _one_card_deck(tmp_path, rewards):
    cards = [{"name": "Anything", "pattern": ["X"], "rewards": rewards}]
    filler = {"pattern": ["XXX", "XXX", "XXX"], "rewards": {"vp": 1}}
    cards += [dict(filler, name=f"Filler {i}") for i in range(14)]  # 15 cards: 5 dealt to each
    path = tmp_path / "deck.json"
    path.write_text(json.dumps({"name": "test deck", "cards": cards}))
    return str(path)


def test_favor_rewards_one_time_and_persistent(tmp_path):
    """Favors: one-time rewards (Jade, VP, Treasure worth 1 VP each, Buyback Chip, Convicts,
    Laborers, Wall Blocks) are paid at once; income and petition bonuses persist."""
    rewards = {
        "income": 1, "petition": 2, "jade": 3, "vp": 4, "treasure": 2,
        "buyback_chips": 1, "convicts": 3, "laborers": 2, "wall_blocks": 2,
    }  # fmt: skip
    s = action_phase_state(holder=ADAM, governor=False, favor_deck=_one_card_deck(tmp_path, rewards))
    give_favor(s, ADAM, "Anything")
    put_block(s, ADAM, 0, 1, 0)
    set_player(s, ADAM, jade=0, laborers=0, convicts=0, blocks=0, chips=0)
    do(s, role(A.OP_PLAY_FAVOR), A.PLAY_FAVOR + 0, at(s, 0, 1, 0))
    assert (s.jade[ADAM], s.convicts[ADAM], s.laborers[ADAM], s.blocks[ADAM]) == (3, 3, 2, 2)
    assert s.stock_blocks[ADAM] == 18 - 1 - 2
    assert s.treasure[ADAM] == 2 and s.score[ADAM] == 4 + 2
    assert s.income_bonus[ADAM] == 1 and s.petition_bonus[ADAM] == 2
    assert s.decision == Decision.BUYBACK_OR_END_TURN and A.BUYBACK_CHIP in legal(s)  # the chip is usable now
    do(s, A.END_TURN)
    clear_prisons(s)
    set_all(s, jade=0)
    finish_round(s)
    assert s.jade == [4, 3, 3]  # persistent extra income
    bid_all(s, {ADAM: 2, BILL: 3})
    assert events(s, EventKind.PETITION)[-1][2] == (4, 3, 0)  # persistent petition bonus
    assert s.holder == ADAM


# docs/RULES.md E12: with no Reinforcement left the card is still played, no token placed.
def test_favor_without_reinforcements_in_the_stockpile_places_none(tmp_path):
    """Ruling 7: with the Reinforcement stockpile empty the favor is still played and paid,
    and no Reinforcement is placed."""
    s = action_phase_state(holder=ADAM, governor=False, favor_deck=_one_card_deck(tmp_path, {"vp": 2}))
    give_favor(s, ADAM, "Anything")
    put_block(s, ADAM, 0, 1, 0)
    for level in (1, 2, 3, 4):  # all 18 Reinforcements on Bill's 18 blocks
        for col in range(5):
            if level < 4 or col in (0, 4):
                put_block(s, BILL, 1, level, col, reinforced=True)
    put_block(s, BILL, 0, 1, 4, reinforced=True)
    assert s.sup_reinf == 0
    do(s, role(A.OP_PLAY_FAVOR), A.PLAY_FAVOR + 0)
    assert s.score[ADAM] == 2 and not s.reinf & (1 << bit(s, 0, 1, 0))


# ================================================================ Builder C: Replace


def test_replace_targets_only_unreinforced_opponent_blocks_in_region():
    """Replace: not a Governor block, not the player's own, not reinforced, and only in the
    Taskmaster's region."""
    s = action_phase_state(holder=BILL, governor=False)
    fill_row(s, 0, 1, [GOV, BILL, ADAM, ADAM, CHARLES])
    reinforce(s, 0, 1, 2)
    put_block(s, ADAM, 1, 1, 0)
    set_player(s, BILL, blocks=1, laborers=20)
    do(s, role(A.OP_REPLACE))
    assert cells_of(s, legal(s)) == {(0, 1, 3), (0, 1, 4)}


def test_replace_needs_double_workers_and_a_block_in_supply():
    """Replace: 4/8/12/16 Workers (double the build cost) and a Wall Block in supply."""
    s = action_phase_state(holder=BILL, governor=False)
    put_block(s, ADAM, 0, 1, 0)
    set_player(s, BILL, blocks=1, laborers=3)
    assert A.OP_REPLACE not in role_ops(s)
    set_player(s, BILL, laborers=4, blocks=0)
    assert A.OP_REPLACE not in role_ops(s)
    set_player(s, BILL, blocks=1)
    do(s, role(A.OP_REPLACE), at(s, 0, 1, 0))
    assert legal(s) == [A.LABORERS + 4]


# docs/RULES.md E13: Replace: the removed block returns to its owner; nothing is scored again.
def test_replace_never_rescores_a_completed_row_and_gives_no_chip():
    """Replace: a replaced block in a completed row is not scored again; no Buyback Chip."""
    s = action_phase_state(holder=ADAM, governor=False)
    fill_row(s, 0, 1, [BILL, BILL, CHARLES, CHARLES, None])
    set_player(s, ADAM, blocks=1, laborers=2)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT, at(s, 0, 1, 4), A.LABORERS + 2, A.END_TURN)
    assert s.score == [0, 3, 3] and s.chips == [1, 0, 0]
    set_player(s, BILL, blocks=1, laborers=4)
    mark = len(s.log)
    do(s, role(A.OP_REPLACE), at(s, 0, 1, 2), A.LABORERS + 4)
    assert owner(s, 0, 1, 2) == BILL
    assert score_events(s, since=mark) == [] and s.chips == [1, 0, 0]


def test_replace_a_tower_block_scores_nothing():
    """Replace: replacing a level-4 block needs 16 Workers and scores no 5 points."""
    s = action_phase_state(holder=BILL, governor=False)
    for level in (1, 2, 3):
        put_block(s, BILL, 0, level, 0)
    put_block(s, ADAM, 0, 4, 0)
    set_player(s, BILL, blocks=1, laborers=15)
    assert A.OP_REPLACE not in role_ops(s)
    set_player(s, BILL, laborers=16)
    mark = len(s.log)
    do(s, role(A.OP_REPLACE), at(s, 0, 4, 0), A.LABORERS + 16)
    assert owner(s, 0, 4, 0) == BILL
    assert score_events(s, since=mark) == [] and s.laborers[BILL] == 8


# ================================================================ Treasurer


# docs/RULES.md C9: Collect a Treasure sends 2 own Convicts to 2 different prisons.
def test_collect_a_treasure_sends_two_own_convicts_to_two_different_prisons():
    """Treasurer B: 2 Convicts from the player's supply to 2 different prisons (any), then
    one Treasure and one victory point."""
    s = action_phase_state(num_players=4, holder=ADAM, governor=False)
    clear_prisons(s)
    set_player(s, ADAM, convicts=1)
    assert A.OP_COLLECT_TREASURE not in role_ops(s)
    set_player(s, ADAM, convicts=3)
    do(s, role(A.OP_COLLECT_TREASURE))
    pairs = [A.PRISON_PAIRS[a - A.PRISON_PAIR] for a in legal(s)]
    assert pairs == [(0, 1), (0, 2), (1, 2)]
    do(s, A.PRISON_PAIR + A.PRISON_PAIRS.index((1, 2)))
    assert s.convicts[ADAM] == 1 and s.prison_convicts == [0, 1, 1]
    assert s.treasure[ADAM] == 1 and s.score[ADAM] == 1
    assert [e[1:4] for e in score_events(s)] == [(ADAM, 1, ScoreReason.COLLECT_TREASURE)]


def test_collect_jade_three_plus_one_per_three_treasures():
    """Treasurer A: 3 Jade, plus 1 for every 3 Treasures."""
    for treasure, got in ((0, 3), (2, 3), (5, 4), (9, 6)):
        s = action_phase_state(holder=ADAM, governor=False)
        set_player(s, ADAM, jade=0, treasure=treasure)
        do(s, role(A.OP_COLLECT_JADE))
        assert s.jade[ADAM] == got


# ================================================================ Taskmaster


def test_move_the_taskmaster_to_any_other_region():
    """Taskmaster A: move to the camp of any other region."""
    s = action_phase_state(num_players=4, holder=ADAM, governor=False)
    do(s, find_action(s, "role", A.OP_MOVE_TASKMASTER))
    assert legal(s) == [find_action(s, "move", 1), find_action(s, "move", 2)]
    do(s, find_action(s, A.MOVE_REGION, 2))
    assert s.region == [2, 0, 0, 0]


@pytest.mark.parametrize(
    "first, op, cost",
    [
        (A.OP_COLLECT_PRISON, A.OP_RECRUIT, 1),  # Recruiter
        (A.OP_DRAW_FAVORS, A.OP_BUY_BLOCKS, 2),  # Planner
        (A.OP_REPLACE, A.OP_REPLACE, 2),  # Builder
        (A.OP_COLLECT_JADE, A.OP_COLLECT_TREASURE, 3),  # Treasurer
    ],
)
def test_repeat_role_costs(first, op, cost):
    """Ruling 1: Repeat a Previous Role costs Recruiter 1, Planner 2, Builder 2, Treasurer 3
    Jade; any action of the repeated card may be chosen."""
    s = action_phase_state(holder=ADAM, governor=False)
    clear_prisons(s)
    put_block(s, BILL, 0, 1, 0)
    put_block(s, BILL, 0, 1, 1)
    set_player(s, ADAM, laborers=8, blocks=2)
    do(s, role(first))
    while s.current_player() == ADAM:
        do(s, legal(s)[0])
    play_turns(s, 2)
    set_player(s, ADAM, jade=10, convicts=2)
    assert op in repeat_ops(s)
    mark = len(s.log)
    do(s, repeat(op))
    assert events(s, EventKind.ROLE, mark) == [("role", ADAM, op, True, cost)]
    assert s.jade[ADAM] == 10 - cost and s.decision != Decision.CHOOSE_ROLE_ACTION  # paid, action under way
    assert s.roles_table[ADAM] >> A.TASKMASTER & 1


def test_repeat_needs_the_jade():
    """Repeat: not offered when the player cannot pay the cost."""
    s = action_phase_state(holder=ADAM, governor=False)
    do(s, role(A.OP_COLLECT_JADE))
    play_turns(s, 2)
    set_player(s, ADAM, jade=2)
    assert repeat_ops(s) == set()
    set_player(s, ADAM, jade=3)
    assert repeat_ops(s) == {A.OP_COLLECT_JADE}  # Collect a Treasure needs 2 Convicts


# docs/RULES.md E15: Repeat picks any non-Taskmaster card played in an earlier turn of this round.
def test_repeat_only_cards_played_in_an_earlier_turn_and_never_the_taskmaster():
    """Repeat: only a card already on the table from an earlier turn of this round; a card
    bought back is in the hand, not on the table; the Taskmaster card cannot be repeated."""
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=20, chips=1)
    assert repeat_ops(s) == set()  # nothing on the table yet
    do(s, role(A.OP_COLLECT_JADE), A.BUYBACK_CHIP)
    assert repeat_ops(s) == set()  # Treasurer went back to the hand
    do(s, role(A.OP_MOVE_TASKMASTER), A.MOVE_REGION + 1)
    play_turns(s, 2)
    # Adam's second turn: Taskmaster is on the table, so no Repeat at all (it needs the card)
    assert s.roles_table[ADAM] == 1 << A.TASKMASTER and repeat_ops(s) == set()
    do(s, role(A.OP_COLLECT_PRISON))
    play_turns(s, 2)
    assert repeat_ops(s) == set()  # the Taskmaster card is still on the table
    assert A.NUM_REPEATABLE == 11 and all(A.OP_CARD[op] != A.TASKMASTER for op in range(11))

    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=20)
    do(s, role(A.OP_COLLECT_PRISON))
    play_turns(s, 2)
    assert repeat_ops(s) == {A.OP_RECRUIT, A.OP_COLLECT_PRISON}  # Recruiter's feasible actions


# ================================================================ Governor block


def test_governor_block_is_free_in_any_region():
    """Governor block: placing it costs no Workers or Jade and is allowed in any region,
    wherever the Taskmaster stands (same support rules)."""
    s = action_phase_state(holder=ADAM)
    put_block(s, BILL, 1, 1, 2)
    set_player(s, ADAM, jade=0, laborers=0, convicts=0, blocks=0)
    expected = {(r, 1, c) for r in (0, 1) for c in range(5)} - {(1, 1, 2)} | {(1, 2, 2)}
    assert cells_of(s, legal(s), A.GOVERNOR) == expected
    do(s, find_action(s, "governor", (1, 2, 2)))
    assert owner(s, 1, 2, 2) == GOV
    assert (s.jade[ADAM], s.laborers[ADAM], s.convicts[ADAM]) == (0, 0, 0)
    assert s.decision == Decision.CHOOSE_ROLE_ACTION and s.current_player() == ADAM


def test_governor_block_at_any_decision_of_the_holders_turns_only():
    """Governor block: offered at every decision of the holder's turns (not an action), and
    never in another player's turn or during the bids."""
    s = action_phase_state(holder=ADAM)
    set_player(s, ADAM, jade=5, laborers=4, blocks=1)
    assert governor_cells(s)
    do(s, role(A.OP_RECRUIT))
    assert s.decision == Decision.RECRUIT_COUNT and governor_cells(s)
    do(s, A.RECRUIT_COUNT)
    assert s.decision == Decision.BUYBACK_OR_END_TURN and legal(s)[0] == A.END_TURN and governor_cells(s)
    do(s, A.END_TURN)
    assert s.current_player() == BILL and not governor_cells(s)
    play_turns(s, 2)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT, at(s, 0, 1, 0))
    assert s.decision == Decision.ASSIGN_LABORERS and governor_cells(s)
    do(s, gov_at(s, 0, 2, 0))
    assert s.decision == Decision.ASSIGN_LABORERS and not governor_cells(s)
    do(s, A.LABORERS + 2)
    assert s.current_player() == BILL  # nothing left to decide: the turn ended


# docs/RULES.md E14: buyback and Governor placement after an action are one decision.
def test_governor_block_placed_at_the_turn_end_decision_ends_the_turn():
    """Governor block: the holder may place it after the last action of a turn; with nothing
    else to decide the turn then ends."""
    s = action_phase_state(holder=ADAM)
    do(s, role(A.OP_COLLECT_JADE))
    assert s.decision == Decision.BUYBACK_OR_END_TURN and s.current_player() == ADAM  # only for the Governor
    do(s, gov_at(s, 1, 1, 2))
    assert s.current_player() == BILL and owner(s, 1, 1, 2) == GOV


# docs/RULES.md E16: during a build only cells after which the build can still finish.
def test_governor_block_never_blocks_the_build_under_way():
    """Governor block (docs/RULES.md C11): during a two-block build it may be placed between the
    blocks, but not where it would leave the second block nowhere to go."""
    s = action_phase_state(holder=CHARLES)
    fill_row(s, 0, 1, [ADAM, BILL, ADAM, None, None])
    set_player(s, CHARLES, jade=1, blocks=2, laborers=4)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT + 1, at(s, 0, 1, 3))
    assert cells_of(s, legal(s)) == {(0, 1, 4)}  # 2 Workers left: level 1 only
    options = cells_of(s, legal(s), A.GOVERNOR)
    assert (0, 1, 4) not in options
    assert {(1, 1, 0), (0, 2, 0), (0, 2, 3)} <= options


# docs/RULES.md C14: a Governor block not placed by the end of the holder's third turn goes to the box.
def test_governor_block_lost_after_the_holders_third_turn():
    """Governor block: not placed by the end of the holder's third turn, it goes to the box."""
    s = action_phase_state(holder=BILL)
    play_turns(s, 6)  # Bill, Charles, Adam twice
    assert s.gov_in_hand and s.current_player() == BILL
    box = s.gov_box
    quiet_turn(s)
    assert not s.gov_in_hand and s.gov_box == box + 1
    assert ("governor_lost", BILL) in s.log


def test_governor_block_completing_a_row_gives_the_chip_but_never_counts_for_majority():
    """Governor block: completing a row with it earns the placer a Buyback Chip and the row
    is scored without it (FAQ, docs/RULES.md C6)."""
    s = action_phase_state(holder=CHARLES)
    fill_row(s, 1, 1, [ADAM, ADAM, BILL, GOV, None])
    do(s, gov_at(s, 1, 1, 4))
    assert s.chips == [0, 0, 1]
    assert s.score == [3, 0, 0]
    s = action_phase_state(holder=CHARLES)
    fill_row(s, 0, 1, [GOV, GOV, GOV, BILL, None])
    do(s, gov_at(s, 0, 1, 4))
    assert s.score == [0, 3, 0] and s.chips == [0, 0, 1]


def test_governor_block_on_level_four_scores_nothing():
    """Governor block: a Governor block on level 4 gives no 5 points."""
    s = action_phase_state(holder=ADAM)
    for level in (1, 2, 3):
        put_block(s, BILL, 0, level, 0)
    do(s, gov_at(s, 0, 4, 0))
    assert s.score == [0, 0, 0] and score_events(s) == []


def test_governor_block_completing_a_level_never_counts_for_the_level_majority():
    """Governor block: completing a level with it scores the level; Governor blocks are not a
    'player' in the majority."""
    s = action_phase_state(holder=CHARLES)
    fill_row(s, 0, 1, [GOV, GOV, GOV, ADAM, BILL])
    fill_row(s, 1, 1, [GOV, GOV, ADAM, BILL, None])
    do(s, gov_at(s, 1, 1, 4))
    assert s.treasure == [1, 1, 0]
    assert points_by(s, LEVELS, level=0) == {ADAM: 1, BILL: 1}


# ================================================================ mid-game scoring


@pytest.mark.parametrize("level, points, workers", [(1, 3, 2), (2, 6, 4), (3, 10, 6)])
def test_row_points_by_level(level, points, workers):
    """Completing a row: the majority scores 3/6/10 on level 1/2/3; the completer gets a chip."""
    s = action_phase_state(holder=ADAM, governor=False)
    for below in range(1, level):
        fill_row(s, 0, below, [BILL, CHARLES, BILL, CHARLES, BILL])
    fill_row(s, 0, level, [ADAM, ADAM, BILL, CHARLES, None])
    set_player(s, ADAM, blocks=1, laborers=workers)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT, at(s, 0, level, 4), A.LABORERS + workers)
    assert s.score == [points, 0, 0] and s.chips == [1, 0, 0]


# docs/RULES.md E10: blocks land when their cell is chosen and what they complete scores then.
def test_completing_a_row_with_the_first_of_two_blocks_gives_a_usable_chip():
    """Completing a row: the chip comes immediately, and the completer who holds it may use
    it as this turn's buyback."""
    s = action_phase_state(holder=ADAM, governor=False)
    fill_row(s, 0, 1, [BILL, BILL, BILL, BILL, None])
    set_player(s, ADAM, jade=1, blocks=2, laborers=6, chips=0)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT + 1, at(s, 0, 1, 4))
    assert s.chips[ADAM] == 1 and s.score == [0, 3, 0]
    do(s, at(s, 0, 2, 4), A.LABORERS + 6)
    assert legal(s) == [A.END_TURN, A.BUYBACK_CHIP]


def test_own_level_four_block_scores_five():
    """Building a level-4 block: +5 for the builder; no chip, no treasure."""
    s = action_phase_state(holder=ADAM, governor=False)
    for level in (1, 2, 3):
        put_block(s, BILL, 1, level, 4)
    set_player(s, ADAM, region=1, blocks=1, laborers=8)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT, at(s, 1, 4, 4), A.LABORERS + 8)
    assert [e[1:4] for e in score_events(s)] == [(ADAM, 5, ScoreReason.TOWER)]
    assert s.chips == [0, 0, 0] and s.treasure == [0, 0, 0]


def test_completing_all_towers_is_no_level():
    """Completing a level: level 4 never gives a Treasure (rulebook note)."""
    s = action_phase_state(holder=ADAM, governor=False)
    for r in (0, 1):
        for c in (0, 4):
            for level in (1, 2, 3):
                put_block(s, BILL, r, level, c)
    put_block(s, BILL, 0, 4, 0)
    put_block(s, BILL, 0, 4, 4)
    put_block(s, BILL, 1, 4, 0)
    set_player(s, ADAM, region=1, blocks=1, laborers=8)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT, at(s, 1, 4, 4), A.LABORERS + 8)
    assert s.treasure == [0, 0, 0] and s.score == [5, 0, 0] and s.chips == [0, 0, 0]


def test_completed_level_tie_gives_every_tied_player_a_treasure():
    """Completing a level: all players tied for the level majority get a Treasure and 1 VP."""
    s = action_phase_state(holder=CHARLES, governor=False)
    fill_row(s, 0, 1, [ADAM, ADAM, BILL, BILL, CHARLES])
    fill_row(s, 1, 1, [ADAM, ADAM, BILL, BILL, None])
    set_player(s, CHARLES, blocks=1, laborers=2, region=1)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT, at(s, 1, 1, 4), A.LABORERS + 2)
    assert s.treasure == [1, 1, 0]
    assert points_by(s, LEVELS, level=0) == {ADAM: 1, BILL: 1}
    assert points_by(s, ROWS, region=1, level=0) == {ADAM: 3, BILL: 3}


# ================================================================ end of the game


# docs/RULES.md C15, E18: the last wall cell ends the game; its builder takes every prison.
def test_wall_completion_ends_the_game_and_the_completer_takes_every_prison():
    """End of the game: the builder of the last block receives all Jade and Convicts of all
    prisons; the game ends when the action is done (no buyback even with a chip)."""
    s = action_phase_state(holder=ADAM, governor=False)
    fill_wall_except(s, (1, 4, 4))
    set_prison(s, 0, jade=2, convicts=3)
    set_prison(s, 1, jade=1, convicts=1)
    set_player(s, ADAM, region=1, jade=5, blocks=1, laborers=8, convicts=0, chips=1)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT, at(s, 1, 4, 4), A.LABORERS + 8)
    assert s.is_terminal() and s.legal_actions() == ()
    assert ("wall_complete", ADAM, 3, 5) in s.log  # including Builder A's own Convict
    assert s.jade[ADAM] == 8 and s.convicts[ADAM] == 5
    assert s.prison_jade == [0, 0] and s.prison_convicts == [0, 0]
    assert score_events(s, AT_END) == []  # every row and level was complete


# docs/RULES.md E17: inside an action, the game ends when that action ends.
def test_wall_completed_by_the_governor_block_mid_action_ends_after_the_action():
    """Ruling 15: the game ends after the current action when the last cell is filled, even
    if the Governor block filled it during that action."""
    s = action_phase_state(holder=CHARLES)
    fill_wall_except(s, (0, 4, 0))
    clear_prisons(s)
    set_player(s, CHARLES, jade=5, laborers=0, convicts=0)
    do(s, role(A.OP_RECRUIT), gov_at(s, 0, 4, 0))
    assert not s.is_terminal() and s.decision == Decision.RECRUIT_COUNT
    do(s, A.RECRUIT_COUNT + 1)
    assert s.is_terminal()
    assert s.laborers[CHARLES] == 2 and s.convicts[CHARLES] == 1  # the Recruit's own Convict
    assert ("wall_complete", CHARLES, 0, 1) in s.log
    assert points_by(s, ScoreReason.TOWER) == {}


# docs/RULES.md E17: a Governor block filling the last cell outside an action ends the game at once.
def test_wall_completed_by_the_governor_between_actions_ends_at_once():
    """End of the game: the Governor block filling the last cell at a turn's start ends the
    game immediately; the placer takes the prisons."""
    s = action_phase_state(holder=BILL)
    fill_wall_except(s, (1, 4, 0))
    clear_prisons(s)
    set_prison(s, 1, jade=1, convicts=2)
    do(s, gov_at(s, 1, 4, 0))
    assert s.is_terminal() and ("wall_complete", BILL, 1, 2) in s.log


# docs/RULES.md C15: the game ends at the end of the round in which the last Governor block left.
def test_game_ends_at_round_end_when_the_governor_stockpile_is_empty():
    """End of the game: at the end of a round with no Governor block in the stockpile the
    game ends (not before the round's last turn)."""
    s = action_phase_state(holder=ADAM)
    exhaust_governor_stock(s)
    play_turns(s, 8)
    assert not s.is_terminal()
    quiet_turn(s)
    assert s.is_terminal()

    s = action_phase_state(holder=ADAM)
    s.gov_box += s.gov_stock - 1
    s.gov_stock = 1  # the next petition takes the last one: round 2 is the last
    finish_round(s)
    assert s.decision == Decision.PETITION_BID
    bid_all(s, {})
    assert s.gov_stock == 0 and s.gov_in_hand
    finish_round(s)
    assert s.is_terminal() and s.round == 2
    assert s.gov_box >= 1 and not s.gov_in_hand  # the unplaced block went to the box
    assert_consistent(s)


@pytest.mark.parametrize("players, rounds", [(2, 12), (3, 12), (4, 11)])
def test_game_lasts_as_many_rounds_as_governor_blocks(players, rounds):
    """Overview: the game is limited to 12 rounds (2-3 players) or 11 (4 players)."""
    s = action_phase_state(num_players=players, holder=ADAM)
    while not s.is_terminal():
        if s.decision == Decision.PETITION_BID:
            bid_all(s, {})
        else:
            finish_round(s)
    assert s.round == rounds


# docs/RULES.md E19: end-game order: uncompleted rows, then levels, then the bonuses.
def test_end_game_scores_uncompleted_rows_and_levels():
    """End-game scoring: uncompleted rows and levels are scored as if completed; rows with no
    player block score for nobody."""
    s = action_phase_state(holder=ADAM, governor=False)
    clear_prisons(s)
    fill_row(s, 0, 1, [ADAM, ADAM, BILL, None, None])
    fill_row(s, 0, 2, [CHARLES, None, None, None, None])
    fill_row(s, 1, 1, [GOV, GOV, None, None, None])
    end_game(s)
    assert points_by(s, ScoreReason.ROW_AT_END, region=0, level=0) == {ADAM: 3}
    assert points_by(s, ScoreReason.ROW_AT_END, region=0, level=1) == {CHARLES: 6}
    assert points_by(s, ScoreReason.ROW_AT_END, region=1) == {}
    assert points_by(s, ScoreReason.LEVEL_AT_END, level=0) == {ADAM: 1}
    assert points_by(s, ScoreReason.LEVEL_AT_END, level=1) == {CHARLES: 1}
    assert s.treasure == [1, 0, 1]


@pytest.mark.parametrize(
    "chips, points",
    [([0, 1, 2], {BILL: 1, CHARLES: 3}), ([3, 4, 7], {ADAM: 6, BILL: 10, CHARLES: 10})],
)
def test_end_game_buyback_chips(chips, points):
    """End-game scoring: 0/1/2/3/4+ Buyback Chips score 0/1/3/6/10."""
    s = action_phase_state(holder=ADAM, governor=False)
    for p in range(3):
        set_player(s, p, chips=chips[p])
    end_game(s)
    assert points_by(s, ScoreReason.BUYBACK_CHIPS) == points
    assert [scoring.buyback_chip_points(c) for c in range(6)] == [0, 1, 3, 6, 10, 10]


def test_end_game_least_built_region_three_regions():
    """End-game scoring: 3 points per block in the region where the player built fewest."""
    s = action_phase_state(num_players=4, holder=ADAM, governor=False)
    fill_row(s, 0, 1, [ADAM, ADAM, BILL, None, None])
    fill_row(s, 1, 1, [ADAM, BILL, None, None, None])
    fill_row(s, 2, 1, [ADAM, ADAM, ADAM, BILL, BILL])
    end_game(s)
    assert points_by(s, ScoreReason.LEAST_BUILT_REGION) == {ADAM: 3, BILL: 3}


@pytest.mark.parametrize(
    "treasure, plus, minus",
    [
        ([2, 1, 1], {ADAM}, {BILL, CHARLES}),
        ([1, 1, 1], {ADAM, BILL, CHARLES}, {ADAM, BILL, CHARLES}),
        ([0, 3, 3], {BILL, CHARLES}, {ADAM}),
    ],
)
def test_end_game_treasure_most_and_fewest(treasure, plus, minus):
    """End-game scoring: most Treasure +3, fewest -3; all tied get both (docs/RULES.md C16)."""
    s = action_phase_state(holder=ADAM, governor=False)
    for p in range(3):
        set_player(s, p, treasure=treasure[p])
    end_game(s)
    assert {p for _, p, pts, *_ in score_events(s, ScoreReason.MOST_TREASURE)} == plus
    assert {p for _, p, pts, *_ in score_events(s, ScoreReason.FEWEST_TREASURE)} == minus
    assert all(pts == 3 for _, _, pts, *_ in score_events(s, ScoreReason.MOST_TREASURE))
    assert all(pts == -3 for _, _, pts, *_ in score_events(s, ScoreReason.FEWEST_TREASURE))


# docs/RULES.md E21: all players tied for the most score, even at zero.
@pytest.mark.parametrize("jade, winners", [([4, 9, 9], {BILL, CHARLES}), ([10, 2, 3], {ADAM})])
def test_end_game_most_jade_ties_all_score(jade, winners):
    """End-game scoring: most Jade +3; all tied players score."""
    s = action_phase_state(holder=ADAM, governor=False)
    clear_prisons(s)
    for p in range(3):
        set_player(s, p, jade=jade[p])
    end_game(s)
    assert points_by(s, ScoreReason.MOST_JADE) == dict.fromkeys(winners, 3)


def test_end_game_most_workers_counts_laborers_and_convicts():
    """End-game scoring: most Workers (Laborers + Convicts) +3; ties all score."""
    s = action_phase_state(holder=ADAM, governor=False)
    clear_prisons(s)
    set_player(s, ADAM, laborers=5, convicts=0)
    set_player(s, BILL, laborers=0, convicts=5)
    set_player(s, CHARLES, laborers=2, convicts=2)
    end_game(s)
    assert points_by(s, ScoreReason.MOST_WORKERS) == {ADAM: 3, BILL: 3}


def test_every_score_change_is_logged():
    """The log has a ("score", ...) event for every change of score."""
    s = action_phase_state(holder=ADAM, governor=False)
    clear_prisons(s)
    fill_row(s, 0, 1, [ADAM, BILL, None, None, None])
    set_player(s, CHARLES, treasure=2, chips=2)
    end_game(s)
    totals = [0, 0, 0]
    for _, p, pts, *_ in score_events(s):
        totals[p] += pts
    assert totals == s.score


def test_winner_tie_breaks():
    """Winner: highest score; ties broken by blocks built, then Jade, then Treasure; a tie
    that remains is shared (docs/RULES.md C17)."""
    w = scoring.winners
    assert w([10, 12, 11], [0, 0, 0], [0, 0, 0], [0, 0, 0]) == [1]
    assert w([12, 12, 11], [3, 4, 9], [9, 0, 0], [9, 0, 0]) == [1]
    assert w([12, 12, 11], [4, 4, 9], [1, 2, 9], [9, 0, 0]) == [1]
    assert w([12, 12, 11], [4, 4, 9], [2, 2, 9], [1, 3, 9]) == [1]
    assert w([12, 12, 11], [4, 4, 9], [2, 2, 9], [3, 3, 9]) == [0, 1]
    # the shared win: 1/k to each of k tied winners (E23), what every win rate counts
    assert [scoring.win_share([0, 1], p) for p in range(3)] == [0.5, 0.5, 0.0]
    assert [scoring.win_share([2], p) for p in range(3)] == [0.0, 0.0, 1.0]


def test_winner_tie_break_in_a_game():
    """Winner: a tie on score is broken by Jade when blocks are equal; a full tie is shared
    and the returns split the win."""
    s = action_phase_state(num_players=2, holder=ADAM, governor=False)
    clear_prisons(s)
    set_all(s, jade=5, score=0)
    end_game(s)
    assert s.score[0] == s.score[1] and s.winners == [0, 1]
    assert s.returns() == [0.0, 0.0]

    s = action_phase_state(num_players=2, holder=ADAM, governor=False)
    clear_prisons(s)
    set_player(s, ADAM, jade=6, score=0)
    set_player(s, BILL, jade=5, score=3)  # Adam's +3 for most Jade evens the score
    end_game(s)
    assert s.score[0] == s.score[1] and s.winners == [ADAM]
    assert s.returns() == [1.0, -1.0]


# ================================================================ component limits


def test_short_supply_gives_what_is_left():
    """Ruling 7: a gain the supply cannot cover gives what is left."""
    s = action_phase_state(holder=ADAM, governor=False)
    clear_prisons(s)
    set_player(s, ADAM, laborers=2, convicts=0)
    park(s, "convicts", leave=4, seat=CHARLES)
    do(s, role(A.OP_COLLECT_CONVICTS))
    assert s.convicts[ADAM] == 4 and s.sup_convicts == 0

    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=0)
    park(s, "jade", leave=2, seat=CHARLES)
    do(s, role(A.OP_COLLECT_JADE))
    assert s.jade[ADAM] == 2


def test_empty_chip_and_treasure_supplies_give_nothing():
    """Ruling 7: completing a row with no Buyback Chip left gives no chip; a Treasure that is
    not there gives no Treasure and no point."""
    s = action_phase_state(holder=ADAM, governor=False)
    fill_row(s, 0, 1, [BILL, BILL, BILL, BILL, None])
    set_player(s, ADAM, blocks=1, laborers=2)
    park(s, "chips", leave=0, seat=CHARLES)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT, at(s, 0, 1, 4), A.LABORERS + 2)
    assert s.chips[ADAM] == 0 and s.score[BILL] == 3

    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, convicts=2)
    park(s, "treasure", leave=0, seat=CHARLES)
    do(s, role(A.OP_COLLECT_TREASURE), A.PRISON_PAIR)
    assert s.treasure[ADAM] == 0 and s.score[ADAM] == 0 and s.convicts[ADAM] == 0


def test_recruit_limited_by_the_laborer_supply():
    """Ruling 7: Laborers that are not in the stockpile cannot be recruited; with none left
    Recruit Laborers is illegal."""
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=10)
    park(s, "laborers", leave=2, seat=CHARLES)
    do(s, role(A.OP_RECRUIT))
    assert legal(s) == [A.RECRUIT_COUNT, A.RECRUIT_COUNT + 1]
    s = action_phase_state(holder=ADAM, governor=False)
    park(s, "laborers", leave=0, seat=CHARLES)
    assert A.OP_RECRUIT not in role_ops(s)


def test_empty_supply_sends_nothing_to_prison():
    """Ruling 7: a Convict or Jade that should go to a prison from an empty supply is not
    placed."""
    s = action_phase_state(holder=ADAM, governor=False)
    clear_prisons(s)
    park(s, "convicts", leave=0, seat=CHARLES)
    do(s, role(A.OP_RECRUIT), A.RECRUIT_COUNT)
    assert s.prison_convicts == [0, 0] and s.laborers[ADAM] == 1

    s = round_two_bids(holder=ADAM)
    clear_prisons(s)
    park(s, "jade", leave=0, seat=CHARLES)
    park(s, "convicts", leave=0, seat=CHARLES)
    set_player(s, BILL, region=0)
    bid_all(s, {BILL: 1})
    assert s.holder == BILL
    assert s.prison_jade == [1, 0]  # Bill's own bid went to the treasury first
    assert s.prison_convicts == [0, 0]


def test_unlimited_components_option():
    """Ruling 7: the unlimited option makes Jade, Treasure, chips, Reinforcements, Laborers and
    Convicts inexhaustible; wall blocks, Governor blocks and favor cards stay finite."""
    game = Game(num_players=3, unlimited_components=True)
    t = game.totals
    for key in ("jade", "treasure", "buyback_chips", "reinforcements", "laborers", "convicts"):
        assert t[key] == S.UNLIMITED
    assert (t["blocks_per_player"], t["governor_blocks"], t["favor_cards"]) == (18, 12, 36)
    s = action_phase_state(holder=ADAM, governor=False, unlimited_components=True)
    set_player(s, ADAM, laborers=100, jade=100)
    do(s, role(A.OP_COLLECT_CONVICTS))
    assert s.convicts[ADAM] == 6 and s.laborers[ADAM] == 98


def test_finite_totals_are_the_box():
    """Ruling 7: the default limits are the box contents."""
    t = Game(num_players=4).totals
    assert t == {
        "jade": 100, "treasure": 102, "buyback_chips": 18, "reinforcements": 18,
        "laborers": 45, "convicts": 75, "blocks_per_player": 18, "governor_blocks": 11,
        "favor_cards": 36,
    }  # fmt: skip


# ================================================================ variants


def test_friendly_variant_no_replace():
    """Friendly variant: Builder C (Replace a Built Block) is removed."""
    for no_replace in (False, True):
        s = action_phase_state(holder=BILL, governor=False, no_replace=no_replace)
        put_block(s, ADAM, 0, 1, 0)
        set_player(s, BILL, blocks=1, laborers=8)
        assert (A.OP_REPLACE in role_ops(s)) is not no_replace


@pytest.mark.parametrize("players, regions", [(3, 3), (4, 4)])
def test_friendly_variant_extra_region(players, regions):
    """Friendly variant: one more region than recommended."""
    game = Game(num_players=players, extra_region=True)
    assert game.geometry.regions == regions
    assert game.totals["governor_blocks"] == (12 if players == 3 else 11)
    s = action_phase_state(num_players=players, holder=ADAM, governor=False, extra_region=True)
    do(s, role(A.OP_MOVE_TASKMASTER))
    assert legal(s) == [A.MOVE_REGION + r for r in range(1, regions)]


def test_friendly_variant_never_more_regions_than_players():
    """Friendly variant: never more regions than players (2 players + extra region = error)."""
    with pytest.raises(ConfigError, match="extra_region"):
        Game(num_players=2, extra_region=True)


# docs/RULES.md E2: Quicker Play resources come from the supplies, start_blocks from the own 18.
def test_quicker_play_variant_starting_resources():
    """Quicker Play: extra starting Jade and Workers and Wall Blocks, from the supplies."""
    game = Game(num_players=3, extra_jade=4, start_laborers=3, start_convicts=2, start_blocks=5)
    s = game.new_initial_state(0)
    assert s.jade == [16] * 3
    assert s.laborers == [3] * 3 and s.convicts == [2] * 3
    assert s.blocks == [5] * 3 and s.stock_blocks == [13] * 3
    assert s.sup_laborers == 45 - 9 and s.sup_convicts == 75 - 6 and s.sup_jade == 100 - 48
    assert_consistent(s)
    with pytest.raises(ConfigError):
        Game(num_players=3, start_blocks=19)


# docs/RULES.md E5: First Round Incentive (wall_block from the own stockpile, treasure worth 1 VP).
@pytest.mark.parametrize("kind", ["wall_block", "buyback_chip", "treasure"])
def test_first_round_incentive(kind):
    """First Round Incentive: the round-1 petition winner gets the agreed Wall Block, Buyback
    Chip or Treasure (worth 1 VP); nobody else, and not in later rounds."""
    s = action_phase_state(holder=BILL, governor=False, first_round_incentive=kind)
    got = {"wall_block": s.blocks, "buyback_chip": s.chips, "treasure": s.treasure}[kind]
    assert got == [0, 1, 0]
    assert s.score == ([0, 1, 0] if kind == "treasure" else [0, 0, 0])
    finish_round(s)
    set_all(s, jade=10)
    bid_all(s, {ADAM: 1})
    got = {"wall_block": s.blocks, "buyback_chip": s.chips, "treasure": s.treasure}[kind]
    assert got == [0, 1, 0]
    with pytest.raises(ConfigError):
        Game(num_players=3, first_round_incentive="jade")


# docs/RULES.md E20: Favor Trade-in from the last petition winner clockwise, 1 Jade or 1 Convict a card.
def test_favor_trade_in_order_and_rates():
    """Favor Trade-in: at game end, from the last petition winner clockwise, each player may
    discard favor cards for 1 Jade or 1 Convict each; players without cards are skipped; the
    trade happens before the final scoring."""
    s = action_phase_state(holder=BILL, governor=False, favor_trade_in=True)
    clear_prisons(s)
    set_all(s, jade=5, convicts=0, laborers=0)
    exhaust_governor_stock(s)
    play_turns(s, 8)  # Charles has played his last turn; Adam's is left
    empty_hand(s, CHARLES)
    quiet_turn(s)
    assert s.decision == Decision.FAVOR_TRADE_IN and s.current_player() == BILL
    assert legal(s) == [A.TRADE_JADE, A.TRADE_CONVICT, A.TRADE_DONE]
    hand = s.favor_hand[BILL].bit_count()
    do(s, A.TRADE_JADE, A.TRADE_CONVICT, A.TRADE_DONE)
    assert (s.jade[BILL], s.convicts[BILL]) == (6, 1)
    assert s.favor_hand[BILL].bit_count() == hand - 2
    assert s.current_player() == ADAM  # Charles has no card
    cards = s.favor_hand[ADAM].bit_count()
    for _ in range(cards):
        do(s, A.TRADE_JADE)
    assert s.is_terminal() and s.jade[ADAM] == 5 + cards
    assert points_by(s, ScoreReason.MOST_JADE) == {ADAM: 3}  # the traded Jade counts
    assert points_by(s, ScoreReason.MOST_WORKERS) == {BILL: 3}


def test_favor_trade_in_off_by_default():
    """Favor Trade-in is a variant: by default the game ends with no trade decision."""
    s = action_phase_state(holder=BILL, governor=False)
    end_game(s)
    assert s.is_terminal() and s.favor_hand[BILL]
