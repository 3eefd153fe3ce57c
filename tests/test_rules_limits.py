"""Component limits (short supplies, unlimited components) and the variants.

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
    at,
    bid_all,
    clear_prisons,
    do,
    empty_hand,
    end_game,
    exhaust_governor_stock,
    fill_row,
    finish_round,
    legal,
    park,
    play_turns,
    points_by,
    put_block,
    quiet_turn,
    role,
    role_ops,
    round_two_bids,
    set_all,
    set_player,
)

from island_fortress_env.engine import ConfigError, Game
from island_fortress_env.engine import actions as A
from island_fortress_env.engine import state as S
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.events import ScoreReason

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
