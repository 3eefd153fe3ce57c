"""``CoreState`` acts as the engine's ``State`` on any argument, and pickles.

* Its methods check their arguments as the engine's ``State`` does, side by side on the same
  arguments (Hypothesis throws out-of-range, negative, huge, boolean and non-integer ones).
* It pickles and deep-copies, and the copy plays on as the engine's state does; a damaged pickle
  is an error, not a crash.

The checks that crashed or hung the interpreter before run in a forked child process
(``tests/forked.py``), so a crash fails the test instead of ending the test run.
"""

from __future__ import annotations

import copy
import operator
import pickle
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_core_differential import FIELDS, _random_prefix, assert_same, snapshot

from island_fortress_env import core, vector
from island_fortress_env.engine import Game, SeedError, tables
from island_fortress_env.engine import actions as A
from island_fortress_env.engine.state import IllegalActionError
from island_fortress_env.engine.visibility import redeal_unseen
from island_fortress_env.env.global_state import encode_global_state
from island_fortress_env.env.observation import ObservationEncoder, action_mask
from tests.forked import check_isolated, outcome, raised

pytestmark = pytest.mark.skipif(
    not core.available(), reason=f"the C++ core is not built ({core.build_error()})"
)


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
    py, cs = _random_prefix({"num_players": num_players, "favor_trade_in": True}, seed, steps)
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
    py, cs = _random_prefix({"num_players": num_players, "favor_trade_in": True}, seed, steps)
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
