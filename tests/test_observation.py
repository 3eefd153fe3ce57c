"""The observation vector and the action mask: size, type, range, seat-relativity, layout; on both
backends (``backend``: the C++ core writes them in C++), except where a test writes a state."""

from __future__ import annotations

import random

import numpy as np
import pytest

from island_fortress_env import island_fortress_v0
from island_fortress_env.core import Game
from island_fortress_env.engine import NUM_ACTIONS
from island_fortress_env.engine import actions as A
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.state import DECISION_NAMES
from island_fortress_env.env.observation import (
    CARDS,
    GLOBAL_FEATURES,
    GLOBAL_START,
    GRID,
    LAYOUT,
    MAX_PLAYERS,
    NUM_GLOBAL,
    NUM_PLANES,
    NUM_PLAYER_FEATURES,
    OBS_HIGH,
    OBS_LOW,
    OBS_SIZE,
    PLAYER_FEATURES,
    PLAYERS_START,
    PRIVATE_START,
    WALL_PLANES,
    WALL_START,
    ObservationEncoder,
    action_mask,
)

VARIANTS = [
    {"num_players": 2},
    {"num_players": 3},
    {"num_players": 4},
    {"num_players": 3, "extra_region": True, "favor_trade_in": True},
    {"num_players": 4, "extra_region": True, "unlimited_components": True},
]


def plane(obs: np.ndarray, name: str) -> np.ndarray:
    i = WALL_PLANES.index(name)
    return obs[WALL_START + i * GRID : WALL_START + (i + 1) * GRID]


def player_row(obs: np.ndarray, k: int) -> np.ndarray:
    start = PLAYERS_START + k * NUM_PLAYER_FEATURES
    return obs[start : start + NUM_PLAYER_FEATURES]


def bits_vector(mask: int, width: int) -> np.ndarray:
    return np.array([mask >> i & 1 for i in range(width)], dtype=np.float32)


OPPONENT_PLANES = ("block of opponent 1 (next in turn order)", "block of opponent 2", "block of opponent 3")
OPPONENT_TASKMASTER = (
    "opponent 1's Taskmaster's region",
    "opponent 2's Taskmaster's region",
    "opponent 3's Taskmaster's region",
)


def sampled_states(options: dict, seed: int, every: int = 9, backend: str = "python"):
    """States of a random game (every ``every``-th decision, plus every bid)."""
    game = Game(**options, backend=backend)
    state = game.new_initial_state(seed)
    chooser = random.Random(seed)
    step = 0
    while not state.is_terminal():
        if step % every == 0 or state.decision == Decision.PETITION_BID:
            yield state
        state.apply_action(chooser.choice(state.legal_actions()))
        step += 1
    yield state


# --------------------------------------------------------------------------- layout


def test_layout_tiles_the_vector_without_gaps():
    assert LAYOUT[0][1] == 0
    names = [name for name, _, _ in LAYOUT]
    assert len(set(names)) == len(names)
    end = 0
    for name, start, size in LAYOUT:
        assert start == end, f"gap or overlap before {name!r}"
        assert size > 0
        end = start + size
    assert end == OBS_SIZE
    assert WALL_START == 0 and LAYOUT[0][2] == NUM_PLANES * GRID
    assert PLAYERS_START == NUM_PLANES * GRID
    assert GLOBAL_START == PLAYERS_START + MAX_PLAYERS * NUM_PLAYER_FEATURES
    assert PRIVATE_START[0] == GLOBAL_START + NUM_GLOBAL == GLOBAL_START + len(GLOBAL_FEATURES)
    assert PRIVATE_START[-1] + CARDS == OBS_SIZE


# --------------------------------------------------------------------------- shape, type, range


@pytest.mark.parametrize("options", VARIANTS, ids=str)
def test_every_observation_has_the_declared_shape_dtype_and_range(backend, options):
    env = island_fortress_v0.env(backend=backend, **options)
    env.reset(seed=13)
    space = env.observation_space("player_0")
    rng = np.random.default_rng(13)
    for step, _agent in enumerate(env.agent_iter(max_iter=10_000)):
        obs, _, termination, truncation, _ = env.last()
        if step % 5 == 0:
            for other in env.agents:  # every seat's view, not only the mover's
                view = env.unwrapped.observe(other)
                assert view["observation"].shape == (OBS_SIZE,)
                assert view["observation"].dtype == np.float32
                assert view["action_mask"].dtype == np.int8
                assert np.isfinite(view["observation"]).all()
                assert space.contains(view), f"{other}'s observation is outside the Box at step {step}"
        if termination or truncation:
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


# Actions that send Convicts to a prison; a hoarding table never collects them again.
_FILLS_PRISONS = {
    A.ROLE + A.OP_RECRUIT, A.ROLE + A.OP_BUY_BLOCKS, A.ROLE + A.OP_COLLECT_TREASURE,
    A.ROLE + A.OP_COLLECT_CONVICTS, A.REPEAT + A.OP_RECRUIT, A.REPEAT + A.OP_BUY_BLOCKS,
    A.REPEAT + A.OP_COLLECT_TREASURE, A.BUYBACK_CHIP, A.BUYBACK_TASKMASTER,
}  # fmt: skip
_NEVER = {A.ROLE + A.OP_COLLECT_PRISON, A.ROLE + A.OP_MOVE_TASKMASTER}


def _hoarding_game_observations(backend, n: int, seed: int):
    """Players who recruit, buy and collect treasure but never empty a prison (a legal, if
    odd, way to play): the prison of region 1 fills with Convicts."""
    env = island_fortress_v0.env(backend=backend, num_players=n)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _agent in env.agent_iter(max_iter=10_000):
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        yield env, obs
        legal = [int(a) for a in np.flatnonzero(obs["action_mask"])]
        legal = [a for a in legal if a not in _NEVER] or legal
        preferred = [a for a in legal if a in _FILLS_PRISONS]
        env.step(int(rng.choice(preferred if preferred and rng.random() < 0.8 else legal)))


@pytest.mark.parametrize("n", [3, 4])
def test_observations_stay_in_the_box_when_prisons_fill_up(backend, n):
    """The observation Box is [-1, 10]; 'prison r: Convicts / 5' passes 10 once a prison holds
    more than 50 Convicts, which legal play reaches (no component limit is hit: 75 Convicts).
    The encoder clips only with unlimited components, so such an observation leaves the Box."""
    space = island_fortress_v0.env(num_players=n).observation_space("player_0")
    fullest = 0
    for seed in range(6):
        for env, obs in _hoarding_game_observations(backend, n, seed):
            fullest = max(fullest, *env.unwrapped.game_state.prison_convicts)
            assert space.contains(obs), (
                f"observation outside the Box: max {obs['observation'].max():.2f} at index "
                f"{int(obs['observation'].argmax())}, "
                f"prison Convicts {env.unwrapped.game_state.prison_convicts}"
            )
    assert fullest > 50, "the hoarding games no longer fill a prison; the check above proves little"


def test_encoder_output_in_box_for_a_prison_with_many_convicts():
    """The same as above on a hand-made (reachable) state: 60 of the 75 Convicts in one prison."""
    game = Game(num_players=3, backend="python")  # a state written by hand: the engine's
    state = game.new_initial_state(1)
    state.sup_convicts -= 60
    state.prison_convicts[0] += 60
    assert state.component_totals()["convicts"] == game.totals["convicts"]
    obs = ObservationEncoder(game).encode(state, 0)
    assert obs.max() <= OBS_HIGH and obs.min() >= OBS_LOW


def test_numbers_beyond_a_byte_are_encoded_exactly():
    """The encoder packs the raw numbers as bytes when they all fit, as int32 when not."""
    game = Game(num_players=3, backend="python")  # a state written by hand: the engine's
    state = game.new_initial_state(4)
    encoder = ObservationEncoder(game)
    small = encoder.encode(state, 1)
    state.score[1] = 300  # me, from seat 1
    state.score[2] = 255  # opponent 1
    big = encoder.encode(state, 1)
    score = PLAYER_FEATURES.index("score / 50")
    assert player_row(big, 0)[score] == np.float32(300) * np.float32(1 / 50)
    assert player_row(big, 1)[score] == np.float32(255) * np.float32(1 / 50)
    changed = np.flatnonzero(big != small)
    assert sorted(changed) == sorted(PLAYERS_START + k * NUM_PLAYER_FEATURES + score for k in (0, 1))


# --------------------------------------------------------------------------- contents


@pytest.mark.parametrize("options", VARIANTS, ids=str)
def test_seat_relative_views_agree(backend, options):
    """Seat X's 'my ...' features equal seat (X-k)'s 'opponent k ...' features."""
    n = options["num_players"]
    encoder = None
    for state in sampled_states(options, 17, backend=backend):
        encoder = encoder or ObservationEncoder(state.game)
        views = [encoder.encode(state, x) for x in range(n)]
        for x in range(n):
            me = views[x]
            for k in range(1, n):
                y = (x - k) % n  # x is y's opponent k
                assert np.array_equal(plane(views[y], OPPONENT_PLANES[k - 1]), plane(me, "my block"))
                assert np.array_equal(
                    plane(views[y], OPPONENT_TASKMASTER[k - 1]), plane(me, "my Taskmaster's region")
                )
                assert np.array_equal(player_row(views[y], k), player_row(me, 0))
            # Seat-independent parts are the same for everyone (the last two global features
            # are this seat's own sealed bid).
            for name in ("cell exists", "empty and buildable now", "Governor block", "reinforced"):
                assert np.array_equal(plane(me, name), plane(views[0], name))
            g = slice(GLOBAL_START, GLOBAL_START + NUM_GLOBAL - 2)
            assert np.array_equal(me[g], views[0][g])


@pytest.mark.parametrize("options", VARIANTS, ids=str)
def test_observation_contents_match_the_state(backend, options):
    n = options["num_players"]
    encoder = None
    for state in sampled_states(options, 19, every=23, backend=backend):
        encoder = encoder or ObservationEncoder(state.game)
        geo = state.geo
        for x in range(n):
            obs = encoder.encode(state, x)
            assert np.array_equal(plane(obs, "cell exists"), bits_vector(geo.valid, GRID))
            assert np.array_equal(plane(obs, "my block"), bits_vector(state.own[x], GRID))
            assert np.array_equal(plane(obs, "Governor block"), bits_vector(state.gov_bits, GRID))
            assert np.array_equal(plane(obs, "reinforced"), bits_vector(state.reinf, GRID))
            buildable = bits_vector(geo.buildable(state.occ), GRID)
            assert np.array_equal(plane(obs, "empty and buildable now"), buildable)
            # absent seats are all zero
            for k in range(n, MAX_PLAYERS):
                assert not player_row(obs, k).any()
                assert not plane(obs, OPPONENT_PLANES[k - 1]).any()
                assert not plane(obs, OPPONENT_TASKMASTER[k - 1]).any()
            for k in range(n):
                assert player_row(obs, k)[0] == 1.0  # seat present
            glob = obs[GLOBAL_START : GLOBAL_START + NUM_GLOBAL]
            assert glob[GLOBAL_FEATURES.index(f"{n} players")] == 1.0
            assert sum(glob[GLOBAL_FEATURES.index(f"{m} players")] for m in range(2, MAX_PLAYERS + 1)) == 1.0
            assert glob[GLOBAL_FEATURES.index(f"{geo.regions} regions")] == 1.0
            decisions = [glob[GLOBAL_FEATURES.index(f"decision: {name}")] for name in DECISION_NAMES]
            assert decisions == [float(i == state.decision) for i in range(len(DECISION_NAMES))]
            hand = obs[PRIVATE_START[0] : PRIVATE_START[0] + CARDS]
            assert np.array_equal(hand, bits_vector(state.favor_hand[x], CARDS))
            drawn = obs[PRIVATE_START[1] : PRIVATE_START[1] + CARDS]
            assert np.array_equal(drawn, bits_vector(state.drawn[x], CARDS))


def test_a_fresh_array_every_call(backend):
    game = Game(backend=backend, num_players=3)
    state = game.new_initial_state(2)
    encoder = ObservationEncoder(game)
    a = encoder.encode(state, 0)
    b = encoder.encode(state, 0)
    assert a is not b and np.array_equal(a, b)
    a[:] = 7.0  # the caller may scribble on its array ...
    assert np.array_equal(encoder.encode(state, 0), b)  # ... without touching later observations


# --------------------------------------------------------------------------- the mask


@pytest.mark.parametrize("options", VARIANTS, ids=str)
def test_mask_equals_legal_actions_exactly(backend, options):
    for state in sampled_states(options, 23, every=3, backend=backend):
        mask = action_mask(state)
        assert mask.shape == (NUM_ACTIONS,) and mask.dtype == np.int8
        assert set(np.unique(mask)) <= {0, 1}
        assert sorted(np.flatnonzero(mask).tolist()) == sorted(state.legal_actions())
        out = np.full(NUM_ACTIONS, 5, dtype=np.int8)
        assert action_mask(state, out) is out
        assert np.array_equal(out, mask)
        mask[:] = 1  # masks are fresh, writable arrays: scribbling on one changes no other
        assert np.array_equal(action_mask(state), out)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_only_the_agent_to_move_gets_a_mask(backend, n):
    env = island_fortress_v0.env(backend=backend, num_players=n)
    env.reset(seed=29)
    rng = np.random.default_rng(29)
    for agent in env.agent_iter(max_iter=10_000):
        obs, _, termination, truncation, _ = env.last()
        state = env.unwrapped.game_state
        for other in env.agents:
            view = env.unwrapped.observe(other)
            if other == agent and not (termination or truncation):
                assert sorted(np.flatnonzero(view["action_mask"]).tolist()) == sorted(state.legal_actions())
            else:
                assert not view["action_mask"].any(), f"{other} got a mask while {agent} is to move"
        if termination or truncation:
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def test_bounded_caches_change_nothing(monkeypatch):
    """The encoder's caches are cleared when full: memory stays bounded over a long training
    run, and an encoder that keeps evicting encodes exactly as a fresh one does."""
    from island_fortress_env.env import observation

    monkeypatch.setattr(observation, "_CACHE_LIMIT", 4)
    game = Game(num_players=3, backend="python")  # the Python encoder's caches
    busy = ObservationEncoder(game)
    caches = (busy._walls, busy._planes, busy._cards, busy._card_rows, busy._region_counts)
    for state in sampled_states({"num_players": 3}, 29, every=2):
        for seat in range(3):
            assert np.array_equal(busy.encode(state, seat), ObservationEncoder(game).encode(state, seat))
        assert all(len(cache) <= 4 for cache in caches)
