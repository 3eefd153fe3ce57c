"""The C++ core against the Python engine: the same games, step by step, byte for byte.

Seeded random games are played through both backends with the same actions, over every table
size and every variant (and a custom favor deck); at every step the legal actions, the player
and decision, every field a reader may read, the event log, the generator state, every seat's
observation bytes, the action mask and the global state must be identical. Hypothesis then
throws action ids (legal, illegal, out of range, not integers) and seeds (valid and not) at the
core: it never crashes, raises what the engine raises and leaves the state unchanged.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from differential import FIELDS, configs
from hypothesis import given
from hypothesis import strategies as st

from island_fortress_env import core
from island_fortress_env.engine import Game, tables
from island_fortress_env.engine import actions as A
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.state import IllegalActionError, State
from island_fortress_env.env.global_state import encode_global_state
from island_fortress_env.env.observation import ObservationEncoder, action_mask

pytestmark = pytest.mark.skipif(
    not core.available(), reason=f"the C++ core is not built ({core.build_error()})"
)


VARIANTS: tuple[dict[str, Any], ...] = (
    {},
    {"no_replace": True},
    {"extra_region": True},
    {"extra_jade": 6, "start_laborers": 4, "start_convicts": 3, "start_blocks": 2},
    {"first_round_incentive": "wall_block"},
    {"first_round_incentive": "buyback_chip"},
    {"first_round_incentive": "treasure"},
    {"favor_trade_in": True},
    {"unlimited_components": True},
    {"unlimited_components": True, "extra_jade": 250_000, "favor_trade_in": True},
    # the core's bound on every count, with and without unlimited components
    {"unlimited_components": True, "extra_jade": 10**15, "start_laborers": 10**15, "start_convicts": 10**15},
    {"extra_jade": 10**15, "start_laborers": 10**15, "start_convicts": 10**15, "start_blocks": 18},
    {"favor_deck": "custom"},
)

_PATTERNS = (
    ["X"], ["XX"], ["X", "X"], ["XXX"], ["X.", ".X"], [".X", "X."], ["XX", "XX"], ["X..", "XXX"],
    ["X.X", "XXX"], ["XXX", "X.X", "XXX"], ["X", "X", "X"], [".X.", "XXX"],
)  # fmt: skip
_REWARDS = (
    {"income": 3}, {"petition": 3}, {"jade": 10}, {"vp": 10}, {"treasure": 3}, {"buyback_chips": 2},
    {"convicts": 6}, {"laborers": 6}, {"wall_blocks": 3}, {"vp": 4, "jade": 2, "laborers": 1},
)  # fmt: skip


def write_deck(path: Path, cards: int = 24) -> Path:
    """A custom favor deck with the largest rewards the deck rules allow (so counts pass the
    observation's Box and are clipped)."""
    deck = {
        "name": "test deck",
        "cards": [
            {
                "name": f"card {i}",
                "pattern": _PATTERNS[i % len(_PATTERNS)],
                "rewards": _REWARDS[i % len(_REWARDS)],
            }
            for i in range(cards)
        ],
    }
    path.write_text(json.dumps(deck), "utf-8")
    return path


def make_game(num_players: int, variant: dict[str, Any], tmp_path: Path) -> Game:
    options = {"num_players": num_players, **variant}
    if options.get("favor_deck") == "custom":
        options["favor_deck"] = str(write_deck(tmp_path / "deck.json"))
    return Game(**options)


def snapshot(state: Any) -> dict[str, Any]:
    out = {name: getattr(state, name) for name in FIELDS}
    out["current_player"] = state.current_player()
    out["is_terminal"] = state.is_terminal()
    out["legal"] = state.legal_actions()
    out["returns"] = state.returns()
    out["log"] = state.log
    return out


def assert_same(py: State, cs: Any, encoder: ObservationEncoder, step: int) -> None:
    legal = py.legal_actions()
    assert cs.legal_actions() == legal and type(cs.legal_actions()) is tuple, step
    assert cs.current_player() == py.current_player(), step
    assert cs.decision is py.decision, step
    assert cs.rng == py.rng, step
    for name in FIELDS:
        assert getattr(cs, name) == getattr(py, name), (step, name)
    events = cs.log
    assert events == py.log, step
    assert [type(e) for e in events] == [type(e) for e in py.log], step
    assert [tuple(map(type, e)) for e in events] == [tuple(map(type, e)) for e in py.log], step
    for seat in range(py.n):
        expected = encoder.encode(py, seat)
        assert cs.encode(seat).tobytes() == expected.tobytes(), (step, seat)
    assert cs.action_mask().tobytes() == action_mask(py).tobytes(), step
    assert cs.global_state().tobytes() == encode_global_state(py, encoder).tobytes(), step
    assert cs.returns() == py.returns() and cs.winners == py.winners, step
    assert cs.component_totals() == py.component_totals(), step


def _random_prefix(options: dict[str, Any], seed: int, steps: int) -> tuple[State, Any]:
    """The same game of ``options`` on both backends after up to ``steps`` random legal actions
    drawn from ``random.Random(seed)``."""
    game = Game(**options)
    py = game.new_initial_state(seed)
    cs = core.new_initial_state(game, seed)
    pick = random.Random(seed)
    for _ in range(steps):
        if py.is_terminal():
            break
        action = pick.choice(py.legal_actions())
        py.apply_action(action)
        cs.apply_action(action)
    return py, cs


def play_both(game: Game, seed: int) -> int:
    py = game.new_initial_state(seed)
    cs = core.new_initial_state(game, seed)
    encoder = ObservationEncoder(game)
    pick = random.Random(seed)
    step = 0
    while True:
        assert_same(py, cs, encoder, step)
        if py.is_terminal():
            return step
        action = pick.choice(py.legal_actions())
        py.apply_action(action)
        cs.apply_action(action)
        step += 1


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: ",".join(f"{k}={v[k]}" for k in v) or "standard")
@pytest.mark.parametrize("num_players", tables.PLAYER_COUNTS)
def test_random_games_match_the_engine(num_players: int, variant: dict[str, Any], tmp_path: Path) -> None:
    if variant.get("extra_region") and tables.REGIONS_BY_PLAYERS[num_players] + 1 > num_players:
        pytest.skip("the Friendly variant never uses more regions than players")
    game = make_game(num_players, variant, tmp_path)
    for seed in (num_players, 1000 + 7 * num_players):
        assert play_both(game, seed) > 100


def test_huge_bids_are_entered_as_the_same_digits() -> None:
    """E3: above 100 Jade a bid is entered as base-101 digits; every digit decision matches."""
    game = Game(num_players=2, unlimited_components=True, extra_jade=10**9)
    py = game.new_initial_state(3)
    cs = core.new_initial_state(game, 3)
    encoder = ObservationEncoder(game)
    pick = random.Random(3)
    digits = 0
    while py.round < 3:
        assert_same(py, cs, encoder, digits)
        digits += py.bid_digits_left > 0
        action = pick.choice(py.legal_actions())
        py.apply_action(action)
        cs.apply_action(action)
    assert digits > 0


def test_the_core_is_built_from_the_engine_declarations() -> None:
    # Every number, enum and weight the core shares with the engine is generated from the
    # engine's declarations (core/codegen.py): the module reports the digest of what it was
    # built from, and a stale build (the declarations changed since) fails here.
    from island_fortress_env.core import codegen
    from island_fortress_env.env.global_state import STATE_SIZE
    from island_fortress_env.env.observation import OBS_SIZE

    built = core.state._core  # type: ignore[attr-defined]
    assert codegen.digest() == built.SPEC_DIGEST, "the core is stale: rebuild it (pip install -e .)"
    assert (built.TABLES["OBS_SIZE"], built.TABLES["STATE_SIZE"]) == (OBS_SIZE, STATE_SIZE)


def test_clone_and_with_block_are_independent_copies() -> None:
    game = Game(num_players=3)
    cs = core.new_initial_state(game, 5)
    py = game.new_initial_state(5)
    for _ in range(60):
        a = py.legal_actions()[-1]
        py.apply_action(a)
        cs.apply_action(a)
    copy = cs.clone()
    before = snapshot(cs)
    copy.apply_action(copy.legal_actions()[0])
    assert snapshot(cs) == before
    cell = next(i for i, b in enumerate(game.geometry.cell_bits) if not py.occ >> b & 1)
    for governor in (False, True):
        assert snapshot(cs.with_block(cell, 1, governor)) == snapshot(py.with_block(cell, 1, governor))
    assert snapshot(cs) == before
    assert [cs.owner_at(b) for b in range(80)] == [py.owner_at(b) for b in range(80)]
    assert [cs.blocks_built(p) for p in range(3)] == [py.blocks_built(p) for p in range(3)]
    assert cs.action_to_string(cs.legal_actions()[0]) == py.action_to_string(py.legal_actions()[0])


def _views_along(check: Any) -> None:
    """Calls ``check(core state, engine state)`` every 25 decisions of a game and at its end."""
    game = Game(num_players=4, favor_trade_in=True)
    py = game.new_initial_state(9)
    cs = core.new_initial_state(game, 9)
    pick = random.Random(9)
    step = 0
    while not py.is_terminal():
        if step % 25 == 0:
            check(cs, py)
        action = pick.choice(py.legal_actions())
        py.apply_action(action)
        cs.apply_action(action)
        step += 1
    check(cs, py)


def test_the_text_view_and_the_encoder_read_a_core_state_as_an_engine_state() -> None:
    from island_fortress_env.views.text import render_text

    encoder = ObservationEncoder(Game(num_players=4, favor_trade_in=True))

    def check(cs: Any, py: State) -> None:
        assert render_text(cs, last_events=8) == render_text(py, last_events=8)
        assert render_text(cs) == render_text(py)
        assert encoder.encode(cs, 2).tobytes() == encoder.encode(py, 2).tobytes()

    _views_along(check)


def test_the_picture_reads_a_core_state_as_an_engine_state() -> None:
    pytest.importorskip("PIL", reason="the picture needs the [render] extra (Pillow)")
    from island_fortress_env.views.picture import table_view

    def check(cs: Any, py: State) -> None:
        for seat in (None, 0, 3):
            assert table_view(cs, seat) == table_view(py, seat)

    _views_along(check)


def test_output_buffers_are_checked() -> None:
    cs = core.new_initial_state(Game(num_players=2), 0)
    out = np.zeros(A.NUM_ACTIONS, dtype=np.bool_)
    assert cs.action_mask(out) is out and out.sum() == len(cs.legal_actions())
    with pytest.raises(ValueError):
        cs.encode(0, np.zeros(10, dtype=np.float32))
    with pytest.raises(ValueError):
        cs.global_state(np.zeros(core.state.STATE_SIZE, dtype=np.float64))
    with pytest.raises(TypeError):
        cs.action_mask(np.zeros(A.NUM_ACTIONS, dtype=np.float32))


# ----------------------------------------------------------------------------- the redeal


def assert_same_redeals(py: State, cs: Any, seeds: Any) -> int:
    """``visibility.redeal_unseen`` of the engine state and of the core state, for every seat and
    seed: the same fields, log, legal actions and generator, and the originals unchanged."""
    from island_fortress_env.engine.visibility import redeal_unseen

    before = snapshot(cs)
    compared = 0
    for seat in range(py.n):
        for seed in seeds:
            got, expected = redeal_unseen(cs, seat, seed), redeal_unseen(py, seat, seed)
            assert type(got) is type(cs)
            assert snapshot(got) == snapshot(expected), (seat, seed, py.decision)
            compared += 1
    assert snapshot(cs) == before == snapshot(py)
    return compared


@pytest.mark.parametrize(
    "variant", VARIANTS[:-1], ids=lambda v: ",".join(f"{k}={v[k]}" for k in v) or "standard"
)
@pytest.mark.parametrize("num_players", tables.PLAYER_COUNTS)
def test_the_redeal_of_the_unseen_matches_the_engine(num_players: int, variant: dict[str, Any]) -> None:
    """At every bid and every 9th other decision of a game, both players' redeals agree, and a
    redealt game played on gives the same game on both backends."""
    if variant.get("extra_region") and tables.REGIONS_BY_PLAYERS[num_players] + 1 > num_players:
        pytest.skip("the Friendly variant never uses more regions than players")
    from island_fortress_env.engine.visibility import redeal_unseen

    game = Game(num_players=num_players, **variant)
    py = game.new_initial_state(num_players)
    cs = core.new_initial_state(game, num_players)
    pick = random.Random(num_players)
    compared = step = 0
    while not py.is_terminal():
        if py.decision == Decision.PETITION_BID or step % 9 == 0:
            compared += assert_same_redeals(py, cs, (step, 2**64 - 1 - step))
        action = pick.choice(py.legal_actions())
        py.apply_action(action)
        cs.apply_action(action)
        step += 1
    assert compared > 50
    # a redealt mid-game state plays on alike
    py, cs = game.new_initial_state(7), core.new_initial_state(game, 7)
    for _ in range(120):
        action = pick.choice(py.legal_actions())
        py.apply_action(action)
        cs.apply_action(action)
    py, cs = redeal_unseen(py, 1, 3), redeal_unseen(cs, 1, 3)
    assert play_both_on(py, cs, pick) > 0


def play_both_on(py: State, cs: Any, pick: random.Random) -> int:
    """Plays both states to the end with the same random actions, checking them step by step."""
    encoder = ObservationEncoder(py.game)
    step = 0
    while True:
        assert_same(py, cs, encoder, step)
        if py.is_terminal():
            return step
        action = pick.choice(py.legal_actions())
        py.apply_action(action)
        cs.apply_action(action)
        step += 1


def test_the_redeal_of_a_bid_entered_by_digits_matches_the_engine() -> None:
    """E3: bids above 100 Jade are entered as base-101 digits; the redeal draws the sealed bids
    and the leading digits of a bid being entered alike."""
    game = Game(num_players=3, unlimited_components=True, extra_jade=10**9)
    py = game.new_initial_state(5)
    cs = core.new_initial_state(game, 5)
    pick = random.Random(5)
    partial = 0
    while py.round < 4:
        if py.decision == Decision.PETITION_BID:
            digits, jade = 0, py.jade[py.current]  # the digits after the first (phases/petition.py)
            while jade > tables.MAX_BID:
                jade //= tables.BID_BASE
                digits += 1
            partial += py.bid_digits_left < digits  # the bidder has entered a leading digit
            assert_same_redeals(py, cs, (1, 2, 3))
        action = pick.choice(py.legal_actions())
        py.apply_action(action)
        cs.apply_action(action)
    assert partial > 0


# ----------------------------------------------------------------------------- fuzzing

_BAD_VALUES = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.integers(min_value=-3, max_value=A.NUM_ACTIONS + 3),
    st.booleans(),
    st.floats(allow_nan=True),
    st.none(),
    st.text(max_size=3),
    st.integers(min_value=-(2**63), max_value=2**63 - 1).map(np.int64),
    st.integers(min_value=0, max_value=2**64 - 1).map(np.uint64),
)


def _outcome(fn: Any) -> type[BaseException] | None:
    try:
        fn()
    except Exception as exc:
        return type(exc)
    return None


@given(
    options=configs(),
    seed=st.integers(min_value=0, max_value=2**64 - 1),
    prefix=st.integers(min_value=0, max_value=400),
    moves=st.lists(st.one_of(_BAD_VALUES, st.integers(min_value=0, max_value=10**6)), max_size=30),
)
def test_fuzzed_actions_act_as_in_the_engine(
    options: dict[str, Any], seed: int, prefix: int, moves: list[Any]
) -> None:
    py, cs = _random_prefix(options, seed, prefix)
    for move in moves:
        if isinstance(move, int) and not isinstance(move, bool) and move >= 10**5 and not py.is_terminal():
            legal = py.legal_actions()  # a legal action, chosen by the drawn number
            move = legal[move % len(legal)]
        before_py, before_cs = snapshot(py), snapshot(cs)
        raised = _outcome(lambda m=move: py.apply_action(m))
        try:
            cs.apply_action(move)
        except Exception as exc:
            assert type(exc) is raised, (move, exc)
            assert raised is IllegalActionError
            assert snapshot(cs) == before_cs
            assert snapshot(py) == before_py
            with pytest.raises(IllegalActionError) as expected:
                py.apply_action(move)
            assert str(exc) == str(expected.value)
        else:
            assert raised is None, move
        assert snapshot(cs) == snapshot(py)


@given(
    seed=st.one_of(
        st.integers(min_value=-(2**66), max_value=2**66),
        st.integers(min_value=2**64 - 2, max_value=2**64 + 2),
        st.booleans(),
        st.floats(),
        st.none(),
        st.text(max_size=2),
        st.integers(min_value=0, max_value=2**64 - 1).map(np.uint64),
        st.integers(min_value=-(2**63), max_value=2**63 - 1).map(np.int64),
    )
)
def test_fuzzed_seeds_act_as_in_the_engine(seed: Any) -> None:
    game = Game(num_players=2)
    expected = _outcome(lambda: game.new_initial_state(seed))
    got = _outcome(lambda: core.new_initial_state(game, seed))
    assert got is expected
    if expected is None:
        assert snapshot(core.new_initial_state(game, seed)) == snapshot(game.new_initial_state(seed))


@given(
    options=configs(),
    seed=st.integers(min_value=0, max_value=2**64 - 1),
    steps=st.integers(min_value=0, max_value=700),
    redeal_seed=st.integers(min_value=0, max_value=2**64 - 1),
)
def test_fuzzed_redeals_match_the_engine(
    options: dict[str, Any], seed: int, steps: int, redeal_seed: int
) -> None:
    py, cs = _random_prefix(options, seed, steps)
    assert_same_redeals(py, cs, (redeal_seed,))


def test_a_bad_redeal_is_the_engines_error_and_changes_nothing() -> None:
    from island_fortress_env.engine import SeedError
    from island_fortress_env.engine.visibility import redeal_unseen

    cs = core.new_initial_state(Game(num_players=3), 2)
    before = snapshot(cs)
    for seat in (-1, 3, 10**20):
        with pytest.raises(ValueError, match=r"seat must be 0\.\.2"):
            redeal_unseen(cs, seat, 0)
        with pytest.raises(ValueError, match=r"seat must be 0\.\.2"):
            cs.redeal_unseen(seat, 0)
    for seed in (-1, 2**64, 1.5, "1", True):
        with pytest.raises(SeedError):
            redeal_unseen(cs, 0, seed)
    assert snapshot(cs) == before


def test_counts_beyond_the_core_are_refused() -> None:
    from island_fortress_env.engine import ConfigError

    with pytest.raises(ConfigError, match="C\\+\\+ core"):
        core.new_initial_state(Game(num_players=2, extra_jade=10**16), 0)
