"""Multi-agent PPO on Ray RLlib (new API stack): every seat plays one shared, masked policy.

    island-fortress train --backend rllib --config configs/rllib.yaml [section.key=value ...]
    island-fortress train --backend rllib --address HOST:PORT [--resume checkpoints/<run>/rllib]

What happens, top to bottom:
  1. the YAML config is loaded and validated (any key can be overridden on the command line);
  2. Ray starts locally with ``ray.num_cpus`` CPUs, or joins the cluster at ``--address``
     (``ray.address``; ``auto`` finds the one this node belongs to);
  3. RLlib's ``PPOConfig`` is built on ``island_fortress_env.integrations.rllib``: the turn-based
     env on ``env_runners.num_env_runners`` actors, one shared ``IslandFortressRLModule`` (a
     masked ``network.ActorCritic``), PPO's own hyperparameters from the ``ppo`` section;
  4. ``algo.train()`` runs until ``train.total_timesteps`` env steps were sampled, with a
     progress bar and every numeric result written to TensorBoard under ``runs/<run_name>``;
  5. every ``train.checkpoint_every`` iterations and at the end, the RLlib checkpoint goes to
     ``checkpoints/<run_name>/rllib`` and is converted to the project's own format
     (``latest.zip``; ``final.zip`` at the end), which ``island-fortress evaluate`` ranks;
  6. the final policy is evaluated against ``random`` and ``heuristic`` tables.
"""

from __future__ import annotations

import functools
import json
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from island_fortress_env.training import config
from island_fortress_env.training.config import RLlibConfig, TrainConfigError, run_metadata


class ClusterError(RuntimeError):
    """The Ray cluster named by ``--address`` / ``ray.address`` cannot be joined."""


# configs/rllib.yaml's schema through the one loader of every trainer's config
load_config = functools.partial(config.load_config, schema=RLlibConfig)


def ppo_config(cfg: RLlibConfig) -> Any:
    """RLlib's ``PPOConfig`` for this run (multi-agent, one shared masked module)."""
    from ray.rllib.algorithms.ppo import PPOConfig

    from island_fortress_env.adapters import rllib as if_rllib

    runners = cfg.env_runners
    return (
        PPOConfig()
        .environment(if_rllib.ENV_NAME, env_config=cfg.env_config())
        .multi_agent(policies={if_rllib.SHARED_POLICY}, policy_mapping_fn=if_rllib.shared_policy)
        .rl_module(rl_module_spec=if_rllib.module_spec(cfg.policy.cnn_channels, cfg.policy.hidden))
        .env_runners(
            num_env_runners=runners.num_env_runners,
            num_envs_per_env_runner=runners.num_envs_per_env_runner,
            rollout_fragment_length=runners.rollout_fragment_length or "auto",
        )
        .learners(
            num_learners=cfg.learners.num_learners, num_gpus_per_learner=cfg.learners.num_gpus_per_learner
        )
        .training(**cfg.ppo.model_dump())
        .callbacks(if_rllib.IllegalMoveMetrics)
        .debugging(seed=cfg.seed)
    )


def checkpoint_metadata(cfg: RLlibConfig) -> dict[str, Any]:
    env_options = {"num_players": cfg.env.num_players, **cfg.env.options}
    return run_metadata(cfg, env_options, ("ray",), backend="rllib")


def scalars(result: Mapping[str, Any], prefix: str = "") -> dict[str, float]:
    """The finite numbers of a (nested) RLlib result dict, keyed ``a/b/c``."""
    out: dict[str, float] = {}
    for key, value in result.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(scalars(value, f"{name}/"))
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            out[name] = float(value)
    return out


def save(algo: Any, cfg: RLlibConfig, metadata: dict[str, Any], steps: int, names: Sequence[str]) -> Path:
    """RLlib checkpoint in ``<checkpoints>/<run>/rllib``, then native copies named ``names``."""
    from island_fortress_env.adapters.rllib import export_native_checkpoint
    from island_fortress_env.agents.checkpoint import META_MEMBER, space_signature

    ckpt_dir = Path(cfg.logging.checkpoints_dir) / cfg.run_name
    rllib_dir = (ckpt_dir / "rllib").resolve()
    algo.save_to_path(str(rllib_dir))
    meta = {**metadata, "num_timesteps": steps, "space_signature": space_signature()}
    (rllib_dir / META_MEMBER).write_text(json.dumps(meta, indent=2, sort_keys=True, default=str), "utf-8")
    paths = [export_native_checkpoint(rllib_dir, ckpt_dir / name) for name in names]
    return paths[0]


def check_resume(path: str | Path, cfg: RLlibConfig) -> Path:
    """An RLlib checkpoint directory this run can continue from, or a clear ``TrainConfigError``."""
    from island_fortress_env.adapters.rllib import module_dir
    from island_fortress_env.agents.checkpoint import META_MEMBER, CheckpointError, check_spaces

    path = Path(path)
    if not module_dir(path).is_dir():
        raise TrainConfigError(
            f"--resume {str(path)!r}: not an RLlib checkpoint of this backend "
            f"(no {str(module_dir(path))!r}); pass the 'rllib' directory of a run"
        )
    meta_file = path / META_MEMBER
    if meta_file.is_file():
        meta = json.loads(meta_file.read_text("utf-8"))
        try:
            check_spaces(path, meta)  # an RLlib checkpoint is a directory: its spaces, not zip members
        except CheckpointError as exc:
            raise TrainConfigError(f"--resume: {exc}") from None
        saved = meta.get("config", {}).get("policy")
        if saved is not None and saved != cfg.policy.model_dump():
            raise TrainConfigError(
                f"--resume {str(path)!r}: its network is policy={saved}, this config's is "
                f"policy={cfg.policy.model_dump()}"
            )
    return path.resolve()


def train(cfg: RLlibConfig, address: str | None = None, resume: str | Path | None = None) -> Path:
    """Run the training described by ``cfg`` (continuing the RLlib checkpoint ``resume`` if
    given: its weights, optimizer and step count); returns the final native checkpoint path."""
    import ray
    import torch
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME
    from torch.utils.tensorboard import SummaryWriter

    from island_fortress_env.adapters.rllib import ILLEGAL_MOVES

    torch.set_num_threads(cfg.train.torch_threads)
    address = address or cfg.ray.address
    if address:
        try:
            ray.init(address=address)
        except ConnectionError as exc:
            raise ClusterError(
                f"cannot join the Ray cluster at {address!r} ({exc}); start one with `ray start --head`, "
                "and with token authentication set RAY_AUTH_MODE=token and share its token"
            ) from None
    else:
        ray.init(num_cpus=cfg.ray.num_cpus, include_dashboard=False)
    metadata = checkpoint_metadata(cfg)
    writer = SummaryWriter(str(Path(cfg.logging.runs_dir) / cfg.run_name))
    bar = None
    algo = None
    try:
        algo = ppo_config(cfg).build_algo()
        steps = 0
        if resume is not None:  # weights, optimizer, metrics (the step count): the run goes on
            algo.restore_from_path(str(resume))
            steps = int(algo.metrics.peek((ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME), default=0))
            metadata["resumed_from"] = {"path": str(resume), "num_timesteps": steps}
        if cfg.logging.progress_bar:
            from tqdm import tqdm

            total = cfg.train.total_timesteps
            bar = tqdm(total=total, initial=min(steps, total), desc=f"rllib {cfg.run_name}", unit="step",
                       file=sys.stderr, dynamic_ncols=True)  # fmt: skip
        iteration = 0  # in this run
        while steps < cfg.train.total_timesteps:
            result = algo.train()
            iteration += 1
            runners = result.get(ENV_RUNNER_RESULTS, {})
            new_steps = int(runners.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, steps))
            for name, value in scalars(result).items():
                writer.add_scalar(name, value, new_steps)
            if bar is not None:
                bar.update(min(new_steps, cfg.train.total_timesteps) - min(steps, cfg.train.total_timesteps))
                length = runners.get("episode_len_mean", float("nan"))
                illegal = int(runners.get(ILLEGAL_MOVES, 0))
                bar.set_postfix(it=iteration, game_len=f"{length:.0f}", illegal=illegal)
            steps = new_steps
            metadata["illegal_moves"] = runners.get(ILLEGAL_MOVES)  # None until a game has ended
            metadata["iterations"] = {"run": iteration, "total": int(result.get("training_iteration", 0))}
            if iteration % cfg.train.checkpoint_every == 0 and steps < cfg.train.total_timesteps:
                save(algo, cfg, metadata, steps, ["latest.zip"])
        final = save(algo, cfg, metadata, steps, ["final.zip", "latest.zip"])
    finally:
        if bar is not None:
            bar.close()
        writer.close()
        if algo is not None:
            algo.stop()
        ray.shutdown()
    return final
