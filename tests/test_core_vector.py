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


def test_threads_that_spin_or_sleep_between_calls_give_the_same_games() -> None:
    """Back-to-back calls find the pool's threads spinning, calls after a pause find them asleep;
    either way every call waits for all of them and the games equal the one-thread games."""
    import time

    import island_fortress_env.vector as vector

    one = vector.make(7, num_players=3, seed=4, threads=1)
    four = vector.make(7, num_players=3, seed=4, threads=4)
    one.reset()
    four.reset()
    for step in range(600):
        if step % 50 == 0:
            time.sleep(0.002)  # longer than the spin: the workers sleep on the condition variable
        actions = one.heuristic_actions()
        assert np.array_equal(actions, four.heuristic_actions())
        for x, y in zip(one.step(actions), four.step(actions), strict=True):
            assert np.array_equal(x, y)
    del four  # the pool's threads stop and join, asleep or spinning


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


def test_score_gains_are_every_seats_points_of_the_last_step() -> None:
    import island_fortress_env.vector as vector

    env = vector.make(6, num_players=(2, 3, 4), seed=4)
    env.reset()
    assert not env.score_gains().any()
    engine = [env.games[i].new_initial_state(env.game_seed(i)) for i in range(6)]
    totals = np.zeros((6, 4), dtype=np.int64)
    finished = scored = 0
    for _ in range(1500):
        actions = env.random_actions()
        before = [py.score[:] for py in engine]
        env.step(actions)
        gains = env.score_gains()
        totals += gains
        for i, py in enumerate(engine):
            py.apply_action(int(actions[i]))
            n = py.n
            assert gains[i, :n].tolist() == [a - b for a, b in zip(py.score, before[i], strict=True)]
            assert not gains[i, n:].any()
            scored += int(gains[i].any())
            if env.done[i]:  # the gains of the last move are the ended game's; they add up to its score
                assert totals[i, :n].tolist() == py.score
                totals[i] = 0
                engine[i] = env.games[i].new_initial_state(env.game_seed(i))
                finished += 1
    assert finished >= 10 and scored > 100


def test_actions_for_some_games_leave_the_others_alone() -> None:
    import island_fortress_env.vector as vector

    one, twin = (vector.make(6, num_players=(2, 3, 4), seed=8) for _ in range(2))
    one.reset()
    twin.reset()
    some = np.array([True, False, True, True, False, True])
    for _ in range(60):
        everywhere = twin.random_actions()
        part = one.random_actions(some)
        assert np.array_equal(part[some], everywhere[some]) and (part[~some] == -1).all()
        rest = one.random_actions(~some)  # the games left out had not drawn: they draw now as the twin did
        assert np.array_equal(rest[~some], everywhere[~some])
        heuristic = twin.heuristic_actions()
        part = one.heuristic_actions(some)
        assert np.array_equal(part[some], heuristic[some]) and (part[~some] == -1).all()
        one.step(heuristic)
        twin.step(heuristic)
    with pytest.raises(ValueError, match="6 booleans"):
        one.random_actions(np.ones(6, dtype=np.int64))
    with pytest.raises(ValueError, match="6 booleans"):
        one.heuristic_actions(np.ones(5, dtype=bool))


def test_set_players_changes_a_games_table_from_its_next_episode_on() -> None:
    import island_fortress_env.vector as vector
    from island_fortress_env.engine import Game

    env = vector.make(3, num_players=3, seed=2)
    env.set_players(2, 2)  # before the first episode: that one is already a 2-player game
    env.reset()
    assert [g.num_players for g in env.games] == [3, 3, 2]
    sizes = {0: [4, 2, 4, 3], 1: [2, 2, 4, 4]}  # the tables game 0 and game 1 play next, in order
    for i in (0, 1):
        env.set_players(i, sizes[i].pop(0))
    engine = [env.games[i].new_initial_state(env.game_seed(i)) for i in range(3)]
    agents = [HeuristicAgent(seed=env.game_seed(i)) for i in range(3)]
    played: dict[int, list[int]] = {0: [], 1: []}
    while len(played[0]) < 4 or len(played[1]) < 4:
        actions = env.heuristic_actions()
        for i, py in enumerate(engine):
            assert env.games[i].num_players == py.n == env.state(i).n
            assert actions[i] == agents[i].act(None, action_mask(py), py)
            py.apply_action(int(actions[i]))
        env.step(actions)
        for i in np.flatnonzero(env.done):
            assert engine[i].is_terminal()
            engine[i] = Game(num_players=env.games[i].num_players).new_initial_state(env.game_seed(i))
            agents[i] = HeuristicAgent(seed=env.game_seed(i))
            assert (
                env.obs[i].tobytes()
                == ObservationEncoder(env.games[i]).encode(engine[i], engine[i].current_player()).tobytes()
            )
            if i in played:
                played[i].append(env.games[i].num_players)
                if sizes[i]:
                    env.set_players(i, sizes[i].pop(0))
    assert played == {0: [4, 2, 4, 3], 1: [2, 2, 4, 4]}
    assert env.games[2].num_players == 2
    with pytest.raises(IndexError):
        env.set_players(3, 2)
    with pytest.raises(ValueError, match="num_players"):
        env.set_players(0, 5)
