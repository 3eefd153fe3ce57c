"""Game and State: the complete rules of Island Fortress as a phase machine.

The state always waits on one *decision* of one player (``current_player()``). A role action
with several choices is a short stack of decisions (``decision`` plus a little context such as
``build_left``), so every decision is one id of the flat action table in ``actions.py``.
The Governor block is just one more family of legal actions at every decision of its
holder's turns. A pass exists only when nothing else is legal.

No RL imports here: the PettingZoo environment and the observation encoder read this state.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from . import actions as A
from . import events as ev
from . import rng, scoring, tables
from .config import ConfigError, GameConfig
from .decisions import ACTION_PHASE_DECISIONS, DECISION_NAMES, Decision
from .events import EventKind, ScoreReason
from .favors import FavorDeck, load_deck
from .wall import LEVELS, STRIDE, WallGeometry, geometry, iter_bits

TERMINAL = -4  # OpenSpiel's value for "no player to move"
UNLIMITED = 10**9  # where the ledger of an unlimited supply starts (docs/RULES.md C7)
BID_BASE = tables.MAX_BID + 1  # a bid above 100 Jade is entered as base-101 digits

# The decisions, bound as module globals (an enum attribute lookup costs ~140 ns on 3.11).
(
    D_KEEP_SETUP,
    D_BID,
    D_ROLE,
    D_RECRUIT_COUNT,
    D_BUY_COUNT,
    D_DRAW_COUNT,
    D_KEEP_DRAWN,
    D_REMOVE_CELL,
    D_BUILD_COUNT,
    D_BUILD_CELL,
    D_LABORERS,
    D_FAVOR_CARD,
    D_REINFORCE_CELL,
    D_REPLACE_CELL,
    D_PRISON_PAIR,
    D_MOVE_REGION,
    D_TURN_END,
    D_TRADE_IN,
    D_GAME_OVER,
) = Decision
# Event kinds and score reasons, bound as module globals for the same reason.
(
    K_SETUP, K_ROUND, K_INCOME, K_KEPT, K_BID_PLACED, K_PETITION, K_INCENTIVE, K_ROLE, K_RECRUITED,
    K_BOUGHT, K_DREW, K_REINFORCEMENT_REMOVED, K_BUILD, K_PLACE, K_ROW_COMPLETE, K_WORKERS,
    K_FAVOR_PLAYED, K_REINFORCED, K_REPLACED, K_TREASURE_COLLECTED, K_PRISON_COLLECTED,
    K_JADE_COLLECTED, K_MOVED, K_BUYBACK, K_TRADED, K_GOVERNOR_LOST, K_WALL_COMPLETE, K_SCORE, K_PASS,
    K_GAME_OVER,
) = EventKind  # fmt: skip
_ROW, _ROW_AT_END = ScoreReason.ROW, ScoreReason.ROW_AT_END
_LEVEL, _LEVEL_AT_END = ScoreReason.LEVEL, ScoreReason.LEVEL_AT_END
_TOWER, _FAVOR_CARD = ScoreReason.TOWER, ScoreReason.FAVOR_CARD
# Collect from Prison, Collect Jade and Move the Taskmaster are always possible (docs/RULES.md E6).
_ALWAYS_FEASIBLE = (1 << A.OP_COLLECT_PRISON) | (1 << A.OP_COLLECT_JADE) | (1 << A.OP_MOVE_TASKMASTER)
_REPEAT_COST = tuple(
    tables.REPEAT_ROLE_COST.get(A.ROLE_KEYS[A.OP_CARD[op]], 1 << 30) for op in range(A.NUM_OPS)
)  # Repeat cost per action; the Taskmaster's own action cannot be repeated
# Lookup tables for the role choice: which actions a hand of role cards offers, which a table
# of played cards offers to Taskmaster B given 0..3+ Jade, and the action ids of a set of actions.
_HAND_OPS = tuple(sum(1 << op for op in range(A.NUM_OPS) if hand >> A.OP_CARD[op] & 1) for hand in range(32))
_TABLE_OPS = tuple(
    tuple(
        sum(
            1 << op
            for op in range(A.NUM_REPEATABLE)
            if table >> A.OP_CARD[op] & 1 and jade >= _REPEAT_COST[op]
        )
        for jade in range(4)
    )
    for table in range(32)
)
_ROLE_IDS = tuple(tuple(A.ROLE + op for op in range(A.NUM_OPS) if m >> op & 1) for m in range(1 << A.NUM_OPS))
_REPEAT_IDS = tuple(
    tuple(A.REPEAT + op for op in range(A.NUM_OPS) if m >> op & 1) for m in range(1 << A.NUM_OPS)
)
_PASS_ONLY = (A.PASS,)
_SMALLEST_DRAW = min(draw for draw, _ in tables.FAVOR_DRAW_OPTIONS)
GOVERNOR_OWNER = -1  # owner id of a Governor block in ``owner_at``


class IllegalActionError(ValueError):
    """An action that is not legal at the current decision; the state is left unchanged."""


class Game:
    """A validated configuration plus the immutable things every state shares."""

    def __init__(self, config: GameConfig | None = None, **options: Any) -> None:
        if config is None:
            config = GameConfig.from_dict(options)
        elif options:
            raise ConfigError("pass either a GameConfig or keyword options, not both")
        self.config = config
        self.num_players = config.num_players
        self.deck: FavorDeck = load_deck(config.favor_deck)
        need = tables.FAVOR_DEAL * config.num_players
        if len(self.deck) < need:
            raise ConfigError(
                f"invalid game config: favor deck {self.deck.name!r} has {len(self.deck)} cards, "
                f"but dealing {tables.FAVOR_DEAL} to {config.num_players} players needs {need}"
            )
        self.geometry: WallGeometry = geometry(config.num_regions)
        limit = (lambda n: UNLIMITED) if config.unlimited_components else (lambda n: n)
        comp = tables.COMPONENTS
        self.totals = {
            "jade": limit(comp["jade"]),
            "treasure": limit(comp["treasure"]),
            "buyback_chips": limit(comp["buyback_chips"]),
            "reinforcements": limit(comp["reinforcements"]),
            "laborers": limit(comp["laborers"]),
            "convicts": limit(comp["convicts"]),
            "blocks_per_player": comp["blocks_per_player"],
            "governor_blocks": config.governor_blocks,
            "favor_cards": len(self.deck),
        }
        self._playable: dict[tuple[int, int], int] = {}

    def new_initial_state(self, seed: int | None = None) -> State:
        return State(self, seed)

    def playable_cards(self, hand: int, blocks: int) -> int:
        """The cards of ``hand`` whose pattern is complete in ``blocks`` (a bit set of card ids).

        Memoised: a hand and a player's unreinforced blocks change on few steps, while the
        question is asked at every role choice and every observation.
        """
        key = (hand, blocks)
        found = self._playable.get(key)
        if found is None:
            cards = self.deck.cards
            found = 0
            for i in iter_bits(hand):
                if cards[i].matches(blocks):
                    found |= 1 << i
            if len(self._playable) >= 1 << 16:
                self._playable.clear()
            self._playable[key] = found
        return found

    def __repr__(self) -> str:
        return f"Game({self.config!r})"


class State:
    """One moment of a game. ``clone()`` is a shallow copy of flat lists and ints."""

    __slots__ = (
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

    def __init__(self, game: Game, seed: int | None = None) -> None:
        cfg = game.config
        n = game.num_players
        self.game = game
        self.cfg = cfg
        self.geo = game.geometry
        self.n = n
        self.rng = rng.seed_state(seed)
        totals = game.totals
        self.sup_jade = totals["jade"]
        self.sup_treasure = totals["treasure"]
        self.sup_chips = totals["buyback_chips"]
        self.sup_reinf = totals["reinforcements"]
        self.sup_laborers = totals["laborers"]
        self.sup_convicts = totals["convicts"]
        self.gov_stock = totals["governor_blocks"]
        self.gov_box = 0
        self.gov_in_hand = False
        zeros = [0] * n
        self.jade = zeros[:]
        self.laborers = zeros[:]
        self.convicts = zeros[:]
        self.blocks = zeros[:]
        self.stock_blocks = [totals["blocks_per_player"]] * n
        self.chips = zeros[:]
        self.treasure = zeros[:]
        self.score = zeros[:]
        self.income_bonus = zeros[:]
        self.petition_bonus = zeros[:]
        self.region = zeros[:]  # every Taskmaster starts in the leftmost region's camp
        self.roles_hand = zeros[:]
        self.roles_table = zeros[:]
        self.favor_hand = zeros[:]
        self.favor_played = zeros[:]
        self.drawn = zeros[:]
        self.turns_taken = zeros[:]
        self.bids = zeros[:]
        self.last_bids: tuple[int, ...] | None = None
        self.occ = 0
        self.own = zeros[:]
        self.gov_bits = 0
        self.reinf = 0
        self.prison_jade = [0] * self.geo.regions
        self.prison_convicts = [0] * self.geo.regions
        self.favor_discard = 0
        self.round = 0
        self.holder = -1
        self.turn_index = 0
        self.actions_this_turn = 0
        self.buyback_used = False
        self.last_card = -1
        self.in_action = False
        self.keep_left = 0
        self.op = -1
        self.build_left = 0
        self.build_need = 0
        self.worker_need = 0
        self.favor_card = -1
        self.order: list[int] = []
        self.order_pos = 0
        self.wall_completer = -1
        self.winners: list[int] = []
        self._log: list[tuple[Any, ...]] = []  # raw records, typed by ``log`` when read
        self.bid_digits_left = 0  # base-101 digits of the sealed bid still to enter after this one
        self.unlimited = cfg.unlimited_components  # supplies that never run out
        self._legal: tuple[int, ...] | None = None
        self._setup()

    # ------------------------------------------------------------------ public API

    def current_player(self) -> int:
        return self.current

    def is_terminal(self) -> bool:
        return self.decision == D_GAME_OVER

    def legal_actions(self) -> tuple[int, ...]:
        """Sorted legal action ids for the current player (never empty before the end).

        A tuple: the state keeps it for the next call, and nobody can change it."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return self._legal

    @property
    def log(self) -> list[ev.Event]:
        """The public event log, oldest first, as typed records (``events.Event``).

        The state stores each event as a plain tuple in its record's field order (a
        NamedTuple costs several times a tuple to build, on every step); the records are
        made here, when the log is read."""
        return ev.typed(self._log)

    def with_block(self, cell: int, player: int, governor: bool = False) -> State:
        """A copy of this state with a block put on ``cell`` exactly as the rules put one
        (``player``'s own block from their supply, or a Governor block ``player`` places),
        scoring what it completes. For look-ahead by agents: the pending decision is this
        state's, so the copy is for evaluation, not for play."""
        other = self.clone()
        bit = self.geo.cell_bits[cell]
        if not governor:
            other.blocks[player] -= 1
        other._place_block(player, bit, governor)
        other._legal = None
        return other

    def invalidate_cache(self) -> None:
        """Forget the memoised legal actions. Only for code that writes a state's fields
        directly (scenario builders in tests); ``apply_action`` keeps the memo right."""
        self._legal = None

    def apply_action(self, action: int) -> None:
        """Apply one legal action; an illegal one raises and changes nothing."""
        try:
            if isinstance(action, bool):
                raise TypeError
            a = operator.index(action)
        except TypeError:
            raise IllegalActionError(
                f"illegal action {action!r}: actions are integers 0..{A.NUM_ACTIONS - 1}"
            ) from None
        if a not in self.legal_actions():
            raise IllegalActionError(self._illegal_message(a))
        self._legal = None
        self._apply(a)

    def clone(self) -> State:
        other = State.__new__(State)
        for name in _SCALAR_SLOTS:
            setattr(other, name, getattr(self, name))
        for name in _LIST_SLOTS:
            setattr(other, name, getattr(self, name)[:])
        return other

    def returns(self) -> list[float]:
        """Zero-sum win/loss returns at the end (see ``scoring.win_loss_returns``); 0 before."""
        if not self.is_terminal():
            return [0.0] * self.n
        return scoring.win_loss_returns(self.n, self.winners)

    def action_to_string(self, action: int) -> str:
        return _action_to_string(self, action)

    def decision_name(self) -> str:
        return DECISION_NAMES[self.decision]

    def blocks_built(self, player: int) -> int:
        return self.own[player].bit_count()

    def owner_at(self, bit: int) -> int | None:
        """Seat owning the block at ``bit``, ``GOVERNOR_OWNER``, or None if empty."""
        b = 1 << bit
        if not self.occ & b:
            return None
        if self.gov_bits & b:
            return GOVERNOR_OWNER
        for p in range(self.n):
            if self.own[p] & b:
                return p
        raise AssertionError("occupied cell without owner")

    def component_totals(self) -> dict[str, int]:
        """Where every component is, summed: must always equal ``game.totals``."""
        n = self.n
        return {
            "jade": self.sup_jade + sum(self.jade) + sum(self.prison_jade),
            "treasure": self.sup_treasure + sum(self.treasure),
            "buyback_chips": self.sup_chips + sum(self.chips),
            "reinforcements": self.sup_reinf + self.reinf.bit_count(),
            "laborers": self.sup_laborers + sum(self.laborers),
            "convicts": self.sup_convicts + sum(self.convicts) + sum(self.prison_convicts),
            "blocks_per_player": [
                self.stock_blocks[p] + self.blocks[p] + self.own[p].bit_count() for p in range(n)
            ],
            "governor_blocks": self.gov_stock + self.gov_box + int(self.gov_in_hand)
            + self.gov_bits.bit_count(),
            "favor_cards": len(self.deck)
            + sum((self.favor_hand[p] | self.favor_played[p] | self.drawn[p]).bit_count() for p in range(n))
            + self.favor_discard.bit_count(),
        }  # fmt: skip

    # ------------------------------------------------------------------ setup and rounds

    def _setup(self) -> None:
        cfg = self.cfg
        deck = list(range(len(self.game.deck)))
        self.rng = rng.shuffle(self.rng, deck)
        self.deck = deck
        for p in range(self.n):
            self.jade[p] = self._take_jade(tables.STARTING_JADE + cfg.extra_jade)
            self._gain_laborers(p, cfg.start_laborers)
            self._gain_convicts(p, cfg.start_convicts)
            self.stock_blocks[p] -= cfg.start_blocks
            self.blocks[p] = cfg.start_blocks
            hand = 0
            for _ in range(tables.FAVOR_DEAL):
                hand |= 1 << self.deck.pop()
            self.drawn[p] = hand
        self._log.append((K_SETUP, self.n, self.geo.regions))
        self.decision = D_KEEP_SETUP
        self.current = 0
        self.keep_left = tables.FAVOR_KEEP

    def _take_jade(self, amount: int) -> int:
        take = amount if self.unlimited else min(amount, self.sup_jade)
        self.sup_jade -= take
        return take

    def _start_round(self) -> None:
        self.round += 1
        self._log.append((K_ROUND, self.round))
        start = max(self.holder, 0)
        for i in range(self.n):  # income, paid in turn order from the marker (docs/RULES.md C8)
            p = (start + i) % self.n
            got = self._take_jade(tables.INCOME + self.income_bonus[p])
            self.jade[p] += got
            self._log.append((K_INCOME, p, got))
        self.bids = [0] * self.n
        self.order = [(start + i) % self.n for i in range(self.n)]
        self.order_pos = 0
        self.decision = D_BID
        self._begin_bid(self.order[0])

    def _resolve_petition(self) -> None:
        n = self.n
        bids = self.bids
        totals = [bids[p] + self.petition_bonus[p] for p in range(n)]
        best = max(totals)
        tied = [p for p in range(n) if totals[p] == best]
        if len(tied) > 1:
            most_jade = max(bids[p] for p in tied)
            tied = [p for p in tied if bids[p] == most_jade]
        if len(tied) == 1:
            winner = tied[0]
        elif self.holder < 0:  # round 1: the tie is split at random
            self.rng, i = rng.below(self.rng, len(tied))
            winner = tied[i]
        else:  # the marker moves clockwise and never stays with its holder
            winner = next((self.holder + k) % n for k in range(1, n) if (self.holder + k) % n in tied)
        self.last_bids = tuple(bids)
        self.bids = [0] * n
        self._log.append((K_PETITION, self.last_bids, tuple(totals), winner))
        paid = bids[winner]
        self.jade[winner] -= paid
        self.sup_jade += paid
        self.holder = winner
        if self.gov_stock > 0:
            self.gov_stock -= 1
            self.gov_in_hand = True
        r = self.region[winner]
        self._to_prison(r, jade=1)
        if self.round == 1 and self.cfg.first_round_incentive:
            self._first_round_incentive(winner)
        for p in range(n):
            self.roles_hand[p] = A.ALL_ROLES
            self.roles_table[p] = 0
            self.turns_taken[p] = 0
        self.turn_index = 0
        self._start_turn(winner)

    def _first_round_incentive(self, p: int) -> None:
        kind = self.cfg.first_round_incentive
        if kind == "wall_block":
            if self.stock_blocks[p] > 0:
                self.stock_blocks[p] -= 1
                self.blocks[p] += 1
        elif kind == "buyback_chip":
            self._gain_chip(p)
        elif kind == "treasure":
            self._gain_treasure(p, 1, ScoreReason.FIRST_ROUND_INCENTIVE)
        self._log.append((K_INCENTIVE, p, kind))

    def _start_turn(self, p: int) -> None:
        self.current = p
        self.decision = D_ROLE
        self.actions_this_turn = 0
        self.buyback_used = False
        self.last_card = -1
        self.in_action = False

    def _end_turn(self) -> None:
        p = self.current
        self.turns_taken[p] += 1
        if p == self.holder and self.turns_taken[p] == tables.TURNS_PER_ROUND and self.gov_in_hand:
            self.gov_in_hand = False
            self.gov_box += 1
            self._log.append((K_GOVERNOR_LOST, p))
        self.turn_index += 1
        if self.turn_index == tables.TURNS_PER_ROUND * self.n:
            if self.gov_stock == 0:
                self._end_game()
            else:
                self._start_round()
        else:
            self._start_turn((self.holder + self.turn_index) % self.n)

    def _finish_action(self) -> None:
        self.in_action = False
        self.actions_this_turn += 1
        if self.wall_completer >= 0:
            self._end_game()
            return
        self.decision = D_TURN_END
        if len(self._turn_end_options()) == 1:  # nothing to choose but ending the turn
            self._end_turn()

    # ------------------------------------------------------------------ end of game

    def _end_game(self) -> None:
        if self.gov_in_hand:
            self.gov_in_hand = False
            self.gov_box += 1
        w = self.wall_completer
        if w >= 0:  # the builder of the last block empties every prison
            got_jade = sum(self.prison_jade)
            got_convicts = sum(self.prison_convicts)
            self.jade[w] += got_jade
            self.convicts[w] += got_convicts
            self.prison_jade = [0] * self.geo.regions
            self.prison_convicts = [0] * self.geo.regions
            self._log.append((K_WALL_COMPLETE, w, got_jade, got_convicts))
        self.in_action = False
        if self.cfg.favor_trade_in:
            start = max(self.holder, 0)
            self.order = [(start + i) % self.n for i in range(self.n)]
            self.order_pos = -1
            self._next_trader()
        else:
            self._final_scoring()

    def _next_trader(self) -> None:
        self.order_pos += 1
        while self.order_pos < self.n and not self.favor_hand[self.order[self.order_pos]]:
            self.order_pos += 1
        if self.order_pos == self.n:
            self._final_scoring()
        else:
            self.decision = D_TRADE_IN
            self.current = self.order[self.order_pos]

    def _final_scoring(self) -> None:
        geo = self.geo
        for r in range(geo.regions):  # uncompleted rows and levels score as if completed
            for level in range(3):
                mask = geo.row_mask[r][level]
                if self.occ & mask != mask:
                    self._score_row(r, level, completed=False)
        for level in range(3):
            mask = geo.level_mask[level]
            if self.occ & mask != mask:
                self._score_level(level, completed=False)
        workers = [self.laborers[p] + self.convicts[p] for p in range(self.n)]
        for p, pts, reason in scoring.end_bonuses(
            self.chips, self.own, geo.region_mask, self.treasure, self.jade, workers
        ):
            self._score(p, pts, reason)
        self.winners = scoring.winners(
            self.score, [o.bit_count() for o in self.own], self.jade, self.treasure
        )
        self._log.append((K_GAME_OVER, tuple(self.score), tuple(self.winners)))
        self.decision = D_GAME_OVER
        self.current = TERMINAL

    # ------------------------------------------------------------------ moving components

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

    def _pay_workers(self, p: int, laborers: int) -> None:
        """All assigned Convicts and half the assigned Laborers (rounded up) die."""
        convicts = self.worker_need - laborers
        dead_laborers = (laborers + 1) // 2
        self.convicts[p] -= convicts
        self.sup_convicts += convicts
        self.laborers[p] -= dead_laborers
        self.sup_laborers += dead_laborers
        self._log.append((K_WORKERS, p, laborers, convicts, dead_laborers))

    def _place_block(self, p: int, bit: int, governor: bool) -> None:
        """Put a block on the wall and score what it completes (row, level, tower)."""
        geo = self.geo
        b = 1 << bit
        self.occ |= b
        if governor:
            self.gov_bits |= b
        else:
            self.own[p] |= b
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
        counts = scoring.blocks_in(self.own, self.geo.row_mask[region][level])
        reason = _ROW if completed else _ROW_AT_END
        for p in scoring.majority(counts):
            self._score(p, tables.ROW_POINTS[level], reason, region, level)

    def _score_level(self, level: int, completed: bool) -> None:
        counts = scoring.blocks_in(self.own, self.geo.level_mask[level])
        reason = _LEVEL if completed else _LEVEL_AT_END
        for p in scoring.majority(counts):
            self._gain_treasure(p, 1, reason, level)

    # ------------------------------------------------------------------ legality helpers

    def _workers(self, p: int) -> int:
        return self.laborers[p] + self.convicts[p]

    def _build_cells(self, occ: int, p: int, budget: int, left: int) -> list[int]:
        """Cells (bit indexes) where the next block of a build may go so the build can finish."""
        geo = self.geo
        region_mask = geo.region_mask[self.region[p]]
        candidates = geo.buildable(occ) & region_mask
        out = []
        for bit in iter_bits(candidates):
            need = WallGeometry.workers_for(bit)
            if need > budget:
                break  # bits ascend by level, so every later cell costs at least as much
            if left == 1 or self._cheapest_next(occ | (1 << bit), region_mask) <= budget - need:
                out.append(bit)
        return out

    def _cheapest_next(self, occ: int, region_mask: int) -> int:
        """Workers for the cheapest block buildable in the region (a big number if none).

        A Governor block never makes a build possible that was not possible without it: a
        cell it supports is always dearer than the cell it stands on.
        """
        candidates = self.geo.buildable(occ) & region_mask
        if not candidates:
            return 1 << 30
        return WallGeometry.workers_for((candidates & -candidates).bit_length() - 1)

    def _can_build(self, p: int, count: int, jade: int) -> bool:
        if self.blocks[p] < count or (count == 2 and jade < tables.DOUBLE_BUILD_COST):
            return False
        return bool(self._build_cells(self.occ, p, self._workers(p), count))

    def _replace_targets(self, p: int) -> int:
        """Other players' unreinforced blocks in the region of ``p``'s Taskmaster."""
        mine_or_fixed = self.own[p] | self.gov_bits | self.reinf
        return self.occ & ~mine_or_fixed & self.geo.region_mask[self.region[p]]

    def _replace_cells(self, p: int) -> int:
        """Replace targets ``p`` has the (double) Workers for."""
        budget = self._workers(p)
        out = 0
        for bit in iter_bits(self._replace_targets(p)):
            if tables.REPLACE_MULTIPLIER * WallGeometry.workers_for(bit) <= budget:
                out |= 1 << bit
        return out

    def _playable_favors(self, p: int) -> list[int]:
        return list(iter_bits(self.game.playable_cards(self.favor_hand[p], self.own[p] & ~self.reinf)))

    def _favor_cells(self, p: int, card: int) -> int:
        fav = self.game.deck.cards[card]
        cells = 0
        for anchor in iter_bits(fav.matches(self.own[p] & ~self.reinf)):
            cells |= fav.cells_at(anchor)
        return cells

    def _feasible_ops(self, p: int, ops: int) -> int:
        """Which of the role actions in bit set ``ops`` can be carried out to the end.

        None depends on Jade (every action's cheapest form is free; the Repeat cost is checked
        by the caller), and each test is an existence check: the lowest set bit of a cell set is
        its cheapest level, so "enough Workers for some cell" is one comparison.
        """
        geo = self.geo
        region_mask = geo.region_mask[self.region[p]]
        workers = self._workers(p)
        ok = ops & _ALWAYS_FEASIBLE
        if ops >> A.OP_RECRUIT & 1 and (
            self.sup_laborers >= 1 or self.unlimited
        ):  # one Laborer costs nothing
            ok |= 1 << A.OP_RECRUIT
        if ops >> A.OP_COLLECT_CONVICTS & 1 and self.laborers[p] >= tables.LABORERS_FOR_CONVICTS:
            ok |= 1 << A.OP_COLLECT_CONVICTS
        if ops >> A.OP_BUY_BLOCKS & 1 and self.stock_blocks[p] >= 1:
            ok |= 1 << A.OP_BUY_BLOCKS
        if ops >> A.OP_DRAW_FAVORS & 1 and len(self.deck) >= _SMALLEST_DRAW:
            ok |= 1 << A.OP_DRAW_FAVORS
        if ops >> A.OP_REMOVE_REINFORCEMENT & 1 and self.reinf & region_mask:
            ok |= 1 << A.OP_REMOVE_REINFORCEMENT
        if ops >> A.OP_BUILD & 1 and self.blocks[p] >= 1:
            if self._cheapest_next(self.occ, region_mask) <= workers:
                ok |= 1 << A.OP_BUILD
        if ops >> A.OP_PLAY_FAVOR & 1 and self.favor_hand[p]:
            if self.game.playable_cards(self.favor_hand[p], self.own[p] & ~self.reinf):
                ok |= 1 << A.OP_PLAY_FAVOR
        if ops >> A.OP_REPLACE & 1 and not self.cfg.no_replace and self.blocks[p] >= 1:
            targets = self._replace_targets(p)
            if targets:
                cheapest = (targets & -targets).bit_length() - 1
                if tables.REPLACE_MULTIPLIER * WallGeometry.workers_for(cheapest) <= workers:
                    ok |= 1 << A.OP_REPLACE
        if ops >> A.OP_COLLECT_TREASURE & 1 and self.convicts[p] >= tables.TREASURE_CONVICTS:
            ok |= 1 << A.OP_COLLECT_TREASURE
        return ok

    def _turn_end_options(self) -> list[int]:
        p = self.current
        out = [A.END_TURN]
        if self.actions_this_turn == 1 and not self.buyback_used:
            # The hand after a buyback always holds Recruiter, Treasurer or Taskmaster
            # (three or more cards), so a second action is always possible.
            if self.last_card == A.TASKMASTER and self.jade[p] >= tables.TASKMASTER_BUYBACK_COST:
                out.append(A.BUYBACK_TASKMASTER)
            if self.chips[p] > 0:
                out.append(A.BUYBACK_CHIP)
        if self.gov_in_hand and p == self.holder:
            out.append(A.GOVERNOR)  # placeholder: any legal Governor cell
        return out

    def _governor_bits(self) -> list[int]:
        """Legal Governor placements at this decision of the holder's turn."""
        geo = self.geo
        cells = list(iter_bits(geo.buildable(self.occ)))
        if self.decision == D_BUILD_COUNT or self.decision == D_BUILD_CELL:
            # Keep only placements after which the started build can still be finished.
            p = self.current
            region_mask = geo.region_mask[self.region[p]]
            if self.decision == D_BUILD_COUNT:
                budget, left = self._workers(p), 1
            else:
                budget, left = self._workers(p) - self.build_need, self.build_left
            cells = [
                bit
                for bit in cells
                if not (1 << bit) & region_mask or self._build_cells(self.occ | (1 << bit), p, budget, left)
            ]
        return cells

    # ------------------------------------------------------------------ legal actions

    def _compute_legal(self) -> tuple[int, ...]:
        d = self.decision
        if d == D_GAME_OVER:
            return ()
        p = self.current
        geo = self.geo
        out: Sequence[int]
        if d == D_KEEP_SETUP or d == D_KEEP_DRAWN:
            out = [A.KEEP_FAVOR + i for i in iter_bits(self.drawn[p])]
        elif d == D_BID:
            out = self._legal_bid_digits(p)
        elif d == D_ROLE:
            hand = self.roles_hand[p]
            in_hand = _HAND_OPS[hand]
            repeatable = (
                _TABLE_OPS[self.roles_table[p]][min(self.jade[p], 3)] if hand >> A.TASKMASTER & 1 else 0
            )
            feasible = self._feasible_ops(p, in_hand | repeatable)
            out = _ROLE_IDS[feasible & in_hand] + _REPEAT_IDS[feasible & repeatable]
        elif d == D_RECRUIT_COUNT:
            out = [
                A.RECRUIT_COUNT + k - 1
                for k in range(1, tables.MAX_PURCHASE + 1)
                if (k <= self.sup_laborers or self.unlimited) and tables.PURCHASE_COST[k] <= self.jade[p]
            ]
        elif d == D_BUY_COUNT:
            out = [
                A.BUY_COUNT + k - 1
                for k in range(1, tables.MAX_PURCHASE + 1)
                if k <= self.stock_blocks[p] and tables.PURCHASE_COST[k] <= self.jade[p]
            ]
        elif d == D_DRAW_COUNT:
            out = [
                A.DRAW_COUNT + i
                for i, (draw, _) in enumerate(tables.FAVOR_DRAW_OPTIONS)
                if draw <= len(self.deck)
            ]
        elif d == D_REMOVE_CELL:
            mask = self.reinf & geo.region_mask[self.region[p]]
            out = sorted(A.CELL + geo.bit_cell[b] for b in iter_bits(mask))
        elif d == D_BUILD_COUNT:
            out = [A.BUILD_COUNT + c - 1 for c in (1, 2) if self._can_build(p, c, self.jade[p])]
        elif d == D_BUILD_CELL:
            bits = self._build_cells(self.occ, p, self._workers(p) - self.build_need, self.build_left)
            out = sorted(A.CELL + geo.bit_cell[b] for b in bits)
        elif d == D_LABORERS:
            need = self.worker_need
            low = max(0, need - self.convicts[p])
            high = min(need, self.laborers[p])
            out = list(range(A.LABORERS + low, A.LABORERS + high + 1))
        elif d == D_FAVOR_CARD:
            out = [A.PLAY_FAVOR + i for i in self._playable_favors(p)]
        elif d == D_REINFORCE_CELL:
            mask = self._favor_cells(p, self.favor_card)
            out = sorted(A.CELL + geo.bit_cell[b] for b in iter_bits(mask))
        elif d == D_REPLACE_CELL:
            out = sorted(A.CELL + geo.bit_cell[b] for b in iter_bits(self._replace_cells(p)))
        elif d == D_PRISON_PAIR:
            out = [A.PRISON_PAIR + i for i, (a, b) in enumerate(A.PRISON_PAIRS) if b < geo.regions]
        elif d == D_MOVE_REGION:
            out = [A.MOVE_REGION + r for r in range(geo.regions) if r != self.region[p]]
        elif d == D_TURN_END:
            out = [a for a in self._turn_end_options() if a != A.GOVERNOR]
        elif d == D_TRADE_IN:
            out = []
            if self.sup_jade > 0 or self.unlimited:
                out.append(A.TRADE_JADE)
            if self.sup_convicts > 0 or self.unlimited:
                out.append(A.TRADE_CONVICT)
            out.append(A.TRADE_DONE)
        else:  # pragma: no cover - every decision kind is handled above
            raise AssertionError(f"unknown decision {d}")
        if d in ACTION_PHASE_DECISIONS and self.gov_in_hand and p == self.holder:
            out = sorted([*out, *[A.GOVERNOR + geo.bit_cell[b] for b in self._governor_bits()]])
        if not out:
            return _PASS_ONLY  # docs/RULES.md C12: never an empty choice
        return out if type(out) is tuple else tuple(out)

    def _illegal_message(self, action: int) -> str:
        where = f"round {self.round}, player {self.current}, decision '{DECISION_NAMES[self.decision]}'"
        if not 0 <= action < A.NUM_ACTIONS:
            return f"illegal action {action}: outside the action space 0..{A.NUM_ACTIONS - 1} ({where})"
        if self.decision == D_GAME_OVER:
            return f"illegal action {action}: the game is over"
        legal = ", ".join(str(a) for a in self.legal_actions()[:12])
        more = "" if len(self.legal_actions()) <= 12 else ", ..."
        return f"illegal action {action} ({self.action_to_string(action)}) at {where}; legal: [{legal}{more}]"

    # ------------------------------------------------------------------ applying actions

    def _apply(self, a: int) -> None:
        p = self.current
        if A.GOVERNOR <= a < A.GOVERNOR + len(self.geo.cell_bits):
            self._place_governor(p, self.geo.cell_bits[a - A.GOVERNOR])
            return
        if a == A.PASS:
            self._log.append((K_PASS, p))
            if self.decision in ACTION_PHASE_DECISIONS:
                self._end_turn()
            return
        d = self.decision
        handler = _HANDLERS[d]
        handler(self, p, a)

    def _place_governor(self, p: int, bit: int) -> None:
        self.gov_in_hand = False
        self._place_block(p, bit, governor=True)
        if self.wall_completer >= 0 and not self.in_action:
            self._end_game()
        elif self.decision == D_TURN_END and len(self._turn_end_options()) == 1:
            self._end_turn()

    def _on_keep(self, p: int, a: int) -> None:
        card = a - A.KEEP_FAVOR
        self.drawn[p] &= ~(1 << card)
        self.favor_hand[p] |= 1 << card
        self.keep_left -= 1
        if self.keep_left:
            return
        rest = list(iter_bits(self.drawn[p]))
        self.drawn[p] = 0
        if self.decision == D_KEEP_SETUP:
            self.deck.extend(rest)
            self._log.append((K_KEPT, p, tables.FAVOR_KEEP))
            if p + 1 < self.n:
                self.current = p + 1
                self.keep_left = tables.FAVOR_KEEP
            else:
                self.rng = rng.shuffle(self.rng, self.deck)
                self._start_round()
        else:
            self.rng = rng.shuffle(self.rng, rest)  # unkept cards go under, in no telling order
            self.deck[:0] = rest
            self._finish_action()

    def _begin_bid(self, p: int) -> None:
        """``p`` seals a bid: one decision per base-101 digit of the Jade held (one decision
        for up to 100 Jade), most significant first (docs/RULES.md E3)."""
        self.current = p
        jade = self.jade[p]
        digits = 0
        while jade > tables.MAX_BID:
            jade //= BID_BASE
            digits += 1
        self.bid_digits_left = digits

    def _legal_bid_digits(self, p: int) -> range:
        """Digits that keep the bid, completed with zeros, within the Jade held."""
        place = BID_BASE**self.bid_digits_left
        high = min(self.jade[p] // place - self.bids[p] * BID_BASE, tables.MAX_BID)
        return range(A.BID, A.BID + high + 1)

    def _on_bid(self, p: int, a: int) -> None:
        self.bids[p] = self.bids[p] * BID_BASE + a - A.BID
        if self.bid_digits_left:
            self.bid_digits_left -= 1
            return
        self._log.append((K_BID_PLACED, p))
        self.order_pos += 1
        if self.order_pos < self.n:
            self._begin_bid(self.order[self.order_pos])
        else:
            self._resolve_petition()

    def _on_role(self, p: int, a: int) -> None:
        if a >= A.REPEAT:
            op = a - A.REPEAT
            card = A.TASKMASTER
            cost = tables.REPEAT_ROLE_COST[A.ROLE_KEYS[A.OP_CARD[op]]]
            self.jade[p] -= cost
            self.sup_jade += cost
        else:
            op = a - A.ROLE
            card = A.OP_CARD[op]
            cost = 0
        self.roles_hand[p] &= ~(1 << card)
        self.roles_table[p] |= 1 << card
        self.last_card = card
        self.op = op
        self.in_action = True
        self._log.append((K_ROLE, p, op, a >= A.REPEAT, cost))
        region = self.region[p]
        if op == A.OP_RECRUIT:
            self._to_prison(region)
            self.decision = D_RECRUIT_COUNT
        elif op == A.OP_COLLECT_CONVICTS:
            self.laborers[p] -= tables.LABORERS_FOR_CONVICTS
            self.sup_laborers += tables.LABORERS_FOR_CONVICTS
            self._gain_convicts(p, tables.CONVICTS_COLLECTED)
            self._finish_action()
        elif op == A.OP_COLLECT_PRISON:
            self.jade[p] += self.prison_jade[region]
            self.convicts[p] += self.prison_convicts[region]
            self._log.append(
                (K_PRISON_COLLECTED, p, region, self.prison_jade[region], self.prison_convicts[region])
            )
            self.prison_jade[region] = 0
            self.prison_convicts[region] = 0
            self._finish_action()
        elif op == A.OP_BUY_BLOCKS:
            self._to_prison(region)
            self.decision = D_BUY_COUNT
        elif op == A.OP_DRAW_FAVORS:
            self.decision = D_DRAW_COUNT
        elif op == A.OP_REMOVE_REINFORCEMENT:
            self.decision = D_REMOVE_CELL
        elif op == A.OP_BUILD:
            self._to_prison(region)
            self.decision = D_BUILD_COUNT
        elif op == A.OP_PLAY_FAVOR:
            self.decision = D_FAVOR_CARD
        elif op == A.OP_REPLACE:
            self.decision = D_REPLACE_CELL
        elif op == A.OP_COLLECT_JADE:
            got = self._take_jade(tables.COLLECT_JADE + self.treasure[p] // tables.TREASURE_PER_EXTRA_JADE)
            self.jade[p] += got
            self._log.append((K_JADE_COLLECTED, p, got))
            self._finish_action()
        elif op == A.OP_COLLECT_TREASURE:
            self.decision = D_PRISON_PAIR
        else:  # OP_MOVE_TASKMASTER
            self.decision = D_MOVE_REGION

    def _on_recruit(self, p: int, a: int) -> None:
        k = a - A.RECRUIT_COUNT + 1
        cost = tables.PURCHASE_COST[k]
        self.jade[p] -= cost
        self.sup_jade += cost
        self.sup_laborers -= k
        self.laborers[p] += k
        self._log.append((K_RECRUITED, p, k, cost))
        self._finish_action()

    def _on_buy(self, p: int, a: int) -> None:
        k = a - A.BUY_COUNT + 1
        cost = tables.PURCHASE_COST[k]
        self.jade[p] -= cost
        self.sup_jade += cost
        self.stock_blocks[p] -= k
        self.blocks[p] += k
        self._log.append((K_BOUGHT, p, k, cost))
        self._finish_action()

    def _on_draw(self, p: int, a: int) -> None:
        draw, keep = tables.FAVOR_DRAW_OPTIONS[a - A.DRAW_COUNT]
        for _ in range(draw):
            self.drawn[p] |= 1 << self.deck.pop()
        self.keep_left = keep
        self._log.append((K_DREW, p, draw, keep))
        self.decision = D_KEEP_DRAWN

    def _on_remove(self, p: int, a: int) -> None:
        bit = self.geo.cell_bits[a - A.CELL]
        self.reinf &= ~(1 << bit)
        self.sup_reinf += 1
        self._log.append((K_REINFORCEMENT_REMOVED, p, a - A.CELL))
        self._finish_action()

    def _on_build_count(self, p: int, a: int) -> None:
        count = a - A.BUILD_COUNT + 1
        if count == 2:
            self.jade[p] -= tables.DOUBLE_BUILD_COST
            self.sup_jade += tables.DOUBLE_BUILD_COST
        self.build_left = count
        self.build_need = 0
        self._log.append((K_BUILD, p, count, tables.DOUBLE_BUILD_COST if count == 2 else 0))
        self.decision = D_BUILD_CELL

    def _on_build_cell(self, p: int, a: int) -> None:
        bit = self.geo.cell_bits[a - A.CELL]
        self.blocks[p] -= 1
        self.build_need += WallGeometry.workers_for(bit)
        self.build_left -= 1
        self._place_block(p, bit, governor=False)
        if not self.build_left:
            self.worker_need = self.build_need
            self.decision = D_LABORERS

    def _on_laborers(self, p: int, a: int) -> None:
        self._pay_workers(p, a - A.LABORERS)
        self._finish_action()

    def _on_favor(self, p: int, a: int) -> None:
        card = a - A.PLAY_FAVOR
        self.favor_hand[p] &= ~(1 << card)
        self.favor_played[p] |= 1 << card  # laid on the table: public from now on
        self.favor_card = card
        self._log.append((K_FAVOR_PLAYED, p, card))
        if self.sup_reinf > 0 or self.unlimited:
            self.decision = D_REINFORCE_CELL
        else:  # no Reinforcement left in the stockpile: none is placed (docs/RULES.md C7)
            self._favor_rewards(p, card)

    def _on_reinforce(self, p: int, a: int) -> None:
        bit = self.geo.cell_bits[a - A.CELL]
        self.reinf |= 1 << bit
        self.sup_reinf -= 1
        self._log.append((K_REINFORCED, p, a - A.CELL))
        self._favor_rewards(p, self.favor_card)

    def _favor_rewards(self, p: int, card: int) -> None:
        r = self.game.deck.cards[card].rewards
        self.income_bonus[p] += r["income"]
        self.petition_bonus[p] += r["petition"]
        self.jade[p] += self._take_jade(r["jade"])
        if r["vp"]:
            self._score(p, r["vp"], _FAVOR_CARD)
        if r["treasure"]:
            self._gain_treasure(p, r["treasure"], _FAVOR_CARD)
        for _ in range(r["buyback_chips"]):
            self._gain_chip(p)
        self._gain_convicts(p, r["convicts"])
        self._gain_laborers(p, r["laborers"])
        blocks = min(r["wall_blocks"], self.stock_blocks[p])
        self.stock_blocks[p] -= blocks
        self.blocks[p] += blocks
        self.favor_card = -1
        self._finish_action()

    def _on_replace(self, p: int, a: int) -> None:
        bit = self.geo.cell_bits[a - A.CELL]
        b = 1 << bit
        victim = next(q for q in range(self.n) if self.own[q] & b)
        self.own[victim] &= ~b
        self.blocks[victim] += 1  # the removed block goes back to its owner's supply
        self.own[p] |= b
        self.blocks[p] -= 1
        self._log.append((K_REPLACED, p, a - A.CELL, victim))
        self.worker_need = tables.REPLACE_MULTIPLIER * WallGeometry.workers_for(bit)
        self.decision = D_LABORERS

    def _on_prisons(self, p: int, a: int) -> None:
        r1, r2 = A.PRISON_PAIRS[a - A.PRISON_PAIR]
        self.convicts[p] -= tables.TREASURE_CONVICTS  # one to each of the two prisons
        self.prison_convicts[r1] += 1
        self.prison_convicts[r2] += 1
        self._log.append((K_TREASURE_COLLECTED, p, r1, r2))
        self._gain_treasure(p, 1, ScoreReason.COLLECT_TREASURE)
        self._finish_action()

    def _on_move(self, p: int, a: int) -> None:
        self.region[p] = a - A.MOVE_REGION
        self._log.append((K_MOVED, p, self.region[p]))
        self._finish_action()

    def _on_turn_end(self, p: int, a: int) -> None:
        if a == A.END_TURN:
            self._end_turn()
            return
        if a == A.BUYBACK_TASKMASTER:
            self.jade[p] -= tables.TASKMASTER_BUYBACK_COST
            self.sup_jade += tables.TASKMASTER_BUYBACK_COST
        else:
            self.chips[p] -= 1
            self.sup_chips += 1
        card = self.last_card
        self.roles_table[p] &= ~(1 << card)
        self.roles_hand[p] |= 1 << card
        self.buyback_used = True
        self._log.append((K_BUYBACK, p, card, a == A.BUYBACK_CHIP))
        self.decision = D_ROLE

    def _on_trade(self, p: int, a: int) -> None:
        if a == A.TRADE_DONE:
            self._next_trader()
            return
        hand = self.favor_hand[p]
        low = hand & -hand
        self.favor_hand[p] = hand ^ low
        self.favor_discard |= low
        if a == A.TRADE_JADE:
            self.jade[p] += self._take_jade(1)
        else:
            self._gain_convicts(p, 1)
        self._log.append((K_TRADED, p, ev.TradeReward.JADE if a == A.TRADE_JADE else ev.TradeReward.CONVICT))
        if not self.favor_hand[p]:
            self._next_trader()


_HANDLERS = {
    D_KEEP_SETUP: State._on_keep,
    D_BID: State._on_bid,
    D_ROLE: State._on_role,
    D_RECRUIT_COUNT: State._on_recruit,
    D_BUY_COUNT: State._on_buy,
    D_DRAW_COUNT: State._on_draw,
    D_KEEP_DRAWN: State._on_keep,
    D_REMOVE_CELL: State._on_remove,
    D_BUILD_COUNT: State._on_build_count,
    D_BUILD_CELL: State._on_build_cell,
    D_LABORERS: State._on_laborers,
    D_FAVOR_CARD: State._on_favor,
    D_REINFORCE_CELL: State._on_reinforce,
    D_REPLACE_CELL: State._on_replace,
    D_PRISON_PAIR: State._on_prisons,
    D_MOVE_REGION: State._on_move,
    D_TURN_END: State._on_turn_end,
    D_TRADE_IN: State._on_trade,
}

_LIST_SLOTS = (
    "jade", "laborers", "convicts", "blocks", "stock_blocks", "chips", "treasure", "score",
    "income_bonus", "petition_bonus", "region", "roles_hand", "roles_table", "favor_hand",
    "favor_played", "drawn", "turns_taken", "bids", "own", "prison_jade", "prison_convicts",
    "deck", "order", "winners", "_log",
)  # fmt: skip
_SCALAR_SLOTS = tuple(
    s for s in State.__slots__ if s not in _LIST_SLOTS
)  # (last_bids and the legal actions are tuples: shared like any immutable value)


def _action_to_string(state: State, action: int) -> str:
    """Human-readable meaning of ``action`` at this state's pending decision."""
    from .describe import action_to_string  # kept in its own module: text, not rules

    return action_to_string(state, action)


def play_random_game(game: Game, seed: int) -> State:
    """Play one game with uniformly random legal actions (the engine's own RNG stream is
    separate from the chooser's, so a seed fixes both)."""
    state = game.new_initial_state(seed)
    pick = rng.seed_state(seed ^ 0x5EED)
    while not state.is_terminal():
        legal = state.legal_actions()
        pick, i = rng.below(pick, len(legal))
        state.apply_action(legal[i])
    return state
