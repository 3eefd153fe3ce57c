"""Baseline agents behind one interface: ``act(observation, action_mask) -> action``."""

from .base import Agent, RandomAgent

__all__ = ["Agent", "RandomAgent"]
