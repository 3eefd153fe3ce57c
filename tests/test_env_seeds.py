"""``env.reset(seed=...)`` follows the engine's seed rule (docs/RULES.md E26): an integer in
[0, 2**64), numpy integers included, or None; anything else is a ``SeedError`` that leaves the
environment as it was. Every seed that was valid before gives the same game as before."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils import seeding

from island_fortress_env import island_fortress_v0
from island_fortress_env.cli import app as cli
from island_fortress_env.core import Game
from island_fortress_env.engine import SeedError

INTEGER_SEEDS = [0, 1, 42, 2**31, 2**32 + 7, 2**63 - 1, 2**63, 2**64 - 1]


def _deal(env) -> tuple:
    state = env.unwrapped.game_state
    return (state.rng, tuple(state.drawn), tuple(state.favor_hand), tuple(state.jade), state.current_player())


@pytest.mark.parametrize("seed", INTEGER_SEEDS)
def test_integer_seeds_give_the_game_gymnasium_seeding_gave(backend, seed):
    """The game of a seed is still the one derived through Gymnasium's generator, unchanged."""
    env = island_fortress_v0.env(backend=backend, num_players=3)
    env.reset(seed=seed)
    generator, _ = seeding.np_random(seed)
    expected = Game(backend=backend, num_players=3).new_initial_state(int(generator.integers(0, 2**63 - 1)))
    state = env.unwrapped.game_state
    assert state.rng == expected.rng and state.drawn == expected.drawn and state.order == expected.order


@pytest.mark.parametrize(
    "seed", [np.int64(3), np.uint64(3), np.int32(3), np.uint8(3)], ids=lambda s: type(s).__name__
)
def test_numpy_integer_seeds_are_the_same_as_python_ints(backend, seed):
    plain, numpy = island_fortress_v0.env(backend=backend), island_fortress_v0.env(backend=backend)
    plain.reset(seed=3)
    numpy.reset(seed=seed)
    assert _deal(numpy) == _deal(plain)


def test_the_largest_numpy_seed_is_accepted(backend):
    plain, numpy = island_fortress_v0.env(backend=backend), island_fortress_v0.env(backend=backend)
    plain.reset(seed=2**64 - 1)
    numpy.reset(seed=np.uint64(2**64 - 1))
    assert _deal(numpy) == _deal(plain)


BAD_SEEDS = [True, False, 2**64, 2**70, -1, np.int64(-1), 3.0, np.float64(3.0), "3", [3], 1 + 0j]


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_other_seeds_are_refused_and_change_nothing(backend, seed):
    env = island_fortress_v0.env(backend=backend, num_players=3)
    env.reset(seed=5)
    env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    before = _deal(env)
    generator = env.unwrapped.np_random.bit_generator.state
    with pytest.raises(SeedError, match="invalid seed"):
        env.reset(seed=seed)
    assert _deal(env) == before and env.unwrapped.np_random.bit_generator.state == generator


def test_none_continues_the_environments_generator(backend):
    env = island_fortress_v0.env(backend=backend)
    env.reset(seed=9)
    first = _deal(env)
    env.reset()
    assert _deal(env) != first


@pytest.mark.parametrize("command", ["play", "demo"])
@pytest.mark.parametrize("seed", [str(2**64), str(2**70)])
def test_the_command_line_refuses_seeds_outside_the_rule(command, seed, capsys):
    argv = [command, "--seed", seed] + (["--agents", "random"] if command == "play" else [])
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1
    assert "--seed" in err and "must be in [0, 2**64)" in err
