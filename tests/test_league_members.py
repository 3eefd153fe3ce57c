"""``league.members``: checkpoints that join the native trainer's snapshot pool for the whole run
(the population of a PSRO-style run: earlier policies and best responses to them)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from island_fortress_env.agents.checkpoint import CheckpointError, load_policy, save_policy
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.env.observation import OBS_SIZE
from island_fortress_env.training.config import NativeConfig, TrainConfigError, load_config
from island_fortress_env.training.league import League
from island_fortress_env.training.plot_curves import read_scalars

SMALL = {
    "obs_size": OBS_SIZE,
    "num_actions": NUM_ACTIONS,
    "cnn_channels": 2,
    "hidden": 8,
    "head_activation": "relu",
}
SMALL_OVERRIDES = ("policy.cnn_channels=2", "policy.hidden=8")


def _checkpoint(path: Path, seed: int) -> Path:
    torch.manual_seed(seed)
    return save_policy(path, ActorCritic(**SMALL), SMALL, {})


def _config(*overrides: str) -> NativeConfig:
    cfg: NativeConfig = load_config(None, [*SMALL_OVERRIDES, *overrides], schema=NativeConfig)
    return cfg


def _same_weights(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_members_join_the_pool_with_their_own_weights_and_never_leave_it(tmp_path):
    paths = [_checkpoint(tmp_path / f"m{i}.zip", seed=i) for i in range(2)]
    cfg = _config(f"league.members=[{paths[0]}, {paths[1]}]", "league.pool_size=2")
    learner = ActorCritic(**SMALL)
    league = League.for_run(cfg, learner, 0)
    members = {e.member: e for e in league.pool.values() if e.member}
    assert sorted(members) == sorted(str(p) for p in paths)
    for path in paths:
        assert _same_weights(members[str(path)].state_dict, load_policy(path)[0].state_dict())
    assert len(league.pool) == 3  # the two members and the learner's first snapshot
    for step in range(1, 6):  # snapshots come and go; the members stay
        league.add(learner, step)
    snapshots = sorted(e.step for e in league.pool.values() if not e.member)
    assert snapshots == [4, 5]  # the newest pool_size snapshots
    assert {e.member for e in league.pool.values() if e.member} == set(members)


def test_a_member_that_still_beats_the_learner_is_drawn_more_and_its_rate_is_reported(tmp_path):
    strong, weak = (_checkpoint(tmp_path / f"{n}.zip", seed=i) for i, n in enumerate(("strong", "weak")))
    cfg = _config(f"league.members=[{strong}, {weak}]", "league.floor=0")
    league = League.for_run(cfg, ActorCritic(**SMALL), 0)
    ids = {e.member: sid for sid, e in league.pool.items() if e.member}
    for _ in range(30):
        league.record(ids[str(strong)], 0.0)
        league.record(ids[str(weak)], 1.0)
    p = league.probabilities()
    assert p[ids[str(strong)]] > 10 * p[ids[str(weak)]]
    rates = league.member_win_rates()
    assert rates[str(strong)] == pytest.approx(1 / 32) and rates[str(weak)] == pytest.approx(31 / 32)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (("league.members=ckpt.zip",), r"league\.members.*expected list"),
        (("league.members=[3]",), r"league\.members.*list of checkpoint paths"),
        (("league.members=[missing.zip]",), r"league\.members.*no such checkpoint.*missing\.zip"),
        (("league.members=[{m}]", "league.opponent=heuristic", "league.share=1"), r"league\.opponent"),
        (("league.members=[{m}]", "league.snapshot=0"), r"league\.snapshot > 0"),
        (("league.members=[{m}]", "league.share=0"), r"league\.share > 0"),
    ],
)
def test_bad_members_are_a_config_error_that_names_the_key(overrides, message, tmp_path):
    member = _checkpoint(tmp_path / "m.zip", seed=0)
    with pytest.raises(TrainConfigError, match=message):
        _config(*(o.format(m=member) for o in overrides))


def test_a_member_of_another_network_is_refused_by_name(tmp_path):
    member = _checkpoint(tmp_path / "m.zip", seed=0)
    cfg = _config(f"league.members=[{member}]", "policy.hidden=16")
    with pytest.raises(CheckpointError, match="hidden"):
        League.for_run(cfg, ActorCritic(**{**SMALL, "hidden": 16}), 0)


def test_a_run_with_members_plays_them_and_logs_how_often_it_finishes_ahead(tmp_path):
    from island_fortress_env.training.ppo import train_native

    member = _checkpoint(tmp_path / "past.zip", seed=3)
    cfg = _config(
        f"league.members=[{member}]",
        "league.share=1.0",
        "league.snapshot=1.0",
        "league.heuristic=0",
        "league.random=0",
        "league.snapshot_every=100000",
        "league.pool_size=1",
        "pretrain.games=0",
        "tables.three=0",
        "tables.four=0",
        "train.total_decisions=8192",
        "train.rollout_decisions=2048",
        "train.games_per_collector=16",
        "train.workers=0",
        "train.pipelined=false",
        "train.max_minutes=0",
        "ppo.minibatch_size=256",
        "eval.every=0",
        "eval.final_games=0",
        "logging.progress_bar=false",
        f"logging.runs_dir={tmp_path / 'runs'}",
        f"logging.checkpoints_dir={tmp_path / 'ckpt'}",
        "run_name=members",
    )
    train_native(cfg)
    scalars = read_scalars(tmp_path / "runs" / "members")
    curve = scalars["league/ahead_of_member_0_past"]
    assert curve and all(0.0 < rate < 1.0 for _step, rate in curve)
    assert curve[-1][1] != 0.5  # games against the member finished and were counted
