"""Determinism and clone independence.

The same seed and the same actions give the same game byte for byte (logs, scores, every
seat's observation and every state slot, compared without pickle); ``clone()`` gives an
independent state that continues exactly like the original. On both backends (``backend``:
the C++ core and the Python engine), except the tests that write a state's lists in place,
which only the engine's states allow.
"""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from island_fortress_env.core import Game
from island_fortress_env.engine import State
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.fields import StateFields
from island_fortress_env.env.observation import ObservationEncoder

ROOT = Path(__file__).resolve().parent.parent

VARIANTS = [
    {"num_players": 2},
    {"num_players": 3},
    {"num_players": 4},
    {"num_players": 3, "extra_region": True, "favor_trade_in": True, "first_round_incentive": "treasure"},
    {"num_players": 4, "unlimited_components": True, "start_laborers": 6, "no_replace": True},
]


def slots(state: State) -> dict:
    """Every public slot as plain data (lists as tuples; shared per-game objects by identity)
    and the event log, of an engine State or a CoreState."""
    out = {}
    for name in StateFields.__slots__:
        if name.startswith("_"):
            continue
        value = getattr(state, name)
        if name in ("game", "cfg", "geo"):
            out[name] = id(value)
        elif isinstance(value, list):
            out[name] = tuple(value)
        else:
            out[name] = value
    out["log"] = tuple(state.log)
    return out


def run(backend: str, options: dict, seed: int, chooser_seed: int, game: Game | None = None):
    """One game; returns (final state, action list, per-step observation bytes of every seat)."""
    game = game or Game(**options, backend=backend)
    encoder = ObservationEncoder(game)
    state = game.new_initial_state(seed)
    chooser = random.Random(chooser_seed)
    actions, views = [], []
    while not state.is_terminal():
        views.append(b"".join(encoder.encode(state, x).tobytes() for x in range(state.n)))
        action = chooser.choice(state.legal_actions())
        actions.append(action)
        state.apply_action(action)
    views.append(b"".join(encoder.encode(state, x).tobytes() for x in range(state.n)))
    return state, actions, views


@pytest.mark.parametrize("options", VARIANTS, ids=str)
def test_same_seed_and_actions_give_the_same_game(backend, options):
    game = Game(**options, backend=backend)
    a, actions_a, views_a = run(backend, options, 77, 5, game)
    b, actions_b, views_b = run(backend, options, 77, 5, game)  # the same Game object
    c, actions_c, views_c = run(backend, options, 77, 5)  # a fresh Game object
    for other, actions, views in ((b, actions_b, views_b), (c, actions_c, views_c)):
        assert actions == actions_a
        assert other.log == a.log
        assert other.score == a.score and other.winners == a.winners
        assert views == views_a
        sa, so = slots(a), slots(other)
        if other is c:  # a different Game object: compare its config instead of its identity
            for name in ("game", "cfg", "geo"):
                sa.pop(name), so.pop(name)
            assert other.cfg == a.cfg
        assert so == sa


@pytest.mark.parametrize("options", VARIANTS, ids=str)
def test_replaying_recorded_actions_reproduces_the_game(backend, options):
    original, actions, views = run(backend, options, 91, 3)
    game = Game(**options, backend=backend)
    encoder = ObservationEncoder(game)
    state = game.new_initial_state(91)
    for i, action in enumerate(actions):
        assert b"".join(encoder.encode(state, x).tobytes() for x in range(state.n)) == views[i]
        state.apply_action(action)
    assert state.is_terminal()
    assert state.log == original.log


def test_different_seeds_give_different_deals(backend):
    game = Game(num_players=3, backend=backend)
    deals = {tuple(game.new_initial_state(seed).drawn) for seed in range(20)}
    assert len(deals) == 20


def test_no_seed_means_seed_zero(backend):
    game = Game(num_players=3, backend=backend)
    assert slots(game.new_initial_state()) == slots(game.new_initial_state(0))


def _log_digest_in_subprocess(hash_seed: str, backend: str) -> str:
    code = (
        "import hashlib, random\n"
        "from island_fortress_env.core import Game\n"
        f"s = Game(num_players=4, favor_trade_in=True, backend={backend!r}).new_initial_state(12345)\n"
        "r = random.Random(6)\n"
        "while not s.is_terminal():\n"
        "    s.apply_action(r.choice(s.legal_actions()))\n"
        "print(hashlib.sha256(repr(s.log).encode()).hexdigest())\n"
    )
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def test_games_do_not_depend_on_hash_randomisation(backend):
    """No set or dict ordering leaks into the game: two interpreters with different hash
    seeds play the same game."""
    digests = {_log_digest_in_subprocess(h, backend) for h in ("1", "2")}
    state = Game(num_players=4, favor_trade_in=True, backend=backend).new_initial_state(12345)
    r = random.Random(6)
    while not state.is_terminal():
        state.apply_action(r.choice(state.legal_actions()))
    digests.add(hashlib.sha256(repr(state.log).encode()).hexdigest())
    assert len(digests) == 1


# --------------------------------------------------------------------------- clone()


def _mid_game(options: dict, seed: int, steps: int, backend: str = "python") -> State:
    state = Game(**options, backend=backend).new_initial_state(seed)
    chooser = random.Random(seed)
    for _ in range(steps):
        state.apply_action(chooser.choice(state.legal_actions()))
    state.legal_actions()
    return state


# Lists the engine shares between clones on purpose (replaced, never mutated in place);
# ``test_clone_shares_no_mutable_list`` covers them separately.
_SHARED_BY_DESIGN = ("last_bids", "_legal")


def _scribble(state: State) -> None:
    """Mutate every (unshared) list of a state in place."""
    for name in StateFields.__slots__:
        value = getattr(state, name)
        if isinstance(value, list) and name not in _SHARED_BY_DESIGN:
            if value and isinstance(value[0], int):
                value[0] += 1
            value.append(99)


@pytest.mark.parametrize("options", VARIANTS, ids=str)
def test_mutating_a_clone_leaves_the_original_unchanged(options):
    original = _mid_game(options, 3, 150)
    before = slots(original)
    clone = original.clone()
    assert slots(clone) == before
    _scribble(clone)
    clone.occ |= 1
    clone.own[0] |= 1 << 70
    clone.score[0] += 10
    assert slots(original) == before


@pytest.mark.parametrize("options", VARIANTS, ids=str)
def test_mutating_the_original_leaves_a_clone_unchanged(options):
    original = _mid_game(options, 4, 150)
    clone = original.clone()
    before = slots(clone)
    _scribble(original)
    assert slots(clone) == before


def test_clone_shares_no_mutable_list():
    """A clone must not share a mutable list with its original. ``clone()`` shares
    ``last_bids`` and the memoised ``legal_actions()``, both tuples: a caller cannot change
    what the ORIGINAL state offers (or its order) through the clone."""
    original = _mid_game({"num_players": 3}, 5, 40)
    assert original.last_bids is not None
    clone = original.clone()
    shared = [
        name
        for name in StateFields.__slots__
        if isinstance(getattr(original, name), list) and getattr(original, name) is getattr(clone, name)
    ]
    assert shared == [], f"clone() shares these lists with the original: {shared}"
    for legal in (original.legal_actions(), clone.legal_actions()):
        assert isinstance(legal, tuple) and isinstance(original.last_bids, tuple)
        with pytest.raises(TypeError):
            legal[0] = legal[-1]


def _sealing_bids(backend: str) -> State:
    """A state of round 2 or later while bids are sealed, one of them already in: the bids
    are written in place as they come, and ``last_bids`` holds the previous round's."""
    state = Game(num_players=3, backend=backend).new_initial_state(5)
    chooser = random.Random(5)
    while not (state.round >= 2 and state.decision == Decision.PETITION_BID and state.order_pos >= 1):
        state.apply_action(chooser.choice(state.legal_actions()))
    assert state.last_bids is not None
    return state


def _through_next_petition(state: State, seed: int) -> None:
    """Play ``state`` on until the next petition reveals new bids (``last_bids`` replaced): the
    last sealed bid resolves the petition and ends the bidding."""
    chooser = random.Random(seed)
    while state.decision == Decision.PETITION_BID:
        state.apply_action(chooser.choice(state.legal_actions()))


def test_playing_the_original_past_a_petition_leaves_the_clone_as_it_was(backend):
    """The shared tuples are replaced, never changed in place: the original moves on through
    a petition (new ``last_bids``, new legal actions) and its clone still offers what it did."""
    original = _sealing_bids(backend)
    legal, last_bids = original.legal_actions(), original.last_bids
    clone = original.clone()
    before = slots(clone)
    _through_next_petition(original, 1)
    assert original.last_bids != last_bids
    assert slots(clone) == before
    assert clone.legal_actions() == legal and clone.last_bids == last_bids


def test_playing_a_clone_past_a_petition_leaves_the_original_as_it_was(backend):
    original = _sealing_bids(backend)
    legal, last_bids = original.legal_actions(), original.last_bids
    before = slots(original)
    clone = original.clone()
    _through_next_petition(clone, 2)
    assert clone.last_bids != last_bids
    assert slots(original) == before
    assert original.legal_actions() == legal and original.last_bids == last_bids


@pytest.mark.parametrize("options", VARIANTS, ids=str)
def test_playing_on_a_clone_leaves_the_original_unchanged(backend, options):
    original = _mid_game(options, 6, 100, backend)
    before = slots(original)
    clone = original.clone()
    chooser = random.Random(1)
    while not clone.is_terminal():
        clone.apply_action(chooser.choice(clone.legal_actions()))
    assert slots(original) == before
    assert not original.is_terminal()


@pytest.mark.parametrize("options", VARIANTS, ids=str)
def test_a_clone_continues_identically(backend, options):
    """Clone at several points; original and clone then take the same actions and stay equal
    slot for slot, to the end of the game."""
    game = Game(**options, backend=backend)
    state = game.new_initial_state(8)
    encoder = ObservationEncoder(game)
    chooser = random.Random(8)
    clones: list[tuple[State, random.Random]] = []
    step = 0
    while not state.is_terminal():
        if step % 97 == 0:
            c = state.clone()
            assert slots(c) == slots(state)
            clones.append(c)
        action = chooser.choice(state.legal_actions())
        state.apply_action(action)
        for c in clones:
            c.apply_action(action)
        step += 1
    assert len(clones) >= 3
    for c in clones:
        assert c.is_terminal()
        assert slots(c) == slots(state)
        for x in range(state.n):
            assert encoder.encode(c, x).tobytes() == encoder.encode(state, x).tobytes()


def test_clone_of_a_terminal_state(backend):
    state, _, _ = run(backend, {"num_players": 2}, 1, 1)
    clone = state.clone()
    assert clone.is_terminal() and clone.returns() == state.returns()
    assert slots(clone) == slots(state)
