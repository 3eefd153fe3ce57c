"""Every agent an agent spec names: ``random``, ``heuristic``, a checkpoint file (greedy; as
``sample:CHECKPOINT`` its actions drawn from the policy), the search players built on an adapter
(``mcts[:N]``, OpenSpiel's IS-MCTS over the OpenSpiel game) and mixtures of them
(``mixture:FILE``, one member drawn per game: ``players/mixture.py``).

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
SAMPLE_KIND = "sample"  # ``sample:CHECKPOINT``: the policy's actions sampled, not its greedy choice
# ``mcts[:N]``: OpenSpiel's IS-MCTS, N simulations (needs the [openspiel] extra);
# ``search[:CHECKPOINT][:N]``: MCTS guided by a checkpoint's policy and value (``players/search.py``).
AGENTS_HELP = (  # every kind of agent spec, for the commands' --help
    "random, heuristic, a checkpoint file (greedy) or sample:CHECKPOINT (its actions sampled), "
    "search[:CHECKPOINT][:N], mcts[:N] or mixture:FILE"
)


class AgentSpecError(ValueError):
    """An AGENT argument that names no usable agent."""


def is_checkpoint(spec: str) -> bool:
    """Whether agent ``spec`` is a checkpoint file's path: not a built-in player, a search player,
    a mixture or a sampled checkpoint."""
    kind = spec.partition(":")[0]
    return spec not in AGENT_KINDS and kind not in (*SEARCH_KINDS, MIXTURE_KIND, SAMPLE_KIND)


def checkpoint_path(spec: str) -> str | None:
    """The checkpoint file whose policy plays agent ``spec``: the checkpoint itself, greedy or
    sampled (``sample:CHECKPOINT``); None for any other agent."""
    kind, _, path = spec.partition(":")
    if kind == SAMPLE_KIND:
        return path if is_checkpoint(path) else None
    return spec if is_checkpoint(spec) else None


def check_agent_spec(spec: str) -> None:
    """Accept ``random``, ``heuristic``, ``mcts[:N]``, ``search[:CHECKPOINT][:N]``, a checkpoint
    file whose metadata fits this environment (greedy, or sampled as ``sample:CHECKPOINT``) or
    ``mixture:FILE`` of such agents; anything else raises ``AgentSpecError`` with one clear
    sentence."""
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
    if kind == SAMPLE_KIND:
        if not argument or not is_checkpoint(argument):
            raise AgentSpecError(f"agent {spec!r}: expected sample:CHECKPOINT, the path to a checkpoint file")
        check_agent_spec(argument)
        return
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
        kinds = ", ".join(
            (*AGENT_KINDS, "mcts[:N]", "search[:CHECKPOINT][:N]", "sample:CHECKPOINT", "mixture:FILE")
        )
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
    checkpoint (``.zip``, greedy), ``sample:CHECKPOINT`` (its actions sampled) or ``mixture:FILE``
    of them."""
    if is_mixture(spec):
        return MixtureAgent(read_mixture(spec), make_agent, seed=seed)
    kind, _, argument = spec.partition(":")
    if kind == SAMPLE_KIND:
        name = f"{SAMPLE_KIND}:{Path(argument).stem}"
        return CheckpointAgent(argument, seed=seed, deterministic=False, name=name)
    if spec == "random":
        return RandomAgent(seed=seed)
    if spec == "heuristic":
        return HeuristicAgent(seed=seed)
    if kind == "search":
        path, simulations = parse_search_spec(spec)
        return SearchAgent(path, simulations, seed=seed)
    if kind == "mcts":
        return MCTSAgent(parse_simulations(argument), seed=seed)
    return CheckpointAgent(spec, seed=seed)


__all__ = [
    "AGENTS_HELP",
    "AGENT_KINDS",
    "SAMPLE_KIND",
    "SEARCH_KINDS",
    "Agent",
    "AgentSpecError",
    "MixtureAgent",
    "RandomAgent",
    "check_agent_spec",
    "checkpoint_path",
    "is_checkpoint",
    "make_agent",
]
