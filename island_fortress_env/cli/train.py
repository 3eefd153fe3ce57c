"""``island-fortress train``: the native multi-agent PPO trainer (default; with ``train.algorithm:
search`` its expert iteration from the batched search, ``training/search_learning.py``), the SB3
one or RLlib's.

    island-fortress train --config configs/default.yaml [section.key=value ...] [--resume CKPT]
    island-fortress train --backend sb3 --config configs/sb3.yaml
    island-fortress train --backend rllib --config configs/rllib.yaml [--address HOST:PORT]

What each trainer does is told in ``training/ppo.py`` (native), ``training/train.py`` (SB3) and
``training/rllib_backend.py`` (RLlib); here the config is loaded, printed and handed over.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

from island_fortress_env.cli.arguments import PROG, UsageError, fail
from island_fortress_env.training.config import TrainConfigError, load_config

DEFAULT_CONFIGS = {"native": "configs/default.yaml", "sb3": "configs/sb3.yaml", "rllib": "configs/rllib.yaml"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Self-play training: native multi-agent PPO (training/ppo.py), SB3 MaskablePPO, "
        "or multi-agent PPO on Ray RLlib."
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


def check_config_file(name: str | None) -> None:
    """``--config FILE``: refuse a missing file or one that is not text before training starts
    (one line, like every other user error)."""
    if name is None:
        return
    path = Path(name)
    if not path.is_file():
        why = "is a directory, not a file" if path.is_dir() else "no such file"
        raise TrainConfigError(f"config {name!r}: {why}")
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise TrainConfigError(f"config {name!r}: not a text (YAML) file") from None


def run(args: argparse.Namespace) -> int:
    check_config_file(args.config)
    if args.address and args.backend != "rllib":
        raise UsageError("--address is for --backend rllib")
    return BACKENDS[args.backend](args)


def _sb3(args: argparse.Namespace) -> int:
    from island_fortress_env.agents.checkpoint import CheckpointError
    from island_fortress_env.training.train import train

    try:
        cfg = load_config(args.config or DEFAULT_CONFIGS["sb3"], args.overrides)
    except TrainConfigError as exc:
        raise UsageError(str(exc)) from None
    print(f"run {cfg.run_name!r}: {cfg.train.total_timesteps} steps, {cfg.train.n_envs} envs, "
          f"{cfg.env.num_players} players")  # fmt: skip
    print(yaml.safe_dump(cfg.to_dict(), sort_keys=False, default_flow_style=None).rstrip())
    try:
        final = train(cfg, resume=args.resume)
    except CheckpointError as exc:  # a --resume checkpoint that does not fit: a usage error
        raise UsageError(str(exc)) from None
    print(f"\nsaved {final}")
    if not args.no_eval and cfg.eval.games > 0:
        from island_fortress_env.training.evaluate import evaluate_checkpoint

        evaluate_checkpoint(final, cfg)
    print(f"\nWatch the learning curves:  tensorboard --logdir {cfg.logging.runs_dir}")
    return 0


def _native(args: argparse.Namespace) -> int:
    from island_fortress_env.agents.checkpoint import CheckpointError
    from island_fortress_env.training.config import NativeConfig
    from island_fortress_env.training.ppo import check_device, train_native, update_dtype

    try:
        cfg = load_config(args.config or DEFAULT_CONFIGS["native"], args.overrides, schema=NativeConfig)
        check_device(cfg.train.device)
    except TrainConfigError as exc:
        raise UsageError(str(exc)) from None
    if args.no_eval:
        cfg.eval.final_games = 0
    t = cfg.train
    collectors = t.workers + (not t.pipelined)
    if t.algorithm == "search":
        s = cfg.search_learning
        print(f"run {cfg.run_name!r}: {t.total_decisions} decisions of search learning, "
              f"{s.games_per_iteration} games an iteration ({s.simulations} simulations a decision), "
              f"tables {cfg.tables.weights()}, update in {update_dtype(cfg)}")  # fmt: skip
    else:
        print(f"run {cfg.run_name!r}: {t.total_decisions} decisions, {collectors} collector process(es) "
              f"x {t.games_per_collector} games, tables {cfg.tables.weights()}, "
              f"update in {update_dtype(cfg)}")  # fmt: skip
    print(yaml.safe_dump(cfg.to_dict(), sort_keys=False, default_flow_style=None).rstrip())
    if cfg.train.algorithm == "search":  # expert iteration from the batched search
        from island_fortress_env.training.search_learning import train_search as trainer
    else:
        trainer = train_native
    try:
        final = trainer(cfg, resume=args.resume)
    except CheckpointError as exc:
        raise UsageError(str(exc)) from None
    print(f"\nsaved {final}")
    print(f"\nWatch the learning curves:  tensorboard --logdir {cfg.logging.runs_dir}")
    return 0


def _rllib(args: argparse.Namespace) -> int:
    from island_fortress_env.training.rllib_backend import ClusterError, check_resume, load_config, train

    overrides = list(args.overrides)
    if args.address:  # quoted, so YAML keeps any address a string
        overrides.append(f"ray.address={json.dumps(args.address)}")
    try:
        cfg = load_config(args.config or DEFAULT_CONFIGS["rllib"], overrides)
    except TrainConfigError as exc:
        raise UsageError(str(exc)) from None
    try:
        import ray  # noqa: F401
    except ImportError:
        raise UsageError(
            "the rllib backend needs Ray RLlib: pip install 'island-fortress-env[rllib]'"
        ) from None
    where = f"cluster at {cfg.ray.address}" if cfg.ray.address else f"local Ray, {cfg.ray.num_cpus} CPUs"
    print(f"run {cfg.run_name!r}: {cfg.train.total_timesteps} steps, {cfg.env_runners.num_env_runners} env "
          f"runners, {cfg.env.num_players} players, {where}")  # fmt: skip
    print(yaml.safe_dump(cfg.to_dict(), sort_keys=False, default_flow_style=None).rstrip())
    try:
        resume = check_resume(args.resume, cfg) if args.resume else None
    except TrainConfigError as exc:
        raise UsageError(str(exc)) from None
    try:
        final = train(cfg, resume=resume)
    except ClusterError as exc:
        fail(f"{PROG} train: error: {exc}")
    print(f"final checkpoint: {final}")
    if not args.no_eval and cfg.eval.games > 0:
        from island_fortress_env.training.evaluate import evaluate_checkpoint

        evaluate_checkpoint(final, cfg)
    return 0


# One entry per trainer: adding a backend is one line here.
BACKENDS = {"native": _native, "sb3": _sb3, "rllib": _rllib}
