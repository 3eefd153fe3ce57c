"""Many games at once: ``make(num_games, ...)`` -> ``reset()`` / ``step(actions)``.

The shape of EnvPool and pgx: one call applies one action in every game and returns numpy arrays
for all of them, with no Python object per game per step. Each game is a C++ core game (the same
rules, observation and mask bytes as the engine and the PettingZoo env); the games are split over
``threads`` threads with the GIL released.

    import island_fortress_env.vector as vector

    env = vector.make(64, num_players=(2, 3, 4), seed=0, threads=2)
    obs, mask, player = env.reset()
    for _ in range(1000):
        obs, mask, player, rewards, done = env.step(env.random_actions())

Backends: ``make(..., backend=...)`` chooses where the games are stepped, behind one API.
``"core"`` is ``VectorEnv`` (``core_batch.py``), the games in C++ (an error where the core is not
built); ``"python"`` is its twin over the Python engine (``engine_batch.py``), game by game, for
players that read the engine's own state and where the core is not built; ``"auto"`` (the
default) is the core where it is built, else the Python engine with a warning. Both play the same
games from the same seed, decision for decision: the same deals, draws, observations, masks,
rewards and final results (``batch.backend`` says which a batch is). ``batch_game_seed`` gives
the deal of any game of a batch before the batch is made.

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
``set_seed(i, s)`` deals its next episode from seed ``s``, ``set_state(i, state, s)`` continues
game ``i`` from a copy of a game under way (of ``backend_of(state)``), its players seeded ``s``,
and ``random_actions``/``heuristic_actions`` take a mask of the games to decide for.

Episode ``e`` of game ``i`` is the game ``core.new_initial_state(game, seed=game_seed(i, e))``
(episodes count from 0), or the seed ``set_seed`` chose for it; ``random_actions`` draws like
``engine.play_random_game`` from that seed, and ``heuristic_actions`` plays like
``HeuristicAgent(seed=that seed)`` at every seat.

``make_gym(num_envs, ...)`` is the Gymnasium ``VectorEnv`` view (``GymVectorEnv``, ``gym.py``) over
the core's batch: one learning seat per game, every other seat played by the heuristic or the
random player in C++, so a single-agent vectorised trainer (CleanRL's ``ppo.py``, for one) runs on
it unchanged, the legal actions in ``infos["action_mask"]``.

Limits and threads (the core's batch; the Python engine's checks ``num_games``, ``num_players`` and
seeds alike, steps on one thread and takes no lock):

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

import warnings
from collections.abc import Sequence
from typing import Any

from island_fortress_env import core
from island_fortress_env.vector.common import MAX_GAMES, MAX_THREADS, FinalResults
from island_fortress_env.vector.core_batch import VectorEnv, game_bytes, heuristic_bytes
from island_fortress_env.vector.engine_batch import EngineVectorEnv, batch_game_seed
from island_fortress_env.vector.gym import OPPONENTS, GymVectorEnv, make_gym

__all__ = [
    "BACKENDS",
    "MAX_GAMES",
    "MAX_THREADS",
    "OPPONENTS",
    "FinalResults",
    "GymVectorEnv",
    "VectorEnv",
    "backend_of",
    "batch_game_seed",
    "game_bytes",
    "heuristic_bytes",
    "make",
    "make_gym",
    "resolve_backend",
]

BACKENDS = ("auto", "core", "python")  # make's choices of where the games are stepped


def resolve_backend(backend: str = "auto", *, warn: bool = True) -> str:
    """The batch ``make(..., backend=backend)`` gives: ``"core"`` or ``"python"``. ``"auto"`` is
    the core where it is built, else the Python engine, with a ``RuntimeWarning`` saying so (with
    ``warn``). ``"core"`` where the core is not built raises ``RuntimeError``, a name not in
    ``BACKENDS`` ``ValueError``."""
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, not {backend!r}")
    if backend == "python":
        return backend
    if core.available():
        return "core"
    if backend == "core":
        raise RuntimeError(
            f"backend='core': the C++ core is not built ({core.build_error()}); reinstall the package "
            "with `pip install -e .` (a C++17 compiler and CMake), or pass backend='python'"
        )
    if warn:
        warnings.warn(
            f"the C++ core is not built ({core.build_error()}): the batch steps its games in the "
            "Python engine, several times slower (reinstall with `pip install -e .` to build it)",
            RuntimeWarning,
            stacklevel=2,
        )
    return "python"


def backend_of(state: Any) -> str:
    """The backend whose batch continues ``state`` (``set_state``): ``"core"`` for a
    ``core.state.CoreState``, ``"python"`` for a state of the Python engine."""
    if not core.available():
        return "python"  # no core: no CoreState either
    from island_fortress_env.core.state import CoreState

    return "core" if isinstance(state, CoreState) else "python"


def make(
    num_games: int,
    *,
    num_players: int | Sequence[int] = 3,
    seed: int = 0,
    threads: int = 1,
    backend: str = "auto",
    **options: Any,
) -> VectorEnv | EngineVectorEnv:
    """``num_games`` games of ``num_players`` players (or a table size per game, cycling through a
    sequence such as ``(2, 3, 4)``), seeded from ``seed``, stepped on ``threads`` threads (the
    core's; the Python engine steps on one) by ``backend`` (``resolve_backend``: ``"auto"``,
    ``"core"`` or ``"python"``); ``options`` are the game's variants (``engine.GameConfig``)."""
    if resolve_backend(backend) == "core":
        return VectorEnv(num_games, num_players, seed, threads, **options)
    return EngineVectorEnv(num_games, num_players, seed, threads, **options)
