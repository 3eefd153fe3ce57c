"""The seeds a run hands out (``players.seeds``): nothing an agent is given leads back to a deal.

* A remote bot is sent a seed from the operating system: the same run seed twice sends it other
  seeds, and a brute force over the seeds a run could have had finds none of them (while the
  same search turns the old derivation, a 32-bit hash of the deal's seed, back into that seed).
* A local agent's seed is the run seed's own stream named ``agents``: the same seed gives the
  same seeds (a run replays), and it is not the old hash of the deal's seed nor any of the
  deal's own draws.
* A game started without a seed (``play``, the browser app) is dealt from 64 bits of the OS.
"""

from __future__ import annotations

import contextlib
import http.server
import io
import json
import threading
from collections.abc import Iterator
from typing import ClassVar

import numpy as np
import pytest

from island_fortress_env.cli import app as cli
from island_fortress_env.players import make_agent
from island_fortress_env.players.seeds import (
    AGENT_STREAM,
    BOT_SEED_BITS,
    Stream,
    agent_seed,
    bot_seed,
    deal_seed,
    stream_key,
    stream_seed,
)
from island_fortress_env.training import evaluate as ev

SEARCHED = 2**12  # run seeds tried by the brute force (the old derivation falls within them)


def old_agent_seed(seed: int, game: int, index: int) -> int:
    """How every command seeded an agent (and so a remote bot) before: a 32-bit hash of the
    run's seed, the game and the index."""
    return int(np.random.SeedSequence([seed, game, index]).generate_state(1)[0])


def old_web_seed(seed: int, players: int, seat: int) -> int:
    """How the browser app seeded a seat's agent before."""
    return int(np.random.SeedSequence([seed, 0x77EB]).generate_state(players)[seat])


def invert(sent: int, game: int, index: int, derive) -> list[int]:
    """The run seeds below ``SEARCHED`` that ``derive`` turns into ``sent``: a brute force."""
    return [s for s in range(SEARCHED) if derive(s, game, index) == sent]


# --------------------------------------------------------------------------- local agents


def test_a_local_agents_seed_is_the_run_seeds_own_stream():
    seeds = [agent_seed(s, g, i) for s in (0, 7, 2**64 - 1) for g in (0, 1, 50) for i in range(4)]
    assert seeds == [agent_seed(s, g, i) for s in (0, 7, 2**64 - 1) for g in (0, 1, 50) for i in range(4)]
    assert len(set(seeds)) == len(seeds) and max(seeds) >= 2**32  # 64 bits, all different
    assert ev.agent_seed is agent_seed  # the commands' import of it
    assert AGENT_STREAM == stream_key("agents") != stream_key("agent")
    for s in range(200):
        deal = np.random.SeedSequence(s)  # the deal's generator's (gymnasium's np_random(s))
        deals = {ev.env_game_seed(s), *deal.generate_state(8, np.uint64).tolist()}
        deals |= set(deal.spawn(2)[1].generate_state(8, np.uint64).tolist())
        for p in range(4):
            mine = agent_seed(s, 0, p)
            # not the hash of the deal's seed (and seat) that play, demo and the browser app used
            assert mine not in (old_agent_seed(s, 0, p), old_web_seed(s, 4, p))
            assert mine not in deals  # nor a draw of the deal's own generator or its children


def test_the_browser_app_seeds_its_agents_from_the_seeds_stream_and_deals_from_64_bits(tmp_path):
    from island_fortress_env.web.games import GameTable
    from island_fortress_env.web.store import RecordStore

    given: list[int] = []

    def make(spec: str, seed: int):
        given.append(seed)
        return make_agent(spec, seed)

    table = GameTable(["random"], make, RecordStore(tmp_path))
    game = table.create("watch", {"agents": ["random", "random"], "seed": 9})
    assert given == [agent_seed(9, 0, 0), agent_seed(9, 0, 1)] and game.seed == 9
    assert given != [old_web_seed(9, 2, 0), old_web_seed(9, 2, 1)]
    drawn = [table.create("watch", {"agents": ["random", "random"]}).seed for _ in range(4)]
    assert max(drawn) >= 2**32 and len(set(drawn)) == 4  # 64 bits of the OS (it was 32)


def test_play_deals_a_game_without_a_seed_from_64_bits(tmp_path):
    pytest.importorskip("rich", reason="play needs the [render] extra (rich)")
    from rich.console import Console

    from island_fortress_env.cli.play import play_game

    drawn = []
    for k in range(3):
        out = io.StringIO()
        play_game(
            ["random"], seat=0, save_path=tmp_path / f"{k}.json",
            ask=lambda prompt: "quit", console=Console(file=out, width=200),
        )  # fmt: skip
        drawn.append(int(out.getvalue().split(" seed ", 1)[1].split(".", 1)[0]))
    assert max(drawn) >= 2**32 and len(set(drawn)) == 3  # it was below 2**31


def test_deal_and_bot_seeds_come_from_the_os():
    deals = [deal_seed() for _ in range(16)]
    assert all(0 <= d < 2**64 for d in deals) and max(deals) >= 2**63 // 2 and len(set(deals)) == 16
    bots = [bot_seed() for _ in range(16)]
    assert all(0 <= b < 2**BOT_SEED_BITS for b in bots) and len(set(bots)) == 16


# --------------------------------------------------------------------------- remote bots


class SeedBot(http.server.BaseHTTPRequestHandler):
    """Answers GET with the protocol and keeps each decision request's (game, seat, decision,
    seed), answering it with an error: a game's first request is all it needs to see, and the
    spec's fallback plays the rest of the game quickly."""

    protocol_version = "HTTP/1.1"
    seen: ClassVar[list[tuple[str, int, int, int]]] = []

    def log_message(self, *args):
        pass

    def _send(self, value, status: int = 200) -> None:
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self._send({"protocol": 1})

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append((request["game"], request["seat"], request["decision"], request["seed"]))
        self._send({"error": "seen"}, 503)


@contextlib.contextmanager
def seed_bot() -> Iterator[tuple[str, list]]:
    pytest.importorskip("PIL", reason="a remote agent's view needs Pillow (the [web] extra)")
    seen: ClassVar[list[tuple[str, int, int, int]]] = []
    handler = type("Bot", (SeedBot,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/#fallback=random", seen
    finally:
        server.shutdown()


def sent_seeds(seen: list) -> list[int]:
    """The seed of each game, in the order the games began (one seed a game, every request)."""
    per_game: dict[str, set[int]] = {}
    for game, _, _, seed in seen:
        per_game.setdefault(game, set()).add(seed)
    assert all(len(seeds) == 1 for seeds in per_game.values())
    return [next(iter(seeds)) for seeds in per_game.values()]


def test_a_bot_is_sent_other_seeds_by_the_same_run_seed_and_none_inverts():
    with seed_bot() as (url, seen):
        ev.evaluate(["random", f"remote:{url}"], games=2, seed=3)
        first = sent_seeds(seen)
        seen.clear()
        ev.evaluate(["random", f"remote:{url}"], games=2, seed=3)
        second = sent_seeds(seen)
    assert len(first) == len(second) == 2 and len(set(first + second)) == 4
    for g, sent in enumerate(first + second):
        g %= 2
        # no run seed the search covers (3 among them) gives it, by the old derivation or the new
        assert invert(sent, g, 1, old_agent_seed) == [] and invert(sent, g, 1, agent_seed) == []
        deal = stream_seed(3, Stream.EVALUATION, g)  # game g's reset seed
        assert sent not in (deal, ev.env_game_seed(deal), agent_seed(3, g, 1), old_agent_seed(3, g, 1))
        assert 0 <= sent < 2**BOT_SEED_BITS
    # the same search has teeth: a bot sent the old derivation finds the run seed at once
    assert 3 in invert(old_agent_seed(3, 1, 1), 1, 1, old_agent_seed)


def test_the_browser_app_sends_a_bot_other_seeds_for_the_same_deal(tmp_path):
    pytest.importorskip("uvicorn", reason="the browser app needs the [web] extra")
    from starlette.testclient import TestClient

    from island_fortress_env.web import create_app

    with seed_bot() as (url, seen), TestClient(create_app([f"remote:{url}"], tmp_path)) as client:
        spec = f"remote:{url}"
        for _ in range(2):
            game = client.post("/api/watch", json={"agents": [spec, spec], "seed": 5}).json()
            advanced = client.post(
                f"/api/games/{game['id']}/advance", json={"token": game["token"], "moves": 6}
            )
            assert advanced.status_code == 200, advanced.text
        sent = sent_seeds(seen)
    assert len(sent) == 4 and len(set(sent)) == 4  # two games of one deal, two seats each
    for seed in sent:
        assert seed not in [old_web_seed(5, 2, p) for p in range(2)] + [agent_seed(5, 0, p) for p in range(2)]
        assert invert(seed, 0, 0, lambda s, g, i: old_web_seed(s, 2, i)) == []


def test_evaluate_and_tournament_deal_from_a_drawn_seed_when_a_remote_bot_plays(capsys):
    """With no --seed, a run of local agents deals from 0 (it replays by default); a run with a
    remote bot seated deals from a seed drawn from the OS, printed so that it can be replayed."""
    from island_fortress_env.players.seeds import run_seed

    assert run_seed(None, ["random", "heuristic"]) == (0, False)
    assert run_seed(7, ["random", "remote:http://127.0.0.1:9/"]) == (7, False)
    drawn = {run_seed(None, ["random", "remote:http://127.0.0.1:9/"]) for _ in range(3)}
    assert len(drawn) == 3 and all(was_drawn and seed >= 2**32 for seed, was_drawn in drawn)
    with seed_bot() as (url, seen):
        assert (
            cli.main(["evaluate", "random", f"remote:{url}", "--games", "2", "--json", "--no-progress"]) == 0
        )
    out, err = capsys.readouterr()
    seed = json.loads(out)["seed"]
    assert seed >= 2**32 and f"seed {seed} (drawn" in err and f"--seed {seed}" in err
    assert len(sent_seeds(seen)) == 2
