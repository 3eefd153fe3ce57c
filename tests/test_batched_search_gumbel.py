"""The batched search's Gumbel root selection (``BatchedSearch(..., gumbel=True)``; mctx's
``gumbel_muzero_policy``): sequential halving's schedule as mctx has it, legal moves and
distributions at every table size, moves that never depend on what the seat cannot see, the
Gumbel-max draw of the prior at one simulation, and the improved policy following the values.

Budgets are a few simulations: these tests check mechanics, never strength."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_batched_search import _positions, _uniform
from test_hidden_information import interesting_states

from island_fortress_env.core import _core
from island_fortress_env.core.search import BatchedSearch
from island_fortress_env.players.search import Evaluator
from island_fortress_env.players.specs import SHIPPED_POLICY


def _mctx_sequence(max_num_considered_actions: int, num_simulations: int) -> list[int]:
    """mctx's ``seq_halving.get_sequence_of_considered_visits``, transcribed."""
    if max_num_considered_actions <= 1:
        return list(range(num_simulations))
    log2max = math.ceil(math.log2(max_num_considered_actions))
    sequence: list[int] = []
    visits = [0] * max_num_considered_actions
    num_considered = max_num_considered_actions
    while len(sequence) < num_simulations:
        num_extra_visits = max(1, int(num_simulations / (log2max * num_considered)))
        for _ in range(num_extra_visits):
            sequence.extend(visits[:num_considered])
            for i in range(num_considered):
                visits[i] += 1
        num_considered = max(2, num_considered // 2)
    return sequence[:num_simulations]


@pytest.mark.parametrize("considered", [1, 2, 3, 4, 7, 16, 32])
@pytest.mark.parametrize("simulations", [1, 2, 5, 16, 64, 200])
def test_the_halving_schedule_is_mctxs(considered, simulations):
    assert _core.halving_schedule(considered, simulations) == _mctx_sequence(considered, simulations)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_every_move_is_legal_and_the_improved_policy_a_distribution_on_the_legal_actions(n):
    states = _positions(n, 20 + n)
    search = BatchedSearch(_uniform, 8, threads=2, gumbel=True)
    result = search.run(states, np.arange(len(states)))
    for state, action, policy in zip(states, result.actions, result.policy, strict=True):
        legal = state.legal_actions()
        assert action in legal
        assert policy.sum() == pytest.approx(1.0, abs=1e-5)
        assert set(np.flatnonzero(policy)) <= set(legal)
    again = BatchedSearch(_uniform, 8, threads=1, gumbel=True).run(states, np.arange(len(states)))
    assert np.array_equal(result.actions, again.actions) and np.array_equal(result.policy, again.policy)


@pytest.mark.parametrize(("n", "seed"), [(2, 11), (3, 12), (4, 11)])
def test_gumbel_search_chooses_alike_when_only_hidden_information_differs(n, seed):
    states = [s for s in interesting_states(n, seed, backend="core") if len(s.legal_actions()) > 1]
    twins = [s.redeal_unseen(s.current_player(), 1000 + k) for k, s in enumerate(states)]
    evaluate = Evaluator(SHIPPED_POLICY, threads=1)
    seeds = np.full(len(states), 7)
    mine = BatchedSearch(evaluate, 6, gumbel=True).run(states, seeds)
    theirs = BatchedSearch(evaluate, 6, gumbel=True).run(twins, seeds)
    assert np.array_equal(mine.actions, theirs.actions)
    assert np.array_equal(mine.policy, theirs.policy), "the search saw what its seat cannot see"


def _favouring(action_of: dict[bytes, int], boost: float):
    """Priors that put ``boost`` on one action of each root (found by its observation's bytes)."""

    def evaluate(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        logits, values = _uniform(observations, masks)
        for r, obs in enumerate(observations):
            action = action_of.get(obs.tobytes())
            if action is not None:
                logits[r, action] += boost
        return logits, np.zeros_like(values)

    return evaluate


def test_at_one_simulation_the_move_is_a_gumbel_max_draw_of_the_prior():
    """One simulation visits the top of gumbel + logit alone: the move is a draw from the prior,
    so a strongly favoured action is nearly always played and even priors spread the moves."""
    state = next(s for s in _positions(2, 5) if len(s.legal_actions()) >= 4)
    seat, legal = state.current_player(), state.legal_actions()
    favoured = legal[len(legal) // 2]
    peaked = _favouring({state.encode(seat).tobytes(): favoured}, 8.0)
    many = [state] * 64
    drawn = BatchedSearch(peaked, 1, gumbel=True).run(many, np.arange(64)).actions
    assert (drawn == favoured).mean() > 0.9
    even = BatchedSearch(_favouring({}, 0.0), 1, gumbel=True).run(many, np.arange(64)).actions
    assert len(set(even.tolist())) >= min(3, len(legal)) and set(even.tolist()) <= set(legal)


def test_where_the_values_tell_nothing_the_improved_policy_is_the_prior():
    """Constant values complete every Q alike, so sigma(completed Q) adds nothing to the logits."""
    states = _positions(3, 4)[:6]
    seats = [s.current_player() for s in states]
    favoured = {s.encode(seat).tobytes(): s.legal_actions()[0] for s, seat in zip(states, seats, strict=True)}
    result = BatchedSearch(_favouring(favoured, 1.0), 12, gumbel=True).run(states, np.arange(len(states)))
    for state, policy in zip(states, result.policy, strict=True):
        legal = list(state.legal_actions())
        prior = np.ones(len(legal))
        prior[0] = math.e
        np.testing.assert_allclose(policy[legal], prior / prior.sum(), atol=1e-5)


def test_the_gumbel_spec_is_the_search_with_gumbel_root_selection_in_every_batch():
    from island_fortress_env.players import AgentSpecError, check_agent_spec, make_agent, parse_agent_spec
    from island_fortress_env.players.kinds import GUMBEL
    from island_fortress_env.players.search import SearchSeats
    from island_fortress_env.players.seat_policies import seat_policy
    from island_fortress_env.training.evaluate import evaluate

    spec = parse_agent_spec(f"gumbel:{SHIPPED_POLICY}:8")
    assert spec.kind is GUMBEL and spec.simulations == 8 and parse_agent_spec("gumbel").simulations == 64
    seats = seat_policy("gumbel:2", make_agent)
    assert isinstance(seats, SearchSeats) and seats.search._search is not None and seats.name == "gumbel:2"
    assert make_agent("gumbel:2", seed=0).name.startswith("gumbel:")
    for bad, words in (
        ("gumbel:", "expected gumbel"),
        ("gumbel:0", "simulations"),
        ("gumbel:no.zip", "no checkpoint"),
    ):
        with pytest.raises(AgentSpecError, match=words):
            check_agent_spec(bad)
    runs = [evaluate(["gumbel:2", "random"], games=4, seed=1) for _ in range(2)]
    assert runs[0]["agents"] == runs[1]["agents"], "the same seed gave other games"
    assert [agent["name"] for agent in runs[0]["agents"]] == ["gumbel:2", "random"]


def test_without_noise_one_simulation_plays_the_priors_top_action():
    states = [s for s in _positions(3, 8) if len(s.legal_actions()) >= 3][:6]
    favoured = {s.encode(s.current_player()).tobytes(): s.legal_actions()[1] for s in states}
    result = BatchedSearch(_favouring(favoured, 0.5), 1, gumbel=True, gumbel_scale=0.0).run(
        states, np.arange(6)
    )
    assert [int(a) for a in result.actions] == [s.legal_actions()[1] for s in states]
    with pytest.raises(ValueError, match="gumbel_scale"):
        BatchedSearch(_uniform, 2, gumbel=True, gumbel_scale=-1.0)
