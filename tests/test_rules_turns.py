"""The turn structure and the role actions of the Recruiter, the Planner, the Treasurer and the Taskmaster.

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
    at,
    bit,
    cells_of,
    clear_prisons,
    do,
    events,
    find_action,
    legal,
    play_turns,
    put_block,
    quiet_turn,
    repeat,
    repeat_ops,
    role,
    role_ops,
    score_events,
    set_player,
    set_prison,
    shrink_deck,
)

from island_fortress_env.engine import actions as A
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.events import EventKind, ScoreReason

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
