"""``island_fortress_env.vector``: N games stepped in C++ give the engine's games, arrays and rewards."""

from __future__ import annotations

import numpy as np
import pytest

from island_fortress_env import core
from island_fortress_env.baseline.heuristic import HeuristicAgent
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


def test_a_partial_step_moves_only_the_games_asked() -> None:
    import island_fortress_env.vector as vector

    env = vector.make(5, num_players=3, seed=2)
    env.reset()
    env.step(env.random_actions())
    which = np.array([True, False, True, False, False])
    legal = [env.state(i).legal_actions() for i in range(5)]
    before = env.obs.copy(), env.mask.copy(), env.player.copy(), legal
    actions = env.random_actions(which)  # -1 where the game waits
    env.step(actions, games=which)
    assert not env.done.any() and not env.rewards.any() and not env.score_gains()[~which].any()
    for i in np.flatnonzero(~which):
        assert np.array_equal(env.obs[i], before[0][i]) and np.array_equal(env.mask[i], before[1][i])
        assert env.player[i] == before[2][i] and env.state(i).legal_actions() == before[3][i]
    assert all(env.state(i).legal_actions() != before[3][i] or not np.array_equal(env.obs[i], before[0][i])
               for i in np.flatnonzero(which))  # fmt: skip
    bad = env.random_actions(which)
    bad[2] = -1  # an illegal action in a game that moves: refused, nothing changes
    obs = env.obs.copy()
    with pytest.raises(ValueError, match="game 2"):
        env.step(bad, games=which)
    assert np.array_equal(env.obs, obs)


def _replay_learner_games(env, actions_by_game, seats_by_game, vector_seed):
    """The games of a ``GymVectorEnv`` played again through the engine: the learner's recorded
    actions at its seat, ``HeuristicAgent(seed=the episode's seed)`` at every other."""
    import island_fortress_env.vector as vector

    plain = vector.make(env.num_envs, num_players=(2, 3, 4), seed=vector_seed)
    results = []
    for i, episodes in enumerate(actions_by_game):
        for e, learner_actions in enumerate(episodes):
            game = plain.games[i] if e == 0 else env._vec.games[i]
            state = game.new_initial_state(plain.game_seed(i, e))
            agent = HeuristicAgent(seed=plain.game_seed(i, e))
            mine = iter(learner_actions)
            while not state.is_terminal():
                if state.current_player() == seats_by_game[i][e]:
                    state.apply_action(next(mine))
                else:
                    state.apply_action(agent.act(None, action_mask(state), state))
            results.append((i, e, state.returns()[seats_by_game[i][e]]))
    return results


def test_the_gymnasium_view_plays_the_learner_against_the_heuristic_in_turn_at_every_seat() -> None:
    import gymnasium

    import island_fortress_env.vector as vector

    env = vector.make_gym(4, num_players=(2, 3, 4), opponent="heuristic", seed=8)
    assert isinstance(env, gymnasium.vector.VectorEnv)
    assert env.single_action_space == gymnasium.spaces.Discrete(380)
    assert env.observation_space.shape == (4, 1317)
    obs, infos = env.reset()
    rng = np.random.default_rng(0)
    actions_by_game = [[[]] for _ in range(4)]
    seats_by_game = [[int(s)] for s in infos["seat"]]
    returns = []
    for _ in range(2500):
        mask = infos["action_mask"]
        for i in range(4):  # the learner is to move, and sees its own seat's observation
            state = env.state(i)
            assert state.current_player() == infos["seat"][i]
            assert np.array_equal(mask[i], env.action_masks()[i])
            seen = ObservationEncoder(state.game).encode(state, int(infos["seat"][i]))
            assert obs[i].tobytes() == seen.tobytes()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        for i in range(4):
            actions_by_game[i][-1].append(int(actions[i]))
        obs, reward, terminated, truncated, infos = env.step(actions)
        assert not truncated.any() and not reward[~terminated].any()
        for i in np.flatnonzero(terminated):
            returns.append((i, len(actions_by_game[i]) - 1, float(reward[i])))
            actions_by_game[i].append([])
            seats_by_game[i].append(int(infos["seat"][i]))
    for i in range(4):  # seat e % n in episode e
        for e, seat in enumerate(seats_by_game[i]):
            assert seat == e % env._vec.games[i].num_players
    finished = sorted((int(i), e, pytest.approx(r)) for i, e, r in returns)
    assert len(finished) >= 8
    assert _replay_learner_games(env, [a[:-1] for a in actions_by_game], seats_by_game, 8) == finished


def test_the_gymnasium_view_reseeds_fixes_a_seat_and_refuses_bad_arguments() -> None:
    import gymnasium

    import island_fortress_env.vector as vector

    env = vector.make_gym(3, num_players=3, opponent="random", seed=0, learner_seat=2)
    first, _ = env.reset(seed=11)
    again, infos = vector.make_gym(3, num_players=3, opponent="random", seed=11, learner_seat=2).reset()
    assert np.array_equal(first, again) and (infos["seat"] == 2).all()
    wrapped = gymnasium.wrappers.vector.RecordEpisodeStatistics(env)
    _, infos = wrapped.reset(seed=3)
    episodes = 0
    for _ in range(600):
        actions = np.array([np.flatnonzero(m)[0] for m in infos["action_mask"]])
        _, reward, terminated, _, infos = wrapped.step(actions)
        episodes += int(terminated.sum())
        assert (infos["seat"] == 2).all()
        if terminated.any():  # Gymnasium's episode statistics see each finished game's return
            assert np.allclose(infos["episode"]["r"][terminated], reward[terminated])
    assert episodes >= 3
    with pytest.raises(ValueError, match="opponent"):
        vector.make_gym(2, opponent="mcts")
    with pytest.raises(ValueError, match="learner_seat"):
        vector.make_gym(2, num_players=(2, 3), learner_seat=2)
    with pytest.raises(ValueError, match="one integer"):
        env.reset(seed=[1, 2, 3])
    with pytest.raises(ValueError, match="options"):
        env.reset(options={"x": 1})


def test_the_vector_ppo_example_learns_the_same_losses_from_the_same_seed() -> None:
    """examples/vector_ppo.py, CleanRL's loop over make_gym: a tiny seeded run twice."""
    import importlib.util
    from pathlib import Path

    pytest.importorskip("torch")
    path = Path(__file__).resolve().parents[1] / "examples" / "vector_ppo.py"
    spec = importlib.util.spec_from_file_location("examples_vector_ppo", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    agent, losses = example.train(envs=8, steps=16, updates=2, opponent="heuristic", seed=3)
    assert len(losses) == 2 and all(np.isfinite(losses))
    assert example.train(envs=8, steps=16, updates=2, opponent="heuristic", seed=3)[1] == losses
    assert 0.0 <= example.win_rate(agent, "random", games=4) <= 1.0
