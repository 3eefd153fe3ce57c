"""The ASGI app (Starlette): the page, its assets, and the JSON API it plays through.

Pages (one HTML page, its views chosen by the path): ``/`` (start a game, open a record),
``/play/ID``, ``/watch/ID``, ``/replay/NAME?step=K&seat=S`` (a link to share), ``/leaderboard``.

API (JSON in and out; every refusal is a 4xx with ``{"error": "one sentence"}`` and changes
nothing; a request body is parsed with bounds on its size, nesting and numbers, ``web.jsontext``):

* ``GET /api/config``: the agents offered (and the named bot levels, ``web.levels``, with their
  ladder ratings), the checkpoints for analysis, the playouts and their default counts, the rules.
* ``POST /api/play`` {players, seat, opponents, [seed], [name]} and ``POST /api/watch`` {agents,
  [seed]}: a new game; the answer holds its ``id`` and ``token`` (send the token with every
  request on it). ``name``: the person's name for the people's ratings (``web.ratings``, checked
  there: a 400 for a bad one); the game is rated when it ends, and the answer that ends it
  carries ``person_rating``. ``GET /api/people?name=N``: that name checked, and its rating.
* ``GET /api/games/ID?token=T&since=K``: the position as the game's seat sees it, and the moves
  from K on (for the person also the recap since their last turn, warnings on the choices that
  lose something or end the game, notes on the decision, and the end screen once it is over).
  ``POST /api/games/ID/act`` {token, action, [seat]}: the person's choice.
  ``POST /api/games/ID/undo`` {token}: take back the person's last decision while no other seat
  has moved since (the game is replayed without it); the answer is the whole game again. A
  decision that drew favor cards from the deck or revealed the sealed bids stands (409; the
  game's answers then carry ``undo_refused``, the sentence why).
  ``POST /api/games/ID/advance`` {token, [moves]}: let the agents (and the person's forced moves)
  play, one move by default. These two refuse a key they do not read (400 naming it).
  ``POST /api/games/ID/analysis`` {token, steps, playout, rollouts} and
  ``GET /api/games/ID/policy?token=T&checkpoint=C``.
* ``GET /api/games/ID/public``: no token: the kind of game, whether it is over and its record's
  name once saved (a link to a game opened where its token is not known finds the replay).
* ``GET /api/records``, ``POST /api/records`` (upload a record), ``GET /api/records/NAME``,
  ``GET /api/records/NAME/steps/K?seat=S``, ``POST /api/records/NAME/analysis``,
  ``GET /api/records/NAME/policy?step=K&checkpoint=C``.
* ``GET /api/analysis/JOB``: an analysis's points so far. ``GET /api/leaderboard``.

Bots, replays and analyses run in worker threads, so the event loop keeps answering.

**Same origin only.** The API answers the server's own page, not another site's: a request to
``/api/`` whose ``Origin`` is not this server's (scheme and ``Host``), or whose
``Sec-Fetch-Site`` is ``cross-site`` or ``same-site`` (another port of the same host), is refused
with a 403, and a POST whose ``Content-Type`` is not ``application/json`` (or that names none)
with a 415. A page elsewhere can then neither read the
API nor make it act (a form or a ``text/plain`` post is what it could send without asking), and
the page (``static/api.js``) sends every body as ``application/json`` from its own origin.
Pages and their assets are answered to anyone (a shared ``/replay/...`` link opens from anywhere).
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from island_fortress_env.engine import actions as A
from island_fortress_env.engine.tables import PLAYER_COUNTS
from island_fortress_env.env.observation import ObservationEncoder
from island_fortress_env.env.records import printable
from island_fortress_env.players import AgentKind, check_agent_spec, make_agent, parse_agent_spec
from island_fortress_env.views import narrate
from island_fortress_env.views.rules_summary import rules_summary
from island_fortress_env.web.analysis import DEFAULT_ROLLOUTS, MAX_ROLLOUTS, PLAYOUTS, Analyst
from island_fortress_env.web.errors import (
    BadRequest,
    Forbidden,
    TooLarge,
    WebError,
    WrongMediaType,
    shown,
)
from island_fortress_env.web.games import MAX_GAMES as MAX_LIVE_GAMES
from island_fortress_env.web.games import MAX_MOVES_PER_REQUEST, GameTable, LiveGame, line_json
from island_fortress_env.web.jsontext import Answer, FileRefused, parse
from island_fortress_env.web.leaderboard import leaderboard
from island_fortress_env.web.levels import LADDER_SOURCE, named_levels, offered
from island_fortress_env.web.ratings import PeopleRatings, check_name
from island_fortress_env.web.seatview import positions, seat_view
from island_fortress_env.web.store import MAX_RECORD_BYTES, RecordStore

MAX_JSON_BYTES = 64 * 1024  # every request body but an uploaded record
INTEGER = re.compile(r"-?[0-9]{1,9}")  # a step, a seat, a count in a path or a query
OWN_SITE = ("same-origin", "none")  # Sec-Fetch-Site of the page's own requests (none: typed in)
STATIC = resources.files("island_fortress_env.web") / "static"
# Nothing is loaded from anywhere but this server; no inline script.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; "
    "script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def check_same_origin(request: Request) -> None:
    """Refuse a request another site's page makes (see the module doc): 403, or 415 for a
    body that is not JSON."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site.lower() not in OWN_SITE:
        raise Forbidden(f"the API answers this server's own page only; this request came from {shown(site)}")
    origin = request.headers.get("origin")
    if origin is not None:
        own = f"{request.url.scheme}://{request.headers.get('host', '')}"
        if origin.lower() != own.lower():
            raise Forbidden(
                f"the API answers this server's own page only ({shown(own)}), not {shown(origin)}"
            )
    if request.method not in ("GET", "HEAD"):
        media = request.headers.get("content-type")
        if media is None or media.partition(";")[0].strip().lower() != "application/json":
            sent = "without a Content-Type" if media is None else shown(media)
            raise WrongMediaType(f"the request body must be sent as application/json, not {sent}")


def api(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """``handler`` answering the server's own page only (``check_same_origin`` first)."""

    @functools.wraps(handler)
    async def guarded(request: Request) -> Response:
        check_same_origin(request)
        return await handler(request)

    return guarded


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused with a 413 beyond ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if (
        declared is not None
        and declared.isascii()
        and declared.isdigit()
        and (len(declared) > 18 or int(declared) > limit)
    ):
        size = int(declared) if len(declared) <= 18 else f"over {limit}"
        raise TooLarge(f"the request body is {size} bytes; at most {limit} are accepted")
    chunks = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise TooLarge(f"the request body is over {limit} bytes; at most {limit} are accepted")
            chunks.append(chunk)
    except ClientDisconnect:  # the client went away (or was cut off, too slow): nobody reads this
        raise BadRequest("the request body did not arrive in full") from None
    return b"".join(chunks)


async def read_json(request: Request) -> dict[str, Any]:
    body = await read_body(request, MAX_JSON_BYTES)
    try:
        data = parse(body or b"{}", MAX_JSON_BYTES)
    except FileRefused as exc:
        raise BadRequest(f"the request body {exc}") from None
    if not isinstance(data, dict):
        raise BadRequest("the request body must be a JSON object")
    return data


def known_keys(body: dict[str, Any], keys: tuple[str, ...], route: str) -> None:
    """Refuse a body with a key ``route`` does not read (a 400 naming them): a misspelt key would
    otherwise be dropped without a word and the request done as if it were absent."""
    unknown = sorted(set(body) - set(keys))
    if unknown:
        raise BadRequest(f"unknown keys {shown(unknown)} for {route}: it reads {', '.join(keys)}")


def bounded_int(text: str, name: str) -> int:
    """A step, seat or count from a path or a query: at most 9 digits, or a 400."""
    if not INTEGER.fullmatch(text):
        raise BadRequest(f"'{name}' must be an integer of at most 9 digits, not {shown(text)}")
    return int(text)


def int_param(request: Request, name: str, default: int | None = None) -> int | None:
    text = request.query_params.get(name)
    if text is None or text == "":
        return default
    return bounded_int(text, name)


def client_of(request: Request) -> str:
    """Who asks (an address), to share the analysis queue fairly."""
    return request.client.host if request.client is not None else ""


class WebApp:
    """The app's state: live games, the records directory, the analyst; and the handlers."""

    def __init__(self, agents: Sequence[str], games_dir: str | Path, levels: bool = True) -> None:
        for spec in agents:
            check_agent_spec(spec)
        self.agents = tuple(dict.fromkeys(agents))
        self.levels = offered(self.agents, named_levels(self.agents) if levels else [])
        self.store = RecordStore(games_dir)
        playable = tuple(entry["spec"] for entry in self.levels)
        self.games = GameTable(playable, lambda spec, seed: make_agent(spec, seed=seed), self.store)
        networks = (AgentKind.CHECKPOINT, AgentKind.ONNX)  # the agents that give top actions
        self.analyst = Analyst([s for s in self.agents if parse_agent_spec(s).kind in networks])
        self.index_html = (STATIC / "index.html").read_text("utf-8")
        self.people = PeopleRatings(self.store.root)
        self.named: dict[str, str] = {}  # live game id -> its person's name, until it is rated

    # ------------------------------------------------------------------ pages

    async def page(self, request: Request) -> Response:
        return HTMLResponse(self.index_html, headers=SECURITY_HEADERS)

    async def config(self, request: Request) -> Response:
        return Answer(
            {
                "agents": list(self.agents),
                "levels": self.levels,
                "ladder": LADDER_SOURCE,
                "checkpoints": list(self.analyst.checkpoints),
                "players": list(PLAYER_COUNTS),
                "playouts": list(PLAYOUTS),
                "rollouts": DEFAULT_ROLLOUTS,
                "max_rollouts": MAX_ROLLOUTS,
                "marks": narrate.MARKS,
                "roles": list(A.ROLE_NAMES),
                "ops": [
                    {"op": op, "card": A.OP_CARD[op], "letter": A.OP_LETTER[op], "name": A.OP_NAMES[op]}
                    for op in range(A.NUM_OPS)
                ],
                "rules": [{"title": s.title, "lines": list(s.lines)} for s in rules_summary()],
            }
        )

    # ------------------------------------------------------------------ live games

    def _game(self, request: Request, token: Any) -> LiveGame:
        return self.games.get(request.path_params["game_id"], token)

    async def create(self, request: Request) -> Response:
        kind = request.url.path.rsplit("/", 1)[-1]
        body = await read_json(request)
        name = body.pop("name", None)
        if name is not None:
            if kind != "play":
                raise BadRequest("'name' is for a game a person plays (/api/play): agents are not rated")
            name = check_name(name)
        game = await run_in_threadpool(self.games.create, kind, body)
        if name is not None:
            self.named[game.id] = name
            while len(self.named) > 4 * MAX_LIVE_GAMES:  # games replaced unfinished are never rated
                del self.named[next(iter(self.named))]
        out = game.snapshot(since=0)
        out["token"] = game.token
        return Answer(out, status_code=201)

    async def game_state(self, request: Request) -> Response:
        game = self._game(request, request.query_params.get("token"))
        game.check_seat(int_param(request, "seat"))
        since = int_param(request, "since", 0)
        assert since is not None
        if since < 0:
            raise BadRequest("'since' must be >= 0")

        def work() -> dict[str, Any]:
            with game.lock:
                return game.snapshot(since=min(since, len(game.actions)))

        return Answer(await run_in_threadpool(work))

    async def act(self, request: Request) -> Response:
        body = await read_json(request)
        game = self._game(request, body.get("token"))
        game.check_seat(body.get("seat"))

        def work() -> dict[str, Any]:
            with game.lock:
                before = len(game.actions)
                game.act(body.get("action"))
                self.games.finish(game)
                return self._rated(game, game.snapshot(since=before))

        return Answer(await run_in_threadpool(work))

    async def undo(self, request: Request) -> Response:
        body = await read_json(request)
        known_keys(body, ("token",), "an undo")
        game = self._game(request, body.get("token"))

        def work() -> dict[str, Any]:
            with game.lock:
                step = game.undo()
                out = game.snapshot(since=0)
                out["undone"] = step
                return out

        return Answer(await run_in_threadpool(work))

    def _rated(self, game: LiveGame, out: dict[str, Any]) -> dict[str, Any]:
        """``out``, with the person's new rating when this answer ends their named game."""
        name = self.named.pop(game.id, None) if game.over else None
        if name is not None and game.seat is not None:
            out["person_rating"] = self.people.rate(
                name, game.specs, game.seat, game.state, game.seed, len(game.actions)
            )
        return out

    async def people_rating(self, request: Request) -> Response:
        name = check_name(request.query_params.get("name"))
        return Answer({"name": name, "rating": await run_in_threadpool(self.people.person, name)})

    async def public(self, request: Request) -> Response:
        """What anyone with a game's link may know of it (no token): its kind, whether it is
        over, and its record once saved (a public file of the games directory)."""
        game = self.games.peek(request.path_params["game_id"])
        return Answer({"id": game.id, "kind": game.kind, "over": game.over, "record": game.record_name})

    async def advance(self, request: Request) -> Response:
        body = await read_json(request)
        known_keys(body, ("token", "moves"), "an advance")
        game = self._game(request, body.get("token"))
        limit = body.get("moves", 1)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_MOVES_PER_REQUEST:
            raise BadRequest(f"'moves' must be an integer 1..{MAX_MOVES_PER_REQUEST}, not {shown(limit)}")

        def work() -> dict[str, Any]:
            with game.lock:
                before = len(game.actions)
                game.advance(limit)
                self.games.finish(game)
                return self._rated(game, game.snapshot(since=before))

        return Answer(await run_in_threadpool(work))

    async def game_analysis(self, request: Request) -> Response:
        body = await read_json(request)
        game = self._game(request, body.get("token"))
        with game.lock:
            history = list(game.history)
            taken = list(game.actions)
            generation = game.generation
        job = self.analyst.start(
            f"game:{game.id}:{generation}",
            history,
            body.get("steps"),
            game.seat,
            body.get("playout"),
            body.get("rollouts"),
            client_of(request),
            actions=taken,
            names=game.names,
        )
        return Answer(job.to_json(), status_code=202)

    async def game_policy(self, request: Request) -> Response:
        game = self._game(request, request.query_params.get("token"))
        checkpoint = request.query_params.get("checkpoint")

        def work() -> dict[str, Any]:
            with game.lock:
                state = game.state.clone()
            if state.is_terminal():
                return {"step": len(game.actions), "seat": None, "actions": []}
            mover = state.current_player()
            if game.seat is not None and mover != game.seat:
                raise Forbidden("the checkpoint's view of another seat's move would show that seat's hand")
            actions = self.analyst.top_actions(checkpoint, state, game.encoder)
            return {
                "step": len(game.history) - 1,
                "seat": mover,
                "checkpoint": checkpoint,
                "actions": actions,
            }

        return Answer(await run_in_threadpool(work))

    # ------------------------------------------------------------------ records

    async def records(self, request: Request) -> Response:
        return Answer(await run_in_threadpool(self.store.list))

    async def upload(self, request: Request) -> Response:
        data = await read_body(request, MAX_RECORD_BYTES)
        name = await run_in_threadpool(self.store.upload, data)
        return Answer({"name": name}, status_code=201)

    def _viewer(self, request: Request, players: int) -> int | None:
        seat = int_param(request, "seat")
        if seat is not None and not 0 <= seat < players:
            raise BadRequest(f"'seat' must be 0..{players - 1} or absent (every hand shown), not {seat}")
        return seat

    async def record(self, request: Request) -> Response:
        replay = await run_in_threadpool(self.store.open, request.path_params["name"])
        seat = self._viewer(request, replay.record.num_players)
        moves = [
            replay.moves[i] if seat is None or seat == s.current_player() else replay.public[i]
            for i, s in enumerate(replay.states[:-1])
        ]
        return Answer(
            {
                "name": replay.name,
                "players": replay.record.num_players,
                "agents": list(replay.names),
                "scores": list(replay.record.scores),
                "winners": list(replay.record.winners),
                "rules": replay.record.rules,
                "total": replay.total,
                "positions": positions(replay.states),
                "moves": moves,
                "lines": [[line_json(line) for line in step] for step in replay.lines],
            }
        )

    async def record_step(self, request: Request) -> Response:
        replay = await run_in_threadpool(self.store.open, request.path_params["name"])
        seat = self._viewer(request, replay.record.num_players)
        step = bounded_int(request.path_params["step"], "step")
        if not 0 <= step <= replay.total:
            raise BadRequest(f"step {step} is not in this game (0..{replay.total})")
        view = await run_in_threadpool(seat_view, replay.states[step], seat, replay.names, False)
        return Answer({"step": step, "total": replay.total, "view": view})

    async def record_analysis(self, request: Request) -> Response:
        body = await read_json(request)
        replay = await run_in_threadpool(self.store.open, request.path_params["name"])
        seat = body.get("seat")
        if seat is not None and (
            isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < replay.record.num_players
        ):
            raise BadRequest(f"'seat' must be 0..{replay.record.num_players - 1} or null, not {shown(seat)}")
        job = self.analyst.start(
            f"record:{replay.name}:{hash((replay.record.seed, replay.record.actions))}",
            replay.states,
            body.get("steps"),
            seat,
            body.get("playout"),
            body.get("rollouts"),
            client_of(request),
            actions=replay.record.actions,
            names=replay.names,
        )
        return Answer(job.to_json(), status_code=202)

    async def record_policy(self, request: Request) -> Response:
        replay = await run_in_threadpool(self.store.open, request.path_params["name"])
        step = int_param(request, "step", 0)
        assert step is not None
        if not 0 <= step <= replay.total:
            raise BadRequest(f"step {step} is not in this game (0..{replay.total})")
        state = replay.states[step]
        checkpoint = request.query_params.get("checkpoint")
        if state.is_terminal():
            return Answer({"step": step, "seat": None, "actions": []})
        encoder = ObservationEncoder(state.game)
        actions = await run_in_threadpool(self.analyst.top_actions, checkpoint, state, encoder)
        chosen = replay.record.actions[step] if step < replay.total else None
        return Answer(
            {
                "step": step,
                "seat": state.current_player(),
                "checkpoint": checkpoint,
                "actions": actions,
                "chosen": chosen,
            }
        )

    async def analysis(self, request: Request) -> Response:
        return Answer(self.analyst.get(request.path_params["job"]).to_json())

    async def leaderboard(self, request: Request) -> Response:
        return Answer(await run_in_threadpool(leaderboard, self.store.root))

    def routes(self) -> list[Route | Mount]:
        return [
            Route("/", self.page),
            Route("/play/{game_id}", self.page),
            Route("/watch/{game_id}", self.page),
            Route("/replay/{name}", self.page),
            Route("/leaderboard", self.page),
            Route("/api/config", api(self.config)),
            Route("/api/play", api(self.create), methods=["POST"]),
            Route("/api/watch", api(self.create), methods=["POST"]),
            Route("/api/games/{game_id}", api(self.game_state)),
            Route("/api/games/{game_id}/act", api(self.act), methods=["POST"]),
            Route("/api/games/{game_id}/advance", api(self.advance), methods=["POST"]),
            Route("/api/games/{game_id}/undo", api(self.undo), methods=["POST"]),
            Route("/api/games/{game_id}/public", api(self.public)),
            Route("/api/games/{game_id}/analysis", api(self.game_analysis), methods=["POST"]),
            Route("/api/games/{game_id}/policy", api(self.game_policy)),
            Route("/api/records", api(self.records)),
            Route("/api/records", api(self.upload), methods=["POST"]),
            Route("/api/records/{name}", api(self.record)),
            Route("/api/records/{name}/steps/{step}", api(self.record_step)),
            Route("/api/records/{name}/analysis", api(self.record_analysis), methods=["POST"]),
            Route("/api/records/{name}/policy", api(self.record_policy)),
            Route("/api/analysis/{job}", api(self.analysis)),
            Route("/api/leaderboard", api(self.leaderboard)),
            Route("/api/people", api(self.people_rating)),
            Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
        ]


async def _web_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, WebError)
    return Answer({"error": printable(exc.message)}, status_code=exc.status)


NOT_FOUND_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Not found - Island Fortress</title><link rel="stylesheet" href="/static/style.css"></head>
<body><header class="top"><a class="brand" href="/">Island Fortress</a></header>
<main><section class="card failure" id="not-found"><h2>There is no page here</h2>
<p>Nothing is at <code>{path}</code> on this server.</p>
<p><a href="/">Back to the start page</a>: play, watch, replay. The leaderboard is at
<a href="/leaderboard">/leaderboard</a>.</p></section></main></body></html>
"""


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return Answer({"error": printable(exc.detail)}, status_code=exc.status_code, headers=exc.headers)


async def _page_or_http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404 and not request.url.path.startswith("/api/"):
        # A page route that does not exist: a page saying so, not JSON (the API stays JSON).
        page = NOT_FOUND_PAGE.format(path=html.escape(printable(request.url.path)[:200]))
        return HTMLResponse(page, status_code=404, headers=SECURITY_HEADERS)
    return await _http_error(request, exc)


# Every error of the bot server (web/bots.py) is one JSON object with a sentence; so is every error
# of the app's API, and an unknown page of the app is a page saying so.
ERROR_HANDLERS: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
    WebError: _web_error,
    HTTPException: _http_error,
}
APP_ERROR_HANDLERS = {**ERROR_HANDLERS, HTTPException: _page_or_http_error}


def create_app(
    agents: Sequence[str] = ("random", "heuristic"),
    games_dir: str | Path = "games",
    allowed_hosts: Sequence[str] | None = None,
    levels: bool = True,
) -> Starlette:
    """The app: ``agents`` are the agent specs offered for the seats (checked now), and with
    ``levels`` the named bot levels that can be played here (``web.levels``); records are read
    from and saved to ``games_dir`` (created if missing). ``allowed_hosts``: the Host headers
    answered (the server's own names; None answers any)."""
    web = WebApp(agents, games_dir, levels)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        web.analyst.close()

    middleware = []
    if allowed_hosts is not None:
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts)))
    app = Starlette(
        routes=web.routes(), exception_handlers=APP_ERROR_HANDLERS, middleware=middleware, lifespan=lifespan
    )
    app.state.web = web
    return app
