"""``EngineVectorEnv``: ``VectorEnv``'s API over the Python engine, game by game.

The same games as the C++ batch, decision for decision: episode ``e`` of slot ``i`` is dealt from
the same seed (``game_seed``, or the one ``set_seed`` gave; ``batch_game_seed`` is the core's
``game_seed`` in Python), ``random_actions`` draws from the same chooser, ``heuristic_actions``
plays ``baseline.heuristic.HeuristicAgent(seed=the deal's seed)``, and the observations, masks,
rewards, score gains and final results are the engine's. It is the batch where the core is not
built, and where a player reads the engine's own state (the search players); a differential test
holds the two equal. Several times slower: one Python state per game. ``vector.make(...,
backend="python")`` makes it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from island_fortress_env.baseline.heuristic import HeuristicAgent
from island_fortress_env.engine import actions as A
from island_fortress_env.engine import rng, scoring, tables
from island_fortress_env.engine.game import Game
from island_fortress_env.engine.results import GameResult, game_result
from island_fortress_env.engine.state import State
from island_fortress_env.env.observation import OBS_SIZE, ObservationEncoder, action_mask
from island_fortress_env.vector.common import (
    MAX_GAMES,
    FinalResults,
    _continued_state,
    _count,
    _index,
    _player_counts,
    _with_game,
)

CHOOSER_SALT = rng.CHOOSER_SALT  # the random chooser's seed: the deal's xor this (engine.rng)
_MASK = (1 << 64) - 1

__all__ = ["EngineVectorEnv", "batch_game_seed"]


def batch_game_seed(batch_seed: int, index: int, episode: int) -> int:
    """The seed of episode ``episode`` of game ``index`` of a batch seeded ``batch_seed``: the
    C++ core's ``game_seed`` (core/src/batch.cpp's GameSeed), in Python."""
    s = (rng.seed_state(batch_seed) ^ (0xD1B54A32D192ED03 * (index + 1))) & _MASK
    s, _ = rng.next_u64(s)
    s ^= (0x8BB84B93962EACC9 * (episode + 1)) & _MASK
    _, out = rng.next_u64(s)
    return out


def empty_results(num_games: int) -> FinalResults:
    """A ``FinalResults`` of zeros for ``num_games`` games (writable, unlike the core's views)."""
    p, c = tables.MAX_PLAYERS, len(scoring.COMPONENTS)
    return FinalResults(
        players=np.zeros(num_games, np.int32),
        seed=np.zeros(num_games, np.uint64),
        length=np.zeros(num_games, np.int32),
        rounds=np.zeros(num_games, np.int32),
        score=np.zeros((num_games, p), np.int64),
        rank=np.zeros((num_games, p), np.int32),
        win=np.zeros((num_games, p), np.float32),
        blocks_built=np.zeros((num_games, p), np.int32),
        favors_played=np.zeros((num_games, p), np.int32),
        jade_spent=np.zeros((num_games, p), np.int64),
        components=np.zeros((num_games, p, c), np.int64),
    )


def write_result(final: FinalResults, i: int, result: GameResult) -> None:
    """Row ``i`` of ``final`` holds ``result`` (zeros for absent seats)."""
    n = result.players
    for name in ("players", "seed", "length", "rounds"):
        getattr(final, name)[i] = getattr(result, name)
    for name in ("score", "rank", "win", "blocks_built", "favors_played", "jade_spent", "components"):
        row = getattr(final, name)[i]
        row[...] = 0
        row[:n] = getattr(result, name)


class _Slot:
    """One game of the batch: its state, seed, chooser, heuristic player and counters."""

    def __init__(self) -> None:
        self.state: Any = None
        self.seed = 0
        self.episodes = 0
        self.chooser = 0
        self.heuristic: Any = None
        self.length = 0


class EngineVectorEnv:
    """``num_games`` games of the Python engine behind ``VectorEnv``'s API (module doc)."""

    backend = "python"  # where its games are stepped (``vector.make``'s backend)

    def __init__(
        self,
        num_games: int,
        num_players: int | Sequence[int] = 3,
        seed: int = 0,
        threads: int = 1,
        **options: Any,
    ) -> None:
        num_games = _count(num_games, "num_games", 1, MAX_GAMES)
        counts = _player_counts(num_players)
        self.seed = rng.seed_state(seed)
        self.threads = 1
        self.num_games = num_games
        self._options = options
        self._by_size = {n: Game(num_players=n, **options) for n in dict.fromkeys(counts)}
        self.games: tuple[Game, ...] = tuple(self._by_size[counts[i % len(counts)]] for i in range(num_games))
        self._next_games: dict[int, Game] = {}
        self._next_seeds: dict[int, int] = {}
        self._encoders: dict[Game, ObservationEncoder] = {}
        self._slots = [_Slot() for _ in range(num_games)]
        self.obs = np.zeros((num_games, OBS_SIZE), dtype=np.float32)
        self.mask = np.zeros((num_games, A.NUM_ACTIONS), dtype=np.bool_)
        self.player = np.zeros(num_games, dtype=np.int32)
        self.rewards = np.zeros((num_games, tables.MAX_PLAYERS), dtype=np.float32)
        self.done = np.zeros(num_games, dtype=np.bool_)
        self.final = empty_results(num_games)
        self._gains = np.zeros((num_games, tables.MAX_PLAYERS), dtype=np.int64)
        self._started = False

    # ------------------------------------------------------------------ episodes

    def _start(self, i: int) -> None:
        slot = self._slots[i]
        game = self._next_games.pop(i, None)
        if game is not None:
            games = list(self.games)
            games[i] = game
            self.games = tuple(games)
        seed = self._next_seeds.pop(i, None)
        if seed is None:
            seed = batch_game_seed(self.seed, i, slot.episodes)
        slot.episodes += 1
        slot.seed = seed
        slot.chooser = seed ^ CHOOSER_SALT
        slot.length = 0
        slot.heuristic = HeuristicAgent(seed=seed)
        slot.state = self.games[i].new_initial_state(seed)

    def _write(self, i: int) -> None:
        state = self._slots[i].state
        game = self.games[i]
        encoder = self._encoders.get(game)
        if encoder is None:
            encoder = self._encoders[game] = ObservationEncoder(game)
        seat = state.current_player()
        self.player[i] = seat
        self.obs[i] = encoder.encode(state, seat)
        self.mask[i] = action_mask(state).astype(np.bool_)

    def reset(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A new game in every slot (the next episode of each); returns (obs, mask, player)."""
        for i in range(self.num_games):
            self._start(i)
            self._write(i)
        self.rewards[:] = 0
        self.done[:] = False
        self._gains[:] = 0
        self._clear_results()
        self._started = True
        return self.obs, self.mask, self.player

    def step(
        self, actions: Any, games: Any = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """As ``VectorEnv.step``: an illegal action raises ``ValueError`` naming the game, and no
        game changes."""
        self._require_started()
        a = np.asarray(actions)
        if a.shape != (self.num_games,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_games} integers, not {a.dtype} {a.shape}")
        which = self._which(games)
        moving = [i for i in range(self.num_games) if which is None or which[i]]
        for i in moving:
            action = int(a[i])
            if not (0 <= action < A.NUM_ACTIONS and self.mask[i, action]):
                raise ValueError(f"illegal action {action} in game {i}")
        self.rewards[:] = 0
        self.done[:] = False
        self._gains[:] = 0
        self._clear_results()
        for i in moving:
            slot = self._slots[i]
            state = slot.state
            before = list(state.score)
            state.apply_action(int(a[i]))
            slot.length += 1
            for p in range(state.n):
                self._gains[i, p] = state.score[p] - before[p]
            if state.is_terminal():
                self.done[i] = True
                self.rewards[i, : state.n] = scoring.win_loss_returns(state.n, state.winners)
                write_result(self.final, i, game_result(state, slot.seed, slot.length))
                self._start(i)
            self._write(i)
        return self.obs, self.mask, self.player, self.rewards, self.done

    def random_actions(self, games: Any = None) -> np.ndarray:
        """A uniformly random legal action in every game (-1 where ``games`` is false)."""

        def draw(slot: _Slot) -> int:
            legal = slot.state.legal_actions()
            slot.chooser, k = rng.below(slot.chooser, len(legal))
            return int(legal[k])

        return self._decide(games, lambda i, slot: draw(slot))

    def heuristic_actions(self, games: Any = None) -> np.ndarray:
        """The heuristic player's action in every game (-1 where ``games`` is false)."""
        return self._decide(
            games, lambda i, slot: slot.heuristic.act(self.obs[i], self.mask[i].view(np.int8), slot.state)
        )

    def _decide(self, games: Any, choose: Callable[[int, _Slot], int]) -> np.ndarray:
        """``choose(i, slot)`` in every game ``i`` where ``games`` is true (all without it), -1
        elsewhere."""
        self._require_started()
        which = self._which(games)
        out = np.full(self.num_games, -1, dtype=np.int64)
        for i, slot in enumerate(self._slots):
            if which is None or which[i]:
                out[i] = choose(i, slot)
        return out

    def score_gains(self) -> np.ndarray:
        """Every seat's points scored on the last ``step()``, per game (int64[N, 4], a new array)."""
        return self._gains.copy()

    def set_players(self, index: int, num_players: int) -> None:
        """Game ``index``'s episodes from its next one on are tables of ``num_players``."""
        index = _index(index, self.num_games)
        (num_players,) = _player_counts(num_players)
        game = self._by_size.get(num_players)
        if game is None:
            game = self._by_size[num_players] = Game(num_players=num_players, **self._options)
        self._next_games[index] = game

    def set_seed(self, index: int, seed: int) -> None:
        """Game ``index``'s next episode is dealt from ``seed``."""
        index = _index(index, self.num_games)
        self._next_seeds[index] = _count(seed, "seed", 0, 2**64 - 1)

    def set_state(self, index: int, state: Any, seed: int) -> None:
        """As ``VectorEnv.set_state``, for a state of the Python engine."""
        self._require_started()
        index = _index(index, self.num_games)
        seed = _count(seed, "seed", 0, 2**64 - 1)
        _continued_state(state, State, "State of the Python engine")
        slot = self._slots[index]
        slot.seed, slot.chooser, slot.length = seed, seed ^ CHOOSER_SALT, 0
        slot.heuristic = HeuristicAgent(seed=seed)
        slot.state = state.clone()
        self.games = _with_game(self.games, self._next_games, index, state.game)
        self._gains[index] = 0
        for name in self.final.__dataclass_fields__:
            getattr(self.final, name)[index] = 0
        self._write(index)

    def state(self, index: int) -> Any:
        """A copy of game ``index``'s engine state."""
        self._require_started()
        return self._slots[_index(index, self.num_games)].state.clone()

    def game_seed(self, index: int, episode: int | None = None) -> int:
        """The seed of game ``index``'s episode ``episode`` (default: the one being played)."""
        index = _index(index, self.num_games)
        if episode is None:
            self._require_started()
            return self._slots[index].seed
        return batch_game_seed(self.seed, index, episode)

    def episodes(self, index: int) -> int:
        """How many episodes game ``index`` has started."""
        return self._slots[_index(index, self.num_games)].episodes

    def _clear_results(self) -> None:
        for name in self.final.__dataclass_fields__:
            getattr(self.final, name)[...] = 0

    def _which(self, games: Any) -> np.ndarray | None:
        if games is None:
            return None
        which = np.asarray(games)
        if which.shape != (self.num_games,) or which.dtype != np.bool_:
            raise ValueError(f"games must be {self.num_games} booleans, not {which.dtype} {which.shape}")
        return which

    def _require_started(self) -> None:
        if not self._started:
            raise RuntimeError("call reset() first")
