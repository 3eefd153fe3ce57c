"""engine/refusals.py and the petition's order: the rules say why, the views only word it.

* Over whole random games on both backends, every action id the engine calls illegal has a
  reason and every legal one has none (the C++ core's legality against the Python checks).
* Each role action's reason names the precondition that fails, with the numbers it compares.
* ``petition_order`` is the engine's tie-break (docs/RULES.md E4): every petition of a game was
  won as it says; ``petition_prize`` is what its winner took.
* ``double_build_refusal`` refuses two blocks exactly when "Build 2 blocks" is not offered.
"""

from __future__ import annotations

import random

import pytest

from island_fortress_env import core
from island_fortress_env.engine import actions as A
from island_fortress_env.engine import events as ev
from island_fortress_env.engine import tables
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.phases.petition import TieBreak, petition_order, petition_prize
from island_fortress_env.engine.refusals import Reason, Refusal, double_build_refusal, refusal, role_refusal
from tests import scenario as sc

VARIANTS = (
    (2, {}),
    (3, {"no_replace": True, "favor_trade_in": True}),
    (4, {"extra_region": True, "first_round_incentive": "treasure"}),
    (3, {"unlimited_components": True}),
)


def random_states(players: int, seed: int, backend: str, **rules):
    """Every state of a game of random legal moves, oldest first (the final one too)."""
    state = core.Game(num_players=players, backend=backend, **rules).new_initial_state(seed)
    draw = random.Random(seed)
    yield state
    while not state.is_terminal():
        legal = state.legal_actions()
        state.apply_action(legal[draw.randrange(len(legal))])
        yield state


@pytest.mark.parametrize(("players", "rules"), VARIANTS)
def test_an_action_is_refused_exactly_when_it_is_illegal(backend, players, rules):
    reasons: set[Reason] = set()
    for state in random_states(players, players + 7, backend, **rules):
        legal = set(state.legal_actions())
        for action in range(A.NUM_ACTIONS):
            why = refusal(state, action)
            assert (why is None) == (action in legal), (action, why, state.decision_name())
            if why is not None:
                reasons.add(why.reason)
        assert refusal(state, -1) == Refusal(Reason.OUTSIDE)
        assert refusal(state, A.NUM_ACTIONS) == Refusal(Reason.OUTSIDE)
    assert refusal(state, 0) == Refusal(Reason.GAME_OVER)
    assert {Reason.NOT_ASKED, Reason.NOT_OFFERED, Reason.CARD_NOT_IN_HAND} <= reasons


def test_every_refused_role_action_carries_the_numbers_it_compares():
    seen: set[Reason] = set()
    for seed in range(6):
        for state in random_states(3, seed, "python"):
            if state.is_terminal() or state.decision != Decision.CHOOSE_ROLE_ACTION:
                continue
            p = state.current_player()
            workers = state.laborers[p] + state.convicts[p]
            for op in range(A.NUM_OPS):
                why = role_refusal(state, p, op)
                if why is None:
                    continue
                seen.add(why.reason)
                if why.reason is Reason.TOO_FEW_LABORERS:
                    assert (why.need, why.have) == (tables.LABORERS_FOR_CONVICTS, state.laborers[p])
                    assert why.have < why.need
                elif why.reason is Reason.TOO_FEW_CONVICTS:
                    assert (why.need, why.have) == (tables.TREASURE_CONVICTS, state.convicts[p])
                elif why.reason in (Reason.TOO_FEW_WORKERS, Reason.TOO_FEW_WORKERS_TO_REPLACE):
                    assert why.have == workers < why.need and why.region == state.region[p]
                    assert why.need in {
                        m * w for w in tables.WORKERS_PER_LEVEL for m in (1, tables.REPLACE_MULTIPLIER)
                    }
                elif why.reason in (
                    Reason.NO_REINFORCEMENT,
                    Reason.NO_BUILDABLE_CELL,
                    Reason.NO_REPLACE_TARGET,
                ):
                    assert why.region == state.region[p]
                elif why.reason is Reason.NO_WALL_BLOCK:
                    assert state.blocks[p] == 0
            for op in range(A.NUM_REPEATABLE):
                why = refusal(state, A.REPEAT + op)
                if why is not None and why.reason is Reason.REPEAT_COST:
                    seen.add(why.reason)
                    cost = tables.REPEAT_ROLE_COST[A.ROLE_KEYS[A.OP_CARD[op]]]
                    assert (why.need, why.have) == (cost, state.jade[p]) and why.have < why.need
    assert {Reason.TOO_FEW_LABORERS, Reason.NO_REINFORCEMENT, Reason.NO_COMPLETE_PATTERN} <= seen


def test_the_rare_refusals_of_a_scenario():
    state = sc.action_phase_state(3, governor=False)
    p = state.current_player()
    sc.set_player(state, p, blocks=0, laborers=1, convicts=0, jade=0)
    sc.park(state, "laborers", 0, seat=(p + 1) % 3)
    sc.empty_hand(state, p)
    sc.shrink_deck(state, 2, seat=(p + 2) % 3)
    state.stock_blocks[p] = 0
    assert role_refusal(state, p, A.OP_RECRUIT) == Refusal(Reason.NO_LABORER_IN_SUPPLY)
    assert role_refusal(state, p, A.OP_COLLECT_CONVICTS) == Refusal(Reason.TOO_FEW_LABORERS, 2, 1)
    assert role_refusal(state, p, A.OP_BUY_BLOCKS) == Refusal(Reason.STOCKPILE_EMPTY)
    assert role_refusal(state, p, A.OP_DRAW_FAVORS) == Refusal(Reason.DECK_TOO_SHORT, 3, 2)
    assert role_refusal(state, p, A.OP_BUILD) == Refusal(Reason.NO_WALL_BLOCK)
    assert role_refusal(state, p, A.OP_PLAY_FAVOR) == Refusal(Reason.NO_FAVOR_CARD)
    assert role_refusal(state, p, A.OP_COLLECT_TREASURE) == Refusal(Reason.TOO_FEW_CONVICTS, 2, 0)
    for op in (A.OP_COLLECT_PRISON, A.OP_COLLECT_JADE, A.OP_MOVE_TASKMASTER):
        assert role_refusal(state, p, op) is None
    assert refusal(state, A.REPEAT + A.OP_RECRUIT) == Refusal(Reason.CARD_NOT_ON_TABLE)
    friendly = sc.action_phase_state(3, governor=False, no_replace=True)
    assert role_refusal(friendly, friendly.current_player(), A.OP_REPLACE) == Refusal(Reason.VARIANT_OFF)


def test_a_build_is_refused_for_the_cheapest_cell_of_the_taskmasters_region():
    state = sc.action_phase_state(2, governor=False)
    p = state.current_player()
    sc.set_player(state, p, blocks=2, laborers=0, convicts=0)
    region = state.region[p]
    why = role_refusal(state, p, A.OP_BUILD)
    assert why == Refusal(Reason.TOO_FEW_WORKERS, tables.WORKERS_PER_LEVEL[0], 0, region)
    sc.set_player(state, p, laborers=tables.WORKERS_PER_LEVEL[0])
    assert role_refusal(state, p, A.OP_BUILD) is None
    assert A.ROLE + A.OP_BUILD in sc.legal(state)


@pytest.mark.parametrize(
    ("bids", "totals", "holder", "expected"),
    [
        ((0, 4, 1), (0, 4, 1), 0, ((1,), (1,), TieBreak.NONE, 1)),
        ((3, 1, 0), (3, 3, 0), 1, ((0, 1), (0,), TieBreak.MORE_JADE, 0)),
        ((2, 2, 0), (2, 2, 0), -1, ((0, 1), (0, 1), TieBreak.RANDOM, -1)),
        ((1, 1, 1), (1, 1, 1), 0, ((0, 1, 2), (0, 1, 2), TieBreak.CLOCKWISE, 1)),
        ((1, 0, 1), (1, 0, 1), 2, ((0, 2), (0, 2), TieBreak.CLOCKWISE, 0)),  # never stays with C
        ((1, 0, 1, 0), (1, 0, 1, 0), 0, ((0, 2), (0, 2), TieBreak.CLOCKWISE, 2)),
    ],
)
def test_the_petition_order_breaks_each_tie(bids, totals, holder, expected):
    order = petition_order(bids, totals, holder)
    assert (order.tied, order.contenders, order.tie_break, order.winner) == expected
    assert order.best == max(totals)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_petition_of_a_game_is_won_as_the_order_says(backend, players):
    ties = set()
    for seed in range(4):
        *_, final = random_states(players, seed, backend)
        holder = -1
        for event in final.log:
            if isinstance(event, ev.Petition):
                order = petition_order(event.bids, event.totals, holder)
                ties.add(order.tie_break)
                if order.tie_break is TieBreak.RANDOM:
                    assert event.winner in order.contenders
                else:
                    assert event.winner == order.winner
                holder = event.winner
    assert TieBreak.NONE in ties and len(ties) > 1


@pytest.mark.parametrize(("players", "rules"), VARIANTS)
def test_two_blocks_are_refused_exactly_when_build_2_is_not_offered(backend, players, rules):
    reasons = set()
    for seed in range(3):
        for state in random_states(players, seed, backend, **rules):
            if state.is_terminal() or state.decision != Decision.BUILD_COUNT:
                continue
            why = double_build_refusal(state, state.current_player())
            assert (why is None) == (A.BUILD_COUNT + 1 in state.legal_actions()), why
            if why is not None:
                reasons.add(why.reason)
    assert reasons


@pytest.mark.parametrize(("players", "rules"), VARIANTS)
def test_the_petitions_winner_takes_its_prize(backend, players, rules):
    incentives = 0
    for seed in range(3):
        prize = None
        for state in random_states(players, seed, backend, **rules):
            bidding = not state.is_terminal() and state.decision == Decision.PETITION_BID
            if bidding:
                prize, seen = petition_prize(state), len(state.log)
            elif prize is not None:  # the petition was just won
                took = state.log[seen:]
                assert state.gov_in_hand == prize.governor_block
                assert any(isinstance(e, ev.Incentive) for e in took) == bool(prize.incentive)
                incentives += bool(prize.incentive)
                prize = None
    assert incentives or not rules.get("first_round_incentive")
