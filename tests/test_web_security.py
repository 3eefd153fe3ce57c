"""The web app answers its own page only, and never with a 5xx.

* Request bodies and the files of the games directory are parsed with bounds (size, nesting,
  digits, finite numbers): a bad request is one 4xx with a JSON error, a bad file one note in a
  listing; path and query numbers are bounded. A fuzz of every route gets no 5xx.
* A request another site's page makes (its ``Origin``, ``Sec-Fetch-Site``, a body that is not
  ``application/json``) is refused; the page's own requests are not.
* Nobody's requests end another person's unfinished game; one client queues a few analyses.
* A seat is never told that another seat's move was its only legal choice.

The limits of a real server over loopback are tested in ``test_web_server_limits.py``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

pytest.importorskip("starlette", reason="the web app needs the [web] extra (starlette)")
pytest.importorskip("uvicorn", reason="the web app needs the [web] extra (uvicorn)")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from island_fortress_env.env.records import save
from island_fortress_env.web import create_app
from island_fortress_env.web import games as web_games
from tests.web_client import heuristic_record, play_through

ROOT = Path(__file__).resolve().parent.parent
STATIC = ROOT / "island_fortress_env" / "web" / "static"
OWN = "http://testserver"  # the TestClient's origin
DEEP_LIST = "[" * 30_000 + "]" * 30_000
DEEP_OBJECT = '{"a":' * 10_000 + "1" + "}" * 10_000  # under the 64 KB a body may have
BIG_INT = '{"seed": ' + "9" * 4300 + "}"


@pytest.fixture
def games_dir(tmp_path: Path) -> Path:
    games = tmp_path / "games"
    games.mkdir()
    save(heuristic_record(2, 1), games / "game.json")
    return games


@pytest.fixture
def client(games_dir: Path) -> Iterator[TestClient]:
    with TestClient(create_app(["random", "heuristic"], games_dir), raise_server_exceptions=False) as c:
        yield c


def refused(response: Any, status: int | None = None) -> str:
    """The error of a 4xx answer (one JSON object with one sentence), checked."""
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    if status is not None:
        assert response.status_code == status, response.text[:300]
    assert "Traceback" not in response.text
    error = response.json()["error"]
    assert isinstance(error, str) and 0 < len(error) < 1000
    return error


def new_game(client: TestClient, kind: str = "play", **headers: str) -> Any:
    body = (
        {"players": 2, "seat": 0, "opponents": ["random"], "seed": 3}
        if kind == "play"
        else {"agents": ["random", "random"], "seed": 3}
    )
    return client.post(f"/api/{kind}", json=body, headers=headers)


# --------------------------------------------------------------------------- bounded JSON


@pytest.mark.parametrize(
    "text",
    [DEEP_LIST, DEEP_OBJECT, BIG_INT, '{"seed": Infinity}', '{"seed": NaN}', '{"moves": 1e400}'],
    ids=["deep-list", "deep-object", "4300-digits", "infinity", "nan", "1e400"],
)
def test_deep_or_huge_json_bodies_get_one_4xx(client, text):
    snap = new_game(client).json()
    game = f"/api/games/{snap['id']}"
    for path in (
        "/api/play",
        "/api/watch",
        f"{game}/act",
        f"{game}/advance",
        f"{game}/undo",
        f"{game}/analysis",
        "/api/records",
        "/api/records/game.json/analysis",
    ):
        refused(client.post(path, content=text.encode(), headers={"Content-Type": "application/json"}), 400)
    assert client.get(f"{game}?token={snap['token']}").json()["step"] == snap["step"]  # nothing changed
    assert [r["name"] for r in client.get("/api/records").json()["records"]] == ["game.json"]


def evaluation(**changes: Any) -> dict[str, Any]:
    row = {
        "name": "a",
        "spec": "a",
        "games": 10,
        "wins": 5,
        "win_rate": 0.5,
        "ci95": [0.2, 0.8],
        "mean_score": 3,
    }
    result = {"agents": [dict(row), dict(row, name="b", spec="b")], "games": 10, "seed": 0, "players": 2}
    result["agents"][0].update(changes)
    return result


def test_bad_files_in_the_games_folder_are_skipped_with_a_note(client, games_dir):
    good = heuristic_record(2, 1).to_dict()
    (games_dir / "deep.json").write_text(DEEP_LIST)
    (games_dir / "deep-record.json").write_text(
        '{"format": "island-fortress-game-record", "rules": ' + DEEP_OBJECT + "}"
    )
    (games_dir / "digits.json").write_text(json.dumps(good).replace('"seed": 1', '"seed": ' + "1" * 4300))
    (games_dir / "eval-good.json").write_text(json.dumps(evaluation()))
    (games_dir / "eval-inf.json").write_text(json.dumps(evaluation(win_rate=float("inf"))))  # Infinity
    (games_dir / "eval-nan.json").write_text(json.dumps(evaluation(mean_score=float("nan"))))  # NaN
    (games_dir / "eval-1e400.json").write_text(
        json.dumps(evaluation()).replace('"mean_score": 3', '"mean_score": 1e400')
    )
    (games_dir / "eval-digits.json").write_text(
        json.dumps(evaluation()).replace('"games": 10', '"games": ' + "7" * 4300)
    )
    odd = dict(good, agents=["\ud800", "\x1b[31m"])  # a lone surrogate and an escape in the names
    (games_dir / "odd-names.json").write_text(json.dumps(odd))

    listing = client.get("/api/records")
    assert listing.status_code == 200, listing.text[:300]
    data = listing.json()
    assert sorted(r["name"] for r in data["records"]) == ["game.json", "odd-names.json"]
    notes = {s["file"]: s["reason"] for s in data["skipped"]}
    assert {"deep.json", "deep-record.json", "digits.json"} <= set(notes)
    assert "digits" in notes["digits.json"] and "deep" in notes["deep-record.json"]
    assert "eval-good.json" not in notes  # another kind of JSON file: no note
    assert client.get("/api/records/odd-names.json").json()["agents"] == ["\ud800", "\x1b[31m"]
    for name in ("deep.json", "deep-record.json", "digits.json"):
        refused(client.get(f"/api/records/{name}"), 400)

    board = client.get("/api/leaderboard")
    assert board.status_code == 200, board.text[:300]
    board = board.json()
    assert [t["file"] for t in board["tables"]] == ["eval-good.json"]
    skipped = {s["file"]: s["reason"] for s in board["skipped"]}
    assert {"eval-inf.json", "eval-nan.json", "eval-1e400.json", "eval-digits.json", "deep.json"} <= set(
        skipped
    )
    assert "game.json" not in skipped and "odd-names.json" not in skipped


@pytest.mark.parametrize(
    "path",
    [
        "/api/records/game.json/steps/" + "9" * 5000,
        "/api/records/game.json/steps/-1",
        "/api/records/game.json/steps/1e3",
        "/api/records/game.json/steps/%D9%A3",  # an Arabic-Indic digit
        "/api/records/game.json/steps/3?seat=" + "1" * 5000,
        "/api/records/game.json?seat=" + "1" * 5000,
        "/api/records/game.json/policy?step=" + "1" * 5000,
        "/api/records/game.json/policy?step=%EF%BC%91",  # a full-width digit
    ],
)
def test_numbers_in_paths_and_queries_are_bounded(client, path):
    refused(client.get(path))


def test_numbers_in_a_game_query_are_bounded(client):
    snap = new_game(client).json()
    for query in ("since=" + "9" * 5000, "seat=" + "9" * 5000, "since=1.5"):
        refused(client.get(f"/api/games/{snap['id']}?token={snap['token']}&{query}"), 400)


# A JSON value of any shape: what a fuzzer sends in every field.
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(["random", "heuristic", "\ud800", "..", "game.json", "random:1"])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=16,
)
FIELDS = [
    "players",
    "seat",
    "opponents",
    "agents",
    "seed",
    "token",
    "action",
    "moves",
    "steps",
    "playout",
    "rollouts",
]
RAW = st.one_of(
    st.integers(1, 40_000).map(lambda n: "[" * n + "]" * n),
    st.integers(1, 40_000).map(lambda n: '{"a":' * n + "0" + "}" * n),
    st.integers(1, 6000).map(lambda n: '{"steps": [' + "9" * n + "]}"),
    st.sampled_from(["", "{", "null", "[]", '"x"', "1e400", "-Infinity", '{"seed": NaN}', "\x00"]),
    st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_fuzz_of_every_route_gets_no_5xx(client, data):
    if not hasattr(client, "fuzz_game"):
        client.fuzz_game = new_game(client).json()
        client.fuzz_watch = new_game(client, "watch").json()
    snap = data.draw(st.sampled_from([client.fuzz_game, client.fuzz_watch]))
    game = quote(
        data.draw(st.sampled_from([snap["id"], "nope", "\x00", "x" * 300]) | st.text(max_size=8)), safe=""
    )
    token = data.draw(st.sampled_from([snap["token"], "", "x"]) | VALUES)
    record = data.draw(st.sampled_from(["game.json", "none.json", "..%2Fx.json", "a" * 300, "%ED%A0%80"]))
    number = data.draw(st.integers(-5, 10**6).map(str) | st.text(max_size=8) | st.just("9" * 5000))
    step = quote(number, safe="")
    post = data.draw(
        st.sampled_from(
            [
                "/api/play",
                "/api/watch",
                f"/api/games/{game}/act",
                f"/api/games/{game}/advance",
                f"/api/games/{game}/undo",
                f"/api/games/{game}/analysis",
                "/api/records",
                f"/api/records/{record}/analysis",
            ]
        )
    )
    shape = data.draw(st.sampled_from(["fields", "value", "raw"]))
    if shape == "fields":
        body = data.draw(st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=6))
        body.setdefault("token", token)
        text = json.dumps(body)
    elif shape == "value":
        text = json.dumps(data.draw(VALUES))
    else:
        text = data.draw(RAW)
    response = client.post(
        post, content=text.encode("utf-8", "surrogatepass"), headers={"Content-Type": "application/json"}
    )
    assert response.status_code < 500, (post, text[:200], response.text[:300])
    query = {
        "token": token if isinstance(token, str) else "t",
        "since": number,
        "seat": number,
        "step": number,
    }
    query["checkpoint"] = data.draw(st.text(max_size=8))
    for get in (
        f"/api/games/{game}",
        f"/api/games/{game}/policy",
        f"/api/games/{game}/public",
        f"/api/records/{record}",
        f"/api/records/{record}/steps/{step}",
        f"/api/records/{record}/policy",
        f"/api/analysis/{quote(data.draw(st.text(max_size=10)), safe='')}",
    ):
        response = client.get(get, params=query)
        assert response.status_code < 500, (get, query, response.text[:300])
    for get in ("/api/records", "/api/leaderboard", "/api/config"):
        assert client.get(get).status_code == 200


# --------------------------------------------------------------------------- same origin only


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Content-Type": "text/plain", "Origin": "http://evil.example"}, 403),
        ({"Content-Type": "application/json", "Origin": "http://evil.example"}, 403),
        ({"Content-Type": "application/json", "Origin": "null"}, 403),
        ({"Content-Type": "application/json", "Origin": "http://testserver:8080"}, 403),
        ({"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, 403),
        ({"Content-Type": "application/json", "Sec-Fetch-Site": "same-site"}, 403),
        ({"Content-Type": "text/plain"}, 415),
        ({"Content-Type": "text/plain", "Origin": OWN, "Sec-Fetch-Site": "same-origin"}, 415),
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415),
        ({"Content-Type": "multipart/form-data; boundary=x"}, 415),
        ({}, 415),  # no Content-Type: a blob without a type, sent by another page's fetch
    ],
)
def test_requests_another_site_could_send_are_refused(client, games_dir, headers, status):
    body = json.dumps({"agents": ["random", "random"]}).encode()
    refused(client.post("/api/watch", content=body, headers=headers), status)
    snap = new_game(client).json()  # a game of the page's own
    act = {"token": snap["token"], "action": snap["view"]["choices"][0]["action"]}
    refused(
        client.post(f"/api/games/{snap['id']}/act", content=json.dumps(act).encode(), headers=headers), status
    )
    record = json.dumps(heuristic_record(2, 5).to_dict()).encode()
    refused(client.post("/api/records", content=record, headers=headers), status)
    analysis = {"steps": [0], "playout": "random", "rollouts": 1}
    path = "/api/records/game.json/analysis"
    refused(client.post(path, content=json.dumps(analysis).encode(), headers=headers), status)
    assert len(client.app.state.web.games._games) == 1  # the page's game only
    assert client.get(f"/api/games/{snap['id']}?token={snap['token']}").json()["step"] == snap["step"]
    assert sorted(p.name for p in games_dir.iterdir()) == ["game.json"]


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": OWN, "Sec-Fetch-Site": "same-origin"},  # the page in a browser
        {"Origin": "HTTP://TESTSERVER"},
        {},  # a command-line client: no Origin, no Sec-Fetch-*
        {"Content-Type": "application/json; charset=utf-8", "Sec-Fetch-Site": "same-origin"},
    ],
)
def test_the_pages_own_requests_are_answered(client, headers):
    created = new_game(client, "watch", **headers)
    assert created.status_code == 201, created.text
    record = json.dumps(heuristic_record(2, 5).to_dict()).encode()
    upload = client.post(
        "/api/records", content=record, headers={"Content-Type": "application/json", **headers}
    )
    assert upload.status_code == 201, upload.text
    assert client.get("/api/records", headers=headers).status_code == 200


def test_another_sites_page_cannot_read_the_api_but_may_link_to_a_page(client):
    for site in ("cross-site", "same-site"):
        refused(client.get("/api/records", headers={"Sec-Fetch-Site": site}), 403)
        refused(client.get("/api/records/game.json/steps/3", headers={"Sec-Fetch-Site": site}), 403)
        refused(client.get("/api/config", headers={"Origin": "http://evil.example"}), 403)
        page = client.get("/replay/game.json", headers={"Sec-Fetch-Site": site, "Sec-Fetch-Mode": "navigate"})
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert client.get("/api/records", headers={"Sec-Fetch-Site": "none"}).status_code == 200


def test_the_page_sends_every_body_as_json_from_its_own_origin():
    scripts = {p.name: p.read_text("utf-8") for p in STATIC.glob("*.js")}
    fetching = sorted(name for name, text in scripts.items() if re.search(r"\bfetch\(", text))
    assert fetching == ["api.js"]  # every request goes through api.js's call()
    api = scripts["api.js"]
    assert re.search(r'options\.headers\["Content-Type"\] = "application/json";', api)
    assert len(re.findall(r"\bfetch\(", api)) == 1 and "fetch(path, options)" in api
    assert not re.search(r"mode:|credentials:|https?://", api)  # same origin, relative paths
    assert re.search(r'export const upload = \(path, text\) => call\("POST", path, text, true\);', api)


# --------------------------------------------------------------------------- nobody ends another's game


def test_others_requests_never_end_an_unfinished_game(client, monkeypatch):
    mine = new_game(client).json()
    others = [new_game(client, "watch").json() for _ in range(web_games.MAX_GAMES - 1)]
    assert all("id" in o for o in others)
    full = new_game(client, "watch")
    assert "unfinished" in refused(full, 429)
    assert client.get(f"/api/games/{mine['id']}?token={mine['token']}").status_code == 200

    # A finished game makes room, then one left alone for IDLE_SECONDS; never the one in use.
    done = others[0]
    while not client.post(
        f"/api/games/{done['id']}/advance", json={"token": done["token"], "moves": 200}
    ).json()["over"]:
        pass
    assert new_game(client, "watch").status_code == 201
    assert client.get(f"/api/games/{done['id']}?token={done['token']}").status_code == 404
    refused(new_game(client, "watch"), 429)
    left = client.app.state.web.games._games[others[1]["id"]]
    left.touched -= web_games.IDLE_SECONDS + 1
    assert new_game(client, "watch").status_code == 201
    assert others[1]["id"] not in client.app.state.web.games._games
    assert client.get(f"/api/games/{mine['id']}?token={mine['token']}").status_code == 200


def test_a_client_queues_a_few_analyses_at_most(games_dir):
    from island_fortress_env.web.analysis import MAX_PENDING_PER_CLIENT

    app = create_app(["random"], games_dir)
    slow = {"steps": [0], "playout": "heuristic", "rollouts": 256}
    with TestClient(app, raise_server_exceptions=False) as one:
        games = [new_game(one, "watch").json() for _ in range(MAX_PENDING_PER_CLIENT + 1)]
        for g in games[:-1]:
            assert (
                one.post(f"/api/games/{g['id']}/analysis", json={**slow, "token": g["token"]}).status_code
                == 202
            )
        last = games[-1]
        assert "at most" in refused(
            one.post(f"/api/games/{last['id']}/analysis", json={**slow, "token": last["token"]}), 429
        )
        # a newer job for the same game replaces its own older one: not refused
        again = games[0]
        assert (
            one.post(f"/api/games/{again['id']}/analysis", json={**slow, "token": again["token"]}).status_code
            == 202
        )
        other = TestClient(app, client=("192.0.2.7", 5000), raise_server_exceptions=False)
        assert other.post("/api/records/game.json/analysis", json=slow).status_code == 202


# --------------------------------------------------------------------------- forced moves stay private


@pytest.mark.parametrize(("players", "seat", "seed"), [(2, 1, 3), (3, 0, 11), (3, 2, 12), (4, 1, 5)])
def test_a_seat_is_never_told_that_another_seats_move_was_forced(games_dir, players, seat, seed):
    seen = {"own": 0, "others": 0}
    tokens = []

    def check(snap: dict[str, Any], game: Any) -> None:
        if "token" in snap:
            tokens.append(snap["token"])
        for move in snap["moves"]:
            if move["seat"] != seat:
                seen["others"] += 1
                assert move["auto"] is False, move
            elif move["auto"]:
                seen["own"] += 1

    with TestClient(create_app(["random", "heuristic"], games_dir)) as c:
        last = play_through(c, players, seat, seed, check=check, moves_per_advance=50)
        every = c.get(f"/api/games/{last['id']}", params={"token": tokens[0], "since": 0}).json()
        check(every, None)
        truth = c.app.state.web.games._games[last["id"]]
        forced = sum(m.auto for m in truth.moves if m.seat != seat)
    assert seen["others"] > 0 and forced > 0  # other seats had forced moves; none was told
