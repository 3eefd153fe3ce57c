"""People's ratings (``web.ratings``): a name sent with a new game, checked (a bad one is a 400
and no game); each finished game of a named person updates their OpenSkill rating in the games
directory's ``people-ratings.json`` (written whole, bounded, never over a file it cannot read);
the leaderboard shows people as ``person:NAME`` beside the agents (``agent:LABEL``)."""

from __future__ import annotations

import json
import random

import pytest

pytest.importorskip("openskill", reason="people's ratings need openskill (the [web] extra)")

from island_fortress_env.env.records import states
from island_fortress_env.web import ratings
from island_fortress_env.web.ratings import RATINGS_FILE, PeopleRatings, check_name
from tests.web_client import client_for, error, heuristic_record


@pytest.fixture
def client(tmp_path):
    return client_for(tmp_path / "games")


def play_named(client, name, seed, seat=0, opponents=("random",)):
    """A whole game played by a person named ``name`` (seeded random choices); its last answer."""
    body = {
        "players": len(opponents) + 1,
        "seat": seat,
        "opponents": list(opponents),
        "seed": seed,
        "name": name,
    }
    response = client.post("/api/play", json=body)
    assert response.status_code == 201, response.text
    snap = response.json()
    token, game = snap["token"], snap["id"]
    draw = random.Random(seed)
    for _ in range(5000):
        if snap["over"]:
            return snap
        if snap["waiting"]:
            action = draw.choice(snap["view"]["choices"])["action"]
            response = client.post(f"/api/games/{game}/act", json={"token": token, "action": action})
        else:
            response = client.post(f"/api/games/{game}/advance", json={"token": token, "moves": 50})
        assert response.status_code == 200, response.text
        snap = response.json()
    raise AssertionError("the game did not end")


def test_each_finished_game_updates_the_persons_rating_shown_beside_the_agents(client, tmp_path):
    first = play_named(client, " Ana Lúcia ", seed=3)
    mine = first["person_rating"]
    assert mine["name"] == "person:Ana Lúcia" and mine["games"] == 1
    assert mine["ordinal"] == pytest.approx(mine["mu"] - 3 * mine["sigma"])
    path = tmp_path / "games" / RATINGS_FILE
    saved = json.loads(path.read_text())
    assert saved["kind"] == ratings.KIND and list(saved["people"]) == ["ana lúcia"]
    assert saved["agents"] == {}  # random is on the ladder: it plays at its ladder rating, unmoved
    second = play_named(client, "ana lúcia", seed=4, seat=1)  # the same person, spelt otherwise
    again = second["person_rating"]
    assert again["games"] == 2 and again["sigma"] < mine["sigma"] and again["name"] == "person:ana lúcia"
    board = client.get("/api/leaderboard").json()
    people = board["people"]
    assert [p["name"] for p in people["people"]] == ["person:ana lúcia"]
    names = [a["name"] for a in people["agents"]]
    assert "agent:random" in names and "agent:heuristic" in names
    assert not any(n.startswith("person:") for n in names)
    assert all(s["file"] != RATINGS_FILE for s in board["skipped"])  # not an evaluation result
    assert client.get("/api/records").json()["skipped"] == []  # nor a record
    found = client.get("/api/people", params={"name": "ANA LÚCIA"}).json()
    assert found["rating"]["games"] == 2
    assert client.get("/api/people", params={"name": "Bo"}).json()["rating"] is None


def test_a_game_without_a_name_is_not_rated(client, tmp_path):
    from tests.web_client import play_through

    last = play_through(client, 2, 0, seed=2)
    assert last["over"] and "person_rating" not in last
    assert not (tmp_path / "games" / RATINGS_FILE).exists()


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "1-32 characters"),
        ("   ", "1-32 characters"),
        ("x" * 33, "1-32 characters"),
        ("agent:heuristic", "letters, digits"),
        ("<b>me</b>", "letters, digits"),
        ("tab\there", "letters, digits"),
        ("-dash", "start with a letter or a digit"),
        ("two  spaces", "two spaces"),
        (7, "a text of 1-32"),
        (["Ana"], "a text of 1-32"),
    ],
)
def test_a_bad_name_is_refused_with_a_400_and_no_game(client, name, why):
    web = client.app.state.web
    before = len(web.games._games)
    body = {"players": 2, "seat": 0, "opponents": ["random"], "name": name}
    assert why in error(client.post("/api/play", json=body), 400)
    assert len(web.games._games) == before and web.named == {}
    if isinstance(name, str):
        assert why in error(client.get("/api/people", params={"name": name}), 400)


def test_a_watched_game_takes_no_name(client):
    message = error(client.post("/api/watch", json={"agents": ["random", "random"], "name": "Ana"}), 400)
    assert "agents are not rated" in message


def test_names_are_bounded_and_normalised():
    assert check_name("  Zoë O'Neil-Smith ") == "Zoë O'Neil-Smith"
    assert check_name("Ｍ" * 32) == "Ｍ" * 32
    assert check_name("e\u0301") == "é"  # NFC: one character


def finished():
    record = heuristic_record(3, 4)
    return states(record)[-1], record


def test_an_agent_off_the_ladder_is_rated_from_peoples_games_and_a_ladder_agent_is_not(tmp_path):
    state, record = finished()
    book = PeopleRatings(tmp_path)
    specs = ("human", "heuristic", "mcts:7")  # mcts:7 is not on the ladder
    out = book.rate("Ana", specs, 0, state, record.seed, len(record.actions))
    assert out["games"] == 1
    data = book.load()
    assert list(data["agents"]) == ["mcts:7"] and data["agents"]["mcts:7"]["games"] == 1
    table = book.table()
    assert {"agent:mcts:7", "agent:heuristic"} <= {a["name"] for a in table["agents"]}


def test_a_ratings_file_it_cannot_read_is_never_overwritten_and_the_leaderboard_says_why(tmp_path):
    from island_fortress_env.web.leaderboard import leaderboard

    state, _ = finished()
    path = tmp_path / RATINGS_FILE
    for text in (
        "{not json",
        json.dumps({"kind": ratings.KIND, "version": 1, "people": {"x": {"mu": 1e400}}}),
    ):
        path.write_text(text)
        out = PeopleRatings(tmp_path).rate("Ana", ("human", "random", "random"), 0, state, 4, 10)
        assert "not rated" in out["error"] and RATINGS_FILE in out["error"]
        assert path.read_text() == text
        board = leaderboard(tmp_path)["people"]
        assert board["people"] == [] and RATINGS_FILE in board["error"]
    ana = {"name": "Ana", "mu": 1, "sigma": 1, "games": 1, "wins": 0, "last": ""}
    bad_key = {"kind": ratings.KIND, "version": 1, "agents": {}, "people": {"bob": ana}}
    path.write_text(json.dumps(bad_key))
    assert "another name's key" in PeopleRatings(tmp_path).table()["error"]
    path.write_bytes(b" " * (ratings.MAX_BYTES + 1))
    assert "larger than" in PeopleRatings(tmp_path).table()["error"]


def test_the_file_keeps_at_most_max_people_and_is_written_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(ratings, "MAX_PEOPLE", 3)
    state, record = finished()
    book = PeopleRatings(tmp_path)
    for i, name in enumerate(["Ana", "Bo", "Cy", "Di", "Ed"]):
        monkeypatch.setattr(ratings, "now", lambda i=i: f"2030-01-01T{i:02d}:00:00+00:00")
        book.rate(name, ("human", "random", "random"), 0, state, record.seed, len(record.actions))
    assert sorted(book.load()["people"]) == ["cy", "di", "ed"]  # the longest ago went first
    assert [p.name for p in tmp_path.iterdir()] == [RATINGS_FILE]  # no temporary file left
