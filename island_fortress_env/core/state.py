"""``CoreState``: a game state held by the C++ core, with the public API of ``engine.State``
(``engine.protocol.StateProtocol``, the API both backends implement).

Everything the engine's consumers read off a state (the observation encoder, the global state,
the heuristic agent, the text and picture views) is here as a read-only property that reads the
C++ fields, so a ``CoreState`` can stand wherever an engine ``State`` is read. Fields are read,
never written: the state changes only through ``apply_action`` (a list field is a ``FieldList``,
whose every write raises ``TypeError``). The event log is rebuilt as the engine's typed records
(``engine.events``), illegal actions raise the engine's ``IllegalActionError`` with the same message,
leaving the state unchanged, and ``redeal_unseen`` is ``engine.visibility.redeal_unseen`` in C++.

Arguments are checked here, before the core sees them, and raise what the engine raises on the
same arguments: an index that is no integer raises ``TypeError``, one out of range ``IndexError``
(booleans index as 0 and 1, as in a list). Where the engine would take an index the core does not,
it is refused: a negative one (a list reads it from the end, which the engine would log as seat
-1), and ``with_block``'s player outside the table with ``governor=True`` (the engine does not
check it there) raise ``IndexError``; ``redeal_unseen``'s seat must be an integer (``ValueError``).

A ``CoreState`` pickles, copies (``copy.copy``) and deep-copies: a copy is the game (the engine's
``Game``), the seed of its first state and its history (every action applied, and the
``with_block`` and ``redeal_unseen`` that made it), played again in the core when unpickled.
"""

from __future__ import annotations

import operator
import weakref
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from island_fortress_env import core as _package
from island_fortress_env.core.codegen import core_options
from island_fortress_env.engine import actions as A
from island_fortress_env.engine import events as ev
from island_fortress_env.engine import rng
from island_fortress_env.engine.config import INCENTIVES, ConfigError
from island_fortress_env.engine.decisions import DECISION_NAMES, Decision
from island_fortress_env.engine.favors import REWARD_KINDS
from island_fortress_env.engine.game import Game
from island_fortress_env.engine.protocol import StateProtocol
from island_fortress_env.engine.state import GOVERNOR_OWNER, IllegalActionError, action_id

if _package._core is None:  # the package imports without the extension; this module needs it
    raise ImportError(
        "the C++ core (island_fortress_env.core._core) is not built: reinstall the package with "
        "`pip install -e .` on a machine with a C++17 compiler and CMake "
        f"(import failed: {_package.build_error()})",
        name="island_fortress_env.core._core",
    )
_core = _package._core

__all__ = ["OBS_SIZE", "STATE_SIZE", "CoreState", "FieldList", "core_game", "new_initial_state"]

OBS_SIZE: int = _core.TABLES["OBS_SIZE"]
STATE_SIZE: int = _core.TABLES["STATE_SIZE"]
# The largest Quicker Play count the core holds exactly (its counts are 64-bit integers).
MAX_CORE_COUNT = 10**15

_GAMES: weakref.WeakKeyDictionary[Game, Any] = weakref.WeakKeyDictionary()
_DECISIONS = tuple(Decision)
_KINDS = tuple(ev.EventKind)
_REASONS = tuple(ev.ScoreReason)
_TRADE_REWARDS = tuple(ev.TradeReward)
_RECORD_TYPES = tuple(ev.RECORD_TYPES[k] for k in _KINDS)
_K_PETITION = _KINDS.index(ev.EventKind.PETITION)
_K_GAME_OVER = _KINDS.index(ev.EventKind.GAME_OVER)
_K_INCENTIVE = _KINDS.index(ev.EventKind.INCENTIVE)
_K_SCORE = _KINDS.index(ev.EventKind.SCORE)
_K_TRADED = _KINDS.index(ev.EventKind.TRADED)
_BOOL_FIELD = {  # kind -> position (after the player) of a field the engine logs as a bool
    _KINDS.index(ev.EventKind.ROLE): 2,
    _KINDS.index(ev.EventKind.PLACE): 2,
    _KINDS.index(ev.EventKind.BUYBACK): 2,
}
_new = object.__new__
_empty = np.empty
_FLOAT32 = np.dtype(np.float32)
_INT8 = np.dtype(np.int8)

_READ_ONLY = (
    "a CoreState's fields are read-only: the state changes through apply_action only "
    "(to build a scenario by writing fields, play on the Python engine: backend='python')"
)


class FieldList(list):
    """A list field read off a ``CoreState`` (``state.score``, ``state.own`` ...): it reads, compares
    and copies (``[:]``, ``list()``, ``copy()``) as a list, and every write raises ``TypeError``, since
    writing to it could not change the state. Pickled and deep-copied as a plain list."""

    __slots__ = ()

    def _read_only(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(_READ_ONLY)

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only
    append = extend = insert = pop = remove = clear = sort = reverse = _read_only

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))


_core.set_field_list_type(FieldList)


def core_game(game: Game) -> Any:
    """The core's twin of ``game`` (its configuration and loaded deck), made once per game."""
    found = _GAMES.get(game)
    if found is None:
        cfg = game.config
        for name in ("extra_jade", "start_laborers", "start_convicts"):
            if getattr(cfg, name) > MAX_CORE_COUNT:
                raise ConfigError(
                    f"invalid game config: {name}={getattr(cfg, name)!r}: the C++ core holds counts "
                    f"up to {MAX_CORE_COUNT} (the Python engine, backend='python', holds any)"
                )
        mask = (1 << 64) - 1
        cards = [
            (
                list(card.offsets),
                card.anchor_mask & mask,
                card.anchor_mask >> 64,
                [card.rewards[kind] for kind in REWARD_KINDS],
            )
            for card in game.deck.cards
        ]
        found = _core.make_game(options=core_options(cfg), cards=cards)
        _GAMES[game] = found
    return found


def new_initial_state(game: Game, seed: Any = None) -> CoreState:
    """A new game of ``game`` in the core; the seed follows the engine's rules (``SeedError``)."""
    state = _new(CoreState)
    state._init(game, _core.State(core_game(game), rng.seed_state(seed)), [], 0)
    return state


def _typed(raw: list[int], n: int) -> list[ev.Event]:
    """The engine's typed records from the core's flat log: [kind, count, fields...] each."""
    out: list[ev.Event] = []
    i, size = 0, len(raw)
    make = tuple.__new__
    while i < size:
        k, count = raw[i], raw[i + 1]
        fields = raw[i + 2 : i + 2 + count]
        i += 2 + count
        kind = _KINDS[k]
        if k == _K_PETITION:
            values: tuple[Any, ...] = (tuple(fields[:n]), tuple(fields[n : 2 * n]), fields[2 * n])
        elif k == _K_GAME_OVER:
            values = (tuple(fields[:n]), tuple(fields[n:]))
        elif k == _K_SCORE:
            values = (fields[0], fields[1], _REASONS[fields[2]], fields[3], fields[4])
        elif k == _K_INCENTIVE:
            values = (fields[0], INCENTIVES[fields[1]])
        elif k == _K_TRADED:
            values = (fields[0], _TRADE_REWARDS[fields[1]])
        elif k in _BOOL_FIELD:
            j = _BOOL_FIELD[k]
            values = (*fields[:j], bool(fields[j]), *fields[j + 1 :])
        else:
            values = tuple(fields)
        out.append(make(_RECORD_TYPES[k], (kind, *values)))
    return out


def _field(name: str) -> Any:
    """A read-only property reading the C++ state's field ``name``."""
    return property(attrgetter(f"_s.{name}"), doc=f"The state's ``{name}`` (read from the core).")


class CoreState:
    """One moment of a game, held by the C++ core; the public API of ``engine.State``."""

    __slots__ = ("_log", "_log_offset", "_s", "cfg", "game", "geo")

    def _init(self, game: Game, s: Any, log: list[ev.Event], offset: int) -> None:
        self.game = game
        self.cfg = game.config
        self.geo = game.geometry
        self._s = s
        self._log = log  # the typed events read so far
        self._log_offset = offset  # where the unread part of the core's flat log starts

    def __init__(self, game: Game, seed: Any = None) -> None:
        self._init(game, _core.State(core_game(game), rng.seed_state(seed)), [], 0)

    # ------------------------------------------------------------------ the engine's public API

    def current_player(self) -> int:
        return self._s.current_player()

    def is_terminal(self) -> bool:
        return self._s.is_terminal()

    def legal_actions(self) -> tuple[int, ...]:
        """Sorted legal action ids for the current player (never empty before the end)."""
        return self._s.legal_actions()

    def apply_action(self, action: Any) -> None:
        """Apply one legal action; an illegal one raises ``IllegalActionError`` and changes nothing."""
        a = action_id(action)
        if not 0 <= a < A.NUM_ACTIONS or not self._s.apply(a):
            raise IllegalActionError(self._illegal_message(a))

    def clone(self) -> CoreState:
        other = _new(CoreState)
        other._init(self.game, self._s.clone(), self._log[:], self._log_offset)
        return other

    def returns(self) -> list[float]:
        """Zero-sum win/loss returns at the end (``scoring.win_loss_returns``); 0 before."""
        return self._s.returns()

    def action_to_string(self, action: int) -> str:
        from island_fortress_env.engine.describe import action_to_string

        return action_to_string(self, action)

    def decision_name(self) -> str:
        return DECISION_NAMES[self._s.decision]

    @property
    def decision(self) -> Decision:
        return _DECISIONS[self._s.decision]

    @property
    def log(self) -> list[ev.Event]:
        """The public event log, oldest first, as the engine's typed records."""
        s = self._s
        if s.log_size() != self._log_offset:
            self._log.extend(_typed(s.log_from(self._log_offset), s.n))
            self._log_offset = s.log_size()
        return self._log[:]

    def with_block(self, cell: int, player: int, governor: bool = False) -> CoreState:
        """A copy with a block put on ``cell`` as the rules put one (see ``engine.State.with_block``);
        ``cell`` is 0..cells-1 and ``player`` a seat, else ``IndexError`` (``TypeError`` for what is
        no integer), checked in the engine's order."""
        n = self._s.n
        c = _position(cell, len(self.geo.cell_bits), "cell")
        governor = bool(governor)
        if not governor:
            _position(player, n, "player")
        if c < 0:
            raise IndexError(
                f"cell {c}: the core takes cells 0..{len(self.geo.cell_bits) - 1}, not negative ones"
            )
        p = _position(player, n, "player")
        if p < 0:
            raise IndexError(f"player {p}: the core takes seats 0..{n - 1}, not negative ones")
        other = _new(CoreState)
        other._init(self.game, self._s.with_block(c, p, governor), self._log[:], self._log_offset)
        return other

    def redeal_unseen(self, seat: int, seed: int) -> CoreState:
        """A copy ``seat`` cannot tell from this state, what it cannot see drawn again from
        ``seed`` (``engine.visibility.redeal_unseen``, in C++, the same draws)."""
        n = self._s.n
        if not 0 <= seat < n:  # the engine's check (TypeError for what does not compare with a seat)
            raise ValueError(f"seat must be 0..{n - 1}, not {seat!r}")
        gen = rng.seed_state(seed)  # SeedError, as the engine checks the seed next
        try:
            seat = operator.index(seat)
        except TypeError:
            raise ValueError(f"seat must be an integer 0..{n - 1}, not {seat!r}") from None
        other = _new(CoreState)
        other._init(self.game, self._s.redeal_unseen(seat, gen), self._log[:], self._log_offset)
        return other

    def blocks_built(self, player: int) -> int:
        return self._s.own[player].bit_count()

    def owner_at(self, bit: int) -> int | None:
        """Seat owning the block at ``bit``, ``GOVERNOR_OWNER``, or None if empty."""
        if type(bit) is int and bit >= _WALL_BITS:  # no cell there (nor a 2**bit integer made)
            return None
        b = 1 << bit
        if not self._s.occ & b:
            return None
        if self._s.gov_bits & b:
            return GOVERNOR_OWNER
        for p, own in enumerate(self._s.own):
            if own & b:
                return p
        raise AssertionError("occupied cell without owner")

    def component_totals(self) -> dict[str, Any]:
        """Where every component is, summed: must always equal ``game.totals``."""
        s = self._s
        n = s.n
        own, hand, played, drawn = s.own, s.favor_hand, s.favor_played, s.drawn
        return {
            "jade": s.sup_jade + sum(s.jade) + sum(s.prison_jade),
            "treasure": s.sup_treasure + sum(s.treasure),
            "buyback_chips": s.sup_chips + sum(s.chips),
            "reinforcements": s.sup_reinf + s.reinf.bit_count(),
            "laborers": s.sup_laborers + sum(s.laborers),
            "convicts": s.sup_convicts + sum(s.convicts) + sum(s.prison_convicts),
            "blocks_per_player": [s.stock_blocks[p] + s.blocks[p] + own[p].bit_count() for p in range(n)],
            "governor_blocks": s.gov_stock + s.gov_box + int(s.gov_in_hand) + s.gov_bits.bit_count(),
            "favor_cards": s.deck_size
            + sum((hand[p] | played[p] | drawn[p]).bit_count() for p in range(n))
            + s.favor_discard.bit_count(),
        }

    # ------------------------------------------------------------------ observation, mask, global state

    def encode(self, seat: int, out: np.ndarray | None = None) -> np.ndarray:
        """The observation of ``seat`` (``observation.ObservationEncoder.encode``'s bytes),
        written into ``out`` (float32[OBS_SIZE]) or a new array; a seat outside 0..n-1 raises
        ``IndexError`` (``TypeError`` for what is no integer)."""
        if type(seat) is not int or not 0 <= seat < self._s.n:
            seat = _position(seat, self._s.n, "seat")
            if seat < 0:
                raise IndexError(f"seat {seat}: the core takes seats 0..{self._s.n - 1}, not negative ones")
        if out is None:  # an array made here needs no checking
            out = _empty(OBS_SIZE, _FLOAT32)
            self._s.encode(seat, out)
            return out
        self._s.encode(seat, _checked(out, np.float32, OBS_SIZE))
        return out

    def action_mask(self, out: np.ndarray | None = None) -> np.ndarray:
        """1 where an action is legal now (``observation.action_mask``), into ``out`` (int8 or
        bool [NUM_ACTIONS]) or a new int8 array."""
        if out is None:  # an array made here needs no checking
            out = _empty(A.NUM_ACTIONS, _INT8)
            self._s.action_mask(out)
            return out
        if out.dtype not in (np.int8, np.uint8, np.bool_):
            raise TypeError(f"an action mask is int8, uint8 or bool, not {out.dtype}")
        self._s.action_mask(_checked(out, out.dtype, A.NUM_ACTIONS))
        return out

    def global_state(self, out: np.ndarray | None = None) -> np.ndarray:
        """The global state vector (``global_state.encode_global_state``), into ``out``
        (float32[STATE_SIZE]) or a new array."""
        if out is None:
            out = np.empty(STATE_SIZE, dtype=np.float32)
        self._s.global_state(_checked(out, np.float32, STATE_SIZE))
        return out

    # ------------------------------------------------------------------ helpers

    def _illegal_message(self, action: int) -> str:
        where = f"round {self._s.round}, player {self._s.current}, decision '{self.decision_name()}'"
        if not 0 <= action < A.NUM_ACTIONS:
            return f"illegal action {action}: outside the action space 0..{A.NUM_ACTIONS - 1} ({where})"
        if self.is_terminal():
            return f"illegal action {action}: the game is over"
        legal_actions = self.legal_actions()
        legal = ", ".join(str(a) for a in legal_actions[:12])
        more = "" if len(legal_actions) <= 12 else ", ..."
        return f"illegal action {action} ({self.action_to_string(action)}) at {where}; legal: [{legal}{more}]"

    def __repr__(self) -> str:
        return f"CoreState(round {self._s.round}, player {self._s.current}, '{self.decision_name()}')"

    # ------------------------------------------------------------------ copies and pickles

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its game, the seed of its first state and its history (``_rebuild``)."""
        return (_rebuild, (self.game, self._s.seed, self._s.history(), self._s.logging))

    def __copy__(self) -> CoreState:
        return self.clone()

    def __deepcopy__(self, memo: dict[int, Any]) -> CoreState:
        return self.clone()  # the game is shared, as clone shares it: no state ever changes it

    # ------------------------------------------------------------------ the fields (read-only)

    n = _field("n")
    rng = _field("rng")
    unlimited = _field("unlimited")
    jade = _field("jade")
    laborers = _field("laborers")
    convicts = _field("convicts")
    blocks = _field("blocks")
    stock_blocks = _field("stock_blocks")
    chips = _field("chips")
    treasure = _field("treasure")
    score = _field("score")
    income_bonus = _field("income_bonus")
    petition_bonus = _field("petition_bonus")
    region = _field("region")
    roles_hand = _field("roles_hand")
    roles_table = _field("roles_table")
    favor_hand = _field("favor_hand")
    favor_played = _field("favor_played")
    drawn = _field("drawn")
    turns_taken = _field("turns_taken")
    bids = _field("bids")
    last_bids = _field("last_bids")
    occ = _field("occ")
    own = _field("own")
    gov_bits = _field("gov_bits")
    reinf = _field("reinf")
    sup_jade = _field("sup_jade")
    sup_treasure = _field("sup_treasure")
    sup_chips = _field("sup_chips")
    sup_reinf = _field("sup_reinf")
    sup_laborers = _field("sup_laborers")
    sup_convicts = _field("sup_convicts")
    gov_stock = _field("gov_stock")
    gov_box = _field("gov_box")
    gov_in_hand = _field("gov_in_hand")
    prison_jade = _field("prison_jade")
    prison_convicts = _field("prison_convicts")
    deck = _field("deck")
    favor_discard = _field("favor_discard")
    round = _field("round")
    current = _field("current")
    holder = _field("holder")
    turn_index = _field("turn_index")
    actions_this_turn = _field("actions_this_turn")
    buyback_used = _field("buyback_used")
    last_card = _field("last_card")
    in_action = _field("in_action")
    keep_left = _field("keep_left")
    op = _field("op")
    build_left = _field("build_left")
    build_need = _field("build_need")
    worker_need = _field("worker_need")
    favor_card = _field("favor_card")
    order = _field("order")
    order_pos = _field("order_pos")
    wall_completer = _field("wall_completer")
    winners = _field("winners")
    bid_digits_left = _field("bid_digits_left")


if TYPE_CHECKING:  # the type checker holds CoreState to the state API both backends implement
    _IMPLEMENTS: type[StateProtocol] = CoreState

_WALL_BITS = 128  # no wall has a cell at bit 128 or above (the core's bit sets are 128 bits)


def _position(value: Any, size: int, what: str) -> int:
    """``value`` as an index into a list of ``size`` (negative ones counting from the end), with
    the list's errors: ``TypeError`` for what is no integer, ``IndexError`` out of range."""
    try:
        index = int(operator.index(value))
    except TypeError:
        raise TypeError(f"{what} must be an integer, not {type(value).__name__}") from None
    if not -size <= index < size:
        raise IndexError(f"{what} {index} out of range: 0..{size - 1}")
    return index


def _rebuild(game: Any, seed: Any, history: Any, logging: Any) -> CoreState:
    """The ``CoreState`` that ``history`` (``CoreState.__reduce__``'s bytes) makes from the first
    state of ``game`` seeded by ``seed``; a history that is no legal play of that game raises
    ``ValueError`` naming its first bad entry."""
    if not isinstance(game, Game):
        raise TypeError(f"a CoreState is rebuilt from an engine Game, not {type(game).__name__}")
    if not isinstance(history, bytes):
        raise TypeError(f"a CoreState's history is bytes, not {type(history).__name__}")
    state = _new(CoreState)
    s = _core.State.replay(core_game(game), rng.seed_state(seed), history, bool(logging))
    state._init(game, s, [], 0)
    return state


def _checked(out: np.ndarray, dtype: Any, size: int) -> np.ndarray:
    if not isinstance(out, np.ndarray) or out.dtype != dtype or out.shape != (size,):
        raise ValueError(f"expected a numpy array of shape ({size},) and dtype {np.dtype(dtype)}")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("the output array must be C-contiguous and writeable")
    return out
