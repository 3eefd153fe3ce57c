"""Island Fortress in the browser: play the agents, watch them, replay and analyse games.

    island-fortress serve --agents random heuristic checkpoints/policy-2-4p-v3.zip --games games/

``create_app`` builds the ASGI app (Starlette; ``web.app``), ``serve`` runs it with uvicorn and
opens the browser. The page is plain HTML, CSS and JavaScript modules shipped in ``static/``;
nothing is fetched from elsewhere. Needs the ``web`` extra: ``pip install
'island-fortress-env[web]'``.

The layer sits above ``players`` (agents by spec) and below ``training`` and ``tools``: it
imports neither.
"""

from __future__ import annotations

import threading
import webbrowser
from collections.abc import Sequence
from pathlib import Path

from island_fortress_env.web.app import create_app

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def url_of(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    agents: Sequence[str] = ("random", "heuristic"),
    games_dir: str | Path = "games",
    open_browser: bool = True,
) -> None:
    """Run the app until interrupted. Bound to ``host`` only (the loopback address by default);
    on a loopback host, requests naming another host are refused (no DNS rebinding). The API
    answers the server's own page only (``web.app``); slow or many connections are bounded
    (``web.serving``: deadlines for a request's headers and body, a connection limit)."""
    import uvicorn

    from island_fortress_env.web.serving import server_config

    allowed = [*LOOPBACK, "[::1]"] if host in LOOPBACK else None
    app = create_app(agents=agents, games_dir=games_dir, allowed_hosts=allowed)
    url = url_of(host, port)
    print(f"Island Fortress at {url} (agents: {', '.join(agents)}; games in {games_dir}); Ctrl+C stops")
    server = uvicorn.Server(server_config(app, host, port))
    if open_browser:

        def open_when_up() -> None:
            for _ in range(300):
                if server.started:
                    webbrowser.open(url)
                    return
                threading.Event().wait(0.1)

        threading.Thread(target=open_when_up, daemon=True).start()
    server.run()


__all__ = ["create_app", "serve", "url_of"]
