"""``vector.make(..., backend=...)``: one switch between the C++ core's batch and the Python
engine's, which play the same games from the same seed; and nothing outside the ``vector``
package chooses between the two classes or reaches into its modules."""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from island_fortress_env import core, vector
from island_fortress_env.engine import Game
from island_fortress_env.engine.results import game_result
from island_fortress_env.players.runner import result_at

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "island_fortress_env" / "vector"
needs_core = pytest.mark.skipif(not core.available(), reason="the C++ core is not built")


def _both(num_games: int, **kwargs):
    """The C++ batch and the Python engine's, made alike."""
    return vector.make(num_games, backend="core", **kwargs), vector.make(
        num_games, backend="python", **kwargs
    )


# --------------------------------------------------------------------------- the switch


def test_make_gives_the_batch_of_the_backend_asked_for(backend):
    batch = vector.make(3, num_players=2, seed=1, backend=backend)
    assert batch.backend == backend and batch.num_games == 3
    assert (backend == "core") == isinstance(batch, vector.VectorEnv)
    auto = vector.make(3, num_players=2, seed=1)
    assert auto.backend == ("core" if core.available() else "python")


def test_without_the_core_auto_is_the_python_engine_with_a_warning_and_core_an_error(monkeypatch):
    monkeypatch.setattr(core, "available", lambda: False)
    with pytest.warns(RuntimeWarning, match="C\\+\\+ core is not built.*Python engine") as caught:
        batch = vector.make(2, num_players=3, seed=0)
    assert batch.backend == "python" and len(caught) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert vector.resolve_backend("auto", warn=False) == "python"
        assert vector.make(2, backend="python").backend == "python"
    with pytest.raises(RuntimeError, match=r"not built.*backend='python'"):
        vector.make(2, backend="core")


@needs_core
def test_with_the_core_auto_is_the_core_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert vector.resolve_backend() == "core" and vector.make(2).backend == "core"


@pytest.mark.parametrize("bad", ["cpp", "", None, 1, "Core"])
def test_an_unknown_backend_is_refused(bad):
    with pytest.raises(ValueError, match="backend must be one of"):
        vector.make(2, backend=bad)


def test_both_backends_refuse_the_same_arguments(backend):
    from island_fortress_env.engine import ConfigError, SeedError

    for kwargs, error in [
        ({"num_players": (2, 5)}, ValueError),
        ({"num_players": True}, TypeError),
        ({"seed": -1}, SeedError),
        ({"no_such_option": True}, ConfigError),
    ]:
        with pytest.raises(error):
            vector.make(2, backend=backend, **kwargs)
    for count in (0, vector.MAX_GAMES + 1, True):
        with pytest.raises((ValueError, TypeError), match="num_games"):
            vector.make(count, backend=backend)
    with pytest.raises(RuntimeError):
        vector.make(2, backend=backend).step(np.zeros(2, dtype=np.int64))


# --------------------------------------------------------------------------- the same games


@needs_core
@pytest.mark.parametrize("batch_seed", [0, 7, 2**63 + 5])
def test_batch_game_seed_is_the_cores_seed_of_every_episode(batch_seed):
    from island_fortress_env.core.state import _core

    for index, episode in [(0, 0), (3, 0), (0, 9), (1000, 2**40)]:
        assert vector.batch_game_seed(batch_seed, index, episode) == _core.game_seed(
            batch_seed, index, episode
        )


@needs_core
@pytest.mark.parametrize("options", [{}, {"no_replace": True, "favor_trade_in": True, "start_blocks": 2}])
def test_both_backends_play_the_same_games_step_for_step(options):
    """Mixed tables, sizes changed and seeds chosen between episodes, random and heuristic moves:
    every array the two batches return is equal at every step, the final results included."""
    c, p = _both(6, num_players=(2, 3, 4), seed=11, **options)
    for batch in (c, p):
        batch.set_seed(1, 12345)  # before the first episode: its deal
        batch.set_players(4, 2)
    c.reset(), p.reset()
    rng = np.random.default_rng(0)
    ended = 0
    for step in range(1500):
        assert np.array_equal(c.obs, p.obs) and np.array_equal(c.mask, p.mask)
        assert np.array_equal(c.player, p.player)
        heuristic = rng.random(6) < 0.5
        chosen = [batch.random_actions(~heuristic) for batch in (c, p)]
        moved = [batch.heuristic_actions(heuristic) for batch in (c, p)]
        assert np.array_equal(chosen[0], chosen[1]) and np.array_equal(moved[0], moved[1])
        actions = np.where(heuristic, moved[0], chosen[0])
        if step % 200 == 0:
            for batch in (c, p):
                batch.set_seed(step % 6, 1000 + step)
                batch.set_players((step + 1) % 6, 2 + step % 3)
        c.step(actions), p.step(actions)
        assert np.array_equal(c.done, p.done) and np.array_equal(c.rewards, p.rewards)
        assert np.array_equal(c.score_gains(), p.score_gains())
        for slot in np.flatnonzero(c.done).tolist():
            ended += 1
            assert result_at(c.final, slot) == result_at(p.final, slot)
        assert [g.num_players for g in c.games] == [g.num_players for g in p.games]
        assert [c.game_seed(i) for i in range(6)] == [p.game_seed(i) for i in range(6)]
    assert ended >= 6


def test_every_backends_final_results_are_the_engines_record_of_the_game(backend):
    batch = vector.make(2, num_players=3, seed=4, backend=backend)
    batch.reset()
    seeds = [batch.game_seed(i) for i in range(2)]
    assert seeds == [vector.batch_game_seed(4, i, 0) for i in range(2)]
    taken: list[list[int]] = [[], []]
    results = {}
    while len(results) < 2:
        actions = batch.random_actions()
        for i in range(2):
            if i not in results:
                taken[i].append(int(actions[i]))
        batch.step(actions)
        for i in np.flatnonzero(batch.done).tolist():
            results.setdefault(i, result_at(batch.final, i))
    for i, result in results.items():
        state = Game(num_players=3).new_initial_state(seeds[i])
        for action in taken[i]:
            state.apply_action(action)
        assert result == game_result(state, seeds[i], len(taken[i]))


def test_every_backend_refuses_an_illegal_action_and_changes_nothing(backend):
    batch = vector.make(2, num_players=2, seed=1, backend=backend)
    batch.reset()
    before = batch.obs.copy()
    illegal = int(np.flatnonzero(~batch.mask[1])[0])
    with pytest.raises(ValueError, match="game 1"):
        batch.step(np.array([batch.random_actions()[0], illegal]))
    assert np.array_equal(before, batch.obs)


# --------------------------------------------------------------------------- one switch


def _sources() -> list[Path]:
    """Every Python file of the project outside the ``vector`` package (this test's own aside)."""
    found = []
    for folder in ("island_fortress_env", "training", "tests", "examples", "docs"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if PACKAGE not in path.parents and path != Path(__file__).resolve():
                found.append(path)
    return found


def test_nothing_outside_the_vector_package_names_its_classes_or_imports_its_modules():
    """Only ``vector.make`` chooses the batch: no module elsewhere names the Python engine's batch
    class or imports one of the package's own modules (the package re-exports what is public)."""
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    assert {"common", "core_batch", "engine_batch", "gym"} <= modules
    twin = "Engine" + "VectorEnv"
    attribute = re.compile(r"\bvector\.(" + "|".join(sorted(modules)) + r")\b")
    offenders = []
    for path in _sources():
        text = path.read_text("utf-8")
        where = path.relative_to(ROOT)
        for number, line in enumerate(text.splitlines(), start=1):
            if twin in line or attribute.search(line):
                offenders.append(f"{where}:{number}: {line.strip()}")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            for name in names:
                if name.startswith("island_fortress_env.vector.") and name.split(".")[2] in modules:
                    offenders.append(f"{where}:{node.lineno}: imports {name}")
    assert offenders == []
