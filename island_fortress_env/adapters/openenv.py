"""Island Fortress as an OpenEnv environment: OpenEnv's own server and client types around the
game's text face (``views.prompt``).

Serve it (OpenEnv's FastAPI app on uvicorn; one game per WebSocket session)::

    island-fortress openenv-serve --host 127.0.0.1 --port 8000

and play it with OpenEnv's client (``EnvClient``; ``.sync()`` for a synchronous one)::

    from island_fortress_env.adapters.openenv import IslandFortressAction, IslandFortressEnv

    with IslandFortressEnv(base_url="http://127.0.0.1:8000").sync() as env:
        result = env.reset(players=3, seed=7)
        while not result.done:
            seat, text = result.observation.seat, result.observation.text
            result = env.step(IslandFortressAction(reply="[1]", seat=seat))

**One session, every seat.** As OpenEnv's TextArena and OpenSpiel environments play a
multi-player game through one session, a session holds one table of 2-4 seats and every
observation is addressed to one seat (``seat``): while the game goes on, the seat to move, with
``text`` its ``views.prompt.prompt`` (everything that seat may know, in words, its numbered moves
and how to reply) and ``legal_moves`` those moves' words in the numbered order; once the game is
over, the seat whose move ended it, with ``text`` its ``observation_text`` (no moves) and
``rewards`` every seat's return. Nothing another seat may not see is in any of it (the text
face's rule; ``tests/integrations/test_openenv.py`` redeals what each seat cannot see at every
step and compares the text). ``reward`` is the addressed seat's: 0 until the end.

**A reply** is ``IslandFortressAction(reply=..., seat=...)``: ``[k]``, ``k``, the move's words or
``#<action id>`` (``views.prompt.parse_reply``); ``seat``, if given, must be the seat to move.
**A refused reply** follows OpenEnv's convention for an illegal move (its chess environment's, and
TextArena's "invalid move, resubmit"): the step returns an observation, not an error, for the same
seat in the same position (the state unchanged, ``done`` false, ``reward`` 0), with ``error`` the
refusal (what was wrong and how to answer) and ``metadata["refused"]`` true; the session's
``refused_replies`` counts them. A step before any reset is refused the same way. A malformed
action (not the schema, a reply over ``MAX_REPLY_CHARS``) is refused by OpenEnv's server itself
(its ``VALIDATION_ERROR``); a bad reset (``players`` not 2-4, an unknown or invalid option, a seed
out of range) is one ``ValueError`` naming it (the server's ``EXECUTION_ERROR``) and keeps the
game in progress.

**State** (``env.state()``, ``GET /state``) is public only: the episode, the moves applied, the
seat to move, the round, the scores, the game's variants; never the deal's seed (it fixes the
deck). A reset without a seed deals from 64 bits of the operating system (``secrets``), as the
browser app and ``play`` do (``engine.rng.deal_seed``).
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

from fastapi import HTTPException
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server import (
    Action,
    ConcurrencyConfig,
    Environment,
    Observation,
    State,
    create_fastapi_app,
)
from openenv.core.env_server.types import EnvironmentMetadata
from pydantic import Field

from island_fortress_env import __version__
from island_fortress_env.core.game import shared_game
from island_fortress_env.engine import ConfigError, tables
from island_fortress_env.engine.config import GameConfig, option_names
from island_fortress_env.engine.rng import SeedError, deal_seed, seed_state
from island_fortress_env.views.prompt import ReplyError, legal_moves, observation_text, parse_reply, prompt

ENV_NAME = "island_fortress"
MAX_REPLY_CHARS = 4000  # a reply longer than this is refused by the action's schema
MAX_EPISODE_ID_CHARS = 255  # as OpenEnv's HTTP reset request bounds it
DEFAULT_MAX_SESSIONS = 8  # concurrent WebSocket sessions (games) one server holds
SESSION_TIMEOUT_S = 900.0  # a session idle this long is closed by the server
# The options a reset may set: the game's own, but never a deck file (a path on the server).
RESET_OPTIONS = tuple(name for name in option_names() if name not in ("num_players", "favor_deck"))


class IslandFortressAction(Action):
    """A seat's reply: ``[k]``, ``k``, the move's words or ``#<action id>``."""

    reply: str = Field(max_length=MAX_REPLY_CHARS, description="the reply naming one of the numbered moves")
    seat: int | None = Field(
        default=None, ge=0, lt=tables.MAX_PLAYERS, description="the replying seat; if given, the seat to move"
    )


class IslandFortressObservation(Observation):
    """What one seat (``seat``) is shown (module doc)."""

    seat: int = Field(default=-1, description="the seat this observation is addressed to")
    text: str = Field(
        default="", description="the seat's text: views.prompt.prompt, or observation_text at the end"
    )
    legal_moves: list[str] = Field(
        default_factory=list, description="the seat's moves, in their numbered order"
    )
    current_player_id: int = Field(default=-1, description="the seat to move; -1 when the game is over")
    num_players: int = Field(default=0, description="seats at the table")
    rewards: list[float] = Field(default_factory=list, description="every seat's return (0 until the end)")
    error: str | None = Field(default=None, description="why the last reply was refused, and how to answer")


class IslandFortressState(State):
    """The session's public state (module doc): nothing hidden, not the deal's seed."""

    num_players: int = 0
    current_player_id: int = -1
    done: bool = False
    round: int = 0
    scores: list[int] = Field(default_factory=list)
    refused_replies: int = 0
    variants: dict[str, Any] = Field(default_factory=dict)


class ResetError(ValueError, HTTPException):
    """A bad reset: one line naming the problem. Over the WebSocket it is the server's
    ``EXECUTION_ERROR`` with this message; over HTTP (``POST /reset``) a 422, not a 500."""

    def __init__(self, message: str) -> None:
        ValueError.__init__(self, message)
        HTTPException.__init__(self, status_code=422, detail=message)

    def __str__(self) -> str:
        return str(self.detail)


def _config(players: Any, options: Mapping[str, Any] | None) -> GameConfig:
    """The game a reset asks for, validated (one ``ValueError`` naming what is wrong)."""
    if isinstance(players, bool) or not isinstance(players, int):
        raise ValueError(
            f"players must be an integer from {tables.MIN_PLAYERS} to {tables.MAX_PLAYERS}, not {players!r}"
        )
    options = dict(options or {})
    unknown = sorted(set(options) - set(RESET_OPTIONS))
    if unknown:
        raise ValueError(f"unknown game option(s) {unknown}; a reset may set {list(RESET_OPTIONS)}")
    try:
        return GameConfig(num_players=players, **options)
    except ConfigError as error:
        raise ValueError(str(error)) from None


class IslandFortressEnvironment(
    Environment[IslandFortressAction, IslandFortressObservation, IslandFortressState]
):
    """The OpenEnv environment: one table per instance (one per WebSocket session)."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session has its own instance and engine state

    def __init__(
        self, players: int = 3, backend: str | None = None, options: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__()
        self._defaults = _config(players, options)
        self._backend = backend
        shared_game(self._defaults, backend)  # a bad backend fails here, when the server starts
        self._engine: Any = None
        self._state = IslandFortressState()
        self._last_seat = -1

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        players: int | None = None,
        options: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> IslandFortressObservation:
        """A new game of ``players`` seats (the server's default if None) with ``options`` (the
        game's options but ``favor_deck``), dealt from ``seed`` (64 random bits if None). A bad
        reset raises one ``ResetError`` and keeps the game in progress."""
        try:
            config, deal = self._reset_request(seed, episode_id, players, options, kwargs)
        except ValueError as error:
            raise ResetError(str(error)) from None
        engine = shared_game(config, self._backend).new_initial_state(deal)
        self._engine = engine
        self._state = IslandFortressState(
            episode_id=episode_id if episode_id is not None else str(uuid.uuid4()),
            num_players=config.num_players,
            variants=config.variants,
        )
        self._update_state()
        return self._observation()

    def _reset_request(
        self, seed: Any, episode_id: Any, players: Any, options: Any, extra: Mapping[str, Any]
    ) -> tuple[GameConfig, int]:
        if extra:
            raise ValueError(
                f"unknown reset parameter(s) {sorted(extra)}; reset takes seed, episode_id, players, options"
            )
        if episode_id is not None and (
            not isinstance(episode_id, str) or len(episode_id) > MAX_EPISODE_ID_CHARS
        ):
            raise ValueError(f"episode_id must be a string of at most {MAX_EPISODE_ID_CHARS} characters")
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(f"options must be a mapping of game options, not {type(options).__name__}")
        base = {name: getattr(self._defaults, name) for name in RESET_OPTIONS}
        config = _config(
            self._defaults.num_players if players is None else players, {**base, **(options or {})}
        )
        try:
            return config, deal_seed() if seed is None else seed_state(seed)
        except SeedError as error:
            raise ValueError(str(error)) from None

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name=ENV_NAME,
            description="Island Fortress (2-4 players): a seat's text and numbered moves, one reply a step.",
            version=__version__,
        )

    def step(
        self, action: IslandFortressAction, timeout_s: float | None = None, **kwargs: Any
    ) -> IslandFortressObservation:
        """Apply the seat to move's reply, or refuse it (module doc)."""
        engine = self._engine
        if engine is None:
            return IslandFortressObservation(
                error="no game is in progress: send a reset first", reward=0.0, metadata={"refused": True}
            )
        if engine.is_terminal():
            return self._refused("the game is over: send a reset to start another")
        mover = engine.current_player()
        if action.seat is not None and action.seat != mover:
            return self._refused(f"it is seat {mover}'s turn, not seat {action.seat}'s")
        try:
            chosen = parse_reply(engine, action.reply)
        except ReplyError as error:
            return self._refused(str(error))
        engine.apply_action(chosen)
        self._last_seat = mover
        self._state.step_count += 1
        self._update_state()
        return self._observation()

    @property
    def state(self) -> IslandFortressState:
        return self._state

    def _update_state(self) -> None:
        engine, state = self._engine, self._state
        state.done = bool(engine.is_terminal())
        state.current_player_id = -1 if state.done else int(engine.current_player())
        state.round = int(engine.round)
        state.scores = [int(s) for s in engine.score]

    def _refused(self, why: str) -> IslandFortressObservation:
        self._state.refused_replies += 1
        observation = self._observation()
        observation.error = why
        observation.reward = 0.0
        observation.metadata = {"refused": True}
        return observation

    def _observation(self) -> IslandFortressObservation:
        engine = self._engine
        n = int(engine.n)
        if engine.is_terminal():
            seat = self._last_seat if self._last_seat >= 0 else 0
            returns = [float(r) for r in engine.returns()]
            return IslandFortressObservation(
                seat=seat,
                text=observation_text(engine, seat),
                current_player_id=-1,
                num_players=n,
                rewards=returns,
                done=True,
                reward=returns[seat],
            )
        seat = int(engine.current_player())
        return IslandFortressObservation(
            seat=seat,
            text=prompt(engine, seat),
            legal_moves=[move.text for move in legal_moves(engine)],
            current_player_id=seat,
            num_players=n,
            rewards=[0.0] * n,
            done=False,
            reward=0.0,
        )


class IslandFortressEnv(EnvClient[IslandFortressAction, IslandFortressObservation, IslandFortressState]):
    """OpenEnv's WebSocket client for the game (``EnvClient``): ``reset(players=, seed=,
    options=)``, ``step(IslandFortressAction(...))``, ``state()``."""

    def _step_payload(self, action: IslandFortressAction | Mapping[str, Any]) -> dict[str, Any]:
        """The action's fields; a mapping is sent as it is (the server validates it)."""
        if isinstance(action, Mapping):
            return dict(action)
        return action.model_dump(exclude={"metadata"}, exclude_none=True)

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[IslandFortressObservation]:
        fields = dict(payload.get("observation", {}))
        fields.pop("metadata", None)
        observation = IslandFortressObservation(
            **fields,
            done=payload.get("done", False),
            reward=payload.get("reward"),
            metadata=payload.get("metadata") or {},
        )
        return StepResult(
            observation=observation, reward=payload.get("reward"), done=payload.get("done", False)
        )

    def _parse_state(self, payload: dict[str, Any]) -> IslandFortressState:
        return IslandFortressState(**payload)


def make_app(
    players: int = 3,
    backend: str | None = None,
    options: Mapping[str, Any] | None = None,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    session_timeout_s: float | None = SESSION_TIMEOUT_S,
) -> Any:
    """OpenEnv's FastAPI app serving the game (``create_fastapi_app``): ``/ws`` for sessions,
    ``/reset``, ``/step``, ``/state``, ``/schema``, ``/health``. ``players``, ``backend`` and
    ``options`` are a reset's defaults; at most ``max_sessions`` games at once."""
    IslandFortressEnvironment(players, backend, options)  # a bad default fails here, once
    factory = functools.partial(IslandFortressEnvironment, players, backend, options)
    return create_fastapi_app(
        factory,
        IslandFortressAction,
        IslandFortressObservation,
        env_name=ENV_NAME,
        concurrency_config=ConcurrencyConfig(
            max_concurrent_envs=max_sessions, session_timeout=session_timeout_s
        ),
        state_cls=IslandFortressState,
    )


@contextlib.contextmanager
def serving(app: Any, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve ``app`` on uvicorn in a thread while the block runs; yields its base URL (``port`` 0:
    a free port the system picks). The server is stopped, and its thread joined, on the way out."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, name="openenv-server", daemon=True)
    thread.start()
    try:
        for _ in range(6000):  # up to a minute for the server to start
            if server.started or not thread.is_alive():
                break
            time.sleep(0.01)
        if not server.started:
            raise RuntimeError(f"the OpenEnv server did not start on {host}:{port}")
        bound = server.servers[0].sockets[0].getsockname()
        yield f"http://{host}:{bound[1]}"
    finally:
        server.should_exit = True
        thread.join()
