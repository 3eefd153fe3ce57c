"""The TextArena route (``island_fortress_env.adapters.textarena``, textarena 0.7.4): whole 2-, 3-
and 4-player games through TextArena's own loop and wrappers, its agents' interface, its
invalid-move convention, and no hidden fact in any message sent to a seat.

Every message the env sends is recorded where TextArena takes it (``State.add_observation``)
with the position it was sent at, and checked for every seat it goes to: the rules prompt is the
same whatever the deal; a position message is ``views.prompt.prompt`` of that seat and stays byte
for byte the same when everything the seat cannot see is dealt again
(``engine.visibility.redeal_unseen``); a reply is echoed to its sender only; a refusal goes to the
seat refused and reads the same on a redealt table. Nothing is sent to the whole table.
"""

from __future__ import annotations

import pytest

ta = pytest.importorskip("textarena", reason="TextArena is an optional extra: pip install '.[textarena]'")

from island_fortress_env.adapters import textarena as ift  # noqa: E402
from island_fortress_env.engine.visibility import redeal_unseen  # noqa: E402
from island_fortress_env.views import prompt as P  # noqa: E402
from island_fortress_env.views.prompt import ReplyError, legal_moves  # noqa: E402

from .conftest import load_example  # noqa: E402

REDEALS = (5, 6)
Types = ta.ObservationType


def unwrapped(env):
    while isinstance(env, ta.Wrapper):
        env = env.env
    return env


@pytest.fixture
def sent(monkeypatch):
    """Every message the env gives TextArena: (to_id, from_id, text, type, position)."""
    records: list[tuple] = []
    envs: list = []
    original = ta.FFAMultiPlayerState.add_observation

    def record(self, message, observation_type, from_id=ta.GAME_ID, to_id=-1):
        position = envs[-1].position
        records.append((to_id, from_id, message, observation_type, position.clone()))
        return original(self, message, observation_type, from_id=from_id, to_id=to_id)

    monkeypatch.setattr(ta.FFAMultiPlayerState, "add_observation", record)
    return records, envs


def make(env_id, envs, **kwargs):
    env = ta.make(env_id, **kwargs)
    envs.append(unwrapped(env))
    return env


def play(env, players, seed, game=0, replies=None):
    """A whole game through TextArena's loop with the example's scripted agents."""
    agent_type = load_example("textarena_play").ScriptedAgent
    agents = [agent_type(seed, game, seat) for seat in range(players)]
    env.reset(num_players=players, seed=seed)
    done, steps = False, 0
    while not done:
        player_id, observation = env.get_observation()
        reply = agents[player_id](observation)
        if replies is not None:
            replies.append(reply)
        done, _ = env.step(action=reply)
        steps += 1
    rewards, info = env.close()
    return rewards, info, steps


def test_importing_registers_the_three_ids_with_their_wrappers():
    for env_id in ift.ENV_IDS:
        assert env_id in ta.envs.registration.ENV_REGISTRY
    env = ta.make("IslandFortress-v0")
    assert env.is_wrapped_with(ta.wrappers.LLMObservationWrapper)
    assert env.is_wrapped_with(ta.wrappers.ActionFormattingWrapper)
    assert ta.make("IslandFortress-v0-train").is_wrapped_with(ta.wrappers.GameBoardObservationWrapper)
    assert isinstance(ta.make("IslandFortress-v0-raw"), ift.IslandFortressEnv)
    ift.register()  # again: nothing registered twice


@pytest.mark.parametrize("players", [2, 3, 4])
def test_whole_games_through_textarenas_loop_send_no_hidden_fact(sent, players):
    records, envs = sent
    env = make("IslandFortress-v0", envs)
    replies: list[str] = []
    rewards, info, steps = play(env, players, seed=40 + players, replies=replies)
    position = envs[-1].position
    assert position.is_terminal()
    winners = set(position.winners)
    assert rewards == {p: (1 if p in winners else -1) for p in range(players)}
    assert all("wins" in info[p]["reason"] and not info[p]["invalid_move"] for p in range(players))
    assert steps == len(replies) and steps > 100

    boards = 0
    echoes = iter(replies)
    for to_id, from_id, text, kind, at in records:
        assert to_id != -1, f"a message to the whole table: {text[:80]!r}"
        if kind is Types.PROMPT:
            assert text == envs[-1]._introduction(to_id, {})  # the seat and the rules: no deal in it
        elif kind in (Types.GAME_BOARD, Types.GAME_MESSAGE):
            assert text == P.prompt(at, to_id)
            for redeal in REDEALS:
                assert P.prompt(redeal_unseen(at, to_id, redeal), to_id) == text
            if players == 4:
                assert len(text) < 4000
            boards += 1
        elif kind is Types.PLAYER_ACTION:
            assert to_id == from_id == at.current_player()
            assert text == next(echoes)[: ift.ECHO_CHARS]
        else:
            pytest.fail(f"a message of type {kind}: {text[:80]!r}")
    assert boards == steps + players  # one per decision, and the end to every seat
    intros = [text for to_id, _, text, kind, _ in records if kind is Types.PROMPT]
    assert len(intros) == players and all("The rules in a page" in t for t in intros)


def test_the_rules_prompt_is_the_same_whatever_the_deal(sent):
    records, envs = sent
    for seed in (1, 2):
        make("IslandFortress-v0-raw", envs).reset(num_players=3, seed=seed)
    intros = [(to_id, text) for to_id, _, text, kind, _ in records if kind is Types.PROMPT]
    assert intros[:3] == intros[3:]


def test_an_illegal_reply_is_refused_by_textarenas_convention(sent):
    records, envs = sent
    env = make("IslandFortress-v0", envs)
    env.reset(num_players=3, seed=8)
    position = envs[-1].position
    player_id, _ = env.get_observation()
    before = (list(position.legal_actions()), len(position.log))
    expected = position.clone()
    expected.apply_action(expected.legal_actions()[0])
    done, _ = env.step(action="build a castle on the moon")
    assert not done
    again, observation = env.get_observation()
    assert again == player_id
    assert f"Player {player_id} attempted an invalid move. Reason: " in observation
    assert "names no legal move" in observation and "answer with" in observation
    assert (list(position.legal_actions()), len(position.log)) == before
    refusal = [(to_id, text, at) for to_id, _, text, kind, at in records if kind is Types.GAME_ADMIN]
    assert len(refusal) == 1 and refusal[0][0] == player_id
    for redeal in REDEALS:  # the reason reads the same on a table redealt for the seat refused
        with pytest.raises(ReplyError) as same:
            ift.read_reply(redeal_unseen(refusal[0][2], player_id, redeal), "[build a castle on the moon]")
        assert str(same.value) in refusal[0][1]
    done, _ = env.step(action="[1]")  # a legal reply: the game goes on
    assert not done and position.log == expected.log


def test_a_second_illegal_reply_in_a_row_forfeits_the_game(sent):
    _, envs = sent
    env = make("IslandFortress-v0", envs)
    env.reset(num_players=4, seed=9)
    player_id, _ = env.get_observation()
    assert env.step(action="no")[0] is False
    done, _ = env.step(action="still no")
    assert done
    rewards, info = env.close()
    assert rewards == {p: (-1 if p == player_id else 1) for p in range(4)}
    assert info[player_id]["invalid_move"] and f"Player {player_id} forfeits" in info[player_id]["reason"]


def test_error_allowance_zero_forfeits_at_the_first_illegal_reply(sent):
    _, envs = sent
    env = make("IslandFortress-v0", envs, error_allowance=0)
    env.reset(num_players=2, seed=10)
    player_id, _ = env.get_observation()
    done, _ = env.step(action="[999]")
    assert done and env.close()[0] == {player_id: -1, 1 - player_id: 1}


def test_every_reply_form_passes_textarenas_action_wrapper(sent):
    _, envs = sent
    env = make("IslandFortress-v0", envs)
    env.reset(num_players=2, seed=12)
    position = envs[-1].position
    forms = [
        lambda m: str(m.number),  # ActionFormattingWrapper makes it "[k]"
        lambda m: m.text,  # ... and "[words]"
        lambda m: f"After some thought I take [{m.number}].",
        lambda m: f"#{m.action}",
        lambda m: f"[{m.text.upper()}]",
    ]
    for form in forms * 4:
        move = legal_moves(position)[-1]
        expected = position.clone()
        expected.apply_action(move.action)
        done, _ = env.step(action=form(move))
        assert not done and position.log == expected.log
        assert position.current_player() == expected.current_player()


def test_the_train_version_shows_the_rules_and_the_latest_position(sent):
    _, envs = sent
    env = make("IslandFortress-v0-train", envs)
    agent = load_example("textarena_play").ScriptedAgent(0, 0, 0)
    env.reset(num_players=4, seed=13)
    for _ in range(60):
        player_id, observation = env.get_observation()
        assert observation.startswith(f"You are Player {player_id}")
        assert observation.rstrip().endswith("].") and observation.count(P.CHOOSE) == 1
        assert len(observation) - len(envs[-1]._introduction(player_id, {})) < 4000
        env.step(action=agent(observation))


@pytest.mark.parametrize("players", [1, 5, "3", True])
def test_a_table_size_the_game_is_not_for_is_one_clear_error(players):
    env = ta.make("IslandFortress-v0-raw")
    with pytest.raises(ValueError, match="players"):
        env.reset(num_players=players)


def test_the_example_plays_whole_games(capsys):
    assert load_example("textarena_play").main(["--games", "2", "--seed", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all("wins" in line for line in lines)
