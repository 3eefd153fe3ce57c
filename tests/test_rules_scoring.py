"""The Governor block, the scoring during the game and the end of the game (its scoring and the winner).

One or more tests per rule (the rulebook and the rulings of docs/RULES.md). Scenario states come
from ``scenario.py``: a real game played to the round-1 action phase, then edited through helpers
that keep every component accounted for (``do`` checks the component totals after every action).
Seats: Adam = 0, Bill = 1, Charles = 2.
"""

from __future__ import annotations

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
    cells_of,
    clear_prisons,
    do,
    end_game,
    exhaust_governor_stock,
    fill_row,
    fill_wall_except,
    find_action,
    finish_round,
    gov_at,
    governor_cells,
    legal,
    owner,
    play_turns,
    points_by,
    put_block,
    quiet_turn,
    role,
    score_events,
    set_all,
    set_player,
    set_prison,
)

from island_fortress_env.engine import actions as A
from island_fortress_env.engine import scoring
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.events import ScoreReason

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
