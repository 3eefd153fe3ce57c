"""The batched core and ``CoreState`` never crash the interpreter, whatever they are given.

* Two threads stepping one batch: the calls take turns (a lock per batch), 100 runs out of 100 end
  with every game consistent (no crash, no hang, no action outside the action space).
* ``threads`` is limited (``vector.MAX_THREADS``) and a thread that cannot start is an exception;
  ``num_games`` is checked against the memory available before anything is allocated.
* ``CoreState``'s arguments and pickles: ``test_core_state_safety.py``.

The checks that crashed or hung the interpreter before run in a forked child process, so a crash
fails the test instead of ending the test run.
"""

from __future__ import annotations

import contextlib
import os
import resource
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from island_fortress_env import core, vector
from island_fortress_env.core import memory
from island_fortress_env.engine import Game, SeedError, scoring, tables
from island_fortress_env.engine import actions as A
from tests.forked import check_isolated, isolated

pytestmark = pytest.mark.skipif(
    not core.available(), reason=f"the C++ core is not built ({core.build_error()})"
)

SANITIZED = "libasan" in os.environ.get("LD_PRELOAD", "")


# ---------------------------------------------------------------------------------------- threads


def _consistent(env: Any) -> None:
    """Every game's outputs are those of its state."""
    for i in range(env.num_games):
        state = env.state(i)
        player = state.current_player()
        assert env.player[i] == player, i
        assert env.mask[i].view(np.int8).tobytes() == state.action_mask().tobytes(), i
        assert env.obs[i].tobytes() == state.encode(player).tobytes(), i


def _two_threads(target: Callable[[int], None]) -> None:
    """``target(0)`` and ``target(1)`` on two threads at once, both joined."""
    workers = [threading.Thread(target=target, args=(k,)) for k in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()


def _hammer(seed: int) -> None:
    """Two threads step one batch (through ``VectorEnv`` and through the raw core batch)."""
    # in every other run the core's own threads too
    env = vector.make(48, num_players=(2, 3, 4), seed=seed, threads=1 + seed % 2)
    env.reset()
    problems: list[str] = []
    some = np.zeros(env.num_games, dtype=np.bool_)
    some[::5] = True

    def play(k: int) -> None:
        try:
            for j in range(20):
                actions = env.random_actions()
                if not ((actions >= 0) & (actions < A.NUM_ACTIONS)).all():
                    problems.append(f"random_actions gave {actions.tolist()}")
                with contextlib.suppress(ValueError):  # the other thread moved first: stale actions
                    env.step(actions)
                if j == 5 + k:
                    env.heuristic_actions(some)
                if j % 4 == k:
                    env.state(j % env.num_games)
                    env.score_gains()
                if j == 12 + k:
                    env.reset()
        except Exception:
            problems.append(traceback.format_exc())

    _two_threads(play)
    assert not problems, problems
    _consistent(env)

    # the core batch itself, called from two threads without VectorEnv
    batch = env._batch
    outs = [np.empty(env.num_games, dtype=np.int64) for _ in range(2)]

    def raw(k: int) -> None:
        try:
            for _ in range(15):
                batch.random_actions(outs[k])
                with contextlib.suppress(ValueError):
                    batch.step(outs[k], env.obs, env.mask, env.player, env.rewards, env.done)
                batch.state(k)
        except Exception:
            problems.append(traceback.format_exc())

    _two_threads(raw)
    assert not problems, problems
    _consistent(env)


def test_two_threads_stepping_one_batch_never_crash() -> None:
    failures = [f for f in (isolated(lambda s=seed: _hammer(s), timeout=30) for seed in range(100)) if f]
    assert not failures, f"{len(failures)} of 100 runs failed; the first: {failures[0]}"


# ---------------------------------------------------------------------------------------- threads=


def test_threads_are_limited_and_checked() -> None:
    def huge() -> None:
        started = time.monotonic()
        with pytest.raises(ValueError, match=r"threads must be 1\.\.256"):
            vector.make(4, threads=100_000)
        assert time.monotonic() - started < 1.0

    check_isolated(huge, timeout=20)
    assert vector.MAX_THREADS == 256
    for bad in (0, -1, vector.MAX_THREADS + 1, 2**31, 2**64):
        with pytest.raises(ValueError, match="threads"):
            vector.make(2, threads=bad)
    for bad in (True, False, 1.0, "2", None):
        with pytest.raises(TypeError, match="threads"):
            vector.make(2, threads=bad)
    env = vector.make(3, threads=vector.MAX_THREADS)  # more threads than games: some have none
    env.reset()
    env.step(env.random_actions())
    assert env.threads == vector.MAX_THREADS
    from island_fortress_env.core.state import _core, core_game

    assert _core.MAX_THREADS == vector.MAX_THREADS
    for bad in (0, vector.MAX_THREADS + 1):
        with pytest.raises(ValueError, match="threads"):
            _core.Batch([core_game(Game(num_players=2))], 0, bad, list(scoring.COMPONENT_INDEX))


def test_a_core_batch_refuses_calls_before_its_reset() -> None:
    def raw() -> None:
        from island_fortress_env.core.state import OBS_SIZE, _core, core_game

        batch = _core.Batch([core_game(Game(num_players=2))] * 3, 0, 2, list(scoring.COMPONENT_INDEX))
        out = np.zeros(3, dtype=np.int64)
        arrays = (
            np.zeros((3, OBS_SIZE), np.float32),
            np.zeros((3, A.NUM_ACTIONS), np.bool_),
            np.zeros(3, np.int32),
            np.zeros((3, tables.MAX_PLAYERS), np.float32),
            np.zeros(3, np.bool_),
        )
        for call in (
            lambda: batch.state(0),
            lambda: batch.random_actions(out),
            lambda: batch.heuristic_actions(out),
            lambda: batch.step(out, *arrays),
        ):
            with pytest.raises(RuntimeError, match="reset"):
                call()
        with pytest.raises((TypeError, ValueError)):
            _core.Batch([None], 0, 1, list(scoring.COMPONENT_INDEX))
        batch.reset(*arrays)
        batch.random_actions(out)
        batch.step(out, *arrays)
        assert batch.state(2).current_player() == arrays[2][2]

    check_isolated(raw, timeout=20)


@pytest.mark.skipif(SANITIZED, reason="AddressSanitizer reserves its own memory: no address-space limit")
def test_a_thread_that_cannot_start_is_an_error_not_a_hang() -> None:
    def limited() -> None:
        with open("/proc/self/status") as f:
            size = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize"))
        # Room for a few threads' stacks (8 MiB each), not for 256.
        resource.setrlimit(resource.RLIMIT_AS, (size + 48 * 2**20, resource.RLIM_INFINITY))
        started = time.monotonic()
        with pytest.raises(RuntimeError, match="thread"):
            vector.make(4, threads=256)
        assert time.monotonic() - started < 5.0

    check_isolated(limited, timeout=30)


# ---------------------------------------------------------------------------------------- num_games


def test_a_batch_too_large_for_the_memory_is_refused_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    def enormous() -> None:
        real = memory.available_memory
        for num_games in (10**7, 10**9):
            memory.available_memory = lambda: 2**30
            started = time.monotonic()
            with pytest.raises(MemoryError) as error:
                vector.make(num_games, num_players=(2, 3, 4))
            assert time.monotonic() - started < 1.0
            message = str(error.value)
            assert f"{num_games:,} games" in message and f"{2**30:,} bytes" in message, message
        memory.available_memory = real
        started = time.monotonic()
        with pytest.raises(MemoryError):  # the machine's own memory (no machine has 8 TB free)
            vector.make(10**9)
        assert time.monotonic() - started < 1.0

    check_isolated(enormous, timeout=20)
    for bad in (2**31, 2**64):
        with pytest.raises(ValueError, match=f"num_games must be 1..{vector.MAX_GAMES:,}"):
            vector.make(bad)
    for bad in (True, 2.0, "3", None):
        with pytest.raises(TypeError, match="num_games"):
            vector.make(bad)

    # What a game needs is counted: a batch that fits is made, one game more is refused.
    per_game = vector.game_bytes()
    assert 4_000 < per_game < 20_000
    monkeypatch.setattr(memory, "available_memory", lambda: 100 * per_game)
    vector.make(100)
    with pytest.raises(MemoryError, match="101 games"):
        vector.make(101)
    # The heuristic player's caches are counted on its first call, before they are made.
    monkeypatch.setattr(memory, "available_memory", lambda: 10**12)
    env = vector.make(50, seed=3)
    env.reset()
    monkeypatch.setattr(memory, "available_memory", lambda: 50 * per_game)
    with pytest.raises(MemoryError, match="heuristic"):
        env.heuristic_actions()
    env.step(env.random_actions())  # the batch plays on
    monkeypatch.setattr(memory, "available_memory", lambda: None)  # unknown: not checked
    env.step(env.heuristic_actions())
    # the Gymnasium view with the heuristic opponent counts them when it is made
    monkeypatch.setattr(memory, "available_memory", lambda: 60 * per_game)
    with pytest.raises(MemoryError, match="heuristic"):
        vector.make_gym(50, opponent="heuristic")
    vector.make_gym(50, opponent="random")


def test_the_memory_available_is_read_from_this_machine() -> None:
    available = memory.available_memory()
    assert available is None or 0 < available < 2**60


# ---------------------------------------------------------------------------------------- indexes


def test_vector_indexes_and_counts_refuse_booleans_and_huge_numbers() -> None:
    env = vector.make(4, seed=1)
    env.reset()
    for call in (env.state, env.episodes, env.game_seed, lambda i: env.set_players(i, 3)):
        for bad in (True, False, 1.5, "0", None):
            with pytest.raises(TypeError):
                call(bad)
        for bad in (4, -1, -5, 2**31, 2**63, 2**64, 10**30):
            with pytest.raises(IndexError, match="no game"):
                call(bad)
    for bad in (-1, 2**64, 10**30):
        with pytest.raises(ValueError, match="episode"):
            env.game_seed(0, bad)
    with pytest.raises(TypeError):
        env.game_seed(0, True)
    assert env.game_seed(3, 2**64 - 1) == env.game_seed(np.int64(3), np.uint64(2**64 - 1))
    assert env.state(np.int64(2)).score == env.state(2).score
    with pytest.raises(TypeError):
        env.set_players(0, True)
    with pytest.raises(ValueError):
        env.set_players(0, 5)
    env.set_players(0, np.int64(2))
    with pytest.raises(TypeError):
        vector.make(2, num_players=True)
    with pytest.raises(TypeError):
        vector.make(2, num_players=(True, 3))
    assert [g.num_players for g in vector.make(2, num_players=np.int64(4)).games] == [4, 4]


def test_with_block_is_checked_as_the_engine_checks_it() -> None:
    """The probe's arguments: a cell far off the wall, a seat far off the table, the seat after
    the last (which the core used to accept as an empty seat)."""

    def probe() -> None:
        game = Game(num_players=3)
        py = game.new_initial_state(4)
        cs = core.new_initial_state(game, 4)
        for cell, player in ((10**6, 0), (0, 99), (0, 3), (2**31, 0), (0, 2**63), (-(2**40), 0)):
            with pytest.raises(IndexError):
                py.with_block(cell, player)
            with pytest.raises(IndexError):
                cs.with_block(cell, player)
        for cell, player in ((0, -1), (-1, 0), (0, 3)):  # the engine reads -1 as a list does
            with pytest.raises(IndexError):
                cs.with_block(cell, player, governor=True)
        for cell, player in (("0", 0), (0, "0"), (1.0, 0), (None, 0)):
            with pytest.raises(TypeError):
                py.with_block(cell, player)
            with pytest.raises(TypeError):
                cs.with_block(cell, player)
        cells = len(game.geometry.cell_bits)
        for cell in (0, cells - 1):
            for player in (0, 2):
                for governor in (False, True):
                    a, b = py.with_block(cell, player, governor), cs.with_block(cell, player, governor)
                    assert a.score == b.score and a.own == b.own and a.log == b.log
        assert cs.with_block(True, True).own == py.with_block(1, 1).own  # True is 1, as in a list
        with pytest.raises(IndexError):
            cs.encode(2**31)
        with pytest.raises(IndexError):
            cs.encode(-1)
        with pytest.raises(ValueError, match="seat"):
            cs.redeal_unseen(2**31, 0)
        with pytest.raises(SeedError):
            cs.redeal_unseen(0, 2**64)

    check_isolated(probe, timeout=20)
