"""``CoreHeuristicAgent``: ``agents.heuristic.HeuristicAgent`` played by the C++ core.

It chooses the same actions as the Python agent from the same seed: the evaluation and the
look-ahead are the same code in C++ (``core/src/heuristic.cpp``), and the tie-breaking noise is
drawn from the same numpy generator (PCG64 seeded by ``np.random.default_rng(seed)``, whose state
is handed to the core and read back). It reads a ``CoreState`` (``act(obs, mask, state)``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from island_fortress_env.core.state import CoreState, _core

__all__ = ["CoreHeuristicAgent"]

_MASK64 = (1 << 64) - 1


def _words(generator: np.random.Generator) -> tuple[int, int, int, int]:
    bit_generator = generator.bit_generator
    if not isinstance(bit_generator, np.random.PCG64):
        raise TypeError("the core's heuristic draws from numpy's PCG64 generator")
    state = bit_generator.state["state"]
    s, inc = state["state"], state["inc"]
    return s & _MASK64, s >> 64, inc & _MASK64, inc >> 64


class CoreHeuristicAgent:
    """The heuristic player (see ``agents.heuristic``) on core states; same seed, same choices."""

    def __init__(self, seed: int | None = None, name: str = "heuristic") -> None:
        self.name = name
        self._h = _core.Heuristic(*_words(np.random.default_rng(seed)))

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._h.rng_words = _words(np.random.default_rng(seed))

    @property
    def rng(self) -> np.random.Generator:
        """A numpy generator in the state the agent's own generator is in now."""
        s_lo, s_hi, i_lo, i_hi = self._h.rng_words
        bit_generator = np.random.PCG64()
        bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": s_lo | s_hi << 64, "inc": i_lo | i_hi << 64},
            "has_uint32": 0,
            "uinteger": 0,
        }
        return np.random.Generator(bit_generator)

    def act_with(self, generator: np.random.Generator, state: CoreState) -> int:
        """The heuristic's action at ``state`` with ``generator`` (numpy's PCG64) breaking the ties:
        the generator is left where the Python agent would leave it (``HeuristicAgent`` plays a
        core state this way)."""
        bit_generator = generator.bit_generator
        before = bit_generator.state
        self._h.rng_words = _words(generator)
        action = self._h.act(state._s)
        s_lo, s_hi, i_lo, i_hi = self._h.rng_words
        # The core draws 64-bit words only: numpy's buffered 32-bit half stays as it was.
        bit_generator.state = {**before, "state": {"state": s_lo | s_hi << 64, "inc": i_lo | i_hi << 64}}
        return int(action)

    def act(self, observation: Any, action_mask: Any, state: Any = None) -> int:
        if not isinstance(state, CoreState):
            raise ValueError(
                "CoreHeuristicAgent needs the core state: act(observation, action_mask, core_state)"
            )
        if state.is_terminal():
            raise ValueError("CoreHeuristicAgent.act: the game is over")
        return self._h.act(state._s)
