"""PettingZoo's registry: ``pettingzoo.make("aec", ENV_ID, ...)`` after importing
``island_fortress_v0`` is the environment ``island_fortress_v0.env(...)`` gives, options and all,
and it passes PettingZoo's own checks (``make("parallel", ...)``: tests/test_parallel_env.py)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, performance_benchmark, render_test
from pettingzoo.utils import wrappers

from island_fortress_env import island_fortress_v0
from island_fortress_env.engine import ConfigError
from island_fortress_env.env.order_enforcing import OrderEnforcingWrapper

ROOT = Path(__file__).resolve().parent.parent
ENV_ID = island_fortress_v0.ENV_ID


def test_the_id_is_pettingzoos_namespace_name_version_form():
    spec = pettingzoo.spec("aec", ENV_ID)
    assert (spec.namespace, spec.name, spec.version) == ("island_fortress", "IslandFortress", 0)
    assert pettingzoo.spec("parallel", ENV_ID).entry_point.endswith(":parallel_env")  # the PASS view


def test_make_gives_the_wrapped_env():
    env = pettingzoo.make("aec", ENV_ID, num_players=3)
    assert isinstance(env, OrderEnforcingWrapper)
    raw = env.unwrapped
    assert isinstance(raw, island_fortress_v0.raw_env)
    assert raw.possible_agents == ["player_0", "player_1", "player_2"]
    env.reset(seed=5)
    same = island_fortress_v0.env(num_players=3)
    same.reset(seed=5)
    assert np.array_equal(env.observe("player_0")["observation"], same.observe("player_0")["observation"])
    assert pettingzoo.make("aec", "island_fortress/IslandFortress").unwrapped.game.num_players == 3


def test_make_passes_every_option_through():
    env = pettingzoo.make(
        "aec",
        ENV_ID,
        num_players=4,
        reward="vp_delta",
        render_mode="ansi",
        render_seat=2,
        illegal_action="terminate",
        no_replace=True,
        extra_jade=2,
    )
    raw = env.unwrapped
    assert raw.game.num_players == 4
    assert (raw.reward_mode, raw.render_mode, raw.render_seat) == ("vp_delta", "ansi", 2)
    assert raw.game.config.variants == {"no_replace": True, "extra_jade": 2}
    layers = []
    while env is not raw:
        layers.append(type(env))
        env = env.env
    assert wrappers.TerminateIllegalWrapper in layers


def test_make_rejects_an_unknown_option_naming_it():
    with pytest.raises(ConfigError, match=r"unknown option\(s\) \['players'\]"):
        pettingzoo.make("aec", ENV_ID, players=3)


def test_importing_island_fortress_v0_registers_and_the_engine_imports_no_rl_library():
    code = (
        "import sys, pettingzoo\n"
        "assert 'island_fortress/IslandFortress-v0' not in pettingzoo.aec_registry\n"
        "import island_fortress_env.engine\n"
        "assert 'island_fortress/IslandFortress-v0' not in pettingzoo.aec_registry\n"
        "from island_fortress_env import island_fortress_v0\n"
        "env = pettingzoo.make('aec', 'island_fortress/IslandFortress-v0', num_players=2)\n"
        "print(env.unwrapped.game.num_players)\n"
    )
    assert _python(code) == "2"
    alone = (
        "import sys, island_fortress_env.engine\nprint(sorted({'numpy', 'pettingzoo'} & set(sys.modules)))"
    )
    assert _python(alone) == "[]"


def _python(code: str) -> str:
    """Run ``code`` in a fresh interpreter; its standard output."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_pettingzoo_api_test_on_the_made_env():
    api_test(pettingzoo.make("aec", ENV_ID, num_players=3), num_cycles=300)


def test_pettingzoo_render_test_on_the_made_env(monkeypatch):
    pytest.importorskip("PIL", reason="pictures need the [render] extra (Pillow)")
    pytest.importorskip("pygame", reason="the window needs the [render] extra (pygame-ce)")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setitem(island_fortress_v0.raw_env.metadata, "render_fps", 1000)
    made = []

    def env_fn(render_mode=None):
        made.append(pettingzoo.make("aec", ENV_ID, num_players=3, render_mode=render_mode))
        return made[-1]

    render_test(env_fn)
    assert sorted(e.unwrapped.render_mode for e in made) == ["ansi", "human", "human", "rgb_array"]


class _Clock:
    """A stand-in for ``time``: each reading is 0.01 s after the last, so the benchmark's
    5 seconds are 500 cycles of work, whatever the machine's speed."""

    def __init__(self) -> None:
        self.now = 0.0

    def time(self) -> float:
        self.now += 0.01
        return self.now


def test_pettingzoo_performance_benchmark_on_the_made_env(monkeypatch, capsys):
    benchmark = importlib.import_module("pettingzoo.test.performance_benchmark")  # the module
    monkeypatch.setattr(benchmark, "time", _Clock())
    env = pettingzoo.make("aec", ENV_ID, num_players=3)
    performance_benchmark(env)
    out = capsys.readouterr().out
    assert "turns per second" in out and "Finished performance benchmark" in out
    assert env.unwrapped.game_state.round >= 1
