"""The SB3 training pipeline: the Gymnasium view, configs, a tiny real run, checkpoints, resume."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
import scenario as sc
import yaml

from island_fortress_env import core, island_fortress_v0
from island_fortress_env.agents.checkpoint import (
    META_MEMBER,
    CheckpointAgent,
    CheckpointError,
    read_metadata,
    space_signature,
)
from island_fortress_env.engine import actions as A
from island_fortress_env.engine.events import EventKind, Score, ScoreReason
from island_fortress_env.engine.results import jade_spent, points_by_component
from island_fortress_env.engine.scoring import COMPONENTS, win_loss_returns
from island_fortress_env.players import make_agent
from island_fortress_env.training.config import (
    NativeConfig,
    RLlibConfig,
    TrainConfig,
    TrainConfigError,
    load_config,
)
from island_fortress_env.training.league_env import LeagueEnv

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------- the Gymnasium view


def test_league_env_passes_gymnasium_env_checker():
    from gymnasium.utils.env_checker import check_env

    check_env(LeagueEnv(num_players=3, opponents={"random": 1.0}, seed=0), skip_render_check=True)


def test_league_env_passes_sb3_env_checker():
    from stable_baselines3.common.env_checker import check_env

    check_env(LeagueEnv(num_players=2, opponents={"random": 1.0}, seed=0), warn=False)


def test_league_env_plays_only_legal_actions_and_reports_stats():
    env = LeagueEnv(num_players=3, opponents={"random": 1.0, "heuristic": 1.0}, seed=3)
    rng = np.random.default_rng(0)
    for episode in range(3):
        obs, _ = env.reset()
        assert env.learner_seat == episode % 3  # the learner's seat rotates between games
        total, done = 0.0, False
        while not done:
            mask = env.action_masks()
            assert mask.any() and mask.dtype == bool
            action = int(rng.choice(np.flatnonzero(mask)))
            obs, reward, done, _truncated, info = env.step(action)
            assert env.observation_space.contains(obs)
            assert done or int(env.batch.player[0]) == env.learner_seat  # the learner's turn again
            total += reward
        stats, result, seat = info["episode_stats"], env.result, env.learner_seat
        assert result is not None and not env.action_masks().any()
        assert stats["score"] == result.score[seat]
        assert sum(stats["components"].values()) == result.score[seat]
        assert stats["opponent"] in ("random", "heuristic")
        winners = [s for s in range(3) if result.rank[s] == 1]
        assert stats["win"] == (1 / len(winners) if seat in winners else 0.0)
        # reward = score / 50 (dense) + the zero-sum outcome
        outcome = win_loss_returns(3, winners)[seat]
        assert total == pytest.approx(result.score[seat] / 50 + outcome, abs=1e-6)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_league_env_relative_score_reward_is_the_margin_over_the_others_mean(n):
    """With ``reward_vp_relative`` an episode's rewards add up to (own score - the other seats'
    mean score) / 50 + the outcome, whichever seat scored on whose move."""
    env = LeagueEnv(num_players=n, opponents={"random": 1.0}, reward_vp=0.5, reward_vp_relative=True, seed=n)
    rng = np.random.default_rng(n)
    env.reset()
    total, done = 0.0, False
    while not done:
        _obs, reward, done, _truncated, _info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        total += reward
    result, seat = env.result, env.learner_seat
    assert result is not None
    others = (sum(result.score) - result.score[seat]) / (n - 1)
    winners = [s for s in range(n) if result.rank[s] == 1]
    outcome = win_loss_returns(n, winners)[seat]
    assert total == pytest.approx(0.5 * (result.score[seat] - others) / 50 + outcome, abs=1e-6)


def test_imitation_returns_use_the_relative_score_reward():
    from island_fortress_env.training.pretrain import collect_demonstrations

    own = collect_demonstrations(3, {}, games=1, seed=0, reward_win=0.0, reward_vp=1.0, backend="python")
    rel = collect_demonstrations(
        3, {}, games=1, seed=0, reward_win=0.0, reward_vp=1.0, reward_vp_relative=True, backend="python"
    )
    np.testing.assert_array_equal(own["actions"], rel["actions"])  # the same game
    from island_fortress_env.engine import Game
    from island_fortress_env.vector import batch_game_seed

    # replayed (game 0 is dealt like episode 0 of slot 0 of a batch seeded 0): who took each
    # decision, and the final scores
    state, seats = Game(num_players=3).new_initial_state(batch_game_seed(0, 0, 0)), []
    for action in own["actions"]:
        seats.append(state.current_player())
        state.apply_action(int(action))
    final = state.score
    for seat in range(3):
        first = seats.index(seat)  # no one has scored before the first round's decisions
        margin = final[seat] - (sum(final) - final[seat]) / 2
        assert own["returns"][first] == pytest.approx(final[seat] / 50, abs=1e-6)
        assert rel["returns"][first] == pytest.approx(margin / 50, abs=1e-6)


@pytest.mark.skipif(not core.available(), reason="the C++ core is not built")
@pytest.mark.parametrize("relative", [False, True])
def test_core_demonstrations_are_heuristic_games_with_the_returns_that_followed(monkeypatch, relative):
    """Three games on two slots (game g dealt like episode 0 of slot g of a batch seeded 5).
    Replayed in the Python engine from those seeds, every action is the heuristic's, every
    decision's seat is the one to move, and each seat's return at its first decision (nothing
    scored before) is its whole score reward plus its outcome."""
    from island_fortress_env.baseline.heuristic import HeuristicAgent
    from island_fortress_env.engine import Game
    from island_fortress_env.env.observation import ObservationEncoder, action_mask
    from island_fortress_env.training import pretrain

    monkeypatch.setattr(pretrain, "CORE_SLOTS", 2)
    data = pretrain.collect_demonstrations(2, {}, games=3, seed=5, reward_vp_relative=relative)
    from island_fortress_env.vector import batch_game_seed

    deals = {g: batch_game_seed(5, g, 0) for g in range(3)}
    assert sorted(set(data["games"].tolist())) == [0, 1, 2]
    for g, seed in deals.items():
        rows = np.flatnonzero(data["games"] == g)
        state = Game(num_players=2).new_initial_state(seed)
        teacher, encoder = HeuristicAgent(seed=seed), ObservationEncoder(state.game)
        for row in rows:
            seat = state.current_player()
            assert data["seats"][row] == seat
            assert data["masks"][row].tolist() == action_mask(state).astype(bool).tolist()
            obs = encoder.encode(state, seat).astype(np.float16)
            assert data["obs"][row].tobytes() == obs.tobytes()
            assert data["actions"][row] == teacher.act(None, action_mask(state), state)
            state.apply_action(int(data["actions"][row]))
        assert state.is_terminal()
        outcome = win_loss_returns(2, state.winners)
        for seat in range(2):
            first = rows[np.flatnonzero(data["seats"][rows] == seat)[0]]
            points = state.score[seat] - (state.score[1 - seat] if relative else 0)
            assert data["returns"][first] == pytest.approx(points / 50 + outcome[seat], abs=1e-6)


def test_row_blocks_join_what_was_appended_across_blocks_and_free_them(monkeypatch):
    """The warm start's demonstrations are appended in blocks (the peak is the data plus one block):
    joined, they are the rows in order, cast as ``astype`` casts them, and the blocks are gone."""
    from island_fortress_env.training.pretrain import RowBlocks

    monkeypatch.setattr(RowBlocks, "BLOCK_BYTES", 3 * 4 * 2)  # three rows of four float16 a block
    rng = np.random.default_rng(0)
    chunks = [rng.normal(size=(n, 4)).astype(np.float32) for n in (0, 2, 5, 1, 3, 0)]
    rows = RowBlocks((4,), np.float16)
    for chunk in chunks:
        rows.extend(chunk)
    assert len(rows) == 11 and rows.block_rows == 3 and len(rows.blocks) == 4
    joined = rows.join()
    assert joined.dtype == np.float16
    assert joined.tobytes() == np.concatenate(chunks).astype(np.float16).tobytes()
    assert rows.blocks == [] and len(rows) == 0
    assert RowBlocks((4,), np.bool_).join().shape == (0, 4)  # nothing appended: no rows


def test_jade_spent_counts_every_payment():
    state = sc.action_phase_state(num_players=3, seed=0, holder=0)
    spent_before = jade_spent(state.log, 3)[0]  # the round-1 bid of 1 Jade
    assert spent_before == 1
    sc_before_log = list(state.log)
    sc.set_player(state, 0, jade=20, laborers=10, convicts=10, blocks=4)
    jade0 = state.jade[0]
    sc.do(state, sc.role(A.OP_RECRUIT), A.RECRUIT_COUNT + 2)  # 3 Laborers for 2 Jade
    assert jade0 - state.jade[0] == 2
    assert jade_spent(state.log, 3)[:2] == [spent_before + 2, jade_spent(sc_before_log, 3)[1]]


def test_score_components_group_the_score_events():
    def score(player: int, points: int, reason: ScoreReason) -> Score:
        return Score(EventKind.SCORE, player, points, reason)

    log = [
        score(0, 3, ScoreReason.ROW),
        score(0, 5, ScoreReason.TOWER),
        score(0, 2, ScoreReason.FAVOR_CARD),
        score(0, 1, ScoreReason.LEVEL),
        score(0, -3, ScoreReason.FEWEST_TREASURE),
        score(1, 9, ScoreReason.ROW),
    ]
    comps, other = (dict(zip(COMPONENTS, seat, strict=True)) for seat in points_by_component(log, 2))
    assert comps["rows"] == 3 and comps["towers"] == 5 and comps["favors"] == 2
    assert comps["levels"] == 1 and comps["end_bonus"] == -3
    assert sum(comps.values()) == 8
    assert other["rows"] == 9 and sum(other.values()) == 9


# ---------------------------------------------------------------- configs


@pytest.mark.parametrize("name", ["sb3.yaml", "sb3-long.yaml"])
def test_shipped_configs_are_valid(name):
    cfg = load_config(ROOT / "configs" / name)
    assert cfg.env.num_players == 3


def test_config_overrides_and_errors(tmp_path):
    cfg = load_config(ROOT / "configs" / "sb3.yaml", ["ppo.learning_rate=1e-4", "train.n_envs=2"])
    assert cfg.ppo.learning_rate == 1e-4 and cfg.train.n_envs == 2
    with pytest.raises(TrainConfigError, match="unknown key"):
        load_config(ROOT / "configs" / "sb3.yaml", ["ppo.learnin_rate=1e-4"])
    with pytest.raises(TrainConfigError, match=r"train.n_envs: expected int"):
        load_config(None, ["train.n_envs=two"])
    with pytest.raises(TrainConfigError, match="num_players"):
        load_config(None, ["env.num_players=5"])
    with pytest.raises(TrainConfigError, match="opponents"):
        load_config(None, ["opponents.snapshot=0", "opponents.random=0", "opponents.heuristic=0"])
    with pytest.raises(TrainConfigError, match=r"pretrain\.tables: the SB3 trainer imitates"):
        load_config(None, ["pretrain.tables={two: 1}"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("train: [1, 2\n")
    with pytest.raises(TrainConfigError, match="invalid YAML"):
        load_config(bad)
    with pytest.raises(TrainConfigError, match="cannot be read"):
        load_config(tmp_path / "missing.yaml")


SHIPPED = {
    "default.yaml": NativeConfig,
    "policy-2-4p.yaml": NativeConfig,
    "policy-2-4p-v2.yaml": NativeConfig,
    "policy-2-4p-v3.yaml": NativeConfig,
    "regularised.yaml": NativeConfig,
    "search-learning.yaml": NativeConfig,
    "sb3.yaml": TrainConfig,
    "sb3-long.yaml": TrainConfig,
    "rllib.yaml": RLlibConfig,
}


def _leaves(tree: dict, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in tree.items():
        if isinstance(value, dict) and value:
            out.update(_leaves(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def test_every_shipped_config_loads_with_its_schema_as_written():
    assert sorted(p.name for p in (ROOT / "configs").glob("*.yaml")) == sorted(SHIPPED)
    for name, schema in SHIPPED.items():
        path = ROOT / "configs" / name
        loaded = _leaves(load_config(path, schema=schema).to_dict())
        for key, value in _leaves(yaml.safe_load(path.read_text("utf-8"))).items():
            assert loaded[key] == value, (name, key)


@pytest.mark.parametrize("schema", [NativeConfig, TrainConfig, RLlibConfig], ids=["native", "sb3", "rllib"])
@pytest.mark.parametrize(
    "override, message",
    [
        ("run_name=a/b", r"^config 'defaults': run_name: must be a non-empty name without '/'$"),
        ("seed=-1", r"^config 'defaults': seed: must be >= 0, not -1$"),
        ("ppo.gamma=1.5", r"^config 'defaults': ppo\.gamma: must be <= 1, not 1\.5$"),
        (
            "eval.opponents=[mcts]",
            r"^config 'defaults': eval\.opponents\[0\]: must be 'random' or 'heuristic', not 'mcts'$",
        ),
        ("policy.hidden=0", r"^config 'defaults': policy\.hidden: must be >= 1, not 0$"),
    ],
)
def test_every_trainer_refuses_a_bad_shared_key_with_the_same_error(schema, override, message):
    with pytest.raises(TrainConfigError, match=message):
        load_config(None, [override], schema=schema)


def test_a_renamed_sb3_key_is_refused_with_its_new_name(tmp_path):
    with pytest.raises(TrainConfigError, match=r"opponents\.self: renamed to opponents\.snapshot$"):
        load_config(ROOT / "configs" / "sb3.yaml", ["opponents.self=0.5"])
    old = tmp_path / "old.yaml"
    old.write_text("selfplay:\n  snapshot_every: 100\n")
    with pytest.raises(TrainConfigError, match=r"old\.yaml': selfplay: renamed to snapshots$"):
        load_config(old)
    renamed = load_config(None, ["snapshots.snapshot_every=100", "opponents.snapshot=0.5"])
    assert renamed.snapshots.snapshot_every == 100 and renamed.opponents.snapshot == 0.5


def test_cli_refuses_a_bad_override_with_a_clear_message(capsys):
    from island_fortress_env.cli.app import main

    with pytest.raises(SystemExit) as exc:
        main(["train", "--backend", "sb3", "--config", str(ROOT / "configs" / "sb3.yaml"), "ppo.gama=0.9"])
    assert exc.value.code == 2
    assert "unknown key" in capsys.readouterr().err


# ---------------------------------------------------------------- a tiny real run


TINY = [
    "train.total_timesteps=256",
    "train.n_envs=1",
    "train.vec_env=dummy",
    "train.checkpoint_every=128",
    "ppo.n_steps=64",
    "ppo.batch_size=64",
    "ppo.n_epochs=1",
    "snapshots.snapshot_every=128",
    "opponents.heuristic=0",
    "policy.cnn_channels=4",
    "policy.hidden=16",
    "logging.progress_bar=false",
]


def tiny_config(base: Path, run_name: str, *extra: str):
    """The default config shrunk to a few hundred steps, writing under ``base``."""
    return load_config(
        ROOT / "configs" / "sb3.yaml",
        [
            *TINY,
            f"logging.runs_dir={base / 'runs'}",
            f"logging.checkpoints_dir={base / 'ckpt'}",
            f"run_name={run_name}",
            *extra,
        ],
    )


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    from island_fortress_env.training.train import train

    base = tmp_path_factory.mktemp("train")
    cfg = tiny_config(base, "tiny")
    final = train(cfg)
    return base, cfg, final


def test_tiny_run_writes_tensorboard_events_with_game_figures(tiny_run):
    base, _cfg, _final = tiny_run
    from island_fortress_env.training.plot_curves import read_scalars

    run_dirs = list((base / "runs").glob("tiny_*"))
    assert run_dirs, "no TensorBoard run directory"
    assert list(run_dirs[0].glob("events.out.tfevents.*"))
    scalars = read_scalars(run_dirs[0])
    for tag in ("train/entropy_loss", "train/policy_gradient_loss", "train/value_loss",
                "game/win_rate_vs_random", "game/score", "game/length", "game/jade_spent"):  # fmt: skip
        assert tag in scalars, f"{tag} not logged; have {sorted(scalars)}"


def test_tiny_run_checkpoint_has_metadata_loads_and_plays(tiny_run):
    base, _cfg, final = tiny_run
    assert final.exists() and (base / "ckpt" / "tiny" / "latest.zip").exists()
    assert list((base / "ckpt" / "tiny").glob("step_*.zip"))
    assert list((base / "ckpt" / "tiny" / "pool").glob("snapshot_*.zip"))
    meta = read_metadata(final)
    assert meta["space_signature"] == space_signature()
    assert meta["num_timesteps"] >= 256
    assert meta["config"]["run_name"] == "tiny"
    assert meta["env_options"]["num_players"] == 3

    agent = make_agent(str(final), seed=0)
    assert isinstance(agent, CheckpointAgent)
    env = island_fortress_v0.env(num_players=3)
    env.reset(seed=5)
    others = {a: make_agent("random", seed=i) for i, a in enumerate(env.possible_agents)}
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        player = agent if name == "player_0" else others[name]
        action = player.act(obs["observation"], obs["action_mask"], env.unwrapped.game_state)
        assert obs["action_mask"][action] == 1
        env.step(action)
    assert env.unwrapped.game_state.is_terminal()


def test_resume_continues_the_step_count(tiny_run, tmp_path):
    from island_fortress_env.training.train import train

    _base, _cfg, final = tiny_run
    cfg2 = tiny_config(tmp_path, "tiny2")
    resumed = train(cfg2, resume=str(final))
    before = read_metadata(final)["num_timesteps"]
    after = read_metadata(resumed)["num_timesteps"]
    assert after >= before + 256


def test_mismatched_checkpoint_is_refused_with_a_clear_error(tiny_run, tmp_path):
    _base, _cfg, final = tiny_run
    bad = tmp_path / "other_layout.zip"
    with zipfile.ZipFile(final) as zin, zipfile.ZipFile(bad, "w") as zout:
        for name in zin.namelist():
            data = zin.read(name)
            if name == META_MEMBER:
                meta = json.loads(data)
                meta["space_signature"]["num_actions"] = 999
                meta["space_signature"]["layout_digest"] = "0" * 16
                data = json.dumps(meta).encode()
            zout.writestr(name, data)
    with pytest.raises(CheckpointError, match=r"does not match this environment's spaces.*num_actions"):
        CheckpointAgent(bad)

    from island_fortress_env.cli.app import main

    with pytest.raises(SystemExit) as exc:  # resume is refused up front, before any work
        main(
            [
                "train",
                "--backend",
                "sb3",
                "--config",
                str(ROOT / "configs" / "sb3.yaml"),
                "--resume",
                str(bad),
            ]
        )
    assert exc.value.code == 2

    no_meta = tmp_path / "plain_sb3.zip"
    with zipfile.ZipFile(final) as zin, zipfile.ZipFile(no_meta, "w") as zout:
        for name in zin.namelist():
            if name != META_MEMBER:
                zout.writestr(name, zin.read(name))
    with pytest.raises(CheckpointError, match=r"no island_fortress\.json"):
        CheckpointAgent(no_meta)

    not_zip = tmp_path / "junk.zip"
    not_zip.write_text("hello")
    with pytest.raises(CheckpointError, match="not a zip"):
        CheckpointAgent(not_zip)
    with pytest.raises(CheckpointError, match="no such file"):
        CheckpointAgent(tmp_path / "missing.zip")


def shipped_checkpoint(name: str) -> Path:
    """A checkpoint in checkpoints/, which must exist and match this environment's spaces."""
    path = ROOT / "checkpoints" / name
    if not path.exists():
        pytest.fail(f"checkpoints/{name} is missing")
    assert read_metadata(path)["space_signature"] == space_signature()
    return path


def test_shipped_baseline_checkpoint_matches_the_environment():
    path = shipped_checkpoint("baseline-3p.zip")
    assert read_metadata(path)["env_options"]["num_players"] == 3


@pytest.mark.parametrize("shipped", ["policy-2-4p.zip", "policy-2-4p-v2.zip", "policy-2-4p-v3.zip"])
@pytest.mark.parametrize(
    "opponents", [["heuristic"], ["random", "random"], ["heuristic", "heuristic", "heuristic"]]
)
def test_shipped_policy_plays_every_table_size_and_seat(shipped, opponents):
    from island_fortress_env.training.evaluate import evaluate

    path = shipped_checkpoint(shipped)
    n = len(opponents) + 1
    policy = evaluate([str(path), *opponents], games=2 * n, seed=3)["agents"][0]
    assert policy["seat_games"] == [2] * n  # every seat, twice
    # greedy and seeded: at least half its games, where a heuristic or random seat's share is 1/n (a
    # policy read wrong plays at random and wins none against the heuristic)
    assert policy["wins"] >= n


def test_an_unmasked_illegal_action_forfeits_the_game():
    env = LeagueEnv(num_players=3, opponents={"random": 1.0}, seed=1)
    env.reset()
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, truncated, info = env.step(illegal)
    assert terminated and not truncated and reward == -1.0
    assert info["illegal_action"] == illegal


def test_behaviour_cloning_learns_the_teachers_moves():
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import configure

    from island_fortress_env.training.policy import policy_kwargs
    from island_fortress_env.training.pretrain import behaviour_cloning, collect_demonstrations

    data = collect_demonstrations(3, {}, games=2, seed=0)
    n = len(data["actions"])
    assert data["obs"].shape[0] == n and len(data["returns"]) == n
    assert data["masks"][np.arange(n), data["actions"]].all()  # the teacher only played legal moves
    env = LeagueEnv(num_players=3, opponents={"random": 1.0}, seed=0)
    model = MaskablePPO("MlpPolicy", env, policy_kwargs=policy_kwargs(8, 32), seed=0, device="cpu")
    model.set_logger(configure(None, []))
    report = behaviour_cloning(model, data, epochs=6, batch_size=64, learning_rate=3e-3)
    first, last = report["epochs"][0], report["epochs"][-1]
    assert last["loss"] < first["loss"]
    assert last["accuracy"] > first["accuracy"] and last["accuracy"] > 0.5


def test_a_run_with_imitation_warm_start_records_it(tmp_path):
    from island_fortress_env.training.plot_curves import read_scalars
    from island_fortress_env.training.train import train

    cfg = tiny_config(tmp_path, "bc", "train.total_timesteps=128", "pretrain.games=1", "pretrain.epochs=1")
    final = train(cfg)
    meta = read_metadata(final)
    assert meta["pretrain"]["samples"] > 100 and len(meta["pretrain"]["epochs"]) == 1
    scalars = read_scalars(next((tmp_path / "runs").glob("bc_*")))
    assert "pretrain/accuracy" in scalars and "train/value_loss" in scalars


def test_shipped_baseline_checkpoint_plays_legally_and_beats_random_players():
    """A smoke check of the SB3 baseline (the README's 201-game table is the real measure)."""
    from island_fortress_env.training.evaluate import evaluate

    result = evaluate([str(ROOT / "checkpoints" / "baseline-3p.zip"), "random", "random"], games=6, seed=0)
    policy = result["agents"][0]
    assert policy["games"] == 6
    assert policy["wins"] >= 5  # 200 of 201 in the README's evaluation


@pytest.mark.parametrize("bfloat16", [False, True])
def test_the_native_warm_start_imitates_on_every_core_in_the_updates_dtype_then_gives_the_threads_back(
    monkeypatch, bfloat16
):
    import os

    import torch

    from island_fortress_env.agents.network import ActorCritic
    from island_fortress_env.training import pretrain

    cfg = load_config(None, ["pretrain.games=3", "pretrain.epochs=1", "train.workers=2"], schema=NativeConfig)
    seen: dict = {}
    real = pretrain.imitate

    def imitate(*args, **kwargs):
        seen["threads"], seen["bfloat16"] = torch.get_num_threads(), kwargs["bfloat16"]
        return real(*args, **kwargs)

    monkeypatch.setattr(pretrain, "imitate", imitate)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        pretrain.warm_start(ActorCritic(cnn_channels=4, hidden=16), cfg, writer=None, bfloat16=bfloat16)
        assert torch.get_num_threads() == 1  # the learner's threads, as before the warm start
    finally:
        torch.set_num_threads(before)
    assert seen == {"threads": min(3, os.cpu_count() or 1), "bfloat16": bfloat16}


def test_league_env_plays_a_snapshot_seeded_by_the_env():
    """A snapshot opponent (a checkpoint's network, sampled) plays through the runner; the same
    env seed gives the same games, the learner playing the same actions."""
    shipped = str(Path(__file__).resolve().parents[1] / "checkpoints" / "policy-2-4p-v3.zip")

    def play(seed: int) -> list[tuple[int, ...]]:
        env = LeagueEnv(num_players=2, opponents={"snapshot": 1.0}, snapshot_paths=[shipped], seed=seed)
        games = []
        for _ in range(2):
            env.reset()
            assert env.opponent_kind == "snapshot"
            done, seen = False, []
            while not done:
                action = int(np.flatnonzero(env.action_masks())[0])
                obs, _reward, done, _truncated, info = env.step(action)
                seen.append(int(obs.sum() * 1000))
            assert info["episode_stats"]["opponent"] == "snapshot"
            games.append(tuple(seen))
        return games

    first = play(11)
    assert first == play(11) and first != play(12)
