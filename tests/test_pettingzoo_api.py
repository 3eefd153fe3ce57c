"""The PettingZoo AEC environment: the official API and seed tests for every table size and
variant, identical spaces everywhere, the reward modes, rendering, action strings, agent
names and seeding, on both backends (the C++ core and the Python engine)."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.test import api_test, seed_test

from island_fortress_env import island_fortress_v0
from island_fortress_env.engine import NUM_ACTIONS, State
from island_fortress_env.engine.scoring import win_share
from island_fortress_env.env.observation import OBS_SIZE

CONFIGS = [
    {"num_players": 2},
    {"num_players": 3},
    {"num_players": 4},
    {"num_players": 3, "no_replace": True},
    {"num_players": 3, "extra_region": True},
    {"num_players": 4, "extra_region": True},
    {"num_players": 2, "extra_jade": 6, "start_laborers": 4, "start_convicts": 4, "start_blocks": 3},
    {"num_players": 4, "extra_jade": 10, "start_laborers": 12, "start_convicts": 20, "start_blocks": 18},
    {"num_players": 3, "first_round_incentive": "wall_block"},
    {"num_players": 3, "first_round_incentive": "buyback_chip"},
    {"num_players": 2, "first_round_incentive": "treasure"},
    {"num_players": 3, "favor_trade_in": True},
    {"num_players": 4, "unlimited_components": True},
    {"num_players": 2, "no_replace": True, "favor_trade_in": True, "unlimited_components": True},
]
IDS = ["-".join(f"{k}={v}" for k, v in c.items()) for c in CONFIGS]


def _random_game(env, seed: int, picker_seed: int | None = None):
    """Play one whole game with random legal actions; return the per-agent reward totals
    (the sum of what ``last()`` hands each agent) and the number of steps."""
    rng = np.random.default_rng(seed if picker_seed is None else picker_seed)
    env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    steps = 0
    for agent in env.agent_iter(max_iter=10_000):
        obs, reward, termination, truncation, _info = env.last()
        totals[agent] += reward
        if termination or truncation:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(rng.choice(legal)))
        steps += 1
    assert env.agents == [], "the game did not end"
    return totals, steps


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_pettingzoo_api_test(backend, config):
    env = island_fortress_v0.env(backend=backend, **config)
    api_test(env, num_cycles=600)


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_pettingzoo_seed_test(backend, config):
    seed_test(lambda: island_fortress_v0.env(backend=backend, **config), num_cycles=600)


def test_spaces_are_identical_for_every_table_and_variant():
    reference = island_fortress_v0.env(num_players=3)
    obs_space = reference.observation_space("player_0")
    act_space = reference.action_space("player_0")
    assert isinstance(obs_space, spaces.Dict)
    assert obs_space["observation"].shape == (OBS_SIZE,)
    assert obs_space["observation"].dtype == np.float32
    assert obs_space["action_mask"].shape == (NUM_ACTIONS,)
    assert act_space == spaces.Discrete(NUM_ACTIONS)
    for config in CONFIGS:
        env = island_fortress_v0.env(**config)
        for agent in env.possible_agents:
            assert env.observation_space(agent) == obs_space, config
            assert env.action_space(agent) == act_space, config


@pytest.mark.parametrize("n", [2, 3, 4])
def test_agent_names_and_engine_state(backend, n):
    env = island_fortress_v0.env(backend=backend, num_players=n)
    assert env.possible_agents == [f"player_{i}" for i in range(n)]
    env.reset(seed=1)
    assert env.agents == env.possible_agents
    assert env.num_agents == n
    state = env.unwrapped.game_state
    assert env.unwrapped.backend == backend
    assert type(state).__name__ == {"core": "CoreState", "python": "State"}[backend]
    assert isinstance(state, State) == (backend == "python")
    assert state.n == n
    assert env.agent_selection == f"player_{state.current_player()}"
    obs, *_ = env.last()
    assert np.flatnonzero(obs["action_mask"]).tolist() == list(state.legal_actions())
    env.step(state.legal_actions()[0])
    assert env.unwrapped.game_state is state, "the engine state object is replaced on step"
    assert env.agent_selection == f"player_{state.current_player()}"


# --------------------------------------------------------------------------- rewards


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_win_loss_rewards(backend, n, seed):
    env = island_fortress_v0.env(backend=backend, num_players=n, reward="win_loss")
    totals, _ = _random_game(env, seed)
    state = env.unwrapped.game_state
    assert abs(sum(totals.values())) < 1e-9, "win/loss rewards must sum to zero"
    winners = [f"player_{w}" for w in state.winners]
    if len(winners) == 1:
        assert totals[winners[0]] == pytest.approx(1.0)
        for agent in env.possible_agents:
            if agent not in winners:
                assert totals[agent] == pytest.approx(-1.0 / (n - 1))
    # docs/RULES.md E23: share = 1/k for each of k tied winners, share * n/(n-1) - 1/(n-1)
    k = len(winners)
    for seat, agent in enumerate(env.possible_agents):
        share = 1.0 / k if agent in winners else 0.0
        assert win_share(state.winners, seat) == share  # the share every figure of a game's win counts
        assert totals[agent] == pytest.approx(share * n / (n - 1) - 1.0 / (n - 1))
    assert totals == pytest.approx(dict(zip(env.possible_agents, state.returns(), strict=True)))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_score_margin_rewards(backend, n):
    env = island_fortress_v0.env(backend=backend, num_players=n, reward="score_margin")
    totals, _ = _random_game(env, 5)
    score = env.unwrapped.game_state.score
    for i, agent in enumerate(env.possible_agents):
        best_other = max(score[j] for j in range(n) if j != i)
        assert totals[agent] == pytest.approx((score[i] - best_other) / 50)


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("config", [{}, {"favor_trade_in": True, "first_round_incentive": "treasure"}])
def test_vp_delta_rewards_add_up_to_the_final_score(backend, n, config):
    env = island_fortress_v0.env(backend=backend, num_players=n, reward="vp_delta", **config)
    totals, _ = _random_game(env, 6)
    state = env.unwrapped.game_state
    assert any(state.score), "a game without any score does not test vp_delta"
    for i, agent in enumerate(env.possible_agents):
        assert totals[agent] == pytest.approx(state.score[i] / 50, abs=1e-9)


def test_final_infos_hold_score_and_won(backend):
    env = island_fortress_v0.env(backend=backend, num_players=3)
    env.reset(seed=8)
    rng = np.random.default_rng(8)
    infos = {}
    for agent in env.agent_iter(max_iter=10_000):
        obs, _, termination, truncation, info = env.last()
        if termination or truncation:
            infos[agent] = dict(info)
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    state = env.unwrapped.game_state
    assert set(infos) == set(env.possible_agents)
    assert state.winners
    for i, agent in enumerate(env.possible_agents):
        assert infos[agent] == {"score": state.score[i], "won": int(i in state.winners)}


# --------------------------------------------------------------------------- rendering and text


def test_render_ansi_returns_the_wall(backend):
    env = island_fortress_v0.env(backend=backend, num_players=4, render_mode="ansi")
    env.reset(seed=3)
    for _ in range(120):
        obs, *_ = env.last()
        env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
    text = env.render()
    assert isinstance(text, str)
    for marker in ("Region 1", "Region 3", "L1", "L4", "Round"):
        assert marker in text
    state = env.unwrapped.game_state
    assert state.occ, "no block was built: the render check below would be empty"
    lines = [line for line in text.splitlines() if line.strip().startswith("L")]
    built = sum(line.count(c) for line in lines for c in "ABCDabcdG")
    assert built == state.occ.bit_count(), "the rendered wall does not show every block"


@pytest.mark.filterwarnings("ignore:.*render_mode")
def test_render_without_mode_returns_none():
    env = island_fortress_v0.env(num_players=2)
    env.reset(seed=3)
    assert env.render() is None


@pytest.mark.parametrize("config", CONFIGS[:6] + CONFIGS[11:12], ids=IDS[:6] + IDS[11:12])
def test_action_to_string_for_every_legal_action(backend, config):
    env = island_fortress_v0.env(backend=backend, **config)
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    raw = env.unwrapped
    for _agent in env.agent_iter(max_iter=10_000):
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        texts = [raw.action_to_string(int(a)) for a in legal]
        assert all(isinstance(t, str) and t.strip() for t in texts)
        assert len(set(texts)) == len(texts), f"two legal actions read the same: {texts}"
        env.step(int(rng.choice(legal)))


# --------------------------------------------------------------------------- seeding


def _trajectory(env, seed: int, steps: int = 150) -> list[bytes]:
    env.reset(seed=seed)
    out = []
    for _ in range(steps):
        obs, *_ = env.last()
        out.append(obs["observation"].tobytes() + obs["action_mask"].tobytes())
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[len(out) % len(legal)]))
    return out


@pytest.mark.parametrize("n", [2, 3, 4])
def test_reset_with_seed_is_reproducible(backend, n):
    a = island_fortress_v0.env(backend=backend, num_players=n)
    b = island_fortress_v0.env(backend=backend, num_players=n)
    assert _trajectory(a, 21) == _trajectory(b, 21)
    assert _trajectory(a, 21) == _trajectory(a, 21), "the same env replays differently"
    assert _trajectory(a, 21) != _trajectory(a, 22), "different seeds give the same game"


def test_reset_without_seed_continues_the_seeded_generator(backend):
    a = island_fortress_v0.env(backend=backend, num_players=3)
    b = island_fortress_v0.env(backend=backend, num_players=3)
    a.reset(seed=5)
    b.reset(seed=5)
    first = list(a.unwrapped.game_state.deck)
    a.reset()
    b.reset()
    assert list(a.unwrapped.game_state.deck) == list(b.unwrapped.game_state.deck)
    assert list(a.unwrapped.game_state.deck) != first
