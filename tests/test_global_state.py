"""PettingZoo's global state (``env.state()``, ``env.state_space``) and the per-step infos, on both
backends (the C++ core and the Python engine)."""

from __future__ import annotations

import numpy as np
import pytest

from island_fortress_env import island_fortress_v0
from island_fortress_env.engine.visibility import redeal_unseen
from island_fortress_env.env import aec
from island_fortress_env.env.aec import INFO_KEYS
from island_fortress_env.env.global_state import (
    DECK_START,
    GLOBAL_LAYOUT,
    POSITION_START,
    STATE_SIZE,
    TO_MOVE_START,
)
from island_fortress_env.env.observation import OBS_SIZE


def _play(env, seed: int, every_step) -> None:
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    every_step(env)
    for _agent in env.agent_iter(max_iter=10_000):
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if env.agents:
            every_step(env)


def test_layout_covers_the_vector_without_gaps():
    end = 0
    for _name, start, size in GLOBAL_LAYOUT:
        assert start == end
        end = start + size
    assert end == STATE_SIZE


@pytest.mark.parametrize("n", [2, 3, 4])
def test_state_is_every_seat_view_plus_the_deck_and_the_mover(backend, n):
    env = island_fortress_v0.env(backend=backend, num_players=n, favor_trade_in=True)
    raw = env.unwrapped
    assert env.state_space.shape == (STATE_SIZE,) and env.state_space.dtype == np.float32
    checked = []

    def check(e):
        state = raw.game_state
        g = e.state()
        assert g.dtype == np.float32 and g.shape == (STATE_SIZE,)
        assert e.state_space.contains(g)
        for seat in range(4):
            block = g[seat * OBS_SIZE : (seat + 1) * OBS_SIZE]
            if seat < n:
                expected = raw.observe(f"player_{seat}")["observation"]
                np.testing.assert_array_equal(block, expected)
            else:
                assert not block.any(), "an absent seat's block must be zero"
        in_deck = np.flatnonzero(g[DECK_START:POSITION_START]).tolist()
        assert in_deck == sorted(state.deck)
        if state.deck:
            top = state.deck[-1]
            assert g[POSITION_START + top] == pytest.approx(1 / 36)
            assert g[POSITION_START + state.deck[0]] == pytest.approx(len(state.deck) / 36)
        mover = g[TO_MOVE_START : TO_MOVE_START + 4]
        if state.is_terminal():
            assert not mover.any()
        else:
            assert mover.tolist() == [float(s == state.current_player()) for s in range(4)]
        checked.append(state.is_terminal())

    _play(env, seed=n, every_step=check)
    assert checked[-1], "the final state was not checked"


def test_state_holds_what_a_seat_cannot_see(backend):
    """Dealing the other hands and the deck again (what seat 0 cannot see) changes seat 0's
    observation not at all, but changes the global state: a centralised critic sees every hand."""
    env = island_fortress_v0.env(backend=backend, num_players=3)
    env.reset(seed=4)
    raw = env.unwrapped
    for _ in range(200):  # past the setup keeps: everyone holds a hand
        if raw.game_state.favor_hand[1] and raw.game_state.deck:
            break
        env.step(raw.game_state.legal_actions()[0])
    state = raw.game_state
    before_obs = raw.observe("player_0")["observation"].copy()
    before = env.state()
    raw.game_state = redeal_unseen(state, 0, seed=1)
    assert raw.game_state.favor_hand[1] != state.favor_hand[1]
    np.testing.assert_array_equal(raw.observe("player_0")["observation"], before_obs)
    assert not np.array_equal(env.state(), before)


def test_state_before_reset_is_one_clear_error():
    raw = island_fortress_v0.raw_env(num_players=2)
    with pytest.raises(RuntimeError, match="before reset"):
        raw.state()


@pytest.mark.parametrize("reward", ["win_loss", "vp_delta"])
def test_infos_have_the_same_numeric_keys_at_every_step(backend, reward):
    env = island_fortress_v0.env(backend=backend, num_players=3, reward=reward)
    raw = env.unwrapped
    steps = []

    def check(e):
        state = raw.game_state
        over = state.is_terminal()
        for agent in e.agents:  # (agents leave one by one once the game is over)
            i = raw.agent_name_mapping[agent]
            info = e.infos[agent]
            assert tuple(info) == INFO_KEYS
            assert all(type(v) is int for v in info.values())
            assert info["score"] == state.score[i]
            assert info["won"] == (int(i in state.winners) if over else 0)
        steps.append(over)

    _play(env, seed=21, every_step=check)
    assert steps[0] is False and steps[-1] is True and len(steps) > 100


def test_stepping_never_computes_the_global_state(backend, monkeypatch):
    def refuse(*_args):
        raise AssertionError("the global state was computed without state() being called")

    monkeypatch.setattr(aec, "encode_global_state", refuse)
    env = island_fortress_v0.env(backend=backend, num_players=2)
    _play(env, seed=3, every_step=lambda e: e.last())
    with pytest.raises(AssertionError, match="without state"):
        env.state()
