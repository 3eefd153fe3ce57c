"""The Parallel view (``island_fortress_v0.parallel_env``): PettingZoo's own API and seed tests,
the PASS masks, illegal actions refused before anything changes, and games that equal the same
actions through the AEC env (rewards, observations, scores), on both backends."""

from __future__ import annotations

import pickle

import numpy as np
import pettingzoo
import pytest
from gymnasium import spaces
from pettingzoo.test import parallel_api_test, parallel_seed_test

from island_fortress_env import island_fortress_v0
from island_fortress_env.engine import NUM_ACTIONS, ConfigError, SeedError
from island_fortress_env.engine.state import IllegalActionError
from island_fortress_env.env.observation import OBS_SIZE

PASS = island_fortress_v0.PASS
VARIANTS = {"favor_trade_in": True, "first_round_incentive": "treasure", "extra_jade": 4}


def _mover(env) -> str:
    return env.possible_agents[env.game_state.current_player()]


def _random_actions(env, observations, rng) -> dict[str, int]:
    return {a: int(rng.choice(np.flatnonzero(observations[a]["action_mask"]))) for a in env.agents}


def _snapshot(env) -> tuple:
    """Everything a step could change: the global state (hands, deck, bids), every seat's
    observation and mask, the legal actions, the log and the agents."""
    state = env.game_state
    views = tuple(
        (v["observation"].tobytes(), v["action_mask"].tobytes())
        for v in (env.observe(a) for a in env.possible_agents)
    )
    return env.state().tobytes(), views, state.legal_actions(), len(state.log), tuple(env.agents)


# --------------------------------------------------------------------------- PettingZoo's tests


@pytest.mark.parametrize("n", [2, 3, 4])
def test_pettingzoo_parallel_api_test(backend, n):
    parallel_api_test(island_fortress_v0.parallel_env(num_players=n, backend=backend), num_cycles=3000)


def test_pettingzoo_parallel_api_test_with_variants():
    parallel_api_test(island_fortress_v0.parallel_env(num_players=3, **VARIANTS), num_cycles=3000)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_pettingzoo_parallel_seed_test(backend, n):
    # PettingZoo's seed test samples every seat's action without a mask, so it plays the mode in
    # which an illegal action ends the game (as the AEC seed test with TerminateIllegalWrapper).
    parallel_seed_test(
        lambda: island_fortress_v0.parallel_env(num_players=n, backend=backend, illegal_action="terminate")
    )


@pytest.mark.parametrize("n", [2, 3, 4])
def test_a_seed_replays_the_whole_game(backend, n):
    def play(seed: int) -> list:
        env = island_fortress_v0.parallel_env(num_players=n, backend=backend, reward="vp_delta")
        observations, _ = env.reset(seed=seed)
        rng = np.random.default_rng(0)
        trace = []
        while env.agents:
            observations, rewards, terminations, _, infos = env.step(_random_actions(env, observations, rng))
            trace.append(
                (
                    {
                        a: o["observation"].tobytes() + o["action_mask"].tobytes()
                        for a, o in observations.items()
                    },
                    rewards,
                    terminations,
                    infos,
                )
            )
        return trace

    first = play(7)
    assert play(7) == first
    assert play(8) != first


# --------------------------------------------------------------------------- spaces and masks


def test_spaces_add_pass_to_the_aec_spaces():
    env = island_fortress_v0.parallel_env(num_players=4)
    aec = island_fortress_v0.env(num_players=4)
    assert PASS == NUM_ACTIONS
    for agent in env.possible_agents:
        assert env.action_space(agent) == spaces.Discrete(NUM_ACTIONS + 1)
        assert env.action_space(agent) is env.action_space(agent)
        space = env.observation_space(agent)
        assert space["observation"] == aec.observation_space(agent)["observation"]
        assert space["observation"].shape == (OBS_SIZE,)
        assert space["action_mask"] == spaces.Box(0, 1, (NUM_ACTIONS + 1,), np.int8)
    assert env.state_space == aec.unwrapped.state_space


@pytest.mark.parametrize("n", [2, 3, 4])
def test_the_mover_gets_its_legal_mask_and_every_other_seat_only_pass(backend, n):
    env = island_fortress_v0.parallel_env(num_players=n, backend=backend)
    observations, infos = env.reset(seed=n)
    rng = np.random.default_rng(n)
    only_pass = np.zeros(NUM_ACTIONS + 1, np.int8)
    only_pass[PASS] = 1
    steps = 0
    while env.agents:
        assert set(observations) == set(infos) == set(env.agents) == set(env.possible_agents)
        state = env.game_state
        mover = _mover(env)
        for agent, observation in observations.items():
            assert env.observation_space(agent).contains(observation)
            mask = observation["action_mask"]
            if agent == mover:
                assert mask[PASS] == 0
                assert list(np.flatnonzero(mask)) == list(state.legal_actions())
            else:
                np.testing.assert_array_equal(mask, only_pass)
        observations, _, terminations, truncations, infos = env.step(_random_actions(env, observations, rng))
        steps += 1
    assert env.game_state.is_terminal() and steps > 100
    assert all(terminations.values()) and not any(truncations.values())
    assert set(observations) == set(env.possible_agents), "the last step reports every seat"
    for observation in observations.values():
        np.testing.assert_array_equal(observation["action_mask"], only_pass)
    assert sum(info["won"] for info in infos.values()) >= 1


def test_waiting_seats_may_leave_their_pass_out_and_arrays_are_actions(backend):
    env = island_fortress_v0.parallel_env(num_players=3, backend=backend)
    twin = island_fortress_v0.parallel_env(num_players=3, backend=backend)
    env.reset(seed=3)
    twin.reset(seed=3)
    for k in range(30):
        action = env.game_state.legal_actions()[k % len(env.game_state.legal_actions())]
        forms = (np.int64(action), np.array(action), np.array([action], dtype=np.int32))
        env.step({_mover(env): forms[k % 3]})
        twin.step({a: action if a == _mover(twin) else np.array([PASS]) for a in twin.agents})
        assert _snapshot(env) == _snapshot(twin)


# --------------------------------------------------------------------------- illegal actions


def _mid_game(backend: str, n: int = 3, steps: int = 25):
    env = island_fortress_v0.parallel_env(num_players=n, backend=backend)
    observations, _ = env.reset(seed=11)
    rng = np.random.default_rng(1)
    for _ in range(steps):
        observations, *_ = env.step(_random_actions(env, observations, rng))
    return env


def test_illegal_actions_raise_one_clear_error_and_change_nothing(backend):
    env = _mid_game(backend)
    mover = _mover(env)
    waiting = next(a for a in env.agents if a != mover)
    legal = env.game_state.legal_actions()
    illegal = next(a for a in range(NUM_ACTIONS) if a not in legal)
    passes = dict.fromkeys(env.agents, PASS)
    illegal_error = IllegalActionError
    cases = [
        ({**passes, mover: legal[0], waiting: legal[0]}, illegal_error, f"{waiting}: .*PASS \\({PASS}\\)"),
        ({**passes, mover: legal[0], waiting: 0}, illegal_error, f"{waiting}: illegal action 0: {mover}"),
        (passes, illegal_error, f"{mover}: PASS \\({PASS}\\) is for the seats not to move"),
        ({**passes, mover: illegal}, illegal_error, f"illegal action {illegal} .*legal: "),
        ({**passes, mover: NUM_ACTIONS + 1}, illegal_error, "outside the action space"),
        ({**passes, mover: -1}, illegal_error, "outside the action space"),
        ({**passes, mover: True}, illegal_error, f"{mover}: illegal action True: actions are integers"),
        ({**passes, mover: 1.0}, illegal_error, "actions are integers"),
        ({**passes, mover: None}, illegal_error, "actions are integers"),
        ({**passes, mover: np.array([1, 2])}, illegal_error, "actions are integers"),
        ({a: PASS for a in env.agents if a != mover}, ValueError, f"no action for {mover}, the seat to move"),
        ({**passes, mover: legal[0], "player_9": PASS}, ValueError, "agents that are not playing"),
        (None, ValueError, f"must be a dict of agent names to actions, not NoneType; {mover} is to move"),
        (legal[0], ValueError, "must be a dict of agent names to actions, not int"),
        ([mover], ValueError, "must be a dict of agent names to actions, not list"),
        (mover, ValueError, "must be a dict of agent names to actions, not str"),
    ]
    before = _snapshot(env)
    for actions, error, message in cases:
        with pytest.raises(error, match=message):
            env.step(actions)
        assert _snapshot(env) == before, f"{actions} changed the game"
    # and the game goes on exactly as one that never saw them
    twin = _mid_game(backend)
    for env_ in (env, twin):
        env_.step({**dict.fromkeys(env_.agents, PASS), _mover(env_): legal[-1]})
    assert _snapshot(env) == _snapshot(twin)


def test_step_before_reset_and_after_the_end_are_errors():
    env = island_fortress_v0.parallel_env(num_players=2)
    with pytest.raises(ValueError, match="call reset"):
        env.step({"player_0": 0})
    with pytest.raises(AttributeError, match="reset"):
        env.observe("player_0")
    observations, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    while env.agents:
        observations, *_ = env.step(_random_actions(env, observations, rng))
    with pytest.raises(ValueError, match="the game is over"):
        env.step({})


def test_terminate_mode_ends_the_game_with_minus_one_for_each_offender(backend, caplog):
    env = island_fortress_v0.parallel_env(num_players=4, backend=backend, illegal_action="terminate")
    env.reset(seed=2)
    mover = _mover(env)
    waiting = [a for a in env.agents if a != mover]
    actions = {mover: PASS, waiting[0]: PASS, waiting[1]: 5, waiting[2]: PASS}
    observations, rewards, terminations, truncations, infos = env.step(actions)
    assert "Illegal move" in caplog.text  # PettingZoo's own warning, as TerminateIllegalWrapper's
    assert rewards == {a: -1.0 if a in (mover, waiting[1]) else 0.0 for a in env.possible_agents}
    assert all(terminations.values()) and not any(truncations.values())
    assert env.agents == [] and set(observations) == set(infos) == set(env.possible_agents)
    assert all(o["action_mask"][PASS] == 1 and o["action_mask"].sum() == 1 for o in observations.values())
    with pytest.raises(ValueError, match="the game is over"):
        env.step({})
    env.reset(seed=2)
    assert len(env.agents) == 4


def test_options_are_checked_like_the_aec_envs():
    with pytest.raises(ConfigError, match=r"unknown option\(s\) \['players'\].*illegal_action"):
        island_fortress_v0.parallel_env(players=3)
    with pytest.raises(ConfigError, match="illegal_action must be one of"):
        island_fortress_v0.parallel_env(illegal_action="ignore")
    with pytest.raises(ConfigError, match="num_players"):
        island_fortress_v0.parallel_env(num_players=5)
    with pytest.raises(ConfigError, match="render_mode"):
        island_fortress_v0.parallel_env(render_mode="video")
    env = island_fortress_v0.parallel_env(num_players=2)
    env.reset(seed=1)
    before = _snapshot(env)
    with pytest.raises(SeedError):
        env.reset(seed=-1)
    assert _snapshot(env) == before


# --------------------------------------------------------------------------- the same game as AEC


@pytest.mark.parametrize("reward", ["win_loss", "score_margin", "vp_delta"])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_a_game_through_the_parallel_view_is_the_aec_game(backend, n, reward):
    options = {"num_players": n, "backend": backend, "reward": reward}
    par = island_fortress_v0.parallel_env(**options)
    aec = island_fortress_v0.env(**options)
    observations, infos = par.reset(seed=100 + n)
    aec.reset(seed=100 + n)
    rng = np.random.default_rng(n)
    parallel_returns = dict.fromkeys(par.possible_agents, 0.0)
    aec_returns = dict.fromkeys(par.possible_agents, 0.0)
    while par.agents:
        assert aec.agent_selection == _mover(par)
        for agent in par.agents:
            view = aec.observe(agent)
            np.testing.assert_array_equal(observations[agent]["observation"], view["observation"])
            if agent == aec.agent_selection:
                np.testing.assert_array_equal(observations[agent]["action_mask"][:PASS], view["action_mask"])
            assert infos[agent] == aec.infos[agent]
        actions = _random_actions(par, observations, rng)
        observations, rewards, *_, infos = par.step(actions)
        _, reward, *_ = aec.last()  # what the AEC env hands the mover since its last turn
        aec_returns[aec.agent_selection] += reward
        aec.step(actions[aec.agent_selection])
        for agent in par.possible_agents:
            assert rewards[agent] == aec.rewards[agent]
            parallel_returns[agent] += rewards[agent]
    assert infos == aec.infos
    for agent in aec.agent_iter():  # the AEC env's dead steps hand out what is left
        _, reward, *_ = aec.last()
        aec_returns[agent] += reward
        aec.step(None)
    state, twin = par.game_state, aec.unwrapped.game_state
    assert state.score == twin.score and state.winners == twin.winners and state.log == twin.log
    assert parallel_returns == pytest.approx(aec_returns)
    if reward == "vp_delta":
        assert list(parallel_returns.values()) == pytest.approx([s / 50 for s in state.score])


def test_render_state_and_pickling_follow_the_aec_env():
    env = island_fortress_v0.parallel_env(num_players=3, render_mode="ansi", render_seat=1)
    env.reset(seed=4)
    aec = island_fortress_v0.env(num_players=3, render_mode="ansi", render_seat=1)
    aec.reset(seed=4)
    assert env.render() == aec.render()
    np.testing.assert_array_equal(env.state(), aec.state())
    copy = pickle.loads(pickle.dumps(env))
    copy.reset(seed=4)
    assert copy.render() == env.render()
    assert (copy.illegal_action, copy.render_mode) == ("raise", "ansi")


def test_registered_in_pettingzoos_parallel_registry():
    env = pettingzoo.make("parallel", island_fortress_v0.ENV_ID, num_players=4, illegal_action="terminate")
    assert isinstance(env, island_fortress_v0.raw_parallel_env)
    assert env.possible_agents == [f"player_{i}" for i in range(4)]
    assert env.illegal_action == "terminate"
