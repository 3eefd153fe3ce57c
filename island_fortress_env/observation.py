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
from .engine.favors import REWARD_KINDS
from .engine.state import NUM_DECISIONS, State
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
    *(f"decision: {i}" for i in range(NUM_DECISIONS)),
    *(f"action in progress: op {i}" for i in range(A.NUM_OPS)),
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
    """Encodes states of one Game; holds the per-game constants and a scratch buffer."""

    def __init__(self, game) -> None:
        self.game = game
        self.n = game.num_players
        geo = game.geometry
        self.geo = geo
        self.card_masks = [
            (1 << c) if c < len(game.deck) else 0 for c in range(CARDS)
        ]
        cfg = game.config
        self.static_global = np.zeros(NUM_GLOBAL, dtype=np.float32)
        g = self.static_global
        g[1 + (self.n - 2)] = 1.0
        g[1 + (MAX_PLAYERS - 1) + (geo.regions - 2)] = 1.0
        base = 1 + (MAX_PLAYERS - 1) + (tables.MAX_REGIONS - 1)
        g[base] = float(cfg.no_replace)
        g[base + 1] = float(cfg.favor_trade_in)
        g[base + 2] = float(cfg.unlimited_components)
        self._dyn_start = base + 3
        self._box = [tables.COMPONENTS[k] for k in _SUPPLY_KEYS]
        self._buf = np.zeros(OBS_SIZE, dtype=np.float32)

    def encode(self, state: State, seat: int) -> np.ndarray:
        """The observation of ``seat`` (a fresh array)."""
        n = self.n
        geo = self.geo
        seats = [(seat + i) % n for i in range(n)]
        buf = self._buf
        buf.fill(0.0)

        # Wall planes.
        occ = state.occ
        region_masks = geo.region_mask
        masks = [geo.valid, geo.buildable(occ)]
        masks += [state.own[s] for s in seats] + [0] * (MAX_PLAYERS - n)
        masks += [state.gov_bits, state.reinf]
        masks += [region_masks[state.region[s]] for s in seats] + [0] * (MAX_PLAYERS - n)
        buf[WALL_START : WALL_START + NUM_PLANES * GRID] = _unpack(masks, _NBYTES, GRID).ravel()

        # Players, me first.
        holder = state.holder
        last_bids = state.last_bids
        rows = []
        for s in seats:
            own = state.own[s]
            hand = state.roles_hand[s]
            table = state.roles_table[s]
            region = state.region[s]
            row = [
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
                own.bit_count() / 18,
                state.turns_taken[s] / 3,
                (last_bids[s] / 20) if last_bids else 0.0,
                float(s == holder),
                float(s == holder and state.gov_in_hand),
                float(s == state.current),
                hand & 1, hand >> 1 & 1, hand >> 2 & 1, hand >> 3 & 1, hand >> 4 & 1,
                table & 1, table >> 1 & 1, table >> 2 & 1, table >> 3 & 1, table >> 4 & 1,
                region == 0, region == 1, region == 2, region == 3,
            ]  # fmt: skip
            row += [(own & m).bit_count() / 10 for m in region_masks]
            row += [0.0] * (tables.MAX_REGIONS - geo.regions)
            rows.append(row)
        size = n * NUM_PLAYER_FEATURES
        buf[PLAYERS_START : PLAYERS_START + size] = np.array(rows, dtype=np.float32).ravel()

        # Global and decision context.
        g = buf[GLOBAL_START : GLOBAL_START + NUM_GLOBAL]
        g[:] = self.static_global
        g[0] = state.round / 12
        i = self._dyn_start
        g[i] = state.gov_stock / 12
        g[i + 1] = len(state.deck) / CARDS
        i += 2
        supplies = (
            state.sup_jade, state.sup_treasure, state.sup_chips,
            state.sup_reinf, state.sup_laborers, state.sup_convicts,
        )  # fmt: skip
        for k in range(6):
            g[i + k] = min(supplies[k], self._box[k]) / self._box[k]
        i += 6
        for r in range(geo.regions):
            g[i + r] = state.prison_jade[r] / 5
            g[i + tables.MAX_REGIONS + r] = state.prison_convicts[r] / 5
        i += 2 * tables.MAX_REGIONS
        g[i + state.decision] = 1.0
        i += NUM_DECISIONS
        if state.in_action and state.op >= 0:
            g[i + state.op] = 1.0
        i += A.NUM_OPS
        g[i] = state.actions_this_turn / 2
        g[i + 1] = float(state.buyback_used)
        g[i + 2] = state.build_left / 2
        g[i + 3] = state.build_need / 16
        g[i + 4] = state.worker_need / 16
        g[i + 5] = state.keep_left / 3
        if state.decision == 1 and seat in state.order[: state.order_pos]:  # D_BID
            g[i + 6] = state.bids[seat] / 20
            g[i + 7] = 1.0

        # Private card sets of this seat, and the public played cards.
        if state.favor_hand[seat] or state.drawn[seat] or any(state.favor_played):
            played = 0
            for s in range(n):
                played |= state.favor_played[s]
            playable = 0
            deck = self.game.deck.cards
            blocks = state.own[seat] & ~state.reinf
            for c in _bits(state.favor_hand[seat]):
                if deck[c].matches(blocks):
                    playable |= 1 << c
            cards = _unpack([state.favor_hand[seat], state.drawn[seat], playable, played], _CARD_BYTES, CARDS)
            start = PRIVATE_START[0]
            buf[start : start + 4 * CARDS] = cards.ravel()
        return buf.copy()


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
