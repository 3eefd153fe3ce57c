"""``CoreHeuristicAgent``: ``baseline.heuristic.HeuristicAgent`` played by the C++ core.

It chooses the same actions as the Python agent from the same seed: the evaluation and the
look-ahead are the same code in C++ (``core/src/heuristic.cpp``), and the tie-breaking noise is
drawn from the agent's own numpy generator (``self.rng``, ``np.random.default_rng(seed)``), which
the C++ player draws from directly through numpy's C interface (``BitGenerator.capsule``). It reads
a ``CoreState`` (``act(obs, mask, state)``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from island_fortress_env.core.state import CoreState, _core

__all__ = ["CoreHeuristicAgent"]


class CoreHeuristicAgent:
    """The heuristic player (see ``baseline.heuristic``) on core states; same seed, same choices."""

    def __init__(self, seed: int | None = None, name: str = "heuristic") -> None:
        self.name = name
        self.rng = np.random.default_rng(seed)  # breaks ties, as HeuristicAgent.rng does
        self._h = _core.Heuristic(0, 0, 1, 0)  # its own generator is never drawn from here

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: Any, action_mask: Any, state: Any = None) -> int:
        if not isinstance(state, CoreState):
            raise ValueError(
                "CoreHeuristicAgent needs the core state: act(observation, action_mask, core_state)"
            )
        if state.is_terminal():
            raise ValueError("CoreHeuristicAgent.act: the game is over")
        return self.act_with(self.rng, state)

    def act_with(self, generator: np.random.Generator, state: CoreState) -> int:
        """The heuristic's action at ``state`` (not over) with ``generator`` breaking the ties: it
        draws what the Python agent would draw from it (``HeuristicAgent`` plays a core state this
        way)."""
        bit_generator = generator.bit_generator
        with bit_generator.lock:  # numpy's own rule for drawing from a bit generator
            return int(self._h.act_numpy(state._s, bit_generator.capsule))
