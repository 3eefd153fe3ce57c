"""Hidden information: a seat's observation depends only on what that seat may know.

For an observing seat X, two states that differ only in what X cannot see (another player's
favor hand, the cards another player is choosing from, the deck order, another player's
sealed bid before all bids are in, the RNG state) must give byte-identical observations.
The states are taken from real games (setup keep, bidding, action phase, keep-drawn,
trade-in) and changed *consistently* (a card is swapped between a hand and the deck, never
created), so every transformed state is still a legal game state.

The converse is checked too (X's own hand, own choice and own bid DO change X's view), and
the public log is checked to carry no kept/drawn card ids and no unrevealed bid. The Parallel
API's view (observation and PASS mask) is checked the same way.

The changed states are made by writing fields, so those tests play on the Python engine; the
tests that only play run on both backends (``backend``). The C++ core writes the engine's
observation bytes (``test_core_differential.py``), and ``test_visibility.py`` checks on both
backends that a redeal of everything a seat cannot see leaves its observation unchanged.
"""

from __future__ import annotations

import random

import pytest

from island_fortress_env.core import Game
from island_fortress_env.engine import State
from island_fortress_env.engine import actions as A
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.state import ACTION_PHASE_DECISIONS
from island_fortress_env.engine.wall import iter_bits
from island_fortress_env.env.observation import ObservationEncoder, action_mask
from island_fortress_env.views.text import render_text

FAMILY = {f.name: f for f in A.ACTION_FAMILIES}
GAMES = [(n, seed) for n in (2, 3, 4) for seed in (11, 12)]


def _expected_totals(game: Game) -> dict:
    totals = dict(game.totals)
    totals["blocks_per_player"] = [game.totals["blocks_per_player"]] * game.num_players
    return totals


def interesting_states(n: int, seed: int, backend: str = "python", **options) -> list[State]:
    """Clones of the states of one random game at the moments that involve hidden cards or
    bids, plus a sample of ordinary action-phase states (engine states unless ``backend``)."""
    game = Game(num_players=n, backend=backend, **options)
    state = game.new_initial_state(seed)
    chooser = random.Random(seed)
    out: list[State] = []
    per_kind: dict[int, int] = {}
    limits = {
        Decision.KEEP_DEALT_FAVORS: 3 * n,
        Decision.PETITION_BID: 2 * n + 2,
        Decision.KEEP_DRAWN_FAVORS: 6,
        Decision.DRAW_FAVORS_COUNT: 4,
        Decision.FAVOR_TRADE_IN: 3,
    }
    step = 0
    while not state.is_terminal():
        d = state.decision
        limit = limits.get(d, 4 if d in ACTION_PHASE_DECISIONS and step % 7 == 0 else 0)
        if per_kind.get(d, 0) < limit:
            per_kind[d] = per_kind.get(d, 0) + 1
            out.append(state.clone())
        state.apply_action(chooser.choice(state.legal_actions()))
        step += 1
    kinds = {s.decision for s in out}
    assert {Decision.KEEP_DEALT_FAVORS, Decision.PETITION_BID, Decision.KEEP_DRAWN_FAVORS} <= kinds, (
        "the game never reached a hidden decision"
    )
    return out


# --------------------------------------------------------------------------- consistent changes
# Each takes a state and returns a changed clone, or None when it does not apply there.


def _fresh(state: State) -> State:
    c = state.clone()
    c.invalidate_cache()  # the cached legal list must be recomputed for the changed state
    return c


def _swap_with_deck(state: State, field: str, p: int, k: int, stride: int) -> State | None:
    """Swap the k-th card of seat p's card set ``field`` with a deck card (a hidden change)."""
    cards = list(iter_bits(getattr(state, field)[p]))
    if not cards or not state.deck:
        return None
    c = _fresh(state)
    card = cards[k % len(cards)]
    i = (k * stride) % len(c.deck)
    other = c.deck[i]
    c.deck[i] = card
    getattr(c, field)[p] = (getattr(c, field)[p] & ~(1 << card)) | (1 << other)
    return c


def swap_hand_with_deck(state: State, p: int, k: int = 0) -> State | None:
    return _swap_with_deck(state, "favor_hand", p, k, stride=7)


def swap_drawn_with_deck(state: State, p: int, k: int = 0) -> State | None:
    return _swap_with_deck(state, "drawn", p, k, stride=5)


def swap_between_hands(state: State, p: int, q: int) -> State | None:
    hp, hq = list(iter_bits(state.favor_hand[p])), list(iter_bits(state.favor_hand[q]))
    if not hp or not hq:
        return None
    c = _fresh(state)
    a, b = hp[0], hq[-1]
    c.favor_hand[p] = (c.favor_hand[p] & ~(1 << a)) | (1 << b)
    c.favor_hand[q] = (c.favor_hand[q] & ~(1 << b)) | (1 << a)
    return c


def reorder_deck(state: State) -> State | None:
    if len(state.deck) < 2:
        return None
    c = _fresh(state)
    c.deck.reverse()
    if c.deck == state.deck:  # a palindrome cannot happen with distinct cards, but be safe
        return None
    return c


def change_rng(state: State) -> State:
    c = _fresh(state)
    c.rng = (state.rng * 6364136223846793005 + 1442695040888963407) % (1 << 64)
    return c


def change_bid(state: State, p: int) -> State | None:
    """Another sealed bid, only while the bids are still sealed and p has placed one."""
    if (
        state.decision != Decision.PETITION_BID
        or p not in state.order[: state.order_pos]
        or state.jade[p] < 1
    ):
        return None
    c = _fresh(state)
    c.bids[p] = (state.bids[p] + 1) % (state.jade[p] + 1)
    return c


def hidden_from(state: State, x: int) -> list[tuple[str, State]]:
    """Changed copies of ``state`` that seat ``x`` must not be able to tell apart from it."""
    out: list[tuple[str, State | None]] = []
    others = [p for p in range(state.n) if p != x]
    for p in others:
        for k in (0, 1):
            out.append((f"player {p}'s hand <-> deck ({k})", swap_hand_with_deck(state, p, k)))
            out.append((f"player {p}'s drawn cards <-> deck ({k})", swap_drawn_with_deck(state, p, k)))
        out.append((f"player {p}'s sealed bid", change_bid(state, p)))
        for q in others:
            if q > p:
                out.append((f"hands of players {p} and {q}", swap_between_hands(state, p, q)))
    out.append(("deck order", reorder_deck(state)))
    out.append(("rng state", change_rng(state)))
    return [(name, s) for name, s in out if s is not None]


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("n,seed", GAMES)
def test_observation_ignores_what_the_seat_cannot_see(n, seed):
    states = interesting_states(n, seed)
    encoder = ObservationEncoder(states[0].game)
    totals = _expected_totals(states[0].game)
    checked = 0
    for state in states:
        for x in range(n):
            base = encoder.encode(state, x).tobytes()
            for name, changed in hidden_from(state, x):
                assert changed.component_totals() == totals, f"test bug: '{name}' is not consistent"
                got = encoder.encode(changed, x).tobytes()
                assert got == base, (
                    f"seat {x} can see '{name}' at '{state.decision_name()}' (round {state.round})"
                )
                checked += 1
    assert checked > 50


@pytest.mark.parametrize("n,seed", GAMES)
def test_hidden_changes_are_real_changes_to_the_owner(n, seed):
    """The sanity converse: each hidden change is visible to the seat it belongs to, so the
    test above cannot pass just because the encoder ignores favors or bids altogether."""
    states = interesting_states(n, seed)
    encoder = ObservationEncoder(states[0].game)
    seen = set()
    for state in states:
        for x in range(n):
            base = encoder.encode(state, x).tobytes()
            for kind, changed in (
                ("own hand", swap_hand_with_deck(state, x)),
                ("own drawn cards", swap_drawn_with_deck(state, x)),
                ("own sealed bid", change_bid(state, x)),
            ):
                if changed is None:
                    continue
                assert encoder.encode(changed, x).tobytes() != base, f"seat {x} does not see its {kind}"
                seen.add(kind)
    assert {"own hand", "own drawn cards"} <= seen
    if n > 1:
        assert "own sealed bid" in seen


@pytest.mark.parametrize("n,seed", GAMES)
def test_legal_actions_and_render_ignore_hidden_information(n, seed):
    """The player to move gets the same mask whatever the others hold, and the text view
    (documented as public) is the same for every hidden change."""
    for state in interesting_states(n, seed):
        x = state.current_player()
        mask = action_mask(state).tobytes()
        text = render_text(state)
        for name, changed in hidden_from(state, x):
            assert action_mask(changed).tobytes() == mask, f"'{name}' changes player {x}'s legal actions"
            assert render_text(changed) == text, f"the public text view shows '{name}'"


@pytest.mark.parametrize("n,seed", GAMES)
def test_parallel_view_ignores_what_the_seat_cannot_see(n, seed):
    """The Parallel API's view of a seat (its observation and its mask: legal actions or only
    PASS) is the same for every change that seat cannot see."""
    from island_fortress_env import island_fortress_v0

    env = island_fortress_v0.parallel_env(num_players=n, backend="python")
    env.reset(seed=seed)
    checked = 0
    for state in interesting_states(n, seed):
        for x, agent in enumerate(env.possible_agents):
            env.game_state = state
            view = env.observe(agent)
            base = view["observation"].tobytes() + view["action_mask"].tobytes()
            for name, changed in hidden_from(state, x):
                env.game_state = changed
                view = env.observe(agent)
                got = view["observation"].tobytes() + view["action_mask"].tobytes()
                assert got == base, f"{agent}'s parallel view shows '{name}' at '{state.decision_name()}'"
                checked += 1
    assert checked > 50


def test_trade_in_phase_hides_other_hands():
    states = [
        s
        for seed in (3, 4, 5)
        for s in interesting_states(3, seed, favor_trade_in=True)
        if s.decision == Decision.FAVOR_TRADE_IN
    ]
    assert states, "no game reached the Favor Trade-in phase"
    encoder = ObservationEncoder(states[0].game)
    for state in states:
        for x in range(state.n):
            base = encoder.encode(state, x).tobytes()
            for name, changed in hidden_from(state, x):
                assert encoder.encode(changed, x).tobytes() == base, f"seat {x} can see '{name}' at trade-in"


# --------------------------------------------------------------------------- the public log


def _log_delta(state: State, action: int) -> tuple[State, list[tuple]]:
    c = state.clone()
    start = len(c.log)
    c.apply_action(action)
    return c, c.log[start:]


@pytest.mark.parametrize("n,seed", GAMES)
def test_kept_card_choice_leaves_no_public_trace(backend, n, seed):
    """Whichever card a player keeps (setup deal or Draw Favor Cards), the new log events and
    every other seat's observation are the same."""
    keeps = [
        s
        for s in interesting_states(n, seed, backend)
        if s.decision in (Decision.KEEP_DEALT_FAVORS, Decision.KEEP_DRAWN_FAVORS)
    ]
    assert keeps
    encoder = ObservationEncoder(keeps[0].game)
    for state in keeps:
        p = state.current_player()
        outcomes = []
        for a in state.legal_actions():
            if a not in FAMILY["keep_favor"]:
                continue  # a Governor placement offered at the same decision
            after, delta = _log_delta(state, a)
            views = tuple(encoder.encode(after, x).tobytes() for x in range(n) if x != p)
            outcomes.append((tuple(delta), views))
        assert len(outcomes) >= 2
        first = outcomes[0]
        for other in outcomes[1:]:
            assert other[0] == first[0], f"the log reveals which card player {p} kept: {other[0]}"
            assert other[1] == first[1], f"another seat's observation reveals which card player {p} kept"


@pytest.mark.parametrize("n,seed", GAMES)
def test_sealed_bids_leave_no_public_trace_until_revealed(backend, n, seed):
    bids = [s for s in interesting_states(n, seed, backend) if s.decision == Decision.PETITION_BID]
    encoder = ObservationEncoder(bids[0].game)
    compared = 0
    for state in bids:
        p = state.current_player()
        last_bidder = state.order_pos == state.n - 1
        outcomes = []
        for a in state.legal_actions():
            after, delta = _log_delta(state, a)
            views = tuple(encoder.encode(after, x).tobytes() for x in range(n) if x != p)
            outcomes.append((a, tuple(delta), views))
        if last_bidder:
            # All bids are in: the petition event reveals them, as the rules say.
            for a, delta, _ in outcomes:
                petition = [e for e in delta if e[0] == "petition"]
                assert len(petition) == 1 and petition[0][1][p] == a - A.BID
            continue
        for _a, delta, views in outcomes[1:]:
            assert delta == outcomes[0][1], f"the log reveals player {p}'s sealed bid"
            assert views == outcomes[0][2], f"another seat sees player {p}'s sealed bid"
            compared += 1
    assert compared > 0


@pytest.mark.parametrize("n,seed", GAMES)
def test_drawn_cards_leave_no_public_trace(n, seed):
    """Drawing from a differently ordered deck gives the same public log and the same view
    for every other seat (the drawn cards are private to the drawer)."""
    draws = [s for s in interesting_states(n, seed) if s.decision == Decision.DRAW_FAVORS_COUNT]
    assert draws, "no Draw Favor Cards in this game"
    encoder = ObservationEncoder(draws[0].game)
    for state in draws:
        p = state.current_player()
        shuffled = reorder_deck(state)
        for a in (x for x in state.legal_actions() if x in FAMILY["draw"]):  # draw 3 / draw 5
            after1, delta1 = _log_delta(state, a)
            after2, delta2 = _log_delta(shuffled, a)
            assert after1.drawn[p] != after2.drawn[p], "test bug: the reordered deck drew the same cards"
            assert delta1 == delta2, "the log reveals which cards were drawn"
            for x in range(n):
                if x != p:
                    assert encoder.encode(after1, x).tobytes() == encoder.encode(after2, x).tobytes()


@pytest.mark.parametrize("n,seed", GAMES)
def test_log_names_only_played_cards(backend, n, seed):
    """Scan a whole game: every favor card id in the public log is a card laid on the table."""
    game = Game(num_players=n, favor_trade_in=True, backend=backend)
    state = game.new_initial_state(seed)
    chooser = random.Random(seed)
    while not state.is_terminal():
        state.apply_action(chooser.choice(state.legal_actions()))
    played = 0
    for p in range(n):
        played |= state.favor_played[p]
    for e in state.log:
        if e[0] == "favor_played":
            assert played >> e[2] & 1
        elif e[0] in ("kept", "drew", "bid_placed", "traded"):
            # only the player and public counts: no int beyond the fixed public fields
            ints = [v for v in e[1:] if isinstance(v, int) and not isinstance(v, bool)]
            if e[0] == "kept":
                assert ints == [e[1], 3]
            elif e[0] == "drew":
                assert (e[2], e[3]) in ((3, 2), (5, 1)) and len(ints) == 3
            else:
                assert ints == [e[1]]
