"""The search player (``players/search.py``, ``search[:CHECKPOINT][:N]``) on states of the Python
engine (its reference tree, ``players/search_reference.py``): its spec, that it never reads what its
seat cannot see, that it finds a won endgame, and that it plays whole games legally. The core's
batched search: tests/test_batched_search.py.

Budgets are a few simulations per decision: these tests check behaviour, never strength.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from scenario import (
    action_phase_state,
    do,
    empty_hand,
    exhaust_governor_stock,
    give_favor,
    legal,
    put_block,
    quiet_turn,
    set_player,
)
from test_agents import play_checked
from test_hidden_information import interesting_states

from island_fortress_env.agents.checkpoint import CheckpointAgent, save_policy
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.cli import app as cli
from island_fortress_env.engine import Game, State
from island_fortress_env.engine import actions as A
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.visibility import redeal_unseen
from island_fortress_env.env.observation import ObservationEncoder, action_mask
from island_fortress_env.players import (
    AgentKind,
    AgentSpecError,
    check_agent_spec,
    make_agent,
    parse_agent_spec,
    search_reference,
)
from island_fortress_env.players.search import DEFAULT_SIMULATIONS, SHIPPED_POLICY, SearchAgent

ROOT = Path(__file__).resolve().parents[1]
SB3_CHECKPOINT = ROOT / "checkpoints" / "baseline-3p.zip"


def _blank_checkpoint(path: Path, seed: int) -> Path:
    """A native checkpoint of a small untrained network: priors and values that know nothing."""
    torch.manual_seed(seed)
    network = {"cnn_channels": 2, "hidden": 8}
    return save_policy(path, ActorCritic(**network), network, {})


def _view(state: State) -> tuple[np.ndarray, np.ndarray]:
    """The observation and mask of the seat to move."""
    return ObservationEncoder(state.game).encode(state, state.current_player()), action_mask(state)


# --------------------------------------------------------------------------- the spec


@pytest.mark.parametrize(
    ("spec", "path", "simulations"),
    [
        ("search", SHIPPED_POLICY, DEFAULT_SIMULATIONS),
        ("search:12", SHIPPED_POLICY, 12),
        ("search:runs/a.zip", Path("runs/a.zip"), DEFAULT_SIMULATIONS),
        ("search:runs/a.zip:5", Path("runs/a.zip"), 5),
        ("search:C:/policies/a.zip:7", Path("C:/policies/a.zip"), 7),  # a colon inside the path
        ("search:100000", SHIPPED_POLICY, 100_000),
    ],
)
def test_search_spec_names_a_checkpoint_and_simulations(spec, path, simulations):
    parsed = parse_agent_spec(spec)
    assert (parsed.kind, parsed.path, parsed.simulations) == (AgentKind.SEARCH, path, simulations)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("search:0", "1-100000"),
        ("search:100001", "1-100000"),
        ("search:runs/a.zip:0", "1-100000"),
        ("search:", "expected search"),
    ],
)
def test_bad_search_spec_raises_one_sentence(spec, message):
    with pytest.raises(AgentSpecError, match=message):
        parse_agent_spec(spec)


def test_another_kinds_spec_is_no_search():
    assert parse_agent_spec("mcts:3").kind is AgentKind.MCTS


def test_search_spec_checks_name_what_is_wrong(tmp_path):
    with pytest.raises(AgentSpecError, match=r"search:0.*1-100000"):
        check_agent_spec("search:0")
    missing = tmp_path / "missing.zip"
    with pytest.raises(AgentSpecError, match="no checkpoint file"):
        check_agent_spec(f"search:{missing}:4")
    with pytest.raises(AgentSpecError, match="native checkpoint"):
        check_agent_spec(f"search:{SB3_CHECKPOINT}")
    text = tmp_path / "notes.zip"
    text.write_text("not a zip", "utf-8")
    with pytest.raises(AgentSpecError, match=r"notes\.zip"):
        check_agent_spec(f"search:{text}")
    check_agent_spec("search:3")  # the shipped policy
    check_agent_spec(f"search:{_blank_checkpoint(tmp_path / 'blank.zip', 0)}:2")


def test_make_agent_builds_the_search_player_the_spec_names(tmp_path):
    shipped = make_agent("search:3", seed=0)
    assert isinstance(shipped, SearchAgent)
    assert shipped.simulations == 3 and shipped.name == "search:policy-2-4p-v3:3"
    blank = make_agent(f"search:{_blank_checkpoint(tmp_path / 'blank.zip', 0)}", seed=0)
    assert isinstance(blank, SearchAgent)
    assert blank.simulations == DEFAULT_SIMULATIONS and blank.name == f"search:blank:{DEFAULT_SIMULATIONS}"


@pytest.mark.parametrize("spec", ["search:0", "search:missing-file.zip:3"])
def test_a_bad_search_spec_on_the_command_line_is_one_line_and_exit_2(spec, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["evaluate", spec, "random", "--games", "2"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and spec in err[0]


def test_the_search_player_needs_the_state():
    state = Game(num_players=2).new_initial_state(0)
    obs, mask = _view(state)
    with pytest.raises(ValueError, match="game state"):
        make_agent("search:2", seed=0).act(obs, mask, None)


# --------------------------------------------------------------------------- fairness


def _positions(n: int, seed: int) -> list[State]:
    """Positions of a random game where the seat to move has a choice and something is hidden
    from it (setup keeps, bids, draws, action phase)."""
    return [s for s in interesting_states(n, seed) if len(s.legal_actions()) > 1]


def _hidden(state: State, seat: int) -> tuple:
    others = [p for p in range(state.n) if p != seat]
    return (
        tuple(state.favor_hand[p] | state.drawn[p] for p in others),
        tuple(state.bids[p] for p in others),
        tuple(state.deck),
        state.rng,
    )


def _twins(n: int, seed: int) -> list[tuple[State, State]]:
    """Each position with a twin that differs only in what the seat to move cannot see."""
    pairs = []
    for k, state in enumerate(_positions(n, seed)):
        seat = state.current_player()
        twin = redeal_unseen(state, seat, 1000 + k)
        assert _hidden(twin, seat) != _hidden(state, seat), "the twin must differ in what is hidden"
        obs, mask = _view(state)
        assert np.array_equal(_view(twin)[0], obs) and np.array_equal(_view(twin)[1], mask)
        pairs.append((state, twin))
    return pairs


def _searched(agent: SearchAgent, position: State) -> tuple[int, dict, dict]:
    """The agent's choice in ``position`` (re-seeded the same way every time) and its root's
    statistics: the visits and the summed values of every action tried."""
    reference = agent._reference_agent()  # engine states are searched by the Python reference tree
    roots = []
    simulate = reference._simulate

    def spy(node, world):  # the first call of a search is at the root
        if not roots:
            roots.append(node)
        return simulate(node, world)

    reference._simulate = spy
    try:
        agent.reset(seed=7)
        obs, mask = _view(position)
        choice = agent.act(obs, mask, position)
    finally:
        del reference._simulate
    root = roots[0]
    return choice, dict(root.child_visits), {a: tuple(v) for a, v in root.child_value.items()}


@pytest.mark.parametrize(("n", "seed"), [(2, 11), (3, 12), (4, 11)])
def test_search_chooses_alike_when_only_hidden_information_differs(n, seed):
    pairs = _twins(n, seed)
    decisions = {state.decision for state, _ in pairs}
    assert {Decision.KEEP_DEALT_FAVORS, Decision.PETITION_BID, Decision.KEEP_DRAWN_FAVORS} <= decisions
    agent = SearchAgent(SHIPPED_POLICY, 6, seed=7)
    for state, twin in pairs:
        mine, twins = _searched(agent, state), _searched(agent, twin)
        assert mine[0] == twins[0], (
            f"seat {state.current_player()} at '{state.decision_name()}' chose "
            f"{state.action_to_string(mine[0])}, and {state.action_to_string(twins[0])} when only what "
            "it cannot see was dealt differently"
        )
        assert mine[1:] == twins[1:], f"the search at '{state.decision_name()}' saw the hidden difference"


def test_the_fairness_check_catches_a_search_that_reads_the_true_state(monkeypatch):
    """The check above has teeth: a search whose simulations start from the true state (not a
    redeal of what the seat cannot see) values some twin differently."""
    monkeypatch.setattr(search_reference.visibility, "redeal_unseen", lambda state, seat, seed: state.clone())
    agent = SearchAgent(SHIPPED_POLICY, 6, seed=7)
    assert any(_searched(agent, state)[1:] != _searched(agent, twin)[1:] for state, twin in _twins(3, 12))


# --------------------------------------------------------------------------- a won endgame

PLAY_FAVOR = A.ROLE + A.OP_PLAY_FAVOR


def _last_turn_of_the_game() -> State:
    """2 players, the last round (no Governor blocks left): seat 0's last turn, seat 1 has played
    all of its own. Seat 0 holds a completed favor card (Great Corner, 6 points) and trails by
    35 points before the end-of-game scoring; playing the card is the only way to win."""
    state = action_phase_state(2, seed=3, holder=1, governor=False)
    exhaust_governor_stock(state)
    for _ in range(5):  # seat 1, seat 0, seat 1, seat 0, seat 1
        quiet_turn(state)
        if state.decision == Decision.BUYBACK_OR_END_TURN:
            do(state, A.END_TURN)
    empty_hand(state, 0)
    give_favor(state, 0, "Great Corner")  # X.. / X.. / XXX
    for level in (1, 2, 3):
        put_block(state, 0, 0, level, 0)
    put_block(state, 0, 0, 1, 1)
    put_block(state, 0, 0, 1, 2)
    set_player(state, 0, score=10)
    set_player(state, 1, score=45)
    assert state.current_player() == 0 and state.decision == Decision.CHOOSE_ROLE_ACTION
    return state


def _can_win(state: State) -> set[bool]:
    """Whether seat 0 wins alone, over every way to play on (seat 0 makes every decision left)."""
    if state.is_terminal():
        return {list(state.winners) == [0]}
    assert state.current_player() == 0
    out: set[bool] = set()
    for action in state.legal_actions():
        child = state.clone()
        child.apply_action(action)
        out |= _can_win(child)
    return out


def test_search_takes_the_one_action_that_wins_the_game(tmp_path):
    state = _last_turn_of_the_game()
    outcome = {}
    for action in legal(state):
        child = state.clone()
        child.apply_action(action)
        outcome[action] = _can_win(child)
    assert outcome.pop(PLAY_FAVOR) == {True}
    assert outcome and all(results == {False} for results in outcome.values())
    # An untrained network that prefers another action: what finds the win is the search.
    blank = _blank_checkpoint(tmp_path / "blank.zip", 0)
    obs, mask = _view(state)
    assert CheckpointAgent(blank).act(obs, mask, state) != PLAY_FAVOR
    assert SearchAgent(blank, 1, seed=0).act(obs, mask, state) != PLAY_FAVOR
    for seed in range(3):
        assert SearchAgent(blank, 16, seed=seed).act(obs, mask, state) == PLAY_FAVOR
    assert make_agent("search:8", seed=0).act(obs, mask, state) == PLAY_FAVOR  # the shipped policy


# --------------------------------------------------------------------------- one legal action


def test_one_legal_action_is_played_without_search(monkeypatch):
    state = Game(num_players=3).new_initial_state(5)
    chooser = np.random.default_rng(1)
    while len(state.legal_actions()) != 1:
        state.apply_action(int(chooser.choice(state.legal_actions())))
    agent = SearchAgent(SHIPPED_POLICY, 4, seed=0)

    def no_search(*args, **kwargs):
        raise AssertionError("searched a decision with one legal action")

    monkeypatch.setattr(agent.search, "run", no_search)
    monkeypatch.setattr(agent, "_reference_agent", no_search)
    obs, mask = _view(state)
    assert agent.act(obs, mask, state) == state.legal_actions()[0]


# --------------------------------------------------------------------------- whole games


@pytest.mark.parametrize(
    ("specs", "seed"),
    [
        (["search:2", "random"], 1),
        (["search:2", "heuristic", "search:2"], 2),
        (["search:1", "random", "search:2", "heuristic"], 3),
    ],
)
def test_search_plays_whole_games_legally_and_leaves_the_state_alone(specs, seed):
    state = play_checked(specs, seed, check_unchanged=True)
    assert state.is_terminal() and state.winners
