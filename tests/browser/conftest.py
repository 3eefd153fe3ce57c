"""The browser tests' fixtures: the app served by uvicorn on 127.0.0.1 (a free port, in a
thread), and headless Chromium driven by Selenium through the system's chromedriver.

The tests skip, saying why, when Chromium, its driver or Selenium is missing (``make
test-browser`` installs them). Screenshots go to ``$ISLAND_FORTRESS_SCREENSHOTS`` when set,
else to the test's temporary directory.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web app needs the [web] extra (starlette, uvicorn)")
pytest.importorskip("uvicorn", reason="the web app needs the [web] extra (starlette, uvicorn)")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def games_dir(tmp_path_factory) -> Path:
    from island_fortress_env.env.records import save
    from tests.web_client import heuristic_record

    games = tmp_path_factory.mktemp("games")
    save(heuristic_record(3, 4), games / "fixture-game.json")
    return games


@pytest.fixture(scope="module")
def server(games_dir):
    """The app on 127.0.0.1 at a free port; yields its base URL."""
    import uvicorn

    from island_fortress_env.web import create_app

    root = Path(__file__).resolve().parents[2]
    agents = ["random", "heuristic"]
    checkpoint = root / "checkpoints" / "policy-2-4p.zip"
    if checkpoint.is_file():
        agents.append(str(checkpoint))
    app = create_app(agents, games_dir, allowed_hosts=["127.0.0.1"])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # asyncio sets NODELAY on it
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        threading.Event().wait(0.05)
    assert server.started, "the server did not start"
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=30)
    sock.close()


@pytest.fixture(scope="module")
def driver():
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip("headless Chromium and chromedriver are not installed (make test-browser installs them)")
    webdriver = pytest.importorskip(
        "selenium.webdriver", reason="Selenium is not installed (the [browser] extra)"
    )
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1500,1150"):
        options.add_argument(arg)
    options.binary_location = CHROMIUM
    browser = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    browser.set_script_timeout(30)
    yield browser
    browser.quit()


@pytest.fixture
def shots(tmp_path) -> Path:
    where = os.environ.get("ISLAND_FORTRESS_SCREENSHOTS")
    path = Path(where) if where else tmp_path
    path.mkdir(parents=True, exist_ok=True)
    return path
