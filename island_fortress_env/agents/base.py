"""One small interface for every player: training opponents, evaluation and the demo."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Agent(Protocol):
    """Anything that picks a legal action from an observation and its mask.

    ``observation`` is the env's float32 vector (seat-relative); ``action_mask`` the int8 mask.
    ``state`` is the engine state at that moment (``env.unwrapped.game_state``): rule-based agents
    read it instead of decoding the vector, and must use only what the player to move may see
    (a test checks that hidden information never changes their choice). Learned agents ignore it.
    """

    name: str

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: Any = None) -> int: ...

    def reset(self, seed: int | None = None) -> None: ...


class RandomAgent:
    """Uniform over the legal actions, from its own seeded generator."""

    def __init__(self, seed: int | None = None, name: str = "random") -> None:
        self.name = name
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: Any = None) -> int:
        legal = np.flatnonzero(action_mask)
        return int(legal[self.rng.integers(len(legal))])
