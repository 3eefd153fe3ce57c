"""Agents that play over HTTP: ``remote:URL`` (``players.remote``) against ``bot-serve``
(``web.bots``), on real servers on 127.0.0.1.

* The seat's information set (``engine.infoset``) rebuilds exactly ``redeal_unseen`` of the true
  position, and the request a bot is sent does not change when anything its seat may not see is
  dealt again (nor does it hold the other hands, the deck, sealed bids or the deal's seed).
* ``evaluate``, ``tournament``, ``play`` and the browser app play remote bots; remote heuristic
  and random bots sent the seeds the local agents have play the very games the local agents play
  (a bot is sent a seed of the operating system's: ``test_agent_seeds``).
* A bot that times out (or drips its answer), answers garbage, an illegal action, an HTTP error
  or too much, or spends its game's time, is one ``RemoteAgentError`` naming the seat and the URL
  (one line and exit 2 on the command line), or its fallback plays; a URL that does not answer is
  refused before any game.
* The server answers every bad request with one 4xx.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import logging
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("uvicorn", reason="bot-serve needs the [web] extra (uvicorn)")
pytest.importorskip("PIL", reason="a remote agent's view needs Pillow (the [web] extra)")

from starlette.testclient import TestClient
from test_hidden_information import hidden_from, interesting_states

from island_fortress_env.cli import app as cli
from island_fortress_env.engine import infoset, visibility
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.fields import StateFields
from island_fortress_env.engine.state import Game
from island_fortress_env.players import (
    AgentSpecError,
    RemoteAgent,
    RemoteAgentError,
    check_agent_spec,
    make_agent,
    parse_agent_spec,
)
from island_fortress_env.players.remote import PROTOCOL, decision_request, seat_names
from island_fortress_env.training.evaluate import TableGame, agent_seed, evaluate, play_table
from island_fortress_env.views.seatview import seat_view
from island_fortress_env.web.bots import MAX_REQUEST_BYTES, bot_server, create_bot_app

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def bot(spec: str) -> Iterator[str]:
    """``bot-serve spec`` on a free port of 127.0.0.1 in a thread; yields its URL."""
    server, sock = bot_server(spec, "127.0.0.1", 0)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def bots() -> Iterator[dict[str, str]]:
    with bot("heuristic") as heuristic, bot("random") as random_:
        yield {"heuristic": heuristic, "random": random_}


# --------------------------------------------------------------------------- what a bot is sent


def test_every_state_field_is_sent_or_left_out_on_purpose():
    sent = infoset.KEYS - {"deck_size", "favor_hand_size", "drawn_size", "log"}
    assert set(StateFields.__slots__) == sent | {"_log", *infoset.NOT_WRITTEN}


@pytest.mark.parametrize("n,seed", [(2, 11), (3, 12), (4, 13)])
def test_the_seat_fields_rebuild_the_redeal_of_the_true_position(n, seed):
    """Field by field, ``rebuild`` of what a seat is sent is ``redeal_unseen`` of the truth (the
    log cut to the action under way), with the same view and, for the mover, legal actions."""
    names = seat_names(n)
    for state in interesting_states(n, seed):
        for seat in range(n):
            sent = json.loads(json.dumps(infoset.seat_fields(state, seat)))
            rebuilt = infoset.rebuild(state.game, sent, seat, 99)
            truth = visibility.redeal_unseen(state, seat, 99)
            for name in set(StateFields.__slots__) - {"_log", "_legal"}:
                assert getattr(rebuilt, name) == getattr(truth, name), name
            assert rebuilt.log == infoset.action_log(state)
            assert seat_view(rebuilt, seat, names) == seat_view(state, seat, names)
            if seat == state.current_player():
                assert rebuilt.legal_actions() == state.legal_actions()


@pytest.mark.parametrize("n,seed", [(2, 21), (3, 22), (4, 23)])
def test_the_request_does_not_change_with_what_the_seat_cannot_see(n, seed):
    """Another seat's hand or choice, the deck's order, a sealed bid or the generator dealt
    otherwise: the mover's request is the same, byte for byte."""
    checked = 0
    for state in interesting_states(n, seed):
        seat = state.current_player()
        sent = json.dumps(decision_request(state, seat, "g", 3, 7))
        for what, other in hidden_from(state, seat):
            assert json.dumps(decision_request(other, seat, "g", 3, 7)) == sent, what
            checked += 1
    assert checked > 20


def _hidden_cards(state, seat: int) -> set[int]:
    return set(visibility.unseen_cards(state, seat))


def test_the_request_names_no_hidden_card_no_sealed_bid_and_not_the_seed():
    game = Game(num_players=3)
    seed = 1_234_567_891_234
    state = game.new_initial_state(seed)
    chooser = __import__("random").Random(5)
    bids_seen = 0
    while not state.is_terminal():
        seat = state.current_player()
        request = decision_request(state, seat, "g", 0, None)
        text = json.dumps(request)
        assert str(seed) not in text and "rng" not in request["state"]
        assert "deck" not in request["state"] and request["state"]["deck_size"] == len(state.deck)
        hidden = _hidden_cards(state, seat)
        fields = request["state"]
        for p in range(3):
            if p != seat:
                assert fields["favor_hand"][p] is None and fields["drawn"][p] is None
                assert request["view"]["players"][p]["hand"] is None
                assert request["view"]["players"][p]["choosing"] is None
        shown_ids = {
            c["id"] for pl in request["view"]["players"] for c in (pl["hand"] or []) + pl["favor_played"]
        }
        shown_ids |= {c for pl in fields["favor_hand"] + fields["drawn"] if pl for c in pl}
        assert not shown_ids & hidden
        if state.decision == Decision.PETITION_BID:
            sealed = [p for p in state.order[: state.order_pos] if p != seat]
            for p in sealed:
                assert fields["bids"][p] is None and request["view"]["players"][p]["bid"] is None
            bids_seen += len(sealed)
        state.apply_action(chooser.choice(state.legal_actions()))
    assert bids_seen > 0


def test_a_core_state_is_sent_as_its_engine_twin():
    """The browser app's games are the C++ core's: their requests are the Python engine's."""
    from island_fortress_env import core

    if not core.available():
        pytest.skip(f"the C++ core is not built ({core.build_error()})")
    fast, slow = (core.Game(num_players=3, backend=b).new_initial_state(8) for b in ("core", "python"))
    chooser = __import__("random").Random(8)
    while not slow.is_terminal():
        seat = slow.current_player()
        assert json.dumps(decision_request(fast, seat, "g", 1, 2)) == json.dumps(
            decision_request(slow, seat, "g", 1, 2)
        )
        action = chooser.choice(slow.legal_actions())
        fast.apply_action(action)
        slow.apply_action(action)


# --------------------------------------------------------------------------- the same games


@pytest.fixture
def sent_local_seeds(monkeypatch):
    """Remote agents send their bots the seat's local seed instead of the operating system's, so
    that a served agent can be held to the local one's choices."""
    reset = RemoteAgent.reset

    def sending_the_local_seed(self, seed=None):
        reset(self, seed)
        self.sent_seed = self.seed

    monkeypatch.setattr(RemoteAgent, "reset", sending_the_local_seed)


def test_remote_bots_play_the_local_agents_games(bots, sent_local_seeds):
    """evaluate's games of remote heuristic and random bots sent the local agents' seeds are the
    local agents' games, action for action (bot-serve seeds its agent with the request's seed)."""
    games = [
        TableGame(g, 40 + g, tuple((i + g) % 2 for i in range(2)), (agent_seed(4, g, 0), agent_seed(4, g, 1)))
        for g in range(2)
    ]
    local = play_table(["heuristic", "random"], games, keep_actions=True)
    remote = play_table([f"remote:{bots['heuristic']}", f"remote:{bots['random']}"], games, keep_actions=True)
    for mine, theirs in zip(local, remote, strict=True):
        assert mine.actions == theirs.actions
        assert mine.final == theirs.final
    result = evaluate([f"remote:{bots['random']}", "heuristic", "random"], games=2, seed=6)
    expected = evaluate(["random", "heuristic", "random"], games=2, seed=6)
    for a, b in zip(result["agents"], expected["agents"], strict=True):
        assert (a["wins"], a["mean_score"], a["seat_games"]) == (b["wins"], b["mean_score"], b["seat_games"])


def test_a_tournament_rates_a_remote_bot_as_its_local_agent(bots, sent_local_seeds):
    from island_fortress_env.research.tournament import tournament

    remote = tournament([f"remote:{bots['heuristic']}", "random"], (2,), games=2, seed=3)
    local = tournament(["heuristic", "random"], (2,), games=2, seed=3)
    assert [(a["mu"], a["tables"]) for a in remote["agents"]] == [
        (a["mu"], a["tables"]) for a in local["agents"]
    ]


def test_play_and_the_browser_app_seat_remote_bots(bots, tmp_path):
    pytest.importorskip("rich", reason="play needs the [render] extra (rich)")
    import io

    from rich.console import Console

    from island_fortress_env.cli.play import play_game
    from island_fortress_env.web import create_app

    entries = iter(["quit"])
    play_game(
        [f"remote:{bots['random']}"], seat=1, seed=3, save_path=tmp_path / "x.json",
        ask=lambda prompt: next(entries), console=Console(file=io.StringIO()),
    )  # fmt: skip
    with TestClient(create_app([f"remote:{bots['heuristic']}"], tmp_path)) as client:
        spec = f"remote:{bots['heuristic']}"
        game = client.post("/api/watch", json={"agents": [spec, spec], "seed": 5}).json()
        made: list[dict] = []
        for _ in range(60):  # an advance answers with the moves made within its second
            moves = client.post(
                f"/api/games/{game['id']}/advance", json={"token": game["token"], "moves": 60 - len(made)}
            )
            assert moves.status_code == 200 and moves.json()["moves"]
            made += moves.json()["moves"]
            if len(made) == 60:
                break
        assert [m["step"] for m in made] == list(range(60))


# --------------------------------------------------------------------------- failures


TENTHS: list[str] = []  # the requests ``/tenth`` was sent, by game id


class BadBot(http.server.BaseHTTPRequestHandler):
    """Answers GET with the protocol; a POST as its path says (``/slow``, ``/drip`` ...)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _send(self, status: int, body: bytes, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        protocol = 2 if self.path == "/future" else PROTOCOL
        self._send(200, json.dumps({"protocol": protocol}).encode())

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        legal = [a["id"] for a in request["legal"]]
        if self.path == "/slow":
            time.sleep(8)
            self._send(200, json.dumps({"action": legal[0]}).encode())
        elif self.path == "/drip":  # a byte every 0.3 s: each read is quick, the whole is not
            self._send(200, b"", length=64)
            for _ in range(64):
                time.sleep(0.3)
                self.wfile.write(b" ")
                self.wfile.flush()
        elif self.path == "/garbage":
            self._send(200, b"<html>hello</html>")
        elif self.path == "/illegal":
            self._send(200, json.dumps({"action": 379 if 379 not in legal else 0}).encode())
        elif self.path == "/boolean":
            self._send(200, json.dumps({"action": True}).encode())
        elif self.path == "/error":
            self._send(500, json.dumps({"error": "the bot \x1b[31mbroke"}).encode())
        elif self.path == "/huge":
            self._send(200, b"", length=10**8)
        elif self.path == "/hangup":
            self.close_connection = True
        elif self.path == "/tenth":  # every answer in 0.1 s, well inside its deadline
            TENTHS.append(request["game"])
            time.sleep(0.1)
            self._send(200, json.dumps({"action": legal[0]}).encode())
        else:
            self._send(200, json.dumps({"action": legal[0]}).encode())


class QuietServer(http.server.ThreadingHTTPServer):
    """Says nothing of a connection that a client closed on a slow answer (its deadline, or its
    game's time, ran out): a traceback on stderr would land in another test's capture."""

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@pytest.fixture(scope="module")
def bad_bot() -> Iterator[str]:
    server = QuietServer(("127.0.0.1", 0), BadBot)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


FAILURES = {
    "slow": "did not answer within 1 s",
    "drip": "did not answer within 1 s",
    "garbage": "answered with a body that is not valid JSON",
    "illegal": "chose action",
    "boolean": 'not {"action": ID}',
    "error": "answered HTTP 500: the bot \\x1b[31mbroke",
    "huge": "answered more than 64 KB",
    "hangup": "closed the connection without an answer",
}


@pytest.mark.parametrize("mode", sorted(FAILURES))
def test_a_failing_bot_is_one_error_naming_the_seat_and_url(bad_bot, mode):
    url = f"{bad_bot}/{mode}"
    started = time.monotonic()
    with pytest.raises(RemoteAgentError) as failed:
        evaluate(["random", f"remote:{url}#timeout=1"], games=1, seed=0)
    assert time.monotonic() - started < 6  # the 1 s deadline holds: never a hung game (8 s, 19 s)
    message = str(failed.value)
    assert f"remote agent {url}, seat " in message and FAILURES[mode] in message
    assert "\n" not in message and "\x1b" not in message


def test_the_command_line_reports_a_failing_bot_in_one_line(bad_bot, capsys):
    code = cli.main(["evaluate", "random", f"remote:{bad_bot}/garbage", "--games", "2", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and f"remote agent {bad_bot}/garbage, seat " in err


def test_a_fallback_plays_the_seat_when_the_bot_fails(bad_bot, caplog):
    spec = f"remote:{bad_bot}/garbage#timeout=1&fallback=heuristic"
    with caplog.at_level(logging.WARNING):
        result = evaluate(["random", spec], games=2, seed=0)
    warned = [r.getMessage() for r in caplog.records if "plays the seat" in r.getMessage()]
    assert len(warned) == 2 and all("heuristic plays the seat for the rest of this game" in w for w in warned)
    # the bot failed at its first decision: the fallback, seeded as the agent, played the local games
    local = evaluate(["random", "heuristic"], games=2, seed=0)
    assert [a["mean_score"] for a in result["agents"]] == [a["mean_score"] for a in local["agents"]]
    agent = make_agent(spec, seed=2)
    assert isinstance(agent, RemoteAgent) and agent.target.fallback == "heuristic" and agent.fallback is None


def test_a_bot_that_spends_its_games_time_hands_the_seat_to_its_fallback(bad_bot, caplog):
    """0.25 s of answers a game, each 0.1 s: at most three requests a game (the third cut at
    what is left), then the fallback plays the seat, one warning a game saying why."""
    TENTHS.clear()
    spec = f"remote:{bad_bot}/tenth#timeout=5&game_timeout=0.25&fallback=heuristic"
    with caplog.at_level(logging.WARNING):
        result = evaluate(["random", spec], games=2, seed=0)
    warned = [r.getMessage() for r in caplog.records if "plays the seat" in r.getMessage()]
    said = "the bot used up its game's time, 0.25 s of answers (#game_timeout); heuristic plays the seat"
    assert len(warned) == 2 and all(said in w and "\n" not in w for w in warned), warned
    games = sorted(TENTHS.count(game) for game in set(TENTHS))
    assert len(games) == 2 and games[0] >= 1 and games[1] <= 3  # a game's seat asks about 50 times
    assert [a["games"] for a in result["agents"]] == [2, 2]
    TENTHS.clear()
    with pytest.raises(RemoteAgentError, match=r"decision [0-2]: the bot used up its game's time, 0.2 s"):
        evaluate(["random", f"remote:{bad_bot}/tenth#game_timeout=0.2"], games=1, seed=0)
    assert 1 <= len(TENTHS) <= 2


def test_a_url_that_does_not_answer_is_refused_before_any_game(bad_bot, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/"
    with pytest.raises(AgentSpecError, match="refused the connection"):
        check_agent_spec(f"remote:{closed}")
    with pytest.raises(AgentSpecError, match="answers GET with protocol 2; this client speaks 1"):
        check_agent_spec(f"remote:{bad_bot}/future")
    for argv in (
        ["evaluate", f"remote:{closed}", "random", "--games", "1"],
        ["tournament", f"remote:{closed}", "random", "--games", "1"],
        ["demo", "--players", "2", "--agents", f"remote:{closed}", "random"],
    ):
        with pytest.raises(SystemExit) as exit_:
            cli.main(argv)
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and err.count("\n") == 1 and "refused the connection" in err, argv


@pytest.mark.parametrize(
    "spec,why",
    [
        ("remote:ftp://host/", "http:// or https://"),
        ("remote:http://", "naming a host"),
        ("remote:http://bücher.example/", "ASCII characters"),
        ("remote:http://user:pw@host/", "no user name or password"),
        ("remote:http://host:99999/", "is not a port"),
        ("remote:http://host/#timeout=0", "timeout must be seconds"),
        ("remote:http://host/#timeout=soon", "timeout must be seconds"),
        ("remote:http://host/#game_timeout=0", "game_timeout must be seconds, more than 0 and at most 86400"),
        ("remote:http://host/#game_timeout=nan", "game_timeout must be seconds"),
        ("remote:http://host/#game_timeout=1e9", "game_timeout must be seconds"),
        ("remote:http://host/#retries=2", "unknown option 'retries'"),
        ("remote:http://host/#fallback=remote:http://other/", "not another remote one"),
    ],
)
def test_bad_remote_specs_are_one_sentence(spec, why):
    with pytest.raises(AgentSpecError, match=why.replace("(", r"\(").replace("+", r"\+")):
        check_agent_spec(spec)


def test_a_remote_spec_parses_its_options():
    spec = parse_agent_spec(
        "remote:https://bots.example:8443/alice?v=1#timeout=2.5&game_timeout=30&fallback=heuristic"
    )
    assert spec.remote is not None and spec.info.in_core is False
    assert spec.remote.url == "https://bots.example:8443/alice?v=1"
    assert (spec.remote.timeout, spec.remote.game_timeout, spec.remote.fallback) == (2.5, 30.0, "heuristic")
    plain = parse_agent_spec("remote:http://host/").remote
    assert plain is not None and (plain.timeout, plain.game_timeout) == (5.0, 120.0)  # the defaults
    assert spec.label == "remote:https://bots.example:8443/alice?v=1"


# --------------------------------------------------------------------------- the server


@pytest.fixture(scope="module")
def served() -> Iterator[TestClient]:
    with TestClient(create_bot_app("random")) as client:
        yield client


def _request(seed: int = 3, decision: int = 0, game: str = "t1") -> dict:
    state = Game(num_players=2).new_initial_state(seed)
    return decision_request(state, state.current_player(), game, decision, 1)


def test_the_server_answers_a_decision_and_its_repeat(served):
    assert served.get("/").json() == {"protocol": PROTOCOL, "agent": "random"}
    first = served.post("/", json=_request())
    assert first.status_code == 200 and set(first.json()) == {"action"}
    assert served.post("/", json=_request()).json() == first.json()  # a retry: the same answer
    skipped = served.post("/", json=_request(decision=5))
    assert skipped.status_code == 409 and "comes next" in skipped.json()["error"]
    unknown = served.post("/", json=_request(decision=1, game="never"))
    assert unknown.status_code == 409 and "holds no game never" in unknown.json()["error"]


def _tampered(change) -> dict:
    request = _request()
    change(request)
    return request


BAD_REQUESTS = [
    ("wrong protocol", lambda r: r.update(protocol=2), 400, "'protocol' must be 1"),
    ("bad game id", lambda r: r.update(game="a b"), 400, "'game' must be an id"),
    ("seat out of range", lambda r: r.update(seat=7), 400, "'seat' must be an integer 0..1"),
    ("a deck file", lambda r: r["rules"].update(favor_deck="/etc/passwd"), 400, "favor deck"),
    ("unknown rule", lambda r: r["rules"].update(speed=3), 400, "unknown option"),
    ("unknown field", lambda r: r.update(extra=1), 400, "unknown fields"),
    (
        "another seat's hand",
        lambda r: r["state"]["favor_hand"].__setitem__(1 - r["seat"], [0]),
        400,
        "own cards only",
    ),
    (
        "a card twice",
        lambda r: r["state"]["favor_played"].__setitem__(1 - r["seat"], r["state"]["drawn"][r["seat"]]),
        400,
        "twice",
    ),
    ("too few cards", lambda r: r["state"].update(deck_size=0), 400, "'deck_size'"),
    ("jade from nowhere", lambda r: r["state"]["jade"].__setitem__(0, 99), 400, "jade add up"),
    ("a huge number", lambda r: r["state"].update(bid_digits_left=10**6), 400, "'bid_digits_left'"),
    ("missing field", lambda r: r["state"].pop("occ"), 400, "lack ['occ']"),
    ("wrong legal", lambda r: r.update(legal=r["legal"][1:]), 400, "'legal' are not"),
    ("wrong view", lambda r: r["view"].update(round=4), 400, "'view' is not"),
    ("not a list of events", lambda r: r["state"].update(log=[["nothing"]]), 400, "no kind of event"),
]


@pytest.mark.parametrize("what,change,status,why", BAD_REQUESTS, ids=[b[0] for b in BAD_REQUESTS])
def test_the_server_refuses_bad_decisions_with_one_4xx(served, what, change, status, why):
    answer = served.post("/", json=_tampered(change))
    assert answer.status_code == status and why in answer.json()["error"], answer.json()


def test_the_server_refuses_other_bodies_and_pages(served):
    body = json.dumps(_request())
    cases = [
        (served.post("/", content=body, headers={"Content-Type": "text/plain"}), 415),
        (served.post("/", content=body.encode()), 415),
        (served.post("/", content=b"{" * 40, headers={"Content-Type": "application/json"}), 400),
        (served.post("/", content=b"[1]", headers={"Content-Type": "application/json"}), 400),
        (served.post("/", content=b"1" * 30, headers={"Content-Type": "application/json"}), 400),
        (
            served.post(
                "/", content=b" " * (MAX_REQUEST_BYTES + 1), headers={"Content-Type": "application/json"}
            ),
            413,
        ),
        (
            served.post(
                "/",
                content=body,
                headers={"Content-Type": "application/json", "Origin": "https://evil.example"},
            ),
            403,
        ),
        (served.get("/", headers={"Sec-Fetch-Site": "cross-site"}), 403),
        (served.get("/elsewhere"), 404),
        (served.put("/", content=body), 405),
    ]
    for answer, status in cases:
        assert answer.status_code == status and set(answer.json()) == {"error"}, (status, answer.text)


def test_bot_serve_on_the_command_line(tmp_path):
    """``island-fortress bot-serve`` prints its URL and answers there; a host that is not a
    loopback address needs --allow-remote (one line, exit 2)."""
    command = [sys.executable, "-m", "island_fortress_env.cli", "bot-serve"]
    refused = subprocess.run(
        [*command, "random", "--host", "0.0.0.0"], capture_output=True, text=True, timeout=120
    )
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "--allow-remote" in refused.stderr
    server = subprocess.Popen([*command, "random", "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split(" at ", 1)[1].strip()
        target = check_agent_spec(f"remote:{url}").remote
        assert target is not None and target.url == url
    finally:
        server.terminate()
        server.wait(30)


def test_the_browser_app_answers_502_when_a_bot_fails(bad_bot, tmp_path):
    from island_fortress_env.web import create_app

    spec = f"remote:{bad_bot}/garbage#timeout=1"
    with TestClient(create_app([spec], tmp_path)) as client:
        game = client.post("/api/watch", json={"agents": [spec, spec], "seed": 5}).json()
        answer = client.post(f"/api/games/{game['id']}/advance", json={"token": game["token"], "moves": 5})
        assert (
            answer.status_code == 502 and f"remote agent {bad_bot}/garbage, seat " in answer.json()["error"]
        )
        state = client.get(f"/api/games/{game['id']}", params={"token": game["token"]}).json()
        assert state["step"] == 0  # nothing was applied


def test_the_protocol_pages_bot_plays(tmp_path):
    """The standard-library bot of docs/BOT-PROTOCOL.md answers the protocol as written there."""
    text = (ROOT / "docs" / "BOT-PROTOCOL.md").read_text("utf-8")
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict = {"__name__": "bot_page"}
    exec(compile(code, "BOT-PROTOCOL.md", "exec"), namespace)
    namespace["FirstLegal"].log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), namespace["FirstLegal"])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"remote:http://127.0.0.1:{server.server_address[1]}/"
        result = evaluate([url, "random"], games=2, seed=1)
        assert [a["games"] for a in result["agents"]] == [2, 2]
    finally:
        server.shutdown()
