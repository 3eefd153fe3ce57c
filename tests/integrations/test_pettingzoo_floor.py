"""The package on the lowest PettingZoo pyproject.toml allows (``make test-pettingzoo-floor``:
.venv-pzfloor, ``PZ_FLOOR`` the version installed there): ``island_fortress_v0`` imports, registers
itself only where PettingZoo has registries (1.27 on), and both views pass PettingZoo's API tests
and play whole games. Elsewhere (``make test``) the same checks run on the PettingZoo installed."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, parallel_api_test

from island_fortress_env import island_fortress_v0

FLOOR = os.environ.get("PZ_FLOOR")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:3])


def test_the_floor_venv_holds_the_floor_version():
    if FLOOR is None:
        pytest.skip("PZ_FLOOR is set by make test-pettingzoo-floor")
    assert pettingzoo.__version__ == FLOOR


def test_the_module_registers_exactly_where_pettingzoo_has_registries():
    has_registry = hasattr(pettingzoo, "register")
    assert has_registry == (_version(pettingzoo.__version__) >= (1, 27))
    assert island_fortress_v0.REGISTERED is has_registry
    if has_registry:
        assert island_fortress_v0.ENV_ID in pettingzoo.aec_registry
        assert island_fortress_v0.ENV_ID in pettingzoo.parallel_registry


def test_a_fresh_process_imports_the_module_without_a_warning_or_an_error():
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", "from island_fortress_env import island_fortress_v0"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr


@pytest.mark.parametrize("n", [2, 4])
def test_both_views_pass_pettingzoos_api_tests(n):
    api_test(island_fortress_v0.env(num_players=n), num_cycles=300)
    parallel_api_test(island_fortress_v0.parallel_env(num_players=n), num_cycles=300)


def test_a_whole_game_plays_through_the_aec_view():
    env = island_fortress_v0.env(num_players=3)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    steps = 0
    for _agent in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        legal = np.flatnonzero(observation["action_mask"])
        env.step(None if termination or truncation else int(rng.choice(legal)))
        steps += 1
    assert steps > 100 and env.unwrapped.game_state.is_terminal()
