"""``island-fortress bot-serve AGENT``: any agent spec served as a bot over HTTP, the protocol of
``remote:URL`` (docs/BOT-PROTOCOL.md; the client is ``players.remote``).

* ``GET /``: ``{"protocol": 1, "agent": LABEL}`` (a checkpoint by its file's name).
* ``POST /`` with a decision (``players.remote.decision_request``): ``{"action": ID}``.

The server never sees what the seat may not: it rebuilds a position from the seat's information
set in the request (``engine.infoset.rebuild``: the other hands, the deck and the sealed bids
dealt again from a seed of the game id, seat and decision number), checks it against the rest of
the request (the same legal actions, and the very view the request carries, drawn again from the
rebuilt position), and asks its agent. The agent of a game's seat is kept from the seat's first
decision (number 0, when it is made with the request's ``seed``, as a command seeds a local
agent) to its last, so that its draws run on as they would in one process: a decision must
follow the one before (a repeated number is answered again as before, so a client may retry).
At most ``MAX_SESSIONS`` seats of games are kept: a new game beyond them takes the place of the
least recently asked seat only if nobody has asked for it in ``IDLE_SECONDS``, else it is refused
(429), so nobody's decision-0 requests end a game in play. An agent of an ``onnx:FILE`` shares one
onnxruntime session of the file's content with every other game (``agents.onnx_agent``).

Every bad request is one 4xx with ``{"error": "one sentence"}``: a body over
``MAX_REQUEST_BYTES`` or not parsed by the bounded parser, not ``application/json``, a protocol
other than 1, fields that describe no position (every number within what a game of the rules can
hold, ``infoset.rebuild``; the legal ids, at most ``NUM_ACTIONS`` of them, in the action table,
checked before the position is rebuilt), a decision out of order, a new game when every seat
kept is in play (429). An agent that fails is one 500 and one line in the server's log. Requests
from a web page (an ``Origin`` header, or ``Sec-Fetch-Site`` other than ``none``) are refused
(403): the server is for programs. It runs on the web app's serving stack (``web.serving``:
uvicorn's h11 with deadlines and a connection limit); on a loopback address, a request naming
another host is refused (no DNS rebinding), and another address needs ``allow_remote``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from island_fortress_env.engine import infoset
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.engine.config import ConfigError, GameConfig
from island_fortress_env.engine.game import Game
from island_fortress_env.engine.state import State
from island_fortress_env.env.observation import ObservationEncoder, action_mask
from island_fortress_env.env.records import printable
from island_fortress_env.players import Agent, check_agent_spec, make_agent
from island_fortress_env.players.remote import PROTOCOL
from island_fortress_env.views.seatview import seat_view
from island_fortress_env.web.app import ERROR_HANDLERS, read_body
from island_fortress_env.web.errors import (
    BadRequest,
    Conflict,
    Forbidden,
    TooMany,
    WebError,
    WrongMediaType,
    shown,
)
from island_fortress_env.web.jsontext import Answer, FileRefused, parse

MAX_REQUEST_BYTES = 256 * 1024  # a decision's JSON is 10-30 KB
MAX_SESSIONS = 256  # seats of games whose agents are kept
IDLE_SECONDS = 10 * 60  # a seat unasked this long may make room for a new game
MAX_GAMES = 32  # rule sets whose games are kept
GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
REQUEST_KEYS = frozenset({"protocol", "game", "seat", "decision", "seed", "rules", "legal", "view", "state"})
LOOPBACK = ("127.0.0.1", "localhost", "::1")
DEFAULT_PORT = 8765

logger = logging.getLogger("uvicorn.error")


class AgentFailed(WebError):
    """The agent raised on a position that passed every check (a bug of the agent's)."""

    status = 500


@dataclass(frozen=True)
class DecisionRequest:
    """A decision request, checked: ``state`` is the rebuilt position, ``legal`` its actions."""

    game: str
    seat: int
    decision: int
    seed: int | None
    state: State
    encoder: ObservationEncoder


@dataclass
class Session:
    """The agent of one seat of one game, and where its decisions are."""

    agent: Agent
    following: int = 0  # the decision number expected next
    last: tuple[int, int] | None = None  # (decision number, action) of the last answer
    lock: threading.Lock = field(default_factory=threading.Lock)
    asked: float = 0.0  # when the seat was last asked (the server's clock)


def _integer(data: Mapping[str, Any], name: str, low: int, high: int, optional: bool = False) -> Any:
    value = data.get(name)
    if optional and value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadRequest(f"'{name}' must be an integer {low}..{high}, not {shown(value)}")
    return value


class BotServer:
    """The bot's state (its agent spec, the games by rules, the sessions) and its handlers."""

    def __init__(
        self,
        spec: str,
        make: Callable[[str, int | None], Agent] = make_agent,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.spec = check_agent_spec(spec)
        self.make = make
        self.clock = clock
        self.sessions: OrderedDict[tuple[str, int], Session] = OrderedDict()
        self.games: OrderedDict[str, tuple[Game, ObservationEncoder]] = OrderedDict()
        self.lock = threading.Lock()

    # ------------------------------------------------------------------ reading a request

    def _game(self, rules: Any) -> tuple[Game, ObservationEncoder]:
        if not isinstance(rules, dict):
            raise BadRequest("'rules' must be an object of the game's options")
        if "favor_deck" in rules:
            raise BadRequest("'rules' may not name a favor deck file: a bot plays the shipped deck")
        key = json.dumps(rules, sort_keys=True)
        with self.lock:
            found = self.games.get(key)
            if found is not None:
                self.games.move_to_end(key)
                return found
        try:
            game = Game(GameConfig.from_dict(rules))
        except (ConfigError, TypeError) as exc:
            raise BadRequest(f"'rules': {printable(exc)}") from None
        made = (game, ObservationEncoder(game))
        with self.lock:
            self.games[key] = made
            while len(self.games) > MAX_GAMES:
                self.games.popitem(last=False)
        return made

    def read(self, data: Any) -> DecisionRequest:
        """The request ``data`` (parsed JSON), checked, with its position rebuilt (module doc)."""
        if not isinstance(data, dict):
            raise BadRequest("the request body must be a JSON object")
        unknown = sorted(set(data) - REQUEST_KEYS)
        if unknown:
            raise BadRequest(
                f"unknown fields {shown(unknown)}; a decision has {', '.join(sorted(REQUEST_KEYS))}"
            )
        if data.get("protocol") != PROTOCOL:
            raise BadRequest(
                f"'protocol' must be {PROTOCOL}, which this bot speaks, not {shown(data.get('protocol'))}"
            )
        game_id = data.get("game")
        if not isinstance(game_id, str) or not GAME_ID.fullmatch(game_id):
            raise BadRequest(f"'game' must be an id of 1-64 letters, digits, - and _, not {shown(game_id)}")
        game, encoder = self._game(data.get("rules"))
        seat = _integer(data, "seat", 0, game.num_players - 1)
        decision = _integer(data, "decision", 0, 10**9)
        seed = _integer(data, "seed", 0, 2**64 - 1, optional=True)
        legal = _legal_ids(data.get("legal"))
        view = data.get("view")
        players = view.get("players") if isinstance(view, dict) else None
        if not isinstance(players, list) or len(players) != game.num_players:
            raise BadRequest(f"'view' must be the seat's view, with its {game.num_players} players")
        names = []
        for player in players:
            name = player.get("name") if isinstance(player, dict) else None
            if not isinstance(name, str):
                raise BadRequest("'view' must name every player")
            names.append(name)
        digest = hashlib.sha256(f"{game_id}/{seat}/{decision}/{seed}".encode()).digest()
        try:
            state = infoset.rebuild(game, data.get("state"), seat, int.from_bytes(digest[:8], "little"))
        except infoset.InfosetError as exc:
            raise BadRequest(f"'state': {printable(exc)}") from None
        if state.current_player() != seat:
            raise BadRequest(
                f"seat {seat} is not to move in this position (seat {state.current_player()} is)"
            )
        try:
            actions = state.legal_actions()
            shown_view = json.loads(json.dumps(seat_view(state, seat, names)))
        except Exception as exc:  # a position the checks above let through, that the rules cannot play
            raise BadRequest(
                f"'state' describes no position the rules can play ({type(exc).__name__})"
            ) from None
        if legal != list(actions):
            raise BadRequest("'legal' are not the legal actions of the position 'state' describes")
        if shown_view != view:
            raise BadRequest("'view' is not the view of the position 'state' describes")
        return DecisionRequest(game_id, seat, decision, seed, state, encoder)

    # ------------------------------------------------------------------ deciding

    def _session(self, request: DecisionRequest) -> tuple[Session, int | None]:
        """The session that answers ``request``, and the action to answer again if it is a
        repeat of the last one."""
        key = (request.game, request.seat)
        with self.lock:
            now = self.clock()
            session = self.sessions.get(key)
            if session is not None:
                self.sessions.move_to_end(key)
                session.asked = now
                if session.last is not None and session.last[0] == request.decision:
                    return session, session.last[1]
            if request.decision == 0 and (session is None or session.following != 0):  # a new game
                if session is None:
                    self._make_room(now)
                session = Session(self.make(self.spec.text, request.seed), asked=now)
                self.sessions[key] = session
                return session, None
            if session is None:
                raise Conflict(
                    f"this bot holds no game {request.game} seat {request.seat}: its decision 0 never came, "
                    f"or the bot let it go (a seat unasked for {IDLE_SECONDS // 60} minutes may make room "
                    "for a new game)"
                )
            if request.decision != session.following:
                raise Conflict(
                    f"decision {request.decision} of game {request.game} seat {request.seat} is out of "
                    f"order: {session.following} comes next"
                )
            return session, None

    def _make_room(self, now: float) -> None:
        """Room for one more seat (under ``self.lock``): the least recently asked seat is let go
        if it has been left ``IDLE_SECONDS``; a 429 if every seat kept is in play (module doc)."""
        if len(self.sessions) < MAX_SESSIONS:
            return
        oldest = next(iter(self.sessions.values()))  # the least recently asked: the order is by asking
        if now - oldest.asked < IDLE_SECONDS:
            raise TooMany(
                f"this bot plays {MAX_SESSIONS} seats of games now; try again when one has been left "
                f"for {IDLE_SECONDS // 60} minutes"
            )
        self.sessions.popitem(last=False)

    def answer(self, data: Any) -> int:
        """The action for the request ``data`` (parsed JSON): ``read``, then ``decide``."""
        return self.decide(self.read(data))

    def decide(self, request: DecisionRequest) -> int:
        session, again = self._session(request)
        if again is not None:
            return again
        state, seat = request.state, request.seat
        with session.lock:
            if session.last is not None and session.last[0] == request.decision:
                return session.last[1]
            try:
                observation = request.encoder.encode(state, seat)
                action = int(session.agent.act(observation, action_mask(state), state))
            except Exception as exc:
                logger.error(  # one line: the position came from a client, its traceback tells nothing
                    "agent %s failed on game %s seat %s decision %s: %s",
                    self.spec.text,
                    request.game,
                    seat,
                    request.decision,
                    _one_line(exc),
                )
                raise AgentFailed(f"the agent failed on this position ({type(exc).__name__})") from None
            if action not in state.legal_actions():
                raise AgentFailed(f"the agent chose action {action}, which is not legal")
            session.following, session.last = request.decision + 1, (request.decision, action)
        return action

    # ------------------------------------------------------------------ the handlers

    async def info(self, request: Request) -> Response:
        _refuse_pages(request)
        return Answer({"protocol": PROTOCOL, "agent": self.spec.label})

    async def act(self, request: Request) -> Response:
        _refuse_pages(request)
        media = request.headers.get("content-type")
        if media is None or media.partition(";")[0].strip().lower() != "application/json":
            sent = "without a Content-Type" if media is None else shown(media)
            raise WrongMediaType(f"a decision must be sent as application/json, not {sent}")
        body = await read_body(request, MAX_REQUEST_BYTES)
        try:
            data = parse(body, MAX_REQUEST_BYTES)
        except FileRefused as exc:
            raise BadRequest(f"the request body {exc}") from None
        return Answer({"action": await run_in_threadpool(self.answer, data)})


def _legal_ids(legal: Any) -> list[int]:
    """The ids of a request's ``legal`` actions, each checked against the action table (and at
    most ``NUM_ACTIONS`` of them, ascending) before any position is rebuilt from the request."""
    if not isinstance(legal, list) or not all(
        isinstance(a, dict) and not isinstance(a.get("id"), bool) and isinstance(a.get("id"), int)
        for a in legal
    ):
        raise BadRequest("'legal' must list the legal actions as objects with an integer 'id'")
    if not 0 < len(legal) <= NUM_ACTIONS:
        raise BadRequest(f"'legal' must list 1..{NUM_ACTIONS} actions, not {len(legal)}")
    ids = [a["id"] for a in legal]
    if not all(0 <= i < NUM_ACTIONS for i in ids):
        wrong = next(i for i in ids if not 0 <= i < NUM_ACTIONS)
        raise BadRequest(
            f"'legal' names action {shown(wrong)}, outside the action table 0..{NUM_ACTIONS - 1}"
        )
    if any(a >= b for a, b in itertools.pairwise(ids)):
        raise BadRequest("'legal' must list distinct action ids in ascending order")
    return ids


def _one_line(exc: BaseException) -> str:
    """An agent's error for the log: its type and first line, at most 200 characters, printable."""
    lines = str(exc).strip().splitlines()
    return printable(f"{type(exc).__name__}: {lines[0] if lines else ''}")[:200]


def _refuse_pages(request: Request) -> None:
    """A web page's request (module doc) is a 403: the bot answers programs."""
    site = request.headers.get("sec-fetch-site")
    if request.headers.get("origin") is not None or (site is not None and site.lower() != "none"):
        raise Forbidden("this bot answers programs, not web pages (the request has an Origin)")


def create_bot_app(spec: str, allowed_hosts: list[str] | None = None) -> Starlette:
    """The bot's ASGI app for agent ``spec`` (checked now); ``allowed_hosts``: the Host headers
    answered (None answers any)."""
    bot = BotServer(spec)
    middleware = []
    if allowed_hosts is not None:
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts))
    app = Starlette(
        routes=[Route("/", bot.info, methods=["GET"]), Route("/", bot.act, methods=["POST"])],
        exception_handlers=ERROR_HANDLERS,
        middleware=middleware,
    )
    app.state.bot = bot
    return app


def url_of(host: str, port: int) -> str:
    shown_host = f"[{host}]" if ":" in host else host
    return f"http://{shown_host}:{port}/"


def bot_server(
    spec: str, host: str = "127.0.0.1", port: int = DEFAULT_PORT, allow_remote: bool = False
) -> Any:
    """A uvicorn server of the bot (``web.serving``'s limits) and its listening socket, bound
    now (port 0: a free one). A host that is not a loopback address needs ``allow_remote``
    (``ValueError`` otherwise)."""
    import uvicorn

    from island_fortress_env.web.serving import server_config

    if host not in LOOPBACK and not allow_remote:
        raise ValueError(
            f"--host {host} is not a loopback address: whoever reaches it could use the bot; "
            "add --allow-remote to serve it there"
        )
    allowed = [*LOOPBACK, "[::1]"] if host in LOOPBACK else None
    config = server_config(create_bot_app(spec, allowed), host, port)
    sock = config.bind_socket()
    sock.listen(config.backlog)  # clients may connect now: they are answered once the server runs
    return uvicorn.Server(config), sock


def bot_serve(
    spec: str, host: str = "127.0.0.1", port: int = DEFAULT_PORT, allow_remote: bool = False
) -> None:
    """Serve agent ``spec`` as a bot until interrupted (module doc)."""
    server, sock = bot_server(spec, host, port, allow_remote)
    url = url_of(host, sock.getsockname()[1])
    print(f"bot {spec} serves protocol {PROTOCOL} at {url}", flush=True)
    print(f"play it as the agent remote:{url}  (Ctrl+C stops)", flush=True)
    server.run(sockets=[sock])
