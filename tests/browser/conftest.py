"""The browser tests' fixtures: the app served by uvicorn on 127.0.0.1 (a free port, in a
thread), and headless Chromium driven by Selenium through the system's chromedriver.

The tests skip, saying why, when Chromium, its driver or Selenium is missing (``make
test-browser`` installs Selenium; ``.ci/run`` installs Debian's chromium and chromium-driver).
Screenshots go to ``$ISLAND_FORTRESS_SCREENSHOTS`` when set, else
to ``build/browser-screenshots/`` in the checkout (ignored by git, as all of ``build/`` is); the
folder is printed at the end of the run, for a reviewer to look at.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the web app needs the [web] extra (starlette, uvicorn)")
pytest.importorskip("uvicorn", reason="the web app needs the [web] extra (starlette, uvicorn)")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("ISLAND_FORTRESS_SCREENSHOTS") or ROOT / "build" / "browser-screenshots")
LONG_NAME = "checkpoints/policy-2-4p.zip"  # a seat named by a checkpoint's path, in a 4-player record


@pytest.fixture(scope="module")
def games_dir(tmp_path_factory) -> Path:
    from dataclasses import replace

    from island_fortress_env.env.records import save
    from tests.web_client import evaluation_result, heuristic_record

    games = tmp_path_factory.mktemp("games")
    save(heuristic_record(3, 4), games / "fixture-game.json")
    four = heuristic_record(4, 2)
    agents = ("heuristic", "random", LONG_NAME, "heuristic")
    save(replace(four, agents=agents), games / "four-seats.json")
    two = evaluation_result(2, [("heuristic", 40, 38, 40.2), ("random", 40, 2, 9.5)])
    three = evaluation_result(
        3, [("heuristic", 30, 27, 35.0), ("random", 30, 2, 8.1), ("random", 30, 1, 7.9)]
    )
    (games / "eval-2p.json").write_text(json.dumps(two))
    (games / "eval-3p.json").write_text(json.dumps(three))
    return games


@pytest.fixture(scope="module")
def server(games_dir):
    """The app on 127.0.0.1 at a free port; yields its base URL."""
    import uvicorn

    from island_fortress_env.web import create_app

    agents = ["random", "heuristic"]
    checkpoint = ROOT / "checkpoints" / "policy-2-4p.zip"
    if checkpoint.is_file():
        agents.append(str(checkpoint))
    app = create_app(agents, games_dir, allowed_hosts=["127.0.0.1"])
    with on_loopback(lambda port: uvicorn.Config(app, log_level="warning", lifespan="on")) as url:
        yield url


@contextlib.contextmanager
def on_loopback(config: Callable[[int], Any]) -> Iterator[str]:
    """A uvicorn server of ``config(port)`` on 127.0.0.1 at a free port, in a thread; yields its
    base URL and stops it after."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # asyncio sets NODELAY on it
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(config(port))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(200):
            if server.started:
                break
            threading.Event().wait(0.05)
        assert server.started, "the server did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def set_viewport(browser, width: int, height: int) -> None:
    """Make the page's viewport (``innerWidth`` x ``innerHeight``) exactly this size."""
    browser.set_window_size(width, height)
    inner = browser.execute_script("return [window.innerWidth, window.innerHeight]")
    browser.set_window_size(2 * width - inner[0], 2 * height - inner[1])


@pytest.fixture(scope="module")
def driver():
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip(
            "headless Chromium and chromedriver are not installed "
            "(.ci/run installs Debian's chromium and chromium-driver)"
        )
    webdriver = pytest.importorskip(
        "selenium.webdriver", reason="Selenium is not installed (the [browser] extra)"
    )
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,857"):
        options.add_argument(arg)
    options.binary_location = CHROMIUM
    browser = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    browser.set_script_timeout(30)
    set_viewport(browser, 1400, 857)
    yield browser
    browser.quit()


@pytest.fixture
def shots() -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if SHOTS.is_dir() and any(SHOTS.glob("*.png")):
        terminalreporter.write_line(f"browser screenshots: {SHOTS}")
