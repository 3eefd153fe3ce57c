"""The trainers' dense reward: score gained, in ``score_reward`` units (victory points / 50).

Every trainer (native PPO, the SB3 single-agent view, the imitation warm start's value targets)
adds this to the zero-sum win/loss at the end, scaled by ``reward.vp``. Two kinds:

* own (``reward.vp_relative: false``): the points the seat gained;
* relative (``reward.vp_relative: true``): the points the seat gained minus the mean of what the
  other seats gained. The rewards of all seats then sum to zero, like the win/loss, and keeping an
  opponent from scoring is worth as much as scoring: it is the win that counts, not the score.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from island_fortress_env.env.aec import score_reward


def score_gain_reward(before: Sequence[int], after: Sequence[int], seat: int, relative: bool) -> float:
    """The dense reward of ``seat`` when every seat's score went from ``before`` to ``after``."""
    return gain_reward([a - b for a, b in zip(after, before, strict=True)], seat, relative)


def gain_reward(gained: Sequence[int], seat: int, relative: bool) -> float:
    """The dense reward of ``seat`` when every seat scored ``gained`` (points, one per seat)."""
    return float(gain_rewards(np.array([gained]), np.array([len(gained)]), relative)[0, seat])


def gain_rewards(gained: np.ndarray, players: np.ndarray, relative: bool) -> np.ndarray:
    """``gain_reward`` of every seat of many games at once: ``gained`` int[N, P] (the points of
    each seat, zero for absent seats), ``players`` int[N] (each game's table size); float64[N, P]
    (meaningless for absent seats)."""
    gained = np.asarray(gained, np.int64)
    if not relative:
        return score_reward(gained)
    others = (gained.sum(axis=1, keepdims=True) - gained) / (np.asarray(players)[:, None] - 1)
    return score_reward(gained - others)
