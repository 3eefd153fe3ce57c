"""Bad input: invalid configurations, broken deck files and illegal actions.

Every error must be a clear exception naming the problem, and an illegal action must leave
the game exactly as it was (compared slot by slot).
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from island_fortress_env import island_fortress_v0
from island_fortress_env.engine import ConfigError, DeckError, Game, GameConfig, IllegalActionError, load_deck
from island_fortress_env.engine import actions as A
from island_fortress_env.engine.decisions import Decision
from island_fortress_env.engine.fields import StateFields

# --------------------------------------------------------------------------- configuration


@pytest.mark.parametrize(
    "options,name",
    [
        ({"num_players": 5}, "num_players"),
        ({"num_players": 1}, "num_players"),
        ({"num_players": 0}, "num_players"),
        ({"num_players": "3"}, "num_players"),
        ({"num_players": 3.0}, "num_players"),
        ({"num_players": None}, "num_players"),
        ({"num_players": True}, "num_players"),
        ({"colour": "red"}, "colour"),
        ({"num_players": 3, "extra_regions": True}, "extra_regions"),
        ({"first_round_incentive": "gold"}, "first_round_incentive"),
        ({"first_round_incentive": ""}, "first_round_incentive"),
        ({"first_round_incentive": 1}, "first_round_incentive"),
        ({"num_players": 2, "extra_region": True}, "extra_region"),
        ({"extra_jade": -1}, "extra_jade"),
        ({"start_laborers": -2}, "start_laborers"),
        ({"start_convicts": -3}, "start_convicts"),
        ({"start_blocks": -1}, "start_blocks"),
        ({"start_blocks": 19}, "start_blocks"),
        ({"extra_jade": 1.5}, "extra_jade"),
        ({"extra_jade": True}, "extra_jade"),
        ({"no_replace": 1}, "no_replace"),
        ({"favor_trade_in": "yes"}, "favor_trade_in"),
        ({"unlimited_components": None}, "unlimited_components"),
        ({"favor_deck": 7}, "favor_deck"),
    ],
)
def test_bad_config_raises_config_error_naming_the_option(options, name):
    with pytest.raises(ConfigError, match=name) as info:
        Game(**options)
    assert isinstance(info.value, ValueError)
    # The same through the environment constructor.
    with pytest.raises(ConfigError, match=name):
        island_fortress_v0.env(**options)
    # And through GameConfig directly (for the options it knows).
    if name in set(GameConfig.__dataclass_fields__):
        with pytest.raises(ConfigError, match=name):
            GameConfig(**options)


@pytest.mark.parametrize("n", [3, 4])
def test_extra_region_is_allowed_when_regions_do_not_exceed_players(n):
    game = Game(num_players=n, extra_region=True)
    assert game.geometry.regions == n


def test_config_and_options_together_is_an_error():
    with pytest.raises(ConfigError):
        Game(GameConfig(num_players=3), num_players=4)


BAD_ENV_OPTIONS = [
    ({"reward": "money"}, "reward"),
    ({"reward": "win"}, "reward"),
    ({"reward": None}, "reward"),
    ({"render_mode": "video"}, "render_mode"),
    ({"render_seat": 3}, "render_seat"),
    ({"render_seat": "0"}, "render_seat"),
    ({"backend": "rust"}, "backend"),
    ({"backend": 1}, "backend"),
]


@pytest.mark.parametrize("kwargs,name", [*BAD_ENV_OPTIONS, ({"illegal_action": "ignore"}, "illegal_action")])
def test_bad_env_option_raises_config_error_naming_it(kwargs, name):
    with pytest.raises(ConfigError, match=f"^{name} must be"):
        island_fortress_v0.env(num_players=3, **kwargs)


@pytest.mark.parametrize("kwargs,name", BAD_ENV_OPTIONS)
def test_bad_raw_env_option_raises_config_error_naming_it(kwargs, name):
    with pytest.raises(ConfigError, match=f"^{name} must be"):
        island_fortress_v0.raw_env(num_players=3, **kwargs)


def _known_options(error: ConfigError) -> set[str]:
    listed = str(error).split("known options: ")[1]
    return set(json.loads(listed.replace("'", '"')))


def test_an_unknown_option_lists_every_option_the_env_accepts():
    game_options = set(GameConfig.__dataclass_fields__)
    env_options = {"reward", "render_mode", "render_seat", "backend"}
    with pytest.raises(ConfigError, match=r"unknown option\(s\) \['rewards'\]") as info:
        island_fortress_v0.env(num_players=3, rewards="win_loss")
    assert _known_options(info.value) == game_options | env_options | {"illegal_action"}
    with pytest.raises(ConfigError, match=r"unknown option\(s\) \['illegal_action'\]") as info:
        island_fortress_v0.raw_env(num_players=3, illegal_action="raise")  # env()'s option, not raw_env's
    assert _known_options(info.value) == game_options | env_options
    with pytest.raises(ConfigError, match=r"unknown option\(s\) \['reward'\]") as info:
        Game(num_players=3, reward="win_loss")  # the engine takes the game's options only
    assert _known_options(info.value) == game_options


# --------------------------------------------------------------------------- deck files


def card(name="Post", pattern=("X",), **rewards) -> dict:
    return {"name": name, "pattern": list(pattern), "rewards": rewards or {"vp": 1}}


def deck(cards, name="test deck") -> dict:
    return {"name": name, "cards": cards}


def good_cards(k: int) -> list[dict]:
    return [card(f"Card {i}", ["X"] if i % 2 else ["XX"], vp=1 + i % 3) for i in range(k)]


def write(tmp_path, content, filename="deck.json") -> str:
    path = tmp_path / filename
    path.write_text(content if isinstance(content, str) else json.dumps(content), "utf-8")
    return str(path)


@pytest.mark.parametrize(
    "content,match",
    [
        ("{not json", "not valid JSON"),
        ("", "not valid JSON"),
        ([], "'cards' list"),
        ({"name": "no cards"}, "'cards' list"),
        ({"cards": {"a": 1}}, "'cards' list"),
        (deck([]), "1-36 cards"),
        (deck(good_cards(37)), "1-36 cards"),
        (deck(["XXX"]), "card 0: must be an object"),
        (deck([{**card(), "colour": "red"}]), "unknown field"),
        (deck([card(name="")]), "'name'"),
        (deck([{"name": "A", "pattern": "XX", "rewards": {"vp": 1}}]), "'pattern' must be a list"),
        (deck([{"name": "A", "pattern": ["X", 1], "rewards": {"vp": 1}}]), "'pattern' must be a list"),
        (deck([card(pattern=["X", "X", "X", "X"])]), "1-3 strings"),
        (deck([card(pattern=[])]), "1-3 strings"),
        (deck([card(pattern=["XXXX"])]), "same length, 1-3"),
        (deck([card(pattern=["XX", "X"])]), "same length"),
        (deck([card(pattern=["XO"])]), "may only use 'X'"),
        (deck([card(pattern=["x"])]), "may only use 'X'"),
        (deck([card(pattern=["..."])]), "marks no cell"),
        (deck([{"name": "A", "pattern": ["X"]}]), "'rewards'"),
        (deck([card(gold=2)]), "unknown reward"),
        (deck([card(vp=-1)]), "non-negative"),
        (deck([card(vp=1.5)]), "non-negative integer"),
        (deck([card(vp=True)]), "non-negative integer"),
        (deck([card(vp=0, jade=0)]), "gives nothing"),
    ],
)
def test_broken_deck_file_raises_deck_error_naming_the_problem(tmp_path, content, match):
    path = write(tmp_path, content)
    with pytest.raises(DeckError, match=match):
        load_deck(path)
    with pytest.raises(DeckError, match=match):
        Game(num_players=3, favor_deck=path)
    with pytest.raises(DeckError, match=match):
        island_fortress_v0.env(num_players=3, favor_deck=path)


def test_bad_card_is_named_by_its_index(tmp_path):
    cards = good_cards(10)
    cards[7] = card(pattern=["X#"])
    with pytest.raises(DeckError, match="card 7"):
        load_deck(write(tmp_path, deck(cards)))


def test_missing_deck_file(tmp_path):
    path = str(tmp_path / "nowhere" / "deck.json")
    with pytest.raises(DeckError, match="cannot be read") as info:
        Game(num_players=3, favor_deck=path)
    assert "nowhere" in str(info.value)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_deck_too_small_for_the_table(tmp_path, n):
    need = 5 * n
    path = write(tmp_path, deck(good_cards(need - 1), name="tiny"))
    with pytest.raises(ConfigError, match=f"needs {need}") as info:
        Game(num_players=n, favor_deck=path)
    assert "tiny" in str(info.value) and str(need - 1) in str(info.value)


def _expected_totals(game: Game) -> dict:
    totals = dict(game.totals)
    totals["blocks_per_player"] = [game.totals["blocks_per_player"]] * game.num_players
    return totals


@pytest.mark.parametrize("n", [2, 3, 4])
def test_smallest_valid_deck_plays_whole_games(tmp_path, n):
    """Exactly 5 cards per player is enough: the deal empties the deck, the kept-back cards
    refill it, and Draw Favor Cards is simply illegal while fewer than 3 remain."""
    game = Game(num_players=n, favor_deck=write(tmp_path, deck(good_cards(5 * n))))
    for seed in range(3):
        state = game.new_initial_state(seed)
        assert state.deck == []
        chooser = random.Random(seed)
        while not state.is_terminal():
            if len(state.deck) < 3 and state.decision == Decision.CHOOSE_ROLE_ACTION:
                assert A.ROLE + A.OP_DRAW_FAVORS not in state.legal_actions()
            state.apply_action(chooser.choice(state.legal_actions()))
            assert state.component_totals() == _expected_totals(game)


def test_valid_user_deck_is_loaded_and_used(tmp_path):
    """A user deck replaces the stand-in: its size, names and rewards are the ones in play."""
    cards = [card(f"Lucky Stone {i}", ["X"], vp=7) for i in range(20)]
    path = write(tmp_path, deck(cards, name="my house deck"), "house.json")
    game = Game(num_players=3, favor_deck=path)
    assert game.deck.name == "my house deck"
    assert len(game.deck) == 20 and game.totals["favor_cards"] == 20
    assert [c.name for c in game.deck.cards] == [f"Lucky Stone {i}" for i in range(20)]

    state = game.new_initial_state(1)
    dealt = state.drawn[0]
    assert dealt and dealt >> 20 == 0, "cards dealt from outside the user deck"
    first = state.legal_actions()[0]
    assert "Lucky Stone" in state.action_to_string(first)

    favor_points = []
    for seed in range(6):
        state = game.new_initial_state(seed)
        chooser = random.Random(seed)
        while not state.is_terminal():
            legal = state.legal_actions()
            play = [a for a in legal if a in (A.ROLE + A.OP_PLAY_FAVOR, A.ROLE + A.OP_BUILD)]
            pool = play if play and chooser.random() < 0.7 else legal
            state.apply_action(chooser.choice(pool))
            assert state.component_totals() == _expected_totals(game)
        favor_points += [e[2] for e in state.log if e[0] == "score" and e[3] == "favor card"]
    assert favor_points, "no favor card was played with a one-block pattern deck"
    assert set(favor_points) == {7}, "the rewards in play are not the user deck's"

    env = island_fortress_v0.env(num_players=3, favor_deck=path)
    env.reset(seed=3)
    assert env.unwrapped.game.deck.name == "my house deck"


# --------------------------------------------------------------------------- illegal actions


def _snapshot(state) -> dict:
    """Every public field of an engine State or a CoreState, its event log and legal actions."""
    out = {}
    for name in StateFields.__slots__:
        if not name.startswith("_"):
            value = getattr(state, name)
            out[name] = tuple(value) if isinstance(value, list) else value
    out["log"] = tuple(state.log)
    out["legal"] = state.legal_actions()
    return out


def _state_where(pred, n: int = 3, seed: int = 5):
    """The first state of a seeded random game that satisfies ``pred``."""
    state = Game(num_players=n).new_initial_state(seed)
    chooser = random.Random(seed)
    while not pred(state):
        state.apply_action(chooser.choice(state.legal_actions()))
    return state


def _state_at(decision: int):
    """The first state at ``decision`` (the action phase: from round 2, with cards on tables)."""
    return _state_where(
        lambda s: s.decision == decision and (decision != Decision.CHOOSE_ROLE_ACTION or s.round >= 2)
    )


NOT_INTEGERS = [1.0, 2.5, None, "5", b"5", [1], (1,), np.float32(3.0), float("nan"), {"a": 1}]
OUT_OF_RANGE = [A.NUM_ACTIONS, A.NUM_ACTIONS + 1, 10**9, -1, -A.NUM_ACTIONS, 2**70]


@pytest.mark.parametrize(
    "decision", [Decision.KEEP_DEALT_FAVORS, Decision.PETITION_BID, Decision.CHOOSE_ROLE_ACTION]
)
@pytest.mark.parametrize("action", NOT_INTEGERS + OUT_OF_RANGE, ids=repr)
def test_engine_rejects_malformed_actions_without_change(decision, action):
    state = _state_at(decision)
    before = _snapshot(state)
    with pytest.raises(IllegalActionError) as info:
        state.apply_action(action)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert "illegal action" in message
    if action in OUT_OF_RANGE:
        assert "outside the action space" in message and str(action) in message
    else:
        assert "integers" in message
    assert _snapshot(state) == before


def _wrong_family_actions(state) -> list[int]:
    legal = set(state.legal_actions())
    families = {A.family_of(a).name for a in legal}
    out = []
    for fam in A.ACTION_FAMILIES:
        if fam.name not in families:
            out.append(fam.start)
            out.append(fam.start + fam.size - 1)
    return [a for a in out if a not in legal]


@pytest.mark.parametrize(
    "decision", [Decision.KEEP_DEALT_FAVORS, Decision.PETITION_BID, Decision.CHOOSE_ROLE_ACTION]
)
def test_engine_rejects_wrong_decision_family_without_change(decision):
    state = _state_at(decision)
    before = _snapshot(state)
    wrong = _wrong_family_actions(state)
    assert len(wrong) > 20
    for action in wrong:
        with pytest.raises(IllegalActionError, match=f"illegal action {action} ") as info:
            state.apply_action(action)
        assert state.decision_name() in str(info.value)
        assert _snapshot(state) == before


def test_engine_rejects_legal_looking_actions_without_change():
    """Actions of the right family that the rules forbid right now."""
    cases = []
    keep = _state_at(Decision.KEEP_DEALT_FAVORS)
    not_dealt = next(c for c in range(len(keep.game.deck)) if not keep.drawn[0] >> c & 1)
    cases.append((keep, A.KEEP_FAVOR + not_dealt))  # a card that was not dealt to this seat
    bid = _state_at(Decision.PETITION_BID)
    cases.append((bid, A.BID + bid.jade[bid.current] + 1))  # more Jade than the player holds
    role = _state_where(
        lambda s: (
            s.decision == Decision.CHOOSE_ROLE_ACTION
            and s.round >= 2
            and s.roles_table[s.current] & 1 << A.BUILDER
            and not s.roles_table[s.current] & 1 << A.PLANNER
        )
    )
    p = role.current
    for op in range(A.NUM_OPS):
        if A.OP_CARD[op] == A.BUILDER:
            cases.append((role, A.ROLE + op))  # the Builder card is already on the table
    cases.append((role, A.REPEAT + A.OP_BUY_BLOCKS))  # repeat a card that is not on the table
    cases.append((role, A.CELL + 0))  # a wall cell, but no build is under way
    cases.append((role, A.LABORERS + 2))  # Workers, but nothing to pay for
    cases.append((role, A.PASS))  # pass while other actions exist (C12: PASS only when nothing else is)
    assert role.roles_hand[p] & 1 << A.BUILDER == 0
    for state, action in cases:
        assert action not in state.legal_actions()
        before = _snapshot(state)
        with pytest.raises(IllegalActionError, match=f"illegal action {action} "):
            state.apply_action(action)
        assert _snapshot(state) == before


def test_numpy_integer_actions_are_accepted():
    state = _state_at(Decision.PETITION_BID)
    legal = state.legal_actions()
    state.apply_action(np.int64(legal[-1]))
    state.apply_action(np.int32(state.legal_actions()[0]))


def test_no_action_is_legal_after_the_end():
    game = Game(num_players=2)
    state = game.new_initial_state(0)
    chooser = random.Random(0)
    while not state.is_terminal():
        state.apply_action(chooser.choice(state.legal_actions()))
    before = _snapshot(state)
    for action in (0, 1, A.END_TURN, A.BID, A.TRADE_DONE):
        with pytest.raises(IllegalActionError, match="over"):
            state.apply_action(action)
    assert _snapshot(state) == before


# --------------------------------------------------------------------------- through the env


def _env_view(env) -> tuple:
    raw = env.unwrapped
    return (
        _snapshot(raw.game_state),
        raw.agent_selection,
        dict(raw.rewards),
        dict(raw._cumulative_rewards),
        dict(raw.terminations),
        dict(raw.truncations),
        tuple(raw.agents),
    )


def _env_mid_game(backend, seed=4, steps=60, **kwargs):
    env = island_fortress_v0.env(num_players=3, backend=backend, **kwargs)
    env.reset(seed=seed)
    for _ in range(steps):
        obs, *_ = env.last()
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    env.last()
    return env


MALFORMED = [A.NUM_ACTIONS, 10**6, -1, 1.5, None, "3", np.float64(2.0)]


@pytest.mark.parametrize("action", MALFORMED, ids=repr)
def test_env_rejects_out_of_space_actions_without_change(action, backend):
    """The wrapped env (no AssertOutOfBoundsWrapper: the engine checks every action itself,
    see ``island_fortress_v0.env``) raises IllegalActionError naming the action."""
    env = _env_mid_game(backend)
    before = _env_view(env)
    with pytest.raises(IllegalActionError, match="illegal action") as info:
        env.step(action)
    assert repr(action) in str(info.value) or str(action) in str(info.value)
    assert _env_view(env) == before
    obs, *_ = env.last()  # and the game goes on
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))


@pytest.mark.parametrize("action", MALFORMED, ids=repr)
def test_raw_env_rejects_out_of_space_actions_without_change(action, backend):
    raw = island_fortress_v0.raw_env(num_players=3, backend=backend)
    raw.reset(seed=2)
    before = _env_view(raw)
    with pytest.raises(IllegalActionError):
        raw.step(action)
    assert _env_view(raw) == before


@pytest.mark.parametrize("action", MALFORMED, ids=repr)
def test_terminate_mode_rejects_out_of_space_actions_as_pettingzoo_classic_does(action, backend):
    """With ``illegal_action="terminate"`` the env keeps ``AssertOutOfBoundsWrapper``, as
    ``pettingzoo.classic`` does (``island_fortress_v0.env``): an action outside the action space
    (out of range, not an integer, or None for an agent still playing) raises its
    ``AssertionError`` and changes nothing; only an in-space illegal action ends the game."""
    env = _env_mid_game(backend, illegal_action="terminate")
    before = _env_view(env)
    with pytest.raises(AssertionError, match="action is not in action space"):
        env.step(action)
    assert _env_view(env) == before


def test_env_rejects_in_space_illegal_actions_without_change(backend):
    env = _env_mid_game(backend)
    obs, *_ = env.last()
    illegal = [int(a) for a in np.flatnonzero(obs["action_mask"] == 0)]
    assert len(illegal) > 300
    before = _env_view(env)
    for action in [*illegal[::7], illegal[-1], np.int64(illegal[0])]:
        with pytest.raises(IllegalActionError, match="illegal action"):
            env.step(action)
        assert _env_view(env) == before


def test_terminate_mode_ends_the_game_with_minus_one_for_the_offender(backend):
    env = _env_mid_game(backend, illegal_action="terminate")
    offender = env.agent_selection
    state_before = _snapshot(env.unwrapped.game_state)
    obs, *_ = env.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    env.step(illegal)
    assert _snapshot(env.unwrapped.game_state) == state_before, "the illegal action was applied"
    assert all(env.terminations.values()) or all(env.truncations.values())
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        _, reward, termination, truncation, _ = env.last()
        assert termination or truncation
        totals[agent] += reward
        env.step(None)
    assert totals[offender] == -1.0
    assert all(v == 0.0 for a, v in totals.items() if a != offender)
    assert env.agents == []


def test_terminate_mode_plays_legal_games_normally():
    env = island_fortress_v0.env(num_players=2, illegal_action="terminate")
    env.reset(seed=9)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, _ = env.last()
        totals[agent] += reward
        if termination or truncation:
            env.step(None)
        else:
            env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
    state = env.unwrapped.game_state
    assert state.is_terminal()
    assert sorted(totals.values()) in ([-1.0, 1.0], [0.0, 0.0])
