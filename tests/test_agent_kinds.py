"""The registry of agent kinds (``players/kinds.py``): one row per kind says how its spec is parsed,
checked, labelled, made into an agent and seated in a batch, so a new kind is one row. A kind the
project does not have, registered for a test, is parsed, checked, labelled, made, seated and played
by the public functions with nothing else changed."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from island_fortress_env.players import (
    AGENTS_HELP,
    KINDS,
    AgentKind,
    AgentSpec,
    AgentSpecError,
    KindEntry,
    check_agent_spec,
    make_agent,
    parse_agent_spec,
    plays_in_core,
    register_kind,
    spec_labels,
)
from island_fortress_env.players.seat_policies import AgentSeats, seat_policy
from island_fortress_env.training import evaluate as evaluate_mod


class NthLegalAgent:
    """Plays the n-th legal action (counting round): a player only this test knows."""

    def __init__(self, n: int, seed: int | None = None) -> None:
        self.n = n
        self.seed = seed
        self.name = f"nth{n}"

    def reset(self, seed: int | None = None) -> None:
        self.seed = seed

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: object = None) -> int:
        legal = np.flatnonzero(action_mask)
        return int(legal[self.n % len(legal)])


def _parse_nth(text: str) -> AgentSpec:
    argument = text.partition(":")[2] or "0"
    if not argument.isdigit():
        raise AgentSpecError(f"agent {text!r}: expected nth[:N], N a whole number")
    return AgentSpec(AgentKind("nth"), text, simulations=int(argument))


def _check_nth(spec: AgentSpec) -> None:
    assert spec.simulations is not None
    if spec.simulations > 9:
        raise AgentSpecError(f"agent {spec.text!r}: N is at most 9")


@pytest.fixture
def nth_kind() -> Iterator[KindEntry]:
    """``nth[:N]``, registered for one test and removed after it."""
    entry = KindEntry(
        kind=AgentKind("nth"),
        syntax="nth[:N]",
        parse=_parse_nth,
        check=_check_nth,
        make=lambda spec, seed: NthLegalAgent(spec.simulations or 0, seed=seed),
        seats=lambda spec, make: AgentSeats(lambda seed: make(spec.text, seed), name=spec.label),
        in_core=False,
        league=False,
        label=lambda spec: f"nth#{spec.simulations}",
    )
    register_kind(entry)
    yield entry
    del KINDS[entry.kind]


def test_a_registered_kind_is_parsed_checked_labelled_made_and_seated(nth_kind):
    spec = parse_agent_spec("nth:3")
    assert spec.kind is AgentKind("nth") and spec.info is nth_kind and spec.simulations == 3
    assert parse_agent_spec("nth").simulations == 0
    with pytest.raises(AgentSpecError, match="expected nth"):
        parse_agent_spec("nth:x")
    assert check_agent_spec("nth:3") == spec
    with pytest.raises(AgentSpecError, match="at most 9"):
        check_agent_spec("nth:12")
    assert spec.label == "nth#3" and spec.play_mode is None and spec.checkpoint is None
    assert spec_labels([spec, spec]) == ["nth#3", "nth#3#2"]
    agent = make_agent("nth:3", seed=7)
    assert isinstance(agent, NthLegalAgent) and agent.seed == 7
    assert agent.act(np.zeros(4), np.array([0, 1, 1, 0, 1, 1])) == 5
    seats = seat_policy("nth:3", make_agent)
    assert isinstance(seats, AgentSeats) and seats.name == "nth#3"
    seats.begin(0, 1, seed=11)
    assert seats.agents[(0, 1)].seed == 11
    assert not plays_in_core("nth:3")
    with pytest.raises(AgentSpecError, match="sample:CHECKPOINT"):
        parse_agent_spec("sample:nth:3")  # its word is no checkpoint's path now


def test_a_registered_kind_plays_through_the_commands(nth_kind):
    result = evaluate_mod.evaluate(["nth:1", "heuristic"], games=2, seed=3)
    assert [row["spec"] for row in result["agents"]] == ["nth:1", "heuristic"]
    assert result["games"] == 2


def test_a_kind_is_one_object_per_word_and_its_row_is_found_by_it():
    assert AgentKind("search") is AgentKind.SEARCH and AgentKind.SEARCH.value == "search"
    assert [entry.kind for entry in KINDS.values()] == list(KINDS)
    assert all(entry.syntax in AGENTS_HELP for entry in KINDS.values())
    with pytest.raises(ValueError, match="registered already"):
        register_kind(KINDS[AgentKind.RANDOM])


def test_a_word_no_kind_claims_is_a_checkpoints_path():
    spec = parse_agent_spec("nth:3")
    assert spec.kind is AgentKind.CHECKPOINT and str(spec.path) == "nth:3"
    assert parse_agent_spec("random:3").kind is AgentKind.CHECKPOINT  # random takes no argument
