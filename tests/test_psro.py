"""``island-fortress psro``: rounds of best responses and of training against them, on tiny budgets.

One round at 2 players from a small network: the best response to the start, the policy trained
on against the population, the best response that measures it, the report and its TensorBoard
figures; a second call reads every finished step back instead of training again, and more rounds
extend the run; other settings under the same name, and every user error, are one line and exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tiny_runs import run_command, run_json, small_checkpoint

from island_fortress_env.cli import app as cli
from island_fortress_env.research import psro
from island_fortress_env.training.plot_curves import read_scalars

# One process, small rollouts, both for the best responses and for the policy's runs.
QUICK = [
    "train.workers=0",
    "train.pipelined=false",
    "train.rollout_decisions=1024",
    "train.games_per_collector=8",
    "ppo.minibatch_size=256",
]
POLICY = [*QUICK, "policy.cnn_channels=2", "policy.hidden=8", "policy.head_activation=relu", "eval.every=0",
          "eval.final_games=0", "train.checkpoint_every=100000"]  # fmt: skip


def _start(path: Path) -> Path:
    return small_checkpoint(path)


def _argv(start: Path, out: Path, *more: str) -> list[str]:
    # two games at a time, so that games against the target end within the tiny budget
    exploit_sets = [x for item in [*QUICK, "train.games_per_collector=2"] for x in ("--exploit-set", item)]
    return [
        str(start), "--players", "2", "--exploit-decisions", "1024", "--train-decisions", "2048",
        "--games", "4", "--out", str(out), "--name", "tiny", *exploit_sets, *more, *POLICY,
    ]  # fmt: skip


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    return run_command(["psro", *argv], capsys)


@pytest.fixture(scope="module")
def one_round(tmp_path_factory):
    """One round at 2 players, through the command line with --json: (start, out folder, report)."""
    tmp = tmp_path_factory.mktemp("psro")
    start = _start(tmp / "start.zip")
    out = tmp / "out"
    return start, out, run_json(["psro", *_argv(start, out, "--json")])


def test_a_round_measures_the_start_trains_against_the_population_and_measures_the_result(one_round):
    start, out, report = one_round
    first, second = report["policies"]
    assert first["round"] == 0 and first["policy"] == str(start)
    br1 = out / "checkpoints" / "tiny-br1-2p" / "final.zip"
    assert first["exploit"]["2"]["exploiter"] == str(br1) and br1.is_file()
    trained = first["training"]
    assert trained["from"] == str(start)
    assert trained["members"] == [str(start), str(br1)]  # the population: the start and its best response
    assert trained["policy"] == str(out / "checkpoints" / "tiny-round-1" / "final.zip")
    assert trained["decisions"] >= 2048
    assert second["round"] == 1 and second["policy"] == trained["policy"] and "training" not in second
    br2 = out / "checkpoints" / "tiny-br2-2p" / "final.zip"
    assert second["exploit"]["2"]["exploiter"] == str(br2)
    assert report["population"] == [str(start), str(br1), trained["policy"], str(br2)]
    for entry in report["policies"]:
        found = entry["exploit"]["2"]
        lo, hi = found["ci95"]
        assert 0 <= lo <= found["win_rate"] <= hi <= 1
        assert found["exploitability"] == pytest.approx(found["win_rate"] - 0.5)
        exploit_report = json.loads((Path(found["exploiter"]).parent / "exploit.json").read_text())
        # the last rollouts' games against the target
        assert found["sampled_win_rate"] == exploit_report["training"]["win_rate_vs_target_recent"]
        assert 0 <= found["sampled_win_rate"] <= 1
    assert json.loads((out / "checkpoints" / "tiny" / "psro.json").read_text()) == report


def test_the_round_trains_the_policy_from_the_start_with_every_member_in_its_league(one_round):
    _start_path, out, report = one_round
    tags = read_scalars(out / "runs" / "tiny-round-1")
    assert {"league/ahead_of_member_0_start", "league/ahead_of_member_1_tiny-br1-2p"} <= set(tags)
    psro_tags = read_scalars(out / "runs" / "tiny")
    rates = psro_tags["psro/exploiter_win_rate_2p"]
    assert [step for step, _ in rates] == [0, 1]
    assert [value for _, value in rates] == pytest.approx(
        [e["exploit"]["2"]["win_rate"] for e in report["policies"]]
    )
    assert [step for step, _ in psro_tags["psro/exploitability_2p"]] == [0, 1]
    sampled = [e["exploit"]["2"]["sampled_win_rate"] for e in report["policies"]]
    logged = psro_tags["psro/exploiter_sampled_win_rate_2p"]
    assert logged == [(k, pytest.approx(rate)) for k, rate in enumerate(sampled)]


def test_the_same_command_reads_every_finished_step_back(one_round, monkeypatch, capsys):
    start, out, report = one_round

    def refuse(*_args, **_kwargs):
        raise AssertionError("a finished step was run again")

    monkeypatch.setattr(psro, "exploit", refuse)
    monkeypatch.setattr("island_fortress_env.training.ppo.train_native", refuse)
    code, printed, _err = _run(_argv(start, out, "--json"), capsys)
    assert code == 0
    again = json.loads(printed.strip().splitlines()[-1])
    assert again == report


def test_the_text_report_is_a_table_of_each_policy_and_its_best_response(one_round):
    _start_path, _out, report = one_round
    lines = psro.format_report(report).splitlines()
    assert lines[0] == "| round | policy | best response at 2 players |"
    assert len(lines) == 2 + len(report["policies"])
    first = report["policies"][0]["exploit"]["2"]
    assert f"{100 * first['win_rate']:.1f}%" in lines[2]
    assert f", sampled {100 * first['sampled_win_rate']:.1f}%" in lines[2]


def test_other_settings_under_the_same_name_are_refused(one_round, capsys):
    start, out, _report = one_round
    code, printed, err = _run(_argv(start, out, "--seed", "5"), capsys)
    assert code == 2 and not printed
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "other settings" in lines[0] and "--name" in lines[0]


def test_more_rounds_extend_a_run(one_round):
    start, out, report = one_round
    settings = psro.Settings(**{**report["settings"], "rounds": 2})
    assert psro.same_run(report["settings"], {**report["settings"], "rounds": 2})
    assert not psro.same_run(report["settings"], {**report["settings"], "seed": 1})
    items = psro.train_items(settings, "tiny", 2, "b.zip", ["a.zip", "b.zip"], out)
    assert "run_name=tiny-round-2" in items and 'league.members=["a.zip", "b.zip"]' in items
    assert items[-len(POLICY) :] == POLICY  # the user's overrides come last and win
    assert str(start) == settings.start


@pytest.mark.parametrize(
    ("more", "says"),
    [
        (["--rounds", "0"], "--rounds"),
        (["--players", "5"], "--players"),
        (["league.nonsense=1"], "nonsense"),
        (["league.opponent=heuristic"], "league"),
        (["--exploit-set", "ppo.learning_rate=fast"], "ppo.learning_rate"),
        (["--exploit-minutes", "1"], "not allowed with"),
    ],
)
def test_a_user_error_is_one_line_and_exit_2(more, says, capsys, tmp_path):
    start = _start(tmp_path / "start.zip")
    code, printed, err = _run([*_argv(start, tmp_path / "out"), *more], capsys)
    assert code == 2 and not printed
    lines = err.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and lines[0].startswith("island-fortress psro: error:")
    assert not (tmp_path / "out").exists()  # refused before any training


@pytest.mark.parametrize("start", ["heuristic", "no/such/policy.zip", "search:8"])
def test_a_start_that_is_not_a_checkpoint_file_is_one_line_and_exit_2(start, capsys, tmp_path):
    code, _printed, err = _run([start, "--out", str(tmp_path / "out")], capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "START" in err
    assert not (tmp_path / "out").exists()


def test_the_psro_subcommand_is_listed(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "psro" in capsys.readouterr().out


def test_a_damaged_report_is_one_line_and_exit_2(capsys, tmp_path):
    start = _start(tmp_path / "start.zip")
    report = tmp_path / "out" / "checkpoints" / "tiny" / "psro.json"
    report.parent.mkdir(parents=True)
    report.write_text("{not json")
    code, _printed, err = _run(_argv(start, tmp_path / "out"), capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "psro.json: cannot be read" in lines[0]
