"""``island-fortress calibrate`` on OpenSpiel's small games (``research/calibrate.py``,
``research/calibrate_games.py``): the exact figures against hand-computed ones, the two anchors
of the measure (the target's own play recovers nothing, the exact best response everything), the
learner's policy as a table over every information state, tiny runs end to end and their
reproducibility, and the command's one-line errors."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel is an optional extra: pip install '.[openspiel]'")

from open_spiel.python.algorithms import best_response, cfr, exploitability  # noqa: E402

from island_fortress_env.research import calibrate as cal  # noqa: E402
from island_fortress_env.research import calibrate_games as games  # noqa: E402

KUHN = "kuhn_poker"
GOOFSPIEL = "goofspiel(num_cards=4,imp_info=True,points_order=descending)"
# A tiny learner: rollouts of 256 decisions in minibatches of 64, 16 games at once.
TINY = ("train.rollout_decisions=256", "ppo.minibatch_size=64", "train.games_per_collector=8")
TOL = 1e-9


def test_kuhn_against_uniform_has_the_hand_computed_best_responses():
    """Against a uniform opponent, the first player's best response bets the Queen and King and
    bets the Jack too (-1/2 beats passing's -1): (-1/2 + 1/2 + 3/2) / 3 = 1/2. The second player
    bets after a pass with every card and calls a bet with the Queen and King only:
    (-3/4 + 1/4 + 7/4) / 3 = 5/12. The exploitability is their mean, 11/24."""
    small = games.load_small_game(KUHN)
    exact = games.exact_figures(small, games.target_policy(small, games.parse_target("uniform")))
    assert exact.best_response == pytest.approx((1 / 2, 5 / 12), abs=TOL)
    assert exact.exploitability == pytest.approx(11 / 24, abs=TOL)
    assert sum(exact.target_values) == pytest.approx(0.0, abs=TOL)  # zero-sum: the anchor of 0


def test_the_target_recovers_nothing_and_the_exact_best_response_everything():
    """The measuring path itself: the target's own table scores 0 of the exploitability, and
    OpenSpiel's best responses (one per seat) as a table score all of it, gap 0."""
    small = games.load_small_game("leduc_poker")
    target = games.target_policy(small, games.parse_target("cfr:3"))
    exact = games.exact_figures(small, target)
    itself = cal.play_figures(games.seat_values(small, target, target), exact)
    assert itself.value == pytest.approx(0.0, abs=TOL) and itself.recovered == pytest.approx(0.0, abs=TOL)
    states = games.information_states(small)
    rows = np.zeros(states.masks.shape)
    for seat in (0, 1):
        responder = best_response.BestResponsePolicy(small.game, seat, target)
        for i, (key, mask) in enumerate(zip(states.keys, states.masks, strict=True)):
            if states.seats[i] == seat:
                rows[i, responder.best_response_action(key)] = 1.0
                assert mask[np.flatnonzero(rows[i])].all()
    best = cal.play_figures(games.seat_values(small, games.policy_from(small, rows), target), exact)
    assert best.seat_values == pytest.approx(exact.best_response, abs=1e-7)
    assert best.gap == pytest.approx(0.0, abs=1e-7) and best.recovered == pytest.approx(1.0, abs=1e-7)


def test_targets_are_tables_over_every_information_state_with_legal_mass_only():
    small = games.load_small_game(GOOFSPIEL)  # simultaneous moves, played turn by turn
    assert small.game.get_type().dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    states = games.information_states(small)
    for text in ("uniform", "cfr:2", "random:7"):
        rows = games.probabilities_of(small, games.target_policy(small, games.parse_target(text)))
        assert rows.shape == states.masks.shape
        assert np.all(rows[~states.masks] == 0) and np.allclose(rows.sum(axis=1), 1.0)
    again = games.probabilities_of(small, games.target_policy(small, games.parse_target("random:7")))
    other = games.probabilities_of(small, games.target_policy(small, games.parse_target("random:8")))
    assert np.array_equal(rows, again) and not np.allclose(rows, other)
    solver = cfr.CFRSolver(small.game)
    for _ in range(2):
        solver.evaluate_and_update_policy()
    cfr2 = games.exact_figures(small, games.target_policy(small, games.parse_target("cfr:2")))
    assert cfr2.exploitability == pytest.approx(
        exploitability.exploitability(small.game, solver.average_policy())
    )


def test_the_learned_network_becomes_a_table_over_every_information_state():
    small = games.load_small_game("leduc_poker")
    states = games.information_states(small)
    net = cal.new_network(small, cal.calibration_config(0, 256, TINY))
    greedy, sampled = cal.learned_rows(net, states)
    table = games.policy_from(small, sampled)
    assert set(table.state_lookup) == set(states.keys) and len(states.keys) == 936
    for rows in (greedy, sampled):
        assert np.all(rows[~states.masks] == 0) and np.allclose(rows.sum(axis=1), 1.0)
    assert np.all(greedy.max(axis=1) == 1.0)  # one legal action each
    assert np.array_equal(greedy.argmax(axis=1), np.where(states.masks, sampled, -1).argmax(axis=1))


def _figures(result: cal.Calibration) -> list[dict]:
    runs = result.to_json()["runs"]
    return [{k: v for k, v in run.items() if k != "seconds"} for run in runs]


def test_a_tiny_calibration_runs_end_to_end_with_its_figures_consistent():
    result = cal.calibrate(KUHN, "uniform", [256, 512], seed=3, seeds=2, overrides=TINY, report=None)
    exact = result.exact
    assert [(r.budget, r.seed) for r in result.runs] == [(256, 3), (256, 4), (512, 3), (512, 4)]
    for run in result.runs:
        assert run.decisions >= run.budget and run.updates == math.ceil(run.budget / 256)
        for figures in (run.greedy, run.sampled):
            # a best response is best: no policy beats it in either seat
            assert all(v <= br + TOL for v, br in zip(figures.seat_values, exact.best_response, strict=True))
            assert figures.gap >= -TOL
            assert figures.value == pytest.approx(sum(figures.seat_values) / 2)
            assert figures.gap == pytest.approx(exact.exploitability - figures.value)
            assert figures.recovered == pytest.approx(figures.value / exact.exploitability)
    summary = result.budgets[0]
    assert summary.budget == 256 and summary.runs == 2
    assert result.start.budget == 0 and result.start.runs == 2  # each seed's weights, untrained
    values = [run.greedy.value for run in result.runs[:2]]
    value = summary.greedy["value"]
    assert value is not None and value.mean == pytest.approx(np.mean(values))
    assert value.ci95 is not None and value.ci95[0] <= value.mean <= value.ci95[1]
    json.dumps(result.to_json())  # the --json report


def test_the_same_seed_gives_the_same_figures_and_another_seed_others():
    first = cal.calibrate(KUHN, "cfr:2", [512], seed=5, seeds=1, overrides=TINY, report=None)
    again = cal.calibrate(KUHN, "cfr:2", [512], seed=5, seeds=1, overrides=TINY, report=None)
    other = cal.calibrate(KUHN, "cfr:2", [512], seed=6, seeds=1, overrides=TINY, report=None)
    assert _figures(first) == _figures(again)
    assert _figures(first) != _figures(other)


def test_an_update_moves_the_learner_as_ppo_does():
    """The runs train: after its updates the sampled policy is no longer the one it started as."""
    small = games.load_small_game(KUHN)
    states = games.information_states(small)
    target = games.target_policy(small, games.parse_target("uniform"))
    table = cal.TargetTable(small, target, states)
    cfg = cal.calibration_config(0, 512, TINY)
    _, before = cal.learned_rows(cal.new_network(small, cfg), states)
    trained = cal.train_best_response(small, table, cfg)
    _, after = cal.learned_rows(trained.net, states)
    assert trained.updates == 2 and trained.decisions >= 512
    assert not np.allclose(before, after)


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "island_fortress_env.cli", "calibrate", *argv],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_the_command_prints_its_json_and_its_table():
    done = _cli("--game", KUHN, "--decisions", "256", "--seeds", "1", "--json", *TINY)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["game"] == KUHN and report["target"] == "uniform"
    assert report["exact"]["exploitability"] == pytest.approx(11 / 24)
    assert report["settings"]["ppo"]["n_epochs"] == 3 and report["settings"]["rollout_decisions"] == 256
    assert "256 decisions, seed 0" in done.stderr  # each run's line, off stdout
    text = _cli("--game", KUHN, "--decisions", "256", "--seeds", "1", *TINY)
    assert text.returncode == 0, text.stderr
    assert "exploitability 0.4583" in text.stdout and "recovered" in text.stdout


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--game", "no_such_game"], "Unknown game 'no_such_game'"),
        (["--game", "kuhn_poker(players=3)"], "has 3 players, not 2"),
        (["--game", "tic_tac_toe"], "no information-state tensor"),
        (["--game", "goofspiel"], "too many to solve"),
        (["policy.cnn_channels=8"], "policy.cnn_channels=8: calibrate takes only 0"),
        (["ppo.n_epochs=0"], "ppo.n_epochs"),
    ],
)
def test_a_bad_game_or_setting_is_one_line_and_exit_2(argv, words):
    done = _cli(*argv, "--decisions", "256")  # overrides go before --decisions D [D ...]
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("island-fortress calibrate: error: ") and words in lines[0]
