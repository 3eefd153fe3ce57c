"""Baseline agents: legal play, no peeking at hidden information, sensible choices, strength.

Legal play and hidden information are checked on both backends (``backend``); on a core state
the heuristic plays through its C++ twin. The scenario tests write fields: the Python engine."""

from __future__ import annotations

import numpy as np
import pytest
from scenario import (
    action_phase_state,
    assert_consistent,
    empty_hand,
    fill_row,
    give_favor,
    gov_at,
    put_block,
    set_player,
)

from island_fortress_env.agents import Agent, RandomAgent
from island_fortress_env.baseline.heuristic import HeuristicAgent
from island_fortress_env.core import Game
from island_fortress_env.engine import actions as A
from island_fortress_env.engine import state as S
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.fields import StateFields
from island_fortress_env.engine.visibility import redeal_unseen
from island_fortress_env.env.observation import ObservationEncoder, action_mask
from island_fortress_env.players import AgentKind, make_agent
from island_fortress_env.training.evaluate import evaluate


def snapshot(state: S.State) -> dict:
    """Every public slot of the state as immutable values and its event log (to check that an
    agent changes nothing), of an engine State or a CoreState."""
    out = {}
    for name in StateFields.__slots__:
        if name.startswith("_"):
            continue  # the engine's event records and cache of legal actions: the log below
        value = getattr(state, name)
        if name in ("game", "cfg", "geo"):
            out[name] = id(value)
        elif isinstance(value, list):
            out[name] = tuple(value)
        else:
            out[name] = value
    out["log"] = tuple(state.log)
    return out


def play_checked(
    specs: list[str], seed: int, check_unchanged: bool = False, backend: str = "python", **options
) -> S.State:
    """Play one game with the given agents; every chosen action must be in the mask."""
    game = Game(num_players=len(specs), backend=backend, **options)
    encoder = ObservationEncoder(game)
    state = game.new_initial_state(seed)
    agents = [make_agent(spec, seed=100 * seed + i) for i, spec in enumerate(specs)]
    steps = 0
    while not state.is_terminal():
        p = state.current_player()
        mask = action_mask(state)
        obs = encoder.encode(state, p)
        before = snapshot(state) if check_unchanged else None
        action = agents[p].act(obs, mask, state)
        assert isinstance(action, int)
        assert mask[action] == 1, f"{specs[p]} chose illegal {action} at '{state.decision_name()}'"
        assert action in state.legal_actions()
        if check_unchanged:
            assert snapshot(state) == before, f"{specs[p]} changed the state it was given"
        state.apply_action(action)
        steps += 1
        assert steps < 20_000
    assert_consistent(state)
    return state


# ---------------------------------------------------------------------------- legality


def test_agents_implement_the_interface():
    for kind in ("random", "heuristic"):
        assert AgentKind(kind).value == kind
        agent = make_agent(kind, seed=1)
        assert isinstance(agent, Agent)
        assert agent.name == kind
    assert isinstance(make_agent("heuristic"), HeuristicAgent)
    assert HeuristicAgent(name="h2").name == "h2"


@pytest.mark.parametrize(
    ("specs", "seed"),
    [
        (["heuristic", "random"], 1),
        (["random", "heuristic"], 2),
        (["heuristic", "random", "heuristic"], 3),
        (["random", "heuristic", "random", "heuristic"], 4),
    ],
)
def test_random_and_heuristic_only_pick_legal_actions(backend, specs, seed):
    state = play_checked(specs, seed, check_unchanged=(seed == 3), backend=backend)
    assert state.winners


@pytest.mark.parametrize(
    ("players", "options"),
    [
        (3, {"no_replace": True}),
        (3, {"extra_region": True}),
        (2, {"favor_trade_in": True, "first_round_incentive": "treasure"}),
        (4, {"unlimited_components": True, "extra_jade": 10,
             "start_laborers": 4, "start_convicts": 4, "start_blocks": 3}),
        (4, {"extra_region": True, "first_round_incentive": "buyback_chip", "favor_trade_in": True}),
    ],
)  # fmt: skip
def test_legal_play_in_variants(backend, players, options):
    specs = (["heuristic", "random"] * 2)[:players]
    play_checked(specs, seed=players + len(options), backend=backend, **options)


def test_heuristic_needs_the_state(backend):
    state = Game(num_players=2, backend=backend).new_initial_state(0)
    with pytest.raises(ValueError, match="engine state"):
        HeuristicAgent(seed=0).act(None, action_mask(state), None)


def test_heuristic_is_reproducible_from_its_seed(backend):
    a = play_checked(["heuristic", "heuristic", "heuristic"], seed=8, backend=backend)
    b = play_checked(["heuristic", "heuristic", "heuristic"], seed=8, backend=backend)
    assert a.log == b.log


def test_one_heuristic_playing_many_tables_in_turn_moves_as_a_fresh_agent_would():
    """The trainer's league has one heuristic agent play many tables in turn: it keeps one set of
    constants and caches per game configuration, and its moves are those of a fresh agent."""
    states = [
        Game(num_players=n, backend="python").new_initial_state(seed)
        for seed, n in enumerate((2, 3, 4, 3, 2))
    ]
    shared = HeuristicAgent()
    for step in range(60):
        for state in states:
            if state.is_terminal():
                continue
            mask = action_mask(state)
            shared.reset(seed=step)  # the same tie-breaking draws for both agents
            action = shared.act(None, mask, state)
            assert action == HeuristicAgent(seed=step).act(None, mask, state)
            state.apply_action(action)
    assert len(shared._infos) == 3  # one per configuration (2, 3 and 4 players)


def test_random_agent_is_uniform_over_legal_actions():
    mask = np.zeros(A.NUM_ACTIONS, dtype=np.int8)
    mask[[3, 7, 11]] = 1
    agent = RandomAgent(seed=0)
    picks = [agent.act(None, mask) for _ in range(600)]
    assert set(picks) == {3, 7, 11}
    assert min(picks.count(a) for a in (3, 7, 11)) > 150


# ---------------------------------------------------------------------------- hidden information


def _hide_differently(state: S.State, seat: int, rng: np.random.Generator) -> tuple[S.State, list[str]]:
    """A clone that differs from ``state`` only in what ``seat`` may not see."""
    other = state.clone()
    other.deck = state.deck[:]
    changed = []
    opponents = [q for q in range(state.n) if q != seat]
    # Swap a card between an opponent's favor hand (or the cards it is choosing from) and the deck.
    for q in opponents:
        for field in ("favor_hand", "drawn"):
            cards = [c for c in range(36) if getattr(other, field)[q] >> c & 1]
            if cards and other.deck:
                card = cards[int(rng.integers(len(cards)))]
                pos = int(rng.integers(len(other.deck)))
                getattr(other, field)[q] ^= (1 << card) | (1 << other.deck[pos])
                other.deck[pos] = card
                changed.append(f"{field}[{q}]")
                break
    # Reorder the deck and move the engine's random generator.
    if len(other.deck) > 1:
        order = list(rng.permutation(len(other.deck)))
        other.deck = [other.deck[i] for i in order]
        changed.append("deck order")
    other.rng = (state.rng * 6364136223846793005 + 1442695040888963407) % (1 << 64)
    # Change the sealed bids already placed by opponents.
    if state.decision == Decision.PETITION_BID:
        for q in state.order[: state.order_pos]:
            if q != seat and state.jade[q] > 0:
                other.bids[q] = (state.bids[q] + 1 + int(rng.integers(state.jade[q]))) % (state.jade[q] + 1)
                changed.append(f"bids[{q}]")
    other.invalidate_cache()
    return other, changed


def _redeal_differently(state: S.State, seat: int, rng: np.random.Generator) -> tuple[S.State, list[str]]:
    """A copy with everything ``seat`` may not see dealt again (``visibility.redeal_unseen``: the
    only way to change a core state's hidden information) and the names of what changed."""
    other = redeal_unseen(state, seat, int(rng.integers(2**63)))
    changed = [
        f"{field}[{q}]"
        for q in range(state.n)
        if q != seat
        for field in ("favor_hand", "drawn", "bids")
        if getattr(other, field)[q] != getattr(state, field)[q]
    ]
    changed += ["deck order"] * (other.deck != state.deck) + ["rng"] * (other.rng != state.rng)
    return other, changed


@pytest.mark.parametrize(("players", "options"), [(3, {}), (2, {"favor_trade_in": True}), (4, {})])
def test_heuristic_ignores_hidden_information(backend, players, options):
    game = Game(num_players=players, backend=backend, **options)
    hide = _hide_differently if backend == "python" else _redeal_differently  # a core state is read-only
    encoder = ObservationEncoder(game)
    state = game.new_initial_state(21 + players)
    players_ = [HeuristicAgent(seed=5 + p) for p in range(players)]
    rng = np.random.default_rng(players)
    checked = set()
    bids_checked = 0
    step = 0
    while not state.is_terminal():
        p = state.current_player()
        mask = action_mask(state)
        obs = encoder.encode(state, p)
        if step % 2 == 0 or state.decision in (
            Decision.PETITION_BID,
            Decision.KEEP_DEALT_FAVORS,
            Decision.KEEP_DRAWN_FAVORS,
            Decision.FAVOR_TRADE_IN,
        ):
            other, changed = hide(state, p, rng)
            assert changed, "nothing hidden was changed: the check would prove nothing"
            # The change is invisible to this seat: same observation, same legal actions.
            assert np.array_equal(encoder.encode(other, p), obs)
            assert np.array_equal(action_mask(other), mask)
            mine = HeuristicAgent(seed=99).act(obs, mask, state)
            theirs = HeuristicAgent(seed=99).act(obs, mask, other)
            assert mine == theirs, (
                f"seat {p} at '{state.decision_name()}' chose {state.action_to_string(mine)} but "
                f"{other.action_to_string(theirs)} after changing {changed}"
            )
            checked.add(state.decision)
            bids_checked += any(c.startswith("bids") for c in changed)
        state.apply_action(players_[p].act(obs, mask, state))
        step += 1
    assert {
        Decision.KEEP_DEALT_FAVORS,
        Decision.PETITION_BID,
        Decision.CHOOSE_ROLE_ACTION,
        Decision.BUYBACK_OR_END_TURN,
    } <= checked
    assert bids_checked > 0
    if options.get("favor_trade_in"):
        assert Decision.FAVOR_TRADE_IN in checked or not any(e[0] == "traded" for e in state.log)


# ---------------------------------------------------------------------------- sensible choices


def _choose(state: S.State, seed: int = 0) -> int:
    state.invalidate_cache()
    return HeuristicAgent(seed=seed).act(None, action_mask(state), state)


def test_heuristic_plays_a_completed_favor_card():
    state = action_phase_state(3, seed=1, holder=0, governor=False)
    empty_hand(state, 0)
    give_favor(state, 0, "Great Corner")  # X.. / X.. / XXX: vp 6, treasure 1
    for level in (1, 2, 3):
        put_block(state, 0, 0, level, 0)
    put_block(state, 0, 0, 1, 1)
    put_block(state, 0, 0, 1, 2)
    set_player(state, 0, blocks=4, laborers=6, convicts=4)
    assert _choose(state) == A.ROLE + A.OP_PLAY_FAVOR


def test_heuristic_places_the_governor_block_to_complete_a_row_it_leads():
    state = action_phase_state(3, seed=2, holder=0, governor=True)
    fill_row(state, 1, 1, [0, 0, 1, 0, None])  # region 2, level 1: three of its own, one empty
    action = _choose(state)
    assert action == gov_at(state, 1, 1, 4)  # region 2, level 1, last column


def test_heuristic_spends_convicts_before_laborers():
    state = action_phase_state(3, seed=3, holder=0, governor=False)
    set_player(state, 0, blocks=1, laborers=4, convicts=4)
    state.apply_action(A.ROLE + A.OP_BUILD)
    state.apply_action(A.BUILD_COUNT)  # one block
    state.apply_action(A.CELL + 0)  # level 1: two Workers
    assert state.decision == Decision.ASSIGN_LABORERS
    assert _choose(state) == A.LABORERS + 0  # two Convicts, no Laborer
    # Three Convicts for four Workers: two Laborers (one dies) beat an odd one (one dies too).
    state = action_phase_state(3, seed=3, holder=0, governor=False)
    set_player(state, 0, blocks=2, laborers=5, convicts=3, jade=5)
    for a in (A.ROLE + A.OP_BUILD, A.BUILD_COUNT + 1, A.CELL + 0, A.CELL + 1):
        state.apply_action(a)
    assert state.worker_need == 4
    assert _choose(state) == A.LABORERS + 2


def test_heuristic_bids_modestly(backend):
    for seed in range(4):
        state = Game(num_players=3, backend=backend).new_initial_state(seed)
        while state.decision != Decision.PETITION_BID:
            state.apply_action(HeuristicAgent(seed=0).act(None, action_mask(state), state))
        action = HeuristicAgent(seed=0).act(None, action_mask(state), state)
        bid = action - A.BID
        assert 0 <= bid <= min(5, state.jade[state.current_player()] // 3)


# ---------------------------------------------------------------------------- strength


def test_heuristic_beats_two_random_players():
    # Measured over 200 games: ~97% (see the report). 60 games, seats rotated: a true rate of
    # 90% falls under 75% observed with probability < 0.1%.
    result = evaluate(["heuristic", "random", "random"], games=60, seed=2024)
    heuristic = result["agents"][0]
    assert heuristic["name"] == "heuristic"
    assert heuristic["win_rate"] >= 0.75, heuristic
    assert heuristic["mean_score"] > max(a["mean_score"] for a in result["agents"][1:])
