"""Baseline agents behind one interface: ``act(observation, action_mask, state=None) -> action``."""

from __future__ import annotations

from .base import Agent, RandomAgent

AGENT_KINDS = ("random", "heuristic")


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """``random``, ``heuristic`` or a path to a trained checkpoint (``.zip``)."""
    if spec == "random":
        return RandomAgent(seed=seed)
    if spec == "heuristic":
        from .heuristic import HeuristicAgent

        return HeuristicAgent(seed=seed)
    from .checkpoint import CheckpointAgent

    return CheckpointAgent(spec, seed=seed)


__all__ = ["AGENT_KINDS", "Agent", "RandomAgent", "make_agent"]
