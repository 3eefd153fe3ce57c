"""The Game Arena route (``island_fortress_env.adapters.game_arena``): whole 2-, 3- and 4-player
games through kaggle-environments' own OpenSpiel runner and ``core_harness.create_agent_fn``, with
scripted models reached through litellm (nothing downloaded or sent); every observation sent to
every seat at every step compared with a state redealt where that seat cannot see; a refused reply
asked again with the refusal, and a seat that never answers forfeiting by the arena's convention;
OpenSpiel 2.0's structured observations."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

pytest.importorskip(
    "kaggle_environments", reason="Game Arena is an optional extra: pip install '.[gamearena]'"
)

from island_fortress_env.adapters import game_arena as ga  # before litellm: it keeps it off the network
from island_fortress_env.engine.visibility import redeal_unseen

from .conftest import load_example

pyspiel = pytest.importorskip("pyspiel")
_LINE = re.compile(r"^\[(\d+)\] ", re.MULTILINE)


@pytest.fixture(autouse=True)
def quiet_telemetry():
    ga.core_harness.set_telemetry_exporter(lambda module, **kwargs: None)  # the arena logs nowhere


def _text_agent(seed: int, prompts: list[str]):
    """A scripted model that reads only the prompt and answers a number from its numbered list,
    after a line of "reasoning"."""
    rng = np.random.default_rng(seed)

    def answer(text: str) -> str:
        prompts.append(text)
        return f"Weighing the moves.\n[{rng.choice(_LINE.findall(text))}]"

    return answer


def _check_every_observation(env, players: int, rng_seed: int) -> int:
    """Every observation of every seat in ``env.steps`` is the view of the game replayed here, and
    the view of a state redealt where that seat cannot see; returns the steps checked."""
    game = ga.ArenaGame({"players": players, "rng_seed": rng_seed})
    state = game.new_initial_state()
    actions = [int(a) for a in env.info["actionHistory"]]
    seeds = np.random.default_rng(rng_seed)
    checked = changed = 0
    for i, step in enumerate(env.steps[1:]):  # steps[0]: before the runner's first call
        if i:
            state.apply_action(actions[i - 1])
        engine = state.engine
        for seat in range(players):
            sent = step[seat]["observation"]
            assert "serializedGameAndState" not in sent
            assert json.loads(sent["observationString"]) == ga.view(engine, seat)
            redealt = redeal_unseen(engine, seat, int(seeds.integers(0, 2**63)))
            changed += (tuple(redealt.deck), tuple(redealt.favor_hand)) != (
                tuple(engine.deck),
                tuple(engine.favor_hand),
            )
            assert ga.view(redealt, seat) == json.loads(sent["observationString"])
            mine = seat == sent["currentPlayer"] and not sent["isTerminal"]
            expected = [redealt.action_to_string(a) for a in redealt.legal_actions()] if mine else []
            assert sent["legalActionStrings"] == expected
            checked += 1
    assert len(actions) == len(env.steps) - 2 and state.is_terminal()
    assert changed > checked // 2  # the redeals changed what the seat could not see
    return checked


@pytest.mark.parametrize("players", [2, 3, 4])
def test_whole_games_through_the_arena_runner_with_no_hidden_fact_sent(players):
    rng_seed = 20 + players
    prompts: list[str] = []
    env = ga.make(players=players, rng_seed=rng_seed)
    agents = [
        ga.agent(ga.scripted_model(f"whole-{players}-{s}", _text_agent(s, prompts))) for s in range(players)
    ]
    env.run(agents)
    assert [s.status for s in env.state] == ["DONE"] * players
    rewards = [s.reward for s in env.state]
    assert sum(rewards) == pytest.approx(0.0) and max(rewards) > 0
    assert _check_every_observation(env, players, rng_seed) == players * (len(env.steps) - 1)
    assert len(prompts) == len(env.steps) - 2 and all("Your previous reply" not in p for p in prompts)
    assert max(len(p) for p in prompts) < 4000  # the text face's budget


def test_a_refused_reply_is_asked_again_with_the_refusal():
    refusals: list[str] = []

    def answer(text: str) -> str:
        if "Your previous reply was refused" in text:
            refusals.append(text.split("Your previous reply was refused: ", 1)[1])
            return f"[{_LINE.findall(text)[0]}]"
        return "I would rather build a castle of my own."

    env = ga.make(players=2, rng_seed=3)
    env.run([ga.agent(ga.scripted_model("refused", answer), max_retries=2)] * 2)
    assert [s.status for s in env.state] == ["DONE", "DONE"]
    assert sum(s.reward for s in env.state) == pytest.approx(0.0)
    assert refusals and len(refusals) == len(env.steps) - 2
    assert all("names no legal move" in r and "answer with a move's number" in r for r in refusals)


def test_a_seat_that_never_names_a_move_forfeits_by_the_arenas_convention():
    good = _text_agent(1, [])
    env = ga.make(players=3, rng_seed=5)
    silent = ga.agent(ga.scripted_model("silent", lambda text: "pass"), max_retries=2)
    env.run(
        [silent, ga.agent(ga.scripted_model("good-1", good)), ga.agent(ga.scripted_model("good-2", good))]
    )
    assert [s.status for s in env.state] == ["DONE"] * 3
    assert [s.reward for s in env.state] == [-1, 1, 1]  # the runner's forfeit: the offender loses
    assert "forfeiting" in env.steps[-1][0]["action"]["status"]
    assert env.steps[-1][0]["action"]["submission"] == -1  # OpenSpiel's invalid action


def test_the_runners_random_agent_plays_from_the_legal_actions():
    env = ga.make(players=4, rng_seed=8)
    env.run(["random"] * 4)
    assert [s.status for s in env.state] == ["DONE"] * 4


def test_default_deals_come_from_the_os_and_no_seed_is_in_the_configuration():
    views = []
    for _ in range(2):
        env = ga.make(players=2)
        assert env.configuration.openSpielGameParameters.get("rng_seed", -1) == -1
        env.reset(2)
        env.step([{}, {}])  # the runner's first call deals the game
        views.append(json.loads(env.steps[-1][0]["observation"]["observationString"])["text"])
    assert views[0] != views[1]  # two deals of 64 random bits each


def test_structured_observations_and_actions_are_openspiels():
    game = pyspiel.load_game(ga.SHORT_NAME, {"players": 3, "rng_seed": 1})
    state = game.new_initial_state()
    for seat in range(3):
        struct = state.to_observation_struct(seat)
        assert struct.to_dict() == ga.view(state.engine, seat) == json.loads(state.observation_string(seat))
    assert state.observation_tensor(0) == pytest.approx(np.asarray(state.wrapped.observation_tensor(0)))
    action = state.legal_actions()[0]
    assert state.action_to_struct(action).to_dict() == {
        "id": action,
        "text": ga.view(state.engine, 0)["moves"][0]["text"],
    }
    assert state.struct_to_actions(state.action_to_struct(action)) == [action]
    assert state.hides_state_from_agents()


@pytest.mark.parametrize(
    ("observation", "message"),
    [
        ({}, "no observationString"),
        ({"observationString": "x" * (ga.MAX_VIEW_CHARS + 1)}, "over"),
        ({"observationString": "{"}, "not JSON"),
        ({"observationString": json.dumps({"game": "chess"})}, "not this game's view"),
        ({"observationString": json.dumps({"game": "island_fortress", "seat": 0})}, "missing"),
        (
            {
                "observationString": json.dumps(
                    {
                        "game": "island_fortress",
                        "seat": 0,
                        "to_move": 0,
                        "text": "",
                        "moves": [{"number": 2, "id": 1}],
                    }
                )
            },
            "move 1",
        ),
    ],
)
def test_a_bad_observation_is_one_error(observation, message):
    with pytest.raises(ValueError, match=message):
        ga.read_view(observation)


def test_replies_are_read_as_the_text_face_reads_them():
    moves = (ga.Move(1, 40, "pass"), ga.Move(2, 7, "build at 1-1-1"))
    assert ga.choose(moves, "[2]").action == 7
    assert ga.choose(moves, "long reasoning\nmore\n 1 ").action == 40
    assert ga.choose(moves, "#7").action == 7
    assert ga.choose(moves, "Build  AT 1-1-1").action == 7
    for bad in ("[3]", "#8", "", "maybe [1] or [2]", "²"):
        with pytest.raises(ga.ReplyError):
            ga.choose(moves, bad)
    with pytest.raises(ValueError, match="unknown game option"):
        ga.make(players=2, options={"no_such": 1})
    with pytest.raises(ValueError, match="players"):
        ga.make(players=5)


def test_the_example_plays_a_game_with_scripted_models(capsys):
    example = load_example("game_arena_play")
    assert example.main(["--games", "1", "--players", "2", "--seed", "2"]) == 0
    assert "game 0:" in capsys.readouterr().out
