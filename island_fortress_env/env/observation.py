"""Observation encoding: State -> one seat-relative float32 vector and the action mask.

The vector has the same size for 2, 3 and 4 players and every variant (absent seats and
regions are zero), and it is seat-relative: "me" first, then the opponents in turn order,
so one network can play every seat of every table size.

Only what the observing seat may know goes in: the other players' favor hands appear as a
count, the deck as a size, bids as "placed" until all are revealed, and cards being drawn
by someone else not at all. ``LAYOUT`` names every slice (the README's table is made from it).
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from island_fortress_env.engine import actions as A
from island_fortress_env.engine import tables
from island_fortress_env.engine.decisions import NUM_DECISIONS
from island_fortress_env.engine.observation_spec import (
    GLOBAL_FEATURE_SPECS,
    OBSERVED_OPTIONS,
    PLAYER_FEATURE_SPECS,
    PRIVATE_BLOCKS,
    SUPPLY_KEYS,
    WALL_PLANES,
)
from island_fortress_env.engine.observation_spec import Feature as Feature  # re-exported
from island_fortress_env.engine.state import State
from island_fortress_env.engine.visibility import has_sealed_bid, own_bid
from island_fortress_env.engine.wall import LEVELS, STRIDE

try:  # a state of the C++ core writes its observation and mask itself, byte for byte the same
    from island_fortress_env.core.state import CoreState as _CoreState
except ImportError:  # the core is not built: every state is an engine State
    _CoreState = None  # type: ignore[assignment,misc]

MAX_PLAYERS = tables.MAX_PLAYERS
CARDS = tables.MAX_FAVOR_CARDS
GRID = LEVELS * STRIDE  # 80 positions: the wall as a 4 x 20 image
OBS_LOW, OBS_HIGH = -1.0, 10.0  # every feature is scaled into this range (the Box's bounds)
# The features, their divisors and the card rows are declared in engine/observation_spec.py
# (the C++ encoder's divisors are generated from it).
NUM_PLANES = len(WALL_PLANES)
PLAYER_FEATURES = tuple(f.label for f in PLAYER_FEATURE_SPECS)
NUM_PLAYER_FEATURES = len(PLAYER_FEATURES)
GLOBAL_FEATURES = tuple(f.label for f in GLOBAL_FEATURE_SPECS)
NUM_GLOBAL = len(GLOBAL_FEATURES)

LAYOUT: list[tuple[str, int, int]] = []  # (name, start, size)


def _add(name: str, size: int) -> int:
    start = LAYOUT[-1][1] + LAYOUT[-1][2] if LAYOUT else 0
    LAYOUT.append((name, start, size))
    return start


WALL_START = _add(f"wall planes ({NUM_PLANES} x 4 levels x {STRIDE} columns)", NUM_PLANES * GRID)
PLAYERS_START = _add(
    f"players ({MAX_PLAYERS} seats, me first, x {NUM_PLAYER_FEATURES})", MAX_PLAYERS * NUM_PLAYER_FEATURES
)
GLOBAL_START = _add("global and decision context", NUM_GLOBAL)
PRIVATE_START = [_add(name, size) for name, size in PRIVATE_BLOCKS]
OBS_SIZE = LAYOUT[-1][1] + LAYOUT[-1][2]


_SCALE = np.array(
    [1.0 / f.divisor for f in PLAYER_FEATURE_SPECS] * MAX_PLAYERS
    + [1.0 / f.divisor for f in GLOBAL_FEATURE_SPECS],
    dtype=np.float32,
)
_ROLE_BITS = [tuple(mask >> c & 1 for c in range(5)) for mask in range(32)]
_REGION_ONE_HOT = [tuple(int(r == k) for k in range(tables.MAX_REGIONS)) for r in range(tables.MAX_REGIONS)]

_NBYTES = GRID // 8  # 80 bits -> 10 bytes
_CARD_BYTES = (CARDS + 7) // 8
_MIDDLE = slice(PLAYERS_START, PRIVATE_START[0])  # the scaled numbers between wall and cards
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_CACHE_LIMIT = 8192  # entries per encoder cache; a full cache is cleared (memory stays bounded)
# One byte of a bit set -> its 8 bits as float32 0.0/1.0 (little-endian bit order), as bytes.
_BYTE_TO_FLOATS = [np.unpackbits(np.uint8(b), bitorder="little").astype("<f4").tobytes() for b in range(256)]


def _remember(cache: dict, key: Any, value: Any, limit: int | None = None) -> Any:
    """``cache[key] = value``, clearing the cache first when it holds ``limit`` entries
    (default ``_CACHE_LIMIT``): every cache here stays bounded over long runs."""
    if len(cache) >= (_CACHE_LIMIT if limit is None else limit):
        cache.clear()
    cache[key] = value
    return value


def _rendered(cache: dict[int, bytes], mask: int, nbytes: int, width: int) -> bytes:
    """A bit set -> ``width`` float32 0/1 values as raw little-endian bytes, memoised in
    ``cache``."""
    found = cache.get(mask)
    if found is None:
        bits = mask.to_bytes(nbytes, "little")
        found = _remember(cache, mask, b"".join([_BYTE_TO_FLOATS[b] for b in bits])[: 4 * width])
    return found


class ObservationEncoder:
    """Encodes states of one Game for any seat.

    The observation is assembled as raw float32 bytes: each wall plane and each card row is a
    bit set, rendered once and cached by its value (a step changes one or two of them, and a
    seat change only reorders them); the boards and the decision context are rebuilt each call
    as one flat list of raw numbers, packed, and scaled in place. ``encode`` returns a fresh,
    writable array every time.
    """

    def __init__(self, game) -> None:
        self.game = game
        self.n = n = game.num_players
        self.geo = geo = game.geometry
        cfg = game.config
        self._seats = [tuple((s + i) % n for i in range(n)) for s in range(n)]
        self._pad_players = [0] * ((MAX_PLAYERS - n) * NUM_PLAYER_FEATURES)
        self._pad_masks = [0] * (MAX_PLAYERS - n)
        static = [0] * (1 + 2 * (MAX_PLAYERS - 1))
        static[1 + (n - 2)] = 1
        static[1 + (MAX_PLAYERS - 1) + (geo.regions - 2)] = 1
        self._static_global = [*static[1:], *(int(getattr(cfg, name)) for name in OBSERVED_OPTIONS)]
        self._box = tuple(tables.COMPONENTS[k] for k in SUPPLY_KEYS)
        self._unlimited = cfg.unlimited_components
        self._zero_decision = [0] * (NUM_DECISIONS + A.NUM_OPS)
        # With the box's components and the shipped deck every feature is inside the Box
        # (Jade, Treasure, Workers are capped by their supplies; a score stays under 500).
        # Unlimited supplies or another deck can take a count past it: then clip.
        self._clip = cfg.unlimited_components or cfg.favor_deck is not None
        self._no_bids = [0] * n
        self._pad_prisons = [0] * (tables.MAX_REGIONS - geo.regions)
        self._region_counts: dict[int, tuple[int, ...]] = {}
        self._scale = _SCALE
        self._pack = struct.Struct(f"<{len(_SCALE)}i").pack  # every raw number is an int or bool
        self._zero_middle = bytes(4 * len(_SCALE))
        self._walls: dict[tuple, bytes] = {}  # (seats, wall bit sets) -> the planes as float32 bytes
        self._planes: dict[int, bytes] = {}  # one bit set -> its wall plane as float32 bytes
        self._cards: dict[tuple, bytes] = {}  # (hand, drawn, blocks, played...) -> card rows
        self._card_rows: dict[int, bytes] = {}  # one bit set -> its card row as float32 bytes

    def encode(self, state: State, seat: int) -> np.ndarray:
        """The observation of ``seat`` (a fresh float32 array of ``OBS_SIZE``)."""
        if type(state) is _CoreState:  # the core's C++ writer (same bytes)
            return state.encode(seat)
        seats = self._seats[seat]
        own = state.own
        region = state.region

        # Wall planes, in WALL_PLANES order: the whole wall is cached by what it is made of,
        # and a new wall is assembled from cached planes (one step changes one or two).
        key = (seats, state.occ, state.gov_bits, state.reinf, *own, *region)
        wall = self._walls.get(key)
        if wall is None:
            wall = _remember(self._walls, key, self._wall(state, seats))

        # Players (me first) and the global/decision context: one flat list of raw integers,
        # packed as int32 and scaled into the middle of the output (``self._scale``).
        columns = list(zip(  # one tuple of plain counts per seat, in PLAYER_FEATURES order
            state.jade, state.laborers, state.convicts, state.blocks, state.stock_blocks,
            state.chips, state.treasure, state.score, state.income_bonus, state.petition_bonus,
            strict=True,
        ))  # fmt: skip
        holder, current, gov_in_hand = state.holder, state.current, state.gov_in_hand
        last_bids = state.last_bids or self._no_bids
        fhand, fplayed, turns = state.favor_hand, state.favor_played, state.turns_taken
        roles_hand, roles_table = state.roles_hand, state.roles_table
        region_counts = self._region_counts
        values: list[int] = []
        extend = values.extend
        for s in seats:
            o = own[s]
            counts = region_counts.get(o)
            if counts is None:
                counts = _remember(region_counts, o, self._counts_of(o))
            extend((
                1, *columns[s], fhand[s].bit_count(), fplayed[s].bit_count(), o.bit_count(),
                turns[s], last_bids[s], s == holder, s == holder and gov_in_hand, s == current,
                *_ROLE_BITS[roles_hand[s]], *_ROLE_BITS[roles_table[s]], *_REGION_ONE_HOT[region[s]],
                *counts,
            ))  # fmt: skip
        extend(self._pad_players)
        values.append(state.round)
        extend(self._static_global)
        cfg_unlimited = self._unlimited
        supplies: tuple[int, ...] = (
            state.sup_jade, state.sup_treasure, state.sup_chips,
            state.sup_reinf, state.sup_laborers, state.sup_convicts,
        )  # fmt: skip
        if cfg_unlimited:  # an unlimited supply never runs out: shown as a full box
            supplies = self._box
        extend((state.gov_stock, len(state.deck), *supplies))
        extend(state.prison_jade)
        extend(self._pad_prisons)
        extend(state.prison_convicts)
        extend(self._pad_prisons)
        decision = self._zero_decision[:]
        decision[state.decision] = 1
        if state.in_action and state.op >= 0:
            decision[NUM_DECISIONS + state.op] = 1
        extend(decision)
        # A sealed bid, complete or partly entered (one base-101 digit at a time), is shown
        # to its bidder only; how many digits are left is public (it follows from the Jade).
        extend((
            state.actions_this_turn, state.buyback_used, state.build_left, state.build_need,
            state.worker_need, state.keep_left + state.bid_digits_left, own_bid(state, seat),
            has_sealed_bid(state, seat),
        ))  # fmt: skip

        # This seat's card sets and the public played cards (cached by the sets).
        hand = state.favor_hand[seat]
        blocks = own[seat] & ~state.reinf
        key = (hand, state.drawn[seat], blocks, *fplayed)
        cards = self._cards.get(key)
        if cards is None:
            played = 0
            for p in fplayed:
                played |= p
            playable = self.game.playable_cards(hand, blocks)
            rows = (hand, state.drawn[seat], playable, played)
            cards = b"".join([_rendered(self._card_rows, m, _CARD_BYTES, CARDS) for m in rows])
            _remember(self._cards, key, cards)

        obs = np.frombuffer(bytearray().join((wall, self._zero_middle, cards)), dtype=np.float32)
        try:  # every number fits a byte in all but extreme games: the cheapest conversion
            raw = np.frombuffer(bytes(values), dtype=np.uint8)
        except ValueError:
            raw = np.frombuffer(self._pack_wide(values), dtype=np.int32)
        np.multiply(raw, self._scale, out=obs[_MIDDLE], dtype=np.float32, casting="unsafe")  # exact ints
        if self._clip:
            np.clip(obs, OBS_LOW, OBS_HIGH, out=obs)
        return obs

    def _pack_wide(self, values: list[int]) -> bytes:
        """Pack as int32; a count beyond int32 (unlimited components) is first clamped to it,
        which changes nothing after scaling and clipping to the Box."""
        try:
            return self._pack(*values)
        except struct.error:
            return self._pack(*[min(max(v, _INT32_MIN), _INT32_MAX) for v in values])

    def _wall(self, state: State, seats: tuple[int, ...]) -> bytes:
        geo = self.geo
        own, region, pad = state.own, state.region, self._pad_masks
        masks = (
            geo.valid, geo.buildable(state.occ), *[own[s] for s in seats], *pad,
            state.gov_bits, state.reinf, *[geo.region_mask[region[s]] for s in seats], *pad,
        )  # fmt: skip
        planes = self._planes
        return b"".join([planes.get(m) or _rendered(planes, m, _NBYTES, GRID) for m in masks])

    def _counts_of(self, own: int) -> tuple[int, ...]:
        """Blocks per region of one player's bit set."""
        counts = tuple((own & m).bit_count() for m in self.geo.region_mask)
        return counts + (0,) * (tables.MAX_REGIONS - len(counts))


_MASKS: dict[tuple[int, ...], bytes] = {}  # legal ids -> the mask's bytes (few distinct sets)
_MASK_CACHE_LIMIT = 4096


def action_mask(state: State, out: np.ndarray | None = None) -> np.ndarray:
    """int8 mask over the whole action table: 1 where the action is legal now (a fresh
    array, or written into ``out``)."""
    if type(state) is _CoreState:  # the core's C++ writer (same bytes)
        return state.action_mask(out)
    legal = state.legal_actions()
    mask = _MASKS.get(legal)
    if mask is None:
        bits = np.zeros(A.NUM_ACTIONS, dtype=np.int8)
        bits[list(legal)] = 1
        mask = _remember(_MASKS, legal, bits.tobytes(), _MASK_CACHE_LIMIT)
    if out is None:
        return np.frombuffer(bytearray(mask), dtype=np.int8)
    out[:] = np.frombuffer(mask, dtype=np.int8)
    return out
