"""How quickly the web app answers a move: ``python -m island_fortress_env.web.latency``.

Serves the app with uvicorn on 127.0.0.1 (a free port) and plays whole games through HTTP on
one keep-alive connection, as the page does: the person (seeded random choices among those the
server offers) against bot opponents. It reports, over every move of the person:

* **act**: the person's move sent, applied, and the new position received;
* **reply**: when the opponents are to move next, their moves until the person's next choice
  (``advance`` with many moves a request, as the page asks when the pause is 0).

A measurement to read, not a test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import socket
import statistics
import tempfile
import threading
import time
from typing import Any


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


def main(argv: list[str] | None = None) -> int:
    import uvicorn

    from island_fortress_env.web import create_app
    from island_fortress_env.web.serving import server_config

    parser = argparse.ArgumentParser(prog="python -m island_fortress_env.web.latency", description=__doc__)
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--players", type=int, default=3, choices=(2, 3, 4))
    parser.add_argument("--opponent", default="heuristic", help="the bots' agent spec (default heuristic)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as games:
        app = create_app(["random", "heuristic", args.opponent], games)
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
        for g in range(args.games):
            draw = random.Random(args.seed + g)
            body = {
                "players": args.players,
                "seat": g % args.players,
                "opponents": [args.opponent] * (args.players - 1),
                "seed": args.seed + g,
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
        server.should_exit = True
        thread.join(timeout=30)
    for name, values in (("act", acts), ("reply", replies)):
        ms = [1000 * v for v in values]
        print(
            f"{name:5s}: {len(ms)} moves, median {statistics.median(ms):.1f} ms, "
            f"95th percentile {percentile(ms, 0.95):.1f} ms, max {max(ms):.1f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
