"""Ray RLlib: the turn-based env, the masked RLModule, checkpoint export and one tiny real run.

Needs the ``[rllib]`` extra (``make test-rllib`` builds a venv with it); the config checks run
without it.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from island_fortress_env.cli.app import main as cli_main
from island_fortress_env.training.config import TrainConfigError
from island_fortress_env.training.rllib_backend import load_config

ROOT = Path(__file__).resolve().parents[2]
RAY_REASON = "Ray RLlib is not installed (pip install 'island-fortress-env[rllib]')"


@pytest.fixture(scope="module")
def if_rllib():
    pytest.importorskip("ray.rllib", reason=RAY_REASON)
    from island_fortress_env.adapters import rllib

    return rllib


def play_random_game(env, seed: int, rng: np.random.Generator):
    """One masked random game through the RLlib env: (steps, per-agent returns, final tuple)."""
    obs, infos = env.reset(seed=seed)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    steps = []
    while True:
        assert len(obs) == 1, "only the agent to move observes"
        ((agent, o),) = obs.items()
        assert env.observation_spaces[agent].contains(o)
        assert set(infos) == {agent}
        action = int(rng.choice(np.flatnonzero(o["action_mask"])))
        steps.append((agent, o, action))
        obs, rewards, terminateds, truncateds, infos = env.step({agent: action})
        for a, r in rewards.items():
            returns[a] += r
        if terminateds["__all__"] or truncateds["__all__"]:
            return steps, returns, (obs, rewards, terminateds, truncateds, infos)


# ---------------------------------------------------------------- config (no Ray needed)


def test_shipped_rllib_config_is_valid():
    cfg = load_config(ROOT / "configs" / "rllib.yaml")
    assert cfg.env.num_players == 3 and cfg.ray.address == "" and cfg.ray.num_cpus >= 2
    assert cfg.env_config() == {"num_players": 3, "reward": "vp_delta"}


def test_rllib_config_overrides_and_errors():
    cfg = load_config(ROOT / "configs" / "rllib.yaml", ["train.total_timesteps=1234", "ppo.lr=1e-4"])
    assert cfg.train.total_timesteps == 1234 and cfg.ppo.lr == 1e-4
    with pytest.raises(TrainConfigError, match="unknown key"):
        load_config(None, ["ppo.learning_rate=1e-4"])  # RLlib's names: ppo.lr
    with pytest.raises(TrainConfigError, match=r"env\.reward"):
        load_config(None, ["env.reward=score"])
    with pytest.raises(TrainConfigError, match=r"needs 4 CPUs"):
        load_config(None, ["env_runners.num_env_runners=3", "ray.num_cpus=2"])
    # on a cluster the CPUs are the cluster's
    assert load_config(None, ["env_runners.num_env_runners=3", "ray.address=auto"]).ray.address == "auto"
    with pytest.raises(TrainConfigError, match="minibatch_size"):
        load_config(None, ["ppo.minibatch_size=9000"])
    with pytest.raises(TrainConfigError, match="num_players"):
        load_config(None, ["env.num_players=5"])


def test_cli_refuses_a_bad_override_with_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        cli_main(
            ["train", "--backend", "rllib", "--config", str(ROOT / "configs" / "rllib.yaml"), "ppo.gama=0.9"]
        )
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "unknown key" in err and "Traceback" not in err


# ---------------------------------------------------------------- the env


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_env_passes_rllib_env_precheck(if_rllib, num_players):
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    env = if_rllib.IslandFortressEnv({"num_players": num_players})
    check_multiagent_environments(env)  # steps an unmasked random action
    space = env.observation_spaces["player_0"]
    assert set(space.spaces) == {"observations", "action_mask"}  # RLlib's action-masking keys


def test_env_replays_the_pettingzoo_game_and_pays_every_agent(if_rllib):
    from island_fortress_env import island_fortress_v0
    from island_fortress_env.engine.scoring import win_loss_returns

    env = if_rllib.IslandFortressEnv({"num_players": 3})
    steps, returns, (obs, _, terminateds, truncateds, infos) = play_random_game(
        env, seed=5, rng=np.random.default_rng(0)
    )
    # the same seed and actions through the PettingZoo env give the same observations
    aec = island_fortress_v0.env(num_players=3)
    aec.reset(seed=5)
    for agent, o, action in steps:
        assert aec.agent_selection == agent
        pz = aec.observe(agent)
        np.testing.assert_array_equal(pz["observation"], o["observations"])
        np.testing.assert_array_equal(pz["action_mask"], o["action_mask"])
        aec.step(action)
    state = env.aec.unwrapped.game_state
    assert state.is_terminal() and aec.unwrapped.game_state.score == state.score
    # the end: every agent observes, every agent is paid its zero-sum result
    assert set(obs) == set(env.possible_agents)
    assert all(terminateds.values()) and not any(truncateds.values())
    expected = win_loss_returns(3, state.winners)
    assert [returns[a] for a in env.possible_agents] == pytest.approx(expected)
    assert all(info["illegal_move"] == 0 for info in infos.values())


def test_env_dense_rewards_reach_waiting_agents(if_rllib):
    env = if_rllib.IslandFortressEnv({"num_players": 2, "reward": "vp_delta"})
    _, returns, _ = play_random_game(env, seed=3, rng=np.random.default_rng(1))
    score = env.aec.unwrapped.game_state.score
    assert [returns[a] for a in env.possible_agents] == pytest.approx([s / 50 for s in score])


def test_illegal_action_ends_the_game_and_is_counted(if_rllib):
    from ray.rllib.utils.metrics.metrics_logger import MetricsLogger

    env = if_rllib.IslandFortressEnv({"num_players": 3})
    obs, _ = env.reset(seed=0)
    ((agent, o),) = obs.items()
    illegal = int(np.flatnonzero(o["action_mask"] == 0)[0])
    obs, rewards, terminateds, _, infos = env.step({agent: illegal})
    assert terminateds["__all__"] and set(obs) == set(env.possible_agents)
    assert rewards[agent] == -1.0 and all(r == 0 for a, r in rewards.items() if a != agent)
    assert {a: i["illegal_move"] for a, i in infos.items()} == {
        a: int(a == agent) for a in env.possible_agents
    }

    class Episode:  # what the callback reads of an RLlib episode
        def get_infos(self, index):
            assert index == -1
            return infos

    logger = MetricsLogger(root=True)
    callback = if_rllib.IllegalMoveMetrics()
    callback.on_episode_end(episode=Episode(), metrics_logger=logger, env_index=0)
    callback.on_episode_end(episode=Episode(), metrics_logger=logger, env_index=0)
    assert logger.peek(if_rllib.ILLEGAL_MOVES) == 2


def test_step_for_the_wrong_agent_is_one_clear_error(if_rllib):
    env = if_rllib.IslandFortressEnv({"num_players": 3})
    obs, _ = env.reset(seed=0)
    other = next(a for a in env.possible_agents if a not in obs)
    with pytest.raises(ValueError, match="turn"):
        env.step({other: 0})


# ---------------------------------------------------------------- the RLModule


def build_module(if_rllib, env):
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    return RLModuleSpec(
        module_class=if_rllib.IslandFortressRLModule,
        observation_space=env.observation_spaces["player_0"],
        action_space=env.action_spaces["player_0"],
        model_config={"cnn_channels": 8, "hidden": 16},
    ).build()


def test_module_is_an_actor_critic_and_never_samples_an_illegal_action(if_rllib):
    import torch
    from ray.rllib.core.columns import Columns

    from island_fortress_env.agents.network import ActorCritic

    env = if_rllib.IslandFortressEnv({"num_players": 3})
    module = build_module(if_rllib, env)
    assert isinstance(module.net, ActorCritic)
    assert sum(p.numel() for p in module.parameters()) == sum(p.numel() for p in module.net.parameters())
    steps, _, _ = play_random_game(env, seed=11, rng=np.random.default_rng(2))
    batch_obs = {
        key: torch.as_tensor(np.stack([o[key] for _, o, _ in steps]))
        for key in ("observations", "action_mask")
    }
    masks = batch_obs["action_mask"].bool()
    torch.manual_seed(0)
    with torch.no_grad():
        for forward in (module.forward_exploration, module.forward_inference, module.forward_train):
            logits = forward({Columns.OBS: dict(batch_obs)})[Columns.ACTION_DIST_INPUTS]
            dist = module.get_exploration_action_dist_cls().from_logits(logits)
            for _ in range(20):
                actions = dist.sample()
                assert masks[torch.arange(len(actions)), actions].all()
            assert masks[torch.arange(len(logits)), logits.argmax(-1)].all()
        ref_logits, ref_values = module.net(batch_obs["observations"], batch_obs["action_mask"])
        np.testing.assert_allclose(logits.numpy(), ref_logits.numpy())
        values = module.compute_values({Columns.OBS: dict(batch_obs)})
        np.testing.assert_allclose(values.numpy(), ref_values.numpy(), rtol=1e-6)


def test_export_refuses_what_is_not_an_rllib_checkpoint(if_rllib, tmp_path, capsys):
    from island_fortress_env.agents.checkpoint import CheckpointError

    with pytest.raises(CheckpointError, match="no such directory"):
        if_rllib.export_native_checkpoint(tmp_path / "missing", tmp_path / "out.zip")
    with pytest.raises(CheckpointError, match="no module 'shared'"):
        if_rllib.export_native_checkpoint(tmp_path, tmp_path / "out.zip")
    assert cli_main(["rllib-convert", str(tmp_path), str(tmp_path / "out.zip")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no module 'shared'" in err
    assert not (tmp_path / "out.zip").exists()


# ---------------------------------------------------------------- one tiny real run


def tiny_config(tmp: Path, *overrides: str):
    return load_config(
        ROOT / "configs" / "rllib.yaml",
        [
            "run_name=tiny",
            "ray.num_cpus=2",
            "train.total_timesteps=600",
            "train.checkpoint_every=1",
            "ppo.train_batch_size_per_learner=300",
            "ppo.minibatch_size=100",
            "ppo.num_epochs=1",
            "policy.cnn_channels=8",
            "policy.hidden=16",
            "logging.progress_bar=false",
            f"logging.runs_dir={tmp / 'runs'}",
            f"logging.checkpoints_dir={tmp / 'checkpoints'}",
            *overrides,
        ],
    )


def read_meta(path: Path) -> dict:
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read("island_fortress.json"))


@pytest.fixture(scope="module")
def tiny_run(if_rllib, tmp_path_factory):
    from island_fortress_env.training.rllib_backend import train

    tmp = tmp_path_factory.mktemp("rllib")
    return train(tiny_config(tmp)), tmp


def test_tiny_run_trains_saves_and_converts(tiny_run):
    final, tmp = tiny_run
    ckpt_dir = tmp / "checkpoints" / "tiny"
    assert final == ckpt_dir / "final.zip" and (ckpt_dir / "latest.zip").is_file()
    meta = read_meta(final)
    assert meta["iterations"] == {"run": 2, "total": 2}
    assert meta["backend"] == "rllib" and meta["network"] == {"cnn_channels": 8, "hidden": 16}
    assert meta["num_timesteps"] >= 600 and meta["illegal_moves"] == 0
    assert meta["config"]["train"]["total_timesteps"] == 600
    events = list((tmp / "runs" / "tiny").glob("events.out.tfevents.*"))
    assert events and events[0].stat().st_size > 0


def test_tiny_run_policy_plays_complete_legal_games_in_evaluate(tiny_run):
    from island_fortress_env.training.evaluate import evaluate

    final, _ = tiny_run
    # evaluate's env raises on any illegal action: finishing the games means every move was legal
    result = evaluate([str(final), "random", "heuristic"], games=3, seed=0)
    assert [a["games"] for a in result["agents"]] == [3, 3, 3]
    assert sum(a["wins"] for a in result["agents"]) == pytest.approx(3)


def test_converted_checkpoint_acts_exactly_as_the_rllib_module(if_rllib, tiny_run, tmp_path):
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModule

    from island_fortress_env.agents.checkpoint import CheckpointAgent

    final, tmp = tiny_run
    rllib_dir = tmp / "checkpoints" / "tiny" / "rllib"
    # the command-line converter gives the same weights as the end of the run
    out = tmp_path / "converted.zip"
    assert cli_main(["rllib-convert", str(rllib_dir), str(out)]) == 0
    module = RLModule.from_checkpoint(if_rllib.module_dir(rllib_dir))
    env = if_rllib.IslandFortressEnv({"num_players": 3})
    steps, _, _ = play_random_game(env, seed=2, rng=np.random.default_rng(3))
    for path in (final, out):
        agent = CheckpointAgent(path)
        for _, o, _ in steps[::25]:
            batch = {Columns.OBS: {k: torch.as_tensor(v)[None] for k, v in o.items()}}
            with torch.no_grad():
                logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0]
            expected = torch.softmax(logits, -1).numpy()
            got = agent.probabilities(o["observations"], o["action_mask"])
            np.testing.assert_allclose(got, np.where(o["action_mask"], expected, 0), atol=1e-6)


def test_an_unreachable_cluster_is_one_line_and_exit_2(if_rllib, monkeypatch, capsys):
    import ray

    def refuse(*args, **kwargs):
        raise ConnectionError("Could not find any running Ray instance.")

    monkeypatch.setattr(ray, "init", refuse)
    with pytest.raises(SystemExit) as exc:
        cli_main(
            [
                "train",
                "--backend",
                "rllib",
                "--config",
                str(ROOT / "configs" / "rllib.yaml"),
                "--address",
                "127.0.0.1:1",
            ]
        )
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot join the Ray cluster at '127.0.0.1:1'" in err


def test_resume_continues_weights_and_step_count(tiny_run, tmp_path):
    from island_fortress_env.training.rllib_backend import check_resume, train

    _, tmp = tiny_run
    rllib_dir = tmp / "checkpoints" / "tiny" / "rllib"
    cfg = tiny_config(tmp_path, "run_name=resumed", "train.total_timesteps=900")
    final = train(cfg, resume=check_resume(rllib_dir, cfg))
    meta = read_meta(final)
    # 600 steps were done: one more iteration of 300 reaches 900 (a fresh run would need three)
    assert meta["resumed_from"]["num_timesteps"] == 600
    assert meta["iterations"] == {"run": 1, "total": 3} and meta["num_timesteps"] == 900


def test_resume_refuses_a_foreign_or_mismatched_checkpoint(tiny_run, tmp_path, capsys):
    from island_fortress_env.training.rllib_backend import check_resume

    _, tmp = tiny_run
    rllib_dir = tmp / "checkpoints" / "tiny" / "rllib"
    with pytest.raises(TrainConfigError, match="not an RLlib checkpoint"):
        check_resume(tmp_path, tiny_config(tmp_path))
    with pytest.raises(TrainConfigError, match="network is policy="):
        check_resume(rllib_dir, tiny_config(tmp_path, "policy.hidden=32"))
    with pytest.raises(SystemExit) as exc:
        cli_main(
            [
                "train",
                "--backend",
                "rllib",
                "--config",
                str(ROOT / "configs" / "rllib.yaml"),
                "--resume",
                str(tmp_path),
            ]
        )
    assert exc.value.code == 2 and "not an RLlib checkpoint" in capsys.readouterr().err
