"""The native multi-agent PPO trainer (training/ppo.py): per-seat bookkeeping, masks, a tiny run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from native_runs import assert_same, record_updates, tiny_config

from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.env.observation import OBS_SIZE
from island_fortress_env.players.seat_policies import sample_actions
from island_fortress_env.training.collect import Collector
from island_fortress_env.training.config import NativeConfig, TrainConfigError, load_config
from island_fortress_env.training.league import League
from island_fortress_env.training.trajectories import SeatTrajectories

ROOT = Path(__file__).resolve().parents[1]
GAMMA, LAM = 0.9, 0.8
A, B = 0, 5  # two seats' ids (a slot times 4 plus the seat)


def _obs(i: float) -> np.ndarray:
    return np.full(OBS_SIZE, i, dtype=np.float32)


def _act(book: SeatTrajectories, seat: int, i: int, value: float) -> None:
    mask = np.zeros(NUM_ACTIONS, dtype=bool)
    mask[i] = True
    book.act(seat, _obs(i), mask, i, -0.1 * i, value)


# ---------------------------------------------------------------- per-seat bookkeeping


def test_a_seat_acting_twice_in_a_row_is_bootstrapped_with_its_own_next_value():
    book = SeatTrajectories()
    _act(book, A, 1, value=0.5)
    book.reward(A, 0.25)  # from A's own first move
    _act(book, A, 2, value=0.75)  # A moves again at once
    assert book.num_finished == 1
    batch = book.take(GAMMA, LAM)
    assert batch.actions.tolist() == [1]
    # one closed decision, cut before its successor: advantage = r + gamma * V(next) - V
    assert batch.advantages[0] == pytest.approx(0.25 + GAMMA * 0.75 - 0.5)
    assert batch.returns[0] == pytest.approx(0.25 + GAMMA * 0.75)
    assert batch.logprobs[0] == pytest.approx(-0.1)


def test_a_reward_on_an_opponents_move_goes_to_the_seats_last_decision():
    book = SeatTrajectories()
    _act(book, A, 1, value=0.0)
    _act(book, B, 2, value=0.0)
    book.reward(A, 0.4)  # B's move completed a row A leads
    book.reward(B, 0.1)
    _act(book, A, 3, value=0.0)
    _act(book, B, 4, value=0.0)
    batch = book.take(GAMMA, LAM)
    by_action = dict(zip(batch.actions.tolist(), batch.advantages.tolist(), strict=False))
    assert by_action == pytest.approx({1: 0.4, 2: 0.1})


def test_terminal_reward_closes_every_seat_even_when_the_game_ends_on_another_seats_move():
    book = SeatTrajectories()
    _act(book, A, 1, value=0.2)
    _act(book, A, 2, value=0.3)
    _act(book, B, 3, value=0.6)  # B makes the last move of the game
    book.reward(B, 0.05)  # B's score from that move
    book.reward(A, -1.0)  # the zero-sum outcome: A lost ...
    book.reward(B, 1.0)  # ... B won
    book.end(A)
    book.end(B)
    batch = book.take(GAMMA, LAM)
    rows = dict(
        zip(
            batch.actions.tolist(),
            zip(batch.advantages.tolist(), batch.returns.tolist(), strict=False),
            strict=False,
        )
    )
    # A: decision 2 is terminal (no bootstrap); decision 1 is bootstrapped by decision 2 via GAE
    delta2 = -1.0 - 0.3
    delta1 = 0.0 + GAMMA * 0.3 - 0.2
    assert rows[2][0] == pytest.approx(delta2)
    assert rows[1][0] == pytest.approx(delta1 + GAMMA * LAM * delta2)
    assert rows[3] == pytest.approx((1.05 - 0.6, 1.05))
    # nothing pending is left once the game has ended
    assert len(book.take(GAMMA, LAM)) == 0


def test_a_trajectory_cut_by_the_rollout_continues_in_the_next_one():
    book = SeatTrajectories()
    _act(book, A, 1, value=0.1)
    _act(book, A, 2, value=0.2)
    first = book.take(GAMMA, LAM)
    assert first.actions.tolist() == [1]
    book.reward(A, 0.5)  # arrives after the cut: belongs to decision 2
    book.end(A)
    second = book.take(GAMMA, LAM)
    assert second.actions.tolist() == [2]
    assert second.advantages[0] == pytest.approx(0.5 - 0.2)


def test_gae_matches_the_textbook_recursion():
    book = SeatTrajectories()
    values, rewards = [0.1, -0.2, 0.4, 0.3], [0.0, 0.5, -0.1, 1.0]
    for i, (v, r) in enumerate(zip(values, rewards, strict=False)):
        _act(book, A, i, value=v)
        book.reward(A, r)
    book.end(A)
    got = book.take(GAMMA, LAM).advantages
    expected, running = [], 0.0
    for t in reversed(range(4)):
        next_v = values[t + 1] if t + 1 < 4 else 0.0
        running = rewards[t] + GAMMA * next_v - values[t] + GAMMA * LAM * running
        expected.insert(0, running)
    assert got == pytest.approx(expected, abs=1e-6)
    assert SeatTrajectories().take(GAMMA, LAM).advantages.size == 0


# ---------------------------------------------------------------- masks and real games


def test_sampling_never_picks_a_masked_action():
    torch.manual_seed(0)
    net = ActorCritic(cnn_channels=4, hidden=16)
    rng = np.random.default_rng(0)
    obs = rng.random((512, OBS_SIZE), dtype=np.float32)
    masks = rng.random((512, NUM_ACTIONS)) < 0.02
    masks[np.arange(512), rng.integers(NUM_ACTIONS, size=512)] = True
    gen = torch.Generator().manual_seed(0)
    for _ in range(5):
        actions, logp, _ = sample_actions(net, obs, masks, gen)
        assert masks[np.arange(512), actions].all()
        assert np.isfinite(logp).all()


def test_collector_records_only_legal_actions_and_every_learning_seat(backend):
    cfg = tiny_config(Path("/nonexistent"), "c", "league.share=0.0")
    collector = Collector(cfg, 0, SeatTrajectories, backend=backend)
    net = ActorCritic(cnn_channels=4, hidden=16)
    rollout, finished = collector.collect(net, 1500)
    n = len(rollout)
    assert n >= 1500
    assert rollout.masks[np.arange(n), rollout.actions].all()
    assert finished, "games finished"
    # self-play: every seat learns, so a finished game hands over figures for each of its seats
    assert all(len(game.figures) == game.players for game in finished)
    assert {game.players for game in finished} <= {2, 3, 4}


def test_league_prefers_snapshots_that_beat_the_learner():
    net = ActorCritic(cnn_channels=4, hidden=16)
    league = League(pool_size=2, priority_power=2.0, floor=0.0)
    strong, weak = league.add(net, 0), league.add(net, 1)
    for _ in range(20):
        league.record(strong, 0.0)  # the learner never finishes ahead of it
        league.record(weak, 1.0)
    p = league.probabilities()
    assert p[strong] > 0.9 and p[weak] < 0.1
    league.add(net, 2)
    assert strong not in league.pool and len(league.pool) == 2


def test_native_config_errors_are_clear():
    with pytest.raises(TrainConfigError, match=r"train\.pipelined"):
        load_config(ROOT / "configs" / "default.yaml", ["train.pipelined=true"], schema=NativeConfig)
    with pytest.raises(TrainConfigError, match="tables"):
        load_config(None, ["tables.two=0", "tables.three=0", "tables.four=0"], schema=NativeConfig)
    with pytest.raises(TrainConfigError, match="unknown key"):
        load_config(None, ["ppo.n_steps=3"], schema=NativeConfig)
    with pytest.raises(TrainConfigError, match=r"ppo\.anneal_over"):
        load_config(None, ["ppo.anneal_over=hours"], schema=NativeConfig)
    with pytest.raises(TrainConfigError, match=r"ppo\.anneal_over.*max_minutes"):
        load_config(None, ["ppo.anneal_over=minutes", "train.max_minutes=0"], schema=NativeConfig)
    with pytest.raises(TrainConfigError, match=r"ppo\.anneal_power"):
        load_config(None, ["ppo.anneal_power=0"], schema=NativeConfig)
    with pytest.raises(TrainConfigError, match=r"train\.update_dtype.*'float16'"):
        load_config(None, ["train.update_dtype=float16"], schema=NativeConfig)
    with pytest.raises(TrainConfigError, match=r"'defaults': tables\.two: must be >= 0, not -1$"):
        load_config(None, ["tables.two=-1"], schema=NativeConfig)
    with pytest.raises(TrainConfigError, match=r"'defaults': tables: weights must not all be zero"):
        load_config(None, ["tables.two=0", "tables.three=0", "tables.four=0"], schema=NativeConfig)
    with pytest.raises(TrainConfigError, match=r"pretrain\.tables: unknown key 'five'; use 'two', 'three'"):
        load_config(None, ["pretrain.tables={five: 1}"], schema=NativeConfig)
    with pytest.raises(TrainConfigError, match=r"pretrain\.tables\.two: must be >= 0, not -1$"):
        load_config(None, ["pretrain.tables={two: -1}"], schema=NativeConfig)
    with pytest.raises(TrainConfigError, match=r"pretrain\.tables: weights must not all be zero"):
        load_config(None, ["pretrain.tables={two: 0}"], schema=NativeConfig)


def test_the_warm_start_splits_its_games_by_pretrain_tables_else_by_the_runs_tables(monkeypatch):
    from island_fortress_env.agents.network import ActorCritic
    from island_fortress_env.training import pretrain

    played: list[tuple[int, int]] = []  # (players, games) of each table size imitated
    real = pretrain.collect_demonstrations

    def record(players, options, games, *args, **kwargs):
        played.append((players, games))
        return real(players, options, games, *args, **kwargs)

    monkeypatch.setattr(pretrain, "collect_demonstrations", record)
    monkeypatch.setattr(pretrain, "starmap", lambda f, jobs, _processes: [record(*job) for job in jobs])
    net = ActorCritic(cnn_channels=4, hidden=16)
    for overrides, expected in [
        (["pretrain.tables={two: 3, four: 1}"], {2: 6, 4: 2}),  # a size left out gets none
        (["tables.three=0"], {2: 4, 4: 4}),  # no pretrain.tables: the run's own weights
    ]:
        played.clear()
        base = ["pretrain.games=8", "pretrain.epochs=1", "train.workers=0", "train.pipelined=false"]
        cfg = load_config(None, [*base, *overrides], schema=NativeConfig)
        pretrain.warm_start(net, cfg, writer=None)
        totals: dict[int, int] = {}
        for players, games in (p for p in played if p[1]):
            totals[players] = totals.get(players, 0) + games
        assert totals == expected, overrides


@pytest.mark.parametrize("name", ["default.yaml", "policy-2-4p.yaml"])
def test_shipped_native_configs_are_valid(name):
    cfg = load_config(ROOT / "configs" / name, schema=NativeConfig)
    # one process that plays then learns on every thread, or collecting processes pipelined
    assert (cfg.train.workers == 0 and not cfg.train.pipelined) or (
        cfg.train.pipelined and cfg.train.workers >= 1
    )
    assert all(w > 0 for w in cfg.tables.weights().values())


def test_a_bfloat16_torso_leaves_the_heads_in_float32_and_the_log_probabilities_close():
    """``train.update_dtype: bfloat16`` runs the update's forward pass under autocast: only the torso
    may round to bfloat16, so the log-probabilities PPO's ratio compares with the float32 ones
    recorded while collecting differ by far less than the clip range."""
    torch.manual_seed(0)
    net = ActorCritic(cnn_channels=8, hidden=32)
    rng = np.random.default_rng(0)
    obs = torch.from_numpy((rng.random((256, OBS_SIZE)) < 0.1).astype(np.float32))
    mask = torch.from_numpy(rng.random((256, NUM_ACTIONS)) < 0.1)
    mask[:, 0] = True
    with torch.no_grad():
        logits32, value32 = net(obs, mask)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits16, value16 = net(obs, mask)
    assert logits16.dtype == value16.dtype == torch.float32
    assert torch.equal(logits16 == torch.finfo(torch.float32).min, ~mask)  # still masked
    gap = (torch.log_softmax(logits16, -1) - torch.log_softmax(logits32, -1))[mask].abs().max()
    assert 0 < float(gap) < 0.02
    assert torch.allclose(value16, value32, atol=0.02)


# ---------------------------------------------------------------- a tiny real run


def test_tiny_run_writes_tensorboard_curves(tiny_native):
    base, _cfg, _final = tiny_native
    from island_fortress_env.training.plot_curves import read_scalars

    scalars = read_scalars(next((base / "runs").glob("tiny*")))
    for tag in (
        "losses/policy_loss",
        "losses/value_loss",
        "losses/entropy",
        "losses/approx_kl",
        "losses/clip_fraction",
        "losses/explained_variance",
        "charts/decisions_per_second",
        "eval/win_rate_vs_random_2p",
        "eval/win_rate_vs_random_3p",
        "eval/win_rate_vs_random_4p",
        "eval/openskill_mu",
        "game/score",
        "game/length",
        "pretrain/accuracy",
    ):
        assert tag in scalars, tag
    # The last weights are evaluated once: by the final evaluation, not also by a periodic one.
    (last_step, _), *_ = scalars["final_eval/win_rate_vs_random_3p"]
    periodic = [step for step, _ in scalars["eval/win_rate_vs_random_3p"]]
    assert periodic and max(periodic) < last_step


def test_tiny_run_checkpoint_loads_and_plays_every_table_size(tiny_native):
    _base, _cfg, final = tiny_native
    from island_fortress_env.agents.checkpoint import CheckpointAgent, read_metadata
    from island_fortress_env.training.evaluate import evaluate

    meta = read_metadata(final)
    assert meta["num_timesteps"] >= 600 and meta["trainer"] == "native-ppo"
    assert meta["config"]["policy"]["cnn_channels"] == 4 and "versions" in meta
    CheckpointAgent(final)
    for n in (2, 3, 4):
        result = evaluate([str(final)] + ["random"] * (n - 1), games=n, seed=1)
        assert result["agents"][0]["games"] == n


def test_resume_starts_from_where_an_uninterrupted_run_was(tmp_path, monkeypatch):
    """A run of four updates, and the same run stopped after two and resumed: the resumed leg's
    first update starts from the weights, the Adam state (moments, step counts) and the update
    count the uninterrupted run had at its third, and the decision count goes on from the first
    leg's. (The collectors start new games on resume, so the two runs part after that.)"""
    from island_fortress_env.agents.checkpoint import read_metadata
    from island_fortress_env.training.ppo import train_native

    calls = record_updates(monkeypatch)
    same = ("pretrain.games=0", "ppo.anneal_lr=false", "eval.every=0", "eval.final_games=0")
    whole = train_native(tiny_config(tmp_path / "whole", "run", *same, "train.total_decisions=1200"))
    uninterrupted = list(calls)
    calls.clear()
    first = train_native(tiny_config(tmp_path / "legs", "run", *same, "train.total_decisions=600"))
    first_leg = list(calls)
    calls.clear()
    second = tiny_config(tmp_path / "legs", "more", *same, "train.total_decisions=1200")
    resumed = train_native(second, resume=str(first))
    second_leg = list(calls)

    assert (len(uninterrupted), len(first_leg), len(second_leg)) == (4, 2, 2)
    assert_same(first_leg, uninterrupted[:2], "first leg")  # the same seed, the same two updates
    assert_same(second_leg[0]["weights"], uninterrupted[2]["weights"], "weights")
    assert_same(second_leg[0]["optimizer"], uninterrupted[2]["optimizer"], "optimizer")
    assert second_leg[0]["optimizer"]["state"][0]["step"] > 0
    meta, whole_meta, first_meta = (read_metadata(p) for p in (resumed, whole, first))
    assert first_meta["updates"] == 2 and meta["updates"] == whole_meta["updates"] == 4
    assert meta["num_timesteps"] == first_meta["num_timesteps"] + sum(c["decisions"] for c in second_leg)


def test_resume_continues_the_learning_rate_schedule(tmp_path, monkeypatch):
    """``ppo.anneal_over: decisions``: the learning rate falls with the updates of the whole run, so
    after two updates of four the resumed leg's run at a half and a quarter of the rate."""
    from island_fortress_env.training.ppo import train_native

    calls = record_updates(monkeypatch)
    same = ("pretrain.games=0", "eval.every=0", "eval.final_games=0")
    first = train_native(tiny_config(tmp_path, "lr", *same, "train.total_decisions=600"))
    calls.clear()
    cfg = tiny_config(tmp_path, "lr2", *same, "train.total_decisions=1200")
    train_native(cfg, resume=str(first))
    lr = cfg.ppo.learning_rate
    assert [c["lr"] for c in calls] == pytest.approx([lr / 2, lr / 4])


def test_resume_refuses_a_different_network_and_names_what_differs(tiny_native, tmp_path, capsys):
    _base, _cfg, final = tiny_native
    from island_fortress_env.cli.app import main

    try:
        code = main(
            [
                "train",
                "--config",
                str(ROOT / "configs" / "default.yaml"),
                "--resume",
                str(final),
                "policy.hidden=32",
                f"logging.runs_dir={tmp_path}",
                f"logging.checkpoints_dir={tmp_path}",
            ]
        )
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    (line,) = capsys.readouterr().err.splitlines()  # one line, no traceback
    assert "cnn_channels 4 there, 0 in the config" in line and "hidden 16 there, 32 in the config" in line
    assert "head_activation" not in line  # the same on both sides


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
@pytest.mark.parametrize(
    "collection",
    [("train.workers=0", "train.pipelined=false"), ("train.workers=1", "train.pipelined=true")],
    ids=["in-process", "worker-process"],
)
def test_a_crash_or_ctrl_c_in_the_loop_still_writes_a_checkpoint_that_resumes(
    tmp_path, monkeypatch, error, collection
):
    from island_fortress_env.agents.checkpoint import load_policy, load_training_state
    from island_fortress_env.training import ppo

    update = ppo.ppo_update
    updates: list[int] = []

    def second_update_fails(net, optimizer, rollout, cfg, rng, regulariser=None):
        updates.append(len(rollout))
        if len(updates) == 2:
            raise error("stopped in the second update")
        return update(net, optimizer, rollout, cfg, rng, regulariser)

    monkeypatch.setattr(ppo, "ppo_update", second_update_fails)
    no_checkpoints = ("train.checkpoint_every=1000000", "pretrain.games=0", "eval.every=0")
    cfg = tiny_config(tmp_path, "crash", *no_checkpoints, *collection)
    with pytest.raises(error, match="second update"):
        ppo.train_native(cfg)
    run_dir = tmp_path / "ckpt" / "crash"
    assert sorted(p.name for p in run_dir.iterdir()) == ["latest.zip"]  # written by the crash alone
    _net, meta = load_policy(run_dir / "latest.zip")
    assert meta["updates"] == 1 and meta["num_timesteps"] == updates[0]
    assert load_training_state(run_dir / "latest.zip")["optimizer"]["state"]
    monkeypatch.setattr(ppo, "ppo_update", update)
    more = tiny_config(tmp_path, "again", *no_checkpoints, *collection, "eval.final_games=0")
    resumed = ppo.train_native(more, resume=str(run_dir / "latest.zip"))
    assert load_policy(resumed)[1]["updates"] == 2


def _heuristic_means(scalars: dict) -> list[tuple[int, float]]:
    """(decisions, mean of eval/win_rate_vs_heuristic_{2,3,4}p) of every periodic evaluation."""
    series = [dict(scalars[f"eval/win_rate_vs_heuristic_{n}p"]) for n in (2, 3, 4)]
    return [(step, float(np.mean([s[step] for s in series]))) for step in sorted(series[0])]


def test_keep_best_keeps_the_best_periodic_evaluation_and_resume_remembers_it(tmp_path):
    from island_fortress_env.agents.checkpoint import read_metadata
    from island_fortress_env.training.plot_curves import read_scalars
    from island_fortress_env.training.ppo import train_native

    keep = ("eval.keep_best=true", "eval.opponents=[heuristic]", "pretrain.games=0")
    cfg = tiny_config(tmp_path, "best", *keep, "train.total_decisions=900")
    kept = train_native(cfg)
    assert kept == tmp_path / "ckpt" / "best" / "best.zip"
    scalars = read_scalars(tmp_path / "runs" / "best")
    means = _heuristic_means(scalars)
    assert len(means) == 3  # at 300, 600 and 900 decisions: the last weights were evaluated too
    best_step, best_mean = max(means, key=lambda m: (m[1], -m[0]))  # the first of equal ones
    selection = read_metadata(kept)["selection"]
    assert selection == {"decisions": best_step, "games": 1, "score": pytest.approx(best_mean)}
    assert read_metadata(kept)["num_timesteps"] == best_step
    assert read_metadata(kept.with_name("final.zip"))["num_timesteps"] >= 900
    assert "final_eval/win_rate_vs_heuristic_3p" in scalars

    # --resume carries on from the best score so far: best.zip changes only for a better one.
    more = tiny_config(tmp_path, "best", *keep, "train.total_decisions=1500")
    train_native(more, resume=str(kept.with_name("final.zip")))
    after = _heuristic_means(read_scalars(tmp_path / "runs" / "best"))
    assert len(after) > len(means)
    # best.zip is replaced only by a strictly better score: it holds the first best evaluation
    first_best_step, first_best_mean = max(after, key=lambda m: (m[1], -m[0]))
    new = read_metadata(kept)["selection"]
    assert new == {"decisions": first_best_step, "games": 1, "score": pytest.approx(first_best_mean)}
    assert first_best_mean >= best_mean


def test_the_training_benchmark_config_loads():
    from island_fortress_env.training.bench_training import native_config

    cfg = native_config(150, "/tmp/unused")
    assert cfg.eval.every == 0 and not cfg.eval.keep_best and cfg.league.share == 0.0


def test_keep_best_needs_periodic_evaluations_against_the_heuristic():
    for bad in ("eval.every=0", "eval.opponents=[random]", "eval.games=0"):
        with pytest.raises(TrainConfigError, match=r"eval\.keep_best"):
            load_config(ROOT / "configs" / "default.yaml", ["eval.keep_best=true", bad], schema=NativeConfig)
