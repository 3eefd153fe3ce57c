"""The web app on a real server over loopback: ``serve`` runs the guarded protocol with its
limits, slow connections do not starve others, a request that does not arrive in time is cut off,
and running out of file descriptors is a line in the log per burst, not a traceback per failed
accept.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web app needs the [web] extra (starlette)")
pytest.importorskip("uvicorn", reason="the web app needs the [web] extra (uvicorn)")

ROOT = Path(__file__).resolve().parent.parent


def test_serve_runs_the_guarded_protocol_with_its_limits(monkeypatch, tmp_path):
    import uvicorn

    import island_fortress_env.web as web
    from island_fortress_env.web import serving

    made = []

    class Recorded:
        def __init__(self, config):
            made.append(config)
            self.started = False

        def run(self):
            pass

    monkeypatch.setattr(uvicorn, "Server", Recorded)
    web.serve(games_dir=tmp_path, open_browser=False)
    config = made[-1]
    assert issubclass(config.http, serving.GuardedH11Protocol)
    assert config.http.header_seconds == serving.HEADER_SECONDS == 10
    assert config.http.body_seconds == serving.BODY_SECONDS == 30
    assert 8 <= config.http.max_connections <= serving.MAX_CONNECTIONS == 256
    assert config.timeout_keep_alive == 5 and config.h11_max_incomplete_event_size == 16 * 1024
    assert config.limit_concurrency is None  # it would count slow connections: see web.serving


SERVER = """
import os, resource, sys
port, files, free = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[4])
seconds, games = float(sys.argv[3]), sys.argv[5]
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (files, hard))
import island_fortress_env.web as web
try:
    from island_fortress_env.web import serving
except ImportError:  # a version without it: served as it is
    serving = None
if serving is not None and seconds > 0:
    serving.HEADER_SECONDS = serving.BODY_SECONDS = seconds
held = []
if free:  # leave only `free` descriptors (the server's own files and its listening socket first)
    while len(os.listdir("/proc/self/fd")) < files - free:
        held.append(os.open(os.devnull, os.O_RDONLY))
web.serve(host="127.0.0.1", port=port, agents=["random"], games_dir=games, open_browser=False)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port: int, path: str = "/api/config", timeout: float = 5.0) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    finally:
        conn.close()


@contextlib.contextmanager
def served(
    tmp_path: Path, files: int = 1024, seconds: float = 0, free: int = 0
) -> Iterator[tuple[int, Path]]:
    """A real server in a subprocess with a file limit of ``files`` (and ``free`` descriptors left
    when asked), its deadlines set to ``seconds`` when given; yields its port and its log."""
    port = free_port()
    log = tmp_path / f"server-{port}.log"
    games = tmp_path / "served-games"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(port), str(files), str(seconds), str(free), str(games)],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, log.read_text(errors="replace")[-2000:]
            try:
                if get(port, timeout=2) == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)
        yield port, log
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def slow_connections(port: int, count: int) -> list[socket.socket]:
    """``count`` connections that send the start of a request's headers and never the end."""
    out = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        with contextlib.suppress(OSError):  # the server may have closed it already (a limit)
            s.sendall(b"GET /api/config HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        out.append(s)
    return out


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``sock`` within ``seconds`` (what it sends first is read)."""
    sock.settimeout(seconds)
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end:
            if sock.recv(65536) == b"":
                return True
    except (TimeoutError, ConnectionResetError):
        return False
    except OSError:
        return True
    return False


@pytest.fixture
def many_files() -> Iterator[None]:
    """Room in this process for the client's side of 1,100 connections."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2500:
        if hard != resource.RLIM_INFINITY and hard < 2500:
            pytest.skip(f"the file limit ({hard}) is too low for 1,100 connections")
        resource.setrlimit(resource.RLIMIT_NOFILE, (2500, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors in /proc")
def test_slow_connections_do_not_starve_others(tmp_path, many_files):
    with served(tmp_path, files=1024) as (port, log):
        slow = slow_connections(port, 1100)
        try:
            begin = time.monotonic()
            assert get(port, timeout=5) == 200
            assert time.monotonic() - begin < 5
            assert get(port, "/api/records", timeout=5) == 200
        finally:
            for s in slow:
                s.close()
        time.sleep(0.5)
        text = log.read_text(errors="replace")
    assert "Traceback" not in text
    assert len(text) < 5000 and text.count("\n") < 20, text[-2000:]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors in /proc")
def test_requests_that_do_not_arrive_in_time_are_cut_off_and_running_out_of_files_is_one_line(tmp_path):
    with served(tmp_path, files=256, seconds=2, free=24) as (port, log):
        headers = slow_connections(port, 1)[0]
        body = socket.create_connection(("127.0.0.1", port), timeout=5)
        body.sendall(
            b"POST /api/watch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n{"
        )
        assert closed_within(headers, 6) and closed_within(body, 6)
        headers.close()
        body.close()
        slow = slow_connections(port, 120)  # more than the descriptors left: accepting fails (EMFILE)
        try:
            time.sleep(3)
        finally:
            for s in slow:
                s.close()
        deadline = time.monotonic() + 15
        while True:  # the server accepts again once the slow connections are gone
            try:
                if get(port, timeout=3) == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, log.read_text(errors="replace")[-2000:]
        text = log.read_text(errors="replace")
    assert "Traceback" not in text, text[:3000]
    assert len(text) < 5000 and text.count("\n") < 20, text[-2000:]
    assert os.name != "posix" or re.search(r"EMFILE|file descriptors|out of system resource", text), text
