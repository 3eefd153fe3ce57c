"""``Game``: the engine's ``Game`` with a choice of backend for its states.

``Game(num_players=3)`` plays on the C++ core where the extension is built (its states are
``core.state.CoreState``) and on the Python engine otherwise (``engine.State``), with one warning
per process that says why the core is not used. ``backend="core"`` asks for the core (an error
when it is not built), ``backend="python"`` for the engine. Both play the same games, bit for bit:
the same legal actions, events, scores and observation bytes from the same seed.

    from island_fortress_env.core import Game

    state = Game(num_players=3).new_initial_state(seed=1)   # a CoreState where the core is built
    state = Game(num_players=3, backend="python").new_initial_state(seed=1)   # an engine State
"""

from __future__ import annotations

import warnings
from typing import Any, cast

from island_fortress_env.engine.config import ConfigError, GameConfig
from island_fortress_env.engine.game import Game as EngineGame
from island_fortress_env.engine.state import State

__all__ = ["BACKENDS", "Game", "default_backend", "resolve_backend", "shared_game"]

BACKENDS = ("core", "python")

_warned = False  # whether the "core is not built" warning was given in this process


def _extension() -> tuple[bool, str | None]:
    from island_fortress_env import core

    return core.available(), core.build_error()


def default_backend() -> str:
    """``"core"`` where the C++ extension is built, else ``"python"`` (warning once per process
    that the core is not built, and why)."""
    global _warned
    built, why = _extension()
    if built:
        return "core"
    if not _warned:
        _warned = True
        warnings.warn(
            f"the C++ core of island_fortress_env is not built ({why}): games run on the Python "
            "engine, the same rules and several times slower. Reinstall with `pip install -e .` on a "
            "machine with a C++17 compiler and CMake, or pass backend='python' to choose it.",
            RuntimeWarning,
            stacklevel=3,
        )
    return "python"


def resolve_backend(backend: Any) -> str:
    """``backend`` checked: ``"core"``, ``"python"``, or None for ``default_backend()``. An unknown
    one, or ``"core"`` where the extension is not built, raises ``ConfigError``."""
    if backend is None:
        return default_backend()
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ConfigError(f"backend must be one of {BACKENDS} or None (the default), not {backend!r}")
    if backend == "core":
        built, why = _extension()
        if not built:
            raise ConfigError(
                f"backend='core': the C++ core is not built ({why}); reinstall the package with "
                "`pip install -e .` (a C++17 compiler and CMake), or pass backend='python'"
            )
    return backend


class Game(EngineGame):
    """``engine.Game`` whose ``new_initial_state`` gives states of the chosen ``backend``."""

    def __init__(self, config: GameConfig | None = None, backend: str | None = None, **options: Any) -> None:
        super().__init__(config, **options)
        self.backend = resolve_backend(backend)
        if self.backend == "core":
            from .state import core_game

            core_game(self)  # the core's twin, made now: a count it cannot hold is a ConfigError here

    def new_initial_state(self, seed: int | None = None) -> State:
        """A new game: a ``CoreState`` on the core, an engine ``State`` on the Python engine; the
        seed follows the engine's rule (an integer in [0, 2**64) or None, else ``SeedError``).
        Typed as ``State``: a ``CoreState`` offers its public API and stands wherever one is read."""
        if self.backend == "core":
            from .state import CoreState

            return cast(State, CoreState(self, seed))
        return State(self, seed)

    def __repr__(self) -> str:
        return f"Game({self.config!r}, backend={self.backend!r})"


_SHARED: dict[tuple[GameConfig, str], Game] = {}  # games of the shipped deck, by configuration
_SHARED_LIMIT = 64  # configurations kept (an env that varies them keeps memory bounded)


def shared_game(config: GameConfig, backend: str | None = None) -> Game:
    """``Game(config, backend=backend)``, one per configuration and backend for the shipped favor
    deck: a game is never changed by its states, so every environment of a configuration can share
    one (its deck and tables) instead of loading its own. A deck file is loaded again each time (it
    may have changed)."""
    resolved = resolve_backend(backend)
    if config.favor_deck is not None:
        return Game(config, backend=resolved)
    key = (config, resolved)
    found = _SHARED.get(key)
    if found is None:
        if len(_SHARED) >= _SHARED_LIMIT:
            _SHARED.clear()
        found = _SHARED[key] = Game(config, backend=resolved)
    return found
