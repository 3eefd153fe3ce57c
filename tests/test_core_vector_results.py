"""``VectorEnv.final``, the record of the games that ended on a step, against the engine's
``engine.results.game_result`` of the same games; and ``VectorEnv.set_seed``, a chosen deal per slot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from island_fortress_env import core
from island_fortress_env.baseline.heuristic import HeuristicAgent
from island_fortress_env.engine import play_random_game, results, scoring, tables
from island_fortress_env.engine.events import ScoreReason
from island_fortress_env.env.observation import ObservationEncoder, action_mask

pytestmark = pytest.mark.skipif(
    not core.available(), reason=f"the C++ core is not built ({core.build_error()})"
)

P = tables.MAX_PLAYERS
FIELDS = (
    "players", "seed", "length", "rounds", "score", "rank", "win", "blocks_built", "favors_played",
    "jade_spent", "components",
)  # fmt: skip
VARIANTS: tuple[dict[str, Any], ...] = (
    {},
    {"no_replace": True},
    {"extra_region": True},
    {"extra_jade": 6, "start_laborers": 4, "start_convicts": 3, "start_blocks": 2},
    {"first_round_incentive": "wall_block"},
    {"first_round_incentive": "buyback_chip"},
    {"first_round_incentive": "treasure"},
    {"favor_trade_in": True},
    {"unlimited_components": True},
    {"unlimited_components": True, "extra_jade": 250_000, "favor_trade_in": True},
    {"favor_deck": "custom"},
)


def _options(variant: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    if variant.get("favor_deck") != "custom":
        return variant
    cards = [
        {"name": f"card {i}", "pattern": pattern, "rewards": rewards}
        for i, (pattern, rewards) in enumerate(
            zip(
                (["X"], ["XX"], ["X", "X"], ["X.", ".X"], ["XX", "XX"], [".X.", "XXX"]) * 4,
                ({"vp": 10}, {"treasure": 3}, {"jade": 10}, {"vp": 4, "jade": 2, "laborers": 1}) * 6,
                strict=True,
            )
        )
    ]
    path = tmp_path / "deck.json"
    path.write_text(json.dumps({"name": "test deck", "cards": cards}), "utf-8")
    return {**variant, "favor_deck": str(path)}


def _expected_row(result: results.GameResult) -> dict[str, np.ndarray]:
    """``result`` as a row of ``FinalResults`` (zeros for absent seats)."""
    n = result.players
    row = {
        "players": np.int32(n),
        "seed": np.uint64(result.seed),
        "length": np.int32(result.length),
        "rounds": np.int32(result.rounds),
    }
    for name, dtype in (
        ("score", np.int64),
        ("rank", np.int32),
        ("win", np.float32),
        ("blocks_built", np.int32),
        ("favors_played", np.int32),
        ("jade_spent", np.int64),
    ):
        values = np.zeros(P, dtype=dtype)
        values[:n] = getattr(result, name)
        row[name] = values
    components = np.zeros((P, len(scoring.COMPONENTS)), dtype=np.int64)
    components[:n] = result.components
    row["components"] = components
    return row


def _assert_rows_are_zero(final: Any, rows: np.ndarray) -> None:
    for name in FIELDS:
        assert not getattr(final, name)[rows].any(), name


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: ",".join(v) or "standard")
def test_the_final_results_are_the_engines_record(variant: dict[str, Any], tmp_path: Path) -> None:
    import island_fortress_env.vector as vector

    regions = tables.REGIONS_BY_PLAYERS  # the Friendly variant needs a seat per region
    sizes = [n for n in tables.PLAYER_COUNTS if not variant.get("extra_region") or regions[n] < n]
    env = vector.make(12, num_players=sizes, seed=len(str(variant)), threads=2, **_options(variant, tmp_path))
    env.reset()
    _assert_rows_are_zero(env.final, np.ones(12, dtype=bool))
    heuristic = np.arange(12) % 4 < 2  # half the games heuristic, half random, at every table size
    taken: list[list[int]] = [[] for _ in range(12)]
    checked = np.zeros(12, dtype=np.int64)
    while checked.min() < 2:
        actions = np.where(heuristic, env.heuristic_actions(heuristic), env.random_actions(~heuristic))
        for i in range(12):
            taken[i].append(int(actions[i]))
        episodes = [env.episodes(i) for i in range(12)]
        env.step(actions)
        _assert_rows_are_zero(env.final, ~env.done)
        for i in np.flatnonzero(env.done):
            game, seed = env.games[i], env.game_seed(i, episodes[i] - 1)
            replayed = core.replay(game, seed, taken[i])  # a CoreState with its event log
            engine = game.new_initial_state(seed)  # the Python engine
            for a in taken[i]:
                engine.apply_action(a)
            expected = results.game_result(engine, seed, len(taken[i]))
            assert results.game_result(replayed, seed, len(taken[i])) == expected
            for name, value in _expected_row(expected).items():
                got = getattr(env.final, name)[i]
                assert got.dtype == value.dtype and np.array_equal(got, value), (i, name, got, value)
            assert env.final.components[i].sum(axis=1).tolist() == env.final.score[i].tolist()
            taken[i] = []
            checked[i] += 1


def test_the_engines_record_reads_the_finished_state() -> None:
    from island_fortress_env.engine import Game

    assert scoring.finishing_positions([5, 7, 5, 7], [1, 2, 1, 2], [0, 0, 0, 0], [0, 0, 0, 0]) == [3, 1, 3, 1]
    assert scoring.finishing_positions([5, 5, 5], [2, 1, 1], [0, 3, 1], [9, 0, 0]) == [1, 2, 3]
    for n in tables.PLAYER_COUNTS:
        for seed in range(4):
            state = play_random_game(Game(num_players=n, first_round_incentive="treasure"), seed)
            result = results.game_result(state, seed, 0)
            assert [p for p in range(n) if result.rank[p] == 1] == list(state.winners)
            assert sum(result.win) == pytest.approx(1.0) and result.score == tuple(state.score)
            assert [sum(points) for points in result.components] == list(state.score)
            assert all(spent > 0 for spent in result.jade_spent) and result.rounds == state.round
    with pytest.raises(ValueError, match="not over"):
        results.game_result(Game(num_players=2).new_initial_state(0), 0, 0)


def test_the_core_takes_the_engines_score_components() -> None:
    """The core counts the engine's score reasons, and groups them as the engine says."""
    from island_fortress_env.core.state import _core, core_game
    from island_fortress_env.engine import Game

    assert len(scoring.COMPONENT_INDEX) == len(ScoreReason)
    assert set(scoring.SCORE_COMPONENTS) == set(ScoreReason)
    assert sorted(set(scoring.COMPONENT_INDEX)) == list(range(len(scoring.COMPONENTS)))
    games = [core_game(Game(num_players=2))]
    grouping = list(scoring.COMPONENT_INDEX)
    for bad in (grouping[:-1], [*grouping, 0], [-1, *grouping[1:]], [len(ScoreReason), *grouping[1:]]):
        with pytest.raises(ValueError, match="score"):
            _core.Batch(games, 0, 1, bad)
    alone = _core.Batch(games, 0, 1, list(range(len(ScoreReason))))  # one component per reason
    assert alone.final_arrays()["components"].shape == (1, P, len(ScoreReason))


def test_the_final_results_are_read_only_and_zero_where_no_game_ended() -> None:
    import dataclasses

    import island_fortress_env.vector as vector

    env = vector.make(4, num_players=2, seed=3)
    final = env.final
    assert final.score.shape == (4, P) and final.components.shape == (4, P, len(scoring.COMPONENTS))
    assert [getattr(final, name).dtype for name in FIELDS] == [
        np.int32, np.uint64, np.int32, np.int32, np.int64, np.int32, np.float32, np.int32, np.int32,
        np.int64, np.int64,
    ]  # fmt: skip
    with pytest.raises(ValueError):
        final.score[0, 0] = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        final.score = np.zeros((4, P))  # type: ignore[misc]
    env.reset()
    ended = None
    while ended is None:  # play game 0 alone until it ends
        which = np.array([True, False, False, False])
        env.step(env.random_actions(which), games=which)
        if env.done[0]:
            ended = final.score[0].copy()
    assert env.final is final and final.players[0] == 2 and ended.any()
    others = np.array([False, True, True, True])
    _assert_rows_are_zero(final, others)
    env.step(env.random_actions(others), games=others)
    _assert_rows_are_zero(final, np.ones(4, dtype=bool))  # game 0 waited: its row is zero again
    env.reset()
    _assert_rows_are_zero(final, np.ones(4, dtype=bool))


def test_a_slot_given_a_seed_plays_that_deal() -> None:
    import island_fortress_env.vector as vector

    env = vector.make(3, num_players=(2, 3, 4), seed=6)
    env.set_seed(1, 2**64 - 1)  # before the first episode: that one is dealt from it
    env.reset()
    assert env.game_seed(1) == 2**64 - 1 and env.game_seed(0) == env.game_seed(0, 0)
    chosen = {1: 2**64 - 1}
    for i, seed in ((0, 12345), (2, 0)):  # while an episode runs: the next one is dealt from it
        env.set_seed(i, seed)
        chosen[i] = seed
    assert env.game_seed(0) == env.game_seed(0, 0) and env.game_seed(2) == env.game_seed(2, 0)
    states = [core.new_initial_state(env.games[i], env.game_seed(i)) for i in range(3)]
    agents = [HeuristicAgent(seed=env.game_seed(i)) for i in range(3)]
    encoders = [ObservationEncoder(g) for g in env.games]
    heuristic = np.array([True, False, True])  # game 1 plays random actions
    played: dict[int, list[int]] = {0: [], 1: [], 2: []}  # the seeds of each game's episodes
    while min(len(seeds) for seeds in played.values()) < 3:
        for i, state in enumerate(states):
            assert env.player[i] == state.current_player()
            assert env.obs[i].tobytes() == encoders[i].encode(state, state.current_player()).tobytes()
            assert env.mask[i].view(np.int8).tobytes() == action_mask(state).tobytes()
        actions = np.where(heuristic, env.heuristic_actions(heuristic), env.random_actions(~heuristic))
        for i in np.flatnonzero(heuristic):
            assert actions[i] == agents[i].act(None, action_mask(states[i]), states[i])
        seeds = [env.game_seed(i) for i in range(3)]
        env.step(actions)
        for i, state in enumerate(states):
            state.apply_action(int(actions[i]))
            if not env.done[i]:
                continue
            assert state.is_terminal() and env.final.seed[i] == seeds[i]
            if i == 1:  # random_actions drew like play_random_game from the chosen seed
                assert play_random_game(env.games[1], seeds[1]).score == state.score
            played[i].append(seeds[i])
            states[i] = core.new_initial_state(env.games[i], env.game_seed(i))
            agents[i] = HeuristicAgent(seed=env.game_seed(i))
    e = [env.episodes(i) for i in range(3)]
    assert played[1][0] == chosen[1] and played[1][1:3] == [env.game_seed(1, 1), env.game_seed(1, 2)]
    for i in (0, 2):  # the episode under way kept its seed, the next was the chosen one, then back
        assert played[i][:3] == [env.game_seed(i, 0), chosen[i], env.game_seed(i, 2)]
        assert e[i] >= 3


def test_set_seed_refuses_bad_arguments() -> None:
    import island_fortress_env.vector as vector

    env = vector.make(2, num_players=2, seed=0)
    for bad in (True, 1.0, "3", None, np.float64(2)):
        with pytest.raises(TypeError, match="seed"):
            env.set_seed(0, bad)  # type: ignore[arg-type]
    for bad in (-1, 2**64, -(2**70)):
        with pytest.raises(ValueError, match="seed"):
            env.set_seed(0, bad)
    with pytest.raises(IndexError):
        env.set_seed(2, 0)
    with pytest.raises(TypeError):
        env.set_seed(False, 0)  # type: ignore[arg-type]
    env.set_seed(np.int64(1), np.uint64(2**64 - 1))  # numpy integers are integers
    env.reset()
    assert env.game_seed(1) == 2**64 - 1 and env.game_seed(0) == env.game_seed(0, 0)
