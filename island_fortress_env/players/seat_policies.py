"""The seat policies of the one loop (``players.runner``): each decides for many games at once.

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

``seat_policy(spec, make_agent)`` is the policy an agent spec (``players.specs``) plays as: its
kind's row in the registry (``players/kinds.py``) builds it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from island_fortress_env.agents.base import Agent, policy_action
from island_fortress_env.players.runner import Games, SeatPolicy
from island_fortress_env.players.specs import AgentSpec, parse_agent_spec

SEED_BOUND = 2**63  # a mixture member's seed for a game is drawn below this


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
        batch = games.batch
        decide = batch.heuristic_actions if self.name == "heuristic" else batch.random_actions
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
            part = Games(games.batch, games.slots[rows], games.seats[rows])
            out[rows] = self.members[m].act(observations[rows], masks[rows], part)
        return out


def seat_policy(spec: str | AgentSpec, make_agent: Callable[[str, int | None], Agent]) -> SeatPolicy:
    """The seat policy that agent ``spec`` plays as, in any batch (its games seeded per seat), as
    its kind's row says (``players/kinds.py``): a checkpoint or an ONNX model as
    ``CheckpointSeats``, a mixture as ``MixtureSeats`` of its members, any other agent (random,
    heuristic, the search players) as ``AgentSeats`` of ``make_agent``'s agents."""
    parsed = parse_agent_spec(spec)
    return parsed.info.seats(parsed, make_agent)
