"""The one-game Python search tree, the readable reference of ``players.search`` for states of
the Python engine (which have no C++ twin for the core's batched search to walk).

The tree is one tree over the searching seat's information set (single-observer information-set
MCTS): every simulation starts from a fresh *determinisation*, a copy of the position in which
everything the seat cannot see (the other hands, the deck order, sealed bids, the generator) is
drawn again by the engine's own ``visibility.redeal_unseen``, and walks the shared tree along the
actions legal in that copy. So the player never reads what its seat may not see: its choice
depends on its own view and its seed only.

At each node the player to move picks by PUCT, from its own point of view (every node holds one
value per seat, so 3 and 4 players search as well as 2): ``Q + c * P * sqrt(N) / (1 + n)``,
``P`` the policy's prior for the action, ``Q`` the mean value of the action for that player.
A new node is valued by the network's value head, once per seat from that seat's observation;
a finished game by its returns. The move played is the root's most visited action (ties to the
higher prior). Unlike the core's search, the petition's bids are searched as ordinary decisions
(the bids sealed before the searcher's drawn uniformly, the most visited bid played).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from island_fortress_env.core.search import C_PUCT
from island_fortress_env.engine import visibility
from island_fortress_env.env.observation import ObservationEncoder, action_mask


@dataclass
class _Node:
    """One node of the tree: the statistics of the actions tried from it."""

    player: int
    priors: dict[int, float]
    visits: int = 0
    children: dict[int, _Node] = field(default_factory=dict)
    child_visits: dict[int, int] = field(default_factory=dict)
    child_value: dict[int, np.ndarray] = field(default_factory=dict)  # summed values, one per seat


class ReferenceSearchAgent:
    """Information-set MCTS in Python guided by ``evaluate(observations, masks) -> (logits,
    values)`` (``players.search.Evaluator``) (module doc)."""

    def __init__(
        self, evaluate: Any, simulations: int, seed: int | None = None, c_puct: float = C_PUCT
    ) -> None:
        self.evaluate = evaluate
        self.simulations = simulations
        self.c_puct = c_puct
        self._seed = np.random.SeedSequence(seed)
        self._encoders: dict[int, ObservationEncoder] = {}

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._seed = np.random.SeedSequence(seed)

    # ------------------------------------------------------------------ the search

    def search(self, state: Any) -> int:
        """The most visited action at the root after ``simulations`` simulations."""
        seat = state.current_player()
        seeds = self._seed.spawn(1)[0].generate_state(self.simulations, dtype=np.uint64)
        root_view = visibility.redeal_unseen(state, seat, int(seeds[0]))
        priors, _ = self._evaluate(root_view)
        root = _Node(seat, priors)
        for k in range(self.simulations):
            world = visibility.redeal_unseen(state, seat, int(seeds[k]))
            self._simulate(root, world)
        return max(root.child_visits, key=lambda a: (root.child_visits[a], root.priors.get(a, 0.0)))

    def _simulate(self, node: _Node, world: Any) -> np.ndarray:
        """One walk from ``node`` down the tree in the determinisation ``world``; returns the
        value of the walk for every seat and adds it to the nodes it passed."""
        if world.is_terminal():
            return np.asarray(world.returns(), dtype=np.float64)
        legal = world.legal_actions()
        action = self._select(node, legal)
        world.apply_action(action)
        child = node.children.get(action)
        if child is None:
            if world.is_terminal():
                value = np.asarray(world.returns(), dtype=np.float64)
            else:
                priors, value = self._evaluate(world)
                node.children[action] = _Node(world.current_player(), priors)
        else:
            value = self._simulate(child, world)
        node.visits += 1
        node.child_visits[action] = node.child_visits.get(action, 0) + 1
        node.child_value[action] = node.child_value.get(action, 0.0) + value
        return value

    def _select(self, node: _Node, legal: tuple[int, ...]) -> int:
        if len(legal) == 1:
            return legal[0]
        uniform = 1.0 / len(legal)
        total = math.sqrt(node.visits + 1)
        best, best_score = legal[0], -math.inf
        for a in legal:
            n = node.child_visits.get(a, 0)
            q = node.child_value[a][node.player] / n if n else 0.0
            score = q + self.c_puct * node.priors.get(a, uniform) * total / (1 + n)
            if score > best_score:
                best, best_score = a, score
        return best

    def _evaluate(self, world: Any) -> tuple[dict[int, float], np.ndarray]:
        """The policy's priors for the player to move and the value for every seat."""
        n = world.n
        encoder = self._encoders.get(id(world.game))
        if encoder is None:
            encoder = self._encoders[id(world.game)] = ObservationEncoder(world.game)
        mover = world.current_player()
        obs = np.stack([encoder.encode(world, p) for p in range(n)])
        mask = np.zeros((n, action_mask(world).shape[0]), dtype=bool)
        mask[mover] = action_mask(world).astype(bool)
        mask[[p for p in range(n) if p != mover]] = True  # the other seats' logits are not used
        logits, values = self.evaluate(obs, mask)
        row = np.asarray(logits[mover], dtype=np.float64)
        probs = np.exp(row - row[mask[mover]].max())
        legal = world.legal_actions()
        total = float(sum(probs[a] for a in legal))
        priors = {int(a): float(probs[a]) / total for a in legal}
        return priors, np.asarray(values, dtype=np.float64)
