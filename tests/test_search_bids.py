"""The exact route for two players' sealed bids (``core.search_bids``): the matrix solve on games
whose equilibria are known, and on the game's own petitions a distribution on the legal bids that
never depends on what the searching seat cannot see, the other seat's sealed bid included."""

from __future__ import annotations

import numpy as np
import pytest
from test_batched_search import TOY_EQUILIBRIUM, _positions, _toy_petition, _uniform

from island_fortress_env.core import Game
from island_fortress_env.core.search import BatchedSearch
from island_fortress_env.core.search_bids import ExactBids, is_exact_root, solve_zero_sum
from island_fortress_env.engine.decisions import Decision


def _bid_roots(count: int, seed: int) -> list:
    """Two-player positions at a seat's sealed bid, first and second bidders both."""
    chooser = np.random.default_rng(seed)
    out = []
    game_seed = 0
    while len(out) < count:
        state = Game(num_players=2, backend="core").new_initial_state(seed * 1000 + game_seed)
        game_seed += 1
        for _ in range(int(chooser.integers(0, 250))):
            if state.is_terminal():
                break
            state.apply_action(int(chooser.choice(state.legal_actions())))
        while not state.is_terminal() and not is_exact_root(state):
            state.apply_action(int(chooser.choice(state.legal_actions())))
        if not state.is_terminal() and len(out) % 2:  # every other one: the second bidder's
            state.apply_action(int(chooser.choice(state.legal_actions())))
        if not state.is_terminal() and is_exact_root(state):
            out.append(state)
    return out


def test_the_solve_finds_the_toy_petitions_mixed_equilibrium_and_rock_paper_scissors():
    row, col = solve_zero_sum(np.asarray(_toy_petition(), dtype=float))
    assert 0.5 * np.abs(row - TOY_EQUILIBRIUM[0]).sum() < 0.01
    assert 0.5 * np.abs(col - TOY_EQUILIBRIUM[1]).sum() < 0.01
    rps = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], dtype=float)
    for strategy in solve_zero_sum(rps):
        np.testing.assert_allclose(strategy, np.full(3, 1 / 3), atol=0.01)


def test_only_two_player_bids_of_one_decision_are_exact_roots():
    assert all(is_exact_root(s) for s in _bid_roots(4, 1))
    three = [s for s in _positions(3, 2) if s.decision is Decision.PETITION_BID]
    assert three and not any(is_exact_root(s) for s in three)
    assert not any(is_exact_root(s) for s in _positions(2, 3) if s.decision is not Decision.PETITION_BID)


def test_the_bid_is_legal_its_policy_a_distribution_and_the_same_seed_the_same_bid():
    roots = _bid_roots(6, 4)
    assert {s.order_pos for s in roots} == {0, 1}, "first and second bidders both"
    actions, policy = ExactBids(_uniform, determinisations=2).run(roots, range(6))
    again, same = ExactBids(_uniform, determinisations=2).run(roots, range(6))
    assert np.array_equal(actions, again) and np.array_equal(policy, same)
    for state, action, row in zip(roots, actions, policy, strict=True):
        assert action in state.legal_actions()
        assert row.sum() == pytest.approx(1.0, abs=1e-6) and set(np.flatnonzero(row)) <= set(
            state.legal_actions()
        )


def test_the_second_bidder_never_reads_the_first_bidders_sealed_bid_nor_anything_hidden():
    """Every sealed bid the first bidder could have made, and a redeal of what the second cannot
    see: the second bidder's exact bid and policy are the same in all of them."""
    first = next(s for s in _bid_roots(20, 5) if s.order_pos == 0 and len(s.legal_actions()) >= 3)
    results = []
    for k, bid in enumerate(first.legal_actions()[:4]):
        second = first.clone()
        second.apply_action(bid)
        assert is_exact_root(second) and second.order_pos == 1
        twin = second.redeal_unseen(second.current_player(), 50 + k)
        results.append(ExactBids(_uniform, determinisations=2).run([second, twin], [9, 9]))
    for actions, policy in results:
        assert actions[0] == actions[1] == results[0][0][0]
        np.testing.assert_array_equal(policy[0], results[0][1][0])
        np.testing.assert_array_equal(policy[1], results[0][1][0])


def test_the_search_with_exact_bids_solves_the_bids_and_searches_the_rest():
    bids, others = _bid_roots(3, 6), [s for s in _positions(2, 7) if not is_exact_root(s)][:3]
    search = BatchedSearch(_uniform, 4, exact_bids=True)
    result = search.run([*bids, *others], np.arange(6))
    exact_actions, exact_policy = ExactBids(_uniform).run(bids, range(3))
    assert np.array_equal(result.actions[:3], exact_actions) and np.array_equal(
        result.policy[:3], exact_policy
    )
    tree = BatchedSearch(_uniform, 4).run(others, np.arange(3, 6))
    assert np.array_equal(result.actions[3:], tree.actions) and np.array_equal(result.policy[3:], tree.policy)
