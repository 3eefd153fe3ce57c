"""One API, two backends: ``core.Game(backend=...)`` and ``island_fortress_v0.env(backend=...)``.

The default is the C++ core where it is built and the Python engine otherwise, with exactly one
warning per process; an unknown backend, or the core where it is not built, is one clear
``ConfigError``. Both backends give the same environment, step for step and byte for byte, and a
core state's fields cannot be written.
"""

from __future__ import annotations

import copy
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from island_fortress_env import core, island_fortress_v0
from island_fortress_env.engine import ConfigError, State

ROOT = Path(__file__).resolve().parent.parent
needs_core = pytest.mark.skipif(
    not core.available(), reason=f"the C++ core is not built ({core.build_error()})"
)


@needs_core
def test_the_default_backend_is_the_core_where_it_is_built():
    from island_fortress_env.core.state import CoreState

    assert core.default_backend() == "core"
    game = core.Game(num_players=3)
    assert game.backend == "core" and type(game.new_initial_state(1)) is CoreState
    env = island_fortress_v0.env(num_players=3)
    env.reset(seed=1)
    assert env.unwrapped.backend == "core" and type(env.unwrapped.game_state) is CoreState
    assert "backend='core'" in repr(game)


def test_the_python_backend_gives_engine_states(backend):
    game = core.Game(num_players=2, backend=backend)
    state = game.new_initial_state(3)
    assert game.backend == backend
    assert (type(state) is State) == (backend == "python")
    assert isinstance(game, core.Game) and game.num_players == 2


@pytest.mark.parametrize("bad", ["rust", "Core", "", None.__class__, 1, True, ("core",)], ids=repr)
def test_an_unknown_backend_is_a_config_error_naming_the_choices(bad):
    for make in (
        lambda: core.Game(num_players=3, backend=bad),
        lambda: island_fortress_v0.env(num_players=3, backend=bad),
        lambda: island_fortress_v0.raw_env(num_players=3, backend=bad),
    ):
        with pytest.raises(ConfigError, match=r"backend must be one of \('core', 'python'\)"):
            make()


def test_the_registry_passes_the_backend_through(backend):
    import pettingzoo

    env = pettingzoo.make("aec", island_fortress_v0.ENV_ID, num_players=2, backend=backend)
    assert env.unwrapped.backend == backend


def _without_the_core(code: str) -> subprocess.CompletedProcess:
    """Runs ``code`` in a fresh interpreter where the C++ extension cannot be imported."""
    prelude = "import sys\nsys.modules['island_fortress_env.core._core'] = None  # as if not built\n"
    env = dict(os.environ, PYTHONWARNINGS="default")
    return subprocess.run(
        [sys.executable, "-c", prelude + code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_without_the_core_the_default_is_python_with_one_warning():
    code = (
        "import warnings\n"
        "from island_fortress_env import core, island_fortress_v0\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    games = [core.Game(num_players=3) for _ in range(3)]\n"
        "    envs = [island_fortress_v0.env(num_players=n) for n in (2, 3, 4)]\n"
        "    for env in envs:\n"
        "        env.reset(seed=1)\n"
        "        for agent in env.agent_iter():\n"
        "            obs, _, term, trunc, _ = env.last()\n"
        "            env.step(None if term or trunc else int(obs['action_mask'].nonzero()[0][0]))\n"
        "print(core.available(), [g.backend for g in games], [e.unwrapped.backend for e in envs])\n"
        "print(type(envs[0].unwrapped.game_state).__name__, envs[0].unwrapped.game_state.is_terminal())\n"
        "for w in caught:\n"
        "    print('WARNING', w.category.__name__, w.message)\n"
    )
    out = _without_the_core(code)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "False ['python', 'python', 'python'] ['python', 'python', 'python']"
    assert lines[1] == "State True"
    warnings = [line for line in lines if line.startswith("WARNING")]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("WARNING RuntimeWarning the C++ core of island_fortress_env is not built (")
    assert "pip install -e ." in warnings[0] and "backend='python'" in warnings[0]


def test_without_the_core_asking_for_it_is_a_clear_error_and_python_warns_nothing():
    code = (
        "import warnings\n"
        "warnings.simplefilter('error')\n"
        "from island_fortress_env import core, island_fortress_v0\n"
        "assert core.Game(num_players=3, backend='python').backend == 'python'\n"
        "island_fortress_v0.env(num_players=3, backend='python').reset(seed=0)\n"
        "for make in (lambda: core.Game(num_players=3, backend='core'),\n"
        "             lambda: island_fortress_v0.env(num_players=3, backend='core')):\n"
        "    try:\n"
        "        make()\n"
        "    except core.ConfigError as exc:\n"
        "        print('ERROR', exc)\n"
    ).replace("core.ConfigError", "ValueError")
    out = _without_the_core(code)
    assert out.returncode == 0, out.stderr
    errors = out.stdout.splitlines()
    assert len(errors) == 2
    for line in errors:
        assert line.startswith("ERROR backend='core': the C++ core is not built (")
        assert "pip install -e ." in line


@needs_core
def test_a_core_states_fields_refuse_writes_and_stay_as_they_were():
    state = core.Game(num_players=3).new_initial_state(2)
    before = (state.score, state.own, state.deck, state.favor_hand)
    writes = (
        lambda: state.score.__setitem__(0, 5),
        lambda: state.deck.append(1),
        lambda: state.own.extend([1]),
        lambda: state.favor_hand.pop(),
        lambda: state.jade.sort(),
        lambda: state.deck.__delitem__(0),
    )
    for write in writes:
        with pytest.raises(TypeError, match=r"read-only.*backend='python'"):
            write()
    scores = state.score
    with pytest.raises(TypeError, match="read-only"):
        scores += [1]
    with pytest.raises(AttributeError):
        state.jade = [1, 2, 3]  # type: ignore[misc]
    assert (state.score, state.own, state.deck, state.favor_hand) == before
    assert state.score == [0, 0, 0] and state.score[:] == [0, 0, 0] and type(state.score[:]) is list
    assert type(list(state.deck)) is list and type(state.deck.copy()) is list
    for copied in (copy.deepcopy(state.deck), pickle.loads(pickle.dumps(state.deck))):
        assert copied == state.deck and type(copied) is list
    assert json.loads(json.dumps(state.jade)) == state.jade


def _steps(backend: str, n: int, seed: int, **options) -> list:
    """Every step of a random game through the env: the agent, the last() tuple, the rewards,
    every seat's observation and the global state, as comparable values."""
    env = island_fortress_v0.env(num_players=n, backend=backend, reward="vp_delta", **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = []
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        views = b"".join(env.unwrapped.observe(a)["observation"].tobytes() for a in env.agents)
        out.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, term, trunc))
        out.append((dict(info), dict(env.rewards), views, env.state().tobytes()))
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return out


@needs_core
@pytest.mark.parametrize(
    "n,options",
    [(2, {}), (3, {"favor_trade_in": True}), (4, {"unlimited_components": True, "extra_jade": 120})],
)
def test_the_env_steps_alike_on_either_backend(n, options):
    assert _steps("core", n, 30 + n, **options) == _steps("python", n, 30 + n, **options)
