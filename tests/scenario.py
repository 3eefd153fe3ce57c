"""Helpers that build scenario states for the rules tests.

A scenario starts from a real game: ``action_phase_state`` plays the setup keeps and the
round-1 bids with fixed choices, so the state is at the first action-phase decision of the
chosen Governor-marker holder. Tests then set what the scenario needs directly, through
helpers that move components instead of creating them, so ``state.component_totals()`` keeps
equal to ``game.totals`` (``do`` checks this after every action).

Coordinates follow the rulebook: ``region`` 0-based (as ``state.region``), ``level`` 1-4
(level 4 only above the end columns), ``col`` 0-4 inside the region.

Seats in the rulebook examples: Adam = 0, Bill = 1, Charles = 2 (clockwise = increasing seat).
"""

from __future__ import annotations

from collections.abc import Iterable

from island_fortress_env.engine import Game, State
from island_fortress_env.engine import actions as A
from island_fortress_env.engine import state as S
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.events import EventKind, Score, ScoreReason
from island_fortress_env.engine.wall import COLUMNS_PER_REGION, STRIDE, bit_of

ADAM, BILL, CHARLES = 0, 1, 2
GOV = S.GOVERNOR_OWNER  # owner id of a Governor block

# ---------------------------------------------------------------- playing actions


def legal(state: State) -> list[int]:
    """Legal actions, recomputed (direct edits to a state leave the engine's cache stale)."""
    state.invalidate_cache()
    return list(state.legal_actions())


def do(state: State, *actions: int) -> State:
    """Apply each action in turn, asserting it is legal and that no component leaks."""
    state.invalidate_cache()  # the test may have edited fields since the last action
    for a in actions:
        options = state.legal_actions()
        assert a in options, (
            f"action {a} ({state.action_to_string(a)}) is not legal at "
            f"'{state.decision_name()}' of player {state.current_player()}; legal: "
            + ", ".join(f"{x} ({state.action_to_string(x)})" for x in options[:20])
        )
        state.apply_action(a)
        assert_consistent(state)
    return state


def assert_consistent(state: State) -> None:
    """Every component is somewhere: the totals equal the box (blocks: per colour)."""
    totals = dict(state.component_totals())
    per_colour = totals.pop("blocks_per_player")
    expected = dict(state.game.totals)
    assert per_colour == [expected.pop("blocks_per_player")] * state.n
    assert totals == expected


def find_action(state: State, family: str | int, arg=0) -> int:
    """Action id of ``family`` (a name from ``ACTION_FAMILIES`` or a family start constant)
    with argument ``arg``; for the ``cell``/``governor`` families ``arg`` may be a
    ``(region, level, col)`` triple."""
    fam = next(f for f in A.ACTION_FAMILIES if family in (f.name, f.start))
    if isinstance(arg, tuple):
        arg = cell(state, *arg)
    assert 0 <= arg < fam.size, f"argument {arg} outside family {fam.name} (size {fam.size})"
    return fam.start + arg


def role(op: int) -> int:
    return A.ROLE + op


def repeat(op: int) -> int:
    return A.REPEAT + op


def at(state: State, region: int, level: int, col: int) -> int:
    """The CELL action for a wall position."""
    return A.CELL + cell(state, region, level, col)


def gov_at(state: State, region: int, level: int, col: int) -> int:
    """The GOVERNOR action (place the Governor block) for a wall position."""
    return A.GOVERNOR + cell(state, region, level, col)


def role_ops(state: State) -> set[int]:
    """Role actions (ops) playable from the hand at the current decision."""
    return {a - A.ROLE for a in legal(state) if A.ROLE <= a < A.ROLE + A.NUM_OPS}


def repeat_ops(state: State) -> set[int]:
    return {a - A.REPEAT for a in legal(state) if A.REPEAT <= a < A.REPEAT + A.NUM_REPEATABLE}


def governor_cells(state: State) -> set[int]:
    return {a - A.GOVERNOR for a in legal(state) if A.GOVERNOR <= a < A.GOVERNOR + A.MAX_CELLS}


# ---------------------------------------------------------------- wall coordinates


def bit(state: State, region: int, level: int, col: int) -> int:
    assert 0 <= region < state.geo.regions and 1 <= level <= 4 and 0 <= col < COLUMNS_PER_REGION
    b = bit_of(level - 1, region * COLUMNS_PER_REGION + col)
    assert b in state.geo.bit_cell, f"no wall cell at region {region} level {level} col {col}"
    return b


def cell(state: State, region: int, level: int, col: int) -> int:
    return state.geo.bit_cell[bit(state, region, level, col)]


def owner(state: State, region: int, level: int, col: int):
    return state.owner_at(bit(state, region, level, col))


def put_block(state: State, who: int, region: int, level: int, col: int, reinforced: bool = False) -> None:
    """Put a block of seat ``who`` (or ``GOV``) on the wall without scoring anything.

    The block comes from the colour's stockpile (a Governor block from the Governor
    stockpile); the cell must be empty and supported, as in a real game.
    """
    b = bit(state, region, level, col)
    mask = 1 << b
    assert not state.occ & mask, "cell already built"
    assert level == 1 or state.occ & (1 << (b - STRIDE)), "no block below"
    if who == GOV:
        assert state.gov_stock > 0
        state.gov_stock -= 1
        state.gov_bits |= mask
    else:
        assert state.stock_blocks[who] > 0
        state.stock_blocks[who] -= 1
        state.own[who] |= mask
    state.occ |= mask
    if reinforced:
        reinforce(state, region, level, col)
    state.invalidate_cache()


def fill_row(state: State, region: int, level: int, owners: Iterable[int | None]) -> None:
    """Put blocks on a row, left to right; ``None`` leaves the cell empty."""
    for col, who in enumerate(owners):
        if who is not None:
            put_block(state, who, region, level, col)


def reinforce(state: State, region: int, level: int, col: int) -> None:
    b = bit(state, region, level, col)
    assert state.occ & (1 << b) and not state.reinf & (1 << b)
    assert state.sup_reinf > 0
    state.sup_reinf -= 1
    state.reinf |= 1 << b
    state.invalidate_cache()


# ---------------------------------------------------------------- resources


_SUPPLY = {
    "jade": "sup_jade",
    "laborers": "sup_laborers",
    "convicts": "sup_convicts",
    "chips": "sup_chips",
    "treasure": "sup_treasure",
}
_DIRECT = ("score", "income_bonus", "petition_bonus", "region")


def set_player(state: State, p: int, **values: int) -> None:
    """Set a seat's holdings exactly, moving the difference from/to the supply.

    Keys: jade, laborers, convicts, chips, treasure, blocks (Wall Blocks in supply, taken from
    or returned to the colour's stockpile), and score, income_bonus, petition_bonus, region
    (set directly; setting treasure does not score).
    """
    for key, value in values.items():
        if key in _SUPPLY:
            held = getattr(state, key)
            diff = value - held[p]
            sup = getattr(state, _SUPPLY[key])
            assert sup >= diff, f"the supply holds only {sup} {key}"
            setattr(state, _SUPPLY[key], sup - diff)
            held[p] = value
        elif key == "blocks":
            diff = value - state.blocks[p]
            assert state.stock_blocks[p] >= diff
            state.stock_blocks[p] -= diff
            state.blocks[p] = value
        elif key in _DIRECT:
            getattr(state, key)[p] = value
        else:
            raise KeyError(key)
    state.invalidate_cache()


def set_all(state: State, **values: int) -> None:
    for p in range(state.n):
        set_player(state, p, **values)


def park(state: State, key: str, leave: int, seat: int) -> None:
    """Leave exactly ``leave`` of ``key`` (jade, laborers, convicts, chips, treasure) in the
    supply by moving the rest to seat ``seat`` (a seat the test does not look at)."""
    sup = getattr(state, _SUPPLY[key])
    set_player(state, seat, **{key: getattr(state, key)[seat] + sup - leave})
    assert getattr(state, _SUPPLY[key]) == leave


def set_prison(state: State, region: int, jade: int = 0, convicts: int = 0) -> None:
    dj = jade - state.prison_jade[region]
    dc = convicts - state.prison_convicts[region]
    assert state.sup_jade >= dj and state.sup_convicts >= dc
    state.sup_jade -= dj
    state.sup_convicts -= dc
    state.prison_jade[region] = jade
    state.prison_convicts[region] = convicts
    state.invalidate_cache()


def clear_prisons(state: State) -> None:
    for r in range(state.geo.regions):
        set_prison(state, r, 0, 0)


def drop_governor(state: State) -> None:
    """Put the Governor block in the holder's hand back in the stockpile (a scenario without it)."""
    if state.gov_in_hand:
        state.gov_in_hand = False
        state.gov_stock += 1
    state.invalidate_cache()


def favor_index(game: Game, name: str) -> int:
    return next(c.index for c in game.deck.cards if c.name == name)


def give_favor(state: State, p: int, name: str) -> int:
    """Put the named favor card in seat ``p``'s hand (from the deck, or swapped with a deck
    card from whichever hand holds it). Returns the card index."""
    i = favor_index(state.game, name)
    mask = 1 << i
    if state.favor_hand[p] & mask:
        return i
    if i in state.deck:
        state.deck.remove(i)
    else:
        q = next(q for q in range(state.n) if state.favor_hand[q] & mask)
        state.favor_hand[q] &= ~mask
        state.favor_hand[q] |= 1 << state.deck.pop(0)
    state.favor_hand[p] |= mask
    state.invalidate_cache()
    return i


def empty_hand(state: State, p: int) -> None:
    """Return every favor card in seat ``p``'s hand to the bottom of the deck."""
    for i in range(len(state.game.deck)):
        if state.favor_hand[p] >> i & 1:
            state.deck.insert(0, i)
    state.favor_hand[p] = 0
    state.invalidate_cache()


# ---------------------------------------------------------------- reaching phases


def keep_setup(state: State) -> None:
    """Every seat keeps the three lowest-numbered of its five dealt favor cards."""
    while state.decision == Decision.KEEP_DEALT_FAVORS:
        do(state, state.legal_actions()[0])


def bid_all(state: State, bids: dict[int, int]) -> None:
    """Place every sealed bid of the petition (seats not named bid 0)."""
    assert state.decision == Decision.PETITION_BID
    while state.decision == Decision.PETITION_BID:
        do(state, A.BID + bids.get(state.current_player(), 0))


def action_phase_state(
    num_players: int = 3, seed: int = 0, holder: int = 0, governor: bool = True, **options
) -> State:
    """A round-1 action-phase state: setup keeps done, ``holder`` won the petition with a bid
    of 1 (everyone else bid 0) and is to play the first turn. ``governor=False`` puts the
    holder's Governor block back in the stockpile."""
    state = Game(num_players=num_players, **options).new_initial_state(seed)
    keep_setup(state)
    bid_all(state, {holder: 1})
    assert state.decision == Decision.CHOOSE_ROLE_ACTION and state.current_player() == holder
    if not governor:
        drop_governor(state)
    return state


_QUIET_OPS = (A.OP_MOVE_TASKMASTER, A.OP_DRAW_FAVORS, A.OP_COLLECT_PRISON, A.OP_COLLECT_JADE)


def quiet_turn(state: State) -> None:
    """Play the current seat's turn with an action that scores nothing and (with empty
    prisons) moves no Jade or Workers: Move the Taskmaster, Draw Favor Cards, Collect from
    Prison, in that order of preference; never places the Governor block."""
    p = state.current_player()
    assert state.decision == Decision.CHOOSE_ROLE_ACTION
    ops = role_ops(state)
    op = next(o for o in _QUIET_OPS if o in ops)
    do(state, role(op))
    while state.current_player() == p and state.decision in S.ACTION_PHASE_DECISIONS:
        d = state.decision
        if d == Decision.DRAW_FAVORS_COUNT:
            do(state, A.DRAW_COUNT)
        elif d == Decision.BUYBACK_OR_END_TURN:
            do(state, A.END_TURN)
        else:  # move region / keep drawn cards: the first option that is not a Governor block
            do(state, next(a for a in legal(state) if not A.GOVERNOR <= a < A.LABORERS))


def play_turns(state: State, count: int) -> None:
    for _ in range(count):
        quiet_turn(state)


def finish_round(state: State) -> None:
    """Quiet turns until the round is over (next round's bids, trade-in or game over)."""
    while state.decision in S.ACTION_PHASE_DECISIONS:
        if state.decision == Decision.BUYBACK_OR_END_TURN:
            do(state, A.END_TURN)
        else:
            quiet_turn(state)


def exhaust_governor_stock(state: State) -> None:
    """Move the Governor stockpile to the box, so the game ends at the end of this round."""
    state.gov_box += state.gov_stock
    state.gov_stock = 0
    state.invalidate_cache()


def end_game(state: State) -> None:
    """End the game at the end of the current round, by Governor stockpile exhaustion."""
    exhaust_governor_stock(state)
    finish_round(state)


ROWS = (ScoreReason.ROW, ScoreReason.ROW_AT_END)  # a row, scored during play or at the end
LEVELS = (ScoreReason.LEVEL, ScoreReason.LEVEL_AT_END)
AT_END = (ScoreReason.ROW_AT_END, ScoreReason.LEVEL_AT_END)


def score_events(
    state: State,
    reasons: ScoreReason | Iterable[ScoreReason] | None = None,
    since: int = 0,
    region: int | None = None,
    level: int | None = None,
) -> list[Score]:
    """Every score event logged (from log index ``since``), optionally only those for
    ``reasons`` (one ScoreReason or several) and of one region / level (0-based)."""
    if isinstance(reasons, ScoreReason):
        reasons = (reasons,)
    wanted = None if reasons is None else frozenset(reasons)
    return [
        e
        for e in state.log[since:]
        if isinstance(e, Score)
        and (wanted is None or e.reason in wanted)
        and (region is None or e.region == region)
        and (level is None or e.level == level)
    ]


def points_by(
    state: State,
    reasons: ScoreReason | Iterable[ScoreReason] | None = None,
    since: int = 0,
    region: int | None = None,
    level: int | None = None,
) -> dict[int, int]:
    out: dict[int, int] = {}
    for e in score_events(state, reasons, since, region, level):
        out[e.player] = out.get(e.player, 0) + e.points
    return out


def events(state: State, kind: EventKind, since: int = 0) -> list:
    return [e for e in state.log[since:] if e.kind is kind]


def shrink_deck(state: State, leave: int, seat: int) -> None:
    """Leave ``leave`` cards in the favor deck, moving the rest (from the top) into seat
    ``seat``'s hand (a seat the test does not look at)."""
    while len(state.deck) > leave:
        state.favor_hand[seat] |= 1 << state.deck.pop()
    state.invalidate_cache()


def fill_wall_except(state: State, *holes: tuple[int, int, int]) -> None:
    """Build every cell of the wall (owners cycling through the seats) except ``holes``,
    given as (region, level, col); holes must be top cells so the rest stays supported."""
    k = 0
    for level in range(1, 5):
        for region in range(state.geo.regions):
            for col in range(5):
                if level == 4 and col not in (0, 4):
                    continue
                if (region, level, col) in holes:
                    continue
                put_block(state, k % state.n, region, level, col)
                k += 1


def cells_of(state, actions, family=A.CELL):
    """The (region, level, col) of each action of ``family`` in ``actions``."""
    out = set()
    for a in actions:
        if family <= a < family + A.MAX_CELLS:
            b = state.geo.cell_bits[a - family]
            level, column = divmod(b, STRIDE)
            out.add((column // COLUMNS_PER_REGION, level + 1, column % COLUMNS_PER_REGION))
    return out


def round_two_bids(holder=ADAM, **options):
    """Round 2, waiting on the first sealed bid; ``holder`` won round 1; everyone has 10 Jade."""
    s = action_phase_state(holder=holder, **options)
    finish_round(s)
    assert s.decision == Decision.PETITION_BID and s.round == 2
    set_all(s, jade=10)
    return s
