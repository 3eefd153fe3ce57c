"""Positions of real games, for checks that compare two players or two runtimes on them:
``sample_positions(count, seed)`` plays whole games at 2, 3 and 4 players through the runner
(``players.runner``: the random player at every seat of every other game, the heuristic at every
seat of the rest, the batch's own players), and returns ``count`` of their decisions' observations
and masks, spread from the first decisions to the last."""

from __future__ import annotations

import itertools

import numpy as np

from island_fortress_env import vector
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.env.observation import OBS_SIZE
from island_fortress_env.players.runner import GameRunner, Seating
from island_fortress_env.players.seat_policies import BatchSeats

SLOTS = 6  # games played at once: two of each table size
DRAWN = 3  # decisions played for each one returned


def sample_positions(count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``count`` (observation, mask) pairs of the decisions of whole games (module doc), dealt by a
    batch seeded ``seed``: float32[count, OBS_SIZE] and bool[count, NUM_ACTIONS]."""
    if count <= 0:
        return np.zeros((0, OBS_SIZE), np.float32), np.zeros((0, NUM_ACTIONS), np.bool_)
    players = (BatchSeats("heuristic"), BatchSeats("random"))
    numbers = itertools.count()
    observations: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    played = 0

    def next_seating(_slot: int) -> Seating | None:
        if played >= DRAWN * count:
            return None  # enough: the games under way play on to their end
        g = next(numbers)
        n = 2 + g % 3
        return Seating(n, None, (players[g % 2],) * n)

    runner = GameRunner(vector.make(SLOTS, num_players=(2, 3, 4), seed=seed), next_seating)
    while runner.playing:
        step = runner.step()
        observations.append(step.observations)
        masks.append(step.masks)
        played += len(step.observations)
    obs, mask = np.concatenate(observations), np.concatenate(masks)
    pick = np.linspace(0, len(obs) - 1, count).astype(int)  # every game's opening, middle and end
    return obs[pick], mask[pick].astype(np.bool_)
