"""Every worked example of the rulebook (Adam, Bill and Charles), replayed on the engine.

Seats: Adam = 0, Bill = 1, Charles = 2 in a three-player game (two regions). Each test names
its example in the docstring; where the rulebook leaves a detail open (which column, how many
of the Workers are Laborers) the test picks one and says so.
"""

from __future__ import annotations

from scenario import (
    ADAM,
    BILL,
    CHARLES,
    GOV,
    LEVELS,
    ROWS,
    action_phase_state,
    at,
    bid_all,
    bit,
    clear_prisons,
    do,
    end_game,
    events,
    fill_row,
    finish_round,
    give_favor,
    gov_at,
    legal,
    owner,
    play_turns,
    points_by,
    put_block,
    repeat,
    role,
    set_all,
    set_player,
)

from island_fortress_env.engine import actions as A
from island_fortress_env.engine import scoring
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.events import EventKind, ScoreReason
from island_fortress_env.engine.wall import geometry

# ---------------------------------------------------------------- income and petition


def test_income_example_extra_income_from_a_favor():
    """Income Phase example: Adam has played a Favor Card that gives one additional income,
    so he collects four (three as standard plus one); the others collect three."""
    s = action_phase_state(holder=ADAM)
    set_player(s, ADAM, income_bonus=1)
    clear_prisons(s)
    before = list(s.jade)
    mark = len(s.log)
    finish_round(s)  # quiet turns move no Jade; the next round starts with income
    assert s.decision == Decision.PETITION_BID and s.round == 2
    assert [s.jade[p] - before[p] for p in range(3)] == [4, 3, 3]
    assert {e[1]: e[2] for e in events(s, EventKind.INCOME, mark)} == {ADAM: 4, BILL: 3, CHARLES: 3}


def _round_two_bids(holder: int):
    s = action_phase_state(holder=holder)
    finish_round(s)
    assert s.decision == Decision.PETITION_BID and s.holder == holder
    set_all(s, jade=10)
    return s


def test_petition_example_tie_on_total_broken_by_jade_in_hand():
    """Petition example: Adam (+2 petition) bids 3, Bill bids 4, Charles (+3 petition) bids 2.
    Adam and Charles both total five and beat Bill's four; Adam wins the tie-break with more
    Jade in his bidding hand. Only Adam pays; the others keep their Jade."""
    s = _round_two_bids(holder=ADAM)  # Adam held the marker: the marker rule would pick Charles
    set_player(s, ADAM, petition_bonus=2)
    set_player(s, CHARLES, petition_bonus=3)
    bid_all(s, {ADAM: 3, BILL: 4, CHARLES: 2})
    petition = events(s, EventKind.PETITION)[-1]
    assert petition[2] == (5, 4, 5)
    assert petition[3] == ADAM and s.holder == ADAM
    assert s.jade == [7, 10, 10]
    assert s.gov_in_hand and s.current_player() == ADAM


def test_petition_second_example_tie_on_hand_jade_goes_clockwise_from_last_holder():
    """Second petition example: Bill now also has +2 petition. Adam and Bill both put 3 Jade
    in hand (total five each), Charles bids nothing. They are tied on hand Jade too, and since
    Adam had the petition last, it passes clockwise to Bill."""
    s = _round_two_bids(holder=ADAM)
    set_player(s, ADAM, petition_bonus=2)
    set_player(s, BILL, petition_bonus=2)
    set_player(s, CHARLES, petition_bonus=3)
    bid_all(s, {ADAM: 3, BILL: 3, CHARLES: 0})
    petition = events(s, EventKind.PETITION)[-1]
    assert petition[2] == (5, 5, 3)
    assert s.holder == BILL
    assert s.jade == [10, 7, 10]


# ---------------------------------------------------------------- buyback


def test_buyback_example_taskmaster_bought_back_for_three_jade_then_build():
    """Buyback example: Adam plays the Taskmaster card and moves his Taskmaster to a new
    Region, pays three Jade to pick the Taskmaster card up, then plays Builder and builds."""
    s = action_phase_state(holder=ADAM, governor=False)
    set_player(s, ADAM, jade=10, blocks=1, laborers=2, convicts=0)
    do(s, role(A.OP_MOVE_TASKMASTER), A.MOVE_REGION + 1)
    assert s.decision == Decision.BUYBACK_OR_END_TURN and A.BUYBACK_TASKMASTER in legal(s)
    do(s, A.BUYBACK_TASKMASTER)
    assert s.jade[ADAM] == 7 and s.roles_hand[ADAM] == A.ALL_ROLES
    do(s, role(A.OP_BUILD), A.BUILD_COUNT, at(s, 1, 1, 2), A.LABORERS + 2)
    assert owner(s, 1, 1, 2) == ADAM  # built in the new region
    assert s.jade[ADAM] == 7
    assert s.roles_table[ADAM] == 1 << A.BUILDER  # one more card played than at the start
    assert s.current_player() == BILL


def test_buyback_second_example_chip_on_planner_then_builder():
    """Second buyback example: Bill plays Planner and buys blocks, discards a Buyback Chip to
    pick Planner up again, then plays Builder and builds."""
    s = action_phase_state(holder=BILL, governor=False)
    set_player(s, BILL, jade=10, chips=1, blocks=0, laborers=2, convicts=0)
    chips_in_supply = s.sup_chips
    do(s, role(A.OP_BUY_BLOCKS), A.BUY_COUNT + 1)  # two blocks for 1 Jade
    assert s.blocks[BILL] == 2 and s.jade[BILL] == 9
    assert legal(s) == [A.END_TURN, A.BUYBACK_CHIP]  # no Taskmaster buyback after Planner
    do(s, A.BUYBACK_CHIP)
    assert s.chips[BILL] == 0 and s.sup_chips == chips_in_supply + 1
    assert s.roles_hand[BILL] == A.ALL_ROLES
    do(s, role(A.OP_BUILD), A.BUILD_COUNT, at(s, 0, 1, 0), A.LABORERS + 2)
    assert owner(s, 0, 1, 0) == BILL
    assert s.roles_table[BILL] == 1 << A.BUILDER
    assert s.current_player() == CHARLES


def test_buyback_third_example_chip_on_builder_then_play_a_favor():
    """Third buyback example: Charles plays Builder and builds, discards a Buyback Chip to
    pick Builder up, plays Builder again and performs Play a Completed Favor Card."""
    s = action_phase_state(holder=CHARLES, governor=False)
    card = give_favor(s, CHARLES, "Short Rampart")  # XXX: 2 VP and 1 Jade
    put_block(s, CHARLES, 0, 1, 0)
    put_block(s, CHARLES, 0, 1, 1)
    set_player(s, CHARLES, jade=5, chips=1, blocks=1, laborers=2, convicts=0)
    assert A.ROLE + A.OP_PLAY_FAVOR not in legal(s)  # the pattern is not built yet
    do(s, role(A.OP_BUILD), A.BUILD_COUNT, at(s, 0, 1, 2), A.LABORERS + 2)
    do(s, A.BUYBACK_CHIP)
    do(s, role(A.OP_PLAY_FAVOR), A.PLAY_FAVOR + card, at(s, 0, 1, 1))
    assert s.favor_played[CHARLES] == 1 << card and not s.favor_hand[CHARLES] >> card & 1
    assert s.reinf == 1 << bit(s, 0, 1, 1)  # the chosen block of the pattern
    assert s.score[CHARLES] == 2 and s.jade[CHARLES] == 6
    assert s.roles_table[CHARLES] == 1 << A.BUILDER
    assert s.current_player() == ADAM


# ---------------------------------------------------------------- recruiter, builder, treasurer


def test_recruit_example_three_laborers_for_two_jade():
    """Recruit Laborers example: Adam takes three Laborers, pays two Jade and places one
    Convict from the stockpile in the prison of his Taskmaster's Region."""
    s = action_phase_state(holder=ADAM, governor=False)
    clear_prisons(s)
    set_player(s, ADAM, jade=5, laborers=0, region=1)
    laborers, convicts = s.sup_laborers, s.sup_convicts
    do(s, role(A.OP_RECRUIT), A.RECRUIT_COUNT + 2)
    assert s.laborers[ADAM] == 3 and s.jade[ADAM] == 3
    assert s.sup_laborers == laborers - 3 and s.sup_convicts == convicts - 1
    assert s.prison_convicts == [0, 1] and s.prison_jade == [0, 0]


def test_build_example_two_blocks_seven_laborers_three_convicts():
    """Build Wall example: Adam places a Convict in the prison, builds two blocks (paying one
    Jade), one on level 2 and one on level 3, with ten Workers (seven Laborers, three
    Convicts). Four Laborers and all three Convicts die; three Laborers return.
    (Here the level-3 block stands on the level-2 one, which the rules allow.)"""
    s = action_phase_state(holder=ADAM, governor=False)
    clear_prisons(s)
    put_block(s, BILL, 0, 1, 2)
    set_player(s, ADAM, jade=5, blocks=2, laborers=7, convicts=3)
    laborers, convicts = s.sup_laborers, s.sup_convicts
    do(s, role(A.OP_BUILD), A.BUILD_COUNT + 1, at(s, 0, 2, 2), at(s, 0, 3, 2))
    assert s.decision == Decision.ASSIGN_LABORERS
    assert legal(s) == [A.LABORERS + 7]  # 10 Workers: all 7 Laborers and all 3 Convicts
    do(s, A.LABORERS + 7)
    assert owner(s, 0, 2, 2) == ADAM and owner(s, 0, 3, 2) == ADAM
    assert s.jade[ADAM] == 4 and s.blocks[ADAM] == 0
    assert s.laborers[ADAM] == 3 and s.convicts[ADAM] == 0
    assert s.sup_laborers == laborers + 4
    assert s.sup_convicts == convicts + 3 - 1  # three died, one went to the prison
    assert s.prison_convicts[0] == 1


def test_replace_example_eight_workers_for_level_two_block_back_to_owner():
    """Replace a Built Block example: Bill removes one of Adam's blocks from level 2 in his
    Taskmaster's Region, returns it to Adam, spends eight Workers (keeping half the Laborers
    used) and puts his own block in the same spot. (Six Laborers and two Convicts here.)"""
    s = action_phase_state(holder=BILL, governor=False)
    clear_prisons(s)
    put_block(s, CHARLES, 0, 1, 0)
    put_block(s, ADAM, 0, 2, 0)
    set_player(s, BILL, blocks=1, laborers=6, convicts=2)
    adam_blocks = s.blocks[ADAM]
    laborers, convicts = s.sup_laborers, s.sup_convicts
    do(s, role(A.OP_REPLACE), at(s, 0, 2, 0))
    assert legal(s) == [A.LABORERS + 6]  # 8 Workers needed, only 2 Convicts
    do(s, A.LABORERS + 6)
    assert owner(s, 0, 2, 0) == BILL
    assert s.blocks[ADAM] == adam_blocks + 1 and s.blocks[BILL] == 0
    assert s.laborers[BILL] == 3 and s.convicts[BILL] == 0
    assert s.sup_laborers == laborers + 3 and s.sup_convicts == convicts + 2
    assert s.prison_convicts == [0, 0]  # Builder C sends no Convict to prison


def test_collect_jade_example_three_and_six_treasures():
    """Collect Jade example: Charles has three Treasures, so he collects four Jade; with six
    Treasures he would collect five."""
    for treasure, expected in ((3, 4), (6, 5)):
        s = action_phase_state(holder=CHARLES, governor=False)
        set_player(s, CHARLES, jade=0, treasure=treasure)
        do(s, role(A.OP_COLLECT_JADE))
        assert s.jade[CHARLES] == expected


# ---------------------------------------------------------------- repeat a previous role


def _builder_first_turn(holder: int):
    """``holder`` plays Builder (one level-1 block) on their first turn; the other two play
    quiet turns, so the holder's second turn begins with Builder on the table."""
    s = action_phase_state(holder=holder, governor=False)
    set_player(s, holder, jade=10, blocks=5, laborers=12, convicts=0)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT, at(s, 0, 1, 0), A.LABORERS + 2)
    play_turns(s, 2)
    assert s.current_player() == holder and s.roles_table[holder] == 1 << A.BUILDER
    assert A.ROLE + A.OP_BUILD not in legal(s)
    return s


def test_repeat_example_builder_repeated_for_two_jade():
    """Repeat a Previous Role example: Charles has played Builder earlier; he plays the
    Taskmaster card and uses Repeat a Previous Role, paying 2 Jade to Build Wall."""
    s = _builder_first_turn(CHARLES)
    do(s, repeat(A.OP_BUILD), A.BUILD_COUNT, at(s, 0, 1, 1), A.LABORERS + 2)
    assert s.jade[CHARLES] == 8
    assert owner(s, 0, 1, 1) == CHARLES
    assert s.roles_table[CHARLES] == (1 << A.BUILDER) | (1 << A.TASKMASTER)


def test_repeat_second_example_move_buyback_then_repeat():
    """Second Repeat example: Adam has played Builder. He plays Taskmaster and moves, pays
    3 Jade to pick the Taskmaster card up, plays it again and pays 2 Jade to Build Wall."""
    s = _builder_first_turn(ADAM)
    do(s, role(A.OP_MOVE_TASKMASTER), A.MOVE_REGION + 1, A.BUYBACK_TASKMASTER)
    assert s.jade[ADAM] == 7
    do(s, repeat(A.OP_BUILD), A.BUILD_COUNT, at(s, 1, 1, 0), A.LABORERS + 2)
    assert s.jade[ADAM] == 5
    assert owner(s, 1, 1, 0) == ADAM
    assert s.current_player() == BILL  # two actions: the turn is over


def test_repeat_third_example_repeat_buyback_repeat():
    """Third Repeat example: Bill has played Builder. He repeats Build Wall for 2 Jade, pays
    3 Jade to pick up the Taskmaster card, and repeats Build Wall again for 2 Jade."""
    s = _builder_first_turn(BILL)
    do(s, repeat(A.OP_BUILD), A.BUILD_COUNT, at(s, 0, 1, 1), A.LABORERS + 2)
    assert s.jade[BILL] == 8
    assert legal(s) == [A.END_TURN, A.BUYBACK_TASKMASTER]
    do(s, A.BUYBACK_TASKMASTER)
    assert s.jade[BILL] == 5
    do(s, repeat(A.OP_BUILD), A.BUILD_COUNT, at(s, 0, 1, 2), A.LABORERS + 2)
    assert s.jade[BILL] == 3
    assert s.own[BILL].bit_count() == 3
    assert s.current_player() == CHARLES


# ---------------------------------------------------------------- Governor blocks


def test_governor_example_level_three_then_own_tower_block_on_top():
    """Governor Blocks example: Charles places the Governor block on level 3, then plays
    Builder and builds his own block on level 4 directly on top of it (5 points)."""
    s = action_phase_state(holder=CHARLES)
    put_block(s, ADAM, 0, 1, 4)
    put_block(s, BILL, 0, 2, 4)
    set_player(s, CHARLES, jade=3, blocks=1, laborers=8, convicts=0)
    held = (s.jade[CHARLES], s.laborers[CHARLES], s.convicts[CHARLES], s.blocks[CHARLES])
    do(s, gov_at(s, 0, 3, 4))
    assert owner(s, 0, 3, 4) == GOV and not s.gov_in_hand
    assert (s.jade[CHARLES], s.laborers[CHARLES], s.convicts[CHARLES], s.blocks[CHARLES]) == held
    assert s.score[CHARLES] == 0 and s.decision == Decision.CHOOSE_ROLE_ACTION  # not an action
    do(s, role(A.OP_BUILD), A.BUILD_COUNT, at(s, 0, 4, 4), A.LABORERS + 8)
    assert owner(s, 0, 4, 4) == CHARLES
    assert s.score[CHARLES] == 5


def test_governor_example_build_one_governor_on_it_second_on_the_governor():
    """Governor Blocks: building two blocks, Charles builds one, places the Governor block on
    top of it, then builds the second block on top of the Governor block."""
    s = action_phase_state(holder=CHARLES)
    set_player(s, CHARLES, jade=3, blocks=2, laborers=8, convicts=0)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT + 1, at(s, 0, 1, 1))
    do(s, gov_at(s, 0, 2, 1))
    assert s.decision == Decision.BUILD_CELL
    do(s, at(s, 0, 3, 1))
    assert legal(s) == [A.LABORERS + 8]  # 2 + 6 Workers: the Governor block costs none
    do(s, A.LABORERS + 8)
    assert [owner(s, 0, lvl, 1) for lvl in (1, 2, 3)] == [CHARLES, GOV, CHARLES]
    assert s.jade[CHARLES] == 2


# ---------------------------------------------------------------- row and level scoring


def test_row_example_two_two_one_both_score_three():
    """Completing a Row example: Adam plays the fifth block into the first row and receives
    a Buyback Chip. Adam and Bill have two blocks each, Charles one: Adam and Bill score 3."""
    s = action_phase_state(holder=ADAM, governor=False)
    fill_row(s, 0, 1, [ADAM, BILL, BILL, CHARLES, None])
    set_player(s, ADAM, blocks=1, laborers=2, convicts=0)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT, at(s, 0, 1, 4), A.LABORERS + 2)
    assert s.chips == [1, 0, 0]
    assert s.score == [3, 3, 0]
    assert points_by(s, ROWS, region=0, level=0) == {ADAM: 3, BILL: 3}


def test_row_second_example_governor_heavy_row_one_one_both_score_six():
    """Second row example: Bill plays the fifth block into the second row and receives a
    Buyback Chip. He and Charles have one block each; the other three are Governor blocks,
    which do not count. Bill and Charles score six points each."""
    s = action_phase_state(holder=BILL, governor=False)
    fill_row(s, 0, 1, [ADAM, ADAM, CHARLES, CHARLES, ADAM])  # row 1 built (scored earlier)
    fill_row(s, 0, 2, [GOV, GOV, GOV, CHARLES, None])
    set_player(s, BILL, blocks=1, laborers=4, convicts=0)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT, at(s, 0, 2, 4), A.LABORERS + 4)
    assert s.chips == [0, 1, 0]
    assert s.score == [0, 6, 6]
    assert points_by(s, ROWS, level=1) == {BILL: 6, CHARLES: 6}


def test_level_example_completing_level_one():
    """Completing a Level example: Charles plays the last block of level 1. He receives a
    Buyback Chip for the row; the row (Charles 3, Adam 1, Bill 1) gives Charles 3 points.
    In the whole level Adam has 4 blocks, Charles 3 and Bill 2, so Adam receives a Treasure
    and 1 point."""
    s = action_phase_state(holder=CHARLES, governor=False)
    fill_row(s, 1, 1, [ADAM, ADAM, BILL, GOV, ADAM])
    fill_row(s, 0, 1, [CHARLES, ADAM, CHARLES, BILL, None])
    set_player(s, CHARLES, blocks=1, laborers=2, convicts=0)
    do(s, role(A.OP_BUILD), A.BUILD_COUNT, at(s, 0, 1, 4), A.LABORERS + 2)
    assert s.chips == [0, 0, 1]
    assert s.treasure == [1, 0, 0]
    assert s.score == [1, 0, 3]
    assert points_by(s, ROWS, region=0, level=0) == {CHARLES: 3}
    assert points_by(s, LEVELS, level=0) == {ADAM: 1}


# ---------------------------------------------------------------- end-game scoring


def test_least_built_region_examples():
    """End-game scoring examples: Adam has 7 blocks in one Region and 4 in the other and
    scores 12; Bill has 10 blocks in one Region and none in the other and scores 0."""
    geo = geometry(2)
    masks = geo.region_mask
    adam = sum(1 << b for b in geo.cell_bits[:7]) | sum(1 << b for b in geo.cell_bits[17:21])
    bill = sum(1 << b for b in geo.cell_bits[7:17])
    assert scoring.least_region_points(adam, masks) == 12
    assert scoring.least_region_points(bill, masks) == 0

    s = action_phase_state(holder=ADAM, governor=False)
    fill_row(s, 0, 1, [ADAM] * 5)
    fill_row(s, 0, 2, [ADAM, ADAM, BILL, BILL, BILL])
    fill_row(s, 0, 3, [BILL] * 5)
    put_block(s, BILL, 0, 4, 0)
    put_block(s, BILL, 0, 4, 4)
    fill_row(s, 1, 1, [ADAM, ADAM, ADAM, ADAM, None])
    end_game(s)
    assert s.is_terminal()
    assert points_by(s, ScoreReason.LEAST_BUILT_REGION) == {ADAM: 12}


def test_workers_end_game_example():
    """End-game Workers example: Charles has 6 Laborers and 3 Convicts, Adam 2 and 2, Bill
    1 Laborer and 8 Convicts. Charles and Bill tie with nine Workers and both receive 3."""
    workers = [2 + 2, 1 + 8, 6 + 3]
    events_ = scoring.end_bonuses([0] * 3, [0] * 3, geometry(2).region_mask, [0] * 3, [0] * 3, workers)
    assert [(p, pts) for p, pts, why in events_ if why == "most workers"] == [(BILL, 3), (CHARLES, 3)]

    s = action_phase_state(holder=ADAM, governor=False)
    clear_prisons(s)
    set_player(s, ADAM, laborers=2, convicts=2)
    set_player(s, BILL, laborers=1, convicts=8)
    set_player(s, CHARLES, laborers=6, convicts=3)
    end_game(s)
    assert s.is_terminal()
    assert points_by(s, ScoreReason.MOST_WORKERS) == {BILL: 3, CHARLES: 3}
    assert (s.laborers, s.convicts) == ([2, 1, 6], [2, 8, 3])
