"""The batched core and ``CoreState`` never crash the interpreter, whatever they are given.

* Two threads stepping one batch: the calls take turns (a lock per batch), 100 runs out of 100 end
  with every game consistent (no crash, no hang, no action outside the action space).
* ``CoreState``'s methods check their arguments as the engine's ``State`` does, side by side on the
  same arguments (Hypothesis throws out-of-range, negative, huge, boolean and non-integer ones).
* ``threads`` is limited (``vector.MAX_THREADS``) and a thread that cannot start is an exception;
  ``num_games`` is checked against the memory available before anything is allocated.
* ``CoreState`` pickles and deep-copies, and the copy plays on as the engine's state does.

The checks that crashed or hung the interpreter before run in a forked child process, so a crash
fails the test instead of ending the test run.
"""

from __future__ import annotations

import contextlib
import copy
import gc
import operator
import os
import pickle
import random
import resource
import signal
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_core_differential import FIELDS, _random_prefix, assert_same, snapshot

from island_fortress_env import core, vector
from island_fortress_env.engine import Game, SeedError, scoring, tables
from island_fortress_env.engine import actions as A
from island_fortress_env.engine.state import IllegalActionError
from island_fortress_env.engine.visibility import redeal_unseen
from island_fortress_env.env.global_state import encode_global_state
from island_fortress_env.env.observation import ObservationEncoder, action_mask

pytestmark = pytest.mark.skipif(
    not core.available(), reason=f"the C++ core is not built ({core.build_error()})"
)

SANITIZED = "libasan" in os.environ.get("LD_PRELOAD", "")


def isolated(fn: Callable[[], None], timeout: float = 60.0) -> str | None:
    """Runs ``fn()`` in a forked child process; None when it returned, else why not (its
    traceback, the signal that ended it, or that it hung past ``timeout`` seconds)."""
    if not hasattr(os, "fork"):  # pragma: no cover - every platform the core builds on forks
        fn()
        return None
    read, write = os.pipe()
    gc.freeze()  # the child's collections skip the parent's objects: no copying of their pages
    pid = os.fork()
    if pid:
        gc.unfreeze()
    else:  # the child: report and leave without running the parent's exit handlers
        os.close(read)
        status = 0
        try:
            fn()
        except BaseException:
            os.write(write, traceback.format_exc()[-8000:].encode())
            status = 1
        os._exit(status)
    os.close(write)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read)
            return f"hung for more than {timeout:.0f} s"
        time.sleep(0.002)
    with os.fdopen(read, "rb") as pipe:
        report = pipe.read().decode(errors="replace")
    if os.WIFSIGNALED(status):
        return f"crashed: {signal.Signals(os.WTERMSIG(status)).name}"
    if os.WEXITSTATUS(status):
        return report or f"exited with status {os.WEXITSTATUS(status)}"
    return None


def check_isolated(fn: Callable[[], None], timeout: float = 60.0) -> None:
    failure = isolated(fn, timeout)
    assert failure is None, failure


def outcome(fn: Callable[[], Any]) -> Any:
    """``fn()``'s result, or the type of the exception it raised."""
    try:
        return fn()
    except Exception as exc:
        return type(exc)


def raised(result: Any) -> bool:
    return isinstance(result, type) and issubclass(result, BaseException)


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
        real = vector._available_memory  # type: ignore[attr-defined]
        for num_games in (10**7, 10**9):
            vector._available_memory = lambda: 2**30  # type: ignore[attr-defined]
            started = time.monotonic()
            with pytest.raises(MemoryError) as error:
                vector.make(num_games, num_players=(2, 3, 4))
            assert time.monotonic() - started < 1.0
            message = str(error.value)
            assert f"{num_games:,} games" in message and f"{2**30:,} bytes" in message, message
        vector._available_memory = real  # type: ignore[attr-defined]
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
    monkeypatch.setattr(vector, "_available_memory", lambda: 100 * per_game)
    vector.make(100)
    with pytest.raises(MemoryError, match="101 games"):
        vector.make(101)
    # The heuristic player's caches are counted on its first call, before they are made.
    monkeypatch.setattr(vector, "_available_memory", lambda: 10**12)
    env = vector.make(50, seed=3)
    env.reset()
    monkeypatch.setattr(vector, "_available_memory", lambda: 50 * per_game)
    with pytest.raises(MemoryError, match="heuristic"):
        env.heuristic_actions()
    env.step(env.random_actions())  # the batch plays on
    monkeypatch.setattr(vector, "_available_memory", lambda: None)  # unknown: not checked
    env.step(env.heuristic_actions())
    # the Gymnasium view with the heuristic opponent counts them when it is made
    monkeypatch.setattr(vector, "_available_memory", lambda: 60 * per_game)
    with pytest.raises(MemoryError, match="heuristic"):
        vector.make_gym(50, opponent="heuristic")
    vector.make_gym(50, opponent="random")


def test_the_memory_available_is_read_from_this_machine() -> None:
    available = vector._available_memory()
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


# ---------------------------------------------------------------------------------------- fuzz

_WEIRD = st.one_of(
    st.integers(min_value=-6, max_value=90),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([2**31 - 1, 2**31, 2**32, 2**63 - 1, 2**63, 2**64, -(2**31) - 1, -(2**63), 10**30]),
    st.booleans(),
    st.integers(min_value=-3, max_value=5).map(np.int64),
    st.sampled_from([None, "1", 1.5, 2.0, (), b"\x00"]),
)


def _index(value: Any, size: int) -> bool:
    """Whether ``value`` is an index the core takes: an integer in 0..size-1 (True is 1)."""
    try:
        return 0 <= operator.index(value) < size
    except TypeError:
        return False


def _same(py: Any, cs: Any) -> None:
    for name in FIELDS:
        assert getattr(cs, name) == getattr(py, name), name
    assert cs.legal_actions() == py.legal_actions()


def _fuzz_every_method(num_players: int, seed: int, steps: int, x: Any, y: Any, z: Any) -> None:
    py, cs = _random_prefix(num_players, seed, steps)
    game = py.game
    before = cs.clone()
    n, cells = py.n, len(game.geometry.cell_bits)

    # with_block(cell, player, governor)
    governor = bool(z) if isinstance(z, bool | int) else z
    expected = outcome(lambda: py.with_block(x, y, governor))
    got = outcome(lambda: cs.with_block(x, y, governor))
    if _index(x, cells) and _index(y, n):
        if raised(expected):
            assert got is expected, (x, y, governor)
        else:
            _same(expected, got)
    elif raised(expected):
        assert got is expected, (x, y, governor)
    else:  # the engine read a negative index from the end, or a seat it does not check
        assert got in (IndexError, TypeError), (x, y, governor)

    # encode(seat)
    expected = outcome(lambda: ObservationEncoder(game).encode(py, x))
    got = outcome(lambda: cs.encode(x))
    if _index(x, n):
        assert got.tobytes() == expected.tobytes()
    elif raised(expected):
        assert got is expected, x
    else:
        assert got is IndexError, x

    # redeal_unseen(seat, seed), as engine.visibility.redeal_unseen redeals an engine state
    expected = outcome(lambda: redeal_unseen(py, x, y))
    got = outcome(lambda: cs.redeal_unseen(x, y))
    via = outcome(lambda: redeal_unseen(cs, x, y))
    if _index(x, n) and not raised(expected):
        _same(expected, got)
        _same(expected, via)
    elif raised(expected):
        assert got is expected and via is expected, (x, y)
    else:  # a seat that is no integer (1.5): the engine compares it with every seat
        assert got is ValueError and via is ValueError, (x, y)

    # the methods the engine and the core share as Python code, and apply_action
    for name, args in (
        ("blocks_built", (x,)),
        ("owner_at", (x,)),
        ("action_to_string", (x,)),
    ):
        if name == "owner_at" and isinstance(x, int) and x > 2**16:
            assert cs.owner_at(x) is None  # no cell there (the engine would make a 2**x integer)
            continue
        expected = outcome(lambda name=name, args=args: getattr(py, name)(*args))
        got = outcome(lambda name=name, args=args: getattr(cs, name)(*args))
        assert got == expected or (raised(expected) and got is expected), (name, args, got, expected)
    expected = outcome(lambda: py.clone().apply_action(x))
    got = outcome(lambda: cs.clone().apply_action(x))
    assert got is expected or (expected is None and got is None), x

    # the state itself never changed, and still reads as the engine's
    _same(py, cs)
    _same(before, cs)
    assert cs.log == py.log
    encoder = ObservationEncoder(game)
    assert cs.action_mask().tobytes() == action_mask(py).tobytes()
    assert cs.global_state().tobytes() == encode_global_state(py, encoder).tobytes()
    assert cs.returns() == py.returns() and cs.component_totals() == py.component_totals()
    assert pickle.loads(pickle.dumps(cs)).legal_actions() == py.legal_actions()


@settings(max_examples=60, deadline=None)
@given(
    num_players=st.sampled_from(tables.PLAYER_COUNTS),
    seed=st.integers(min_value=0, max_value=2**64 - 1),
    steps=st.integers(min_value=0, max_value=400),
    x=_WEIRD,
    y=_WEIRD,
    z=_WEIRD,
)
def _fuzz(num_players: int, seed: int, steps: int, x: Any, y: Any, z: Any) -> None:
    _fuzz_every_method(num_players, seed, steps, x, y, z)


def test_fuzzed_arguments_to_every_core_state_method_act_as_in_the_engine() -> None:
    check_isolated(_fuzz, timeout=120)


# ---------------------------------------------------------------------------------------- pickling


def _both(num_players: int, seed: int, steps: int) -> tuple[Any, Any, random.Random]:
    """The differential test's random prefix on both backends (Favor Trade-in on), and a
    generator to play on with."""
    py, cs = _random_prefix(num_players, seed, steps)
    return py, cs, random.Random(seed + 1)


def _play_on_alike(py: Any, cs: Any, pick: random.Random) -> None:
    encoder = ObservationEncoder(py.game)
    step = 0
    while True:
        if step % 40 == 0 or py.is_terminal():
            assert_same(py, cs, encoder, step)
        else:
            assert cs.legal_actions() == py.legal_actions() and cs.score == py.score, step
        if py.is_terminal():
            return
        action = pick.choice(py.legal_actions())
        py.apply_action(action)
        cs.apply_action(action)
        step += 1


@settings(max_examples=10, deadline=None)
@given(
    num_players=st.sampled_from(tables.PLAYER_COUNTS),
    seed=st.integers(min_value=0, max_value=2**64 - 1),
    steps=st.integers(min_value=0, max_value=500),
)
def test_a_pickled_core_state_is_the_engines_state_of_the_same_history(
    num_players: int, seed: int, steps: int
) -> None:
    py, cs, pick = _both(num_players, seed, steps)
    copies = [
        pickle.loads(pickle.dumps(cs)),
        pickle.loads(pickle.dumps(cs, protocol=0)),
        copy.deepcopy(cs),
        copy.copy(cs),
    ]
    for other in copies:
        assert type(other) is type(cs) and other is not cs and other._s is not cs._s
        _same(py, other)
        assert other.log == py.log
    engine_copy = pickle.loads(pickle.dumps(py))
    core_copy = copies[0]
    state = pick.getstate()
    _play_on_alike(engine_copy, core_copy, pick)  # both copies play on as one game
    pick.setstate(state)
    _play_on_alike(py, cs, pick)  # and the originals were never touched by them
    assert cs.score == core_copy.score


def test_every_kind_of_core_state_pickles() -> None:
    py, cs, _ = _both(3, 11, 120)
    looked = cs.with_block(3, 1)  # an agent's look-ahead copy
    redealt = cs.redeal_unseen(2, 99)
    again = redealt.with_block(4, 0, True).redeal_unseen(1, 2**64 - 1)
    for state in (looked, redealt, again):
        other = pickle.loads(pickle.dumps(state))
        assert snapshot(other) == snapshot(state)
        assert copy.deepcopy(state).legal_actions() == state.legal_actions()
    assert snapshot(pickle.loads(pickle.dumps(looked))) == snapshot(py.with_block(3, 1))

    env = vector.make(3, num_players=(2, 3, 4), seed=5)
    env.reset()
    for _ in range(300):
        env.step(env.random_actions())
    for i in range(3):
        state = env.state(i)  # batched games log their setup only: so do their copies
        other = pickle.loads(pickle.dumps(state))
        assert snapshot(other) == snapshot(state) and len(other.log) == 1
        assert other.encode(other.current_player()).tobytes() == env.obs[i].tobytes()


def test_a_damaged_pickle_is_an_error_not_a_crash() -> None:
    from island_fortress_env.core import state as core_state

    def damaged() -> None:
        game = Game(num_players=2)
        _, cs, _ = _both(2, 7, 40)
        _, args = cs.__reduce__()
        rebuild = core_state._rebuild
        assert rebuild(*args).legal_actions() == cs.legal_actions()
        game_arg, seed, history, logging = args
        for bad in (
            history[:-1],  # an odd number of bytes
            b"\x7b\x01" + history,  # 379 first: illegal at the start
            history + b"\x00\x7f",  # an action id out of the action space
            history + b"\xff\xff",  # an operation cut short
            history + b"\xff\xff\x00\x10\x00\x00\x00\x00",  # with_block on cell 4096
            history + b"\xfe\xff\x09\x00" + b"\x00" * 8,  # a redeal for seat 9
            history + b"\x80\x80",  # no such operation
        ):
            with pytest.raises(ValueError, match="history"):
                rebuild(game_arg, seed, bad, logging)
        with pytest.raises(TypeError):
            rebuild(game, seed, list(history), logging)
        with pytest.raises(SeedError):
            rebuild(game, -1, history, logging)

    check_isolated(damaged, timeout=20)


def test_the_engines_bad_actions_still_raise_its_errors() -> None:
    _, cs, _ = _both(2, 3, 10)
    for bad in (True, -1, A.NUM_ACTIONS, 2**64, "1", None):
        with pytest.raises(IllegalActionError):
            cs.apply_action(bad)
