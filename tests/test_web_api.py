"""The web app's HTTP API: playing, watching, replaying, analysing, and every bad request
answered by one clear 4xx that changes nothing, the server still serving."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from island_fortress_env.engine import actions as A
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.env.records import load, save, states
from island_fortress_env.web.seatview import seat_view
from island_fortress_env.web.store import MAX_RECORD_BYTES
from tests.web_client import client_for, heuristic_record, live_game, play_through

ROOT = Path(__file__).resolve().parent.parent
CHECKPOINT = ROOT / "checkpoints" / "policy-2-4p.zip"
JSON = {"Content-Type": "application/json"}  # what the page sends with every body


@pytest.fixture
def client(tmp_path):
    with client_for(tmp_path / "games") as c:
        yield c


def start(client, players=3, seat=1, opponents=None, seed=5):
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


def unchanged(client, snap, before):
    after = client.get(f"/api/games/{snap['id']}", params={"token": snap["token"]}).json()
    assert after["step"] == before["step"] and after["view"] == before["view"]


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
    assert message == "it is not your turn: A (random) is to move"
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
    for step in (0, 1, total // 2, total):
        data = client.get(f"/api/records/game.json/steps/{step}").json()
        assert data["view"] == json.loads(json.dumps(seat_view(every[step], None, record.agents, False)))
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


def wait(client, job):
    for _ in range(600):
        if job["done"]:
            assert job["error"] is None
            return job
        job = client.get(f"/api/analysis/{job['job']}").json()
    raise AssertionError("the analysis did not end")


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


def test_analysis_runs_beside_play_without_holding_it(client):
    snap = start(client, players=3, seat=0, seed=9)
    game_id, token = snap["id"], snap["token"]
    slow = {"token": token, "steps": [0], "playout": "heuristic", "rollouts": 256}
    job = client.post(f"/api/games/{game_id}/analysis", json=slow).json()
    choice = snap["view"]["choices"][0]["action"]
    played = client.post(f"/api/games/{game_id}/act", json={"token": token, "action": choice})
    assert played.status_code == 200 and played.json()["step"] == 1
    running = client.get(f"/api/analysis/{job['job']}").json()
    assert not running["done"]  # 256 heuristic games are still being played
    quick = client.post(
        f"/api/games/{game_id}/analysis", json={**slow, "playout": "random", "rollouts": 4}
    ).json()
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


# --------------------------------------------------------------------------- undo


def same_position(a, b) -> None:
    """Two states are the same game: the same events, choices, scores and every seat's
    observation now, and the same game after it when both are played on alike (the generator
    and the deck included)."""
    import random

    import numpy as np

    from island_fortress_env.env.observation import ObservationEncoder

    encoder = ObservationEncoder(a.game)
    a, b = a.clone(), b.clone()
    draw = random.Random(0)
    for _ in range(100_000):
        assert list(a.log) == list(b.log) and a.legal_actions() == b.legal_actions()
        assert list(a.score) == list(b.score)
        for seat in range(a.n):
            assert np.array_equal(encoder.encode(a, seat), encoder.encode(b, seat))
        if a.is_terminal():
            return
        action = draw.choice(a.legal_actions())
        a.apply_action(action)
        b.apply_action(action)


def test_undo_replays_the_game_without_the_last_decision(client):
    """The person's last decision is taken back by replaying the record without it: the state
    afterwards is the state of a fresh replay of the actions before it, and the game goes on."""
    from island_fortress_env.env.records import initial_state

    snap = start(client, players=3, seat=0, seed=12, opponents=["heuristic", "random"])
    game_id, token = snap["id"], snap["token"]
    game = live_game(client, game_id)
    assert "can't" not in json.dumps(snap) and not snap["can_undo"]
    assert "no decision to undo" in error(
        client.post(f"/api/games/{game_id}/undo", json={"token": token}), 409
    )
    draw = __import__("random").Random(12)
    checked = 0
    while checked < 3:
        if snap["waiting"]:
            before = list(game.actions)
            choice = draw.choice(snap["view"]["choices"])["action"]
            snap = client.post(f"/api/games/{game_id}/act", json={"token": token, "action": choice}).json()
            assert snap["can_undo"]  # nobody else has moved since
            if draw.random() < 0.5:
                continue
            undone = client.post(f"/api/games/{game_id}/undo", json={"token": token})
            assert undone.status_code == 200, undone.text
            undone = undone.json()
            step = undone["undone"]
            assert step == len(before) and game.actions == before and undone["step"] == step
            assert undone["waiting"] and undone["generation"] == checked + 1
            assert len(undone["moves"]) == step and [m["step"] for m in undone["moves"]] == list(range(step))
            fresh = initial_state(game.rules, game.seed)
            for action in before:
                fresh.apply_action(action)
            same_position(game.state, fresh)
            assert len(game.history) == step + 1
            same_position(game.history[-1], fresh)
            checked += 1
            snap = undone
        else:
            snap = client.post(f"/api/games/{game_id}/advance", json={"token": token}).json()
    # Once another seat has moved, the decision is the table's: undo is refused, nothing changes.
    while not (snap["waiting"] and not snap["can_undo"] and any(m.seat != 0 for m in game.moves[-3:])):
        if snap["waiting"]:
            snap = client.post(
                f"/api/games/{game_id}/act",
                json={"token": token, "action": snap["view"]["choices"][0]["action"]},
            ).json()
        else:
            snap = client.post(f"/api/games/{game_id}/advance", json={"token": token}).json()
    before = client.get(f"/api/games/{game_id}", params={"token": token}).json()
    assert "has moved since your last decision" in error(
        client.post(f"/api/games/{game_id}/undo", json={"token": token}), 409
    )
    unchanged(client, {**snap, "token": token}, before)


def test_undo_is_refused_where_there_is_nothing_of_yours_to_take_back(client):
    watch = client.post("/api/watch", json={"agents": ["random", "random"], "seed": 1}).json()
    assert "agents play every seat" in error(
        client.post(f"/api/games/{watch['id']}/undo", json={"token": watch["token"]}), 403
    )
    assert "token" in error(client.post(f"/api/games/{watch['id']}/undo", json={"token": "x"}), 403)
    last = play_through(client, players=2, seat=0, seed=3)
    game_id = last["id"]
    token = live_game(client, game_id).token
    assert not last["can_undo"]
    assert "game is over" in error(client.post(f"/api/games/{game_id}/undo", json={"token": token}), 409)


def test_a_game_link_without_its_token_finds_the_replay_once_over(client):
    """``/api/games/ID/public``: what anyone with the link may know (another tab, another
    browser): the kind of game, whether it is over and its saved record; nothing of the table."""
    snap = start(client, seat=0)
    public = client.get(f"/api/games/{snap['id']}/public").json()
    assert public == {"id": snap["id"], "kind": "play", "over": False, "record": None}
    last = play_through(client, players=2, seat=1, seed=4)
    done = client.get(f"/api/games/{last['id']}/public").json()
    assert done["over"] and done["record"] == last["record"]
    assert "no game" in error(client.get("/api/games/nope/public"), 404)


# --------------------------------------------------------------------------- what the table tells


def test_the_recap_tells_the_other_seats_turns_and_every_score_change(client):
    """At each of the person's decisions the recap holds the moves since their last turn: the
    other seats' turns in words with the cells they changed, and every score change with its
    reason from the typed events, adding up to the scores' change."""
    seen = {"recaps": 0, "scores": 0}

    def check(snap, game):
        recap = snap.get("recap")
        if not snap["waiting"] or recap is None:
            return
        seen["recaps"] += 1
        moves = game.moves[recap["from"] : recap["to"]]
        assert moves and all(m.seat != game.seat for m in moves)
        assert [t["seat"] for t in recap["turns"]] == [
            m.seat for i, m in enumerate(moves) if i == 0 or moves[i - 1].seat != m.seat
        ]
        assert all(t["lines"] for t in recap["turns"])
        gained = [a - b for a, b in zip(recap["after"], recap["before"], strict=True)]
        by_seat = [sum(s["points"] for s in recap["scores"] if s["seat"] == p) for p in range(len(gained))]
        assert by_seat == gained
        for change in recap["scores"]:
            assert change["why"].startswith(("for ", "from ")) and change["category"] and change["reason"]
            seen["scores"] += 1

    play_through(client, players=3, seat=2, seed=5, opponents=["heuristic", "heuristic"], check=check)
    assert seen["recaps"] > 20 and seen["scores"] > 3


def test_the_prisons_gifts_are_told_after_each_petition(client):
    said = []

    def check(snap, game):
        for move in snap.get("moves", []):
            said.extend(line["text"] for line in move["lines"])

    play_through(client, players=2, seat=0, seed=6, opponents=["heuristic"], check=check)
    petitions = [i for i, text in enumerate(said) if text.startswith("Bids revealed:")]
    assert len(petitions) >= 3
    for i in petitions:
        after = next(t for t in said[i + 1 : i + 4] if t.startswith("After the petition"))
        assert re.fullmatch(
            r"After the petition, 1 Jade and 1 Convict from the supply go to the prison of region \d, "
            r"where the winner's Taskmaster is; it holds \d+ Jade and \d+ Convicts? now\.",
            after,
        )
    assert any(
        re.match(
            r"1 Convict from the supply goes to the prison of region \d \((Recruiter|Planner|Builder) A\)", t
        )
        for t in said
    )


def test_the_bid_says_what_winning_gives_and_that_only_the_winner_pays(client):
    snap = start(client, players=2, seat=0, seed=2)
    game = live_game(client, snap["id"])
    while snap["view"]["decision"] != "petition bid" or not snap["waiting"]:
        path = "act" if snap["waiting"] else "advance"
        body = {"token": snap["token"]}
        if snap["waiting"]:
            body["action"] = snap["view"]["choices"][0]["action"]
        snap = {**client.post(f"/api/games/{game.id}/{path}", json=body).json(), "token": snap["token"]}
    note = " ".join(snap["notes"])
    assert "Only the winner pays the bid; everyone else keeps their Jade." in note
    assert "the Governor marker" in note and "a Governor block" in note and "first turn" in note


def test_build_one_or_two_blocks_says_why_two_is_not_offered():
    from island_fortress_env.engine import Game
    from island_fortress_env.engine.decisions import Decision
    from island_fortress_env.web.words import decision_notes

    reasons = set()
    for seed in range(40):
        state = Game(num_players=2).new_initial_state(seed)
        draw = __import__("random").Random(seed)
        while not state.is_terminal():
            legal = state.legal_actions()
            if state.decision == Decision.BUILD_COUNT:
                notes = [n for n in decision_notes(state, state.current_player()) if n.startswith("Build 2")]
                assert bool(notes) == (A.BUILD_COUNT + 1 not in legal)
                if notes:
                    p = state.current_player()
                    if "Wall Blocks in your supply" in notes[0]:
                        assert state.blocks[p] < 2 and f"you have {state.blocks[p]}" in notes[0]
                        reasons.add("blocks")
                    elif "Jade" in notes[0]:
                        assert state.jade[p] < 3
                        reasons.add("jade")
                    else:
                        reasons.add("workers or room")
            state.apply_action(draw.choice(legal))
    assert {"blocks", "workers or room"} <= reasons


def test_a_move_that_loses_the_governor_block_or_ends_the_game_is_warned():
    """The choices that lose the Governor block (ending the holder's third turn with it) or end
    the game carry a warning; no other choice does."""
    from island_fortress_env.engine import Game
    from island_fortress_env.web.words import consequences

    lost = ended = 0
    for seed in range(12):
        state = Game(num_players=3).new_initial_state(seed)
        draw = __import__("random").Random(seed)
        while not state.is_terminal():
            seat = state.current_player()
            warned = consequences(state, seat, ("a", "b", "c"))
            for action in state.legal_actions():
                after = state.clone()
                after.apply_action(action)
                while (
                    not after.is_terminal()
                    and after.current_player() == seat
                    and len(after.legal_actions()) == 1
                ):
                    after.apply_action(after.legal_actions()[0])
                new = after.log[len(state.log) :]
                loses = any(type(e).__name__ == "GovernorLost" and e.player == seat for e in new)
                ends = after.is_terminal()
                assert (action in warned) == (loses or ends), (action, warned)
                if loses:
                    assert "goes back to the box" in warned[action]
                    lost += 1
                if ends:
                    assert warned[action].startswith("This ends the game: the final scores would be ")
                    assert ", ".join(f"{'ABC'[p]} {s}" for p, s in enumerate(after.score)) in warned[action]
                    ended += 1
            # never the Governor block, so that holders lose it
            legal = [
                a for a in state.legal_actions() if a not in A.ACTION_FAMILIES[13]
            ] or state.legal_actions()
            state.apply_action(draw.choice(legal))
    assert lost > 0 and ended > 0


# --------------------------------------------------------------------------- levels, names, leaderboard


def test_the_setup_offers_named_bot_levels_with_their_ladder_ratings(client):
    config = client.get("/api/config").json()
    levels = {entry["level"]: entry for entry in config["levels"]}
    assert levels["Beginner"]["spec"] == "random" and levels["Casual"]["spec"] == "heuristic"
    assert levels["Casual"]["rating"]["ordinal"] == 13.8
    if CHECKPOINT.is_file():
        assert levels["Strong"]["label"] == "policy-2-4p" and levels["Strong"]["rating"]["ordinal"] == 37.6
        assert levels["Master"]["spec"] == "search:64"
        snap = start(client, players=2, seat=0, opponents=[levels["Strong"]["spec"]])
        assert snap["names"] == ["you", "policy-2-4p"]
    assert config["rollouts"]["random"] >= 200 and config["rollouts"]["heuristic"] >= 48


def test_the_ladder_ratings_are_the_ones_docs_strength_md_shows():
    from island_fortress_env.web.levels import LADDER

    text = (ROOT / "docs" / "STRENGTH.md").read_text("utf-8")
    table = text[text.index("## The ladder") :]
    rows = re.findall(
        r"^\| \d \| `([^`]+)`[^|]*\| (-?[\d.]+) \| (-?[\d.]+) \+- ([\d.]+) \|", table, re.MULTILINE
    )
    assert len(rows) == len(LADDER)
    for spec, ordinal, mu, sigma in rows:
        label = spec.rsplit("/", 1)[-1].removesuffix(".zip")
        rating = LADDER[label]
        assert (rating.ordinal, rating.mu, rating.sigma) == (float(ordinal), float(mu), float(sigma))


def test_seats_are_named_alike_on_the_play_page_and_in_its_replay(client, tmp_path):
    last = play_through(client, players=2, seat=1, seed=9, opponents=["heuristic"])
    assert last["names"] == ["heuristic", "you"]
    replay = client.get(f"/api/records/{last['record']}").json()
    assert replay["agents"] == last["names"]
    assert [
        p["name"] for p in client.get(f"/api/records/{last['record']}/steps/3").json()["view"]["players"]
    ] == [
        "heuristic",
        "you",
    ]
    listed = client.get("/api/records").json()["records"]
    assert listed[0]["agents"] == ["heuristic", "you"]


def test_the_end_screen_comes_with_the_end_only(client):
    def check(snap, game):
        assert ("end" in snap) == game.over

    last = play_through(client, players=3, seat=0, seed=10, check=check)
    end = last["end"]
    assert [row["total"] for row in end["rows"]] == [p["score"] for p in last["view"]["players"]]
    for row in end["rows"]:
        assert sum(row["points"]) == row["total"]
        assert row["winner"] == (row["seat"] in end["winners"])
    assert end["categories"] and set(end["categories"]) <= set(
        __import__("island_fortress_env.web.recap", fromlist=["CATEGORIES"]).CATEGORIES
    )


def test_the_leaderboard_ranks_every_agent_over_all_results(client, tmp_path):
    from tests.web_client import evaluation_result

    games = tmp_path / "games"
    two = evaluation_result(2, [("heuristic", 40, 38, 40.2), ("random", 40, 2, 9.5)])
    three = evaluation_result(
        3, [("random", 30, 2, 8.1), ("heuristic", 30, 27, 35.0), ("mcts:50", 30, 1, 7.9)]
    )
    (games / "eval-2p.json").write_text(json.dumps(two))
    (games / "eval-3p.json").write_text(json.dumps(three))
    board = client.get("/api/leaderboard").json()
    overall = board["overall"]
    assert [row["spec"] for row in overall] == ["heuristic", "random", "mcts:50"]
    assert [r["rank"] for r in overall] == [1, 2, 3]
    heuristic = overall[0]
    tables = [a for t in board["tables"] for a in t["agents"] if a["spec"] == "heuristic"]
    assert heuristic["games"] == sum(a["games"] for a in tables) and heuristic["tables"] == 2
    assert heuristic["players"] == [2, 3]
    expected = sum(
        a["games"] / t["players"] for t in board["tables"] for a in t["agents"] if a["spec"] == "heuristic"
    )
    assert heuristic["vs_chance"] == pytest.approx(heuristic["wins"] / expected)
    assert heuristic["ci95"][0] <= heuristic["win_rate"] <= heuristic["ci95"][1]


def test_chances_come_with_their_band_and_count(client, tmp_path):
    from island_fortress_env.web.analysis import wilson

    record = heuristic_record(players=2, seed=3)
    save(record, tmp_path / "games" / "game.json")
    body = {"steps": [0, 30, len(record.actions)], "playout": "random", "rollouts": 40}
    result = wait(client, client.post("/api/records/game.json/analysis", json=body).json())
    assert "the band is the 95% Wilson interval" in result["method"]
    for point in result["points"]:
        for c, low, high in zip(point["chances"], point["low"], point["high"], strict=True):
            assert low <= c <= high
        if point["step"] < len(record.actions):
            assert point["rollouts"] == 40 and point["high"][0] - point["low"][0] > 0.1
        else:
            assert point["rollouts"] == 0 and point["low"] == point["high"] == point["chances"]
    low, high = wilson(0.5, 256)
    assert 0.43 < low < 0.44 and 0.56 < high < 0.57


def test_an_advance_returns_the_moves_made_once_its_time_is_up(client, monkeypatch):
    """A slow bot's moves come to the page as they are made: an advance request stops after
    ``ADVANCE_SECONDS`` (with at least one move), and the next one goes on."""
    from island_fortress_env.web import games

    monkeypatch.setattr(games, "ADVANCE_SECONDS", 0.0)
    snap = start(client, players=3, seat=2, seed=4)
    moved = client.post(f"/api/games/{snap['id']}/advance", json={"token": snap["token"], "moves": 50}).json()
    assert len(moved["moves"]) == 1 and moved["step"] == 1


@pytest.mark.skipif(not CHECKPOINT.is_file(), reason="the shipped checkpoint is not in this checkout")
def test_a_search_level_plays_a_seat(client):
    pytest.importorskip("torch", reason="the search levels need torch")
    levels = {entry["level"]: entry["spec"] for entry in client.get("/api/config").json()["levels"]}
    snap = start(client, players=2, seat=1, opponents=[levels["Expert"]], seed=3)
    assert snap["names"] == ["search:16", "you"] and not snap["waiting"]
    moved = client.post(f"/api/games/{snap['id']}/advance", json={"token": snap["token"], "moves": 3}).json()
    assert moved["moves"] and all(m["seat"] == 0 for m in moved["moves"])
