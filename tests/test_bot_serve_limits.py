"""``bot-serve``'s bounds: a request's numbers within what a real game holds (a crafted
``worker_need`` of 10^9 Laborers is one 400, and no list of its size is ever built), its legal ids
checked against the action table before a position is rebuilt, nobody's new games ending a game
in play (a seat is let go only when left ``IDLE_SECONDS``; else a 429), and an agent's failure
one line in the log, not a traceback."""

from __future__ import annotations

import logging

import numpy as np
import pytest

pytest.importorskip("starlette", reason="bot-serve needs the [web] extra")

from starlette.testclient import TestClient

from island_fortress_env.engine import state as engine_state
from island_fortress_env.engine.actions import MAX_WORKERS, NUM_ACTIONS
from island_fortress_env.engine.config import GameConfig
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.state import Game, State
from island_fortress_env.players.remote import decision_request
from island_fortress_env.web import bots
from island_fortress_env.web.bots import BotServer, create_bot_app
from island_fortress_env.web.errors import BadRequest, Conflict, TooMany

K = 10**9  # the crafted Laborers: a list of them would take tens of gigabytes


def _assigning_laborers() -> State:
    """A position of an unlimited-components game where a seat assigns the Workers of a build."""
    game = Game(GameConfig.from_dict({"num_players": 2, "unlimited_components": True}))
    for seed in range(50):
        state, rng = game.new_initial_state(seed), np.random.default_rng(seed)
        while not state.is_terminal() and state.decision != Decision.ASSIGN_LABORERS:
            state.apply_action(int(rng.choice(state.legal_actions())))
        if not state.is_terminal():
            return state
    raise AssertionError("no game of 50 reached a Workers assignment")


def _crafted(need: int = K) -> dict:
    """A request whose seat holds the whole supply of Laborers and Convicts (the totals add up)
    and must assign ``need`` Workers: the Laborers choices would be ``need`` actions."""
    state = _assigning_laborers()
    seat = state.current_player()
    request = decision_request(state, seat, "crafted", 0, 1)
    fields = request["state"]
    fields["laborers"][seat] += fields["sup_laborers"]
    fields["convicts"][seat] += fields["sup_convicts"]
    fields["sup_laborers"] = fields["sup_convicts"] = 0
    fields["worker_need"] = need
    return request


@pytest.fixture
def legal_sizes(monkeypatch) -> list[int]:
    """The size of every list of legal actions the engine is asked for: a size beyond the
    action table is recorded and never built (a short list is answered in its place)."""
    sizes: list[int] = []
    real = State._compute_legal

    def counted(self):
        if self.decision != Decision.GAME_OVER:
            chosen = engine_state._LEGAL[self.decision](self, self.current)  # a range: not built
            sizes.append(len(chosen))
            if len(chosen) > NUM_ACTIONS:
                return (chosen[0],)
        return real(self)

    monkeypatch.setattr(State, "_compute_legal", counted)
    return sizes


@pytest.fixture(scope="module")
def served():
    with TestClient(create_bot_app("heuristic")) as client:
        yield client


def test_a_crafted_count_of_laborers_is_a_400_and_builds_no_list_of_its_size(served, legal_sizes):
    answer = served.post("/", json=_crafted())
    assert answer.status_code == 400, answer.text
    assert "'worker_need'" in answer.json()["error"] and f"0..{MAX_WORKERS}" in answer.json()["error"]
    assert max(legal_sizes, default=0) <= NUM_ACTIONS
    # the position as dealt is played
    state = _assigning_laborers()
    fair = decision_request(state, state.current_player(), "fair", 0, 1)
    assert served.post("/", json=fair).status_code == 200
    assert 0 < max(legal_sizes) <= NUM_ACTIONS


@pytest.mark.parametrize(
    ("legal", "words"),
    [
        ([{"id": 10**12}], "outside the action table"),
        ([{"id": -1}], "outside the action table"),
        ([{"id": 3}] * (NUM_ACTIONS + 1), f"1..{NUM_ACTIONS} actions"),
        ([], f"1..{NUM_ACTIONS} actions"),
        ([{"id": 5}, {"id": 5}], "distinct action ids in ascending order"),
    ],
)
def test_legal_ids_are_checked_against_the_action_table_before_any_rebuild(served, monkeypatch, legal, words):
    rebuilt: list[int] = []
    real = bots.infoset.rebuild
    monkeypatch.setattr(bots.infoset, "rebuild", lambda *a: rebuilt.append(1) or real(*a))
    request = _crafted(need=2)
    request["legal"] = legal
    answer = served.post("/", json=request)
    assert answer.status_code == 400 and words in answer.json()["error"], answer.text
    assert rebuilt == []


# --------------------------------------------------------------------------- the games kept


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _request(game: str, decision: int = 0) -> dict:
    state = Game(num_players=2).new_initial_state(7)
    return decision_request(state, state.current_player(), game, decision, 1)


def test_new_games_from_anyone_never_end_a_game_in_play(monkeypatch):
    monkeypatch.setattr(bots, "MAX_SESSIONS", 8)
    clock = Clock()
    bot = BotServer("random", clock=clock)
    bot.answer(_request("mine", 0))  # a game in play: asked now and then
    refused = 0
    for i in range(300):
        clock.now += 1.0
        if i % 50 == 0:
            bot.answer(_request("mine", i // 50 + 1))
        try:
            bot.answer(_request(f"other{i}", 0))
        except TooMany as exc:
            refused += 1
            assert "try again when one has been left for 10 minutes" in exc.message
    assert refused == 300 - (bots.MAX_SESSIONS - 1)
    assert len(bot.sessions) == bots.MAX_SESSIONS
    assert bot.answer(_request("mine", 7)) >= 0  # still held, its decisions in order
    with pytest.raises(Conflict, match="out of order"):
        bot.answer(_request("mine", 9))
    # a seat left IDLE_SECONDS makes room for a new game; the game in play is kept
    clock.now += bots.IDLE_SECONDS
    bot.answer(_request("mine", 8))
    bot.answer(_request("newcomer", 0))
    assert ("newcomer", 0) in bot.sessions and ("mine", 0) in bot.sessions
    assert ("other0", 0) not in bot.sessions  # the least recently asked idle seat went


def test_a_full_bot_answers_a_new_game_429_over_http(monkeypatch):
    monkeypatch.setattr(bots, "MAX_SESSIONS", 2)
    with TestClient(create_bot_app("random")) as client:
        assert client.post("/", json=_request("a")).status_code == 200
        assert client.post("/", json=_request("b")).status_code == 200
        full = client.post("/", json=_request("c"))
        assert full.status_code == 429 and set(full.json()) == {"error"}
        assert client.post("/", json=_request("a", 1)).status_code == 200


# --------------------------------------------------------------------------- failures logged


class Failing:
    name = "failing"

    def reset(self, seed=None) -> None:
        pass

    def act(self, observation, action_mask, state=None) -> int:
        raise RuntimeError("the agent broke\non two lines")


def test_an_agent_failure_is_one_line_in_the_log_not_a_traceback(caplog):
    bot = BotServer("random", make=lambda spec, seed: Failing())
    with caplog.at_level(logging.INFO, logger="uvicorn.error"):
        for game in ("g1", "g2"):
            with pytest.raises(bots.AgentFailed, match="RuntimeError"):
                bot.answer(_request(game))
    records = [r for r in caplog.records if r.name == "uvicorn.error"]
    assert len(records) == 2
    for record in records:
        text = record.getMessage()
        assert record.exc_info is None and record.exc_text is None and "\n" not in text
        assert "RuntimeError: the agent broke" in text and "decision 0" in text


def test_bad_requests_stay_bad_requests(served):
    """Bounds of a real game hold for every number the crafted request could blow up."""
    request = _crafted(need=MAX_WORKERS + 1)
    answer = served.post("/", json=request)
    assert answer.status_code == 400 and "'worker_need'" in answer.json()["error"]
    with pytest.raises(BadRequest, match="'build_need'"):
        crafted = _crafted(need=2)
        crafted["state"]["build_need"] = 10**15
        BotServer("random").read(crafted)
