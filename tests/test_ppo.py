"""The native multi-agent PPO trainer (training/ppo.py): per-seat bookkeeping, masks, a tiny run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from island_fortress_env import core, vector
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.env.observation import OBS_SIZE
from island_fortress_env.players import make_agent
from island_fortress_env.players.engine_vector import EngineVectorEnv
from island_fortress_env.players.runner import sample_actions
from island_fortress_env.training.collect import Collector
from island_fortress_env.training.config import NativeConfig, TrainConfigError, load_config
from island_fortress_env.training.greedy_eval import greedy_evaluation
from island_fortress_env.training.league import GameKind, League
from island_fortress_env.training.trajectories import SeatTrajectories
from island_fortress_env.training.weights import network_kwargs

ROOT = Path(__file__).resolve().parents[1]
GAMMA, LAM = 0.9, 0.8


def _obs(i: float) -> np.ndarray:
    return np.full(OBS_SIZE, i, dtype=np.float32)


def _act(book: SeatTrajectories, key: str, i: int, value: float) -> None:
    mask = np.zeros(NUM_ACTIONS, dtype=bool)
    mask[i] = True
    book.act(key, _obs(i), mask, i, -0.1 * i, value)


# ---------------------------------------------------------------- per-seat bookkeeping


def test_a_seat_acting_twice_in_a_row_is_bootstrapped_with_its_own_next_value():
    book = SeatTrajectories()
    _act(book, "A", 1, value=0.5)
    book.reward("A", 0.25)  # from A's own first move
    _act(book, "A", 2, value=0.75)  # A moves again at once
    assert book.num_finished == 1
    batch = book.take(GAMMA, LAM)
    assert batch.actions.tolist() == [1]
    # one closed decision, cut before its successor: advantage = r + gamma * V(next) - V
    assert batch.advantages[0] == pytest.approx(0.25 + GAMMA * 0.75 - 0.5)
    assert batch.returns[0] == pytest.approx(0.25 + GAMMA * 0.75)
    assert batch.logprobs[0] == pytest.approx(-0.1)


def test_a_reward_on_an_opponents_move_goes_to_the_seats_last_decision():
    book = SeatTrajectories()
    _act(book, "A", 1, value=0.0)
    _act(book, "B", 2, value=0.0)
    book.reward("A", 0.4)  # B's move completed a row A leads
    book.reward("B", 0.1)
    _act(book, "A", 3, value=0.0)
    _act(book, "B", 4, value=0.0)
    batch = book.take(GAMMA, LAM)
    by_action = dict(zip(batch.actions.tolist(), batch.advantages.tolist(), strict=False))
    assert by_action == pytest.approx({1: 0.4, 2: 0.1})


def test_terminal_reward_closes_every_seat_even_when_the_game_ends_on_another_seats_move():
    book = SeatTrajectories()
    _act(book, "A", 1, value=0.2)
    _act(book, "A", 2, value=0.3)
    _act(book, "B", 3, value=0.6)  # B makes the last move of the game
    book.reward("B", 0.05)  # B's score from that move
    book.reward("A", -1.0)  # the zero-sum outcome: A lost ...
    book.reward("B", 1.0)  # ... B won
    book.end("A")
    book.end("B")
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
    _act(book, "A", 1, value=0.1)
    _act(book, "A", 2, value=0.2)
    first = book.take(GAMMA, LAM)
    assert first.actions.tolist() == [1]
    book.reward("A", 0.5)  # arrives after the cut: belongs to decision 2
    book.end("A")
    second = book.take(GAMMA, LAM)
    assert second.actions.tolist() == [2]
    assert second.advantages[0] == pytest.approx(0.5 - 0.2)


def test_gae_matches_the_textbook_recursion():
    book = SeatTrajectories()
    values, rewards = [0.1, -0.2, 0.4, 0.3], [0.0, 0.5, -0.1, 1.0]
    for i, (v, r) in enumerate(zip(values, rewards, strict=False)):
        _act(book, "A", i, value=v)
        book.reward("A", r)
    book.end("A")
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


def _tiny(base: Path, run_name: str, *extra: str) -> NativeConfig:
    return load_config(
        ROOT / "configs" / "default.yaml",
        [
            f"run_name={run_name}",
            "pretrain.games=3",
            "pretrain.epochs=1",
            "train.total_decisions=600",
            "train.rollout_decisions=300",
            "train.games_per_collector=3",
            "train.workers=0",
            "train.pipelined=false",
            "train.checkpoint_every=300",
            "train.max_minutes=0",
            "ppo.minibatch_size=100",
            "ppo.n_epochs=2",
            "league.share=0.5",
            "league.snapshot=1.0",
            "league.heuristic=0.0",
            "league.random=1.0",
            "league.snapshot_every=300",
            "policy.cnn_channels=4",
            "policy.hidden=16",
            "eval.every=300",
            "eval.games=1",
            "eval.final_games=1",
            "eval.opponents=[random]",
            "eval.keep_best=false",
            "logging.progress_bar=false",
            f"logging.runs_dir={base / 'runs'}",
            f"logging.checkpoints_dir={base / 'ckpt'}",
            *extra,
        ],
        schema=NativeConfig,
    )


# A collector's games in the C++ core's batch, and in its Python engine twin
COLLECTORS = [
    pytest.param(True, id="core", marks=pytest.mark.skipif(not core.available(), reason="no C++ core")),
    pytest.param(False, id="python"),
]


@pytest.mark.parametrize("use_core", COLLECTORS)
def test_collector_records_only_legal_actions_and_every_learning_seat(use_core):
    cfg = _tiny(Path("/nonexistent"), "c", "league.share=0.0")
    collector = Collector(cfg, 0, SeatTrajectories, use_core=use_core)
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


@pytest.fixture(scope="module")
def tiny_native(tmp_path_factory):
    from island_fortress_env.training.ppo import train_native

    base = tmp_path_factory.mktemp("native")
    cfg = _tiny(base, "tiny", "train.total_decisions=1200")  # long enough for games to end
    return base, cfg, train_native(cfg)


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


def _record_updates(monkeypatch) -> list[dict]:
    """From now on, every PPO update of a run is recorded first: the weights, the optimizer state
    (Adam's moments and step counts) and the learning rate it starts from, and its rollout's size."""
    import copy

    from island_fortress_env.training import ppo

    calls: list[dict] = []
    update = ppo.ppo_update

    def recorded(net, optimizer, rollout, cfg, rng, regulariser=None):
        calls.append(
            {
                "weights": copy.deepcopy(net.state_dict()),
                "optimizer": copy.deepcopy(optimizer.state_dict()),
                "lr": optimizer.param_groups[0]["lr"],
                "decisions": len(rollout),
            }
        )
        return update(net, optimizer, rollout, cfg, rng, regulariser)

    monkeypatch.setattr(ppo, "ppo_update", recorded)
    return calls


def _assert_same(a, b, where: str = "") -> None:
    """``a`` and ``b`` are equal, tensors included (bit for bit)."""
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and torch.equal(a, b), where
    elif isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), where
        for key in a:
            _assert_same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _assert_same(x, y, f"{where}[{i}]")
    else:
        assert a == b, where


def test_resume_starts_from_where_an_uninterrupted_run_was(tmp_path, monkeypatch):
    """A run of four updates, and the same run stopped after two and resumed: the resumed leg's
    first update starts from the weights, the Adam state (moments, step counts) and the update
    count the uninterrupted run had at its third, and the decision count goes on from the first
    leg's. (The collectors start new games on resume, so the two runs part after that.)"""
    from island_fortress_env.agents.checkpoint import read_metadata
    from island_fortress_env.training.ppo import train_native

    calls = _record_updates(monkeypatch)
    same = ("pretrain.games=0", "ppo.anneal_lr=false", "eval.every=0", "eval.final_games=0")
    whole = train_native(_tiny(tmp_path / "whole", "run", *same, "train.total_decisions=1200"))
    uninterrupted = list(calls)
    calls.clear()
    first = train_native(_tiny(tmp_path / "legs", "run", *same, "train.total_decisions=600"))
    first_leg = list(calls)
    calls.clear()
    second = _tiny(tmp_path / "legs", "more", *same, "train.total_decisions=1200")
    resumed = train_native(second, resume=str(first))
    second_leg = list(calls)

    assert (len(uninterrupted), len(first_leg), len(second_leg)) == (4, 2, 2)
    _assert_same(first_leg, uninterrupted[:2], "first leg")  # the same seed, the same two updates
    _assert_same(second_leg[0]["weights"], uninterrupted[2]["weights"], "weights")
    _assert_same(second_leg[0]["optimizer"], uninterrupted[2]["optimizer"], "optimizer")
    assert second_leg[0]["optimizer"]["state"][0]["step"] > 0
    meta, whole_meta, first_meta = (read_metadata(p) for p in (resumed, whole, first))
    assert first_meta["updates"] == 2 and meta["updates"] == whole_meta["updates"] == 4
    assert meta["num_timesteps"] == first_meta["num_timesteps"] + sum(c["decisions"] for c in second_leg)


def test_resume_continues_the_learning_rate_schedule(tmp_path, monkeypatch):
    """``ppo.anneal_over: decisions``: the learning rate falls with the updates of the whole run, so
    after two updates of four the resumed leg's run at a half and a quarter of the rate."""
    from island_fortress_env.training.ppo import train_native

    calls = _record_updates(monkeypatch)
    same = ("pretrain.games=0", "eval.every=0", "eval.final_games=0")
    first = train_native(_tiny(tmp_path, "lr", *same, "train.total_decisions=600"))
    calls.clear()
    cfg = _tiny(tmp_path, "lr2", *same, "train.total_decisions=1200")
    train_native(cfg, resume=str(first))
    lr = cfg.ppo.learning_rate
    assert [c["lr"] for c in calls] == pytest.approx([lr / 2, lr / 4])


def test_resume_refuses_a_different_network_and_names_what_differs(tiny_native, tmp_path, capsys):
    _base, _cfg, final = tiny_native
    from island_fortress_env.training.train import main

    with pytest.raises(SystemExit) as exc:
        main(
            [
                "--config",
                str(ROOT / "configs" / "default.yaml"),
                "--resume",
                str(final),
                "policy.hidden=32",
                f"logging.runs_dir={tmp_path}",
                f"logging.checkpoints_dir={tmp_path}",
            ]
        )
    assert exc.value.code == 2
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
    cfg = _tiny(tmp_path, "crash", *no_checkpoints, *collection)
    with pytest.raises(error, match="second update"):
        ppo.train_native(cfg)
    run_dir = tmp_path / "ckpt" / "crash"
    assert sorted(p.name for p in run_dir.iterdir()) == ["latest.zip"]  # written by the crash alone
    _net, meta = load_policy(run_dir / "latest.zip")
    assert meta["updates"] == 1 and meta["num_timesteps"] == updates[0]
    assert load_training_state(run_dir / "latest.zip")["optimizer"]["state"]
    monkeypatch.setattr(ppo, "ppo_update", update)
    more = _tiny(tmp_path, "again", *no_checkpoints, *collection, "eval.final_games=0")
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
    cfg = _tiny(tmp_path, "best", *keep, "train.total_decisions=900")
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
    more = _tiny(tmp_path, "best", *keep, "train.total_decisions=1500")
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


@pytest.mark.parametrize(
    "collection",
    [
        ("train.workers=0", "train.pipelined=false", "train.update_dtype=float32"),
        # ... and a learning rate annealed along (1 - done) ** 2
        ("train.workers=0", "train.pipelined=false", "train.update_dtype=bfloat16", "ppo.anneal_power=2"),
        # worker processes, and a wall-clock cap that the learning rate does not anneal to
        ("train.workers=1", "train.pipelined=true", "train.max_minutes=60", "train.update_dtype=auto"),
        # two workers, as configs/default.yaml has it: their rollouts joined in a fixed order
        ("train.workers=2", "train.pipelined=true", "train.update_dtype=auto"),
        # two workers and the main process collecting in lockstep
        ("train.workers=2", "train.pipelined=false", "train.update_dtype=float32"),
        # the imitation warm start first, and evaluations between the updates
        ("train.workers=2", "pretrain.games=4", "eval.every=300", "eval.games=2", "eval.final_games=2"),
    ],
    ids=[
        "in-process",
        "bfloat16-update",
        "worker-process",
        "two-workers",
        "two-workers-lockstep",
        "warm-start",
    ],
)
def test_two_runs_with_the_same_seed_give_the_same_losses_and_weights(tmp_path, collection):
    _assert_two_runs_agree(tmp_path, collection)


def test_without_the_core_a_run_steps_python_envs_and_still_gives_the_same_losses_and_weights(
    tmp_path, monkeypatch
):
    """Where the C++ core is not built the collectors, the warm start and the evaluations play
    the Python engine's games, with one warning: the run is as reproducible."""
    from island_fortress_env.training import collect

    monkeypatch.setattr(collect.core, "available", lambda: False)
    with pytest.warns(RuntimeWarning, match="C\\+\\+ core is not built"):
        _assert_two_runs_agree(
            tmp_path,
            ("train.workers=0", "pretrain.games=2", "eval.every=300", "eval.games=1", "eval.final_games=1"),
        )


def _assert_two_runs_agree(tmp_path: Path, collection: tuple[str, ...]) -> None:
    from island_fortress_env.agents.checkpoint import load_policy
    from island_fortress_env.training.plot_curves import read_scalars
    from island_fortress_env.training.ppo import train_native

    losses, rates, weights = [], [], []
    for run in ("a", "b"):
        cfg = _tiny(
            tmp_path / run,
            "same",
            "pretrain.games=0",
            "eval.every=0",
            "eval.final_games=0",
            "train.total_decisions=600",
            *collection,
        )
        train_native(cfg)
        scalars = read_scalars(tmp_path / run / "runs" / "same")
        losses.append([scalars[k] for k in ("losses/policy_loss", "losses/value_loss", "losses/entropy")])
        rates.append([lr for _, lr in scalars["charts/learning_rate"]])
        weights.append(load_policy(tmp_path / run / "ckpt" / "same" / "final.zip")[0].state_dict())
    assert losses[0] == losses[1]
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])
    # ppo.anneal_over=decisions: to 0 over the 2 updates of 300 decisions, whatever the clock
    lr = cfg.ppo.learning_rate
    assert rates[0] == rates[1] == pytest.approx([lr, lr / 2**cfg.ppo.anneal_power])


class _CreditLedger(SeatTrajectories):
    """Also sums, per seat trajectory, every reward credited to one of its decisions."""

    def __init__(self) -> None:
        super().__init__()
        self.credited: dict = {}
        self.decisions: dict = {}

    def act_many(self, keys, *args) -> None:
        super().act_many(keys, *args)
        for key in keys:
            self.decisions[key] = self.decisions.get(key, 0) + 1

    def reward(self, key, reward: float) -> None:
        if self.has_pending(key):
            self.credited[key] = self.credited.get(key, 0.0) + reward
        super().reward(key, reward)


@pytest.mark.parametrize("use_core", COLLECTORS)
@pytest.mark.parametrize(
    "vp, win, relative", [(1.0, 0.0, False), (0.0, 1.0, False), (0.5, 1.0, False), (0.5, 1.0, True)]
)
def test_in_real_games_every_seat_is_credited_its_whole_score_and_outcome(vp, win, relative, use_core):
    """Over a finished game, the rewards credited to a seat's decisions add up to its final score
    (scaled) plus its zero-sum outcome, whoever moved when points were scored or the game ended.
    With ``reward.vp_relative`` the score part is the margin over the other seats' mean score, and
    the seats' totals sum to zero."""
    from island_fortress_env.engine.scoring import win_loss_returns
    from island_fortress_env.env.aec import SCORE_SCALE

    cfg = _tiny(
        Path("/nonexistent"),
        "c",
        "league.share=0.0",
        "train.games_per_collector=2",
        f"reward.vp={vp}",
        f"reward.win={win}",
        f"reward.vp_relative={str(relative).lower()}",
    )
    collector = Collector(cfg, 0, SeatTrajectories, use_core=use_core)
    collector.book = ledger = _CreditLedger()
    finals = {}
    record = collector._record

    def remember(game, finished):
        final = finished.final
        winners = [p for p in range(final.players) if final.win[p] > 0]
        finals[game.episode] = (list(final.score), win_loss_returns(final.players, winners), final.players)
        record(game, finished)

    collector._record = remember
    collector.collect(ActorCritic(cnn_channels=4, hidden=16), 2500)
    assert finals, "at least one game finished"
    for episode, (scores, outcome, n) in finals.items():
        for seat in range(n):
            key = (0, episode, seat)
            assert ledger.decisions[key] > 0
            points = scores[seat] - ((sum(scores) - scores[seat]) / (n - 1) if relative else 0)
            expected = vp * points / SCORE_SCALE + win * outcome[seat]
            assert ledger.credited.get(key, 0.0) == pytest.approx(expected, abs=1e-9), (episode, seat)
        if relative:
            assert sum(ledger.credited[(0, episode, s)] for s in range(n)) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.skipif(not core.available(), reason="the C++ core is not built")
def test_the_core_collectors_league_seats_are_the_heuristics_and_the_learners_decisions_its_own():
    """Replayed in the Python engine from its seed, every move of a heuristic league game's
    frozen seats is the heuristic's (one player per game, seeded by the game's seed), the game
    ends as the batch's did, and the learner's trajectory holds exactly its own moves."""
    from island_fortress_env.agents.heuristic import HeuristicAgent
    from island_fortress_env.engine import Game
    from island_fortress_env.env.observation import action_mask

    league = ("league.share=1.0", "league.snapshot=0.0", "league.random=0.0", "league.heuristic=1.0")
    cfg = _tiny(Path("/nonexistent"), "c", *league, "train.games_per_collector=3")
    collector = Collector(cfg, 0, SeatTrajectories)
    collector.runner.keep_actions = True
    collector.book = ledger = _CreditLedger()
    ended = []
    record = collector._record
    collector._record = lambda game, finished: ended.append((game, finished)) or record(game, finished)
    collector.collect(ActorCritic(cnn_channels=4, hidden=16), 700)
    assert len(ended) >= 2
    for game, finished in ended:
        assert game.kind is GameKind.HEURISTIC and len(game.learners) == 1
        seed = finished.final.seed
        replayed = Game(num_players=game.players).new_initial_state(seed)
        heuristic, learner_moves = HeuristicAgent(seed=seed), 0
        for action in finished.actions:
            if replayed.current_player() in game.learners:
                learner_moves += 1
            else:
                assert action == heuristic.act(None, action_mask(replayed), replayed)
            replayed.apply_action(action)
        assert replayed.is_terminal() and tuple(replayed.score) == finished.final.score
        assert ledger.decisions[(0, game.episode, game.learners[0])] == learner_moves


@pytest.mark.skipif(not core.available(), reason="the C++ core is not built")
def test_the_core_collector_draws_each_new_games_table_size():
    """A slot of the batch plays the tables drawn for its successive games, of the sizes the
    ``tables`` weights allow."""
    cfg = _tiny(
        Path("/nonexistent"), "c", "league.share=0.0", "tables.three=0", "train.games_per_collector=2"
    )
    collector = Collector(cfg, 0, SeatTrajectories)
    runner = collector.runner
    played = {
        slot: [runner.slots[slot].current.tag.players, runner.slots[slot].following.players]
        for slot in (0, 1)
    }
    deal = collector._next_game

    def dealt(slot: int):
        seating = deal(slot)
        played[slot].append(seating.players)
        return seating

    runner.next_seating = dealt
    collector.collect(ActorCritic(cnn_channels=4, hidden=16), 6000)
    assert sum(map(len, played.values())) >= 8
    assert {n for sizes in played.values() for n in sizes} == {2, 4}
    assert any(len(set(sizes)) == 2 for sizes in played.values())
    for slot, sizes in played.items():  # the batch's game is of the size drawn for it (the last
        # size drawn is the next game's, dealt when this one ends)
        assert collector.tables.games[slot].num_players == sizes[-2] == runner.slots[slot].current.tag.players


@pytest.mark.skipif(not core.available(), reason="the C++ core is not built")
def test_with_the_core_the_collectors_play_its_batch_without_a_warning():
    import warnings

    from island_fortress_env.training import collect

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        collectors = collect.Collectors(_tiny(Path("/nonexistent"), "c"), SeatTrajectories)
    assert isinstance(collectors.local.tables, vector.VectorEnv)


def test_without_the_core_the_collectors_play_python_envs_and_say_so(monkeypatch):
    from island_fortress_env.training import collect

    cfg = _tiny(Path("/nonexistent"), "c")
    monkeypatch.setattr(collect.core, "available", lambda: False)
    with pytest.warns(RuntimeWarning, match="Python engine") as caught:
        collectors = collect.Collectors(cfg, SeatTrajectories)
    assert isinstance(collectors.local.tables, EngineVectorEnv) and len(caught) == 1


# ---------------------------------------------------------------- starting from a checkpoint


BASELINE = ROOT / "checkpoints" / "baseline-3p.zip"
TANH_32 = {"obs_size": OBS_SIZE, "num_actions": NUM_ACTIONS, "cnn_channels": 32, "hidden": 128,
           "head_activation": "tanh"}  # fmt: skip


def test_the_shipped_sb3_policy_loads_every_weight_and_converts_exactly():
    """Its torso's layers are named as the extractor's own (``wall.*``, ``board.*``): every weight
    must load (a silently re-initialised torso would play at random), and the native copy must
    give the same action probabilities as SB3's policy."""
    import warnings

    from island_fortress_env.agents.checkpoint import CheckpointAgent
    from island_fortress_env.env.aec import raw_env
    from island_fortress_env.training.weights import initial_weights

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # SB3 turns a partial load into a warning
        agent = CheckpointAgent(BASELINE)
    net = ActorCritic(**TANH_32)
    net.load_state_dict(initial_weights(str(BASELINE), TANH_32))
    env = raw_env(num_players=3)
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(40):
        o = env.observe(env.agent_selection)
        sb3 = agent.probabilities(o["observation"], o["action_mask"])
        with torch.no_grad():
            logits, _ = net(
                torch.as_tensor(o["observation"])[None], torch.as_tensor(o["action_mask"].astype(bool))[None]
            )
        assert np.abs(torch.softmax(logits, -1)[0].numpy() - sb3).max() < 1e-5
        env.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))


def test_init_from_refuses_a_checkpoint_of_another_architecture(tmp_path):
    from island_fortress_env.agents.checkpoint import CheckpointError
    from island_fortress_env.training.weights import initial_weights

    with pytest.raises(CheckpointError, match="head_activation=tanh"):
        initial_weights(str(BASELINE), {**TANH_32, "head_activation": "relu"})
    with pytest.raises(CheckpointError, match="cnn_channels"):
        initial_weights(str(BASELINE), {**TANH_32, "cnn_channels": 16})
    with pytest.raises(TrainConfigError, match=r"policy\.init_from"):
        load_config(None, ["policy.init_from=missing.zip"], schema=NativeConfig)


def test_a_run_starts_from_init_from(tiny_native, tmp_path):
    _base, _cfg, final = tiny_native
    from island_fortress_env.agents.checkpoint import load_policy
    from island_fortress_env.training.weights import initial_weights

    cfg = _tiny(tmp_path, "init", "pretrain.games=0", f"policy.init_from={final}")
    start = initial_weights(str(final), network_kwargs(cfg))
    reference, _ = load_policy(final)
    assert all(torch.equal(start[k], v) for k, v in reference.state_dict().items())


def test_a_collectors_python_games_share_one_observation_encoder_per_table_size():
    cfg = _tiny(Path("/nonexistent"), "c", "league.share=0.0", "train.games_per_collector=12")
    collector = Collector(cfg, 0, SeatTrajectories, use_core=False)
    collector.collect(ActorCritic(cnn_channels=4, hidden=16), 3000)
    encoders = collector.tables._encoders
    assert sorted(game.num_players for game in encoders) == [2, 3, 4]  # one per table size


@pytest.mark.parametrize("use_core", COLLECTORS)
def test_a_snapshot_leaving_the_pool_still_finishes_the_games_it_plays_in(use_core):
    cfg = _tiny(
        Path("/nonexistent"), "c", "league.share=1.0", "league.random=0.0", "train.games_per_collector=4"
    )
    collector = Collector(cfg, 0, SeatTrajectories, use_core=use_core)
    playing = lambda: [slot.current.tag for slot in collector.runner.slots]  # noqa: E731
    old, new = ActorCritic(cnn_channels=4, hidden=16), ActorCritic(cnn_channels=4, hidden=16)
    assert all(g.kind is GameKind.SELF_PLAY for g in playing())  # no snapshot to draw yet
    collector.set_snapshots({0: old.state_dict()}, {0: 1.0})
    for _ in range(20):  # the games begun from now on play snapshot 0
        collector.collect(new, 500)
        if any(g.snapshot == 0 for g in playing()):
            break
    assert any(g.snapshot == 0 for g in playing())
    collector.set_snapshots({1: new.state_dict()}, {1: 1.0})  # 0 leaves the pool mid-game
    assert 0 in collector.snapshots
    for _ in range(20):  # the games against 0 end; new ones draw 1
        collector.collect(new, 500)
        if all(g.snapshot != 0 for g in playing()):
            break
    assert all(g.snapshot != 0 for g in playing())
    collector.set_snapshots({}, {1: 1.0})
    assert 0 not in collector.snapshots and 1 in collector.snapshots


def test_greedy_evaluation_gives_the_same_figures_on_any_number_of_processes():
    """The tables are played on the processes, one a job; game ``g`` of a table is dealt and seated
    the same way wherever it is played, so the figures do not depend on the processes."""
    shipped = make_agent(str(ROOT / "checkpoints" / "policy-2-4p.zip"))
    one, three = (
        greedy_evaluation(
            shipped.net, shipped.metadata["network"], 7, 11, ["heuristic"], {}, processes=p, tables=(2, 3)
        )
        for p in (1, 3)
    )
    assert one == three
    assert set(one) == {
        "win_rate_vs_heuristic_2p",
        "win_rate_vs_heuristic_3p",
        "openskill_mu",
        "openskill_ordinal",
    }
    assert one["win_rate_vs_heuristic_2p"] > 0 and one["win_rate_vs_heuristic_3p"] > 0


def test_bfloat16_detection_asks_torch_for_avx512_bf16_or_amx():
    from types import SimpleNamespace

    from island_fortress_env.training.ppo import bfloat16_is_native

    def cpu(avx512_bf16: bool | None, amx: bool | None) -> SimpleNamespace:
        queries = {}
        if avx512_bf16 is not None:
            queries["_is_avx512_bf16_supported"] = lambda: avx512_bf16
        if amx is not None:
            queries["_is_amx_tile_supported"] = lambda: amx
        return SimpleNamespace(**queries)

    assert bfloat16_is_native(cpu(True, False)) and bfloat16_is_native(cpu(False, True))
    assert bfloat16_is_native(cpu(None, True))
    assert not bfloat16_is_native(cpu(False, False))
    assert not bfloat16_is_native(cpu(None, None))  # a torch without the queries: emulated


def test_bfloat16_detection_agrees_with_the_cpu_flags():
    """On Linux the CPU's flags (``/proc/cpuinfo``) say whether it has AVX512-BF16 or AMX."""
    from island_fortress_env.training.ppo import bfloat16_is_native, update_dtype

    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.is_file():
        pytest.skip("no /proc/cpuinfo on this system")
    flags = {f for line in cpuinfo.read_text().splitlines() if line.startswith("flags") for f in line.split()}
    native = bool(flags & {"avx512_bf16", "amx_tile"})
    assert bfloat16_is_native() is native
    cfg = load_config(None, ["train.update_dtype=auto"], schema=NativeConfig)
    assert update_dtype(cfg) == ("bfloat16" if native else "float32")


def test_update_dtype_auto_takes_bfloat16_only_where_the_cpu_computes_it(monkeypatch):
    from island_fortress_env.training import ppo

    cfg = load_config(ROOT / "configs" / "default.yaml", ["train.update_dtype=auto"], schema=NativeConfig)
    monkeypatch.setattr(ppo, "bfloat16_is_native", lambda: True)
    assert ppo.update_dtype(cfg) == "bfloat16"
    monkeypatch.setattr(ppo, "bfloat16_is_native", lambda: False)
    assert ppo.update_dtype(cfg) == "float32"
    cfg.train.update_dtype = "bfloat16"
    assert ppo.update_dtype(cfg) == "bfloat16"


def test_a_value_torso_of_its_own_keeps_each_loss_in_its_own_torso(tmp_path):
    """``policy.value_cnn_channels`` / ``value_hidden``: the value loss trains only the value's
    torso and head, the policy loss only the policy's; the checkpoint loads the same network."""
    from island_fortress_env.agents.checkpoint import load_policy, save_policy

    network = {"cnn_channels": 4, "hidden": 16, "value_cnn_channels": 2, "value_hidden": 8}
    net = ActorCritic(**network)
    obs = torch.rand(5, OBS_SIZE)
    logits, value = net(obs)
    assert logits.shape == (5, NUM_ACTIONS) and value.shape == (5,)
    value.sum().backward()
    grads = {name: p.grad for name, p in net.named_parameters()}
    assert all(g is None for name, g in grads.items() if name.startswith(("torso.", "policy_head.")))
    assert all(g is not None for name, g in grads.items() if name.startswith(("value_torso.", "value_head.")))
    net.zero_grad(set_to_none=True)
    net(obs)[0].logsumexp(-1).sum().backward()
    assert all(p.grad is None for name, p in net.named_parameters() if name.startswith("value_"))
    path = save_policy(tmp_path / "v.zip", net, network, {"num_timesteps": 1})
    loaded, meta = load_policy(path)
    assert meta["network"] == network
    torch.testing.assert_close(loaded(obs)[1], net(obs)[1])
    # Starting a run without a value torso from it is refused, not a load_state_dict traceback.
    from island_fortress_env.agents.checkpoint import CheckpointError
    from island_fortress_env.training.weights import initial_weights

    # every argument network_kwargs gives, the same sizes, but no value torso
    shared = {"obs_size": OBS_SIZE, "num_actions": NUM_ACTIONS, **network, "head_activation": "relu"}
    del shared["value_cnn_channels"], shared["value_hidden"]
    with pytest.raises(CheckpointError, match=r"does not match.*value_hidden 8 there, unset in the config"):
        initial_weights(str(path), shared)
    with pytest.raises(ValueError, match=r"value_cnn_channels .* and value_hidden .* go together"):
        ActorCritic(cnn_channels=4, hidden=16, value_hidden=8)
    with pytest.raises(TrainConfigError, match=r"policy\.value_cnn_channels"):
        load_config(None, ["policy.value_hidden=64"], schema=NativeConfig)
    cfg = load_config(None, ["policy.value_cnn_channels=2", "policy.value_hidden=8"], schema=NativeConfig)
    assert {"value_cnn_channels": 2, "value_hidden": 8}.items() <= network_kwargs(cfg).items()
    assert "value_hidden" not in network_kwargs(load_config(None, schema=NativeConfig))


def test_a_bfloat16_update_adds_the_shared_torsos_two_gradients_in_float32():
    """Both heads read one float32 copy of the torso's features, so under autocast their gradients
    are summed in float32 and cast to bfloat16 once (two casts would sum them in bfloat16: another
    run of the same seed)."""
    torch.manual_seed(0)
    net = ActorCritic(cnn_channels=8, hidden=32)
    obs = torch.rand(64, OBS_SIZE)

    def torso_grads(forward) -> list[torch.Tensor]:
        net.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits, value = forward()
        (logits.logsumexp(-1).sum() + value.square().sum()).backward()
        return [p.grad.clone() for p in net.torso.parameters()]

    def one_copy() -> tuple[torch.Tensor, torch.Tensor]:
        features = net.torso(obs)
        with torch.autocast("cpu", enabled=False):
            features = features.float()
            return net.policy_head(features), net.value_head(features).squeeze(-1)

    pairs = zip(torso_grads(lambda: net(obs)), torso_grads(one_copy), strict=True)
    assert all(torch.equal(a, b) for a, b in pairs)
