"""The exact route for two players' sealed bids: the petition solved as the matrix game it is.

At two players a round's bidding (docs/RULES.md C13, E3) is a simultaneous move: each seat seals
a bid from 0 to its Jade without seeing the other's. ``ExactBids`` plays it as such instead of
searching it as a tree: from the round's first bid (the bids already sealed taken back, as no seat
sees them), on ``determinisations`` redeals of what the searching seat cannot see, it enumerates
every joint bid, plays on to the next real decision, values every resulting position with **one**
network call (both seats' rows: the first bidder's payoff is its value less the other's, a
network's values being each seat's own expected return, dense rewards included, that need not sum
to zero; a finished game's returns likewise), averages the payoff matrix over the redeals and
solves it (``solve_zero_sum``: regret
matching+ with full information and linear averaging, the equilibrium of a zero-sum matrix game
to within ``1 / sqrt(iterations)`` or so). The bid played is drawn from the searching seat's
equilibrium strategy among the bids of at least ``threshold`` of it; the policy is that strategy.

Only the searching seat's information is read: every matrix comes from redeals of its view, and
the other seat's sealed bid is a strategy to solve for, never a guess. Rounds whose bids are
entered as digits (more than ``MAX_BID`` Jade held, unlimited components only) are not exact
roots (``is_exact_root``): the tree searches them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from island_fortress_env.core.state import CoreState, _core
from island_fortress_env.engine import actions as A
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.tables import MAX_BID

DETERMINISATIONS = 4  # redeals of what the searching seat cannot see, each a payoff matrix
SOLVE_ITERATIONS = 2000  # regret matching+ iterations of the matrix solve
THRESHOLD = 0.05  # the bid is drawn among the bids of at least this equilibrium share
_PETITION_BID = int(Decision.PETITION_BID)
SEED_WORDS = DETERMINISATIONS + 1  # a redeal seed each, then the bid's draw


@dataclass(frozen=True)
class _Plan:
    """One root's matrix to value: the searching seat, the first bidder and both bidders' bids,
    the positions after every joint bid on every redeal (redeal, first bid, second bid, in that
    order) and the seed of the bid's draw."""

    seat: int
    first_seat: int
    first: list[int]
    second: list[int]
    worlds: list[Any]
    draw: int


def is_exact_root(state: CoreState) -> bool:
    """Whether ``state`` is a two-player sealed bid of one decision a seat (``ExactBids``' roots)."""
    s = state._s
    return (
        s.n == 2
        and s.decision == _PETITION_BID
        and s.bid_digits_left == 0
        and max(s.jade) <= MAX_BID
        and len(s.legal_actions()) > 1
    )


def solve_zero_sum(payoff: np.ndarray, iterations: int = SOLVE_ITERATIONS) -> tuple[np.ndarray, np.ndarray]:
    """The row and column strategies of the zero-sum matrix game ``payoff`` (the row player's):
    regret matching+ for both, alternating, with linear averaging (Tammelin 2014)."""
    rows, cols = payoff.shape
    regret_x, regret_y = np.zeros(rows), np.zeros(cols)
    mean_x, mean_y = np.zeros(rows), np.zeros(cols)
    x, y = np.full(rows, 1.0 / rows), np.full(cols, 1.0 / cols)
    for t in range(1, iterations + 1):
        gains_x = payoff @ y
        regret_x = np.maximum(regret_x + gains_x - x @ gains_x, 0.0)
        x = regret_x / regret_x.sum() if regret_x.sum() > 0 else np.full(rows, 1.0 / rows)
        gains_y = -(x @ payoff)
        regret_y = np.maximum(regret_y + gains_y - gains_y @ y, 0.0)
        y = regret_y / regret_y.sum() if regret_y.sum() > 0 else np.full(cols, 1.0 / cols)
        mean_x += t * x
        mean_y += t * y
    return mean_x / mean_x.sum(), mean_y / mean_y.sum()


class ExactBids:
    """The exact route over ``evaluate(observations, masks) -> (logits, values)`` (module doc)."""

    def __init__(
        self,
        evaluate: Any,
        determinisations: int = DETERMINISATIONS,
        threshold: float = THRESHOLD,
        iterations: int = SOLVE_ITERATIONS,
    ) -> None:
        if not isinstance(determinisations, int) or determinisations < 1:
            raise ValueError(f"the exact bids need at least 1 determinisation, not {determinisations!r}")
        self.evaluate = evaluate
        self.determinisations = determinisations
        self.threshold = threshold
        self.iterations = iterations
        self.rows = 0  # network rows valued by the last run

    def run(self, states: Sequence[CoreState], seeds: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Each state's bid and its policy (the searching seat's equilibrium strategy); state ``i``
        draws its redeals and its bid from ``seeds[i]``."""
        plans = [self._plan(state, int(seed)) for state, seed in zip(states, seeds, strict=True)]
        positions = [world for plan in plans for world in plan.worlds]
        values = self._values(positions)
        actions = np.zeros(len(states), dtype=np.int64)
        policy = np.zeros((len(states), A.NUM_ACTIONS), dtype=np.float32)
        at = 0
        for k, plan in enumerate(plans):
            count = len(plan.worlds)
            shape = (self.determinisations, len(plan.first), len(plan.second))
            seat0 = values[at : at + count].reshape(shape).mean(axis=0)
            matrix = seat0 if plan.first_seat == 0 else -seat0  # the first bidder's payoffs
            at += count
            row, col = solve_zero_sum(matrix, self.iterations)
            mine, bids = (row, plan.first) if plan.seat == plan.first_seat else (col, plan.second)
            policy[k, bids] = mine
            actions[k] = self._draw(bids, mine, plan.draw)
        return actions, policy

    def _plan(self, state: CoreState, seed: int) -> _Plan:
        """The positions after every joint bid on every redeal, and who bids first."""
        if not is_exact_root(state):
            raise ValueError("the exact bids take two-player sealed bids of one decision a seat")
        words = np.random.SeedSequence(seed).generate_state(SEED_WORDS, dtype=np.uint64)
        seat = state.current_player()
        start = state._s.bidding_start() if state._s.order_pos > 0 else state._s.clone()
        first_seat = start.current_player()
        first = list(start.legal_actions())
        second: list[int] = []
        worlds = []
        for k in range(self.determinisations):
            world = start.redeal_unseen(seat, int(words[k]))
            for a in first:
                after = world.clone()
                after.apply(a)
                second = list(after.legal_actions())
                for b in second:
                    end = after.clone()
                    end.apply(b)
                    while not end.is_terminal() and len(end.legal_actions()) == 1:
                        end.apply(end.legal_actions()[0])
                    worlds.append(end)
        return _Plan(seat, first_seat, first, second, worlds, int(words[-1]))

    def _values(self, positions: list[Any]) -> np.ndarray:
        """Each position's payoff to seat 0, its value less seat 1's: their returns where the game
        is over, else from one network call over both seats' rows of the others."""
        values = np.zeros(len(positions), dtype=np.float64)
        live = [k for k, world in enumerate(positions) if not world.is_terminal()]
        self.rows = 2 * len(live)
        for k, world in enumerate(positions):
            if world.is_terminal():
                returns = world.returns()
                values[k] = returns[0] - returns[1]
        if live:
            obs = np.zeros((2 * len(live), _core.TABLES["OBS_SIZE"]), dtype=np.float32)
            mask = np.ones((2 * len(live), A.NUM_ACTIONS), dtype=np.uint8)
            for r, k in enumerate(live):
                world = positions[k]
                for seat in (0, 1):
                    world.encode(seat, obs[2 * r + seat])
                world.action_mask(mask[2 * r + world.current_player()])
            _, out = self.evaluate(obs, mask.view(np.bool_))
            pairs = np.asarray(out, dtype=np.float64).reshape(len(live), 2)
            values[live] = pairs[:, 0] - pairs[:, 1]
        return values

    def _draw(self, bids: list[int], strategy: np.ndarray, seed: int) -> int:
        """A bid drawn from ``strategy`` among the bids of at least ``threshold`` of it."""
        floor = min(self.threshold, float(strategy.max()))
        kept = np.where(strategy >= floor, strategy, 0.0)
        chooser = np.random.default_rng(seed)
        return int(bids[int(chooser.choice(len(bids), p=kept / kept.sum()))])
