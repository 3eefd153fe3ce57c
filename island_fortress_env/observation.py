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

import numpy as np

from .engine import actions as A
from .engine import tables
from .engine.state import DECISION_NAMES, NUM_DECISIONS, State
from .engine.wall import LEVELS, STRIDE

MAX_PLAYERS = tables.MAX_PLAYERS
CARDS = tables.MAX_FAVOR_CARDS
GRID = LEVELS * STRIDE  # 80 positions: the wall as a 4 x 20 image
OBS_LOW, OBS_HIGH = -1.0, 10.0  # every feature is scaled into this range (the Box's bounds)
_SUPPLY_KEYS = ("jade", "treasure", "buyback_chips", "reinforcements", "laborers", "convicts")

# Wall planes, each a 4 x 20 grid (level-major, left to right, level 1 first).
WALL_PLANES = (
    "cell exists",
    "empty and buildable now",
    "my block",
    "block of opponent 1 (next in turn order)",
    "block of opponent 2",
    "block of opponent 3",
    "Governor block",
    "reinforced",
    "my Taskmaster's region",
    "opponent 1's Taskmaster's region",
    "opponent 2's Taskmaster's region",
    "opponent 3's Taskmaster's region",
)
NUM_PLANES = len(WALL_PLANES)

# Per-player features (scaled), for me then each opponent in turn order.
PLAYER_FEATURES = (
    "seat present",
    "Jade / 20",
    "Laborers / 10",
    "Convicts / 10",
    "Wall Blocks in supply / 10",
    "Wall Blocks left in stockpile / 18",
    "Buyback Chips / 4",
    "Treasure / 20",
    "score / 50",
    "favor income bonus / 3",
    "favor petition bonus / 3",
    "favor cards in hand / 5",
    "favor cards played / 5",
    "blocks on the wall / 18",
    "turns taken this round / 3",
    "last revealed petition bid / 20",
    "holds the Governor marker",
    "holds an unplaced Governor block",
    "is the player to move",
    *(f"role in hand: {r}" for r in A.ROLE_NAMES),
    *(f"role on table: {r}" for r in A.ROLE_NAMES),
    *(f"Taskmaster in region {r + 1}" for r in range(tables.MAX_REGIONS)),
    *(f"blocks in region {r + 1} / 10" for r in range(tables.MAX_REGIONS)),
)
NUM_PLAYER_FEATURES = len(PLAYER_FEATURES)

GLOBAL_FEATURES = (
    "round / 12",
    *(f"{n} players" for n in range(2, MAX_PLAYERS + 1)),
    *(f"{r} regions" for r in range(2, tables.MAX_REGIONS + 1)),
    "variant: no Replace",
    "variant: Favor Trade-in",
    "unlimited components",
    "Governor blocks left / 12",
    "favor deck size / 36",
    *(f"supply: {k} (fraction of the box)" for k in _SUPPLY_KEYS),
    *(f"prison {r + 1}: Jade / 5" for r in range(tables.MAX_REGIONS)),
    *(f"prison {r + 1}: Convicts / 10" for r in range(tables.MAX_REGIONS)),
    *(f"decision: {name}" for name in DECISION_NAMES),
    *(f"action in progress: {name}" for name in A.OP_NAMES),
    "actions taken this turn / 2",
    "buyback used this turn",
    "blocks left to place in this build / 2",
    "Workers this build needs / 16",
    "Workers to assign / 16",
    "favor cards left to keep / 3",
    "my sealed bid this round / 20 (mine only)",
    "I have bid this round",
)
NUM_GLOBAL = len(GLOBAL_FEATURES)

PRIVATE_BLOCKS = (
    ("my favor hand", CARDS),
    ("favor cards I am choosing from (setup deal or draw)", CARDS),
    ("my hand cards whose pattern is complete now", CARDS),
    ("favor cards played by anyone", CARDS),
)

LAYOUT: list[tuple[str, int, int]] = []  # (name, start, size)


def _add(name: str, size: int) -> int:
    start = LAYOUT[-1][1] + LAYOUT[-1][2] if LAYOUT else 0
    LAYOUT.append((name, start, size))
    return start


WALL_START = _add(f"wall planes ({NUM_PLANES} x 4 levels x {STRIDE} columns)", NUM_PLANES * GRID)
PLAYERS_START = _add(f"players ({MAX_PLAYERS} seats, me first, x {NUM_PLAYER_FEATURES})", MAX_PLAYERS * NUM_PLAYER_FEATURES)
GLOBAL_START = _add("global and decision context", NUM_GLOBAL)
PRIVATE_START = [_add(name, size) for name, size in PRIVATE_BLOCKS]
OBS_SIZE = LAYOUT[-1][1] + LAYOUT[-1][2]


def _scale_of(name: str) -> float:
    """The scale a feature's name states: "Jade / 20" -> 1/20, "supply: jade (fraction of the
    box)" -> 1/100, anything else (a flag) -> 1."""
    if name.startswith("supply: "):
        return 1.0 / tables.COMPONENTS[name.split()[1]]
    if " / " in name:
        return 1.0 / float(name.rsplit(" / ", 1)[1].split()[0])
    return 1.0


_SCALE = np.array(
    [_scale_of(f) for f in PLAYER_FEATURES] * MAX_PLAYERS + [_scale_of(f) for f in GLOBAL_FEATURES],
    dtype=np.float32,
)
_ROLE_BITS = [tuple(mask >> c & 1 for c in range(5)) for mask in range(32)]
_REGION_ONE_HOT = [tuple(int(r == k) for k in range(tables.MAX_REGIONS)) for r in range(tables.MAX_REGIONS)]

_NBYTES = GRID // 8  # 80 bits -> 10 bytes
_CARD_BYTES = (CARDS + 7) // 8


def _unpack(masks: list[int], nbytes: int, width: int) -> np.ndarray:
    """Many bit sets -> a (len(masks), width) 0/1 uint8 array in one numpy call."""
    raw = b"".join(m.to_bytes(nbytes, "little") for m in masks)
    bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8), bitorder="little")
    return bits.reshape(len(masks), nbytes * 8)[:, :width]


class ObservationEncoder:
    """Encodes states of one Game for any seat.

    The wall planes and the card sets change on few steps (a block lands, a card moves), so
    they are cached by the bit sets they are made from; the boards and the decision context
    are rebuilt each call as one flat list. ``encode`` returns a fresh array every time.
    """

    _CACHE_LIMIT = 4096

    def __init__(self, game) -> None:
        self.game = game
        self.n = n = game.num_players
        self.geo = geo = game.geometry
        cfg = game.config
        self._seats = [tuple((s + i) % n for i in range(n)) for s in range(n)]
        self._pad_players = [0.0] * ((MAX_PLAYERS - n) * NUM_PLAYER_FEATURES)
        self._pad_masks = [0] * (MAX_PLAYERS - n)
        static = [0.0] * (1 + 2 * (MAX_PLAYERS - 1))
        static[1 + (n - 2)] = 1.0
        static[1 + (MAX_PLAYERS - 1) + (geo.regions - 2)] = 1.0
        self._static_global = static[1:] + [
            float(cfg.no_replace), float(cfg.favor_trade_in), float(cfg.unlimited_components)
        ]  # fmt: skip
        self._box = [float(tables.COMPONENTS[k]) for k in _SUPPLY_KEYS]
        self._zero_decision = [0.0] * (NUM_DECISIONS + A.NUM_OPS)
        self._clip = cfg.unlimited_components  # only then can a count outgrow the Box
        self._no_bids = [0] * n
        self._pad_prisons = [0] * (tables.MAX_REGIONS - geo.regions)
        self._region_counts: dict[int, tuple[int, ...]] = {}
        self._scale = _SCALE
        self._pack = struct.Struct(f"<{len(_SCALE)}f").pack
        self._wall_cache: dict[tuple, np.ndarray] = {}
        self._card_cache: dict[tuple, np.ndarray] = {}

    def encode(self, state: State, seat: int) -> np.ndarray:
        """The observation of ``seat`` (a fresh float32 array of ``OBS_SIZE``)."""
        seats = self._seats[seat]
        own = state.own
        region = state.region

        # Wall planes (cached).
        key = (seats, state.occ, state.gov_bits, state.reinf, *own, *region)
        wall = self._wall_cache.get(key)
        if wall is None:
            wall = self._wall_planes(state, seats)
            if len(self._wall_cache) >= self._CACHE_LIMIT:
                self._wall_cache.clear()
            self._wall_cache[key] = wall

        # Players (me first) and the global/decision context: one flat list of raw numbers,
        # scaled by one vector multiply at the end (``self._scale``).
        holder = state.holder
        last_bids = state.last_bids or self._no_bids
        current = state.current
        gov_in_hand = state.gov_in_hand
        jade, laborers, convicts = state.jade, state.laborers, state.convicts
        blocks, stock, chips, treasure = state.blocks, state.stock_blocks, state.chips, state.treasure
        score, income, petition = state.score, state.income_bonus, state.petition_bonus
        fhand, fplayed, turns = state.favor_hand, state.favor_played, state.turns_taken
        roles_hand, roles_table = state.roles_hand, state.roles_table
        region_counts = self._region_counts
        values: list[float] = []
        extend = values.extend
        for s in seats:
            o = own[s]
            counts = region_counts.get(o)
            if counts is None:
                counts = region_counts[o] = self._counts_of(o)
            extend((
                1, jade[s], laborers[s], convicts[s], blocks[s], stock[s], chips[s], treasure[s],
                score[s], income[s], petition[s], fhand[s].bit_count(), fplayed[s].bit_count(),
                o.bit_count(), turns[s], last_bids[s], s == holder, s == holder and gov_in_hand,
                s == current, *_ROLE_BITS[roles_hand[s]], *_ROLE_BITS[roles_table[s]],
                *_REGION_ONE_HOT[region[s]], *counts,
            ))  # fmt: skip
        extend(self._pad_players)
        values.append(state.round)
        extend(self._static_global)
        supplies = (
            state.sup_jade, state.sup_treasure, state.sup_chips,
            state.sup_reinf, state.sup_laborers, state.sup_convicts,
        )  # fmt: skip
        if self._clip:  # unlimited supplies: show at most a box's worth
            supplies = tuple(min(v, b) for v, b in zip(supplies, self._box))
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
        my_bid = state.decision == 1 and seat in state.order[: state.order_pos]  # D_BID
        extend((
            state.actions_this_turn, state.buyback_used, state.build_left, state.build_need,
            state.worker_need, state.keep_left, state.bids[seat] if my_bid else 0, my_bid,
        ))  # fmt: skip

        # This seat's card sets and the public played cards (cached).
        played = 0
        for p in state.favor_played:
            played |= p
        hand = state.favor_hand[seat]
        blocks = own[seat] & ~state.reinf
        key = (hand, state.drawn[seat], played, blocks)
        cards = self._card_cache.get(key)
        if cards is None:
            playable = self.game.playable_cards(hand, blocks)
            cards = _unpack([hand, state.drawn[seat], playable, played], _CARD_BYTES, CARDS)
            cards = cards.astype(np.float32).ravel()
            if len(self._card_cache) >= self._CACHE_LIMIT:
                self._card_cache.clear()
            self._card_cache[key] = cards

        middle = np.frombuffer(self._pack(*values), dtype=np.float32)  # fastest list -> float32
        obs = np.concatenate((wall, middle * self._scale, cards))
        if self._clip:
            np.clip(obs, OBS_LOW, OBS_HIGH, out=obs)
        return obs

    def _counts_of(self, own: int) -> tuple[int, ...]:
        counts = tuple((own & m).bit_count() for m in self.geo.region_mask)
        return counts + (0,) * (tables.MAX_REGIONS - len(counts))

    def _wall_planes(self, state: State, seats: tuple[int, ...]) -> np.ndarray:
        geo = self.geo
        region_masks = geo.region_mask
        pad = self._pad_masks
        masks = [geo.valid, geo.buildable(state.occ)]
        masks += [state.own[s] for s in seats] + pad
        masks += [state.gov_bits, state.reinf]
        masks += [region_masks[state.region[s]] for s in seats] + pad
        return _unpack(masks, _NBYTES, GRID).astype(np.float32).ravel()


def action_mask(state: State, out: np.ndarray | None = None) -> np.ndarray:
    """int8 mask over the whole action table: 1 where the action is legal now."""
    mask = np.zeros(A.NUM_ACTIONS, dtype=np.int8) if out is None else out
    if out is not None:
        mask.fill(0)
    legal = state.legal_actions()
    if legal:
        mask[legal] = 1
    return mask
