"""Our OrderEnforcingWrapper behaves exactly as PettingZoo's (it only forwards faster)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from pettingzoo.utils import wrappers

from island_fortress_env import island_fortress_v0
from island_fortress_env.env.order_enforcing import FORWARDED, OrderEnforcingWrapper


def test_env_is_an_order_enforcing_wrapper():
    env = island_fortress_v0.env()
    assert isinstance(env, OrderEnforcingWrapper)
    assert isinstance(env, wrappers.OrderEnforcingWrapper)
    assert str(env) == "island_fortress_v0"
    terminate = island_fortress_v0.env(illegal_action="terminate")
    assert isinstance(terminate, OrderEnforcingWrapper)
    assert isinstance(terminate.env, wrappers.AssertOutOfBoundsWrapper)


@pytest.mark.parametrize("name", FORWARDED)
def test_attributes_before_reset_raise_as_pettingzoo_does(name):
    ours = island_fortress_v0.env()
    stock = wrappers.OrderEnforcingWrapper(island_fortress_v0.raw_env())
    messages = []
    for env in (ours, stock):
        with pytest.raises(AttributeError) as err:
            getattr(env, name)
        messages.append(str(err.value))
        assert not hasattr(env, name)
    assert messages[0] == messages[1]


@pytest.mark.parametrize("call", ["last", "step", "agent_iter", "observe", "render"])
def test_calls_before_reset_fail_as_pettingzoo_does(call):
    args = {"step": (0,), "observe": ("player_0",)}.get(call, ())
    outcomes = []
    for env in (island_fortress_v0.env(), wrappers.OrderEnforcingWrapper(island_fortress_v0.raw_env())):
        with pytest.raises(Exception) as err:
            getattr(env, call)(*args)
        outcomes.append((type(err.value), str(err.value)))
    assert outcomes[0] == outcomes[1]


def test_forwarded_attributes_are_the_wrapped_envs_objects():
    env = island_fortress_v0.env()
    env.reset(seed=0)
    raw = env.unwrapped
    for name in FORWARDED:
        assert getattr(env, name) is getattr(raw, name)
    assert env.num_agents == 3
    with pytest.raises(AttributeError):
        env.agents = []  # read-only: the stock wrapper would silently shadow the env's list


def test_agent_iter_still_demands_a_step_between_agents():
    env = island_fortress_v0.env()
    env.reset(seed=0)
    it = iter(env.agent_iter())
    next(it)
    with pytest.raises(AssertionError, match="need to call step"):
        next(it)


@pytest.mark.parametrize("illegal_action", ["raise", "terminate"])
def test_a_game_through_ours_equals_one_through_pettingzoos(backend, illegal_action):
    """Same seed, same actions: every ``last()`` and reward is identical with either wrapper."""
    ours = island_fortress_v0.env(backend=backend, num_players=3, illegal_action=illegal_action)
    inner = island_fortress_v0.env(backend=backend, num_players=3, illegal_action=illegal_action).env
    stock = wrappers.OrderEnforcingWrapper(inner)
    rng = random.Random(5)
    for env in (ours, stock):
        env.reset(seed=11)
    steps = 0
    for agent_a, agent_b in zip(ours.agent_iter(), stock.agent_iter(), strict=False):
        assert agent_a == agent_b
        last_a, last_b = ours.last(), stock.last()
        obs_a, *rest_a = last_a
        obs_b, *rest_b = last_b
        assert rest_a == rest_b
        for key in ("observation", "action_mask"):
            assert np.array_equal(obs_a[key], obs_b[key])
        assert ours.rewards == stock.rewards and ours.agents == stock.agents
        action = None
        if not (rest_a[1] or rest_a[2]):
            action = int(rng.choice(np.flatnonzero(obs_a["action_mask"])))
            steps += 1
        ours.step(action)
        stock.step(action)
    assert steps > 100 and not ours.agents and not stock.agents
