"""Baseline agents behind one interface: ``act(observation, action_mask, state=None) -> action``."""

from __future__ import annotations

from .base import Agent, RandomAgent

AGENT_KINDS = ("random", "heuristic")
SEARCH_KINDS = ("mcts",)  # ``mcts`` or ``mcts:N`` (N simulations); needs the [openspiel] extra


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """``random``, ``heuristic``, ``mcts[:N]`` or a path to a trained checkpoint (``.zip``)."""
    if spec == "random":
        return RandomAgent(seed=seed)
    if spec == "heuristic":
        from .heuristic import HeuristicAgent

        return HeuristicAgent(seed=seed)
    if spec.partition(":")[0] == "mcts":
        from .mcts import MCTSAgent, parse_simulations

        return MCTSAgent(parse_simulations(spec.partition(":")[2]), seed=seed)
    from .checkpoint import CheckpointAgent

    return CheckpointAgent(spec, seed=seed)


__all__ = ["AGENT_KINDS", "SEARCH_KINDS", "Agent", "RandomAgent", "make_agent"]
