"""What a seat may see of a state, and a redeal of what it may not (docs/RULES.md C13, E3, E25).

Hidden from a seat: the other players' favor hands and the cards they are choosing from (the
setup deal or a draw), the order of the favor deck, the other players' sealed bids until all
are in (a bid being entered digit by digit included) and the game's generator. Public: how many
cards each hand holds, the deck's size, the played cards and the bids revealed at the last
petition. A spectator (``viewer=None``) sees every hand and every placed bid, never the deck
order.

Every view of a seat asks here (the observation, the pictures, ``island-fortress play``, the
OpenSpiel adapter's resampling), so the rule is written once. A state here is either backend's
(``protocol.StateProtocol``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar, cast

from . import rng, tables
from .decisions import Decision
from .protocol import StateProtocol
from .wall import iter_bits

if TYPE_CHECKING:
    from .state import State

S = TypeVar("S", bound=StateProtocol)  # a state of either backend; its redeal is of its kind


def bids_sealed(state: StateProtocol) -> bool:
    """Whether this round's petition bids are being taken (sealed until all are in, C13)."""
    return state.decision == Decision.PETITION_BID


def sealed_bidders(state: StateProtocol) -> frozenset[int]:
    """The seats whose sealed bid for this round's petition is in: while bids are taken, the
    seats before the current bidder in the bidding order (E3); none otherwise, since the bids
    are revealed together when the last is in."""
    if state.decision != Decision.PETITION_BID:
        return frozenset()
    return frozenset(state.order[: state.order_pos])


def has_sealed_bid(state: StateProtocol, seat: int) -> bool:
    """Whether ``seat``'s sealed bid for this round's petition is in (public: not its amount)."""
    return state.decision == Decision.PETITION_BID and seat in state.order[: state.order_pos]


def sees_private(viewer: int | None, owner: int) -> bool:
    """Whether ``viewer`` sees ``owner``'s favor hand, the cards ``owner`` is choosing from and
    ``owner``'s sealed bid: ``owner`` itself and a spectator (``None``) do (E25)."""
    return viewer is None or viewer == owner


def sealed_bid(state: StateProtocol, bidder: int, viewer: int | None) -> int | None:
    """``bidder``'s sealed bid this round as ``viewer`` sees it: the Jade bid once the bid is in
    and ``viewer`` may see it (the bidder or a spectator); None otherwise."""
    if sees_private(viewer, bidder) and has_sealed_bid(state, bidder):
        return state.bids[bidder]
    return None


def own_bid(state: StateProtocol, seat: int) -> int:
    """The Jade ``seat`` has bid in this round's petition, as ``seat`` itself sees it: its
    sealed bid, or the digits entered so far while it enters a bid of several base-101 digits
    (E3: the partial bid is seen by its bidder only); 0 while it has not bid or outside the
    petition."""
    if state.decision != Decision.PETITION_BID:
        return 0
    if seat == state.current or seat in state.order[: state.order_pos]:
        return state.bids[seat]
    return 0


def favor_hand(state: StateProtocol, owner: int, viewer: int | None) -> tuple[int, ...] | None:
    """The card ids of ``owner``'s favor hand, lowest first, when ``viewer`` may see them;
    None when they are hidden (the count, ``state.favor_hand[owner].bit_count()``, is public)."""
    if not sees_private(viewer, owner):
        return None
    return tuple(iter_bits(state.favor_hand[owner]))


def choosing_from(state: StateProtocol, owner: int, viewer: int | None) -> tuple[int, ...] | None:
    """The card ids ``owner`` is choosing from (the setup deal or a draw), lowest first, when
    ``viewer`` may see them; None when they are hidden (their count is public)."""
    if not sees_private(viewer, owner):
        return None
    return tuple(iter_bits(state.drawn[owner]))


def unseen_cards(state: StateProtocol, seat: int) -> list[int]:
    """Every favor card ``seat`` cannot see, as sorted card ids: the deck and the other
    players' hands and cards being chosen from."""
    cards = list(state.deck)
    for p in range(state.n):
        if p != seat:
            cards.extend(iter_bits(state.favor_hand[p] | state.drawn[p]))
    cards.sort()
    return cards


def redeal_unseen(state: S, seat: int, seed: int) -> S:
    """A copy of ``state`` that ``seat`` cannot tell apart from it, everything ``seat`` cannot
    see drawn again from the engine's SplitMix64 generator seeded by ``seed``:

    * the unseen favor cards (``unseen_cards``) are shuffled and dealt again, in the same
      counts, to the other players' hands and choices and to the deck;
    * the other players' sealed bids are drawn again uniformly from 0 to the Jade they hold
      (E3), and a bid another player is entering digit by digit gets new leading digits within
      its Jade;
    * the copy's generator is reseeded, so the future shuffles and tie-breaks differ too (E24).

    The copy forgets some things ``seat`` could know (which unkept cards went under the deck,
    E9) and never adds any. ``state`` is left unchanged. For searches over a seat's information
    set (IS-MCTS). A state that has its own ``redeal_unseen(seat, seed)`` (a state of the C++
    core) is redealt by it, with the same draws."""
    if not 0 <= seat < state.n:
        raise ValueError(f"seat must be 0..{state.n - 1}, not {seat!r}")
    gen = rng.seed_state(seed)
    own_redeal = getattr(state, "redeal_unseen", None)
    if own_redeal is not None:  # a state held outside this engine (the C++ core) redeals itself, alike
        return own_redeal(seat, gen)
    other = cast("State", state.clone())  # an engine state: its fields are written below
    pool = unseen_cards(state, seat)  # sorted: the deal depends on which cards are unseen only
    gen = rng.shuffle(gen, pool)
    at = 0
    for p in range(state.n):
        if p == seat:
            continue
        for field in (other.favor_hand, other.drawn):
            count = field[p].bit_count()
            cards = 0
            for card in pool[at : at + count]:
                cards |= 1 << card
            field[p] = cards
            at += count
    other.deck = pool[at:]
    if state.decision == Decision.PETITION_BID:
        for p in state.order[: state.order_pos]:
            if p != seat:
                gen, other.bids[p] = rng.below(gen, state.jade[p] + 1)
        p = state.current
        if p != seat:  # the leading digits entered so far, completed with zeros, within the Jade
            place = tables.BID_BASE ** (state.bid_digits_left + 1)
            gen, other.bids[p] = rng.below(gen, state.jade[p] // place + 1)
    gen, other.rng = rng.next_u64(gen)
    other._legal = None  # the legal actions of another player's choice depend on the redealt cards
    return cast(S, other)
