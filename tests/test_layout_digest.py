"""Observations, action masks and legal actions are byte-identical to a stored digest.

A fixed set of seeded games (2, 3 and 4 players and several variants) is played with random
legal actions from a seeded numpy generator. Every step's observation of every seat, the
action mask and the legal-action list go into one sha256; the digest below was computed
from the engine as it stood when this test was written. A change to the rules, the action
table or the observation layout changes it: update it only for an intended change of
behaviour, and say so. Both backends (the C++ core and the Python engine) must give it.
"""

from __future__ import annotations

import hashlib

import numpy as np

from island_fortress_env.core import Game
from island_fortress_env.env.observation import ObservationEncoder, action_mask

# (options, engine seed, number of games)
GAMES: tuple[tuple[dict, int, int], ...] = (
    ({"num_players": 2}, 11, 15),
    ({"num_players": 3}, 12, 15),
    ({"num_players": 4}, 13, 10),
    ({"num_players": 3, "no_replace": True, "extra_region": True}, 14, 10),
    ({"num_players": 4, "favor_trade_in": True, "first_round_incentive": "buyback_chip"}, 15, 10),
    ({"num_players": 2, "unlimited_components": True, "extra_jade": 30, "start_laborers": 4}, 16, 10),
    ({"num_players": 3, "start_convicts": 3, "start_blocks": 2, "first_round_incentive": "treasure"}, 17, 10),
    ({"num_players": 4, "unlimited_components": True, "extra_jade": 8, "favor_trade_in": True}, 18, 10),
)
EXPECTED_STEPS = 29305
EXPECTED_DIGEST = "7f6812a494eb9a199e557d58be09fd812549ccaf54d7d68586c53be4d1154d92"


def play_all(backend: str) -> tuple[int, str]:
    digest = hashlib.sha256()
    steps = 0
    for options, seed, count in GAMES:
        game = Game(**options, backend=backend)
        encoder = ObservationEncoder(game)
        chooser = np.random.default_rng(seed)
        for g in range(count):
            state = game.new_initial_state(seed * 1000 + g)
            while True:
                for seat in range(game.num_players):
                    digest.update(encoder.encode(state, seat).tobytes())
                digest.update(action_mask(state).tobytes())
                legal = state.legal_actions()
                digest.update(np.asarray(legal, dtype=np.int64).tobytes())
                if state.is_terminal():
                    break
                state.apply_action(legal[int(chooser.integers(len(legal)))])
                steps += 1
    return steps, digest.hexdigest()


def test_observations_masks_and_legal_actions_match_the_stored_digest(backend):
    steps, digest = play_all(backend)
    assert steps == EXPECTED_STEPS
    assert digest == EXPECTED_DIGEST


if __name__ == "__main__":
    print(play_all())
