"""The figures every layer reports: the Wilson interval of a win rate and OpenSkill ratings.

* ``wilson``: the 95% Wilson score interval of a proportion (a win rate: shared wins make
  fractional counts), ``(0, 1)`` when nothing was observed. An end of the interval at a rate of 0
  or 1 is exact.
* ``t_interval``: the 95% t-interval of the mean of two or more proportions (the win rates of
  several runs), clipped to [0, 1]; SciPy gives the t quantile.
* ``rate_games``: OpenSkill ratings (Plackett-Luce, its default options) over finished games in
  the order given, each game's seats ranked by their finishing positions (1 best, ties share a
  rank); the ratings a game names as ``fixed`` (anchors) are used but never moved. The typed
  ``Rating`` has ``mu``, ``sigma`` and the conservative ``ordinal``, ``mu - 3 sigma``, as OpenSkill
  gives it. ``openskill`` is an optional dependency (the ``web``, ``train`` and ``onnx`` extras):
  it is imported only to rate, and ``OpenSkillMissing`` says so when it cannot be.

The standard library only, besides ``openskill`` when rating and ``scipy`` for a t quantile: any
layer may use this module.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

Z95 = 1.959963984540054  # the normal quantile of a two-sided 95% interval
ORDINAL_SIGMAS = 3  # the ordinal is this many sigmas below mu (OpenSkill's default)


class Interval(NamedTuple):
    """A confidence interval of a proportion: its two ends, in [0, 1]."""

    low: float
    high: float


def wilson(share: float, trials: int, z: float = Z95) -> Interval:
    """The Wilson score interval of a proportion ``share`` observed over ``trials`` trials (a win
    rate: ``wins / games``, where ``wins`` may be fractional); ``(0, 1)`` when there were none."""
    if trials <= 0:
        return Interval(0.0, 1.0)
    z2n = z * z / trials
    denominator = 1.0 + z2n
    centre = (share + z2n / 2.0) / denominator
    half = z * math.sqrt(share * (1.0 - share) / trials + z * z / (4.0 * trials * trials)) / denominator
    low = 0.0 if share <= 0 else max(0.0, centre - half)
    high = 1.0 if share >= 1 else min(1.0, centre + half)
    return Interval(low, high)


def t_interval(values: Sequence[float]) -> Interval:
    """The 95% t-interval of the mean of ``values`` (two or more proportions), clipped to [0, 1]."""
    if len(values) < 2:
        raise ValueError(f"a t-interval needs two or more values, got {len(values)}")
    from scipy import stats as scipy_stats

    mean = statistics.fmean(values)
    half = (
        float(scipy_stats.t.ppf(0.975, len(values) - 1)) * statistics.stdev(values) / math.sqrt(len(values))
    )
    return Interval(max(0.0, mean - half), min(1.0, mean + half))


@dataclass(frozen=True)
class Rating:
    """An OpenSkill rating: the skill's mean ``mu`` and its uncertainty ``sigma``."""

    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """The conservative estimate OpenSkill orders by, ``mu - 3 sigma``."""
        return self.mu - ORDINAL_SIGMAS * self.sigma


@dataclass(frozen=True)
class RatedGame:
    """One finished game to rate: the players at its table, each by its index in the ratings, and
    each one's finishing rank (1 best; ties share a rank), in the same order. The order is the
    order of the teams given to OpenSkill."""

    players: tuple[int, ...]
    ranks: tuple[float, ...]


class OpenSkillMissing(ImportError):
    """``openskill`` (its ``openskill.models``) cannot be imported: nothing can be rated."""


def _plackett_luce() -> Any:
    try:
        from openskill.models import PlackettLuce
    except ImportError as exc:
        raise OpenSkillMissing(
            f"OpenSkill ratings need openskill (pip install openskill, or the web or train extra): {exc}"
        ) from exc
    return PlackettLuce()


def require_openskill() -> None:
    """Raise ``OpenSkillMissing`` now, before games are played, when nothing could rate them."""
    _plackett_luce()


def new_rating() -> Rating:
    """OpenSkill's rating of a player never rated (``OpenSkillMissing`` without openskill)."""
    rating = _plackett_luce().rating()
    return Rating(rating.mu, rating.sigma)


def rate_games(
    games: Iterable[RatedGame], start: Sequence[Rating | None], fixed: Collection[int] = ()
) -> list[Rating]:
    """The ratings after ``games``, rated one after another in their order (module doc): one per
    rating of ``start`` (None: OpenSkill's default for a new player). The ratings at the indices
    in ``fixed`` play at their start values and are never moved (anchors); any other may sit at
    most once at a table."""
    model = _plackett_luce()
    current = [model.rating() if r is None else model.rating(mu=r.mu, sigma=r.sigma) for r in start]
    for game in games:
        if len(game.players) != len(game.ranks):
            raise ValueError(f"{len(game.players)} players but {len(game.ranks)} ranks")
        moved = [i for i in game.players if i not in fixed]
        if len(set(moved)) != len(moved):
            raise ValueError(f"a rating that moves sits twice at one table: {game.players}")
        new = model.rate([[current[i]] for i in game.players], ranks=list(game.ranks))
        for j, i in enumerate(game.players):
            if i not in fixed:
                current[i] = new[j][0]
    return [Rating(r.mu, r.sigma) for r in current]
