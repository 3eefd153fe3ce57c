"""The project's statistics (``island_fortress_env.stats``): the Wilson interval and OpenSkill
ratings over finished games give the figures the evaluation, the tournament, the trainer's greedy
evaluation and the web app reported before they shared one module (fixed small examples, their
figures computed by the code each had)."""

from __future__ import annotations

import pytest

from island_fortress_env.stats import Interval, RatedGame, Rating, rate_games, t_interval, wilson

# (wins, games, low, high), as ``evaluate`` and ``tournament`` computed them from counts
COUNTED = [
    (0, 10, 0.0, 0.2775327998628892),
    (10, 10, 0.7224672001371107, 1.0),
    (7.5, 10, 0.44218142427854984, 0.9190521757900056),  # shared wins make fractional counts
    (3, 7, 0.15821985525146975, 0.7495416354723428),
    (1 / 3, 1, 0.025336243646501055, 0.9058139848944198),
    (75, 100, 0.656955364519384, 0.8245478863771232),
    (12.25, 40, 0.18573350221153442, 0.4607198682524142),
]
# (share, trials, low, high), as the web app's analysis computed them with its 7-digit quantile
SHARES = [
    (0.0, 64, 0.0, 0.05662406063551054),
    (1.0, 64, 0.9433759393644894, 1.0),
    (0.5, 256, 0.43920555811661355, 0.5607944418833865),
    (0.3, 10, 0.10779126655639398, 0.6032218546540291),
    (0.8125, 16, 0.5699111883245088, 0.9340840098021131),
    (0.123, 1000, 0.10407414311289273, 0.14481123283056058),
]


@pytest.mark.parametrize(("wins", "games", "low", "high"), COUNTED)
def test_wilson_gives_the_evaluations_figures_exactly(wins, games, low, high):
    assert wilson(wins / games, games) == Interval(low, high)


@pytest.mark.parametrize(("share", "trials", "low", "high"), SHARES)
def test_wilson_gives_the_web_apps_figures_to_its_quantiles_precision(share, trials, low, high):
    got = wilson(share, trials)
    assert got.low == pytest.approx(low, abs=1e-8) and got.high == pytest.approx(high, abs=1e-8)


def test_wilson_of_nothing_observed_is_everything_and_the_ends_are_exact():
    assert wilson(0.0, 0) == (0.0, 1.0)
    for trials in range(1, 400):
        assert wilson(0.0, trials).low == 0.0 and wilson(1.0, trials).high == 1.0


def _openskill():
    pytest.importorskip("openskill", reason="ratings need openskill (an optional dependency)")


def test_a_ladder_of_games_gives_the_tournaments_ratings():
    """Every rating moves; tables of 2 to 4, ties sharing a rank, teams in the order given."""
    _openskill()
    games = [
        RatedGame((0, 1), (1, 2)),
        RatedGame((2, 3), (1, 1)),
        RatedGame((0, 2, 3), (2, 1, 3)),
        RatedGame((1, 3), (2, 1)),
        RatedGame((0, 1, 2, 3), (1, 1, 3, 4)),
        RatedGame((3, 0), (1, 2)),
    ]
    got = rate_games(games, [None] * 4)
    assert [(r.mu, r.sigma, r.ordinal) for r in got] == [
        (25.622086095916295, 7.5015617610481, 3.117400812771997),
        (20.8358620502991, 7.752566977010215, -2.4218388807315456),
        (28.41130415247379, 7.782644101008477, 5.063371849448359),
        (24.900823875699633, 7.252977268716911, 3.1418920695488985),
    ]


def test_fixed_anchors_are_used_and_never_moved():
    """The trainer's greedy evaluation: one policy against copies of an anchor at a table."""
    _openskill()
    start = [None, Rating(-10.0, 1.0), Rating(12.0, 1.0)]
    games = [
        RatedGame((0, 1), (1.0, 2.0)),
        RatedGame((0, 2, 2), (2.0, 1.0, 3.0)),
        RatedGame((0, 2), (1.0, 1.0)),
        RatedGame((0, 1, 1, 1), (3.0, 1.0, 2.0, 4.0)),
    ]
    got = rate_games(games, start, fixed={1, 2})
    policy = (got[0].mu, got[0].sigma, got[0].ordinal)
    assert policy == (13.518337816563182, 6.905477775285062, -7.198095509292003)
    assert got[1:] == start[1:]


def test_one_game_from_given_ratings():
    """The web app: a person and agents at given ratings, one the default."""
    _openskill()
    start = [Rating(15.0, 3.0), Rating(27.0, 6.0), Rating(20.0, 5.0), None]
    got = rate_games([RatedGame((0, 1, 2, 3), (2, 1, 2, 4))], start)
    assert [(r.mu, r.sigma) for r in got] == [
        (15.077349132799215, 2.997094722784876),
        (28.638850209237354, 5.952063919993659),
        (19.94598352431776, 4.960761615159306),
        (21.39252124622454, 7.960439820188495),
    ]


def test_a_moving_rating_sits_once_at_a_table():
    _openskill()
    with pytest.raises(ValueError, match="sits twice"):
        rate_games([RatedGame((0, 0), (1, 2))], [None])
    with pytest.raises(ValueError, match="ranks"):
        rate_games([RatedGame((0, 1), (1,))], [None, None])


def test_the_t_interval_of_several_runs_is_what_the_exploit_report_computed():
    """``t_interval`` gives the figures the exploit report's own numpy and scipy code gave."""
    pytest.importorskip("scipy")
    assert t_interval([0.5, 0.6, 0.7]) == pytest.approx((0.35158622882496704, 0.8484137711750329))
    assert t_interval([0.9, 1.0]) == (pytest.approx(0.3146897631912654), 1.0)  # clipped to [0, 1]
    with pytest.raises(ValueError, match="two or more"):
        t_interval([0.5])
