"""The attack cost of ``island-fortress exploit``: the decisions a best response needed to reach a
win share against its target in training, over a window of the latest games, read off hand-made
rollout records; the curve kept in the JSON, thinned; the summary over seeds; the training
tracker that keeps the records and logs the windowed share; the report's line."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest

from island_fortress_env.research import attack_cost as ac
from island_fortress_env.research.exploit import TargetWinRate
from island_fortress_env.research.exploit_report import TAG, WINDOW_TAG, format_result, short_decisions
from island_fortress_env.training.league import GameKind


def rollouts(*shares: float, games: int = 5, step: int = 1000) -> list[ac.Rollout]:
    """One rollout per share, ``games`` games each, every ``step`` decisions."""
    return [ac.Rollout((i + 1) * step, share, games) for i, share in enumerate(shares)]


# --------------------------------------------------------------------------- the window


def test_each_threshold_is_reached_at_the_first_rollout_whose_full_window_reaches_it():
    # windows of 10 games, two rollouts each: -, 0.6, 0.4, 0.7, 0.9, 1.0
    records = rollouts(1.0, 0.2, 0.6, 0.8, 1.0, 1.0)
    shares = [p.win_share for p in ac.windowed(records, window=10)]
    assert shares == pytest.approx([1.0, 0.6, 0.4, 0.7, 0.9, 1.0])
    costs = ac.attack_cost(records, window=10)
    assert costs == {0.6: 2000, 0.7: 4000, 0.8: 5000, 0.9: 5000}  # exactly 0.6 reaches 0.6


def test_a_window_not_yet_full_counts_for_nothing():
    records = rollouts(1.0, 1.0, 1.0, games=60)  # 180 games, all won: fewer than the window
    assert ac.ATTACK_WINDOW == 200
    assert ac.attack_cost(records) == dict.fromkeys(ac.THRESHOLDS)
    assert [p.games for p in ac.windowed(records)] == [60, 120, 180]
    assert not any(p.full(ac.ATTACK_WINDOW) for p in ac.windowed(records))
    more = [*records, ac.Rollout(4000, 0.0, 60)]  # 240 games: full, at 0.75
    assert ac.attack_cost(more) == {0.6: 4000, 0.7: 4000, 0.8: None, 0.9: None}


def test_the_window_takes_whole_rollouts_back_until_it_holds_enough_games():
    records = [ac.Rollout(1, 1.0, 150), ac.Rollout(2, 0.0, 150), ac.Rollout(3, 0.5, 300)]
    points = ac.windowed(records, window=200)
    assert [(p.games, p.win_share) for p in points] == [(150, 1.0), (300, 0.5), (300, 0.5)]
    # the last rollout alone fills the window: the ones before it are left out
    assert ac.window_at(records, 2, window=300) == ac.CurvePoint(3, 0.5, 300)
    wider = ac.window_at(records, 2, window=301)  # one rollout more: 150 games lost
    assert (wider.games, wider.win_share) == (450, pytest.approx(150 / 450))
    with pytest.raises(ValueError, match="window"):
        ac.window_at(records, 0, window=0)


def test_every_game_weighs_the_same_and_a_tie_counts_its_share():
    # 4 games at 1/4 each (four-way ties, one seat's share), then 12 games won in 3 of 4
    records = [ac.Rollout(10, 0.25, 4), ac.Rollout(20, 0.75, 12)]
    (point,) = ac.windowed(records, window=16)[1:]
    assert point.win_share == pytest.approx((0.25 * 4 + 0.75 * 12) / 16) and point.games == 16
    assert ac.attack_cost(records, window=16, thresholds=(0.6, 0.7)) == {0.6: 20, 0.7: None}


def test_never_reached_is_none_and_no_records_is_no_cost():
    assert ac.attack_cost(rollouts(0.5, 0.55, 0.59, games=100)) == dict.fromkeys(ac.THRESHOLDS)
    assert ac.attack_cost([]) == dict.fromkeys(ac.THRESHOLDS) and ac.windowed([]) == []


# --------------------------------------------------------------------------- the curve and the JSON


def test_the_curve_is_thinned_to_at_most_the_bound_keeping_both_ends():
    points = ac.windowed(rollouts(*([0.5] * 1000)))
    kept = ac.thinned(points)
    assert len(kept) <= ac.MAX_CURVE_POINTS == 100 and len(kept) >= 90
    assert kept[0] == points[0] and kept[-1] == points[-1]
    steps = [p.decisions for p in kept]
    assert steps == sorted(set(steps))  # in order, none twice
    assert ac.thinned(points[:100]) == points[:100]  # short enough: all of it
    assert [p.decisions for p in ac.thinned(points[:7], max_points=3)] == [1000, 4000, 7000]
    with pytest.raises(ValueError, match="at least 2"):
        ac.thinned(points, max_points=1)


def test_the_costs_and_the_curve_as_json():
    costs = {0.6: 2000, 0.7: None}
    assert ac.cost_json(costs) == {"0.6": 2000, "0.7": None}
    assert ac.curve_json([ac.CurvePoint(5, 0.25, 8)]) == [{"decisions": 5, "win_share": 0.25, "games": 8}]


def test_over_seeds_a_run_that_never_reached_a_threshold_counts_as_infinitely_many_decisions():
    runs = [
        {"0.6": 100, "0.7": 300, "0.8": None, "0.9": None},
        {"0.6": 200, "0.7": None, "0.8": None, "0.9": None},
        {"0.6": 400, "0.7": 500, "0.8": 900, "0.9": None},
    ]
    summary = ac.over_seeds(runs)
    assert summary["median"] == {"0.6": 200, "0.7": 500, "0.8": None, "0.9": None}
    assert summary["min"] == {"0.6": 100, "0.7": 300, "0.8": 900, "0.9": None}
    two = ac.over_seeds(runs[:2])  # an even count: the mean of the middle two, None if one is never
    assert two["median"] == {"0.6": 150, "0.7": None, "0.8": None, "0.9": None}


# --------------------------------------------------------------------------- the tracker


@dataclass
class Writer:
    scalars: list[tuple[str, float, int]] = field(default_factory=list)

    def add_scalar(self, tag: str, value: float, step: int) -> None:
        self.scalars.append((tag, value, step))


def test_the_tracker_keeps_each_rollouts_games_against_the_target_and_logs_the_full_windows():
    writer = Writer()
    tracker = TargetWinRate(window=4)

    def finished(*wins: float, self_play: int = 0) -> list[SimpleNamespace]:
        games = [SimpleNamespace(kind=GameKind.SNAPSHOT, figures=[{"win": w}]) for w in wins]
        return games + [SimpleNamespace(kind=GameKind.SELF_PLAY, figures=[{"win": 1.0}])] * self_play

    for step, games in ((100, finished(1.0, 0.5, self_play=3)), (200, finished()), (300, finished(1.0, 0.0))):
        tracker(SimpleNamespace(progress=SimpleNamespace(decisions=step), writer=writer), games)
    # a two-way tie counts 1/2; self-play games are not the target's; a rollout without any is no record
    assert tracker.rollouts == [ac.Rollout(100, 0.75, 2), ac.Rollout(300, 0.5, 2)]
    assert writer.scalars == [(TAG, 0.75, 100), (TAG, 0.5, 300), (WINDOW_TAG, pytest.approx(0.625), 300)]
    attack = tracker.attack()
    assert attack["attack_window"] == 4 and attack["attack_cost"] == {
        "0.6": 300,
        "0.7": None,
        "0.8": None,
        "0.9": None,
    }
    assert [p["games"] for p in attack["attack_curve"]] == [2, 4]
    assert tracker.games() == 4 and tracker.recent() == pytest.approx(0.625)


# --------------------------------------------------------------------------- the report


def test_decisions_are_written_short():
    assert [short_decisions(n) for n in (None, 640, 120_000, 1500, 2_340_000)] == [
        "-",
        "640",
        "120k",
        "1.5k",
        "2.34M",
    ]


def test_the_report_gives_each_runs_cost_and_the_median_and_cheapest_over_the_seeds():
    def run(seed: int, costs: dict) -> dict:
        return {
            "seed": seed, "control": False, "control_kind": None, "players": 2, "tables": {},
            "tensorboard": "out/runs/x",
            "training": {"decisions": 10, "seconds": 6.0, "win_rate_vs_target_recent": None,
                         "attack_cost": costs},
            "evaluation": {"win_rate": 0.5, "ci95": [0.4, 0.6], "mean_score": 1.0, "target_mean_score": 1.0},
        }  # fmt: skip

    costs = [
        {"0.6": 120_000, "0.7": 480_000, "0.8": None, "0.9": None},
        {"0.6": 90_000, "0.7": None, "0.8": None, "0.9": None},
    ]
    summary = ac.over_seeds(costs)
    report = {
        "target": "random", "players": 2, "from": "scratch", "budget": {"decisions": 10, "minutes": None},
        "evaluation": {"games": 2, "seed": 0}, "chance": 0.5,
        "max": {"win_rate": 0.5, "ci95": [0.4, 0.6], "seed": 0, "exploitability": 0.0},
        "mean": {"win_rate": 0.5, "ci95": [0.4, 0.6], "interval": "t", "exploitability": 0.0,
                 "pooled": {"ci95": [0.4, 0.6]}},
        "runs": [run(0, costs[0]), run(1, costs[1])],
        "attack_cost": {"window": 200, "runs": costs, **summary},
        "control": None, "beyond_control": None, "control_mix": None, "beyond_control_mix": None,
    }  # fmt: skip
    text = format_result(report)
    assert "best response, seed 0: " in text and "reached 60/70/80/90% at 120k / 480k / - / -" in text
    assert "reached 60/70/80/90% at 90k / - / - / -" in text
    assert (
        "attack cost (decisions to reach 60/70/80/90% in training, the last 200+ games; median over 2 "
        "seeds): 105k / - / - / -; cheapest 90k / 480k / - / -"
    ) in text
    assert WINDOW_TAG in text and "beyond training longer" not in text
    alone = {
        **report,
        "runs": report["runs"][:1],
        "attack_cost": {"window": 200, "runs": costs[:1], **ac.over_seeds(costs[:1])},
    }
    line = format_result(alone).splitlines()[-2]  # one run: its own costs, nothing cheaper to give
    assert line.endswith("the last 200+ games; one run): 120k / 480k / - / -")
