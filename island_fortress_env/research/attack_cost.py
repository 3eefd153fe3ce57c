"""The attack cost of a target: how many decisions a best response needed to reach a given win
share against it in training, read off the records that ``island-fortress exploit`` keeps of each
rollout (an adversary's training steps to a win rate, as Tseng et al. 2024, *Can Go AIs be
adversarially robust?*, arXiv 2406.12843, report them).

Each rollout's record (``Rollout``) is the trainer's decisions learned from after that rollout's
update, the exploiter's win share in the games against the target that finished in it (a win at
a k-way tie counts 1/k) and how many games those were.

* **The windowed win share** at a rollout: the win share over the games of that rollout and of the
  ones before it, whole rollouts taken back from it until at least ``window`` games are in
  (``ATTACK_WINDOW``, 200, by default; every game weighs the same). Until ``window`` games have
  been played the window is not full and the share counts for nothing.
* **The attack cost** at a threshold: the decisions of the first rollout whose full window's win
  share reaches the threshold (at least it); None when no rollout's does.

The exploiter plays sampled in these games, as it trains: the cost is that of its training play,
not of the greedy play scored at the end. Everything here is pure, over the records alone.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

ATTACK_WINDOW = 200  # games: the windowed win share is over at least this many of the latest games
THRESHOLDS = (0.6, 0.7, 0.8, 0.9)  # the win shares whose attack cost is reported
MAX_CURVE_POINTS = 100  # the curve kept in a run's JSON: at most this many points


@dataclass(frozen=True)
class Rollout:
    """One rollout's games against the target: the decisions learned from after its update, the
    exploiter's win share in them (a k-way tie 1/k) and how many they were."""

    decisions: int
    win_share: float
    games: int


@dataclass(frozen=True)
class CurvePoint:
    """The windowed win share at one rollout: over ``games`` games, the latest whole rollouts'
    (fewer than the window until that many have been played)."""

    decisions: int
    win_share: float
    games: int

    def full(self, window: int) -> bool:
        return self.games >= window


def window_at(rollouts: Sequence[Rollout], index: int, window: int = ATTACK_WINDOW) -> CurvePoint:
    """The windowed win share at rollout ``index``: over rollouts ``index``, ``index - 1``, ...
    until at least ``window`` games are in (or the first rollout is)."""
    if window < 1:
        raise ValueError(f"the window must be at least 1 game, got {window}")
    games, wins = 0, 0.0
    for past in reversed(rollouts[: index + 1]):
        games += past.games
        wins += past.win_share * past.games
        if games >= window:
            break
    return CurvePoint(rollouts[index].decisions, wins / games if games else 0.0, games)


def windowed(rollouts: Sequence[Rollout], window: int = ATTACK_WINDOW) -> list[CurvePoint]:
    """The windowed win share at every rollout, in order."""
    return [window_at(rollouts, i, window) for i in range(len(rollouts))]


def attack_cost(
    rollouts: Sequence[Rollout], window: int = ATTACK_WINDOW, thresholds: Sequence[float] = THRESHOLDS
) -> dict[float, int | None]:
    """Each threshold's attack cost: the decisions of the first rollout whose full window's win
    share is at least the threshold; None when none is."""
    costs: dict[float, int | None] = dict.fromkeys(thresholds)
    for point in windowed(rollouts, window):
        if not point.full(window):
            continue
        for threshold in thresholds:
            if costs[threshold] is None and point.win_share >= threshold:
                costs[threshold] = point.decisions
    return costs


def thinned(points: Sequence[CurvePoint], max_points: int = MAX_CURVE_POINTS) -> list[CurvePoint]:
    """At most ``max_points`` of ``points``, evenly spread over them, the first and the last kept."""
    if max_points < 2:
        raise ValueError(f"a curve keeps at least 2 points, got {max_points}")
    n = len(points)
    if n <= max_points:
        return list(points)
    picks = sorted({round(i * (n - 1) / (max_points - 1)) for i in range(max_points)})
    return [points[i] for i in picks]


def threshold_key(threshold: float) -> str:
    """A threshold as a JSON key: ``0.6`` is ``"0.6"``."""
    return f"{threshold:g}"


def cost_json(costs: Mapping[float, int | None]) -> dict[str, int | None]:
    """``attack_cost``'s result as JSON: ``{"0.6": decisions or null, ...}``."""
    return {threshold_key(t): cost for t, cost in costs.items()}


def curve_json(points: Sequence[CurvePoint]) -> list[dict[str, float | int]]:
    return [{"decisions": p.decisions, "win_share": p.win_share, "games": p.games} for p in points]


def _decisions(cost: int | None) -> float:
    return math.inf if cost is None else float(cost)


def _median(values: Sequence[float]) -> float | None:
    """The median, a never-reached cost (infinite decisions) as ``math.inf``: None when it is."""
    middle = statistics.median(values)
    return None if math.isinf(middle) else middle


def over_seeds(costs: Sequence[Mapping[str, int | None]]) -> dict[str, dict[str, float | None]]:
    """The runs' attack costs (``cost_json``'s, one per seed) summed up per threshold: the
    ``median`` and the cheapest (``min``) over the runs, a run that never reached a threshold
    counted as one that needed infinitely many decisions (so the median is None when at least half
    the runs never reached it, the minimum only when none did)."""
    keys = list(costs[0]) if costs else []
    spans = {k: [_decisions(c.get(k)) for c in costs] for k in keys}
    return {
        "median": {k: _median(v) for k, v in spans.items()},
        "min": {k: None if math.isinf(min(v)) else min(v) for k, v in spans.items()},
    }
