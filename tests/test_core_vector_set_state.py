"""``set_state``: a game of a batch continues from a copy of a game under way, on either backend
(the runner's seatings that start from a state: tests/test_runner.py)."""

from __future__ import annotations

import numpy as np
import pytest

from island_fortress_env import core, vector
from island_fortress_env.engine import Game
from island_fortress_env.engine.results import GameResult, game_result
from island_fortress_env.env.observation import ObservationEncoder, action_mask

pytestmark = pytest.mark.skipif(not core.available(), reason="the C++ core is not built")


def result_at(final, slot: int) -> GameResult:
    """Row ``slot`` of a batch's final results as the engine's record (``players.runner.result_at``,
    which this layer's sanitizer runs cannot import)."""
    n = int(final.players[slot])
    seats = {name: tuple(getattr(final, name)[slot, :n].tolist()) for name in
             ("score", "rank", "win", "blocks_built", "favors_played", "jade_spent")}  # fmt: skip
    components = tuple(tuple(row) for row in final.components[slot, :n].tolist())
    return GameResult(n, int(final.seed[slot]), int(final.length[slot]), int(final.rounds[slot]),
                      components=components, **seats)  # fmt: skip


def _position(backend: str, players: int, seed: int, moves: int, **options):
    """A game of ``players`` under way after ``moves`` first-legal moves, of ``backend``."""
    game = Game(num_players=players, **options)
    state = core.new_initial_state(game, seed) if backend == "core" else game.new_initial_state(seed)
    for _ in range(moves):
        state.apply_action(state.legal_actions()[0])
    return state


@pytest.mark.parametrize("options", [{}, {"no_replace": True, "start_blocks": 2}])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_both_backends_continue_a_state_alike_and_end_with_its_record(players, options):
    """Set into a batch of another table size, the state shows its own decision at once, plays on
    the same on both backends (random and heuristic moves), ends with the engine's record of the
    game played on from it (the decisions counted from the state), and the slot deals its own
    table again after it."""
    batches = [
        vector.make(3, num_players=2 if players != 2 else 3, seed=5, backend=b) for b in ("core", "python")
    ]
    starts = [_position(b, players, 17, 40, **options) for b in ("core", "python")]
    taken: list[int] = []
    for batch, start in zip(batches, starts, strict=True):
        batch.reset()
        batch.set_state(1, start, 99)
        encoder = ObservationEncoder(start.game)
        seat = start.current_player()
        assert batch.player[1] == seat
        assert np.array_equal(batch.obs[1], encoder.encode(start, seat))
        assert np.array_equal(batch.mask[1], action_mask(start).astype(bool))
    results = []
    for step in range(2000):
        c, p = batches
        assert np.array_equal(c.obs, p.obs) and np.array_equal(c.mask, p.mask)
        heuristic = np.array([False, step % 3 == 0, False])
        moves = [
            np.where(heuristic, b.heuristic_actions(heuristic), b.random_actions(~heuristic)) for b in batches
        ]
        assert np.array_equal(moves[0], moves[1])
        taken.append(int(moves[0][1]))
        for batch in batches:
            batch.step(moves[0])
        assert np.array_equal(c.rewards, p.rewards) and np.array_equal(c.score_gains(), p.score_gains())
        if c.done[1]:
            results = [result_at(b.final, 1) for b in batches]
            break
    assert results and results[0] == results[1]
    replay = starts[1].clone()
    for action in taken:
        replay.apply_action(action)
    assert results[0] == game_result(replay, 99, len(taken))
    for batch in batches:  # the slot's next episode is its own table's, dealt from its own seed
        assert batch.state(1).n == (2 if players != 2 else 3) and batch.episodes(1) == 2


def test_set_state_refuses_what_it_cannot_continue_and_changes_nothing(backend):
    batch = vector.make(2, num_players=3, seed=1, backend=backend)
    start = _position(backend, 3, 2, 10)
    with pytest.raises(RuntimeError, match="reset"):
        batch.set_state(0, start, 1)
    batch.reset()
    before = batch.obs.copy(), batch.mask.copy(), batch.player.copy()
    other = _position("python" if backend == "core" else "core", 3, 2, 10)
    over = start.clone()
    while not over.is_terminal():
        over.apply_action(over.legal_actions()[0])
    for bad, error in ((other, TypeError), (over, ValueError)):
        with pytest.raises(error):
            batch.set_state(0, bad, 1)
    with pytest.raises(ValueError):
        batch.set_state(0, start, -1)
    with pytest.raises((IndexError, ValueError)):
        batch.set_state(2, start, 1)
    assert all(
        np.array_equal(a, b) for a, b in zip(before, (batch.obs, batch.mask, batch.player), strict=True)
    )
