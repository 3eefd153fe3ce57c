"""The web app's HTTP API: playing, watching, replaying, analysing, and every bad request
answered by one clear 4xx that changes nothing, the server still serving."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest

from island_fortress_env.engine import actions as A
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.env.records import load, save, states
from island_fortress_env.players.seat_policies import BatchSeats
from island_fortress_env.web import analysis
from island_fortress_env.web.seatview import seat_view
from island_fortress_env.web.store import MAX_RECORD_BYTES
from island_fortress_env.web.words import seat_names
from tests.web_client import (
    client_for,
    error,
    heuristic_record,
    live_game,
    play_through,
    start,
    unchanged,
    wait,
)

ROOT = Path(__file__).resolve().parent.parent
CHECKPOINT = ROOT / "checkpoints" / "policy-2-4p.zip"
JSON = {"Content-Type": "application/json"}  # what the page sends with every body


# --------------------------------------------------------------------------- playing


def test_a_person_plays_a_whole_game_and_it_is_saved_as_a_record(client, tmp_path):
    last = play_through(client, players=2, seat=1, seed=8, opponents=["heuristic"])
    assert last["view"]["terminal"] and last["record"]
    record = load(tmp_path / "games" / last["record"])
    assert record.agents == ("heuristic", "human")
    assert record.seed == 8
    assert list(record.scores) == [p["score"] for p in last["view"]["players"]]
    assert last["view"]["breakdown"] and last["view"]["winners"] == list(record.winners)
    listed = client.get("/api/records").json()["records"]
    assert [r["name"] for r in listed] == [last["record"]]


def test_the_seed_of_a_game_being_played_is_never_sent(client):
    snap = start(client, seed=123456)
    assert "seed" not in json.dumps(snap)
    again = client.get(f"/api/games/{snap['id']}", params={"token": snap["token"]}).json()
    assert "seed" not in json.dumps(again)


def test_a_forced_move_of_the_person_is_applied_and_shown_not_asked(client):
    def check(snap, game):
        for move in snap.get("moves", []):
            if move["seat"] == game.seat:
                state = game.history[move["step"]]
                assert move["auto"] == (len(state.legal_actions()) == 1)
        if snap["waiting"]:
            assert len(snap["view"]["choices"]) > 1

    play_through(client, players=3, seat=0, seed=3, check=check)


def test_the_person_sees_the_moves_of_the_opponents_with_their_words(client):
    seen = []

    def check(snap, game):
        seen.extend(m for m in snap.get("moves", []) if m["seat"] != game.seat)

    play_through(client, players=2, seat=0, seed=21, opponents=["heuristic"], check=check)
    assert seen and all(m["text"] for m in seen)
    assert any(line["tone"] == "petition" for m in seen for line in m["lines"])


def test_watching_agents_play_to_the_end(client):
    response = client.post("/api/watch", json={"agents": ["random", "heuristic"], "seed": 2})
    assert response.status_code == 201
    snap = response.json()
    assert snap["seat"] is None and snap["view"]["seat"] is None
    assert all(p["hand"] is not None for p in snap["view"]["players"])  # a spectator sees every hand
    while not snap["over"]:
        snap = client.post(
            f"/api/games/{snap['id']}/advance", json={"token": response.json()["token"], "moves": 200}
        ).json()
    assert snap["record"].startswith("watch-")
    error(
        client.post(f"/api/games/{snap['id']}/act", json={"token": response.json()["token"], "action": 1}),
        403,
    )


# --------------------------------------------------------------------------- bad requests


def test_unknown_and_illegal_actions_are_refused_and_change_nothing(client):
    snap = start(client, seat=0)
    game_id, token = snap["id"], snap["token"]
    before = client.get(f"/api/games/{game_id}", params={"token": token}).json()
    assert before["waiting"]
    legal = {c["action"] for c in before["view"]["choices"]}
    illegal = next(a for a in range(NUM_ACTIONS) if a not in legal)
    assert "no action 999" in error(
        client.post(f"/api/games/{game_id}/act", json={"token": token, "action": 999}), 400
    )
    assert "not a legal choice" in error(
        client.post(f"/api/games/{game_id}/act", json={"token": token, "action": illegal}), 409
    )
    for bad in ("7", 7.0, True, None, [1]):
        assert "integer action id" in error(
            client.post(f"/api/games/{game_id}/act", json={"token": token, "action": bad}), 400
        )
    assert "your move" in error(client.post(f"/api/games/{game_id}/advance", json={"token": token}), 409)
    unchanged(client, snap, before)


def test_a_move_out_of_turn_is_refused(client):
    snap = start(client, seat=2)  # seat A keeps its favor cards first
    before = client.get(f"/api/games/{snap['id']}", params={"token": snap["token"]}).json()
    assert not before["waiting"]
    game = live_game(client, snap["id"])
    action = game.state.legal_actions()[0]
    message = error(
        client.post(f"/api/games/{snap['id']}/act", json={"token": snap["token"], "action": action}), 409
    )
    assert message == "it is not your turn: A (Beginner bot) is to move"
    unchanged(client, snap, before)


def test_a_seat_that_is_not_yours_is_refused(client):
    snap = start(client, seat=1)
    game_id, token = snap["id"], snap["token"]
    before = client.get(f"/api/games/{game_id}", params={"token": token}).json()
    assert "seat 0 is not yours" in error(
        client.get(f"/api/games/{game_id}", params={"token": token, "seat": 0}), 403
    )
    assert client.get(f"/api/games/{game_id}", params={"token": token, "seat": 1}).status_code == 200
    assert "not yours" in error(
        client.post(f"/api/games/{game_id}/act", json={"token": token, "seat": 0, "action": 5}), 403
    )
    assert "token" in error(client.get(f"/api/games/{game_id}", params={"token": "guess"}), 403)
    assert "token" in error(client.post(f"/api/games/{game_id}/advance", json={}), 403)
    assert "no game" in error(client.get("/api/games/nope", params={"token": token}), 404)
    unchanged(client, snap, before)


def test_the_checkpoint_view_of_another_seats_move_is_refused(tmp_path):
    with client_for(tmp_path, agents=("random", str(CHECKPOINT))) as c:
        snap = start(c, seat=2)
        params = {"token": snap["token"], "checkpoint": str(CHECKPOINT)}
        assert "another seat" in error(c.get(f"/api/games/{snap['id']}/policy", params=params), 403)


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"players": 5, "seat": 0, "opponents": []}, "'players'"),
        ({"players": True, "seat": 0, "opponents": []}, "'players'"),
        ({"players": 2, "seat": 2, "opponents": ["random"]}, "'seat'"),
        ({"players": 3, "seat": 0, "opponents": ["random"]}, "'opponents'"),
        ({"players": 2, "seat": 0, "opponents": ["alphazero"]}, "unknown agent 'alphazero'"),
        ({"players": 2, "seat": 0, "opponents": ["/etc/passwd"]}, "unknown agent"),
        ({"players": 2, "seat": 0, "opponents": ["random"], "seed": -1}, "'seed'"),
        ({"players": 2, "seat": 0, "opponents": ["random"], "seed": "7"}, "'seed'"),
    ],
)
def test_a_bad_new_game_is_refused(client, body, words):
    assert words in error(client.post("/api/play", json=body), 400)
    assert client.app.state.web.games._games == {}


def test_malformed_and_oversized_bodies_are_refused(client):
    snap = start(client, seat=0)
    url = f"/api/games/{snap['id']}/act"
    assert "not valid JSON" in error(client.post(url, headers=JSON, content=b"{not json"), 400)
    assert "JSON object" in error(client.post(url, headers=JSON, content=b"[1, 2]"), 400)
    assert "at most" in error(client.post(url, headers=JSON, content=b"{" + b" " * 70_000 + b"}"), 413)
    assert "'watch'" not in error(client.post("/api/watch", json={"agents": ["random"]}), 400)
    assert client.get("/api/config").status_code == 200


def test_record_uploads_are_checked(client, tmp_path):
    record = heuristic_record(players=2, seed=1)
    good = json.dumps(record.to_dict()).encode()
    assert "not valid JSON" in error(client.post("/api/records", headers=JSON, content=b"{oops"), 400)
    assert "not a text" in error(client.post("/api/records", headers=JSON, content=b"\xff\xfe\x00"), 400)
    assert "not an Island Fortress game record" in error(
        client.post("/api/records", headers=JSON, content=b'{"a": 1}'), 400
    )
    broken = record.to_dict()
    broken["actions"][5] = 379
    assert "does not replay" in error(
        client.post("/api/records", headers=JSON, content=json.dumps(broken).encode()), 400
    )
    wrong_score = record.to_dict()
    wrong_score["scores"][0] += 1
    assert "the record says" in error(
        client.post("/api/records", headers=JSON, content=json.dumps(wrong_score).encode()), 400
    )
    deck = record.to_dict()
    deck["rules"]["favor_deck"] = "/etc/passwd"
    assert "favor deck" in error(
        client.post("/api/records", headers=JSON, content=json.dumps(deck).encode()), 400
    )
    bad_rules = record.to_dict()
    bad_rules["rules"]["num_players"] = 9
    error(client.post("/api/records", headers=JSON, content=json.dumps(bad_rules).encode()), 400)
    assert "at most" in error(
        client.post("/api/records", headers=JSON, content=b" " * (MAX_RECORD_BYTES + 1)), 413
    )
    assert client.get("/api/records").json()["records"] == []
    response = client.post("/api/records", headers=JSON, content=good)
    assert response.status_code == 201
    name = response.json()["name"]
    assert client.post("/api/records", headers=JSON, content=good).json()["name"] == name  # the same file
    assert [r["name"] for r in client.get("/api/records").json()["records"]] == [name]
    assert load(tmp_path / "games" / name) == record


@pytest.mark.parametrize(
    "name",
    [
        "..%2Fsecret.json",
        "%2Fetc%2Fpasswd",
        "..%5Csecret.json",
        "secret.txt",
        ".hidden.json",
        "a..json",
        "%00.json",
    ],
)
def test_a_record_outside_the_games_directory_is_refused(client, tmp_path, name):
    (tmp_path / "secret.json").write_text(json.dumps(heuristic_record(2, 1).to_dict()))
    response = client.get(f"/api/records/{name}")
    assert response.status_code in (400, 404), response.text
    assert response.json()["error"]
    assert client.get(f"/api/records/{name}/steps/0").status_code in (400, 404)
    assert client.get("/api/config").status_code == 200


def test_a_missing_record_is_a_404(client):
    assert "no record" in error(client.get("/api/records/nothing.json"), 404)


# --------------------------------------------------------------------------- replays


def test_a_replay_steps_through_every_position(client, tmp_path):
    record = heuristic_record(players=3, seed=4)
    save(record, tmp_path / "games" / "game.json")
    summary = client.get("/api/records/game.json").json()
    total = len(record.actions)
    assert summary["total"] == total and len(summary["positions"]) == total + 1
    assert len(summary["moves"]) == total and len(summary["lines"]) == total + 1
    assert summary["lines"][0][0]["text"] == "A new game: 3 players, a wall of 2 regions."
    assert summary["lines"][-1][-4]["text"].startswith("Game over.")
    every = states(record)
    names = seat_names(record.agents)
    for step in (0, 1, total // 2, total):
        data = client.get(f"/api/records/game.json/steps/{step}").json()
        assert data["view"] == json.loads(json.dumps(seat_view(every[step], None, names, False)))
    seen_by_b = client.get("/api/records/game.json/steps/3", params={"seat": 1}).json()["view"]
    assert [p["hand"] is None for p in seen_by_b["players"]] == [True, False, True]
    assert "'seat'" in error(client.get("/api/records/game.json/steps/9", params={"seat": 3}), 400)
    assert "not in this game" in error(client.get(f"/api/records/game.json/steps/{total + 1}"), 400)
    public = client.get("/api/records/game.json", params={"seat": 1}).json()["moves"]
    hidden = [i for i, s in enumerate(every[:-1]) if s.current_player() != 1 and s.decision in (0, 1)]
    assert hidden and all(public[i] in ("keeps a favor card", "seals a petition bid") for i in hidden)


def test_analysis_chances_come_from_seeded_rollouts(client, tmp_path):
    record = heuristic_record(players=3, seed=4)
    save(record, tmp_path / "games" / "game.json")
    total = len(record.actions)
    body = {"steps": [0, 40, total], "playout": "random", "rollouts": 8}
    job = client.post("/api/records/game.json/analysis", json=body)
    assert job.status_code == 202
    result = wait(client, job.json())
    assert [p["step"] for p in result["points"]] == [0, 40, total]
    for point in result["points"]:
        assert sum(point["chances"]) == pytest.approx(1.0)
    final = result["points"][-1]["chances"]
    assert [c > 0 for c in final] == [i in record.winners for i in range(3)]
    assert "8 random playouts per position, from the true position" in result["method"]
    again = wait(client, client.post("/api/records/game.json/analysis", json=body).json())
    assert again["points"] == result["points"]
    seat = wait(client, client.post("/api/records/game.json/analysis", json={**body, "seat": 0}).json())
    assert "redeals" in seat["method"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"steps": [0], "playout": "minimax", "rollouts": 8}, "'playout'"),
        ({"steps": [0], "playout": "random", "rollouts": 0}, "'rollouts'"),
        ({"steps": [0], "playout": "random", "rollouts": 10_000}, "'rollouts'"),
        ({"steps": [], "playout": "random", "rollouts": 8}, "'steps'"),
        ({"steps": [-1], "playout": "random", "rollouts": 8}, "not a position"),
        ({"steps": [0], "playout": "random", "rollouts": 8, "seat": 7}, "'seat'"),
    ],
)
def test_a_bad_analysis_request_is_refused(client, tmp_path, body, words):
    save(heuristic_record(2, 1), tmp_path / "games" / "game.json")
    assert words in error(client.post("/api/records/game.json/analysis", json=body), 400)
    assert "no analysis" in error(client.get("/api/analysis/nope"), 404)


def test_analysis_runs_beside_play_without_holding_it(client, monkeypatch):
    # The heuristic playouts wait until the test lets them go, however fast the machine is.
    release = threading.Event()

    class Held(BatchSeats):
        def act(self, observations, masks, games):
            release.wait(timeout=60)
            return super().act(observations, masks, games)

    held = {"heuristic": Held("random"), "random": BatchSeats("random")}
    monkeypatch.setattr(analysis, "playout_policy", held.__getitem__)
    snap = start(client, players=3, seat=0, seed=9)
    game_id, token = snap["id"], snap["token"]
    slow = {"token": token, "steps": [0], "playout": "heuristic", "rollouts": 256}
    job = client.post(f"/api/games/{game_id}/analysis", json=slow).json()
    choice = snap["view"]["choices"][0]["action"]
    played = client.post(f"/api/games/{game_id}/act", json={"token": token, "action": choice})
    assert played.status_code == 200 and played.json()["step"] == 1
    running = client.get(f"/api/analysis/{job['job']}").json()
    assert not running["done"]  # its playouts are still being played
    quick = client.post(
        f"/api/games/{game_id}/analysis", json={**slow, "playout": "random", "rollouts": 4}
    ).json()
    release.set()
    assert wait(client, quick)["points"][0]["step"] == 0
    assert client.get(f"/api/analysis/{job['job']}").json()["cancelled"]


@pytest.mark.skipif(not CHECKPOINT.is_file(), reason="the shipped checkpoint is not in this checkout")
def test_a_checkpoint_shows_its_top_actions(tmp_path):
    with client_for(tmp_path, agents=("random", str(CHECKPOINT))) as c:
        save(heuristic_record(3, 4), tmp_path / "game.json")
        config = c.get("/api/config").json()
        assert config["checkpoints"] == [str(CHECKPOINT)]
        data = c.get(
            "/api/records/game.json/policy", params={"step": 30, "checkpoint": str(CHECKPOINT)}
        ).json()
        probs = [a["probability"] for a in data["actions"]]
        assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1 + 1e-9
        replay = c.app.state.web.store.open("game.json")
        legal = replay.states[30].legal_actions()
        assert all(a["action"] in legal and a["label"] for a in data["actions"])
        assert data["chosen"] == replay.record.actions[30]
        assert "unknown checkpoint" in error(
            c.get("/api/records/game.json/policy", params={"step": 3, "checkpoint": "x"}), 400
        )
        snap = start(c, seat=0, opponents=["random", "random"])
        mine = c.get(
            f"/api/games/{snap['id']}/policy", params={"token": snap["token"], "checkpoint": str(CHECKPOINT)}
        )
        assert mine.status_code == 200 and mine.json()["seat"] == 0


# --------------------------------------------------------------------------- leaderboard, page, config


def test_the_leaderboard_reads_evaluation_results(client, tmp_path):
    from island_fortress_env.training.evaluate import evaluate

    games = tmp_path / "games"
    result = evaluate(["heuristic", "random", "random"], games=3, seed=0)
    (games / "eval-3p.json").write_text(json.dumps(result))
    rated = json.loads(json.dumps(result))
    rated["rated"] = True
    for i, entry in enumerate(rated["agents"]):
        entry["rating"] = {"mu": 25.0 - i, "sigma": 8.0, "ordinal": float(-i)}
    (games / "eval-rated.json").write_text(json.dumps(rated))
    (games / "broken.json").write_text("{")
    (games / "other.json").write_text('{"agents": [{"name": "x"}], "players": 2, "games": 1}')
    save(heuristic_record(2, 1), games / "game.json")
    board = client.get("/api/leaderboard").json()
    assert [t["file"] for t in board["tables"]] == ["eval-3p.json", "eval-rated.json"]
    plain = board["tables"][0]
    assert plain["players"] == 3 and plain["games"] == 3
    assert sorted(a["name"] for a in plain["agents"]) == sorted(a["name"] for a in result["agents"])
    rates = [a["win_rate"] for a in plain["agents"]]
    assert rates == sorted(rates, reverse=True)
    assert [a["rating"]["mu"] for a in board["tables"][1]["agents"]] == [25.0, 24.0, 23.0]
    assert {s["file"] for s in board["skipped"]} == {"broken.json", "other.json"}


def test_the_page_loads_nothing_from_elsewhere(client):
    page = client.get("/replay/anything.json")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "default-src 'self'" in page.headers["content-security-policy"]
    static = Path(__file__).resolve().parent.parent / "island_fortress_env" / "web" / "static"
    for path in static.iterdir():
        text = path.read_text("utf-8").replace("http://www.w3.org/2000/svg", "")  # a namespace name
        assert not re.search(r"https?://", text), path.name
        assert client.get(f"/static/{path.name}").status_code == 200
    assert '<script type="module" src="/static/app.js">' in page.text


def test_the_config_offers_the_agents_and_the_rules(client):
    config = client.get("/api/config").json()
    assert config["agents"] == ["random", "heuristic"] and config["checkpoints"] == []
    assert [o["name"] for o in config["ops"]] == list(A.OP_NAMES)
    assert config["rules"][1]["title"] == "Recruiter"
    assert client.get("/api/nothing").status_code == 404
    assert client.get("/api/nothing").json()["error"]
