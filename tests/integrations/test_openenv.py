"""The OpenEnv route (``island_fortress_env.adapters.openenv``): the game served by OpenEnv's own
server on a loopback port started and stopped here, played with OpenEnv's own client
(``EnvClient``): whole 2-, 3- and 4-player games, every text a seat is sent compared with the
text of a state redealt where that seat cannot see, refused replies, bad resets, the public state."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import numpy as np
import pytest

pytest.importorskip("openenv", reason="OpenEnv is an optional extra: pip install '.[openenv]'")

from island_fortress_env.adapters import openenv as ifo
from island_fortress_env.core.game import shared_game
from island_fortress_env.engine.config import GameConfig
from island_fortress_env.engine.visibility import redeal_unseen
from island_fortress_env.views import prompt as face

from .conftest import load_example

MAX_GAME_LENGTH = {2: 1000, 3: 1500, 4: 2000}  # the OpenSpiel adapter's bound on a game's decisions


@pytest.fixture(scope="module")
def base_url():
    with ifo.serving(ifo.make_app(players=3, max_sessions=4)) as url:
        yield url


def _client(url: str):
    return ifo.IslandFortressEnv(base_url=url, message_timeout_s=120.0).sync()


def _hidden(state) -> tuple:
    return tuple(state.deck), tuple(state.favor_hand)


def _check_hidden(
    local, seat: int, sent_text: str, sent_moves: list[str], seeds: np.random.Generator
) -> bool:
    """The text sent to ``seat`` is the local state's, and a state redealt where ``seat`` cannot
    see gives the same text and moves: nothing hidden from ``seat`` is in them. Whether the redeal
    changed the deck or a hand (so that the check was not empty)."""
    over = local.is_terminal()
    text = face.observation_text(local, seat) if over else face.prompt(local, seat)
    assert sent_text == text
    redealt = redeal_unseen(local, seat, int(seeds.integers(0, 2**63)))
    assert (face.observation_text(redealt, seat) if over else face.prompt(redealt, seat)) == sent_text
    if not over:
        assert [m.text for m in face.legal_moves(redealt)] == sent_moves
    return _hidden(redealt) != _hidden(local)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_whole_games_through_the_client_with_no_hidden_fact_in_any_text(base_url, players):
    seed = 40 + players
    rng = np.random.default_rng(players)
    seeds = np.random.default_rng(100 + players)
    local = shared_game(GameConfig(num_players=players)).new_initial_state(seed)
    with _client(base_url) as env:
        result = env.reset(players=players, seed=seed)
        steps = changed = 0
        while not result.done:
            obs = result.observation
            assert obs.seat == obs.current_player_id == local.current_player()
            assert obs.num_players == players and obs.error is None and obs.legal_moves
            changed += _check_hidden(local, obs.seat, obs.text, obs.legal_moves, seeds)
            k = int(rng.integers(1, len(obs.legal_moves) + 1))
            local.apply_action(face.parse_reply(local, f"[{k}]"))
            result = env.step(ifo.IslandFortressAction(reply=f"[{k}]", seat=obs.seat))
            steps += 1
            assert steps <= MAX_GAME_LENGTH[players]
        obs = result.observation
        assert local.is_terminal() and obs.current_player_id == -1 and not obs.legal_moves
        _check_hidden(local, obs.seat, obs.text, [], seeds)
        assert changed > steps // 2  # the redeals changed what the seat could not see
        assert obs.rewards == pytest.approx(list(local.returns()))
        assert sum(obs.rewards) == pytest.approx(0.0) and result.reward == obs.rewards[obs.seat]
        state = env.state()
        assert state.done and state.step_count == steps and state.num_players == players
        assert state.scores == list(local.score) and state.refused_replies == 0


def test_an_illegal_reply_is_refused_by_the_convention_and_the_game_goes_on(base_url):
    with _client(base_url) as env:
        first = env.reset(players=2, seed=5).observation
        for reply, seat in (
            ("[999]", None),
            ("no such move", None),
            ("#-3", first.seat),
            ("[1]", 1 - first.seat),
        ):
            result = env.step(ifo.IslandFortressAction(reply=reply, seat=seat))
            obs = result.observation
            assert not result.done and result.reward == 0.0 and obs.metadata == {"refused": True}
            assert obs.error and obs.seat == first.seat
            assert (obs.text, obs.legal_moves) == (first.text, first.legal_moves)  # the state unchanged
        assert "seat" in obs.error
        state = env.state()
        assert (state.step_count, state.refused_replies) == (0, 4)
        result = env.step(ifo.IslandFortressAction(reply="1", seat=first.seat))
        assert result.observation.error is None and env.state().step_count == 1


def test_a_step_before_any_reset_is_refused_and_a_malformed_action_is_the_servers_error(base_url):
    with _client(base_url) as env:
        obs = env.step(ifo.IslandFortressAction(reply="[1]")).observation
        assert obs.metadata == {"refused": True} and "reset" in obs.error
        env.reset(players=2, seed=1)
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            env.step({"reply": "x" * (ifo.MAX_REPLY_CHARS + 1)})
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            env.step({"reply": "[1]", "cheat": True})
        assert env.state().step_count == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"players": 5}, "num_players"),
        ({"players": "3"}, "players must be an integer"),
        ({"options": {"favor_deck": "/etc/passwd"}}, "unknown game option"),
        ({"options": {"extra_jade": -1}}, "extra_jade"),
        ({"options": {"no_such": 1}}, "unknown game option"),
        ({"seed": 2**64}, "seed"),
        ({"bogus": 1}, "unknown reset parameter"),
        ({"episode_id": "e" * 256}, "episode_id"),
        ({"options": [1]}, "options must be a mapping"),
    ],
)
def test_a_bad_reset_is_one_error_and_keeps_the_game_in_progress(base_url, kwargs, message):
    with _client(base_url) as env:
        before = env.reset(players=3, seed=9).observation
        env.step(ifo.IslandFortressAction(reply="[1]"))
        with pytest.raises(RuntimeError, match=message):
            env.reset(**kwargs)
        state = env.state()
        assert state.step_count == 1 and state.num_players == 3
        assert env.step(ifo.IslandFortressAction(reply="[1]")).observation.num_players == before.num_players


def test_options_are_a_resets_and_the_public_state_never_holds_the_seed(base_url):
    with _client(base_url) as env:
        env.reset(players=4, seed=123456789, options={"favor_trade_in": True, "extra_jade": 2})
        state = env.state()
        assert state.variants == {"favor_trade_in": True, "extra_jade": 2}
        assert "123456789" not in json.dumps(state.model_dump())
    with urllib.request.urlopen(f"{base_url}/schema", timeout=30) as response:  # OpenEnv's own route
        schema = json.load(response)
    assert set(schema["action"]["properties"]) >= {"reply", "seat"}
    assert "seed" not in schema["state"]["properties"]


def _http(url: str, body: dict | None = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_openenvs_http_routes_answer_and_a_bad_reset_is_a_4xx(base_url):
    status, body = _http(f"{base_url}/reset", {"players": 2, "seed": 4})
    assert status == 200 and body["observation"]["num_players"] == 2 and body["observation"]["legal_moves"]
    status, body = _http(f"{base_url}/reset", {"players": 5})
    assert status == 422 and "num_players" in body["detail"]
    status, body = _http(f"{base_url}/reset", {"episode_id": "e" * 300})  # OpenEnv's own bound
    assert status == 422
    status, body = _http(f"{base_url}/step", {"action": {"reply": "[1]"}})  # a fresh env: refused
    assert status == 200 and body["metadata"] == {"refused": True}
    assert _http(f"{base_url}/health")[0] == 200
    status, body = _http(f"{base_url}/metadata")
    assert status == 200 and body["name"] == ifo.ENV_NAME


def test_sessions_are_separate_games(base_url):
    with _client(base_url) as one, _client(base_url) as two:
        a = one.reset(players=2, seed=3).observation
        b = two.reset(players=4, seed=3).observation
        one.step(ifo.IslandFortressAction(reply="[1]"))
        assert (one.state().num_players, two.state().num_players) == (2, 4)
        assert two.state().step_count == 0 and a.num_players == 2 and b.num_players == 4


def test_the_example_plays_games_with_scripted_agents(capsys):
    example = load_example("openenv_play")
    assert example.main(["--games", "2", "--players", "2", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert out.count("game ") == 2 and "refused 0" in out
