"""One loop plays every game: ``GameRunner`` steps a batch of games (``vector.VectorEnv``: the C++
core; ``players.engine_vector.EngineVectorEnv``: the Python engine, where the core is not built or
an agent reads the engine's state) and asks each seat's ``SeatPolicy`` for the actions of all the
games in which that seat is to move, in one call.

Training's collectors, its greedy evaluation and demonstrations, ``evaluate``, ``tournament``,
``exploit`` and ``psro`` all play through it. What each of them brings is who sits where
(``Seating``, one per game, drawn when a slot is free) and what it does with a finished game
(``Finished``: the batch's final results row, and the actions taken when asked for).

A ``SeatPolicy`` decides for many games at once:

* ``NetworkSeats``: a network, one forward pass for every seat it plays (greedy or sampled);
* ``NetworkPoolSeats``: several networks of one shape (a league's snapshots), each game's seats
  played by the one it names, one call for all of them (dense networks' weights stacked:
  ``StackedNetworks``);
* ``BatchSeats("heuristic")`` / ``BatchSeats("random")``: the batch's own players (in C++ in the
  core), each game's seeded like its deal;
* ``CheckpointSeats``: a checkpoint (or an ONNX model, ``OnnxAgent``), one forward pass, each
  game's draws from its own seeded generator (the same choices as ``CheckpointAgent`` with that
  seed);
* ``AgentSeats``: any single-game ``Agent`` (the search players, the seeded heuristic and random
  players of ``evaluate``), one per seat and game, reading the game's state;
* ``MixtureSeats``: a mixture, one member drawn per game and seat.

``seat_policy(spec, make_agent)`` is the policy an agent spec (``players.specs``) plays as.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from island_fortress_env.agents.base import Agent, policy_action
from island_fortress_env.engine.results import GameResult
from island_fortress_env.engine.tables import MAX_PLAYERS
from island_fortress_env.players.specs import AgentKind, AgentSpec, parse_agent_spec

SEED_BOUND = 2**63  # a mixture member's seed for a game is drawn below this
COMPACT_AT = 64  # policies held before those no game plays any more are let go


@dataclass(frozen=True)
class Games:
    """The games a policy decides for in one call: their slots in the batch and the seat to move
    in each (``slots[k]``, ``seats[k]`` are row ``k`` of the observations and masks)."""

    tables: Any
    slots: np.ndarray
    seats: np.ndarray

    def __len__(self) -> int:
        return len(self.slots)

    @property
    def which(self) -> np.ndarray:
        """The slots as a bool mask over the batch."""
        which = np.zeros(self.tables.num_games, dtype=np.bool_)
        which[self.slots] = True
        return which

    def state(self, k: int) -> Any:
        """A copy of row ``k``'s game state (for players that read it)."""
        return self.tables.state(int(self.slots[k]))


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
    caller's own (handed back when the game ends)."""

    players: int
    seed: int | None
    policies: tuple[SeatPolicy, ...]
    seeds: tuple[int | None, ...] = ()
    tag: Any = None

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


@dataclass
class _Slot:
    current: Seating | None = None  # the game being played
    following: Seating | None = None  # the game dealt next in this slot, if any
    actions: list[int] = field(default_factory=list)


class GameRunner:
    """Plays the games ``next_seating`` deals on ``tables`` (a ``VectorEnv`` or its engine twin),
    a game per slot at a time. ``next_seating(slot)`` is asked for a slot's next game when one
    begins (so that the batch deals it there as soon as the current one ends) and returns None
    when there are no more; a slot with none stays idle. ``tick()`` moves every game one decision.
    """

    def __init__(
        self, tables: Any, next_seating: Callable[[int], Seating | None], keep_actions: bool = False
    ) -> None:
        self.tables = tables
        self.next_seating = next_seating
        self.keep_actions = keep_actions
        n = tables.num_games
        self.slots = [_Slot() for _ in range(n)]
        self.policies: list[SeatPolicy] = []  # the policies seated, by index
        self._index: dict[int, int] = {}  # id(policy) -> its index
        self._compact_at = COMPACT_AT
        self.seat_policy = np.full((n, MAX_PLAYERS), -1, dtype=np.int64)  # each slot's policy per seat
        self.players = np.zeros(n, dtype=np.int64)  # each slot's table size (0: idle)
        self.active = np.zeros(n, dtype=np.bool_)
        self.last_actions = np.full(n, -1, dtype=np.int64)  # the actions of the last tick (-1: idle)
        for slot in range(n):
            self._deal(slot, next_seating(slot))
        tables.reset()
        for slot in range(n):
            self._begin(slot)

    def _deal(self, slot: int, seating: Seating | None) -> None:
        """``seating`` is the slot's next game: the batch deals it when the slot's game ends."""
        self.slots[slot].following = seating
        if seating is not None:
            self.tables.set_players(slot, seating.players)
            if seating.seed is not None:
                self.tables.set_seed(slot, seating.seed)

    def _begin(self, slot: int) -> None:
        """The slot's following game has just been dealt: seat it, and ask for the next one."""
        state = self.slots[slot]
        seating, state.current, state.actions = state.following, state.following, []
        self.active[slot] = seating is not None
        self.seat_policy[slot] = -1  # a smaller table than the slot's last leaves its seats empty
        self.players[slot] = 0 if seating is None else seating.players
        if seating is None:
            return
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

    @property
    def playing(self) -> bool:
        """Whether any game is still under way."""
        return bool(self.active.any())

    def tick(self) -> list[Finished]:
        """Every game under way moves one decision; returns the games that ended (in slot order;
        their slots have begun their next games)."""
        tables = self.tables
        active = np.flatnonzero(self.active)
        movers = tables.player[active]
        owner = self.seat_policy[active, movers]
        actions = np.full(tables.num_games, -1, dtype=np.int64)
        for index in np.unique(owner).tolist():
            rows = owner == index
            slots, seats = active[rows], movers[rows]
            chosen = self.policies[index].act(
                tables.obs[slots], tables.mask[slots], Games(tables, slots, seats)
            )
            actions[slots] = chosen
        tables.step(actions, self.active)
        self.last_actions = actions
        if self.keep_actions:
            for slot, action in zip(active.tolist(), actions[active].tolist(), strict=True):
                self.slots[slot].actions.append(action)
        finished = []
        for slot in np.flatnonzero(tables.done).tolist():
            state = self.slots[slot]
            assert state.current is not None
            kept = state.actions if self.keep_actions else None
            finished.append(Finished(slot, state.current, result_at(tables.final, slot), kept))
            self._begin(slot)
        return finished

    def run(self, on_finished: Callable[[Finished], None] | None = None) -> list[Finished]:
        """Plays until no game is left; returns every finished game, in the order they ended
        (``on_finished`` sees each as it ends)."""
        out: list[Finished] = []
        while self.playing:
            done = self.tick()
            if on_finished is not None:
                for game in done:
                    on_finished(game)
            out.extend(done)
        return out


def play_seatings(
    tables: Any,
    seatings: Sequence[Seating],
    keep_actions: bool = False,
    on_finished: Callable[[Finished], None] | None = None,
) -> list[Finished]:
    """Plays ``seatings`` on ``tables`` (as many at once as it has slots); the finished games in
    the order of ``seatings`` (``on_finished`` sees each as it ends)."""
    queue = iter(range(len(seatings)))

    def next_seating(_slot: int) -> Seating | None:
        number = next(queue, None)
        return None if number is None else seatings[number]

    order = {id(seating): k for k, seating in enumerate(seatings)}
    finished = GameRunner(tables, next_seating, keep_actions).run(on_finished)
    return sorted(finished, key=lambda game: order[id(game.seating)])


# ================================================================ policies


class BatchSeats:
    """One of the batch's own players (``kind``: ``heuristic`` or ``random``, in C++ in the core)
    for every seat it plays: each game's seeded like its deal."""

    def __init__(self, kind: str) -> None:
        if kind not in ("heuristic", "random"):
            raise ValueError(f"the batch's players are heuristic and random, not {kind!r}")
        self.name = kind

    def begin(self, slot: int, seat: int, seed: int | None) -> None:
        pass

    def act(self, observations: np.ndarray, masks: np.ndarray, games: Games) -> np.ndarray:
        tables = games.tables
        decide = tables.heuristic_actions if self.name == "heuristic" else tables.random_actions
        return decide(games.which)[games.slots]


class AgentSeats:
    """A single-game ``Agent`` per seat and game (made by ``make(seed)``, kept per slot and seat
    and re-seeded with each game's seed), given each game's state: for players that read it.
    With ``shared``, one agent made once plays every seat of every game (never re-seeded)."""

    def __init__(self, make: Callable[[int | None], Agent], name: str, shared: bool = False) -> None:
        self.make = make
        self.name = name
        self.shared = shared
        self.agents: dict[tuple[int, int], Agent] = {}

    def _key(self, slot: int, seat: int) -> tuple[int, int]:
        return (-1, -1) if self.shared else (slot, seat)

    def begin(self, slot: int, seat: int, seed: int | None) -> None:
        if self.shared:
            if (-1, -1) not in self.agents:
                self.agents[(-1, -1)] = self.make(seed)
            return
        agent = self.agents.get((slot, seat))
        if agent is None:
            self.agents[(slot, seat)] = self.make(seed)
        else:
            agent.reset(seed=seed)

    def act(self, observations: np.ndarray, masks: np.ndarray, games: Games) -> np.ndarray:
        out = np.empty(len(games), dtype=np.int64)
        for k, (slot, seat) in enumerate(zip(games.slots.tolist(), games.seats.tolist(), strict=True)):
            out[k] = self.agents[self._key(slot, seat)].act(observations[k], masks[k], games.state(k))
        return out


class NetworkSeats:
    """A network (``agents.network.ActorCritic`` or any module giving (logits, values) from
    observations and masks) for every seat it plays: one forward pass per call on its device.
    Greedy (the most probable legal action) or sampled with ``generator`` (a ``torch.Generator``
    on the network's device) by the Gumbel-max trick, with ``threshold`` > 0 only among the
    actions of at least that probability (``threshold:P:CHECKPOINT``). ``on_act(games,
    observations, masks, actions, log_probs, values)``, when given, sees every decision (a
    trainer records them)."""

    def __init__(
        self,
        net: Any,
        greedy: bool = True,
        generator: Any = None,
        name: str = "policy",
        on_act: Callable[..., None] | None = None,
        threshold: float = 0.0,
    ) -> None:
        self.net = net
        self.greedy = greedy
        self.generator = generator
        self.name = name
        self.on_act = on_act
        self.threshold = threshold

    def begin(self, slot: int, seat: int, seed: int | None) -> None:
        pass

    def act(self, observations: np.ndarray, masks: np.ndarray, games: Games) -> np.ndarray:
        actions, log_probs, values = sample_actions(
            self.net, observations, masks, self.generator, self.greedy, self.threshold
        )
        if self.on_act is not None:
            self.on_act(games, observations, masks, actions, log_probs, values)
        return actions


def sample_actions(
    net: Any, obs: np.ndarray, masks: np.ndarray, generator: Any, greedy: bool = False, threshold: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One forward pass for a batch of decisions on the network's device: (actions,
    log-probabilities, values) as numpy arrays, chosen by ``choose_actions``."""
    import torch

    device = next((p.device for p in net.parameters()), torch.device("cpu"))  # where the network is
    with torch.no_grad():
        o = torch.from_numpy(obs).to(device, non_blocking=True)
        m = torch.from_numpy(masks).to(device, non_blocking=True)
        logits, values = net(o, m)
        return choose_actions(logits, values, m, generator, greedy, threshold)


def choose_actions(
    logits: Any, values: Any, masks: Any, generator: Any, greedy: bool = False, threshold: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(actions, log-probabilities, values) as numpy arrays from a batch's masked ``logits``,
    ``values`` and legal-action ``masks`` (tensors on one device).

    Sampled from the masked softmax with ``generator`` (a ``torch.Generator``, on any device:
    the noise is drawn there and moved to the logits') (illegal actions have probability 0) by
    the Gumbel-max trick (the argmax of the log-probabilities plus Gumbel noise: an exact draw,
    several times cheaper than ``torch.multinomial`` over 380 actions; noise is drawn for the
    legal actions alone, row by row, a twentieth of the draws), or the argmax over legal actions
    when ``greedy``. With ``threshold`` > 0 the draw is among the actions of probability
    at least ``threshold`` (each row's most probable one always among them), renormalised, with
    the same noise as an unthresholded draw; the log-probabilities are then that distribution's.
    """
    import torch

    with torch.no_grad():
        logp = torch.log_softmax(logits, dim=-1)
        if threshold > 0 and not greedy:
            keep = logp >= math.log(threshold)
            keep.scatter_(1, logp.argmax(dim=-1, keepdim=True), True)
            logp = torch.log_softmax(logp.masked_fill(~keep, -math.inf), dim=-1)
        if greedy:
            actions = logits.argmax(dim=-1)
        else:
            # drawn where the generator is (the same draws whichever device the network is on)
            legal = masks.bool()
            uniform = torch.rand(int(legal.sum()), generator=generator, device=generator.device)
            uniform = uniform.to(logp.device).clamp_(min=torch.finfo(logp.dtype).tiny)
            noisy = logp.clone()  # an illegal action's log-probability stays far below any legal one's
            noisy[legal] -= torch.log(-torch.log(uniform))
            actions = noisy.argmax(dim=-1)
        chosen = logp.gather(1, actions.unsqueeze(-1)).squeeze(-1)
    return actions.cpu().numpy(), chosen.cpu().numpy(), values.cpu().numpy()


class NetworkPoolSeats:
    """Several networks of one architecture (a league's snapshots: ``members``, by key, each a
    ``NetworkSeats`` with its network and play mode), each playing the seats of the games whose
    slot ``member_of(slot)`` gives its key: one call for all of them, where one ``NetworkSeats``
    each would make a forward pass each for a few rows. Dense networks (``StackedNetworks``) run
    as one forward pass, their weights stacked; others one pass each. Then one draw per play mode,
    with ``generator``."""

    def __init__(self, member_of: Callable[[int], Any], generator: Any, name: str = "snapshots") -> None:
        self.member_of = member_of
        self.generator = generator
        self.name = name
        self.members: dict[Any, NetworkSeats] = {}
        self._stacked: tuple[tuple[int, ...], StackedNetworks | None] = ((), None)

    def begin(self, slot: int, seat: int, seed: int | None) -> None:
        pass

    def _stack(self) -> StackedNetworks | None:
        """The members' networks stacked (None if they cannot be), rebuilt when they change."""
        ids = tuple(id(seats.net) for seats in self.members.values())
        if ids != self._stacked[0]:
            nets = [seats.net for seats in self.members.values()]
            self._stacked = (ids, StackedNetworks(nets) if StackedNetworks.fits(nets) else None)
        return self._stacked[1]

    def act(self, observations: np.ndarray, masks: np.ndarray, games: Games) -> np.ndarray:
        import torch

        keys = list(self.members)
        index = {key: k for k, key in enumerate(keys)}
        member = np.array([index[self.member_of(slot)] for slot in games.slots.tolist()], dtype=np.int64)
        with torch.no_grad():
            obs, mask = torch.from_numpy(observations), torch.from_numpy(masks)
            stack = self._stack()
            if stack is not None:
                logits, values = stack(obs, mask, member)
            else:
                logits = torch.empty((len(member), masks.shape[1]))
                values = torch.empty(len(member))
                for k in np.unique(member).tolist():
                    net = self.members[keys[k]].net
                    device = next((p.device for p in net.parameters()), torch.device("cpu"))
                    rows = torch.from_numpy(np.flatnonzero(member == k))
                    out_logits, out_values = net(obs[rows].to(device), mask[rows].to(device))
                    logits[rows], values[rows] = out_logits.cpu(), out_values.cpu()
        out = np.empty(len(member), dtype=np.int64)
        modes: dict[tuple[bool, float], list[int]] = {}
        for k, key in enumerate(keys):
            modes.setdefault((self.members[key].greedy, self.members[key].threshold), []).append(k)
        for (greedy, threshold), ks in modes.items():
            rows_np = np.flatnonzero(np.isin(member, ks))
            if len(rows_np):
                rows = torch.from_numpy(rows_np)
                chosen = choose_actions(
                    logits[rows], values[rows], mask[rows], self.generator, greedy, threshold
                )
                out[rows_np] = chosen[0]
        return out


class StackedNetworks:
    """Dense ``agents.network.ActorCritic`` networks of one shape (no convolution, no value torso
    of their own) as one: their layers' weights stacked, so that one batched matrix product per
    layer runs every network on its own rows (``__call__``), each row's result that of its own
    network's forward pass up to floating-point rounding."""

    @staticmethod
    def fits(nets: Sequence[Any]) -> bool:
        from island_fortress_env.agents.network import ActorCritic

        if not nets or not all(
            isinstance(net, ActorCritic) and net.torso.wall is None and net.value_torso is None
            for net in nets
        ):
            return False
        shapes = {tuple((k, tuple(v.shape)) for k, v in net.state_dict().items()) for net in nets}
        return len(shapes) == 1 and all(p.device.type == "cpu" for net in nets for p in net.parameters())

    def __init__(self, nets: Sequence[Any]) -> None:
        self.size = len(nets)
        self.torso = self._stack([net.torso.board for net in nets])
        self.policy_head = self._stack([net.policy_head for net in nets])
        self.value_head = self._stack([net.value_head for net in nets])

    @staticmethod
    def _stack(sequences: Sequence[Any]) -> list[Any]:
        """One ``nn.Sequential`` of each network as layers: a linear layer's weights stacked,
        (weight [K, in, out], bias [K, 1, out]), copied now (the networks are frozen); an
        activation as it is (elementwise: the same for every network)."""
        import torch
        from torch import nn

        layers: list[Any] = []
        for position, module in enumerate(sequences[0]):
            if isinstance(module, nn.Linear):
                weight = torch.stack([seq[position].weight.detach().t() for seq in sequences]).contiguous()
                bias = torch.stack([seq[position].bias.detach() for seq in sequences]).unsqueeze(1)
                layers.append((weight, bias))
            else:
                layers.append(module)
        return layers

    @staticmethod
    def _run(layers: list[Any], x: Any) -> Any:
        import torch

        for layer in layers:
            x = torch.baddbmm(layer[1], x, layer[0]) if isinstance(layer, tuple) else layer(x)
        return x

    def __call__(self, obs: Any, mask: Any, member: np.ndarray) -> tuple[Any, Any]:
        """(masked logits, values) of each row of ``obs`` by its own network, ``member[row]``."""
        import torch

        from island_fortress_env.agents.network import masked_logits

        counts = np.bincount(member, minlength=self.size)
        position = np.empty(len(member), dtype=np.int64)  # each row's place among its network's rows
        order = np.argsort(member, kind="stable")
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        position[order] = np.arange(len(member)) - np.repeat(starts, counts)
        k, j = torch.from_numpy(member), torch.from_numpy(position)
        padded = obs.new_zeros((self.size, int(counts.max()), obs.shape[1]))
        padded[k, j] = obs
        features = self._run(self.torso, padded)
        logits = self._run(self.policy_head, features)[k, j]
        values = self._run(self.value_head, features)[k, j].squeeze(-1)
        return masked_logits(logits, mask), values


class CheckpointSeats:
    """A checkpoint (``agents.checkpoint.CheckpointAgent``, or ``agents.onnx_agent.OnnxAgent``:
    any agent with ``probabilities`` of a batch and ``deterministic``) for every seat it plays: one
    forward pass per call; greedy, or each game's action drawn from its own generator, seeded at the
    game's start, after the agent's ``threshold`` where it has one (the same choices as a
    ``CheckpointAgent`` reset with that seed)."""

    def __init__(self, agent: Any, name: str | None = None) -> None:
        self.agent = agent
        self.name = name or agent.name
        self.rngs: dict[tuple[int, int], np.random.Generator] = {}

    def begin(self, slot: int, seat: int, seed: int | None) -> None:
        if not self.agent.deterministic:
            self.rngs[(slot, seat)] = np.random.default_rng(seed)

    def act(self, observations: np.ndarray, masks: np.ndarray, games: Games) -> np.ndarray:
        probs = self.agent.probabilities(observations, masks)
        if self.agent.deterministic:
            return np.argmax(np.where(masks.astype(bool), probs, -1.0), axis=1).astype(np.int64)
        out = np.empty(len(games), dtype=np.int64)
        threshold = getattr(self.agent, "threshold", 0.0)
        for k, key in enumerate(zip(games.slots.tolist(), games.seats.tolist(), strict=True)):
            out[k] = policy_action(probs[k], masks[k], False, threshold, self.rngs[key])
        return out


class MixtureSeats:
    """A mixture: at each game's start, one member drawn by weight for each seat it plays, from a
    generator seeded with that seat's seed (as ``MixtureAgent.reset`` draws), and that member's
    policy plays the seat (begun with a seed drawn after it)."""

    def __init__(self, members: Sequence[tuple[float, SeatPolicy]], name: str = "mixture") -> None:
        self.members = [policy for _, policy in members]
        p = np.array([weight for weight, _ in members], dtype=np.float64)
        self.p = p / p.sum()
        self.name = name
        self.playing: dict[tuple[int, int], int] = {}

    def begin(self, slot: int, seat: int, seed: int | None) -> None:
        rng = np.random.default_rng(seed)
        member = int(rng.choice(len(self.members), p=self.p))
        self.playing[(slot, seat)] = member
        self.members[member].begin(slot, seat, int(rng.integers(SEED_BOUND)))

    def act(self, observations: np.ndarray, masks: np.ndarray, games: Games) -> np.ndarray:
        member = np.array(
            [self.playing[key] for key in zip(games.slots.tolist(), games.seats.tolist(), strict=True)],
            dtype=np.int64,
        )
        out = np.empty(len(games), dtype=np.int64)
        for m in np.unique(member).tolist():
            rows = member == m
            part = Games(games.tables, games.slots[rows], games.seats[rows])
            out[rows] = self.members[m].act(observations[rows], masks[rows], part)
        return out


def seat_policy(spec: str | AgentSpec, make_agent: Callable[[str, int | None], Agent]) -> SeatPolicy:
    """The seat policy that agent ``spec`` plays as, in any batch (its games seeded per seat):
    a checkpoint or an ONNX model as ``CheckpointSeats``, a mixture as ``MixtureSeats`` of its
    members, any other agent (random, heuristic, the search players) as ``AgentSeats`` of
    ``make_agent``'s agents."""
    from island_fortress_env.players.mixture import read_mixture

    parsed = parse_agent_spec(spec)
    if parsed.kind is AgentKind.MIXTURE:
        members = [(m.weight, seat_policy(m.spec, make_agent)) for m in read_mixture(parsed.text)]
        return MixtureSeats(members, name=parsed.label)
    if parsed.checkpoint is not None or parsed.kind is AgentKind.ONNX:
        agent = make_agent(parsed.text, None)
        if hasattr(agent, "probabilities") and hasattr(agent, "deterministic"):  # Checkpoint/OnnxAgent
            return CheckpointSeats(agent, name=parsed.label)
    return AgentSeats(lambda seed: make_agent(parsed.text, seed), name=parsed.label)
