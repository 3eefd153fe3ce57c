"""How quickly the web app answers a move: ``island-fortress bench-web``.

Serves the app with uvicorn on 127.0.0.1 (a free port) and plays whole games through HTTP on
one keep-alive connection, as the page does: the person (seeded random choices among those the
server offers) against bot opponents. It reports, over every move of the person:

* **act**: the person's move sent, applied, and the new position received;
* **reply**: when the opponents are to move next, their moves until the person's next choice
  (``advance`` with many moves a request, as the page asks when the pause is 0).
* **click** (``--browser``): whole games played by clicking in headless Chromium (Selenium and
  the system's chromium and chromedriver, as the browser tests use), the bots' pause at 0: each
  click on a choice, from the click to the frame after the page has drawn the new position
  (``performance.mark`` at the click; the page's step changes, then the next animation frame and
  a task queued from it, which runs once that frame is painted); ``dom``: to the new position in
  the page, before it is painted. A click that opens a menu, or confirms the end of a turn, is
  clicked without being timed.

The targets (docs/WEB.md): ``act`` and ``click`` at most 30 ms and 100 ms at the 95th
percentile. A measurement to read, not a test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import http.client
import json
import random
import socket
import statistics
import tempfile
import threading
import time
from typing import Any

from island_fortress_env.players.seeds import Stream, generator, stream_seed
from island_fortress_env.web.games import MAX_SEED


def latency_deals(seed: int, games: int) -> list[int]:
    """The deal of each game the measure plays: its seed's ``latency-games`` stream, drawn within
    the seeds a person may type (``web.games.MAX_SEED``)."""
    return generator(seed, Stream.LATENCY_GAMES).integers(0, MAX_SEED, endpoint=True, size=games).tolist()


def _request(conn: http.client.HTTPConnection, method: str, path: str, body: Any = None) -> Any:
    payload = None if body is None else json.dumps(body)
    headers = {"Content-Type": "application/json"} if payload is not None else {}
    conn.request(method, path, body=payload, headers=headers)
    response = conn.getresponse()
    data = json.loads(response.read())
    if response.status >= 400:
        raise RuntimeError(f"{method} {path}: {response.status} {data}")
    return data


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# Click the page offers to the person (a choice in the bar, else a marked thing on the table),
# timed from the click to the frame after the new position is drawn (performance marks); a
# click that opens a menu, or the end-of-turn confirmation, is clicked without being timed.
CLICK = """
const done = arguments[arguments.length - 1];
const title = () => (document.querySelector("#decision h3") || {}).textContent || "";
if (title() === "Game over") return done({ over: true });
const endTurn = document.getElementById("end-turn");
if (endTurn && title() === "End your turn?") { endTurn.click(); return done({ untimed: "end-turn" }); }
const visible = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
const menu = [...document.querySelectorAll("#menu button.choice[data-action]")].filter(visible);
const all = (css) => [...document.querySelectorAll(css)].filter(visible);
const bar = all("#decision button.choice[data-action]:not(.warned)");
const table = all("svg.board .target, .favor.target, .role.target");
const pool = menu.length ? menu : bar.length ? bar : table;
const warned = all("#decision button.choice.warned");
if (!pool.length && warned.length && title() === "Your move") {  // only choices that lose something
  warned[0].click();
  const yes = () => document.getElementById("confirm-yes")?.click();
  return setTimeout(() => { yes(); done({ untimed: "warned" }); }, 50);
}
if (!pool.length || title() !== "Your move") return done({ waiting: title() });
const el = pool[arguments[0] % pool.length];
const step = document.body.dataset.step;
const timeout = setTimeout(() => { observer.disconnect(); done({ untimed: "no redraw" }); }, 10000);
const observer = new MutationObserver(() => {
  if (document.body.dataset.step === step) {
    if (!document.getElementById("menu") || menu.length) return;
    observer.disconnect();
    clearTimeout(timeout);
    done({ untimed: "menu" });
    return;
  }
  observer.disconnect();
  clearTimeout(timeout);
  const dom = performance.now() - performance.getEntriesByName("click")[0].startTime;
  // the frame that shows the change: its animation callback, then a task once it is painted
  requestAnimationFrame(() => setTimeout(() => {
    performance.mark("drawn");
    done({ ms: performance.measure("click", "click", "drawn").duration, dom });
  }));
});
observer.observe(document.body, { attributes: true, childList: true, subtree: true });
performance.clearMarks();
performance.clearMeasures();
performance.mark("click");
el.click();
"""


def browser_clicks(
    base: str, games: int, players: int, opponent: str, seed: int
) -> tuple[list[float], list[float]]:
    """Whole games played by clicking in headless Chromium (``--browser``): each timed click's
    seconds from the click to the frame that shows its new position painted, and to the page's
    new position in the DOM (before it is painted)."""
    import shutil

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import Select, WebDriverWait

    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,857"):
        options.add_argument(arg)
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary:
        options.binary_location = binary
    driver_path = shutil.which("chromedriver")
    service = Service(driver_path) if driver_path else Service()
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_script_timeout(30)
    clicks: list[float] = []
    doms: list[float] = []
    try:
        deals = latency_deals(seed, games)
        for g in range(games):
            driver.get(base + "/")
            wait = WebDriverWait(driver, 60, poll_frequency=0.05)
            wait.until(lambda d: d.find_elements("id", "start-play"))
            driver.execute_script("localStorage.setItem('if-guide-seen', '1');")
            Select(driver.find_element("id", "play-players")).select_by_value(str(players))
            for select in driver.find_elements("css selector", "#play-opponents select"):
                Select(select).select_by_value(opponent)
            driver.find_element("id", "play-seed").send_keys(str(deals[g]))
            driver.find_element("id", "start-play").click()
            wait.until(lambda d: "/play/" in d.current_url and d.find_elements("id", "pause"))
            driver.execute_script(
                "const p = document.getElementById('pause'); p.value = 0;p.dispatchEvent(new Event('input'));"
            )
            draw = random.Random(stream_seed(seed, Stream.LATENCY_CHOICES, g))
            for _ in range(5000):
                out = driver.execute_async_script(CLICK, draw.randrange(1 << 30))
                if out.get("over"):
                    break
                if "ms" in out:
                    clicks.append(out["ms"] / 1000)
                    doms.append(out["dom"] / 1000)
                elif "waiting" in out:
                    time.sleep(0.02)
    finally:
        driver.quit()
    return clicks, doms


def report(name: str, values: list[float], target: float | None = None) -> None:
    ms = [1000 * v for v in values]
    if not ms:
        print(f"{name:5s}: none measured")
        return
    p95 = percentile(ms, 0.95)
    goal = "" if target is None else f" (target <= {target:g} ms: {'met' if p95 <= target else 'MISSED'})"
    print(
        f"{name:5s}: {len(ms)} moves, median {statistics.median(ms):.1f} ms, "
        f"95th percentile {p95:.1f} ms, max {max(ms):.1f} ms{goal}"
    )


def measure(
    games: int = 3, players: int = 3, opponent: str = "heuristic", seed: int = 0, browser: int = 0
) -> None:
    """Play ``games`` games through HTTP (and ``browser`` more by clicking) and print the figures;
    ``--browser`` without Selenium is an ``ImportError``."""
    import uvicorn

    from island_fortress_env.web import create_app
    from island_fortress_env.web.serving import server_config

    n_games = games
    with tempfile.TemporaryDirectory() as folder:
        app = create_app(["random", "heuristic", opponent], folder)
        sock = socket.socket(
            socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP
        )  # TCP: asyncio sets NODELAY
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        server = uvicorn.Server(server_config(app, "127.0.0.1", port))  # as `serve` runs it
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        conn = http.client.HTTPConnection("127.0.0.1", port)
        acts: list[float] = []
        replies: list[float] = []
        deals = latency_deals(seed, n_games)
        for g in range(n_games):
            draw = random.Random(stream_seed(seed, Stream.LATENCY_CHOICES, g))
            body = {
                "players": players,
                "seat": g % players,
                "opponents": [opponent] * (players - 1),
                "seed": deals[g],
            }
            snap = _request(conn, "POST", "/api/play", body)
            token, game = snap["token"], snap["id"]
            while not snap["over"]:
                if snap["waiting"]:
                    action = draw.choice(snap["view"]["choices"])["action"]
                    begin = time.perf_counter()
                    snap = _request(
                        conn, "POST", f"/api/games/{game}/act", {"token": token, "action": action}
                    )
                    acts.append(time.perf_counter() - begin)
                if snap["waiting"] or snap["over"]:
                    continue
                begin = time.perf_counter()
                while not snap["waiting"] and not snap["over"]:
                    snap = _request(conn, "POST", f"/api/games/{game}/advance", {"token": token, "moves": 50})
                replies.append(time.perf_counter() - begin)
        clicks: list[float] = []
        doms: list[float] = []
        try:
            if browser:
                clicks, doms = browser_clicks(f"http://127.0.0.1:{port}", browser, players, opponent, seed)
        finally:
            server.should_exit = True
            thread.join(timeout=30)
    report("act", acts, 30)
    report("reply", replies)
    if browser:
        report("click", clicks, 100)
        report("dom", doms)
