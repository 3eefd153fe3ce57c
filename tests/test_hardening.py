"""Inputs at the edges: bounded deck rewards, observations inside the Box for any game,
immutable legal actions, bids of any amount held, unlimited supplies, deck files, seeds, and
the raw environment used before ``reset()``; on both backends (``backend``) except where a test
writes a state or holds counts beyond the C++ core's."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from island_fortress_env import island_fortress_v0
from island_fortress_env.core import Game
from island_fortress_env.engine import DeckError, SeedError, State, load_deck
from island_fortress_env.engine import actions as A
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.events import EventKind
from island_fortress_env.engine.favors import DECK_REWARD_LIMITS, REWARD_KINDS, REWARD_LIMITS
from island_fortress_env.env.observation import (
    GLOBAL_FEATURES,
    GLOBAL_START,
    OBS_HIGH,
    OBS_LOW,
    ObservationEncoder,
)

SEALED_BID = GLOBAL_START + GLOBAL_FEATURES.index("my sealed bid this round / 20 (mine only)")
DIGITS_LEFT = GLOBAL_START + GLOBAL_FEATURES.index("favor cards left to keep / 3")  # also bid digits


def write_deck(tmp_path: Path, cards: list[dict], name: str = "deck.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"name": "edge deck", "cards": cards}), "utf-8")
    return path


def plain_cards(k: int) -> list[dict]:
    return [
        {"name": f"Card {i}", "pattern": ["X"] if i % 2 else ["XX"], "rewards": {"vp": 1 + i % 3}}
        for i in range(k)
    ]


def play(game: Game, seed: int, steps: int, check) -> State:
    """Random legal play for up to ``steps`` decisions, calling ``check(state)`` at each."""
    state = game.new_initial_state(seed)
    chooser = np.random.default_rng(seed)
    for _ in range(steps):
        check(state)
        if state.is_terminal():
            break
        legal = state.legal_actions()
        state.apply_action(legal[int(chooser.integers(len(legal)))])
    return state


def assert_in_box(encoder: ObservationEncoder, state: State) -> None:
    for seat in range(state.n):
        obs = encoder.encode(state, seat)
        assert np.isfinite(obs).all()
        assert obs.min() >= OBS_LOW and obs.max() <= OBS_HIGH, (seat, obs.min(), obs.max())


# ---------------------------------------------------------------------------- favor deck rewards


# docs/RULES.md E27: a card reward beyond its bound is refused at load.
@pytest.mark.parametrize("kind", REWARD_KINDS)
def test_a_card_reward_above_its_limit_is_refused_naming_file_card_and_limit(tmp_path, kind):
    cards = plain_cards(15)
    cards[4] = {"name": "Greedy", "pattern": ["X"], "rewards": {kind: REWARD_LIMITS[kind] + 1}}
    path = write_deck(tmp_path, cards, "greedy.json")
    with pytest.raises(DeckError, match=rf"greedy\.json.*card 4.*{kind}.*limit of {REWARD_LIMITS[kind]}"):
        load_deck(path)


# docs/RULES.md E27: a deck total beyond its bound is refused at load.
@pytest.mark.parametrize("kind", sorted(DECK_REWARD_LIMITS))
def test_a_deck_total_above_its_limit_is_refused(tmp_path, kind):
    per_card = REWARD_LIMITS[kind]
    count = DECK_REWARD_LIMITS[kind] // per_card + 1
    cards = [
        {"name": f"C{i}", "pattern": ["X" * (1 + i % 3)], "rewards": {kind: per_card, "vp": i}}
        for i in range(count)
    ]
    with pytest.raises(DeckError, match=rf"deck\.json.*{kind}.*deck limit of {DECK_REWARD_LIMITS[kind]}"):
        load_deck(write_deck(tmp_path, cards + plain_cards(15)))


def bound_deck() -> list[dict]:
    """36 cards with every reward at its per-card limit, income and petition up to the deck
    limits, and the easiest patterns (so they are played often)."""
    cards = []
    for i in range(36):
        rewards = {k: v for k, v in REWARD_LIMITS.items() if k not in DECK_REWARD_LIMITS}
        for kind, limit in DECK_REWARD_LIMITS.items():
            if i < limit // REWARD_LIMITS[kind]:
                rewards[kind] = REWARD_LIMITS[kind]
        pattern = [["X"], ["XX"], ["X", "X"], ["X."], [".X"], ["X", "."]][i % 6]
        cards.append({"name": f"Bound {i}", "pattern": pattern, "rewards": rewards})
    return cards


@pytest.mark.parametrize("options", [{}, {"unlimited_components": True, "extra_jade": 400}])
def test_observations_stay_in_the_box_with_a_deck_at_the_bounds(backend, tmp_path, options):
    game = Game(backend=backend, num_players=3, favor_deck=write_deck(tmp_path, bound_deck()), **options)
    encoder = ObservationEncoder(game)
    played = []
    for seed in range(3):
        state = play(game, seed, 3000, lambda s: assert_in_box(encoder, s))
        played.append(sum(p.bit_count() for p in state.favor_played))
    assert sum(played) > 0, "no favor card was played: the test proves nothing"


@pytest.mark.parametrize("huge", [10**9, 10**30])
def test_huge_unlimited_components_encode_inside_the_box(huge):
    game = Game(  # the Python engine: 10**30 is beyond the counts of the C++ core
        num_players=4,
        unlimited_components=True,
        extra_jade=huge,
        start_laborers=huge,
        start_convicts=huge,
        backend="python",
    )
    encoder = ObservationEncoder(game)
    play(game, 3, 300, lambda s: assert_in_box(encoder, s))


def test_env_last_works_with_a_billion_jade(backend):
    env = island_fortress_v0.env(backend=backend, num_players=3, unlimited_components=True, extra_jade=10**9)
    env.reset(seed=1)
    for _ in range(40):
        obs, _, term, trunc, _ = env.last()
        assert env.observation_space(env.agent_selection)["observation"].contains(obs["observation"])
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[-1]))


# ---------------------------------------------------------------------------- legal actions


def test_legal_actions_cannot_be_changed_by_the_caller(backend):
    state = Game(backend=backend, num_players=3).new_initial_state(0)
    legal = state.legal_actions()
    assert isinstance(legal, tuple) and list(legal) == sorted(legal)
    with pytest.raises(AttributeError):
        legal.append(A.PASS)  # type: ignore[attr-defined]
    assert A.PASS not in state.legal_actions()
    with pytest.raises(Exception, match="illegal action 0"):
        state.apply_action(A.PASS)
    assert state.legal_actions() == legal


def test_a_clone_and_its_original_keep_their_own_legal_actions(backend):
    state = Game(backend=backend, num_players=3).new_initial_state(0)
    before = state.legal_actions()
    other = state.clone()
    other.apply_action(other.legal_actions()[0])
    assert state.legal_actions() == before
    assert other.legal_actions() != before


# ---------------------------------------------------------------------------- bids above 100 Jade


def rich_bid_state(backend: str) -> State:
    """Round 1's first bidder of a game where everyone holds 12 + 100 + 3 income = 115 Jade."""
    state = Game(num_players=3, unlimited_components=True, extra_jade=100, backend=backend).new_initial_state(
        2
    )
    while state.decision != Decision.PETITION_BID:
        state.apply_action(state.legal_actions()[0])
    assert state.jade == [115, 115, 115]
    return state


def bid_digits(amount: int, jade: int) -> list[int]:
    digits = []
    width = 1
    while 101**width <= jade:
        width += 1
    for place in reversed(range(width)):
        digits.append(amount // 101**place % 101)
    return [A.BID + d for d in digits]


@pytest.mark.parametrize("amount", [115, 0, 101, 57, 100])
def test_a_player_with_115_jade_can_bid_any_amount_held(backend, amount):
    state = rich_bid_state(backend)
    bidder = state.current_player()
    for action in bid_digits(amount, 115):
        assert state.current_player() == bidder
        state.apply_action(action)
    assert state.current_player() != bidder
    while state.decision == Decision.PETITION_BID:
        state.apply_action(A.BID)  # the others bid 0
    assert state.last_bids is not None and state.last_bids[bidder] == amount
    if amount:
        assert state.holder == bidder and state.jade[bidder] == 115 - amount


def test_a_player_with_115_jade_cannot_bid_116(backend):
    state = rich_bid_state(backend)
    assert state.legal_actions() == (A.BID, A.BID + 1)  # the hundreds-and-one digit: 0 or 1
    state.apply_action(A.BID + 1)
    assert state.legal_actions() == tuple(range(A.BID, A.BID + 15))  # 101 + 0..14
    with pytest.raises(Exception, match="illegal action"):
        state.apply_action(A.BID + 15)
    state.apply_action(A.BID)
    zero = rich_bid_state(backend)
    zero.apply_action(A.BID)
    assert zero.legal_actions() == tuple(range(A.BID, A.BID + 101))  # 0..100


def test_a_partial_bid_is_seen_by_its_bidder_only(backend):
    low, high = rich_bid_state(backend), rich_bid_state(backend)
    bidder = low.current_player()
    low.apply_action(A.BID)  # first digit 0: the bid will be 0..100
    high.apply_action(A.BID + 1)  # first digit 1: the bid will be 101..115
    encoder = ObservationEncoder(low.game)
    for seat in range(3):
        a, b = encoder.encode(low, seat), encoder.encode(high, seat)
        if seat == bidder:
            assert a[SEALED_BID] == 0 and b[SEALED_BID] == pytest.approx(1 / 20)
        else:
            assert np.array_equal(a, b), f"seat {seat} sees the partial bid"
        assert a[DIGITS_LEFT] == b[DIGITS_LEFT] == 0
    fresh = rich_bid_state(backend)
    assert encoder.encode(fresh, bidder)[DIGITS_LEFT] == pytest.approx(1 / 3)


def test_bids_with_a_billion_jade_take_five_digits_and_are_exact(backend):
    state = Game(
        backend=backend, num_players=2, unlimited_components=True, extra_jade=10**9
    ).new_initial_state(4)
    while state.decision != Decision.PETITION_BID:
        state.apply_action(state.legal_actions()[0])
    jade = state.jade[state.current_player()]
    bidder = state.current_player()
    actions = bid_digits(jade, jade)
    assert len(actions) == 5
    for action in actions:
        state.apply_action(action)
    while state.decision == Decision.PETITION_BID:
        state.apply_action(A.BID)
    assert state.last_bids is not None and state.last_bids[bidder] == jade
    assert state.jade[bidder] == 0


# ---------------------------------------------------------------------------- unlimited supplies


def test_unlimited_jade_and_laborers_reach_every_seat(backend):
    game = Game(
        backend=backend, num_players=4, unlimited_components=True, extra_jade=10**9, start_laborers=10**9
    )
    state = game.new_initial_state(0)
    assert state.jade == [10**9 + 12] * 4
    assert state.laborers == [10**9] * 4
    while state.decision != Decision.PETITION_BID:
        state.apply_action(state.legal_actions()[0])
    assert state.jade == [10**9 + 15] * 4, "every seat is paid its income"


def test_unlimited_supplies_keep_their_ledger_through_whole_games(backend):
    game = Game(
        backend=backend, num_players=3, unlimited_components=True, extra_jade=10**9, start_convicts=10**6
    )

    def check(state: State) -> None:
        totals = state.component_totals()
        totals["blocks_per_player"] = totals["blocks_per_player"][0]
        assert totals == game.totals

    play(game, 5, 100_000, check)


# ---------------------------------------------------------------------------- deck files


def test_a_deck_file_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes(json.dumps({"cards": plain_cards(15)}).replace("Card 3", "Caf\u00e9").encode("latin-1"))
    with pytest.raises(DeckError, match=r"latin1\.json.*not UTF-8"):
        load_deck(path)


def test_duplicate_card_names_are_refused(tmp_path):
    cards = plain_cards(15)
    cards[9] = {**cards[9], "name": "Card 2"}
    with pytest.raises(DeckError, match=r"deck\.json.*card 9.*'Card 2' is card 2's"):
        load_deck(write_deck(tmp_path, cards))


@pytest.mark.parametrize("named", [True, False])
def test_identical_duplicate_cards_are_refused(tmp_path, named):
    cards = plain_cards(15)
    if not named:  # unnamed cards get distinct default names; their faces must differ
        cards = [{"pattern": ["X"], "rewards": {"vp": 1 + i % 10, "jade": i // 10}} for i in range(15)]
    cards.append(dict(cards[3]))
    with pytest.raises(DeckError, match=r"deck\.json.*card 15 is an identical copy of card 3"):
        load_deck(write_deck(tmp_path, cards))


def test_a_deck_path_may_be_a_pathlike(tmp_path):
    path = write_deck(tmp_path, plain_cards(15))
    assert len(load_deck(path)) == 15
    assert len(Game(num_players=3, favor_deck=path).deck) == 15


# ---------------------------------------------------------------------------- seeds and counts


@pytest.mark.parametrize("seed", ["12", 12.9, -1, True, 2**64, np.float64(3.0), [1]])
def test_bad_seeds_are_refused_not_coerced(backend, seed):
    game = Game(backend=backend, num_players=3)
    with pytest.raises(SeedError, match="invalid seed"):
        game.new_initial_state(seed)


@pytest.mark.parametrize("seed", [0, 7, 2**64 - 1, np.int64(7), np.uint64(2**64 - 1), None])
def test_integer_seeds_of_any_integer_type_are_accepted(backend, seed):
    game = Game(backend=backend, num_players=3)
    state = game.new_initial_state(seed)
    plain = game.new_initial_state(None if seed is None else int(seed))
    assert state.rng == plain.rng and state.drawn == plain.drawn


def test_numpy_integer_player_count_is_accepted():
    game = Game(num_players=np.int64(3))
    assert game.num_players == 3 and type(game.config.num_players) is int
    assert type(Game(num_players=2, extra_jade=np.int32(5)).config.extra_jade) is int


# ---------------------------------------------------------------------------- raw env before reset


@pytest.mark.parametrize(
    "call",
    [
        lambda e: e.observe("player_0"),
        lambda e: e.step(0),
        lambda e: e.last(),
        lambda e: e.agent_selection,
    ],
)
def test_raw_env_used_before_reset_says_to_reset(call):
    env = island_fortress_v0.raw_env(num_players=3)
    with pytest.raises(AttributeError, match=r"before reset\(\)"):
        call(env)


# ---------------------------------------------------------------------------- look-ahead API


def test_with_block_places_by_the_rules_on_a_copy_only():
    state = rich_bid_state("python")  # a state written by hand: the engine's
    cell = 0
    before = (state.occ, list(state.own), list(state.blocks), len(state.log))
    seat = 1
    state.blocks[seat] += 1  # give the seat a block to place (the supply is unlimited)
    state.invalidate_cache()
    other = state.with_block(cell, seat)
    assert (state.occ, list(state.own)) == before[:2], "the original changed"
    bit = state.geo.cell_bits[cell]
    assert other.own[seat] == 1 << bit and other.blocks[seat] == state.blocks[seat] - 1
    assert other.log[-1].kind is EventKind.PLACE and other.log[-1].player == seat
    governor = state.with_block(cell, seat, governor=True)
    assert governor.gov_bits == 1 << bit and governor.own == state.own


def test_the_text_render_shows_an_unlimited_supply_as_unlimited(backend):
    from island_fortress_env.views.text import render_text

    game = Game(
        backend=backend, num_players=2, unlimited_components=True, extra_jade=10**9, start_laborers=10**9
    )
    assert "supply: unlimited" in render_text(game.new_initial_state(1))
    assert "45 Laborers" in render_text(Game(backend=backend, num_players=2).new_initial_state(1))
