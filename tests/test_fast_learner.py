"""The learner's speed-ups keep its meaning: the dense torso, batched decision storage, Gumbel-max
sampling, the imitation's share of the time cap, the phase summary and the benchmark's race."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from island_fortress_env.agents.checkpoint import load_policy
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.cli import app as cli
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.env.observation import OBS_SIZE
from island_fortress_env.players.seat_policies import sample_actions
from island_fortress_env.training.config import NativeConfig, load_config
from island_fortress_env.training.ppo import train_native
from island_fortress_env.training.pretrain import collect_demonstrations, imitate
from island_fortress_env.training.trajectories import SeatTrajectories

ROOT = Path(__file__).resolve().parents[1]
GAMMA, LAM = 0.95, 0.9


def test_the_default_network_is_a_dense_torso_and_the_convolutional_one_still_builds():
    cfg = load_config(ROOT / "configs" / "default.yaml", schema=NativeConfig)
    assert cfg.policy.cnn_channels == 0
    dense = ActorCritic(cnn_channels=0, hidden=cfg.policy.hidden)
    assert dense.torso.wall is None and dense.torso.features_dim == cfg.policy.hidden
    assert not any(isinstance(m, torch.nn.Conv2d) for m in dense.modules())
    conv = ActorCritic(cnn_channels=4, hidden=8)
    assert conv.torso.features_dim == 16 and any(isinstance(m, torch.nn.Conv2d) for m in conv.modules())
    obs, mask = torch.rand(5, OBS_SIZE), torch.ones(5, NUM_ACTIONS, dtype=torch.bool)
    for net in (dense, conv):
        logits, value = net(obs, mask)
        assert logits.shape == (5, NUM_ACTIONS) and value.shape == (5,)
    with pytest.raises(ValueError, match="cnn_channels must be >= 0"):
        ActorCritic(cnn_channels=-1)


def test_the_shipped_convolutional_policy_still_loads_and_plays():
    net, meta = load_policy(ROOT / "checkpoints" / "policy-2-4p.zip")
    assert meta["network"]["cnn_channels"] > 0 and net.torso.wall is not None
    obs, mask = torch.zeros(2, OBS_SIZE), torch.zeros(2, NUM_ACTIONS, dtype=torch.bool)
    mask[:, 7] = True
    logits, _ = net(obs, mask)
    assert logits.argmax(dim=-1).tolist() == [7, 7]


def _random_decisions(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    obs = rng.random((n, OBS_SIZE), dtype=np.float32)
    mask = rng.random((n, NUM_ACTIONS)) < 0.1
    mask[:, 0] = True
    return obs, mask


def test_a_batch_of_decisions_is_stored_as_the_same_decisions_one_at_a_time():
    """``act_many`` and ``act`` build the same trajectories, whatever the interleaving of seats,
    rewards, ends and rollout cuts (and past the initial capacity)."""
    rng = np.random.default_rng(5)
    one, many = SeatTrajectories(capacity=3), SeatTrajectories(capacity=3)
    seats = [4, 5, 8, 9, 70]  # seat ids (a slot times 4 plus the seat); 70 grows the seat table
    rollouts: list[tuple] = []
    for step in range(60):
        movers = sorted(rng.choice(len(seats), size=int(rng.integers(1, 4)), replace=False).tolist())
        keys = [seats[i] for i in movers]
        obs, mask = _random_decisions(rng, len(keys))
        actions = rng.integers(0, NUM_ACTIONS, len(keys))
        logprobs, values = rng.normal(size=len(keys)).astype(np.float32), rng.normal(size=len(keys))
        for i, key in enumerate(keys):
            one.act(key, obs[i], mask[i], int(actions[i]), float(logprobs[i]), float(values[i]))
        many.act_many(np.array(keys), obs, mask, actions, logprobs, values.astype(np.float32))
        for key in seats:
            reward = float(rng.normal())
            one.reward(key, reward)
            many.reward(key, reward)
        if step % 17 == 16:  # a game ends: every seat of it closes
            for key in seats[2:]:
                one.end(key)
                many.end(key)
        assert one.num_finished == many.num_finished
        if step % 11 == 10:
            rollouts.append((one.take(GAMMA, LAM), many.take(GAMMA, LAM)))
    rollouts.append((one.take(GAMMA, LAM), many.take(GAMMA, LAM)))
    assert sum(len(a) for a, _ in rollouts) > 100
    for a, b in rollouts:
        for name in ("obs", "masks", "actions", "logprobs", "values", "advantages", "returns"):
            np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-6, atol=1e-6)


def test_gumbel_max_sampling_draws_from_the_masked_softmax():
    """20,000 seeded draws from fixed logits: every frequency within 1.5 points of its
    probability, and an illegal action never drawn."""
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0, 3.0, 0.5] + [0.0] * (NUM_ACTIONS - 6)])

    class Fixed(torch.nn.Module):
        def forward(self, obs, mask):
            from island_fortress_env.agents.network import masked_logits

            n = obs.shape[0]
            return masked_logits(logits.expand(n, -1), mask), torch.zeros(n)

    mask = np.zeros((20_000, NUM_ACTIONS), bool)
    mask[:, :4] = True  # action 4 has the largest logit but is illegal
    obs = np.zeros((20_000, OBS_SIZE), np.float32)
    actions, logprobs, _ = sample_actions(Fixed(), obs, mask, torch.Generator().manual_seed(3))
    probs = torch.softmax(logits[0, :4], dim=0).numpy()
    counts = np.bincount(actions, minlength=NUM_ACTIONS)
    assert counts[4:].sum() == 0
    assert np.abs(counts[:4] / 20_000 - probs).max() < 0.015
    np.testing.assert_allclose(np.exp(logprobs), probs[actions], rtol=1e-5)
    again, _, _ = sample_actions(Fixed(), obs, mask, torch.Generator().manual_seed(3))
    assert np.array_equal(actions, again)  # the run's generator alone decides


def test_the_imitation_stops_at_its_deadline_and_says_how_much_it_fitted():
    data = collect_demonstrations(2, {}, 4, seed=1)
    net = ActorCritic(cnn_channels=0, hidden=8)
    whole = imitate(net, data, epochs=2, batch_size=16, learning_rate=1e-3)
    assert whole["fitted"] == 2 * whole["samples"] and not whole["stopped_early"]
    cut = imitate(net, data, epochs=2, batch_size=16, learning_rate=1e-3, deadline=time.monotonic())
    assert cut["stopped_early"] and cut["fitted"] == 16  # the batch under way, then stop
    assert len(cut["epochs"]) == 1


def _tiny_run(tmp_path: Path, *extra: str) -> NativeConfig:
    return load_config(
        ROOT / "configs" / "default.yaml",
        [
            "pretrain.games=6",
            "train.total_decisions=300",
            "train.rollout_decisions=150",
            "train.games_per_collector=3",
            "train.workers=0",
            "train.pipelined=false",
            "ppo.minibatch_size=50",
            "policy.hidden=16",
            "eval.every=0",
            "train.fit_threads=false",  # the configured threads, however busy the machine
            "eval.final_games=1",
            "eval.opponents=[random]",
            "logging.progress_bar=false",
            f"logging.runs_dir={tmp_path / 'runs'}",
            f"logging.checkpoints_dir={tmp_path / 'ckpt'}",
            *extra,
        ],
        schema=NativeConfig,
    )


def test_a_run_prints_what_each_phase_got(tmp_path, capsys):
    train_native(_tiny_run(tmp_path))
    out = capsys.readouterr().out
    summary = out[out.index("this run's phases") :]
    assert re.search(r"imitation +5 games, ([\d,]+) of \1 decisions fitted", summary)  # 6 by 24:2:2
    assert re.search(r"PPO +3\d\d decisions in \d+ s \([\d,]+ decisions/s, 2 updates\)", summary)
    assert "final evaluation" in summary and "1 games per table and opponent" in summary


def test_the_imitation_gets_only_its_share_of_the_time_cap(tmp_path, capsys):
    """A share of under a millisecond (less than playing the teacher's games takes): the fit stops
    after its first batch, and PPO still gets its decisions."""
    cfg = _tiny_run(tmp_path, "pretrain.max_share=0.00001", "train.max_minutes=1", "pretrain.batch_size=8")
    train_native(cfg)
    out = capsys.readouterr().out
    fitted, played = re.search(r"([\d,]+) of ([\d,]+) decisions fitted", out).groups()  # type: ignore[union-attr]
    assert int(fitted.replace(",", "")) < int(played.replace(",", ""))
    assert "(stopped at its share of train.max_minutes, 0 s)" in out
    assert re.search(r"PPO +3\d\d decisions in", out)


def test_the_imitation_share_is_checked():
    with pytest.raises(Exception, match=r"pretrain\.max_share"):
        load_config(ROOT / "configs" / "default.yaml", ["pretrain.max_share=0"], schema=NativeConfig)


def test_the_learning_race_trains_and_evaluates_one_leg(tmp_path):
    from island_fortress_env.training.bench_training import PREVIOUS_DEFAULT, race_leg

    assert "policy.cnn_channels=32" in PREVIOUS_DEFAULT
    small = ["pretrain.games=4", "train.workers=0", "train.pipelined=false", "train.rollout_decisions=64",
             "train.games_per_collector=2", "ppo.minibatch_size=32", "train.fit_threads=false"]  # fmt: skip
    leg = race_leg(0.1, str(tmp_path), [*PREVIOUS_DEFAULT, *small, "policy.cnn_channels=2"], 1, 0)
    assert leg["decisions"] >= 64
    assert {f"win_rate_vs_heuristic_{n}p" for n in (2, 3, 4)} <= set(leg)
    assert leg["curves"] == {}


def test_the_learning_races_curves_are_its_checkpoints_evaluated_after_the_run(tmp_path):
    """A point every 64 decisions and the last one, against decisions and against the seconds the
    run had taken; plotted, one line per leg."""
    from island_fortress_env.training.bench_training import race_leg
    from island_fortress_env.training.plot_curves import plot_race

    small = ["pretrain.games=2", "train.rollout_decisions=64", "train.games_per_collector=2",
             "ppo.minibatch_size=32", "policy.hidden=8", "train.fit_threads=false"]  # fmt: skip
    leg = race_leg(0.03, str(tmp_path), small, 1, 0, curve_every=64)
    points = leg["curves"]["eval/win_rate_vs_heuristic_2p"]
    steps = [step for step, _ in points]
    assert len(points) >= 2 and steps == sorted(steps) and steps[-1] == leg["decisions"]
    seconds = [s for s, _ in leg["curves"]["eval_time/win_rate_vs_heuristic_4p"]]
    assert seconds == sorted(seconds) and seconds[0] > 0
    out = plot_race([{"name": "default", **leg}], tmp_path / "race.png")
    assert out.stat().st_size > 10_000


def test_the_throughput_benchmark_measures_the_trainers_asked_for_and_their_ratios(monkeypatch, capsys):
    """``--trainers``: only those trainers run, and the ratios are the default's to each other one."""
    from island_fortress_env.training import bench_training

    ran = []

    def fake(runner, seconds, overrides=(), busy=False, checkout=None):
        ran.append((runner, tuple(overrides)))
        rate = 100.0 if "policy.cnn_channels=32" in overrides else 1000.0
        return {"trainer": runner, "decisions": rate, "wall_s": 1.0, "cpu_s": 2.0, "run_s": 1.0,
                "decisions_per_second": rate, "cpu_utilisation": 1.0, "decisions_per_cpu_second": rate / 2,
                "cores": 2}  # fmt: skip

    monkeypatch.setattr(bench_training, "measure", fake)
    assert cli.main(["bench-training", "--trainers", "previous", "default", "--seconds", "1"]) == 0
    assert [runner for runner, _ in ran] == ["native", "native"]
    out = capsys.readouterr().out
    assert "default / previous default: 10.0x" in out and "sb3" not in out


def test_the_busy_row_is_the_default_beside_one_busy_process_and_its_share_of_alone(monkeypatch, capsys):
    from island_fortress_env.training import bench_training

    ran = []

    def fake(runner, seconds, overrides=(), busy=False, checkout=None):
        ran.append(busy)
        rate = 600.0 if busy else 1000.0
        return {"trainer": runner, "decisions": rate, "wall_s": 1.0, "cpu_s": 2.0, "run_s": 1.0,
                "decisions_per_second": rate, "cpu_utilisation": 1.0, "decisions_per_cpu_second": rate / 2,
                "cores": 2}  # fmt: skip

    monkeypatch.setattr(bench_training, "measure", fake)
    assert cli.main(["bench-training", "--trainers", "default", "busy", "--seconds", "1"]) == 0
    assert ran == [False, True]
    assert "default beside 1 busy process / alone: 60%" in capsys.readouterr().out


def _checkout(root: Path) -> Path:
    """A directory laid out as an installed checkout (what ``--against`` checks for)."""
    (root / "training").mkdir(parents=True)
    (root / "training" / "bench_training.py").write_text("")
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / ".venv" / "bin" / "python").write_text("")
    return root


def test_against_another_checkout_adds_its_default_alone_and_busy_and_the_like_for_like_ratios(
    monkeypatch, capsys, tmp_path
):
    from island_fortress_env.training import bench_training

    other = _checkout(tmp_path / "old")
    ran = []

    def fake(runner, seconds, overrides=(), busy=False, checkout=None):
        ran.append((busy, checkout))
        rate = (250.0 if checkout else 1000.0) * (0.5 if busy else 1.0)
        return {"trainer": runner, "decisions": rate, "wall_s": 1.0, "cpu_s": 2.0, "run_s": 1.0,
                "decisions_per_second": rate, "cpu_utilisation": 1.0, "decisions_per_cpu_second": rate / 2,
                "cores": 2}  # fmt: skip

    monkeypatch.setattr(bench_training, "measure", fake)
    argv = ["bench-training", "--trainers", "default", "busy", "--seconds", "1", "--against", str(other)]
    assert cli.main(argv) == 0
    assert ran == [(False, None), (True, None), (False, str(other)), (True, str(other))]
    out = capsys.readouterr().out
    name = "default at old"  # not a git checkout: named by its folder
    assert f"native, {name}, 1 busy" in out
    assert f"default / {name}: 4.0x" in out and f"default / {name}, each beside 1 busy process: 4.0x" in out
    assert (
        f"{name} beside 1 busy process / alone: 50%" in out
        and "default beside 1 busy process / alone: 50%" in out
    )


@pytest.mark.parametrize("missing", ["training/bench_training.py", ".venv/bin/python"])
def test_against_a_folder_that_is_no_installed_checkout_is_one_line_and_exit_2(tmp_path, capsys, missing):
    other = _checkout(tmp_path / "old")
    (other / missing).unlink()
    with pytest.raises(SystemExit) as exit_:
        cli.main(["bench-training", "--seconds", "1", "--against", str(other)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--against {other}: not" in err


def test_another_checkouts_run_is_its_own_benchmarks_native_run_in_its_own_python(tmp_path):
    """``run_other`` runs ``OTHER_RUN`` in the checkout's Python, in the checkout: here a stand-in
    whose ``run_native`` returns what it was asked."""
    from island_fortress_env.training.bench_training import run_other

    other = _checkout(tmp_path / "old")
    package = other / "island_fortress_env" / "training"
    package.mkdir(parents=True)
    (other / "island_fortress_env" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "bench_training.py").write_text(
        "import os\n"
        "def run_native(seconds, workdir, overrides):\n"
        "    return {'seconds': seconds, 'overrides': overrides, 'cwd': os.getcwd()}\n"
    )
    python = other / ".venv" / "bin" / "python"
    python.unlink()
    python.symlink_to(sys.executable)
    result = run_other(other, 2.5)
    assert result == {"seconds": 2.5, "overrides": [], "cwd": str(other), "commit": "old"}
    (package / "bench_training.py").write_text(
        "def run_native(seconds, workdir, overrides):\n    raise OSError('disk full')\n"
    )
    with pytest.raises(RuntimeError, match=r"the trainer at .*old \(old\) failed: OSError: disk full"):
        run_other(other, 2.5)


def _children() -> set[int]:
    """The pids of this process's children (Linux: /proc)."""
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        found |= {int(pid) for pid in (task / "children").read_text().split()}
    return found


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads the children from /proc")
def test_one_busy_process_keeps_a_cpu_busy_while_the_block_runs_and_is_gone_after():
    from island_fortress_env.training.bench_training import one_busy_process

    before = _children()
    with one_busy_process():
        (busy,) = _children() - before
        start = _cpu_ticks(busy)
        time.sleep(0.5)
        assert _cpu_ticks(busy) - start > 0.1 * os.sysconf("SC_CLK_TCK")  # it spins, not sleeps
    assert busy not in _children()


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA GPU is here: --gpu would run")
def test_the_gpu_benchmark_without_a_gpu_is_one_line_and_exit_2(capsys):

    assert cli.main(["bench-training", "--gpu", "--seconds", "1"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "train.device" in err and "no CUDA GPU" in err
