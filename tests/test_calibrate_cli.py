"""``island-fortress calibrate`` where OpenSpiel may be absent: the command's one-line refusals
(pyspiel missing, a bad target or budget), the package importing without pyspiel, and the
learner's pieces that need no game (its settings, which are the exploit runs', its network on
padded rows, the spread over seeds). The calibration itself: tests/integrations/test_calibrate.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from island_fortress_env.cli import app as cli

ROOT = Path(__file__).resolve().parents[1]
MISSING = "island-fortress calibrate: error: pyspiel is missing: pip install 'island-fortress-env[openspiel]'"


def test_without_pyspiel_the_command_is_one_line_naming_the_openspiel_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # import pyspiel now raises ImportError
    with pytest.raises(SystemExit) as exc:
        cli.main(["calibrate", "--game", "kuhn_poker", "--decisions", "1000"])
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [MISSING] and captured.out == ""


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--target", "cfr:0"], "argument --target: target 'cfr:0': expected uniform, cfr:N"),
        (["--target", "nash"], "argument --target: target 'nash'"),
        (["--decisions", "0"], "argument --decisions: must be an integer >= 1, got 0"),
        (
            ["--decisions", "100", "ppo.ent_coef=0"],
            "argument --decisions: expected an integer, got 'ppo.ent_coef=0'",
        ),
        (["--seeds", "0"], "argument --seeds: must be an integer >= 1"),
    ],
)
def test_a_bad_target_or_budget_is_one_line_and_exit_2(argv, words, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["calibrate", *argv])
    assert exc.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("island-fortress calibrate: error: ") and words in lines[0]


def test_the_package_imports_the_calibration_without_pyspiel():
    code = (
        "import sys; sys.modules['pyspiel'] = None\n"
        "import island_fortress_env.research.calibrate, island_fortress_env.cli.calibrate\n"
        "assert 'open_spiel' not in sys.modules\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_calibration_run_has_the_exploit_runs_settings_from_scratch():
    from island_fortress_env.research import calibrate as cal
    from island_fortress_env.research.exploit import LEARNING_RATE, exploit_config

    cfg = cal.calibration_config(4, 50_000)
    reference = exploit_config("random", 2, "scratch", 4, "unused", decisions=50_000)
    assert cfg.ppo == reference.ppo and cfg.policy == reference.policy
    assert cfg.ppo.learning_rate == LEARNING_RATE["scratch"] and cfg.seed == 4
    for key in ("total_decisions", "rollout_decisions", "games_per_collector", "workers", "pipelined"):
        assert getattr(cfg.train, key) == getattr(reference.train, key), key
    assert cal.calibration_config(0, 1000, ["ppo.n_epochs=5"]).ppo.n_epochs == 5


@pytest.mark.parametrize(
    "override", ["policy.cnn_channels=8", "pretrain.games=10", "train.device=cuda", "train.max_minutes=2"]
)
def test_a_setting_the_small_game_cannot_take_is_refused_by_name(override):
    from island_fortress_env.research import calibrate as cal

    key = override.split("=")[0]
    with pytest.raises(cal.CalibrationError, match=rf"^{key}="):
        cal.calibration_config(0, 1000, [override])


def test_the_network_reads_rows_padded_to_the_trainers_widths():
    import torch

    from island_fortress_env.research import calibrate as cal
    from island_fortress_env.research.calibrate_games import SmallGame

    small = SmallGame("a game", None, obs_size=5, num_actions=3, histories=0, utility_scale=1.0)
    net = cal.new_network(small, cal.calibration_config(0, 1000))
    obs = torch.zeros(4, cal.OBS_SIZE)
    obs[:, :5] = torch.rand(4, 5, generator=torch.Generator().manual_seed(0))
    obs[:, 5:] = 7.0  # the padding is never read
    mask = torch.zeros(4, cal.NUM_ACTIONS, dtype=torch.bool)
    mask[:, :3] = torch.tensor([[1, 1, 0], [0, 1, 1], [1, 0, 1], [1, 1, 1]], dtype=torch.bool)
    with torch.no_grad():
        wide, value = net(obs, mask)
        narrow, same = net(obs[:, :5], mask[:, :3])
    assert wide.shape == (4, cal.NUM_ACTIONS) and narrow.shape == (4, 3)
    assert torch.equal(wide[:, :3], narrow) and torch.equal(value, same)
    probs = torch.softmax(wide, dim=-1)
    assert torch.all(probs[~mask] == 0) and torch.allclose(probs.sum(-1), torch.ones(4))
    again = cal.new_network(small, cal.calibration_config(0, 1000))
    other = cal.new_network(small, cal.calibration_config(1, 1000))
    first = next(net.parameters())
    assert torch.equal(first, next(again.parameters())) and not torch.equal(first, next(other.parameters()))


def test_the_spread_over_seeds_is_a_t_interval_and_none_for_one_seed():
    pytest.importorskip("scipy")
    from island_fortress_env.research.calibrate import spread

    three = spread([1.0, 2.0, 3.0])
    assert three.mean == 2.0 and (three.min, three.max) == (1.0, 3.0)
    assert three.ci95 == pytest.approx((2.0 - 4.302653 / 3**0.5, 2.0 + 4.302653 / 3**0.5))
    assert spread([0.5]).ci95 is None
