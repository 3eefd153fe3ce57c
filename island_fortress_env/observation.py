"""Observation encoding: State -> one seat-relative float32 vector and the action mask.

The vector has the same size for 2, 3 and 4 players and every variant (absent seats and
regions are zero), and it is seat-relative: "me" first, then the opponents in turn order,
so one network can play every seat of every table size.

Only what the observing seat may know goes in: the other players' favor hands appear as a
count, the deck as a size, bids as "placed" until all are revealed, and cards being drawn
by someone else not at all. ``LAYOUT`` names every slice (the README's table is made from it).
"""

from __future__ import annotations

import numpy as np

from .engine import actions as A
from .engine import tables
from .engine.state import DECISION_NAMES, NUM_DECISIONS, State
from .engine.wall import LEVELS, STRIDE

MAX_PLAYERS = tables.MAX_PLAYERS
CARDS = tables.MAX_FAVOR_CARDS
GRID = LEVELS * STRIDE  # 80 positions: the wall as a 4 x 20 image

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
    "Treasure / 10",
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
    *(f"supply: {k} (fraction of the box)" for k in ("jade", "treasure", "buyback_chips", "reinforcements", "laborers", "convicts")),
    *(f"prison {r + 1}: Jade / 5" for r in range(tables.MAX_REGIONS)),
    *(f"prison {r + 1}: Convicts / 5" for r in range(tables.MAX_REGIONS)),
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

_NBYTES = GRID // 8  # 80 bits -> 10 bytes
_CARD_BYTES = (CARDS + 7) // 8
_SUPPLY_KEYS = ("jade", "treasure", "buyback_chips", "reinforcements", "laborers", "convicts")


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
        self.cards = game.deck.cards
        self._seats = [tuple((s + i) % n for i in range(n)) for s in range(n)]
        self._pad_players = [0.0] * ((MAX_PLAYERS - n) * NUM_PLAYER_FEATURES)
        self._pad_regions = [0.0] * (tables.MAX_REGIONS - geo.regions)
        self._pad_masks = [0] * (MAX_PLAYERS - n)
        static = [0.0] * (1 + 2 * (MAX_PLAYERS - 1))
        static[1 + (n - 2)] = 1.0
        static[1 + (MAX_PLAYERS - 1) + (geo.regions - 2)] = 1.0
        self._static_global = static[1:] + [
            float(cfg.no_replace), float(cfg.favor_trade_in), float(cfg.unlimited_components)
        ]  # fmt: skip
        self._box = [float(tables.COMPONENTS[k]) for k in _SUPPLY_KEYS]
        self._zero_prisons = [0.0] * (2 * tables.MAX_REGIONS)
        self._zero_decision = [0.0] * (NUM_DECISIONS + A.NUM_OPS)
        self._clip = cfg.unlimited_components  # only then can a count outgrow the Box
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

        # Players (me first) and the global/decision context: one flat list.
        geo = self.geo
        region_masks = geo.region_mask
        holder = state.holder
        last_bids = state.last_bids
        current = state.current
        gov_in_hand = state.gov_in_hand
        values: list[float] = []
        extend = values.extend
        for s in seats:
            o = own[s]
            hand = state.roles_hand[s]
            table = state.roles_table[s]
            r = region[s]
            extend((
                1.0,
                state.jade[s] / 20,
                state.laborers[s] / 10,
                state.convicts[s] / 10,
                state.blocks[s] / 10,
                state.stock_blocks[s] / 18,
                state.chips[s] / 4,
                state.treasure[s] / 10,
                state.score[s] / 50,
                state.income_bonus[s] / 3,
                state.petition_bonus[s] / 3,
                state.favor_hand[s].bit_count() / 5,
                state.favor_played[s].bit_count() / 5,
                o.bit_count() / 18,
                state.turns_taken[s] / 3,
                (last_bids[s] / 20) if last_bids else 0.0,
                s == holder,
                s == holder and gov_in_hand,
                s == current,
                hand & 1, hand >> 1 & 1, hand >> 2 & 1, hand >> 3 & 1, hand >> 4 & 1,
                table & 1, table >> 1 & 1, table >> 2 & 1, table >> 3 & 1, table >> 4 & 1,
                r == 0, r == 1, r == 2, r == 3,
            ))  # fmt: skip
            extend([(o & m).bit_count() / 10 for m in region_masks])
            extend(self._pad_regions)
        extend(self._pad_players)

        box = self._box
        values.append(state.round / 12)
        extend(self._static_global)
        extend((
            state.gov_stock / 12,
            len(state.deck) / CARDS,
            min(state.sup_jade, box[0]) / box[0],
            min(state.sup_treasure, box[1]) / box[1],
            min(state.sup_chips, box[2]) / box[2],
            min(state.sup_reinf, box[3]) / box[3],
            min(state.sup_laborers, box[4]) / box[4],
            min(state.sup_convicts, box[5]) / box[5],
        ))  # fmt: skip
        prisons = self._zero_prisons[:]
        for r in range(geo.regions):
            prisons[r] = state.prison_jade[r] / 5
            prisons[tables.MAX_REGIONS + r] = state.prison_convicts[r] / 5
        extend(prisons)
        decision = self._zero_decision[:]
        decision[state.decision] = 1.0
        if state.in_action and state.op >= 0:
            decision[NUM_DECISIONS + state.op] = 1.0
        extend(decision)
        my_bid = state.decision == 1 and seat in state.order[: state.order_pos]  # D_BID
        extend((
            state.actions_this_turn / 2,
            state.buyback_used,
            state.build_left / 2,
            state.build_need / 16,
            state.worker_need / 16,
            state.keep_left / 3,
            state.bids[seat] / 20 if my_bid else 0.0,
            my_bid,
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
            playable = 0
            for c in _bits(hand):
                if self.cards[c].matches(blocks):
                    playable |= 1 << c
            cards = _unpack([hand, state.drawn[seat], playable, played], _CARD_BYTES, CARDS)
            cards = cards.astype(np.float32).ravel()
            if len(self._card_cache) >= self._CACHE_LIMIT:
                self._card_cache.clear()
            self._card_cache[key] = cards

        obs = np.concatenate((wall, np.array(values, dtype=np.float32), cards))
        if self._clip:
            np.clip(obs, -1.0, 10.0, out=obs)
        return obs

    def _wall_planes(self, state: State, seats: tuple[int, ...]) -> np.ndarray:
        geo = self.geo
        region_masks = geo.region_mask
        pad = self._pad_masks
        masks = [geo.valid, geo.buildable(state.occ)]
        masks += [state.own[s] for s in seats] + pad
        masks += [state.gov_bits, state.reinf]
        masks += [region_masks[state.region[s]] for s in seats] + pad
        return _unpack(masks, _NBYTES, GRID).astype(np.float32).ravel()


def _bits(mask: int):
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def action_mask(state: State, out: np.ndarray | None = None) -> np.ndarray:
    """int8 mask over the whole action table: 1 where the action is legal now."""
    mask = np.zeros(A.NUM_ACTIONS, dtype=np.int8) if out is None else out
    if out is not None:
        mask.fill(0)
    legal = state.legal_actions()
    if legal:
        mask[legal] = 1
    return mask
