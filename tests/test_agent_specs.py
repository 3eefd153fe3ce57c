"""The ``mcts[:N]`` agent spec on the command line, with or without OpenSpiel installed."""

from __future__ import annotations

import importlib.util

import pytest

from island_fortress_env.players.ismcts import DEFAULT_SIMULATIONS, parse_simulations
from island_fortress_env.training import evaluate as evaluate_mod


def test_simulations_parse():
    assert parse_simulations("") == DEFAULT_SIMULATIONS
    assert parse_simulations("7") == 7


@pytest.mark.parametrize("spec", ["mcts:0", "mcts:x", "mcts:-3", "mcts:1.5"])
def test_a_bad_mcts_spec_is_one_line_and_exit_2(spec, capsys):
    with pytest.raises(SystemExit) as exit_info:
        evaluate_mod.main([spec, "random", "--games", "2"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "positive whole number of simulations" in err[-1] and spec in err[-1]


def test_mcts_without_openspiel_says_what_to_install(monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pyspiel" else real(name, *a)
    )
    with pytest.raises(SystemExit) as exit_info:
        evaluate_mod.main(["mcts:5", "random", "--games", "2"])
    assert exit_info.value.code == 2
    assert "[openspiel]" in capsys.readouterr().err.strip().splitlines()[-1]
