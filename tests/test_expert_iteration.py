"""The warm start's teacher (``pretrain.teacher``) and the imitation-only run
(``train.total_decisions=0``): one step of expert iteration is a run that starts from a checkpoint
and imitates a search player over that checkpoint."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from island_fortress_env.agents.checkpoint import load_policy, read_metadata
from island_fortress_env.training import pretrain
from island_fortress_env.training.config import NativeConfig, TrainConfigError, load_config

TINY = (
    "policy.cnn_channels=4",
    "policy.hidden=16",
    "pretrain.epochs=1",
    "pretrain.tables={two: 1}",
    "train.total_decisions=0",
    "train.workers=1",
    "eval.every=0",
    "eval.final_games=0",
    "logging.progress_bar=false",
)


def _config(base: Path, run_name: str, *extra: str) -> NativeConfig:
    dirs = (f"logging.runs_dir={base / 'runs'}", f"logging.checkpoints_dir={base / 'ckpt'}")
    return load_config(None, [f"run_name={run_name}", *TINY, *dirs, *extra], schema=NativeConfig)


def _differ(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    pairs = zip(a.state_dict().values(), b.state_dict().values(), strict=True)
    return any(not torch.equal(x, y) for x, y in pairs)


@pytest.fixture(scope="module")
def heuristic_clone(tmp_path_factory) -> tuple[Path, dict[str, torch.Tensor]]:
    """A run that only imitates two heuristic games, and the weights its imitation ended with."""
    from island_fortress_env.training.ppo import train_native

    imitated: dict[str, torch.Tensor] = {}
    real = pretrain.imitate

    def imitate(net, *args, **kwargs):
        report = real(net, *args, **kwargs)
        imitated.update({k: v.detach().clone() for k, v in net.state_dict().items()})
        return report

    base = tmp_path_factory.mktemp("exit")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pretrain, "imitate", imitate)
        final = Path(train_native(_config(base, "clone", "pretrain.games=2")))
    return final, imitated


def test_a_run_of_zero_decisions_only_imitates(heuristic_clone):
    final, imitated = heuristic_clone
    assert read_metadata(final)["num_timesteps"] == 0
    net, _ = load_policy(final)
    assert imitated and all(torch.equal(v, imitated[k]) for k, v in net.state_dict().items())


def test_a_search_teacher_over_the_starting_checkpoint_is_one_step_of_expert_iteration(
    heuristic_clone, tmp_path, monkeypatch
):
    from island_fortress_env.training.ppo import train_native

    jobs: list[tuple] = []
    real = pretrain.starmap

    def record(function, job_list, processes):
        jobs.extend(job_list)
        return real(function, job_list, processes)

    monkeypatch.setattr(pretrain, "starmap", record)
    clone, _ = heuristic_clone
    teacher = f"search:{clone}:2"
    step = ("pretrain.games=3", f"pretrain.teacher={teacher}", f"policy.init_from={clone}")
    final = train_native(_config(tmp_path, "exit-1", *step))

    # every game is the search player's, in 1 + train.workers processes, and no deal is played
    # twice: the parts number their games 0-1 and 2 (a game's deal follows from the table's seed
    # and its number)
    assert [job[4] for job in jobs] == [teacher, teacher]
    assert [(job[2], job[3], job[-1]) for job in jobs] == [(2, jobs[0][3], 0), (1, jobs[0][3], 2)]
    start, _ = load_policy(clone)
    after, _ = load_policy(final)
    assert read_metadata(final)["num_timesteps"] == 0
    assert _differ(start, after)


def test_the_teacher_and_an_imitation_only_run_are_checked():
    with pytest.raises(TrainConfigError, match=r"pretrain\.teacher: unknown agent 'nobody'"):
        load_config(None, ["pretrain.teacher=nobody"], schema=NativeConfig)
    with pytest.raises(TrainConfigError, match=r"train\.total_decisions: must be >= 1 \(or 0 with pretrain"):
        load_config(None, ["train.total_decisions=0", "pretrain.games=0"], schema=NativeConfig)
    cfg = load_config(None, ["train.total_decisions=0", "pretrain.games=1", "pretrain.teacher=search:8"],
                      schema=NativeConfig)  # fmt: skip
    assert cfg.pretrain.teacher == "search:8"
