"""The native trainer's storage (``ppo.py``'s first part): each learning seat's trajectory and
the rollout PPO updates on.

Each learning seat of each game is its own trajectory: a decision's reward is everything that seat
receives from that decision until the seat decides again (its own score changes on other seats'
moves included), the zero-sum win/loss is added to its last decision, and the game's end closes
every seat's trajectory whoever made the last move. GAE runs along each seat's trajectory
(``gae_rows``); a trajectory cut by the end of a rollout is bootstrapped with the value of its next
decision, which joins the next rollout.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.env.observation import OBS_SIZE


@dataclass
class Rollout:
    """Closed decisions of learning seats with their advantages: the data of one PPO update."""

    obs: np.ndarray  # float32 (n, OBS_SIZE)
    masks: np.ndarray  # bool (n, NUM_ACTIONS): the legal actions
    actions: np.ndarray  # int64 (n,)
    logprobs: np.ndarray  # float32: of each action, under the policy that acted
    values: np.ndarray  # float32: the value estimates when acting
    advantages: np.ndarray  # float32: GAE
    returns: np.ndarray  # float32: advantages + values, the value targets

    def __len__(self) -> int:
        return len(self.actions)

    @classmethod
    def concatenate(cls, parts: Sequence[Rollout]) -> Rollout:
        return cls(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(cls)))


NO_ROW = -1


@dataclass
class _Rows:
    """The columns of ``SeatTrajectories``' decisions, one row per decision."""

    obs: np.ndarray  # float32 (capacity, OBS_SIZE)
    mask: np.ndarray  # bool (capacity, NUM_ACTIONS)
    action: np.ndarray  # int64
    logprob: np.ndarray  # float32
    value: np.ndarray  # float32
    reward: np.ndarray  # float64: what the seat has received since this decision
    next_value: np.ndarray  # float64: the value of the seat's next decision (0 when done)
    done: np.ndarray  # bool: the seat's last decision of its game
    next: np.ndarray  # int64: the row of the seat's next decision, NO_ROW while there is none

    @classmethod
    def empty(cls, capacity: int) -> _Rows:
        return cls(
            obs=np.zeros((capacity, OBS_SIZE), np.float32),
            mask=np.zeros((capacity, NUM_ACTIONS), bool),
            action=np.zeros(capacity, np.int64),
            logprob=np.zeros(capacity, np.float32),
            value=np.zeros(capacity, np.float32),
            reward=np.zeros(capacity, np.float64),
            next_value=np.zeros(capacity, np.float64),
            done=np.zeros(capacity, bool),
            next=np.full(capacity, NO_ROW, np.int64),
        )

    def __len__(self) -> int:
        return len(self.action)

    def columns(self) -> list[np.ndarray]:
        return [getattr(self, f.name) for f in fields(self)]

    def grown(self, capacity: int, used: int) -> _Rows:
        """Room for ``capacity`` rows, the first ``used`` kept."""
        bigger = _Rows.empty(capacity)
        for new, old in zip(bigger.columns(), self.columns(), strict=True):
            new[:used] = old[:used]
        return bigger


class SeatTrajectories:
    """The trajectories of every learning seat, keyed by any hashable (e.g. (rank, episode, seat)).

    The decisions are rows of preallocated arrays (``_Rows``) in the order they were made, a
    batch of decisions written as one slice (``act_many``); each seat keeps the row of its latest
    decision, and each row the row of its seat's next one.

    ``act`` records a decision (and closes the seat's previous one, bootstrapped with this
    decision's value); ``reward`` adds to the seat's latest decision (a reward before the seat's
    first decision has no decision to go to and is dropped); ``end`` closes the seat's last
    decision as terminal. ``take`` hands out every closed decision with its GAE advantage.
    """

    def __init__(self, capacity: int = 4096) -> None:
        self._pending: dict[Any, int] = {}  # seat -> the row of its latest, still open, decision
        self._rows = _Rows.empty(max(1, capacity))
        self._size = 0
        self.num_finished = 0

    def has_pending(self, key: Any) -> bool:
        """Whether ``key``'s seat has a decision still open (its rewards go there)."""
        return key in self._pending

    def act(
        self, key: Any, obs: np.ndarray, mask: np.ndarray, action: int, logprob: float, value: float
    ) -> None:
        self.act_many(
            [key], obs[None], mask[None], np.array([action]), np.array([logprob]), np.array([value])
        )

    def act_many(
        self,
        keys: Sequence[Any],
        obs: np.ndarray,
        mask: np.ndarray,
        actions: np.ndarray,
        logprobs: np.ndarray,
        values: np.ndarray,
    ) -> None:
        """``act`` for a batch of decisions of distinct seats (row i: seat ``keys[i]``)."""
        first = self._size
        end = first + len(keys)
        if end > len(self._rows):
            self._rows = self._rows.grown(2 * end, first)
        r, rows = self._rows, slice(first, end)
        r.obs[rows], r.mask[rows], r.action[rows] = obs, mask, actions
        r.logprob[rows], r.value[rows] = logprobs, values
        r.reward[rows], r.done[rows], r.next[rows] = 0.0, False, NO_ROW
        self._size = end
        pending = self._pending
        for row, (key, value) in enumerate(zip(keys, values.tolist(), strict=True), start=first):
            previous = pending.get(key)
            if previous is not None:  # closed, bootstrapped with this decision's value
                r.next[previous] = row
                r.next_value[previous] = value
                self.num_finished += 1
            pending[key] = row

    def reward(self, key: Any, reward: float) -> None:
        row = self._pending.get(key)
        if row is not None:
            self._rows.reward[row] += reward

    def end(self, key: Any) -> None:
        row = self._pending.pop(key, None)
        if row is not None:
            self._rows.done[row] = True
            self._rows.next_value[row] = 0.0
            self.num_finished += 1

    def take(self, gamma: float, gae_lambda: float) -> Rollout:
        """Every closed decision (in the order they were made) with its advantage and return; they
        are forgotten here, the open decisions stay."""
        n, r = self._size, self._rows
        open_rows = np.array(sorted(self._pending.values()), np.int64)
        closed = np.ones(n, bool)
        closed[open_rows] = False
        advantages = gae_rows(
            r.reward[:n], r.value[:n], r.next_value[:n], r.done[:n], r.next[:n], closed, gamma, gae_lambda
        )
        rows = np.flatnonzero(closed)
        adv = advantages[rows].astype(np.float32)
        values = r.value[rows]
        rollout = Rollout(
            obs=r.obs[rows],
            masks=r.mask[rows],
            actions=r.action[rows],
            logprobs=r.logprob[rows],
            values=values,
            advantages=adv,
            returns=(adv + values).astype(np.float32),
        )
        # The open decisions move to the front, in order (none has a successor yet).
        for column in r.columns():
            column[: len(open_rows)] = column[open_rows]
        r.next[: len(open_rows)] = NO_ROW
        moved = {old: new for new, old in enumerate(open_rows.tolist())}
        self._pending = {key: moved[row] for key, row in self._pending.items()}
        self._size = len(open_rows)
        self.num_finished = 0
        return rollout


def gae_rows(
    rewards: np.ndarray,
    values: np.ndarray,
    next_values: np.ndarray,
    done: np.ndarray,
    next_rows: np.ndarray,
    closed: np.ndarray,
    gamma: float,
    gae_lambda: float,
) -> np.ndarray:
    """Generalised advantage estimates of rows that link each decision to its seat's next one.

    Row i's TD error is ``r + gamma * V(next) * (1 - done) - V``; its advantage adds
    ``gamma * lambda`` times the next row's advantage when that row is closed too. A closed row
    whose successor is still open is cut there: its advantage is the one-step TD error,
    bootstrapped with the open decision's value (which joins the next rollout). Rows only ever
    link forward, so one pass from the last row back computes every advantage.
    """
    delta = rewards + gamma * next_values * ~done - values
    out = np.zeros(len(rewards), np.float64)
    decay = gamma * gae_lambda
    d, nxt, ok = delta.tolist(), next_rows.tolist(), closed.tolist()
    for i in range(len(d) - 1, -1, -1):
        if not ok[i]:
            continue
        j = nxt[i]
        out[i] = d[i] + (decay * out[j] if j != NO_ROW and ok[j] else 0.0)
    return out
