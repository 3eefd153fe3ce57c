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

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from island_fortress_env.players.seeds import Stream, stream_seed
from island_fortress_env.training.config import TrainConfig, TrainConfigError, load_config, run_metadata


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


def run_sb3(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    try:
        cfg = load_config(args.config or "configs/sb3.yaml", args.overrides)
    except TrainConfigError as exc:
        parser.error(str(exc))
    print(f"run {cfg.run_name!r}: {cfg.train.total_timesteps} steps, {cfg.train.n_envs} envs, "
          f"{cfg.env.num_players} players")  # fmt: skip
    print(yaml.safe_dump(cfg.to_dict(), sort_keys=False, default_flow_style=None).rstrip())
    from island_fortress_env.agents.checkpoint import CheckpointError

    try:
        final = train(cfg, resume=args.resume)
    except CheckpointError as exc:  # a --resume checkpoint that does not fit: a usage error
        parser.error(str(exc))
    print(f"\nsaved {final}")
    if not args.no_eval and cfg.eval.games > 0:
        from island_fortress_env.training.evaluate import evaluate_checkpoint

        evaluate_checkpoint(final, cfg)
    print(f"\nWatch the learning curves:  tensorboard --logdir {cfg.logging.runs_dir}")
    return 0


def run_native(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from island_fortress_env.agents.checkpoint import CheckpointError
    from island_fortress_env.training.config import NativeConfig
    from island_fortress_env.training.ppo import check_device, train_native, update_dtype

    try:
        cfg = load_config(args.config or "configs/default.yaml", args.overrides, schema=NativeConfig)
        check_device(cfg.train.device)
    except TrainConfigError as exc:
        parser.error(str(exc))
    if args.no_eval:
        cfg.eval.final_games = 0
    t = cfg.train
    collectors = t.workers + (not t.pipelined)
    print(f"run {cfg.run_name!r}: {t.total_decisions} decisions, {collectors} collector process(es) "
          f"x {t.games_per_collector} games, tables {cfg.tables.weights()}, "
          f"update in {update_dtype(cfg)}")  # fmt: skip
    print(yaml.safe_dump(cfg.to_dict(), sort_keys=False, default_flow_style=None).rstrip())
    try:
        final = train_native(cfg, resume=args.resume)
    except CheckpointError as exc:
        parser.error(str(exc))
    print(f"\nsaved {final}")
    print(f"\nWatch the learning curves:  tensorboard --logdir {cfg.logging.runs_dir}")
    return 0


def run_rllib(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from island_fortress_env.training.rllib_backend import run

    return run(args, parser)


# One entry per trainer: adding a backend is one line here.
BACKENDS = {"native": run_native, "sb3": run_sb3, "rllib": run_rllib}


def main(argv: Sequence[str] | None = None) -> int:
    from island_fortress_env.players.arguments import CommandLineParser

    parser = CommandLineParser(
        prog="island-fortress train",
        description="Self-play training: native multi-agent PPO (training/ppo.py), SB3 MaskablePPO, "
        "or multi-agent PPO on Ray RLlib.",
    )
    parser.add_argument(
        "--backend", choices=sorted(BACKENDS), default="native", help="trainer (default: native)"
    )
    parser.add_argument(
        "--config",
        default=None,
        help="YAML config file (default: configs/default.yaml, configs/sb3.yaml or configs/rllib.yaml)",
    )
    parser.add_argument(
        "--address",
        default=None,
        help="rllib: join a running Ray cluster (HOST:PORT or auto), not a local one",
    )
    parser.add_argument("--resume", default=None, help="continue from this checkpoint (.zip)")
    parser.add_argument("--no-eval", action="store_true", help="skip the final evaluation")
    parser.add_argument("overrides", nargs="*", metavar="section.key=value", help="config overrides")
    args = parser.parse_args(argv)
    if args.address and args.backend != "rllib":
        parser.error("--address is for --backend rllib")
    return BACKENDS[args.backend](args, parser)


if __name__ == "__main__":
    sys.exit(main())
