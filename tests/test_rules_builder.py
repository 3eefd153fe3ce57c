"""The Builder: Build Wall (support, towers, Workers), Play a Completed Favor Card and Replace a Built Block.

One or more tests per rule (the rulebook and the rulings of docs/RULES.md). Scenario states come
from ``scenario.py``: a real game played to the round-1 action phase, then edited through helpers
that keep every component accounted for (``do`` checks the component totals after every action).
Seats: Adam = 0, Bill = 1, Charles = 2.
"""

from __future__ import annotations

import json

import pytest
from scenario import (
    ADAM,
    BILL,
    CHARLES,
    GOV,
    action_phase_state,
    at,
    bid_all,
    bit,
    cells_of,
    clear_prisons,
    do,
    empty_hand,
    events,
    fill_row,
    finish_round,
    give_favor,
    legal,
    owner,
    put_block,
    reinforce,
    role,
    role_ops,
    score_events,
    set_all,
    set_player,
)

from island_fortress_env.engine import actions as A
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.events import EventKind
from island_fortress_env.engine.wall import bit_of, geometry

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
