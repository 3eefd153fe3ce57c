"""``island-fortress tournament``: every table played, one ladder, reproducible, clear errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from island_fortress_env.tools.tournament import format_ladder, main, tables_for, tournament


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


def test_same_seed_same_ladder_and_another_seed_other_games():
    one = tournament(["random", "heuristic"], sizes=[2], games=2, seed=1)
    assert tournament(["random", "heuristic"], sizes=[2], games=2, seed=1) == one
    other = tournament(["random", "heuristic"], sizes=[2], games=2, seed=2)
    assert [r["tables"]["2"]["mean_score"] for r in other["agents"]] != [
        r["tables"]["2"]["mean_score"] for r in one["agents"]
    ]


def test_a_size_larger_than_the_field_is_skipped_and_said(capsys, tmp_path):
    out = tmp_path / "ladder.json"
    plot = tmp_path / "ladder.png"
    assert main(["random", "heuristic", "--players", "2", "3", "--games", "2", "--no-progress",
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
        [sys.executable, "-m", "island_fortress_env.tools.cli", "tournament", *args],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], run.stderr
    assert run.stdout == ""
