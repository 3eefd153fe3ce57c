"""``island-fortress tournament``: every table played, one ladder, reproducible, clear errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from island_fortress_env.cli.app import main
from island_fortress_env.research.tournament import format_ladder, meta_nash, tables_for, tournament


def test_every_table_of_every_size_is_played_with_the_seats_rotated():
    assert tables_for(3, [2, 3]) == [(0, 1), (0, 2), (1, 2), (0, 1, 2)]
    result = tournament(["random", "random", "heuristic"], sizes=[2, 3], games=3, seed=5)
    assert result["tables"] == [
        ["random", "random#2"],
        ["random", "heuristic"],
        ["random#2", "heuristic"],
        ["random", "random#2", "heuristic"],
    ]
    by_name = {row["name"]: row for row in result["agents"]}
    for row in by_name.values():
        assert row["tables"]["2"]["games"] == 6  # two pairings x 3 games
        assert row["tables"]["3"]["games"] == 3
        for t in row["tables"].values():
            lo, hi = t["ci95"]
            assert 0.0 <= lo <= t["win_rate"] <= hi <= 1.0
    # every game has winners' shares adding up to 1: the wins of a table size add up to its games
    for n, tables in (("2", 3), ("3", 1)):
        assert sum(row["tables"][n]["wins"] for row in by_name.values()) == pytest.approx(tables * 3)
    # the ladder is ordered by the conservative rating, and the heuristic beats the random players
    ordinals = [row["ordinal"] for row in result["agents"]]
    assert ordinals == sorted(ordinals, reverse=True)
    assert result["agents"][0]["name"] == "heuristic"
    assert by_name["heuristic"]["tables"]["2"]["win_rate"] == 1.0


@pytest.mark.parametrize(
    ("win_rate", "nash"),
    [
        ([[0.5, 1.0, 0.0], [0.0, 0.5, 1.0], [1.0, 0.0, 0.5]], [1 / 3, 1 / 3, 1 / 3]),  # a circle
        ([[0.5, 0.9, 0.8], [0.1, 0.5, 0.7], [0.2, 0.3, 0.5]], [1.0, 0.0, 0.0]),  # one beats all
        # payoffs a=0.2 (1 over 2), b=0.4 (3 over 1), c=0.2 (2 over 3): the equilibrium is (c, b, a)/sum
        ([[0.5, 0.6, 0.3], [0.4, 0.5, 0.6], [0.7, 0.4, 0.5]], [0.25, 0.5, 0.25]),
    ],
)
def test_the_meta_games_nash_mixture_is_beaten_by_no_agent(win_rate, nash):
    mixture = meta_nash(win_rate)
    assert mixture == pytest.approx(nash, abs=1e-6)
    for j in range(3):  # no pure strategy does better against the mixture than it does itself
        assert sum(mixture[i] * (win_rate[i][j] - win_rate[j][i]) for i in range(3)) >= -1e-9


def test_two_player_tables_make_a_head_to_head_matrix_and_its_nash_mixture():
    result = tournament(["random", "heuristic", "random"], sizes=[2, 3], games=4, seed=0)
    h2h = result["head_to_head"]
    assert h2h["agents"] == ["random", "heuristic", "random#2"]  # the order given, not the ladder's
    assert h2h["games"] == [[0, 4, 4], [4, 0, 4], [4, 4, 0]]  # only the 2-player tables
    w = h2h["win_rate"]
    for i in range(3):
        assert w[i][i] == 0.5
        for j in range(3):
            assert w[i][j] + w[j][i] == pytest.approx(1.0)  # every game has a winner (ties share)
    assert w[1][0] == w[1][2] == 1.0
    nash = result["meta_nash"]
    assert nash["mixture"] == {"heuristic": pytest.approx(1.0)}
    assert nash["win_rate_vs"] == {"random": 1.0, "heuristic": 0.5, "random#2": 1.0}
    assert nash["agent_win_rate_vs_mixture"] == {"random": 0.0, "heuristic": 0.5, "random#2": 0.0}
    text = format_ladder(result)
    assert "2-player head to head: the row's win rate against the column" in text
    assert "Nash mixture of the 2-player meta-game: heuristic 100.0% (it wins >= 50.0% against each)" in text
    # a tournament of larger tables alone is no 2-player game: no matrix
    assert "head_to_head" not in tournament(["random", "heuristic", "random"], sizes=[3], games=1)


def test_same_seed_same_ladder_and_another_seed_other_games():
    one = tournament(["random", "heuristic"], sizes=[2], games=2, seed=1)
    assert tournament(["random", "heuristic"], sizes=[2], games=2, seed=1) == one
    other = tournament(["random", "heuristic"], sizes=[2], games=2, seed=2)
    assert [r["tables"]["2"]["mean_score"] for r in other["agents"]] != [
        r["tables"]["2"]["mean_score"] for r in one["agents"]
    ]


def test_the_ladder_is_the_same_on_any_number_of_processes_and_in_the_core_as_in_python(monkeypatch):
    from pathlib import Path

    from island_fortress_env.training import evaluate as evaluate_mod

    shipped = str(Path(__file__).resolve().parents[1] / "checkpoints" / "policy-2-4p.zip")
    agents = ["random", "heuristic", shipped]
    one = tournament(agents, sizes=[2, 3], games=3, seed=4)
    assert tournament(agents, sizes=[2, 3], games=3, seed=4, workers=2) == one
    monkeypatch.setattr(evaluate_mod, "plays_in_core", lambda spec: False)  # the Python engine
    assert tournament(agents, sizes=[2, 3], games=3, seed=4) == one


def test_a_size_larger_than_the_field_is_skipped_and_said(capsys, tmp_path):
    out = tmp_path / "ladder.json"
    plot = tmp_path / "ladder.png"
    assert main(["tournament", "random", "heuristic", "--players", "2", "3", "--games", "2", "--no-progress",
                 "--out", str(out), "--plot", str(plot)]) == 0  # fmt: skip
    text = capsys.readouterr().out
    assert "skipped table sizes (more seats than agents): [3]" in text
    saved = json.loads(out.read_text("utf-8"))
    assert saved["sizes"] == [2] and saved["skipped_sizes"] == [3]
    assert [row["name"] for row in saved["agents"]] in (["heuristic", "random"], ["random", "heuristic"])
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert format_ladder(saved).splitlines()[0].startswith("#  agent")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["random"], "at least 2 AGENTs"),
        (["random", "nonexistent.zip"], "unknown agent 'nonexistent.zip'"),
        (["random", "heuristic", "--players", "3"], "needs more than the 2 agents"),
        (["random", "heuristic", "--games", "0"], "--games"),
        (["random", "heuristic", "--out", "/nonexistent-dir/x.json"], "no such directory"),
    ],
)
def test_user_errors_are_one_line_and_exit_2(args, message):
    run = subprocess.run(
        [sys.executable, "-m", "island_fortress_env.cli", "tournament", *args],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], run.stderr
    assert run.stdout == ""
