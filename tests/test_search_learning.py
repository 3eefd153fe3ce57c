"""Search learning (``train.algorithm: search``; training/search_learning.py, search_games.py):
expert iteration from the batched Gumbel search over the live network.

Tiny networks (4 channels, 16 units), two games an iteration, 4 simulations: these tests check
the mechanics (the recorded targets are the search's improved policies, the returns are PPO's,
the update fits them, a run's checkpoints, TensorBoard, resume and seeds, the config's
refusals), never a strength figure."""

from __future__ import annotations

import copy
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from island_fortress_env.agents.checkpoint import CheckpointError, load_policy, read_metadata
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.engine.scoring import win_loss_returns
from island_fortress_env.env.observation import OBS_SIZE
from island_fortress_env.players.search import Evaluator
from island_fortress_env.training import search_learning
from island_fortress_env.training.config import NativeConfig, TrainConfigError, load_config
from island_fortress_env.training.league import GameKind, League
from island_fortress_env.training.plot_curves import read_scalars
from island_fortress_env.training.search_games import IterationGames, SearchSelfPlay
from island_fortress_env.training.search_learning import search_losses, search_update, train_search
from island_fortress_env.training.weights import network_kwargs

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "search-learning.yaml"
TINY = (
    "policy.cnn_channels=4",
    "policy.hidden=16",
    "policy.head_activation=relu",
    "policy.init_from=''",
    "train.torch_threads=1",
    "train.core_threads=1",
    "train.fit_threads=false",  # the same threads in every run: the same losses
    "train.max_minutes=0",
    "train.games_per_collector=2",
    "train.checkpoint_every=1000000",
    "tables={two: 1, three: 1}",
    "search_learning.simulations=4",
    "search_learning.considered=4",
    "search_learning.games_per_iteration=2",
    "search_learning.minibatch_size=64",
    "search_learning.epochs=1",
    "eval.every=0",
    "eval.final_games=0",
    "logging.progress_bar=false",
)


def _config(base: Path, run_name: str, *extra: str) -> NativeConfig:
    dirs = (f"logging.runs_dir={base / 'runs'}", f"logging.checkpoints_dir={base / 'ckpt'}")
    return load_config(CONFIG, [f"run_name={run_name}", *TINY, *dirs, *extra], schema=NativeConfig)


def _play(cfg: NativeConfig, seed: int = 0) -> tuple[ActorCritic, SearchSelfPlay, IterationGames, list]:
    """Iteration 0 of ``cfg``'s games with a fresh tiny network, and every search result its
    learner got (in the order it got them)."""
    torch.manual_seed(seed)
    net = ActorCritic(**network_kwargs(cfg))
    games = SearchSelfPlay(cfg, net, League.for_run(cfg, net, 0))
    results: list = []
    search = games.learner.search.run

    def run(states, seeds):
        result = search(states, seeds)
        results.append(result)
        return result

    games.learner.search.run = run  # type: ignore[method-assign]
    return net, games, games.play(0), results


@pytest.fixture(scope="module")
def iteration(tmp_path_factory):
    cfg = _config(tmp_path_factory.mktemp("games"), "games")
    net, _, played, results = _play(cfg)
    return cfg, net, played, results


# ---------------------------------------------------------------- the games and their targets


def test_the_targets_are_the_searchs_improved_policy_rows_and_the_moves_its_own(iteration):
    _, _, played, results = iteration
    data = played.decisions
    assert len(data) > 100
    np.testing.assert_array_equal(data.targets, np.concatenate([r.policy for r in results]))
    np.testing.assert_array_equal(data.actions, np.concatenate([r.actions for r in results]))
    np.testing.assert_allclose(data.targets.sum(axis=1), 1.0, atol=1e-5)
    assert not data.targets[~data.masks].any(), "a target outside the legal actions"
    assert data.masks[np.arange(len(data)), data.actions].all()
    # soft targets, not the argmax: where the search had a choice the improved policy mixes
    spread = (data.targets > 0).sum(axis=1)
    assert (spread[data.choices()] >= 2).mean() > 0.5
    assert (data.targets[data.choices()].max(axis=1) < 1.0).mean() > 0.5


def test_every_seat_of_a_self_play_game_learns_every_decision(iteration):
    _, _, played, _ = iteration
    assert len(played.finished) == 2
    assert all(game.kind is GameKind.SELF_PLAY for game in played.finished)
    assert len(played.decisions) == sum(game.length for game in played.finished)
    for game in played.finished:
        seats = set(played.decisions.seats[played.decisions.games == game.episode].tolist())
        assert seats == set(range(game.players))
        assert (played.decisions.players[played.decisions.games == game.episode] == game.players).all()


def _rows_by_seat(played: IterationGames) -> dict[tuple[int, int], list[int]]:
    rows: dict[tuple[int, int], list[int]] = defaultdict(list)
    for row, (game, seat) in enumerate(zip(played.decisions.games, played.decisions.seats, strict=True)):
        rows[(int(game), int(seat))].append(row)
    return rows


def test_the_return_is_the_win_loss_discounted_per_decision_of_the_seat(tmp_path):
    cfg = _config(tmp_path, "returns", "reward.vp=0", "ppo.gamma=0.5")
    _, _, played, _ = _play(cfg)
    finished = {game.episode: game for game in played.finished}
    returns = played.decisions.returns
    for (number, seat), rows in _rows_by_seat(played).items():
        game = finished[number]
        winners = [s for s, f in enumerate(game.figures) if f["win"] > 0]
        outcome = win_loss_returns(game.players, winners)[seat]
        expected = outcome * 0.5 ** np.arange(len(rows))[::-1]
        np.testing.assert_allclose(returns[rows], expected, rtol=1e-5, atol=1e-30)


def test_the_return_of_a_seats_first_decision_is_its_whole_score(tmp_path):
    """Undiscounted and without the win/loss: the points scored from the seat's first decision
    on, / 50 (nobody scores before every seat has moved)."""
    cfg = _config(tmp_path, "scores", "reward.win=0", "ppo.gamma=1")
    _, _, played, _ = _play(cfg)
    finished = {game.episode: game for game in played.finished}
    returns = played.decisions.returns
    for (number, seat), rows in _rows_by_seat(played).items():
        score = finished[number].figures[seat]["score"]
        assert returns[rows[0]] == pytest.approx(score / 50, abs=1e-5)
    assert len(set(returns.tolist())) > 10, "every decision given the same return"


def test_league_games_record_the_one_searching_seat(tmp_path):
    cfg = _config(tmp_path, "league", "league.share=1.0", "league.heuristic=1.0", "league.snapshot=0.0",
                  "league.random=0.0")  # fmt: skip
    _, _, played, _ = _play(cfg)
    assert {game.kind for game in played.finished} == {GameKind.HEURISTIC}
    for game in played.finished:
        seats = played.decisions.seats[played.decisions.games == game.episode]
        assert len(set(seats.tolist())) == 1 and 0 < len(seats) < game.length
        assert game.ahead is not None


def test_the_search_reads_the_live_networks_weights():
    net = ActorCritic(cnn_channels=4, hidden=16)
    evaluate = Evaluator.of_network(net)
    obs = torch.rand(3, OBS_SIZE, generator=torch.Generator().manual_seed(0)).numpy()
    masks = np.ones((3, NUM_ACTIONS), dtype=np.bool_)
    logits, values = evaluate(obs, masks)
    with torch.no_grad():
        expected = net(torch.from_numpy(obs), torch.from_numpy(masks))
    np.testing.assert_allclose(logits, expected[0].numpy(), rtol=1e-6)
    with torch.no_grad():
        net.value_head[2].bias += 1.0
    np.testing.assert_allclose(evaluate(obs, masks)[1], values + 1.0, rtol=1e-5)


# ---------------------------------------------------------------- the update


def test_the_update_lowers_the_loss_on_a_fixed_batch(iteration, tmp_path):
    _, net, played, _ = iteration
    cfg = _config(tmp_path, "fit", "search_learning.epochs=4", "search_learning.learning_rate=1e-3")
    learner = copy.deepcopy(net)
    data = played.decisions
    before = search_losses(learner, data)
    optimizer = torch.optim.Adam(learner.parameters(), lr=cfg.search_learning.learning_rate)
    losses, figures = search_update(learner, optimizer, data, cfg, np.random.default_rng(0))
    after = search_losses(learner, data)
    assert after.policy < before.policy - 0.01
    assert after.value < before.value
    assert losses.approx_kl > 0 and np.isfinite(losses.explained_variance)
    assert 0 <= figures.agreement <= 1 and figures.target_prior_kl > 0
    assert figures.target_entropy > 0, "the improved policy kept no mixing"
    # the unchanged network is the one the losses were measured with
    assert search_losses(net, data) == before


# ---------------------------------------------------------------- runs


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One iteration (with a periodic evaluation); the same run resumed for a second; two runs of
    both iterations unbroken; one iteration of another seed."""
    base = tmp_path_factory.mktemp("runs")
    one = train_search(_config(base, "one", "train.total_decisions=1", "eval.every=1", "eval.games=1",
                                "eval.opponents=[random]"))  # fmt: skip
    first = read_metadata(one)["num_timesteps"]
    two = f"train.total_decisions={first + 1}"
    resumed = train_search(_config(base, "resumed", two), resume=str(one.parent / "latest.zip"))
    unbroken = [train_search(_config(base, name, two)) for name in ("unbroken", "again")]
    other = train_search(_config(base, "other", "train.total_decisions=1", "seed=1"))
    return base, one, resumed, unbroken, other


def _weights(path: Path) -> dict[str, torch.Tensor]:
    return load_policy(path)[0].state_dict()


def _same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return set(a) == set(b) and all(torch.equal(a[k], b[k]) for k in a)


def test_a_run_writes_native_checkpoints_and_tensorboard(runs):
    base, one, _, (unbroken, _), _ = runs
    assert {p.name for p in one.parent.iterdir()} == {"final.zip", "latest.zip"}
    meta = read_metadata(unbroken)
    assert meta["trainer"] == "native-search" and meta["updates"] == 2
    assert meta["config"]["train"]["algorithm"] == "search"
    net, _ = load_policy(unbroken)  # the format every tool loads
    assert isinstance(net, ActorCritic)
    scalars = read_scalars(base / "runs" / "one")
    for tag in ("losses/policy_loss", "losses/value_loss", "losses/entropy", "losses/approx_kl",
                "losses/explained_variance", "charts/decisions_per_second", "charts/learning_rate",
                "search/target_entropy", "search/agreement", "search/target_prior_kl", "game/score",
                "eval/win_rate_vs_random_2p"):  # fmt: skip
        assert tag in scalars, tag
    assert scalars["losses/policy_loss"][0][0] == read_metadata(one)["num_timesteps"]


def test_a_resumed_run_continues_as_an_unbroken_one(runs):
    _, one, resumed, (unbroken, _), _ = runs
    assert read_metadata(resumed)["updates"] == 2
    assert not _same(_weights(one), _weights(resumed))
    assert _same(_weights(resumed), _weights(unbroken))


def test_the_same_seed_gives_the_same_losses_and_weights_and_another_seed_others(runs):
    base, one, _, (unbroken, again), other = runs
    assert _same(_weights(unbroken), _weights(again))
    first, second = read_scalars(base / "runs" / "unbroken"), read_scalars(base / "runs" / "again")
    for tag in ("losses/policy_loss", "losses/value_loss", "search/target_entropy"):
        assert first[tag] == second[tag], tag
    assert not _same(_weights(one), _weights(other))


def test_resume_refuses_a_checkpoint_of_another_trainer(tmp_path):
    from island_fortress_env.training.ppo import Progress, Run

    cfg = _config(tmp_path, "ppo-made")
    net = ActorCritic(**network_kwargs(cfg))
    optimizer = torch.optim.Adam(net.parameters())
    path = Run(cfg, net, optimizer, Progress(), writer=None).save("ppo.zip")
    assert read_metadata(path)["trainer"] == "native-ppo"
    with pytest.raises(CheckpointError, match=r"was trained by 'native-ppo', not by search learning"):
        train_search(cfg, resume=str(path))


# ---------------------------------------------------------------- the config and the command


def test_the_shipped_config_loads_as_written():
    loaded = load_config(CONFIG, schema=NativeConfig).to_dict()
    for section, values in yaml.safe_load(CONFIG.read_text("utf-8")).items():
        if isinstance(values, dict):
            for key, value in values.items():
                assert loaded[section][key] == value, (section, key)
        else:
            assert loaded[section] == values, section
    assert loaded["train"]["algorithm"] == "search"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["train.algorithm=alphazero"], r"train\.algorithm: must be 'ppo' or 'search', not 'alphazero'$"),
        (["train.workers=1"], r"train\.workers: must be 0 with train\.algorithm: search, not 1 \("),
        (["ppo.magnet_coef=0.1"], r"ppo\.magnet_coef: must be 0 with train\.algorithm: search, not 0\.1 \("),
        (["ppo.prev_kl_coef=0.05"], r"ppo\.prev_kl_coef: must be 0 with train\.algorithm: search"),
        (["search_learning.considered=32"],
         r"search_learning\.considered: must be <= search_learning\.simulations \(16\), not 32"),
        (["search_learning.simulations=0"], r"search_learning\.simulations: must be >= 1, not 0$"),
        (["search_learning.learning_rate=0"], r"search_learning\.learning_rate: must be > 0, not 0"),
        (["search_learning.games_per_iteration=0"],
         r"search_learning\.games_per_iteration: must be >= 1, not 0$"),
        (["search_learning.simulation=8"], r"search_learning\.simulation: unknown key"),
        (["train.algorithm=ppo", "train.workers=1", "search_learning.simulations=32"],
         r"search_learning: is read only with train\.algorithm: search$"),
    ],
)  # fmt: skip
def test_the_config_refuses_in_one_line(overrides, message):
    with pytest.raises(TrainConfigError, match=message) as refused:
        load_config(CONFIG, overrides, schema=NativeConfig)
    assert "\n" not in str(refused.value)


def test_a_ppo_config_keeps_the_default_search_section_and_reads_nothing_of_it():
    cfg = load_config(ROOT / "configs" / "default.yaml", schema=NativeConfig)
    assert cfg.train.algorithm == "ppo"
    again = NativeConfig.model_validate(cfg.to_dict())  # a checkpoint's record of it reads back
    assert again.search_learning == cfg.search_learning


def test_the_train_command_runs_the_search_learner_and_train_native_refuses_its_config(
    monkeypatch, tmp_path, capsys
):
    from island_fortress_env.cli.app import main
    from island_fortress_env.training.ppo import train_native

    called: list[NativeConfig] = []

    def fake(cfg, resume=None):
        called.append(cfg)
        return tmp_path / "final.zip"

    monkeypatch.setattr(search_learning, "train_search", fake)
    assert main(["train", "--config", str(CONFIG), "search_learning.simulations=8"]) == 0
    assert len(called) == 1 and called[0].search_learning.simulations == 8
    assert "of search learning" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exited:
        main(["train", "--config", str(CONFIG), "train.workers=2"])
    assert exited.value.code == 2
    assert "train.workers: must be 0 with train.algorithm: search" in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"train_native trains train\.algorithm=ppo, not 'search'"):
        train_native(called[0])
