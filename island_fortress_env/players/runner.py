"""One loop plays every game: ``GameRunner`` steps a batch of games (``vector.make``'s: the C++
core's, or the Python engine's where the core is not built or an agent reads the engine's state)
and asks each seat's ``SeatPolicy`` for the actions of all the games in which that seat is to
move, in one call.

Training's collectors, its greedy evaluation and demonstrations, ``evaluate``, ``tournament``,
``exploit`` and ``psro`` all play through it. What each of them brings is who sits where
(``Seating``, one per game, drawn when a slot is free; dealt, or continued from a state it
gives) and what it does with a finished game
(``Finished``: the batch's final results row, and the actions taken when asked for). The seat
policies themselves (a network, the batch's own players, single-game agents, mixtures) and
``seat_policy(spec, make_agent)`` are ``players.seat_policies``'.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from island_fortress_env.engine.results import GameResult
from island_fortress_env.engine.tables import MAX_PLAYERS

COMPACT_AT = 64  # policies held before those no game plays any more are let go


@dataclass(frozen=True)
class Games:
    """The games a policy decides for in one call: their slots in the batch and the seat to move
    in each (``slots[k]``, ``seats[k]`` are row ``k`` of the observations and masks)."""

    batch: Any
    slots: np.ndarray
    seats: np.ndarray

    def __len__(self) -> int:
        return len(self.slots)

    @property
    def which(self) -> np.ndarray:
        """The slots as a bool mask over the batch."""
        which = np.zeros(self.batch.num_games, dtype=np.bool_)
        which[self.slots] = True
        return which

    def state(self, k: int) -> Any:
        """A copy of row ``k``'s game state (for players that read it)."""
        return self.batch.state(int(self.slots[k]))


class SeatPolicy(Protocol):
    """Plays seats of many games at once (module doc)."""

    name: str

    def begin(self, slot: int, seat: int, seed: int | None) -> None:
        """A game begins in ``slot`` with this policy in ``seat``, seeded ``seed`` for it."""

    def act(self, observations: np.ndarray, masks: np.ndarray, games: Games) -> np.ndarray:
        """One legal action per row (int64)."""


@dataclass(frozen=True)
class Seating:
    """One game: its table size, the seed it is dealt from (None: the batch's own seed for the
    slot's episode), each seat's policy and that policy's seed for the game, and ``tag``, the
    caller's own (handed back when the game ends). With ``start`` (a state of the batch's
    backend, of a game under way at a table of ``players``) the game continues from a copy of it
    instead of a deal, and ``seed`` seeds the batch's own players for it (``set_state``)."""

    players: int
    seed: int | None
    policies: tuple[SeatPolicy, ...]
    seeds: tuple[int | None, ...] = ()
    tag: Any = None
    start: Any = None

    def seed_of(self, seat: int) -> int | None:
        return self.seeds[seat] if self.seeds else None


@dataclass(frozen=True)
class Finished:
    """A game that has ended in ``slot``: its seating, its record (``engine.results.GameResult``,
    from the batch's final results) and the actions taken (with ``keep_actions``)."""

    slot: int
    seating: Seating
    final: GameResult
    actions: list[int] | None


def result_at(final: Any, slot: int) -> GameResult:
    """Row ``slot`` of a batch's final results (``vector.FinalResults``) as a ``GameResult``."""
    n = int(final.players[slot])

    def seats(array: np.ndarray, kind: type) -> tuple[Any, ...]:
        return tuple(kind(v) for v in array[slot, :n].tolist())

    return GameResult(
        players=n,
        seed=int(final.seed[slot]),
        length=int(final.length[slot]),
        rounds=int(final.rounds[slot]),
        score=seats(final.score, int),
        rank=seats(final.rank, int),
        win=seats(final.win, float),
        blocks_built=seats(final.blocks_built, int),
        favors_played=seats(final.favors_played, int),
        jade_spent=seats(final.jade_spent, int),
        components=tuple(tuple(int(v) for v in row) for row in final.components[slot, :n].tolist()),
    )


@dataclass(frozen=True)
class Step:
    """One decision of every game under way (``GameRunner.step``), row ``k`` for slot
    ``slots[k]``: the seat that moved, the game's ``tag`` (its ``Seating``'s), what that seat saw
    (its observation and mask) and the action it chose; the points every seat of every slot
    scored on the step (``score_gains[slot, seat]``, the batch's: zero in idle slots; in a game
    that ended, those of its last move); then the games that ended, in slot order."""

    slots: np.ndarray
    seats: np.ndarray
    tags: tuple[Any, ...]
    observations: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    score_gains: np.ndarray
    finished: tuple[Finished, ...]


@dataclass
class _Slot:
    current: Seating | None = None  # the game being played
    following: Seating | None = None  # the game dealt next in this slot, if any
    actions: list[int] = field(default_factory=list)


class GameRunner:
    """Plays the games ``next_seating`` deals on ``batch`` (``vector.make``'s, of either backend),
    a game per slot at a time. ``next_seating(slot)`` is asked for a slot's next game when one
    begins (so that the batch deals it there as soon as the current one ends) and returns None
    when there are no more; a slot with none stays idle. ``step()`` moves every game one decision.
    """

    def __init__(
        self, batch: Any, next_seating: Callable[[int], Seating | None], keep_actions: bool = False
    ) -> None:
        self.batch = batch
        self.next_seating = next_seating
        self.keep_actions = keep_actions
        n = batch.num_games
        self.slots = [_Slot() for _ in range(n)]
        self.policies: list[SeatPolicy] = []  # the policies seated, by index
        self._index: dict[int, int] = {}  # id(policy) -> its index
        self._compact_at = COMPACT_AT
        self.seat_policy = np.full((n, MAX_PLAYERS), -1, dtype=np.int64)  # each slot's policy per seat
        self.players = np.zeros(n, dtype=np.int64)  # each slot's table size (0: idle)
        self.active = np.zeros(n, dtype=np.bool_)
        self._tags = np.full(n, None, dtype=object)  # each slot's game's tag
        for slot in range(n):
            self._deal(slot, next_seating(slot))
        batch.reset()
        for slot in range(n):
            self._begin(slot)

    def _deal(self, slot: int, seating: Seating | None) -> None:
        """``seating`` is the slot's next game: the batch deals it when the slot's game ends."""
        self.slots[slot].following = seating
        if seating is not None and seating.start is None:  # a start state is set when it begins
            self.batch.set_players(slot, seating.players)
            if seating.seed is not None:
                self.batch.set_seed(slot, seating.seed)

    def _begin(self, slot: int) -> None:
        """The slot's following game has just been dealt: seat it, and ask for the next one."""
        state = self.slots[slot]
        seating, state.current, state.actions = state.following, state.following, []
        self.active[slot] = seating is not None
        self.seat_policy[slot] = -1  # a smaller table than the slot's last leaves its seats empty
        self.players[slot] = 0 if seating is None else seating.players
        self._tags[slot] = None if seating is None else seating.tag
        if seating is None:
            return
        if seating.start is not None:
            if seating.start.n != seating.players:
                raise ValueError(
                    f"a seating of {seating.players} players starts from a {seating.start.n}-player state"
                )
            seed = self.batch.game_seed(slot) if seating.seed is None else seating.seed
            self.batch.set_state(slot, seating.start, seed)
        for seat, policy in enumerate(seating.policies):
            index = self._index.get(id(policy))
            if index is None:
                index = self._index[id(policy)] = len(self.policies)
                self.policies.append(policy)
            self.seat_policy[slot, seat] = index
            policy.begin(slot, seat, seating.seed_of(seat))
        if len(self.policies) > self._compact_at:
            self._compact()
        self._deal(slot, self.next_seating(slot))

    def _compact(self) -> None:
        """Forget the policies that no game under way is seated with any more (a league's retired
        snapshots), so that a long run holds only the ones in play."""
        used = sorted(set(self.seat_policy[self.active].ravel().tolist()) - {-1})
        remap = np.full(len(self.policies) + 1, -1, dtype=np.int64)  # remap[-1]: an empty seat
        remap[used] = np.arange(len(used))
        self.seat_policy = remap[self.seat_policy]
        self.policies = [self.policies[old] for old in used]
        self._index = {id(policy): i for i, policy in enumerate(self.policies)}
        self._compact_at = max(COMPACT_AT, 2 * len(self.policies))

    def seated(self, policy: SeatPolicy) -> np.ndarray:
        """Where ``policy`` sits in the games under way: bool[num_games, MAX_PLAYERS], by slot and
        seat."""
        index = self._index.get(id(policy))
        if index is None:
            return np.zeros(self.seat_policy.shape, dtype=np.bool_)
        return self.seat_policy == index  # an idle slot's row is empty (``_begin``)

    def current(self, slot: int) -> Seating | None:
        """The game being played in ``slot`` (None: the slot is idle)."""
        return self.slots[slot].current

    def dealt(self) -> list[Seating]:
        """Every game under way and every game dealt to follow one, slot by slot."""
        return [s for slot in self.slots for s in (slot.current, slot.following) if s is not None]

    @property
    def playing(self) -> bool:
        """Whether any game is still under way."""
        return bool(self.active.any())

    def step(self) -> Step:
        """Every game under way moves one decision: the ``Step`` record of what happened (the
        games that ended are in it, in slot order; their slots have begun their next games)."""
        batch = self.batch
        active = np.flatnonzero(self.active)
        movers = batch.player[active]
        tags = tuple(self._tags[active].tolist())
        observations, masks = batch.obs[active], batch.mask[active]
        owner = self.seat_policy[active, movers]
        chosen = np.full(len(active), -1, dtype=np.int64)
        owners = np.unique(owner).tolist()
        for index in owners:
            rows = owner == index if len(owners) > 1 else slice(None)
            games = Games(batch, active[rows], movers[rows])
            chosen[rows] = self.policies[index].act(observations[rows], masks[rows], games)
        actions = np.full(batch.num_games, -1, dtype=np.int64)
        actions[active] = chosen
        batch.step(actions, self.active)
        if self.keep_actions:
            for slot, action in zip(active.tolist(), chosen.tolist(), strict=True):
                self.slots[slot].actions.append(action)
        gains = batch.score_gains()
        finished = []
        for slot in np.flatnonzero(batch.done).tolist():
            state = self.slots[slot]
            assert state.current is not None
            kept = state.actions if self.keep_actions else None
            finished.append(Finished(slot, state.current, result_at(batch.final, slot), kept))
            self._begin(slot)
        return Step(active, movers, tags, observations, masks, chosen, gains, tuple(finished))

    def run(self, on_finished: Callable[[Finished], None] | None = None) -> list[Finished]:
        """Plays until no game is left; returns every finished game, in the order they ended
        (``on_finished`` sees each as it ends)."""
        out: list[Finished] = []
        while self.playing:
            done = self.step().finished
            if on_finished is not None:
                for game in done:
                    on_finished(game)
            out.extend(done)
        return out


def play_seatings(
    batch: Any,
    seatings: Sequence[Seating],
    keep_actions: bool = False,
    on_finished: Callable[[Finished], None] | None = None,
) -> list[Finished]:
    """Plays ``seatings`` on ``batch`` (as many at once as it has slots); the finished games in
    the order of ``seatings`` (``on_finished`` sees each as it ends)."""
    queue = iter(range(len(seatings)))

    def next_seating(_slot: int) -> Seating | None:
        number = next(queue, None)
        return None if number is None else seatings[number]

    order = {id(seating): k for k, seating in enumerate(seatings)}
    finished = GameRunner(batch, next_seating, keep_actions).run(on_finished)
    return sorted(finished, key=lambda game: order[id(game.seating)])
