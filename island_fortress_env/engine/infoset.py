"""A seat's information set as plain data, and a state rebuilt from it.

``seat_fields(state, seat)`` writes every field of a state that ``seat`` may see, by the engine's
own field names (``fields.py``), as JSON-ready data: numbers, lists, and bit sets as sorted lists
of their bits. What the seat may not see is left out or written as a count, as
``visibility`` rules it: another seat's favor hand and the cards it is choosing from (their
sizes only), the deck (its size), the other seats' sealed bids while the petition takes them
(``null``), and the generator. Of the public event log, only the events of the role action
under way are written (``log``: what the view's "now:" line tells; no player's choice reads more).

``rebuild(game, fields, seat, seed)`` makes an engine ``State`` from such data: it checks every
field (type, range, length, that the wall's owners and the cards add up), deals the cards the
seat cannot see to the other hands, the other choices and the deck in their counts, draws the
sealed bids, and then redeals all of it with ``visibility.redeal_unseen(state, seat, seed)``. The
result is exactly ``redeal_unseen`` of the true state, its event log cut to those events: a
position the seat cannot tell apart from the true one (tests hold the two equal, field by field). Data that
describes no position raises ``InfosetError`` with one sentence naming the field.

A bot served over HTTP is sent these fields (``players.remote``), so a server running this engine
can play any agent on the position without ever learning another seat's cards or bids.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any

from . import actions as A
from . import events as ev
from . import visibility
from .decisions import Decision
from .game import Game
from .protocol import StateProtocol
from .state import State
from .wall import iter_bits

COUNT = 10**15  # the largest count a field may hold (the C++ core's bound, core.state.MAX_CORE_COUNT)
SMALL = 255  # the largest turn-structure number (rounds, turns, actions, builds left)
WALL_BITS = 128  # no wall has a cell at bit 128 or above
MAX_LOG = 512  # events of one role action

# The fields, grouped by how they are written. Per seat (one entry per seat):
SEAT_COUNTS = (
    "jade", "laborers", "convicts", "blocks", "stock_blocks", "chips", "treasure", "score",
    "income_bonus", "petition_bonus", "turns_taken",
)  # fmt: skip
SEAT_SETS = ("roles_hand", "roles_table", "favor_played", "own")  # bit sets, per seat
PRIVATE_SETS = ("favor_hand", "drawn")  # the seat's own as a set, every seat's size as "<name>_size"
SETS = ("occ", "gov_bits", "reinf", "favor_discard")  # bit sets
SUPPLIES = (
    "sup_jade", "sup_treasure", "sup_chips", "sup_reinf", "sup_laborers", "sup_convicts",
    "gov_stock", "gov_box",
)  # fmt: skip
FLAGS = ("gov_in_hand", "buyback_used", "in_action")
REGION_COUNTS = ("prison_jade", "prison_convicts")  # one entry per region
# Turn-structure numbers, each with its range (lowest, highest) for a table of n seats and a deck.
NUMBERS: dict[str, Callable[[int, int], tuple[int, int]]] = {
    "round": lambda n, cards: (0, SMALL),
    "current": lambda n, cards: (0, n - 1),
    "holder": lambda n, cards: (-1, n - 1),
    "turn_index": lambda n, cards: (0, SMALL),
    "actions_this_turn": lambda n, cards: (0, SMALL),
    "last_card": lambda n, cards: (-1, len(A.ROLE_NAMES) - 1),
    "keep_left": lambda n, cards: (0, cards),
    "op": lambda n, cards: (-1, A.NUM_OPS - 1),
    "build_left": lambda n, cards: (0, SMALL),
    # the Workers of one build or replacement, at most MAX_WORKERS (the Laborers choices span them)
    "build_need": lambda n, cards: (0, A.MAX_WORKERS),
    "worker_need": lambda n, cards: (0, A.MAX_WORKERS),
    "favor_card": lambda n, cards: (-1, cards - 1),
    "order_pos": lambda n, cards: (0, n),
    "wall_completer": lambda n, cards: (-1, n - 1),
    "bid_digits_left": lambda n, cards: (0, 12),  # 101**13 Jade is beyond any count
}
# Written in a form of their own: "region", "decision", "bids", "last_bids", "order", "winners",
# "deck_size", "log" (the slot "_log": the events of the role action under way). Never written:
# the game's own (rebuilt from its rules), the generator, the deck's order, the memo of legal actions.
SPECIAL = ("region", "decision", "bids", "last_bids", "order", "winners")
NOT_WRITTEN = ("game", "cfg", "geo", "n", "unlimited", "rng", "deck", "_legal")
# (tests/test_remote_agents.py checks that every slot of a state is written or in NOT_WRITTEN)
KEYS = frozenset(
    (
        *SEAT_COUNTS, *SEAT_SETS, *PRIVATE_SETS, *(f"{name}_size" for name in PRIVATE_SETS), *SETS,
        *SUPPLIES, *FLAGS, *REGION_COUNTS, *NUMBERS, *SPECIAL, "deck_size", "log",
    )
)  # fmt: skip
# Each event's fields after its kind, by type (``events.RECORD_TYPES``).
EVENT_FIELDS = {
    kind: tuple(typing.get_type_hints(record).values())[1:] for kind, record in ev.RECORD_TYPES.items()
}


class InfosetError(ValueError):
    """Fields that describe no position of the game."""


def _bits(value: int) -> list[int]:
    return list(iter_bits(int(value)))


def _tells_action(state: StateProtocol) -> bool:
    """Whether the seat to move is in a role action or ends the turn of one (the words of its
    choices then tell the action: ``views.narrate``'s pending text and buyback)."""
    return not state.is_terminal() and (
        (state.in_action and state.op >= 0) or state.decision == Decision.BUYBACK_OR_END_TURN
    )


def action_log(state: StateProtocol) -> list[ev.Event]:
    """The events of the role action under way: from the mover's last ``Role`` event on, while
    it acts or ends its turn (what ``views.narrate`` reads of the log); none otherwise."""
    if not _tells_action(state):
        return []
    log, mover = state.log, state.current_player()
    starts = [i for i, e in enumerate(log) if isinstance(e, ev.Role) and e.player == mover]
    return log[starts[-1] :] if starts else []


def _event_json(event: tuple[Any, ...]) -> list[Any]:
    return [v.value if isinstance(v, Enum) else list(v) if isinstance(v, tuple) else v for v in event]


def seat_fields(state: StateProtocol, seat: int) -> dict[str, Any]:
    """What ``seat`` may see of ``state`` (an engine ``State`` or a core ``CoreState``), field by
    field (the module doc), as JSON-ready data."""
    if not 0 <= seat < state.n:
        raise ValueError(f"seat must be 0..{state.n - 1}, not {seat!r}")
    out: dict[str, Any] = {"decision": int(state.decision)}
    for name in SEAT_COUNTS:
        out[name] = [int(v) for v in getattr(state, name)]
    out["region"] = [int(v) for v in state.region]
    for name in SEAT_SETS:
        out[name] = [_bits(v) for v in getattr(state, name)]
    hands = [visibility.favor_hand(state, p, seat) for p in range(state.n)]
    choosing = [visibility.choosing_from(state, p, seat) for p in range(state.n)]
    out["favor_hand"] = [None if h is None else list(h) for h in hands]
    out["favor_hand_size"] = [int(v).bit_count() for v in state.favor_hand]
    out["drawn"] = [None if c is None else list(c) for c in choosing]
    out["drawn_size"] = [int(v).bit_count() for v in state.drawn]
    for name in SETS:
        out[name] = _bits(getattr(state, name))
    for name in (*SUPPLIES, *NUMBERS):
        out[name] = int(getattr(state, name))
    for name in FLAGS:
        out[name] = bool(getattr(state, name))
    for name in REGION_COUNTS:
        out[name] = [int(v) for v in getattr(state, name)]
    sealed = visibility.bids_sealed(state)
    out["bids"] = [None if sealed and p != seat else int(b) for p, b in enumerate(state.bids)]
    out["last_bids"] = None if state.last_bids is None else [int(b) for b in state.last_bids]
    out["order"] = [int(p) for p in state.order]
    out["winners"] = [int(p) for p in state.winners]
    out["deck_size"] = len(state.deck)
    out["log"] = [_event_json(e) for e in action_log(state)]
    return out


# --------------------------------------------------------------------------- reading them back


class _Reader:
    """Reads ``fields`` for a game of ``n`` seats, ``regions`` regions and ``cards`` favor cards,
    every wrong value one ``InfosetError`` naming its field."""

    def __init__(self, fields: Mapping[str, Any], n: int, regions: int, cards: int) -> None:
        self.fields, self.n, self.regions, self.cards = fields, n, regions, cards

    def fail(self, name: str, why: str) -> InfosetError:
        return InfosetError(f"field {name!r} {why}")

    def integer(self, name: str, value: Any, low: int, high: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.fail(name, f"must hold integers {low}..{high}")
        return value

    def number(self, name: str, low: int, high: int) -> int:
        return self.integer(name, self.fields[name], low, high)

    def flag(self, name: str) -> bool:
        value = self.fields[name]
        if not isinstance(value, bool):
            raise self.fail(name, "must be true or false")
        return value

    def array(self, name: str, value: Any, length: int | None) -> list[Any]:
        if not isinstance(value, list) or (length is not None and len(value) != length):
            size = "a list" if length is None else f"a list of {length}"
            raise self.fail(name, f"must be {size}")
        return value

    def counts(self, name: str, length: int, high: int = COUNT) -> list[int]:
        return [self.integer(name, v, 0, high) for v in self.array(name, self.fields[name], length)]

    def bit_set(self, name: str, value: Any, limit: int) -> int:
        bits = [self.integer(name, b, 0, limit - 1) for b in self.array(name, value, None)]
        if len(set(bits)) != len(bits):
            raise self.fail(name, "names a bit twice")
        return sum(1 << b for b in bits)

    def event(self, value: Any) -> tuple[Any, ...]:
        """One event of the log: its kind's value, then its fields."""
        if not isinstance(value, list) or not value or not isinstance(value[0], str):
            raise self.fail("log", "must list events as [kind, fields...]")
        try:
            kind = ev.EventKind(value[0])
        except ValueError:
            raise self.fail("log", f"names no kind of event {value[0][:40]!r}") from None
        types = EVENT_FIELDS[kind]
        if len(value) != len(types) + 1:
            raise self.fail("log", f"must give a {kind.value} event {len(types)} fields")
        out: list[Any] = [kind]
        for kind_of, v in zip(types, value[1:], strict=True):
            if kind_of is bool:
                if not isinstance(v, bool):
                    raise self.fail("log", f"must give a {kind.value} event true or false")
                out.append(v)
            elif kind_of is int:
                out.append(self.integer("log", v, -COUNT, COUNT))
            elif isinstance(kind_of, type) and issubclass(kind_of, Enum):
                try:
                    out.append(kind_of(v))
                except ValueError:
                    raise self.fail(
                        "log", f"gives a {kind.value} event an unknown {kind_of.__name__}"
                    ) from None
            elif kind_of is str:
                if not isinstance(v, str) or len(v) > 64:
                    raise self.fail("log", f"must give a {kind.value} event a short text")
                out.append(v)
            else:  # tuple[int, ...]: a value per seat
                values = self.array("log", v, None)
                if len(values) > self.n:
                    raise self.fail("log", f"gives a {kind.value} event more values than seats")
                out.append(tuple(self.integer("log", x, -COUNT, COUNT) for x in values))
        return tuple(out)

    def seats(self, name: str, distinct: bool = True) -> list[int]:
        values = self.array(name, self.fields[name], None)
        seats = [self.integer(name, v, 0, self.n - 1) for v in values]
        if len(seats) > self.n or (distinct and len(set(seats)) != len(seats)):
            raise self.fail(name, f"must list distinct seats 0..{self.n - 1}")
        return seats


def rebuild(game: Game, fields: Any, seat: int, seed: int) -> State:
    """An engine state of ``game`` that ``seat`` cannot tell apart from the position ``fields``
    describes (``seat_fields``' data), everything hidden from ``seat`` dealt from ``seed``
    (the module doc). Raises ``InfosetError`` when ``fields`` describe no position."""
    n, geo, cards = game.num_players, game.geometry, len(game.deck)
    if not isinstance(fields, Mapping):
        raise InfosetError("the fields must be a JSON object")
    missing, unknown = sorted(KEYS - set(fields)), sorted(set(fields) - KEYS)
    if missing or unknown:
        raise InfosetError(f"the fields lack {missing}" if missing else f"unknown fields {unknown}")
    if not 0 <= seat < n:
        raise InfosetError(f"seat {seat} is not at a table of {n}")
    read = _Reader(fields, n, geo.regions, cards)
    state: State = object.__new__(State)
    state.game, state.cfg, state.geo, state.n = game, game.config, geo, n
    state.unlimited = game.config.unlimited_components
    decision = read.number("decision", 0, len(Decision) - 1)
    if decision == Decision.GAME_OVER:
        raise read.fail("decision", "is the end of the game: nobody is to move")
    state.decision = Decision(decision)
    for name in SEAT_COUNTS:
        setattr(state, name, read.counts(name, n))
    state.region = read.counts("region", n, geo.regions - 1)
    limits = {"roles_hand": len(A.ROLE_NAMES), "roles_table": len(A.ROLE_NAMES), "own": WALL_BITS}
    for name in SEAT_SETS:
        values = read.array(name, fields[name], n)
        setattr(state, name, [read.bit_set(name, v, limits.get(name, cards)) for v in values])
    sizes = {name: _own_cards(state, read, name, seat) for name in PRIVATE_SETS}
    for name in SETS:
        setattr(
            state, name, read.bit_set(name, fields[name], cards if name == "favor_discard" else WALL_BITS)
        )
    for name in SUPPLIES:
        setattr(state, name, read.number(name, 0, COUNT))
    for name, bounds in NUMBERS.items():
        setattr(state, name, read.number(name, *bounds(n, cards)))
    for name in FLAGS:
        setattr(state, name, read.flag(name))
    for name in REGION_COUNTS:
        setattr(state, name, read.counts(name, geo.regions))
    sealed = state.decision == Decision.PETITION_BID
    bids = read.array("bids", fields["bids"], n)
    for p, bid in enumerate(bids):
        if (bid is None) != (sealed and p != seat):
            raise read.fail("bids", "must be null for the other seats' sealed bids, and only for them")
    state.bids = [0 if bid is None else read.integer("bids", bid, 0, COUNT) for bid in bids]
    state.last_bids = None if fields["last_bids"] is None else tuple(read.counts("last_bids", n))
    state.order = read.seats("order")
    if state.order and len(state.order) != n:
        raise read.fail("order", "must list every seat once, or none")
    state.winners = read.seats("winners")
    _check_wall(state, read)
    _deal_unseen(state, seat, sizes, read.number("deck_size", 0, cards), read)
    state.rng = 0
    events = read.array("log", fields["log"], None)
    if len(events) > MAX_LOG:
        raise read.fail("log", f"must hold at most {MAX_LOG} events")
    state._log = [read.event(e) for e in events]
    if _tells_action(state):
        first = state._log[0] if state._log else None
        if first is None or first[0] is not ev.EventKind.ROLE or first[1] != state.current:
            raise read.fail("log", "must begin with the role action of the seat to move")
    state._legal = None
    totals = state.component_totals()
    expected = dict(game.totals, blocks_per_player=[game.totals["blocks_per_player"]] * n)
    for name, total in expected.items():
        if totals[name] != total:
            raise InfosetError(f"the {name.replace('_', ' ')} add up to {totals[name]}, not {total}")
    return visibility.redeal_unseen(state, seat, seed)


def _own_cards(state: State, read: _Reader, name: str, seat: int) -> list[int]:
    """Reads ``seat``'s own cards of ``name`` (a favor hand, or the cards it chooses from) into
    ``state``, the other seats' empty for now; returns every seat's count."""
    values, sizes = (
        read.array(name, read.fields[name], read.n),
        read.counts(f"{name}_size", read.n, read.cards),
    )
    for p, value in enumerate(values):
        if (value is None) == (p == seat):
            raise read.fail(name, f"must list seat {seat}'s own cards only (null for the others)")
    own = read.bit_set(name, values[seat], read.cards)
    if own.bit_count() != sizes[seat]:
        raise read.fail(
            f"{name}_size", f"says {sizes[seat]} cards for seat {seat}, who holds {own.bit_count()}"
        )
    setattr(state, name, [own if p == seat else 0 for p in range(read.n)])
    return sizes


def _check_wall(state: State, read: _Reader) -> None:
    """Every block is on a cell of this wall, owned by one seat or the Governor."""
    valid, union = state.geo.valid, state.gov_bits
    for p, own in enumerate(state.own):
        if own & union:
            raise read.fail("own", f"gives seat {p} a cell that another owner holds")
        union |= own
    if union != state.occ or state.occ & ~valid or state.reinf & ~state.occ:
        raise read.fail("occ", "must be the cells of this wall that the seats and the Governor hold")


def _deal_unseen(
    state: State, seat: int, sizes: Mapping[str, list[int]], deck_size: int, read: _Reader
) -> None:
    """The cards ``seat`` cannot see, in order, to the other seats' hands and choices (their
    counts) and the deck (the rest): ``redeal_unseen`` shuffles them next."""
    seen = state.favor_discard
    for p in range(state.n):
        for cards in (state.favor_played[p], state.favor_hand[p], state.drawn[p]):
            if seen & cards:
                raise read.fail("favor_played", "names a card twice (played, held, chosen or discarded)")
            seen |= cards
    pool = [c for c in range(read.cards) if not seen >> c & 1]
    wanted = deck_size + sum(sizes[name][p] for name in PRIVATE_SETS for p in range(state.n) if p != seat)
    if wanted != len(pool):
        raise read.fail(
            "deck_size", f"and the other hands count {wanted} unseen cards; {len(pool)} are unseen"
        )
    at = 0
    for p in range(state.n):
        if p == seat:
            continue
        for name in PRIVATE_SETS:
            count = sizes[name][p]
            getattr(state, name)[p] = sum(1 << c for c in pool[at : at + count])
            at += count
    state.deck = pool[at:]
