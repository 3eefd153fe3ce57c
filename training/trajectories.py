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
        """The parts one after the other (a single part as it is: no copy)."""
        if len(parts) == 1:
            return parts[0]
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
    """The trajectories of every learning seat, each seat a small non-negative integer id (a
    collector's: its slot in the batch times the most players a table seats, plus the seat).

    The decisions are rows of preallocated arrays (``_Rows``) in the order they were made, a
    batch of decisions written as one slice (``act_many``); each seat keeps the row of its latest
    decision (``_pending``, by seat id), and each row the row of its seat's next one.

    ``act_many`` records decisions (and closes each seat's previous one, bootstrapped with the new
    decision's value); ``reward_many`` adds to the seats' latest decisions (a reward before a seat's
    first decision has no decision to go to and is dropped); ``end_many`` closes the seats' last
    decisions as terminal. ``take`` hands out every closed decision with its GAE advantage. Every
    call is a few array operations, whatever the number of seats.
    """

    def __init__(self, capacity: int = 4096) -> None:
        self._pending = np.full(64, NO_ROW, np.int64)  # seat id -> the row of its open decision
        self._rows = _Rows.empty(max(1, capacity))
        self._size = 0
        self.num_finished = 0

    def has_pending(self, seat: int) -> bool:
        """Whether the seat has a decision still open (its rewards go there)."""
        return seat < len(self._pending) and bool(self._pending[seat] != NO_ROW)

    def _open_rows(self, seats: np.ndarray) -> np.ndarray:
        """The rows of ``seats``' open decisions (``NO_ROW`` where a seat has none); ``seats`` an
        int64 array (the seat table grows to hold them)."""
        if seats.size and int(seats.max()) >= len(self._pending):
            grown = np.full(2 * int(seats.max()) + 2, NO_ROW, np.int64)
            grown[: len(self._pending)] = self._pending
            self._pending = grown
        return self._pending[seats]

    def act(
        self, seat: int, obs: np.ndarray, mask: np.ndarray, action: int, logprob: float, value: float
    ) -> None:
        self.act_many(
            np.array([seat]),
            obs[None],
            mask[None],
            np.array([action]),
            np.array([logprob]),
            np.array([value]),
        )

    def act_many(
        self,
        seats: np.ndarray,
        obs: np.ndarray,
        mask: np.ndarray,
        actions: np.ndarray,
        logprobs: np.ndarray,
        values: np.ndarray,
    ) -> None:
        """A decision of each of ``seats`` (distinct seat ids; row i: seat ``seats[i]``)."""
        first = self._size
        end = first + len(seats)
        if end > len(self._rows):
            self._rows = self._rows.grown(2 * end, first)
        r, rows = self._rows, slice(first, end)
        r.obs[rows], r.mask[rows], r.action[rows] = obs, mask, actions
        r.logprob[rows], r.value[rows] = logprobs, values
        r.reward[rows], r.done[rows], r.next[rows] = 0.0, False, NO_ROW
        self._size = end
        seats, made = np.asarray(seats, np.int64), np.arange(first, end)
        previous = self._open_rows(seats)
        closing = previous != NO_ROW  # those decisions close, bootstrapped with the new values
        closed = previous[closing]
        r.next[closed] = made[closing]
        r.next_value[closed] = r.value[rows][closing]
        self.num_finished += int(closing.sum())
        self._pending[seats] = made

    def reward(self, seat: int, reward: float) -> None:
        self.reward_many(np.array([seat]), np.array([reward], np.float64))

    def reward_many(self, seats: np.ndarray, rewards: np.ndarray) -> None:
        """Adds ``rewards[i]`` to the open decision of ``seats[i]`` (distinct seat ids)."""
        rows = self._open_rows(np.asarray(seats, np.int64))
        held = rows != NO_ROW
        self._rows.reward[rows[held]] += rewards[held]

    def end(self, seat: int) -> None:
        self.end_many(np.array([seat]))

    def end_many(self, seats: np.ndarray) -> None:
        """Closes the open decisions of ``seats`` (distinct seat ids) as their games' last."""
        seats = np.asarray(seats, np.int64)
        rows = self._open_rows(seats)
        ending = rows[rows != NO_ROW]
        self._rows.done[ending] = True
        self._rows.next_value[ending] = 0.0
        self.num_finished += len(ending)
        self._pending[seats] = NO_ROW

    def take(self, gamma: float, gae_lambda: float) -> Rollout:
        """Every closed decision (in the order they were made) with its advantage and return; they
        are forgotten here, the open decisions stay."""
        n, r = self._size, self._rows
        waiting = np.flatnonzero(self._pending != NO_ROW)  # the seats with an open decision
        open_rows = np.sort(self._pending[waiting])
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
        self._pending[waiting] = np.searchsorted(open_rows, self._pending[waiting])
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
