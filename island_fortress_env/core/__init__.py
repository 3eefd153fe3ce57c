"""The C++ core of the rules engine: the same game as ``island_fortress_env.engine``, compiled.

``Game`` (``core/game.py``) is the engine's ``Game`` with a backend: ``Game(num_players=3)`` gives
states of the core where it is built (``CoreState``) and of the Python engine otherwise (with one
warning per process); ``backend="core"`` or ``backend="python"`` chooses.

The Python engine (``engine/``) is the readable reference; the core (``core/src/``, a nanobind
extension built by ``pip install``) plays bit for bit the same games: the same action ids, legal
action lists, events, scores, generator draws and observation bytes (``tests/test_core_differential.py``
steps both side by side). Its states offer the engine's public ``State`` API::

    from island_fortress_env.core import Game

    state = Game(num_players=3).new_initial_state(seed=1)  # a CoreState where the core is built
    while not state.is_terminal():
        state.apply_action(state.legal_actions()[0])

The configuration and the favor deck are validated and loaded by the Python engine (``Game``);
the core receives them as plain data.

Building: ``pip install -e .`` compiles the extension (scikit-build-core, CMake, nanobind, the
system's C++17 compiler) into ``build/``; after a change to ``core/src`` run it again (the build
is incremental). ``make test-sanitize`` builds it with AddressSanitizer and
UndefinedBehaviorSanitizer in a venv and build folder of their own and runs ``tests/test_core_*.py``
under them; by hand::

    ISLAND_FORTRESS_SANITIZE=ON pip install -e . -Cbuild-dir=build/sanitize -Ccmake.build-type=RelWithDebInfo
    LD_PRELOAD="$(g++ -print-file-name=libasan.so) $(g++ -print-file-name=libubsan.so)" \
        ASAN_OPTIONS=detect_leaks=0 python -m pytest -q tests/test_core_*.py
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..engine.game import Game as EngineGame
    from .state import CoreState

__all__ = [
    "BACKENDS",
    "Game",
    "available",
    "build_error",
    "default_backend",
    "new_initial_state",
    "resolve_backend",
]


def _load() -> tuple[Any, str | None]:
    try:
        from . import _core
    except ImportError as exc:
        return None, f"{exc}"
    return _core, None


_core, _error = _load()

from .game import BACKENDS, Game, default_backend, resolve_backend  # noqa: E402  (after _load: it reads it)


def available() -> bool:
    """Whether the compiled extension was built and imports."""
    return _core is not None


def build_error() -> str | None:
    """Why the extension does not import (None when it does)."""
    return _error


def new_initial_state(game: EngineGame, seed: Any = None) -> CoreState:
    """A new game of ``game`` (a validated ``engine.Game``) in the C++ core, with the engine's
    seed rules (an integer in [0, 2**64) or None, else ``SeedError``)."""
    from .state import new_initial_state as _new

    return _new(game, seed)


def replay(game: EngineGame, seed: Any, actions: Any) -> CoreState:
    """The game of ``game`` dealt from ``seed`` after ``actions`` (action ids), with its event
    log, replayed in C++ in one call; an action that is not legal where it stands raises
    ``ValueError`` naming it."""
    import numpy as np

    from .state import _rebuild

    return _rebuild(game, seed, np.asarray(actions, dtype="<i2").tobytes(), True)
