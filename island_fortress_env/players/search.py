"""The search player: the core's batched information-set search, guided by a policy.

``search[:N]`` searches with the shipped policy (``checkpoints/policy-2-4p-v3.zip``) and
``search:CHECKPOINT[:N]`` with any native checkpoint, or with an exported network (a file named
``*.onnx``, played by onnxruntime without torch), ``N`` simulations per decision (default
``DEFAULT_SIMULATIONS``). The search is ``core.search.BatchedSearch`` (its doc: determinisations by
the core's ``redeal_unseen``, PUCT, the sealed bids as a simultaneous decision searched by regret
matching); ``gumbel[:CHECKPOINT][:N]`` is the same search with Gumbel root selection (sequential
halving, the move the halving's survivor): ``SearchSeats`` searches every game of a batch it is to
move in at once, one network call per simulation step; ``SearchAgent`` (one game, for the
environment, the web app and the terminal) is a batch of one of the same code. A decision with one
legal action is played without search. Every tree's draws come from the seat's seed for its game, so
the same seeds give the same moves.

A state of the Python engine (a game made with ``backend="python"``) has no C++ twin to search:
``SearchAgent`` plays it with ``players.search_reference``, the one-game Python tree (PUCT at every
decision, the others' sealed bids drawn uniformly) kept as the readable reference.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from island_fortress_env.agents.checkpoint import NATIVE_FORMAT, CheckpointError, load_policy, read_metadata
from island_fortress_env.agents.onnx_agent import OnnxAgent, is_onnx_path
from island_fortress_env.core.search import CONSIDERED, BatchedSearch, Evaluate, SearchResult
from island_fortress_env.core.state import CoreState
from island_fortress_env.players.runner import Games
from island_fortress_env.players.specs import DEFAULT_SEARCH_SIMULATIONS, SHIPPED_POLICY

DEFAULT_SIMULATIONS = DEFAULT_SEARCH_SIMULATIONS
SEED_WORDS = 1  # one 64-bit seed a tree, from the seat's seed sequence


class Evaluator:
    """A native checkpoint's network (torch) or an exported one (onnxruntime) as the search's
    ``evaluate(observations, masks) -> (logits, values)``, on ``threads`` torch threads (None:
    torch's own count)."""

    def __init__(self, path: str | Path, threads: int | None = None) -> None:
        self.onnx = OnnxAgent(path) if is_onnx_path(path) else None
        self.net: Any = None if self.onnx is not None else _native_network(path)
        self.threads = threads

    @classmethod
    def of_network(cls, net: Any, threads: int | None = None) -> Evaluator:
        """A live network (an ``ActorCritic`` in memory, not a file) as the search's evaluator:
        every call reads its weights as they are then, so a trainer that updates ``net`` in place
        searches with the new weights from its next call on."""
        evaluator = cls.__new__(cls)
        evaluator.onnx, evaluator.net, evaluator.threads = None, net, threads
        return evaluator

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.onnx is not None:
            return self.onnx.forward(observations, masks)
        import torch

        from island_fortress_env.agents.network import torch_threads

        obs, mask = torch.from_numpy(observations), torch.from_numpy(masks)
        with torch.no_grad():
            if self.threads is None:
                logits, values = self.net(obs, mask)
            else:
                with torch_threads(self.threads):
                    logits, values = self.net(obs, mask)
        return logits.numpy(), values.numpy()


def _native_network(path: str | Path) -> Any:
    metadata = read_metadata(path)
    if metadata.get("format") != NATIVE_FORMAT:
        raise CheckpointError(f"checkpoint {str(path)!r}: search needs a native checkpoint, not SB3's")
    net, _ = load_policy(path)
    net.eval()
    return net


def _tree_seed(sequence: np.random.SeedSequence) -> int:
    """The next decision's tree seed from a seat's seed sequence."""
    return int(sequence.spawn(1)[0].generate_state(SEED_WORDS, dtype=np.uint64)[0])


Searched = Callable[[Games, np.ndarray, np.ndarray, SearchResult], None]
"""``on_search(games, observations, masks, result)``: a batch of searched decisions, row by row."""


class SearchSeats:
    """The search for every seat it plays (a seat policy of ``players.runner``): the games it is
    to move in are searched together, each from its seat's seed for the game (``begin``).

    ``evaluator`` (``Evaluator.of_network``: a trainer's live network) replaces the checkpoint
    ``path``; ``considered`` and ``gumbel_scale`` are Gumbel root selection's (``BatchedSearch``);
    ``threads`` the C++ walks'; ``torch_threads`` the checkpoint's network's (None: torch's own
    count). One by default, as the one-game player: the same moves on any machine (torch splits its
    sums by its thread count, so a network's values differ in the last bits between counts), and no
    thread of the network's waiting at every layer for a CPU another process holds (on a busy host
    that is ten times slower, docs/STRENGTH.md); ``on_search``, when given, sees every search's
    decisions and their ``SearchResult`` (a trainer records the improved policies)."""

    def __init__(
        self,
        path: str | Path = SHIPPED_POLICY,
        simulations: int = DEFAULT_SIMULATIONS,
        name: str | None = None,
        gumbel: bool = False,
        exact_bids: bool = False,
        evaluator: Evaluate | None = None,
        considered: int = CONSIDERED,
        gumbel_scale: float = 1.0,
        threads: int = 2,
        on_search: Searched | None = None,
        torch_threads: int | None = 1,
    ) -> None:
        self.evaluator = evaluator if evaluator is not None else Evaluator(path, threads=torch_threads)
        self.search = BatchedSearch(
            self.evaluator, simulations, threads=threads, gumbel=gumbel, considered=considered,
            exact_bids=exact_bids, gumbel_scale=gumbel_scale,
        )  # fmt: skip
        guide = "live" if evaluator is not None else Path(path).stem
        self.name = name or f"{'gumbel' if gumbel else 'search'}:{guide}:{simulations}"
        self.on_search = on_search
        self._seeds: dict[tuple[int, int], np.random.SeedSequence] = {}
        self._reference: dict[tuple[int, int], Any] = {}

    def begin(self, slot: int, seat: int, seed: int | None) -> None:
        self._seeds[(slot, seat)] = np.random.SeedSequence(seed)
        self._reference.pop((slot, seat), None)

    def act(self, observations: np.ndarray, masks: np.ndarray, games: Games) -> np.ndarray:
        states = [games.state(k) for k in range(len(games))]
        if not all(isinstance(state, CoreState) for state in states):
            return self._act_in_python(observations, masks, games, states)
        seeds = [
            _tree_seed(self._seeds[(slot, seat)])
            for slot, seat in zip(games.slots.tolist(), games.seats.tolist(), strict=True)
        ]
        result = self.search.run(states, seeds)
        if self.on_search is not None:
            self.on_search(games, observations, masks, result)
        return result.actions

    def _act_in_python(
        self, observations: np.ndarray, masks: np.ndarray, games: Games, states: list[Any]
    ) -> np.ndarray:
        """Games of the Python engine: each seat's reference tree (module doc)."""
        from island_fortress_env.players.search_reference import ReferenceSearchAgent

        out = np.empty(len(states), dtype=np.int64)
        for k, (slot, seat) in enumerate(zip(games.slots.tolist(), games.seats.tolist(), strict=True)):
            agent = self._reference.get((slot, seat))
            if agent is None:
                agent = self._reference[(slot, seat)] = ReferenceSearchAgent(
                    self.evaluator, self.search.simulations
                )
                agent._seed = self._seeds[(slot, seat)]
            legal = states[k].legal_actions()
            out[k] = legal[0] if len(legal) == 1 else agent.search(states[k])
        return out


class SearchAgent:
    """The search for one game at a time (module doc): ``act(observation, mask, state)``."""

    def __init__(
        self,
        path: str | Path = SHIPPED_POLICY,
        simulations: int = DEFAULT_SIMULATIONS,
        seed: int | None = None,
        name: str | None = None,
        gumbel: bool = False,
        exact_bids: bool = False,
    ) -> None:
        self.path = path
        self.simulations = simulations
        self.name = name or f"{'gumbel' if gumbel else 'search'}:{Path(path).stem}:{simulations}"
        self.evaluator = Evaluator(path, threads=1)
        rules = {"gumbel": gumbel, "exact_bids": exact_bids}
        self.search = BatchedSearch(self.evaluator, simulations, threads=1, **rules)
        self._reference: Any = None
        self._seed = np.random.SeedSequence(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is None:
            return
        self._seed = np.random.SeedSequence(seed)
        if self._reference is not None:
            self._reference._seed = self._seed

    def act(self, observation: np.ndarray, action_mask_: np.ndarray, state: Any = None) -> int:
        if state is None:
            raise ValueError("the search player needs the game state (it reads only its seat's view)")
        legal = state.legal_actions()
        if len(legal) == 1:
            return int(legal[0])
        if not isinstance(state, CoreState):
            return int(self._reference_agent().search(state))
        return int(self.search.run([state], [_tree_seed(self._seed)]).actions[0])

    def policy(self, state: CoreState) -> np.ndarray:
        """The search's policy at ``state`` (visit shares, or the bid's average strategy)."""
        return self.search.run([state], [_tree_seed(self._seed)]).policy[0]

    def _reference_agent(self) -> Any:
        if self._reference is None:
            from island_fortress_env.players.search_reference import ReferenceSearchAgent

            self._reference = ReferenceSearchAgent(self.evaluator, self.simulations)
            self._reference._seed = self._seed
        return self._reference
