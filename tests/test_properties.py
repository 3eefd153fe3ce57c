"""Property tests: random legal games under every variant, checked after every action.

Hypothesis draws the table size, the variant options, the game seed and the sequence of
choices (a shrinkable prefix, then a seeded chooser, optionally biased toward building so
that full walls, row completions and favors happen). After EVERY action the invariants
below must hold; at sampled states (the first time each decision kind occurs in a game, and
a few more) the action mask is checked to be exact by trying all ``NUM_ACTIONS`` actions on
clones. Every test runs on both backends (the C++ core and the Python engine, ``backend``).
"""

from __future__ import annotations

import operator
import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from island_fortress_env.core import Game
from island_fortress_env.engine import IllegalActionError, tables
from island_fortress_env.engine import actions as A
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.fields import StateFields
from island_fortress_env.engine.state import ACTION_PHASE_DECISIONS, TERMINAL, State
from island_fortress_env.engine.wall import MAX_CELLS, STRIDE, iter_bits

MAX_STEPS = 5000  # a game takes 250-600 decisions; anything near this bound is a runaway loop

# Decisions a building-minded chooser prefers (drives walls to completion and favors to play).
_CONSTRUCTIVE = frozenset(
    [A.ROLE + A.OP_BUILD, A.ROLE + A.OP_BUY_BLOCKS, A.ROLE + A.OP_RECRUIT, A.ROLE + A.OP_PLAY_FAVOR]
    + [A.REPEAT + A.OP_BUILD, A.BUILD_COUNT + 1]
    + [A.CELL + c for c in range(MAX_CELLS)]
    + [A.GOVERNOR + c for c in range(MAX_CELLS)]
    + [A.RECRUIT_COUNT + k for k in range(5)]
    + [A.BUY_COUNT + k for k in range(5)]
    + [A.BUYBACK_CHIP, A.BUYBACK_TASKMASTER]
)


# --------------------------------------------------------------------------- strategies


@st.composite
def game_options(draw) -> dict:
    n = draw(st.sampled_from([2, 3, 4]))
    opts: dict = {"num_players": n}
    if draw(st.booleans()):
        opts["no_replace"] = True
    if tables.REGIONS_BY_PLAYERS[n] + 1 <= n and draw(st.booleans()):
        opts["extra_region"] = True
    quicker = (("extra_jade", 20), ("start_laborers", 15), ("start_convicts", 25), ("start_blocks", 18))
    for name, high in quicker:
        value = draw(st.one_of(st.just(0), st.integers(0, high)))
        if value:
            opts[name] = value
    incentive = draw(st.sampled_from([None, "wall_block", "buyback_chip", "treasure"]))
    if incentive:
        opts["first_round_incentive"] = incentive
    if draw(st.booleans()):
        opts["favor_trade_in"] = True
    if draw(st.booleans()):
        opts["unlimited_components"] = True
    return opts


plays = st.fixed_dictionaries(
    {
        "seed": st.integers(0, 2**64 - 1),
        "prefix": st.lists(st.integers(0, 10_000), max_size=40),
        "chooser_seed": st.integers(0, 2**32 - 1),
        "bias": st.sampled_from([0.0, 0.0, 0.6, 0.9]),
        "extra_checks": st.lists(st.integers(0, 600), max_size=3),
    }
)


# --------------------------------------------------------------------------- invariants


def expected_totals(game: Game) -> dict:
    totals = dict(game.totals)
    totals["blocks_per_player"] = [game.totals["blocks_per_player"]] * game.num_players
    return totals


def check_invariants(state: State) -> None:
    """Everything that must hold at every moment of every game."""
    game = state.game
    n = state.n
    geo = state.geo
    regions = geo.regions

    # Conservation: nothing is created or destroyed.
    assert state.component_totals() == expected_totals(game)

    # Favor cards: each card is in exactly one place.
    ncards = len(game.deck)
    assert len(set(state.deck)) == len(state.deck), "a card is twice in the deck"
    places = [1 << c for c in state.deck]
    for p in range(n):
        places += [state.favor_hand[p], state.favor_played[p], state.drawn[p]]
    places.append(state.favor_discard)
    union = 0
    for m in places:
        assert union & m == 0, "a favor card is in two places"
        union |= m
    assert union == (1 << ncards) - 1, "a favor card went missing"

    # Score == the sum of the public score events.
    from_log = [0] * n
    for e in state.log:
        if e[0] == "score":
            from_log[e[1]] += e[2]
    assert list(state.score) == from_log

    # Never an empty choice before the end, nothing after it.
    if state.is_terminal():
        assert state.decision == Decision.GAME_OVER
        assert state.legal_actions() == ()
        assert state.current_player() == TERMINAL
    else:
        legal = state.legal_actions()
        assert legal, "empty legal action list before the end"
        # docs/RULES.md E22: PASS exists for safety, but a legal game never needs it.
        assert A.PASS not in legal, f"PASS offered at '{state.decision_name()}'"
        assert 0 <= state.current_player() < n
        assert all(0 <= a < A.NUM_ACTIONS for a in legal)

    # The wall: bounds, support, towers.
    occ = state.occ
    width = 5 * regions
    for bit in iter_bits(occ):
        level, col = divmod(bit, STRIDE)
        assert 0 <= level < 4 and col < width, f"block outside the wall at bit {bit}"
        if level > 0:
            assert occ >> (bit - STRIDE) & 1, f"block at level {level + 1} col {col} has nothing below"
        if level == 3:
            assert col % 5 in (0, 4), f"level-4 block off the towers at column {col}"
    assert occ & ~geo.valid == 0

    # Owners: disjoint, covering exactly the occupied cells.
    owners = [state.gov_bits, *list(state.own)]
    covered = 0
    for m in owners:
        assert covered & m == 0, "a cell has two owners"
        covered |= m
    assert covered == occ
    player_blocks = covered & ~state.gov_bits
    assert state.reinf & ~player_blocks == 0, "reinforcement not on a player block"

    # No negative counts anywhere.
    for name in ("jade", "laborers", "convicts", "blocks", "stock_blocks", "chips", "treasure",
                 "income_bonus", "petition_bonus", "bids", "turns_taken"):  # fmt: skip
        values = getattr(state, name)
        assert len(values) == n
        assert min(values) >= 0, f"negative {name}: {values}"
    for name in ("sup_jade", "sup_treasure", "sup_chips", "sup_reinf", "sup_laborers",
                 "sup_convicts", "gov_stock", "gov_box"):  # fmt: skip
        assert getattr(state, name) >= 0, f"negative {name}"
    assert len(state.prison_jade) == len(state.prison_convicts) == regions
    assert min(state.prison_jade) >= 0 and min(state.prison_convicts) >= 0
    assert all(0 <= r < regions for r in state.region)

    # Turn and round limits.
    assert all(t <= 3 for t in state.turns_taken)
    assert 0 <= state.actions_this_turn <= 2
    assert 0 <= state.round <= game.config.governor_blocks
    assert -1 <= state.holder < n
    # One Governor block leaves the stockpile per petition, and only then.
    taken = game.totals["governor_blocks"] - state.gov_stock
    assert taken == state.round - (1 if state.decision == Decision.PETITION_BID else 0)
    if state.gov_in_hand:
        assert state.holder >= 0

    # Reinforcements come only from played favors; persistent favor rewards add up.
    played_cards = [list(iter_bits(state.favor_played[p])) for p in range(n)]
    assert state.reinf.bit_count() <= sum(len(c) for c in played_cards)
    if state.decision != Decision.REINFORCE_CELL:  # rewards are paid after the reinforcement
        cards = game.deck.cards
        for p in range(n):
            assert state.income_bonus[p] == sum(cards[c].rewards["income"] for c in played_cards[p])
            assert state.petition_bonus[p] == sum(cards[c].rewards["petition"] for c in played_cards[p])

    if state.decision == Decision.PETITION_BID:
        assert not state.gov_in_hand, "a Governor block survived into the next petition"
        assert all(state.bids[p] <= state.jade[p] for p in range(n))
        if state.round >= 2:  # every player finished the three turns of the last round
            assert state.turns_taken == [3] * n
    if state.decision in ACTION_PHASE_DECISIONS:
        p = state.current
        assert p == (state.holder + state.turn_index) % n, "turn order does not follow the marker"
        assert state.bids == [0] * n, "sealed bids kept after the petition"
        if state.gov_in_hand:
            assert state.turns_taken[state.holder] < 3, "Governor block kept past the third turn"
        for q in range(n):
            hand, table = state.roles_hand[q], state.roles_table[q]
            assert hand & table == 0 and hand | table == A.ALL_ROLES
            played = table.bit_count()  # one more card on the table per finished turn
            turns = state.turns_taken[q]
            assert turns == sum(1 for i in range(state.turn_index) if (state.holder + i) % n == q)
            if q == p:
                assert played in (turns, turns + 1)
            else:
                assert played == turns, f"player {q}: {table.bit_count()} cards played in {turns} turns"


_PUBLIC_FIELDS = tuple(name for name in StateFields.__slots__ if not name.startswith("_"))
_read_public_fields = operator.attrgetter(*_PUBLIC_FIELDS)  # an engine State's and a CoreState's


def _quick_snapshot(state: State) -> dict:
    values = [tuple(v) if isinstance(v, list) else v for v in _read_public_fields(state)]
    out = dict(zip(_PUBLIC_FIELDS, values, strict=True))
    # the event log: the engine's raw records (typing them all at every check is slow), the core's typed ones
    out["log"] = tuple(state._log) if isinstance(state, State) else tuple(state.log)
    out["legal"] = state.legal_actions()
    return out


def check_mask_exact(state: State) -> None:
    """Every legal action applies on a clone; every other one raises and changes nothing."""
    legal = state.legal_actions()
    assert len(legal) == len(set(legal)), "legal actions must be unique"
    legal_set = set(legal)
    before = _quick_snapshot(state)
    for a in [-1, A.NUM_ACTIONS, *range(A.NUM_ACTIONS)]:
        c = state.clone()
        if a in legal_set:
            c.apply_action(a)  # must not raise
            check_invariants(c)
        else:
            with pytest.raises(IllegalActionError):
                c.apply_action(a)
            after = _quick_snapshot(c)
            assert after == before, (
                f"illegal action {a} changed the state: {sorted(k for k in before if before[k] != after[k])}"
            )
    assert _quick_snapshot(state) == before, "playing on clones changed the original"


# --------------------------------------------------------------------------- the driver


def play_checked(
    backend: str, options: dict, seed: int, prefix, chooser_seed: int, bias: float, extra_checks=()
) -> State:
    game = Game(**options, backend=backend)
    state = game.new_initial_state(seed)
    chooser = random.Random(chooser_seed)
    roles_per_round: Counter = Counter()
    roles_per_turn: Counter = Counter()
    checked_kinds: set[int] = set()
    extra = set(extra_checks)
    check_invariants(state)
    step = 0
    while not state.is_terminal():
        assert step < MAX_STEPS, "the game does not end"
        legal = state.legal_actions()
        if state.decision not in checked_kinds or step in extra:
            checked_kinds.add(state.decision)
            check_mask_exact(state)
        if step < len(prefix):
            action = legal[prefix[step] % len(legal)]
        else:
            preferred = [a for a in legal if a in _CONSTRUCTIVE] if bias else []
            pool = preferred if preferred and chooser.random() < bias else legal
            action = pool[chooser.randrange(len(pool))]
        p = state.current_player()
        turn = state.turns_taken[p]
        rnd = state.round
        start = len(state.log)
        state.apply_action(action)
        step += 1
        for e in state.log[start:]:
            if e[0] == "role":
                assert e[1] == p
                roles_per_round[rnd, p] += 1
                roles_per_turn[rnd, p, turn] += 1
                assert roles_per_turn[rnd, p, turn] <= 2, "more than 2 actions in a turn"
                assert roles_per_round[rnd, p] <= 6, "more than 6 actions in a round"
        check_invariants(state)

    check_mask_exact(state)  # after the end every action is refused and changes nothing

    # The end: winners, returns, and the role count read back from the log alone.
    assert state.winners and all(0 <= w < state.n for w in state.winners)
    best = max(state.score)
    assert all(state.score[w] == best for w in state.winners)
    assert abs(sum(state.returns())) < 1e-9
    assert state.log[-1][0] == "game_over"
    rnd = 0
    per_round: Counter = Counter()
    for e in state.log:
        if e[0] == "round":
            rnd = e[1]
        elif e[0] == "role":
            per_round[rnd, e[1]] += 1
    assert per_round == roles_per_round
    assert max(per_round.values(), default=0) <= 6
    return state


# --------------------------------------------------------------------------- tests


@given(options=game_options(), play=plays)
def test_random_games_keep_every_invariant(backend, options, play):
    play_checked(
        backend,
        options,
        play["seed"],
        play["prefix"],
        play["chooser_seed"],
        play["bias"],
        play["extra_checks"],
    )


@given(n=st.sampled_from([2, 3, 4]), seed=st.integers(0, 2**64 - 1), chooser_seed=st.integers(0, 2**32 - 1))
def test_standard_games_keep_every_invariant(backend, n, seed, chooser_seed):
    """The standard game (no variant), which most users play."""
    play_checked(backend, {"num_players": n}, seed, [], chooser_seed, 0.0)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_full_walls_are_reached_and_keep_every_invariant(backend, n):
    """Builder-minded play with plenty of resources completes the wall: the rarest ending
    (prisons emptied into the completer's supply, game over mid-round) is checked too."""
    completed = 0
    for k in range(4):
        options = {
            "num_players": n,
            "unlimited_components": True,
            "start_laborers": 10,
            "start_blocks": 10,
            "favor_trade_in": k % 2 == 1,
        }
        state = play_checked(backend, options, 1000 * n + k, [], k, 0.97)
        if any(e[0] == "wall_complete" for e in state.log):
            completed += 1
            assert state.occ == state.geo.valid
            assert sum(state.prison_jade) == 0 and sum(state.prison_convicts) == 0
    assert completed >= 1, "no game reached a complete wall; the driver no longer covers that ending"


@pytest.mark.parametrize("n", [2, 3, 4])
def test_legal_actions_are_sorted(backend, n):
    """``State.legal_actions`` promises *sorted* ids (its docstring; agents and the README
    rely on it). Checked at every decision of a few random games."""
    game = Game(num_players=n, backend=backend)
    for seed in range(3):
        state = game.new_initial_state(seed)
        chooser = random.Random(seed)
        while not state.is_terminal():
            legal = state.legal_actions()
            assert list(legal) == sorted(legal), (
                f"unsorted legal actions at '{state.decision_name()}' (round {state.round}): {legal[:8]}"
            )
            state.apply_action(chooser.choice(legal))
