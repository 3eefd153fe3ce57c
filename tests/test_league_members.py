"""The population a policy trains against (``league.members``: earlier policies and best responses
to them, kept in the snapshot pool for the whole run, as in PSRO), and where a best response
departs from the policy it answers."""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_runs import SMALL, members_config, same_weights, small_checkpoint

from island_fortress_env.agents.checkpoint import CheckpointError, load_policy
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.training.config import TrainConfigError
from island_fortress_env.training.league import (
    League,
    member_name,
)
from island_fortress_env.training.plot_curves import read_scalars

ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- the population
# ``league.members``: checkpoints (earlier policies, best responses to them) that stay in the
# trainer's snapshot pool for the whole run, as in PSRO.


def test_members_join_the_pool_with_their_own_weights_and_never_leave_it(tmp_path):
    paths = [small_checkpoint(tmp_path / f"m{i}.zip", seed=i) for i in range(2)]
    cfg = members_config(f"league.members=[{paths[0]}, {paths[1]}]", "league.pool_size=2")
    learner = ActorCritic(**SMALL)
    league = League.for_run(cfg, learner, 0)
    members = {e.member: e for e in league.pool.values() if e.member}
    assert sorted(members) == sorted(str(p) for p in paths)
    for path in paths:
        assert same_weights(members[str(path)].state_dict, load_policy(path)[0].state_dict())
    assert len(league.pool) == 3  # the two members and the learner's first snapshot
    for step in range(1, 6):  # snapshots come and go; the members stay
        league.add(learner, step)
    snapshots = sorted(e.step for e in league.pool.values() if not e.member)
    assert snapshots == [4, 5]  # the newest pool_size snapshots
    assert {e.member for e in league.pool.values() if e.member} == set(members)


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("checkpoints/policy-2-4p.zip", "policy-2-4p"),
        ("checkpoints/br-2p/final.zip", "br-2p"),
        ("out/checkpoints/round-1/latest.zip", "round-1"),
        ("final.zip", "final"),
    ],
)
def test_a_member_goes_by_its_runs_name_when_it_is_a_runs_own_checkpoint(path, name):
    assert member_name(path) == name


def test_a_member_that_still_beats_the_learner_is_drawn_more_and_its_rate_is_reported(tmp_path):
    strong = small_checkpoint(tmp_path / "strong.zip", seed=0)
    weak = small_checkpoint(tmp_path / "weak.zip", seed=1)
    cfg = members_config(f"league.members=[{strong}, {weak}]", "league.floor=0")
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
        (("league.members=[3]",), r"league\.members\[0\]: expected str, got 3$"),
        (("league.members=[missing.zip]",), r"league\.members.*no such checkpoint.*missing\.zip"),
        (("league.members=[{m}]", "league.opponent=heuristic", "league.share=1"), r"league\.opponent"),
        (("league.members=[{m}]", "league.snapshot=0"), r"league\.snapshot > 0"),
        (("league.members=[{m}]", "league.share=0"), r"league\.share > 0"),
    ],
)
def test_bad_members_are_a_config_error_that_names_the_key(overrides, message, tmp_path):
    member = small_checkpoint(tmp_path / "m.zip", seed=0)
    with pytest.raises(TrainConfigError, match=message):
        members_config(*(o.format(m=member) for o in overrides))


def test_a_member_of_another_network_is_refused_by_name(tmp_path):
    member = small_checkpoint(tmp_path / "m.zip", seed=0)
    cfg = members_config(f"league.members=[{member}]", "policy.hidden=16")
    with pytest.raises(CheckpointError, match="hidden"):
        League.for_run(cfg, ActorCritic(**{**SMALL, "hidden": 16}), 0)


def test_a_run_with_members_plays_them_and_logs_how_often_it_finishes_ahead(tmp_path):
    from island_fortress_env.training.ppo import train_native

    member = small_checkpoint(tmp_path / "past.zip", seed=3)
    cfg = members_config(
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
        "train.rollout_decisions=2048",  # smaller games and rollouts than QUICK's: the games end
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


# --------------------------------------------------------------------------- where a best response departs


def _departures_example():
    import importlib.util

    path = ROOT / "examples" / "departures.py"
    spec = importlib.util.spec_from_file_location("examples_departures", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return example


def test_an_agent_never_departs_from_itself_and_departures_are_counted_by_family(tmp_path):
    """examples/departures.py: a greedy checkpoint asked in its own place always agrees; the random
    player, compared with it, departs somewhere, and never more often than it decides."""
    example = _departures_example()
    policy = str(small_checkpoint(tmp_path / "small.zip"))
    decisions, differ = example.departures(policy, policy, players=2, games=2, seed=5)
    assert sum(decisions.values()) > 50 and sum(differ.values()) == 0
    decisions, differ = example.departures("random", policy, players=3, games=3, seed=5)
    assert "bid" in decisions and "role" in decisions
    assert sum(differ.values()) > 0 and all(differ[f] <= n for f, n in decisions.items())
