"""The server's log in normal use: a connection a browser opens ahead of need and never uses is
closed at its deadline without a warning (Chromium opens several), while one that sends part of
a request and stops is still a slow client, counted in the log."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Iterator

import pytest

pytest.importorskip("starlette", reason="the web app needs the [web] extra (starlette)")
pytest.importorskip("uvicorn", reason="the web app needs the [web] extra (uvicorn)")

DEADLINE = 0.4  # seconds: the header deadline of the server under test


@contextlib.contextmanager
def served(tmp_path, monkeypatch) -> Iterator[int]:
    """The app with ``serving``'s protocol (as ``serve`` runs it), its deadlines short; yields its
    port."""
    import uvicorn

    from island_fortress_env.web import create_app, serving

    monkeypatch.setattr(serving, "HEADER_SECONDS", DEADLINE)
    monkeypatch.setattr(serving, "BODY_SECONDS", DEADLINE)
    monkeypatch.setattr(serving.TIMED_OUT, "last", None)  # a line at once, whatever came before
    monkeypatch.setattr(serving.TIMED_OUT, "count", 0)
    app = create_app(["random"], tmp_path / "games", levels=False)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(serving.server_config(app, "127.0.0.1", port))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    assert server.started
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def closed_within(sock: socket.socket, seconds: float) -> bool:
    sock.settimeout(seconds)
    try:
        return sock.recv(65536) == b""
    except TimeoutError:
        return False
    except OSError:
        return True


class Kept(logging.Handler):
    """The warnings of uvicorn's logger (it does not pass them on to the root logger)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_an_unused_connection_is_closed_quietly_and_a_slow_request_is_logged(tmp_path, monkeypatch):
    caplog = Kept()
    with served(tmp_path, monkeypatch) as port:
        logging.getLogger("uvicorn.error").addHandler(caplog)
        unused = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(7)]
        try:
            assert all(closed_within(s, 10 * DEADLINE + 5) for s in unused)
        finally:
            for s in unused:
                s.close()
        quiet = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert quiet == [], quiet  # 7 connections a browser left unused: not a word
        slow = socket.create_connection(("127.0.0.1", port), timeout=5)
        try:
            slow.sendall(b"GET /api/config HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            assert closed_within(slow, 10 * DEADLINE + 5)
        finally:
            slow.close()
        time.sleep(0.1)
    logging.getLogger("uvicorn.error").removeHandler(caplog)
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(said) == 1 and said[0].startswith("Closed connections whose request did not arrive"), said
