"""The core's batched search (``core/src/search.h``, ``core.search.BatchedSearch``): legal moves at
every table size, the same moves from the same seeds whatever the batch, choices that never depend
on what the searching seat cannot see, clear errors, the seat policy ``search:`` plays through, and
the sealed-bid rule on a toy bid game whose equilibrium is mixed and known.

Budgets are a few simulations: these tests check mechanics, never strength.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_hidden_information import interesting_states

from island_fortress_env.cli import app as cli
from island_fortress_env.core import Game, _core
from island_fortress_env.core.search import BatchedSearch
from island_fortress_env.engine import actions as A
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.players.search import Evaluator, SearchAgent, SearchSeats
from island_fortress_env.players.specs import SHIPPED_POLICY


def _uniform(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Even priors and a value read off the observation (so that leaves differ)."""
    return np.zeros(masks.shape, dtype=np.float32), np.tanh(observations.sum(axis=1) / 100).astype(np.float32)


def _positions(n: int, seed: int, count: int = 12) -> list:
    """Core states of random games where the seat to move has a choice."""
    chooser = np.random.default_rng(seed)
    out = []
    for game_seed in range(count):
        state = Game(num_players=n, backend="core").new_initial_state(seed * 1000 + game_seed)
        for _ in range(int(chooser.integers(0, 120))):
            if state.is_terminal():
                break
            state.apply_action(int(chooser.choice(state.legal_actions())))
        if not state.is_terminal() and len(state.legal_actions()) > 1:
            out.append(state)
    return out


@pytest.mark.parametrize("simultaneous_bids", [False, True])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_every_move_is_legal_and_the_policy_sums_to_one_on_the_legal_actions(n, simultaneous_bids):
    states = _positions(n, n)
    before = [s.global_state().copy() for s in states]
    search = BatchedSearch(_uniform, 8, threads=2, simultaneous_bids=simultaneous_bids)
    result = search.run(states, np.arange(len(states)))
    for state, action, policy, was in zip(states, result.actions, result.policy, before, strict=True):
        legal = state.legal_actions()
        assert action in legal
        assert policy.sum() == pytest.approx(1.0, abs=1e-5)
        assert set(np.flatnonzero(policy)) <= set(legal)
        assert np.array_equal(state.global_state(), was), "the search changed a root"
    assert search.steps == 9 and search.rows > 0  # the roots' evaluation, then one step a simulation


@pytest.mark.parametrize("n", [2, 3, 4])
def test_a_leaf_is_valued_by_one_row_per_seat(n):
    """A network's values are each seat's own expected return (dense rewards included: they need
    not sum to zero), so every seat of a leaf has its row; the others' masks are all ones."""
    calls = []

    def recording(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        calls.append(masks.copy())
        return _uniform(observations, masks)

    states = _positions(n, 7)
    search = BatchedSearch(recording, 6, threads=2)
    search.run(states, np.arange(len(states)))
    assert len(calls) == search.steps and sum(len(m) for m in calls) == search.rows
    for masks in calls:
        full = masks.all(axis=1)
        assert len(masks) <= len(states) * n
        assert len(masks) % n == 0 and full.sum() == len(masks) // n * (n - 1)


def test_a_game_searched_in_a_batch_is_searched_as_alone():
    states = _positions(3, 5)
    seeds = np.arange(100, 100 + len(states))
    batch = BatchedSearch(_uniform, 6, threads=2).run(states, seeds)
    for k, state in enumerate(states):
        alone = BatchedSearch(_uniform, 6, threads=1).run([state], seeds[k : k + 1])
        assert alone.actions[0] == batch.actions[k]
        assert np.array_equal(alone.policy[0], batch.policy[k])
    again = BatchedSearch(_uniform, 6, threads=2).run(states, seeds)
    assert np.array_equal(again.actions, batch.actions) and np.array_equal(again.policy, batch.policy)


@pytest.mark.parametrize("simultaneous_bids", [False, True])
@pytest.mark.parametrize(("n", "seed"), [(2, 11), (3, 12), (4, 11)])
def test_the_search_chooses_alike_when_only_hidden_information_differs(n, seed, simultaneous_bids):
    states = [s for s in interesting_states(n, seed, backend="core") if len(s.legal_actions()) > 1]
    assert Decision.PETITION_BID in {s.decision for s in states}
    twins = [s.redeal_unseen(s.current_player(), 1000 + k) for k, s in enumerate(states)]
    for state, twin in zip(states, twins, strict=True):
        seat = state.current_player()
        assert np.array_equal(state.encode(seat), twin.encode(seat))
    evaluate = Evaluator(SHIPPED_POLICY, threads=1)
    seeds = np.full(len(states), 7)
    mine = BatchedSearch(evaluate, 6, simultaneous_bids=simultaneous_bids).run(states, seeds)
    theirs = BatchedSearch(evaluate, 6, simultaneous_bids=simultaneous_bids).run(twins, seeds)
    assert np.array_equal(mine.actions, theirs.actions)
    assert np.array_equal(mine.policy, theirs.policy), "the search saw what its seat cannot see"


def test_bad_input_is_one_clear_error():
    state = Game(num_players=2, backend="core").new_initial_state(1)
    search = BatchedSearch(_uniform, 2)
    with pytest.raises(ValueError, match="one seed per state"):
        search.run([state], [1, 2])
    with pytest.raises(TypeError, match="core states"):
        search.run([object()], [1])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="at least 1 simulation"):
        BatchedSearch(_uniform, 0)
    with pytest.raises(ValueError, match="exploration"):
        _core.Search(1, 1.5, 0.0, 0.05, False)
    finished = Game(num_players=2, backend="core").new_initial_state(2)
    while not finished.is_terminal():
        finished.apply_action(finished.legal_actions()[0])
    with pytest.raises(ValueError, match="finished game"):
        search.run([finished], [1])


def test_one_legal_action_is_played_without_a_network_call():
    state = Game(num_players=3, backend="core").new_initial_state(5)
    chooser = np.random.default_rng(1)
    while len(state.legal_actions()) != 1:
        state.apply_action(int(chooser.choice(state.legal_actions())))

    def no_network(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise AssertionError("valued a decision with one legal action")

    result = BatchedSearch(no_network, 4).run([state], [0])
    assert result.actions[0] == state.legal_actions()[0] and result.policy[0].max() == 1.0


def test_the_one_game_player_is_a_batch_of_one_of_the_same_search():
    states = _positions(2, 9, count=4)
    agent = SearchAgent(SHIPPED_POLICY, 4, seed=3)
    alone = [agent.act(s.encode(s.current_player()), s.action_mask(), s) for s in states]
    children = np.random.SeedSequence(3).spawn(len(states))  # one per decision, as the player spawns them
    seeds = np.array([child.generate_state(1, dtype=np.uint64)[0] for child in children])
    batch = BatchedSearch(Evaluator(SHIPPED_POLICY, threads=1), 4).run(states, seeds)
    assert alone == batch.actions.tolist()


def test_the_seat_policy_values_on_one_torch_thread_whatever_torchs_own_count():
    import torch

    seats = SearchSeats(SHIPPED_POLICY, 2)
    network, seen = seats.evaluator.net, []

    def counting(obs, mask):
        seen.append(torch.get_num_threads())
        return network(obs, mask)

    seats.evaluator.net = counting
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        seats.search.run(_positions(2, 4, count=2), [0, 1])
        assert seen and set(seen) == {1}
        assert torch.get_num_threads() == 2, "the process's own count is left as it was"
    finally:
        torch.set_num_threads(before)


def test_evaluate_seats_the_search_in_the_core_batch(capsys):
    from island_fortress_env.players.kinds import make_agent
    from island_fortress_env.players.seat_policies import seat_policy

    assert isinstance(seat_policy("search:2", make_agent), SearchSeats)
    runs = []
    for _ in range(2):
        cli.main(["evaluate", "search:2", "random", "--games", "4", "--seed", "1", "--json", "--no-progress"])
        runs.append(json.loads(capsys.readouterr().out))
    assert runs[0] == runs[1], "the same seed gave other games"
    assert sum(agent["games"] for agent in runs[0]["agents"]) == 8


# --------------------------------------------------------------------------- the sealed-bid rule

# The toy petition: both seats hold 2 Jade and seal a bid of 0-2; both pay their bid, the higher
# bid wins the 2-point prize, and a tie goes to the marker's holder (seat 0). The row player's
# payoff is its gain less the other's. Its only equilibrium (checked by linear programming: every
# coordinate's minimum and maximum over the maximin strategies agree) is mixed: seat 0 bids
# (1/4, 1/4, 1/2), seat 1 (1/2, 1/4, 1/4).
TOY_PRIZE = 2
TOY_JADE = 2
TOY_EQUILIBRIUM = (np.array([0.25, 0.25, 0.5]), np.array([0.5, 0.25, 0.25]))


def _toy_petition() -> list[list[float]]:
    rows = []
    for b0 in range(TOY_JADE + 1):
        row = []
        for b1 in range(TOY_JADE + 1):
            first = b0 >= b1
            row.append(float((TOY_PRIZE if first else 0) - b0 - ((0 if first else TOY_PRIZE) - b1)))
        rows.append(row)
    return rows


def _total_variation(p: np.ndarray, q: np.ndarray) -> float:
    return float(0.5 * np.abs(np.asarray(p) - q).sum())


def test_the_toy_petitions_equilibrium_is_the_one_stated():
    scipy = pytest.importorskip("scipy.optimize")
    payoff = np.array(_toy_petition())
    for player, matrix in ((0, payoff), (1, -payoff.T)):
        m, k = matrix.shape
        c = np.zeros(m + 1)
        c[-1] = -1
        game = scipy.linprog(
            c, A_ub=np.hstack([-matrix.T, np.ones((k, 1))]), b_ub=np.zeros(k),
            A_eq=[[1.0] * m + [0.0]], b_eq=[1.0], bounds=[(0, None)] * m + [(None, None)],
        )  # fmt: skip
        value = -game.fun
        for i in range(m):
            for sign in (1, -1):
                c = np.zeros(m)
                c[i] = sign
                extreme = scipy.linprog(
                    c, A_ub=-matrix.T, b_ub=-np.full(k, value - 1e-9), A_eq=[[1.0] * m], b_eq=[1.0],
                    bounds=[(0, None)] * m,
                )  # fmt: skip
                assert sign * extreme.fun == pytest.approx(TOY_EQUILIBRIUM[player][i], abs=1e-6)


def test_the_sealed_bid_rule_reaches_the_toy_petitions_mixed_equilibrium():
    payoff = _toy_petition()
    gaps = []
    for iterations in (1_000, 20_000):
        first, second = _core.sealed_self_play(payoff, iterations, 0.1, 1)
        gaps.append(
            max(_total_variation(first, TOY_EQUILIBRIUM[0]), _total_variation(second, TOY_EQUILIBRIUM[1]))
        )
    assert gaps[1] <= 0.05, f"the average strategies end {gaps[1]:.3f} (total variation) from the equilibrium"
    assert gaps[1] < gaps[0]


def test_the_sealed_bid_rules_average_strategy_is_a_distribution():
    first, second = _core.sealed_self_play(_toy_petition(), 50, 0.5, 3)
    for strategy in (first, second):
        assert sum(strategy) == pytest.approx(1.0) and min(strategy) >= 0.0
    with pytest.raises(ValueError, match="exploration"):
        _core.sealed_self_play(_toy_petition(), 10, 0.0, 1)
    with pytest.raises(ValueError, match="one length"):
        _core.sealed_self_play([[1.0, 2.0], [1.0]], 10, 0.1, 1)


def test_a_search_at_a_bid_after_others_sealed_theirs_starts_at_the_rounds_first_bid():
    state = Game(num_players=3, backend="core").new_initial_state(4)
    chooser = np.random.default_rng(2)
    while not (state.decision == Decision.PETITION_BID and state.order_pos > 0):
        state.apply_action(int(chooser.choice(state.legal_actions())))
    result = BatchedSearch(_uniform, 12, simultaneous_bids=True).run([state], [5])
    assert result.actions[0] in state.legal_actions()
    assert all(A.BID <= a <= A.BID + 100 for a in np.flatnonzero(result.policy[0]))
