"""The OpenSpiel adapter (``island_fortress_env.openspiel``) and the IS-MCTS agent, on both backends
(the ``backend`` game parameter: the C++ core and the Python engine): OpenSpiel's own tests, saved
states (both readers, and hostile texts refused), observations, resampling."""

from __future__ import annotations

import base64
import json
import os
import pickle

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel is an optional extra: pip install '.[openspiel]'")

from island_fortress_env import island_fortress_v0  # noqa: E402
from island_fortress_env.adapters import openspiel as ifo  # noqa: E402
from island_fortress_env.adapters import saved_states  # noqa: E402
from island_fortress_env.engine import ConfigError  # noqa: E402
from island_fortress_env.engine.decisions import Decision  # noqa: E402
from island_fortress_env.engine.state import ACTION_PHASE_DECISIONS  # noqa: E402
from island_fortress_env.engine.visibility import redeal_unseen  # noqa: E402
from island_fortress_env.engine.wall import iter_bits  # noqa: E402
from island_fortress_env.players import make_agent  # noqa: E402
from island_fortress_env.training import evaluate as evaluate_mod  # noqa: E402

from .conftest import load_example, torch_threads_at_start  # noqa: E402


def _play_random(state, seed: int) -> None:
    rng = np.random.default_rng(seed)
    while not state.is_terminal():
        state.apply_action(int(rng.choice(state.legal_actions())))


def test_importing_registers_the_game_with_its_parameters():
    names = [g.short_name for g in pyspiel.registered_games()]
    assert "python_island_fortress" in names
    game = pyspiel.load_game("python_island_fortress", {"players": 4, "favor_trade_in": True})
    assert game.num_players() == 4
    assert game.engine_game.config.favor_trade_in is True
    assert game.num_distinct_actions() == ifo.NUM_ACTIONS
    kind = game.get_type()
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.DETERMINISTIC  # chance is in the state
    assert kind.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert kind.provides_observation_tensor and not kind.provides_information_state_tensor
    assert pyspiel.load_game("python_island_fortress").num_players() == ifo.DEFAULT_PLAYERS


@pytest.mark.parametrize(
    "params",
    [
        {"players": 2},
        {"players": 3},
        {"players": 4},
        {"players": 3, "first_round_incentive": "treasure", "favor_trade_in": True, "no_replace": True},
        {"players": 4, "extra_region": True, "unlimited_components": True, "extra_jade": 10},
    ],
)
def test_pyspiel_random_simulation_test(params, backend):
    game = pyspiel.load_game("python_island_fortress", {**params, "backend": backend})
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_max_game_length_has_a_wide_margin_over_random_games(n):
    rich = {"favor_trade_in": True, "unlimited_components": True, "extra_jade": 10, "start_laborers": 12}
    for params in ({"players": n}, {"players": n, **rich}):
        engine_game = ifo.IslandFortressGame(params).engine_game  # the engine directly: faster
        longest = 0
        for seed in range(40):
            state, steps = engine_game.new_initial_state(seed), 0
            rng = np.random.default_rng(seed)
            while not state.is_terminal():
                state.apply_action(int(rng.choice(state.legal_actions())))
                steps += 1
            longest = max(longest, steps)
        assert longest < ifo.MAX_GAME_LENGTH[n] / 2


def test_bad_parameters_are_one_clear_error():
    with pytest.raises(ConfigError, match="num_players"):
        ifo.IslandFortressGame({"players": 5})
    with pytest.raises(ConfigError, match=r"backend must be one of \('core', 'python'\)"):
        ifo.IslandFortressGame({"backend": "rust"})
    with pytest.raises(ConfigError, match="first_round_incentive"):
        ifo.IslandFortressGame({"first_round_incentive": "gold"})


def test_rng_seed_fixes_the_sequence_of_deals_and_clones_do_not_advance_it(backend):
    def deals(rng_seed: int, clones: bool) -> list[str]:
        game = pyspiel.load_game(
            "python_island_fortress", {"players": 2, "rng_seed": rng_seed, "backend": backend}
        )
        out = []
        for _ in range(3):
            state = game.new_initial_state()
            if clones:
                for _ in range(5):
                    state.clone()
            out.append(str(state.engine.deck) + str(state.engine.drawn))
        return out

    assert deals(7, clones=False) == deals(7, clones=True)
    assert len(set(deals(7, clones=False))) == 3, "successive games must be dealt differently"
    assert deals(7, clones=False) != deals(8, clones=False)


def test_a_clone_continues_exactly_like_the_original(backend):
    game = pyspiel.load_game("python_island_fortress", {"players": 3, "backend": backend})
    assert game.engine_game.backend == backend
    state = game.new_initial_state()
    for _ in range(3):
        state.apply_action(state.legal_actions()[0])
    twin = state.clone()
    assert twin.engine is not state.engine and twin.history() == state.history()
    _play_random(state, 5)
    _play_random(twin, 5)
    assert state.returns() == twin.returns() and str(state) == str(twin)


def test_observation_is_the_environment_view(backend):
    env = island_fortress_v0.env(num_players=3, backend=backend)
    env.reset(seed=0)
    game = pyspiel.load_game("python_island_fortress", {"players": 3, "backend": backend})
    for _ in range(40):
        state = ifo.state_from_engine(game, env.unwrapped.game_state)
        for seat in range(3):
            np.testing.assert_array_equal(
                np.asarray(state.observation_tensor(seat), dtype=np.float32),
                env.unwrapped.observe(f"player_{seat}")["observation"],
            )
        env.step(env.unwrapped.game_state.legal_actions()[-1])


def _state_with_hidden_cards(backend: str, seed: int = 3, decision=None):
    game = pyspiel.load_game("python_island_fortress", {"players": 3, "backend": backend})
    state = game.new_initial_state()
    rng = np.random.default_rng(seed)
    wanted = ACTION_PHASE_DECISIONS if decision is None else {decision}
    while not state.is_terminal():
        engine = state.engine
        if (
            engine.decision in wanted
            and engine.current_player() == 0
            and engine.favor_hand[1]
            and len(engine.deck) > 1
            and len(state.legal_actions()) > 1
            and (decision != Decision.PETITION_BID or engine.order_pos > 0)
        ):
            return state
        state.apply_action(int(rng.choice(state.legal_actions())))
    raise AssertionError("no such state in this game")


@pytest.mark.parametrize("decision", [None, Decision.PETITION_BID])
def test_resampling_keeps_the_players_view_and_redeals_the_rest(decision, backend):
    state = _state_with_hidden_cards(backend, decision=decision)
    engine = state.engine
    unseen = sorted(
        engine.deck + [c for p in (1, 2) for c in iter_bits(engine.favor_hand[p] | engine.drawn[p])]
    )
    changed = False
    for k in range(10):
        other = state.resampled(0, np.random.default_rng(k))
        e = other.engine
        assert other.observation_string(0) == state.observation_string(0)
        assert other.legal_actions() == state.legal_actions()
        assert e.favor_hand[0] == engine.favor_hand[0]
        again = sorted(e.deck + [c for p in (1, 2) for c in iter_bits(e.favor_hand[p] | e.drawn[p])])
        assert again == unseen, "resampling must redeal the unseen cards, not make or lose any"
        for p in (1, 2):
            assert e.favor_hand[p].bit_count() == engine.favor_hand[p].bit_count()
        assert e.component_totals() == engine.component_totals()
        changed |= e.favor_hand[1] != engine.favor_hand[1] or e.deck != engine.deck
        _play_random(other, k)  # a resampled state is a legal state
    assert changed
    assert state.engine is engine and state.engine.deck == engine.deck, "the original is left alone"


def test_resample_from_infostate_uses_the_pyspiel_sampler(backend):
    state = _state_with_hidden_cards(backend)
    a = state.resample_from_infostate(0, pyspiel.UniformProbabilitySampler(0.0, 1.0))
    assert a.observation_string(0) == state.observation_string(0)


def test_mcts_agent_ignores_hidden_information(backend):
    state = _state_with_hidden_cards(backend)
    engine = state.engine
    twin = redeal_unseen(engine, 0, seed=11)  # the same position for seat 0, the rest dealt again
    assert twin.favor_hand[1] != engine.favor_hand[1] and twin.deck != engine.deck
    env = island_fortress_v0.raw_env(num_players=3, backend=backend)
    env.reset(seed=0)
    env.game_state = engine
    obs = env.observe("player_0")
    env.game_state = twin
    assert np.array_equal(env.observe("player_0")["observation"], obs["observation"])
    picks = {
        make_agent("mcts:12", seed=4).act(obs["observation"], obs["action_mask"], s) for s in (engine, twin)
    }
    assert len(picks) == 1


def test_evaluate_seats_mcts_against_other_agents():
    result = evaluate_mod.evaluate(["mcts:4", "random"], games=2, seed=0)
    assert result["games"] == 2
    assert [a["spec"] for a in result["agents"]] == ["mcts:4", "random"]
    assert sum(a["wins"] for a in result["agents"]) == pytest.approx(2)


def test_openspiel_rl_environment_plays_on_observations():
    from open_spiel.python import rl_environment

    env = rl_environment.Environment("python_island_fortress", players=2, rng_seed=1)
    assert env.observation_spec()["info_state"] == (ifo.OBS_SIZE,)
    rng = np.random.default_rng(0)
    time_step = env.reset()
    while not time_step.last():
        player = time_step.observations["current_player"]
        time_step = env.step([int(rng.choice(time_step.observations["legal_actions"][player]))])
    assert sorted(time_step.rewards) == [-1.0, 1.0] or time_step.rewards == [0.0, 0.0]


def test_openspiels_pytorch_dqn_learns_through_rl_environment():
    """OpenSpiel's own DQN (``open_spiel.python.pytorch.dqn``, examples/openspiel_dqn.py) on the
    game through ``rl_environment``: self-play games with learning steps, then greedy games
    against OpenSpiel's random agents; the environment checks every action against the legal ones."""
    torch = pytest.importorskip("torch", reason="OpenSpiel's PyTorch DQN needs torch (make test-openspiel)")
    pytest.importorskip("tree", reason="OpenSpiel's PyTorch DQN needs dm-tree (the openspiel extra)")
    example = load_example("openspiel_dqn")
    np.random.seed(0)  # noqa: NPY002  (OpenSpiel's DQN explores with numpy's global generator)
    env = example.make_env(players=2, seed=1)
    assert env.game.get_type().chance_mode == pyspiel.GameType.ChanceMode.DETERMINISTIC
    assert env.observation_spec()["info_state"] == (ifo.OBS_SIZE,)
    assert env.action_spec()["num_actions"] == ifo.NUM_ACTIONS
    agents = example.make_agents(env, hidden=32, seed=1, min_buffer=64, learn_every=4)
    untrained = [p.detach().clone() for p in agents[0]._q_network.parameters()]
    returns = example.train(env, agents, episodes=2)
    assert all(sorted(r) == [-1.0, 1.0] or r == [0.0, 0.0] for r in returns)
    for agent in agents:
        assert len(agent.replay_buffer) > 64 and agent.step_counter > 100
        assert agent.loss is not None and np.isfinite(float(agent.loss))  # it learned
    trained = list(agents[0]._q_network.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(untrained, trained, strict=True))
    assert -1.0 <= example.evaluate(env, agents, games=2) <= 1.0


def test_the_dqn_example_runs_torch_on_one_thread_unless_told(monkeypatch):
    pytest.importorskip("torch", reason="OpenSpiel's PyTorch DQN needs torch (make test-openspiel)")
    pytest.importorskip("tree", reason="OpenSpiel's PyTorch DQN needs dm-tree (the openspiel extra)")
    example = load_example("openspiel_dqn")
    assert torch_threads_at_start(monkeypatch, example, "train", []) == [1]
    assert torch_threads_at_start(monkeypatch, example, "train", ["--threads", "2"]) == [2]


# --------------------------------------------------------------------------- saved states

READERS = {"pyspiel": pyspiel.deserialize_game_and_state, "bounded": ifo.deserialize_game_and_state}


def _assert_same(state, twin, n: int) -> None:
    assert str(twin) == str(state) and twin.history() == state.history()
    assert twin.legal_actions() == state.legal_actions() and twin.is_terminal() == state.is_terminal()
    for p in range(n):
        assert twin.observation_tensor(p) == state.observation_tensor(p)
        assert twin.observation_string(p) == state.observation_string(p)


def _saved_states(backend: str, n: int):
    """States of one game worth saving: a fresh one, mid-game ones, one redealt by resampling
    and played on, the last one before the end."""
    game = pyspiel.load_game("python_island_fortress", {"players": n, "backend": backend, "rng_seed": n})
    state = game.new_initial_state()
    yield game, state.clone()
    rng = np.random.default_rng(n)
    step = 0
    while not state.is_terminal():
        if step in (9, 150):
            yield game, state
        if step == 60:
            state = state.resampled(step % n, np.random.default_rng(step))
            yield game, state
        state.apply_action(int(rng.choice(state.legal_actions())))
        step += 1


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("n", [2, 3, 4])
def test_a_saved_state_comes_back_equal_and_has_the_same_future(backend, n, reader):
    for game, state in _saved_states(backend, n):
        text = pyspiel.serialize_game_and_state(game, state)
        loaded_game, twin = READERS[reader](text)
        assert str(loaded_game) == str(game)
        _assert_same(state, twin, n)
        original = state.clone()
        rng = np.random.default_rng(len(state.history()))
        while not original.is_terminal():  # the same actions: the same draws, the same game
            action = int(rng.choice(original.legal_actions()))
            original.apply_action(action)
            twin.apply_action(action)
            if len(original.history()) % 16 == 0:
                _assert_same(original, twin, n)
        _assert_same(original, twin, n)
        assert twin.returns() == original.returns()


def test_a_loaded_state_saves_again_to_the_same_text(backend):
    game, state = list(_saved_states(backend, 3))[-1]
    text = pyspiel.serialize_game_and_state(game, state)
    for reader in READERS.values():
        again_game, again = reader(text)
        assert pyspiel.serialize_game_and_state(again_game, again) == text
        assert pyspiel.serialize_game_and_state(again_game, again.clone()) == text


def test_a_position_taken_as_it_is_cannot_be_saved(backend):
    game = pyspiel.load_game("python_island_fortress", {"players": 2, "backend": backend})
    state = ifo.state_from_engine(game, game.new_initial_state().engine)
    with pytest.raises(saved_states.SavedStateError, match="state_from_engine"):
        pyspiel.serialize_game_and_state(game, state)


class _Call:
    """Pickles as ``function(*args)``: what a hostile text may hold."""

    def __init__(self, function, *args) -> None:
        self.function, self.args = function, args

    def __reduce__(self):
        return (self.function, self.args)


def _record(text: str) -> dict:
    line = next(x for x in text.split("\n") if x.startswith("__dict__="))
    return json.loads(saved_states._record_in_pickle(base64.b64decode(line[len("__dict__=") :])))


def _with_dict(text: str, attributes: object) -> str:
    """``text`` with its pickled attributes replaced (by ``attributes`` pickled, or by bytes)."""
    data = attributes if isinstance(attributes, bytes) else pickle.dumps(attributes)
    pickled = base64.b64encode(data).decode()
    return "\n".join(
        f"__dict__={pickled}" if line.startswith("__dict__=") else line for line in text.split("\n")
    )


def _with_record(text: str, **changes: object) -> str:
    record = {**_record(text), **changes}
    return _with_dict(text, {"_deal": _Call(ifo._saved_deal, json.dumps(record))})


def test_hostile_or_garbled_texts_are_one_error_and_nothing_is_unpickled(tmp_path):
    game = pyspiel.load_game("python_island_fortress", {"players": 2})
    state = game.new_initial_state()
    for _ in range(2):
        state.apply_action(state.legal_actions()[0])
    text = pyspiel.serialize_game_and_state(game, state)
    marker = tmp_path / "ran"
    record = _record(text)
    deep = "[" * 40 + "]" * 40
    cases = {
        "posix.system": _with_dict(text, {"_deal": _Call(os.system, f"touch {marker}")}),
        "builtins.eval": _with_dict(text, {"_deal": _Call(eval, f"open('{marker}', 'w')")}),
        "not the game's one record": _with_dict(text, {"_deal": "a string"}),
        "MARK opcode": _with_dict(text, {"_deal": _Call(ifo._saved_deal, json.dumps(record)), "x": []}),
        "not base64": text.replace("__dict__=", "__dict__=@@"),
        "not a pickle this game writes": _with_dict(text, b"\x80\x04\x8c\x05ab"),
        "Version: 1": text.replace("Version: 1", "Version: 2"),
        "no \\[State\\] section": text.split("[State]")[0],
        "appears twice": text + "[Game]\nkuhn_poker\n",
        "GameRNGState": text + "[GameRNGState]\n123\n",
        "not of 'python_island_fortress'": text.replace("python_island_fortress(", "kuhn_poker("),
        "players must be an integer in \\[2, 4\\]": text.replace("players=2", "players=9"),
        "invalid game config: extra_region": text.replace("extra_region=False", "extra_region=True"),
        "must be flat": text.replace("players=2", "players=" + "g(x=" * 50 + "2" + ")" * 50),
        "history=": text.replace("history=", "history=x"),
        "text's history": text.replace("history=0:", "history=1:"),
        "move_number=": text.replace("move_number=2", "move_number=3"),
        "step 1 of the record": _with_record(text, steps=[record["steps"][0], 379]),
        "step 0 must be an integer": _with_record(text, steps=[-1]),
        "redeal": _with_record(text, steps=[["redeal", 3, 1]]),
        "configured": _with_record(text, config={**record["config"], "num_players": 3}),
        "exactly the game's options": _with_record(text, config={"num_players": 2}),
        "seed must be an integer": _with_record(text, seed=2**64),
        "unknown record version": _with_record(text, island_fortress_state=2),
        "at most 8000": _with_record(text, steps=[0] * 8001),
        "not readable JSON": _with_dict(text, {"_deal": _Call(ifo._saved_deal, deep)}),
        "longer than": text + "#" * saved_states.MAX_SERIALIZED_CHARS,
    }
    for message, bad in cases.items():
        with pytest.raises(saved_states.SavedStateError, match=message):
            ifo.deserialize_game_and_state(bad)
    with pytest.raises(saved_states.SavedStateError, match="is text, not bytes"):
        ifo.deserialize_game_and_state(text.encode())
    assert not marker.exists()


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"steps": [379]}, "step 0 of the record"),
        ({"seed": -5}, "the seed must be an integer"),
        ({"config": None}, "exactly the game's options"),
    ],
)
def test_pyspiels_own_reader_checks_the_record_too(changes, message):
    game = pyspiel.load_game("python_island_fortress", {"players": 2})
    state = game.new_initial_state()
    state.apply_action(state.legal_actions()[0])
    text = pyspiel.serialize_game_and_state(game, state)
    with pytest.raises(saved_states.SavedStateError, match=message):
        pyspiel.deserialize_game_and_state(_with_record(text, **changes))
    with pytest.raises(saved_states.SavedStateError, match="not the history OpenSpiel read"):
        pyspiel.deserialize_game_and_state(text.replace("history=0:", "history=1:"))
    _, without_record = pyspiel.deserialize_game_and_state(_with_dict(text, {}))
    with pytest.raises(saved_states.SavedStateError, match="no record of its deal"):
        without_record.legal_actions()


@pytest.mark.parametrize("depth", [20_000, 100_000])
def test_a_deeply_nested_game_string_never_reaches_pyspiel(monkeypatch, depth):
    game = pyspiel.load_game("python_island_fortress", {"players": 2})
    text = pyspiel.serialize_game_and_state(game, game.new_initial_state())
    deep = text.replace("players=2", "players=" + "g(x=" * depth + "2" + ")" * depth)
    assert len(deep) <= saved_states.MAX_SERIALIZED_CHARS

    def parser(*args):  # pyspiel's parser recurses per level: 20,000 deep it crashes the process
        raise AssertionError("the game string reached pyspiel's parser")

    monkeypatch.setattr(pyspiel, "load_game", parser)
    with pytest.raises(saved_states.SavedStateError, match="game string is longer than"):
        ifo.deserialize_game_and_state(deep)


def test_deserialize_state_is_the_checked_reader_and_never_unpickles(tmp_path):
    game = pyspiel.load_game("python_island_fortress", {"players": 2})
    state = game.new_initial_state()
    for _ in range(3):
        state.apply_action(state.legal_actions()[0])
    twin = game.deserialize_state(state.serialize())
    assert isinstance(twin, ifo.IslandFortressState)
    _assert_same(state, twin, 2)
    marker = tmp_path / "ran"
    hostile = _with_dict(state.serialize(), {"_deal": _Call(os.system, f"touch {marker}")})
    with pytest.raises(saved_states.SavedStateError, match=r"posix\.system, not the record"):
        game.deserialize_state(hostile)
    other = pyspiel.load_game("python_island_fortress", {"players": 3})
    with pytest.raises(saved_states.SavedStateError, match="configured"):
        other.deserialize_state(state.serialize())
    assert not marker.exists()


def test_a_text_names_a_favor_deck_file_only_where_the_caller_does():
    from importlib import resources

    deck = str(resources.files("island_fortress_env.engine").joinpath("data/favor_deck.json"))
    game = pyspiel.load_game("python_island_fortress", {"players": 2, "favor_deck": deck})
    state = game.new_initial_state()
    state.apply_action(state.legal_actions()[0])
    text = pyspiel.serialize_game_and_state(game, state)
    with pytest.raises(saved_states.SavedStateError, match="the caller did not name"):
        ifo.deserialize_game_and_state(text)
    _, twin = ifo.deserialize_game_and_state(text, favor_decks=[deck])
    _assert_same(state, twin, 2)
