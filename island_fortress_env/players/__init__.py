"""Every agent an agent spec names: ``random``, ``heuristic``, a checkpoint file, the search
players built on an adapter (``mcts[:N]``, OpenSpiel's IS-MCTS over the OpenSpiel game) and
mixtures of them (``mixture:FILE``, one member drawn per game: ``players/mixture.py``).

    from island_fortress_env.players import make_agent
    agent = make_agent("heuristic", seed=0)
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from island_fortress_env.agents.base import Agent, RandomAgent
from island_fortress_env.agents.checkpoint import (
    NATIVE_FORMAT,
    CheckpointAgent,
    CheckpointError,
    check_signature,
    read_metadata,
)
from island_fortress_env.agents.heuristic import HeuristicAgent
from island_fortress_env.players.ismcts import MCTSAgent, parse_simulations
from island_fortress_env.players.mixture import MIXTURE_KIND, MixtureAgent, is_mixture, read_mixture
from island_fortress_env.players.search import SearchAgent, parse_search_spec

AGENT_KINDS = ("random", "heuristic")
SEARCH_KINDS = ("mcts", "search")
# ``mcts[:N]``: OpenSpiel's IS-MCTS, N simulations (needs the [openspiel] extra);
# ``search[:CHECKPOINT][:N]``: MCTS guided by a checkpoint's policy and value (``players/search.py``).


class AgentSpecError(ValueError):
    """An AGENT argument that names no usable agent."""


def is_checkpoint(spec: str) -> bool:
    """Whether agent ``spec`` names a checkpoint file: not a built-in player, a search player or a
    mixture."""
    return spec not in AGENT_KINDS and spec.partition(":")[0] not in (*SEARCH_KINDS, MIXTURE_KIND)


def check_agent_spec(spec: str) -> None:
    """Accept ``random``, ``heuristic``, ``mcts[:N]``, ``search[:CHECKPOINT][:N]``, a checkpoint
    file whose metadata fits this environment or ``mixture:FILE`` of such agents; anything else
    raises ``AgentSpecError`` with one clear sentence."""
    if spec in AGENT_KINDS:
        return
    if is_mixture(spec):
        try:
            members = read_mixture(spec)
        except ValueError as error:
            raise AgentSpecError(f"agent {spec!r}: {error}") from None
        for member in members:
            try:
                check_agent_spec(member.spec)
            except AgentSpecError as error:
                raise AgentSpecError(f"agent {spec!r}: member {error}") from None
        return
    kind, _, argument = spec.partition(":")
    if kind == "search":
        try:
            path, _ = parse_search_spec(spec)
        except ValueError as error:
            raise AgentSpecError(f"agent {spec!r}: {error}") from None
        if not path.is_file():
            raise AgentSpecError(f"agent {spec!r}: no checkpoint file {str(path)!r}")
        try:
            metadata = read_metadata(path)
            check_signature(path, metadata)
        except CheckpointError as error:
            raise AgentSpecError(str(error)) from None
        if metadata.get("format") != NATIVE_FORMAT:
            raise AgentSpecError(f"agent {spec!r}: search needs a native checkpoint, not an SB3 one")
        return
    if kind in SEARCH_KINDS:
        try:
            parse_simulations(argument)
        except ValueError as error:
            raise AgentSpecError(f"agent {spec!r}: {error}") from None
        if importlib.util.find_spec("pyspiel") is None:
            raise AgentSpecError(
                f"agent {spec!r} needs OpenSpiel: pip install 'island-fortress-env[openspiel]'"
            )
        return
    path = Path(spec)
    if not path.is_file():
        kinds = ", ".join((*AGENT_KINDS, "mcts[:N]", "search[:CHECKPOINT][:N]", "mixture:FILE"))
        what = "a directory, not a checkpoint file" if path.exists() else "no such file"
        raise AgentSpecError(
            f"unknown agent {spec!r}: expected one of {kinds} or the path to a checkpoint file (.zip), "
            f"and {spec!r} is {what}"
        )
    try:
        check_signature(path, read_metadata(path))
    except CheckpointError as error:
        raise AgentSpecError(str(error)) from None


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """``random``, ``heuristic``, ``mcts[:N]``, ``search[:CHECKPOINT][:N]``, a path to a trained
    checkpoint (``.zip``) or ``mixture:FILE`` of them."""
    if is_mixture(spec):
        return MixtureAgent(read_mixture(spec), make_agent, seed=seed)
    if spec == "random":
        return RandomAgent(seed=seed)
    if spec == "heuristic":
        return HeuristicAgent(seed=seed)
    if spec.partition(":")[0] == "search":
        path, simulations = parse_search_spec(spec)
        return SearchAgent(path, simulations, seed=seed)
    if spec.partition(":")[0] == "mcts":
        return MCTSAgent(parse_simulations(spec.partition(":")[2]), seed=seed)
    return CheckpointAgent(spec, seed=seed)


__all__ = [
    "AGENT_KINDS",
    "SEARCH_KINDS",
    "Agent",
    "AgentSpecError",
    "MixtureAgent",
    "RandomAgent",
    "check_agent_spec",
    "is_checkpoint",
    "make_agent",
]
