"""Many games at once, stepped in C++: ``make(num_games, ...)`` -> ``reset()`` / ``step(actions)``.

The shape of EnvPool and pgx: one call applies one action in every game and returns numpy arrays
for all of them, with no Python object per game per step. Each game is a C++ core game (the same
rules, observation and mask bytes as the engine and the PettingZoo env); the games are split over
``threads`` threads with the GIL released.

    import island_fortress_env.vector as vector

    env = vector.make(64, num_players=(2, 3, 4), seed=0, threads=2)
    obs, mask, player = env.reset()
    for _ in range(1000):
        obs, mask, player, rewards, done = env.step(env.random_actions())

Arrays (N = num_games), written in place at every call and returned (copy what must be kept):

* ``obs`` float32[N, OBS_SIZE]: the observation of the player to move in each game (seat-relative);
* ``mask`` bool[N, NUM_ACTIONS]: that player's legal actions;
* ``player`` int32[N]: the seat to move;
* ``rewards`` float32[N, 4]: the win/loss returns of every seat (docs/RULES.md E23) in the games
  that ended on this step, zero elsewhere and for absent seats;
* ``done`` bool[N]: the game ended on this step. It has been replaced by a new game already: ``obs``,
  ``mask`` and ``player`` are the new game's first decision;
* ``final`` (``FinalResults``, read-only arrays, P = 4 seats, C = ``len(engine.scoring.COMPONENTS)``):
  the record of each game that ended on this step, in the rows where ``done`` is true (zeros in the
  others, after ``reset()`` and for absent seats), so that nobody needs to replay a finished game:
  ``players`` int32[N] (its table size), ``seed`` uint64[N] (the seed it was dealt from), ``length``
  int32[N] (the decisions taken in it), ``rounds`` int32[N], ``score`` int64[N, P], ``rank``
  int32[N, P] (finishing position, 1 = winner: score, then blocks in the wall, Jade, Treasure; seats
  still tied share one), ``win`` float32[N, P] (win share, 1/m for m tied winners),
  ``blocks_built`` int32[N, P], ``favors_played`` int32[N, P], ``jade_spent`` int64[N, P] (Jade paid
  to the supply) and ``components`` int64[N, P, C] (points by ``engine.scoring.COMPONENTS``). Row
  ``i`` equals ``engine.results.game_result`` of that game.

``score_gains()`` gives every seat's points scored on the last step (per-seat score deltas, for a
dense reward), ``set_players(i, n)`` changes the table size of game ``i`` from its next episode on,
``set_seed(i, s)`` deals its next episode from seed ``s``, and ``random_actions``/``heuristic_actions``
take a mask of the games to decide for.

Episode ``e`` of game ``i`` is the game ``core.new_initial_state(game, seed=game_seed(i, e))``
(episodes count from 0), or the seed ``set_seed`` chose for it; ``random_actions`` draws like
``engine.play_random_game`` from that seed, and ``heuristic_actions`` plays like
``HeuristicAgent(seed=that seed)`` at every seat.

``make_gym(num_envs, ...)`` is the Gymnasium ``VectorEnv`` view (``GymVectorEnv``): one learning
seat per game, every other seat played by the heuristic or the random player in C++, so a
single-agent vectorised trainer (CleanRL's ``ppo.py``, for one) runs on it unchanged, the legal
actions in ``infos["action_mask"]``.

Limits and threads:

* ``threads`` is 1..``MAX_THREADS`` (256) and ``num_games`` 1..``MAX_GAMES``; anything else raises
  ``ValueError`` (``TypeError`` for what is no integer, booleans included). A thread that cannot
  start raises ``RuntimeError``.
* ``num_games`` is checked against the memory available (``MemAvailable``, a cgroup's limit, an
  address-space limit: the least) before anything is made: a batch needs ``game_bytes()`` a game
  (about 11 KB, half of it the observation), and the heuristic player's caches about 60 KB more a
  game (``heuristic_bytes()``), counted on the first ``heuristic_actions()`` (when the Gymnasium
  view is made, for its heuristic opponent). Too little raises ``MemoryError`` naming the games,
  the bytes needed and the bytes available.
* A batch may be called from several threads: its calls take turns (one lock per batch, held for
  the length of a call, so a call from a second thread waits for the first), and every call
  leaves every game consistent. The arrays are the batch's own, rewritten by every call, so a
  thread that reads them while another steps reads that other step's results: give each thread
  its own batch to step games in parallel, or ``threads`` to one batch.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np

from island_fortress_env.core.memory import check_memory
from island_fortress_env.engine import actions as A
from island_fortress_env.engine import rng, scoring, tables
from island_fortress_env.engine.state import Game
from island_fortress_env.env.observation import OBS_HIGH, OBS_LOW, OBS_SIZE

__all__ = [
    "MAX_GAMES",
    "MAX_THREADS",
    "FinalResults",
    "GymVectorEnv",
    "VectorEnv",
    "game_bytes",
    "heuristic_bytes",
    "make",
    "make_gym",
]

OPPONENTS = ("heuristic", "random")  # who plays the seats the learner does not
MAX_THREADS = 256  # threads one batch may run on (the core's limit, kMaxThreads)
MAX_GAMES = 2**31 - 1  # games one batch may hold (the core counts them in an int)
# The bytes of a game's arrays here: obs, mask, player, rewards, done, the actions given to step,
# the arrays random_actions, heuristic_actions and score_gains return, the games tuple and the
# list of the core's games made for the batch.
_ARRAY_BYTES = (
    OBS_SIZE * 4 + A.NUM_ACTIONS + 4 + tables.MAX_PLAYERS * 4 + 1 + 8 + 8 + 8 + tables.MAX_PLAYERS * 8
)
_LIST_BYTES = 8 + 8 + 16


def _integer(value: Any, name: str) -> int:
    """``value`` as an integer: ``TypeError`` for what is no integer, a bool included."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, not a bool ({value!r})")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, not {value!r}") from None


def _count(value: Any, name: str, low: int, high: int) -> int:
    """``value`` as an integer in low..high: ``TypeError`` for what is no integer (a bool
    included), ``ValueError`` outside the range."""
    number = _integer(value, name)
    if not low <= number <= high:
        raise ValueError(f"{name} must be {low}..{high:,}, not {number}")
    return number


def _index(value: Any, size: int) -> int:
    """``value`` as the index of a game of a batch of ``size``: ``TypeError`` for what is no
    integer (a bool included), ``IndexError`` outside 0..size-1."""
    index = _integer(value, "a game index")
    if not 0 <= index < size:
        raise IndexError(f"no game {index} in a batch of {size}")
    return index


def game_bytes() -> int:
    """The memory one game of a batch needs (bytes): its arrays here and its slot in the core
    (state, history, heuristic player), not the heuristic player's caches (``heuristic_bytes()``)."""
    from island_fortress_env.core.state import _core

    return _ARRAY_BYTES + _LIST_BYTES + int(_core.BATCH_GAME_BYTES)


def heuristic_bytes() -> int:
    """The memory the heuristic player's caches add to one game of a batch, on its first call."""
    from island_fortress_env.core.state import _core

    return int(_core.HEURISTIC_BYTES)


@dataclass(frozen=True)
class FinalResults:
    """The record of the games that ended on the last ``step()`` (``VectorEnv.final``): read-only
    arrays that every ``step()`` and ``reset()`` rewrite in place (copy what must be kept), valid in
    the rows where ``done`` is true and zero in the others; per seat (P = 4), zero for absent seats.
    Row ``i`` is ``engine.results.game_result`` of the game that ended in slot ``i``."""

    players: np.ndarray  # int32[N]: the table size
    seed: np.ndarray  # uint64[N]: the seed the game was dealt from
    length: np.ndarray  # int32[N]: the decisions taken in it
    rounds: np.ndarray  # int32[N]: the rounds played
    score: np.ndarray  # int64[N, P]: final scores
    rank: np.ndarray  # int32[N, P]: finishing position, 1 = winner (scoring.finishing_positions)
    win: np.ndarray  # float32[N, P]: win share, 1/m for m tied winners (scoring.win_share)
    blocks_built: np.ndarray  # int32[N, P]: blocks on the wall
    favors_played: np.ndarray  # int32[N, P]: favor cards laid on the table
    jade_spent: np.ndarray  # int64[N, P]: Jade paid to the supply (engine.results.jade_spent)
    components: np.ndarray  # int64[N, P, C]: points by component, in scoring.COMPONENTS order


class VectorEnv:
    """``num_games`` games in the C++ core; see the module docstring."""

    def __init__(
        self,
        num_games: int,
        num_players: int | Sequence[int] = 3,
        seed: int = 0,
        threads: int = 1,
        **options: Any,
    ) -> None:
        from island_fortress_env.core.state import OBS_SIZE, CoreState, _core, core_game

        self._CoreState = CoreState
        num_games = _count(num_games, "num_games", 1, MAX_GAMES)
        threads = _count(threads, "threads", 1, MAX_THREADS)
        counts = _player_counts(num_players)
        self.seed = rng.seed_state(seed)
        check_memory(num_games, game_bytes(), "the arrays and games of a batch")
        self.threads = threads
        self._options = options
        self._core_game = core_game
        by_size = {n: Game(num_players=n, **options) for n in dict.fromkeys(counts)}
        self._by_size = by_size
        # Game i is a table of counts[i % len(counts)] players (until set_players changes it).
        self.games: tuple[Game, ...] = tuple(by_size[counts[i % len(counts)]] for i in range(num_games))
        self._next_games: dict[int, Game] = {}  # set_players' tables, from each game's next episode
        self.num_games = num_games
        self._core = _core
        self._batch = _core.Batch(
            [core_game(g) for g in self.games], self.seed, threads, list(scoring.COMPONENT_INDEX)
        )
        self.final = FinalResults(**self._batch.final_arrays())  # views of the core's own arrays
        self.obs = np.zeros((num_games, OBS_SIZE), dtype=np.float32)
        self.mask = np.zeros((num_games, A.NUM_ACTIONS), dtype=np.bool_)
        self.player = np.zeros(num_games, dtype=np.int32)
        self.rewards = np.zeros((num_games, tables.MAX_PLAYERS), dtype=np.float32)
        self.done = np.zeros(num_games, dtype=np.bool_)
        self._started = False
        self._heuristic_checked = False  # the heuristic caches' memory was checked
        self._lock = threading.Lock()  # one call at a time (the core batch holds its own too)

    def reset(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A new game in every slot (the next episode of each); returns (obs, mask, player)."""
        with self._lock:
            self._batch.reset(self.obs, self.mask, self.player, self.rewards, self.done)
            self._started = True
            self._start_next_games(range(self.num_games))
            return self.obs, self.mask, self.player

    def step(
        self, actions: Any, games: Any = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One action per game; returns (obs, mask, player, rewards, done). An illegal action
        raises ``ValueError`` naming the game, and no game changes. With ``games`` (bool[N]) only
        the games where it is true move (the others' actions are ignored, -1 will do): the rest
        keep their obs, mask and player and get zero rewards and ``done`` false."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        a = np.asarray(actions)
        if a.shape != (self.num_games,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_games} integers, not {a.dtype} {a.shape}")
        if a.dtype != np.int64 or not a.flags.c_contiguous:
            converted = a.astype(np.int64)
            if not np.array_equal(converted, a):
                raise ValueError("actions must be ids in 0..NUM_ACTIONS-1")
            a = converted
        which = self._which(games)
        with self._lock:
            self._batch.step(a, self.obs, self.mask, self.player, self.rewards, self.done, which)
            if self._next_games:
                self._start_next_games(np.flatnonzero(self.done))
            return self.obs, self.mask, self.player, self.rewards, self.done

    def random_actions(self, games: Any = None) -> np.ndarray:
        """A uniformly random legal action in every game (a new int64 array); with ``games``
        (bool[N]), only in the games where it is true: -1 elsewhere, and those games draw nothing."""
        self._require_started()
        out = np.empty(self.num_games, dtype=np.int64)
        which = self._which(games)
        with self._lock:
            self._batch.random_actions(out, which)
        return out

    def heuristic_actions(self, games: Any = None) -> np.ndarray:
        """The heuristic player's action in every game (a new int64 array); with ``games``
        (bool[N]), only in the games where it is true (-1 elsewhere). The first call checks that
        the memory available holds the player's caches (``MemoryError`` if not; nothing made)."""
        self._require_started()
        out = np.empty(self.num_games, dtype=np.int64)
        which = self._which(games)
        with self._lock:
            if not self._heuristic_checked:
                check_memory(self.num_games, heuristic_bytes(), "the heuristic player's caches")
                self._heuristic_checked = True
            self._batch.heuristic_actions(out, which)
        return out

    def score_gains(self) -> np.ndarray:
        """Every seat's points scored on the last ``step()``, per game (int64[N, 4], a new array):
        in a game that ended on that step (``done``), those of its last move. Zero for absent seats
        and after ``reset()``. The score of seat ``s`` is the sum of its gains over the episode."""
        out = np.zeros((self.num_games, tables.MAX_PLAYERS), dtype=np.int64)
        with self._lock:
            self._batch.score_gains(out)
        return out

    def set_players(self, index: int, num_players: int) -> None:
        """Game ``index``'s episodes from its next one on are tables of ``num_players`` (the episode
        under way keeps its own; ``games[index]`` changes when the next one starts)."""
        index = _index(index, self.num_games)
        (num_players,) = _player_counts(num_players)
        with self._lock:
            game = self._by_size.get(num_players)
            if game is None:
                game = self._by_size[num_players] = Game(num_players=num_players, **self._options)
            self._batch.set_game(index, self._core_game(game))
            self._next_games[index] = game

    def set_seed(self, index: int, seed: int) -> None:
        """Game ``index``'s next episode is dealt from ``seed`` (0..2**64-1), the episodes after
        it from their own seeds again (the episode under way keeps its own; ``game_seed(index)``
        gives ``seed`` once it has started)."""
        index = _index(index, self.num_games)
        seed = _count(seed, "seed", 0, 2**64 - 1)
        with self._lock:
            self._batch.set_seed(index, seed)

    def _start_next_games(self, started: Any) -> None:
        """``games`` follows the games of ``started`` that began an episode of a table set by
        ``set_players``."""
        changed = [(int(i), self._next_games.pop(int(i))) for i in started if int(i) in self._next_games]
        if changed:
            games = list(self.games)
            for i, game in changed:
                games[i] = game
            self.games = tuple(games)

    def _which(self, games: Any) -> np.ndarray | None:
        if games is None:
            return None
        which = np.asarray(games)
        if which.shape != (self.num_games,) or which.dtype != np.bool_:
            raise ValueError(f"games must be {self.num_games} booleans, not {which.dtype} {which.shape}")
        return np.ascontiguousarray(which).view(np.uint8)

    def state(self, index: int) -> Any:
        """A copy of game ``index``'s state as a ``core.state.CoreState`` (batched games keep no
        event log, so its ``log`` holds no events)."""
        self._require_started()
        index = _index(index, self.num_games)
        state = object.__new__(self._CoreState)
        with self._lock:
            state._init(self.games[index], self._batch.state(index), [], 0)
        return state

    def game_seed(self, index: int, episode: int | None = None) -> int:
        """The seed of game ``index``'s episode ``episode`` as the batch seed gives it, or (no
        ``episode``) the seed of the episode being played, ``set_seed``'s where it chose one."""
        index = _index(index, self.num_games)
        if episode is None:
            self._require_started()
            with self._lock:
                return int(self._batch.seed(index))
        if isinstance(episode, bool):
            raise TypeError(f"episode must be an integer, not a bool ({episode!r})")
        try:
            number = operator.index(episode)
        except TypeError:
            raise TypeError(f"episode must be an integer, not {episode!r}") from None
        if not 0 <= number < 2**64:
            raise ValueError(f"episode must be 0..2**64-1, not {number}")
        return int(self._core.game_seed(self.seed, index, number))

    def episodes(self, index: int) -> int:
        """How many episodes game ``index`` has started."""
        index = _index(index, self.num_games)
        with self._lock:
            return int(self._batch.episode(index))

    def _require_started(self) -> None:
        if not self._started:
            raise RuntimeError("call reset() first")


def _player_counts(num_players: Any) -> tuple[int, ...]:
    """``num_players`` (a table size or a sequence of them) as a tuple of table sizes."""
    if isinstance(num_players, bool):
        raise TypeError(f"num_players must be an integer or a sequence of them, not a bool ({num_players!r})")
    try:
        values: tuple[Any, ...] = (operator.index(num_players),)
    except TypeError:
        try:
            values = tuple(num_players)
        except TypeError:
            raise TypeError(
                f"num_players must be an integer or a sequence of them, not {num_players!r}"
            ) from None
    counts = []
    for n in values:
        if isinstance(n, bool):
            raise TypeError(f"num_players must be integers, not a bool ({n!r})")
        try:
            counts.append(operator.index(n))
        except TypeError:
            raise TypeError(f"num_players must be integers, not {n!r}") from None
    if not counts or any(n not in tables.PLAYER_COUNTS for n in counts):
        raise ValueError(f"num_players must be one of {tables.PLAYER_COUNTS} or a sequence of them")
    return tuple(counts)


def make(
    num_games: int, num_players: int | Sequence[int] = 3, seed: int = 0, threads: int = 1, **options: Any
) -> VectorEnv:
    """``num_games`` games of ``num_players`` players (or a table size per game, cycling through a
    sequence such as ``(2, 3, 4)``), seeded from ``seed``, stepped on ``threads`` threads; ``options``
    are the game's variants (``engine.GameConfig``)."""
    return VectorEnv(num_games, num_players, seed, threads, **options)


class GymVectorEnv(gymnasium.vector.VectorEnv):
    """Gymnasium's ``VectorEnv`` over a ``VectorEnv``: in each of ``num_envs`` games one seat
    learns and ``opponent`` (``"heuristic"`` or ``"random"``) plays every other seat in C++.

    * ``reset(seed=None)`` -> ``(obs, infos)``; ``step(actions)`` -> ``(obs, rewards,
      terminations, truncations, infos)``: ``obs`` float32[N, 1317] is the learner's observation
      at its next decision (the opponents have moved in between), ``rewards`` its win/loss return
      (docs/RULES.md E23) when its game ended on this step and 0 otherwise, ``terminations`` the
      game ended, ``truncations`` always false (a game always ends by the rules).
    * ``infos["action_mask"]`` bool[N, 380]: the learner's legal actions (``action_masks()`` too,
      sb3-contrib's name); ``infos["seat"]``: its seat in each game.
    * Autoreset in the same step (``AutoresetMode.SAME_STEP``, as EnvPool does): where a game
      ended, ``obs`` is already the next game's first decision of the learner. Games are never
      truncated, so no final observation is needed to bootstrap, and none is given.
    * The learner's seat: ``learner_seat`` in every game, or (``None``, the default) seat
      ``e % num_players`` in episode ``e`` of a game, so it plays every seat in turn.
    * ``reset(seed=S)`` starts the batch again from batch seed ``S`` (the same games as
      ``make_gym(..., seed=S)``); ``reset()`` starts the next episode in every game.
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int | Sequence[int] = 3,
        opponent: str = "heuristic",
        seed: int = 0,
        threads: int = 1,
        learner_seat: int | None = None,
        copy: bool = True,
        **options: Any,
    ) -> None:
        if opponent not in OPPONENTS:
            raise ValueError(f"opponent must be one of {OPPONENTS}, not {opponent!r}")
        if opponent == "heuristic":  # the batch and the opponent's caches, counted before either is made
            count = _count(num_envs, "num_games", 1, MAX_GAMES)
            check_memory(count, game_bytes() + heuristic_bytes(), "a batch and its heuristic player's caches")
        self._make = lambda batch_seed: VectorEnv(num_envs, num_players, batch_seed, threads, **options)
        self._vec = self._make(seed)
        self._vec._heuristic_checked = opponent == "heuristic"
        self._lock = threading.Lock()  # one call at a time
        sizes = np.array([g.num_players for g in self._vec.games], dtype=np.int64)
        if learner_seat is not None:
            learner_seat = operator.index(learner_seat)
            if not 0 <= learner_seat < sizes.min():
                raise ValueError(f"learner_seat must be a seat of every table (0..{sizes.min() - 1})")
        self._fixed_seat = learner_seat
        self._opponent = opponent
        self._copy = copy
        self.num_envs = self._vec.num_games
        batch_space = gymnasium.vector.utils.batch_space
        self.single_observation_space = gymnasium.spaces.Box(OBS_LOW, OBS_HIGH, (OBS_SIZE,), np.float32)
        self.single_action_space = gymnasium.spaces.Discrete(A.NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP}
        self.seat = np.zeros(self.num_envs, dtype=np.int64)
        self._episode = np.zeros(self.num_envs, dtype=np.int64)
        self._all = np.arange(self.num_envs)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if options:
            raise ValueError(f"GymVectorEnv.reset takes no options, got {sorted(options)}")
        if seed is not None and (not isinstance(seed, int | np.integer) or isinstance(seed, bool)):
            raise ValueError(f"seed must be one integer for the whole batch, not {seed!r}")
        with self._lock:
            return self._reset(seed)

    def _reset(self, seed: int | None) -> tuple[np.ndarray, dict[str, Any]]:
        if seed is not None:
            self._vec = self._make(int(seed))
        self._vec.reset()
        self._episode = np.array([self._vec.episodes(i) - 1 for i in range(self.num_envs)], dtype=np.int64)
        self._seat_learners(self._all)
        no_reward, not_ended = np.zeros(self.num_envs, np.float32), np.zeros(self.num_envs, np.bool_)
        self._play_opponents(no_reward, not_ended)
        return self._out(self._vec.obs), self._infos()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        with self._lock:
            return self._step(actions)

    def _step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        _, _, _, rewards, done = self._vec.step(actions)
        reward = rewards[self._all, self.seat].copy()
        terminated = done.copy()
        self._next_episodes(np.flatnonzero(done))
        self._play_opponents(reward, terminated)
        truncated = np.zeros(self.num_envs, dtype=np.bool_)
        return self._out(self._vec.obs), reward, terminated, truncated, self._infos()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game, bool[N, 380]."""
        return self._out(self._vec.mask)

    def state(self, index: int) -> Any:
        """A copy of game ``index``'s state (``VectorEnv.state``)."""
        return self._vec.state(index)

    def _play_opponents(self, reward: np.ndarray, terminated: np.ndarray) -> None:
        """The other seats move, in every game at once, until each game waits for its learner;
        a game that ends meanwhile adds the learner's return to ``reward`` and sets ``terminated``."""
        choose = self._vec.heuristic_actions if self._opponent == "heuristic" else self._vec.random_actions
        while True:
            waiting = self._vec.player != self.seat
            if not waiting.any():
                return
            _, _, _, rewards, done = self._vec.step(choose(waiting), games=waiting)
            ended = np.flatnonzero(done)
            if ended.size:
                reward[ended] += rewards[ended, self.seat[ended]]
                terminated[ended] = True
                self._next_episodes(ended)

    def _next_episodes(self, ended: np.ndarray) -> None:
        if ended.size:
            self._episode[ended] += 1
            self._seat_learners(ended)

    def _seat_learners(self, which: np.ndarray) -> None:
        if self._fixed_seat is not None:
            self.seat[which] = self._fixed_seat
            return
        sizes = np.array([self._vec.games[i].num_players for i in which], dtype=np.int64)
        self.seat[which] = self._episode[which] % sizes

    def _infos(self) -> dict[str, Any]:
        present = np.ones(self.num_envs, dtype=np.bool_)
        return {
            "action_mask": self.action_masks(),
            "_action_mask": present,
            "seat": self.seat.copy(),
            "_seat": present,
        }

    def _out(self, array: np.ndarray) -> np.ndarray:
        return array.copy() if self._copy else array


def make_gym(
    num_envs: int,
    num_players: int | Sequence[int] = 3,
    opponent: str = "heuristic",
    seed: int = 0,
    threads: int = 1,
    learner_seat: int | None = None,
    copy: bool = True,
    **options: Any,
) -> GymVectorEnv:
    """A Gymnasium ``VectorEnv`` of ``num_envs`` games, one learning seat each, ``opponent`` at the
    others (see ``GymVectorEnv``); ``copy=False`` returns the batch's own arrays, rewritten at the
    next call, instead of copies."""
    return GymVectorEnv(num_envs, num_players, opponent, seed, threads, learner_seat, copy, **options)
