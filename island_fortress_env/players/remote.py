"""A remote agent (``remote:URL``): a bot served over HTTP, asked for each decision of its seat.

The protocol (docs/BOT-PROTOCOL.md, version ``PROTOCOL``): ``GET URL`` answers
``{"protocol": 1, ...}`` (checked when the spec is, before any game starts), and each decision is
a ``POST URL`` of ``decision_request``'s JSON, answered ``{"action": ID}``. The request holds
only what the seat may see: the browser's view of the seat (``views.seatview``), the legal
actions with their words, the seat's information set field by field (``engine.infoset``, from
which a server running this engine rebuilds a position), the table's rules, and the game id,
seat, the seat's decision number and a seed for the game drawn from the operating system
(``players.seeds.bot_seed``: a function of nothing the run knows, so it tells the bot nothing of
the deal; the seat's own seed, the run's, stays here and seeds the fallback).

``RemoteAgent`` plays through its own small HTTP/1.1 client (``HttpClient``) because a bot must
never hang a game: each request has one deadline, ``timeout`` seconds from connecting to the last
byte of the answer (``http.client``'s timeout bounds each socket operation, so a bot that sends
a byte every few seconds would hold it for ever), and an answer is read to at most
``MAX_ANSWER_BYTES``, parsed by the bounded parser (``engine.files``). A kept-alive connection
that the server has closed meanwhile is opened again once, as HTTP clients do (the server
answers a repeated decision number with the answer it gave). Any other failure (no answer in
time, a refused connection, an HTTP error, an answer that is not ``{"action": ID}`` with a legal
ID) is one ``RemoteAgentError`` naming the URL and the seat; with a ``fallback`` agent, that
agent plays the seat for the rest of the game instead (a warning says so). So is a bot that has
spent its game's time: its requests of one game may take ``game_timeout`` seconds together (each
one's deadline is the less of ``timeout`` and what is left), so a bot answering just inside its
deadline cannot stretch a game to hours.
"""

from __future__ import annotations

import json
import logging
import secrets
import socket
import ssl
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from island_fortress_env.agents.base import Agent
from island_fortress_env.engine import infoset
from island_fortress_env.engine.files import FileRefused, decode, parse_json, printable
from island_fortress_env.players.seeds import bot_seed
from island_fortress_env.players.specs import AgentSpecError, RemoteTarget
from island_fortress_env.views.narrate import action_words

PROTOCOL = 1
MAX_ANSWER_BYTES = 64 * 1024
MAX_HEAD_BYTES = 16 * 1024  # the status line and headers of an answer
MAX_HEADERS = 100
USER_AGENT = f"island-fortress-remote/{PROTOCOL}"
JSON = "application/json"

logger = logging.getLogger(__name__)


class RemoteAgentError(AgentSpecError):
    """A remote agent that did not answer as the protocol says (one sentence naming its URL and
    seat). An ``AgentSpecError``: every command reports it as an agent it cannot play, in one
    line (exit status 2)."""


def seat_names(n: int) -> tuple[str, ...]:
    """The seats' names in a bot's view: PettingZoo's agent names, ``player_0`` ..."""
    return tuple(f"player_{p}" for p in range(n))


def decision_request(state: Any, seat: int, game: str, decision: int, seed: int | None) -> dict[str, Any]:
    """The JSON a bot is sent for ``seat``'s decision ``decision`` (its requests in game
    ``game`` so far) at ``state`` (an engine ``State`` or a core ``CoreState``), its agent seeded
    ``seed`` for the game (docs/BOT-PROTOCOL.md)."""
    from island_fortress_env.views.seatview import seat_view  # Pillow's: imported when a bot plays

    rules = {"num_players": state.n, **state.game.config.variants}
    if rules.get("favor_deck") is not None:
        raise RemoteAgentError("a remote agent plays the shipped favor deck only, not a favor_deck file")
    return {
        "protocol": PROTOCOL,
        "game": game,
        "seat": seat,
        "decision": decision,
        "seed": seed,
        "rules": rules,
        "legal": [{"id": int(a), "text": action_words(state, a)} for a in state.legal_actions()],
        "view": seat_view(state, seat, seat_names(state.n)),
        "state": infoset.seat_fields(state, seat),
    }


# --------------------------------------------------------------------------- HTTP


class HttpFailure(Exception):
    """A request that got no usable answer; the text says why in a phrase."""


class _Stale(HttpFailure):
    """A kept-alive connection that the server had closed before the request."""


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    headers: dict[str, str]
    body: bytes


class HttpClient:
    """HTTP/1.1 to one URL with a deadline per request and a bound on the answer (module doc);
    one kept-alive connection. Not for several threads at once."""

    def __init__(self, url: str) -> None:
        split = urllib.parse.urlsplit(url)
        self.tls = split.scheme == "https"
        self.host = split.hostname or ""
        self.port = split.port or (443 if self.tls else 80)
        self.target = (split.path or "/") + (f"?{split.query}" if split.query else "")
        self.authority = split.netloc
        self._sock: socket.socket | None = None
        self._buffer = b""

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
        self._sock, self._buffer = None, b""

    def request(self, method: str, body: bytes | None, timeout: float) -> HttpAnswer:
        """``method`` on the URL with a JSON ``body``; the answer within ``timeout`` seconds, or
        ``HttpFailure`` (``TimeoutError`` past the deadline)."""
        deadline = time.monotonic() + timeout
        try:
            try:
                return self._exchange(method, body, deadline)
            except _Stale:
                self.close()
                return self._exchange(method, body, deadline)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ one exchange

    def _left(self, deadline: float) -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        return left

    def _connect(self, deadline: float) -> socket.socket:
        sock = socket.create_connection((self.host, self.port), timeout=self._left(deadline))
        if self.tls:
            sock.settimeout(self._left(deadline))
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=self.host)
        return sock

    def _exchange(self, method: str, body: bytes | None, deadline: float) -> HttpAnswer:
        kept = self._sock is not None
        if self._sock is None:
            self._sock = self._connect(deadline)
        head = [
            f"{method} {self.target} HTTP/1.1",
            f"Host: {self.authority}",
            f"User-Agent: {USER_AGENT}",
            f"Accept: {JSON}",
        ]
        if body is not None:
            head += [f"Content-Type: {JSON}", f"Content-Length: {len(body)}"]
        data = ("\r\n".join(head) + "\r\n\r\n").encode("ascii") + (body or b"")
        try:
            self._sock.settimeout(self._left(deadline))
            self._sock.sendall(data)
            status, headers = self._head(deadline)
        except (ConnectionResetError, BrokenPipeError, _Stale):
            if kept and not self._buffer:  # closed while kept: ``request`` opens a new one
                raise _Stale("the connection was closed") from None
            raise HttpFailure("closed the connection without an answer") from None
        while status == 100:  # an interim answer before the real one
            status, headers = self._head(deadline)
        answer = HttpAnswer(status, headers, self._body(headers, deadline))
        if headers.get("connection", "").lower() == "close":
            self.close()
        return answer

    def _recv(self, deadline: float) -> bytes:
        assert self._sock is not None
        self._sock.settimeout(self._left(deadline))
        chunk = self._sock.recv(65536)
        if not chunk:
            raise _Stale("the server closed the connection")
        return chunk

    def _until(self, marker: bytes, limit: int, deadline: float, what: str) -> bytes:
        """The buffered bytes up to ``marker`` (removed), at most ``limit`` of them."""
        while marker not in self._buffer:
            if len(self._buffer) > limit:
                raise HttpFailure(f"sent {what} of more than {limit} bytes")
            try:
                self._buffer += self._recv(deadline)
            except _Stale:
                if self._buffer:
                    raise HttpFailure("closed the connection in the middle of its answer") from None
                raise
        found, _, self._buffer = self._buffer.partition(marker)
        if len(found) > limit:
            raise HttpFailure(f"sent {what} of more than {limit} bytes")
        return found

    def _exactly(self, size: int, deadline: float) -> bytes:
        while len(self._buffer) < size:
            try:
                self._buffer += self._recv(deadline)
            except _Stale:
                raise HttpFailure("closed the connection in the middle of its answer") from None
        out, self._buffer = self._buffer[:size], self._buffer[size:]
        return out

    def _head(self, deadline: float) -> tuple[int, dict[str, str]]:
        raw = self._until(b"\r\n\r\n", MAX_HEAD_BYTES, deadline, "headers")
        lines = raw.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if (
            len(parts) < 2
            or not parts[0].startswith("HTTP/1.")
            or not (parts[1].isdigit() and len(parts[1]) == 3)
        ):
            raise HttpFailure("did not answer in HTTP/1.1")
        if len(lines) > MAX_HEADERS:
            raise HttpFailure(f"sent more than {MAX_HEADERS} headers")
        headers = {}
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if not colon:
                raise HttpFailure("sent a malformed header")
            headers[name.strip().lower()] = value.strip()
        if parts[0] == "HTTP/1.0" and headers.get("connection", "").lower() != "keep-alive":
            headers["connection"] = "close"
        return int(parts[1]), headers

    def _body(self, headers: dict[str, str], deadline: float) -> bytes:
        too_big = HttpFailure(f"answered more than {MAX_ANSWER_BYTES // 1024} KB")
        if "chunked" in headers.get("transfer-encoding", "").lower():
            out = b""
            while True:
                size_line = self._until(b"\r\n", 64, deadline, "a chunk size").split(b";")[0].strip()
                try:
                    size = int(size_line, 16)
                except ValueError:
                    raise HttpFailure("sent a malformed chunk") from None
                if size == 0:
                    while self._until(b"\r\n", MAX_HEAD_BYTES, deadline, "trailers"):
                        pass
                    return out
                if len(out) + size > MAX_ANSWER_BYTES:
                    raise too_big
                out += self._exactly(size, deadline)
                if self._exactly(2, deadline) != b"\r\n":
                    raise HttpFailure("sent a malformed chunk")
        length = headers.get("content-length")
        if length is not None:
            if not (length.isascii() and length.isdigit()):
                raise HttpFailure("sent a malformed Content-Length")
            if len(length) > 9 or int(length) > MAX_ANSWER_BYTES:
                raise too_big
            return self._exactly(int(length), deadline)
        headers["connection"] = "close"  # the answer ends when the connection does
        while True:
            if len(self._buffer) > MAX_ANSWER_BYTES:
                raise too_big
            try:
                self._buffer += self._recv(deadline)
            except _Stale:
                out, self._buffer = self._buffer, b""
                return out


def http_json(client: HttpClient, method: str, body: Any, timeout: float) -> tuple[int, Any]:
    """A JSON request and its answer's status and JSON value (None when the answer is not JSON
    an error status may carry); ``HttpFailure`` with a phrase for no usable answer."""
    data = None if body is None else json.dumps(body, ensure_ascii=True, allow_nan=False).encode("ascii")
    try:
        answer = client.request(method, data, timeout)
    except TimeoutError:
        raise HttpFailure(f"did not answer within {timeout:g} s") from None
    except ConnectionRefusedError:
        raise HttpFailure("refused the connection (is the bot's server running?)") from None
    except socket.gaierror as exc:
        raise HttpFailure(f"has a host name that does not resolve ({exc.strerror})") from None
    except ssl.SSLError as exc:
        raise HttpFailure(f"failed the TLS handshake ({exc.reason or exc})") from None
    except _Stale:
        raise HttpFailure("closed the connection without an answer") from None
    except OSError as exc:
        raise HttpFailure(f"could not be reached ({exc.strerror or exc})") from None
    try:
        value = parse_json(decode(answer.body))
    except FileRefused as exc:
        if answer.status != 200:
            return answer.status, None
        raise HttpFailure(f"answered with a body that {exc}") from None
    return answer.status, value


def error_text(status: int, value: Any) -> str:
    """An HTTP error answer in a phrase, with the server's own sentence when it sent one."""
    said = value.get("error") if isinstance(value, dict) else None
    if isinstance(said, str) and said:
        return f"answered HTTP {status}: {printable(said[:300])}"
    return f"answered HTTP {status}"


def check_remote(target: RemoteTarget) -> dict[str, Any]:
    """The bot's own description (``GET URL``), once it says it speaks ``PROTOCOL``; otherwise
    ``AgentSpecError`` with one sentence."""
    client = HttpClient(target.url)
    try:
        status, value = http_json(client, "GET", None, target.timeout)
    except HttpFailure as exc:
        raise AgentSpecError(f"agent remote:{target.url}: the bot {exc}") from None
    finally:
        client.close()
    if status != 200:
        raise AgentSpecError(f"agent remote:{target.url}: GET {error_text(status, value)}")
    spoken = value.get("protocol") if isinstance(value, dict) else None
    if spoken != PROTOCOL:
        said = "no protocol" if spoken is None else f"protocol {printable(str(spoken)[:20])}"
        raise AgentSpecError(
            f"agent remote:{target.url}: the bot answers GET with {said}; this client speaks {PROTOCOL}"
        )
    return value


# --------------------------------------------------------------------------- the agent


class RemoteAgent:
    """A bot served over HTTP (module doc). ``make_fallback(seed)`` makes the agent that plays a
    seat for the rest of a game once the bot fails (None: the failure raises
    ``RemoteAgentError``). One game at a time: ``reset`` starts the next (a new game id, a new
    ``sent_seed`` from the operating system, the game's time ``spent`` back to 0)."""

    def __init__(
        self,
        target: RemoteTarget,
        seed: int | None = None,
        make_fallback: Callable[[int | None], Agent] | None = None,
        name: str | None = None,
    ) -> None:
        self.target = target
        self.name = name or f"remote:{target.url}"
        self.make_fallback = make_fallback
        self.client = HttpClient(target.url)
        self.failures = 0  # games in which the fallback took over
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """A new game, the agent seeded ``seed`` for it (as ``make_agent`` seeds a local one): the
        fallback's seed. The bot is sent ``sent_seed``, drawn from the operating system."""
        self.seed = None if seed is None else int(seed)
        self.sent_seed = bot_seed()
        self.spent = 0.0  # seconds the bot's requests of this game took
        self.game = secrets.token_hex(8)
        self.decisions: dict[int, int] = {}  # requests sent so far, per seat
        self.fallback: Agent | None = None

    def close(self) -> None:
        self.client.close()

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: Any = None) -> int:
        if state is None:
            raise ValueError("a remote agent sends its seat's view: it needs the game state")
        if self.fallback is not None:
            return int(self.fallback.act(observation, action_mask, state))
        seat = int(state.current_player())
        decision = self.decisions.get(seat, 0)
        try:
            action = self._ask(state, seat, decision)
        except RemoteAgentError as error:
            if self.make_fallback is None:
                raise
            self.fallback = self.make_fallback(self.seed)
            self.failures += 1
            logger.warning("%s; %s plays the seat for the rest of this game", error, self.target.fallback)
            return int(self.fallback.act(observation, action_mask, state))
        self.decisions[seat] = decision + 1
        return action

    def _ask(self, state: Any, seat: int, decision: int) -> int:
        def fail(what: str) -> RemoteAgentError:
            return RemoteAgentError(
                f"remote agent {self.target.url}, seat {seat}, decision {decision}: the bot {what}"
            )

        budget = self.target.game_timeout
        used_up = f"used up its game's time, {budget:g} s of answers (#game_timeout)"
        if self.spent >= budget:
            raise fail(used_up)
        body = decision_request(state, seat, self.game, decision, self.sent_seed)
        timeout = min(self.target.timeout, budget - self.spent)  # the game's time left bounds it
        started = time.monotonic()
        try:
            status, value = http_json(self.client, "POST", body, timeout)
        except HttpFailure as exc:
            cut = timeout < self.target.timeout and time.monotonic() - started >= timeout
            raise fail(used_up if cut else str(exc)) from None
        finally:
            self.spent += time.monotonic() - started
        if status != 200:
            raise fail(error_text(status, value))
        action = value.get("action") if isinstance(value, dict) else None
        if isinstance(action, bool) or not isinstance(action, int):
            raise fail(f'answered {printable(json.dumps(value)[:80])}, not {{"action": ID}}')
        if action not in state.legal_actions():
            raise fail(f"chose action {action}, which is not legal now ({len(state.legal_actions())} are)")
        return action
