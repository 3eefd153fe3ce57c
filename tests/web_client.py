"""Helpers for the web app's tests: an app on a temporary games directory, and a person who
plays a game through the HTTP API with seeded random choices."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from island_fortress_env.env.aec import raw_env
from island_fortress_env.env.observation import action_mask
from island_fortress_env.env.records import GameRecord
from island_fortress_env.players import make_agent

pytest.importorskip("starlette", reason="the web app needs the [web] extra (starlette)")

from starlette.testclient import TestClient

from island_fortress_env.web import create_app


def client_for(games_dir, agents=("random", "heuristic")) -> TestClient:
    return TestClient(create_app(list(agents), games_dir))


def live_game(client: TestClient, game_id: str):
    """The server's own game (for the tests to know the truth)."""
    return client.app.state.web.games._games[game_id]


def play_through(
    client: TestClient,
    players: int,
    seat: int,
    seed: int,
    opponents: list[str] | None = None,
    check: Callable[[dict[str, Any], Any], None] | None = None,
    moves_per_advance: int = 1,
    undo: float = 0.0,
    undone: list[int] | None = None,
) -> dict[str, Any]:
    """Create a game and play it to the end, the person choosing at random among the choices
    the server offers (and, with probability ``undo`` where the server offers it, taking the
    last decision back; each undone step is added to ``undone``). ``check(response,
    live_game)`` sees every response. Returns the last."""
    snap = start(client, players, seat, opponents, seed)
    token, game_id = snap["token"], snap["id"]
    game = live_game(client, game_id)
    draw = random.Random(seed)
    if check:
        check(snap, game)
    for _ in range(5000):
        if snap["over"]:
            return snap
        if snap.get("can_undo") and draw.random() < undo:
            response = client.post(f"/api/games/{game_id}/undo", json={"token": token})
            assert response.status_code == 200, response.text
            snap = response.json()
            if undone is not None:
                undone.append(snap["undone"])
            if check:
                check(snap, game)
            continue
        if snap["waiting"]:
            choice = draw.choice(snap["view"]["choices"])
            response = client.post(
                f"/api/games/{game_id}/act", json={"token": token, "action": choice["action"]}
            )
        else:
            response = client.post(
                f"/api/games/{game_id}/advance", json={"token": token, "moves": moves_per_advance}
            )
        assert response.status_code == 200, response.text
        snap = response.json()
        if check:
            check(snap, game)
    raise AssertionError("the game did not end")


def heuristic_record(players: int = 3, seed: int = 4) -> GameRecord:
    """A finished game between heuristic agents, as a record."""
    env = raw_env(num_players=players)
    env.reset(seed=seed)
    state = env.game_state
    agents = [make_agent("heuristic", seed=p) for p in range(players)]
    taken = []
    while not state.is_terminal():
        action = agents[state.current_player()].act(None, action_mask(state), state)
        taken.append(action)
        state.apply_action(action)
    return GameRecord.from_game({"num_players": players}, seed, taken, ["heuristic"] * players, state)


def evaluation_result(
    players: int, rows: list[tuple[str, int, float, float]], seed: int = 0
) -> dict[str, Any]:
    """An evaluation result as ``island-fortress evaluate --json`` writes it (the fields the
    leaderboard reads): one row per agent, (spec, games, wins, mean score)."""
    from island_fortress_env.stats import wilson

    agents = []
    for spec, games, wins, mean in rows:
        low, high = wilson(wins / games, games)
        agents.append(
            {"name": spec, "spec": spec, "games": games, "wins": wins, "win_rate": wins / games,
             "ci95": [low, high], "mean_score": mean, "seat_games": [games // players] * players}
        )  # fmt: skip
    games = max(r[1] for r in rows)
    return {"agents": agents, "games": games, "seed": seed, "players": players, "rated": False}


def start(client: TestClient, players=3, seat=1, opponents=None, seed=5):
    """A new game of the person's at ``seat`` against ``opponents`` (random by default): its first
    answer."""
    body = {
        "players": players,
        "seat": seat,
        "opponents": opponents or ["random"] * (players - 1),
        "seed": seed,
    }
    response = client.post("/api/play", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def error(response, status):
    assert response.status_code == status, response.text
    message = response.json()["error"]
    assert isinstance(message, str) and message
    return message


def unchanged(client, snap, before):
    after = client.get(f"/api/games/{snap['id']}", params={"token": snap["token"]}).json()
    assert after["step"] == before["step"] and after["view"] == before["view"]


def wait(client, job):
    for _ in range(600):
        if job["done"]:
            assert job["error"] is None
            return job
        job = client.get(f"/api/analysis/{job['job']}").json()
    raise AssertionError("the analysis did not end")
