"""``island_fortress_env.vector``: N games stepped in C++ give the engine's games, arrays and rewards."""

from __future__ import annotations

import numpy as np
import pytest

from island_fortress_env import core
from island_fortress_env.agents.heuristic import HeuristicAgent
from island_fortress_env.engine import play_random_game
from island_fortress_env.env.observation import ObservationEncoder, action_mask

pytestmark = pytest.mark.skipif(
    not core.available(), reason=f"the C++ core is not built ({core.build_error()})"
)


def test_random_play_matches_the_engine_game_by_game() -> None:
    import island_fortress_env.vector as vector

    env = vector.make(6, num_players=(2, 3, 4), seed=5, threads=2, favor_trade_in=True)
    env.reset()
    engine = [env.games[i].new_initial_state(env.game_seed(i)) for i in range(6)]
    encoders = [ObservationEncoder(g) for g in env.games]
    finished = 0
    for _ in range(1500):
        for i, py in enumerate(engine):
            assert env.player[i] == py.current_player()
            assert env.obs[i].tobytes() == encoders[i].encode(py, py.current_player()).tobytes()
            assert env.mask[i].view(np.int8).tobytes() == action_mask(py).tobytes()
        actions = env.random_actions()
        env.step(actions)
        for i, py in enumerate(engine):
            py.apply_action(int(actions[i]))
            if env.done[i]:
                assert py.is_terminal()
                assert env.rewards[i, : py.n].tolist() == pytest.approx(py.returns())
                assert not env.rewards[i, py.n :].any()
                # random_actions draws as play_random_game does from the episode's seed
                seed = env.game_seed(i, env.episodes(i) - 2)
                assert play_random_game(env.games[i], seed).score == py.score
                engine[i] = env.games[i].new_initial_state(env.game_seed(i))
                finished += 1
            else:
                assert not py.is_terminal() and not env.rewards[i].any()
    assert finished >= 10
    assert env.state(0).score == engine[0].score and env.state(0).legal_actions() == engine[0].legal_actions()


def test_heuristic_actions_are_the_heuristic_agents() -> None:
    import island_fortress_env.vector as vector

    env = vector.make(3, num_players=(2, 3, 4), seed=1)
    env.reset()
    engine = [env.games[i].new_initial_state(env.game_seed(i)) for i in range(3)]
    agents = [HeuristicAgent(seed=env.game_seed(i)) for i in range(3)]
    finished = 0
    for _ in range(700):
        actions = env.heuristic_actions()
        for i, py in enumerate(engine):
            assert actions[i] == agents[i].act(None, action_mask(py), py)
            py.apply_action(int(actions[i]))
        env.step(actions)
        for i in np.flatnonzero(env.done):
            assert engine[i].is_terminal()
            engine[i] = env.games[i].new_initial_state(env.game_seed(i))
            agents[i] = HeuristicAgent(seed=env.game_seed(i))
            finished += 1
    assert finished >= 3


def test_threads_change_nothing_and_illegal_actions_change_nothing() -> None:
    import island_fortress_env.vector as vector

    one = vector.make(8, num_players=(3, 4), seed=9, threads=1)
    two = vector.make(8, num_players=(3, 4), seed=9, threads=2)
    one.reset()
    two.reset()
    for _ in range(400):
        actions = one.random_actions()
        assert np.array_equal(actions, two.random_actions())
        a, b = one.step(actions), two.step(actions)
        for x, y in zip(a, b, strict=True):
            assert np.array_equal(x, y)
    before = one.obs.copy(), one.state(3).legal_actions()
    bad = one.random_actions()
    bad[3] = next(x for x in range(400) if not one.mask[3, x]) if not one.mask[3].all() else -1
    with pytest.raises(ValueError, match="game 3"):
        one.step(bad)
    assert np.array_equal(one.obs, before[0]) and one.state(3).legal_actions() == before[1]
    with pytest.raises(ValueError):
        one.step(np.zeros(5, dtype=np.int64))
    with pytest.raises(ValueError):
        one.step(np.zeros(8, dtype=np.float32))


def test_bad_arguments_are_refused() -> None:
    import island_fortress_env.vector as vector
    from island_fortress_env.engine import ConfigError, SeedError

    with pytest.raises(RuntimeError):
        vector.make(2).step(np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError):
        vector.make(0)
    with pytest.raises(ValueError):
        vector.make(2, num_players=(2, 5))
    with pytest.raises(ValueError):
        vector.make(2, threads=0)
    with pytest.raises(SeedError):
        vector.make(2, seed=-1)
    with pytest.raises(ConfigError):
        vector.make(2, no_such_option=True)
