"""``train.device``: the native trainer's update on a GPU (``cuda``), the rest of the run on the CPU.

The CPU path is the one every other test runs (bit-reproducible); a machine with no CUDA GPU
refuses ``cuda`` with one clear error. The run on a GPU itself is tested where torch sees one
(skipped elsewhere): its first update computes what the CPU's does, and the CPU copy of the
network, which the collectors, the league and the checkpoints read, follows the GPU's."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from tiny_runs import run_command

from island_fortress_env.agents.checkpoint import load_policy, load_training_state
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.training.config import NativeConfig, TrainConfigError, load_config
from island_fortress_env.training.plot_curves import read_scalars
from island_fortress_env.training.ppo import check_device, learner_copy, train_native, update_dtype
from island_fortress_env.training.weights import network_kwargs

CUDA = torch.cuda.is_available()
# A tiny run: two updates of 512 decisions, in the main process, no evaluation.
TINY = (
    "pretrain.games=0", "train.total_decisions=1024", "train.rollout_decisions=512",
    "train.games_per_collector=4", "train.workers=0", "train.pipelined=false",
    "train.checkpoint_every=1000000", "train.max_minutes=0", "ppo.minibatch_size=128",
    "ppo.n_epochs=2", "ppo.target_kl=0", "policy.cnn_channels=4", "policy.hidden=16",
    "eval.every=0", "eval.final_games=0", "train.update_dtype=float32",
)  # fmt: skip


def _config(tmp_path: Path, name: str, *overrides: str) -> NativeConfig:
    base = [f"run_name={name}", f"logging.runs_dir={tmp_path / 'runs'}"]
    base += [f"logging.checkpoints_dir={tmp_path / 'ckpt'}", "logging.progress_bar=false"]
    cfg: NativeConfig = load_config(None, [*base, *TINY, *overrides], schema=NativeConfig)
    return cfg


@pytest.mark.parametrize("device", ["gpu", "cuda:x", "CUDA", "cuda:-1", "mps", "cuda:99999999999999999999"])
def test_a_device_that_is_not_cpu_or_cuda_is_a_config_error(device):
    says = rf"train\.device: must be 'cpu', 'cuda' or 'cuda:N', not '{device}'"
    with pytest.raises(TrainConfigError, match=says):
        load_config(None, [f"train.device={device}"], schema=NativeConfig)


def test_on_the_cpu_the_update_trains_the_network_itself():
    assert load_config(None, [], schema=NativeConfig).train.device == "cpu"
    net = ActorCritic(cnn_channels=2, hidden=8)
    assert learner_copy(net, "cpu") is net


@pytest.mark.skipif(CUDA, reason="this machine has a CUDA GPU")
def test_without_a_gpu_cuda_is_refused_with_one_line_and_exit_2(tmp_path, capsys):
    with pytest.raises(TrainConfigError, match=r"train\.device: 'cuda': this torch sees no CUDA GPU"):
        check_device("cuda")
    cfg = load_config(None, ["train.device=cuda", "train.update_dtype=auto"], schema=NativeConfig)
    assert update_dtype(cfg) == update_dtype(cfg, "cpu")  # auto: nothing to ask a GPU that is not there
    shipped = str(Path(__file__).resolve().parents[1] / "checkpoints" / "policy-2-4p.zip")
    for argv in (
        ["train", "train.device=cuda", f"logging.runs_dir={tmp_path}"],
        ["exploit", "random", "--decisions", "100", "--out", str(tmp_path), "train.device=cuda"],
        ["psro", shipped, "--out", str(tmp_path), "train.device=cuda"],
        ["psro", shipped, "--out", str(tmp_path), "--exploit-set", "train.device=cuda"],
    ):
        code, out, err = run_command(argv, capsys)
        assert code == 2 and not out and len(err.strip().splitlines()) == 1 and "train.device" in err, argv
        assert not list(tmp_path.iterdir()), argv  # refused before any run began


@pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU")
def test_a_gpu_update_computes_what_the_cpu_update_does_and_the_cpu_copy_follows_it(tmp_path):
    """Two updates from the same seed on each device: the first update's losses agree (the same
    first rollout), and the checkpoint (the CPU copy) holds the GPU's learned weights, near the
    CPU run's and far from where both started."""
    runs, weights = {}, {}
    for device in ("cpu", "cuda"):
        cfg = _config(tmp_path, device, f"train.device={device}")
        final = train_native(cfg)
        runs[device] = read_scalars(tmp_path / "runs" / device)
        weights[device] = load_policy(final)[0].state_dict()
    for key in ("losses/policy_loss", "losses/value_loss", "losses/entropy"):
        (cpu_step, cpu_loss), (gpu_step, gpu_loss) = runs["cpu"][key][0], runs["cuda"][key][0]
        assert cpu_step == gpu_step and gpu_loss == pytest.approx(cpu_loss, rel=1e-2, abs=1e-4)
    torch.manual_seed(cfg.seed)  # the weights both runs started from
    start = ActorCritic(**network_kwargs(cfg)).state_dict()

    def distance(a: dict, b: dict) -> float:
        return sum(float((a[k].float() - b[k].float()).pow(2).sum()) for k in a) ** 0.5

    assert distance(weights["cuda"], weights["cpu"]) < 0.1 * distance(weights["cpu"], start)
    state = load_training_state(final)  # the GPU optimizer's state, read back on the CPU
    assert state is not None and all(
        t.device.type == "cpu" for s in state["optimizer"]["state"].values() for t in s.values()
    )


def test_in_one_process_the_games_are_played_on_the_learners_network_itself(tmp_path, monkeypatch):
    """EnvPool + CleanRL's shape: with ``train.workers=0`` the main process steps the batch of core
    games and its forward passes run on the learner's network (on a GPU, the GPU's), never on a
    copy. The learner is made a distinct module here (a GPU copy, on the CPU): every collection
    plays on it, not on the CPU network the checkpoints read."""
    from island_fortress_env.training import collect, ppo

    copies: list[torch.nn.Module] = []

    def distinct_copy(net, device):
        import copy

        copies.append(copy.deepcopy(net))
        return copies[-1]

    played: list[torch.nn.Module] = []
    real = collect.Collector.collect
    monkeypatch.setattr(ppo, "learner_copy", distinct_copy)
    monkeypatch.setattr(
        collect.Collector, "collect", lambda self, net, n: played.append(net) or real(self, net, n)
    )
    train_native(_config(tmp_path, "one-process"))
    assert len(copies) == 1 and len(played) == 2
    assert all(net is copies[0] for net in played)
