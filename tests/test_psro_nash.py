"""``island-fortress psro --answer nash``: best responses to the population's Nash mixture, on tiny
budgets.

Two rounds from a small network: the start alone, then each round's best response joining the
2-player meta-game, whose Nash mixture the next best response answers; the pairings' games are the
tournament's, a continued run reads the meta-game back instead of playing it again, and the
settings that do not apply to it are one line and exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_psro import QUICK
from tiny_runs import run_command, run_json, small_checkpoint

from island_fortress_env.players.mixture import read_mixture
from island_fortress_env.research import psro
from island_fortress_env.research.tournament import HeadToHead, meta_nash, play_table


def _argv(start: Path, out: Path, *more: str) -> list[str]:
    exploit_sets = [x for item in [*QUICK, "train.games_per_collector=2"] for x in ("--exploit-set", item)]
    return [
        str(start), "--answer", "nash", "--players", "2", "--exploit-decisions", "1024", "--games", "4",
        "--pairing-games", "4", "--out", str(out), "--name", "nash", *exploit_sets, *more,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def two_rounds(tmp_path_factory):
    """Two rounds through the command line with --json: (start, out folder, report)."""
    tmp = tmp_path_factory.mktemp("psro-nash")
    start = small_checkpoint(tmp / "start.zip")
    out = tmp / "out"
    return start, out, run_json(["psro", *_argv(start, out, "--rounds", "2", "--workers", "2", "--json")])


def test_each_round_answers_the_nash_mixture_of_the_population_so_far(two_rounds):
    start, out, report = two_rounds
    folder = out / "checkpoints" / "nash"
    brs = [str(out / "checkpoints" / f"nash-br{k}-2p" / "final.zip") for k in (1, 2, 3)]
    assert [e["round"] for e in report["policies"]] == [0, 1, 2]
    for k, entry in enumerate(report["policies"]):
        mixture_file = folder / f"nash-{k}.json"
        assert entry["policy"] == f"mixture:{mixture_file}"
        members = {m.spec: m.weight for m in read_mixture(entry["policy"])}
        assert members == pytest.approx(entry["mixture"])
        population = [str(start), *brs[:k]]
        assert set(members) <= set(population)  # the mixture is over the population so far
        found = entry["exploit"]["2"]
        assert found["exploiter"] == brs[k] and Path(brs[k]).is_file()
        exploit_report = json.loads((Path(brs[k]).parent / "exploit.json").read_text())
        assert exploit_report["target"] == entry["policy"]  # the best response answered the mixture
        assert exploit_report["target_mixture"] == pytest.approx(entry["mixture"])
        assert "training" not in entry  # no policy runs
    assert report["policies"][0]["mixture"] == {str(start): 1.0}
    assert report["population"] == [str(start), *brs]
    assert not any((out / "checkpoints").glob("nash-round-*"))
    assert json.loads((folder / "psro.json").read_text()) == report


def test_the_meta_game_is_the_tournaments_pairings_and_its_nash_mixture(two_rounds):
    start, out, _report = two_rounds
    folder = out / "checkpoints" / "nash"
    meta = json.loads((folder / "meta-game.json").read_text())
    agents = [str(start), *(str(out / "checkpoints" / f"nash-br{k}-2p" / "final.zip") for k in (1, 2))]
    assert meta["agents"] == agents  # the last best response measures, and does not join
    assert (meta["games_per_pairing"], meta["seed"]) == (4, 0)
    # pairing (i, k) is table k (k - 1) / 2 + i of the tournament's seeding, the older agent first
    head = HeadToHead.empty(3)
    for k in range(1, 3):
        for i in range(k):
            for game in play_table([agents[i], agents[k]], k * (k - 1) // 2 + i, 4, 0):
                head.record((i, k), game)
    assert meta["wins"] == head.wins and meta["games"] == head.games
    solved = json.loads((folder / "nash-2.json").read_text())
    assert solved["head_to_head"]["win_rate"] == head.win_rates()
    expected = meta_nash(head.win_rates())
    assert solved["meta_nash"]["mixture"] == pytest.approx(
        {agents[i]: p for i, p in enumerate(expected) if p > 0}
    )


def test_a_continued_run_reads_the_meta_game_and_the_best_responses_back(two_rounds, monkeypatch, capsys):
    start, out, report = two_rounds

    def refuse(*_args, **_kwargs):
        raise AssertionError("a finished step was run again")

    monkeypatch.setattr(psro, "exploit", refuse)
    monkeypatch.setattr(psro, "play_tables", refuse)
    code, printed, _err = run_command(["psro", *_argv(start, out, "--rounds", "2", "--json")], capsys)
    assert code == 0
    assert json.loads(printed.strip().splitlines()[-1]) == report


def test_the_text_report_names_each_mixtures_members(two_rounds):
    start, _out, report = two_rounds
    lines = psro.format_report(report).splitlines()
    assert len(lines) == 2 + len(report["policies"])
    assert f"({start.stem} 100.0%)" in lines[2]
    for line, entry in zip(lines[2:], report["policies"], strict=True):
        for member, p in entry["mixture"].items():
            assert f"{psro.label(member)} {100 * p:.1f}%" in line


@pytest.mark.parametrize(
    ("more", "says"),
    [
        (["--players", "3"], "--players 2"),
        (["--players", "2", "3"], "--players 2"),
        (["--train-minutes", "1"], "--train-minutes"),
        (["--train-decisions", "100"], "--train-minutes"),
        (["league.snapshot=0.5"], "overrides"),
        (["--config", "configs/policy-2-4p.yaml"], "--config"),
        (["--pairing-games", "0"], "--pairing-games"),
        (["--answer", "uniform"], "--answer"),
    ],
)
def test_settings_that_do_not_apply_are_one_line_and_exit_2(more, says, capsys, tmp_path):
    start = small_checkpoint(tmp_path / "start.zip")
    code, printed, err = run_command(["psro", *_argv(start, tmp_path / "out"), *more], capsys)
    assert code == 2 and not printed
    lines = err.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and lines[0].startswith("island-fortress psro: error:")
    assert not (tmp_path / "out").exists()  # refused before any training


def test_a_damaged_meta_game_is_one_line_and_exit_2(capsys, tmp_path):
    start = small_checkpoint(tmp_path / "start.zip")
    meta = tmp_path / "out" / "checkpoints" / "nash" / "meta-game.json"
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps({"agents": ["a.zip"], "wins": [[0, 1]], "games": [[0]], "seed": 0}))
    code, _printed, err = run_command(["psro", *_argv(start, tmp_path / "out")], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "meta-game.json: not a meta-game" in lines[0]


def test_a_report_from_before_the_answer_setting_continues_as_answer_policy():
    settings = psro.Settings("a.zip", 1, [2], "c.yaml", 1.0, None, None, None, 0, None, [], [])
    old = {k: v for k, v in settings.__dict__.items() if k not in ("answer", "pairing_games")}
    assert psro.same_run(old, settings.__dict__)
    assert not psro.same_run(old, {**settings.__dict__, "answer": psro.ANSWER_NASH})
