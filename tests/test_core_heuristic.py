"""The C++ heuristic player chooses what ``baseline.heuristic.HeuristicAgent`` chooses.

Whole games are played with the Python agent on the engine and the core's agent on the core,
seat by seat from the same seeds: every choice and the state of every agent's numpy generator
after it must be the same.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from island_fortress_env import core
from island_fortress_env.baseline.heuristic import HeuristicAgent
from island_fortress_env.engine import Game
from island_fortress_env.env.observation import action_mask

pytestmark = pytest.mark.skipif(
    not core.available(), reason=f"the C++ core is not built ({core.build_error()})"
)

VARIANTS: tuple[dict[str, Any], ...] = (
    {},
    {"favor_trade_in": True, "no_replace": True},
    {"unlimited_components": True, "extra_jade": 300, "first_round_incentive": "buyback_chip"},
    {"start_laborers": 4, "start_convicts": 4, "start_blocks": 3, "first_round_incentive": "treasure"},
)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: ",".join(v) or "standard")
@pytest.mark.parametrize("num_players", (2, 3, 4))
def test_the_core_heuristic_plays_the_same_games(num_players: int, variant: dict[str, Any]) -> None:
    from island_fortress_env.core.heuristic import CoreHeuristicAgent

    game = Game(num_players=num_players, **variant)
    seed = 11 * num_players + len(variant)
    py = game.new_initial_state(seed)
    cs = core.new_initial_state(game, seed)
    python_agents = [HeuristicAgent(seed=seed + p) for p in range(num_players)]
    core_agents = [CoreHeuristicAgent(seed=seed + p) for p in range(num_players)]
    steps = 0
    while not py.is_terminal():
        p = py.current_player()
        expected = python_agents[p].act(None, action_mask(py), py)
        got = core_agents[p].act(None, None, cs)
        assert got == expected, (steps, py.decision, py.legal_actions())
        assert core_agents[p].rng.bit_generator.state == python_agents[p].rng.bit_generator.state
        py.apply_action(expected)
        cs.apply_action(got)
        steps += 1
    assert cs.score == py.score and cs.winners == py.winners and steps > 200


def test_reset_reseeds_like_the_python_agent() -> None:
    from island_fortress_env.core.heuristic import CoreHeuristicAgent

    agent = CoreHeuristicAgent(seed=1)
    agent.reset(seed=7)
    expected = np.random.default_rng(7)
    assert agent.rng.random() == expected.random()
    agent.reset()  # no seed: the generator goes on
    assert agent.rng.bit_generator.state == expected.bit_generator.state
    with pytest.raises(ValueError, match="core state"):
        agent.act(None, None, Game(num_players=2).new_initial_state(0))


class PythonHeuristic(HeuristicAgent):
    """A subclass (it could change the weights): it always plays in Python, core states included."""


def test_the_python_heuristic_reads_a_core_state_as_an_engine_state() -> None:
    """A ``CoreState`` stands wherever an engine state is read: the Python agent plays the same."""
    game = Game(num_players=3)
    py = game.new_initial_state(4)
    cs = core.new_initial_state(game, 4)
    on_engine = [HeuristicAgent(seed=p) for p in range(3)]
    on_core = [PythonHeuristic(seed=p) for p in range(3)]
    while not py.is_terminal():
        p = py.current_player()
        action = on_engine[p].act(None, action_mask(py), py)
        assert on_core[p].act(None, action_mask(cs), cs) == action
        py.apply_action(action)
        cs.apply_action(action)
    assert cs.winners == py.winners


@pytest.mark.parametrize("num_players", (2, 4))
def test_the_heuristic_agent_plays_a_core_state_in_cpp_with_its_own_generator(num_players: int) -> None:
    """``HeuristicAgent`` on a core state plays through the C++ player: the same choices as on the
    engine, its own numpy generator left in the same state (its buffered 32-bit half included),
    and a subclass plays in Python."""
    game = Game(num_players=num_players, favor_trade_in=True)
    py = game.new_initial_state(num_players)
    cs = core.new_initial_state(game, num_players)
    on_engine = [HeuristicAgent(seed=p) for p in range(num_players)]
    on_core = [HeuristicAgent(seed=p) for p in range(num_players)]
    for agents in (on_engine, on_core):
        agents[0].rng.integers(2**16, dtype=np.uint16)  # leaves a buffered 32-bit half
    while not py.is_terminal():
        p = py.current_player()
        action = on_engine[p].act(None, action_mask(py), py)
        assert on_core[p].act(None, action_mask(cs), cs) == action
        assert on_core[p].rng.bit_generator.state == on_engine[p].rng.bit_generator.state
        py.apply_action(action)
        cs.apply_action(action)
    assert cs.winners == py.winners
    assert all(agent._core_player is not None for agent in on_core)
    assert all(agent._core_player is None for agent in on_engine)
    subclass = PythonHeuristic(seed=1)
    state = core.new_initial_state(game, 3)
    subclass.act(None, action_mask(state), state)
    assert subclass._core_player is None


def test_a_mask_that_is_not_the_states_plays_in_python_as_on_the_engine() -> None:
    """Only a one-byte mask equal to the core state's legal actions goes to the C++ player; any
    other mask (a narrower one, a list, floats, the wrong size) is read by the Python agent, which
    then chooses on the core state exactly as on the engine state."""
    game = Game(num_players=3)
    py, cs = game.new_initial_state(8), core.new_initial_state(game, 8)
    pick = np.random.default_rng(8)
    while py.decision.name != "CHOOSE_ROLE_ACTION" or py.round < 2:
        action = int(pick.choice(py.legal_actions()))
        py.apply_action(action)
        cs.apply_action(action)
    narrow = action_mask(py)
    narrow[py.legal_actions()[0]] = 0  # one legal action left out
    for mask in (narrow, narrow.astype(np.float32), narrow.tolist()):
        on_engine, on_core = HeuristicAgent(seed=3), HeuristicAgent(seed=3)
        assert on_core.act(None, mask, cs) == on_engine.act(None, mask, py)
        assert on_core._core_player is None, "the C++ player was asked with a mask that is not the state's"
        assert on_core.rng.bit_generator.state == on_engine.rng.bit_generator.state
    assert not cs._s.is_legal_mask(narrow) and cs._s.is_legal_mask(action_mask(cs))
    twos = action_mask(cs)
    twos[twos == 1] = 2
    assert not cs._s.is_legal_mask(twos)
    with pytest.raises(ValueError):
        cs._s.is_legal_mask(np.zeros(10, dtype=np.int8))
    with pytest.raises(ValueError, match="no legal action"):
        HeuristicAgent(seed=0).act(None, np.zeros(380, dtype=np.int8), cs)


def test_the_batch_seeds_its_players_as_numpy_default_rng_does() -> None:
    """The batch's heuristic players draw from PCG64 states made by a C++ port of numpy's
    ``SeedSequence``: the same state as ``np.random.default_rng(seed)`` for any seed."""
    mask = (1 << 64) - 1
    for seed in (0, 1, 7, 2**32 - 1, 2**32, 2**40 + 3, 2**63, 2**64 - 1):
        state = np.random.default_rng(seed).bit_generator.state["state"]
        s_lo, s_hi, i_lo, i_hi = core.state._core.numpy_default_rng_words(seed)  # type: ignore[attr-defined]
        assert (s_lo, s_hi, i_lo, i_hi) == (
            state["state"] & mask,
            state["state"] >> 64,
            state["inc"] & mask,
            state["inc"] >> 64,
        ), seed
