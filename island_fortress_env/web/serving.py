"""The app served by uvicorn, with limits that keep slow or greedy clients from starving others.

uvicorn's own options set here: ``timeout_keep_alive`` (an idle connection is closed after
``KEEP_ALIVE_SECONDS``) and ``h11_max_incomplete_event_size`` (a request line and headers of at
most ``MAX_HEADER_BYTES``; more is a 400). uvicorn sets no time limit on a request that arrives
slowly, and its ``limit_concurrency`` counts every open connection, idle and slow ones included,
so a client that opens many and sends nothing would have it answer 503 to everyone. The HTTP
protocol is therefore uvicorn's h11 one with two additions (``GuardedH11Protocol``):

* **Deadlines.** A request's line and headers must arrive within ``HEADER_SECONDS`` of the
  connection opening (or of the previous answer on it), and its body within ``BODY_SECONDS`` of
  its headers; a connection past its deadline is closed (the app sees the client gone). A
  connection that sent nothing at all by then is closed without a word in the log: browsers
  open connections ahead of need (Chromium's preconnect) and leave most of them unused, so
  that is normal use, not a slow client. One that sent part of a request, or not all of its
  body, is a slow client: it is counted in the log (``TIMED_OUT``).
* **A connection limit**, ``connection_limit()``: ``MAX_CONNECTIONS``, fewer when the process may
  open fewer files (``FILES_KEPT_FREE`` descriptors are left for the rest). A connection beyond it
  takes the place of the one that has waited longest for its request (idle or slow); it is
  closed itself only when every other connection is being answered.

Accepting a connection can still fail for want of file descriptors (``EMFILE``); asyncio then
stops accepting for a second and tries again. Those failures, and the connections closed by a
deadline or the limit, are one line in the log per burst of them (``Burst``), never a traceback
each.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, ClassVar

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_SECONDS = 10.0
BODY_SECONDS = 30.0  # a 1 MiB record upload at 35 KB/s
KEEP_ALIVE_SECONDS = 5
MAX_HEADER_BYTES = 16 * 1024
MAX_CONNECTIONS = 256  # a browser opens about 6 to a server
FILES_KEPT_FREE = 64  # descriptors left for everything but connections (records, logs, threads)
LOG_EVERY_SECONDS = 10.0
ACCEPT_FAILED = "socket.accept() out of system resource"  # asyncio's message

logger = logging.getLogger("uvicorn.error")


class Burst:
    """Events of one kind logged as one line per burst: the first at once, then at most one
    line per ``every`` seconds, with how many there were since the line before."""

    def __init__(self, text: str, every: float = LOG_EVERY_SECONDS) -> None:
        self.text = text
        self.every = every
        self.count = 0
        self.last: float | None = None

    def note(self) -> None:
        self.count += 1
        now = time.monotonic()
        if self.last is None or now - self.last >= self.every:
            logger.warning("%s: %d since the last such line", self.text, self.count)
            self.count = 0
            self.last = now


OUT_OF_FILES = Burst("Out of file descriptors: new connections wait in the backlog (EMFILE)")
TIMED_OUT = Burst("Closed connections whose request did not arrive in time")
REPLACED = Burst("Connection limit reached: closed connections that waited longest for a request")


def _accept_errors(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The event loop's exception handler: a failed accept is a line per burst (asyncio
    retries it); anything else goes to asyncio's default handler."""
    if context.get("message") == ACCEPT_FAILED:
        OUT_OF_FILES.note()
    else:
        loop.default_exception_handler(context)


def connection_limit() -> int:
    """``MAX_CONNECTIONS``, or fewer when the process's file limit is low (see the module doc)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return MAX_CONNECTIONS
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(8, min(MAX_CONNECTIONS, soft - FILES_KEPT_FREE))


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with deadlines and a connection limit (see the module doc)."""

    max_connections: ClassVar[int] = MAX_CONNECTIONS
    header_seconds: ClassVar[float] = HEADER_SECONDS
    body_seconds: ClassVar[float] = BODY_SECONDS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting_for: Any = None  # h11.IDLE (the headers), h11.SEND_BODY, or None
        self.waiting_since: float | None = None  # when it began waiting for the request
        self.heard = False  # whether any byte came since the deadline was armed

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if self.loop.get_exception_handler() is None:
            self.loop.set_exception_handler(_accept_errors)
        self._follow()
        if sum(not c.transport.is_closing() for c in self.connections) > self.max_connections:
            self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if data:
            self.heard = True
        super().data_received(data)

    def handle_events(self) -> None:
        super().handle_events()
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow()

    def _follow(self) -> None:
        """Arm the deadline of what the connection waits for now (headers or body), or stop it
        when the request is in."""
        state = self.conn.their_state
        if self.transport.is_closing() or state not in (h11.IDLE, h11.SEND_BODY):
            self._stop()
        elif state is not self._waiting_for:
            self._stop()
            seconds = self.header_seconds if state is h11.IDLE else self.body_seconds
            self._deadline = self.loop.call_later(seconds, self._expired)
            self._waiting_for = state
            self.waiting_since = time.monotonic()
            self.heard = state is h11.SEND_BODY  # a body is waited for once its headers came

    def _stop(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = None
        self._waiting_for = None
        self.waiting_since = None

    def _expired(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            if self.heard:  # part of a request came: a slow client (unused: normal, see above)
                TIMED_OUT.note()
            self.transport.close()

    def _make_room(self) -> None:
        """Close the connection that has waited longest for its request, or this one when all
        others are being answered."""
        waiting = [
            c
            for c in self.connections
            if c is not self
            and isinstance(c, GuardedH11Protocol)
            and c.waiting_since is not None
            and not c.transport.is_closing()
        ]
        victim = min(waiting, key=lambda c: c.waiting_since or 0.0, default=self)
        REPLACED.note()
        victim.transport.close()


def protocol_class() -> type[GuardedH11Protocol]:
    """The protocol with this process's limits (the module's constants, read now)."""
    return type(
        "GuardedH11Protocol",
        (GuardedH11Protocol,),
        {
            "max_connections": connection_limit(),
            "header_seconds": HEADER_SECONDS,
            "body_seconds": BODY_SECONDS,
        },
    )


def server_config(app: Any, host: str, port: int) -> uvicorn.Config:
    """uvicorn's configuration of the app with the limits of the module doc."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        http=protocol_class(),
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
    )
