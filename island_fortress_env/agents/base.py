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


def thresholded(probs: np.ndarray, threshold: float) -> np.ndarray:
    """A policy's action probabilities (a row, or rows; 0 outside the mask) with every action of
    probability below ``threshold`` dropped and the rest renormalised, each row's most probable
    action kept whatever its probability (DeepNash's post-processing of a policy)."""
    p = np.asarray(probs, dtype=np.float64)
    keep = p >= threshold
    np.put_along_axis(keep, np.argmax(p, axis=-1)[..., None], True, axis=-1)
    kept = np.where(keep, p, 0.0)
    out: np.ndarray = kept / kept.sum(axis=-1, keepdims=True)
    return out


def policy_action(
    probs: np.ndarray, mask: np.ndarray, deterministic: bool, threshold: float, rng: np.random.Generator
) -> int:
    """One action of a policy's probabilities ``probs`` (0 outside ``mask``): the most probable legal
    one when ``deterministic``, else drawn with ``rng``, after ``thresholded`` when ``threshold``
    is above 0."""
    if deterministic:
        return int(np.argmax(np.where(np.asarray(mask).astype(bool), probs, -1.0)))
    p = thresholded(probs, threshold) if threshold > 0 else probs
    return int(rng.choice(len(p), p=p / p.sum()))


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
