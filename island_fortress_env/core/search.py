"""``BatchedSearch``: the core's batched information-set search (``core/src/search.h``), driven
by a network the caller brings.

One tree per game, every tree's simulations advanced in lockstep: each step walks every tree to
a new leaf in C++ (on ``threads`` threads, the GIL released), writes the leaves' observation and
mask rows into one array (one row per seat of each leaf: a network's values are each seat's own
expected return, dense rewards included, so they need not sum to zero), and values them all with
**one** call of
``evaluate(observations, masks) -> (logits, values)``, the shape of DeepMind's ``mctx`` (its
``recurrent_fn``) and pgx's AlphaZero. ``logits`` may be log-probabilities (the priors are a
softmax over each leaf's legal actions); ``values[r]`` is row ``r``'s value for its own seat.

What the trees do (``core/src/search.h``): a determinisation of the root per simulation, drawn by
the core's ``redeal_unseen`` (the search reads only what its seat can see); PUCT from the player to
move's point of view, the move played the root's most visited action. With ``simultaneous_bids`` the
sealed petition bids are searched as the simultaneous decision they are (each bidder's node keyed by
what it knows, regret matching+ with exploration from the policy's prior, the searching seat's bid
drawn from its node's average strategy among the bids of at least ``bid_threshold`` of it; a search
at a bid after other seats sealed theirs starts at the beginning of that round's bidding); it is off
by default, as at the budgets a decision gets it still plays weaker than PUCT (docs/STRENGTH.md).
``core._core.sealed_self_play`` plays the same rule on a matrix game. With ``gumbel`` the root picks
by Gumbel root selection instead (Danihelka et al., ICLR 2022, as DeepMind's ``mctx`` plays it):
``considered`` actions drawn by Gumbel-top-k over the priors (the noise scaled by ``gumbel_scale``:
0 takes the policy's top actions), the simulations shared among them by sequential halving, the move
the halving's survivor and the policy the root's improved policy, softmax(logits + sigma(completed
Q)); the other nodes pick the action that most lags that improved policy in visits. With
``exact_bids`` a two-player sealed bid is not searched as a tree: ``core.search_bids.ExactBids``
solves the round's bidding as the matrix game it is (every joint bid valued on redeals of the seat's
view, one network call)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from island_fortress_env.core.search_bids import ExactBids, is_exact_root
from island_fortress_env.core.state import CoreState, _core
from island_fortress_env.engine import actions as A

C_PUCT = 1.5  # PUCT's exploration weight
EXPLORATION = 0.1  # the share of a bidder's strategy spread evenly over its bids
BID_THRESHOLD = 0.05  # the searching seat's bid is drawn among the bids of at least this share
CONSIDERED = 16  # Gumbel root selection: the root actions sampled for the sequential halving

Evaluate = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class SearchResult:
    """Each game's move (``actions[i]``) and the search's policy at its root (``policy[i]``:
    visit shares, or the bid's average strategy; zeros outside the legal actions)."""

    actions: np.ndarray
    policy: np.ndarray


class BatchedSearch:
    """``simulations`` simulations a decision for a batch of core states (module doc)."""

    def __init__(
        self,
        evaluate: Evaluate,
        simulations: int,
        threads: int = 1,
        c_puct: float = C_PUCT,
        exploration: float = EXPLORATION,
        bid_threshold: float = BID_THRESHOLD,
        simultaneous_bids: bool = False,
        gumbel: bool = False,
        considered: int = CONSIDERED,
        exact_bids: bool = False,
        gumbel_scale: float = 1.0,
    ) -> None:
        if _core is None:
            raise RuntimeError("the batched search runs in the C++ core, which is not built")
        if not isinstance(simulations, int) or simulations < 1:
            raise ValueError(f"a search needs at least 1 simulation, not {simulations!r}")
        self.evaluate = evaluate
        self.simulations = simulations
        if gumbel and (not isinstance(considered, int) or considered < 1):
            raise ValueError(f"Gumbel root selection considers at least 1 action, not {considered!r}")
        sealed = (c_puct, exploration, bid_threshold, bool(simultaneous_bids))
        self._search = _core.Search(threads, *sealed, bool(gumbel), int(considered), float(gumbel_scale))
        self._obs = np.zeros((0, A.NUM_ACTIONS), dtype=np.float32)
        self._mask = np.zeros((0, A.NUM_ACTIONS), dtype=np.uint8)
        self.exact = ExactBids(evaluate, threshold=bid_threshold) if exact_bids else None
        self.rows = 0  # rows valued by the last run (every step's, summed)
        self.steps = 0  # network calls made by the last run

    def run(self, states: Sequence[CoreState], seeds: Sequence[int] | np.ndarray) -> SearchResult:
        """Search each state for its seat to move, tree ``i`` drawing from ``seeds[i]``."""
        roots = [_raw(state) for state in states]
        seeds_ = np.ascontiguousarray(seeds, dtype=np.uint64)
        if seeds_.shape != (len(roots),):
            raise ValueError(f"one seed per state: {len(roots)} states, seeds of shape {seeds_.shape}")
        exact = [k for k, state in enumerate(states) if self.exact is not None and is_exact_root(state)]
        if not exact:
            return self._search_trees(roots, seeds_)
        assert self.exact is not None
        actions = np.zeros(len(roots), dtype=np.int64)
        policy = np.zeros((len(roots), A.NUM_ACTIONS), dtype=np.float32)
        rest = np.setdiff1d(np.arange(len(roots)), exact)
        tree_rows = tree_steps = 0
        if len(rest):
            trees = self._search_trees([roots[k] for k in rest], seeds_[rest])
            actions[rest], policy[rest] = trees.actions, trees.policy
            tree_rows, tree_steps = self.rows, self.steps
        actions[exact], policy[exact] = self.exact.run([states[k] for k in exact], seeds_[exact].tolist())
        self.rows, self.steps = tree_rows + self.exact.rows, tree_steps + 1
        return SearchResult(actions, policy)

    def _search_trees(self, roots: list[Any], seeds_: np.ndarray) -> SearchResult:
        """The trees' moves and policies (module doc)."""
        search = self._search
        search.begin(roots, seeds_, self.simulations)
        rows = search.max_rows
        if self._obs.shape[0] != rows:
            self._obs = np.zeros((rows, _core.TABLES["OBS_SIZE"]), dtype=np.float32)
            self._mask = np.zeros((rows, A.NUM_ACTIONS), dtype=np.uint8)
        starts = np.zeros(len(roots) + 1, dtype=np.int32)
        self.rows = self.steps = 0
        while (written := search.leaves(self._obs, self._mask, starts)) >= 0:
            if not written:
                continue
            logits, values = self.evaluate(self._obs[:written], self._mask[:written].view(np.bool_))
            search.expand(
                np.ascontiguousarray(logits, dtype=np.float32),
                np.ascontiguousarray(values, dtype=np.float32),
                written,
            )
            self.rows += written
            self.steps += 1
        actions = np.zeros(len(roots), dtype=np.int64)
        policy = np.zeros((len(roots), A.NUM_ACTIONS), dtype=np.float32)
        search.result(actions, policy)
        return SearchResult(actions, policy)


def _raw(state: Any) -> Any:
    if not isinstance(state, CoreState):
        raise TypeError(f"the batched search searches core states, not {type(state).__name__}")
    if state.is_terminal():
        raise ValueError("the batched search was given a finished game")
    return state._s


__all__ = ["BID_THRESHOLD", "C_PUCT", "EXPLORATION", "BatchedSearch", "Evaluate", "SearchResult"]
