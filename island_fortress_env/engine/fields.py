"""The fields of a game state and the moves of components every phase shares.

``State`` (state.py) holds the slots; the phase and role modules (``phases/``, ``roles/``) are
mixins over this class, so each of them reads and writes the state's fields by name with
their types known. Supplies, prisons, the wall and the score change only through the
methods here (one place for "take from a supply", "send to a prison", "put a block").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import scoring, tables
from .config import GameConfig
from .events import K_PLACE, K_ROW_COMPLETE, K_SCORE, ScoreReason
from .wall import LEVELS, STRIDE, WallGeometry

if TYPE_CHECKING:
    from .decisions import Decision
    from .game import Game

_ROW, _ROW_AT_END = ScoreReason.ROW, ScoreReason.ROW_AT_END
_LEVEL, _LEVEL_AT_END = ScoreReason.LEVEL, ScoreReason.LEVEL_AT_END
_TOWER = ScoreReason.TOWER


class StateFields:
    """Every field of a state, as slots (``State`` adds none)."""

    __slots__ = (  # noqa: RUF023 - grouped by meaning, not sorted
        "game", "cfg", "geo", "n", "rng",
        # players (one list entry per seat)
        "jade", "laborers", "convicts", "blocks", "stock_blocks", "chips", "treasure",
        "score", "income_bonus", "petition_bonus", "region", "roles_hand", "roles_table",
        "favor_hand", "favor_played", "drawn", "turns_taken", "bids", "last_bids",
        # the wall, as bit sets
        "occ", "own", "gov_bits", "reinf",
        # supplies, prisons, favor deck
        "sup_jade", "sup_treasure", "sup_chips", "sup_reinf", "sup_laborers", "sup_convicts",
        "gov_stock", "gov_box", "gov_in_hand", "prison_jade", "prison_convicts", "deck",
        "favor_discard",
        # turn structure and the pending decision
        "round", "decision", "current", "holder", "turn_index", "actions_this_turn",
        "buyback_used", "last_card", "in_action", "keep_left", "op", "build_left",
        "build_need", "worker_need", "favor_card", "order", "order_pos", "wall_completer",
        "winners", "_log", "bid_digits_left", "unlimited", "_legal",
    )  # fmt: skip

    game: Game
    cfg: GameConfig
    geo: WallGeometry
    n: int
    rng: int
    # players (one list entry per seat)
    jade: list[int]
    laborers: list[int]
    convicts: list[int]
    blocks: list[int]  # Wall Blocks in the player's supply
    stock_blocks: list[int]  # Wall Blocks left in the player's stockpile
    chips: list[int]
    treasure: list[int]
    score: list[int]
    income_bonus: list[int]
    petition_bonus: list[int]
    region: list[int]  # the region of each Taskmaster
    roles_hand: list[int]  # bit sets of role cards
    roles_table: list[int]
    favor_hand: list[int]  # bit sets of favor card ids
    favor_played: list[int]
    drawn: list[int]  # cards dealt or drawn, not yet kept
    turns_taken: list[int]
    bids: list[int]  # sealed bids (partial while a bid is entered digit by digit)
    last_bids: tuple[int, ...] | None
    # the wall, as bit sets
    occ: int
    own: list[int]
    gov_bits: int
    reinf: int
    # supplies (an unlimited one is a ledger: docs/RULES.md C7), prisons, favor deck
    sup_jade: int
    sup_treasure: int
    sup_chips: int
    sup_reinf: int
    sup_laborers: int
    sup_convicts: int
    gov_stock: int
    gov_box: int
    gov_in_hand: bool
    prison_jade: list[int]
    prison_convicts: list[int]
    deck: list[int]  # favor card ids, top last
    favor_discard: int
    # turn structure and the pending decision
    round: int
    decision: Decision
    current: int
    holder: int  # the Governor marker's holder (-1 before the first petition)
    turn_index: int
    actions_this_turn: int
    buyback_used: bool
    last_card: int
    in_action: bool
    keep_left: int
    op: int
    build_left: int
    build_need: int
    worker_need: int
    favor_card: int
    order: list[int]
    order_pos: int
    wall_completer: int
    winners: list[int]
    _log: list[tuple[Any, ...]]
    bid_digits_left: int
    unlimited: bool
    _legal: tuple[int, ...] | None

    if TYPE_CHECKING:  # defined by the phase and role mixins; declared for the type checker

        def _finish_action(self) -> None: ...
        def _start_turn(self, p: int) -> None: ...
        def _end_turn(self) -> None: ...
        def _start_round(self) -> None: ...
        def _end_game(self) -> None: ...
        def _build_cells(self, occ: int, p: int, budget: int, left: int) -> list[int]: ...
        def _replace_targets(self, p: int) -> int: ...

    def _take_jade(self, amount: int) -> int:
        take = amount if self.unlimited else min(amount, self.sup_jade)
        self.sup_jade -= take
        return take

    def _score(self, p: int, points: int, reason: ScoreReason, region: int = -1, level: int = -1) -> None:
        self.score[p] += points
        self._log.append((K_SCORE, p, points, reason, region, level))

    def _to_prison(self, region: int, jade: int = 0, convicts: int = 1) -> None:
        """Send Jade and Convicts from the supply to a prison; an empty supply sends nothing."""
        if self.unlimited:
            j, c = jade, convicts
        else:
            j = min(jade, self.sup_jade)
            c = min(convicts, self.sup_convicts)
        self.sup_jade -= j
        self.sup_convicts -= c
        self.prison_jade[region] += j
        self.prison_convicts[region] += c

    def _gain_chip(self, p: int) -> None:
        if self.sup_chips > 0 or self.unlimited:
            self.sup_chips -= 1
            self.chips[p] += 1

    def _gain_treasure(self, p: int, amount: int, reason: ScoreReason, level: int = -1) -> None:
        got = amount if self.unlimited else min(amount, self.sup_treasure)
        if got:
            self.sup_treasure -= got
            self.treasure[p] += got
            self._score(p, got, reason, -1, level)  # every Treasure is worth a victory point

    def _gain_laborers(self, p: int, amount: int) -> None:
        got = amount if self.unlimited else min(amount, self.sup_laborers)
        self.sup_laborers -= got
        self.laborers[p] += got

    def _gain_convicts(self, p: int, amount: int) -> None:
        got = amount if self.unlimited else min(amount, self.sup_convicts)
        self.sup_convicts -= got
        self.convicts[p] += got

    def _place_block(self, p: int, bit: int, governor: bool) -> None:
        """Put a block on the wall and score what it completes (row, level, tower)."""
        geo = self.geo
        b = 1 << bit
        self.occ |= b
        if governor:
            self.gov_bits |= b
        else:
            self.own[p] |= b
        # docs/RULES.md C6: a Governor block placed by a player counts as that player completing a row
        # (Buyback Chip, row scored) or the wall, never scores the level-4 bonus and never counts for a
        # majority.
        level = bit // STRIDE
        self._log.append((K_PLACE, p, geo.bit_cell[bit], governor))
        if level == LEVELS - 1:  # a tower cell
            if not governor:
                self._score(p, tables.TOWER_POINTS, _TOWER)
        else:
            region = geo.bit_region[bit]
            row = geo.row_mask[region][level]
            if self.occ & row == row:
                self._gain_chip(p)  # the completer's Buyback Chip, Governor block or not
                self._log.append((K_ROW_COMPLETE, p, region, level))
                self._score_row(region, level, completed=True)
                lm = geo.level_mask[level]
                if self.occ & lm == lm:
                    self._score_level(level, completed=True)
        if self.occ == geo.valid:
            self.wall_completer = p

    def _score_row(self, region: int, level: int, completed: bool) -> None:
        # docs/RULES.md C16: a row or level with no player block gives its majority award to nobody
        # (Governor blocks are in no player's own set).
        counts = scoring.blocks_in(self.own, self.geo.row_mask[region][level])
        reason = _ROW if completed else _ROW_AT_END
        for p in scoring.majority(counts):
            self._score(p, tables.ROW_POINTS[level], reason, region, level)

    def _score_level(self, level: int, completed: bool) -> None:
        counts = scoring.blocks_in(self.own, self.geo.level_mask[level])
        reason = _LEVEL if completed else _LEVEL_AT_END
        for p in scoring.majority(counts):
            self._gain_treasure(p, 1, reason, level)

    def _workers(self, p: int) -> int:
        return self.laborers[p] + self.convicts[p]
