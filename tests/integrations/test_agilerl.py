"""AgileRL's PettingZoo route: its IPPO over the game's Parallel API, trained by its own
``train_multi_agent_on_policy`` (examples/agilerl_ippo.py), on the PettingZoo it pins (<1.27,
where ``island_fortress_v0`` registers nothing)."""

from __future__ import annotations

import pytest

pytest.importorskip("agilerl", reason="AgileRL is an optional extra: pip install '.[agilerl]'")

import numpy as np
import pettingzoo
import torch
from pettingzoo.test import parallel_api_test

from island_fortress_env import island_fortress_v0

from .conftest import load_example


@pytest.fixture(scope="module")
def example():
    return load_example("agilerl_ippo")


def test_agilerls_pettingzoo_is_below_the_registry_and_the_env_imports_there():
    version = tuple(int(p) for p in pettingzoo.__version__.split(".")[:2])
    assert version < (1, 27) and not island_fortress_v0.REGISTERED


@pytest.mark.parametrize("n", [2, 4])
def test_the_view_agilerl_reads_passes_pettingzoos_parallel_api_test(example, n):
    # PettingZoo's test reads masks only inside observations: it samples unmasked actions here,
    # so it plays the mode in which an illegal action ends the game.
    parallel_api_test(example.make_env(n, illegal_action="terminate"), num_cycles=200)
    env = example.make_env(n)
    observations, infos = env.reset(seed=1)
    mover = [a for a in env.agents if infos[a]["action_mask"][island_fortress_v0.PASS] == 0]
    assert len(mover) == 1  # one seat to move; the others' masks hold only PASS
    assert all(o.shape == (env.observation_space(a).shape[0],) for a, o in observations.items())


def test_ippo_learns_through_agilerls_trainer_and_plays_only_legal_actions(example):
    untrained = example.build_agent(players=3, learn_step=64, seed=2)
    before = [p.detach().clone() for p in untrained.actors["player"].parameters()]
    agent = example.train(players=3, steps=128, seed=2)
    after = list(agent.actors["player"].parameters())
    assert set(agent.actors) == {"player"}  # one shared policy for the seats' group
    assert any(not torch.equal(b, a) for b, a in zip(before, after, strict=True))
    result = example.play(agent, players=3, games=1, seed=3)
    assert result["games"] == 1 and result["decisions"] > 50  # every one checked legal in play()


def test_the_policy_never_picks_a_masked_action_even_when_one_is_legal(example):
    agent = example.build_agent(players=2, learn_step=64, seed=4)
    agent.set_training_mode(False)
    env = example.make_env(2)
    observations, infos = env.reset(seed=5)
    for _ in range(30):
        batched = {a: o[np.newaxis] for a, o in observations.items()}
        chosen, *_ = agent.get_action(obs=batched, infos=infos)
        actions = {a: int(np.asarray(chosen[a]).ravel()[0]) for a in env.agents}
        for a, action in actions.items():
            assert infos[a]["action_mask"][action] == 1
        observations, _, _, _, infos = env.step(actions)
