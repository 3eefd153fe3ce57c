"""``island-fortress train``: the native multi-agent PPO trainer (default) or the SB3 one.

    island-fortress train --config configs/default.yaml [section.key=value ...] [--resume CKPT]
    island-fortress train --backend sb3 --config configs/sb3.yaml

``--backend native`` (default) runs ``training/ppo.py``: every seat of many games learns at once.
``--backend sb3`` runs sb3-contrib's MaskablePPO on one learning seat against frozen players
(``training/league_env.py``); what happens there, top to bottom:
  1. the YAML config is loaded and validated (any key can be overridden on the command line);
  2. ``n_envs`` copies of that view run in parallel (one process each), every other seat
     played by an opponent drawn per game (a snapshot of the learner / random / heuristic);
  3. optionally, the policy first imitates heuristic games (``pretrain``: behaviour
     cloning, ``training/pretrain.py``), a warm start for the long plans of this game;
  4. sb3-contrib's MaskablePPO trains the CNN+MLP policy (``training/policy.py``), logging
     PPO losses, entropy and the game's own figures to TensorBoard under ``runs/``;
  5. snapshots join the snapshot pool, checkpoints (SB3 zip + our metadata) go to
     ``checkpoints/<run_name>/``;
  6. the final policy is evaluated against ``random`` and ``heuristic`` tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from island_fortress_env.players.seeds import Stream, stream_seed
from island_fortress_env.training.config import TrainConfig, run_metadata


def make_env_factory(cfg: TrainConfig, rank: int, snapshot_paths: Sequence[str] = ()):
    def _make():
        import torch
        from stable_baselines3.common.monitor import Monitor

        from island_fortress_env.training.league_env import LeagueEnv

        torch.set_num_threads(1)
        env = LeagueEnv(
            num_players=cfg.env.num_players,
            env_options=cfg.env.options,
            opponents=dict(vars(cfg.opponents)),
            reward_win=cfg.reward.win,
            reward_vp=cfg.reward.vp,
            reward_vp_relative=cfg.reward.vp_relative,
            snapshot_paths=snapshot_paths,
            seed=stream_seed(cfg.seed, Stream.LEAGUE_ENV, rank),
        )
        return Monitor(env)

    return _make


def checkpoint_metadata(cfg: TrainConfig) -> dict[str, Any]:
    env_options = {"num_players": cfg.env.num_players, **cfg.env.options}
    return run_metadata(cfg, env_options, ("stable_baselines3", "sb3_contrib"))


def train(cfg: TrainConfig, resume: str | None = None, extra_callbacks: Sequence[Any] = ()) -> Path:
    """Run the training described by ``cfg``; returns the final checkpoint path.

    ``extra_callbacks`` (SB3 callbacks) run beside the trainer's own, e.g. the benchmark's time limit.
    """
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from island_fortress_env.agents.checkpoint import (
        CheckpointError,
        check_signature,
        load_model,
        read_metadata,
    )
    from island_fortress_env.training.callbacks import (
        CheckpointCallback,
        GameStatsCallback,
        ProgressBarCallback,
        SnapshotPoolCallback,
        save_checkpoint,
    )
    from island_fortress_env.training.policy import policy_kwargs

    if resume:  # refuse a mismatched checkpoint before any worker starts
        check_signature(resume, read_metadata(resume))
    torch.set_num_threads(cfg.train.torch_threads)
    ckpt_dir = Path(cfg.logging.checkpoints_dir) / cfg.run_name
    runs_dir = Path(cfg.logging.runs_dir)
    metadata = checkpoint_metadata(cfg)

    # The pool starts with the checkpoint resumed from, so snapshot games have an opponent at once.
    initial_pool = [str(resume)] if resume else []
    factories = [make_env_factory(cfg, i, initial_pool) for i in range(cfg.train.n_envs)]
    vec_env: SubprocVecEnv | DummyVecEnv
    if cfg.train.vec_env == "subproc" and cfg.train.n_envs > 1:
        vec_env = SubprocVecEnv(factories, start_method="forkserver")
    else:
        vec_env = DummyVecEnv(factories)

    if resume:
        try:  # the weights themselves may still not fit (a tensor of another shape)
            model, _ = load_model(resume, device=cfg.train.device, env=vec_env, tensorboard_log=str(runs_dir))
        except CheckpointError:
            vec_env.close()
            raise
    else:
        model = MaskablePPO(
            "MlpPolicy",
            vec_env,
            policy_kwargs=policy_kwargs(cfg.policy.cnn_channels, cfg.policy.hidden),
            tensorboard_log=str(runs_dir),
            seed=cfg.seed,
            device=cfg.train.device,
            verbose=0,
            **vars(cfg.ppo),
        )

    if not resume and cfg.pretrain.games > 0:
        from stable_baselines3.common.utils import configure_logger

        from island_fortress_env.training.pretrain import behaviour_cloning, collect_demonstrations

        # SB3's own logger set-up, made early so imitation and PPO share one TensorBoard run.
        model.set_logger(configure_logger(0, str(runs_dir), cfg.run_name, True))
        pre = cfg.pretrain
        deals = stream_seed(cfg.seed, Stream.DEMONSTRATIONS, cfg.env.num_players)  # as the native trainer's
        data = collect_demonstrations(
            cfg.env.num_players, cfg.env.options, pre.games, seed=deals, teacher=pre.teacher,
            reward_win=cfg.reward.win, reward_vp=cfg.reward.vp,
            reward_vp_relative=cfg.reward.vp_relative,
        )  # fmt: skip
        report = behaviour_cloning(
            model, data, pre.epochs, pre.batch_size, pre.learning_rate, seed=cfg.seed,
            progress=cfg.logging.progress_bar,
        )  # fmt: skip
        metadata["pretrain"] = report
        del data

    stats = GameStatsCallback()
    callbacks = [
        stats,
        SnapshotPoolCallback(
            ckpt_dir / "pool",
            cfg.snapshots.snapshot_every,
            cfg.snapshots.pool_size,
            metadata,
            initial=initial_pool,
        ),
        CheckpointCallback(ckpt_dir, cfg.train.checkpoint_every, metadata),
    ]
    callbacks.extend(extra_callbacks)
    if cfg.logging.progress_bar:
        callbacks.append(ProgressBarCallback(cfg.train.total_timesteps, lambda: f"games {stats.episodes}"))
    try:
        model.learn(
            total_timesteps=cfg.train.total_timesteps,
            callback=callbacks,
            tb_log_name=cfg.run_name,
            reset_num_timesteps=not resume,
        )
    finally:
        vec_env.close()
    final = save_checkpoint(model, ckpt_dir / "final.zip", metadata)
    save_checkpoint(model, ckpt_dir / "latest.zip", metadata)
    return final
